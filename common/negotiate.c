/* Per-client negotiation (negotiate.h): plans one request against a device
 * mode like TRY_FMT, and picks the device mode that serves a set of requests.
 *
 * Policy, in order (vc_negotiate_mode):
 *  1. serve every request at the size and rate it asked for (never upscale,
 *     so a mode smaller than a request counts as a deficit);
 *  2. native formats over ones libv4l2 emulates (those cost a conversion in
 *     the capture thread);
 *  3. the lowest estimated CPU cost, counted once per distinct output
 *     (outputs are shared), passthrough being free;
 *  4. the smaller mode, then the slower rate that still serves everyone.
 * Requests without a size want the "reference" size: the current mode's,
 * else the configured one's, else a default (largest <= 1080p of the first
 * native format, fastest). Requests without a rate want the configured
 * mode's rate, else the reference's. Hysteresis: `cur` is kept unless the
 * best candidate serves a request better, is native where cur is emulated,
 * or costs < 3/4 of cur.
 * The chosen mode carries the interval the device is asked for: from the
 * caps (for a size inside a stepwise range, the rates of a listed size);
 * 0/0 only when the caps know no rate at all (the driver's own then).
 *
 * Sizes in a request are the delivered size, i.e. after rotation: rotate=90
 * with width=480,height=640 on a 640x480 camera is the full picture. */
#include "common/negotiate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/videodev2.h>

#include "common/convert.h"
#include "common/jpeg.h"
#include "common/transform.h"

#define DEFAULT_QUALITY 80

/* Lossless JPEG transforms trim partial MCUs; the MCU of webcam MJPEG
 * (4:2:2) is 16x8. The pipeline reports the real size of each frame; this
 * is the prediction used for the plan. */
#define XFORM_MCU_W 16
#define XFORM_MCU_H 8

static int is_compressed(const struct vc_fmt *f)
{
	return f->family == VC_FAM_COMPRESSED;
}

/* Width/height multiples a raw output format needs: a whole pixel group and
 * whole chroma samples. */
static void align_of(const struct vc_fmt *f, uint32_t *aw, uint32_t *ah)
{
	uint32_t w = 1u << f->log2_chroma_w, h = 1u << f->log2_chroma_h;
	if (f->group_px > w)
		w = f->group_px;
	if (is_compressed(f) || f->family == VC_FAM_BAYER) {
		w = f->family == VC_FAM_BAYER ? 2 : 1;
		h = f->family == VC_FAM_BAYER ? 2 : 1;
	}
	*aw = w;
	*ah = h;
}

/* Formats libjpeg-turbo reads/writes without our converter in between
 * (8-bit planar 4:2:0/4:2:2 in one buffer, 8-bit grey, 8-bit 3/4-byte RGB);
 * others cost an extra conversion pass, which the plan shows as CONVERT. */
static int jpeg_direct(const struct vc_fmt *f)
{
	if (f->depth != 8 || f->mem_planes != 1)
		return 0;
	if (f->layout == VC_LAYOUT_PLANAR_YUV)
		return f->log2_chroma_w == 1 && f->log2_chroma_h <= 1;
	if (f->layout == VC_LAYOUT_GREY)
		return 1;
	if (f->layout == VC_LAYOUT_PACKED_RGB)
		return (f->group_bytes[0] == 3 || f->group_bytes[0] == 4) && f->r.depth == 8 &&
		       f->g.depth == 8 && f->b.depth == 8;
	return 0;
}

static uint32_t round_div(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b / 2) / b);
}

static uint32_t align_down(uint32_t v, uint32_t a)
{
	uint32_t r = v / a * a;
	return r ? r : a;
}

/* An interval the device reported (0/0 = the device did not say). */
static int ival_known(struct vc_fract iv)
{
	return iv.num && iv.den;
}

/* Delivered fps of an interval, rounded; 0 when unknown. */
static uint32_t ival_fps(struct vc_fract iv)
{
	if (!ival_known(iv))
		return 0;
	return round_div(iv.den, iv.num);
}

