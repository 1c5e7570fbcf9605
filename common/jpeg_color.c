/* YCbCr range and matrix conversion for the JPEG paths: JFIF wants full-range
 * BT.601; cameras send limited range (and HD sources BT.709). The loops work
 * on rows the codec owns (scratch strips or a decode destination), in fixed
 * point, written so the compiler can vectorise them (fixed 16-sample inner
 * loops) without intrinsics. */
#include "common/jpeg_int.h"

#include "common/color.h"


/* Kr, Kb of each matrix color.h names. */
static void enc_k(int matrix, double *kr, double *kb)
{
	static const struct { int m; double kr, kb; } tab[] = {
		{ VC_MATRIX_BT601, 0.299, 0.114 },
		{ VC_MATRIX_BT709, 0.2126, 0.0722 },
		{ VC_MATRIX_BT2020, 0.2627, 0.0593 },
	};
	*kr = 0.299;
	*kb = 0.114;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].m == matrix) {
			*kr = tab[i].kr;
			*kb = tab[i].kb;
		}
}

/* Normalised YCbCr (Y 0..1, C -0.5..0.5) -> RGB and back, for one encoding. */
static void ycc_to_rgb(double kr, double kb, double m[3][3])
{
	double kg = 1.0 - kr - kb;

	m[0][0] = 1; m[0][1] = 0; m[0][2] = 2 * (1 - kr);
	m[2][0] = 1; m[2][1] = 2 * (1 - kb); m[2][2] = 0;
	/* G = (Y - Kr R - Kb B) / Kg */
	m[1][0] = 1;
	m[1][1] = -kb * 2 * (1 - kb) / kg;
	m[1][2] = -kr * 2 * (1 - kr) / kg;
}

static void rgb_to_ycc(double kr, double kb, double m[3][3])
{
	double kg = 1.0 - kr - kb;

	m[0][0] = kr; m[0][1] = kg; m[0][2] = kb;
	m[1][0] = -kr / (2 * (1 - kb)); m[1][1] = -kg / (2 * (1 - kb)); m[1][2] = 0.5;
	m[2][0] = 0.5; m[2][1] = -kg / (2 * (1 - kr)); m[2][2] = -kb / (2 * (1 - kr));
}

void vc_jpeg_ycc_xf(int enc_in, int full_in, int enc_out, int full_out, struct ycc_xf *x)
{
	double kri, kbi, kro, kbo, a[3][3], b[3][3], m[3][3];
	double sy_in = full_in ? 255 : 219, sc_in = full_in ? 255 : 224;
	double sy_out = full_out ? 255 : 219, sc_out = full_out ? 255 : 224;

	enc_k(enc_in, &kri, &kbi);
	enc_k(enc_out, &kro, &kbo);
	x->y_in_off = full_in ? 0 : 16;
	x->y_out_off = full_out ? 0 : 16;
	ycc_to_rgb(kri, kbi, a);
	rgb_to_ycc(kro, kbo, b);
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++) {
			double s = 0;

			for (int k = 0; k < 3; k++)
				s += b[r][k] * a[k][c];
			m[r][c] = s * (r ? sc_out : sy_out) / (c ? sc_in : sy_in);
		}
	x->scale_only = 1;
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++) {
			double v = m[r][c] * 4096.0;

			x->m[r][c] = (int)(v < 0 ? v - 0.5 : v + 0.5);
			if (r != c && x->m[r][c] != 0)
				x->scale_only = 0;
		}
	x->identity = x->scale_only && x->m[0][0] == 4096 && x->m[1][1] == 4096 &&
		      x->m[2][2] == 4096 && x->y_in_off == x->y_out_off;
}

static inline uint8_t clamp_q12(int v)
{
	v = v < 0 ? 0 : v >> 12;
	return (uint8_t)(v > 255 ? 255 : v);
}

/* GCC's default -O2 cost model only vectorises loops without a scalar
 * epilogue; these per-sample loops are the hot part of limited-range input,
 * so ask for the full cost model here (measured: 0.15 vs 0.45 ns/sample).
 * Other compilers vectorise them at -O2 anyway. */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZE __attribute__((optimize("vect-cost-model=dynamic")))
#else
#define VECTORIZE
#endif

