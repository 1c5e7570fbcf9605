/* Fan-out from cameras to HTTP clients. Owns, per camera (hub), the list of
 * outputs; per output, its latest frame, its streaming clients and its
 * waiting snapshot requests. A new frame is processed once per output that
 * has users, becomes the output's `latest`, and wakes the clients that are
 * due. A client starts its next part from `latest` when it has finished the
 * previous one, so a slow client holds one frame at most and skips the rest.
 * On plain HTTP, MHD sends the response headers, then the connection stays
 * suspended and direct_pump sends the output's shared part (stream_part.c)
 * on the socket; over TLS the content reader copies the part into MHD's
 * buffer and the connection is resumed per frame. */
#define LOG_PREFIX "stream:"
#include "server/stream/stream.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/jpeg.h"
#include "common/log.h"
#include "common/transform.h"
#include "common/negotiate.h"
#include "common/params.h"
#include "common/pipeline.h"
#include "server/stream/stream_part.h"
#include "server/workers.h"

#define BOUNDARY "vcapdframe"
#define SNAPSHOT_TIMEOUT_MS 5000
#define OUTPUT_LINGER_MS 10000

struct hub;
struct output;

struct client {
	struct client *next, *prev;
	struct output *out;
	struct vc_streams *s;
	struct MHD_Connection *conn;
	int raw, suspended, ending;
	struct vc_request req;     /* what this client asked (mode choice) */
	/* plain HTTP: after the response headers, parts go from the output's
	 * shared part straight to the socket (sendfile) while the connection
	 * stays suspended; MHD only ends the response */
	int sock;                  /* -1: TLS, MHD's content reader copies (cur) */
	struct event *wev;         /* sock writable again, or stalled too long */
	struct vc_part *part;      /* part being sent on sock */
	size_t part_off;
	int outq;                  /* unacknowledged bytes in sock when it filled */
	struct vc_frame *cur;      /* TLS: part being copied (one frame at most) */
	char hdr[256];
	struct MHD_IoVec pc[5];    /* the part: header, frame pieces, trailer */
	unsigned n_pc;
	size_t part_len, off;
	uint64_t sent_n;           /* output frame number last sent */
	int64_t next_due_us;
	uint32_t fps_limit;
	uint64_t frames, skipped, bytes;
	double fps;
	int64_t last_us;
	char peer[64];
};

/* A snapshot/raw request waiting for the next frame of an output. */
struct waiter {
	struct waiter *next, *prev;
	struct output *out;
	struct vc_streams *s;
	struct MHD_Connection *conn;
	struct vc_request req;     /* what this request asked (mode choice) */
	struct vc_frame *frame;    /* set when woken with a frame */
	size_t frame_dht;          /* its DHT insertion offset (see output.latest_dht) */
	struct event *timer;
	int done, timed_out, raw, resumed;
};

struct output {
	struct output *next, *prev;
	struct hub *hub;
	struct vc_request req;
	struct vc_plan plan;
	struct vc_frame *latest;
	size_t latest_dht;         /* camera JPEG without Huffman tables: where the standard
				    * ones go when sending (0 = none needed) */
	uint64_t latest_n;         /* frames produced so far; latest is number latest_n */
	struct vc_part *part[2];   /* latest as a stream part ([1]: raw), made on first need */
	uint64_t busy_drops;
	uint64_t bad_frames;       /* corrupt camera JPEGs dropped */
	int busy;                  /* a job of this output is on the worker pool */
	struct vc_pipeline *pipe;  /* executes plan on target frames; used by one job at a time */
	uint64_t pipe_gen;         /* hub generation pipe was made for */
	struct vc_frame *pending;  /* newest capture frame waiting for the job to end */
	double process_ms, fps;
	int64_t last_us, idle_since_us;
	struct client *clients;
	struct waiter *waiters;
	unsigned n_clients, n_waiters;
	int merged;                /* users moved to an equal output; freed once not busy */
};

struct hub {
	struct vc_streams *s;
	struct vc_cam *cam;
	struct output *outputs;
	struct vc_mode target;     /* mode the outputs are planned against */
	struct vc_mode preferred;  /* first mode the device reported (its configured one) */
	uint64_t gen;              /* bumped when target changes (stale jobs) */
	int switching;             /* target asked, its frames not seen yet */
	int64_t switch_us;
	int acquired;
	struct hub *next_dying;    /* removed, waiting for its last user (cam NULL) */
};

