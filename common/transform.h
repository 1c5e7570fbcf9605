/* Rotation by 90/180/270 degrees and mirroring of raw images, through libyuv
 * (RotatePlane, RotatePlane_16, I422Rotate, ARGBRotate). A transform keeps
 * the format: the output is the same row of the format table as the input,
 * only its size may be swapped. Rows without a direct path (packed 4:2:2
 * such as YUYV, Bayer, MIPI-packed, 4:1:1 turned by 90 degrees, ...) are
 * converted by the caller first (vc_transform_supported() says which).
 * JPEG frames are turned losslessly by vc_jpeg_transform() instead. */
#ifndef VC_TRANSFORM_H
#define VC_TRANSFORM_H

#include <stddef.h>
#include <stdint.h>

#include "common/fmt.h"
#include "common/image.h"

/* The same values as negotiate.h and VC_JPEG_FLIP_*. */
#ifndef VC_FLIP_H
#define VC_FLIP_H 1u /* mirror left-right */
#define VC_FLIP_V 2u /* mirror top-bottom */
#endif

/* Flips first, then the clockwise rotation (as vc_jpeg_transform). */
struct vc_transform {
	uint16_t rotate; /* 0, 90, 180, 270 */
	uint8_t flip;    /* VC_FLIP_H | VC_FLIP_V */
};

/* Parses a user's text: comma-, plus- or space-separated items, each one of
 * "0" "90" "180" "270" (also "-90", "360", "rotate=90", "rot=90"),
 * "flip=h" "flip=v" "flip=hv" "flip=none", "hflip", "vflip", "mirror" (= hflip).
 * Later items override earlier ones of the same kind. NULL or "" is the
 * identity. Returns 0 and *t, or -EINVAL (*t untouched) for anything else,
 * including angles that are not a multiple of 90. */
int vc_transform_parse(const char *s, struct vc_transform *t);

/* Text of t as vc_transform_parse() reads it: "rotate=90,flip=h", "rotate=0";
 * returns buf (len >= 32 always suffices). */
const char *vc_transform_str(struct vc_transform t, char *buf, size_t len);

/* The canonical equal transform: flip is 0 or VC_FLIP_H (a vertical flip is
 * a horizontal one plus 180 degrees), rotate in 0..270. Two transforms give
 * the same picture exactly when their canonical forms are equal. */
struct vc_transform vc_transform_canon(struct vc_transform t);

/* 1 when t leaves every pixel where it is. */
int vc_transform_is_identity(struct vc_transform t);

/* Output size for a width x height input (swapped by 90 and 270). */
void vc_transform_size(struct vc_transform t, uint32_t width, uint32_t height,
		       uint32_t *out_w, uint32_t *out_h);

/* 1 when vc_transform_run() can apply t to images of row f directly (the
 * output being row f too), 0 when the caller must convert first (to YUV420,
 * YUV422P, YUV444M, GREY or a 32-bit RGB row: those always work). Directly
 * supported: planar and semi-planar YUV with equal horizontal and vertical
 * subsampling (4:2:0, 4:4:4, 4:1:0, NV12/NV21/NV24/NV42 and the ...M rows),
 * planar 4:2:2 (90/270: libyuv resamples the chroma, a small loss), any
 * one-pixel-per-group row (grey 8/16-bit, RGB 1..4 bytes, AYUV, YUV24), and
 * for every other raw row the identity and a pure vertical flip (except Bayer,
 * whose colour order a flip would change). Compressed rows: never. */
int vc_transform_supported(const struct vc_fmt *f, struct vc_transform t);

/* Writes t(src) into dst. dst->fmt must be src->fmt and dst's size
 * vc_transform_size() of src's; the two must not overlap. Strides and
 * padding of both are honoured; src is only read.
 * Returns 0; -ENOTSUP when !vc_transform_supported(src->fmt, t); -EINVAL for
 * a bad angle or flip, a size mismatch, a NULL plane, a stride below the
 * minimum or a plane_size shorter than the geometry needs. */
int vc_transform_run(const struct vc_image *src, const struct vc_image *dst,
		     struct vc_transform t);

#endif
