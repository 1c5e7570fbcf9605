/* Unit tests of common/negotiate.c. The expected answers were worked out by
 * hand from the policy documented atop negotiate.c (decode scaling, alignment,
 * MCU trimming of lossless transforms, cost weights and hysteresis), not
 * copied from the program's output. */
#include "common/negotiate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/videodev2.h>

#include "tests/unit/check.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define MJPG V4L2_PIX_FMT_MJPEG
#define JPEG V4L2_PIX_FMT_JPEG
#define YUYV V4L2_PIX_FMT_YUYV
#define UYVY V4L2_PIX_FMT_UYVY
#define I420 V4L2_PIX_FMT_YUV420
#define YV12 V4L2_PIX_FMT_YVU420
#define NV12 V4L2_PIX_FMT_NV12
#define RGB3 V4L2_PIX_FMT_RGB24
#define GREY V4L2_PIX_FMT_GREY
#define BA81 V4L2_PIX_FMT_SBGGR8
#define RGGB V4L2_PIX_FMT_SRGGB8
#define BOGUS v4l2_fourcc('X', 'X', 'X', 'X')

#define PT VC_STEP_PASSTHROUGH
#define DE VC_STEP_DECODE
#define CV VC_STEP_CONVERT
#define SC VC_STEP_SCALE
#define RO VC_STEP_ROTATE
#define EN VC_STEP_ENCODE
#define XF VC_STEP_JPEG_XFORM

#define AF VC_ADJ_FORMAT
#define AS VC_ADJ_SIZE
#define AFPS VC_ADJ_FPS
#define AQ VC_ADJ_QUALITY
#define AR VC_ADJ_ROTATE

/* Device modes used by the plan table. */
#define M_YUYV480 { YUYV, 640, 480, { 1, 30 } }
#define M_MJPG1080 { MJPG, 1920, 1080, { 1, 30 } }
#define M_MJPG768 { MJPG, 1366, 768, { 1, 30 } }
#define M_MJPG482 { MJPG, 640, 482, { 1, 30 } }
#define M_I420720 { I420, 1280, 720, { 1, 30 } }
#define M_NV12480 { NV12, 640, 480, { 1, 30 } }
#define M_BA81480 { BA81, 640, 480, { 1, 30 } }
#define M_YUYV480_ANY { YUYV, 640, 480, { 0, 0 } }
#define M_YUYV480_NTSC { YUYV, 640, 480, { 1001, 30000 } }
#define M_UYVY480 { UYVY, 720, 480, { 1, 30 } }

struct plan_row {
	int line;
	struct vc_mode mode;
	struct vc_request req; /* fourcc, w, h, fps, quality, rotate, flip */
	int rc;
	uint32_t fourcc, w, h;
	uint8_t quality;
	unsigned steps, adjusted;
	uint32_t fps;
	uint8_t denom;
};

