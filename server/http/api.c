/* JSON API and /metrics. Bodies are built in a growable buffer (struct buf)
 * and handed to MHD, which frees them. */
#define LOG_PREFIX "api:"
#include "server/http/api.h"
#include "server/http/api_signal.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fmt.h"
#include "common/json.h"
#include "common/log.h"
#include "common/negotiate.h"
#include "server/capture/v4l2src.h"

struct vc_api {
	struct vc_streams *s;
	struct vc_http *http;
	int64_t started_us;
};

struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

/* A JSON string literal, escaped by common/json (one escaper: control
 * characters, and invalid UTF-8 from drivers' names becomes U+FFFD). */
static void bstr(struct buf *b, const char *s)
{
	struct vc_json j;

	vc_json_init(&j);
	vc_json_string(&j, s ? s : "");
	if (vc_json_error(&j))
		b->oom = 1;
	else
		bprintf(b, "%s", vc_json_str_get(&j));
	vc_json_free(&j);
}

static void bput(void *opaque, const char *text)
{
	bprintf(opaque, "%s", text);
}

static enum MHD_Result send_buf(struct vc_http_req *r, struct buf *b, const char *ctype)
{
	if (b->oom || !b->p) {
		free(b->p);
		return vc_http_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return vc_http_send_owned(r, MHD_HTTP_OK, ctype, b->p, b->len);
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void json_fourcc(struct buf *b, const char *key, uint32_t fourcc)
{
	char fcc[16];
	const struct vc_fmt *f = vc_fmt_by_fourcc(fourcc);

	bprintf(b, "\"%s\":", key);
	bstr(b, vc_fourcc_str(fourcc, fcc));
	bprintf(b, ",\"%s_name\":", key);
	bstr(b, f ? f->name : "");
}

static void json_mode(struct buf *b, const struct vc_mode *m)
{
	bprintf(b, "{");
	json_fourcc(b, "fourcc", m->fourcc);
	bprintf(b, ",\"width\":%u,\"height\":%u,\"interval\":[%u,%u]}", m->width, m->height,
		m->ival.num, m->ival.den);
}

static void json_output(struct buf *b, const struct vc_output *o)
{
	bprintf(b, "{");
	json_fourcc(b, "fourcc", o->fourcc);
	bprintf(b, ",\"width\":%u,\"height\":%u,\"quality\":%u,\"rotate\":%u,\"flip\":%u}",
		o->width, o->height, o->quality, o->rotate, o->flip);
}

static void json_plan(struct buf *b, const struct vc_plan *p)
{
	char steps[128];

	bprintf(b, "{\"output\":");
	json_output(b, &p->out);
	bprintf(b, ",\"steps\":");
	bstr(b, vc_steps_str(p->steps, p->decode_denom, steps, sizeof(steps)));
	bprintf(b, ",\"passthrough\":%s,\"convert\":%s,\"scale\":%s,\"encode\":%s,\"decode\":%s,"
		   "\"rotate\":%s,\"fps\":%u,\"adjusted\":[",
		p->steps & VC_STEP_PASSTHROUGH ? "true" : "false",
		p->steps & VC_STEP_CONVERT ? "true" : "false",
		p->steps & VC_STEP_SCALE ? "true" : "false",
		p->steps & VC_STEP_ENCODE ? "true" : "false",
		p->steps & VC_STEP_DECODE ? "true" : "false",
		p->steps & (VC_STEP_ROTATE | VC_STEP_JPEG_XFORM) ? "true" : "false", p->fps);
	static const char *const adj[] = { "format", "size", "fps", "quality", "rotate" };
	int first = 1;
	for (unsigned i = 0; i < 5; i++) {
		if (!(p->adjusted & (1u << i)))
			continue;
		bprintf(b, "%s\"%s\"", first ? "" : ",", adj[i]);
		first = 0;
	}
	bprintf(b, "]}");
}

static void json_caps(struct buf *b, const struct vc_caps *c)
{
	bprintf(b, "[");
	for (size_t i = 0; c && i < c->n_fmts; i++) {
		const struct vc_caps_fmt *f = &c->fmts[i];

		bprintf(b, "%s{", i ? "," : "");
		json_fourcc(b, "fourcc", f->fourcc);
		bprintf(b, ",\"emulated\":%s", f->emulated ? "true" : "false");
		if (f->stepwise)
			bprintf(b, ",\"stepwise\":{\"min_width\":%u,\"max_width\":%u,\"step_width\":%u,"
				   "\"min_height\":%u,\"max_height\":%u,\"step_height\":%u}",
				f->min_w, f->max_w, f->step_w, f->min_h, f->max_h, f->step_h);
		bprintf(b, ",\"sizes\":[");
		for (size_t j = 0; j < f->n_sizes; j++) {
			const struct vc_caps_size *sz = &f->sizes[j];

			bprintf(b, "%s{\"width\":%u,\"height\":%u,\"intervals\":[", j ? "," : "",
				sz->width, sz->height);
			for (size_t k = 0; k < sz->n_ivals; k++)
				bprintf(b, "%s[%u,%u]", k ? "," : "", sz->ival[k].num, sz->ival[k].den);
			bprintf(b, "]}");
		}
		bprintf(b, "]}");
	}
	bprintf(b, "]");
}

struct json_ctx {
	struct buf *b;
	int n;
};

static void json_client_cb(void *opaque, const struct vc_client_info *ci)
{
	struct json_ctx *j = opaque;

	bprintf(j->b, "%s{\"peer\":", j->n++ ? "," : "");
	bstr(j->b, ci->peer);
	bprintf(j->b, ",\"kind\":\"%s\",\"output\":", ci->raw ? "raw" : "mjpeg");
	json_output(j->b, &ci->out);
	bprintf(j->b, ",\"frames\":%" PRIu64 ",\"skipped\":%" PRIu64 ",\"bytes\":%" PRIu64
		      ",\"fps\":%.2f,\"fps_limit\":%u}",
		ci->frames, ci->skipped, ci->bytes, ci->fps, ci->fps_limit);
}

static void json_output_cb(void *opaque, const struct vc_output_info *oi)
{
	struct json_ctx *j = opaque;

	bprintf(j->b, "%s{\"plan\":", j->n++ ? "," : "");
	json_plan(j->b, &oi->plan);
	bprintf(j->b, ",\"clients\":%u,\"produced\":%" PRIu64 ",\"busy_drops\":%" PRIu64
		      ",\"process_ms\":%.3f,\"fps\":%.2f}",
		oi->clients, oi->produced, oi->busy_drops, oi->process_ms, oi->fps);
}

static void json_policy_req(void *opaque, const char *kind, const struct vc_request *q)
{
	struct json_ctx *j = opaque;

	bprintf(j->b, "%s{\"kind\":\"%s\",", j->n++ ? "," : "", kind);
	json_fourcc(j->b, "fourcc", q->fourcc);
	bprintf(j->b, ",\"width\":%u,\"height\":%u,\"fps\":%u}", q->width, q->height, q->fps);
}

/* Why the camera runs its mode, for which requests (server/stream/policy.c). */
static void json_policy(struct buf *b, const struct vc_streams *s, size_t i)
{
	struct vc_policy_info pi;
	struct json_ctx j = { b, 0 };

	if (vc_streams_policy(s, i, &pi) < 0)
		return;
	bprintf(b, ",\"policy\":{\"why\":\"%s\",\"streams\":%u,\"oneshots\":%u,\"requests\":[",
		pi.why, pi.streams, pi.oneshots);
	vc_streams_policy_requests(s, i, json_policy_req, &j);
	bprintf(b, "],\"default\":");
	json_mode(b, &pi.def);
	bprintf(b, ",\"switches\":%" PRIu64 ",\"since_switch_s\":%.1f,\"rechoice_pending\":%s,"
		   "\"last_switch\":",
		pi.switches, pi.since_switch_s, pi.rechoice_pending ? "true" : "false");
	bstr(b, pi.last);
	bprintf(b, "}");
}

static void json_cam(struct buf *b, const struct vc_streams *s, size_t i, int full)
{
	struct vc_cam *cam = vc_streams_cam(s, i);
	struct vc_cam_stats st;
	struct vc_mode m;
	struct vc_geom g;
	enum vc_cam_state state = vc_cam_get_state(cam);

	vc_cam_get_stats(cam, &st);
	bprintf(b, "{\"id\":");
	bstr(b, vc_cam_id(cam));
	bprintf(b, ",\"path\":");
	bstr(b, vc_cam_path(cam));
	bprintf(b, ",\"state\":");
	bstr(b, vc_cam_state_name(state));
	if (state != VC_CAM_ABSENT) {
		vc_cam_get_mode(cam, &m, &g);
		bprintf(b, ",\"mode\":");
		json_mode(b, &m);
		bprintf(b, ",\"bytesperline\":%u,\"sizeimage\":%zu", g.plane[0].stride, g.sizeimage);
	}
	bprintf(b, ",\"stats\":{\"frames\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"errors\":%" PRIu64
		   ",\"copies\":%" PRIu64 ",\"restarts\":%" PRIu64 ",\"fps\":%.2f}",
		st.frames, st.dropped, st.errors, st.copies, st.restarts, st.fps);
	struct json_ctx j = { b, 0 };
	bprintf(b, ",\"outputs\":[");
	vc_streams_outputs(s, i, json_output_cb, &j);
	j.n = 0;
	bprintf(b, "],\"clients\":[");
	vc_streams_clients(s, i, json_client_cb, &j);
	bprintf(b, "]");
	json_policy(b, s, i);
	if (full) {
		if (state != VC_CAM_ABSENT)
			vc_v4l2_json(vc_cam_source(cam), bput, b);
		bprintf(b, ",\"formats\":");
		json_caps(b, state != VC_CAM_ABSENT ? vc_cam_caps(cam) : NULL);
	}
	bprintf(b, "}");
}

static enum MHD_Result h_cams(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct buf b = { 0 };

	bprintf(&b, "{\"cams\":[");
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++) {
		if (i)
			bprintf(&b, ",");
		json_cam(&b, a->s, i, 1);
	}
	bprintf(&b, "]}\n");
	return send_buf(r, &b, "application/json");
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

static void json_controls(struct buf *b, struct vc_cam *cam)
{
	struct vc_src_ctrl c;
	uint32_t id = 0;
	int n = 0;

	bprintf(b, "{\"cam\":");
	bstr(b, vc_cam_id(cam));
	bprintf(b, ",\"controls\":[");
	while (vc_cam_ctrl_query(cam, id | CTRL_NEXT, &c) == 0 && c.id != id && n < 512) {
		char key[64];
		int64_t v = 0;

		id = c.id;
		ctrl_key(c.name, key, sizeof(key));
		bprintf(b, "%s{\"id\":%u,\"key\":", n++ ? "," : "", c.id);
		bstr(b, key);
		bprintf(b, ",\"name\":");
		bstr(b, c.name);
		bprintf(b, ",\"type\":%u,\"min\":%lld,\"max\":%lld,\"step\":%lld,\"default\":%lld,"
			   "\"flags\":%u",
			c.type, (long long)c.min, (long long)c.max, (long long)c.step, (long long)c.def,
			c.flags);
		if (vc_cam_ctrl_get(cam, c.id, &v) == 0)
			bprintf(b, ",\"value\":%lld", (long long)v);
		if (c.type == CTRL_TYPE_MENU || c.type == CTRL_TYPE_INTEGER_MENU) {
			int m = 0;

			bprintf(b, ",\"menu\":[");
			for (int64_t i = c.min; i <= c.max && i - c.min < 64; i++) {
				char name[32];

				if (vc_cam_ctrl_menu(cam, c.id, (uint32_t)i, name) < 0)
					continue;
				bprintf(b, "%s{\"index\":%lld,\"name\":", m++ ? "," : "", (long long)i);
				bstr(b, name);
				bprintf(b, "}");
			}
			bprintf(b, "]");
		}
		bprintf(b, "}");
	}
	bprintf(b, "]}\n");
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
	struct buf b = { 0 };
	const char *sub;
	struct vc_cam *cam = cam_by_rest(a, r->rest, &sub);

	if (!cam)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "unknown cam '%.40s'", r->rest);
	if (strcmp(sub, "/controls") == 0) {
		json_controls(&b, cam);
		return send_buf(r, &b, "application/json");
	}
	if (*sub && strcmp(sub, "/") != 0)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no such path: %.80s", r->url);
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++) {
		if (vc_streams_cam(a->s, i) != cam)
			continue;
		json_cam(&b, a->s, i, 1);
		bprintf(&b, "\n");
	}
	return send_buf(r, &b, "application/json");
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
	struct buf b = { 0 };
	json_controls(&b, cam);
	return send_buf(r, &b, "application/json");
}

