/* The serving layer's one decision per request (issue 21): parsing a
 * request's parameters, resolving them against the camera's default,
 * deciding placeholder or mode, plan and admission (stream_decide; /api/try
 * stops there), committing it (stream_take_output), and the response
 * headers that state the plan. client.c, snapshot.c and stream.c call it;
 * it calls only the fan-out core below it (hub, policy, budget, output,
 * placeholder), never them. */
#define LOG_PREFIX "stream:"
#include "server/stream/stream.h"
#include "server/stream/serve_int.h"
#include "server/stream/budget.h"
#include "server/stream/h264_out.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* Adds the headers stating a raw frame's format precisely: f's own format
 * and layout when there is a frame (the body is f: the output's plan may
 * already be a newer mode's, and a camera's raw frame may have padded
 * lines), else what the output o plans. */
void stream_raw_headers(struct MHD_Response *resp, const struct vc_output *o,
			const struct vc_frame *f)
{
	char buf[64], fcc[16];
	const struct vc_fmt *fmt = f ? f->fmt : vc_fmt_by_fourcc(o->fourcc);
	struct vc_geom g;

	if (f)
		g = f->geom;
	if (!fmt || (!f && vc_fmt_geometry(fmt, o->width, o->height, 0, &g) < 0))
		return;
	MHD_add_response_header(resp, "X-Fourcc", vc_fourcc_str(fmt->fourcc, fcc));
	MHD_add_response_header(resp, "X-Format", fmt->name);
	snprintf(buf, sizeof(buf), "%u", g.width);
	MHD_add_response_header(resp, "X-Width", buf);
	snprintf(buf, sizeof(buf), "%u", g.height);
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

void stream_plan_headers(struct MHD_Response *resp, const struct vc_plan *p)
{
	char buf[128];

	MHD_add_response_header(resp, "X-Steps",
				vc_steps_str(p->steps, p->decode_denom, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%ux%u", p->out.width, p->out.height);
	MHD_add_response_header(resp, "X-Size", buf);
}

/* A snapshot of an absent camera that asked for the placeholder (URL or
 * config): the camera's placeholder picture (one size, whatever it asked;
 * pl: as stream_decide planned it). */
static enum MHD_Result placeholder_snapshot(struct vc_streams *s, struct vc_http_req *r,
					    struct hub *h, const struct vc_plan *pl)
{
	struct vc_frame *f = placeholder_frame(s, h);
	if (!f)
		return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		f->bytesused[0], (void *)f->mem[0], MHD_RESPMEM_MUST_COPY);
	vc_frame_unref(f);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "image/jpeg");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	stream_plan_headers(resp, pl);
	MHD_add_response_header(resp, "X-Placeholder", vc_cam_state_name(vc_cam_get_state(h->cam)));
	return vc_http_queue(r, MHD_HTTP_OK, resp);
}

/* A URL that names nothing about the picture (what an <img src=/stream> or
 * a dashboard's /snapshot asks for): the camera's default MJPEG picture;
 * plain /stream.mp4 and /stream.h264 (raw 2): its default H.264 one. The
 * memory budget always admits them: one output each per camera, and an
 * attack that fills the budget must not take the plain URLs from everyone
 * (issue 21: one client at /stream.mp4?bitrate=123456 made plain
 * /stream.mp4 answer 503 for everyone). */
int stream_default_picture(int raw, const struct vc_params *p)
{
	const unsigned picture = VC_PARAM_FORMAT | VC_PARAM_WIDTH | VC_PARAM_HEIGHT |
				 VC_PARAM_SIZE | VC_PARAM_FPS | VC_PARAM_QUALITY | VC_PARAM_ROTATE |
				 VC_PARAM_FLIP | VC_PARAM_BITRATE | VC_PARAM_GOP;

	return (raw == 0 || raw == 2) && !(p->given & picture);
}

/* Refuses a with status and a message. */
static void refuse(struct vc_streams_answer *a, unsigned status, const char *fmt, const char *arg)
{
	a->status = status;
	snprintf(a->err, sizeof(a->err), fmt, arg);
}

void stream_decide(struct vc_streams *s, const struct vc_http_req *r, int raw,
		   enum hub_kind kind, struct vc_streams_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->status = MHD_HTTP_OK;
	int ret = vc_streams_parse(s, r, raw, &a->p, &a->cam, a->err, sizeof(a->err));
	if (ret < 0) {
		a->status = ret == -ENOENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_BAD_REQUEST;
		return;
	}
	stream_decide_parsed(s, raw, kind, vc_http_peer_addr(r), a);
}

void stream_decide_parsed(struct vc_streams *s, int raw, enum hub_kind kind,
			  const struct sockaddr *peer, struct vc_streams_answer *a)
{
	int ret;

	a->status = MHD_HTTP_OK;	int h264 = a->p.req.fourcc == V4L2_PIX_FMT_H264;
	if (raw < 0) /* /api/try without an endpoint: the format's */
		raw = h264 ? 2 : a->p.req.fourcc != V4L2_PIX_FMT_MJPEG;
	if (raw == 1 && kind == HUB_STREAM)
		kind = HUB_RAW_STREAM;
	if (h264 && kind != HUB_STREAM) {
		refuse(a, MHD_HTTP_BAD_REQUEST, "%s", "format h264 is a stream: /stream.h264, "
		       "/stream.mp4 or /stream?format=h264");
		return;
	}
	struct hub *h = hub_for(s, a->cam);
	int absent = vc_cam_get_state(a->cam) == VC_CAM_ABSENT;
	/* an <img> stays broken after a 503: while the camera is absent a
	 * JPEG stream gets a placeholder picture until frames come, a snapshot
	 * when it asks for it; H.264 (a JPEG picture) and raw get 503 */
	if (h && !s->stopping && absent && !raw && !h264 &&
	    (kind == HUB_STREAM || a->p.placeholder)) {
		a->placeholder = 1;
		placeholder_plan(h, &a->plan);
		return;
	}
	if (s->stopping) {
		refuse(a, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", "shutting down");
		return;
	}
	if (absent || !h) {
		refuse(a, MHD_HTTP_SERVICE_UNAVAILABLE, "camera %s is absent", vc_cam_id(a->cam));
		return;
	}
	policy_resolve(h, &a->p.req);
	a->dflt = stream_default_picture(raw, &a->p);
	ret = hub_decide(h, &a->p.req, kind, &a->mode, &a->plan, &a->served);
	if (ret == -ENOMEM) {
		refuse(a, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", "out of memory");
		return;
	}
	if (ret < 0) {
		refuse(a, MHD_HTTP_BAD_REQUEST, "%s", "cannot serve this request");
		return;
	}
	struct vc_guard_addr who;
	vc_guard_addr_key(peer, &who);
	if (!a->dflt &&
	    (ret = budget_admit_plan(h, &a->mode, &a->plan, &who, a->err, sizeof(a->err))) < 0) {
		/* the address's own share: 429; the camera's or server's: 503 */
		a->status = ret == -EUSERS ? MHD_HTTP_TOO_MANY_REQUESTS : MHD_HTTP_SERVICE_UNAVAILABLE;
		a->over_budget = 1;
	}
}

void vc_streams_answer(struct vc_streams *s, const struct vc_http_req *r, enum vc_endpoint ep,
		       struct vc_streams_answer *a)
{
	static const struct {
		int raw;
		enum hub_kind kind;
	} t[] = {
		[VC_EP_ANY] = { -1, HUB_STREAM },
		[VC_EP_STREAM] = { 0, HUB_STREAM },
		[VC_EP_SNAPSHOT] = { 0, HUB_ONESHOT },
		[VC_EP_RAW] = { 1, HUB_ONESHOT },
		[VC_EP_RAW_STREAM] = { 1, HUB_RAW_STREAM },
		[VC_EP_H264] = { 2, HUB_STREAM },
		[VC_EP_MP4] = { 2, HUB_STREAM },
	};

	stream_decide(s, r, t[ep].raw, t[ep].kind, a);
}

struct output *stream_take_output(struct hub *h, const struct vc_streams_answer *a,
				  enum hub_kind kind, const struct sockaddr *peer)
{
	/* a one-shot is a poller from its first request (policy.c) */
	if (kind == HUB_ONESHOT)
		policy_poll(h, peer, &a->p.req);
	return hub_output_get_planned(h, &a->p.req, kind, &a->mode, &a->plan, a->served);
}

struct output *stream_request_output(struct vc_streams *s, struct vc_http_req *r, int raw,
				     enum hub_kind kind, struct vc_params *p,
				     enum MHD_Result *res)
{
	struct vc_streams_answer a;

	stream_decide(s, r, raw, kind, &a);
	*p = a.p;
	if (a.status != MHD_HTTP_OK) {
		if (a.over_budget) {
			char peer[64];

			log_info_lim("refused over the budget (503/429)",
				     vc_http_peer(r, peer, sizeof(peer)), "%s %s from %s: %u %s",
				     r->method, r->url, peer, a.status, a.err);
		}
		*res = vc_http_error(r, a.status, "%s", a.err);
		return NULL;
	}
	struct hub *h = hub_for(s, a.cam);
	if (a.placeholder && kind != HUB_STREAM) {
		*res = placeholder_snapshot(s, r, h, &a.plan);
		return NULL;
	}
	struct output *o;
	if (a.placeholder) {
		o = placeholder_output(h, &p->req);
		if (!o)
			*res = vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
		return o;
	}
	o = stream_take_output(h, &a, kind, vc_http_peer_addr(r));
	if (!o)
		*res = vc_http_error(r, MHD_HTTP_BAD_REQUEST, "cannot serve this request");
	return o;
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

/* ---- request parameters ---- */

/* H.264: from the H.264 endpoints (raw 2), /stream and /api/try (raw 0,
 * -1) with format=h264; not /raw or /raw/stream. */
static int parse_h264(const struct vc_streams *s, struct vc_cam *cam, int raw,
		      struct vc_params *p, char *err, size_t errlen)
{
	char fcc[16];

	if (raw == 2 && p->req.fourcc && p->req.fourcc != V4L2_PIX_FMT_H264) {
		snprintf(err, errlen, "format %s not served here (this endpoint is H.264)",
			 vc_fourcc_str(p->req.fourcc, fcc));
		return -EINVAL;
	}
	if (raw == 1) {
		snprintf(err, errlen, "format h264 not served here (use /stream.h264, /stream.mp4 "
				      "or /stream?format=h264)");
		return -EINVAL;
	}
	p->req.fourcc = V4L2_PIX_FMT_H264;
	budget_clamp_size(s, cam, &p->req);
	return 0;
}

int vc_streams_parse(const struct vc_streams *s, const struct vc_http_req *r, int raw,
		     struct vc_params *p, struct vc_cam **cam, char *err, size_t errlen)
{
	char q[VC_PARAMS_MAX_QUERY + 1];

	*cam = NULL;
	/* /api/try's own "endpoint" is not a picture parameter (elsewhere it
	 * would only be ignored like any unknown one) */
	if (vc_http_query(r, "endpoint", q, sizeof(q)) < 0) {
		memset(p, 0, sizeof(*p));
		snprintf(err, errlen, "query string longer than %d bytes", VC_PARAMS_MAX_QUERY);
		return -EINVAL;
	}
	return vc_streams_parse_query(s, q, raw, p, cam, err, errlen);
}

int vc_streams_parse_query(const struct vc_streams *s, const char *q, int raw,
			   struct vc_params *p, struct vc_cam **cam, char *err, size_t errlen)
{
	int ret;

	*cam = NULL;
	ret = vc_params_parse(q, p, err, errlen);
	if (ret < 0)
		return ret;
	*cam = vc_streams_find(s, p->cam);
	if (!*cam) {
		snprintf(err, errlen, "unknown cam '%.63s'", p->cam);
		return -ENOENT;
	}
	/* what the camera says for what the URL leaves out (config keys
	 * quality/rotate/flip/placeholder, --quality/--rotate/--flip) */
	const struct vc_conf_cam *cc = vc_cam_get_config(*cam);
	const struct vc_request def = { .quality = cc->quality, .rotate = cc->rotate, .flip = cc->flip };
	vc_params_defaults(p, &def, cc->placeholder);
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
	if (raw == 2 || p->req.fourcc == V4L2_PIX_FMT_H264)
		return parse_h264(s, *cam, raw, p, err, errlen);
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
	} else if (!p->req.fourcc) {
		/* the camera's default format when raw (the same whoever else
		 * streams), else YUYV; the device's when it has no default yet */
		struct vc_mode m;
		struct vc_geom g;
		const struct hub *h = hub_for(s, *cam);

		if (!h || policy_default_mode(h, &m) < 0)
			vc_cam_get_mode(*cam, &m, &g);
		f = vc_fmt_by_fourcc(m.fourcc);
		p->req.fourcc = f && f->layout != VC_LAYOUT_COMPRESSED ? m.fourcc : V4L2_PIX_FMT_YUYV;
	}
	/* past the largest size allowed (max_size, else the camera's largest
	 * native mode): clamped, as a size beyond the device's mode always was */
	budget_clamp_size(s, *cam, &p->req);
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
