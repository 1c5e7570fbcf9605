/* The fan-out's memory budget (see budget.h): size clamp, outputs per
 * camera, estimated frame bytes over all cameras. */
#define LOG_PREFIX "stream:"
#include "server/stream/budget.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <malloc.h>
#include <stdio.h>

#include "common/fmt.h"
#include "common/jpeg.h"
#include "common/log.h"
#include "common/memstat.h"
#include "server/capture/capture.h"
#include "server/stream/stream_int.h"

size_t budget_output_bytes(const struct vc_mode *m, const struct vc_plan *p)
{
	const struct vc_fmt *f = vc_fmt_by_fourcc(p->out.fourcc);
	size_t px = (size_t)p->out.width * p->out.height;
	struct vc_geom g;

	if (p->steps & VC_STEP_PASSTHROUGH)
		return 0;
	if (p->steps & VC_STEP_JPEG_XFORM)
		return px; /* a transformed JPEG, two at most */
	/* the result twice: latest + one in flight; plus, when it converts
	 * or scales, the converter's hub (ARGB at most: 4 bytes per pixel).
	 * Massif on the attack of tests/integ/qa_memory_budget.sh: 2 frames +
	 * a 1.5-4 byte hub per 1920x1080 output. A JPEG result has room for
	 * 1.5x the largest its pipeline wrote (common/pipeline.c; noise at
	 * q95 in test_pipeline: 1.9 bytes per pixel, room 2.9); one
	 * that outgrows it is made again at the encoder's worst case
	 * (vc_jpeg_bound: 6 bytes per pixel at 4:4:4) and not kept. Counted
	 * at half the worst case per result. */
	size_t frame = px * 2;
	if (p->out.fourcc == V4L2_PIX_FMT_MJPEG &&
	    vc_jpeg_bound(p->out.width, p->out.height) / 2 > frame)
		frame = vc_jpeg_bound(p->out.width, p->out.height) / 2;
	if (f && f->layout != VC_LAYOUT_COMPRESSED &&
	    vc_fmt_geometry(f, p->out.width, p->out.height, 0, &g) == 0 && g.sizeimage > frame)
		frame = g.sizeimage;
	size_t hub = p->steps & (VC_STEP_CONVERT | VC_STEP_SCALE | VC_STEP_DECODE) ? px * 4 : 0;
	/* and the camera frame its job reads, copied when outputs hold too
	 * many of the camera's buffers (common/pool.c) */
	const struct vc_fmt *mf = vc_fmt_by_fourcc(m->fourcc);
	size_t src = (size_t)m->width * m->height * 2;
	if (mf && mf->layout != VC_LAYOUT_COMPRESSED &&
	    vc_fmt_geometry(mf, m->width, m->height, 0, &g) == 0)
		src = g.sizeimage;
	/* an H.264 encoder's own memory, as common/h264enc.c counts it */
	size_t enc = p->out.fourcc == V4L2_PIX_FMT_H264 ? px * 16 + ((size_t)6 << 20) : 0;
	return frame * 2 + hub + src + enc;
}

/* The camera's largest native mode (by area), or 0x0 when unknown. For a
 * size range (stepwise) only its listed sizes count: the common ones
 * clamped into the range, up to 3840x2160 (v4l2_caps.c), so a sensor's full
 * size is one of them while a range reaching 4096x4096 or beyond (the test
 * pattern, some bridges) does not let one client switch the camera to it;
 * max_size allows more. */
static void native_max(struct vc_cam *cam, uint32_t *w, uint32_t *h)
{
	const struct vc_caps *caps = vc_cam_caps(cam);
	uint64_t best = 0;

	*w = *h = 0;
	for (size_t i = 0; caps && i < caps->n_fmts; i++) {
		const struct vc_caps_fmt *cf = &caps->fmts[i];
		if (cf->emulated)
			continue;
		if (cf->stepwise && !cf->n_sizes && (uint64_t)cf->max_w * cf->max_h > best) {
			best = (uint64_t)cf->max_w * cf->max_h;
			*w = cf->max_w;
			*h = cf->max_h;
		}
		for (size_t k = 0; k < cf->n_sizes; k++)
			if ((uint64_t)cf->sizes[k].width * cf->sizes[k].height > best) {
				best = (uint64_t)cf->sizes[k].width * cf->sizes[k].height;
				*w = cf->sizes[k].width;
				*h = cf->sizes[k].height;
			}
	}
}

