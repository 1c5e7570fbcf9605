/* RTSP sessions as stream clients (rtsp_source.h). The glue to the
 * fan-out lives in this file only: the client is a struct client without
 * an MHD connection that subscribes with its own wake callback, which the
 * core calls with new data or the end of the stream. */
#define LOG_PREFIX "rtsp:"
#include "server/rtsp/rtsp_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h264.h"
#include "common/log.h"
#include "server/stream/serve_int.h"

#define HELD_MAX 64

struct rtsp_source {
	struct client *c;
	struct vc_streams *s;
	const struct rtsp_source_cbs *cbs;
	void *opaque;
	struct event *end_ev;  /* the core ended the stream: told from the loop */
	int playing;
	/* before PLAY: the frames since the last IDR (bounded), sent at PLAY
	 * at once, so the join does not wait for another IDR (forced ones are
	 * rate-limited, and DESCRIBE already forced one) */
	struct vc_frame *held[HELD_MAX];
	unsigned n_held;
	uint64_t held_n;       /* output frame number of the last held one */
	const struct output *held_out; /* whose frames they are */
	uint8_t ps[512];       /* SPS then PPS */
	size_t sps_len, pps_len;
};

/* Keeps the SPS/PPS of access unit f when it has both. */
static void take_ps(struct rtsp_source *src, const struct vc_frame *f)
{
	struct vc_h264_au au;

	if (src->sps_len || !f || !f->key)
		return;
	vc_h264_scan(f->mem[0], f->bytesused[0], &au);
	if (!au.sps || !au.pps || au.sps_len + au.pps_len > sizeof(src->ps) || au.sps_len < 4)
		return;
	memcpy(src->ps, au.sps, au.sps_len);
	memcpy(src->ps + au.sps_len, au.pps, au.pps_len);
	src->sps_len = au.sps_len;
	src->pps_len = au.pps_len;
	if (src->cbs->ps)
		src->cbs->ps(src->opaque);
}

/* Sends what the client may take now: the kept GOP from its IDR, then each
 * new frame; after a frame it missed, nothing until the next IDR. */
static void pump(struct rtsp_source *src)
{
	struct client *c = src->c;

	for (;;) {
		struct output *o = c->out;
		uint64_t n = o->latest_n;
		struct vc_frame *f = h264_out_kept(c, o, &n);

		if (!f) {
			if (!o->latest || o->latest_n == c->sent_n || !h264_out_may_take(c, o))
				return;
			f = o->latest;
			n = o->latest_n;
			c->catchup = 0;
		}
		if (c->sent_n && n > c->sent_n + 1)
			c->skipped += n - c->sent_n - 1;
		c->sent_n = n;
		c->need_key = 0;
		take_ps(src, f);
		if (src->cbs->au(src->opaque, f) < 0) {
			c->need_key = 1; /* the client is behind: on at the next IDR */
			c->catchup = 0;
			c->skipped++;
			return;
		}
		c->frames++;
		c->bytes += f->bytesused[0];
		int64_t now = now_us();
		if (c->last_us && now > c->last_us) {
			double inst = 1e6 / (double)(now - c->last_us);
			c->fps = c->fps ? c->fps * 0.9 + inst * 0.1 : inst;
		}
		c->last_us = now;
	}
}

static void held_drop(struct rtsp_source *src)
{
	for (unsigned i = 0; i < src->n_held; i++)
		vc_frame_unref(src->held[i]);
	src->n_held = 0;
}

/* Before PLAY: keeps the output's frames from its latest IDR on. */
static void hold_latest(struct rtsp_source *src)
{
	const struct output *o = src->c->out;

	if (src->held_out != o)
		held_drop(src); /* moved to another output: its frames only */
	src->held_out = o;
	if (!o->latest || (src->n_held && o->latest_n == src->held_n))
		return;
	if (o->latest->key) {
		held_drop(src);
	} else if (!src->n_held || o->latest_n != src->held_n + 1 || src->n_held == HELD_MAX) {
		held_drop(src); /* a hole, or too long a GOP: PLAY asks for an IDR */
		return;
	}
	src->held[src->n_held++] = vc_frame_ref(o->latest);
	src->held_n = o->latest_n;
}

static void sink(struct client *c, struct rtsp_source *src)
{

	if (c->ending) {
		/* not here: the core may be walking its client list */
		event_active(src->end_ev, EV_TIMEOUT, 0);
		return;
	}
	if (!src->playing) {
		uint64_t n;

		take_ps(src, h264_out_kept(c, c->out, &n));
		take_ps(src, c->out->latest);
		hold_latest(src);
		return;
	}
	pump(src);
}

/* The core's wake callback: new data, or the stream ended (any reason). */
static void on_event(void *opaque, enum stream_ev ev, int64_t now)
{
	struct rtsp_source *src = opaque;

	(void)now;
	if (ev != STREAM_EV_DATA)
		src->c->ending = 1;
	sink(src->c, src);
}

