/* Tests for common/convert.c and common/color.c: every raw pair of the
 * format table at small, odd and padded sizes with canaries and an untouched
 * source; colour bars in BT.601/BT.709 x limited/full against published
 * values; round trips; Bayer demosaic of flat mosaics in every CFA order and
 * packing; scaling from 1x1 to 4096 wide; bad views. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/color.h"
#include "common/convert.h"
#include "common/fmt.h"
#include "tests/unit/check.h"
#include "tests/unit/testbuf.h"

static uint32_t rng = 12345;
static uint8_t rnd8(void)
{
	rng = rng * 1103515245u + 12345u;
	return (uint8_t)(rng >> 16);
}

static void fill_random(struct buf *b)
{
	for (int p = 0; p < 3; p++)
		for (size_t i = 0; i < b->size[p]; i++)
			b->mem[p][i] = rnd8();
}

static const struct vc_fmt *need(const char *name)
{
	const struct vc_fmt *f = vc_fmt_find(name);
	CHECK(f != NULL, "format %s missing from the table", name);
	return f;
}

static int is_conv_src(const struct vc_fmt *f)
{
	return vc_fmt_is_raw(f) && f->layout != VC_LAYOUT_COMPRESSED;
}

static int is_conv_dst(const struct vc_fmt *f)
{
	return is_conv_src(f) && f->layout != VC_LAYOUT_BAYER;
}

static int near(int a, int b, int tol) { return abs(a - b) <= tol; }

static int chan_depth(const struct vc_fmt *f, int ch)
{
	const struct vc_bits *b[3] = { &f->r, &f->g, &f->b };
	return f->layout == VC_LAYOUT_PACKED_RGB ? b[ch]->depth : 8;
}

/* A flat colour through src -> dst arrives as that colour (within what the
 * narrower of the two rows can hold): catches swapped components, wrong
 * offsets and wrong bit fields for every pair. Bayer sources are covered by
 * bayer_flat. */
static void pair_colour(struct vc_conv *c, const struct vc_fmt *sf, const struct vc_fmt *df,
			const struct vc_fmt *rgb)
{
	static const uint8_t col[3] = { 200, 60, 120 };
	const uint32_t W = 7, H = 5;
	struct buf a, s, d, b;

	if (sf->layout == VC_LAYOUT_BAYER)
		return;
	if (buf_new(&a, rgb, W, H, 0, 0) || buf_new(&s, sf, W, H, 8, 1) || buf_new(&d, df, W, H, 8, 1) ||
	    buf_new(&b, rgb, W, H, 0, 1)) {
		CHECK(0, "alloc");
		return;
	}
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++)
			memcpy(a.v.plane[0] + y * a.v.stride[0] + 3 * x, col, 3);
	int r1 = vc_conv_run(c, &a.v, &s.v), r2 = vc_conv_run(c, &s.v, &d.v), r3 = vc_conv_run(c, &d.v, &b.v);
	CHECK(!r1 && !r2 && !r3, "%s -> %s colour: %d %d %d", sf->name, df->name, r1, r2, r3);
	int grey = sf->layout == VC_LAYOUT_GREY || df->layout == VC_LAYOUT_GREY, bad = 0;
	for (uint32_t y = 0; y < H && !bad; y++)
		for (uint32_t x = 0; x < W && !bad; x++) {
			const uint8_t *p = b.v.plane[0] + y * b.v.stride[0] + 3 * x;
			for (int ch = 0; ch < 3 && !bad; ch++) {
				int dep = chan_depth(sf, ch) < chan_depth(df, ch) ? chan_depth(sf, ch) : chan_depth(df, ch);
				int tol = 255 / ((1 << dep) - 1) + 6;
				/* Grey keeps only luma: R = G = B. */
				int want = grey ? p[1] : col[ch];
				if (!near(p[ch], want, tol))
					bad = 1;
			}
			if (bad)
				CHECK(0, "%s -> %s: pixel %u,%u = %d %d %d, want %d %d %d", sf->name, df->name,
				      x, y, p[0], p[1], p[2], col[0], col[1], col[2]);
		}
	buf_free(&a);
	buf_free(&s);
	buf_free(&d);
	buf_free(&b);
}

/* Every raw row -> every raw non-Bayer row, several sizes and paddings. */
static void all_pairs(void)
{
	static const struct { uint32_t sw, sh, dw, dh, pad; } sizes[] = {
		{ 1, 1, 1, 1, 0 }, { 2, 2, 2, 2, 0 }, { 7, 5, 7, 5, 0 }, { 33, 17, 33, 17, 24 },
		{ 16, 12, 9, 7, 8 }, { 5, 3, 12, 10, 0 }, { 9, 97, 9, 97, 4 },
	};
	struct vc_conv *c = vc_conv_new();
	const struct vc_fmt *rgb = need("RGB24");
	int pairs = 0;

	CHECK(c != NULL, "vc_conv_new");
	if (!c || !rgb)
		return;
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *sf = vc_fmt_at(i);
		if (!is_conv_src(sf))
			continue;
		for (size_t j = 0; j < vc_fmt_count(); j++) {
			const struct vc_fmt *df = vc_fmt_at(j);
			if (!is_conv_dst(df))
				continue;
			CHECK(vc_conv_supported(sf, df), "%s -> %s not supported", sf->name, df->name);
			pairs++;
			pair_colour(c, sf, df, rgb);
			for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
				struct buf s, d;
				if (buf_new(&s, sf, sizes[k].sw, sizes[k].sh, sizes[k].pad, 0) ||
				    buf_new(&d, df, sizes[k].dw, sizes[k].dh, sizes[k].pad, 1)) {
					CHECK(0, "alloc %s/%s", sf->name, df->name);
					buf_free(&s);
					buf_free(&d);
					continue;
				}
				fill_random(&s);
				uint8_t *copy[3] = { 0 };
				for (int p = 0; p < 3; p++)
					if (s.mem[p]) {
						copy[p] = malloc(s.size[p]);
						memcpy(copy[p], s.mem[p], s.size[p]);
					}
				int r = vc_conv_run(c, &s.v, &d.v);
				CHECK(r == 0, "%s %ux%u -> %s %ux%u pad %u: %d", sf->name, sizes[k].sw,
				      sizes[k].sh, df->name, sizes[k].dw, sizes[k].dh, sizes[k].pad, r);
				CHECK(canaries_ok(&d), "%s -> %s %ux%u: canary overwritten", sf->name,
				      df->name, sizes[k].dw, sizes[k].dh);
				for (int p = 0; p < 3; p++) {
					if (copy[p])
						CHECK(!memcmp(copy[p], s.mem[p], s.size[p]),
						      "%s -> %s: source plane %d written", sf->name, df->name, p);
					free(copy[p]);
				}
				buf_free(&s);
				buf_free(&d);
			}
		}
	}
	CHECK(pairs > 100, "only %d raw pairs in the table", pairs);
	printf("  %d pairs x %zu sizes\n", pairs, sizeof(sizes) / sizeof(sizes[0]));
	vc_conv_free(c);
}

/* ---- colour bars ---- */

