/* A view of one picture in memory: format row, size, per-colour-plane pointers
 * and strides, colorimetry and field order. Converters, transforms and the
 * JPEG codec all speak this; a view owns nothing. Source views are read only:
 * no function ever writes through a view passed as `src`. */
#ifndef VC_IMAGE_H
#define VC_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/fmt.h"
#include "common/frame.h"

struct vc_image {
	const struct vc_fmt *fmt;
	uint32_t width, height;
	uint32_t stride[3];  /* bytes per line of each colour plane */
	uint8_t *plane[3];   /* first byte of each colour plane */
	size_t plane_size[3]; /* readable/writable bytes from plane[p] (bounds for checks) */
	struct vc_colorimetry color;
	uint32_t field;      /* enum v4l2_field (0/1 = progressive) */
};

/* A view of a frame. Checks that each memory plane's bytesused covers what
 * the geometry needs (raw formats; compressed: bytesused > 0).
 * Returns 0, or -EINVAL when the frame is shorter than its geometry. */
int vc_image_from_frame(const struct vc_frame *f, struct vc_image *img);

/* A view over memory laid out by geometry g: mem[i] is memory plane i. */
void vc_image_from_geom(const struct vc_fmt *fmt, const struct vc_geom *g,
			uint8_t *const mem[3], struct vc_image *img);

#endif
