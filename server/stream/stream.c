/* Fan-out from cameras to HTTP clients: the public calls. The work is done
 * by, per camera, hub.c (clients' requests -> device mode), output.c (one
 * conversion/encode per delivered picture), client.c (stream clients and
 * sending, and who owns a frame when) and snapshot.c (one-shot requests);
 * stream_decide.c parses and decides each request. This file holds the
 * camera set (add/remove/replace), the routes and the info callbacks: the
 * top of server/stream/ (server/README.md draws the layers). */
#define LOG_PREFIX "stream:"
#include "server/stream/stream.h"
#include "server/stream/serve_int.h"
#include "server/stream/budget.h"
#include "server/stream/h264_out.h"
#include "server/stream/hls.h"
#include "server/stream/hwenc.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/workers.h"

void vc_streams_set_budget(struct vc_streams *s, const struct vc_stream_budget *b)
{
	s->budget = *b;
}

static enum MHD_Result h_stream(void *opaque, struct vc_http_req *r)
{
	return client_start(opaque, r, 0);
}

static enum MHD_Result h_stream_h264(void *opaque, struct vc_http_req *r)
{
	return client_start(opaque, r, 2);
}

static enum MHD_Result h_stream_mp4(void *opaque, struct vc_http_req *r)
{
	return client_start(opaque, r, 3);
}

static enum MHD_Result h_raw_stream(void *opaque, struct vc_http_req *r)
{
	return client_start(opaque, r, 1);
}

static enum MHD_Result h_snapshot(void *opaque, struct vc_http_req *r)
{
	return snapshot_serve(opaque, r, 0);
}

static enum MHD_Result h_raw(void *opaque, struct vc_http_req *r)
{
	return snapshot_serve(opaque, r, 1);
}

/* ---- setup, lookups, stats ---- */

/* The gc tick: frees outputs nobody uses (hub.c), drops clients too slow
 * to keep a part (hold.c), then gives their frame memory back to the system
 * (budget.c). */
static void stream_gc(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	hls_tick(arg); /* lapsed HLS sessions leave their outputs first */
	hub_gc(arg);
	hold_tick(arg);
	budget_trim(arg);
}

int vc_streams_new(struct event_base *base, struct vc_http *http, struct vc_cam *const *cams,
		   size_t n, struct vc_streams **out)
{
	struct vc_streams *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->base = base;
	s->http = http;
	s->http_ops = &client_http_mhd;
	s->kick = vc_http_wake;
	s->publish = output_publish;
	s->gc = event_new(base, -1, EV_PERSIST, stream_gc, s);
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
	h->pol.choose = hub_choose;
	s->hubs[s->n_hubs++] = h;
	vc_cam_set_callbacks(cam, hub_on_frame, hub_on_event, h);
	return 0;
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
	/* freed by hub_gc once no client, snapshot or job points at it */
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
	h->switching = 0;
	h->gen++;
	for (struct output *o = h->outputs; o; o = o->next)
		output_drop_frames(o);
	vc_cam_set_callbacks(cam, hub_on_frame, hub_on_event, h);
	if (acquired)
		hub_acquire(h);
	return 0;
}

void vc_streams_shutdown(struct vc_streams *s)
{
	s->stopping = 1;
	hls_free_all(s);
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
	hls_free_all(s);
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
	placeholder_free(s);
	free(s->hubs);
	free(s);
}

int vc_streams_routes(struct vc_streams *s, struct vc_http *http)
{
	static const struct vc_http_route_def t[] = {
		{ "GET", "/stream", 0, VC_HTTP_VIEW, h_stream },
		{ "GET", "/snapshot", 0, VC_HTTP_VIEW, h_snapshot },
		{ "GET", "/raw", 0, VC_HTTP_VIEW, h_raw },
		{ "GET", "/raw/stream", 0, VC_HTTP_VIEW, h_raw_stream },
		{ "GET", "/stream.h264", 0, VC_HTTP_VIEW, h_stream_h264 },
		{ "GET", "/stream.mp4", 0, VC_HTTP_VIEW, h_stream_mp4 },
	};

	int e = vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), s);

	return e < 0 ? e : hls_routes(s, http);
}

size_t vc_streams_n_cams(const struct vc_streams *s)
{
	return s->n_hubs;
}

struct vc_cam *vc_streams_cam(const struct vc_streams *s, size_t i)
{
	return i < s->n_hubs ? s->hubs[i]->cam : NULL;
}

void vc_streams_outputs(const struct vc_streams *s, size_t cam, vc_output_info_cb cb, void *opaque)
{
	if (cam >= s->n_hubs)
		return;
	for (const struct output *o = s->hubs[cam]->outputs; o; o = o->next) {
		if (o->merged || o->refused)
			continue; /* an empty shell waiting for its job; ending */
		struct vc_output_info oi = {
			.out = o->plan.out, .plan = o->plan, .clients = o->n_clients,
			.produced = o->latest_n, .busy_drops = o->busy_drops,
			.process_ms = o->process_ms, .fps = o->fps, .encoder = hwenc_path(o),
			.mp4_t0_real_us = h264_out_t0_real_us(o),
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
				.raw = c->raw, .h264 = c->sink ? 3 : c->h264, .out = o->plan.out,
				.frames = c->frames,
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
