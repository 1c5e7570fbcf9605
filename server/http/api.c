/* JSON API: /api/cams, /api/cams/<id>[/controls], /api/try, /api/status.
 * Bodies are written with common/json's writer (commas, nesting and string
 * escaping are its job) and handed to MHD, which frees them. /metrics is
 * server/http/api_metrics.c. */
#define LOG_PREFIX "api:"
#include "server/http/api.h"
#include "server/http/api_m2m.h"
#include "server/http/api_metrics.h"
#include "server/http/api_signal.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/fmt.h"
#include "common/json.h"
#include "common/log.h"
#include "common/memstat.h"
#include "common/negotiate.h"
#include "server/capture/v4l2src.h"

struct vc_api {
	struct vc_streams *s;
	struct vc_http *http;
	int64_t started_us;
	const struct vc_m2m_list *m2m; /* the camera set's; NULL = none known */
	const struct vc_loop_stats *loop; /* the daemon's; NULL = not shown */
};

/* key: a string member; NULL is written as "" (a cam without a path, a
 * format without a name), as the API always did. */
static void kstr(struct vc_json *j, const char *key, const char *s)
{
	vc_json_kstr(j, key, s ? s : "");
}

/* Ends the document with a newline and answers 200 with it; 500 when the
 * writer failed (out of memory). */
static enum MHD_Result send_json(struct vc_http_req *r, struct vc_json *j)
{
	size_t len = 0;

	vc_json_newline(j);
	char *body = vc_json_take(j, &len);
	if (!body) {
		int err = vc_json_error(j);
		vc_json_free(j);
		if (err != -ENOMEM)
			log_error("%s: JSON writer misuse (%d)", r->url, err);
		return vc_http_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     err == -ENOMEM ? "out of memory" : "internal error");
	}
	return vc_http_send_owned(r, MHD_HTTP_OK, "application/json", body, len);
}

/* "fourcc":"YUYV","fourcc_name":"YUYV" (key and key_name) */
static void json_fourcc(struct vc_json *j, const char *key, uint32_t fourcc)
{
	char fcc[16], name[32];
	const struct vc_fmt *f = vc_fmt_by_fourcc(fourcc);

	kstr(j, key, vc_fourcc_str(fourcc, fcc));
	snprintf(name, sizeof(name), "%s_name", key);
	kstr(j, name, f ? f->name : fourcc == V4L2_PIX_FMT_H264 ? "H264" : "");
}

static void json_mode(struct vc_json *j, const struct vc_mode *m)
{
	vc_json_obj_begin(j);
	json_fourcc(j, "fourcc", m->fourcc);
	vc_json_kuint(j, "width", m->width);
	vc_json_kuint(j, "height", m->height);
	vc_json_key(j, "interval");
	vc_json_arr_begin(j);
	vc_json_uint(j, m->ival.num);
	vc_json_uint(j, m->ival.den);
	vc_json_arr_end(j);
	vc_json_obj_end(j);
}

static void json_output(struct vc_json *j, const struct vc_output *o)
{
	vc_json_obj_begin(j);
	json_fourcc(j, "fourcc", o->fourcc);
	vc_json_kuint(j, "width", o->width);
	vc_json_kuint(j, "height", o->height);
	vc_json_kuint(j, "quality", o->quality);
	vc_json_kuint(j, "rotate", o->rotate);
	vc_json_kuint(j, "flip", o->flip);
	if (o->fourcc == V4L2_PIX_FMT_H264) { /* 0: the encoder's default */
		vc_json_kuint(j, "bitrate", o->bitrate);
		vc_json_kuint(j, "gop", o->gop);
	}
	vc_json_obj_end(j);
}