struct vc_streams {
	struct event_base *base;
	struct vc_http *http;
	struct hub **hubs;         /* allocated one by one: outputs and jobs point at them */
	size_t n_hubs, cap_hubs;
	struct hub *dying;         /* removed cameras' hubs with clients or jobs left */
	struct vc_workers *workers;
	int freeing;
	struct event *gc;
	int stopping;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static unsigned output_users(const struct output *o)
{
	return o->n_clients + o->n_waiters;
}

/* ---- mode and plans ---- */

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

/* Doubly linked lists of clients, waiters and outputs (each has next/prev):
 * push at the head, unlink anywhere. Statements only, no hidden control flow. */
#define DLIST_PUSH(head, n)                     \
	do {                                    \
		(n)->prev = NULL;               \
		(n)->next = (head);             \
		if (head)                       \
			(head)->prev = (n);     \
		(head) = (n);                   \
	} while (0)
#define DLIST_UNLINK(head, n)                           \
	do {                                            \
		if ((n)->prev)                          \
			(n)->prev->next = (n)->next;    \
		else                                    \
			(head) = (n)->next;             \
		if ((n)->next)                          \
			(n)->next->prev = (n)->prev;    \
	} while (0)

static void output_free(struct output *o);

/* Moves user u (a client or a waiter, on list `list` counted by `count`)
 * from output `from` to output `to`. */
#define USER_MOVE(from, to, list, count, u)        \
	do {                                       \
		DLIST_UNLINK((from)->list, u);     \
		(from)->count--;                   \
		DLIST_PUSH((to)->list, u);         \
		(to)->count++;                     \
		(u)->out = (to);                   \
	} while (0)
static struct output *output_for_plan(struct hub *h, const struct vc_request *req,
				      const struct vc_plan *pl);

static void output_drop_parts(struct output *o)
{
	for (int i = 0; i < 2; i++) {
		vc_part_unref(o->part[i]);
		o->part[i] = NULL;
	}
}

/* Drops the frames an output made or holds from the previous mode. */
static void output_drop_frames(struct output *o)
{
	vc_frame_unref(o->latest);
	o->latest = NULL;
	o->latest_dht = 0;
	output_drop_parts(o);
	vc_frame_unref(o->pending);
	o->pending = NULL;
}

/* Outputs that re-planned to the same picture become one: every client and
 * waiting snapshot of `from` moves to `to`, so one encode serves them all.
 * `from` is freed, or, while a job of it runs, left empty and marked for
 * the gc (job_done still points at it). */
static void output_merge(struct output *to, struct output *from)
{
	while (from->clients) {
		struct client *c = from->clients;

		USER_MOVE(from, to, clients, n_clients, c);
		c->sent_n = to->latest_n; /* next part: to's next frame */
	}
	while (from->waiters) {
		struct waiter *w = from->waiters;

		USER_MOVE(from, to, waiters, n_waiters, w);
	}
	if (from->busy)
		from->merged = 1;
	else
		output_free(from);
}

/* Users of o whose own request plans to another output under the new mode
 * (requests that were equal under the old one, e.g. width=640 and
 * size=640x480 on a 4:3 mode, differ on a 16:9 one) move to that output. */
/* Where a user of o with request req belongs now: NULL when o still fits. */
static struct output *split_target(struct hub *h, const struct output *o,
				   const struct vc_request *req)
{
	struct vc_plan p;

	if (vc_negotiate_plan(&h->target, req, &p) < 0 || vc_output_equal(&p.out, &o->plan.out))
		return NULL;
	return output_for_plan(h, req, &p);
}

static void output_split(struct hub *h, struct output *o)
{
	struct client *cn;
	struct waiter *wn;
	struct output *to;

	for (struct client *c = o->clients; c; c = cn) {
		cn = c->next;
		if ((to = split_target(h, o, &c->req))) {
			USER_MOVE(o, to, clients, n_clients, c);
			c->sent_n = to->latest_n;
		}
	}
	for (struct waiter *w = o->waiters; w; w = wn) {
		wn = w->next;
		if ((to = split_target(h, o, &w->req)))
			USER_MOVE(o, to, waiters, n_waiters, w);
	}
	if (!output_users(o))
		o->idle_since_us = now_us();
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
		if (vc_negotiate_plan(&h->target, &o->req, &p) == 0)
			o->plan = p;
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

/* Picks the device mode for every request with users (plus `extra`) and asks
 * the camera for it when it changes; outputs are re-planned against it at
 * once and skip frames of the old mode until the new one streams. */
static void hub_update_mode(struct hub *h, const struct vc_request *extra)
{
	const struct vc_caps *caps = vc_cam_caps(h->cam);
	struct vc_request *reqs;
	size_t n = 0;
	struct vc_mode cur, m, actual;
	struct vc_geom g;

	if (!caps || !caps->n_fmts)
		return;
	const struct vc_mode *curp, *prefp;

	if (!(reqs = hub_requests(h, &n)))
		return; /* ENOMEM: the mode stays */
	hub_negotiate_from(h, n, &cur, &curp, &prefp);
	if (extra)
		reqs[n++] = *extra;
	int rc = vc_negotiate_mode(caps, curp, prefp, reqs, n, &m);
	free(reqs);
	if (rc < 0)
		return;
	mode_fill_rate(&m, h->cam);
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

static void hub_acquire(struct hub *h)
{
	if (!h->acquired) {
		h->acquired = 1;
		vc_cam_acquire(h->cam);
	}
}

static void output_free(struct output *o)
{
	DLIST_UNLINK(o->hub->outputs, o);
	output_drop_parts(o);
	vc_frame_unref(o->latest);
	vc_frame_unref(o->pending);
	vc_pipeline_free(o->pipe);
	free(o);
}

static void hub_free(struct hub *h)
{
	while (h->outputs)
		output_free(h->outputs);
	free(h);
}

/* Called when an output loses a user: once nobody uses the hub's outputs the
 * camera is released (capture.c stops it after its idle time). */
static void output_unused(struct output *o)
{
	struct hub *h = o->hub;

	if (output_users(o))
		return;
	o->idle_since_us = now_us();
	for (struct output *x = h->outputs; x; x = x->next)
		if (output_users(x))
			return;
	if (h->acquired) {
		h->acquired = 0;
		vc_cam_release(h->cam);
	}
}

/* The hub serving cam (the last one if listed twice), or NULL. */
static struct hub *hub_for(const struct vc_streams *s, const struct vc_cam *cam)
{
	struct hub *h = NULL;

	for (size_t i = 0; i < s->n_hubs; i++)
		if (s->hubs[i]->cam == cam)
			h = s->hubs[i];
	return h;
}

/* Finds or makes the output for req on hub h (after the mode update). */
static struct output *output_get(struct hub *h, const struct vc_request *req)
{
	struct vc_plan plan;

	hub_update_mode(h, req);
	if (!h->target.fourcc || vc_negotiate_plan(&h->target, req, &plan) < 0)
		return NULL;
	return output_for_plan(h, req, &plan);
}

/* The output delivering plan (req planned against the hub's target), made
 * when there is none. NULL on ENOMEM. */
static struct output *output_for_plan(struct hub *h, const struct vc_request *req,
				      const struct vc_plan *pl)
{
	const struct vc_plan plan = *pl;

	for (struct output *o = h->outputs; o; o = o->next)
		if (!o->merged && vc_output_equal(&o->plan.out, &plan.out)) {
			if (!output_users(o))
				o->req = *req; /* re-planned from the newest request */
			return o;
		}
	struct output *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->hub = h;
	o->req = *req;
	o->plan = plan;
	o->idle_since_us = now_us();
	DLIST_PUSH(h->outputs, o);
	return o;
}

/* ---- frames in ---- */

static void direct_pump(struct client *c);

static void wake_clients(struct output *o, int64_t now)
{
	for (struct client *c = o->clients; c; c = c->next) {
		if (c->sock >= 0) {
			if (c->wev && !c->part) /* idle on its socket (else it takes latest when done) */
				direct_pump(c);
			continue;
		}
		if (!c->suspended)
			continue;
		if (c->fps_limit && now < c->next_due_us)
			continue;
		c->suspended = 0;
		MHD_resume_connection(c->conn);
	}
	for (struct waiter *w = o->waiters; w; w = w->next) {
		if (w->resumed)
			continue;
		w->frame = vc_frame_ref(o->latest);
		w->frame_dht = o->latest_dht;
		w->resumed = 1;
		MHD_resume_connection(w->conn);
	}
}

/* Makes res the output's latest frame (dht: see latest_dht) and wakes its
 * clients. */
static void output_publish(struct output *o, struct vc_frame *res, size_t dht)
{
	vc_frame_unref(o->latest);
	output_drop_parts(o);
	o->latest = res;
	o->latest_dht = dht;
	o->latest_n++;
	int64_t now = now_us();
	if (o->last_us && now > o->last_us) {
		double inst = 1e6 / (double)(now - o->last_us);
		o->fps = o->fps ? o->fps * 0.9 + inst * 0.1 : inst;
	}
	o->last_us = now;
	wake_clients(o, now);
}

/* One convert/encode on the worker pool. */
struct job {
	struct output *o;
	struct vc_pipeline *pipe; /* the output's; not replaced while the job runs */
	uint64_t gen;             /* hub generation the pipeline belongs to */
	struct vc_frame *src, *res;
	int ret;
	int64_t t0, t_work;
};

static void output_submit(struct output *o, struct vc_frame *f);

static void job_work(void *arg, unsigned worker)
{
	struct job *j = arg;
	int64_t t = now_us();

	(void)worker; /* pipelines belong to outputs, not to worker threads */
	j->ret = vc_pipeline_run(j->pipe, j->src, &j->res);
	j->t_work = now_us() - t;
}

static void job_done(void *arg, int status)
{
	struct job *j = arg;
	struct output *o = j->o;
	struct vc_streams *s = o->hub->s;

	o->busy = 0;
	vc_frame_unref(j->src);
	if (s->freeing || status < 0 || j->ret < 0 || j->gen != o->hub->gen) {
		if (!s->freeing && j->ret < 0 && o->hub->cam)
			log_debug("cam %s: frame: %s", vc_cam_id(o->hub->cam), strerror(-j->ret));
		vc_frame_unref(j->res);
	} else {
		double ms = (double)j->t_work / 1000.0;

		o->process_ms = o->process_ms ? o->process_ms * 0.9 + ms * 0.1 : ms;
		output_publish(o, j->res, 0);
		vc_http_wake(s->http);
	}
	free(j);
	if (s->freeing) {
		vc_frame_unref(o->pending);
		o->pending = NULL;
		return;
	}
	if (o->pending) {
		struct vc_frame *f = o->pending;

		o->pending = NULL;
		if (output_users(o))
			output_submit(o, f);
		vc_frame_unref(f);
	}
}

static void output_submit(struct output *o, struct vc_frame *f)
{
	struct vc_streams *s = o->hub->s;

	if (o->busy) {
		/* keep only the newest frame waiting; the older one is lost */
		if (o->pending)
			o->busy_drops++;
		vc_frame_unref(o->pending);
		o->pending = vc_frame_ref(f);
		return;
	}
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return;
	/* the pipeline is rebuilt only here, between jobs (o is not busy) */
	if (!o->pipe || o->pipe_gen != o->hub->gen) {
		vc_pipeline_free(o->pipe);
		o->pipe = vc_pipeline_new(&o->hub->target, &o->plan);
		o->pipe_gen = o->hub->gen;
		if (!o->pipe) {
			free(j);
			return;
		}
	}
	j->o = o;
	j->pipe = o->pipe;
	j->gen = o->hub->gen;
	j->src = vc_frame_ref(f);
	if (vc_workers_submit(s->workers, job_work, job_done, j) < 0) {
		vc_frame_unref(j->src);
		free(j);
		return;
	}
	o->busy = 1;
}

/* Whether a camera's JPEG can be sent: corrupt frames are dropped (-1);
 * frames without Huffman tables (many USB webcams) are sent with the
 * standard ones as a separate piece before the first SOS (*dht = its
 * offset, frame_pieces), never copied. */
static int jpeg_sendable(struct output *o, const struct vc_frame *f, size_t *dht)
{
	struct vc_jpeg_info info;

	if (vc_jpeg_parse(f->mem[0], f->bytesused[0], &info) < 0) {
		o->bad_frames++;
		return -1;
	}
	*dht = info.has_dht ? 0 : info.sos_off;
	return 0;
}

/* f is of the hub's target mode (on_frame checked). */
static void output_frame(struct output *o, struct vc_frame *f)
{
	if (vc_pipeline_zero_copy(&o->plan, f)) {
		size_t dht = 0;

		/* zero copy: the capture frame itself */
		if (f->fmt->layout != VC_LAYOUT_COMPRESSED || jpeg_sendable(o, f, &dht) == 0)
			output_publish(o, vc_frame_ref(f), dht);
	} else {
		output_submit(o, f); /* includes repacking padded strides */
	}
}

static void on_frame(void *opaque, struct vc_frame *f)
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
		if (output_users(o))
			output_frame(o, f);
	vc_http_wake(h->s->http);
}

static void on_event(void *opaque, struct vc_cam *cam)
{
	struct hub *h = opaque;
	struct vc_mode actual;
	struct vc_geom g;

	log_debug("cam %s: state %s", vc_cam_id(cam), vc_cam_state_name(vc_cam_get_state(cam)));
	if (vc_cam_get_state(cam) == VC_CAM_ABSENT)
		return;
	vc_cam_get_mode(cam, &actual, &g);
	if (!h->preferred.fourcc && actual.fourcc)
		h->preferred = actual;
	if (h->switching && actual.fourcc && mode_eq(&actual, &h->target))
		h->switching = 0;
	/* the device changed mode by itself (input, reopen): follow it, then
	 * see whether the clients are better served by another */
	if (!h->switching && actual.fourcc && !mode_eq(&actual, &h->target))
		hub_set_target(h, &actual);
	hub_update_mode(h, NULL);
}

/* Frees outputs nobody used for a while (they keep their latest frame for
 * snapshots with max_age_ms in between). */
static void on_gc(evutil_socket_t fd, short what, void *arg)
{
	struct vc_streams *s = arg;
	int64_t now = now_us();

	(void)fd;
	(void)what;
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
		int used = 0;

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

/* ---- streaming clients ---- */

static void client_free(void *cls)
{
	struct client *c = cls;

	log_debug("client %s: stream ended after %" PRIu64 " frames, %" PRIu64 " skipped",
		  c->peer, c->frames, c->skipped);
	DLIST_UNLINK(c->out->clients, c);
	c->out->n_clients--;
	output_unused(c->out);
	if (c->wev)
		event_free(c->wev);
	vc_part_unref(c->part);
	vc_frame_unref(c->cur);
	free(c);
}

/* The bytes of frame f as sent, in up to 3 pieces: a JPEG (with the
 * standard Huffman tables inserted at offset dht when nonzero) or the raw
 * memory planes. Returns the count; *len = their total. */
static unsigned frame_pieces(const struct vc_frame *f, size_t dht, struct MHD_IoVec pc[3],
			     size_t *len)
{
	unsigned n = 0;

	if (f->fmt->layout == VC_LAYOUT_COMPRESSED && dht && dht < f->bytesused[0]) {
		pc[n++] = (struct MHD_IoVec){ f->mem[0], dht };
		pc[n++] = (struct MHD_IoVec){ vc_jpeg_std_dht(), VC_JPEG_DHT_BYTES };
		pc[n++] = (struct MHD_IoVec){ f->mem[0] + dht, f->bytesused[0] - dht };
	} else if (f->fmt->layout == VC_LAYOUT_COMPRESSED) {
		pc[n++] = (struct MHD_IoVec){ f->mem[0], f->bytesused[0] };
	} else {
		for (int i = 0; i < f->geom.mem_planes && i < 3; i++)
			pc[n++] = (struct MHD_IoVec){ f->mem[i], f->geom.mem_size[i] };
	}
	*len = 0;
	for (unsigned i = 0; i < n; i++)
		*len += pc[i].iov_len;
	return n;
}

/* The pieces of one stream part of frame f: the frame's bytes, and for
 * MJPEG streams the multipart header (formatted into hdr) before them and
 * a CRLF after. Returns the count; *len = their total. */
static unsigned part_pieces(const struct vc_frame *f, size_t dht, int raw, char hdr[256],
			    struct MHD_IoVec pc[5], size_t *len)
{
	static const char crlf[] = "\r\n";
	struct MHD_IoVec fp[3];
	size_t flen;
	unsigned nf = frame_pieces(f, dht, fp, &flen), n = 0;

	*len = 0;
	if (!raw) {
		int k = snprintf(hdr, 256,
				 "--" BOUNDARY "\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
				 "X-Timestamp: %" PRId64 ".%06" PRId64 "\r\nX-Frame-Seq: %" PRIu64
				 "\r\n\r\n",
				 flen, f->ts_real_us / 1000000, f->ts_real_us % 1000000, f->seq);
		pc[n++] = (struct MHD_IoVec){ hdr, (size_t)k };
	}
	for (unsigned i = 0; i < nf; i++)
		pc[n++] = fp[i];
	if (!raw)
		pc[n++] = (struct MHD_IoVec){ crlf, 2 };
	for (unsigned i = 0; i < n; i++)
		*len += pc[i].iov_len;
	return n;
}

/* Bookkeeping when c starts sending output frame n. */
static void part_begin(struct client *c, uint64_t n, int64_t now)
{
	if (c->sent_n && n > c->sent_n + 1)
		c->skipped += n - c->sent_n - 1;
	c->sent_n = n;
	if (c->fps_limit) {
		int64_t ival = 1000000 / c->fps_limit;
		/* next due relative to the schedule, with 10% slack for jitter */
		c->next_due_us = (c->next_due_us && now - c->next_due_us < ival)
					 ? c->next_due_us + ival : now + ival;
		c->next_due_us -= ival / 10;
	}
}

/* Bookkeeping when c has sent a whole part. */
static void part_end(struct client *c)
{
	int64_t now = now_us();

	c->frames++;
	if (c->last_us && now > c->last_us) {
		double inst = 1e6 / (double)(now - c->last_us);
		c->fps = c->fps ? c->fps * 0.9 + inst * 0.1 : inst;
	}
	c->last_us = now;
}

/* Whether c should start a part of o's latest frame now. */
static int part_due(const struct client *c, const struct output *o, int64_t now)
{
	return o->latest && o->latest_n != c->sent_n && !(c->fps_limit && now < c->next_due_us);
}

/* ---- plain HTTP: parts sent on the socket ---- */

/* The output's latest frame as a part of the given kind, made once for all
 * its clients. NULL on ENOMEM. */
static struct vc_part *output_part(struct output *o, int raw)
{
	if (!o->part[raw]) {
		char hdr[256];
		struct MHD_IoVec pc[5];
		struct iovec iov[5];
		size_t len;
		unsigned n = part_pieces(o->latest, o->latest_dht, raw, hdr, pc, &len);

		for (unsigned i = 0; i < n; i++)
			iov[i] = (struct iovec){ (void *)pc[i].iov_base, pc[i].iov_len };
		o->part[raw] = vc_part_new(iov, n);
	}
	return o->part[raw];
}

/* Hands c back to MHD, which ends the response (and closes: the body is
 * delimited by the close) once the reader says so. */
static void direct_end(struct client *c)
{
	c->ending = 1;
	if (c->wev) /* none yet when the stream ends before its headers went out */
		event_del(c->wev);
	if (c->suspended) {
		c->suspended = 0;
		MHD_resume_connection(c->conn);
		vc_http_wake(c->s->http);
	}
}

/* Waits for c's full socket to drain, at most the client timeout. */
static void direct_wait(struct client *c)
{
	struct timeval tv = { (time_t)vc_http_timeout_s(c->s->http), 0 };

	if (ioctl(c->sock, SIOCOUTQ, &c->outq) < 0)
		c->outq = -1;
	event_add(c->wev, &tv);
}

/* Sends parts to c's socket until the socket is full (then waits for it to
 * drain) or c has the newest frame (then wake_clients calls again). */
static void direct_pump(struct client *c)
{
	for (;;) {
		struct output *o = c->out;

		if (!c->part) {
			int64_t now = now_us();

			if (c->ending || c->s->stopping) {
				direct_end(c);
				return;
			}
			if (!part_due(c, o, now))
				return;
			c->part = vc_part_ref(output_part(o, c->raw));
			if (!c->part) {
				log_warn("client %s: out of memory, dropped", c->peer);
				direct_end(c);
				return;
			}
			c->part_off = 0;
			part_begin(c, o->latest_n, now);
		}
		ssize_t k = vc_part_send(c->part, c->sock, c->part_off);
		if (k == -EAGAIN) {
			direct_wait(c);
			return;
		}
		if (k < 0) {
			log_debug("client %s: %s", c->peer, strerror((int)-k));
			direct_end(c);
			return;
		}
		c->bytes += (uint64_t)k;
		c->part_off += (size_t)k;
		if (c->part_off == c->part->len) {
			vc_part_unref(c->part);
			c->part = NULL;
			part_end(c);
		}
	}
}

static void on_sock_writable(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		int outq, was = c->outq;

		/* writable needs a good part of the buffer free: a slow reader
		 * that still acknowledges data is waited for, not dropped */
		if (was > 0 && ioctl(c->sock, SIOCOUTQ, &outq) == 0 && outq < was) {
			direct_wait(c);
			return;
		}
		log_info("client %s: took nothing for %u s, dropped", c->peer,
			 vc_http_timeout_s(c->s->http));
		direct_end(c);
		return;
	}
	direct_pump(c);
}

/* MHD calls the reader once the response headers are sent: from then on a
 * plain-HTTP client's parts go to the socket from direct_pump, with the
 * connection suspended so MHD leaves the socket alone. */
static ssize_t direct_read(struct client *c)
{
	if (c->ending || c->s->stopping)
		return MHD_CONTENT_READER_END_OF_STREAM; /* the close ends the body: no error to log */
	if (!c->wev) {
		int one = 1;

		c->wev = event_new(c->s->base, c->sock, EV_WRITE, on_sock_writable, c);
		if (!c->wev)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		/* whole parts go out in one send each: push them at once (MHD
		 * may have left the socket corked after the headers) */
		setsockopt(c->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c->suspended = 1;
	MHD_suspend_connection(c->conn);
	event_active(c->wev, EV_WRITE, 0); /* first send from the loop, not inside MHD */
	return 0;
}

/* ---- TLS: MHD's content reader copies parts ---- */

static void start_part(struct client *c, struct vc_frame *f, uint64_t n, size_t dht, int64_t now)
{
	part_begin(c, n, now);
	c->cur = vc_frame_ref(f);
	c->off = 0;
	c->n_pc = part_pieces(f, dht, c->raw, c->hdr, c->pc, &c->part_len);
}

/* Copies part bytes [off, off + max) into buf. */
static size_t copy_part(struct client *c, char *buf, size_t max)
{
	size_t done = 0, base = 0;

	for (unsigned i = 0; i < c->n_pc && done < max; i++) {
		size_t sz = c->pc[i].iov_len;

		if (c->off < base + sz) {
			size_t k = base + sz - c->off;

			if (k > max - done)
				k = max - done;
			memcpy(buf + done, (const uint8_t *)c->pc[i].iov_base + (c->off - base), k);
			done += k;
			c->off += k;
		}
		base += sz;
	}
	return done;
}

static ssize_t client_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct client *c = cls;
	struct output *o = c->out;

	(void)pos;
	if (c->sock >= 0)
		return direct_read(c);
	if (!c->cur) {
		int64_t now = now_us();

		if (c->ending || c->s->stopping)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!part_due(c, o, now)) {
			/* nothing new: sleep until output_frame() wakes us */
			c->suspended = 1;
			MHD_suspend_connection(c->conn);
			return 0;
		}
		start_part(c, o->latest, o->latest_n, o->latest_dht, now);
	}
	size_t n = copy_part(c, buf, max);
	c->bytes += n;
	if (c->off >= c->part_len) {
		vc_frame_unref(c->cur);
		c->cur = NULL;
		part_end(c);
	}
	return (ssize_t)n;
}

/* Adds the headers stating a raw frame's format precisely. */
static void raw_headers(struct MHD_Response *resp, const struct vc_output *o,
			const struct vc_frame *f)
{
	char buf[64], fcc[16];
	const struct vc_fmt *fmt = vc_fmt_by_fourcc(o->fourcc);
	struct vc_geom g;

	if (!fmt || vc_fmt_geometry(fmt, o->width, o->height, 0, &g) < 0)
		return;
	MHD_add_response_header(resp, "X-Fourcc", vc_fourcc_str(o->fourcc, fcc));
	MHD_add_response_header(resp, "X-Format", fmt->name);
	snprintf(buf, sizeof(buf), "%u", o->width);
	MHD_add_response_header(resp, "X-Width", buf);
	snprintf(buf, sizeof(buf), "%u", o->height);
	MHD_add_response_header(resp, "X-Height", buf);
	snprintf(buf, sizeof(buf), "%u", g.plane[0].stride);
	MHD_add_response_header(resp, "X-Bytesperline", buf);
	snprintf(buf, sizeof(buf), "%zu", g.sizeimage);
	MHD_add_response_header(resp, "X-Sizeimage", buf);
	if (f) {
		snprintf(buf, sizeof(buf), "%u", f->color.colorspace);
		MHD_add_response_header(resp, "X-Colorspace", buf);
		snprintf(buf, sizeof(buf), "%u/%u/%u", f->color.ycbcr_enc, f->color.quantization,
			 f->color.xfer_func);
		MHD_add_response_header(resp, "X-Colorimetry", buf);
		snprintf(buf, sizeof(buf), "%u", f->field ? f->field : V4L2_FIELD_NONE);
		MHD_add_response_header(resp, "X-Field", buf);
	}
}

static void plan_headers(struct MHD_Response *resp, const struct vc_plan *p)
{
	char buf[128];

	MHD_add_response_header(resp, "X-Steps",
				vc_steps_str(p->steps, p->decode_denom, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%ux%u", p->out.width, p->out.height);
	MHD_add_response_header(resp, "X-Size", buf);
}

/* 503 for a request that cannot be served now: shutting down or camera absent. */
static enum MHD_Result refuse_unavailable(const struct vc_streams *s, struct vc_http_req *r,
					  const struct vc_cam *cam)
{
	if (s->stopping)
		return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting down");
	return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "camera %s is absent", vc_cam_id(cam));
}

/* The output serving the parameters of r (parsed, camera present, mode
 * updated): NULL with *res the answer (404, 400, 503) when there is none. */
static struct output *request_output(struct vc_streams *s, struct vc_http_req *r, int raw,
				     struct vc_params *p, enum MHD_Result *res)
{
	struct vc_cam *cam;

	if (vc_streams_request(s, r, raw, p, &cam, res) < 0)
		return NULL;
	if (s->stopping || vc_cam_get_state(cam) == VC_CAM_ABSENT) {
		*res = refuse_unavailable(s, r, cam);
		return NULL;
	}
	struct hub *h = hub_for(s, cam);
	struct output *o = h ? output_get(h, &p->req) : NULL;
	if (!o)
		*res = vc_http_error(r, MHD_HTTP_BAD_REQUEST, "cannot serve this request");
	return o;
}

static enum MHD_Result start_stream(struct vc_streams *s, struct vc_http_req *r, int raw)
{
	struct vc_params p;
	enum MHD_Result res;
	struct output *o = request_output(s, r, raw, &p, &res);

	if (!o)
		return res;
	struct hub *h = o->hub;
	struct vc_request req = p.req;
	if (raw && (!req.width || !req.height)) {
		/* a raw stream has no per-frame header: pin the size it starts
		 * with, so a later mode change (other clients) scales to it
		 * instead of changing the frame size under this client */
		req.width = o->plan.out.width;
		req.height = o->plan.out.height;
		if (!output_users(o))
			o->req = req;
	}

	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		return MHD_NO;
	c->s = s;
	c->out = o;
	c->conn = r->conn;
	c->raw = raw;
	c->req = req;
	/* this client's own maximum: the output's plan.fps comes from the
	 * request that created the output (maybe another client's) */
	c->fps_limit = req.fps;
	c->sent_n = o->latest_n; /* start with the next fresh frame */
	vc_http_peer(r, c->peer, sizeof(c->peer));
	c->sock = vc_http_plain_socket(s->http, r->conn);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, client_read, c, client_free);
	if (!resp) {
		free(c);
		return MHD_NO;
	}
	/* we write the body ourselves (direct_pump): no chunked framing, the
	 * body ends with the connection (HTTP/1.1 status line, Connection: close) */
	if (c->sock >= 0 && MHD_set_response_options(resp, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT,
						     MHD_RO_END) != MHD_YES)
		c->sock = -1;
	/* linked before queueing: client_free (called when resp dies) unlinks */
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	hub_acquire(h);
	if (raw)
		raw_headers(resp, &o->plan.out, NULL);
	else
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"multipart/x-mixed-replace;boundary=" BOUNDARY);
	if (raw)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	plan_headers(resp, &o->plan);
	MHD_add_response_header(resp, "Pragma", "no-cache");
	/* nginx honours this per response: a stream is never held in proxy
	 * buffers even where the site config left proxy_buffering on */
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	log_debug("client %s: %s stream on cam %s", c->peer, raw ? "raw" : "mjpeg", vc_cam_id(h->cam));
	return vc_http_queue(r, MHD_HTTP_OK, resp);
}

static enum MHD_Result h_stream(void *opaque, struct vc_http_req *r)
{
	return start_stream(opaque, r, 0);
}

static enum MHD_Result h_raw_stream(void *opaque, struct vc_http_req *r)
{
	return start_stream(opaque, r, 1);
}

/* ---- snapshots (JPEG or raw) ---- */

static void waiter_unlink(struct waiter *w)
{
	struct output *o = w->out;

	if (!o)
		return;
	DLIST_UNLINK(o->waiters, w);
	o->n_waiters--;
	w->out = NULL;
	output_unused(o);
}

static void waiter_free(void *p)
{
	struct waiter *w = p;

	waiter_unlink(w);
	if (w->timer)
		event_free(w->timer);
	vc_frame_unref(w->frame);
	free(w);
}

static void on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct waiter *w = arg;