static const uint8_t bars_rgb[8][3] = {
	{ 191, 191, 191 }, { 191, 191, 0 }, { 0, 191, 191 }, { 0, 191, 0 },
	{ 191, 0, 191 },   { 191, 0, 0 },   { 0, 0, 191 },   { 0, 0, 0 },
};

/* Published 75% bar values (ITU-R BT.601 / BT.709, 8-bit limited range);
 * full-range rows computed from the same matrices. */
static const struct {
	int line;
	uint8_t matrix, full;
	uint8_t yuv[8][3];
} bars_yuv[] = {
	{ __LINE__, VC_MATRIX_BT601, 0, { { 180, 128, 128 }, { 162, 44, 142 }, { 131, 156, 44 },
		{ 112, 72, 58 }, { 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 } } },
	{ __LINE__, VC_MATRIX_BT601, 1, { { 191, 128, 128 }, { 169, 32, 144 }, { 134, 160, 32 },
		{ 112, 65, 48 }, { 79, 191, 208 }, { 57, 96, 224 }, { 22, 224, 112 }, { 0, 128, 128 } } },
	{ __LINE__, VC_MATRIX_BT709, 0, { { 180, 128, 128 }, { 168, 44, 136 }, { 145, 147, 44 },
		{ 133, 63, 52 }, { 63, 193, 204 }, { 51, 109, 212 }, { 28, 212, 120 }, { 16, 128, 128 } } },
	{ __LINE__, VC_MATRIX_BT709, 1, { { 191, 128, 128 }, { 177, 33, 137 }, { 150, 150, 33 },
		{ 137, 54, 41 }, { 54, 202, 215 }, { 41, 106, 224 }, { 14, 224, 119 }, { 0, 128, 128 } } },
};

#define BAR_W 4 /* pixels per bar: whole chroma blocks for 4:2:0 and 4:1:1 */


/* RGB24 bars -> YUV row (planar 4:2:0 and packed 4:2:2 and semi-planar)
 * and back, for each encoding. */
static void colour_bars(void)
{
	const char *yuv_names[] = { "YUYV", "UYVY", "NV12", "NV21", "YUV420", "YVU420", "YUV422P" };
	const struct vc_fmt *rgb = need("RGB24");
	struct vc_conv *c = vc_conv_new();

	if (!rgb || !c)
		return;
	for (size_t e = 0; e < sizeof(bars_yuv) / sizeof(bars_yuv[0]); e++) {
		struct vc_ycbcr enc = { bars_yuv[e].matrix, bars_yuv[e].full };
		for (size_t n = 0; n < sizeof(yuv_names) / sizeof(yuv_names[0]); n++) {
			const struct vc_fmt *yf = need(yuv_names[n]);
			struct buf s, y, back;
			if (!yf || buf_new(&s, rgb, 8 * BAR_W, 4, 0, 0) ||
			    buf_new(&y, yf, 8 * BAR_W, 4, 16, 1) || buf_new(&back, rgb, 8 * BAR_W, 4, 0, 1))
				return;
			for (uint32_t r = 0; r < 4; r++)
				for (int x = 0; x < 8 * BAR_W; x++)
					memcpy(s.v.plane[0] + r * s.v.stride[0] + 3 * x, bars_rgb[x / BAR_W], 3);
			y.v.color = vc_color_from_ycbcr(enc);
			CHECK_AT(bars_yuv[e].line, vc_conv_run(c, &s.v, &y.v) == 0, "%s", yf->name);
			/* Read the YUV samples back through the table's offsets. */
			for (int bar = 0; bar < 8; bar++) {
				int x = bar * BAR_W + 1, row = 1, Y, U, V;
				const struct vc_fmt *f = yf;
				if (f->layout == VC_LAYOUT_PACKED_YUV) {
					const uint8_t *p = y.v.plane[0] + row * y.v.stride[0] + (x / 2) * 4;
					Y = p[f->y_off[x & 1]], U = p[f->u_off[0]], V = p[f->v_off[0]];
				} else {
					Y = y.v.plane[0][row * y.v.stride[0] + x];
					int cx = x >> f->log2_chroma_w, cy = row >> f->log2_chroma_h;
					if (f->layout == VC_LAYOUT_SEMIPLANAR) {
						const uint8_t *p = y.v.plane[1] + cy * y.v.stride[1] + 2 * cx;
						U = p[f->swap_uv], V = p[!f->swap_uv];
					} else {
						int pu = f->swap_uv ? 2 : 1, pv = f->swap_uv ? 1 : 2;
						U = y.v.plane[pu][cy * y.v.stride[pu] + cx];
						V = y.v.plane[pv][cy * y.v.stride[pv] + cx];
					}
				}
				const uint8_t *ex = bars_yuv[e].yuv[bar];
				CHECK_AT(bars_yuv[e].line, near(Y, ex[0], 2) && near(U, ex[1], 2) && near(V, ex[2], 2),
					 "%s bar %d: got %d %d %d want %d %d %d", yf->name, bar, Y, U, V, ex[0], ex[1], ex[2]);
			}
			/* ... and back to RGB with the same colorimetry. libyuv's
			 * limited BT.601 decode clamps its blue coefficient
			 * (2.018 -> 2.0): 3 levels in saturated blue. */
			CHECK_AT(bars_yuv[e].line, vc_conv_run(c, &y.v, &back.v) == 0, "%s -> RGB24", yf->name);
			for (int bar = 0; bar < 8; bar++) {
				const uint8_t *p = back.v.plane[0] + back.v.stride[0] + 3 * (bar * BAR_W + 1);
				const uint8_t *ex = bars_rgb[bar];
				CHECK_AT(bars_yuv[e].line, near(p[0], ex[0], 3) && near(p[1], ex[1], 3) && near(p[2], ex[2], 3),
					 "%s -> RGB24 bar %d: got %d %d %d want %d %d %d", yf->name, bar,
					 p[0], p[1], p[2], ex[0], ex[1], ex[2]);
			}
			CHECK(canaries_ok(&y) && canaries_ok(&back), "%s canary", yf->name);
			buf_free(&s);
			buf_free(&y);
			buf_free(&back);
		}
	}
	vc_conv_free(c);
}


/* Limited-range RGB (V4L2 LIM_RANGE, 16..235: HDMI capture of CEA-861
 * timings): 16 is black and 235 white, so to JFIF-style full-range YUV
 * 75% bars (limited 180/16) give the full-range BT.601 bar values, and to a
 * full RGB destination the range is expanded; a limited RGB destination
 * gets it compressed. Several RGB layouts (built by an exact 8-bit copy). */
