/* Encoding. YUV and grey sources go in as raw YCbCr (jpeg_write_raw_data)
 * with no colour conversion: planar rows are handed to libjpeg straight from
 * the source, semi-planar chroma is split and packed 4:2:2 deinterleaved by
 * libyuv one iMCU row (8 or 16 lines) at a time into a cache-sized strip.
 * Limited range / non-601 input is converted to JFIF on that strip. RGB
 * goes through libjpeg-turbo's own SIMD colour conversion. Everything else
 * is converted to I420 by the converter first. One compressor per context,
 * reused for every frame. */
#define LOG_PREFIX "jpeg: "
#include "common/jpeg_int.h"

#include <errno.h>
#include <string.h>

#include <jerror.h>
#include <libyuv.h>

#include "common/color.h"
#include "common/convert.h"
#include "common/log.h"

/* ---- libjpeg glue: error manager and a destination in the caller's buffer */

static void on_error(j_common_ptr c)
{
	struct jerr *e = (struct jerr *)c->err;

	longjmp(e->jb, 1);
}

static void on_message(j_common_ptr c)
{
	char buf[JMSG_LENGTH_MAX];

	c->err->format_message(c, buf);
	log_debug("libjpeg: %s", buf);
}

static void dest_init(j_compress_ptr c)
{
	(void)c; /* next_output_byte/free_in_buffer are set before start */
}

static boolean dest_full(j_compress_ptr c)
{
	struct jdest *d = (struct jdest *)c->dest;

	d->err->overflow = 1;
	ERREXIT(c, JERR_BUFFER_SIZE);
	return FALSE;
}

static void dest_term(j_compress_ptr c)
{
	(void)c;
}

/* Creates the compressor on first use. */
static int comp_ready(struct vc_jpeg *j)
{
	if (j->c_ready)
		return 0;
	j->c.err = jpeg_std_error(&j->cerr.pub);
	j->cerr.pub.error_exit = on_error;
	j->cerr.pub.output_message = on_message;
	if (setjmp(j->cerr.jb)) {
		log_error("cannot create the compressor: %s", "out of memory");
		return -ENOMEM;
	}
	jpeg_create_compress(&j->c);
	j->dest.pub.init_destination = dest_init;
	j->dest.pub.empty_output_buffer = dest_full;
	j->dest.pub.term_destination = dest_term;
	j->dest.err = &j->cerr;
	j->c.dest = &j->dest.pub;
	j->c_ready = 1;
	j->c_quality = -1;
	return 0;
}

/* Sets the compressor's parameters unless it already has these. */
static void comp_setup(struct vc_jpeg *j, uint32_t w, uint32_t h, int ncomp, int jcs,
		       int hs, int vs, int quality, int raw)
{
	struct jpeg_compress_struct *c = &j->c;

	if (j->c_quality == quality && j->c_w == (int)w && j->c_h == (int)h &&
	    j->c_ncomp == jcs && j->c_hs == hs && j->c_vs == (vs | raw << 4))
		return;
	c->image_width = w;
	c->image_height = h;
	c->input_components = ncomp;
	c->in_color_space = (J_COLOR_SPACE)jcs;
	jpeg_set_defaults(c);
	c->raw_data_in = raw ? TRUE : FALSE;
	c->optimize_coding = FALSE;
	c->dct_method = JDCT_ISLOW;
	if (c->num_components == 3) {
		c->comp_info[0].h_samp_factor = 1 << hs;
		c->comp_info[0].v_samp_factor = 1 << vs;
		for (int i = 1; i < 3; i++) {
			c->comp_info[i].h_samp_factor = 1;
			c->comp_info[i].v_samp_factor = 1;
		}
	}
	jpeg_set_quality(c, quality, TRUE);
	j->c_quality = quality;
	j->c_w = (int)w;
	j->c_h = (int)h;
	j->c_ncomp = jcs;
	j->c_hs = hs;
	j->c_vs = vs | raw << 4;
}

