/* One pixel of a YUV or grey test picture written into any 8-bit layout of
 * the format table (packed 4:2:2, semi-planar, planar incl. Cr-first, grey),
 * driven by the row's offsets and flags. Shared by test_jpeg and bench_jpeg
 * (header-only: each is one binary). */
#ifndef VC_TEST_YUVPUT_H
#define VC_TEST_YUVPUT_H

#include <stdint.h>

#include "common/fmt.h"
#include "common/image.h"

/* Luma of (x, y) and the chroma of the chroma sample that covers it (a
 * chroma sample keeps the last value written to it). */
static inline void yuv_put(struct vc_image *im, uint32_t x, uint32_t y, uint8_t Y, uint8_t cb,
			   uint8_t cr)
{
	const struct vc_fmt *f = im->fmt;
	uint32_t cx = x >> f->log2_chroma_w, cy = y >> f->log2_chroma_h;

	if (f->layout == VC_LAYOUT_PACKED_YUV) {
		uint8_t *g = im->plane[0] + (size_t)y * im->stride[0] + 4 * (x / 2);

		g[f->y_off[x & 1]] = Y;
		g[f->u_off[0]] = cb;
		g[f->v_off[0]] = cr;
		return;
	}
	im->plane[0][(size_t)y * im->stride[0] + x] = Y;
	if (f->layout == VC_LAYOUT_SEMIPLANAR) {
		uint8_t *c = im->plane[1] + (size_t)cy * im->stride[1] + 2 * cx;

		c[f->swap_uv] = cb;
		c[!f->swap_uv] = cr;
	} else if (f->layout == VC_LAYOUT_PLANAR_YUV) {
		im->plane[1 + f->swap_uv][(size_t)cy * im->stride[1 + f->swap_uv] + cx] = cb;
		im->plane[2 - f->swap_uv][(size_t)cy * im->stride[2 - f->swap_uv] + cx] = cr;
	}
}

#endif