static void rgb_limited(void)
{
	const char *layouts[] = { "RGB24", "BGR24", "XRGB32", "ABGR32", "RGBX32" };
	const struct vc_fmt *rgb = need("RGB24"), *y444 = need("YUV444M"), *i420 = need("YUV420");
	const struct vc_colorimetry lim = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT601, 0 });
	const struct vc_colorimetry full = vc_color_from_ycbcr(VC_YCBCR_JFIF);
	struct vc_conv *c = vc_conv_new();
	const int W = 10 * BAR_W, H = 4;

	if (!rgb || !y444 || !i420 || !c)
		return;
	for (size_t l = 0; l < ARRAY_LEN(layouts); l++) {
		const struct vc_fmt *lf = need(layouts[l]);
		struct buf s, m, y, back, a, b;
		if (!lf || buf_new(&s, rgb, W, H, 0, 0) || buf_new(&m, lf, W, H, 8, 1) ||
		    buf_new(&y, y444, W, H, 16, 1) || buf_new(&back, rgb, W, H, 4, 1) ||
		    buf_new(&a, i420, W, H, 0, 1) || buf_new(&b, i420, W, H, 0, 1))
			return;
		/* bars 0..7 in limited RGB (191 -> 180, 0 -> 16), then 16 and 235 */
		for (uint32_t r = 0; r < (uint32_t)H; r++)
			for (int x = 0; x < W; x++)
				for (int k = 0; k < 3; k++) {
					int bar = x / BAR_W;
					int v = bar == 8 ? 16 : bar == 9 ? 235 : bars_rgb[bar][k] ? 180 : 16;
					s.v.plane[0][r * s.v.stride[0] + 3 * x + k] = (uint8_t)v;
				}
		CHECK(vc_conv_run(c, &s.v, &m.v) == 0, "RGB24 -> %s", lf->name);
		/* full range in: as before, default colour == explicit full */
		CHECK(vc_conv_run(c, &m.v, &a.v) == 0, "%s -> I420 default", lf->name);
		m.v.color = full;
		CHECK(vc_conv_run(c, &m.v, &b.v) == 0, "%s -> I420 full", lf->name);
		for (int p = 0; p < 3; p++)
			CHECK(!memcmp(a.mem[p], b.mem[p], a.size[p]), "%s full-range plane %d differs", lf->name, p);
		m.v.color = lim;
		y.v.color = full;
		CHECK(vc_conv_run(c, &m.v, &y.v) == 0, "%s limited -> YUV444M", lf->name);
		CHECK(vc_conv_run(c, &m.v, &back.v) == 0, "%s limited -> RGB24", lf->name);
		for (int bar = 0; bar < 10; bar++) {
			int x = bar * BAR_W + 1, row = 1;
			int Y = y.v.plane[0][row * y.v.stride[0] + x], U = y.v.plane[1][row * y.v.stride[1] + x],
			    V = y.v.plane[2][row * y.v.stride[2] + x];
			static const uint8_t extra[2][3] = { { 0, 128, 128 }, { 255, 128, 128 } };
			const uint8_t *ex = bar < 8 ? bars_yuv[1].yuv[bar] : extra[bar - 8];
			CHECK(near(Y, ex[0], 1) && near(U, ex[1], 1) && near(V, ex[2], 1),
			      "%s limited bar %d -> JFIF %d %d %d want %d %d %d", lf->name, bar, Y, U, V,
			      ex[0], ex[1], ex[2]);
			const uint8_t *p = back.v.plane[0] + row * back.v.stride[0] + 3 * x;
			for (int k = 0; k < 3; k++) {
				int want = bar == 8 ? 0 : bar == 9 ? 255 : bars_rgb[bar][k];
				CHECK(p[k] == want, "%s limited bar %d -> full RGB ch %d: %d want %d", lf->name,
				      bar, k, p[k], want);
			}
		}
		/* full RGB24 (the expanded picture) -> limited RGB destination */
		back.v.color = full;
		m.v.color = lim;
		CHECK(vc_conv_run(c, &back.v, &m.v) == 0, "RGB24 -> limited %s", lf->name);
		s.v.color = lim; /* read back unchanged: same range */
		CHECK(vc_conv_run(c, &m.v, &s.v) == 0, "%s -> RGB24", lf->name);
		for (int bar = 0; bar < 10; bar++) {
			const uint8_t *p = s.v.plane[0] + s.v.stride[0] + 3 * (bar * BAR_W + 1);
			for (int k = 0; k < 3; k++) {
				int want = bar == 8 ? 16 : bar == 9 ? 235 : bars_rgb[bar][k] ? 180 : 16;
				CHECK(p[k] == want, "full -> limited %s bar %d ch %d: %d want %d", lf->name, bar,
				      k, p[k], want);
			}
		}
		CHECK(canaries_ok(&m) && canaries_ok(&y) && canaries_ok(&back), "%s canary", lf->name);
		buf_free(&s), buf_free(&m), buf_free(&y), buf_free(&back), buf_free(&a), buf_free(&b);
	}
	vc_conv_free(c);
}


/* The RGB range passes keep real alpha: ARGB32 full -> ARGB32 limited and
 * back leave every alpha byte as it was. */
static void rgb_range_alpha(void)
{
	const struct vc_fmt *f = need("ARGB32");
	const struct vc_colorimetry lim = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT601, 0 });
	struct vc_conv *c = vc_conv_new();
	struct buf s, m, b;

	if (!f || !c || buf_new(&s, f, 37, 5, 0, 0) || buf_new(&m, f, 37, 5, 4, 1) ||
	    buf_new(&b, f, 37, 5, 0, 1))
		return;
	fill_random(&s);
	int ab = f->a.shift / 8; /* little-endian 32-bit word: byte of alpha */
	m.v.color = lim;
	CHECK(vc_conv_run(c, &s.v, &m.v) == 0 && vc_conv_run(c, &m.v, &b.v) == 0, "runs");
	for (uint32_t y = 0; y < 5; y++)
		for (uint32_t x = 0; x < 37; x++) {
			int a0 = s.v.plane[0][y * s.v.stride[0] + 4 * x + ab];
			int a1 = m.v.plane[0][y * m.v.stride[0] + 4 * x + ab];
			int a2 = b.v.plane[0][y * b.v.stride[0] + 4 * x + ab];
			if (a0 != a1 || a0 != a2) {
				CHECK(0, "pixel %u,%u alpha %d -> %d -> %d", x, y, a0, a1, a2);
				y = 5;
				break;
			}
		}
	CHECK(canaries_ok(&m) && canaries_ok(&b), "canary");
	buf_free(&s), buf_free(&m), buf_free(&b);
	vc_conv_free(c);
}