static void json_plan(struct vc_json *j, const struct vc_plan *p)
{
	static const char *const adj[] = { "format", "size", "fps", "quality", "rotate" };
	char steps[128];

	vc_json_obj_begin(j);
	vc_json_key(j, "output");
	json_output(j, &p->out);
	kstr(j, "steps", vc_steps_str(p->steps, p->decode_denom, steps, sizeof(steps)));
	vc_json_kbool(j, "passthrough", !!(p->steps & VC_STEP_PASSTHROUGH));
	vc_json_kbool(j, "convert", !!(p->steps & VC_STEP_CONVERT));
	vc_json_kbool(j, "scale", !!(p->steps & VC_STEP_SCALE));
	vc_json_kbool(j, "encode", !!(p->steps & VC_STEP_ENCODE));
	vc_json_kbool(j, "decode", !!(p->steps & VC_STEP_DECODE));
	vc_json_kbool(j, "rotate", !!(p->steps & (VC_STEP_ROTATE | VC_STEP_JPEG_XFORM)));
	vc_json_kuint(j, "fps", p->fps);
	vc_json_key(j, "adjusted");
	vc_json_arr_begin(j);
	for (unsigned i = 0; i < 5; i++)
		if (p->adjusted & (1u << i))
			vc_json_string(j, adj[i]);
	vc_json_arr_end(j);
	vc_json_obj_end(j);
}

static void json_stepwise(struct vc_json *j, const struct vc_caps_fmt *f)
{
	vc_json_key(j, "stepwise");
	vc_json_obj_begin(j);
	vc_json_kuint(j, "min_width", f->min_w);
	vc_json_kuint(j, "max_width", f->max_w);
	vc_json_kuint(j, "step_width", f->step_w);
	vc_json_kuint(j, "min_height", f->min_h);
	vc_json_kuint(j, "max_height", f->max_h);
	vc_json_kuint(j, "step_height", f->step_h);
	vc_json_obj_end(j);
}

static void json_caps(struct vc_json *j, const struct vc_caps *c)
{
	vc_json_arr_begin(j);
	for (size_t i = 0; c && i < c->n_fmts; i++) {
		const struct vc_caps_fmt *f = &c->fmts[i];

		vc_json_obj_begin(j);
		json_fourcc(j, "fourcc", f->fourcc);
		vc_json_kbool(j, "emulated", f->emulated);
		if (f->stepwise)
			json_stepwise(j, f);
		vc_json_key(j, "sizes");
		vc_json_arr_begin(j);
		for (size_t k = 0; k < f->n_sizes; k++) {
			const struct vc_caps_size *sz = &f->sizes[k];

			vc_json_obj_begin(j);
			vc_json_kuint(j, "width", sz->width);
			vc_json_kuint(j, "height", sz->height);
			vc_json_key(j, "intervals");
			vc_json_arr_begin(j);
			for (size_t v = 0; v < sz->n_ivals; v++) {
				vc_json_arr_begin(j);
				vc_json_uint(j, sz->ival[v].num);
				vc_json_uint(j, sz->ival[v].den);
				vc_json_arr_end(j);
			}
			vc_json_arr_end(j);
			vc_json_obj_end(j);
		}
		vc_json_arr_end(j);
		vc_json_obj_end(j);
	}
	vc_json_arr_end(j);
}

static void json_client_cb(void *opaque, const struct vc_client_info *ci)
{
	struct vc_json *j = opaque;

	vc_json_obj_begin(j);
	kstr(j, "peer", ci->peer);
	kstr(j, "kind", ci->h264 == 3 ? "hls" : ci->h264 == 2 ? "mp4" : ci->h264 ? "h264" : ci->raw ? "raw" : "mjpeg");
	vc_json_key(j, "output");
	json_output(j, &ci->out);
	vc_json_kuint(j, "frames", ci->frames);
	vc_json_kuint(j, "skipped", ci->skipped);
	vc_json_kuint(j, "bytes", ci->bytes);
	vc_json_kfixed(j, "fps", ci->fps, 2);
	vc_json_kuint(j, "fps_limit", ci->fps_limit);
	vc_json_obj_end(j);
}

static void json_output_cb(void *opaque, const struct vc_output_info *oi)
{
	struct vc_json *j = opaque;

	vc_json_obj_begin(j);
	vc_json_key(j, "plan");
	json_plan(j, &oi->plan);
	vc_json_kuint(j, "clients", oi->clients);
	vc_json_kuint(j, "produced", oi->produced);
	vc_json_kuint(j, "busy_drops", oi->busy_drops);
	vc_json_kfixed(j, "process_ms", oi->process_ms, 3);
	vc_json_kfixed(j, "fps", oi->fps, 2);
	vc_json_kstr(j, "encoder", oi->encoder ? oi->encoder : "cpu");
	if (oi->mp4_t0_real_us) /* the web page's H.264 latency: see README */
		vc_json_kfixed(j, "mp4_t0_ms", oi->mp4_t0_real_us / 1000.0, 3);
	vc_json_obj_end(j);
}

