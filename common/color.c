/* Colorimetry resolution (V4L2 default rules) and 8-bit range conversion. */
#include "common/color.h"

#include <string.h>

#include <libyuv/convert_argb.h>
#include <libyuv/row.h>

/* V4L2 enum values (linux/videodev2.h), spelled out so this file builds
 * without kernel headers on any host. */
enum {
	CS_SMPTE240M = 2, CS_REC709 = 3, CS_JPEG = 7, CS_BT2020 = 10, CS_DCI_P3 = 12,
	ENC_601 = 1, ENC_709 = 2, ENC_XV601 = 3, ENC_XV709 = 4, ENC_SYCC = 5,
	ENC_BT2020 = 6, ENC_BT2020_CL = 7, ENC_SMPTE240M = 8,
	Q_FULL = 1, Q_LIM = 2,
};

static uint8_t matrix_of_enc(int enc)
{
	switch (enc) {
	case ENC_709: case ENC_XV709: case ENC_SMPTE240M:
		return VC_MATRIX_BT709;
	case ENC_BT2020: case ENC_BT2020_CL:
		return VC_MATRIX_BT2020;
	case ENC_601: case ENC_XV601: case ENC_SYCC:
		return VC_MATRIX_BT601;
	default:
		return 0;
	}
}

void vc_color_resolve(const struct vc_colorimetry *c, int is_rgb, struct vc_ycbcr *out)
{
	struct vc_colorimetry z = { 0 };

	if (!c)
		c = &z;
	uint8_t m = matrix_of_enc(c->ycbcr_enc);
	if (!m) { /* V4L2_MAP_YCBCR_ENC_DEFAULT */
		if (c->colorspace == CS_REC709 || c->colorspace == CS_DCI_P3 ||
		    c->colorspace == CS_SMPTE240M)
			m = VC_MATRIX_BT709;
		else if (c->colorspace == CS_BT2020)
			m = VC_MATRIX_BT2020;
		else
			m = VC_MATRIX_BT601;
	}
	out->matrix = m;
	if (c->quantization == Q_FULL)
		out->full_range = 1;
	else if (c->quantization == Q_LIM)
		out->full_range = 0;
	else /* V4L2_MAP_QUANTIZATION_DEFAULT */
		out->full_range = is_rgb || c->colorspace == CS_JPEG;
}

void vc_color_resolve_fmt(const struct vc_fmt *f, const struct vc_colorimetry *c,
			  struct vc_ycbcr *out)
{
	/* Grey counts as RGB-like here: a bare luma plane from a sensor or a
	 * depth camera is full range unless the driver says otherwise. */
	int is_rgb = f && (f->family == VC_FAM_RGB || f->family == VC_FAM_BAYER ||
			   f->family == VC_FAM_GREY);
	vc_color_resolve(c, is_rgb, out);
}

struct vc_colorimetry vc_color_from_ycbcr(struct vc_ycbcr e)
{
	struct vc_colorimetry c = { 0 };

	c.ycbcr_enc = e.matrix == VC_MATRIX_BT709 ? ENC_709 :
		      e.matrix == VC_MATRIX_BT2020 ? ENC_BT2020 : ENC_601;
	c.quantization = e.full_range ? Q_FULL : Q_LIM;
	return c;
}

const struct YuvConstants *vc_color_libyuv(struct vc_ycbcr e, int yvu)
{
	int full = e.full_range != 0;

	switch (e.matrix) {
	case VC_MATRIX_BT709:
		if (yvu)
			return full ? &kYvuF709Constants : &kYvuH709Constants;
		return full ? &kYuvF709Constants : &kYuvH709Constants;
	case VC_MATRIX_BT2020:
		if (yvu)
			return full ? &kYvuV2020Constants : &kYvu2020Constants;
		return full ? &kYuvV2020Constants : &kYuv2020Constants;
	default:
		if (yvu)
			return full ? &kYvuJPEGConstants : &kYvuI601Constants;
		return full ? &kYuvJPEGConstants : &kYuvI601Constants;
	}
}

void vc_color_range_lut(uint8_t lut[256], int from_full, int to_full, int chroma)
{
	/* Limited: Y 16 + 219 v/255, C 128 + 224 (v-128)/255. */
	double lim = chroma ? 224.0 : 219.0;
	double scale = 1.0, off_in = chroma ? 128 : 0, off_out = chroma ? 128 : 0;

	if (!from_full && to_full) {
		scale = 255.0 / lim;
		if (!chroma)
			off_in = 16;
	} else if (from_full && !to_full) {
		scale = lim / 255.0;
		if (!chroma)
			off_out = 16;
	}
	for (int i = 0; i < 256; i++) {
		double v = (i - off_in) * scale + off_out + 0.5;
		lut[i] = v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
	}
}

void vc_color_apply_lut(const uint8_t *src, uint32_t src_stride, uint8_t *dst,
			uint32_t dst_stride, uint32_t width, uint32_t height,
			const uint8_t lut[256])
{
	/* libyuv has table lookups for ARGB only; a plane is a plain loop. */
	for (uint32_t y = 0; y < height; y++) {
		const uint8_t *s = src + (size_t)y * src_stride;
		uint8_t *d = dst + (size_t)y * dst_stride;
		for (uint32_t x = 0; x < width; x++)
			d[x] = lut[s[x]];
	}
}

/* GCC's -O2 "very cheap" vectoriser skips loops that need a scalar
 * epilogue; ask for the dynamic cost model on this hot loop only. */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZE __attribute__((optimize("vect-cost-model=dynamic")))
#else
#define VECTORIZE
#endif

/* out = min(255, max(0, in * k7 + pos - neg) >> 7) in unsigned 16-bit lanes:
 * k7 <= 150 and pos, neg < 2^12 keep every step below 2^16. */
VECTORIZE static void lin_row(const uint8_t *s, uint8_t *d, uint32_t w, uint16_t k7,
			      uint16_t pos, uint16_t neg)
{
	for (uint32_t i = 0; i < w; i++) {
		uint16_t v = (uint16_t)(s[i] * k7 + pos);
		v = v < neg ? neg : v;
		v = (uint16_t)((uint16_t)(v - neg) >> 7);
		d[i] = (uint8_t)(v > 255 ? 255 : v);
	}
}

void vc_color_range_plane(const uint8_t *src, uint32_t src_stride, uint8_t *dst,
			  uint32_t dst_stride, uint32_t width, uint32_t height, int from_full,
			  int to_full, int chroma)
{
	double lim = chroma ? 224.0 : 219.0, scale = 1.0;
	int in_off = chroma ? 128 : 0, out_off = chroma ? 128 : 0;

	if (!from_full == !to_full) {
		for (uint32_t y = 0; y < height && src != dst; y++)
			memcpy(dst + (size_t)y * dst_stride, src + (size_t)y * src_stride, width);
		return;
	}
	if (to_full) {
		scale = 255.0 / lim;
		in_off = chroma ? 128 : 16;
	} else {
		scale = lim / 255.0;
		out_off = chroma ? 128 : 16;
	}
	int k7 = (int)(scale * 128 + 0.5);
	int bias = 64 + out_off * 128 - in_off * k7;
	for (uint32_t y = 0; y < height; y++)
		lin_row(src + (size_t)y * src_stride, dst + (size_t)y * dst_stride, width, (uint16_t)k7,
			(uint16_t)(bias > 0 ? bias : 0), (uint16_t)(bias < 0 ? -bias : 0));
}
