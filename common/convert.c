/* Raw -> raw conversion and scaling: validates the views, picks a direct
 * libyuv function when one exists for the pair (same size), and otherwise
 * runs reader -> hub (8-bit planar YUV, luma, or ARGB) -> scale -> writer.
 * Readers and writers live in convert_read.c and convert_write.c. */
#define LOG_PREFIX "convert: "
#include "common/convert.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libyuv/convert.h>
#include <libyuv/convert_argb.h>
#include <libyuv/convert_from.h>
#include <libyuv/planar_functions.h>
#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>

#include "common/convert_int.h"
#include "common/memstat.h"
#include "common/log.h"

#define MAX_SIDE 16384

struct vc_conv *vc_conv_new(void)
{
	return calloc(1, sizeof(struct vc_conv));
}

void vc_conv_release(struct vc_conv *c)
{
	for (int i = 0; i < S_COUNT; i++) {
		vc_mem_count(VC_MEM_SCRATCH, -(long long)c->cap[i]);
		free(c->buf[i]);
		c->buf[i] = NULL;
		c->cap[i] = 0;
	}
}

void vc_conv_free(struct vc_conv *c)
{
	if (!c)
		return;
	vc_conv_release(c);
	free(c);
}

/* Which rows the readers/writers handle, by layout class and fields. */
static int fmt_ok(const struct vc_fmt *f, int as_dst)
{
	if (!f || f->group_bytes[0] == 0)
		return 0;
	switch (f->layout) {
	case VC_LAYOUT_PLANAR_YUV:
	case VC_LAYOUT_SEMIPLANAR:
		return f->depth == 8 && f->group_px == 1 && f->log2_chroma_w <= 2 &&
		       f->log2_chroma_h <= f->log2_chroma_w &&
		       f->color_planes == (f->layout == VC_LAYOUT_PLANAR_YUV ? 3 : 2) &&
		       f->group_bytes[1] && (f->color_planes == 2 || f->group_bytes[2]);
	case VC_LAYOUT_PACKED_YUV:
		return f->depth == 8 && f->color_planes == 1 && f->log2_chroma_h == 0 &&
		       f->log2_chroma_w <= 2 && f->group_px >= 1 && f->group_px <= 8;
	case VC_LAYOUT_PACKED_RGB:
		return f->group_bytes[0] <= 4 && f->r.depth && f->r.depth <= 8 &&
		       f->g.depth && f->g.depth <= 8 && f->b.depth && f->b.depth <= 8 &&
		       f->a.depth <= 8;
	case VC_LAYOUT_GREY:
		return f->depth >= 8 && f->depth <= 16;
	case VC_LAYOUT_BAYER:
		return !as_dst && f->depth >= 8 && f->depth <= 16 && f->cfa >= VC_CFA_BGGR &&
		       f->cfa <= VC_CFA_RGGB;
	default:
		return 0;
	}
}

int vc_conv_supported(const struct vc_fmt *src, const struct vc_fmt *dst)
{
	return fmt_ok(src, 0) && fmt_ok(dst, 1);
}

/* Minimum bytes of one line, and lines, of colour plane p. */
static void plane_need(const struct vc_fmt *f, uint32_t w, uint32_t h, int p,
		       size_t *row, size_t *lines)
{
	if (p == 0) {
		uint32_t gp = f->group_px ? f->group_px : 1;
		*row = (size_t)((w + gp - 1) / gp) * f->group_bytes[0];
		*lines = h;
	} else {
		*row = (size_t)cdim((int)w, f->log2_chroma_w) * f->group_bytes[p];
		*lines = (size_t)cdim((int)h, f->log2_chroma_h);
	}
}

static int check_view(const struct vc_image *v, int as_dst)
{
	if (!v || !fmt_ok(v->fmt, as_dst) || v->width < 1 || v->height < 1 ||
	    v->width > MAX_SIDE || v->height > MAX_SIDE)
		return -EINVAL;
	for (int p = 0; p < v->fmt->color_planes && p < 3; p++) {
		size_t row, lines;
		plane_need(v->fmt, v->width, v->height, p, &row, &lines);
		if (!v->plane[p] || v->stride[p] < row || v->stride[p] > INT32_MAX ||
		    v->plane_size[p] < (lines - 1) * v->stride[p] + row)
			return -EINVAL;
	}
	return 0;
}