#define R(...) { __VA_ARGS__ }
static const struct plan_row plan_rows[] = {
	/* YUYV 640x480 camera */
	{ __LINE__, M_YUYV480, R(0), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 320, 240), 0, YUYV, 320, 240, 0, SC, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 1280, 720), 0, YUYV, 640, 480, 0, PT, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(MJPG), 0, MJPG, 640, 480, 80, CV | EN, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(JPEG, 0, 0, 0, 50), 0, MJPG, 640, 480, 50, CV | EN, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(MJPG, 320), 0, MJPG, 320, 240, 80, CV | SC | EN, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(I420), 0, I420, 640, 480, 0, CV, 0, 30, 1 },
	/* 4:2:0 needs even sizes; the derived height follows the aspect ratio */
	{ __LINE__, M_YUYV480, R(I420, 321), 0, I420, 320, 240, 0, CV | SC, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(I420, 0, 241), 0, I420, 320, 240, 0, CV | SC, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 641, 481), 0, YUYV, 640, 480, 0, PT, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 101, 75), 0, YUYV, 100, 75, 0, SC, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 1), 0, YUYV, 2, 1, 0, SC, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(RGB3, 0, 0, 0, 0, 90), 0, RGB3, 480, 640, 0, CV | RO, 0, 30, 1 },
	/* packed 4:2:2 cannot be turned directly: a hub conversion is needed */
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 90), 0, YUYV, 480, 640, 0, CV | RO, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 180), 0, YUYV, 640, 480, 0, CV | RO, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 0, VC_FLIP_V), 0, YUYV, 640, 480, 0, RO, 0, 30, 1 },
	/* 180 + both flips is the identity */
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 180, 3), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 45), 0, YUYV, 480, 640, 0, CV | RO, AR, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 44), 0, YUYV, 640, 480, 0, PT, AR, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 360), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 0, 315), 0, YUYV, 640, 480, 0, PT, AR, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 15), 0, YUYV, 640, 480, 0, PT, 0, 15, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 60), 0, YUYV, 640, 480, 0, PT, AFPS, 30, 1 },
	{ __LINE__, M_YUYV480, R(MJPG, 0, 0, 0, 150), 0, MJPG, 640, 480, 100, CV | EN, AQ, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 0, 0, 0, 150), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(BA81), -EINVAL },
	{ __LINE__, M_YUYV480, R(BOGUS), -EINVAL },
	/* sizes are the delivered (rotated) size */
	{ __LINE__, M_YUYV480, R(I420, 320, 0, 0, 0, 90), 0, I420, 320, 426, 0, CV | SC | RO, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 480, 640, 0, 0, 90), 0, YUYV, 480, 640, 0, CV | RO, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(YUYV, 640, 480, 0, 0, 90), 0, YUYV, 480, 480, 0, CV | SC | RO, AS, 30, 1 },
	{ __LINE__, M_YUYV480, R(GREY), 0, GREY, 640, 480, 0, CV, 0, 30, 1 },
	{ __LINE__, M_YUYV480, R(NV12, 320, 240, 0, 0, 0, VC_FLIP_H), 0, NV12, 320, 240, 0, CV | SC | RO, 0, 30, 1 },

	/* MJPEG 1920x1080 camera */
	{ __LINE__, M_MJPG1080, R(0), 0, MJPG, 1920, 1080, 0, PT, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG), 0, MJPG, 1920, 1080, 0, PT, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(JPEG), 0, MJPG, 1920, 1080, 0, PT, 0, 30, 1 },
	/* a named quality re-encodes the camera's JPEG (same size: no scaling) */
	{ __LINE__, M_MJPG1080, R(MJPG, 0, 0, 0, 50), 0, MJPG, 1920, 1080, 50, DE | EN, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 0, 0, 0, 50, 90), 0, MJPG, 1080, 1920, 50, DE | RO | EN, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(JPEG, 0, 0, 0, 100), 0, MJPG, 1920, 1080, 100, DE | EN, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 960, 540, 0, 30), 0, MJPG, 960, 540, 30, DE | EN, 0, 30, 2 },
	{ __LINE__, M_MJPG1080, R(MJPG, 960, 540), 0, MJPG, 960, 540, 80, DE | EN, 0, 30, 2 },
	{ __LINE__, M_MJPG1080, R(MJPG, 640, 360), 0, MJPG, 640, 360, 80, DE | SC | EN, 0, 30, 2 },
	{ __LINE__, M_MJPG1080, R(MJPG, 480, 270), 0, MJPG, 480, 270, 80, DE | EN, 0, 30, 4 },
	{ __LINE__, M_MJPG1080, R(MJPG, 240, 135), 0, MJPG, 240, 135, 80, DE | EN, 0, 30, 8 },
	{ __LINE__, M_MJPG1080, R(MJPG, 200, 100), 0, MJPG, 200, 100, 80, DE | SC | EN, 0, 30, 8 },
	{ __LINE__, M_MJPG1080, R(MJPG, 1280, 720), 0, MJPG, 1280, 720, 80, DE | SC | EN, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 0, 0, 0, 0, 90), 0, MJPG, 1080, 1920, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 0, 0, 0, 0, 0, VC_FLIP_H), 0, MJPG, 1920, 1080, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 0, 0, 0, 0, 180), 0, MJPG, 1920, 1080, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 1080, 1920, 0, 0, 270), 0, MJPG, 1080, 1920, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(I420), 0, I420, 1920, 1080, 0, DE, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(YUYV), 0, YUYV, 1920, 1080, 0, DE | CV, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(YUYV, 960, 540), 0, YUYV, 960, 540, 0, DE | CV, 0, 30, 2 },
	{ __LINE__, M_MJPG1080, R(I420, 640, 480), 0, I420, 640, 480, 0, DE | SC, 0, 30, 2 },
	{ __LINE__, M_MJPG1080, R(RGB3), 0, RGB3, 1920, 1080, 0, DE, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(I420, 0, 0, 0, 0, 90), 0, I420, 1080, 1920, 0, DE | RO, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(YUYV, 0, 0, 0, 0, 90), 0, YUYV, 1080, 1920, 0, DE | CV | RO, 0, 30, 1 },
	/* 960x540 delivered after a quarter turn = 540x960 before: no DCT scaling fits */
	{ __LINE__, M_MJPG1080, R(MJPG, 960, 540, 0, 0, 90), 0, MJPG, 960, 540, 80, DE | SC | RO | EN, 0, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 540, 0, 0, 0, 90), 0, MJPG, 540, 960, 80, DE | RO | EN, 0, 30, 2 },
	{ __LINE__, M_MJPG1080, R(BA81), -EINVAL },
	{ __LINE__, M_MJPG1080, R(GREY, 1920, 1080, 60), 0, GREY, 1920, 1080, 0, DE, AFPS, 30, 1 },
	{ __LINE__, M_MJPG1080, R(MJPG, 2000), 0, MJPG, 1920, 1080, 0, PT, AS, 30, 1 },

	/* MJPEG 1366x768: partial MCUs (1366 = 85 * 16 + 6) trimmed by lossless ops */
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 90), 0, MJPG, 768, 1366, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 270), 0, MJPG, 768, 1360, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 0, VC_FLIP_H), 0, MJPG, 1360, 768, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 0, VC_FLIP_V), 0, MJPG, 1366, 768, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 180), 0, MJPG, 1360, 768, 0, XF, 0, 30, 1 },
	/* hflip + 270 = transpose: no trim */
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 270, VC_FLIP_H), 0, MJPG, 768, 1366, 0, XF, 0, 30, 1 },
	/* hflip + 90 = transverse: both edges */
	{ __LINE__, M_MJPG768, R(MJPG, 0, 0, 0, 0, 90, VC_FLIP_H), 0, MJPG, 768, 1360, 0, XF, 0, 30, 1 },
	{ __LINE__, M_MJPG768, R(MJPG, 683, 384), 0, MJPG, 683, 384, 80, DE | EN, 0, 30, 2 },
	{ __LINE__, M_MJPG768, R(MJPG, 342, 192), 0, MJPG, 342, 192, 80, DE | EN, 0, 30, 4 },
	{ __LINE__, M_MJPG768, R(I420, 683), 0, I420, 682, 384, 0, DE | SC, AS, 30, 2 },
	{ __LINE__, M_MJPG482, R(MJPG, 0, 0, 0, 0, 90), 0, MJPG, 480, 640, 0, XF, 0, 30, 1 },

	/* I420 1280x720 */
	{ __LINE__, M_I420720, R(I420), 0, I420, 1280, 720, 0, PT, 0, 30, 1 },
	{ __LINE__, M_I420720, R(YV12), 0, YV12, 1280, 720, 0, CV, 0, 30, 1 },
	{ __LINE__, M_I420720, R(MJPG), 0, MJPG, 1280, 720, 80, EN, 0, 30, 1 },
	{ __LINE__, M_I420720, R(MJPG, 640, 360), 0, MJPG, 640, 360, 80, SC | EN, 0, 30, 1 },
	{ __LINE__, M_I420720, R(MJPG, 0, 0, 0, 0, 90), 0, MJPG, 720, 1280, 80, RO | EN, 0, 30, 1 },
	{ __LINE__, M_I420720, R(I420, 0, 0, 0, 0, 90), 0, I420, 720, 1280, 0, RO, 0, 30, 1 },
	{ __LINE__, M_I420720, R(NV12, 641), 0, NV12, 640, 360, 0, CV | SC, AS, 30, 1 },
	{ __LINE__, M_I420720, R(YUYV, 1280, 720), 0, YUYV, 1280, 720, 0, CV, 0, 30, 1 },

	/* NV12 640x480 */
	{ __LINE__, M_NV12480, R(NV12), 0, NV12, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_NV12480, R(MJPG), 0, MJPG, 640, 480, 80, CV | EN, 0, 30, 1 },
	{ __LINE__, M_NV12480, R(NV12, 0, 0, 0, 0, 90), 0, NV12, 480, 640, 0, RO, 0, 30, 1 },

	/* Bayer: passthrough only as itself, never scaled or turned */
	{ __LINE__, M_BA81480, R(BA81), 0, BA81, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_BA81480, R(0), 0, BA81, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_BA81480, R(BA81, 320, 240), 0, BA81, 640, 480, 0, PT, AS, 30, 1 },
	{ __LINE__, M_BA81480, R(BA81, 0, 0, 0, 0, 90), -EINVAL },
	{ __LINE__, M_BA81480, R(RGGB), -EINVAL },
	{ __LINE__, M_BA81480, R(RGB3), 0, RGB3, 640, 480, 0, CV, 0, 30, 1 },
	{ __LINE__, M_BA81480, R(MJPG), 0, MJPG, 640, 480, 80, CV | EN, 0, 30, 1 },

	/* rates */
	{ __LINE__, M_YUYV480_ANY, R(YUYV, 0, 0, 25), 0, YUYV, 640, 480, 0, PT, 0, 25, 1 },
	{ __LINE__, M_YUYV480_ANY, R(0), 0, YUYV, 640, 480, 0, PT, 0, 0, 1 },
	{ __LINE__, M_YUYV480_NTSC, R(YUYV, 0, 0, 30), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_YUYV480_NTSC, R(0), 0, YUYV, 640, 480, 0, PT, 0, 30, 1 },
	{ __LINE__, M_UYVY480, R(UYVY, 0, 0, 0, 0, 0, VC_FLIP_V), 0, UYVY, 720, 480, 0, RO, 0, 30, 1 },

	/* bad modes */
	{ __LINE__, { BOGUS, 640, 480, { 1, 30 } }, R(0), -EINVAL },
	{ __LINE__, { YUYV, 0, 480, { 1, 30 } }, R(0), -EINVAL },
};

static void plan_table(void)
{
	for (size_t i = 0; i < ARRAY_LEN(plan_rows); i++) {
		const struct plan_row *r = &plan_rows[i];
		struct vc_plan p;
		memset(&p, 0xff, sizeof(p));
		int rc = vc_negotiate_plan(&r->mode, &r->req, &p);
		if (r->rc) {
			CHECK_AT(r->line, rc == r->rc && p.steps == 0xffffffffu,
				 "rc %d want %d (plan must stay untouched)", rc, r->rc);
			continue;
		}
		char got[96], want[96];
		vc_steps_str(p.steps, p.decode_denom, got, sizeof(got));
		vc_steps_str(r->steps, r->denom, want, sizeof(want));
		CHECK_AT(r->line,
			 rc == 0 && p.out.fourcc == r->fourcc && p.out.width == r->w &&
				 p.out.height == r->h && p.out.quality == r->quality &&
				 p.steps == r->steps && p.adjusted == r->adjusted &&
				 p.fps == r->fps && p.decode_denom == r->denom,
			 "rc %d got %08x %ux%u q%u %s adj %x fps %u; want %08x %ux%u q%u %s adj %x fps %u",
			 rc, p.out.fourcc, p.out.width, p.out.height, p.out.quality, got, p.adjusted,
			 p.fps, r->fourcc, r->w, r->h, r->quality, want, r->adjusted, r->fps);
	}
	CHECK(ARRAY_LEN(plan_rows) >= 80, "%zu plan rows", ARRAY_LEN(plan_rows));
}