static void json_policy_req(void *opaque, const char *kind, const struct vc_request *q)
{
	struct vc_json *j = opaque;

	vc_json_obj_begin(j);
	kstr(j, "kind", kind);
	json_fourcc(j, "fourcc", q->fourcc);
	vc_json_kuint(j, "width", q->width);
	vc_json_kuint(j, "height", q->height);
	vc_json_kuint(j, "fps", q->fps);
	vc_json_obj_end(j);
}

/* Why the camera runs its mode, for which requests (server/stream/policy.c). */
static void json_policy(struct vc_json *j, const struct vc_streams *s, size_t i)
{
	struct vc_policy_info pi;

	if (vc_streams_policy(s, i, &pi) < 0)
		return;
	vc_json_key(j, "policy");
	vc_json_obj_begin(j);
	kstr(j, "why", pi.why);
	vc_json_kuint(j, "streams", pi.streams);
	vc_json_kuint(j, "oneshots", pi.oneshots);
	vc_json_key(j, "requests");
	vc_json_arr_begin(j);
	vc_streams_policy_requests(s, i, json_policy_req, j);
	vc_json_arr_end(j);
	vc_json_key(j, "default");
	json_mode(j, &pi.def);
	vc_json_kuint(j, "switches", pi.switches);
	vc_json_kfixed(j, "since_switch_s", pi.since_switch_s, 1);
	vc_json_kbool(j, "rechoice_pending", pi.rechoice_pending);
	kstr(j, "last_switch", pi.last);
	vc_json_obj_end(j);
}

static void json_stats(struct vc_json *j, const struct vc_cam_stats *st)
{
	vc_json_key(j, "stats");
	vc_json_obj_begin(j);
	vc_json_kuint(j, "frames", st->frames);
	vc_json_kuint(j, "dropped", st->dropped);
	vc_json_kuint(j, "errors", st->errors);
	vc_json_kuint(j, "copies", st->copies);
	vc_json_kuint(j, "restarts", st->restarts);
	vc_json_kfixed(j, "fps", st->fps, 2);
	vc_json_obj_end(j);
}

static void json_cam(struct vc_json *j, const struct vc_streams *s, size_t i, int full,
		     const struct vc_m2m_list *m2m)
{
	struct vc_cam *cam = vc_streams_cam(s, i);
	struct vc_cam_stats st;
	struct vc_mode m;
	struct vc_geom g;
	enum vc_cam_state state = vc_cam_get_state(cam);

	vc_cam_get_stats(cam, &st);
	vc_json_obj_begin(j);
	kstr(j, "id", vc_cam_id(cam));
	kstr(j, "path", vc_cam_path(cam));
	kstr(j, "state", vc_cam_state_name(state));
	/* idle and closed (idle_close): the kernel may suspend it */
	vc_json_kbool(j, "closed_idle", vc_cam_closed_idle(cam));
	if (state != VC_CAM_ABSENT) {
		vc_cam_get_mode(cam, &m, &g);
		vc_json_key(j, "mode");
		json_mode(j, &m);
		vc_json_kuint(j, "bytesperline", g.plane[0].stride);
		vc_json_kuint(j, "sizeimage", g.sizeimage);
	}
	json_stats(j, &st);
	vc_json_key(j, "outputs");
	vc_json_arr_begin(j);
	vc_streams_outputs(s, i, json_output_cb, j);
	vc_json_arr_end(j);
	vc_json_key(j, "clients");
	vc_json_arr_begin(j);
	vc_streams_clients(s, i, json_client_cb, j);
	vc_json_arr_end(j);
	json_policy(j, s, i);
	vc_json_key(j, "encoder");
	vc_api_encoder_json(j, m2m, vc_cam_get_config(cam)->encoder,
			    state != VC_CAM_ABSENT ? m.fourcc : 0, vc_streams_hwenc_active(s, i));
	if (full) {
		struct vc_v4l2_info info;
		if (state != VC_CAM_ABSENT && vc_cam_source(cam))
			vc_v4l2_json(vc_cam_source(cam), j);
		else if (state != VC_CAM_ABSENT && vc_cam_info(cam, &info) == 0)
			vc_v4l2_info_write(j, &info); /* closed while idle: not woken */
		vc_json_key(j, "formats");
		json_caps(j, state != VC_CAM_ABSENT ? vc_cam_caps(cam) : NULL);
	}
	vc_json_obj_end(j);
}