/* ---- hub helpers ---- */

static int align64(int n) { return (n + 63) & ~63; }

/* The chroma line for luma line y of a 4:2:0 plane of n lines, centred
 * siting: line 2k is 3/4 chroma line k + 1/4 line k-1, line 2k+1 3/4 k +
 * 1/4 k+1; edges repeat. Repeating each chroma line twice instead shifts
 * colour by half a chroma line (2.5 dB worse against swscale on smooth
 * pictures, and what libyuv's NV12ToRGB24Matrix does); libyuv 1857's
 * I420To*MatrixFilter gets the first and last lines wrong (12 levels on a
 * steep vertical gradient). Works on interleaved UV lines too. */
static const uint8_t *chroma_line(const uint8_t *c, int cs, int n, int y, int bytes, uint8_t *buf)
{
	int k = y >> 1, nb = (y & 1) ? k + 1 : k - 1;

	if (nb < 0 || nb >= n)
		return c + (size_t)k * cs;
	InterpolatePlane(c + (size_t)k * cs, cs, c + (size_t)nb * cs, cs, buf, bytes, bytes, 1, 64);
	return buf;
}

typedef int (*i422_fn)(const uint8_t *, int, const uint8_t *, int, const uint8_t *, int,
		       uint8_t *, int, const struct YuvConstants *, int, int);

/* YUV hub -> ARGB (or libyuv RGB24) into d; 4:2:0 line by line through
 * chroma_line() (nothing frame-sized in between). */
static int hub_to_rgb(struct vc_conv *c, const struct hub *h, int swap, uint8_t *d, int ds,
		      const struct YuvConstants *k, int rgb24)
{
	const uint8_t *y = h->p[0], *u = h->p[swap ? 2 : 1], *v = h->p[swap ? 1 : 2];
	int sy = h->stride[0], su = h->stride[swap ? 2 : 1], sv = h->stride[swap ? 1 : 2];
	i422_fn f422 = rgb24 ? I422ToRGB24Matrix : I422ToARGBMatrix;

	if (h->cw == 0)
		return (rgb24 ? I444ToRGB24Matrix : I444ToARGBMatrix)(y, sy, u, su, v, sv, d, ds, k,
								     h->w, h->h) ? -EINVAL : 0;
	if (h->ch == 0)
		return f422(y, sy, u, su, v, sv, d, ds, k, h->w, h->h) ? -EINVAL : 0;
	int cw = cdim(h->w, 1), n = cdim(h->h, 1);
	uint8_t *buf = conv_scratch(c, S_V422, 2 * (size_t)align64(cw));
	if (!buf)
		return -ENOMEM;
	for (int r = 0; r < h->h; r++) {
		const uint8_t *ul = chroma_line(u, su, n, r, cw, buf);
		const uint8_t *vl = chroma_line(v, sv, n, r, cw, buf + align64(cw));
		if (f422(y + (size_t)r * sy, sy, ul, cw, vl, cw, d + (size_t)r * ds, ds, k, h->w, 1))
			return -EINVAL;
	}
	return 0;
}

typedef int (*nv_fn)(const uint8_t *, int, const uint8_t *, int, uint8_t *, int,
		     const struct YuvConstants *, int, int);

/* NV12/NV21 -> ARGB/RGB24 line by line, interpolating the interleaved
 * chroma lines instead of splitting them. */
static int nv_to_rgb(struct vc_conv *c, const struct vc_image *s, const struct vc_image *d,
		     int vu, int rgb24, const struct YuvConstants *k)
{
	int w = s->width, cwb = 2 * cdim(w, 1), n = cdim(s->height, 1);
	uint8_t *buf = conv_scratch(c, S_V422, (size_t)cwb);
	nv_fn f = rgb24 ? (vu ? NV21ToRGB24Matrix : NV12ToRGB24Matrix)
			: (vu ? NV21ToARGBMatrix : NV12ToARGBMatrix);

	if (!buf)
		return -ENOMEM;
	for (uint32_t r = 0; r < s->height; r++) {
		const uint8_t *uv = chroma_line(s->plane[1], s->stride[1], n, (int)r, cwb, buf);
		if (f(s->plane[0] + (size_t)r * s->stride[0], s->stride[0], uv, cwb,
		      d->plane[0] + (size_t)r * d->stride[0], d->stride[0], k, w, 1))
			return -EINVAL;
	}
	return 0;
}