	(void)fd;
	(void)what;
	if (w->resumed)
		return;
	w->timed_out = 1;
	w->resumed = 1;
	MHD_resume_connection(w->conn);
	vc_http_wake(w->s->http);
}

static void frame_free_cb(void *cls)
{
	vc_frame_unref(cls);
}

/* If-None-Match is a comma list of entity tags compared weakly (RFC 9110
 * 13.1.2): "*", or any member equal to etag with or without W/. */
static int etag_match(const char *inm, const char *etag)
{
	size_t el = strlen(etag);

	while (*inm) {
		while (*inm == ' ' || *inm == '\t' || *inm == ',')
			inm++;
		if (*inm == '*')
			return 1;
		if (inm[0] == 'W' && inm[1] == '/')
			inm += 2;
		const char *end = inm;
		if (*end == '"') {
			end = strchr(end + 1, '"');
			end = end ? end + 1 : inm + strlen(inm);
		} else {
			end += strcspn(end, ",");
		}
		if ((size_t)(end - inm) == el && !memcmp(inm, etag, el))
			return 1;
		inm = end;
		inm += strcspn(inm, ",");
	}
	return 0;
}

/* Responds with frame f straight from its memory (no copy; dht: see
 * output.latest_dht): the response's free callback drops the reference. */