/* Capability fixtures. */
#define IV(...) { __VA_ARGS__ }
#define SZ(w, h, n, ...) { w, h, n, { __VA_ARGS__ } }

/* A typical UVC webcam: MJPEG and YUYV native, libv4l2 adds RGB24/YU12. */
static struct vc_caps_size a_mjpg[] = {
	SZ(1920, 1080, 2, IV(1, 30), IV(1, 15)),
	SZ(1280, 720, 2, IV(1, 30), IV(1, 15)),
	SZ(640, 480, 2, IV(1, 30), IV(1, 15)),
	SZ(320, 240, 1, IV(1, 30)),
};
static struct vc_caps_size a_yuyv[] = {
	SZ(1920, 1080, 1, IV(1, 5)),
	SZ(1280, 720, 1, IV(1, 10)),
	SZ(640, 480, 2, IV(1, 30), IV(1, 15)),
	SZ(320, 240, 1, IV(1, 30)),
};
static struct vc_caps_size a_emu[] = {
	SZ(1280, 720, 1, IV(1, 10)),
	SZ(640, 480, 1, IV(1, 30)),
};
static struct vc_caps_fmt a_fmts[] = {
	{ .fourcc = MJPG, .n_sizes = 4, .sizes = a_mjpg },
	{ .fourcc = YUYV, .n_sizes = 4, .sizes = a_yuyv },
	{ .fourcc = RGB3, .emulated = 1, .n_sizes = 2, .sizes = a_emu },
	{ .fourcc = I420, .emulated = 1, .n_sizes = 2, .sizes = a_emu },
};
static const struct vc_caps caps_a = { 4, a_fmts };

/* MJPEG only, two close sizes (hysteresis). */
static struct vc_caps_size c_mjpg[] = {
	SZ(1280, 720, 1, IV(1, 30)),
	SZ(1024, 768, 1, IV(1, 30)),
};
static struct vc_caps_fmt c_fmts[] = { { .fourcc = MJPG, .n_sizes = 2, .sizes = c_mjpg } };
static const struct vc_caps caps_c = { 1, c_fmts };

/* A raw Bayer sensor. */
static struct vc_caps_size d_sizes[] = {
	SZ(640, 480, 1, IV(1, 30)),
	SZ(1280, 960, 1, IV(1, 15)),
};
static struct vc_caps_fmt d_fmts[] = {
	{ .fourcc = BA81, .n_sizes = 2, .sizes = d_sizes },
	{ .fourcc = RGB3, .emulated = 1, .n_sizes = 2, .sizes = d_sizes },
};
static const struct vc_caps caps_d = { 2, d_fmts };

/* A stepwise YUYV device with no listed sizes or intervals. */
static struct vc_caps_fmt e_fmts[] = { { .fourcc = YUYV, .stepwise = 1, .min_w = 16,
					 .max_w = 1920, .step_w = 2, .min_h = 16, .max_h = 1080,
					 .step_h = 2 } };
static const struct vc_caps caps_e = { 1, e_fmts };

/* A stepwise YUYV device listing representative sizes with their rates (the
 * shape of the test source and of v4l2's stepwise caps). */
static struct vc_caps_size f_sizes[] = {
	SZ(640, 480, 3, IV(1, 60), IV(1, 30), IV(1, 15)),
	SZ(1280, 720, 2, IV(1, 30), IV(1, 10)),
};
static struct vc_caps_fmt f_fmts[] = { { .fourcc = YUYV, .stepwise = 1, .min_w = 16,
					 .max_w = 1920, .step_w = 2, .min_h = 16, .max_h = 1080,
					 .step_h = 2, .n_sizes = 2, .sizes = f_sizes } };
static const struct vc_caps caps_f = { 1, f_fmts };

/* Nothing usable. */
static struct vc_caps_fmt x_fmts[] = { { .fourcc = BOGUS, .n_sizes = 1, .sizes = a_emu } };
static const struct vc_caps caps_x = { 1, x_fmts };
static const struct vc_caps caps_empty = { 0, NULL };

#define MAXREQ 4
struct mode_row {
	int line;
	const struct vc_caps *caps;
	struct vc_mode cur, pref; /* fourcc 0 = NULL */
	size_t n;
	struct vc_request reqs[MAXREQ];
	int rc;
	struct vc_mode want;
};