/* One encode: comp_setup()'s arguments, grey output from a colour input,
 * and what hands libjpeg the rows. */
struct comp_job {
	uint32_t w, h;
	int ncomp, jcs, hs, vs, raw, grey_out;
	void (*feed)(struct vc_jpeg *j, void *arg); /* the next rows, at c.next_scanline */
	void *arg;
};

/* Compresses into out[0..cap): sets the compressor up, feeds rows until the
 * last scanline. libjpeg errors land here by longjmp: -ENOSPC when out was
 * too small, else -EINVAL. */
static int compress(struct vc_jpeg *j, const struct comp_job *job, int quality, uint8_t *out,
		    size_t cap, size_t *len)
{
	int r = comp_ready(j);

	if (r < 0)
		return r;
	j->cerr.overflow = 0;
	if (setjmp(j->cerr.jb)) {
		jpeg_abort_compress(&j->c);
		j->c_quality = -1;
		return j->cerr.overflow ? -ENOSPC : -EINVAL;
	}
	comp_setup(j, job->w, job->h, job->ncomp, job->jcs, job->hs, job->vs, quality, job->raw);
	if (job->grey_out) {
		jpeg_set_colorspace(&j->c, JCS_GRAYSCALE);
		j->c_quality = -1; /* not the cached set-up any more */
	}
	j->dest.pub.next_output_byte = out;
	j->dest.pub.free_in_buffer = cap;
	jpeg_start_compress(&j->c, TRUE);
	while (j->c.next_scanline < j->c.image_height)
		job->feed(j, job->arg);
	jpeg_finish_compress(&j->c);
	*len = cap - j->dest.pub.free_in_buffer;
	return 0;
}

/* ---- raw YCbCr path */

enum { K_PLANAR = 1, K_SEMI, K_PACKED, K_GREY };

struct plan {
	int kind;
	int ncomp;    /* JPEG components: 1 or 3 */
	int hs, vs;   /* source chroma subsampling (log2) */
	int jhs, jvs; /* JPEG chroma subsampling (log2); jhs == hs, jvs >= vs */
	int ci[2];    /* source plane (planar) / interleave slot of Cb, Cr */
	int chroma_first; /* packed: UYVY-like */
	struct ycc_xf xf;
};

/* Legal JPEG raw sampling that libjpeg accepts: at most 10 blocks per MCU. */
static int legal_ss(int hs, int vs)
{
	return hs <= 2 && vs <= 1 && (1 << hs) * (1 << vs) + 2 <= 10;
}