static enum MHD_Result send_frame(struct vc_http_req *r, const struct output *o,
				  struct vc_frame *f, size_t dht, int raw)
{
	char etag[96], fcc[16], buf[64];
	const char *inm = vc_http_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);

	/* the sequence restarts with every STREAMON (mode change, reopen,
	 * daemon restart): the capture time keeps the tag unique */
	snprintf(etag, sizeof(etag), "\"%" PRIu64 ".%" PRId64 "-%s-%ux%u-q%u-r%u-f%u\"", f->seq,
		 f->ts_us, vc_fourcc_str(o->plan.out.fourcc, fcc), o->plan.out.width, o->plan.out.height, o->plan.out.quality,
		 o->plan.out.rotate, o->plan.out.flip);
	if (inm && etag_match(inm, etag)) {
		struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
		/* what the 200 would say: a cache keeps revalidating, not drops it */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
		return vc_http_queue(r, MHD_HTTP_NOT_MODIFIED, resp);
	}
	struct MHD_IoVec iov[3];
	size_t len;
	unsigned n = frame_pieces(f, dht, iov, &len);
	vc_frame_ref(f);
	struct MHD_Response *resp = MHD_create_response_from_iovec(iov, n, frame_free_cb, f);
	if (!resp) {
		vc_frame_unref(f);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				raw ? "application/octet-stream" : "image/jpeg");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	snprintf(buf, sizeof(buf), "%" PRId64 ".%06" PRId64, f->ts_real_us / 1000000,
		 f->ts_real_us % 1000000);
	MHD_add_response_header(resp, "X-Timestamp", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, f->seq);
	MHD_add_response_header(resp, "X-Frame-Seq", buf);
	if (raw)
		raw_headers(resp, &o->plan.out, f);
	plan_headers(resp, &o->plan);
	return vc_http_queue(r, MHD_HTTP_OK, resp);
}

