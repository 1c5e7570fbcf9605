/* Per camera (hub): the requests of every client and waiting snapshot ->
 * the device mode (policy.c's policy_pick, which /api/try asks too), the
 * target mode the outputs are planned against, and the camera's frame and state
 * callbacks. A mode change re-plans the outputs, splitting and merging them
 * (output.c). */
#define LOG_PREFIX "stream:"
#include "server/stream/stream_int.h"
#include "server/stream/budget.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/h264.h"
#include "common/log.h"

/* How long frames of another mode are skipped after asking the camera for a
 * new one before the mode the frames have is accepted (device refused or
 * adjusted the request). Capture drains lent buffers up to 300 ms and may
 * reopen the device, hence generous. */
#define MODE_SWITCH_MS 2500

static int ival_known(struct vc_fract iv)
{
	return iv.num && iv.den;
}

/* Same mode. A rate is compared only when both are known: 0/0 means the
 * device's own rate (caps without intervals, drivers without G_PARM), which
 * cannot be told apart from any other. */
static int mode_eq(const struct vc_mode *a, const struct vc_mode *b)
{
	if (a->fourcc != b->fourcc || a->width != b->width || a->height != b->height)
		return 0;
	if (!ival_known(a->ival) || !ival_known(b->ival))
		return 1;
	return (uint64_t)a->ival.num * b->ival.den == (uint64_t)b->ival.num * a->ival.den;
}

/* A mode negotiated without a known rate runs at the device's own: the rate
 * it streams at now, which drivers keep across a size change they can run. */
static void mode_fill_rate(struct vc_mode *m, const struct vc_cam *cam)
{
	struct vc_mode actual;
	struct vc_geom g;

	if (ival_known(m->ival))
		return;
	vc_cam_get_mode(cam, &actual, &g);
	if (ival_known(actual.ival))
		m->ival = actual.ival;
}

/* Whether f was captured in mode m (format and size; the rate is not in a frame). */
static int frame_in_mode(const struct vc_frame *f, const struct vc_mode *m)
{
	return f->fmt && f->fmt->fourcc == m->fourcc && f->geom.width == m->width &&
	       f->geom.height == m->height;
}

/* Whether the device answered the target with another mode: its caps (read,
 * so not being re-read) no longer list it (capture's learn_answer). */
static int target_refused(const struct hub *h)
{
	const struct vc_caps *c = vc_cam_caps(h->cam);

	return c->n_fmts && !vc_caps_has_mode(c, &h->target);
}

/* Makes m the mode every output is planned against. Frames made from the old
 * mode (latest, pending, jobs in flight) are dropped: clients wait for frames
 * of the new plan, and capture buffers go back so the device can switch.
 * Users whose requests now differ are split off; outputs whose new plans are
 * equal are merged. */
static void hub_set_target(struct hub *h, const struct vc_mode *m)
{
	struct output *next;

	h->target = *m;
	h->gen++;
	for (struct output *o = h->outputs; o; o = o->next) {
		struct vc_plan p;

		output_drop_frames(o);
		if (vc_negotiate_plan(&h->target, &o->req, &p) == 0) {
			o->plan = p;
			o->provisional = 0;
		}
	}
	/* outputs made here are pushed at the head: already right */
	for (struct output *o = h->outputs; o; o = o->next)
		if (!o->merged && !o->refused)
			output_split(h, o);
	for (struct output *o = h->outputs; o; o = next) {
		next = o->next;
		if (o->merged || o->refused)
			continue;
		/* an earlier output with the same plan takes o's users */
		for (struct output *x = h->outputs; x != o; x = x->next) {
			if (!x->merged && !x->refused && vc_output_equal(&x->plan.out, &o->plan.out)) {
				output_merge(x, o);
				break;
			}
		}
	}
}

int hub_pick_mode(const struct hub *h, const struct vc_request *extra, struct vc_mode *m)
{
	enum vc_mode_why why;
	int rc = policy_pick(h, extra, extra ? HUB_STREAM : HUB_NONE, m, &why, NULL, NULL);

	if (rc < 0)
		return rc;
	mode_fill_rate(m, h->cam);
	return 0;
}

