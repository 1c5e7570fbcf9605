/* Readers: any raw source view -> an 8-bit hub (planar YUV, luma, or ARGB).
 * One reader per layout family, driven by the row's fields; libyuv wherever
 * it has the layout, plain loops only for what it lacks (Y41P and other
 * generic packed YUV, 4:1:x chroma, 16-bit/MIPI grey, bit-field RGB that is
 * not a libyuv layout, Bayer). */
#include "common/convert_int.h"
#include "common/memstat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libyuv/convert.h>
#include <libyuv/convert_argb.h>
#include <libyuv/planar_functions.h>
#include <libyuv/scale.h>

uint8_t *conv_scratch(struct vc_conv *c, int i, size_t size)
{
	if (size <= c->cap[i])
		return c->buf[i];
	vc_mem_count(VC_MEM_SCRATCH, -(long long)c->cap[i]);
	free(c->buf[i]);
	c->buf[i] = malloc(size);
	c->cap[i] = c->buf[i] ? size : 0;
	vc_mem_count(VC_MEM_SCRATCH, (long long)c->cap[i]);
	return c->buf[i];
}

static int align64(int n) { return (n + 63) & ~63; }

/* Allocates a planar 8-bit hub of w x h with log2 subsampling cw/ch in slot. */
static int alloc_yuv(struct vc_conv *c, int slot, struct hub *h, int w, int hgt, int cw, int ch)
{
	int sy = align64(w), sc = align64(cdim(w, cw));
	size_t ny = (size_t)sy * hgt, nc = (size_t)sc * cdim(hgt, ch);
	uint8_t *b = conv_scratch(c, slot, ny + 2 * nc);

	if (!b)
		return -ENOMEM;
	h->p[0] = b;
	h->p[1] = b + ny;
	h->p[2] = b + ny + nc;
	h->stride[0] = sy;
	h->stride[1] = h->stride[2] = sc;
	h->w = w;
	h->h = hgt;
	h->cw = cw;
	h->ch = ch;
	return 0;
}

/* Generic packed YUV (Y41P, AYUV, ...): per group, samples at the row's
 * byte offsets; chroma replicated into a hub of at most 4:2:2. */
static void read_packed_generic(const struct vc_image *src, struct hub *h)
{
	const struct vc_fmt *f = src->fmt;
	int w = src->width, gp = f->group_px ? f->group_px : 1, gb = f->group_bytes[0];
	int lw = f->log2_chroma_w, nch = gp >> lw, rep = 1 << (lw - h->cw);
	int hcw = cdim(w, h->cw);
	uint8_t *y = (uint8_t *)h->p[0], *u = (uint8_t *)h->p[1], *v = (uint8_t *)h->p[2];

	if (nch < 1)
		nch = 1;
	for (uint32_t r = 0; r < src->height; r++) {
		const uint8_t *s = src->plane[0] + (size_t)r * src->stride[0];
		uint8_t *yr = y + (size_t)r * h->stride[0];
		uint8_t *ur = u + (size_t)r * h->stride[1], *vr = v + (size_t)r * h->stride[2];

		for (int g = 0; g * gp < w; g++, s += gb) {
			for (int i = 0; i < gp && g * gp + i < w; i++)
				yr[g * gp + i] = f->y_off[i] == VC_NONE ? 0 : s[f->y_off[i]];
			for (int k = 0; k < nch && k < 2; k++) {
				uint8_t cu = f->u_off[k] == VC_NONE ? 128 : s[f->u_off[k]];
				uint8_t cv = f->v_off[k] == VC_NONE ? 128 : s[f->v_off[k]];
				int first = ((g * gp) >> h->cw) + k * rep;
				for (int j = 0; j < rep && first + j < hcw; j++) {
					ur[first + j] = cu;
					vr[first + j] = cv;
				}
			}
		}
	}
}

/* Bilinear upsampling of a chroma plane by 2^lw x 2^lh with samples at the
 * centres of their blocks (as swscale and JPEG site them). libyuv's
 * ScalePlane maps corner to corner, which shifts 4:1:x chroma by ~1.5
 * pixels. Fixed point, 8 fractional bits. */