typedef int (*yuv_scale_fn)(const uint8_t *, int, const uint8_t *, int, const uint8_t *, int,
			    int, int, uint8_t *, int, uint8_t *, int, uint8_t *, int, int, int,
			    enum FilterMode);

/* Indexed [ch][cw]; 4:4:0 does not occur (fmt_ok rejects it). */
static const yuv_scale_fn yuv_scale[2][2] = { { I444Scale, I422Scale }, { NULL, I420Scale } };

/* Scales a YUV/Y hub to w x h into scratch. */
static int scale_yuv_hub(struct vc_conv *c, struct hub *h, int w, int ht)
{
	int sy = align64(w), sc = align64(cdim(w, h->cw));
	size_t ny = (size_t)sy * ht, nc = (size_t)sc * cdim(ht, h->ch);
	uint8_t *b = conv_scratch(c, S_SCALE, ny + (h->kind == HUB_YUV ? 2 * nc : 0));

	if (!b)
		return -ENOMEM;
	if (h->kind == HUB_Y) {
		ScalePlane(h->p[0], h->stride[0], h->w, h->h, b, sy, w, ht, kFilterBox);
	} else if (yuv_scale[h->ch][h->cw](h->p[0], h->stride[0], h->p[1], h->stride[1], h->p[2],
					   h->stride[2], h->w, h->h, b, sy, b + ny, sc,
					   b + ny + nc, sc, w, ht, kFilterBox)) {
		return -EINVAL;
	}
	h->p[0] = b, h->p[1] = b + ny, h->p[2] = b + ny + nc;
	h->stride[0] = sy, h->stride[1] = h->stride[2] = sc;
	h->w = w, h->h = ht;
	return 0;
}

static int scale_argb_hub(struct vc_conv *c, struct hub *h, int w, int ht)
{
	uint8_t *b = conv_scratch(c, S_ARGB2, (size_t)w * 4 * ht);

	if (!b)
		return -ENOMEM;
	/* libyuv (1857) takes its 1/4 box path for an exact 4x horizontal
	 * factor whatever the vertical one and asserts (aborts) when that is an
	 * even integer not divisible by 4 (RGB24 64x48 -> 16x8): filter
	 * bilinearly there instead. */
	enum FilterMode fm = kFilterBox;
	if (h->w == 4 * w && h->h % ht == 0 && (h->h / ht) % 2 == 0 && (h->h / ht) % 4 != 0)
		fm = kFilterBilinear;
	if (ARGBScale(h->p[0], h->stride[0], h->w, h->h, b, w * 4, w, ht, fm))
		return -EINVAL;
	h->p[0] = b, h->stride[0] = w * 4, h->w = w, h->h = ht;
	return 0;
}

/* libyuv (1857) keeps its YUV->RGB coefficients in signed bytes and clamps
 * the blue one (UB) at 2.0: limited-range BT.709 and BT.2020 (2.11, 2.14)
 * come out up to 9 levels off in saturated blue, BT.601 (2.02) ~2. Such
 * hubs are widened to full range first (a LUT pass) and decoded with the
 * full-range constants, which are not clamped. */
static int needs_widen(struct vc_ycbcr e)
{
	return !e.full_range && e.matrix != VC_MATRIX_BT601;
}

static int widen_hub(struct vc_conv *c, struct hub *h)
{
	int sy = align64(h->w), cwid = cdim(h->w, h->cw), sc = align64(cwid), chei = cdim(h->h, h->ch);
	size_t ny = (size_t)sy * h->h, nc = (size_t)sc * chei;
	int yuv = h->kind == HUB_YUV;
	uint8_t *b = conv_scratch(c, S_RANGE, ny + (yuv ? 2 * nc : 0));

	if (!b)
		return -ENOMEM;
	vc_color_range_plane(h->p[0], h->stride[0], b, sy, h->w, h->h, 0, 1, 0);
	h->p[0] = b, h->stride[0] = sy;
	if (yuv) {
		vc_color_range_plane(h->p[1], h->stride[1], b + ny, sc, cwid, chei, 0, 1, 1);
		vc_color_range_plane(h->p[2], h->stride[2], b + ny + nc, sc, cwid, chei, 0, 1, 1);
		h->p[1] = b + ny, h->p[2] = b + ny + nc, h->stride[1] = h->stride[2] = sc;
	}
	h->enc.full_range = 1;
	return 0;
}