static int plan_yuv(const struct vc_image *src, int subsamp, struct plan *p)
{
	const struct vc_fmt *f = src->fmt;
	struct vc_ycbcr e;

	memset(p, 0, sizeof(*p));
	if (f->depth != 8)
		return -ENOTSUP;
	if (f->layout == VC_LAYOUT_GREY && f->group_bytes[0] == 1 && f->group_px == 1) {
		p->kind = K_GREY;
	} else if (f->layout == VC_LAYOUT_PLANAR_YUV && f->color_planes == 3) {
		p->kind = K_PLANAR;
		p->ci[0] = f->swap_uv ? 2 : 1;
		p->ci[1] = f->swap_uv ? 1 : 2;
	} else if (f->layout == VC_LAYOUT_SEMIPLANAR && f->color_planes == 2) {
		p->kind = K_SEMI;
	} else if (f->layout == VC_LAYOUT_PACKED_YUV && f->group_px == 2 &&
		   f->group_bytes[0] == 4 && f->a_off == VC_NONE &&
		   ((f->y_off[0] == 0 && f->y_off[1] == 2) ||
		    (f->y_off[0] == 1 && f->y_off[1] == 3))) {
		p->kind = K_PACKED;
		p->chroma_first = f->y_off[0] == 1;
		p->ci[0] = f->u_off[0] > f->v_off[0]; /* Cr first in memory: swap */
	} else {
		return -ENOTSUP;
	}
	p->hs = f->log2_chroma_w;
	p->vs = f->log2_chroma_h;
	if (p->kind == K_GREY || subsamp == VC_JPEG_SS_GRAY) {
		p->ncomp = 1;
	} else {
		p->ncomp = 3;
		p->jhs = p->hs;
		p->jvs = p->vs;
		if (subsamp == VC_JPEG_SS_420 && p->hs == 1 && p->vs == 0)
			p->jvs = 1; /* 4:2:2 -> 4:2:0: average chroma line pairs */
		else if (subsamp != VC_JPEG_SS_AUTO &&
			 !(subsamp == VC_JPEG_SS_444 && p->hs == 0 && p->vs == 0) &&
			 !(subsamp == VC_JPEG_SS_422 && p->hs == 1 && p->vs == 0) &&
			 !(subsamp == VC_JPEG_SS_420 && p->hs == 1 && p->vs == 1) &&
			 !(subsamp == VC_JPEG_SS_411 && p->hs == 2 && p->vs == 0))
			return -ENOTSUP;
		if (!legal_ss(p->jhs, p->jvs))
			return -ENOTSUP;
	}
	vc_color_resolve_fmt(f, &src->color, &e);
	vc_jpeg_ycc_xf(e.matrix, e.full_range, VC_MATRIX_BT601, 1, &p->xf);
	return 0;
}

static void pad_row(uint8_t *row, int w, int pw)
{
	if (pw > w)
		memset(row + w, row[w - 1], (size_t)(pw - w));
}

/* Average of two chroma lines (4:2:2 -> 4:2:0), libyuv's SIMD blend. */
static void avg_rows(const uint8_t *a, const uint8_t *b, uint8_t *d, int w)
{
	InterpolatePlane(a, 0, b, 0, d, 0, w, 1, 128);
}

static inline const uint8_t *row_at(const struct vc_image *s, int p, uint32_t y)
{
	return s->plane[p] + (size_t)y * s->stride[p];
}

/* Everything the strip loop needs, computed once per frame. */
struct strip {
	const struct vc_image *s;
	const struct plan *p;
	int w, h, pw, cw, pcw, ch_src;
	int mcu_h;
	int direct_y, direct_c;
	int fused; /* range converted while copying/splitting/deinterleaving */
	uint8_t *ys, *cs[2], *as[2]; /* scratch: luma rows, JPEG chroma rows, source chroma rows */
	JSAMPROW yr[16], cr[2][16];
	JSAMPARRAY planes[3]; /* yr, cr[0], cr[1] for jpeg_write_raw_data */
};

/* Source chroma rows [c0, c0 + n) of component k as pointers (planar) or
 * materialised in as[k] (semi-planar split). Packed sources were already
 * deinterleaved by fill_strip. */
static void src_chroma(struct strip *t, int c0, int n, const uint8_t **rows[2])
{
	const struct vc_image *s = t->s;

	for (int i = 0; i < n; i++) {
		int y = c0 + i;

		if (t->p->kind == K_PLANAR) {
			rows[0][i] = row_at(s, t->p->ci[0], (uint32_t)y);
			rows[1][i] = row_at(s, t->p->ci[1], (uint32_t)y);
		} else if (t->p->kind == K_SEMI) {
			uint8_t *u = t->as[0] + (size_t)i * t->pcw, *v = t->as[1] + (size_t)i * t->pcw;
			uint8_t *first = s->fmt->swap_uv ? v : u, *second = s->fmt->swap_uv ? u : v;

			if (t->fused)
				vc_jpeg_range_split(&t->p->xf, row_at(s, 1, (uint32_t)y), first, second,
						    t->cw);
			else
				SplitUVPlane(row_at(s, 1, (uint32_t)y), 0, first, 0, second, 0, t->cw, 1);
			rows[0][i] = u;
			rows[1][i] = v;
		} else {
			rows[0][i] = t->as[0] + (size_t)i * t->pcw;
			rows[1][i] = t->as[1] + (size_t)i * t->pcw;
		}
	}
}

