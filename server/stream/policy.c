/* The device-mode policy of a hub (one camera, many kinds of clients), on
 * top of common/negotiate's pure choice (vc_negotiate_choose):
 *  - requests are resolved against the camera's default mode (its
 *    configured one, else negotiate's rule), so a URL gets the same picture
 *    whoever else is connected;
 *  - stream clients (MJPEG and raw) steer the mode, and so do one-shot
 *    pollers (poller.h: an address that fetched a /snapshot or /raw
 *    picture within POLLER_LINGER_MS) while a stream is watched, when the
 *    mode the streams alone get cannot give them their pictures (at 1 fps:
 *    the streams decide the rate), so the mode serves both and a snapshot
 *    keeps its size beside a smaller stream;
 *    with no stream watched one-shots (pollers and waiting requests) switch
 *    only for a picture the mode cannot give, and the default comes back
 *    when it gives them theirs. A one-shot the current mode gives its
 *    picture never switches it; one it cannot is a poller from its first
 *    request (it must have its size), so the switch it makes is the only
 *    one: its next polls find the mode kept for it;
 *  - timing: while a stream is watched, at most one switch per
 *    VC_NEGOTIATE_HOLD_MS (a switch wanted during the hold is made when it
 *    ends, one-shot requests that asked for it wait for it), and the mode
 *    is chosen again LEAVE_SETTLE_MS after a client leaves, so a mode kept
 *    for clients who are gone is given up within the hold. A request
 *    arriving while nobody watches, and a raw stream joining (its frames
 *    have no header), switch at once (policy_may_switch).
 * Each switch is logged once with its reason; /api/status shows it. */
#define LOG_PREFIX "stream:"
#include "server/stream/stream_int.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* After a client leaves, wait this long before choosing again: a page
 * reload or a player reconnecting comes back within it, no switch down and
 * up again. */
#define LEAVE_SETTLE_MS 300

static int ival_known(struct vc_fract iv)
{
	return iv.num && iv.den;
}

static int mode_given(const struct vc_mode *m)
{
	return m->fourcc || m->width || m->height || ival_known(m->ival);
}

/* A capture card's input with a TV standard or DV timings: the signal
 * decides the picture (the driver lists sizes it would scale or crop to),
 * so the mode the device delivers now is its natural default. 1 and *cur
 * filled, or 0 (a camera, the test pattern, no mode known yet). */
static int signal_sized(const struct hub *h, struct vc_mode *cur)
{
	struct vc_src_input in;
	struct vc_geom g;
	uint32_t idx;

	if (vc_cam_input_get(h->cam, &idx) < 0 || vc_cam_input_enum(h->cam, idx, &in) < 0 ||
	    !(in.capabilities & (V4L2_IN_CAP_STD | V4L2_IN_CAP_DV_TIMINGS)))
		return 0;
	vc_cam_get_mode(h->cam, cur, &g);
	return cur->width && cur->height;
}

/* The camera's default mode and the rate requests without fps want. */
static int policy_default(const struct hub *h, const struct vc_caps *caps, struct vc_mode *def,
			  uint32_t *want_fps)
{
	struct vc_mode cfg, cur;

	/* configured (a test pattern's spec counts: capture fills it in) */
	cfg = vc_cam_get_config(h->cam)->mode;
	if (!cfg.width && signal_sized(h, &cur)) {
		cfg.width = cur.width;
		cfg.height = cur.height;
		if (!ival_known(cfg.ival))
			cfg.ival = cur.ival;
	}
	int rc = vc_negotiate_default(caps, mode_given(&cfg) ? &cfg : NULL, 0, def);
	if (rc < 0)
		return rc;
	*want_fps = ival_known(cfg.ival) ? (cfg.ival.den + cfg.ival.num / 2) / cfg.ival.num
					 : VC_NEGOTIATE_FPS_CAP;
	if (!*want_fps)
		*want_fps = VC_NEGOTIATE_FPS_CAP;
	return 0;
}

int policy_default_mode(const struct hub *h, struct vc_mode *def)
{
	const struct vc_caps *caps = vc_cam_caps(h->cam);
	uint32_t fps;

	if (!caps || !caps->n_fmts)
		return -ENODEV;
	return policy_default(h, caps, def, &fps) < 0 ? -ENODEV : 0;
}

