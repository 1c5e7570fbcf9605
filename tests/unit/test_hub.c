/* The hub's mode choice (server/stream/hub.c) on the test source: the
 * requests of a camera's clients and waiting snapshots -> the device mode
 * (hub_pick_mode); /api/try (vc_streams_try) gives the answer the hub then
 * takes when that request arrives; the hub's update asks the camera for it
 * and plans every user's output against it. No HTTP: users are put on the
 * hub's outputs directly. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <linux/videodev2.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "server/stream/serve_int.h"

#define MJPG V4L2_PIX_FMT_MJPEG
#define YUYV V4L2_PIX_FMT_YUYV
#define NV12 V4L2_PIX_FMT_NV12

static void run_ms(struct event_base *b, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

/* A camera on the test source (every producible format, 160x120..1920x1080)
 * configured as `path`, open and idle, served by a vc_streams without HTTP. */
struct fixture {
	struct event_base *base;
	struct vc_cam *cam;
	struct vc_streams *s;
	struct hub *h;
};

static int fixture_open(struct fixture *fx, const char *path)
{
	struct vc_conf_cam cfg = { .name = (char *)"t", .device = (char *)path, .input = -1, .idle_stop_ms = 1000 };

	memset(fx, 0, sizeof(*fx));
	fx->base = event_base_new();
	if (!fx->base || vc_cam_new(fx->base, &cfg, &fx->cam) < 0 ||
	    vc_streams_new(fx->base, NULL, &fx->cam, 1, &fx->s) < 0)
		return -1;
	fx->h = hub_for(fx->s, fx->cam);
	if (!fx->h)
		return -1;
	/* the camera's first event: the hub follows the mode the device reports */
	for (int i = 0; i < 100 && !fx->h->target.fourcc; i++)
		run_ms(fx->base, 20);
	return vc_cam_caps(fx->cam) && fx->h->target.fourcc ? 0 : -1;
}

/* A streaming client asking req arrives: as for a real one, hub_output_get
 * updates the hub's mode with the request and gives its output. NULL when
 * the request cannot be served. */
static struct client *add_client(struct hub *h, const struct vc_request *req)
{
	struct output *o = hub_output_get(h, req, HUB_STREAM);
	struct client *c = o ? calloc(1, sizeof(*c)) : NULL;

	if (!c)
		return NULL;
	c->out = o;
	c->s = h->s;
	c->wake = (struct stream_wake){ client_on_event, c };
	c->req = *req;
	c->sock = -1;
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	return c;
}

/* A snapshot request asking req arrives and waits for a frame. */
static struct waiter *add_waiter(struct hub *h, const struct vc_request *req)
{
	struct output *o = hub_output_get(h, req, HUB_ONESHOT);
	struct waiter *w = o ? calloc(1, sizeof(*w)) : NULL;

	if (!w)
		return NULL;
	w->out = o;
	w->s = h->s;
	w->wake = (struct stream_wake){ snapshot_on_event, w };
	w->req = *req;
	DLIST_PUSH(o->waiters, w);
	o->n_waiters++;
	return w;
}

/* As if the last mode switch was longer ago than the hold (policy.c: at
 * most one switch per VC_NEGOTIATE_HOLD_MS). */
static void past_hold(struct hub *h)
{
	if (h->pol.last_switch_us)
		h->pol.last_switch_us -= VC_NEGOTIATE_HOLD_MS * 1000LL;
}

/* The users the tests made up; the outputs stay for vc_streams_free(), which
 * first lets the worker pool finish a job still running on one (freeing an
 * output under its job crashed on armhf, where an encode takes longer). */
static void drop_users(struct hub *h)
{
	for (struct output *o = h->outputs; o; o = o->next) {
		while (o->clients) {
			struct client *c = o->clients;

			DLIST_UNLINK(o->clients, c);
			free(c);
		}
		while (o->waiters) {
			struct waiter *w = o->waiters;

			DLIST_UNLINK(o->waiters, w);
			free(w);
		}
		o->n_clients = o->n_waiters = 0;
	}
}

static void fixture_close(struct fixture *fx)
{
	if (fx->h)
		drop_users(fx->h);
	vc_streams_free(fx->s);
	vc_cam_free(fx->cam);
	if (fx->base)
		event_base_free(fx->base);
}

/* fourcc 0: any format (negotiate's cost table decides, test_negotiate) */
static int mode_is(const struct vc_mode *m, uint32_t fourcc, uint32_t w, uint32_t hgt)
{
	return (!fourcc || m->fourcc == fourcc) && m->width == w && m->height == hgt;
}

