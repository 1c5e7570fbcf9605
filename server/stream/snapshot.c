/* One-shot requests: /snapshot (JPEG) and /raw. A request either gets the
 * output's latest frame at once (max_age_ms) or waits (a waiter on the
 * output) for the next one, at most SNAPSHOT_TIMEOUT_MS (longer while its
 * output works on a frame: snapshot_keep_waiting); the frame is sent
 * from its own memory, the MHD response holding one reference (ETag,
 * If-None-Match answered with 304). */
#define LOG_PREFIX "stream:"
#include "server/stream/serve_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The camera's frame came and is on the worker pool for w's output (the
 * hardware encoders take milliseconds: not waited for): its picture is
 * near. On a saturated CPU a 1080p snapshot's encode waited 2.3 s for a
 * worker and took 3 s; the snapshot was refused "no frame from the camera"
 * 0.8 s before its picture was done (the day test's guest beside a CPU
 * hog). A worker that never ends is still a 503, SNAPSHOT_WORK_MS after
 * the request. */
int snapshot_keep_waiting(const struct waiter *w, int64_t now)
{
	return w->out && w->out->busy && now - w->since_us < (int64_t)SNAPSHOT_WORK_MS * 1000;
}

static void on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct waiter *w = arg;

	(void)fd;
	(void)what;
	if (w->resumed)
		return;
	if (snapshot_keep_waiting(w, now_us())) {
		struct timeval tv = { 0, 200 * 1000 };

		evtimer_add(w->timer, &tv);
		return;
	}
	w->timed_out = 1;
	w->resumed = 1;
	MHD_resume_connection(w->conn);
	vc_http_wake(w->s->http);
}

void snapshot_wake(struct waiter *w)
{
	struct output *o = w->out;

	if (w->resumed)
		return;
	w->frame = vc_frame_ref(o->latest);
	w->frame_dht = o->latest_dht;
	w->resumed = 1;
	MHD_resume_connection(w->conn);
}

void snapshot_on_event(void *opaque, enum stream_ev ev, int64_t now)
{
	struct waiter *w = opaque;

	(void)now;
	if (ev == STREAM_EV_DATA) {
		snapshot_wake(w);
	} else if (!w->resumed) { /* wakes without a frame: 503 */
		w->resumed = 1;
		MHD_resume_connection(w->conn);
	}
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
	struct iovec pcs[3];
	struct MHD_IoVec iov[3];
	size_t len;
	unsigned n = client_frame_pieces(f, dht, pcs, &len);

	for (unsigned i = 0; i < n; i++)
		iov[i] = (struct MHD_IoVec){ pcs[i].iov_base, pcs[i].iov_len };
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
		stream_raw_headers(resp, &o->plan.out, f);
	stream_plan_headers(resp, &o->plan);
	return vc_http_queue(r, MHD_HTTP_OK, resp);
}

enum MHD_Result snapshot_serve(struct vc_streams *s, struct vc_http_req *r, int raw)
{
	struct waiter *w = r->state;

	if (w) { /* called again after resume */
		struct output *o = w->out;
		struct vc_frame *f = w->frame;
		/* timed out past SNAPSHOT_WORK_MS with its frame still on a worker */
		int encoding = w->timed_out && o && o->busy;

		w->done = 1;
		if (!f || !o)
			return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
					     s->stopping ? "shutting down"
					     : o && !o->hub->cam ? "camera removed"
					     : encoding ? "no picture within %d ms: its frame is still being encoded"
					     : "no frame from the camera within %d ms",
					     encoding ? SNAPSHOT_WORK_MS : SNAPSHOT_TIMEOUT_MS);
		enum MHD_Result ret = send_frame(r, o, f, w->frame_dht, raw);
		waiter_unlink(w);
		return ret;
	}

	struct vc_params p;
	enum MHD_Result res;
	struct output *o = stream_request_output(s, r, raw, HUB_ONESHOT, &p, &res);

	if (!o)
		return res;
	if (o->latest && !o->placeholder && (p.given & VC_PARAM_MAX_AGE) &&
	    now_us() - o->latest->ts_us <= (int64_t)p.max_age_ms * 1000 &&
	    policy_oneshot_ready(o->hub, &p.req))
		return send_frame(r, o, o->latest, o->latest_dht, raw);

	w = calloc(1, sizeof(*w));
	if (!w)
		return MHD_NO;
	w->s = s;
	w->out = o;
	w->wake = (struct stream_wake){ snapshot_on_event, w };
	w->conn = r->conn;
	w->raw = raw;
	w->req = p.req;
	vc_guard_addr_key(vc_http_peer_addr(r), &w->addr);
	w->dflt = stream_default_picture(raw, &p);
	w->since_us = now_us();
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