void policy_resolve(const struct hub *h, struct vc_request *req)
{
	struct vc_mode def;

	/* a capture card's signal decides the picture: a request that names
	 * no size follows it (a new TV standard or DV timings changes what it
	 * gets), so its size stays open here and is filled at each choice */
	if (signal_sized(h, &def))
		return;

	/* the size only: a client's own rate limit stays what it asked */
	if (policy_default_mode(h, &def) == 0)
		vc_negotiate_resolve(&def, 0, req, req);
}

/* Whether mode m gives req its size; p: the plan (set when it does). */
static int gives_size_plan(const struct vc_mode *m, const struct vc_request *req,
			   struct vc_plan *p)
{
	return m->fourcc && vc_negotiate_plan(m, req, p) == 0 && !(p->adjusted & VC_ADJ_SIZE);
}

static int gives_size(const struct vc_mode *m, const struct vc_request *req)
{
	struct vc_plan p;

	return gives_size_plan(m, req, &p);
}

/* Whether the hub's target gives a waiting one-shot's request its size. */
static int promised(const struct hub *h, const struct vc_request *req)
{
	return gives_size(&h->target, req);
}

int policy_serves(const struct hub *h, const struct vc_request *req)
{
	return req && promised(h, req);
}

int policy_serves_plan(const struct hub *h, const struct vc_request *req, struct vc_plan *plan)
{
	return req && gives_size_plan(&h->target, req, plan);
}

int policy_oneshot_ready(const struct hub *h, const struct vc_request *req)
{
	return !h->pol.hold_oneshots || promised(h, req);
}

/* A one-shot's request among the streams: its picture, but 1 fps (it takes
 * a frame now and then; the streams decide the rate, and a 10 fps viewer
 * keeps a 10 fps mode beside it). */
static void oneshot_at_streams_rate(const struct vc_mode *def, const struct vc_request *req,
				    struct vc_request *out)
{
	vc_negotiate_resolve(def, 1, req, out);
	out->fps = 1;
}

/* A poller's request among the streams (oneshot_at_streams_rate), counted
 * in *np. */
static void poller_request(const struct vc_mode *def, const struct vc_request *req,
			   struct vc_request *out, size_t *np)
{
	oneshot_at_streams_rate(def, req, out);
	(*np)++;
}

/* Resolved copies of the requests of h's users, streams and one-shots apart,
 * plus extra: arrays to free (one block), NULL on ENOMEM. *np: how many of
 * the streams are pollers (or the one-shot extra). */
static struct vc_request *policy_requests(const struct hub *h, const struct vc_mode *def,
					  uint32_t want_fps, const struct vc_request *extra,
					  enum hub_kind kind, size_t *ns, size_t *no, size_t *np)
{
	size_t total = 1 + h->pol.pollers.n, k;
	int64_t now = now_us();

	for (const struct output *o = h->outputs; o; o = o->next)
		total += output_users(o);
	struct vc_request *r = malloc(2 * total * sizeof(*r));
	if (!r)
		return NULL;
	struct vc_request *os = r + total;
	*ns = *no = *np = 0;
	for (const struct output *o = h->outputs; o; o = o->next)
		for (const struct client *c = o->clients; c; c = c->next)
			vc_negotiate_resolve(def, want_fps, &c->req, &r[(*ns)++]);
	if (extra && kind != HUB_ONESHOT)
		vc_negotiate_resolve(def, want_fps, extra, &r[(*ns)++]);
	int streams = *ns > 0;
	/* With streams watched, a waiting one-shot that the target mode gives
	 * its full size holds that mode until it has its frame (it was promised
	 * that picture: a stream joining meanwhile switches after it), at 1 fps
	 * as a poller: the streams decide the rate (at the default rate, each
	 * snapshot that waited beside fps-limited viewers while one joined or
	 * left switched the camera to its fastest rate and back); the others
	 * are served as the streams' mode allows (a poller among them steers
	 * below). */
	for (const struct output *o = h->outputs; o; o = o->next)
		for (const struct waiter *w = o->waiters; w; w = w->next) {
			if (streams && promised(h, &w->req))
				oneshot_at_streams_rate(def, &w->req, &r[(*ns)++]);
			else
				vc_negotiate_resolve(def, want_fps, &w->req, &os[(*no)++]);
		}
	if (extra && kind == HUB_ONESHOT && !streams) {
		k = (*no)++;
		vc_negotiate_resolve(def, want_fps, extra, &os[k]);
	}
	/* With streams watched, pollers steer with them (the mode serves both),
	 * and so does a one-shot arriving (it is a poller from now on): last
	 * among the streams (policy_pick tries without them first); with none,
	 * they are one-shots. */
	for (unsigned i = 0; i < h->pol.pollers.n; i++) {
		const struct poller *p = &h->pol.pollers.p[i];

		if (!poller_active(p, now))
			continue;
		if (streams)
			poller_request(def, &p->req, &r[(*ns)++], np);
		else
			vc_negotiate_resolve(def, want_fps, &p->req, &os[(*no)++]);
	}
	if (extra && kind == HUB_ONESHOT && streams)
		poller_request(def, extra, &r[(*ns)++], np);
	/* one-shots follow the streams in the same block */
	if (*ns < total)
		memmove(r + *ns, os, *no * sizeof(*r));
	return r;
}