static const char *mode_str(const struct vc_mode *m, char buf[64])
{
	char f[16];

	snprintf(buf, 64, "%s %ux%u %u/%u", vc_fourcc_str(m->fourcc, f), m->width, m->height,
		 m->ival.num, m->ival.den);
	return buf;
}

/* Users already on the hub (clients, then one waiting snapshot) plus a new
 * request -> the device mode. */
static const struct pick_row {
	int line;
	struct vc_request users[3];
	unsigned n_users;
	int waiter_last;          /* the last user is a waiting snapshot */
	struct vc_request req;    /* the new request */
	uint32_t fourcc, w, h;    /* the mode picked */
} pick_rows[] = {
	/* alone: a JPEG stream at a size the camera has is passed through */
	{ __LINE__, { { 0 } }, 0, 0, { MJPG, 320, 240, 0, 0, 0, 0 }, MJPG, 320, 240 },
	/* raw at a listed size: that format natively */
	{ __LINE__, { { 0 } }, 0, 0, { NV12, 640, 480, 0, 0, 0, 0 }, NV12, 640, 480 },
	/* a JPEG client and a raw one: nothing serves both natively; the mode
	 * must hold the largest picture without upscaling */
	{ __LINE__, { { MJPG, 320, 240, 0, 0, 0, 0 } }, 1, 0, { YUYV, 1280, 720, 0, 0, 0, 0 },
	  0, 1280, 720 },
	/* a waiting snapshot counts like a stream */
	{ __LINE__, { { NV12, 800, 600, 0, 0, 0, 0 } }, 1, 1, { NV12, 160, 120, 0, 0, 0, 0 },
	  NV12, 800, 600 },
	/* three equal JPEG clients and a new one: they keep their passthrough */
	{ __LINE__,
	  { { MJPG, 640, 480, 0, 0, 0, 0 }, { MJPG, 640, 480, 0, 0, 0, 0 }, { MJPG, 640, 480, 0, 0, 0, 0 } },
	  3, 0, { MJPG, 320, 240, 0, 0, 0, 0 }, MJPG, 640, 480 },
};

/* hub_pick_mode with the new request as `extra` answers the row; /api/try
 * (vc_streams_try) answers the same; when the request then arrives, the
 * hub takes that mode as its target and the request's output has the plan
 * try announced. */
static void pick_and_try_agree(void)
{
	for (size_t i = 0; i < sizeof(pick_rows) / sizeof(pick_rows[0]); i++) {
		const struct pick_row *r = &pick_rows[i];
		struct fixture fx;
		struct vc_mode picked = { 0 }, tried = { 0 };
		struct vc_plan plan;
		char a[64], b[64];

		if (fixture_open(&fx, "test:640x480@30:YUYV") < 0) {
			CHECK_AT(r->line, 0, "fixture");
			fixture_close(&fx);
			continue;
		}
		for (unsigned k = 0; k < r->n_users; k++) {
			if (r->waiter_last && k == r->n_users - 1)
				add_waiter(fx.h, &r->users[k]);
			else
				add_client(fx.h, &r->users[k]);
		}
		/* the users came long ago: the next switch is not held back by
		 * the one their arrival made (at most one per 2 s, policy.c) */
		past_hold(fx.h);
		int rp = hub_pick_mode(fx.h, &r->req, &picked);
		int rt = vc_streams_try(fx.s, fx.cam, &r->req, 0, &plan, &tried);
		CHECK_AT(r->line, rp == 0 && mode_is(&picked, r->fourcc, r->w, r->h), "picked %d %s",
			 rp, mode_str(&picked, a));
		CHECK_AT(r->line, rt == 0 && !memcmp(&tried, &picked, sizeof(tried)),
			 "try %d %s, picked %s", rt, mode_str(&tried, a), mode_str(&picked, b));
		CHECK_AT(r->line, picked.ival.num && picked.ival.den, "rate not filled in: %s",
			 mode_str(&picked, a));

		struct client *c = add_client(fx.h, &r->req);
		CHECK_AT(r->line, !memcmp(&fx.h->target, &picked, sizeof(picked)), "target %s, tried %s",
			 mode_str(&fx.h->target, a), mode_str(&picked, b));
		CHECK_AT(r->line, c && vc_output_equal(&c->out->plan.out, &plan.out),
			 "new user's output %ux%u, try planned %ux%u", c ? c->out->plan.out.width : 0,
			 c ? c->out->plan.out.height : 0, plan.out.width, plan.out.height);
		fixture_close(&fx);
	}
}

/* Without users the configured mode serves a request without a size; a
 * request no mode can be planned for is refused by try and finds no output
 * when it arrives. */
