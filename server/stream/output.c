/* Outputs: per camera one per distinct delivered picture. A frame of the
 * hub's target mode comes in (output_frame), is converted/encoded once per
 * output on the worker pool by the output's pipeline (jobs), or passed
 * through by reference, and published as the output's `latest`, waking its
 * clients and waiting snapshots. Outputs re-planned to the same picture are
 * merged, users whose requests now differ split off; the gc frees outputs
 * unused for a while and removed cameras' hubs. */
#define LOG_PREFIX "stream:"
#include "server/stream/stream_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "server/stream/hwenc.h"
#include "server/workers.h"

static void output_drop_parts(struct output *o)
{
	for (int i = 0; i < 3; i++) {
		vc_part_unref(o->part[i]);
		o->part[i] = NULL;
	}
}

/* Drops the frames an output made or holds from the previous mode. */
void output_drop_frames(struct output *o)
{
	vc_frame_unref(o->latest);
	o->latest = NULL;
	o->latest_dht = 0;
	output_drop_parts(o);
	vc_frame_unref(o->pending);
	o->pending = NULL;
	o->placeholder = 0;
	h264_out_drop(o);
}

/* The capture frames an output keeps (its latest on passthrough, the one
 * waiting for a busy job), not its H.264 state: an encoder's own frames are
 * no capture buffers, and its GOP and timing go on across the restart. */
void output_give_back(struct output *o)
{
	if (h264_out_is(o))
		return;
	vc_frame_unref(o->latest);
	o->latest = NULL;
	o->latest_dht = 0;
	vc_frame_unref(o->pending);
	o->pending = NULL;
}

/* Outputs that re-planned to the same picture become one: every client and
 * waiting snapshot of `from` moves to `to`, so one encode serves them all.
 * `from` is freed, or, while a job of it runs, left empty and marked for
 * the gc (job_done still points at it). */