int policy_pick(const struct hub *h, const struct vc_request *extra, enum hub_kind kind,
		struct vc_mode *m, enum vc_mode_why *why, unsigned *ns_out, unsigned *no_out)
{
	const struct vc_caps *caps = vc_cam_caps(h->cam);
	struct vc_mode def, cur;
	struct vc_geom g;
	uint32_t want_fps;
	size_t ns, no, np;

	if (!caps || !caps->n_fmts || policy_default(h, caps, &def, &want_fps) < 0)
		return -ENODEV;
	/* a one-shot the mode gives its picture is served from it: no switch
	 * (hub_update_mode asks nothing then; /api/try answers the same) */
	if (kind == HUB_ONESHOT && policy_serves(h, extra)) {
		*m = h->target;
		*why = h->pol.why;
		if (ns_out)
			*ns_out = h->pol.n_streams;
		if (no_out)
			*no_out = h->pol.n_oneshots;
		return 0;
	}
	struct vc_request *r = policy_requests(h, &def, want_fps, extra, kind, &ns, &no, &np);
	if (!r)
		return -ENOMEM;
	/* the mode the outputs are planned against, else what the device
	 * streams: served from when it is as good (even with no user, a small
	 * snapshot does not switch a camera that can scale for it) */
	if (h->target.fourcc)
		cur = h->target;
	else
		vc_cam_get_mode(h->cam, &cur, &g);
	/* one-shots alone that the default gives their pictures go back to it:
	 * a mode chosen for a stream that left is not kept for its pollers */
	int def_serves = ns == 0;
	for (size_t i = 0; i < no && def_serves; i++)
		def_serves = gives_size(&def, &r[i]);
	if (def_serves && no)
		cur = def;
	/* pollers (last among the streams) steer only when the mode the
	 * streams alone get cannot give them their pictures: otherwise that
	 * mode, as if they were not there (their formats and costs do not
	 * move a stream off its passthrough) */
	int rc = 1;
	if (np) {
		rc = vc_negotiate_choose(caps, &def, cur.fourcc ? &cur : NULL, r, ns - np, r + ns,
					 no, m, why);
		for (size_t i = ns - np; rc == 0 && i < ns; i++)
			if (!gives_size(m, &r[i]))
				rc = 1;
	}
	if (rc)
		rc = vc_negotiate_choose(caps, &def, cur.fourcc ? &cur : NULL, r, ns, r + ns, no, m,
					 why);
	free(r);
	if (rc < 0)
		return -ENODEV;
	/* the log and /api/status count pollers with the one-shots they are */
	if (ns_out)
		*ns_out = (unsigned)(ns - np);
	if (no_out)
		*no_out = (unsigned)(no + np);
	return 0;
}

static void on_choose(evutil_socket_t fd, short what, void *arg)
{
	struct hub *h = arg;

	(void)fd;
	(void)what;
	h->pol.choose_at_us = 0;
	if (h->cam && !h->s->stopping)
		h->pol.choose(h); /* hub_choose */
}