/* One sample: out = max(0, min(in, hi) * k7 + pos - neg) >> 7 in unsigned
 * 16-bit lanes: with a Q7 factor k7 <= 160 and pos, neg < 2^14 nothing
 * overflows (255 * 160 + 2^14 < 2^16), and the compiler packs 8..16 samples
 * per instruction. hi is the largest input whose result still fits 8 bits,
 * so clamping the input (one byte min per 16 samples) replaces clamping the
 * 16-bit result (no unsigned 16-bit min in SSE2: ten instructions per 16
 * samples, measured 0.75 -> 0.52 ms per 1080p 4:2:2 frame including the
 * deinterleave); the results are the same for every input. */
struct lin {
	uint8_t hi;
	uint16_t k7, pos, neg;
};

static inline uint8_t lin1(struct lin l, uint8_t in)
{
	uint8_t x = in < l.hi ? in : l.hi;
	uint16_t v = (uint16_t)(x * l.k7 + l.pos);

	v = v < l.neg ? l.neg : v; /* written so it stays a 16-bit saturating subtract */
	v = (uint16_t)(v - l.neg);
	return (uint8_t)(v >> 7);
}

/* dst may be src (in place). */
VECTORIZE static void lin_row(const uint8_t *src, uint8_t *dst, int w, struct lin l)
{
	for (int i = 0; i < w; i++)
		dst[i] = lin1(l, src[i]);
}

/* Semi-planar chroma: n pairs C0 C1 split into two rows. */
VECTORIZE static void lin_split(const uint8_t *restrict s, uint8_t *restrict c0,
				uint8_t *restrict c1, int n, struct lin l)
{
	for (int i = 0; i < n; i++) {
		c0[i] = lin1(l, s[2 * i]);
		c1[i] = lin1(l, s[2 * i + 1]);
	}
}

/* clamp(((in - in_off) * k + out_off * 4096 + 2048) >> 12) as a Q7 lin (the
 * rounding stays within 0.3 level over the range): 0, or -1 when the
 * factor or offsets do not fit it. */
static int lin_of(int in_off, int k, int out_off, struct lin *l)
{
	int k7 = (k + 16) >> 5; /* Q12 -> Q7 */
	int bias = 64 + (out_off << 7) - in_off * k7;
	int hi;

	if (k7 <= 0 || k7 > 160 || bias <= -(1 << 14) || bias >= (1 << 14))
		return -1;
	/* the largest in with in * k7 + bias < 256 << 7; inputs above it must
	 * give 255, which clamping them to hi does if hi gives 255 */
	hi = ((256 << 7) - 1 - bias) / k7;
	if (hi < 255 && (hi * k7 + bias) >> 7 != 255)
		return -1;
	l->hi = (uint8_t)(hi > 255 ? 255 : hi);
	l->k7 = (uint16_t)k7;
	l->pos = (uint16_t)(bias > 0 ? bias : 0);
	l->neg = (uint16_t)(bias < 0 ? -bias : 0);
	return 0;
}

/* out = clamp(((in - in_off) * k + out_off * 4096 + 2048) >> 12) for one row:
 * luma (offsets 0/16) or chroma (offsets 128). */
static void scale_row(uint8_t *row, int w, int in_off, int k, int out_off)
{
	struct lin l;
	int bias = out_off * 4096 + 2048 - in_off * k;

	if (lin_of(in_off, k, out_off, &l) == 0) {
		lin_row(row, row, w, l);
		return;
	}
	for (int i = 0; i < w; i++)
		row[i] = clamp_q12(row[i] * k + bias);
}

/* Packed 4:2:2 rows, n whole groups of Y C0 Y C1 / C0 Y C1 Y: the constant
 * byte positions let the compiler deinterleave with vector shuffles. */
VECTORIZE static void packed_ycyc(const uint8_t *restrict s, uint8_t *restrict y,
				  uint8_t *restrict c0, uint8_t *restrict c1, int n,
				  struct lin ly, struct lin lc)
{
	for (int i = 0; i < n; i++) {
		y[2 * i] = lin1(ly, s[4 * i]);
		c0[i] = lin1(lc, s[4 * i + 1]);
		y[2 * i + 1] = lin1(ly, s[4 * i + 2]);
		c1[i] = lin1(lc, s[4 * i + 3]);
	}
}

VECTORIZE static void packed_cycy(const uint8_t *restrict s, uint8_t *restrict y,
				  uint8_t *restrict c0, uint8_t *restrict c1, int n,
				  struct lin ly, struct lin lc)
{
	for (int i = 0; i < n; i++) {
		c0[i] = lin1(lc, s[4 * i]);
		y[2 * i] = lin1(ly, s[4 * i + 1]);
		c1[i] = lin1(lc, s[4 * i + 2]);
		y[2 * i + 1] = lin1(ly, s[4 * i + 3]);
	}
}