void hub_update_mode(struct hub *h, const struct vc_request *extra, enum hub_kind kind)
{
	struct vc_mode m, actual;
	struct vc_geom g;
	enum vc_mode_why why;
	unsigned ns, no;

	/* a one-shot the mode gives its picture: nothing to choose (its
	 * poller, policy_poll, counts at the next choice) */
	if (kind == HUB_ONESHOT && policy_serves(h, extra))
		return;
	if (policy_pick(h, extra, kind, &m, &why, &ns, &no) < 0)
		return; /* no formats, ENOMEM: the mode stays */
	mode_fill_rate(&m, h->cam);
	if (h->target.fourcc && mode_eq(&m, &h->target)) {
		policy_chosen(h, why, ns, no);
		return;
	}
	vc_cam_get_mode(h->cam, &actual, &g);
	if (actual.fourcc && mode_eq(&m, &actual)) {
		h->switching = 0;
	} else {
		/* at most one switch per hold: a later one is made when it ends */
		if (!policy_may_switch(h, kind, why))
			return;
		policy_switch_begin(h);
		if (vc_cam_set_mode(h->cam, &m) < 0) {
			policy_switch_end(h, 1);
			if (!h->target.fourcc && actual.fourcc)
				hub_set_target(h, &actual);
			return;
		}
		policy_switched(h, &actual, &m, why, ns, no);
		h->switching = 1;
		h->switch_us = now_us();
	}
	policy_chosen(h, why, ns, no);
	hub_set_target(h, &m);
}

void hub_acquire(struct hub *h)
{
	if (!h->acquired) {
		h->acquired = 1;
		vc_cam_acquire(h->cam);
	}
}

void hub_free(struct hub *h)
{
	policy_free(h);
	while (h->outputs)
		output_free(h->outputs);
	h264_ps_release(&h->h264_ps);
	vc_frame_unref(h->ph_frame);
	free(h);
}

/* The hub serving cam (the last one if listed twice), or NULL. */
struct hub *hub_for(const struct vc_streams *s, const struct vc_cam *cam)
{
	struct hub *h = NULL;

	for (size_t i = 0; i < s->n_hubs; i++)
		if (s->hubs[i]->cam == cam)
			h = s->hubs[i];
	return h;
}

void hub_on_frame(void *opaque, struct vc_frame *f)
{
	struct hub *h = opaque;

	if (h->s->stopping)
		return;
	if (!h->target.fourcc)
		hub_update_mode(h, NULL, HUB_NONE);
	if (!frame_in_mode(f, &h->target)) {
		struct vc_mode actual;
		struct vc_geom g;

		/* a frame of the old mode while the device switches: never fed
		 * to outputs planned for the new one; after a while the mode
		 * the device really streams is accepted */
		if (h->switching && now_us() - h->switch_us < MODE_SWITCH_MS * 1000LL)
			return;
		vc_cam_get_mode(h->cam, &actual, &g);
		if (!frame_in_mode(f, &actual))
			return;
		if (h->switching)
			log_warn("cam %s: device did not switch mode; planning for what it streams",
				 vc_cam_id(h->cam));
		h->switching = 0;
		hub_set_target(h, &actual);
	}
	h->switching = 0;
	policy_switch_end(h, 1);
	/* an H.264 camera's SPS/PPS are kept per hub (it may send them once,
	 * at the start, before any output exists). An IDR before any (streaming
	 * began mid-way) is no place for a decoder to start: clients wait for
	 * one after them */
	if (f->fmt == vc_h264_fmt() && !h264_ps_update(&h->h264_ps, f))
		f->key = 0;
	for (struct output *o = h->outputs; o; o = o->next)
		if (output_users(o) && !o->provisional && !o->refused && policy_feeds(h, o))
			output_frame(o, f);
	h->s->kick(h->s->http);
}

void hub_on_event(void *opaque, struct vc_cam *cam)
{
	struct hub *h = opaque;
	struct vc_mode actual;
	struct vc_geom g;

	enum vc_cam_state st = vc_cam_get_state(cam);
	int provisional = 0, replanned = 0;

	log_debug("cam %s: state %s", vc_cam_id(cam), vc_cam_state_name(st));
	if (vc_cam_draining(cam)) {
		/* a latest frame kept for late joiners is a capture buffer on
		 * passthrough (raw, MJPEG, H.264 cameras): the restart waits
		 * for it, and nothing new would replace it before */
		for (struct output *o = h->outputs; o; o = o->next)
			output_give_back(o);
		return;
	}
	if (st == VC_CAM_ABSENT || st == VC_CAM_ERROR)
		placeholder_kick(h); /* its stream clients see it is away */
	if (st == VC_CAM_ABSENT) {
		policy_switch_end(h, 0);
		return;
	}
	for (const struct output *o = h->outputs; o; o = o->next)
		provisional |= o->provisional;
	vc_cam_get_mode(cam, &actual, &g);
	/* switched; or the device answered with another mode, which its caps
	 * learned (capture's learn_answer): the target will never come */
	if (h->switching && actual.fourcc &&
	    (mode_eq(&actual, &h->target) || target_refused(h)))
		h->switching = 0;
	policy_switch_end(h, 0);
	/* the device changed mode by itself (input, reopen): follow it, then
	 * see whether the clients are better served by another */
	if (!h->switching && actual.fourcc && (provisional || !mode_eq(&actual, &h->target))) {
		hub_set_target(h, &actual); /* also plans outputs made while it was absent */
		replanned = provisional;
	}
	hub_update_mode(h, NULL, HUB_NONE);
	/* the clients that came while it was away asked for pictures nobody
	 * admitted: those that do not fit now are ended (issue 21: 41
	 * outputs with max_outputs = 8) */
	if (replanned)
		budget_readmit(h);
}