void output_merge(struct output *to, struct output *from)
{
	while (from->clients) {
		struct client *c = from->clients;

		USER_MOVE(from, to, clients, n_clients, c);
		c->sent_n = to->latest_n; /* next part: to's next frame */
		if (c->h264)
			h264_out_moved(to, c); /* another encoder */
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

void output_split(struct hub *h, struct output *o)
{
	unsigned had = output_users(o);
	struct client *cn;
	struct waiter *wn;
	struct output *to;

	for (struct client *c = o->clients; c; c = cn) {
		cn = c->next;
		if ((to = split_target(h, o, &c->req))) {
			USER_MOVE(o, to, clients, n_clients, c);
			c->sent_n = to->latest_n;
			if (c->h264)
				h264_out_moved(to, c);
		}
	}
	for (struct waiter *w = o->waiters; w; w = wn) {
		wn = w->next;
		if ((to = split_target(h, o, &w->req)))
			USER_MOVE(o, to, waiters, n_waiters, w);
	}
	/* idle from now only if it had users: an idle output's grace is not
	 * restarted by every mode change (they kept outputs forever) */
	if (had && !output_users(o))
		o->idle_since_us = now_us();
}

void output_free(struct output *o)
{
	DLIST_UNLINK(o->hub->outputs, o);
	hwenc_free(o);
	output_drop_parts(o);
	vc_frame_unref(o->latest);
	vc_frame_unref(o->pending);
	vc_pipeline_free(o->pipe);
	h264_out_free(o);
	free(o);
}

/* Called when an output loses a user: once nobody uses the hub's outputs the
 * camera is released (capture.c stops it after its idle time). */
void output_unused(struct output *o)
{
	struct hub *h = o->hub;

	policy_user_left(h);
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

/* The output delivering plan (req planned against the hub's target), made
 * when there is none. NULL on ENOMEM. */
struct output *output_for_plan(struct hub *h, const struct vc_request *req,
			       const struct vc_plan *pl)
{
	const struct vc_plan plan = *pl;

	for (struct output *o = h->outputs; o; o = o->next)
		if (!o->merged && !o->refused && vc_output_equal(&o->plan.out, &plan.out)) {
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

static void wake_clients(struct output *o, int64_t now)
{
	for (struct client *c = o->clients; c; c = c->next)
		stream_notify(&c->wake, STREAM_EV_DATA, now);
	for (struct waiter *w = o->waiters; w && !o->placeholder; w = w->next)
		if (policy_oneshot_ready(o->hub, &w->req))
			stream_notify(&w->wake, STREAM_EV_DATA, now);
}

void output_publish(struct output *o, struct vc_frame *res, size_t dht, int placeholder)
{
	vc_frame_unref(o->latest);
	output_drop_parts(o);
	o->latest = res;
	o->latest_dht = dht;
	o->latest_n++;
	o->placeholder = placeholder;
	int64_t now = now_us();
	if (o->last_us && now > o->last_us) {
		double inst = 1e6 / (double)(now - o->last_us);
		o->fps = o->fps ? o->fps * 0.9 + inst * 0.1 : inst;
	}
	o->last_us = now;
	if (h264_out_is(o))
		h264_out_published(o);
	wake_clients(o, now);
}

/* One convert/encode on the worker pool. */
struct job {
	struct output *o;
	struct vc_pipeline *pipe; /* the output's; not replaced while the job runs */
	uint64_t gen;             /* hub generation the pipeline belongs to */
	struct vc_frame *src, *res;
	int ret;
	int64_t t0, t_start, t_work; /* submitted, started (monotonic us), work time */
};

static void output_submit(struct output *o, struct vc_frame *f);

static void job_work(void *arg, unsigned worker)
{
	struct job *j = arg;
	int64_t t = now_us();

	(void)worker; /* pipelines belong to outputs, not to worker threads */
	j->t_start = t;
	j->ret = vc_pipeline_run(j->pipe, j->src, &j->res);
	j->t_work = now_us() - t;
}

/* When an output was busy with a frame (debug): what a stream client's gaps
 * are measured against in tests/vm/day.sh. Epoch seconds: submitted,
 * started, finished on the worker, picked up by the loop (now). */
static void job_log(const struct job *j, int64_t ts_real_us)
{
	struct timespec rt;
	const struct output *o = j->o;
	int64_t mono = now_us();

	clock_gettime(CLOCK_REALTIME, &rt);
	double now = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9;
	log_debug("cam %s: output %ux%u q%u: frame ts %lld.%06lld submitted %.6f started %.6f "
		  "worked %.6f done %.6f", o->hub->cam ? vc_cam_id(o->hub->cam) : "-",
		  o->plan.out.width, o->plan.out.height, o->plan.out.quality,
		  (long long)(ts_real_us / 1000000), (long long)(ts_real_us % 1000000),
		  now - (double)(mono - j->t0) / 1e6, now - (double)(mono - j->t_start) / 1e6,
		  now - (double)(mono - j->t_start - j->t_work) / 1e6, now);
}

static void job_done(void *arg, int status)
{
	struct job *j = arg;
	struct output *o = j->o;
	struct vc_streams *s = o->hub->s;
	int64_t ts = j->src->ts_real_us;

	o->busy = 0;
	vc_frame_unref(j->src);
	if (s->freeing || status < 0 || j->ret < 0 || j->gen != o->hub->gen) {
		if (!s->freeing && j->ret < 0 && j->ret != -EAGAIN && o->hub->cam)
			log_debug("cam %s: frame: %s", vc_cam_id(o->hub->cam), strerror(-j->ret));
		vc_frame_unref(j->res);
	} else {
		double ms = (double)j->t_work / 1000.0;

		o->process_ms = o->process_ms ? o->process_ms * 0.9 + ms * 0.1 : ms;
		if (vc_log_level >= VC_LOG_DEBUG)
			job_log(j, ts);
		output_publish(o, j->res, 0, 0);
		s->kick(s->http);
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
	j->t0 = now_us();
	if (vc_workers_submit(s->workers, job_work, job_done, j) < 0) {
		vc_frame_unref(j->src);
		free(j);
		return;
	}
	o->busy = 1;
}

/* f is of the hub's target mode (hub_on_frame checked). */
void output_frame(struct output *o, struct vc_frame *f)
{
	if (h264_out_is(o) && !h264_out_due(o, f))
		return; /* above the output's rate: not encoded at all */
	if (vc_pipeline_zero_copy(&o->plan, f)) {
		size_t dht = 0;

		/* zero copy: the capture frame itself. Capture parsed its JPEG
		 * and dropped corrupt ones; one without Huffman tables (many USB
		 * webcams) is sent with the standard ones as a separate piece
		 * before the first SOS (dht = its offset, client_frame_pieces), never
		 * copied. An unchecked JPEG cannot come from capture: not sent. */
		if (h264_out_is(o)) { /* an H.264 camera's own stream */
			struct vc_frame *p = h264_out_pass(o, f);

			if (p)
				output_publish(o, p, 0, 0);
			return;
		}
		if (f->fmt->layout == VC_LAYOUT_COMPRESSED) {
			if (!f->jpeg.checked)
				return;
			dht = f->jpeg.has_dht ? 0 : f->jpeg.sos_off;
		}
		output_publish(o, vc_frame_ref(f), dht, 0);
	} else if (!hwenc_frame(o, f)) { /* a hardware JPEG encoder took it, or not */
		output_submit(o, f); /* includes repacking padded strides */
	}
}