static void no_users_and_refusals(void)
{
	struct fixture fx;
	struct vc_mode m = { 0 }, t = { 0 };
	struct vc_plan plan;
	struct vc_request any = { MJPG, 0, 0, 0, 0, 0, 0 }, bad = { V4L2_PIX_FMT_SBGGR8, 0, 0, 0, 0, 0, 0 };
	char a[64];

	if (fixture_open(&fx, "test:800x600@25:YUYV") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	CHECK(hub_pick_mode(fx.h, &any, &m) == 0 && m.width == 800 && m.height == 600,
	      "picked %s", mode_str(&m, a));
	CHECK(vc_streams_try(fx.s, fx.cam, &any, 0, &plan, &t) == 0 && !memcmp(&t, &m, sizeof(t)),
	      "try %s", mode_str(&t, a));
	CHECK(vc_streams_try(fx.s, fx.cam, &bad, 0, &plan, &t) == -EINVAL, "try of a Bayer output");
	CHECK(hub_output_get(fx.h, &bad, HUB_STREAM) == NULL, "an output for a Bayer request");
	CHECK(vc_streams_try(fx.s, NULL, &any, 0, &plan, &t) == -ENODEV, "try on no camera");
	fixture_close(&fx);
}

/* ---- one decision per request (issue 21) ---- */

/* A request for req (fourcc and size given in the URL) of `kind` arrives
 * as the endpoints take it past the parsing: decided (stream_decide_parsed,
 * what /api/try reports), then committed (stream_take_output). Returns its
 * output (NULL: refused); *plans: the vc_negotiate_plan calls it cost. */
static struct output *arrive(struct fixture *fx, const struct vc_request *req,
			     enum hub_kind kind, struct vc_streams_answer *a, unsigned long *plans)
{
	unsigned long before = vc_negotiate_plans();
	struct output *o = NULL;

	memset(a, 0, sizeof(*a));
	a->cam = fx->cam;
	a->p.req = *req;
	a->p.given = VC_PARAM_FORMAT | VC_PARAM_SIZE;
	stream_decide_parsed(fx->s, 0, kind, NULL, a);
	if (a->status == 200 && !a->placeholder)
		o = stream_take_output(fx->h, a, kind, NULL);
	*plans = vc_negotiate_plans() - before;
	return o;
}

/* A /stream and then a /snapshot of the same picture each plan the request
 * once (the decision's plan is the one served; it was 2 and 3: admission,
 * the mode check and the output each planned it again), and the picture
 * decided is the one the output delivers. */
static void one_plan_per_request(void)
{
	struct fixture fx;
	struct vc_streams_answer a;
	struct vc_request q = { MJPG, 320, 240, 0, 0, 0, 0 };
	unsigned long n;

	if (fixture_open(&fx, "test:640x480@30:YUYV") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = arrive(&fx, &q, HUB_STREAM, &a, &n);
	CHECK(o && n == 1, "/stream: output %p, %lu plans (want 1)", (void *)o, n);
	CHECK(o && vc_output_equal(&a.plan.out, &o->plan.out) && o->plan.out.width == 320,
	      "/stream: decided %ux%u, output %ux%u", a.plan.out.width, a.plan.out.height,
	      o ? o->plan.out.width : 0, o ? o->plan.out.height : 0);
	struct client *c = o ? calloc(1, sizeof(*c)) : NULL;
	if (c) { /* it keeps watching: the snapshot is served by its mode */
		c->out = o;
		c->s = fx.s;
		c->wake = (struct stream_wake){ client_on_event, c };
		c->req = q;
		c->sock = -1;
		DLIST_PUSH(o->clients, c);
		o->n_clients++;
	}
	struct output *so = arrive(&fx, &q, HUB_ONESHOT, &a, &n);
	CHECK(so && n == 1, "/snapshot: output %p, %lu plans (want 1)", (void *)so, n);
	CHECK(so == o && a.served, "/snapshot: the stream's output (%p, %p), served %d",
	      (void *)so, (void *)o, a.served);
	fixture_close(&fx);
}

/* ---- the device-mode policy (policy.c, issue 13) ---- */

/* A client leaves, as client_free does: its output loses a user. */
static void remove_client(struct client *c)
{
	struct output *o = c->out;

	DLIST_UNLINK(o->clients, c);
	o->n_clients--;
	output_unused(o);
	free(c);
}

static const struct vc_request r360 = { MJPG, 640, 360, 0, 0, 0, 0 };
static const struct vc_request r720 = { MJPG, 1280, 720, 0, 0, 0, 0 };

/* A snapshot request from ip arrives as stream_request_output makes it:
 * noted as a poller, then waiting for a frame. */
static struct waiter *add_poll(struct hub *h, const struct vc_request *req, const char *ip)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	inet_pton(AF_INET, ip, &a.sin_addr);
	policy_poll(h, (struct sockaddr *)&a, req);
	return add_waiter(h, req);
}

/* The snapshot got its frame and was answered, as waiter_unlink does. */
static void remove_waiter(struct waiter *w)
{
	struct output *o = w->out;

	DLIST_UNLINK(o->waiters, w);
	o->n_waiters--;
	output_unused(o);
	free(w);
}

/* As if every poller's last request was `ms` ago. */
static void pollers_age(struct hub *h, int64_t ms)
{
	for (unsigned i = 0; i < h->pol.pollers.n; i++)
		h->pol.pollers.p[i].last_us = now_us() - ms * 1000;
}

/* Issue 21: a default snapshot beside a 640x360 viewer has the default
 * size. Its first poll switches once (the viewer's mode cannot give it),
 * its waiter getting no frame of the old mode meanwhile; the poller then
 * counts like a stream, so its next polls, the viewer's re-choices and a
 * smaller snapshot switch nothing; POLLER_LINGER_MS after its last poll the
 * mode goes back to the viewer's. */
static void poller_keeps_its_size(void)
{
	struct fixture fx;
	char a[64];

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	add_client(fx.h, &r360);
	run_ms(fx.base, 300); /* the camera applies it (a switch back before would cancel it) */
	CHECK(mode_is(&fx.h->target, YUYV, 640, 360), "the viewer's mode: %s",
	      mode_str(&fx.h->target, a));
	/* within the hold of that switch: the poll waits for its mode */
	uint64_t n0 = fx.h->pol.switches;
	struct waiter *w = add_poll(fx.h, &r720, "192.0.2.7");
	CHECK(mode_is(&fx.h->target, YUYV, 640, 360) && fx.h->pol.choose_at_us &&
		      !policy_oneshot_ready(fx.h, &w->req),
	      "polled within the hold: %s, re-choice %s, waiter %s", mode_str(&fx.h->target, a),
	      fx.h->pol.choose_at_us ? "armed" : "not armed",
	      policy_oneshot_ready(fx.h, &w->req) ? "fed the old mode" : "waits");
	run_ms(fx.base, 2200);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720) && fx.h->pol.switches == n0 + 1 &&
		      w->out->plan.out.width == 1280 && w->out->plan.out.height == 720 &&
		      policy_oneshot_ready(fx.h, &w->req),
	      "after the hold: %s, %llu switches, the snapshot's output %ux%u",
	      mode_str(&fx.h->target, a), (unsigned long long)(fx.h->pol.switches - n0),
	      w->out->plan.out.width, w->out->plan.out.height);
	remove_waiter(w);
	past_hold(fx.h);
	/* its next polls (another connection, same address), a thumbnail from
	 * elsewhere and the viewer's re-choices: no switch */
	n0 = fx.h->pol.switches;
	for (int i = 0; i < 3; i++) {
		w = add_poll(fx.h, &r720, "192.0.2.7");
		CHECK(w && w->out->plan.out.width == 1280 && w->out->plan.out.height == 720,
		      "poll %d served %ux%u", i, w ? w->out->plan.out.width : 0,
		      w ? w->out->plan.out.height : 0);
		if (w)
			remove_waiter(w);
		run_ms(fx.base, 400); /* past the re-choice after a user leaves */
	}
	struct vc_request thumb = { MJPG, 320, 180, 0, 0, 0, 0 };
	w = add_poll(fx.h, &thumb, "192.0.2.8");
	if (w)
		remove_waiter(w);
	run_ms(fx.base, 400);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720) && fx.h->pol.switches == n0 &&
		      fx.h->pol.pollers.n == 2,
	      "polls kept %s, %llu switches, %u pollers", mode_str(&fx.h->target, a),
	      (unsigned long long)(fx.h->pol.switches - n0), fx.h->pol.pollers.n);
	/* a second before the linger ends it still counts */
	pollers_age(fx.h, POLLER_LINGER_MS - 1000);
	policy_pollers_lapse(fx.h);
	run_ms(fx.base, 400);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720) && fx.h->pol.pollers.n == 2,
	      "%d ms after the last poll: %s, %u pollers", POLLER_LINGER_MS - 1000,
	      mode_str(&fx.h->target, a), fx.h->pol.pollers.n);
	/* then it lapses: the viewer's mode comes back */
	pollers_age(fx.h, POLLER_LINGER_MS);
	policy_pollers_lapse(fx.h);
	run_ms(fx.base, 400);
	CHECK(mode_is(&fx.h->target, YUYV, 640, 360) && fx.h->pol.switches == n0 + 1 &&
		      fx.h->pol.pollers.n == 0,
	      "%d ms after the last poll: %s, %llu switches, %u pollers", POLLER_LINGER_MS,
	      mode_str(&fx.h->target, a), (unsigned long long)(fx.h->pol.switches - n0),
	      fx.h->pol.pollers.n);
	fixture_close(&fx);
}

