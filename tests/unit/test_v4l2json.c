/* server/capture/v4l2_json.c formatting: one TV standard and one DV timings as the
 * JSON objects /api/cams shows, parsed back with common/json; a driver name
 * with a quote cannot break the document; a NULL source adds nothing. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/json.h"
#include "server/capture/v4l2src.h"

static void std_object(void)
{
	struct vc_v4l2_std s = { .id = 0xb000, .name = "NTSC", .frameperiod = { 1001, 30000 },
				 .framelines = 525 };
	char t[256];
	int n = vc_v4l2_std_json(t, sizeof(t), &s, 1);
	CHECK(n > 0 && (size_t)n < sizeof(t), "length %d", n);
	CHECK(strcmp(t, "{\"name\":\"NTSC\",\"id\":\"0x000000000000b000\",\"frameperiod\":\"1001/30000\","
			"\"fps\":29.970,\"lines\":525,\"current\":true}") == 0, "%s", t);
	struct vc_json_object o;
	struct vc_json_perr pe;
	CHECK(vc_json_parse_object(t, strlen(t), &o, &pe) == 0, "parses: %s", t);
	vc_json_object_free(&o);
	strcpy(s.name, "PAL\"\\\x01x");
	s.frameperiod = (struct vc_fract){ 0, 0 };
	vc_v4l2_std_json(t, sizeof(t), &s, 0);
	CHECK(strstr(t, "\"name\":\"PAL???x\"") && strstr(t, "\"fps\":0.000") &&
	      strstr(t, "\"current\":false"), "%s", t);
	CHECK(vc_json_parse_object(t, strlen(t), &o, &pe) == 0, "parses: %s", t);
	vc_json_object_free(&o);
	/* snprintf contract: too small a buffer says what it needs */
	CHECK(vc_v4l2_std_json(t, 8, &s, 0) > 8 && strlen(t) == 7, "truncated %s", t);
}

static void dv_object(void)
{
	struct vc_v4l2_dv dv = { .width = 800, .height = 600, .interlaced = 0,
				 .pixelclock = 40000000, .fps_milli = 60317 };
	char t[256];
	vc_v4l2_dv_json(t, sizeof(t), &dv);
	CHECK(strcmp(t, "{\"width\":800,\"height\":600,\"interlaced\":false,\"pixelclock\":40000000,"
			"\"fps\":60.317,\"name\":\"800x600p60\"}") == 0, "%s", t);
	dv = (struct vc_v4l2_dv){ .width = 1920, .height = 1080, .interlaced = 1,
				  .pixelclock = 74175824, .fps_milli = 29970 };
	vc_v4l2_dv_json(t, sizeof(t), &dv);
	CHECK(strstr(t, "\"interlaced\":true") && strstr(t, "\"fps\":29.970") &&
	      strstr(t, "\"name\":\"1920x1080i30\""), "%s", t);
	struct vc_json_object o;
	struct vc_json_perr pe;
	CHECK(vc_json_parse_object(t, strlen(t), &o, &pe) == 0, "parses: %s", t);
	vc_json_object_free(&o);
}

/* The identity members the page titles a camera with: a card name the
 * driver filled to the last byte (no NUL) is cut at the field, a quote in
 * it cannot break the document. */
static void info_members(void)
{
	struct vc_v4l2_info in = { .driver = "uvcvideo", .card = "HD Pro Webcam C920",
				   .bus = "usb-0000:01:00.0-1.2" };
	struct vc_json j;
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_v4l2_info_write(&j, &in);
	vc_json_obj_end(&j);
	CHECK(!strcmp(vc_json_str_get(&j), "{\"card\":\"HD Pro Webcam C920\",\"driver\":\"uvcvideo\","
			 "\"bus\":\"usb-0000:01:00.0-1.2\"}"), "%s", vc_json_str_get(&j));
	vc_json_free(&j);
	memset(in.card, 'A', sizeof(in.card)); /* no NUL inside the field */
	in.card[3] = '"';
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_v4l2_info_write(&j, &in);
	vc_json_obj_end(&j);
	const char *t = vc_json_str_get(&j);
	struct vc_json_object o;
	struct vc_json_perr pe;
	CHECK(strstr(t, "\"card\":\"AAA\\\"AAAAAAAAAAAAAAAAAAAAAAAAAAAA\",") != NULL, "%s", t);
	CHECK(vc_json_parse_object(t, strlen(t), &o, &pe) == 0, "parses: %s", t);
	vc_json_object_free(&o);
	vc_json_free(&j);
}

static void null_source(void)
{
	struct vc_json j;
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	size_t n0 = vc_json_len(&j);
	vc_v4l2_json(NULL, &j);
	size_t n = vc_json_len(&j) - n0;
	CHECK(n == 0, "%zu bytes", n);
	vc_json_free(&j);
}

int main(void)
{
	RUN("v4l2json", std_object);
	RUN("v4l2json", dv_object);
	RUN("v4l2json", info_members);
	RUN("v4l2json", null_source);
	CHECK_EXIT();
}
