/* Writers: ARGB -> any packed RGB row, ARGB -> planar YUV in any encoding,
 * and planar 8-bit YUV -> any YUV/grey row layout. libyuv where it has the
 * layout and the encoding; one generic loop per family for the rest. */
#include "common/convert_int.h"

#include <errno.h>
#include <string.h>

#include <libyuv/convert.h>
#include <libyuv/convert_from.h>
#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>

typedef int (*from_argb_fn)(const uint8_t *, int, uint8_t *, int, int, int);

static const from_argb_fn rgb_writers[LY_NONE] = {
	[LY_ARGB] = ARGBCopy, [LY_ABGR] = ARGBToABGR, [LY_BGRA] = ARGBToBGRA,
	[LY_RGBA] = ARGBToRGBA, [LY_RGB24] = ARGBToRGB24, [LY_RAW] = ARGBToRAW,
	[LY_RGB565] = ARGBToRGB565, [LY_ARGB1555] = ARGBToARGB1555,
	[LY_ARGB4444] = ARGBToARGB4444,
};

static inline uint32_t field(uint8_t v, struct vc_bits b)
{
	return b.depth ? (uint32_t)(v >> (8 - b.depth)) << b.shift : 0;
}

void conv_write_rgb(const uint8_t *argb, int argb_stride, const struct vc_image *dst)
{
	const struct vc_fmt *f = dst->fmt;
	int ly = conv_rgb_libyuv(f), n = f->group_bytes[0];

	if (ly != LY_NONE) {
		rgb_writers[ly](argb, argb_stride, dst->plane[0], dst->stride[0], dst->width,
				dst->height);
		return;
	}
	/* Padding bits are written as ones, real alpha from the A sample. */
	uint32_t pad = f->a.depth ? ((1u << f->a.depth) - 1) << f->a.shift : 0;
	for (uint32_t r = 0; r < dst->height; r++) {
		const uint8_t *s = argb + (size_t)r * argb_stride;
		uint8_t *d = dst->plane[0] + (size_t)r * dst->stride[0];
		for (uint32_t x = 0; x < dst->width; x++, s += 4, d += n) {
			uint32_t w = field(s[2], f->r) | field(s[1], f->g) | field(s[0], f->b);
			w |= f->has_alpha ? field(s[3], f->a) : pad;
			for (int i = 0; i < n; i++)
				d[f->big_endian ? n - 1 - i : i] = (uint8_t)(w >> (8 * i));
		}
	}
}

/* ---- ARGB -> planar YUV ---- */

struct coef {
	int32_t y[3], u[3], v[3], yoff;
};

/* Fixed-point (16.16) RGB -> Y'CbCr for an encoding, range folded in. */
static void make_coef(struct vc_ycbcr e, struct coef *k)
{
	double kr = 0.299, kb = 0.114;
	if (e.matrix == VC_MATRIX_BT709)
		kr = 0.2126, kb = 0.0722;
	else if (e.matrix == VC_MATRIX_BT2020)
		kr = 0.2627, kb = 0.0593;
	double kg = 1 - kr - kb, ys = e.full_range ? 1 : 219.0 / 255, cs = e.full_range ? 1 : 224.0 / 255;
	double Y[3] = { kr, kg, kb };
	double U[3] = { -kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5 };
	double V[3] = { 0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr)) };
	for (int i = 0; i < 3; i++) {
		k->y[i] = (int32_t)(Y[i] * ys * 65536 + 0.5);
		k->u[i] = (int32_t)(U[i] * cs * 65536 + (U[i] < 0 ? -0.5 : 0.5));
		k->v[i] = (int32_t)(V[i] * cs * 65536 + (V[i] < 0 ? -0.5 : 0.5));
	}
	k->yoff = e.full_range ? 0 : 16;
}