/* YUV/Y hub -> ARGB hub at the same size (scratch). */
static int yuv_hub_to_argb(struct vc_conv *c, struct hub *h)
{
	int st = h->w * 4;
	uint8_t *b = conv_scratch(c, S_ARGB, (size_t)st * h->h);
	if (!b)
		return -ENOMEM;
	if (needs_widen(h->enc) && widen_hub(c, h))
		return -ENOMEM;
	const struct YuvConstants *k = vc_color_libyuv(h->enc, 0);
	if (h->kind == HUB_Y)
		I400ToARGBMatrix(h->p[0], h->stride[0], b, st, k, h->w, h->h);
	else if (hub_to_rgb(c, h, 0, b, st, k, 0))
		return -ENOMEM;
	h->kind = HUB_ARGB;
	h->p[0] = b, h->stride[0] = st, h->p[1] = h->p[2] = NULL;
	return 0;
}

/* Same-size change of chroma subsampling (log2 s* -> d*) for a w x h
 * picture. Each destination sample is the mean of the source over exactly
 * its block of pixels (source samples repeat over theirs), so blocks stay
 * aligned at odd sizes; a generic resize (33 -> 9 columns) would smear
 * neighbouring blocks together. libyuv's box filter when the factors are
 * exact. */
static void chroma_resample(const uint8_t *s, int ss, int slw, int slh, uint8_t *d, int ds,
			    int dlw, int dlh, int w, int h)
{
	int sw = cdim(w, slw), sh = cdim(h, slh), dw = cdim(w, dlw), dh = cdim(h, dlh);

	if (dlw >= slw && dlh >= slh && sw == dw << (dlw - slw) && sh == dh << (dlh - slh)) {
		ScalePlane(s, ss, sw, sh, d, ds, dw, dh, kFilterBox);
		return;
	}
	for (int cy = 0; cy < dh; cy++) {
		int y0 = cy << dlh, y1 = (cy + 1) << dlh < h ? (cy + 1) << dlh : h;
		for (int cx = 0; cx < dw; cx++) {
			int x0 = cx << dlw, x1 = (cx + 1) << dlw < w ? (cx + 1) << dlw : w;
			int sum = 0, n = 0;
			for (int sy = y0 >> slh; sy <= (y1 - 1) >> slh; sy++) {
				int a0 = y0 > sy << slh ? y0 : sy << slh;
				int a1 = y1 < (sy + 1) << slh ? y1 : (sy + 1) << slh;
				for (int sx = x0 >> slw; sx <= (x1 - 1) >> slw; sx++) {
					int b0 = x0 > sx << slw ? x0 : sx << slw;
					int b1 = x1 < (sx + 1) << slw ? x1 : (sx + 1) << slw;
					int wgt = (a1 - a0) * (b1 - b0);
					sum += s[(size_t)sy * ss + sx] * wgt;
					n += wgt;
				}
			}
			d[(size_t)cy * ds + cx] = (uint8_t)((sum + n / 2) / n);
		}
	}
}

/* ---- destination families ---- */

/* RGB quantization (V4L2 LIM_RANGE RGB is 16..235 per channel, as HDMI
 * capture cards send for CEA-861 timings): the ARGB hub is copied into
 * scratch with R, G and B mapped like luma samples (alpha kept), so every
 * writer after it sees full-range RGB (or, towards a limited RGB
 * destination, limited). */
static int range_argb_hub(struct vc_conv *c, struct hub *h, int from_full, int to_full)
{
	int st = h->w * 4;
	uint8_t *b = conv_scratch(c, S_RGBR, (size_t)st * h->h);

	if (!b)
		return -ENOMEM;
	/* every byte as a luma sample (vectorised), then the alpha bytes back */
	vc_color_range_plane(h->p[0], h->stride[0], b, st, st, h->h, from_full, to_full, 0);
	ARGBCopyAlpha(h->p[0], h->stride[0], b, st, h->w, h->h);
	h->p[0] = b;
	h->stride[0] = st;
	return 0;
}