/* A poller that came first: the viewer joining finds the mode serving both
 * (the stream scaled down), no switch; /api/try says the same. A snapshot
 * the mode gives its picture never switches it. */
static void poller_first_no_switch(void)
{
	struct fixture fx;
	struct vc_plan plan;
	struct vc_mode m;
	char a[64];

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct waiter *w = add_poll(fx.h, &r720, "192.0.2.7");
	if (w)
		remove_waiter(w);
	past_hold(fx.h);
	uint64_t n0 = fx.h->pol.switches;
	CHECK(vc_streams_try(fx.s, fx.cam, &r360, 0, &plan, &m) == 0 && mode_is(&m, YUYV, 1280, 720),
	      "try of the viewer beside the poller: %s", mode_str(&m, a));
	/* the poller asks a picture, not a rate: a 10 fps viewer gets a 10 fps mode */
	struct vc_request slow = { MJPG, 640, 360, 10, 0, 0, 0 };
	CHECK(vc_streams_try(fx.s, fx.cam, &slow, 0, &plan, &m) == 0 && mode_is(&m, YUYV, 1280, 720) &&
		      m.ival.num && m.ival.den == 10 * m.ival.num,
	      "try of a 10 fps viewer beside the poller: %s", mode_str(&m, a));
	struct client *c = add_client(fx.h, &r360);
	run_ms(fx.base, 400);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720) && fx.h->pol.switches == n0 && c &&
		      c->out->plan.out.width == 640 && c->out->plan.out.height == 360,
	      "viewer beside the poller: %s, %llu switches", mode_str(&fx.h->target, a),
	      (unsigned long long)(fx.h->pol.switches - n0));
	struct vc_request small = { MJPG, 640, 360, 0, 0, 0, 0 };
	CHECK(vc_streams_try(fx.s, fx.cam, &small, 1, &plan, &m) == 0 &&
		      mode_is(&m, YUYV, 1280, 720) && plan.out.width == 640,
	      "try of a small snapshot: %s", mode_str(&m, a));
	w = add_poll(fx.h, &small, "192.0.2.9");
	CHECK(w && mode_is(&fx.h->target, YUYV, 1280, 720) && fx.h->pol.switches == n0,
	      "small snapshot: %s, %llu switches", mode_str(&fx.h->target, a),
	      (unsigned long long)(fx.h->pol.switches - n0));
	if (w)
		remove_waiter(w);
	fixture_close(&fx);
}

