/* server/stream/placeholder.c: the picture an absent camera's stream
 * clients get. One size per camera whatever a request asks (issue 21): the
 * configured one, else the default mode's, else the last mode's, else
 * 640x480; the picture is a JPEG of that size, dark, with text (the
 * camera's id, state and path) in white, made again only after a second;
 * the font draws letters. */
#include <event2/event.h>
#include <event2/thread.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/jpeg.h"
#include "server/capture/testsrc_draw.h"
#include "server/stream/stream.h"
#include "server/stream/stream_int.h"

static struct event_base *base;
static struct vc_cam *cam;

static void sizes(void)
{
	struct vc_streams s = { .base = base };
	struct hub h = { .s = &s, .cam = cam };
	static const struct {
		int line;
		struct vc_request req;
		int target;          /* the hub has a target mode 320x240 */
		uint32_t w, hgt;
	} v[] = {
		/* what the request asks is not looked at: the configured size */
		{ __LINE__, { 0 }, 0, 1280, 720 },
		{ __LINE__, { .width = 640 }, 0, 1280, 720 },
		{ __LINE__, { .rotate = 90 }, 0, 1280, 720 },
		{ __LINE__, { .width = 9999, .height = 9999 }, 0, 1280, 720 },
		{ __LINE__, { .width = 4096, .height = 4096, .quality = 100 }, 1, 1280, 720 },
		{ __LINE__, { 0 }, 1, 1280, 720 }, /* configured before the last mode */
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint32_t w = 0xffffffff, hgt = 0xffffffff;

		h.target = v[i].target ? (struct vc_mode){ V4L2_PIX_FMT_YUYV, 320, 240, { 1, 30 } }
				       : (struct vc_mode){ 0 };
		(void)v[i].req;
		placeholder_size(&h, &w, &hgt);
		CHECK_AT(v[i].line, w == v[i].w && hgt == v[i].hgt, "%ux%u, want %ux%u", w, hgt, v[i].w,
			 v[i].hgt);
	}
}

static void picture(void)
{
	struct vc_streams s = { .base = base };
	struct hub h = { .s = &s, .cam = cam };
	struct vc_frame *f = placeholder_frame(&s, &h);
	struct vc_jpeg_info info;

	CHECK(f != NULL, "no frame");
	if (!f)
		return;
	CHECK(f->fmt && f->fmt->fourcc == V4L2_PIX_FMT_MJPEG && f->geom.width == 1280 &&
	      f->geom.height == 720, "an MJPEG frame of 1280x720");
	CHECK(vc_jpeg_parse(f->mem[0], f->bytesused[0], &info) == 0 && info.width == 1280 &&
	      info.height == 720, "a JPEG of 1280x720: %ux%u", info.width, info.height);
	/* decode the luma: mostly dark ground, some white text */
	struct vc_frame *g = vc_frame_new_fmt(vc_fmt_by_fourcc(V4L2_PIX_FMT_GREY), 1280, 720);
	struct vc_image img;
	struct vc_jpeg *j = vc_jpeg_new();
	int dec = g && j && vc_image_from_frame(g, &img) == 0 ?
		  vc_jpeg_decode(j, f->mem[0], f->bytesused[0], 1, &img) : -1;
	CHECK(dec == 0, "decode %d", dec);
	if (dec == 0) {
		size_t dark = 0, white = 0, n = 1280 * 720;
		for (size_t i = 0; i < n; i++) {
			uint8_t y = img.plane[0][(i / 1280) * img.stride[0] + i % 1280];
			dark += y < 60;
			white += y > 200;
		}
		CHECK(dark > n * 3 / 4 && white > 500, "dark %zu white %zu of %zu", dark, white, n);
	}
	CHECK(f->seq >= 1 && f->ts_real_us > 0, "seq %llu", (unsigned long long)f->seq);
	/* within the second: the same picture, not another encode */
	struct vc_frame *f2 = placeholder_frame(&s, &h);
	CHECK(f2 == f, "the same picture within a second");
	vc_frame_unref(f2);
	h.ph_frame->ts_us -= 1100 * 1000;
	f2 = placeholder_frame(&s, &h);
	CHECK(f2 && f2 != f && f2->seq == f->seq + 1, "a new one after a second, numbered");
	vc_frame_unref(f2);
	vc_frame_unref(h.ph_frame);
	vc_jpeg_free(j);
	vc_frame_unref(g);
	vc_frame_unref(f);
	placeholder_free(&s);
	CHECK(s.ph == NULL, "freed");
}

/* Letters (lower case as upper) are drawn: 'A' and 'a' alike, '#' (no
 * glyph) leaves its cell blank. */
static void font(void)
{
	uint8_t y[32 * 16], u[16 * 8], v[16 * 8];
	struct vc_i420_pic pc = { .p = { y, u, v }, .stride = { 32, 16, 16 }, .w = 32, .h = 16,
				  .cw = 16, .ch = 8 };
	uint8_t a1[sizeof(y)];

	memset(y, 0x55, sizeof(y));
	vc_testsrc_draw_text(&pc, 0, 0, 1, "A");
	memcpy(a1, y, sizeof(y));
	/* the glyph's top row: 01110 at columns 1..5 of the cell, row 1 */
	CHECK(y[32 + 1] == 16 && y[32 + 2] == 235 && y[32 + 4] == 235 && y[32 + 5] == 16,
	      "A's top row: %u %u %u %u", y[33], y[34], y[36], y[37]);
	memset(y, 0x55, sizeof(y));
	vc_testsrc_draw_text(&pc, 0, 0, 1, "a");
	CHECK(!memcmp(a1, y, sizeof(y)), "lower case drawn as upper");
	memset(y, 0x55, sizeof(y));
	vc_testsrc_draw_text(&pc, 0, 0, 1, "#");
	size_t lit = 0;
	for (size_t i = 0; i < sizeof(y); i++)
		lit += y[i] == 235;
	CHECK(lit == 0, "no glyph: blank (%zu lit)", lit);
}

int main(void)
{
	/* before any event_base: the worker pool and capture release frames
	 * from their threads (event_active), which needs the base's lock */
	evthread_use_pthreads();
	struct vc_conf_cam cc = { .name = (char *)"t", .device = (char *)"/dev/vcapd-no-such-camera", .input = -1,
				    .mode = { 0, 1280, 720, { 0, 0 } } };

	base = event_base_new();
	if (!base || vc_cam_new(base, &cc, &cam) < 0) {
		printf("placeholder.setup: FAIL\n");
		return 1;
	}
	RUN("placeholder", sizes);
	RUN("placeholder", picture);
	RUN("placeholder", font);
	vc_cam_free(cam);
	event_base_free(base);
	CHECK_EXIT();
}