/* Builds the row pointers for the iMCU row starting at luma line y0. */
static void fill_strip(struct strip *t, int y0)
{
	const struct vc_image *s = t->s;
	const struct plan *p = t->p;
	int ny = t->h - y0 < t->mcu_h ? t->h - y0 : t->mcu_h;

	/* Luma (and, for packed 4:2:2, its chroma into the source-chroma scratch). */
	if (p->kind == K_PACKED) {
		const uint8_t *src = row_at(s, 0, (uint32_t)y0);
		uint8_t *u = t->as[p->ci[0]], *v = t->as[!p->ci[0]];

		if (t->fused)
			for (int i = 0; i < ny; i++)
				vc_jpeg_packed_apply(&p->xf, src + (size_t)i * s->stride[0],
						     p->chroma_first, t->w, t->ys + (size_t)i * t->pw,
						     u + (size_t)i * t->pcw, v + (size_t)i * t->pcw);
		else if (p->chroma_first)
			UYVYToI422(src, (int)s->stride[0], t->ys, t->pw, u, t->pcw, v, t->pcw,
				   t->w, ny);
		else
			YUY2ToI422(src, (int)s->stride[0], t->ys, t->pw, u, t->pcw, v, t->pcw,
				   t->w, ny);
		for (int i = 0; i < ny; i++)
			t->yr[i] = t->ys + (size_t)i * t->pw;
	} else {
		for (int i = 0; i < ny; i++) {
			const uint8_t *r = row_at(s, 0, (uint32_t)(y0 + i));

			if (t->direct_y) {
				t->yr[i] = (JSAMPROW)(uintptr_t)r; /* libjpeg only reads raw rows */
			} else if (t->fused) {
				t->yr[i] = t->ys + (size_t)i * t->pw;
				vc_jpeg_range_row(&p->xf, 0, r, t->yr[i], t->w);
			} else {
				t->yr[i] = t->ys + (size_t)i * t->pw;
				memcpy(t->yr[i], r, (size_t)t->w);
			}
		}
	}
	if (!t->direct_y)
		for (int i = 0; i < ny; i++)
			pad_row(t->yr[i], t->w, t->pw);

	int nc = 0;
	if (p->ncomp == 3) {
		int jc0 = y0 >> p->jvs;
		int jch = (t->h + (1 << p->jvs) - 1) >> p->jvs;
		int up = p->jvs - p->vs; /* 0, or 1 when averaging line pairs */
		int sc0 = jc0 << up;
		int sn;
		const uint8_t *srows0[16], *srows1[16];
		const uint8_t **srows[2] = { srows0, srows1 };

		nc = jch - jc0 < (t->mcu_h >> p->jvs) ? jch - jc0 : t->mcu_h >> p->jvs;
		sn = t->ch_src - sc0 < (nc << up) ? t->ch_src - sc0 : nc << up;
		if (p->kind == K_PACKED) /* rows are relative to the strip already */
			sc0 = 0;
		src_chroma(t, sc0, sn, srows);
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < nc; i++) {
				uint8_t *d = t->cs[k] + (size_t)i * t->pcw;

				if (up) {
					int a = 2 * i, b = 2 * i + 1 < sn ? 2 * i + 1 : 2 * i;

					avg_rows(srows[k][a], srows[k][b], d, t->cw);
				} else if (t->direct_c) {
					t->cr[k][i] = (JSAMPROW)(uintptr_t)srows[k][i];
					continue;
				} else if (p->kind != K_PLANAR) {
					/* split or deinterleaved into our scratch already:
					 * pad and convert it there, no copy */
					d = t->as[k] + (size_t)i * t->pcw;
				} else if (t->fused) {
					vc_jpeg_range_row(&p->xf, 1, srows[k][i], d, t->cw);
				} else {
					memcpy(d, srows[k][i], (size_t)t->cw);
				}
				pad_row(d, t->cw, t->pcw);
				t->cr[k][i] = d;
			}
	}
	if (!p->xf.identity && !t->fused) {
		if (p->ncomp == 3)
			vc_jpeg_ycc_apply(&p->xf, t->yr, ny, t->pw, t->cr[0], t->cr[1], nc, t->pcw,
					  p->jhs, p->jvs);
		else
			for (int i = 0; i < ny; i++)
				vc_jpeg_y_apply(&p->xf, t->yr[i], t->pw);
	}
	/* Lines below the picture repeat its last line (edge extension). */
	for (int i = ny; i < t->mcu_h; i++)
		t->yr[i] = t->yr[ny - 1];
	if (p->ncomp == 3)
		for (int k = 0; k < 2; k++)
			for (int i = nc; i < 8; i++)
				t->cr[k][i] = t->cr[k][nc - 1];
}