static int to_rgb(struct vc_conv *c, struct hub *h, const struct vc_image *dst)
{
	int w = dst->width, ht = dst->height, ly = conv_rgb_libyuv(dst->fmt), r;
	struct vc_ycbcr de;

	vc_color_resolve_fmt(dst->fmt, &dst->color, &de);
	if (h->kind != HUB_ARGB) {
		if ((h->w != w || h->h != ht) && (r = scale_yuv_hub(c, h, w, ht)))
			return r;
		if (needs_widen(h->enc) && (r = widen_hub(c, h)))
			return r;
		if (h->kind == HUB_YUV && de.full_range && (ly == LY_ARGB || ly == LY_ABGR || ly == LY_RGB24 || ly == LY_RAW)) {
			/* Straight into the destination; the Yvu constants with U
			 * and V swapped give the R<->B swapped byte order. */
			int sw = ly == LY_ABGR || ly == LY_RAW;
			const struct YuvConstants *k = vc_color_libyuv(h->enc, sw);
			return hub_to_rgb(c, h, sw, dst->plane[0], dst->stride[0], k,
					  ly == LY_RGB24 || ly == LY_RAW);
		}
		if ((r = yuv_hub_to_argb(c, h)))
			return r;
	} else if ((h->w != w || h->h != ht) && (r = scale_argb_hub(c, h, w, ht))) {
		return r;
	}
	if (!de.full_range && (r = range_argb_hub(c, h, 1, 0)))
		return r;
	conv_write_rgb(h->p[0], h->stride[0], dst);
	return 0;
}

static int to_yuv(struct vc_conv *c, struct hub *h, const struct vc_image *dst, struct vc_ycbcr e)
{
	int y_only = dst->fmt->layout == VC_LAYOUT_GREY, r;
	struct planar pl;

	if ((r = conv_planar_for(c, dst, &pl)))
		return r;
	if (h->kind == HUB_YUV && !y_only && h->enc.matrix != e.matrix && (r = yuv_hub_to_argb(c, h)))
		return r;
	if (h->kind == HUB_ARGB) {
		if ((h->w != pl.w || h->h != pl.h) && (r = scale_argb_hub(c, h, pl.w, pl.h)))
			return r;
		if ((r = conv_argb_to_planar(c, h->p[0], h->stride[0], pl.w, pl.h, e, &pl, y_only)))
			return r;
		return conv_emit_planar(c, &pl, dst);
	}
	/* YUV or luma hub in the right matrix: one resampling pass per plane
	 * does the scaling and the change of chroma subsampling together. */
	ScalePlane(h->p[0], h->stride[0], h->w, h->h, pl.p[0], pl.stride[0], pl.w, pl.h, kFilterBox);
	int pcw = cdim(pl.w, pl.cw), pch = cdim(pl.h, pl.ch);
	if (!y_only && h->kind == HUB_Y) {
		SetPlane(pl.p[1], pl.stride[1], pcw, pch, 128);
		SetPlane(pl.p[2], pl.stride[2], pcw, pch, 128);
	} else if (!y_only && (h->w != pl.w || h->h != pl.h)) {
		int hcw = cdim(h->w, h->cw), hch = cdim(h->h, h->ch);
		ScalePlane(h->p[1], h->stride[1], hcw, hch, pl.p[1], pl.stride[1], pcw, pch, kFilterBox);
		ScalePlane(h->p[2], h->stride[2], hcw, hch, pl.p[2], pl.stride[2], pcw, pch, kFilterBox);
	} else if (!y_only) {
		for (int i = 1; i < 3; i++)
			chroma_resample(h->p[i], h->stride[i], h->cw, h->ch, pl.p[i], pl.stride[i],
					pl.cw, pl.ch, pl.w, pl.h);
	}
	if (h->enc.full_range != e.full_range) {
		int ff = h->enc.full_range, tf = e.full_range;
		vc_color_range_plane(pl.p[0], pl.stride[0], pl.p[0], pl.stride[0], pl.w, pl.h, ff, tf, 0);
		if (!y_only && h->kind == HUB_YUV) {
			vc_color_range_plane(pl.p[1], pl.stride[1], pl.p[1], pl.stride[1], pcw, pch, ff, tf, 1);
			vc_color_range_plane(pl.p[2], pl.stride[2], pl.p[2], pl.stride[2], pcw, pch, ff, tf, 1);
		}
	}
	return conv_emit_planar(c, &pl, dst);
}