/* YUV -> YUV with a different matrix and range goes through RGB correctly. */
static void yuv_reencode(void)
{
	const struct vc_fmt *yuyv = need("YUYV"), *nv12 = need("NV12");
	struct vc_conv *c = vc_conv_new();
	struct buf s, d;

	if (!yuyv || !nv12 || !c || buf_new(&s, yuyv, 8 * BAR_W, 2, 0, 0) ||
	    buf_new(&d, nv12, 8 * BAR_W, 2, 0, 1))
		return;
	s.v.color = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT601, 0 });
	d.v.color = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT709, 1 });
	for (int x = 0; x < 8 * BAR_W; x += 2)
		for (int r = 0; r < 2; r++) {
			uint8_t *p = s.v.plane[0] + r * s.v.stride[0] + x * 2;
			const uint8_t *v = bars_yuv[0].yuv[x / BAR_W];
			p[0] = p[2] = v[0], p[1] = v[1], p[3] = v[2];
		}
	CHECK(vc_conv_run(c, &s.v, &d.v) == 0, "run");
	for (int bar = 0; bar < 8; bar++) {
		int x = bar * BAR_W;
		int Y = d.v.plane[0][x], U = d.v.plane[1][x], V = d.v.plane[1][x + 1];
		const uint8_t *ex = bars_yuv[3].yuv[bar];
		CHECK(near(Y, ex[0], 3) && near(U, ex[1], 3) && near(V, ex[2], 3),
		      "bar %d: got %d %d %d want %d %d %d", bar, Y, U, V, ex[0], ex[1], ex[2]);
	}
	/* Range only: limited YUYV -> full-range YUYV maps 16..235 to 0..255. */
	struct buf f;
	if (buf_new(&f, yuyv, 8 * BAR_W, 2, 0, 1))
		return;
	f.v.color = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT601, 1 });
	CHECK(vc_conv_run(c, &s.v, &f.v) == 0, "range run");
	for (int bar = 0; bar < 8; bar++) {
		const uint8_t *p = f.v.plane[0] + bar * BAR_W * 2;
		const uint8_t *ex = bars_yuv[1].yuv[bar];
		CHECK(near(p[0], ex[0], 2) && near(p[1], ex[1], 2) && near(p[3], ex[2], 2),
		      "range bar %d: got %d %d %d want %d %d %d", bar, p[0], p[1], p[3], ex[0], ex[1], ex[2]);
	}
	buf_free(&s);
	buf_free(&d);
	buf_free(&f);
	vc_conv_free(c);
}

static void color_resolve(void)
{
	static const struct {
		int line;
		struct vc_colorimetry c;
		int is_rgb;
		uint8_t matrix, full;
	} v[] = {
		{ __LINE__, { 0, 0, 0, 0 }, 0, VC_MATRIX_BT601, 0 },
		{ __LINE__, { 0, 0, 0, 0 }, 1, VC_MATRIX_BT601, 1 },
		{ __LINE__, { 1, 0, 0, 0 }, 0, VC_MATRIX_BT601, 0 },  /* SMPTE170M */
		{ __LINE__, { 3, 0, 0, 0 }, 0, VC_MATRIX_BT709, 0 },  /* REC709 */
		{ __LINE__, { 7, 0, 0, 0 }, 0, VC_MATRIX_BT601, 1 },  /* JPEG */
		{ __LINE__, { 8, 0, 0, 0 }, 0, VC_MATRIX_BT601, 0 },  /* SRGB: YUV limited 601 */
		{ __LINE__, { 8, 0, 0, 0 }, 1, VC_MATRIX_BT601, 1 },
		{ __LINE__, { 10, 0, 0, 0 }, 0, VC_MATRIX_BT2020, 0 }, /* BT2020 */
		{ __LINE__, { 3, 1, 1, 0 }, 0, VC_MATRIX_BT601, 1 },  /* explicit wins */
		{ __LINE__, { 8, 2, 2, 0 }, 1, VC_MATRIX_BT709, 0 },
		{ __LINE__, { 6, 0, 0, 0 }, 0, VC_MATRIX_BT601, 0 },  /* 470BG */
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct vc_ycbcr e;
		vc_color_resolve(&v[i].c, v[i].is_rgb, &e);
		CHECK_AT(v[i].line, e.matrix == v[i].matrix && e.full_range == v[i].full,
			 "got matrix %d full %d", e.matrix, e.full_range);
	}
	uint8_t lut[256];
	vc_color_range_lut(lut, 0, 1, 0);
	CHECK(lut[16] == 0 && lut[235] == 255 && lut[0] == 0 && lut[255] == 255 && lut[126] == 128,
	      "Y lim->full %d %d %d", lut[16], lut[235], lut[126]);
	vc_color_range_lut(lut, 1, 0, 1);
	CHECK(lut[0] == 16 && lut[128] == 128 && lut[255] == 240, "C full->lim %d %d %d", lut[0],
	      lut[128], lut[255]);
	vc_color_range_lut(lut, 1, 1, 0);
	CHECK(lut[77] == 77, "identity");
	CHECK(vc_color_libyuv(VC_YCBCR_JFIF, 0) != NULL, "constants");
	/* The arithmetic plane converter agrees with the table within 1. */
	uint8_t in[256], out[256]; /* two lines of 128 */
	for (int i = 0; i < 256; i++)
		in[i] = (uint8_t)i;
	for (int m = 0; m < 8; m++) {
		int ff = m & 1, tf = (m >> 1) & 1, ch = m >> 2, bad = 0;
		vc_color_range_lut(lut, ff, tf, ch);
		vc_color_range_plane(in, 128, out, 128, 128, 2, ff, tf, ch);
		for (int i = 0; i < 256; i++)
			if (!near(out[i], lut[i], 1) && !bad++)
				CHECK(0, "range %d->%d chroma %d: %d -> %d, table %d", ff, tf, ch, i, out[i],
				      lut[i]);
	}
}

/* ---- round trips ---- */

static double max_diff(const struct buf *a, const struct buf *b, int bytes)
{
	int m = 0;
	for (uint32_t r = 0; r < a->v.height; r++)
		for (int x = 0; x < bytes; x++) {
			int d = abs(a->v.plane[0][r * a->v.stride[0] + x] - b->v.plane[0][r * b->v.stride[0] + x]);
			m = d > m ? d : m;
		}
	return m;
}

static void round_trips(void)
{
	static const struct { int line; const char *via; int tol; } v[] = {
		{ __LINE__, "YUYV", 12 }, { __LINE__, "NV12", 16 }, { __LINE__, "YUV444M", 4 },
		{ __LINE__, "XRGB32", 0 }, { __LINE__, "BGR24", 0 }, { __LINE__, "RGBA32", 0 },
		{ __LINE__, "RGB565", 8 }, { __LINE__, "RGB565X", 8 }, { __LINE__, "RGB332", 64 },
		{ __LINE__, "Y41P", 24 }, { __LINE__, "YUV410", 32 }, { __LINE__, "AYUV32", 4 },
	};
	const struct vc_fmt *rgb = need("RGB24");
	struct vc_conv *c = vc_conv_new();
	const uint32_t W = 37, H = 75; /* > 2 strips of 32 lines */

	for (size_t i = 0; rgb && c && i < sizeof(v) / sizeof(v[0]); i++) {
		const struct vc_fmt *mid = vc_fmt_find(v[i].via);
		struct buf s, m, b;
		if (!mid) {
			printf("  %s not in the table: skipped\n", v[i].via);
			continue;
		}
		if (buf_new(&s, rgb, W, H, 0, 0) || buf_new(&m, mid, W, H, 8, 1) || buf_new(&b, rgb, W, H, 0, 1))
			return;
		/* A smooth picture: subsampling loss stays small. */
		for (uint32_t r = 0; r < H; r++)
			for (uint32_t x = 0; x < W; x++) {
				uint8_t *p = s.v.plane[0] + r * s.v.stride[0] + 3 * x;
				p[0] = (uint8_t)(40 + x * 4), p[1] = (uint8_t)(200 - r * 2), p[2] = (uint8_t)(60 + x * 2 + r);
			}
		CHECK_AT(v[i].line, vc_conv_run(c, &s.v, &m.v) == 0 && vc_conv_run(c, &m.v, &b.v) == 0,
			 "RGB24 -> %s -> RGB24", v[i].via);
		double d = max_diff(&s, &b, 3 * W);
		CHECK_AT(v[i].line, d <= v[i].tol, "RGB24 -> %s -> RGB24: max diff %.0f > %d", v[i].via, d,
			 v[i].tol);
		CHECK_AT(v[i].line, canaries_ok(&m) && canaries_ok(&b), "canary");
		buf_free(&s);
		buf_free(&m);
		buf_free(&b);
	}
	vc_conv_free(c);
}