static enum MHD_Result snapshot(struct vc_streams *s, struct vc_http_req *r, int raw)
{
	struct waiter *w = r->state;

	if (w) { /* called again after resume */
		struct output *o = w->out;
		struct vc_frame *f = w->frame;

		w->done = 1;
		if (!f || !o)
			return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
					     s->stopping ? "shutting down"
					     : o && !o->hub->cam ? "camera removed"
					     : "no frame from the camera within %d ms",
					     SNAPSHOT_TIMEOUT_MS);
		enum MHD_Result ret = send_frame(r, o, f, w->frame_dht, raw);
		waiter_unlink(w);
		return ret;
	}

	struct vc_params p;
	enum MHD_Result res;
	struct output *o = request_output(s, r, raw, &p, &res);

	if (!o)
		return res;
	if (o->latest && (p.given & VC_PARAM_MAX_AGE) &&
	    now_us() - o->latest->ts_us <= (int64_t)p.max_age_ms * 1000)
		return send_frame(r, o, o->latest, o->latest_dht, raw);

	w = calloc(1, sizeof(*w));
	if (!w)
		return MHD_NO;
	w->s = s;
	w->out = o;
	w->conn = r->conn;
	w->raw = raw;
	w->req = p.req;
	w->timer = evtimer_new(s->base, on_waiter_timeout, w);
	if (!w->timer) {
		free(w);
		return MHD_NO;
	}
	DLIST_PUSH(o->waiters, w);
	o->n_waiters++;
	r->state = w;
	r->state_free = waiter_free;
	struct timeval tv = { SNAPSHOT_TIMEOUT_MS / 1000, (SNAPSHOT_TIMEOUT_MS % 1000) * 1000 };
	evtimer_add(w->timer, &tv);
	hub_acquire(o->hub);
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