static enum MHD_Result h_cams(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct vc_json j;

	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_json_key(&j, "cams");
	vc_json_arr_begin(&j);
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++)
		json_cam(&j, a->s, i, 1, a->m2m);
	vc_json_arr_end(&j);
	vc_json_obj_end(&j);
	return send_json(r, &j);
}

/* ---- controls ---- */

/* "Brightness" -> "brightness", "White Balance Temperature" -> "white_balance_temperature" */
static void ctrl_key(const char *name, char *key, size_t len)
{
	size_t o = 0;

	for (const char *p = name; *p && o + 1 < len; p++) {
		char c = *p;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '_';
		if (c == '_' && (o == 0 || key[o - 1] == '_'))
			continue;
		key[o++] = c;
	}
	while (o && key[o - 1] == '_')
		o--;
	key[o] = 0;
}

#define CTRL_NEXT 0x80000000u /* V4L2_CTRL_FLAG_NEXT_CTRL */
#define CTRL_TYPE_MENU 3u     /* V4L2_CTRL_TYPE_MENU */
#define CTRL_TYPE_INTEGER_MENU 9u

static void json_menu(struct vc_json *j, struct vc_cam *cam, const struct vc_src_ctrl *c)
{
	vc_json_key(j, "menu");
	vc_json_arr_begin(j);
	for (int64_t i = c->min; i <= c->max && i - c->min < 64; i++) {
		char name[32];

		if (vc_cam_ctrl_menu(cam, c->id, (uint32_t)i, name) < 0)
			continue;
		vc_json_obj_begin(j);
		vc_json_kint(j, "index", i);
		kstr(j, "name", name);
		vc_json_obj_end(j);
	}
	vc_json_arr_end(j);
}

static void json_controls(struct vc_json *j, struct vc_cam *cam)
{
	struct vc_src_ctrl c;
	uint32_t id = 0;
	int n = 0;

	vc_json_obj_begin(j);
	kstr(j, "cam", vc_cam_id(cam));
	vc_json_key(j, "controls");
	vc_json_arr_begin(j);
	while (vc_cam_ctrl_query(cam, id | CTRL_NEXT, &c) == 0 && c.id != id && n < 512) {
		char key[64];
		int64_t v = 0;

		id = c.id;
		n++;
		ctrl_key(c.name, key, sizeof(key));
		vc_json_obj_begin(j);
		vc_json_kuint(j, "id", c.id);
		kstr(j, "key", key);
		kstr(j, "name", c.name);
		vc_json_kuint(j, "type", c.type);
		vc_json_kint(j, "min", c.min);
		vc_json_kint(j, "max", c.max);
		vc_json_kint(j, "step", c.step);
		vc_json_kint(j, "default", c.def);
		vc_json_kuint(j, "flags", c.flags);
		if (vc_cam_ctrl_get(cam, c.id, &v) == 0)
			vc_json_kint(j, "value", v);
		if (c.type == CTRL_TYPE_MENU || c.type == CTRL_TYPE_INTEGER_MENU)
			json_menu(j, cam, &c);
		vc_json_obj_end(j);
	}
	vc_json_arr_end(j);
	vc_json_obj_end(j);
}

/* Finds a control by key ("brightness"), name or numeric id. */
static int ctrl_lookup(struct vc_cam *cam, const char *want, struct vc_src_ctrl *out)
{
	struct vc_src_ctrl c;
	uint32_t id = 0;
	char *end;
	unsigned long num = strtoul(want, &end, 0);

	if (*want && !*end)
		return vc_cam_ctrl_query(cam, (uint32_t)num, out);
	for (int n = 0; n < 512 && vc_cam_ctrl_query(cam, id | CTRL_NEXT, &c) == 0 && c.id != id; n++) {
		char key[64];

		id = c.id;
		ctrl_key(c.name, key, sizeof(key));
		if (strcmp(key, want) == 0 || strcmp(c.name, want) == 0) {
			*out = c;
			return 0;
		}
	}
	return -ENOENT;
}