int vc_jpeg_onepass_ok(const struct ycc_xf *x)
{
	struct lin l;

	return !x->identity && x->scale_only && x->m[1][1] == x->m[2][2] &&
	       lin_of(x->y_in_off, x->m[0][0], x->y_out_off, &l) == 0 &&
	       lin_of(128, x->m[1][1], 128, &l) == 0;
}

void vc_jpeg_packed_apply(const struct ycc_xf *x, const uint8_t *src, int chroma_first, int w,
			  uint8_t *y, uint8_t *c0, uint8_t *c1)
{
	struct lin ly, lc;
	int n = w / 2;

	if (lin_of(x->y_in_off, x->m[0][0], x->y_out_off, &ly) < 0 ||
	    lin_of(128, x->m[1][1], 128, &lc) < 0)
		return; /* not after vc_jpeg_onepass_ok() */
	if (chroma_first)
		packed_cycy(src, y, c0, c1, n, ly, lc);
	else
		packed_ycyc(src, y, c0, c1, n, ly, lc);
	if (w & 1) { /* the last group's second luma sample is padding */
		const uint8_t *g = src + 4 * n;

		y[w - 1] = lin1(ly, g[chroma_first]);
		c0[n] = lin1(lc, g[!chroma_first]);
		c1[n] = lin1(lc, g[2 + !chroma_first]);
	}
}

void vc_jpeg_y_apply(const struct ycc_xf *x, uint8_t *row, int w)
{
	if (!x->identity)
		scale_row(row, w, x->y_in_off, x->m[0][0], x->y_out_off);
}

void vc_jpeg_ycc_apply(const struct ycc_xf *x, uint8_t **y, int n_y, int w,
		       uint8_t **cb, uint8_t **cr, int n_c, int cw, int hs, int vs)
{
	if (x->identity)
		return;
	if (x->scale_only) {
		for (int r = 0; r < n_y; r++)
			scale_row(y[r], w, x->y_in_off, x->m[0][0], x->y_out_off);
		for (int r = 0; r < n_c; r++) {
			scale_row(cb[r], cw, 128, x->m[1][1], 128);
			scale_row(cr[r], cw, 128, x->m[2][2], 128);
		}
		return;
	}
	/* Luma from the co-sited (nearest) chroma sample, before chroma changes. */
	for (int r = 0; r < n_y; r++) {
		const uint8_t *u = cb[r >> vs], *v = cr[r >> vs];
		uint8_t *p = y[r];
		int bias = x->y_out_off * 4096 + 2048 - x->y_in_off * x->m[0][0] -
			   128 * (x->m[0][1] + x->m[0][2]);

		for (int i = 0; i < w; i++)
			p[i] = clamp_q12(p[i] * x->m[0][0] + u[i >> hs] * x->m[0][1] +
					 v[i >> hs] * x->m[0][2] + bias);
	}
	for (int r = 0; r < n_c; r++) {
		uint8_t *u = cb[r], *v = cr[r];
		int bb = 128 * 4096 + 2048 - 128 * (x->m[1][1] + x->m[1][2]);
		int br = 128 * 4096 + 2048 - 128 * (x->m[2][1] + x->m[2][2]);

		for (int i = 0; i < cw; i++) {
			int b = u[i], rr = v[i];

			u[i] = clamp_q12(b * x->m[1][1] + rr * x->m[1][2] + bb);
			v[i] = clamp_q12(b * x->m[2][1] + rr * x->m[2][2] + br);
		}
	}
}

void vc_jpeg_range_row(const struct ycc_xf *x, int chroma, const uint8_t *src, uint8_t *dst, int w)
{
	struct lin l;
	int r = chroma ? lin_of(128, x->m[1][1], 128, &l)
		       : lin_of(x->y_in_off, x->m[0][0], x->y_out_off, &l);

	if (r == 0) /* else not after vc_jpeg_onepass_ok() */
		lin_row(src, dst, w, l);
}

void vc_jpeg_range_split(const struct ycc_xf *x, const uint8_t *src, uint8_t *c0, uint8_t *c1,
			 int n)
{
	struct lin l;

	if (lin_of(128, x->m[1][1], 128, &l) == 0) /* else not after vc_jpeg_onepass_ok() */
		lin_split(src, c0, c1, n, l);
}
