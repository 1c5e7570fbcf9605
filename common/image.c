/* Views over frames and raw memory. */
#include "common/image.h"

#include <errno.h>
#include <string.h>

void vc_image_from_geom(const struct vc_fmt *fmt, const struct vc_geom *g,
			uint8_t *const mem[3], struct vc_image *img)
{
	memset(img, 0, sizeof(*img));
	img->fmt = fmt;
	img->width = g->width;
	img->height = g->height;
	for (int p = 0; p < g->color_planes && p < 3; p++) {
		const struct vc_plane_geom *pg = &g->plane[p];

		img->stride[p] = pg->stride;
		img->plane[p] = mem[pg->mem] + pg->offset;
		img->plane_size[p] = pg->size;
	}
}

int vc_image_from_frame(const struct vc_frame *f, struct vc_image *img)
{
	const struct vc_geom *g = &f->geom;

	if (!f->fmt)
		return -EINVAL;
	if (f->fmt->layout == VC_LAYOUT_COMPRESSED) {
		if (f->bytesused[0] == 0)
			return -EINVAL;
	} else {
		for (int p = 0; p < g->color_planes && p < 3; p++) {
			const struct vc_plane_geom *pg = &g->plane[p];

			if (pg->offset + pg->size > f->bytesused[pg->mem])
				return -EINVAL;
		}
	}
	/* The view type carries writable pointers for destinations; a frame's
	 * planes are only ever read through it (see the header). */
	uint8_t *mem[3];
	for (int i = 0; i < 3; i++)
		mem[i] = (uint8_t *)(uintptr_t)f->mem[i];
	vc_image_from_geom(f->fmt, g, mem, img);
	img->color = f->color;
	img->field = f->field;
	if (f->fmt->layout == VC_LAYOUT_COMPRESSED)
		img->plane_size[0] = f->bytesused[0];
	return 0;
}