static enum MHD_Result h_try(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct vc_params p;
	struct vc_cam *cam;
	struct vc_plan plan;
	struct vc_mode mode;
	enum MHD_Result res;
	const char *ep = vc_http_arg(r, "endpoint");
	/* without an endpoint the format decides (JPEG when none) */
	int raw = !ep ? -1 : strcmp(ep, "raw") == 0 || strcmp(ep, "/raw") == 0 ||
				     strcmp(ep, "/raw/stream") == 0;
	/* one-shot requests (snapshot, /raw) do not switch the mode while a
	 * stream is watched: asked as one, /api/try answers as for one */
	int oneshot = ep && (strcmp(ep, "snapshot") == 0 || strcmp(ep, "/snapshot") == 0 ||
			     strcmp(ep, "/raw") == 0);

	if (vc_streams_request(a->s, r, raw, &p, &cam, &res) < 0)
		return res;
	struct vc_request req = p.req;
	raw = req.fourcc != V4L2_PIX_FMT_MJPEG;
	int ret = vc_streams_try(a->s, cam, &req, oneshot, &plan, &mode);
	if (ret == -ENODEV)
		return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "camera %s is absent",
				     vc_cam_id(cam));
	if (ret == -ENOMEM)
		return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	if (ret < 0)
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "this request cannot be served");
	struct buf b = { 0 };
	bprintf(&b, "{\"cam\":");
	bstr(&b, vc_cam_id(cam));
	bprintf(&b, ",\"endpoint\":\"%s\",\"plan\":",
		oneshot ? (raw ? "/raw" : "/snapshot") : raw ? "/raw" : "/stream");
	json_plan(&b, &plan);
	bprintf(&b, ",\"device_mode\":");
	json_mode(&b, &mode);
	/* parameters the parser ignored (unknown names: typos, cache busters) */
	bprintf(&b, ",\"ignored\":{\"count\":%u,\"first\":", p.n_unknown);
	bstr(&b, p.unknown);
	bprintf(&b, "}}\n");
	return send_buf(r, &b, "application/json");
}