/* Lets go of h's camera: no more frames or events, no consumer count. */
void hub_detach(struct hub *h)
{
	vc_cam_set_callbacks(h->cam, NULL, NULL, NULL);
	if (h->acquired) {
		h->acquired = 0;
		vc_cam_release(h->cam);
	}
}

/* Every stream of h ends after the part being sent; every waiting snapshot
 * wakes up without a frame (503). */
void hub_end_users(struct hub *h)
{
	for (struct output *o = h->outputs; o; o = o->next) {
		for (struct client *c = o->clients; c; c = c->next)
			stream_notify(&c->wake, STREAM_EV_END_GONE, 0);
		for (struct waiter *w = o->waiters; w; w = w->next)
			stream_notify(&w->wake, STREAM_EV_END_GONE, 0);
	}
}

int hub_mode_same(const struct vc_mode *a, const struct vc_mode *b)
{
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->ival.num == b->ival.num && a->ival.den == b->ival.den;
}

int hub_decide(const struct hub *h, const struct vc_request *req, enum hub_kind kind,
	       struct vc_mode *m, struct vc_plan *plan, int *served)
{
	enum vc_mode_why why;

	/* the same question hub_update_mode() asks when the request arrives:
	 * a one-shot the target gives its picture switches nothing */
	*served = kind == HUB_ONESHOT && policy_serves_plan(h, req, plan);
	if (*served) {
		*m = h->target;
		return 0;
	}
	int ret = policy_pick(h, req, kind, m, &why, NULL, NULL);
	if (ret < 0)
		return ret;
	/* a one-shot is served from the mode the device runs while streams
	 * are watched: the one they chose */
	mode_fill_rate(m, h->cam);
	return vc_negotiate_plan(m, req, plan);
}

int vc_streams_try(const struct vc_streams *s, struct vc_cam *cam, const struct vc_request *req,
		   int oneshot, struct vc_plan *plan, struct vc_mode *mode)
{
	const struct hub *h = hub_for(s, cam);
	int served;

	if (!h || vc_cam_get_state(cam) == VC_CAM_ABSENT)
		return -ENODEV;
	/* about the request as it will be resolved */
	struct vc_request q = *req;
	policy_resolve(h, &q);
	return hub_decide(h, &q, oneshot ? HUB_ONESHOT : HUB_STREAM, mode, plan, &served);
}

void hub_choose(struct hub *h)
{
	hub_update_mode(h, NULL, HUB_NONE);
}

struct output *hub_output_get(struct hub *h, const struct vc_request *req, enum hub_kind kind)
{
	struct vc_plan plan;

	hub_update_mode(h, req, kind);
	if (!h->target.fourcc || vc_negotiate_plan(&h->target, req, &plan) < 0)
		return NULL;
	return output_for_plan(h, req, &plan);
}

struct output *hub_output_get_planned(struct hub *h, const struct vc_request *req,
				      enum hub_kind kind, const struct vc_mode *m,
				      const struct vc_plan *pl, int served)
{
	struct vc_plan plan;

	if (!served)
		hub_update_mode(h, req, kind);
	if (!h->target.fourcc)
		return NULL;
	/* the policy held the switch back (or the camera refused it): the
	 * plan against the mode it runs */
	if (!hub_mode_same(&h->target, m)) {
		if (vc_negotiate_plan(&h->target, req, &plan) < 0)
			return NULL;
		pl = &plan;
	}
	return output_for_plan(h, req, pl);
}

/* Frees outputs nobody used for a while (they keep their latest frame for
 * snapshots with max_age_ms in between). */
void hub_gc(struct vc_streams *s)
{
	int64_t now = now_us();

	for (size_t i = 0; i < s->n_hubs; i++) {
		struct output *o = s->hubs[i]->outputs, *next;

		for (; o; o = next) {
			next = o->next;
			if (!output_users(o) && !o->busy &&
			    (o->merged || now - o->idle_since_us > OUTPUT_LINGER_MS * 1000LL))
				output_free(o);
		}
	}
	for (struct hub **hp = &s->dying; *hp;) {
		struct hub *h = *hp;
		int used = h->ph_busy; /* its placeholder job points at it */

		for (struct output *o = h->outputs; o; o = o->next)
			used |= output_users(o) || o->busy;
		if (used) {
			hp = &h->next_dying;
			continue;
		}
		*hp = h->next_dying;
		hub_free(h);
	}
}