static void feed_raw(struct vc_jpeg *j, void *arg)
{
	struct strip *t = arg;

	fill_strip(t, (int)j->c.next_scanline);
	jpeg_write_raw_data(&j->c, t->planes, (JDIMENSION)t->mcu_h);
}

static int enc_raw(struct vc_jpeg *j, const struct vc_image *s, const struct plan *p,
		   int quality, uint8_t *out, size_t cap, size_t *len)
{
	struct strip t;
	int maxh = 1 << p->jhs;
	size_t need;
	uint8_t *sc;

	memset(&t, 0, sizeof(t));
	t.s = s;
	t.p = p;
	t.w = (int)s->width;
	t.h = (int)s->height;
	if (p->ncomp == 1)
		maxh = 1;
	t.pw = (t.w + 8 * maxh - 1) / (8 * maxh) * (8 * maxh);
	t.cw = (t.w + (1 << p->hs) - 1) >> p->hs;
	t.pcw = t.pw >> p->jhs;
	t.ch_src = (t.h + (1 << p->vs) - 1) >> p->vs;
	t.mcu_h = p->ncomp == 1 ? 8 : 8 << p->jvs;
	/* Rows may come straight from the source when nothing changes them and
	 * libjpeg's reads (padded to whole blocks) stay inside the row. */
	t.direct_y = p->kind != K_PACKED && p->xf.identity && t.pw == t.w;
	t.direct_c = p->kind == K_PLANAR && p->xf.identity && t.pcw == t.cw && p->jvs == p->vs;
	/* Limited range (the V4L2 default for YUV) without a change of chroma
	 * lines: the source is read once, converted while it is copied, split or
	 * deinterleaved into the strip, instead of copied and then converted. */
	t.fused = (p->ncomp == 1 || p->jvs == p->vs) && vc_jpeg_onepass_ok(&p->xf);
	need = (size_t)t.pw * 16 + (size_t)t.pcw * (2 * 8 + 2 * 16);
	sc = vc_jpeg_scratch(j, need);
	if (!sc)
		return -ENOMEM;
	t.ys = sc;
	t.cs[0] = t.ys + (size_t)t.pw * 16;
	t.cs[1] = t.cs[0] + (size_t)t.pcw * 8;
	t.as[0] = t.cs[1] + (size_t)t.pcw * 8;
	t.as[1] = t.as[0] + (size_t)t.pcw * 16;
	t.planes[0] = t.yr;
	t.planes[1] = t.cr[0];
	t.planes[2] = t.cr[1];

	struct comp_job job = {
		.w = s->width, .h = s->height, .ncomp = p->ncomp,
		.jcs = p->ncomp == 1 ? JCS_GRAYSCALE : JCS_YCbCr, .hs = p->jhs, .vs = p->jvs,
		.raw = 1, .feed = feed_raw, .arg = &t,
	};
	return compress(j, &job, quality, out, cap, len);
}