/* ---- Bayer ---- */

/* Writes one sample of `depth` bits at pixel x of a row, as the row packs it. */
static void put_sample(const struct vc_fmt *f, uint8_t *row, int x, unsigned v)
{
	switch (f->packing) {
	case VC_PACK_16:
		row[2 * x + (f->big_endian ? 1 : 0)] = (uint8_t)v;
		row[2 * x + (f->big_endian ? 0 : 1)] = (uint8_t)(v >> 8);
		break;
	case VC_PACK_MIPI10: /* high 8 bits in byte x%4, low 2 bits in byte 4 */
		row[(x / 4) * 5 + x % 4] = (uint8_t)(v >> 2);
		row[(x / 4) * 5 + 4] = (uint8_t)((row[(x / 4) * 5 + 4] & ~(3 << (2 * (x % 4)))) | (v & 3) << (2 * (x % 4)));
		break;
	case VC_PACK_MIPI12:
		row[(x / 2) * 3 + x % 2] = (uint8_t)(v >> 4);
		row[(x / 2) * 3 + 2] = (uint8_t)((row[(x / 2) * 3 + 2] & ~(15 << (4 * (x % 2)))) | (v & 15) << (4 * (x % 2)));
		break;
	default:
		row[x] = (uint8_t)v;
	}
}

static void bayer_flat(void)
{
	static const uint8_t colour[3] = { 200, 100, 50 }; /* R G B */
	/* Where red sits in the 2x2 tile per CFA order (x, y). */
	static const int redpos[5][2] = { { 0, 0 }, { 1, 1 }, { 0, 1 }, { 1, 0 }, { 0, 0 } };
	const struct vc_fmt *rgb = need("RGB24");
	struct vc_conv *c = vc_conv_new();
	int n = 0;

	for (size_t i = 0; rgb && c && i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		if (f->layout != VC_LAYOUT_BAYER)
			continue;
		n++;
		static const uint32_t sz[][2] = { { 8, 6 }, { 7, 5 }, { 2, 2 }, { 64, 3 } };
		for (size_t k = 0; k < 4; k++) {
			struct buf s, d;
			uint32_t W = sz[k][0], H = sz[k][1];
			if (buf_new(&s, f, W, H, 0, 0) || buf_new(&d, rgb, W, H, 0, 1))
				return;
			int rx = redpos[f->cfa][0], ry = redpos[f->cfa][1];
			for (uint32_t y = 0; y < H; y++)
				for (uint32_t x = 0; x < W; x++) {
					int ch = ((int)(x & 1) == rx && (int)(y & 1) == ry) ? 0 :
						 ((int)(x & 1) != rx && (int)(y & 1) != ry) ? 2 : 1;
					/* Random bits below the top 8: they must not matter. */
					unsigned lowmask = (1u << (f->depth - 8)) - 1;
					unsigned v = (unsigned)colour[ch] << (f->depth - 8) | (rnd8() & lowmask);
					put_sample(f, s.v.plane[0] + y * s.v.stride[0], (int)x, v);
				}
			int r = vc_conv_run(c, &s.v, &d.v), bad = 0;
			CHECK(r == 0, "%s %ux%u: %d", f->name, W, H, r);
			for (uint32_t y = 0; y < H; y++)
				for (uint32_t x = 0; x < W; x++) {
					const uint8_t *p = d.v.plane[0] + y * d.v.stride[0] + 3 * x;
					if (memcmp(p, colour, 3) && !bad++)
						CHECK(0, "%s %ux%u pixel %u,%u: %d %d %d", f->name, W, H, x, y, p[0], p[1], p[2]);
				}
			CHECK(canaries_ok(&d), "%s canary", f->name);
			buf_free(&s);
			buf_free(&d);
		}
	}
	CHECK(n >= 12, "only %d Bayer rows", n);
	vc_conv_free(c);
}

/* ---- scaling ---- */

static void scaling(void)
{
	static const struct { int line; const char *fmt; uint32_t sw, sh, dw, dh; } v[] = {
		{ __LINE__, "RGB24", 64, 48, 16, 8 },     { __LINE__, "RGB24", 1, 1, 4096, 3 },
		{ __LINE__, "RGB24", 4096, 2, 1, 1 },     { __LINE__, "XRGB32", 640, 480, 3, 3 },
		{ __LINE__, "YUYV", 1920, 1080, 1280, 720 }, { __LINE__, "YUYV", 1, 1, 7, 9 },
		{ __LINE__, "NV12", 1920, 1080, 960, 540 }, { __LINE__, "NV12", 3, 3, 1, 1 },
		{ __LINE__, "YUV420", 4096, 16, 1, 1 },   { __LINE__, "YUV420", 2, 2, 4096, 4 },
		{ __LINE__, "GREY", 33, 7, 4096, 2 },     { __LINE__, "RGB565", 99, 77, 13, 11 },
		{ __LINE__, "UYVY", 640, 480, 639, 479 }, { __LINE__, "RGB24", 17, 13, 64, 48 },
	};
	struct vc_conv *c = vc_conv_new();

	for (size_t i = 0; c && i < sizeof(v) / sizeof(v[0]); i++) {
		const struct vc_fmt *f = need(v[i].fmt), *rgb = need("RGB24");
		struct buf s, d, out;
		if (!f || !rgb)
			continue;
		if (buf_new(&s, rgb, v[i].sw, v[i].sh, 0, 0) || buf_new(&d, f, v[i].sw, v[i].sh, 0, 1) ||
		    buf_new(&out, f, v[i].dw, v[i].dh, 4, 1))
			return;
		/* Flat colour: whatever the filter, the result stays flat. */
		for (size_t k = 0; k < s.size[0]; k += 3)
			s.mem[0][k] = 30, s.mem[0][k + 1] = 160, s.mem[0][k + 2] = 220;
		CHECK_AT(v[i].line, vc_conv_run(c, &s.v, &d.v) == 0, "to %s", v[i].fmt);
		int r = vc_conv_run(c, &d.v, &out.v);
		CHECK_AT(v[i].line, r == 0, "%s %ux%u -> %ux%u: %d", v[i].fmt, v[i].sw, v[i].sh, v[i].dw, v[i].dh, r);
		CHECK_AT(v[i].line, canaries_ok(&out), "canary");
		struct buf back;
		if (buf_new(&back, rgb, v[i].dw, v[i].dh, 0, 1))
			return;
		CHECK_AT(v[i].line, vc_conv_run(c, &out.v, &back.v) == 0, "back");
		int bad = 0;
		/* Reference: the same format unscaled, back to RGB (its own
		 * quantisation and colour loss); scaling may move a sample by
		 * 1, which can flip one step of a 5-bit field. */
		struct buf ref;
		if (buf_new(&ref, rgb, v[i].sw, v[i].sh, 0, 1))
			return;
		CHECK_AT(v[i].line, vc_conv_run(c, &d.v, &ref.v) == 0, "ref");
		uint8_t want[3];
		memcpy(want, ref.v.plane[0], 3);
		buf_free(&ref);
		int tol = f->r.depth == 5 ? 9 : 3;
		for (uint32_t y = 0; y < v[i].dh && !bad; y++)
			for (uint32_t x = 0; x < v[i].dw && !bad; x++) {
				const uint8_t *p = back.v.plane[0] + y * back.v.stride[0] + 3 * x;
				if (!near(p[0], want[0], tol) || !near(p[1], want[1], tol) || !near(p[2], want[2], tol)) {
					bad = 1;
					CHECK_AT(v[i].line, 0, "%s pixel %u,%u: %d %d %d want %d %d %d", v[i].fmt, x, y,
						 p[0], p[1], p[2], want[0], want[1], want[2]);
				}
			}
		buf_free(&s);
		buf_free(&d);
		buf_free(&out);
		buf_free(&back);
	}
	vc_conv_free(c);
}