/* Chooses again at `at` (or earlier when already due sooner). */
static void policy_schedule(struct hub *h, int64_t at)
{
	int64_t now = now_us();

	if (!h->pol.ev) {
		h->pol.ev = evtimer_new(h->s->base, on_choose, h);
		if (!h->pol.ev)
			return; /* ENOMEM: chosen again at the next join or event */
	}
	if (h->pol.choose_at_us && h->pol.choose_at_us <= at)
		return;
	if (at < now)
		at = now;
	struct timeval tv = { (time_t)((at - now) / 1000000), (suseconds_t)((at - now) % 1000000) };
	h->pol.choose_at_us = at;
	evtimer_add(h->pol.ev, &tv);
}

/* Whether a stream client of h is watching. */
static int watched(const struct hub *h)
{
	for (const struct output *o = h->outputs; o; o = o->next)
		if (o->n_clients)
			return 1;
	return 0;
}

int policy_may_switch(struct hub *h, enum hub_kind kind, enum vc_mode_why why)
{
	int64_t now = now_us(), until = h->pol.last_switch_us + VC_NEGOTIATE_HOLD_MS * 1000LL;

	/* nothing planned yet, the hold over, a raw stream joining (no
	 * per-frame header: it is not started on a mode that cannot serve it),
	 * or a request arriving while no stream is watched: the switch
	 * interrupts nobody, and made later it would restart the newcomer's
	 * stream after its first frames. Re-choices after a leave keep the
	 * hold, so a client coming and going alone still switches at most
	 * twice per hold. */
	if (!h->target.fourcc || kind == HUB_RAW_STREAM || !h->pol.last_switch_us ||
	    now >= until || (kind != HUB_NONE && !watched(h)))
		return 1;
	policy_schedule(h, until);
	/* a one-shot arriving asks for a picture the mode cannot give: it
	 * waits for the switch too */
	h->pol.hold_oneshots = why == VC_WHY_ONESHOT || kind == HUB_ONESHOT;
	return 0;
}

void policy_switched(struct hub *h, const struct vc_mode *from, const struct vc_mode *to,
		     enum vc_mode_why why, unsigned ns, unsigned no)
{
	char a[16], b[16];

	h->pol.switches++;
	h->pol.last_switch_us = now_us();
	snprintf(h->pol.last, sizeof(h->pol.last),
		 "%s %ux%u %u/%u s -> %s %ux%u %u/%u s (%s: %u stream%s, %u one-shot%s)",
		 vc_fourcc_str(from->fourcc, a), from->width, from->height, from->ival.num,
		 from->ival.den, vc_fourcc_str(to->fourcc, b), to->width, to->height, to->ival.num,
		 to->ival.den, vc_mode_why_str(why), ns, ns == 1 ? "" : "s", no, no == 1 ? "" : "s");
	log_info("cam %s: mode %s", vc_cam_id(h->cam), h->pol.last);
}

void policy_switch_begin(struct hub *h)
{
	/* capture restarts a stream after a mode change only for its
	 * consumers: a camera nobody uses but that still streams (its idle
	 * time, or idle_stop_ms = never) is kept streaming across the switch
	 * back to the default, then let go of (policy_switch_end) */
	if (h->acquired || vc_cam_get_state(h->cam) != VC_CAM_STREAMING)
		return;
	h->acquired = 1; /* what hub_acquire does */
	vc_cam_acquire(h->cam);
	h->pol.switch_hold = 1;
}

void policy_switch_end(struct hub *h, int done)
{
	enum vc_cam_state st = vc_cam_get_state(h->cam);

	/* done: a frame of the new mode came (capture reports the new mode
	 * before it restarts the stream: not the moment), or it failed */
	if (!h->pol.switch_hold || !(done || st == VC_CAM_ABSENT || st == VC_CAM_ERROR))
		return;
	h->pol.switch_hold = 0;
	for (const struct output *o = h->outputs; o; o = o->next)
		if (output_users(o))
			return; /* users came meanwhile: theirs now */
	if (h->acquired) {
		h->acquired = 0;
		vc_cam_release(h->cam);
	}
}

void policy_chosen(struct hub *h, enum vc_mode_why why, unsigned ns, unsigned no)
{
	h->pol.why = why;
	h->pol.n_streams = ns;
	h->pol.n_oneshots = no;
	h->pol.hold_oneshots = 0;
}