/* ---- direct libyuv functions for common same-size pairs ---- */

static int is_planar420(const struct vc_fmt *f)
{
	return f->layout == VC_LAYOUT_PLANAR_YUV && f->log2_chroma_w == 1 && f->log2_chroma_h == 1;
}

static int is_semi420(const struct vc_fmt *f)
{
	return f->layout == VC_LAYOUT_SEMIPLANAR && f->log2_chroma_w == 1 && f->log2_chroma_h == 1;
}

/* Returns 1 when a direct function did the whole job, 0 to take the hub
 * path. Only called for equal sizes and valid 8-bit views. */
static int fast_path(struct vc_conv *c, const struct vc_image *s, const struct vc_image *d, struct vc_ycbcr se,
		     struct vc_ycbcr de)
{
	const struct vc_fmt *sf = s->fmt, *df = d->fmt;
	int w = s->width, h = s->height, ssw = 0, dsw = 0;
	int pk = conv_packed422_kind(sf, &ssw), dpk = conv_packed422_kind(df, &dsw);
	int same_enc = se.matrix == de.matrix && se.full_range == de.full_range;
	uint8_t *const *dp = d->plane;
	int dst_s[3] = { (int)d->stride[0], (int)d->stride[1], (int)d->stride[2] };
	int src_s[3] = { (int)s->stride[0], (int)s->stride[1], (int)s->stride[2] };

	if (pk && !ssw && is_planar420(df) && same_enc) { /* YUYV/UYVY -> I420/YV12 */
		int u = df->swap_uv ? 2 : 1, v = df->swap_uv ? 1 : 2;
		return !(pk == 1 ? YUY2ToI420 : UYVYToI420)(s->plane[0], src_s[0], dp[0], dst_s[0],
							  dp[u], dst_s[u], dp[v], dst_s[v], w, h);
	}
	if (pk && !ssw && is_semi420(df) && !df->swap_uv && same_enc) /* -> NV12 */
		return !(pk == 1 ? YUY2ToNV12 : UYVYToNV12)(s->plane[0], src_s[0], dp[0], dst_s[0],
							  dp[1], dst_s[1], w, h);
	if (is_planar420(sf) && same_enc) {
		int u = sf->swap_uv ? 2 : 1, v = sf->swap_uv ? 1 : 2;
		if (dpk) { /* I420 -> YUYV/UYVY (and their U/V-swapped twins) */
			int a = dsw ? v : u, b = dsw ? u : v;
			return !(dpk == 1 ? I420ToYUY2 : I420ToUYVY)(s->plane[0], src_s[0], s->plane[a],
								    src_s[a], s->plane[b], src_s[b],
								    dp[0], dst_s[0], w, h);
		}
		if (is_semi420(df)) { /* I420 -> NV12/NV21 */
			int a = df->swap_uv ? v : u, b = df->swap_uv ? u : v;
			return !I420ToNV12(s->plane[0], src_s[0], s->plane[a], src_s[a], s->plane[b],
					   src_s[b], dp[0], dst_s[0], dp[1], dst_s[1], w, h);
		}
	}
	if (is_semi420(sf)) {
		if (is_planar420(df) && same_enc) { /* NV12/NV21 -> I420/YV12 */
			int u = (df->swap_uv ^ sf->swap_uv) ? 2 : 1, v = u == 1 ? 2 : 1;
			return !NV12ToI420(s->plane[0], src_s[0], s->plane[1], src_s[1], dp[0], dst_s[0],
					   dp[u], dst_s[u], dp[v], dst_s[v], w, h);
		}
		int ly = conv_rgb_libyuv(df);
		if (!needs_widen(se) && de.full_range && (ly == LY_ARGB || ly == LY_ABGR || ly == LY_RGB24 || ly == LY_RAW)) {
			/* NV21 read as NV12 with Yvu constants swaps R and B. */
			int rb = ly == LY_ABGR || ly == LY_RAW;
			return !nv_to_rgb(c, s, d, sf->swap_uv ^ rb, ly == LY_RGB24 || ly == LY_RAW,
					  vc_color_libyuv(se, rb));
		}
	}
	int sly = conv_rgb_libyuv(sf);
	if ((sly == LY_RGB24 || sly == LY_RAW) && se.full_range && is_planar420(df) && de.matrix == VC_MATRIX_BT601 &&
	    !de.full_range) {
		int u = df->swap_uv ? 2 : 1, v = df->swap_uv ? 1 : 2;
		return !(sly == LY_RGB24 ? RGB24ToI420 : RAWToI420)(s->plane[0], src_s[0], dp[0], dst_s[0],
								   dp[u], dst_s[u], dp[v], dst_s[v], w, h);
	}
	return 0;
}

