/* TV standards and DV timings of a V4L2 camera as JSON members for
 * /api/cams (server/http/api.c): read through vc_cam_source() per request, like
 * controls and inputs, so what is shown is what the device has now. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

int vc_v4l2_std_json(char *dst, size_t n, const struct vc_v4l2_std *s, int current)
{
	char name[sizeof(s->name)];
	safe_name(name, sizeof(name), s->name);
	double fps = s->frameperiod.num ? (double)s->frameperiod.den / s->frameperiod.num : 0;
	return snprintf(dst, n,
			"{\"name\":\"%s\",\"id\":\"0x%016" PRIx64 "\",\"frameperiod\":\"%u/%u\","
			"\"fps\":%.3f,\"lines\":%u,\"current\":%s}",
			name, s->id, s->frameperiod.num, s->frameperiod.den, fps, s->framelines,
			current ? "true" : "false");
}

int vc_v4l2_dv_json(char *dst, size_t n, const struct vc_v4l2_dv *dv)
{
	return snprintf(dst, n,
			"{\"width\":%u,\"height\":%u,\"interlaced\":%s,\"pixelclock\":%" PRIu64
			",\"fps\":%u.%03u,\"name\":\"%ux%u%c%u\"}",
			dv->width, dv->height, dv->interlaced ? "true" : "false", dv->pixelclock,
			dv->fps_milli / 1000, dv->fps_milli % 1000, dv->width, dv->height,
			dv->interlaced ? 'i' : 'p', (dv->fps_milli + 500) / 1000);
}

int vc_v4l2_info_json(char *dst, size_t n, const struct vc_v4l2_info *in)
{
	char card[sizeof(in->card)], driver[sizeof(in->driver)], bus[sizeof(in->bus)];

	safe_name(card, sizeof(card), in->card);
	safe_name(driver, sizeof(driver), in->driver);
	safe_name(bus, sizeof(bus), in->bus);
	return snprintf(dst, n, ",\"card\":\"%s\",\"driver\":\"%s\",\"bus\":\"%s\"", card, driver, bus);
}

void vc_v4l2_json(struct vc_src *src, void (*put)(void *opaque, const char *text), void *opaque)
{
	char t[256];
	struct vc_v4l2_std s;
	struct vc_v4l2_dv dv;
	struct vc_v4l2_info in;
	uint64_t cur = 0;

	if (!src)
		return;
	if (vc_v4l2_info(src, &in) == 0) {
		vc_v4l2_info_json(t, sizeof(t), &in);
		put(opaque, t);
	}
	if (vc_v4l2_std_enum(src, 0, &s) == 0) {
		int have = vc_v4l2_std_get(src, &cur) == 0;
		if (have)
			snprintf(t, sizeof(t), ",\"tv_std\":{\"current\":\"0x%016" PRIx64 "\",\"standards\":[", cur);
		else
			snprintf(t, sizeof(t), ",\"tv_std\":{\"current\":null,\"standards\":[");
		put(opaque, t);
		for (uint32_t i = 0; i < 256 && vc_v4l2_std_enum(src, i, &s) == 0; i++) {
			if (i)
				put(opaque, ",");
			vc_v4l2_std_json(t, sizeof(t), &s, have && s.id == cur);
			put(opaque, t);
		}
		put(opaque, "]}");
	}
	int has_get = vc_v4l2_dv_get(src, &dv) == 0;
	int has_enum = vc_v4l2_dv_enum(src, 0, &dv) == 0;
	if (!has_get && !has_enum)
		return;
	put(opaque, ",\"dv_timings\":{\"current\":");
	if (vc_v4l2_dv_get(src, &dv) == 0) {
		vc_v4l2_dv_json(t, sizeof(t), &dv);
		put(opaque, t);
	} else {
		put(opaque, "null");
	}
	put(opaque, ",\"detected\":");
	int q = vc_v4l2_dv_query(src, &dv);
	if (q == 0) {
		vc_v4l2_dv_json(t, sizeof(t), &dv);
		put(opaque, t);
	} else {
		/* -ENOLINK no signal, -ENOLCK unstable, -ERANGE out of range */
		snprintf(t, sizeof(t), "null,\"detect_error\":\"%s\"", strerror(-q));
		put(opaque, t);
	}
	put(opaque, ",\"offered\":[");
	uint32_t i = 0;
	for (; i < DV_LIST_MAX && vc_v4l2_dv_enum(src, i, &dv) == 0; i++) {
		if (i)
			put(opaque, ",");
		vc_v4l2_dv_json(t, sizeof(t), &dv);
		put(opaque, t);
	}
	put(opaque, i == DV_LIST_MAX && vc_v4l2_dv_enum(src, i, &dv) == 0 ? "],\"offered_truncated\":true}"
									: "],\"offered_truncated\":false}");
}
