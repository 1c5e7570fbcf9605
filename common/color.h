/* Colorimetry: V4L2's colorspace / ycbcr_enc / quantization fields resolved to
 * the two facts pixel code needs (which YCbCr matrix, which range), following
 * the kernel's default rules (V4L2_MAP_YCBCR_ENC_DEFAULT,
 * V4L2_MAP_QUANTIZATION_DEFAULT), plus the libyuv constants for each and an
 * 8-bit range converter (JFIF is full-range BT.601; cameras mostly send
 * limited-range YUV). */
#ifndef VC_COLOR_H
#define VC_COLOR_H

#include <stdint.h>

#include "common/fmt.h"
#include "common/frame.h"

enum vc_matrix {
	VC_MATRIX_BT601 = 1, /* Kr 0.299,  Kb 0.114  (also SMPTE 170M, 470BG, sYCC, JFIF) */
	VC_MATRIX_BT709,     /* Kr 0.2126, Kb 0.0722 (SMPTE 240M approximated by this) */
	VC_MATRIX_BT2020,    /* Kr 0.2627, Kb 0.0593 (constant-luminance approximated) */
};

/* A resolved YCbCr encoding. full_range: Y 0..255 and Cb/Cr 0..255 around
 * 128; limited: Y 16..235, Cb/Cr 16..240. */
struct vc_ycbcr {
	uint8_t matrix;     /* enum vc_matrix */
	uint8_t full_range; /* 0 or 1 */
};

/* JFIF / JPEG: full-range BT.601. */
#define VC_YCBCR_JFIF ((struct vc_ycbcr){ VC_MATRIX_BT601, 1 })

/* Resolves c (V4L2 values, 0 = default) for pixel data that is RGB/Bayer
 * (is_rgb = 1) or YUV/grey (is_rgb = 0). For RGB data the result says which
 * YCbCr encoding a conversion to YUV should produce by default. Rules, as the
 * kernel's: ycbcr_enc default is BT.709 for REC709/DCI-P3, BT.2020 for BT2020,
 * SMPTE240M (-> BT.709 here) for SMPTE240M, otherwise BT.601 (sRGB and JPEG
 * included); quantization default is full for RGB and for the JPEG colorspace,
 * limited otherwise. Unknown values fall back to these defaults. */
void vc_color_resolve(const struct vc_colorimetry *c, int is_rgb, struct vc_ycbcr *out);

/* The same, with is_rgb taken from the row's family (RGB and Bayer are RGB;
 * YUV, grey and compressed are not). */
void vc_color_resolve_fmt(const struct vc_fmt *f, const struct vc_colorimetry *c,
			  struct vc_ycbcr *out);

/* The V4L2 colorimetry that names e exactly (colorspace 0, explicit
 * ycbcr_enc and quantization); handy to set a destination's colour. */
struct vc_colorimetry vc_color_from_ycbcr(struct vc_ycbcr e);

/* libyuv's YuvConstants for e (kYuvI601Constants, kYuvJPEGConstants,
 * kYuvH709Constants, kYuvF709Constants, kYuv2020Constants,
 * kYuvV2020Constants). yvu = 1 gives the kYvu* twin (U and V swapped), which
 * libyuv uses to produce ABGR-order output from *ToARGBMatrix functions. */
struct YuvConstants;
const struct YuvConstants *vc_color_libyuv(struct vc_ycbcr e, int yvu);

/* Fills lut[256] mapping 8-bit samples from one range to the other
 * (from_full/to_full: 1 full, 0 limited); chroma = 1 for Cb/Cr (scaled around
 * 128), 0 for Y. Rounded, clamped to 0..255; identity when ranges match. */
void vc_color_range_lut(uint8_t lut[256], int from_full, int to_full, int chroma);

/* Applies lut to a width x height 8-bit plane. dst may equal src (in place,
 * same stride). */
void vc_color_apply_lut(const uint8_t *src, uint32_t src_stride, uint8_t *dst,
			uint32_t dst_stride, uint32_t width, uint32_t height,
			const uint8_t lut[256]);

/* Range conversion of a width x height 8-bit plane by arithmetic instead of
 * a table (vectorises: ~4x faster than vc_color_apply_lut on x86/NEON), same
 * rounding within 1 level. dst may equal src. chroma: 1 for Cb/Cr. */
void vc_color_range_plane(const uint8_t *src, uint32_t src_stride, uint8_t *dst,
			  uint32_t dst_stride, uint32_t width, uint32_t height, int from_full,
			  int to_full, int chroma);

#endif