#define NOM { 0, 0, 0, { 0, 0 } }
#define MD(f, w, h, num, den) { f, w, h, { num, den } }
static const struct mode_row mode_rows[] = {
	/* nobody asks: cur, else preferred, else the default */
	{ __LINE__, &caps_a, NOM, NOM, 0, { R(0) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	{ __LINE__, &caps_a, NOM, MD(YUYV, 640, 480, 1, 30), 0, { R(0) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, MD(YUYV, 1280, 720, 1, 10), MD(YUYV, 640, 480, 1, 30), 0, { R(0) }, 0, MD(YUYV, 1280, 720, 1, 10) },
	{ __LINE__, &caps_a, MD(MJPG, 800, 600, 1, 30), NOM, 0, { R(0) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	{ __LINE__, &caps_a, NOM, MD(YUYV, 800, 600, 1, 30), 0, { R(0) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	/* a request without size wants the reference size */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	{ __LINE__, &caps_a, NOM, MD(YUYV, 640, 480, 1, 30), 1, { R(MJPG) }, 0, MD(MJPG, 640, 480, 1, 30) },
	/* native passthrough */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 640, 480) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 640, 480, 15) }, 0, MD(MJPG, 640, 480, 1, 15) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(YUYV, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 320, 240) }, 0, MD(MJPG, 320, 240, 1, 30) },
	/* YUYV 720p only gives 10 fps: the rate wins over passthrough */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(YUYV, 1280, 720) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(YUYV, 1280, 720, 30) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(YUYV, 1280, 720, 10) }, 0, MD(YUYV, 1280, 720, 1, 10) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 1280, 720, 10) }, 0, MD(MJPG, 1280, 720, 1, 15) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(YUYV, 1920, 1080, 5) }, 0, MD(YUYV, 1920, 1080, 1, 5) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(YUYV, 1920, 1080) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	{ __LINE__, &caps_a, MD(YUYV, 1920, 1080, 1, 5), NOM, 1, { R(YUYV, 1920, 1080) }, 0, MD(YUYV, 1920, 1080, 1, 5) },
	/* native over emulated */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(I420, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(RGB3, 1280, 720) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, MD(I420, 640, 480, 1, 30), NOM, 1, { R(I420, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(GREY, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	/* smallest mode that serves, cheapest route */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 800, 600) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 2, { R(MJPG, 640, 480), R(MJPG, 1280, 720) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 2, { R(YUYV, 640, 480), R(MJPG, 640, 480) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 2, { R(YUYV, 320, 240), R(YUYV, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 3, { R(MJPG, 640, 480), R(MJPG, 640, 480), R(MJPG, 640, 480) }, 0, MD(MJPG, 640, 480, 1, 30) },
	/* named qualities are encoded: from YUYV that skips the decode */
	{ __LINE__, &caps_a, NOM, NOM, 2, { R(MJPG, 640, 480, 0, 50), R(MJPG, 640, 480, 0, 90) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 640) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 0, 720) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	/* too big for everything: the largest, clamped */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 4000, 3000) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	/* rate nobody reaches: the fastest */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 320, 240, 60) }, 0, MD(MJPG, 320, 240, 1, 30) },
	/* rotation: a portrait request served by a lossless turn of 640x480 */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 480, 640, 0, 0, 90) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(MJPG, 640, 480, 0, 0, 90) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	/* hysteresis */
	{ __LINE__, &caps_a, MD(MJPG, 1280, 720, 1, 30), NOM, 1, { R(MJPG, 640, 480) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, MD(MJPG, 1280, 720, 1, 30), NOM, 2, { R(MJPG, 640, 480), R(MJPG) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, MD(YUYV, 640, 480, 1, 30), NOM, 1, { R(I420, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), NOM, 1, { R(MJPG, 1280, 720) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, MD(MJPG, 1280, 720, 1, 30), NOM, 2, { R(MJPG, 1280, 720), R(YUYV, 640, 480) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_a, MD(MJPG, 640, 480, 1, 15), NOM, 1, { R(MJPG) }, 0, MD(MJPG, 640, 480, 1, 15) },
	{ __LINE__, &caps_a, MD(MJPG, 640, 480, 1, 30), NOM, 1, { R(I420, 320, 240) }, 0, MD(YUYV, 320, 240, 1, 30) },
	{ __LINE__, &caps_c, NOM, NOM, 1, { R(MJPG, 1024, 576) }, 0, MD(MJPG, 1024, 768, 1, 30) },
	/* 1024x768 costs ~91 % of 1280x720 here: not clearly cheaper, keep */
	{ __LINE__, &caps_c, MD(MJPG, 1280, 720, 1, 30), NOM, 1, { R(MJPG, 1024, 576) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	{ __LINE__, &caps_c, MD(MJPG, 1024, 768, 1, 30), NOM, 1, { R(MJPG, 1280, 720) }, 0, MD(MJPG, 1280, 720, 1, 30) },
	/* an unservable request keeps what streams */
	{ __LINE__, &caps_a, NOM, NOM, 1, { R(BA81) }, 0, MD(MJPG, 1920, 1080, 1, 30) },
	{ __LINE__, &caps_a, MD(YUYV, 640, 480, 1, 30), NOM, 1, { R(BOGUS) }, 0, MD(YUYV, 640, 480, 1, 30) },
	/* Bayer sensor */
	{ __LINE__, &caps_d, NOM, NOM, 1, { R(MJPG, 640, 480) }, 0, MD(BA81, 640, 480, 1, 30) },
	{ __LINE__, &caps_d, NOM, NOM, 1, { R(BA81) }, 0, MD(BA81, 1280, 960, 1, 15) },
	{ __LINE__, &caps_d, NOM, NOM, 1, { R(RGB3, 1280, 960) }, 0, MD(BA81, 1280, 960, 1, 15) },
	{ __LINE__, &caps_d, NOM, NOM, 0, { R(0) }, 0, MD(BA81, 1280, 960, 1, 15) },
	/* stepwise */
	{ __LINE__, &caps_e, NOM, NOM, 0, { R(0) }, 0, MD(YUYV, 1920, 1080, 0, 0) },
	{ __LINE__, &caps_e, NOM, NOM, 1, { R(YUYV, 640, 480) }, 0, MD(YUYV, 640, 480, 0, 0) },
	{ __LINE__, &caps_e, NOM, NOM, 1, { R(YUYV, 641, 481) }, 0, MD(YUYV, 642, 482, 0, 0) },
	{ __LINE__, &caps_e, NOM, NOM, 1, { R(MJPG, 320, 240) }, 0, MD(YUYV, 320, 240, 0, 0) },
	{ __LINE__, &caps_e, MD(YUYV, 640, 480, 0, 0), NOM, 1, { R(YUYV) }, 0, MD(YUYV, 640, 480, 0, 0) },
	/* the rate is explicit: a size inside a range gets the rates of the
	 * smallest listed size covering it (else the largest), never 0/0 when
	 * the caps know rates; a request without fps wants the configured rate */
	{ __LINE__, &caps_f, NOM, NOM, 0, { R(0) }, 0, MD(YUYV, 1280, 720, 1, 30) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 640, 480) }, 0, MD(YUYV, 640, 480, 1, 30) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 640, 480, 15) }, 0, MD(YUYV, 640, 480, 1, 15) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 640, 480, 60) }, 0, MD(YUYV, 640, 480, 1, 60) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 800, 600) }, 0, MD(YUYV, 800, 600, 1, 30) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 800, 600, 10) }, 0, MD(YUYV, 800, 600, 1, 10) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 400, 300, 50) }, 0, MD(YUYV, 400, 300, 1, 60) },
	{ __LINE__, &caps_f, NOM, NOM, 1, { R(YUYV, 1920, 1080) }, 0, MD(YUYV, 1920, 1080, 1, 30) },
	{ __LINE__, &caps_f, NOM, MD(YUYV, 640, 480, 1, 15), 1, { R(YUYV) }, 0, MD(YUYV, 640, 480, 1, 15) },
	{ __LINE__, &caps_a, MD(MJPG, 640, 480, 1, 15), MD(MJPG, 640, 480, 1, 30), 1, { R(MJPG) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, MD(MJPG, 640, 480, 1, 15), MD(MJPG, 640, 480, 1, 30), 2, { R(MJPG, 640, 480, 15), R(MJPG) }, 0, MD(MJPG, 640, 480, 1, 30) },
	{ __LINE__, &caps_a, MD(MJPG, 640, 480, 1, 15), MD(MJPG, 640, 480, 1, 30), 1, { R(MJPG, 640, 480, 15) }, 0, MD(MJPG, 640, 480, 1, 15) },
	/* nothing usable */
	{ __LINE__, &caps_empty, NOM, NOM, 1, { R(MJPG) }, -ENOENT },
	{ __LINE__, &caps_x, NOM, NOM, 0, { R(0) }, -ENOENT },
};

static void mode_table(void)
{
	for (size_t i = 0; i < ARRAY_LEN(mode_rows); i++) {
		const struct mode_row *r = &mode_rows[i];
		struct vc_mode out;
		memset(&out, 0xff, sizeof(out));
		int rc = vc_negotiate_mode(r->caps, r->cur.fourcc ? &r->cur : NULL,
					   r->pref.fourcc ? &r->pref : NULL, r->reqs, r->n, &out);
		if (r->rc) {
			CHECK_AT(r->line, rc == r->rc, "rc %d want %d", rc, r->rc);
			continue;
		}
		char a[16], b[16];
		CHECK_AT(r->line,
			 rc == 0 && out.fourcc == r->want.fourcc && out.width == r->want.width &&
				 out.height == r->want.height && out.ival.num == r->want.ival.num &&
				 out.ival.den == r->want.ival.den,
			 "rc %d got %s %ux%u %u/%u want %s %ux%u %u/%u", rc,
			 vc_fourcc_str(out.fourcc, a), out.width, out.height, out.ival.num,
			 out.ival.den, vc_fourcc_str(r->want.fourcc, b), r->want.width,
			 r->want.height, r->want.ival.num, r->want.ival.den);
	}
	CHECK(ARRAY_LEN(mode_rows) >= 50, "%zu mode rows", ARRAY_LEN(mode_rows));
}

/* Every row again with each request repeated 16 times, interleaved: equal
 * requests are scored once with their count, which must give the answer of
 * scoring each (all deficits scale alike). */
static void repeated_requests(void)
{
	for (size_t i = 0; i < ARRAY_LEN(mode_rows); i++) {
		const struct mode_row *r = &mode_rows[i];
		struct vc_request reqs[64];
		size_t n = 0;
		struct vc_mode out;

		if (r->rc || !r->n)
			continue;
		for (int k = 0; k < 16; k++)
			for (size_t j = 0; j < r->n; j++)
				reqs[n++] = r->reqs[j];
		memset(&out, 0xff, sizeof(out));
		int rc = vc_negotiate_mode(r->caps, r->cur.fourcc ? &r->cur : NULL,
					   r->pref.fourcc ? &r->pref : NULL, reqs, n, &out);
		CHECK_AT(r->line,
			 rc == 0 && out.fourcc == r->want.fourcc && out.width == r->want.width &&
				 out.height == r->want.height && out.ival.num == r->want.ival.num &&
				 out.ival.den == r->want.ival.den,
			 "x16: rc %d got %ux%u %u/%u", rc, out.width, out.height, out.ival.num,
			 out.ival.den);
	}
}

/* ...while a request's count still weighs: on caps_c neither mode serves a
 * 1280x720 and a 1024x768 client fully; one 1024x768 client loses less
 * than the 1280x720 one would, enough of them outweigh it. */