int vc_negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		      struct vc_plan *plan)
{
	const struct vc_fmt *mf = mode ? vc_fmt_by_fourcc(mode->fourcc) : NULL;
	if (!mf || !req || !plan || !mode->width || !mode->height || !vc_fmt_is_raw(mf))
		return -EINVAL;

	struct vc_plan p;
	memset(&p, 0, sizeof(p));
	p.decode_denom = 1;

	/* format */
	uint32_t fcc = req->fourcc ? req->fourcc : mode->fourcc;
	const struct vc_fmt *of = vc_fmt_by_fourcc(fcc);
	if (!of || !vc_fmt_is_raw(of))
		return -EINVAL;
	if (is_compressed(of))
		fcc = V4L2_PIX_FMT_MJPEG; /* JPEG and MJPEG are one stream type */
	if (of->family == VC_FAM_BAYER) {
		/* Bayer can only be passed through: no converter writes it */
		if (fcc != mode->fourcc || req->rotate % 360 || req->flip & 3)
			return -EINVAL;
	} else if (!is_compressed(of)) {
		const struct vc_fmt *src = mf;
		if (is_compressed(mf))
			src = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420); /* what decode yields */
		if (fcc != mode->fourcc && !vc_conv_supported(src, of))
			return -EINVAL;
	}

	/* rotation: nearest multiple of 90 */
	uint32_t r = req->rotate % 360;
	uint32_t rn = (r + 45) / 90 % 4 * 90;
	if (rn != r)
		p.adjusted |= VC_ADJ_ROTATE;
	struct vc_transform t = { (uint16_t)rn, (uint8_t)(req->flip & 3) };
	int turned = rn == 90 || rn == 270;
	int xform = !vc_transform_is_identity(t);

	/* size, in the delivered orientation */
	uint32_t sw = turned ? mode->height : mode->width;
	uint32_t sh = turned ? mode->width : mode->height;
	uint32_t w = req->width, h = req->height;
	if (!w && !h) {
		w = sw;
		h = sh;
	} else if (!h) {
		if (w > sw) {
			w = sw;
			p.adjusted |= VC_ADJ_SIZE;
		}
		h = round_div((uint64_t)w * sh, sw);
	} else if (!w) {
		if (h > sh) {
			h = sh;
			p.adjusted |= VC_ADJ_SIZE;
		}
		w = round_div((uint64_t)h * sw, sh);
	} else {
		if (w > sw) {
			w = sw;
			p.adjusted |= VC_ADJ_SIZE;
		}
		if (h > sh) {
			h = sh;
			p.adjusted |= VC_ADJ_SIZE;
		}
	}
	if (!w)
		w = 1;
	if (!h)
		h = 1;
	uint32_t aw, ah;
	align_of(of, &aw, &ah);
	if (of->family == VC_FAM_BAYER) {
		w = sw; /* never scaled */
		h = sh;
	}
	uint32_t w2 = align_down(w, aw), h2 = align_down(h, ah);
	if ((req->width && w2 != req->width) || (req->height && h2 != req->height))
		p.adjusted |= VC_ADJ_SIZE;
	w = w2;
	h = h2;
	/* the same size before rotation */
	uint32_t pw = turned ? h : w, ph = turned ? w : h;
	int same_size = pw == mode->width && ph == mode->height;

	/* The camera's own JPEG goes out untouched unless the client named a
	 * quality: quality= on a JPEG camera re-encodes (decode + encode, shared
	 * by the clients that ask the same), since that is what it is asked for
	 * (a smaller stream over a slow link). */
	if (is_compressed(mf) && is_compressed(of) && same_size && !req->quality) {
		if (!xform) {
			p.steps = VC_STEP_PASSTHROUGH;
		} else {
			p.steps = VC_STEP_JPEG_XFORM;
			/* predicted trim of partial MCUs (see XFORM_MCU_*): the one
			 * tjTransform op of the canonical transform trims the edge
			 * that would have to move to the top/left */
			uint32_t tw = mode->width, th = mode->height;
			struct vc_transform c = vc_transform_canon(t);
			int k = (c.flip ? 4 : 0) + c.rotate / 90;
			/* none rot90 rot180 rot270 | hflip transverse vflip transpose */
			static const uint8_t trim_w[8] = { 0, 0, 1, 1, 1, 1, 0, 0 };
			static const uint8_t trim_h[8] = { 0, 1, 1, 0, 0, 1, 1, 0 };
			if (trim_w[k])
				tw = align_down(tw, XFORM_MCU_W);
			if (trim_h[k])
				th = align_down(th, XFORM_MCU_H);
			w = turned ? th : tw;
			h = turned ? tw : th;
		}
	} else if (!is_compressed(mf) && fcc == mode->fourcc && same_size && !xform) {
		p.steps = VC_STEP_PASSTHROUGH;
	} else {
		const struct vc_fmt *cur = mf; /* format of the picture at each stage */
		uint32_t cw = mode->width, ch = mode->height;
		if (is_compressed(mf)) {
			p.steps |= VC_STEP_DECODE;
			/* largest DCT scaling that still covers the target */
			for (int d = 8; d >= 2; d /= 2) {
				if (vc_jpeg_scaled(mode->width, d) >= pw &&
				    vc_jpeg_scaled(mode->height, d) >= ph) {
					p.decode_denom = (uint8_t)d;
					break;
				}
			}
			cw = vc_jpeg_scaled(mode->width, p.decode_denom);
			ch = vc_jpeg_scaled(mode->height, p.decode_denom);
			cur = NULL; /* decode writes whatever the next step wants */
		}
		if (is_compressed(of)) {
			/* encode reads most rows directly; Bayer needs demosaicing
			 * and the rest a pass through the converter */
			if (cur && !jpeg_direct(cur))
				p.steps |= VC_STEP_CONVERT;
		} else if (cur ? cur != of : !jpeg_direct(of)) {
			p.steps |= VC_STEP_CONVERT;
		}
		if (cw != pw || ch != ph)
			p.steps |= VC_STEP_SCALE;
		if (xform) {
			p.steps |= VC_STEP_ROTATE;
			/* rows the transform cannot turn go through a hub format */
			if (!is_compressed(of) && !vc_transform_supported(of, t))
				p.steps |= VC_STEP_CONVERT;
		}
		if (is_compressed(of))
			p.steps |= VC_STEP_ENCODE;
	}

	if (p.steps & VC_STEP_ENCODE) {
		p.out.quality = req->quality ? req->quality : DEFAULT_QUALITY;
		if (p.out.quality > 100) {
			p.out.quality = 100;
			p.adjusted |= VC_ADJ_QUALITY;
		}
	}
	uint32_t dev_fps = ival_fps(mode->ival);
	p.fps = req->fps;
	if (dev_fps && (!p.fps || p.fps > dev_fps)) {
		if (p.fps > dev_fps)
			p.adjusted |= VC_ADJ_FPS;
		p.fps = dev_fps;
	}
	if (fcc != (req->fourcc == V4L2_PIX_FMT_JPEG ? V4L2_PIX_FMT_MJPEG : req->fourcc) &&
	    req->fourcc)
		p.adjusted |= VC_ADJ_FORMAT;
	p.out.fourcc = fcc;
	p.out.width = w;
	p.out.height = h;
	p.out.rotate = (uint16_t)rn;
	p.out.flip = t.flip;
	*plan = p;
	return 0;
}