static struct vc_cam *cam_by_rest(struct vc_api *a, const char *rest, const char **sub)
{
	size_t n = strcspn(rest, "/");

	*sub = rest + n;
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++) {
		struct vc_cam *cam = vc_streams_cam(a->s, i);
		const char *id = vc_cam_id(cam);

		if (strlen(id) == n && strncmp(id, rest, n) == 0)
			return cam;
	}
	return NULL;
}

static enum MHD_Result h_cam(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct vc_json j;
	const char *sub;
	struct vc_cam *cam = cam_by_rest(a, r->rest, &sub);

	if (!cam)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "unknown cam '%.40s'", r->rest);
	vc_json_init(&j);
	if (strcmp(sub, "/controls") == 0) {
		json_controls(&j, cam);
		return send_json(r, &j);
	}
	if (*sub && strcmp(sub, "/") != 0)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no such path: %.80s", r->url);
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++) {
		if (vc_streams_cam(a->s, i) != cam)
			continue;
		json_cam(&j, a->s, i, 1, a->m2m);
	}
	return send_json(r, &j);
}

/* PUT /api/cams/<id>/controls with {"brightness": 10, "9963777": 5}: every
 * control is checked first, then set; the answer is the new control list. */
static enum MHD_Result h_cam_put(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	const char *sub;
	struct vc_cam *cam = cam_by_rest(a, r->rest, &sub);
	struct vc_json_object obj;
	struct vc_json_perr perr;

	if (!cam)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "unknown cam '%.40s'", r->rest);
	if (strcmp(sub, "/signal") == 0)
		return vc_api_put_signal(cam, r);
	if (strcmp(sub, "/controls") != 0)
		return vc_http_error(r, MHD_HTTP_METHOD_NOT_ALLOWED,
				     "PUT only on /api/cams/<id>/controls and /api/cams/<id>/signal");
	if (!r->body || vc_json_parse_object(r->body, r->body_len, &obj, &perr) < 0)
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "body must be a JSON object%s%s",
				     r->body ? ": " : "", r->body ? perr.msg : "");
	uint32_t ids[VC_JSON_MAX_MEMBERS];
	for (size_t i = 0; i < obj.n; i++) {
		const struct vc_json_member *m = &obj.m[i];
		struct vc_src_ctrl c;
		int ret = ctrl_lookup(cam, m->name, &c);

		if (ret == -ENODEV) {
			vc_json_object_free(&obj);
			return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "camera %s is absent",
					     vc_cam_id(cam));
		}
		if (ret < 0) {
			enum MHD_Result x = vc_http_error(r, MHD_HTTP_BAD_REQUEST, "unknown control '%.60s'",
							  m->name);
			vc_json_object_free(&obj);
			return x;
		}
		int64_t v = m->type == VC_JSON_BOOL ? m->b : m->i;
		if ((m->type != VC_JSON_NUMBER || !m->is_int) && m->type != VC_JSON_BOOL) {
			enum MHD_Result x = vc_http_error(r, MHD_HTTP_BAD_REQUEST,
							  "control '%.60s' needs an integer value", m->name);
			vc_json_object_free(&obj);
			return x;
		}
		if (v < c.min || v > c.max) {
			enum MHD_Result x = vc_http_error(r, MHD_HTTP_BAD_REQUEST,
							  "control '%.60s': %lld outside %lld..%lld", m->name,
							  (long long)v, (long long)c.min, (long long)c.max);
			vc_json_object_free(&obj);
			return x;
		}
		ids[i] = c.id;
	}
	for (size_t i = 0; i < obj.n; i++) {
		const struct vc_json_member *m = &obj.m[i];
		int64_t v = m->type == VC_JSON_BOOL ? m->b : m->i;
		int ret = vc_cam_ctrl_set(cam, ids[i], v);

		if (ret < 0) {
			enum MHD_Result x = vc_http_error(r, ret == -EBUSY || ret == -EACCES
								  ? MHD_HTTP_CONFLICT : MHD_HTTP_BAD_REQUEST,
							  "control '%.60s' = %lld: %s", m->name,
							  (long long)v, strerror(-ret));
			vc_json_object_free(&obj);
			return x;
		}
		log_info("cam %s: control %s = %lld", vc_cam_id(cam), m->name, (long long)v);
	}
	vc_json_object_free(&obj);
	struct vc_json j;
	vc_json_init(&j);
	json_controls(&j, cam);
	return send_json(r, &j);
}