static inline uint8_t clamp8(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

static void argb_to_planar_generic(const uint8_t *argb, int stride, struct vc_ycbcr e,
				   const struct planar *o, int y_only)
{
	struct coef k;
	make_coef(e, &k);
	for (int r = 0; r < o->h; r++) {
		const uint8_t *s = argb + (size_t)r * stride;
		uint8_t *d = o->p[0] + (size_t)r * o->stride[0];
		for (int x = 0; x < o->w; x++, s += 4)
			d[x] = clamp8(((k.y[0] * s[2] + k.y[1] * s[1] + k.y[2] * s[0] + 32768) >> 16) + k.yoff);
	}
	if (y_only)
		return;
	int bw = 1 << o->cw, bh = 1 << o->ch;
	for (int cy = 0; cy < cdim(o->h, o->ch); cy++) {
		for (int cx = 0; cx < cdim(o->w, o->cw); cx++) {
			int sr = 0, sg = 0, sb = 0, n = 0;
			for (int j = 0; j < bh && cy * bh + j < o->h; j++) {
				const uint8_t *s = argb + (size_t)(cy * bh + j) * stride + (size_t)cx * bw * 4;
				for (int i = 0; i < bw && cx * bw + i < o->w; i++, s += 4, n++)
					sb += s[0], sg += s[1], sr += s[2];
			}
			/* Average first (rounded), then the matrix: as libyuv does. */
			int R = (sr + n / 2) / n, G = (sg + n / 2) / n, B = (sb + n / 2) / n;
			int32_t u = k.u[0] * R + k.u[1] * G + k.u[2] * B;
			int32_t v = k.v[0] * R + k.v[1] * G + k.v[2] * B;
			o->p[1][(size_t)cy * o->stride[1] + cx] = clamp8(128 + ((u + 32768) >> 16));
			o->p[2][(size_t)cy * o->stride[2] + cx] = clamp8(128 + ((v + 32768) >> 16));
		}
	}
}

int conv_argb_to_planar(struct vc_conv *c, const uint8_t *argb, int st, int w, int h,
			struct vc_ycbcr e, struct planar *o, int y_only)
{
	(void)c;
	uint8_t *const *p = o->p;
	const int *s = o->stride;

	if (e.matrix == VC_MATRIX_BT601 && !e.full_range) {
		if (y_only)
			return ARGBToI400(argb, st, p[0], s[0], w, h) ? -EINVAL : 0;
		if (o->cw == 1 && o->ch == 1)
			return ARGBToI420(argb, st, p[0], s[0], p[1], s[1], p[2], s[2], w, h) ? -EINVAL : 0;
		if (o->cw == 1 && o->ch == 0)
			return ARGBToI422(argb, st, p[0], s[0], p[1], s[1], p[2], s[2], w, h) ? -EINVAL : 0;
		if (o->cw == 0 && o->ch == 0)
			return ARGBToI444(argb, st, p[0], s[0], p[1], s[1], p[2], s[2], w, h) ? -EINVAL : 0;
	} else if (e.matrix == VC_MATRIX_BT601) {
		if (y_only)
			return ARGBToJ400(argb, st, p[0], s[0], w, h) ? -EINVAL : 0;
		if (o->cw == 1 && o->ch == 1)
			return ARGBToJ420(argb, st, p[0], s[0], p[1], s[1], p[2], s[2], w, h) ? -EINVAL : 0;
		if (o->cw == 1 && o->ch == 0)
			return ARGBToJ422(argb, st, p[0], s[0], p[1], s[1], p[2], s[2], w, h) ? -EINVAL : 0;
	}
	argb_to_planar_generic(argb, st, e, o, y_only);
	return 0;
}

/* ---- planar -> destination layout ---- */

static int align64(int n) { return (n + 63) & ~63; }

int conv_planar_for(struct vc_conv *c, const struct vc_image *dst, struct planar *pl)
{
	const struct vc_fmt *f = dst->fmt;
	int grey = f->layout == VC_LAYOUT_GREY;

	pl->w = dst->width, pl->h = dst->height;
	pl->cw = grey ? 0 : f->log2_chroma_w;
	pl->ch = grey ? 0 : f->log2_chroma_h;
	if (f->layout == VC_LAYOUT_PLANAR_YUV) {
		int u = f->swap_uv ? 2 : 1, v = f->swap_uv ? 1 : 2;
		pl->p[0] = dst->plane[0], pl->p[1] = dst->plane[u], pl->p[2] = dst->plane[v];
		pl->stride[0] = dst->stride[0], pl->stride[1] = dst->stride[u], pl->stride[2] = dst->stride[v];
		return 0;
	}
	int sy = align64(pl->w), sc = align64(cdim(pl->w, pl->cw));
	size_t ny = (size_t)sy * pl->h, nc = (size_t)sc * cdim(pl->h, pl->ch);
	uint8_t *b = conv_scratch(c, S_OUT, ny + 2 * nc);
	if (!b)
		return -ENOMEM;
	pl->p[0] = b, pl->p[1] = b + ny, pl->p[2] = b + ny + nc;
	pl->stride[0] = sy, pl->stride[1] = pl->stride[2] = sc;
	if (f->layout == VC_LAYOUT_SEMIPLANAR ||
	    (grey && f->packing == VC_PACK_NONE && f->depth == 8)) {
		pl->p[0] = dst->plane[0];
		pl->stride[0] = dst->stride[0];
	}
	if (grey)
		pl->p[1] = pl->p[2] = NULL;
	return 0;
}

void conv_pack_row8(const struct vc_fmt *f, const uint8_t *s, uint8_t *d, int w)
{
	int dp = f->depth;

	switch (f->packing) {
	case VC_PACK_16:
		for (int x = 0; x < w; x++) {
			/* Replicate the top bits into the low ones: 255 -> full scale. */
			unsigned v = dp >= 16 ? (unsigned)s[x] << 8 | s[x] :
				     (unsigned)s[x] << (dp - 8) | s[x] >> (16 - dp);
			d[2 * x + (f->big_endian ? 1 : 0)] = (uint8_t)v;
			d[2 * x + (f->big_endian ? 0 : 1)] = (uint8_t)(v >> 8);
		}
		break;
	case VC_PACK_MIPI10:
		for (int g = 0; g * 4 < w; g++) {
			uint8_t lo = 0;
			for (int i = 0; i < 4; i++) {
				uint8_t v = s[g * 4 + i < w ? g * 4 + i : w - 1];
				d[g * 5 + i] = v;
				lo |= (uint8_t)((v >> 6) << (2 * i));
			}
			d[g * 5 + 4] = lo;
		}
		break;
	case VC_PACK_MIPI12:
		for (int g = 0; g * 2 < w; g++) {
			uint8_t v0 = s[g * 2], v1 = s[g * 2 + 1 < w ? g * 2 + 1 : w - 1];
			d[g * 3] = v0, d[g * 3 + 1] = v1;
			d[g * 3 + 2] = (uint8_t)((v0 >> 4) | (v1 >> 4) << 4);
		}
		break;
	default:
		memcpy(d, s, (size_t)w);
		break;
	}
}

static void emit_packed_generic(const struct planar *pl, const struct vc_image *dst)
{
	const struct vc_fmt *f = dst->fmt;
	int w = pl->w, gp = f->group_px ? f->group_px : 1, gb = f->group_bytes[0];
	int nch = gp >> pl->cw, cmax = cdim(w, pl->cw) - 1;

	if (nch < 1)
		nch = 1;
	for (int r = 0; r < pl->h; r++) {
		const uint8_t *y = pl->p[0] + (size_t)r * pl->stride[0];
		const uint8_t *u = pl->p[1] + (size_t)(r >> pl->ch) * pl->stride[1];
		const uint8_t *v = pl->p[2] + (size_t)(r >> pl->ch) * pl->stride[2];
		uint8_t *d = dst->plane[0] + (size_t)r * dst->stride[0];
		for (int g = 0; g * gp < w; g++, d += gb) {
			for (int i = 0; i < gp && i < 8; i++) /* past the edge: repeat the last pixel */
				if (f->y_off[i] != VC_NONE)
					d[f->y_off[i]] = y[g * gp + i < w ? g * gp + i : w - 1];
			for (int k = 0; k < nch && k < 2; k++) {
				int ci = ((g * gp) >> pl->cw) + k;
				ci = ci > cmax ? cmax : ci;
				if (f->u_off[k] != VC_NONE)
					d[f->u_off[k]] = u[ci];
				if (f->v_off[k] != VC_NONE)
					d[f->v_off[k]] = v[ci];
			}
			if (f->a_off != VC_NONE)
				d[f->a_off] = 255;
		}
	}
}

int conv_emit_planar(struct vc_conv *c, const struct planar *pl, const struct vc_image *dst)
{
	const struct vc_fmt *f = dst->fmt;
	int swap;

	(void)c;
	switch (f->layout) {
	case VC_LAYOUT_PLANAR_YUV:
		return 0; /* written in place */
	case VC_LAYOUT_SEMIPLANAR:
		MergeUVPlane(pl->p[f->swap_uv ? 2 : 1], pl->stride[f->swap_uv ? 2 : 1],
			     pl->p[f->swap_uv ? 1 : 2], pl->stride[f->swap_uv ? 1 : 2],
			     dst->plane[1], dst->stride[1], cdim(pl->w, pl->cw), cdim(pl->h, pl->ch));
		return 0;
	case VC_LAYOUT_GREY:
		if (pl->p[0] != dst->plane[0])
			for (int r = 0; r < pl->h; r++)
				conv_pack_row8(f, pl->p[0] + (size_t)r * pl->stride[0],
					       dst->plane[0] + (size_t)r * dst->stride[0], pl->w);
		return 0;
	case VC_LAYOUT_PACKED_YUV: {
		int kind = conv_packed422_kind(f, &swap);
		const uint8_t *u = pl->p[swap ? 2 : 1], *v = pl->p[swap ? 1 : 2];
		int su = pl->stride[swap ? 2 : 1], sv = pl->stride[swap ? 1 : 2];
		if (kind == 1)
			I422ToYUY2(pl->p[0], pl->stride[0], u, su, v, sv, dst->plane[0],
				   dst->stride[0], pl->w, pl->h);
		else if (kind == 2)
			I422ToUYVY(pl->p[0], pl->stride[0], u, su, v, sv, dst->plane[0],
				   dst->stride[0], pl->w, pl->h);
		else
			emit_packed_generic(pl, dst);
		return 0;
	}
	default:
		return -EINVAL;
	}
}