int vc_output_equal(const struct vc_output *a, const struct vc_output *b)
{
	struct vc_transform ta = vc_transform_canon((struct vc_transform){ a->rotate, a->flip });
	struct vc_transform tb = vc_transform_canon((struct vc_transform){ b->rotate, b->flip });
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->quality == b->quality && ta.rotate == tb.rotate && ta.flip == tb.flip;
}

const char *vc_steps_str(unsigned steps, uint8_t decode_denom, char *buf, size_t len)
{
	static const char *const names[] = { "passthrough", "decode", "convert", "scale",
					     "rotate",      "encode", "jpeg_xform" };
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(steps & (1u << i)))
			continue;
		int k;
		if ((1u << i) == VC_STEP_DECODE && decode_denom > 1)
			k = snprintf(buf + n, len - n, "%sdecode/%u", n ? "+" : "", decode_denom);
		else
			k = snprintf(buf + n, len - n, "%s%s", n ? "+" : "", names[i]);
		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

/* ------------------------------------------------------------ mode choice */

/* Estimated CPU work of a plan, in "pixel touches" (rough weights measured
 * in the bench_convert/bench_jpeg tables: encode ~4x a conversion pass,
 * decode ~1 per source pixel for entropy data + 2 per decoded pixel). */
static uint64_t plan_cost(const struct vc_mode *m, const struct vc_plan *p)
{
	uint64_t src = (uint64_t)m->width * m->height;
	uint64_t out = (uint64_t)p->out.width * p->out.height;
	uint64_t d = (uint64_t)p->decode_denom * p->decode_denom;
	uint64_t cost = 0;

	if (p->steps & VC_STEP_PASSTHROUGH)
		return 0;
	if (p->steps & VC_STEP_DECODE)
		cost += src + 2 * src / d;
	if (p->steps & VC_STEP_CONVERT)
		cost += p->steps & VC_STEP_DECODE ? src / d : src;
	if (p->steps & VC_STEP_SCALE)
		cost += p->steps & VC_STEP_DECODE ? src / d : src;
	if (p->steps & VC_STEP_ROTATE)
		cost += out;
	if (p->steps & VC_STEP_ENCODE)
		cost += 4 * out;
	if (p->steps & VC_STEP_JPEG_XFORM)
		cost += 2 * src;
	return cost;
}