/* ---- bad views ---- */

static void bad_input(void)
{
	const struct vc_fmt *yuyv = need("YUYV"), *nv12 = need("NV12"), *bayer = need("SBGGR8");
	const struct vc_fmt *mjpg = need("MJPEG");
	struct vc_conv *c = vc_conv_new();
	struct buf s, d;

	if (!yuyv || !nv12 || !bayer || !mjpg || !c || buf_new(&s, yuyv, 16, 8, 0, 0) ||
	    buf_new(&d, nv12, 16, 8, 0, 1))
		return;
	CHECK(vc_conv_run(c, &s.v, &d.v) == 0, "valid");
	struct vc_image x = s.v;
	x.plane_size[0]--;
	CHECK(vc_conv_run(c, &x, &d.v) == -EINVAL, "short src plane");
	x = d.v;
	x.plane_size[1] -= 1;
	CHECK(vc_conv_run(c, &s.v, &x) == -EINVAL, "short dst chroma plane");
	x = s.v;
	x.width = 0;
	CHECK(vc_conv_run(c, &x, &d.v) == -EINVAL, "zero width");
	x = d.v;
	x.height = 0;
	CHECK(vc_conv_run(c, &s.v, &x) == -EINVAL, "zero height");
	x = s.v;
	x.stride[0] = 31;
	CHECK(vc_conv_run(c, &x, &d.v) == -EINVAL, "stride below minimum");
	x = d.v;
	x.plane[1] = NULL;
	CHECK(vc_conv_run(c, &s.v, &x) == -EINVAL, "missing plane");
	x = s.v;
	x.width = 100000;
	CHECK(vc_conv_run(c, &x, &d.v) == -EINVAL, "absurd width");
	x = d.v;
	x.fmt = bayer;
	CHECK(vc_conv_run(c, &s.v, &x) == -EINVAL, "Bayer destination");
	CHECK(!vc_conv_supported(yuyv, bayer) && !vc_conv_supported(mjpg, yuyv) &&
	      !vc_conv_supported(yuyv, mjpg), "supported() for Bayer/JPEG");
	x = s.v;
	x.fmt = mjpg;
	CHECK(vc_conv_run(c, &x, &d.v) == -EINVAL, "compressed source");
	CHECK(vc_conv_run(NULL, &s.v, &d.v) == -EINVAL, "NULL context");
	CHECK(vc_conv_run(c, NULL, &d.v) == -EINVAL, "NULL src");
	buf_free(&s);
	buf_free(&d);
	vc_conv_free(c);
}

/* Same row and size: a byte-exact copy. Grey in 16-bit containers keeps
 * its depth (Y10 -> Y16 -> Y16_BE -> Y10 exact). */
static void exact_paths(void)
{
	static const char *same[] = { "YUYV", "NV12", "YUV420", "RGB24", "RGB444", "Y10", "SBGGR8" };
	struct vc_conv *c = vc_conv_new();

	for (size_t i = 0; c && i < sizeof(same) / sizeof(same[0]); i++) {
		const struct vc_fmt *f = need(same[i]);
		struct buf s, d;
		if (!f || f->layout == VC_LAYOUT_BAYER || buf_new(&s, f, 13, 7, 8, 0) || buf_new(&d, f, 13, 7, 0, 1))
			continue;
		fill_random(&s);
		CHECK(vc_conv_run(c, &s.v, &d.v) == 0, "%s copy", same[i]);
		for (int p = 0; p < f->color_planes; p++)
			for (uint32_t y = 0; y < (p ? 4u : 7u) && y * d.v.stride[p] < d.size[p]; y++) {
				uint32_t row = p ? (uint32_t)(d.v.stride[p] < s.v.stride[p] ? d.v.stride[p] : s.v.stride[p])
						 : vc_fmt_min_stride(f, 13);
				if (y * d.v.stride[p] + row > d.size[p])
					break;
				CHECK(!memcmp(s.v.plane[p] + y * s.v.stride[p], d.v.plane[p] + y * d.v.stride[p], row),
				      "%s plane %d line %u differs", same[i], p, y);
			}
		CHECK(canaries_ok(&d), "%s canary", same[i]);
		buf_free(&s);
		buf_free(&d);
	}
	const struct vc_fmt *y10 = need("Y10"), *y16 = need("Y16"), *y16be = need("Y16_BE");
	struct buf a, b, e, f;
	if (!c || !y10 || !y16 || !y16be || buf_new(&a, y10, 9, 3, 0, 0) || buf_new(&b, y16, 9, 3, 0, 1) ||
	    buf_new(&e, y16be, 9, 3, 0, 1) || buf_new(&f, y10, 9, 3, 0, 1))
		return;
	for (uint32_t y = 0; y < 3; y++)
		for (uint32_t x = 0; x < 9; x++) {
			unsigned v = (x * 113 + y * 301) & 1023;
			a.v.plane[0][y * a.v.stride[0] + 2 * x] = (uint8_t)v;
			a.v.plane[0][y * a.v.stride[0] + 2 * x + 1] = (uint8_t)(v >> 8);
		}
	CHECK(vc_conv_run(c, &a.v, &b.v) == 0 && vc_conv_run(c, &b.v, &e.v) == 0 &&
	      vc_conv_run(c, &e.v, &f.v) == 0, "Y10 -> Y16 -> Y16_BE -> Y10");
	for (uint32_t y = 0; y < 3; y++)
		for (uint32_t x = 0; x < 9; x++) {
			unsigned v = (x * 113 + y * 301) & 1023;
			const uint8_t *pb = b.v.plane[0] + y * b.v.stride[0] + 2 * x;
			const uint8_t *pe = e.v.plane[0] + y * e.v.stride[0] + 2 * x;
			const uint8_t *pf = f.v.plane[0] + y * f.v.stride[0] + 2 * x;
			unsigned v16 = v << 6 | v >> 4;
			CHECK((unsigned)(pb[0] | pb[1] << 8) == v16 && (unsigned)(pe[0] << 8 | pe[1]) == v16 &&
			      (unsigned)(pf[0] | pf[1] << 8) == v, "pixel %u,%u: %u -> %u/%u/%u", x, y, v,
			      pb[0] | pb[1] << 8, pe[0] << 8 | pe[1], pf[0] | pf[1] << 8);
		}
	buf_free(&a);
	buf_free(&b);
	buf_free(&e);
	buf_free(&f);
	vc_conv_free(c);
}