static enum MHD_Result h_status(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct buf b = { 0 };

	bprintf(&b, "{\"version\":\"0.1\",\"uptime_s\":%.1f,\"connections\":%u,\"cams\":[",
		(double)(mono_us() - a->started_us) / 1e6, vc_http_connections(a->http));
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++) {
		if (i)
			bprintf(&b, ",");
		json_cam(&b, a->s, i, 0);
	}
	bprintf(&b, "]}\n");
	return send_buf(r, &b, "application/json");
}

/* ---- Prometheus text format ---- */

/* The exposition format wants every family in one group (HELP, TYPE, then
 * all its samples), so each family walks the cameras/outputs/clients once. */
struct prom_family {
	const char *name, *type, *help;
};

static const struct prom_family cap_fam[] = {
	{ "vcapd_capture_fps", "gauge", "Measured capture rate." },
	{ "vcapd_capture_frames_total", "counter", "Frames captured." },
	{ "vcapd_capture_dropped_total", "counter", "Frames the driver dropped (sequence gaps)." },
	{ "vcapd_capture_errors_total", "counter", "Error-flagged buffers." },
	{ "vcapd_capture_restarts_total", "counter", "Device recoveries." },
	{ "vcapd_capture_state", "gauge", "Device state (1 for the current state)." },
};
static const struct prom_family out_fam[] = {
	{ "vcapd_output_clients", "gauge", "Clients of this output." },
	{ "vcapd_output_frames_total", "counter", "Frames this output produced." },
	{ "vcapd_output_fps", "gauge", "Rate this output produces frames at." },
	{ "vcapd_output_process_seconds", "gauge", "Average convert/encode time per frame." },
};
static const struct prom_family cli_fam[] = {
	{ "vcapd_client_frames_total", "counter", "Frames sent to this client." },
	{ "vcapd_client_skipped_frames_total", "counter", "Frames a slow client did not get." },
	{ "vcapd_client_bytes_total", "counter", "Bytes sent to this client." },
	{ "vcapd_client_fps", "gauge", "Rate this client receives frames at." },
};