struct score {
	uint64_t size_deficit; /* pixels of width+height short of what was asked */
	uint64_t fps_deficit;
	int rate_unknown;      /* the caps give no rate for this mode: cannot promise one */
	int emulated;
	uint64_t cost;
	uint64_t pixels;
	uint32_t fps; /* lower is better once everyone is served */
};

/* <0 when a is better than b. */
static int score_cmp(const struct score *a, const struct score *b)
{
#define CMP(f)                                  \
	if (a->f != b->f)                       \
		return a->f < b->f ? -1 : 1;
	CMP(size_deficit)
	CMP(fps_deficit)
	CMP(rate_unknown)
	CMP(emulated)
	CMP(cost)
	CMP(pixels)
	CMP(fps)
#undef CMP
	return 0;
}

static uint32_t absdiff_short(uint32_t want, uint32_t got)
{
	return want > got ? want - got : 0;
}

/* Scores mode m for the requests, request i standing for weight[i] equal
 * clients (its deficits count that many times); -EINVAL when some request
 * cannot be planned. */
static int score_mode(const struct vc_mode *m, int emulated, const struct vc_request *reqs,
		      const unsigned *weight, size_t n, struct score *s)
{
	/* outputs already counted (shared encodes cost once) */
	struct vc_output seen[64];
	size_t n_seen = 0;

	memset(s, 0, sizeof(*s));
	s->emulated = emulated;
	s->pixels = (uint64_t)m->width * m->height;
	s->rate_unknown = !ival_known(m->ival);
	s->fps = ival_fps(m->ival);
	for (size_t i = 0; i < n; i++) {
		struct vc_plan p;
		if (vc_negotiate_plan(m, &reqs[i], &p) < 0)
			return -EINVAL;
		s->size_deficit += (uint64_t)weight[i] * (absdiff_short(reqs[i].width, p.out.width) +
							  absdiff_short(reqs[i].height, p.out.height));
		/* with the rate unknown p.fps is the request's own: no deficit
		 * can be told, rate_unknown ranks the mode instead */
		if (reqs[i].fps && !s->rate_unknown)
			s->fps_deficit += (uint64_t)weight[i] * absdiff_short(reqs[i].fps, p.fps);
		int dup = 0;
		for (size_t k = 0; k < n_seen && !dup; k++)
			dup = vc_output_equal(&seen[k], &p.out);
		if (dup)
			continue;
		if (n_seen < sizeof(seen) / sizeof(seen[0]))
			seen[n_seen++] = p.out;
		s->cost += plan_cost(m, &p);
	}
	return 0;
}