static void count_weighs(void)
{
	static const struct {
		int line;
		unsigned n_small; /* 1024x768 clients beside one 1280x720 */
		uint32_t want_w;
	} rows[] = {
		{ __LINE__, 1, 1280 }, { __LINE__, 2, 1280 }, { __LINE__, 40, 1024 },
		{ __LINE__, 63, 1024 },
	};
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		struct vc_request reqs[64] = { R(MJPG, 1280, 720) };
		struct vc_mode out = { 0 };
		size_t n = 1;

		for (unsigned k = 0; k < rows[i].n_small; k++)
			reqs[n++] = (struct vc_request)R(MJPG, 1024, 768);
		int rc = vc_negotiate_mode(&caps_c, NULL, NULL, reqs, n, &out);
		CHECK_AT(rows[i].line, rc == 0 && out.width == rows[i].want_w,
			 "1 x 1280x720 + %u x 1024x768: got %ux%u", rows[i].n_small, out.width,
			 out.height);
	}
}

/* Every request counts, not the first 64: 20 clients at 1280x720 joined by
 * 150 at 1024x768 (a 1024x768 mode wins from about 5.3 of them per 1280x720
 * one, see count_weighs) get 1024x768; 20 + 60 keep 1280x720. Capped at 64
 * inputs, 20 + 44 would keep 1280x720 for the 170. Beyond 64 distinct
 * pictures the rest do not steer. */
static void many_clients(void)
{
	static struct vc_request reqs[400];
	static const struct {
		int line;
		unsigned n_big, n_small;
		uint32_t want_w;
	} rows[] = {
		{ __LINE__, 20, 60, 1280 },
		{ __LINE__, 20, 150, 1024 },
		{ __LINE__, 60, 300, 1280 },
		{ __LINE__, 30, 300, 1024 },
	};
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		struct vc_mode out = { 0 };
		size_t n = 0;

		for (unsigned k = 0; k < rows[i].n_big; k++)
			reqs[n++] = (struct vc_request)R(MJPG, 1280, 720);
		for (unsigned k = 0; k < rows[i].n_small; k++)
			reqs[n++] = (struct vc_request)R(MJPG, 1024, 768);
		int rc = vc_negotiate_mode(&caps_c, NULL, NULL, reqs, n, &out);
		CHECK_AT(rows[i].line, rc == 0 && out.width == rows[i].want_w,
			 "%u x 1280x720 + %u x 1024x768: got %ux%u", rows[i].n_big,
			 rows[i].n_small, out.width, out.height);
	}
	/* 64 distinct sizes (all above 1280x720's deficit-free set) fill the
	 * table; 200 more clients of a 65th picture do not move the mode */
	struct vc_mode a = { 0 }, b = { 0 };
	size_t n = 0;
	for (unsigned k = 0; k < VC_NEGOTIATE_DISTINCT; k++)
		reqs[n++] = (struct vc_request)R(MJPG, 1280 - 2 * k, 720);
	int ra = vc_negotiate_mode(&caps_c, NULL, NULL, reqs, n, &a);
	for (unsigned k = 0; k < 200; k++)
		reqs[n++] = (struct vc_request)R(MJPG, 320, 240);
	int rb = vc_negotiate_mode(&caps_c, NULL, NULL, reqs, n, &b);
	CHECK(ra == 0 && rb == 0 && a.width == b.width && a.height == b.height,
	      "65th picture steered: %ux%u -> %ux%u", a.width, a.height, b.width, b.height);
}

static void output_equal(void)
{
	struct vc_output a = { MJPG, 640, 480, 80, 0, 0 }, b = a;
	CHECK(vc_output_equal(&a, &b), "same");
	b.quality = 81;
	CHECK(!vc_output_equal(&a, &b), "quality");
	b = a;
	b.width = 642;
	CHECK(!vc_output_equal(&a, &b), "width");
	b = a;
	b.fourcc = YUYV;
	CHECK(!vc_output_equal(&a, &b), "fourcc");
	b = a;
	b.rotate = 180;
	b.flip = VC_FLIP_H | VC_FLIP_V;
	CHECK(vc_output_equal(&a, &b), "180+hv = identity");
	b = a;
	b.flip = VC_FLIP_V;
	struct vc_output c = a;
	c.rotate = 180;
	c.flip = VC_FLIP_H;
	CHECK(vc_output_equal(&b, &c), "vflip = hflip+180");
	CHECK(!vc_output_equal(&a, &b), "vflip != identity");
	b = a;
	b.rotate = 360;
	CHECK(vc_output_equal(&a, &b), "360 = 0");
}

/* H.264 plans as the I420 picture plus the encode; its settings and rate
 * are part of the output, which never equals the I420 one. */
static void h264_plan(void)
{
	static const struct {
		int line;
		struct vc_mode mode;
		struct vc_request req;
		uint32_t w, h;
		unsigned steps;
		uint32_t fps;
	} t[] = {
		{ __LINE__, M_YUYV480, R(V4L2_PIX_FMT_H264), 640, 480, CV | EN, 30 },
		{ __LINE__, M_YUYV480, R(V4L2_PIX_FMT_H264, 320, 0, 15, 90), 320, 240, CV | SC | EN, 15 },
		/* the camera's own I420: only the encode */
		{ __LINE__, M_I420720, R(V4L2_PIX_FMT_H264), 1280, 720, EN, 30 },
		{ __LINE__, M_YUYV480, R(V4L2_PIX_FMT_H264, 0, 0, 0, 0, 90), 480, 640, CV | RO | EN, 30 },
	};

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		struct vc_request req = t[i].req;
		struct vc_plan p, raw;

		req.bitrate = 500000;
		req.gop = 15;
		int rc = vc_negotiate_plan(&t[i].mode, &req, &p);

		CHECK_AT(t[i].line, rc == 0, "rc %d", rc);
		if (rc)
			continue;
		CHECK_AT(t[i].line, p.out.fourcc == V4L2_PIX_FMT_H264 && p.out.width == t[i].w &&
				 p.out.height == t[i].h && p.steps == t[i].steps && p.fps == t[i].fps &&
				 p.out.quality == 0 && !p.adjusted,
			 "%ux%u steps %#x fps %u quality %u adjusted %#x", p.out.width, p.out.height,
			 p.steps, p.fps, p.out.quality, p.adjusted);
		CHECK_AT(t[i].line, p.out.bitrate == 500000 && p.out.gop == 15 && p.out.fps == t[i].fps,
			 "bitrate %u gop %u fps %u", p.out.bitrate, p.out.gop, p.out.fps);
		req.fourcc = I420;
		vc_negotiate_plan(&t[i].mode, &req, &raw);
		CHECK_AT(t[i].line, !vc_output_equal(&p.out, &raw.out) && raw.out.bitrate == 0,
			 "equal to the I420 output");
		struct vc_output o = p.out;

		CHECK_AT(t[i].line, vc_output_equal(&o, &p.out), "equal to itself");
		o.gop = 30;
		CHECK_AT(t[i].line, !vc_output_equal(&o, &p.out), "gop ignored");
		o = p.out;
		o.bitrate = 0;
		CHECK_AT(t[i].line, !vc_output_equal(&o, &p.out), "bitrate ignored");
		o = p.out;
		o.fps = 5;
		CHECK_AT(t[i].line, !vc_output_equal(&o, &p.out), "fps ignored");
	}
	struct vc_mode m = M_YUYV480;
	struct vc_request tiny = { .fourcc = V4L2_PIX_FMT_H264, .width = 8, .height = 8 };
	struct vc_plan p;

	CHECK(vc_negotiate_plan(&m, &tiny, &p) == -EINVAL, "8x8 H.264 planned");
}

/* An H.264 camera (UVC webcams with an H.264 stream): H.264 at one of its
 * sizes is passed through; anything the H.264 mode itself would have to
 * decode is refused (no decoder), so the mode choice takes it only for
 * H.264 clients, and it is a default only when the camera has nothing else. */
