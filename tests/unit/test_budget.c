/* The stream memory budget: the bytes an output is estimated to hold, and
 * the config keys that set the limits (max_outputs, frame_memory,
 * max_size), with their errors and printed form. */
#include <errno.h>
#include <linux/videodev2.h>
#include <stdlib.h>

#include "check.h"
#include "common/conf.h"
#include "server/stream/budget.h"

static void output_bytes(void)
{
	/* the camera's mode: YUYV 1920x1080, a frame of SRC bytes */
	const struct vc_mode mode = { .fourcc = V4L2_PIX_FMT_YUYV, .width = 1920, .height = 1080 };
	enum { SRC = 1920 * 1080 * 2 };
	static const struct { uint32_t fcc, w, h; unsigned steps; size_t want; int line; } v[] = {
		{ V4L2_PIX_FMT_MJPEG, 1920, 1080, VC_STEP_PASSTHROUGH, 0, __LINE__ },
		/* two results + the converter's hub (4 B/px) + the camera frame (SRC) */
		{ V4L2_PIX_FMT_YUYV, 1920, 1080, VC_STEP_CONVERT, 1920u * 1080 * (2 * 2 + 4) + SRC, __LINE__ },
		{ V4L2_PIX_FMT_RGB24, 1920, 1080, VC_STEP_CONVERT, 1920u * 1080 * (3 * 2 + 4) + SRC, __LINE__ },
		{ V4L2_PIX_FMT_NV12, 640, 480, VC_STEP_CONVERT, 640u * 480 * (2 * 2 + 4) + SRC, __LINE__ }, /* 4:2:2 floor */
		{ V4L2_PIX_FMT_ABGR32, 4096, 4096, VC_STEP_SCALE, 4096u * 4096 * (4 * 2 + 4) + SRC, __LINE__ },
		{ V4L2_PIX_FMT_MJPEG, 1280, 720, VC_STEP_ENCODE, 1280u * 720 * 2 * 2 + SRC, __LINE__ }, /* no hub */
		{ V4L2_PIX_FMT_MJPEG, 1280, 720, VC_STEP_JPEG_XFORM, 1280u * 720, __LINE__ },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_plan p = { .out = { .fourcc = v[i].fcc, .width = v[i].w, .height = v[i].h },
				     .steps = v[i].steps };
		size_t got = budget_output_bytes(&mode, &p);
		CHECK_AT(v[i].line, got == v[i].want, "got %zu want %zu", got, v[i].want);
	}
}

static void conf_keys(void)
{
	const char *ok = "[server]\nmax_outputs = 4\nframe_memory = 32\nmax_size = 1280x720\n";
	struct vc_conf *c = NULL;
	char err[512];
	int r = vc_conf_parse(ok, strlen(ok), "t", &c, err, sizeof(err));
	CHECK(r == 0 && c->max_outputs == 4 && c->frame_memory_mb == 32 && c->max_width == 1280 &&
	      c->max_height == 720, "parsed: %s", err);
	if (c) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		vc_conf_print(c, f, 0);
		fclose(f);
		CHECK(buf && strstr(buf, "max_outputs = 4\nframe_memory = 32\nmax_size = 1280x720\n"),
		      "printed:\n%s", buf ? buf : "");
		free(buf);
	}
	vc_conf_free(c);
	static const char *const bad[] = { "max_outputs = 0", "max_outputs = x", "frame_memory = 7",
					   "max_size = 1280", "max_size = 1280x", "max_size = x720",
					   "max_size = 8x8", "max_size = 20000x100", "max_size = 640x480x",
					   "frame_memory = 64M" };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		char text[128];
		c = NULL;
		snprintf(text, sizeof(text), "[server]\n%s\n", bad[i]);
		CHECK(vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == -EINVAL,
		      "%s refused", bad[i]);
		vc_conf_free(c);
	}
}

int main(void)
{
	RUN("budget", output_bytes);
	RUN("budget", conf_keys);
	CHECK_EXIT();
}