/* Interval for a size: the slowest that reaches the fastest rate asked for,
 * the fastest when someone wants "as fast as possible" or none reaches. */
static struct vc_fract pick_ival(const struct vc_caps_size *sz, uint32_t want_fps)
{
	struct vc_fract best = { 0, 0 };
	uint32_t best_fps = 0;

	for (size_t i = 0; i < sz->n_ivals; i++) {
		uint32_t f = ival_fps(sz->ival[i]);
		if (!f)
			continue;
		int better;
		if (!best_fps)
			better = 1;
		else if (!want_fps)
			better = f > best_fps;
		else if (best_fps >= want_fps)
			better = f >= want_fps && f < best_fps;
		else
			better = f > best_fps;
		if (better) {
			best = sz->ival[i];
			best_fps = f;
		}
	}
	return best;
}

/* Interval for a size of a stepwise range that the caps do not list (their
 * rates come per listed size): the rates of the smallest listed size that
 * covers it (a larger frame is never faster), else of the largest listed
 * one; 0/0 (unknown: the driver's own rate) when no listed size has any. */
static struct vc_fract range_ival(const struct vc_caps_fmt *f, uint32_t w, uint32_t h,
				  uint32_t want_fps)
{
	const struct vc_caps_size *cover = NULL, *largest = NULL;

	for (size_t i = 0; i < f->n_sizes; i++) {
		const struct vc_caps_size *s = &f->sizes[i];
		uint64_t a = (uint64_t)s->width * s->height;
		if (!s->n_ivals)
			continue;
		if (s->width >= w && s->height >= h &&
		    (!cover || a < (uint64_t)cover->width * cover->height))
			cover = s;
		if (!largest || a > (uint64_t)largest->width * largest->height)
			largest = s;
	}
	if (!cover)
		cover = largest;
	return cover ? pick_ival(cover, want_fps) : (struct vc_fract){ 0, 0 };
}

static int size_in_fmt(const struct vc_caps_fmt *f, uint32_t w, uint32_t h)
{
	for (size_t i = 0; i < f->n_sizes; i++)
		if (f->sizes[i].width == w && f->sizes[i].height == h)
			return 1;
	if (f->stepwise)
		return w >= f->min_w && w <= f->max_w && h >= f->min_h && h <= f->max_h &&
		       (!f->step_w || (w - f->min_w) % f->step_w == 0) &&
		       (!f->step_h || (h - f->min_h) % f->step_h == 0);
	return 0;
}

static const struct vc_caps_fmt *mode_fmt(const struct vc_caps *caps, const struct vc_mode *m)
{
	if (!m || !vc_fmt_by_fourcc(m->fourcc))
		return NULL;
	const struct vc_caps_fmt *f = vc_caps_find(caps, m->fourcc);
	return f && size_in_fmt(f, m->width, m->height) ? f : NULL;
}

/* Calls fn for every candidate mode (discrete sizes, plus for stepwise
 * formats the maximum and each request's size rounded up to the step). */
struct cand_ctx {
	const struct vc_request *reqs; /* distinct */
	const unsigned *weight;        /* clients per distinct request */
	size_t n;
	uint32_t want_fps; /* 0 = fastest */
	int found;
	struct vc_mode best;
	struct score best_s;
};

static void consider(struct cand_ctx *c, const struct vc_caps_fmt *f, const struct vc_mode *m)
{
	struct score s;
	if (score_mode(m, f->emulated, c->reqs, c->weight, c->n, &s) < 0)
		return;
	if (!c->found || score_cmp(&s, &c->best_s) < 0) {
		c->found = 1;
		c->best = *m;
		c->best_s = s;
	}
}

static uint32_t step_up(uint32_t v, uint32_t min, uint32_t max, uint32_t step)
{
	if (v < min)
		v = min;
	if (step > 1)
		v = min + (v - min + step - 1) / step * step;
	return v > max ? max : v;
}