/* ---- RGB path: libjpeg-turbo's extended input colour spaces */

static const struct { int jcs, size, r, g, b; } rgb_layouts[] = {
	{ JCS_EXT_RGB, 3, 0, 1, 2 },  { JCS_EXT_BGR, 3, 2, 1, 0 },
	{ JCS_EXT_RGBX, 4, 0, 1, 2 }, { JCS_EXT_BGRX, 4, 2, 1, 0 },
	{ JCS_EXT_XRGB, 4, 1, 2, 3 }, { JCS_EXT_XBGR, 4, 3, 2, 1 },
};

/* Byte offset of an 8-bit field inside a group, or -1. */
static int byte_of(const struct vc_fmt *f, const struct vc_bits *b)
{
	if (b->depth != 8 || b->shift % 8)
		return -1;
	return f->big_endian ? f->group_bytes[0] - 1 - b->shift / 8 : b->shift / 8;
}

static int rgb_jcs(const struct vc_fmt *f)
{
	if (f->layout != VC_LAYOUT_PACKED_RGB || f->group_px != 1)
		return -1;
	int r = byte_of(f, &f->r), g = byte_of(f, &f->g), b = byte_of(f, &f->b);

	for (size_t i = 0; i < sizeof(rgb_layouts) / sizeof(rgb_layouts[0]); i++)
		if (rgb_layouts[i].size == f->group_bytes[0] && rgb_layouts[i].r == r &&
		    rgb_layouts[i].g == g && rgb_layouts[i].b == b)
			return rgb_layouts[i].jcs;
	return -1;
}

/* Up to 16 rows straight from the source: libjpeg-turbo converts them. */
static void feed_rgb(struct vc_jpeg *j, void *arg)
{
	const struct vc_image *s = arg;
	JSAMPROW rows[16];
	int n = 0;

	for (; n < 16 && j->c.next_scanline + (unsigned)n < j->c.image_height; n++)
		rows[n] = (JSAMPROW)(uintptr_t)row_at(s, 0, j->c.next_scanline + (unsigned)n);
	jpeg_write_scanlines(&j->c, rows, (JDIMENSION)n);
}

static int enc_rgb(struct vc_jpeg *j, const struct vc_image *s, int jcs, int subsamp,
		   int quality, uint8_t *out, size_t cap, size_t *len)
{
	int hs = 1, vs = 1, ncomp = 3;

	if (subsamp == VC_JPEG_SS_444)
		hs = vs = 0;
	else if (subsamp == VC_JPEG_SS_422)
		vs = 0;
	else if (subsamp == VC_JPEG_SS_GRAY)
		ncomp = 1;
	else if (subsamp != VC_JPEG_SS_AUTO && subsamp != VC_JPEG_SS_420)
		return -ENOTSUP;

	struct comp_job job = {
		.w = s->width, .h = s->height, .ncomp = s->fmt->group_bytes[0], .jcs = jcs,
		.hs = hs, .vs = vs, .grey_out = ncomp == 1,
		.feed = feed_rgb, .arg = (void *)(uintptr_t)s, /* only read */
	};
	return compress(j, &job, quality, out, cap, len);
}

/* ---- everything else: the converter to planar YUV (or grey) first */

static const struct { int ss; uint32_t fourcc; } conv_targets[] = {
	{ VC_JPEG_SS_420, V4L2_PIX_FMT_YUV420 },  { VC_JPEG_SS_422, V4L2_PIX_FMT_YUV422P },
	{ VC_JPEG_SS_444, V4L2_PIX_FMT_YUV444M }, { VC_JPEG_SS_411, V4L2_PIX_FMT_YUV411P },
	{ VC_JPEG_SS_GRAY, V4L2_PIX_FMT_GREY },
};