/* Whether every format the camera offers is H.264 (nothing decodes it, so
 * such a camera serves format=h264 only). */
static int h264_only(struct vc_cam *cam)
{
	const struct vc_caps *caps = vc_cam_caps(cam);
	size_t n = 0;

	for (size_t i = 0; caps && i < caps->n_fmts; i++)
		if (caps->fmts[i].fourcc != V4L2_PIX_FMT_H264)
			return 0;
		else
			n++;
	return n > 0;
}

/* The endpoints /api/try's endpoint= names (with or without the slash). */
static const struct {
	const char *name;
	enum vc_endpoint ep;
} try_eps[] = {
	{ "/stream", VC_EP_STREAM },         { "/snapshot", VC_EP_SNAPSHOT },
	{ "/raw", VC_EP_RAW },               { "/raw/stream", VC_EP_RAW_STREAM },
	{ "/stream.h264", VC_EP_H264 },      { "/stream.mp4", VC_EP_MP4 },
};

/* The endpoint named ep (NULL: none, VC_EP_ANY); -1 when unknown. "raw"
 * without the slash is a raw stream, as /api/try always took it. */
static int try_endpoint(const char *ep)
{
	if (!ep)
		return VC_EP_ANY;
	if (strcmp(ep, "raw") == 0)
		return VC_EP_RAW_STREAM;
	for (size_t i = 0; i < sizeof(try_eps) / sizeof(try_eps[0]); i++)
		if (strcmp(ep, try_eps[i].name) == 0 || strcmp(ep, try_eps[i].name + 1) == 0)
			return (int)try_eps[i].ep;
	return -1;
}

/* /api/try's answer for a 200: the endpoint (without one: the format's),
 * the plan, the device mode (all 0 for a placeholder), what was ignored. */
static void try_json(struct vc_json *j, const struct vc_streams_answer *d, enum vc_endpoint e)
{
	const char *name = d->p.req.fourcc == V4L2_PIX_FMT_H264 && e != VC_EP_MP4 ? "/stream.h264"
			   : d->p.req.fourcc != V4L2_PIX_FMT_MJPEG && e == VC_EP_ANY ? "/raw"
			   : "/stream";

	for (size_t i = 0; e != VC_EP_ANY && i < sizeof(try_eps) / sizeof(try_eps[0]); i++)
		if (try_eps[i].ep == e && !(e == VC_EP_STREAM && d->p.req.fourcc == V4L2_PIX_FMT_H264))
			name = try_eps[i].name;
	vc_json_obj_begin(j);
	kstr(j, "cam", vc_cam_id(d->cam));
	kstr(j, "endpoint", name);
	vc_json_key(j, "plan");
	json_plan(j, &d->plan);
	vc_json_kbool(j, "placeholder", d->placeholder);
	vc_json_key(j, "device_mode");
	json_mode(j, &d->mode);
	/* parameters the parser ignored (unknown names: typos, cache busters) */
	vc_json_key(j, "ignored");
	vc_json_obj_begin(j);
	vc_json_kuint(j, "count", d->p.n_unknown);
	kstr(j, "first", d->p.unknown);
	vc_json_obj_end(j);
	vc_json_obj_end(j);
}

/* What the endpoint answers now, as the endpoint itself decides it
 * (vc_streams_answer: the same function serves it), stopping before
 * anything is committed: the status and error it would send, else the
 * plan and the device mode. */
