/* HLS over HTTP (issue 24): GET /stream.m3u8 (the playlist) and
 * /stream.m4s (?init=G: an init segment, ?seg=N: a media segment), with the
 * query of /stream.mp4 (cam, size, fps, bitrate, gop). Both take the one
 * request decision (stream_decide) as an H.264 stream; the playlist makes
 * the session (hls.c) on the output the decision names, the segments only
 * find it. The URIs in the playlist repeat the playlist's query (token=
 * too), so every request of a player maps to the same output. */
#define LOG_PREFIX "hls:"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/stream/hls.h"
#include "server/stream/serve_int.h"

/* The first playlist request waits this long at most for the first
 * segment (an IDR, then about one segment) instead of listing none. */
#define HLS_FIRST_WAIT_MS 3000
#define HLS_POLL_MS 50

/* The decision for an HLS request: that of /stream.mp4, with the GOP one
 * second worth of frames when the URL does not set one, so segments are
 * about 1 s (a /stream.mp4 client asking gop= that shares the encoder). */
static void decide(struct vc_streams *s, struct vc_http_req *r, struct vc_streams_answer *a)
{
	stream_decide(s, r, 2, HUB_STREAM, a);
	if (a->status != MHD_HTTP_OK || (a->p.given & VC_PARAM_GOP) || !a->plan.out.fps)
		return;
	a->p.req.gop = (uint16_t)a->plan.out.fps;
	stream_decide_parsed(s, 2, HUB_STREAM, vc_http_peer_addr(r), a);
}

static enum MHD_Result refused(struct vc_http_req *r, const struct vc_streams_answer *a)
{
	return vc_http_error(r, a->status, "%s", a->err[0] ? a->err : "refused");
}

struct wait {
	struct event *timer;
	struct MHD_Connection *conn;
	struct vc_http *http;
	int64_t deadline_us;
};

static void wait_free(void *p)
{
	struct wait *w = p;

	if (w->timer)
		event_free(w->timer);
	free(w);
}

static void wait_tick(evutil_socket_t fd, short what, void *arg)
{
	struct wait *w = arg;

	(void)fd;
	(void)what;
	MHD_resume_connection(w->conn);
	vc_http_wake(w->http);
}

/* Suspends r for HLS_POLL_MS (the handler runs again then). -1 on ENOMEM. */
static int wait_more(struct vc_streams *s, struct vc_http_req *r)
{
	struct wait *w = r->state;
	struct timeval tv = { 0, HLS_POLL_MS * 1000 };

	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return -1;
		w->timer = event_new(s->base, -1, 0, wait_tick, w);
		if (!w->timer) {
			free(w);
			return -1;
		}
		w->conn = r->conn;
		w->http = r->srv;
		w->deadline_us = now_us() + HLS_FIRST_WAIT_MS * 1000LL;
		r->state = w;
		r->state_free = wait_free;
	}
	if (now_us() >= w->deadline_us)
		return -1;
	MHD_suspend_connection(r->conn);
	event_add(w->timer, &tv);
	return 0;
}

static enum MHD_Result h_playlist(void *opaque, struct vc_http_req *r)
{
	struct vc_streams *s = opaque;
	struct vc_streams_answer a;

	decide(s, r, &a);
	if (a.status != MHD_HTTP_OK)
		return refused(r, &a);
	struct hls *x = hls_find(s, a.cam, &a.p.req);

	if (!x) {
		struct hub *h = hub_for(s, a.cam);
		struct output *o = h ? stream_take_output(h, &a, HUB_STREAM, vc_http_peer_addr(r)) : NULL;
		char peer[64];

		if (!o || !h264_out_is(o))
			return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "cannot serve this request");
		vc_http_peer(r, peer, sizeof(peer));
		x = hls_get(s, o, &a.p.req, peer, vc_http_peer_addr(r), a.dflt);
		if (!x)
			return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	}
	hls_touch(x);
	if (!hls_segments(x) && !s->stopping && wait_more(s, r) == 0)
		return MHD_YES;

	char q[1024], base[1100];
	int ql = vc_http_query(r, NULL, q, sizeof(q));

	if (ql < 0)
		return vc_http_error(r, MHD_HTTP_URI_TOO_LONG, "query too long");
	snprintf(base, sizeof(base), "stream.m4s?%s%s", q, ql ? "&" : "");
	size_t cap = 512 + HLS_WINDOW * (2 * sizeof(base) + 64);
	char *buf = malloc(cap);

	if (!buf)
		return MHD_NO;
	int len = hls_playlist(x, base, buf, cap);

	if (len < 0) {
		free(buf);
		return vc_http_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "playlist too long");
	}
	return vc_http_send_owned(r, MHD_HTTP_OK, "application/vnd.apple.mpegurl", buf, (size_t)len);
}

/* A decimal argument: 0, or -1 when absent or not a number. */
static int num_arg(const struct vc_http_req *r, const char *key, uint64_t *v)
{
	const char *a = vc_http_arg(r, key);
	char *end;

	if (!a || !*a || *a < '0' || *a > '9')
		return -1;
	errno = 0;
	*v = strtoull(a, &end, 10);
	return *end || errno ? -1 : 0;
}

static enum MHD_Result h_segment(void *opaque, struct vc_http_req *r)
{
	struct vc_streams *s = opaque;
	struct vc_streams_answer a;
	uint64_t seq = 0, gen = 0;
	int is_init = num_arg(r, "init", &gen) == 0;

	if (!is_init && num_arg(r, "seg", &seq) < 0)
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "seg=N or init=N wanted");
	decide(s, r, &a);
	if (a.status != MHD_HTTP_OK)
		return refused(r, &a);
	struct hls *x = hls_find(s, a.cam, &a.p.req);
	const uint8_t *b = NULL;
	size_t len = 0;

	if (x) {
		hls_touch(x);
		b = is_init ? (gen <= UINT32_MAX ? hls_init(x, (uint32_t)gen, &len) : NULL)
			    : hls_segment(x, seq, &len);
	}
	if (!b)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "%s %" PRIu64 " is not in the window",
				     is_init ? "init segment" : "segment", is_init ? gen : seq);
	return vc_http_send(r, MHD_HTTP_OK, "video/mp4", b, len);
}

int hls_routes(struct vc_streams *s, struct vc_http *http)
{
	static const struct vc_http_route_def t[] = {
		{ "GET", "/stream.m3u8", 0, VC_HTTP_VIEW, h_playlist },
		{ "GET", "/stream.m4s", 0, VC_HTTP_VIEW, h_segment },
	};

	return vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), s);
}