int vc_jpeg_auto_subsamp(const struct vc_fmt *f)
{
	static const struct { uint8_t w, h; int ss; } m[] = {
		{ 0, 0, VC_JPEG_SS_444 }, { 1, 0, VC_JPEG_SS_422 }, { 1, 1, VC_JPEG_SS_420 },
		{ 2, 0, VC_JPEG_SS_411 },
	};

	if (f->family == VC_FAM_GREY)
		return VC_JPEG_SS_GRAY;
	if (f->family != VC_FAM_YUV)
		return VC_JPEG_SS_420;
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].w == f->log2_chroma_w && m[i].h == f->log2_chroma_h)
			return m[i].ss;
	return VC_JPEG_SS_420;
}

static int enc_converted(struct vc_jpeg *j, const struct vc_image *src, int quality,
			 int subsamp, uint8_t *out, size_t cap, size_t *len)
{
	struct vc_image tmp;
	struct vc_conv *cv = vc_jpeg_conv(j);
	struct plan p;
	uint32_t fourcc = 0;
	char fcc[16];
	int r;

	if (!cv)
		return -ENOMEM;
	if (subsamp == VC_JPEG_SS_AUTO)
		subsamp = vc_jpeg_auto_subsamp(src->fmt);
	for (size_t i = 0; i < sizeof(conv_targets) / sizeof(conv_targets[0]); i++)
		if (conv_targets[i].ss == subsamp)
			fourcc = conv_targets[i].fourcc;
	r = vc_jpeg_tmp_image(j, fourcc, src->width, src->height, &tmp);
	if (r == -EINVAL && fourcc != V4L2_PIX_FMT_YUV420) /* not in the table: 4:2:0 */
		r = vc_jpeg_tmp_image(j, V4L2_PIX_FMT_YUV420, src->width, src->height, &tmp);
	if (r < 0 || !vc_conv_supported(src->fmt, tmp.fmt)) {
		log_debug("encode: no JPEG path for %s", vc_fourcc_str(src->fmt->fourcc, fcc));
		return r < 0 ? r : -EINVAL;
	}
	r = vc_conv_run(cv, src, &tmp);
	if (r < 0)
		return r;
	r = plan_yuv(&tmp, VC_JPEG_SS_AUTO, &p);
	if (r < 0)
		return -EINVAL;
	return enc_raw(j, &tmp, &p, quality, out, cap, len);
}

/* ---- entry points */

int vc_jpeg_encode_ss(struct vc_jpeg *j, const struct vc_image *src, int quality,
		      int subsamp, uint8_t *out, size_t cap, size_t *len)
{
	struct plan p;
	int r, jcs;
	char fcc[16];

	if (!j || !src || !out || !len || quality < 1 || quality > 100)
		return -EINVAL;
	if (!src->fmt || src->fmt->layout == VC_LAYOUT_COMPRESSED)
		return -EINVAL;
	r = vc_jpeg_check_view(src);
	if (r < 0) {
		log_debug("encode: bad source view %s %ux%u",
			  vc_fourcc_str(src->fmt ? src->fmt->fourcc : 0, fcc),
			  src->width, src->height);
		return r;
	}
	jcs = rgb_jcs(src->fmt);
	struct vc_ycbcr se;
	vc_color_resolve_fmt(src->fmt, &src->color, &se);
	/* libjpeg's RGB input is full range: limited RGB (V4L2 LIM_RANGE, HDMI
	 * CEA-861 timings) goes through the converter, which expands it. */
	if (jcs >= 0 && se.full_range)
		return enc_rgb(j, src, jcs, subsamp, quality, out, cap, len);
	r = plan_yuv(src, subsamp, &p);
	if (r == 0)
		return enc_raw(j, src, &p, quality, out, cap, len);
	return enc_converted(j, src, quality, subsamp, out, cap, len);
}

int vc_jpeg_encode(struct vc_jpeg *j, const struct vc_image *src, int quality,
		   uint8_t *out, size_t cap, size_t *len)
{
	return vc_jpeg_encode_ss(j, src, quality, VC_JPEG_SS_AUTO, out, cap, len);
}
