/* TV standards and DV timings of a V4L2 camera as JSON members for
 * /api/cams (server/http/api.c): read through vc_cam_source() per request, like
 * controls and inputs, so what is shown is what the device has now. Written
 * with common/json's writer. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "server/capture/v4l2src.h"

#define DV_LIST_MAX 64 /* ENUM_DV_TIMINGS entries shown (vivid offers ~50) */

/* Driver names go out as JSON strings: anything but plain printable ASCII
 * (and the two characters JSON escapes) becomes '?'. */
static void safe_name(char *dst, size_t n, const char *src)
{
	size_t i = 0;
	for (; i + 1 < n && src[i]; i++)
		dst[i] = (src[i] < 0x20 || src[i] > 0x7e || src[i] == '"' || src[i] == '\\') ? '?' : src[i];
	dst[i] = 0;
}

static void std_write(struct vc_json *j, const struct vc_v4l2_std *s, int current)
{
	char name[sizeof(s->name)], t[40];
	safe_name(name, sizeof(name), s->name);
	double fps = s->frameperiod.num ? (double)s->frameperiod.den / s->frameperiod.num : 0;
	vc_json_obj_begin(j);
	vc_json_kstr(j, "name", name);
	snprintf(t, sizeof(t), "0x%016" PRIx64, s->id);
	vc_json_kstr(j, "id", t);
	snprintf(t, sizeof(t), "%u/%u", s->frameperiod.num, s->frameperiod.den);
	vc_json_kstr(j, "frameperiod", t);
	vc_json_kfixed(j, "fps", fps, 3);
	vc_json_kuint(j, "lines", s->framelines);
	vc_json_kbool(j, "current", current);
	vc_json_obj_end(j);
}

static void dv_write(struct vc_json *j, const struct vc_v4l2_dv *dv)
{
	char t[48];
	vc_json_obj_begin(j);
	vc_json_kuint(j, "width", dv->width);
	vc_json_kuint(j, "height", dv->height);
	vc_json_kbool(j, "interlaced", dv->interlaced);
	vc_json_kuint(j, "pixelclock", dv->pixelclock);
	vc_json_kfixed(j, "fps", dv->fps_milli / 1000.0, 3);
	snprintf(t, sizeof(t), "%ux%u%c%u", dv->width, dv->height, dv->interlaced ? 'i' : 'p',
		 (dv->fps_milli + 500) / 1000);
	vc_json_kstr(j, "name", t);
	vc_json_obj_end(j);
}

/* The writer's text into dst, snprintf's way. */
static int to_buf(struct vc_json *j, char *dst, size_t n)
{
	int ret = vc_json_error(j) ? -ENOMEM : snprintf(dst, n, "%s", vc_json_str_get(j));
	vc_json_free(j);
	return ret;
}

int vc_v4l2_std_json(char *dst, size_t n, const struct vc_v4l2_std *s, int current)
{
	struct vc_json j;
	vc_json_init(&j);
	std_write(&j, s, current);
	return to_buf(&j, dst, n);
}

int vc_v4l2_dv_json(char *dst, size_t n, const struct vc_v4l2_dv *dv)
{
	struct vc_json j;
	vc_json_init(&j);
	dv_write(&j, dv);
	return to_buf(&j, dst, n);
}

static void std_list(struct vc_src *src, struct vc_json *j)
{
	struct vc_v4l2_std s;
	uint64_t cur = 0;
	char t[40];

	if (vc_v4l2_std_enum(src, 0, &s) < 0)
		return;
	int have = vc_v4l2_std_get(src, &cur) == 0;
	vc_json_key(j, "tv_std");
	vc_json_obj_begin(j);
	vc_json_key(j, "current");
	if (have) {
		snprintf(t, sizeof(t), "0x%016" PRIx64, cur);
		vc_json_string(j, t);
	} else {
		vc_json_null(j);
	}
	vc_json_key(j, "standards");
	vc_json_arr_begin(j);
	for (uint32_t i = 0; i < 256 && vc_v4l2_std_enum(src, i, &s) == 0; i++)
		std_write(j, &s, have && s.id == cur);
	vc_json_arr_end(j);
	vc_json_obj_end(j);
}

static void dv_list(struct vc_src *src, struct vc_json *j)
{
	struct vc_v4l2_dv dv;
	int has_get = vc_v4l2_dv_get(src, &dv) == 0;
	int has_enum = vc_v4l2_dv_enum(src, 0, &dv) == 0;
	if (!has_get && !has_enum)
		return;
	vc_json_key(j, "dv_timings");
	vc_json_obj_begin(j);
	vc_json_key(j, "current");
	if (vc_v4l2_dv_get(src, &dv) == 0)
		dv_write(j, &dv);
	else
		vc_json_null(j);
	vc_json_key(j, "detected");
	int q = vc_v4l2_dv_query(src, &dv);
	if (q == 0) {
		dv_write(j, &dv);
	} else {
		/* -ENOLINK no signal, -ENOLCK unstable, -ERANGE out of range */
		vc_json_null(j);
		vc_json_kstr(j, "detect_error", strerror(-q));
	}
	vc_json_key(j, "offered");
	vc_json_arr_begin(j);
	uint32_t i = 0;
	for (; i < DV_LIST_MAX && vc_v4l2_dv_enum(src, i, &dv) == 0; i++)
		dv_write(j, &dv);
	vc_json_arr_end(j);
	vc_json_kbool(j, "offered_truncated", i == DV_LIST_MAX && vc_v4l2_dv_enum(src, i, &dv) == 0);
	vc_json_obj_end(j);
}

void vc_v4l2_info_write(struct vc_json *j, const struct vc_v4l2_info *in)
{
	/* QUERYCAP strings are fixed arrays: bounded, whatever the driver put */
	vc_json_key(j, "card");
	vc_json_string_n(j, in->card, strnlen(in->card, sizeof(in->card)));
	vc_json_key(j, "driver");
	vc_json_string_n(j, in->driver, strnlen(in->driver, sizeof(in->driver)));
	vc_json_key(j, "bus");
	vc_json_string_n(j, in->bus, strnlen(in->bus, sizeof(in->bus)));
}

void vc_v4l2_json(struct vc_src *src, struct vc_json *j)
{
	struct vc_v4l2_info in;

	if (!src)
		return;
	if (vc_v4l2_info(src, &in) == 0)
		vc_v4l2_info_write(j, &in);
	std_list(src, j);
	dv_list(src, j);
}