/* Random rows, sizes (1..70, scaled or not), paddings and colorimetry, a
 * fixed seed: every run must succeed with intact canaries (ASan watches the
 * reads). */
static void random_views(void)
{
	struct vc_conv *c = vc_conv_new();
	size_t n = vc_fmt_count();
	int runs = 0;

	for (int it = 0; c && it < 3000; it++) {
		const struct vc_fmt *sf = vc_fmt_at(rnd8() * n / 256), *df = vc_fmt_at(rnd8() * n / 256);
		if (!is_conv_src(sf) || !is_conv_dst(df))
			continue;
		uint32_t sw = 1u + rnd8() % 70u, sh = 1u + rnd8() % 70u;
		uint32_t dw = rnd8() & 1 ? sw : 1u + rnd8() % 70u, dh = rnd8() & 1 ? sh : 1u + rnd8() % 70u;
		struct buf s, d;
		if (buf_new(&s, sf, sw, sh, rnd8() % 3 * 8, 0) || buf_new(&d, df, dw, dh, rnd8() % 3 * 8, 1)) {
			CHECK(0, "alloc %s %ux%u / %s %ux%u", sf->name, sw, sh, df->name, dw, dh);
			buf_free(&s);
			buf_free(&d);
			continue;
		}
		fill_random(&s);
		s.v.color = (struct vc_colorimetry){ rnd8() % 13, rnd8() % 9, rnd8() % 3, 0 };
		d.v.color = (struct vc_colorimetry){ rnd8() % 13, rnd8() % 9, rnd8() % 3, 0 };
		int r = vc_conv_run(c, &s.v, &d.v);
		CHECK(r == 0 && canaries_ok(&d), "%s %ux%u -> %s %ux%u: %d", sf->name, sw, sh, df->name,
		      dw, dh, r);
		runs++;
		buf_free(&s);
		buf_free(&d);
	}
	CHECK(runs > 1000, "only %d runs", runs);
	vc_conv_free(c);
}

/* SEQ_TB / SEQ_BT sources are woven: split a progressive picture into
 * sequential fields by hand, convert, expect the progressive picture. */
static void weave_fields(void)
{
	static const char *names[] = { "YUYV", "YUV420", "NV12", "RGB24" };
	struct vc_conv *c = vc_conv_new();

	for (size_t i = 0; c && i < sizeof(names) / sizeof(names[0]); i++)
		for (int order = 5; order <= 6; order++) { /* V4L2_FIELD_SEQ_TB, SEQ_BT */
			const struct vc_fmt *f = need(names[i]);
			struct buf prog, seq, out;
			if (!f || buf_new(&prog, f, 10, 8, 0, 0) || buf_new(&seq, f, 10, 8, 0, 0) ||
			    buf_new(&out, f, 10, 8, 0, 1))
				return;
			fill_random(&prog);
			for (int p = 0; p < f->color_planes; p++) {
				uint32_t lines = (uint32_t)(prog.size[p] / prog.v.stride[p]), half = lines / 2;
				for (uint32_t l = 0; l < lines; l++) {
					int top = (l & 1) == 0, first = (order == 5) == top;
					uint32_t k = first ? l / 2 : half + l / 2;
					memcpy(seq.v.plane[p] + k * seq.v.stride[p], prog.v.plane[p] + l * prog.v.stride[p],
					       prog.v.stride[p]);
				}
			}
			seq.v.field = (uint32_t)order;
			CHECK(vc_conv_run(c, &seq.v, &out.v) == 0, "%s field %d", names[i], order);
			for (int p = 0; p < f->color_planes; p++)
				CHECK(!memcmp(out.v.plane[p], prog.v.plane[p], prog.size[p]),
				      "%s field order %d: plane %d not woven back", names[i], order, p);
			CHECK(canaries_ok(&out), "canary");
			buf_free(&prog);
			buf_free(&seq);
			buf_free(&out);
		}
	vc_conv_free(c);
}

/* ---- independent oracle: ffmpeg (swscale) on the same source bytes ---- */

/* ffmpeg names for rows whose every byte is one 8-bit sample (so a bytewise
 * PSNR is meaningful). Packed 24/32-bit RGB names come from the row's bit
 * fields (ffmpeg names those in byte order); the rest by table row name. */
static const struct { const char *v4l2, *ff; } ff_names[] = {
	{ "YUYV", "yuyv422" }, { "UYVY", "uyvy422" }, { "YVYU", "yvyu422" }, { "NV12", "nv12" },
	{ "NV21", "nv21" },    { "NV16", "nv16" },    { "NV24", "nv24" },    { "NV42", "nv42" },
	{ "YUV420", "yuv420p" }, { "YUV422P", "yuv422p" }, { "YUV410", "yuv410p" },
	{ "YUV411P", "yuv411p" }, { "GREY", "gray" },
};

static const char *ff_name(const struct vc_fmt *f, char buf[8])
{
	if (f->layout == VC_LAYOUT_PACKED_RGB && (f->group_bytes[0] == 3 || f->group_bytes[0] == 4) &&
	    f->r.depth == 8 && f->g.depth == 8 && f->b.depth == 8 && !f->big_endian &&
	    (f->group_bytes[0] == 3 || (f->a.depth == 8 && f->has_alpha))) {
		int n = f->group_bytes[0];
		for (int i = 0; i < n; i++)
			buf[i] = f->r.shift == 8 * i ? 'r' : f->g.shift == 8 * i ? 'g' : f->b.shift == 8 * i ? 'b' : 'a';
		buf[n] = 0;
		if (n == 3)
			strcat(buf, "24");
		return buf;
	}
	for (size_t i = 0; i < sizeof(ff_names) / sizeof(ff_names[0]); i++)
		if (!strcmp(ff_names[i].v4l2, f->name))
			return ff_names[i].ff;
	return NULL;
}

/* Writes the planes back to back at minimum strides (ffmpeg rawvideo). */
static size_t pack_planes(const struct buf *b, uint8_t *out)
{
	const struct vc_fmt *f = b->v.fmt;
	size_t n = 0;
	for (int p = 0; p < f->color_planes; p++) {
		uint32_t lines = p ? (b->v.height + (1u << f->log2_chroma_h) - 1) >> f->log2_chroma_h : b->v.height;
		uint32_t row = p ? ((b->v.width + (1u << f->log2_chroma_w) - 1) >> f->log2_chroma_w) * f->group_bytes[p]
				 : vc_fmt_min_stride(f, b->v.width);
		for (uint32_t y = 0; y < lines; y++, n += row)
			if (out)
				memcpy(out + n, b->v.plane[p] + (size_t)y * b->v.stride[p], row);
	}
	return n;
}

