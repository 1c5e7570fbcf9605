/* Internal to convert*.c: the hub image between a reader and a writer, the
 * scratch buffers of a context, and the per-family readers/writers. Not for
 * other modules (they use convert.h). */
#ifndef VC_CONVERT_INT_H
#define VC_CONVERT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/color.h"
#include "common/convert.h"

/* Hub kinds: 8-bit planar YUV (4:2:0, 4:2:2 or 4:4:4), a bare 8-bit luma
 * plane, or libyuv ARGB (bytes B G R A). */
enum { HUB_YUV = 1, HUB_Y, HUB_ARGB };

struct hub {
	int kind;
	int w, h;
	int cw, ch;          /* YUV: log2 chroma subsampling, 0 or 1 */
	const uint8_t *p[3]; /* may point into the source view: never written */
	int stride[3];
	struct vc_ycbcr enc; /* YUV/Y: how samples are encoded */
};

/* Planar 8-bit YUV at the destination's size and subsampling (any log2),
 * writable: either the destination's own planes or scratch. */
struct planar {
	int w, h, cw, ch;
	uint8_t *p[3];
	int stride[3];
};

enum { S_HUB, S_BAYER, S_SCALE, S_ARGB, S_ARGB2, S_OUT, S_RANGE, S_V422, S_FIELD, S_RGBR, S_COUNT };

struct vc_conv {
	uint8_t *buf[S_COUNT];
	size_t cap[S_COUNT];
};

/* Scratch slot i with at least size bytes (contents not kept); NULL on ENOMEM. */
uint8_t *conv_scratch(struct vc_conv *c, int i, size_t size);

static inline int cdim(int n, int log2) { return (n + (1 << log2) - 1) >> log2; }

/* Layout of an ARGB-family row libyuv knows, matched on the row's bit fields. */
enum { LY_ARGB, LY_ABGR, LY_BGRA, LY_RGBA, LY_RGB24, LY_RAW, LY_RGB565, LY_ARGB1555, LY_ARGB4444, LY_NONE };
int conv_rgb_libyuv(const struct vc_fmt *f);

/* 1 YUYV-like, 2 UYVY-like 8-bit packed 4:2:2 (libyuv reads/writes them),
 * 0 otherwise; *swap when V precedes U. */
int conv_packed422_kind(const struct vc_fmt *f, int *swap);

/* Readers: source view -> hub at the source size. -ENOMEM or 0. */
int conv_read_yuv(struct vc_conv *c, const struct vc_image *src, struct hub *h);
int conv_read_grey(struct vc_conv *c, const struct vc_image *src, struct hub *h);
int conv_read_rgb(struct vc_conv *c, const struct vc_image *src, int need_alpha, struct hub *h);
int conv_read_bayer(struct vc_conv *c, const struct vc_image *src, struct hub *h);

/* Writers. */
void conv_write_rgb(const uint8_t *argb, int argb_stride, const struct vc_image *dst);
int conv_argb_to_planar(struct vc_conv *c, const uint8_t *argb, int stride, int w, int h,
			struct vc_ycbcr enc, struct planar *out, int y_only);
int conv_emit_planar(struct vc_conv *c, const struct planar *pl, const struct vc_image *dst);
/* Where the planar stage should write for dst (its planes when planar). */
int conv_planar_for(struct vc_conv *c, const struct vc_image *dst, struct planar *pl);

/* Row (un)packing of 8..16-bit samples (grey and Bayer): 8-bit out/in. */
void conv_unpack_row8(const struct vc_fmt *f, const uint8_t *s, uint8_t *d, int w);
void conv_pack_row8(const struct vc_fmt *f, const uint8_t *s, uint8_t *d, int w);

#endif