static void on_end(evutil_socket_t fd, short what, void *arg)
{
	struct rtsp_source *src = arg;

	(void)fd;
	(void)what;
	src->cbs->end(src->opaque);
}

int rtsp_source_open(struct vc_streams *s, const char *cam, const char *query,
		     const struct sockaddr *peer, const char *peer_name,
		     const struct rtsp_source_cbs *cbs, void *opaque, struct rtsp_source **out,
		     char *err, size_t errlen)
{
	struct vc_streams_answer a;
	char q[VC_PARAMS_MAX_QUERY + 80];
	int ret;

	/* the path names the camera: after the query's own cam= (the last wins) */
	if (snprintf(q, sizeof(q), "%s%scam=%s", query ? query : "", query && *query ? "&" : "",
		     cam) >= (int)sizeof(q)) {
		snprintf(err, errlen, "URL too long");
		return 400;
	}
	memset(&a, 0, sizeof(a));
	ret = vc_streams_parse_query(s, *cam ? q : query, 2, &a.p, &a.cam, a.err, sizeof(a.err));
	if (ret < 0) {
		snprintf(err, errlen, "%s", a.err);
		return ret == -ENOENT ? 404 : 400;
	}
	stream_decide_parsed(s, 2, HUB_STREAM, peer, &a);
	if (a.status != 200) {
		snprintf(err, errlen, "%s", a.err);
		/* 453 Not Enough Bandwidth: RTSP's word for "over the budget" */
		return a.over_budget ? 453 : a.status == 503 ? 503 : 400;
	}
	if (a.placeholder) {
		snprintf(err, errlen, "camera %s is absent", vc_cam_id(a.cam));
		return 503;
	}
	struct hub *h = hub_for(s, a.cam);
	struct output *o = stream_take_output(h, &a, HUB_STREAM, peer);
	if (!o || !h264_out_is(o)) {
		snprintf(err, errlen, "cannot serve this request");
		return 503;
	}
	struct rtsp_source *src = calloc(1, sizeof(*src));
	struct client *c = calloc(1, sizeof(*c));
	if (src)
		src->end_ev = event_new(s->base, -1, 0, on_end, src);
	if (!src || !c || !src->end_ev) {
		if (src && src->end_ev)
			event_free(src->end_ev);
		free(src);
		free(c);
		output_unused(o);
		snprintf(err, errlen, "out of memory");
		return 503;
	}
	src->c = c;
	src->s = s;
	src->cbs = cbs;
	src->opaque = opaque;
	struct vc_request req = a.p.req;
	if (!req.width || !req.height) {
		/* as /stream.h264: the size it starts with stays its own */
		req.width = o->plan.out.width;
		req.height = o->plan.out.height;
		if (!output_users(o))
			o->req = req;
	}
	c->s = s;
	c->out = o;
	c->sock = -1;
	c->h264 = H264_ANNEXB;
	c->req = req;
	c->sent_n = o->latest_n;
	c->wake = (struct stream_wake){ on_event, src };
	snprintf(c->peer, sizeof(c->peer), "%s", peer_name);
	vc_guard_addr_key(peer, &c->addr);
	c->dflt = a.dflt;
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	hub_acquire(h);
	h264_out_join(o, c);
	sink(c, src); /* the parameter sets may be known already */
	log_debug("client %s: rtsp stream on cam %s", c->peer, vc_cam_id(h->cam));
	*out = src;
	return 0;
}

int rtsp_source_ps(const struct rtsp_source *src, const uint8_t **sps, size_t *sps_len,
		   const uint8_t **pps, size_t *pps_len)
{
	if (!src->sps_len)
		return -EAGAIN;
	*sps = src->ps;
	*sps_len = src->sps_len;
	*pps = src->ps + src->sps_len;
	*pps_len = src->pps_len;
	return 0;
}

void rtsp_source_play(struct rtsp_source *src, int on)
{
	if (on == src->playing)
		return;
	src->playing = on;
	if (!on)
		return;
	struct client *c = src->c;
	struct output *o = c->out;
	if (src->n_held && src->held_out == o && src->held_n == o->latest_n && !c->catchup) {
		/* the frames since the IDR seen before PLAY, then live */
		for (unsigned i = 0; i < src->n_held; i++)
			if (src->cbs->au(src->opaque, src->held[i]) == 0)
				c->frames++;
		c->sent_n = src->held_n;
		c->need_key = 0;
		held_drop(src);
	} else {
		held_drop(src);
		h264_out_join(o, c); /* from the kept IDR or a forced one */
	}
	pump(src);
}

void rtsp_source_counts(const struct rtsp_source *src, uint64_t *frames, uint64_t *skipped)
{
	*frames = src->c->frames;
	*skipped = src->c->skipped;
}

void rtsp_source_close(struct rtsp_source *src)
{
	if (!src)
		return;
	held_drop(src);
	client_free(src->c); /* unlinks it; the output lingers as for HTTP */
	event_free(src->end_ev);
	free(src);
}