static double psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
	double se = 0;
	for (size_t i = 0; i < n; i++)
		se += (double)(a[i] - b[i]) * (a[i] - b[i]);
	return se == 0 ? 99 : 10 * log10(255.0 * 255.0 * n / se);
}

/* Whether ffmpeg can read (dir 'I') or write ('O') pix_fmt name
 * ("-pix_fmts" lines: flags "IO..." then the name). */
static int ff_can(const char *name, char dir)
{
	static char list[65536];
	static size_t len;
	if (!len) {
		FILE *p = popen("ffmpeg -hide_banner -pix_fmts 2>/dev/null", "r");
		if (!p)
			return 0;
		len = fread(list, 1, sizeof(list) - 1, p);
		pclose(p);
	}
	char pat[40];
	snprintf(pat, sizeof(pat), " %s ", name);
	const char *m = strstr(list, pat);
	return m && m - list >= 5 && m[dir == 'I' ? -5 : -4] == dir;
}

static void smooth_rgb(struct buf *a)
{
	for (uint32_t y = 0; y < a->v.height; y++) /* smooth: filters differ, colour math must not */
		for (uint32_t x = 0; x < a->v.width; x++) {
			uint8_t *p = a->v.plane[0] + y * a->v.stride[0] + 3 * x;
			p[0] = (uint8_t)(30 + x * 3), p[1] = (uint8_t)(220 - y * 3), p[2] = (uint8_t)(40 + x + 2 * y);
		}
}

/* One source row: ours vs ffmpeg for every destination ffmpeg can write,
 * one ffmpeg process with an output per destination. */
static void oracle_src(struct vc_conv *c, const struct vc_fmt *rgb, const struct vc_fmt *sf,
		       int *pairs, double *worst)
{
	const uint32_t W = 64, H = 48;
	const struct vc_fmt *dsts[64];
	char sb[8], db[8], cmd[8192], in[64], outp[64];
	struct buf a, s;
	int nd = 0;

	snprintf(in, sizeof(in), "/tmp/vc_oracle_%d.in", (int)getpid());
	if (buf_new(&a, rgb, W, H, 0, 0) || buf_new(&s, sf, W, H, 0, 1))
		return;
	smooth_rgb(&a);
	CHECK(vc_conv_run(c, &a.v, &s.v) == 0, "RGB24 -> %s", sf->name);
	size_t ns = pack_planes(&s, NULL);
	uint8_t *src = malloc(ns);
	pack_planes(&s, src);
	FILE *fp = fopen(in, "wb");
	if (fp) {
		fwrite(src, 1, ns, fp);
		fclose(fp);
	}
	int n = snprintf(cmd, sizeof(cmd), "ffmpeg -v error -nostdin -y -f rawvideo -pix_fmt %s -s %ux%u -i %s",
			 ff_name(sf, sb), W, H, in);
	for (size_t j = 0; j < vc_fmt_count() && nd < 64; j++) {
		const struct vc_fmt *df = vc_fmt_at(j);
		const char *dn = is_conv_dst(df) && df != sf ? ff_name(df, db) : NULL;
		if (!dn || !ff_can(dn, 'O'))
			continue;
		snprintf(outp, sizeof(outp), "/tmp/vc_oracle_%d.%d", (int)getpid(), nd);
		/* YUV -> RGB: ffmpeg interpolates chroma to 4:4:4 first (its
		 * direct yuv410p -> RGB path repeats chroma over line pairs). */
		int via444 = sf->family == VC_FAM_YUV && df->layout == VC_LAYOUT_PACKED_RGB;
		n += snprintf(cmd + n, sizeof(cmd) - n,
			      " -frames:v 1 -sws_flags bilinear+accurate_rnd+full_chroma_int%s -f rawvideo -pix_fmt %s %s",
			      via444 ? " -vf format=yuv444p" : "", dn, outp);
		dsts[nd++] = df;
	}
	int r = system(cmd);
	CHECK(r == 0, "ffmpeg failed for %s: %s", sf->name, cmd);
	for (int k = 0; k < nd && r == 0; k++) {
		struct buf d;
		if (buf_new(&d, dsts[k], W, H, 0, 1))
			break;
		CHECK(vc_conv_run(c, &s.v, &d.v) == 0, "%s -> %s", sf->name, dsts[k]->name);
		size_t nb = pack_planes(&d, NULL), got = 0;
		uint8_t *ours = malloc(nb), *theirs = malloc(nb + 1);
		pack_planes(&d, ours);
		snprintf(outp, sizeof(outp), "/tmp/vc_oracle_%d.%d", (int)getpid(), k);
		if ((fp = fopen(outp, "rb"))) {
			got = fread(theirs, 1, nb + 1, fp);
			fclose(fp);
		}
		CHECK(got == nb, "%s -> %s: ffmpeg wrote %zu bytes, we %zu", sf->name, dsts[k]->name, got, nb);
		if (got == nb) {
			double q = psnr(ours, theirs, nb);
			CHECK(q >= 45, "%s -> %s: PSNR %.1f dB vs ffmpeg", sf->name, dsts[k]->name, q);
			*worst = q < *worst ? q : *worst;
			(*pairs)++;
		}
		free(ours);
		free(theirs);
		remove(outp);
		buf_free(&d);
	}
	for (int k = 0; k < nd; k++) { /* also what a failed run left */
		snprintf(outp, sizeof(outp), "/tmp/vc_oracle_%d.%d", (int)getpid(), k);
		remove(outp);
	}
	free(src);
	remove(in);
	buf_free(&a);
	buf_free(&s);
}

static void ffmpeg_oracle(void)
{
	const struct vc_fmt *rgb = need("RGB24");
	struct vc_conv *c = vc_conv_new();
	char b1[8];
	int n = 0;
	double worst = 99;

	for (size_t i = 0; rgb && c && i < vc_fmt_count(); i++) {
		const struct vc_fmt *sf = vc_fmt_at(i);
		const char *sn = is_conv_dst(sf) ? ff_name(sf, b1) : NULL;
		if (sn && ff_can(sn, 'I'))
			oracle_src(c, rgb, sf, &n, &worst);
	}
	CHECK(n > 100, "only %d pairs compared", n);
	printf("  %d pairs against ffmpeg, worst PSNR %.1f dB\n", n, worst);
	vc_conv_free(c);
}

int main(void)
{
	RUN("convert", color_resolve);
	RUN("convert", all_pairs);
	RUN("convert", colour_bars);
	RUN("convert", rgb_limited);
	RUN("convert", rgb_range_alpha);
	RUN("convert", yuv_reencode);
	RUN("convert", round_trips);
	RUN("convert", bayer_flat);
	RUN("convert", scaling);
	RUN("convert", bad_input);
	RUN("convert", exact_paths);
	RUN("convert", random_views);
	RUN("convert", weave_fields);
	if (system("ffmpeg -version >/dev/null 2>&1") == 0)
		RUN("convert", ffmpeg_oracle);
	else
		printf("convert.ffmpeg_oracle: SKIP ffmpeg not installed\n");
	CHECK_EXIT();
}