/* Same row, size and encoding: the planes are copied as they are (a
 * caller should not even ask, but if it does nothing is lost). */
static int copy_same(const struct vc_image *s, const struct vc_image *d, struct vc_ycbcr se,
		     struct vc_ycbcr de)
{
	if (s->fmt != d->fmt || se.full_range != de.full_range ||
	    (s->fmt->family != VC_FAM_RGB && se.matrix != de.matrix))
		return 0;
	for (int p = 0; p < s->fmt->color_planes && p < 3; p++) {
		size_t row, lines;
		plane_need(s->fmt, s->width, s->height, p, &row, &lines);
		CopyPlane(s->plane[p], (int)s->stride[p], d->plane[p], (int)d->stride[p], (int)row,
			  (int)lines);
	}
	return 1;
}

static inline unsigned get16(const uint8_t *p, int be)
{
	return be ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

/* Grey with 16-bit containers on both sides (Y10 -> Y16, Y16 -> Y16_BE...):
 * sample by sample at full depth rather than through the 8-bit hub. */
static int grey_deep(const struct vc_image *s, const struct vc_image *d, struct vc_ycbcr se,
		     struct vc_ycbcr de)
{
	const struct vc_fmt *sf = s->fmt, *df = d->fmt;

	if (sf->layout != VC_LAYOUT_GREY || df->layout != VC_LAYOUT_GREY ||
	    sf->packing != VC_PACK_16 || df->packing != VC_PACK_16 || se.full_range != de.full_range)
		return 0;
	unsigned smask = sf->depth >= 16 ? 0xffffu : (1u << sf->depth) - 1;
	for (uint32_t y = 0; y < s->height; y++) {
		const uint8_t *a = s->plane[0] + (size_t)y * s->stride[0];
		uint8_t *b = d->plane[0] + (size_t)y * d->stride[0];
		for (uint32_t x = 0; x < s->width; x++) {
			unsigned v = get16(a + 2 * x, sf->big_endian) & smask;
			/* to 16 bits (top bits replicated down), then to the target depth */
			unsigned v16 = (v << (16 - sf->depth)) | (v >> (2 * sf->depth - 16));
			unsigned o = v16 >> (16 - df->depth);
			b[2 * x + !df->big_endian] = (uint8_t)(o >> 8);
			b[2 * x + df->big_endian] = (uint8_t)o;
		}
	}
	return 1;
}

/* Lines per strip: a multiple of every vertical chroma subsampling (4:1:0). */
#define STRIP 32

/* Lines y .. y+n of a view (y a multiple of STRIP). */
static struct vc_image strip_of(const struct vc_image *v, uint32_t y, uint32_t n)
{
	struct vc_image s = *v;

	for (int p = 0; p < v->fmt->color_planes && p < 3; p++) {
		size_t off = (size_t)(p ? y >> v->fmt->log2_chroma_h : y) * v->stride[p];
		s.plane[p] = v->plane[p] + off;
		s.plane_size[p] = v->plane_size[p] - off;
	}
	s.height = n;
	return s;
}

static int convert_views(struct vc_conv *c, const struct vc_image *src,
			 const struct vc_image *dst, struct vc_ycbcr se, struct vc_ycbcr de)
{
	struct hub h = { 0 };
	int r;

	h.enc = se;
	switch (src->fmt->layout) {
	case VC_LAYOUT_PACKED_RGB:
		r = conv_read_rgb(c, src, dst->fmt->has_alpha, &h);
		break;
	case VC_LAYOUT_BAYER:
		r = conv_read_bayer(c, src, &h);
		break;
	case VC_LAYOUT_GREY:
		r = conv_read_grey(c, src, &h);
		break;
	default:
		r = conv_read_yuv(c, src, &h);
		break;
	}
	if (r)
		return r;
	if (h.kind == HUB_ARGB && !se.full_range && (r = range_argb_hub(c, &h, 0, 1)))
		return r;
	return dst->fmt->layout == VC_LAYOUT_PACKED_RGB ? to_rgb(c, &h, dst) : to_yuv(c, &h, dst, de);
}

/* V4L2 field orders (linux/videodev2.h) whose two fields are stored one
 * after the other in each plane. */
enum { FIELD_SEQ_TB = 5, FIELD_SEQ_BT = 6 };

/* Sequential fields (SEQ_TB/SEQ_BT) woven into a progressive frame in
 * scratch, plane by plane: frame line 2i is top-field line i, 2i+1
 * bottom-field line i (chroma lines likewise). *w is the woven view. */
static int weave(struct vc_conv *c, const struct vc_image *src, struct vc_image *w)
{
	size_t total = 0, off[3];

	*w = *src;
	w->field = 0;
	for (int p = 0; p < src->fmt->color_planes && p < 3; p++) {
		size_t row, lines;
		plane_need(src->fmt, src->width, src->height, p, &row, &lines);
		off[p] = total;
		total += lines * src->stride[p];
	}
	uint8_t *b = conv_scratch(c, S_FIELD, total);
	if (!b)
		return -ENOMEM;
	for (int p = 0; p < src->fmt->color_planes && p < 3; p++) {
		size_t row, lines;
		plane_need(src->fmt, src->width, src->height, p, &row, &lines);
		size_t first = (lines + 1) / 2; /* lines of the field stored first */
		for (size_t i = 0; i < lines; i++) {
			/* stored index of frame line i */
			int top = (i & 1) == 0, stored_first = (src->field == FIELD_SEQ_TB) == top;
			size_t k = stored_first ? i / 2 : first + i / 2;
			if (k >= lines)
				k = lines - 1;
			memcpy(b + off[p] + i * src->stride[p], src->plane[p] + k * src->stride[p], row);
		}
		w->plane[p] = b + off[p];
		w->plane_size[p] = lines * src->stride[p];
	}
	return 0;
}

int vc_conv_run(struct vc_conv *c, const struct vc_image *src, const struct vc_image *dst)
{
	struct vc_ycbcr se, de;
	struct vc_image woven;
	int r;

	if (!c || check_view(src, 0) || check_view(dst, 1))
		return -EINVAL;
	if (src->field == FIELD_SEQ_TB || src->field == FIELD_SEQ_BT) {
		if ((r = weave(c, src, &woven)))
			return r;
		src = &woven;
	}
	vc_color_resolve_fmt(src->fmt, &src->color, &se);
	vc_color_resolve_fmt(dst->fmt, &dst->color, &de);
	if (src->width == dst->width && src->height == dst->height &&
	    (copy_same(src, dst, se, de) || grey_deep(src, dst, se, de) ||
	     fast_path(c, src, dst, se, de)))
		return 0;
	if (src->width == dst->width && src->height == dst->height &&
	    src->fmt->layout != VC_LAYOUT_BAYER && src->fmt->log2_chroma_h == 0 &&
	    src->height > 2 * STRIP) {
		/* Same size: run the hub pipeline strip by strip so the
		 * intermediate stays in cache (demosaic needs neighbour lines
		 * and scaling whole planes, so those run on the full frame). */
		r = 0;
		for (uint32_t y = 0; y < src->height && !r; y += STRIP) {
			uint32_t n = src->height - y < STRIP ? src->height - y : STRIP;
			struct vc_image s = strip_of(src, y, n), d = strip_of(dst, y, n);
			r = convert_views(c, &s, &d, se, de);
		}
	} else {
		r = convert_views(c, src, dst, se, de);
	}
	if (r == -ENOMEM)
		log_error("out of memory converting %ux%u -> %ux%u", src->width, src->height,
			  dst->width, dst->height);
	return r;
}