static enum MHD_Result h_snapshot(void *opaque, struct vc_http_req *r)
{
	return snapshot(opaque, r, 0);
}

static enum MHD_Result h_raw(void *opaque, struct vc_http_req *r)
{
	return snapshot(opaque, r, 1);
}

/* ---- setup, lookups, stats ---- */

int vc_streams_new(struct event_base *base, struct vc_http *http, struct vc_cam *const *cams,
		   size_t n, struct vc_streams **out)
{
	struct vc_streams *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->base = base;
	s->http = http;
	s->gc = event_new(base, -1, EV_PERSIST, on_gc, s);
	int ret = vc_workers_new(base, 0, &s->workers);
	if (ret < 0 || !s->gc) {
		vc_streams_free(s);
		return ret < 0 ? ret : -ENOMEM;
	}
	struct timeval tv = { 1, 0 };
	event_add(s->gc, &tv);
	for (size_t i = 0; i < n; i++) {
		ret = vc_streams_add_cam(s, cams[i]);
		if (ret < 0) {
			vc_streams_free(s);
			return ret;
		}
	}
	*out = s;
	return 0;
}

int vc_streams_add_cam(struct vc_streams *s, struct vc_cam *cam)
{
	if (s->n_hubs == s->cap_hubs) {
		size_t cap = s->cap_hubs ? 2 * s->cap_hubs : 8;
		struct hub **nh = realloc(s->hubs, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		s->hubs = nh;
		s->cap_hubs = cap;
	}
	struct hub *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->s = s;
	h->cam = cam;
	s->hubs[s->n_hubs++] = h;
	vc_cam_set_callbacks(cam, on_frame, on_event, h);
	return 0;
}

/* Lets go of h's camera: no more frames or events, no consumer count. */
static void hub_detach(struct hub *h)
{
	vc_cam_set_callbacks(h->cam, NULL, NULL, NULL);
	if (h->acquired) {
		h->acquired = 0;
		vc_cam_release(h->cam);
	}
}

/* Every stream of h ends after the part being sent; every waiting snapshot
 * wakes up without a frame (503). */
static void hub_end_users(struct hub *h)
{
	for (struct output *o = h->outputs; o; o = o->next) {
		for (struct client *c = o->clients; c; c = c->next) {
			c->ending = 1;
			if (c->sock >= 0) {
				if (!c->part) /* else direct_pump ends it after the part */
					direct_end(c);
			} else if (c->suspended) {
				c->suspended = 0;
				MHD_resume_connection(c->conn);
			}
		}
		for (struct waiter *w = o->waiters; w; w = w->next) {
			if (!w->resumed) {
				w->resumed = 1;
				MHD_resume_connection(w->conn);
			}
		}
	}
}

int vc_streams_remove_cam(struct vc_streams *s, struct vc_cam *cam)
{
	struct hub *h = hub_for(s, cam);
	size_t i = 0;

	if (!h)
		return -ENOENT;
	while (s->hubs[i] != h)
		i++;
	memmove(&s->hubs[i], &s->hubs[i + 1], (s->n_hubs - i - 1) * sizeof(*s->hubs));
	s->n_hubs--;
	hub_detach(h);
	h->cam = NULL;
	h->gen++; /* results of jobs in flight are dropped */
	hub_end_users(h);
	/* freed by on_gc once no client, snapshot or job points at it */
	h->next_dying = s->dying;
	s->dying = h;
	vc_http_wake(s->http);
	return 0;
}

int vc_streams_replace_cam(struct vc_streams *s, struct vc_cam *old, struct vc_cam *cam)
{
	struct hub *h = hub_for(s, old);

	if (!h)
		return -ENOENT;
	int acquired = h->acquired;

	hub_detach(h);
	h->cam = cam;
	/* forget the old device's modes: the first event of the new one sets
	 * them, re-plans the outputs and renegotiates for the clients */
	memset(&h->target, 0, sizeof(h->target));
	memset(&h->preferred, 0, sizeof(h->preferred));
	h->switching = 0;
	h->gen++;
	for (struct output *o = h->outputs; o; o = o->next)
		output_drop_frames(o);
	vc_cam_set_callbacks(cam, on_frame, on_event, h);
	if (acquired)
		hub_acquire(h);
	return 0;
}

void vc_streams_shutdown(struct vc_streams *s)
{
	s->stopping = 1;
	for (size_t i = 0; i < s->n_hubs; i++)
		hub_end_users(s->hubs[i]);
	vc_http_wake(s->http);
}

void vc_streams_free(struct vc_streams *s)
{
	if (!s)
		return;
	/* jobs still queued or running finish here (their done drops results) */
	s->freeing = 1;
	vc_workers_free(s->workers);
	for (size_t i = 0; i < s->n_hubs; i++) {
		hub_detach(s->hubs[i]);
		hub_free(s->hubs[i]);
	}
	while (s->dying) {
		struct hub *h = s->dying;

		s->dying = h->next_dying;
		hub_free(h);
	}
	if (s->gc)
		event_free(s->gc);
	free(s->hubs);
	free(s);
}

int vc_streams_routes(struct vc_streams *s, struct vc_http *http)
{
	static const struct vc_http_route_def t[] = {
		{ "GET", "/stream", 0, h_stream }, { "GET", "/snapshot", 0, h_snapshot },
		{ "GET", "/raw", 0, h_raw },       { "GET", "/raw/stream", 0, h_raw_stream },
	};

	return vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), s);
}