static enum MHD_Result h_try(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	const char *ep = vc_http_arg(r, "endpoint");
	int e = try_endpoint(ep);
	struct vc_streams_answer *d;
	enum MHD_Result res;

	if (e < 0)
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "unknown endpoint '%.63s'", ep);
	d = malloc(sizeof(*d));
	if (!d)
		return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	vc_streams_answer(a->s, r, (enum vc_endpoint)e, d);
	if (d->status == MHD_HTTP_BAD_REQUEST && d->cam &&
	    d->p.req.fourcc != V4L2_PIX_FMT_H264 && h264_only(d->cam))
		res = vc_http_error(r, MHD_HTTP_BAD_REQUEST,
				    "camera %s delivers only H.264 and there is no H.264 decoder: "
				    "format=h264 on /stream.h264 or /stream.mp4 (passthrough)",
				    vc_cam_id(d->cam));
	else if (d->status != MHD_HTTP_OK)
		res = vc_http_error(r, d->status, "%s", d->err);
	else {
		struct vc_json j;

		vc_json_init(&j);
		try_json(&j, d, (enum vc_endpoint)e);
		res = send_json(r, &j);
	}
	free(d);
	return res;
}

/* The allocator's view (glibc mallinfo2, all arenas): bytes in use, and
 * bytes freed but kept (RSS includes them until a trim). A leak grows
 * in_use; RSS alone also moves with the high-water mark of what clients
 * took at once (tests/vm/day.sh). */
static void json_heap(struct vc_json *j)
{
	struct mallinfo2 mi = mallinfo2();

	vc_json_key(j, "heap");
	vc_json_obj_begin(j);
	vc_json_kuint(j, "in_use", mi.uordblks + mi.hblkhd);
	vc_json_kuint(j, "free_kept", mi.fordblks);
	vc_json_obj_end(j);
}

static enum MHD_Result h_status(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct vc_json j;

	vc_json_init(&j);
	vc_json_obj_begin(&j);
	kstr(&j, "version", "0.1");
	vc_json_kfixed(&j, "uptime_s", (double)(vc_mono_us() - a->started_us) / 1e6, 1);
	vc_json_kuint(&j, "connections", vc_http_connections(a->http));
	vc_json_key(&j, "memory"); /* bytes, as /metrics' vcapd_memory_bytes */
	vc_json_obj_begin(&j);
	for (int k = 0; k < VC_MEM_KINDS; k++)
		vc_json_kuint(&j, vc_mem_kind_name((enum vc_mem_kind)k),
			      vc_mem_held((enum vc_mem_kind)k));
	vc_json_obj_end(&j);
	json_heap(&j);
	vc_json_key(&j, "cams");
	vc_json_arr_begin(&j);
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++)
		json_cam(&j, a->s, i, 0, a->m2m);
	vc_json_arr_end(&j);
	vc_json_key(&j, "m2m");
	vc_api_m2m_json(&j, a->m2m);
	vc_json_obj_end(&j);
	return send_json(r, &j);
}

static enum MHD_Result h_metrics(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;

	return vc_api_metrics(a->s, a->http, a->loop, r);
}

int vc_api_new(struct vc_streams *s, struct vc_http *http, struct vc_api **out)
{
	struct vc_api *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->s = s;
	a->http = http;
	a->started_us = vc_mono_us();
	*out = a;
	return 0;
}

void vc_api_set_m2m(struct vc_api *a, const struct vc_m2m_list *l)
{
	a->m2m = l;
}

void vc_api_set_loop_stats(struct vc_api *a, const struct vc_loop_stats *st)
{
	a->loop = st;
}

void vc_api_free(struct vc_api *a)
{
	free(a);
}

int vc_api_routes(struct vc_api *a, struct vc_http *http)
{
	static const struct vc_http_route_def t[] = {
		{ "GET", "/api/cams", 0, VC_HTTP_STATUS, h_cams },
		{ "GET", "/api/cams/", 1, VC_HTTP_STATUS, h_cam },
		{ "PUT", "/api/cams/", 1, VC_HTTP_CONTROL, h_cam_put },
		{ "GET", "/api/try", 0, VC_HTTP_STATUS, h_try },
		{ "GET", "/api/status", 0, VC_HTTP_STATUS, h_status },
		{ "GET", "/metrics", 0, VC_HTTP_STATUS, h_metrics },
	};

	return vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), a);
}