static struct vc_caps_size h_h264[] = {
	SZ(1280, 720, 2, IV(1, 30), IV(1, 15)),
	SZ(640, 480, 1, IV(1, 30)),
};
static struct vc_caps_size h_mjpg[] = {
	SZ(1280, 720, 1, IV(1, 30)),
	SZ(640, 480, 1, IV(1, 30)),
};
static struct vc_caps_fmt h_fmts[] = {
	{ .fourcc = V4L2_PIX_FMT_H264, .n_sizes = 2, .sizes = h_h264 },
	{ .fourcc = MJPG, .n_sizes = 2, .sizes = h_mjpg },
};
static const struct vc_caps caps_h = { 2, h_fmts }, caps_h_only = { 1, h_fmts };

static void h264_passthrough(void)
{
	struct vc_mode m = { V4L2_PIX_FMT_H264, 1280, 720, { 1, 30 } }, out;
	struct vc_request q = { .fourcc = V4L2_PIX_FMT_H264, .bitrate = 500000, .gop = 10 };
	struct vc_plan p;

	CHECK(vc_negotiate_plan(&m, &q, &p) == 0 && p.steps == VC_STEP_PASSTHROUGH &&
		      p.out.fourcc == V4L2_PIX_FMT_H264 && p.out.width == 1280 &&
		      p.out.height == 720 && p.fps == 30 && !p.out.bitrate && !p.out.gop &&
		      !p.out.fps && !p.adjusted,
	      "steps %#x %ux%u fps %u bitrate %u adjusted %#x", p.steps, p.out.width,
	      p.out.height, p.fps, p.out.bitrate, p.adjusted);
	q.width = 1920; /* clamped to the camera's, never upscaled */
	CHECK(vc_negotiate_plan(&m, &q, &p) == 0 && p.out.width == 1280 &&
		      (p.adjusted & VC_ADJ_SIZE),
	      "larger: %ux%u adjusted %#x", p.out.width, p.out.height, p.adjusted);
	q.width = 640; /* smaller would need a decoder */
	CHECK(vc_negotiate_plan(&m, &q, &p) == -EINVAL, "scaled H.264 passthrough planned");
	q.width = 0;
	q.rotate = 90;
	CHECK(vc_negotiate_plan(&m, &q, &p) == -EINVAL, "rotated H.264 passthrough planned");
	q.rotate = 0;
	q.fps = 15; /* the camera's rate: frames of a GOP cannot be dropped */
	CHECK(vc_negotiate_plan(&m, &q, &p) == 0 && p.fps == 30 && (p.adjusted & VC_ADJ_FPS),
	      "fps %u adjusted %#x", p.fps, p.adjusted);
	struct vc_request mj = { .fourcc = MJPG }, yuyv = { .fourcc = YUYV };
	CHECK(vc_negotiate_plan(&m, &mj, &p) == -EINVAL, "MJPEG from H.264 planned");
	CHECK(vc_negotiate_plan(&m, &yuyv, &p) == -EINVAL, "YUYV from H.264 planned");

	/* the mode: H.264 clients get the H.264 mode of their size */
	struct vc_request h640 = { .fourcc = V4L2_PIX_FMT_H264, .width = 640, .height = 480 };
	int rc = vc_negotiate_mode(&caps_h, NULL, NULL, &h640, 1, &out);
	CHECK(rc == 0 && out.fourcc == V4L2_PIX_FMT_H264 && out.width == 640,
	      "rc %d mode %#x %ux%u", rc, out.fourcc, out.width, out.height);
	/* with an MJPEG client too: the MJPEG mode, H.264 encoded from it */
	struct vc_request two[2] = { h640, { .fourcc = MJPG, .width = 640, .height = 480 } };
	rc = vc_negotiate_mode(&caps_h, NULL, NULL, two, 2, &out);
	CHECK(rc == 0 && out.fourcc == MJPG && out.width == 640, "rc %d mode %#x %ux%u", rc,
	      out.fourcc, out.width, out.height);
	/* defaults: MJPEG when there is one, the H.264 mode on an H.264-only camera */
	rc = vc_negotiate_default(&caps_h, NULL, 0, &out);
	CHECK(rc == 0 && out.fourcc == MJPG && out.width == 1280, "rc %d default %#x %ux%u", rc,
	      out.fourcc, out.width, out.height);
	rc = vc_negotiate_default(&caps_h_only, NULL, 0, &out);
	CHECK(rc == 0 && out.fourcc == V4L2_PIX_FMT_H264 && out.width == 1280,
	      "rc %d default %#x %ux%u", rc, out.fourcc, out.width, out.height);
	rc = vc_negotiate_mode(&caps_h_only, NULL, NULL, NULL, 0, &out);
	CHECK(rc == 0 && out.fourcc == V4L2_PIX_FMT_H264, "rc %d reference %#x", rc, out.fourcc);
	struct vc_request h0 = { .fourcc = V4L2_PIX_FMT_H264 };
	rc = vc_negotiate_mode(&caps_h_only, NULL, NULL, &h0, 1, &out);
	CHECK(rc == 0 && out.fourcc == V4L2_PIX_FMT_H264 && out.width == 1280,
	      "rc %d mode %#x %ux%u", rc, out.fourcc, out.width, out.height);
}

static void steps_str(void)
{
	static const struct {
		int line;
		unsigned steps;
		uint8_t denom;
		const char *want;
	} v[] = {
		{ __LINE__, PT, 1, "passthrough" },
		{ __LINE__, DE | CV | EN, 2, "decode/2+convert+encode" },
		{ __LINE__, DE | SC | RO | EN, 1, "decode+scale+rotate+encode" },
		{ __LINE__, XF, 1, "jpeg_xform" },
		{ __LINE__, CV | SC, 8, "convert+scale" },
		{ __LINE__, 0, 1, "none" },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		char buf[96];
		vc_steps_str(v[i].steps, v[i].denom, buf, sizeof(buf));
		CHECK_AT(v[i].line, !strcmp(buf, v[i].want), "got %s", buf);
	}
	char small[8];
	memset(small, 'x', sizeof(small));
	vc_steps_str(DE | CV | SC | RO | EN, 4, small, 8);
	CHECK(memchr(small, 0, 8) != NULL, "truncated output is terminated");
}

/* Every plan of every row obeys the invariants: never larger than the mode,
 * passthrough alone, quality only with an encode. */
static void invariants(void)
{
	static const uint32_t fccs[] = { 0, MJPG, YUYV, I420, NV12, RGB3, GREY, UYVY, YV12 };
	static const struct vc_mode modes[] = { M_YUYV480, M_MJPG1080, M_MJPG768, M_I420720,
						M_NV12480, M_UYVY480 };
	static const uint32_t sizes[][2] = { { 0, 0 }, { 1, 1 }, { 321, 0 }, { 0, 239 },
					     { 4000, 3000 }, { 640, 360 }, { 77, 33 } };
	int bad = 0, n = 0;
	for (size_t m = 0; m < ARRAY_LEN(modes); m++)
		for (size_t f = 0; f < ARRAY_LEN(fccs); f++)
			for (size_t s = 0; s < ARRAY_LEN(sizes); s++)
				for (unsigned rot = 0; rot < 360; rot += 90) {
					struct vc_request q = { fccs[f], sizes[s][0], sizes[s][1],
								0, 0, (uint16_t)rot, 0 };
					struct vc_plan p;
					if (vc_negotiate_plan(&modes[m], &q, &p) < 0) {
						bad++;
						continue;
					}
					n++;
					uint32_t big = modes[m].width > modes[m].height
							       ? modes[m].width
							       : modes[m].height;
					int ok = p.steps && p.out.width && p.out.height &&
						 p.out.width <= big && p.out.height <= big &&
						 (!(p.steps & PT) || p.steps == PT) &&
						 (!!(p.steps & EN) == !!p.out.quality) &&
						 (p.decode_denom == 1 || (p.steps & DE));
					if (!ok) {
						bad++;
						printf("  mode %zu fcc %zu size %zu rot %u\n", m, f, s,
						       rot);
					}
				}
	CHECK(bad == 0 && n == 6 * 9 * 7 * 4, "%d bad of %d", bad, n);
}

/* ---- the policy for many kinds of clients (vc_negotiate_default,
 * vc_negotiate_resolve, vc_negotiate_choose) ---- */