size_t vc_streams_n_cams(const struct vc_streams *s)
{
	return s->n_hubs;
}

struct vc_cam *vc_streams_cam(const struct vc_streams *s, size_t i)
{
	return i < s->n_hubs ? s->hubs[i]->cam : NULL;
}

struct vc_cam *vc_streams_find(const struct vc_streams *s, const char *id)
{
	if (!s->n_hubs)
		return NULL;
	if (!id || !*id)
		return s->hubs[0]->cam;
	for (size_t i = 0; i < s->n_hubs; i++)
		if (strcmp(vc_cam_id(s->hubs[i]->cam), id) == 0)
			return s->hubs[i]->cam;
	return NULL;
}

void vc_streams_outputs(const struct vc_streams *s, size_t cam, vc_output_info_cb cb, void *opaque)
{
	if (cam >= s->n_hubs)
		return;
	for (const struct output *o = s->hubs[cam]->outputs; o; o = o->next) {
		if (o->merged)
			continue; /* an empty shell waiting for its job */
		struct vc_output_info oi = {
			.out = o->plan.out, .plan = o->plan, .clients = o->n_clients,
			.produced = o->latest_n, .busy_drops = o->busy_drops,
			.process_ms = o->process_ms, .fps = o->fps,
		};
		cb(opaque, &oi);
	}
}

