/* Per camera (hub): the requests of every client and waiting snapshot ->
 * the device mode (hub_pick_mode, which /api/try asks too), the target mode
 * the outputs are planned against, and the camera's frame and state
 * callbacks. A mode change re-plans the outputs, splitting and merging them
 * (output.c). */
#define LOG_PREFIX "stream:"
#include "server/stream/stream_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* The requests of every client and waiting snapshot of hub h (an output may
 * serve several requests that differ but plan to the same output), with room
 * for one more (the caller's own): an array to free, or NULL on ENOMEM. */
static struct vc_request *hub_requests(const struct hub *h, size_t *n)
{
	size_t total = 0;

	for (const struct output *o = h->outputs; o; o = o->next)
		total += output_users(o);
	struct vc_request *reqs = malloc((total + 1) * sizeof(*reqs));
	if (!reqs)
		return NULL;
	*n = 0;
	for (const struct output *o = h->outputs; o; o = o->next) {
		for (const struct client *c = o->clients; c; c = c->next)
			reqs[(*n)++] = c->req;
		for (const struct waiter *w = o->waiters; w; w = w->next)
			reqs[(*n)++] = w->req;
	}
	return reqs;
}

/* What negotiation starts from. With clients, the mode asked for (or
 * streaming) is `cur`, kept unless another serves them clearly better
 * (hysteresis: streams are not restarted for nothing). With none, there is
 * nothing to disturb: no `cur`, so a request without a size gets the
 * configured mode, not whatever the last client happened to leave. */
static void hub_negotiate_from(const struct hub *h, size_t n_users, struct vc_mode *cur,
			       const struct vc_mode **curp, const struct vc_mode **prefp)
{
	struct vc_geom g;

	if (h->target.fourcc)
		*cur = h->target;
	else
		vc_cam_get_mode(h->cam, cur, &g);
	*curp = n_users && cur->fourcc ? cur : NULL;
	*prefp = h->preferred.fourcc ? &h->preferred : NULL;
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
		if (!o->merged)
			output_split(h, o);
	for (struct output *o = h->outputs; o; o = next) {
		next = o->next;
		if (o->merged)
			continue;
		/* an earlier output with the same plan takes o's users */
		for (struct output *x = h->outputs; x != o; x = x->next) {
			if (!x->merged && vc_output_equal(&x->plan.out, &o->plan.out)) {
				output_merge(x, o);
				break;
			}
		}
	}
}

int hub_pick_mode(const struct hub *h, const struct vc_request *extra, struct vc_mode *m)
{
	const struct vc_caps *caps = vc_cam_caps(h->cam);
	struct vc_request *reqs;
	size_t n = 0;
	struct vc_mode cur;

	if (!caps || !caps->n_fmts)
		return -ENODEV;
	const struct vc_mode *curp, *prefp;

	if (!(reqs = hub_requests(h, &n)))
		return -ENOMEM;
	hub_negotiate_from(h, n, &cur, &curp, &prefp);
	if (extra)
		reqs[n++] = *extra;
	int rc = vc_negotiate_mode(caps, curp, prefp, reqs, n, m);
	free(reqs);
	if (rc < 0)
		return -ENODEV;
	mode_fill_rate(m, h->cam);
	return 0;
}

/* Picks the device mode for every request with users (plus `extra`) and asks
 * the camera for it when it changes; outputs are re-planned against it at
 * once and skip frames of the old mode until the new one streams. */
void hub_update_mode(struct hub *h, const struct vc_request *extra)
{
	struct vc_mode m, actual;
	struct vc_geom g;

	if (hub_pick_mode(h, extra, &m) < 0)
		return; /* no formats, no fitting mode, ENOMEM: the mode stays */
	if (h->target.fourcc && mode_eq(&m, &h->target))
		return;
	vc_cam_get_mode(h->cam, &actual, &g);
	if (actual.fourcc && mode_eq(&m, &actual)) {
		h->switching = 0;
	} else {
		char a[16], b[16];

		if (vc_cam_set_mode(h->cam, &m) < 0) {
			if (!h->target.fourcc && actual.fourcc)
				hub_set_target(h, &actual);
			return;
		}
		log_info("cam %s: mode %s %ux%u %u/%u s -> %s %ux%u %u/%u s", vc_cam_id(h->cam),
			 vc_fourcc_str(actual.fourcc, a), actual.width, actual.height,
			 actual.ival.num, actual.ival.den, vc_fourcc_str(m.fourcc, b), m.width,
			 m.height, m.ival.num, m.ival.den);
		h->switching = 1;
		h->switch_us = now_us();
	}
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
	while (h->outputs)
		output_free(h->outputs);
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
		hub_update_mode(h, NULL);
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
	for (struct output *o = h->outputs; o; o = o->next)
		if (output_users(o) && !o->provisional)
			output_frame(o, f);
	vc_http_wake(h->s->http);
}

void hub_on_event(void *opaque, struct vc_cam *cam)
{
	struct hub *h = opaque;
	struct vc_mode actual;
	struct vc_geom g;

	enum vc_cam_state st = vc_cam_get_state(cam);
	int provisional = 0;

	log_debug("cam %s: state %s", vc_cam_id(cam), vc_cam_state_name(st));
	if (st == VC_CAM_ABSENT || st == VC_CAM_ERROR)
		placeholder_kick(h); /* its stream clients see it is away */
	if (st == VC_CAM_ABSENT)
		return;
	for (const struct output *o = h->outputs; o; o = o->next)
		provisional |= o->provisional;
	vc_cam_get_mode(cam, &actual, &g);
	if (!h->preferred.fourcc && actual.fourcc)
		h->preferred = actual;
	if (h->switching && actual.fourcc && mode_eq(&actual, &h->target))
		h->switching = 0;
	/* the device changed mode by itself (input, reopen): follow it, then
	 * see whether the clients are better served by another */
	if (!h->switching && actual.fourcc && (provisional || !mode_eq(&actual, &h->target)))
		hub_set_target(h, &actual); /* also plans outputs made while it was absent */
	hub_update_mode(h, NULL);
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
			client_end(c);
		for (struct waiter *w = o->waiters; w; w = w->next) {
			if (!w->resumed) {
				w->resumed = 1;
				MHD_resume_connection(w->conn);
			}
		}
	}
}

int vc_streams_try(const struct vc_streams *s, struct vc_cam *cam, const struct vc_request *req,
		   struct vc_plan *plan, struct vc_mode *mode)
{
	const struct hub *h = hub_for(s, cam);

	if (!h || vc_cam_get_state(cam) == VC_CAM_ABSENT)
		return -ENODEV;
	/* the same question hub_update_mode() asks when this request arrives */
	int ret = hub_pick_mode(h, req, mode);

	if (ret < 0)
		return ret;
	return vc_negotiate_plan(mode, req, plan);
}