static void each_candidate(const struct vc_caps *caps, struct cand_ctx *c)
{
	for (size_t i = 0; i < caps->n_fmts; i++) {
		const struct vc_caps_fmt *f = &caps->fmts[i];
		if (!vc_fmt_by_fourcc(f->fourcc))
			continue;
		for (size_t k = 0; k < f->n_sizes; k++) {
			struct vc_mode m = { f->fourcc, f->sizes[k].width, f->sizes[k].height,
					     pick_ival(&f->sizes[k], c->want_fps) };
			if (m.width && m.height)
				consider(c, f, &m);
		}
		if (!f->stepwise || !f->max_w || !f->max_h)
			continue;
		struct vc_mode m = { f->fourcc, f->max_w, f->max_h,
				     range_ival(f, f->max_w, f->max_h, c->want_fps) };
		consider(c, f, &m);
		for (size_t r = 0; r < c->n; r++) {
			const struct vc_request *q = &c->reqs[r];
			if (!q->width || !q->height)
				continue;
			int turned = q->rotate % 180 == 90;
			uint32_t w = turned ? q->height : q->width;
			uint32_t h = turned ? q->width : q->height;
			m.width = step_up(w, f->min_w, f->max_w, f->step_w);
			m.height = step_up(h, f->min_h, f->max_h, f->step_h);
			m.ival = range_ival(f, m.width, m.height, c->want_fps);
			consider(c, f, &m);
		}
	}
}

/* Default when nothing else says: the first native format (caps list native
 * first), its largest size up to 1920x1080 (else its smallest), fastest. */