void vc_streams_clients(const struct vc_streams *s, size_t cam, vc_client_info_cb cb, void *opaque)
{
	if (cam >= s->n_hubs)
		return;
	for (const struct output *o = s->hubs[cam]->outputs; o; o = o->next) {
		for (const struct client *c = o->clients; c; c = c->next) {
			/* frames between the one being sent and the latest are
			 * already lost to this client: count them now */
			struct vc_client_info ci = {
				.raw = c->raw, .out = o->plan.out, .frames = c->frames,
				.skipped = c->skipped + (o->latest_n > c->sent_n + 1
							 ? o->latest_n - c->sent_n - 1 : 0),
				.bytes = c->bytes, .fps = c->fps,
				.fps_limit = c->fps_limit,
			};
			snprintf(ci.peer, sizeof(ci.peer), "%s", c->peer);
			cb(opaque, &ci);
		}
	}
}

int vc_streams_try(const struct vc_streams *s, struct vc_cam *cam, const struct vc_request *req,
		   struct vc_plan *plan, struct vc_mode *mode)
{
	const struct hub *h = hub_for(s, cam);

	if (!h || vc_cam_get_state(cam) == VC_CAM_ABSENT)
		return -ENODEV;
	const struct vc_caps *caps = vc_cam_caps(cam);
	struct vc_request *reqs;
	size_t n = 0;
	struct vc_mode cur;

	if (!caps || !caps->n_fmts)
		return -ENODEV;
	/* the same question hub_update_mode() asks when this request arrives */
	const struct vc_mode *curp, *prefp;

	if (!(reqs = hub_requests(h, &n)))
		return -ENOMEM;
	hub_negotiate_from(h, n, &cur, &curp, &prefp);
	reqs[n++] = *req;
	int ret = vc_negotiate_mode(caps, curp, prefp, reqs, n, mode);
	free(reqs);
	if (ret < 0)
		return -ENODEV;
	mode_fill_rate(mode, cam);
	return vc_negotiate_plan(mode, req, plan);
}

/* ---- request parameters ---- */

int vc_streams_parse(const struct vc_streams *s, const struct vc_http_req *r, int raw,
		     struct vc_params *p, struct vc_cam **cam, char *err, size_t errlen)
{
	char q[VC_PARAMS_MAX_QUERY + 1];
	int ret;

	*cam = NULL;
	/* /api/try's own "endpoint" is not a picture parameter (elsewhere it
	 * would only be ignored like any unknown one) */
	if (vc_http_query(r, "endpoint", q, sizeof(q)) < 0) {
		memset(p, 0, sizeof(*p));
		snprintf(err, errlen, "query string longer than %d bytes", VC_PARAMS_MAX_QUERY);
		return -EINVAL;
	}
	ret = vc_params_parse(q, p, err, errlen);
	if (ret < 0)
		return ret;
	*cam = vc_streams_find(s, p->cam);
	if (!*cam) {
		snprintf(err, errlen, "unknown cam '%.63s'", p->cam);
		return -ENOENT;
	}
	/* serving rules on top of the parser: a value outside what the API
	 * documents is refused rather than silently changed */
	if (p->flags & VC_PARAMS_QUALITY_CLAMPED) {
		snprintf(err, errlen, "quality must be 1..100");
		return -EINVAL;
	}
	if ((p->given & VC_PARAM_FPS) && !p->req.fps) {
		snprintf(err, errlen, "fps must be 1..1000 (leave it out for the device's rate)");
		return -EINVAL;
	}
	if (p->req.rotate % 90) {
		snprintf(err, errlen, "rotate must be 0, 90, 180 or 270, not %u", p->req.rotate);
		return -EINVAL;
	}
	const struct vc_fmt *f = vc_fmt_by_fourcc(p->req.fourcc);
	int jpeg = f && f->layout == VC_LAYOUT_COMPRESSED;
	if (raw < 0) /* /api/try: the format decides the endpoint, JPEG by default */
		raw = f && !jpeg;
	/* the endpoint fixes the family: /stream and /snapshot are JPEG, /raw
	 * and /raw/stream raw pixels */
	if (f && jpeg == raw) {
		char fcc[16];

		snprintf(err, errlen, "format %s not served here (%s)", vc_fourcc_str(f->fourcc, fcc),
			 raw ? "use /snapshot or /stream for JPEG" : "use /raw for raw pixels");
		return -EINVAL;
	}
	if (!raw) {
		p->req.fourcc = V4L2_PIX_FMT_MJPEG;
	} else if (!p->req.fourcc) { /* the device's format when raw, else YUYV */
		struct vc_mode m;
		struct vc_geom g;

		vc_cam_get_mode(*cam, &m, &g);
		f = vc_fmt_by_fourcc(m.fourcc);
		p->req.fourcc = f && f->layout != VC_LAYOUT_COMPRESSED ? m.fourcc : V4L2_PIX_FMT_YUYV;
	}
	return 0;
}

int vc_streams_request(const struct vc_streams *s, struct vc_http_req *r, int raw,
		       struct vc_params *p, struct vc_cam **cam, enum MHD_Result *res)
{
	char err[192];
	int ret = vc_streams_parse(s, r, raw, p, cam, err, sizeof(err));

	if (ret == 0)
		return 0;
	*res = vc_http_error(r, ret == -ENOENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_BAD_REQUEST, "%s", err);
	return -1;
}