/* A YUYV-only webcam: full HD only at 5 fps. */
static struct vc_caps_size y_sizes[] = {
	SZ(1920, 1080, 1, IV(1, 5)),
	SZ(1280, 720, 1, IV(1, 10)),
	SZ(640, 480, 2, IV(1, 30), IV(1, 15)),
	SZ(320, 240, 1, IV(1, 30)),
};
static struct vc_caps_fmt y_fmts[] = { { .fourcc = YUYV, .n_sizes = 4, .sizes = y_sizes } };
static const struct vc_caps caps_y = { 1, y_fmts };

/* The shape of vivid's webcam input: the larger the size, the fewer rates
 * (its default interval, 1/5 s, is listed everywhere). */
static struct vc_caps_size v_sizes[] = {
	SZ(320, 180, 6, IV(1, 60), IV(1, 50), IV(1, 40), IV(1, 30), IV(1, 25), IV(1, 5)),
	SZ(640, 360, 5, IV(1, 40), IV(1, 30), IV(1, 25), IV(2, 25), IV(1, 5)),
	SZ(1280, 720, 3, IV(2, 25), IV(1, 10), IV(1, 5)),
	SZ(1920, 1080, 2, IV(1, 5), IV(1, 4)),
};
static struct vc_caps_fmt v_fmts[] = { { .fourcc = YUYV, .n_sizes = 4, .sizes = v_sizes } };
static const struct vc_caps caps_v = { 1, v_fmts };

static void default_table(void)
{
	static const struct {
		int line;
		const struct vc_caps *caps;
		struct vc_mode cfg; /* fourcc 0 and no size/rate = NULL */
		uint32_t cap;
		int rc;
		struct vc_mode want;
	} rows[] = {
		/* nothing configured: the largest picture at the capped rate */
		{ __LINE__, &caps_a, NOM, 0, 0, MD(MJPG, 1920, 1080, 1, 30) },
		/* YUYV-only: full HD runs at 5 fps, 640x480 at 30 */
		{ __LINE__, &caps_y, NOM, 0, 0, MD(YUYV, 640, 480, 1, 30) },
		{ __LINE__, &caps_y, NOM, 10, 0, MD(YUYV, 1280, 720, 1, 10) },
		{ __LINE__, &caps_v, NOM, 0, 0, MD(YUYV, 640, 360, 1, 30) },
		{ __LINE__, &caps_v, NOM, 60, 0, MD(YUYV, 320, 180, 1, 60) },
		/* configured fields win, the rest follows the rule */
		{ __LINE__, &caps_a, MD(YUYV, 0, 0, 0, 0), 0, 0, MD(YUYV, 640, 480, 1, 30) },
		{ __LINE__, &caps_a, MD(0, 1280, 720, 0, 0), 0, 0, MD(MJPG, 1280, 720, 1, 30) },
		{ __LINE__, &caps_a, MD(0, 0, 0, 1, 15), 0, 0, MD(MJPG, 1920, 1080, 1, 15) },
		{ __LINE__, &caps_a, MD(YUYV, 1280, 720, 1, 10), 0, 0, MD(YUYV, 1280, 720, 1, 10) },
		{ __LINE__, &caps_v, MD(YUYV, 1280, 720, 0, 0), 0, 0, MD(YUYV, 1280, 720, 2, 25) },
		/* configured but not offered: let go of */
		{ __LINE__, &caps_a, MD(0, 800, 600, 0, 0), 0, 0, MD(MJPG, 1920, 1080, 1, 30) },
		{ __LINE__, &caps_a, MD(NV12, 0, 0, 0, 0), 0, 0, MD(MJPG, 1920, 1080, 1, 30) },
		/* ranges: listed sizes first; a configured size inside the range */
		{ __LINE__, &caps_f, NOM, 0, 0, MD(YUYV, 1280, 720, 1, 30) },
		{ __LINE__, &caps_f, MD(0, 800, 600, 0, 0), 0, 0, MD(YUYV, 800, 600, 1, 30) },
		{ __LINE__, &caps_e, NOM, 0, 0, MD(YUYV, 1920, 1080, 0, 0) },
		{ __LINE__, &caps_d, NOM, 0, 0, MD(BA81, 640, 480, 1, 30) },
		{ __LINE__, &caps_empty, NOM, 0, -ENOENT, NOM },
		{ __LINE__, &caps_x, NOM, 0, -ENOENT, NOM },
		/* H.264 configured: its size and rate in another format; on an
		 * H.264-only camera the configured size, else the rule's */
		{ __LINE__, &caps_h, MD(V4L2_PIX_FMT_H264, 640, 480, 1, 30), 0, 0,
		  MD(MJPG, 640, 480, 1, 30) },
		{ __LINE__, &caps_h, MD(V4L2_PIX_FMT_H264, 0, 0, 0, 0), 0, 0,
		  MD(MJPG, 1280, 720, 1, 30) },
		{ __LINE__, &caps_h_only, MD(V4L2_PIX_FMT_H264, 640, 480, 1, 30), 0, 0,
		  MD(V4L2_PIX_FMT_H264, 640, 480, 1, 30) },
		{ __LINE__, &caps_h_only, MD(0, 640, 480, 0, 0), 0, 0,
		  MD(V4L2_PIX_FMT_H264, 640, 480, 1, 30) },
		{ __LINE__, &caps_h_only, MD(YUYV, 800, 600, 0, 0), 0, 0,
		  MD(V4L2_PIX_FMT_H264, 1280, 720, 1, 30) },
	};
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		const struct vc_mode *c = &rows[i].cfg;
		int given = c->fourcc || c->width || c->ival.den;
		struct vc_mode out;
		memset(&out, 0xff, sizeof(out));
		int rc = vc_negotiate_default(rows[i].caps, given ? c : NULL, rows[i].cap, &out);
		const struct vc_mode *w = &rows[i].want;
		if (rows[i].rc) {
			CHECK_AT(rows[i].line, rc == rows[i].rc, "rc %d", rc);
			continue;
		}
		char a[16];
		CHECK_AT(rows[i].line,
			 rc == 0 && out.fourcc == w->fourcc && out.width == w->width &&
				 out.height == w->height && out.ival.num == w->ival.num &&
				 out.ival.den == w->ival.den,
			 "rc %d got %s %ux%u %u/%u", rc, vc_fourcc_str(out.fourcc, a), out.width,
			 out.height, out.ival.num, out.ival.den);
	}
}

static void resolve_table(void)
{
	static const struct vc_mode d43 = MD(MJPG, 640, 480, 1, 30), d169 = MD(YUYV, 1280, 720, 1, 30);
	static const struct {
		int line;
		const struct vc_mode *def;
		uint32_t fps;
		struct vc_request req, want;
	} rows[] = {
		{ __LINE__, &d43, 30, R(MJPG), R(MJPG, 640, 480, 30) },
		{ __LINE__, &d43, 30, R(MJPG, 320), R(MJPG, 320, 240, 30) },
		{ __LINE__, &d43, 30, R(MJPG, 0, 240), R(MJPG, 320, 240, 30) },
		{ __LINE__, &d169, 30, R(MJPG, 320), R(MJPG, 320, 180, 30) },
		{ __LINE__, &d169, 30, R(MJPG, 1920, 1080, 5), R(MJPG, 1920, 1080, 5) },
		{ __LINE__, &d169, 15, R(YUYV, 0, 0, 0, 0, 90), R(YUYV, 720, 1280, 15, 0, 90) },
		{ __LINE__, &d169, 30, R(MJPG, 0, 1, 0, 70), R(MJPG, 2, 1, 30, 70) },
		{ __LINE__, NULL, 30, R(MJPG, 320), R(MJPG, 320, 0, 30) },
	};
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		struct vc_request out;
		memset(&out, 0xff, sizeof(out));
		vc_negotiate_resolve(rows[i].def, rows[i].fps, &rows[i].req, &out);
		const struct vc_request *w = &rows[i].want;
		CHECK_AT(rows[i].line,
			 out.fourcc == w->fourcc && out.width == w->width && out.height == w->height &&
				 out.fps == w->fps && out.quality == w->quality &&
				 out.rotate == w->rotate && out.flip == w->flip,
			 "got %ux%u fps %u", out.width, out.height, out.fps);
	}
}