/* With no stream watched pollers are one-shots: a thumbnail poller does not
 * keep a mode chosen for a viewer who left (the default gives it its
 * picture); a poller of a picture the default cannot give keeps the mode
 * switched for it until it lapses, then the default comes back. */
static void pollers_alone(void)
{
	struct fixture fx;
	char a[64];

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct vc_request thumb = { MJPG, 320, 180, 0, 0, 0, 0 };
	struct vc_request r43 = { MJPG, 640, 480, 0, 0, 0, 0 };
	struct client *c = add_client(fx.h, &r43);
	run_ms(fx.base, 300);
	struct waiter *w = add_poll(fx.h, &thumb, "192.0.2.7");
	if (w)
		remove_waiter(w);
	past_hold(fx.h);
	CHECK(mode_is(&fx.h->target, YUYV, 640, 480), "viewer and thumbnail: %s",
	      mode_str(&fx.h->target, a));
	remove_client(c);
	run_ms(fx.base, 500);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720), "viewer gone, thumbnail polled: %s",
	      mode_str(&fx.h->target, a));
	past_hold(fx.h);
	struct vc_request big = { MJPG, 1920, 1080, 0, 0, 0, 0 };
	w = add_poll(fx.h, &big, "192.0.2.7");
	CHECK(w && mode_is(&fx.h->target, YUYV, 1920, 1080) && w->out->plan.out.width == 1920,
	      "a 1920x1080 poll: %s", mode_str(&fx.h->target, a));
	if (w)
		remove_waiter(w);
	run_ms(fx.base, 2500); /* past the hold and the re-choice after it left */
	uint64_t n0 = fx.h->pol.switches;
	CHECK(mode_is(&fx.h->target, YUYV, 1920, 1080), "2.5 s after the 1920x1080 poll: %s",
	      mode_str(&fx.h->target, a));
	w = add_poll(fx.h, &big, "192.0.2.7");
	if (w)
		remove_waiter(w);
	run_ms(fx.base, 500);
	CHECK(mode_is(&fx.h->target, YUYV, 1920, 1080) && fx.h->pol.switches == n0,
	      "its next poll: %s, %llu switches", mode_str(&fx.h->target, a),
	      (unsigned long long)(fx.h->pol.switches - n0));
	past_hold(fx.h);
	pollers_age(fx.h, POLLER_LINGER_MS);
	policy_pollers_lapse(fx.h);
	run_ms(fx.base, 500);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720) && fx.h->pol.pollers.n == 0,
	      "lapsed: %s, %u pollers", mode_str(&fx.h->target, a), fx.h->pol.pollers.n);
	fixture_close(&fx);
}