int budget_clamp_size(const struct vc_streams *s, struct vc_cam *cam, struct vc_request *req)
{
	uint32_t mw = s->budget.max_width, mh = s->budget.max_height;
	int changed = 0;

	if (!mw || !mh)
		native_max(cam, &mw, &mh);
	if (!mw || !mh)
		return 0;
	if (req->rotate == 90 || req->rotate == 270) { /* the size asked is after rotation */
		uint32_t t = mw;
		mw = mh;
		mh = t;
	}
	if (req->width > mw) {
		req->width = mw;
		changed = 1;
	}
	if (req->height > mh) {
		req->height = mh;
		changed = 1;
	}
	return changed;
}

/* Frees h's outputs that no user and no job holds (lingering after their
 * clients left), to make room; returns how many. */
static unsigned reclaim(struct hub *h)
{
	unsigned n = 0;

	for (struct output *o = h->outputs, *next; o; o = next) {
		next = o->next;
		if (!output_users(o) && !o->busy) {
			output_free(o);
			n++;
		}
	}
	return n;
}

/* What the fan-out holds, as admission counts it: the larger of
 *  - what is allocated now (common/memstat.h: output frames, snapshots,
 *    pipelines, the capture copies made while outputs hold the camera's
 *    buffers, kept GOPs), and
 *  - the estimates of all outputs, reserved from the moment each was
 *    admitted until it is freed, plus the kept GOPs (no estimate has them).
 * An output allocates over its first frames (pipeline, encoder, copies),
 * so outputs admitted together are counted before any of them allocates
 * (issue 22); counting an output's allocation and its estimate both until
 * its first frame, as before, made refusals say "100 of 64 MiB held" with
 * 45 allocated. Outputs refused when their camera came back are not
 * reserved (they are ending). On top, the stream parts held for clients
 * (VC_MEM_PARTS: bytes no output estimate covers; hold.c bounds them).
 * Sets *n_on to h's outputs. */
static size_t held_bytes(const struct vc_streams *s, unsigned *n_on, const struct hub *h)
{
	size_t reserved = vc_mem_held(VC_MEM_GOP);

	*n_on = 0;
	for (size_t i = 0; i <= s->n_hubs; i++) {
		const struct hub *x = i < s->n_hubs ? s->hubs[i] : s->dying;

		for (; x; x = i < s->n_hubs ? NULL : x->next_dying)
			for (const struct output *o = x->outputs; o; o = o->next) {
				if (o->merged || o->refused)
					continue;
				reserved += budget_output_bytes(&x->target, &o->plan);
				*n_on += x == h;
			}
	}
	size_t alloc = vc_mem_held(VC_MEM_FRAMES) + vc_mem_held(VC_MEM_SCRATCH) +
		       vc_mem_held(VC_MEM_COPIES) + vc_mem_held(VC_MEM_GOP);
	return (alloc > reserved ? alloc : reserved) + vc_mem_held(VC_MEM_PARTS);
}

/* Whether a user of o asked for the camera's default picture: never
 * counted against an address, never ended. */
static int serves_default(const struct output *o)
{
	for (const struct client *c = o->clients; c; c = c->next)
		if (c->dflt)
			return 1;
	for (const struct waiter *w = o->waiters; w; w = w->next)
		if (w->dflt)
			return 1;
	return 0;
}

/* The distinct pictures of h that a user from address group `who` takes
 * (the default picture's output not counted: everyone may watch it). */
static unsigned outputs_of(const struct hub *h, const struct vc_guard_addr *who)
{
	unsigned n = 0;

	for (const struct output *o = h->outputs; o; o = o->next) {
		int mine = 0;

		if (o->merged || o->refused || serves_default(o))
			continue;
		for (const struct client *c = o->clients; c && !mine; c = c->next)
			mine = !c->ending && vc_guard_addr_eq(&c->addr, who);
		for (const struct waiter *w = o->waiters; w && !mine; w = w->next)
			mine = vc_guard_addr_eq(&w->addr, who);
		n += mine;
	}
	return n;
}

static unsigned limit_outputs(const struct vc_streams *s)
{
	return s->budget.max_outputs ? s->budget.max_outputs : BUDGET_MAX_OUTPUTS;
}

static size_t limit_bytes(const struct vc_streams *s)
{
	return s->budget.frame_bytes ? s->budget.frame_bytes : (size_t)BUDGET_FRAME_MIB << 20;
}

/* -EBUSY / -ENOSPC (err says why) when h's outputs plus one needing `need`
 * bytes would pass max_outputs or frame_memory, after freeing unused ones. */