static void upsample_centred(const uint8_t *s, int ss, int sw, int sh, int lw, int lh,
			     uint8_t *d, int ds, int dw, int dh)
{
	for (int y = 0; y < dh; y++) {
		/* source position (y + 0.5) / 2^lh - 0.5, in 1/256 */
		int fy = (((2 * y + 1) << 7) >> lh) - 128;
		int y0 = fy < 0 ? 0 : fy >> 8, wy = fy < 0 ? 0 : fy & 255;
		int y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
		const uint8_t *r0 = s + (size_t)y0 * ss, *r1 = s + (size_t)y1 * ss;
		uint8_t *o = d + (size_t)y * ds;
		for (int x = 0; x < dw; x++) {
			int fx = (((2 * x + 1) << 7) >> lw) - 128;
			int x0 = fx < 0 ? 0 : fx >> 8, wx = fx < 0 ? 0 : fx & 255;
			int x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
			int top = r0[x0] * (256 - wx) + r0[x1] * wx;
			int bot = r1[x0] * (256 - wx) + r1[x1] * wx;
			o[x] = (uint8_t)((top * (256 - wy) + bot * wy + 32768) >> 16);
		}
	}
}

/* Whether a packed row is the 2-pixel/4-byte 8-bit 4:2:2 family libyuv
 * reads (YUYV-like: y at 0,2; UYVY-like: y at 1,3). Returns 1 YUY2-like,
 * 2 UYVY-like, 0 other; *swap when V comes before U. */
int conv_packed422_kind(const struct vc_fmt *f, int *swap)
{
	if (f->layout != VC_LAYOUT_PACKED_YUV || f->group_px != 2 || f->group_bytes[0] != 4 ||
	    f->depth != 8 || f->log2_chroma_w != 1 || f->log2_chroma_h != 0)
		return 0;
	*swap = f->v_off[0] < f->u_off[0];
	if (f->y_off[0] == 0 && f->y_off[1] == 2)
		return 1;
	if (f->y_off[0] == 1 && f->y_off[1] == 3)
		return 2;
	return 0;
}

int conv_read_yuv(struct vc_conv *c, const struct vc_image *src, struct hub *h)
{
	const struct vc_fmt *f = src->fmt;
	int w = src->width, ht = src->height, lw = f->log2_chroma_w, lh = f->log2_chroma_h;
	/* 4:1:x chroma is interpolated straight to 4:4:4: one resampling, not
	 * two (4:1:0 -> 4:2:0 -> RGB lost ~6 dB against swscale). */
	int hcw = lw > 1 || lh > 1 ? 0 : lw, hch = lw > 1 || lh > 1 ? 0 : lh;

	h->kind = HUB_YUV;
	if (f->layout == VC_LAYOUT_PLANAR_YUV) {
		const uint8_t *u = src->plane[f->swap_uv ? 2 : 1], *v = src->plane[f->swap_uv ? 1 : 2];
		int su = src->stride[f->swap_uv ? 2 : 1], sv = src->stride[f->swap_uv ? 1 : 2];

		if (lw == hcw && lh == hch) { /* read in place */
			h->w = w, h->h = ht, h->cw = lw, h->ch = lh;
			h->p[0] = src->plane[0], h->p[1] = u, h->p[2] = v;
			h->stride[0] = src->stride[0], h->stride[1] = su, h->stride[2] = sv;
			return 0;
		}
		/* 4:1:0 / 4:1:1: chroma interpolated to a 4:4:4 hub. */
		if (alloc_yuv(c, S_HUB, h, w, ht, hcw, hch))
			return -ENOMEM;
		h->p[0] = src->plane[0];
		h->stride[0] = src->stride[0];
		upsample_centred(u, su, cdim(w, lw), cdim(ht, lh), lw, lh, (uint8_t *)h->p[1],
				 h->stride[1], w, ht);
		upsample_centred(v, sv, cdim(w, lw), cdim(ht, lh), lw, lh, (uint8_t *)h->p[2],
				 h->stride[2], w, ht);
		return 0;
	}
	if (alloc_yuv(c, S_HUB, h, w, ht, hcw, hch))
		return -ENOMEM;
	if (f->layout == VC_LAYOUT_SEMIPLANAR) {
		uint8_t *u = (uint8_t *)h->p[f->swap_uv ? 2 : 1], *v = (uint8_t *)h->p[f->swap_uv ? 1 : 2];

		h->p[0] = src->plane[0];
		h->stride[0] = src->stride[0];
		SplitUVPlane(src->plane[1], src->stride[1], u, h->stride[1], v, h->stride[2],
			     cdim(w, lw), cdim(ht, lh));
		return 0;
	}
	/* Packed. */
	int swap, kind = conv_packed422_kind(f, &swap);
	uint8_t *y = (uint8_t *)h->p[0], *u = (uint8_t *)h->p[swap ? 2 : 1], *v = (uint8_t *)h->p[swap ? 1 : 2];
	if (kind == 1)
		YUY2ToI422(src->plane[0], src->stride[0], y, h->stride[0], u, h->stride[1], v,
			   h->stride[2], w, ht);
	else if (kind == 2)
		UYVYToI422(src->plane[0], src->stride[0], y, h->stride[0], u, h->stride[1], v,
			   h->stride[2], w, ht);
	else
		read_packed_generic(src, h);
	return 0;
}