/* vc_negotiate_choose: requests as vc_negotiate_resolve leaves them. */
static void choose_table(void)
{
	static const struct {
		int line;
		const struct vc_caps *caps;
		struct vc_mode def, cur; /* cur fourcc 0 = NULL */
		size_t ns, no;
		struct vc_request st[3], os[2];
		struct vc_mode want;
		enum vc_mode_why why;
	} rows[] = {
		/* nobody: the default, whatever the device streams */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 30), 0, 0,
		  { R(0) }, { R(0) }, MD(MJPG, 1920, 1080, 1, 30), VC_WHY_DEFAULT },
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), NOM, 1, 0, { R(MJPG, 640, 480, 30) },
		  { R(0) }, MD(MJPG, 640, 480, 1, 30), VC_WHY_STREAMS },
		/* a full-size snapshot beside a viewer: no switch */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 30), 1, 1,
		  { R(MJPG, 640, 480, 30) }, { R(MJPG, 1920, 1080, 30) }, MD(MJPG, 640, 480, 1, 30),
		  VC_WHY_STREAMS },
		{ __LINE__, &caps_y, MD(YUYV, 640, 480, 1, 30), MD(YUYV, 640, 480, 1, 30), 1, 2,
		  { R(MJPG, 640, 360, 30) }, { R(MJPG, 1920, 1080, 30), R(YUYV, 1280, 720, 30) },
		  MD(YUYV, 640, 480, 1, 30), VC_WHY_STREAMS },
		/* ... while nobody streams it may switch */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 30), 0, 1,
		  { R(0) }, { R(MJPG, 1920, 1080, 30) }, MD(MJPG, 1920, 1080, 1, 30), VC_WHY_ONESHOT },
		{ __LINE__, &caps_y, MD(YUYV, 640, 480, 1, 30), NOM, 0, 1, { R(0) },
		  { R(YUYV, 1920, 1080, 30) }, MD(YUYV, 1920, 1080, 1, 5), VC_WHY_ONESHOT },
		/* ... and is served from the current mode when that is as good */
		{ __LINE__, &caps_c, MD(MJPG, 1280, 720, 1, 30), MD(MJPG, 1280, 720, 1, 30), 0, 1,
		  { R(0) }, { R(MJPG, 1024, 576, 30) }, MD(MJPG, 1280, 720, 1, 30), VC_WHY_ONESHOT },
		/* ... or that gives the size asked for (a small snapshot is
		 * scaled, not worth two switches) */
		{ __LINE__, &caps_y, MD(YUYV, 640, 480, 1, 30), MD(YUYV, 640, 480, 1, 30), 0, 1,
		  { R(0) }, { R(MJPG, 320, 240, 30) }, MD(YUYV, 640, 480, 1, 30), VC_WHY_ONESHOT },
		{ __LINE__, &caps_y, MD(YUYV, 640, 480, 1, 30), NOM, 0, 1,
		  { R(0) }, { R(MJPG, 320, 240, 30) }, MD(YUYV, 320, 240, 1, 30), VC_WHY_ONESHOT },
		/* a mode kept for a client who left is given up */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 1280, 720, 1, 30), 1, 0,
		  { R(MJPG, 640, 480, 30) }, { R(0) }, MD(MJPG, 640, 480, 1, 30), VC_WHY_STREAMS },
		{ __LINE__, &caps_y, MD(YUYV, 640, 480, 1, 30), MD(YUYV, 1920, 1080, 1, 5), 1, 0,
		  { R(MJPG, 640, 480, 30) }, { R(0) }, MD(YUYV, 640, 480, 1, 30), VC_WHY_STREAMS },
		/* ... so is a rate kept for a client who left (a lone fps=15
		 * viewer lets the device run at 15) */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 30), 1, 0,
		  { R(MJPG, 640, 480, 15) }, { R(0) }, MD(MJPG, 640, 480, 1, 15), VC_WHY_STREAMS },
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 15), 2, 0,
		  { R(MJPG, 640, 480, 15), R(MJPG, 640, 480, 30) }, { R(0) },
		  MD(MJPG, 640, 480, 1, 30), VC_WHY_STREAMS },
		/* hysteresis between modes that serve about equally well */
		{ __LINE__, &caps_c, MD(MJPG, 1280, 720, 1, 30), MD(MJPG, 1280, 720, 1, 30), 1, 0,
		  { R(MJPG, 1024, 576, 30) }, { R(0) }, MD(MJPG, 1280, 720, 1, 30), VC_WHY_KEPT },
		{ __LINE__, &caps_c, MD(MJPG, 1280, 720, 1, 30), NOM, 1, 0,
		  { R(MJPG, 1024, 576, 30) }, { R(0) }, MD(MJPG, 1024, 768, 1, 30), VC_WHY_STREAMS },
		/* a joining stream that needs more is served */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 30), 2, 0,
		  { R(MJPG, 640, 480, 30), R(MJPG, 1280, 720, 30) }, { R(0) },
		  MD(MJPG, 1280, 720, 1, 30), VC_WHY_STREAMS },
		/* raw streams steer like MJPEG ones */
		{ __LINE__, &caps_a, MD(MJPG, 1920, 1080, 1, 30), MD(MJPG, 640, 480, 1, 30), 1, 0,
		  { R(YUYV, 1280, 720, 10) }, { R(0) }, MD(YUYV, 1280, 720, 1, 10), VC_WHY_STREAMS },
		/* vivid: a request without fps runs at the cap, not at the 1/5 s
		 * the driver starts with */
		{ __LINE__, &caps_v, MD(YUYV, 640, 360, 1, 30), MD(YUYV, 640, 360, 1, 5), 1, 0,
		  { R(MJPG, 640, 360, 30) }, { R(0) }, MD(YUYV, 640, 360, 1, 30), VC_WHY_STREAMS },
		{ __LINE__, &caps_v, MD(YUYV, 640, 360, 1, 30), NOM, 1, 0,
		  { R(MJPG, 1280, 720, 30) }, { R(0) }, MD(YUYV, 1280, 720, 2, 25), VC_WHY_STREAMS },
		{ __LINE__, &caps_empty, MD(YUYV, 640, 360, 1, 30), NOM, 1, 0,
		  { R(MJPG, 1280, 720, 30) }, { R(0) }, NOM, VC_WHY_DEFAULT },
	};
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		struct vc_mode out;
		enum vc_mode_why why = (enum vc_mode_why)99;
		memset(&out, 0xff, sizeof(out));
		int rc = vc_negotiate_choose(rows[i].caps, &rows[i].def,
					     rows[i].cur.fourcc ? &rows[i].cur : NULL, rows[i].st,
					     rows[i].ns, rows[i].os, rows[i].no, &out, &why);
		const struct vc_mode *w = &rows[i].want;
		if (!w->fourcc) {
			CHECK_AT(rows[i].line, rc == -ENOENT, "rc %d", rc);
			continue;
		}
		char a[16];
		CHECK_AT(rows[i].line,
			 rc == 0 && out.fourcc == w->fourcc && out.width == w->width &&
				 out.height == w->height && out.ival.num == w->ival.num &&
				 out.ival.den == w->ival.den && why == rows[i].why,
			 "rc %d got %s %ux%u %u/%u why %s", rc, vc_fourcc_str(out.fourcc, a),
			 out.width, out.height, out.ival.num, out.ival.den, vc_mode_why_str(why));
	}
}

int main(void)
{
	RUN("negotiate", plan_table);
	RUN("negotiate", mode_table);
	RUN("negotiate", repeated_requests);
	RUN("negotiate", count_weighs);
	RUN("negotiate", many_clients);
	RUN("negotiate", output_equal);
	RUN("negotiate", h264_plan);
	RUN("negotiate", h264_passthrough);
	RUN("negotiate", steps_str);
	RUN("negotiate", invariants);
	RUN("negotiate", default_table);
	RUN("negotiate", resolve_table);
	RUN("negotiate", choose_table);
	CHECK_EXIT();
}