void policy_user_left(struct hub *h)
{
	if (!h->cam || h->s->stopping || h->s->freeing)
		return;
	int64_t at = now_us() + LEAVE_SETTLE_MS * 1000LL;
	int64_t hold = h->pol.last_switch_us + VC_NEGOTIATE_HOLD_MS * 1000LL;
	policy_schedule(h, at > hold ? at : hold);
}

int policy_feeds(const struct hub *h, const struct output *o)
{
	/* one-shots waiting for a held switch get a frame of the mode they
	 * asked for, not one of the old mode */
	return !(h->pol.hold_oneshots && !o->n_clients);
}

static void on_lapse(evutil_socket_t fd, short what, void *arg);

/* Arms the lapse timer for the next poller to stop counting (or earlier). */
static void lapse_arm(struct hub *h)
{
	int64_t at = poller_next_lapse(&h->pol.pollers), now = now_us();

	if (!at || (h->pol.lapse_at_us && h->pol.lapse_at_us <= at))
		return;
	if (!h->pol.lapse_ev) {
		h->pol.lapse_ev = evtimer_new(h->s->base, on_lapse, h);
		if (!h->pol.lapse_ev)
			return; /* ENOMEM: lapsed pollers go at the next poll's arm */
	}
	if (at < now)
		at = now;
	struct timeval tv = { (time_t)((at - now) / 1000000), (suseconds_t)((at - now) % 1000000) };
	h->pol.lapse_at_us = at;
	evtimer_add(h->pol.lapse_ev, &tv);
}

void policy_pollers_lapse(struct hub *h)
{
	/* the mode is chosen again as after a client leaves (the hold kept) */
	if (poller_expire(&h->pol.pollers, now_us()))
		policy_user_left(h);
	lapse_arm(h);
}

static void on_lapse(evutil_socket_t fd, short what, void *arg)
{
	struct hub *h = arg;

	(void)fd;
	(void)what;
	h->pol.lapse_at_us = 0;
	policy_pollers_lapse(h);
}

void policy_poll(struct hub *h, const struct sockaddr *peer, const struct vc_request *req)
{
	poller_note(&h->pol.pollers, peer, req, now_us());
	lapse_arm(h);
}

void policy_free(struct hub *h)
{
	if (h->pol.ev)
		event_free(h->pol.ev);
	h->pol.ev = NULL;
	h->pol.choose_at_us = 0;
	if (h->pol.lapse_ev)
		event_free(h->pol.lapse_ev);
	h->pol.lapse_ev = NULL;
	h->pol.lapse_at_us = 0;
}

int vc_streams_policy(const struct vc_streams *s, size_t cam, struct vc_policy_info *pi)
{
	if (cam >= s->n_hubs)
		return -ENOENT;
	const struct hub *h = s->hubs[cam];
	memset(pi, 0, sizeof(*pi));
	pi->why = vc_mode_why_str(h->pol.why);
	pi->streams = h->pol.n_streams;
	pi->oneshots = h->pol.n_oneshots;
	pi->switches = h->pol.switches;
	pi->since_switch_s = h->pol.last_switch_us
				     ? (double)(now_us() - h->pol.last_switch_us) / 1e6 : -1;
	pi->rechoice_pending = h->pol.choose_at_us != 0;
	snprintf(pi->last, sizeof(pi->last), "%s", h->pol.last);
	policy_default_mode(h, &pi->def);
	return 0;
}

void vc_streams_policy_requests(const struct vc_streams *s, size_t cam, vc_policy_req_cb cb,
				void *opaque)
{
	if (cam >= s->n_hubs)
		return;
	for (const struct output *o = s->hubs[cam]->outputs; o; o = o->next) {
		for (const struct client *c = o->clients; c; c = c->next)
			cb(opaque, c->h264 ? "h264" : c->raw ? "raw" : "stream", &c->req);
		for (const struct waiter *w = o->waiters; w; w = w->next)
			cb(opaque, "oneshot", &w->req);
	}
	const struct pollers *ps = &s->hubs[cam]->pol.pollers;
	int64_t now = now_us();
	for (unsigned i = 0; i < ps->n; i++)
		if (poller_active(&ps->p[i], now))
			cb(opaque, "poller", &ps->p[i].req);
}