static inline unsigned rd16(const uint8_t *p, int be)
{
	return be ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

void conv_unpack_row8(const struct vc_fmt *f, const uint8_t *s, uint8_t *d, int w)
{
	switch (f->packing) {
	case VC_PACK_16: {
		unsigned mask = f->depth >= 16 ? 0xffffu : (1u << f->depth) - 1;
		int sh = f->depth > 8 ? f->depth - 8 : 0;
		for (int x = 0; x < w; x++)
			d[x] = (uint8_t)((rd16(s + 2 * x, f->big_endian) & mask) >> sh);
		break;
	}
	case VC_PACK_MIPI10: /* the 4 high bytes of each 5-byte group */
		for (int x = 0; x < w; x++)
			d[x] = s[(x >> 2) * 5 + (x & 3)];
		break;
	case VC_PACK_MIPI12: /* the 2 high bytes of each 3-byte group */
		for (int x = 0; x < w; x++)
			d[x] = s[(x >> 1) * 3 + (x & 1)];
		break;
	default:
		memcpy(d, s, (size_t)w);
		break;
	}
}

int conv_read_grey(struct vc_conv *c, const struct vc_image *src, struct hub *h)
{
	const struct vc_fmt *f = src->fmt;
	int w = src->width, ht = src->height;

	h->kind = HUB_Y;
	h->w = w, h->h = ht, h->cw = h->ch = 0;
	h->p[1] = h->p[2] = NULL;
	if (f->packing == VC_PACK_NONE && f->depth == 8) {
		h->p[0] = src->plane[0];
		h->stride[0] = src->stride[0];
		return 0;
	}
	int st = align64(w);
	uint8_t *b = conv_scratch(c, S_HUB, (size_t)st * ht);
	if (!b)
		return -ENOMEM;
	for (int r = 0; r < ht; r++)
		conv_unpack_row8(f, src->plane[0] + (size_t)r * src->stride[0], b + (size_t)r * st, w);
	h->p[0] = b;
	h->stride[0] = st;
	return 0;
}

/* ---- RGB ---- */

typedef int (*to_argb_fn)(const uint8_t *, int, uint8_t *, int, int, int);

struct rgb_layout {
	uint8_t bytes;
	struct vc_bits r, g, b, a;
	to_argb_fn rd;
};

/* libyuv's names count from the most significant byte of a little-endian
 * word: "ARGB" is bytes B G R A. */
static const struct rgb_layout layouts[LY_NONE] = {
	[LY_ARGB] = { 4, { 16, 8 }, { 8, 8 }, { 0, 8 }, { 24, 8 }, ARGBCopy },
	[LY_ABGR] = { 4, { 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 8 }, ABGRToARGB },
	[LY_BGRA] = { 4, { 8, 8 }, { 16, 8 }, { 24, 8 }, { 0, 8 }, BGRAToARGB },
	[LY_RGBA] = { 4, { 24, 8 }, { 16, 8 }, { 8, 8 }, { 0, 8 }, RGBAToARGB },
	[LY_RGB24] = { 3, { 16, 8 }, { 8, 8 }, { 0, 8 }, { 0, 0 }, RGB24ToARGB },
	[LY_RAW] = { 3, { 0, 8 }, { 8, 8 }, { 16, 8 }, { 0, 0 }, RAWToARGB },
	[LY_RGB565] = { 2, { 11, 5 }, { 5, 6 }, { 0, 5 }, { 0, 0 }, RGB565ToARGB },
	[LY_ARGB1555] = { 2, { 10, 5 }, { 5, 5 }, { 0, 5 }, { 15, 1 }, ARGB1555ToARGB },
	[LY_ARGB4444] = { 2, { 8, 4 }, { 4, 4 }, { 0, 4 }, { 12, 4 }, ARGB4444ToARGB },
};

static int same_bits(struct vc_bits x, struct vc_bits y)
{
	return x.shift == y.shift && x.depth == y.depth;
}

int conv_rgb_libyuv(const struct vc_fmt *f)
{
	if (f->layout != VC_LAYOUT_PACKED_RGB || f->big_endian)
		return LY_NONE;
	for (int i = 0; i < LY_NONE; i++) {
		const struct rgb_layout *l = &layouts[i];
		if (l->bytes == f->group_bytes[0] && same_bits(l->r, f->r) &&
		    same_bits(l->g, f->g) && same_bits(l->b, f->b) &&
		    (f->a.depth == 0 || same_bits(l->a, f->a)))
			return i;
	}
	return LY_NONE;
}

static inline uint32_t rd_word(const uint8_t *p, int n, int be)
{
	uint32_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint32_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

/* d-bit field -> 8 bits, so that (x >> (8 - d)) gives the field back. */
static inline uint8_t expand(uint32_t word, struct vc_bits b)
{
	uint32_t m = (1u << b.depth) - 1, v = (word >> b.shift) & m;
	return (uint8_t)((v * 255 + m / 2) / m);
}

static void read_rgb_generic(const struct vc_image *src, uint8_t *argb, int st)
{
	const struct vc_fmt *f = src->fmt;
	int n = f->group_bytes[0];

	for (uint32_t r = 0; r < src->height; r++) {
		const uint8_t *s = src->plane[0] + (size_t)r * src->stride[0];
		uint8_t *d = argb + (size_t)r * st;
		for (uint32_t x = 0; x < src->width; x++, s += n, d += 4) {
			uint32_t w = rd_word(s, n, f->big_endian);
			d[0] = f->b.depth ? expand(w, f->b) : 0;
			d[1] = f->g.depth ? expand(w, f->g) : 0;
			d[2] = f->r.depth ? expand(w, f->r) : 0;
			d[3] = f->has_alpha && f->a.depth ? expand(w, f->a) : 255;
		}
	}
}

int conv_read_rgb(struct vc_conv *c, const struct vc_image *src, int need_alpha, struct hub *h)
{
	const struct vc_fmt *f = src->fmt;
	int w = src->width, ht = src->height, ly = conv_rgb_libyuv(f);

	h->kind = HUB_ARGB;
	h->w = w, h->h = ht;
	h->p[1] = h->p[2] = NULL;
	if (ly == LY_ARGB && (f->has_alpha || !need_alpha)) {
		h->p[0] = src->plane[0];
		h->stride[0] = src->stride[0];
		return 0;
	}
	int st = w * 4;
	uint8_t *b = conv_scratch(c, S_HUB, (size_t)st * ht);
	if (!b)
		return -ENOMEM;
	h->p[0] = b;
	h->stride[0] = st;
	if (ly == LY_NONE) {
		read_rgb_generic(src, b, st);
		return 0;
	}
	layouts[ly].rd(src->plane[0], src->stride[0], b, st, w, ht);
	if (need_alpha && !f->has_alpha) /* padding bits are not alpha */
		for (size_t i = 3; i < (size_t)st * ht; i += 4)
			b[i] = 255;
	return 0;
}

/* ---- Bayer: unpack to 8 bits, then bilinear demosaic ---- */

/* Position of the red sample in the 2x2 tile, per enum vc_cfa (data, not
 * per-format code): x, y. Blue sits diagonally opposite. */
static const uint8_t cfa_red[5][2] = {
	[VC_CFA_BGGR] = { 1, 1 }, [VC_CFA_GBRG] = { 0, 1 },
	[VC_CFA_GRBG] = { 1, 0 }, [VC_CFA_RGGB] = { 0, 0 },
};

static inline int reflect(int i, int n)
{
	/* Mirror by 2 keeps the CFA parity; clamp when the image is too small. */
	if (i < 0)
		i = -i;
	if (i >= n)
		i = 2 * (n - 1) - i;
	return i < 0 ? 0 : i >= n ? n - 1 : i;
}

int conv_read_bayer(struct vc_conv *c, const struct vc_image *src, struct hub *h)
{
	const struct vc_fmt *f = src->fmt;
	int w = src->width, ht = src->height, cfa = f->cfa <= VC_CFA_RGGB ? f->cfa : VC_CFA_BGGR;
	int rx = cfa_red[cfa][0], ry = cfa_red[cfa][1];
	/* Column neighbour tables first (int-aligned), then the 8-bit mosaic. */
	size_t tab = 2 * (size_t)(w + 2) * sizeof(int);
	uint8_t *mem = conv_scratch(c, S_BAYER, tab + (size_t)w * ht);
	int st = w * 4;
	uint8_t *argb = conv_scratch(c, S_HUB, (size_t)st * ht);

	if (!mem || !argb)
		return -ENOMEM;
	int *xl = (int *)(void *)mem, *xr = xl + w + 2;
	uint8_t *raw = mem + tab;
	for (int x = 0; x < w; x++) {
		xl[x] = reflect(x - 1, w);
		xr[x] = reflect(x + 1, w);
	}
	for (int r = 0; r < ht; r++)
		conv_unpack_row8(f, src->plane[0] + (size_t)r * src->stride[0], raw + (size_t)r * w, w);
	for (int y = 0; y < ht; y++) {
		const uint8_t *up = raw + (size_t)reflect(y - 1, ht) * w;
		const uint8_t *mid = raw + (size_t)y * w;
		const uint8_t *dn = raw + (size_t)reflect(y + 1, ht) * w;
		uint8_t *d = argb + (size_t)y * st;
		/* This line holds G and one colour: red (byte 2 of ARGB) on red
		 * lines, blue (byte 0) otherwise; the other colour is on the lines
		 * above and below. */
		int red_row = (y & 1) == ry, ic = red_row ? 2 : 0, io = 2 - ic;
		int cpar = red_row ? rx : !rx;
		for (int x = 0; x < w; x++) {
			/* interior columns index directly, the edges reflect */
			int l = x > 0 && x < w - 1 ? x - 1 : xl[x], r = x > 0 && x < w - 1 ? x + 1 : xr[x];
			uint8_t *o = d + 4 * x;
			if ((x & 1) == cpar) {
				o[ic] = mid[x];
				o[1] = (uint8_t)((up[x] + dn[x] + mid[l] + mid[r] + 2) >> 2);
				o[io] = (uint8_t)((up[l] + up[r] + dn[l] + dn[r] + 2) >> 2);
			} else {
				o[1] = mid[x];
				o[ic] = (uint8_t)((mid[l] + mid[r] + 1) >> 1);
				o[io] = (uint8_t)((up[x] + dn[x] + 1) >> 1);
			}
			o[3] = 255;
		}
	}
	h->kind = HUB_ARGB;
	h->w = w, h->h = ht;
	h->p[0] = argb;
	h->stride[0] = st;
	h->p[1] = h->p[2] = NULL;
	return 0;
}