/* Pollers the streams' own mode gives their pictures change nothing: a raw
 * YUYV stream keeps its passthrough beside raw NV12, GREY and JPEG pollers
 * (http_basic.api_try_passthrough). */
static void pollers_beside_change_nothing(void)
{
	struct fixture fx;
	struct vc_plan plan;
	struct vc_mode m;
	char a[64];

	if (fixture_open(&fx, "test:640x480@30:YUYV") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	/* a raw NV12 viewer (gone, its re-choice not made yet) left the mode at NV12 */
	struct vc_request nv12 = { NV12, 640, 480, 0, 0, 0, 0 };
	struct client *c = add_client(fx.h, &nv12);
	run_ms(fx.base, 300);
	CHECK(mode_is(&fx.h->target, NV12, 640, 480), "the NV12 viewer's mode: %s",
	      mode_str(&fx.h->target, a));
	static const struct vc_request polls[] = {
		{ NV12, 640, 480, 0, 0, 0, 0 },
		{ V4L2_PIX_FMT_GREY, 100, 50, 0, 0, 0, 0 },
		{ V4L2_PIX_FMT_YUV420, 322, 242, 0, 0, 0, 0 },
		{ MJPG, 160, 120, 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(polls) / sizeof(polls[0]); i++) {
		struct waiter *w = add_poll(fx.h, &polls[i], "192.0.2.7");
		if (w)
			remove_waiter(w);
	}
	if (c)
		remove_client(c);
	past_hold(fx.h);
	struct vc_request yuyv = { YUYV, 640, 480, 0, 0, 0, 0 };
	CHECK(vc_streams_try(fx.s, fx.cam, &yuyv, 0, &plan, &m) == 0 && mode_is(&m, YUYV, 640, 480) &&
		      plan.steps == VC_STEP_PASSTHROUGH,
	      "raw YUYV stream beside the pollers: %s, steps %#x", mode_str(&m, a), plan.steps);
	fixture_close(&fx);
}

/* A snapshot waiting beside fps-limited viewers holds the mode's size, not
 * its rate: a 1 fps viewer, a snapshot of the mode's picture waiting for its
 * frame, a second 1 fps viewer arriving meanwhile: the rate stays 1/1 s (a
 * waiter counted at the camera's default rate switched it to 1/30 s and back
 * after the snapshot, each switch a restart of the capture: http_policy's
 * snapshot_keeps_rate). */
static void waiting_snapshot_keeps_rate(void)
{
	struct fixture fx;
	char a[64];

	if (fixture_open(&fx, "test:640x480@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct vc_request slow = { MJPG, 640, 480, 1, 0, 0, 0 };
	struct vc_request snap = { MJPG, 640, 480, 0, 0, 0, 0 };
	struct vc_request other = { MJPG, 320, 240, 1, 0, 0, 0 };
	struct client *c = add_client(fx.h, &slow);
	CHECK(fx.h->target.ival.num == 1 && fx.h->target.ival.den == 1, "the 1 fps viewer's mode: %s",
	      mode_str(&fx.h->target, a));
	struct waiter *w = add_waiter(fx.h, &snap);
	past_hold(fx.h);
	struct client *c2 = add_client(fx.h, &other);
	CHECK(w && c2 && mode_is(&fx.h->target, YUYV, 640, 480) && fx.h->target.ival.num == 1 &&
		      fx.h->target.ival.den == 1,
	      "a viewer joining while the snapshot waits: %s (want YUYV 640x480 1/1)",
	      mode_str(&fx.h->target, a));
	if (w)
		remove_waiter(w);
	if (c2)
		remove_client(c2);
	if (c)
		remove_client(c);
	fixture_close(&fx);
}

/* A snapshot whose camera frame is still being encoded when its 5 s are up
 * waits for that picture (up to SNAPSHOT_WORK_MS after it came); with its
 * output idle the camera gave nothing: the 503 at SNAPSHOT_TIMEOUT_MS. */
static void snapshot_waits_for_its_encode(void)
{
	struct fixture fx;
	struct vc_request snap = { MJPG, 320, 240, 0, 0, 0, 0 };

	if (fixture_open(&fx, "test:640x480@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct waiter *w = add_waiter(fx.h, &snap);
	CHECK(w != NULL, "waiter");
	if (w) {
		int64_t t = w->since_us = 1000000000;
		int busy = w->out->busy;
		int64_t due = t + SNAPSHOT_TIMEOUT_MS * 1000LL;

		w->out->busy = 1;
		CHECK(snapshot_keep_waiting(w, due), "encode under way at 5 s: 503");
		CHECK(snapshot_keep_waiting(w, t + (SNAPSHOT_WORK_MS - 1) * 1000LL),
		      "encode under way just before SNAPSHOT_WORK_MS: 503");
		CHECK(!snapshot_keep_waiting(w, t + SNAPSHOT_WORK_MS * 1000LL),
		      "encode under way at SNAPSHOT_WORK_MS: still waiting");
		w->out->busy = 0;
		CHECK(!snapshot_keep_waiting(w, due), "output idle at 5 s: still waiting");
		w->out->busy = busy;
		remove_waiter(w);
	}
	fixture_close(&fx);
}

/* The same URL gets the same picture whoever else is connected: width=320
 * keeps the camera default's 16:9 beside a 4:3 viewer, and a stream without
 * size is the default size. */
static void same_url_same_picture(void)
{
	struct fixture fx;
	struct vc_plan plan;
	struct vc_mode m;

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct vc_request w320 = { MJPG, 320, 0, 0, 0, 0, 0 }, any = { MJPG, 0, 0, 0, 0, 0, 0 };
	struct vc_request q = w320;
	policy_resolve(fx.h, &q);
	CHECK(q.width == 320 && q.height == 180, "alone: width=320 -> %ux%u", q.width, q.height);
	struct vc_request r43 = { MJPG, 640, 480, 0, 0, 0, 0 };
	add_client(fx.h, &r43);
	CHECK(mode_is(&fx.h->target, YUYV, 640, 480), "the 4:3 viewer's mode");
	q = w320;
	policy_resolve(fx.h, &q);
	CHECK(q.width == 320 && q.height == 180, "beside a 640x480 viewer: width=320 -> %ux%u",
	      q.width, q.height);
	CHECK(vc_streams_try(fx.s, fx.cam, &any, 0, &plan, &m) == 0 && plan.out.width == 1280 &&
		      plan.out.height == 720,
	      "a stream without size: %ux%u", plan.out.width, plan.out.height);
	fixture_close(&fx);
}

/* A stream joining within 2 s of a switch waits for the hold to end; the
 * mode kept for a client who left is given up within 2 s. */
static void hold_and_give_back(void)
{
	struct fixture fx;
	char a[64];

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	add_client(fx.h, &r360);
	run_ms(fx.base, 300); /* the camera applies it (a switch back before would cancel it) */
	CHECK(mode_is(&fx.h->target, YUYV, 640, 360), "first viewer: %s", mode_str(&fx.h->target, a));
	struct client *big = add_client(fx.h, &r720);
	CHECK(mode_is(&fx.h->target, YUYV, 640, 360) && fx.h->pol.choose_at_us,
	      "joined within the hold: %s, re-choice %s", mode_str(&fx.h->target, a),
	      fx.h->pol.choose_at_us ? "armed" : "not armed");
	run_ms(fx.base, 2200);
	CHECK(mode_is(&fx.h->target, YUYV, 1280, 720), "after the hold: %s",
	      mode_str(&fx.h->target, a));
	run_ms(fx.base, 2100); /* past that switch's hold */
	int64_t t0 = now_us();
	remove_client(big);
	while (!mode_is(&fx.h->target, YUYV, 640, 360) && now_us() - t0 < 3000000)
		run_ms(fx.base, 50);
	CHECK(mode_is(&fx.h->target, YUYV, 640, 360) && now_us() - t0 <= 2000000,
	      "the 1280x720 client left: %s after %lld ms", mode_str(&fx.h->target, a),
	      (long long)((now_us() - t0) / 1000));
	fixture_close(&fx);
}

/* A 1280x720 client joining and leaving every 300 ms beside a 640x360 one:
 * at most one switch per 2 s. */
static void no_flapping(void)
{
	struct fixture fx;
	int64_t last = 0, min_gap = INT64_MAX;
	uint64_t n0;

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	add_client(fx.h, &r360);
	run_ms(fx.base, 300);
	n0 = fx.h->pol.switches;
	last = fx.h->pol.last_switch_us;
	int64_t t0 = now_us();
	struct client *c = NULL;
	for (int i = 0; i < 24; i++) {
		if (c) {
			remove_client(c);
			c = NULL;
		} else {
			c = add_client(fx.h, &r720);
		}
		run_ms(fx.base, 300);
		if (fx.h->pol.last_switch_us != last) {
			if (fx.h->pol.last_switch_us - last < min_gap)
				min_gap = fx.h->pol.last_switch_us - last;
			last = fx.h->pol.last_switch_us;
		}
	}
	if (c)
		remove_client(c);
	double secs = (double)(now_us() - t0) / 1e6;
	uint64_t n = fx.h->pol.switches - n0;
	CHECK(n >= 1 && (double)n <= secs / 2 + 1 && min_gap >= VC_NEGOTIATE_HOLD_MS * 1000LL,
	      "%llu switches in %.1f s, smallest gap %lld ms", (unsigned long long)n, secs,
	      (long long)(min_gap == INT64_MAX ? -1 : min_gap / 1000));
	fixture_close(&fx);
}

/* What a consumer that is no HTTP client sees (an RTSP session would be
 * one): subscribed on an output with its own stream_wake, it is told of
 * each new frame (DATA) and of its end with the reason (the camera went:
 * END_GONE), by the core alone: client.c and snapshot.c are not in the
 * path. */
struct wake_count {
	unsigned data, gone, other;
};

static void count_wake(void *opaque, enum stream_ev ev, int64_t now)
{
	struct wake_count *n = opaque;

	(void)now;
	if (ev == STREAM_EV_DATA)
		n->data++;
	else if (ev == STREAM_EV_END_GONE)
		n->gone++;
	else
		n->other++;
}

static void consumer_wake(void)
{
	struct fixture fx;
	struct wake_count cn = { 0 }, wn = { 0 };

	if (fixture_open(&fx, "test:1280x720@30:YUYV:only") < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = hub_output_get(fx.h, &r360, HUB_STREAM);
	struct client *c = o ? calloc(1, sizeof(*c)) : NULL;
	struct waiter *w = o ? calloc(1, sizeof(*w)) : NULL;
	if (!c || !w) {
		CHECK(0, "output or memory");
		free(c);
		free(w);
		fixture_close(&fx);
		return;
	}
	c->out = w->out = o;
	c->s = w->s = fx.s;
	c->req = w->req = r360;
	c->wake = (struct stream_wake){ count_wake, &cn };
	w->wake = (struct stream_wake){ count_wake, &wn };
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	DLIST_PUSH(o->waiters, w);
	o->n_waiters++;
	hub_acquire(fx.h);
	for (int i = 0; i < 150 && cn.data < 3; i++)
		run_ms(fx.base, 20);
	CHECK(cn.data >= 3 && wn.data >= 1 && !cn.gone && !cn.other && !wn.gone,
	      "streaming: client %u frames %u ends, waiter %u frames", cn.data, cn.gone + cn.other,
	      wn.data);
	unsigned frames = cn.data;
	hub_end_users(fx.h);
	CHECK(cn.gone == 1 && wn.gone == 1 && !cn.other && cn.data == frames,
	      "camera gone: client %u gone %u other, waiter %u gone", cn.gone, cn.other, wn.gone);
	fixture_close(&fx);
}

int main(void)
{
	/* before any event_base: the worker pool and capture release frames
	 * from their threads (event_active), which needs the base's lock */
	evthread_use_pthreads();
	RUN("hub", pick_and_try_agree);
	RUN("hub", no_users_and_refusals);
	RUN("hub", poller_keeps_its_size);
	RUN("hub", poller_first_no_switch);
	RUN("hub", pollers_alone);
	RUN("hub", pollers_beside_change_nothing);
	RUN("hub", waiting_snapshot_keeps_rate);
	RUN("hub", snapshot_waits_for_its_encode);
	RUN("hub", same_url_same_picture);
	RUN("hub", hold_and_give_back);
	RUN("hub", no_flapping);
	RUN("hub", one_plan_per_request);
	RUN("hub", consumer_wake);
	CHECK_EXIT();
}