static void prom_head(struct buf *b, const struct prom_family *f)
{
	bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

struct prom_ctx {
	struct buf *b;
	const char *cam;
	int what; /* index into out_fam / cli_fam */
};

static void prom_output_cb(void *opaque, const struct vc_output_info *oi)
{
	struct prom_ctx *p = opaque;
	char fcc[16], lbl[160], v[32];

	snprintf(lbl, sizeof(lbl), "cam=\"%s\",format=\"%s\",width=\"%u\",height=\"%u\",quality=\"%u\"",
		 p->cam, vc_fourcc_str(oi->out.fourcc, fcc), oi->out.width, oi->out.height,
		 oi->out.quality);
	switch (p->what) {
	case 0: snprintf(v, sizeof(v), "%u", oi->clients); break;
	case 1: snprintf(v, sizeof(v), "%" PRIu64, oi->produced); break;
	case 2: snprintf(v, sizeof(v), "%.2f", oi->fps); break;
	default: snprintf(v, sizeof(v), "%.6f", oi->process_ms / 1000.0); break;
	}
	bprintf(p->b, "%s{%s} %s\n", out_fam[p->what].name, lbl, v);
}

static void prom_client_cb(void *opaque, const struct vc_client_info *ci)
{
	struct prom_ctx *p = opaque;
	char fcc[16], lbl[200], v[32];

	snprintf(lbl, sizeof(lbl), "cam=\"%s\",peer=\"%s\",kind=\"%s\",format=\"%s\",size=\"%ux%u\"",
		 p->cam, ci->peer, ci->raw ? "raw" : "mjpeg", vc_fourcc_str(ci->out.fourcc, fcc),
		 ci->out.width, ci->out.height);
	switch (p->what) {
	case 0: snprintf(v, sizeof(v), "%" PRIu64, ci->frames); break;
	case 1: snprintf(v, sizeof(v), "%" PRIu64, ci->skipped); break;
	case 2: snprintf(v, sizeof(v), "%" PRIu64, ci->bytes); break;
	default: snprintf(v, sizeof(v), "%.2f", ci->fps); break;
	}
	bprintf(p->b, "%s{%s} %s\n", cli_fam[p->what].name, lbl, v);
}

/* One family of the outputs (clients = 0) or the clients, every camera. */
static void prom_per_cam(struct vc_api *a, struct buf *b, int clients, int what)
{
	prom_head(b, clients ? &cli_fam[what] : &out_fam[what]);
	for (size_t i = 0; i < vc_streams_n_cams(a->s); i++) {
		struct prom_ctx p = { b, vc_cam_id(vc_streams_cam(a->s, i)), what };

		if (clients)
			vc_streams_clients(a->s, i, prom_client_cb, &p);
		else
			vc_streams_outputs(a->s, i, prom_output_cb, &p);
	}
}

static enum MHD_Result h_metrics(void *opaque, struct vc_http_req *r)
{
	struct vc_api *a = opaque;
	struct buf b = { 0 };
	size_t n = vc_streams_n_cams(a->s);

	bprintf(&b, "# HELP vcapd_connections Open HTTP connections.\n"
		    "# TYPE vcapd_connections gauge\nvcapd_connections %u\n",
		vc_http_connections(a->http));
	for (size_t k = 0; k < sizeof(cap_fam) / sizeof(cap_fam[0]); k++) {
		prom_head(&b, &cap_fam[k]);
		for (size_t i = 0; i < n; i++) {
			struct vc_cam *cam = vc_streams_cam(a->s, i);
			struct vc_cam_stats st;
			const char *id = vc_cam_id(cam);
			const char *nm = cap_fam[k].name;

			vc_cam_get_stats(cam, &st);
			switch (k) {
			case 0: bprintf(&b, "%s{cam=\"%s\"} %.2f\n", nm, id, st.fps); break;
			case 1: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.frames); break;
			case 2: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.dropped); break;
			case 3: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.errors); break;
			case 4: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.restarts); break;
			default:
				for (int s = VC_CAM_ABSENT; s <= VC_CAM_ERROR; s++)
					bprintf(&b, "%s{cam=\"%s\",state=\"%s\"} %d\n", nm, id,
						vc_cam_state_name((enum vc_cam_state)s),
						(int)vc_cam_get_state(cam) == s);
				break;
			}
		}
	}
	for (int k = 0; k < (int)(sizeof(out_fam) / sizeof(out_fam[0])); k++)
		prom_per_cam(a, &b, 0, k);
	for (int k = 0; k < (int)(sizeof(cli_fam) / sizeof(cli_fam[0])); k++)
		prom_per_cam(a, &b, 1, k);
	return send_buf(r, &b, "text/plain; version=0.0.4");
}

int vc_api_new(struct vc_streams *s, struct vc_http *http, struct vc_api **out)
{
	struct vc_api *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->s = s;
	a->http = http;
	a->started_us = mono_us();
	*out = a;
	return 0;
}

void vc_api_free(struct vc_api *a)
{
	free(a);
}

int vc_api_routes(struct vc_api *a, struct vc_http *http)
{
	static const struct vc_http_route_def t[] = {
		{ "GET", "/api/cams", 0, h_cams },   { "GET", "/api/cams/", 1, h_cam },
		{ "PUT", "/api/cams/", 1, h_cam_put }, { "GET", "/api/try", 0, h_try },
		{ "GET", "/api/status", 0, h_status }, { "GET", "/metrics", 0, h_metrics },
	};

	return vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), a);
}