static int fits(struct hub *h, size_t need, char *err, size_t errlen)
{
	const struct vc_streams *s = h->s;
	unsigned max_out = limit_outputs(s), n_on;
	size_t limit = limit_bytes(s), held = held_bytes(s, &n_on, h);

	if ((n_on >= max_out || held + need > limit) && reclaim(h))
		held = held_bytes(s, &n_on, h);
	if (n_on >= max_out) {
		snprintf(err, errlen, "camera %s already serves %u distinct pictures (max_outputs): "
			 "ask for one of those or retry later", vc_cam_id(h->cam), n_on);
		return -EBUSY;
	}
	if (held + need > limit) {
		snprintf(err, errlen, "this picture needs ~%zu MiB of frame memory; %zu of %zu MiB "
			 "(frame_memory) are held: ask for a smaller size or retry later",
			 (need + (1u << 20) - 1) >> 20, held >> 20, limit >> 20);
		return -ENOSPC;
	}
	return 0;
}

int budget_admit(struct hub *h, const struct vc_request *req, const struct vc_guard_addr *who,
		 char *err, size_t errlen)
{
	struct vc_mode m;
	struct vc_plan plan;

	/* the plan this request would get once it steers the mode */
	if (hub_pick_mode(h, req, &m) < 0 || vc_negotiate_plan(&m, req, &plan) < 0)
		return 0; /* not servable at all: the usual path answers */
	return budget_admit_plan(h, &m, &plan, who, err, errlen);
}

int budget_admit_plan(struct hub *h, const struct vc_mode *mode, const struct vc_plan *plan,
		      const struct vc_guard_addr *who, char *err, size_t errlen)
{
	const struct vc_streams *s = h->s;
	unsigned share = s->budget.max_outputs_per_ip ? s->budget.max_outputs_per_ip
						       : BUDGET_MAX_OUTPUTS_PER_IP;

	for (const struct output *o = h->outputs; o; o = o->next)
		if (!o->merged && !o->refused && vc_output_equal(&o->plan.out, &plan->out))
			return 0;
	unsigned mine = who ? outputs_of(h, who) : 0;
	if (mine >= share) {
		snprintf(err, errlen, "your address already has %u distinct pictures of camera %s "
			 "(max_outputs_per_ip): ask for one of those or retry later", mine,
			 vc_cam_id(h->cam));
		return -EUSERS;
	}
	return fits(h, budget_output_bytes(mode, plan), err, errlen);
}

void budget_readmit(struct hub *h)
{
	const struct vc_streams *s = h->s;
	unsigned max_out = limit_outputs(s), n_on;
	size_t limit = limit_bytes(s), held = held_bytes(s, &n_on, h);

	if ((n_on > max_out || held > limit) && reclaim(h))
		held = held_bytes(s, &n_on, h);
	while (n_on > max_out || held > limit) {
		struct output *victim = NULL;
		char err[192];

		/* the newest first: the outputs split off on the camera's
		 * return are pushed at the head */
		for (struct output *o = h->outputs; o && !victim; o = o->next)
			if (!o->merged && !o->refused && o->n_clients && !serves_default(o))
				victim = o;
		if (!victim)
			break;
		if (n_on > max_out)
			snprintf(err, sizeof(err), "camera %s already serves %u distinct pictures "
				 "(max_outputs)", vc_cam_id(h->cam), n_on - 1);
		else
			snprintf(err, sizeof(err), "%zu of %zu MiB (frame_memory) are held",
				 held >> 20, limit >> 20);
		victim->refused = 1;
		output_drop_frames(victim);
		log_info("cam %s: back; its %ux%u q%u output (%u clients, made while it was away) "
			 "does not fit: ended, 503 %s", vc_cam_id(h->cam), victim->plan.out.width,
			 victim->plan.out.height, victim->plan.out.quality, victim->n_clients, err);
		for (struct client *c = victim->clients; c; c = c->next)
			stream_notify(&c->wake, STREAM_EV_END_BUDGET, 0);
		held = held_bytes(s, &n_on, h);
	}
}

void budget_trim(struct vc_streams *s)
{
	/* everything counted, the test pattern's buffers too: they are heap
	 * like the rest, and a camera going idle frees them and its copies
	 * after its outputs have gone */
	size_t held = 0;

	for (int k = 0; k < VC_MEM_KINDS; k++)
		held += vc_mem_held((enum vc_mem_kind)k);
	/* 8 MiB fell since the last trim, or less and then nothing moved for
	 * a tick: the frees of one going-away (outputs, then copies, then the
	 * camera's buffers) come over several ticks, and what came after a
	 * trim stayed resident (tens of MiB once a camera went idle) */
	int fell = held + ((size_t)8 << 20) <= s->budget_trimmed_at ||
		   (held < s->budget_trimmed_at && held == s->budget_last_tick);

	if (fell)
		malloc_trim(0);
	if (fell || held > s->budget_trimmed_at)
		s->budget_trimmed_at = held;
	s->budget_last_tick = held;
}
