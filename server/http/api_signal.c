/* PUT /api/cams/<id>/signal (see server/http/api_signal.h). The choice goes
 * through the same kept reconfiguration as the config's std / dv_timings
 * (server/capture/v4l2_keep.c), so it survives unplug and replug; a SIGHUP with a
 * config that names other values replaces it. */
#define LOG_PREFIX "api: "
#include "server/http/api_signal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "server/capture/v4l2src.h"

/* The offered standard that covers all of bits (NTSC covers NTSC-M...):
 * its id, or 0 when the input offers none. */
static uint64_t offered_std(struct vc_src *src, uint64_t bits)
{
	struct vc_v4l2_std s;

	for (uint32_t i = 0; vc_v4l2_std_enum(src, i, &s) == 0; i++)
		if ((s.id & bits) == bits || (bits & s.id) == s.id)
			return bits;
	return 0;
}

static enum MHD_Result bad(struct vc_http_req *r, struct vc_json_object *obj, const char *fmt,
			   const char *what)
{
	enum MHD_Result x = vc_http_error(r, MHD_HTTP_BAD_REQUEST, fmt, what);

	vc_json_object_free(obj);
	return x;
}

enum MHD_Result vc_api_put_signal(struct vc_cam *cam, struct vc_http_req *r)
{
	struct vc_json_object obj;
	struct vc_json_perr perr;
	const char *std_name = NULL, *dv_name = NULL;

	if (!r->body || vc_json_parse_object(r->body, r->body_len, &obj, &perr) < 0)
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "body must be a JSON object%s%s",
				     r->body ? ": " : "", r->body ? perr.msg : "");
	for (size_t i = 0; i < obj.n; i++) {
		const struct vc_json_member *m = &obj.m[i];

		if (m->type != VC_JSON_STRING)
			return bad(r, &obj, "'%.40s' needs a string value", m->name);
		if (!strcmp(m->name, "std"))
			std_name = m->str;
		else if (!strcmp(m->name, "dv_timings"))
			dv_name = m->str;
		else
			return bad(r, &obj, "unknown member '%.40s' (std, dv_timings)", m->name);
	}
	if (!std_name && !dv_name)
		return bad(r, &obj, "%s", "nothing to set: give std or dv_timings");

	struct vc_src *src = vc_cam_source_wake(cam);
	uint32_t input = 0;
	if (!src || vc_cam_input_get(cam, &input) < 0) {
		/* absent, or reopening (a DV change makes the driver report a
		 * source change): 503 with Retry-After, the client retries */
		vc_json_object_free(&obj);
		return vc_http_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "camera %s has no open device now (%s): retry", vc_cam_id(cam),
				     vc_cam_state_name(vc_cam_get_state(cam)));
	}
	uint64_t std = 0;
	struct vc_conf_dv want;
	struct vc_v4l2_dv dv;
	if (std_name && (vc_conf_std_parse(std_name, &std) < 0 || !offered_std(src, std)))
		return bad(r, &obj, "std '%.40s' is not a standard this input offers", std_name);
	if (dv_name && (vc_conf_dv_parse(dv_name, &want) < 0 || !want.width ||
			vc_v4l2_dv_find(src, &want, &dv) < 0))
		return bad(r, &obj, "dv_timings '%.40s' are not timings this input offers", dv_name);

	int e = std ? vc_v4l2_cam_std(cam, input, std) : 0;
	if (e == 0 && dv_name)
		e = vc_v4l2_cam_dv(cam, input, &dv);
	if (e < 0) {
		vc_json_object_free(&obj);
		return vc_http_error(r, e == -EBUSY ? MHD_HTTP_CONFLICT : MHD_HTTP_SERVICE_UNAVAILABLE,
				     "camera %s: %s", vc_cam_id(cam), strerror(-e));
	}
	char dv_text[48] = "";
	if (dv_name)
		snprintf(dv_text, sizeof(dv_text), "%ux%u%c%u.%03u", dv.width, dv.height,
			 dv.interlaced ? 'i' : 'p', dv.fps_milli / 1000, dv.fps_milli % 1000);
	log_info("cam %s: signal set over the API:%s%s%s%s", vc_cam_id(cam), std ? " std " : "",
		 std ? vc_conf_std_name(std) : "", dv_name ? " dv_timings " : "", dv_name ? dv_name : "");
	vc_json_object_free(&obj);
	struct vc_json j;
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_json_kstr(&j, "cam", vc_cam_id(cam));
	if (std)
		vc_json_kstr(&j, "std", vc_conf_std_name(std));
	if (dv_name)
		vc_json_kstr(&j, "dv_timings", dv_text);
	vc_json_kstr(&j, "status", "switching");
	vc_json_obj_end(&j);
	vc_json_newline(&j);
	size_t len = 0;
	char *body = vc_json_take(&j, &len);
	if (!body) {
		vc_json_free(&j);
		return vc_http_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return vc_http_send_owned(r, MHD_HTTP_ACCEPTED, "application/json", body, len);
}
