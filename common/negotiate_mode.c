/* Per-client negotiation (negotiate.h), the mode half: picks the device mode
 * that serves a set of requests (plans of one request are negotiate.c).
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
#include "common/negotiate_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/videodev2.h>

#include "common/h264.h"

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
		if (negotiate_plan(m, &reqs[i], &p) < 0)
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
	if (!m || !vc_capture_fmt(m->fourcc))
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
		if (!vc_capture_fmt(f->fourcc)) /* H.264 modes: only H.264 requests plan */
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

/* Whether a format of the caps may be a default: the pixel format table's,
 * or (h264 set) H.264, which only H.264 clients can use, so it is the
 * default of a camera that offers nothing else. */
static int default_usable(const struct vc_caps_fmt *f, int h264)
{
	return h264 ? f->fourcc == V4L2_PIX_FMT_H264 : vc_fmt_by_fourcc(f->fourcc) != NULL;
}

/* Default when nothing else says: the first native format (caps list native
 * first), its largest size up to 1920x1080 (else its smallest), fastest;
 * H.264 last. */
static int default_mode(const struct vc_caps *caps, struct vc_mode *out)
{
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < caps->n_fmts; i++) {
			const struct vc_caps_fmt *f = &caps->fmts[i];
			if (!default_usable(f, pass == 2) || (pass == 0 && f->emulated))
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
		struct def_cand d = { 1, c[i], ival_fps(c[i].ival), is_compressed(vc_capture_fmt(f->fourcc)) };
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
	const struct vc_mode given = cfg;
	/* configured H.264 (a camera's H.264 mode wanted for H.264 clients) is
	 * no default for the others: their picture keeps the configured size
	 * and rate in the format the rule picks */
	if (cfg.fourcc == V4L2_PIX_FMT_H264)
		cfg.fourcc = 0;
	/* what was configured but the camera does not offer is let go of, the
	 * size first, then the format (the caller says so in its log); H.264
	 * only when nothing else is left (relax 3 and 4: a camera delivering
	 * only H.264, served by passthrough to H.264 clients; the configured
	 * size first) */
	for (int relax = 0; relax < 5; relax++) {
		int h264 = relax >= 3;
		if (relax == 3) {
			cfg.width = given.width;
			cfg.height = given.height;
		}
		for (int native = 1; native >= 0; native--) {
			uint32_t best_rate = 0;
			struct def_cand best = { 0 };
			for (int pass = 0; pass < 2; pass++)
				for (size_t i = 0; i < caps->n_fmts; i++) {
					const struct vc_caps_fmt *f = &caps->fmts[i];
					if (!default_usable(f, h264) ||
					    (f->emulated ? 0 : 1) != native ||
					    (!h264 && cfg.fourcc && f->fourcc != cfg.fourcc))
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
		if (relax == 0 || relax == 3) {
			cfg.width = 0;
			cfg.height = 0;
		} else {
			cfg.fourcc = 0;
		}
	}
	return -ENOENT;
}