static int default_mode(const struct vc_caps *caps, struct vc_mode *out)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < caps->n_fmts; i++) {
			const struct vc_caps_fmt *f = &caps->fmts[i];
			if (!vc_fmt_by_fourcc(f->fourcc) || (pass == 0 && f->emulated))
				continue;
			const struct vc_caps_size *best = NULL, *small = NULL;
			for (size_t k = 0; k < f->n_sizes; k++) {
				const struct vc_caps_size *s = &f->sizes[k];
				uint64_t a = (uint64_t)s->width * s->height;
				if (!a)
					continue;
				if (!small || a < (uint64_t)small->width * small->height)
					small = s;
				if (a <= 1920u * 1080u &&
				    (!best || a > (uint64_t)best->width * best->height))
					best = s;
			}
			if (!best)
				best = small;
			if (best) {
				*out = (struct vc_mode){ f->fourcc, best->width, best->height,
							 pick_ival(best, 0) };
				return 0;
			}
			if (f->stepwise && f->max_w && f->max_h) {
				uint32_t w = f->max_w < 1920 ? f->max_w : 1920;
				uint32_t h = f->max_h < 1080 ? f->max_h : 1080;
				*out = (struct vc_mode){ f->fourcc,
							 step_up(w, f->min_w, f->max_w, f->step_w),
							 step_up(h, f->min_h, f->max_h, f->step_h),
							 { 0, 0 } };
				if (out->width > w)
					out->width = f->min_w;
				if (out->height > h)
					out->height = f->min_h;
				out->ival = range_ival(f, out->width, out->height, 0);
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* Field by field: the struct has padding. */
static int request_eq(const struct vc_request *a, const struct vc_request *b)
{
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->fps == b->fps && a->quality == b->quality && a->rotate == b->rotate &&
	       a->flip == b->flip;
}

int vc_negotiate_mode(const struct vc_caps *caps, const struct vc_mode *cur,
		      const struct vc_mode *preferred, const struct vc_request *reqs,
		      size_t n_reqs, struct vc_mode *out)
{
	struct vc_mode ref;

	if (!caps || !out)
		return -EINVAL;
	const struct vc_caps_fmt *cur_f = mode_fmt(caps, cur);
	if (cur_f)
		ref = *cur;
	else if (mode_fmt(caps, preferred))
		ref = *preferred;
	else if (default_mode(caps, &ref) < 0)
		return -ENOENT;
	if (!n_reqs) {
		*out = ref;
		return 0;
	}

	/* A request's "don't care" is made explicit here. No size: the
	 * reference size (cost comparisons would otherwise always pick the
	 * smallest mode). No rate ("as fast as the device"): the rate the
	 * device runs at when nobody asks for less, i.e. the configured mode's,
	 * else the reference's; not cur's alone, or a rate lowered for an
	 * fps-limited client would stick to every client joining later. With
	 * no known rate at all the fastest interval of each size is taken. */
	struct vc_fract dev_ival = ref.ival;
	if (mode_fmt(caps, preferred) && ival_known(preferred->ival))
		dev_ival = preferred->ival;
	/* Equal requests (after that) are scored once with their count as a
	 * weight: the same answer as scoring each, but many clients asking for
	 * the same picture cost one plan per candidate mode instead of one
	 * each (64 equal clients made every join O(candidates x 64^2)). */
	struct vc_request rq[VC_NEGOTIATE_DISTINCT];
	unsigned weight[VC_NEGOTIATE_DISTINCT];
	size_t n = 0;
	uint32_t want_fps = 0;
	int fastest = 0;
	for (size_t i = 0; i < n_reqs; i++) {
		struct vc_request q = reqs[i];
		if (!q.width && !q.height) {
			int turned = q.rotate % 180 == 90;
			q.width = turned ? ref.height : ref.width;
			q.height = turned ? ref.width : ref.height;
		}
		if (!q.fps && ival_known(dev_ival))
			q.fps = ival_fps(dev_ival);
		size_t k = 0;
		while (k < n && !request_eq(&rq[k], &q))
			k++;
		if (k == VC_NEGOTIATE_DISTINCT)
			continue; /* one picture too many to weigh: served, not steering */
		if (!q.fps)
			fastest = 1;
		else if (q.fps > want_fps)
			want_fps = q.fps;
		if (k == n) {
			rq[n] = q;
			weight[n++] = 0;
		}
		weight[k]++;
	}

	struct cand_ctx c;
	memset(&c, 0, sizeof(c));
	c.reqs = rq;
	c.weight = weight;
	c.n = n;
	c.want_fps = fastest ? 0 : want_fps;
	each_candidate(caps, &c);
	if (!c.found) {
		/* nothing serves every request: keep what streams, else the reference */
		*out = cur_f ? *cur : ref;
		return 0;
	}
	if (cur_f) {
		struct score cs;
		if (score_mode(cur, cur_f->emulated, rq, weight, n, &cs) == 0) {
			int better = c.best_s.size_deficit < cs.size_deficit ||
				     (c.best_s.size_deficit == cs.size_deficit &&
				      (c.best_s.fps_deficit < cs.fps_deficit ||
				       (c.best_s.fps_deficit == cs.fps_deficit &&
					(c.best_s.emulated < cs.emulated ||
					 (c.best_s.emulated == cs.emulated &&
					  c.best_s.cost * 4 < cs.cost * 3)))));
			if (!better) {
				*out = *cur;
				return 0;
			}
		}
	}
	*out = c.best;
	return 0;
}

/* ------------------------------------------------------- default mode */

/* Candidate for the camera's default: the rate it runs at (capped) first. */
struct def_cand {
	int found;
	struct vc_mode m;
	uint32_t rate; /* min(rate it runs at, want); 0 unknown */
	int compressed;
};

/* Whether a beats b: more pixels, then a compressed format (passthrough),
 * then the earlier one (b). Rates are compared by the caller's tiers. */
static int def_better(const struct def_cand *a, const struct def_cand *b)
{
	uint64_t pa = (uint64_t)a->m.width * a->m.height, pb = (uint64_t)b->m.width * b->m.height;

	if (!b->found)
		return 1;
	if (pa != pb)
		return pa > pb;
	return a->compressed > b->compressed;
}

/* The default's candidates of one format, each rated: its listed sizes up
 * to 1920x1080 (the smallest when all are larger), or for a range without
 * listed sizes the largest up to 1920x1080. cfg (zero fields = free)
 * restricts the size. Pass 0 collects the best rate, pass 1 picks. */
static void def_fmt(const struct vc_caps_fmt *f, const struct vc_mode *cfg, uint32_t want,
		    int pass, uint32_t *best_rate, struct def_cand *best)
{
	struct vc_mode c[VC_NEGOTIATE_DISTINCT];
	size_t n = 0;
	const struct vc_caps_size *small = NULL;

	for (size_t k = 0; k < f->n_sizes && n < VC_NEGOTIATE_DISTINCT; k++) {
		const struct vc_caps_size *s = &f->sizes[k];
		uint64_t a = (uint64_t)s->width * s->height;
		if (!a || (cfg->width && s->width != cfg->width) ||
		    (cfg->height && s->height != cfg->height))
			continue;
		if (!small || a < (uint64_t)small->width * small->height)
			small = s;
		if (a <= 1920u * 1080u)
			c[n++] = (struct vc_mode){ f->fourcc, s->width, s->height, pick_ival(s, want) };
	}
	if (!n && small)
		c[n++] = (struct vc_mode){ f->fourcc, small->width, small->height,
					   pick_ival(small, want) };
	if (!n && f->stepwise && f->max_w && f->max_h && (!f->n_sizes || cfg->width)) {
		uint32_t w = cfg->width ? cfg->width : f->max_w < 1920 ? f->max_w : 1920;
		uint32_t h = cfg->height ? cfg->height : f->max_h < 1080 ? f->max_h : 1080;
		struct vc_mode m = { f->fourcc, w, h, { 0, 0 } };
		if (!cfg->width) {
			m.width = step_up(w, f->min_w, f->max_w, f->step_w);
			m.height = step_up(h, f->min_h, f->max_h, f->step_h);
			if (m.width > w)
				m.width = f->min_w;
			if (m.height > h)
				m.height = f->min_h;
		}
		if (size_in_fmt(f, m.width, m.height)) {
			m.ival = range_ival(f, m.width, m.height, want);
			c[n++] = m;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct def_cand d = { 1, c[i], ival_fps(c[i].ival), is_compressed(vc_fmt_by_fourcc(f->fourcc)) };
		if (want && d.rate > want)
			d.rate = want;
		if (pass == 0) {
			if (d.rate > *best_rate)
				*best_rate = d.rate;
		} else if ((uint64_t)d.rate * 5 >= (uint64_t)*best_rate * 4 && def_better(&d, best)) {
			*best = d;
		}
	}
}

int vc_negotiate_default(const struct vc_caps *caps, const struct vc_mode *configured,
			 uint32_t fps_cap, struct vc_mode *out)
{
	struct vc_mode cfg = { 0, 0, 0, { 0, 0 } };

	if (!caps || !out)
		return -EINVAL;
	if (configured)
		cfg = *configured;
	if (cfg.fourcc == V4L2_PIX_FMT_JPEG && !vc_caps_find(caps, cfg.fourcc))
		cfg.fourcc = V4L2_PIX_FMT_MJPEG;
	uint32_t want = ival_known(cfg.ival) ? ival_fps(cfg.ival)
			: fps_cap ? fps_cap : VC_NEGOTIATE_FPS_CAP;
	/* what was configured but the camera does not offer is let go of, the
	 * size first, then the format (the caller says so in its log) */
	for (int relax = 0; relax < 3; relax++) {
		for (int native = 1; native >= 0; native--) {
			uint32_t best_rate = 0;
			struct def_cand best = { 0 };
			for (int pass = 0; pass < 2; pass++)
				for (size_t i = 0; i < caps->n_fmts; i++) {
					const struct vc_caps_fmt *f = &caps->fmts[i];
					if (!vc_fmt_by_fourcc(f->fourcc) || (f->emulated ? 0 : 1) != native ||
					    (cfg.fourcc && f->fourcc != cfg.fourcc))
						continue;
					def_fmt(f, &cfg, want, pass, &best_rate, &best);
				}
			if (best.found) {
				/* a configured rate the caps do not list is asked as is */
				if (ival_known(cfg.ival) && !ival_known(best.m.ival))
					best.m.ival = cfg.ival;
				*out = best.m;
				return 0;
			}
		}
		if (relax == 0) {
			cfg.width = 0;
			cfg.height = 0;
		} else {
			cfg.fourcc = 0;
		}
	}
	return -ENOENT;
}
