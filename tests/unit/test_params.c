/* Unit tests of common/params.c: a table of query strings with the request
 * they must produce, or the parameter the 400 message must name. */
#include "common/params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/videodev2.h>

#include "tests/unit/check.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define MJPG V4L2_PIX_FMT_MJPEG
#define YUYV V4L2_PIX_FMT_YUYV
#define RGB3 V4L2_PIX_FMT_RGB24
#define NV12 V4L2_PIX_FMT_NV12
#define I420 V4L2_PIX_FMT_YUV420
#define Y10 V4L2_PIX_FMT_Y10
#define BA81 V4L2_PIX_FMT_SBGGR8

struct row {
	int line;
	const char *q;
	int rc;
	/* on success */
	uint32_t fourcc, w, h, fps;
	uint8_t quality;
	uint16_t rotate;
	uint8_t flip;
	const char *cam;
	uint32_t max_age;
	unsigned flags, n_unknown;
	const char *unknown;
	/* on error: substrings the message must contain */
	const char *err1, *err2;
};

#define OK(q, ...) { __LINE__, q, 0, __VA_ARGS__ }
#define BAD(q, e1, e2) { __LINE__, q, -EINVAL, .err1 = e1, .err2 = e2 }

static const struct row rows[] = {
	OK(NULL, 0),
	OK("", 0),
	OK("?", 0),
	OK("format=mjpeg", MJPG),
	OK("format=MJPEG", MJPG),
	OK("format=jpeg", MJPG),
	OK("format=JPG", MJPG),
	OK("format=MJPG", MJPG),
	OK("format=yuyv", YUYV),
	OK("format=YUYV", YUYV),
	OK("format=RGB24", RGB3),
	OK("format=rgb3", RGB3),
	OK("format=NV12", NV12),
	OK("format=YU12", I420),
	OK("format=YUV420", I420),
	OK("format=Y10", Y10),
	OK("format=Y10%20", Y10),
	OK("format=SBGGR8", BA81),
	OK("?format=yuyv&width=640&height=480", YUYV, 640, 480),
	OK("width=640", 0, 640),
	OK("height=360", 0, 0, 360),
	OK("width=0&height=0", 0),
	OK("width=16384&height=16384", 0, 16384, 16384),
	OK("width=007", 0, 7),
	OK("size=640x480", 0, 640, 480),
	OK("size=640X480", 0, 640, 480),
	OK("size=640x480&width=640", 0, 640, 480),
	OK("width=640&size=640x480&height=480", 0, 640, 480),
	OK("fps=15", 0, 0, 0, 15),
	OK("fps=0", 0),
	OK("fps=1000", 0, 0, 0, 1000),
	OK("quality=1", 0, 0, 0, 0, 1),
	OK("quality=100", 0, 0, 0, 0, 100),
	OK("quality=0", 0, 0, 0, 0, 1, .flags = VC_PARAMS_QUALITY_CLAMPED),
	OK("quality=101", 0, 0, 0, 0, 100, .flags = VC_PARAMS_QUALITY_CLAMPED),
	OK("quality=-5", 0, 0, 0, 0, 1, .flags = VC_PARAMS_QUALITY_CLAMPED),
	OK("quality=99999999999999999999999", 0, 0, 0, 0, 100, .flags = VC_PARAMS_QUALITY_CLAMPED),
	OK("quality=500&quality=50", 0, 0, 0, 0, 50),
	OK("rotate=90", 0, .rotate = 90),
	OK("rotate=-90", 0, .rotate = 270),
	OK("rotate=360", 0, .rotate = 0),
	OK("rotate=450", 0, .rotate = 90),
	OK("rotate=45", 0, .rotate = 45),
	OK("flip=h", 0, .flip = VC_FLIP_H),
	OK("flip=V", 0, .flip = VC_FLIP_V),
	OK("flip=hv", 0, .flip = 3),
	OK("flip=vh", 0, .flip = 3),
	OK("flip=none", 0),
	OK("flip=", 0),
	OK("cam=0", 0, .cam = "0"),
	OK("cam=front%20door", 0, .cam = "front door"),
	OK("cam=front+door", 0, .cam = "front door"),
	OK("cam=%2Fdev%2Fvideo0", 0, .cam = "/dev/video0"),
	OK("cam=caf%C3%A9", 0, .cam = "caf\xc3\xa9"),
	OK("max_age_ms=500", 0, .max_age = 500),
	OK("max_age_ms=0", 0),
	OK("max_age_ms=86400000", 0, .max_age = 86400000),
	OK("FORMAT=mjpeg&Width=320", MJPG, 320),
	OK("%66ormat=mjpeg", MJPG),
	OK("format=%6Djpeg", MJPG),
	OK("_=1700000000", 0, .n_unknown = 1, .unknown = "_"),
	OK("foo=1&bar=2&width=8", 0, 8, .n_unknown = 2, .unknown = "foo"),
	OK("snapshot", 0, .n_unknown = 1, .unknown = "snapshot"),
	OK("&&width=2&&", 0, 2),
	OK("width=2&", 0, 2),
	OK("format=mjpeg&width=1280&height=720&fps=30&quality=85&rotate=180&flip=h&cam=1&max_age_ms=100",
	   MJPG, 1280, 720, 30, 85, 180, VC_FLIP_H, "1", 100),

	OK("format=h264", V4L2_PIX_FMT_H264),
	OK("format=H.264", V4L2_PIX_FMT_H264),
	OK("format=avc&size=320x240", V4L2_PIX_FMT_H264, 320, 240),
	BAD("bitrate=5", "'bitrate'", "10k..100M"),
	BAD("bitrate=101M", "'bitrate'", "'101M'"),
	BAD("bitrate=2G", "'bitrate'", "'2G'"),
	BAD("bitrate=k", "'bitrate'", "'k'"),
	BAD("bitrate=-1M", "'bitrate'", "'-1M'"),
	BAD("gop=0", "'gop'", "1..1000"),
	BAD("gop=1001", "'gop'", "1..1000"),
	BAD("format=", "'format'", "unknown format"),
	BAD("format=bogus", "'format'", "'bogus'"),
	BAD("format=YUYVX", "'format'", "YUYVX"),
	BAD("width=abc", "'width'", "'abc'"),
	BAD("width=12a", "'width'", "0..16384"),
	BAD("width=-1", "'width'", "'-1'"),
	BAD("width=16385", "'width'", "16385"),
	BAD("width=", "'width'", "''"),
	BAD("width= 640", "'width'", "' 640'"),
	BAD("width=640.0", "'width'", "640.0"),
	BAD("width=%2B640", "'width'", "'+640'"),
	BAD("height=99999999999999999999", "'height'", "0..16384"),
	BAD("size=640", "'size'", "WxH"),
	BAD("size=640x", "'size'", "640x"),
	BAD("size=x480", "'size'", "x480"),
	BAD("size=0x480", "'size'", "1..16384"),
	BAD("size=640x480x3", "'size'", "640x480x3"),
	BAD("size=640x480&width=320", "'size'", "disagrees"),
	BAD("fps=1001", "'fps'", "0..1000"),
	BAD("fps=29.97", "'fps'", "29.97"),
	BAD("quality=high", "'quality'", "'high'"),
	BAD("quality=", "'quality'", "integer"),
	BAD("quality=5%25", "'quality'", "5%"),
	BAD("rotate=ninety", "'rotate'", "ninety"),
	BAD("rotate=99999999999999999999", "'rotate'", "integer"),
	BAD("flip=x", "'flip'", "'x'"),
	BAD("flip=horizontal", "'flip'", "h, v, hv"),
	BAD("cam=", "'cam'", "1..63"),
	BAD("cam=a%0Ab", "'cam'", "control"),
	BAD("cam=0123456789012345678901234567890123456789012345678901234567890123", "'cam'", "1..63"),
	BAD("max_age_ms=-1", "'max_age_ms'", "-1"),
	BAD("max_age_ms=86400001", "'max_age_ms'", "86400001"),
	BAD("width=%", "'width=%'", "percent"),
	BAD("width=%4", "'width=%4'", "percent"),
	BAD("width=%G0", "'width=%G0'", "percent"),
	BAD("cam=a%00b", "'cam=a%00b'", "percent"),
	BAD("wi%zzdth=1", "'wi%zzdth=1'", "percent"),
	BAD("format=\x01", "'format'", "\\x01"),
};

static void table(void)
{
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		const struct row *r = &rows[i];
		struct vc_params p;
		char err[160];
		memset(&p, 0xff, sizeof(p));
		memset(err, 0xff, sizeof(err));
		int rc = vc_params_parse(r->q, &p, err, sizeof(err));
		if (r->rc) {
			CHECK_AT(r->line,
				 rc == r->rc && strstr(err, r->err1) && strstr(err, r->err2) &&
					 strlen(err) < sizeof(err) && p.req.fourcc == 0 &&
					 p.given == 0,
				 "rc %d msg '%s' want '%s' '%s'", rc, rc ? err : "", r->err1, r->err2);
			continue;
		}
		CHECK_AT(r->line,
			 rc == 0 && p.req.fourcc == r->fourcc && p.req.width == r->w &&
				 p.req.height == r->h && p.req.fps == r->fps &&
				 p.req.quality == r->quality && p.req.rotate == r->rotate &&
				 p.req.flip == r->flip && !strcmp(p.cam, r->cam ? r->cam : "") &&
				 p.max_age_ms == r->max_age && p.flags == r->flags &&
				 p.n_unknown == r->n_unknown &&
				 !strcmp(p.unknown, r->unknown ? r->unknown : "") && err[0] == 0,
			 "rc %d (%s): fcc %08x %ux%u fps %u q %u rot %u flip %u cam '%s' age %u "
			 "flags %x unknown %u '%s'",
			 rc, rc ? err : "", p.req.fourcc, p.req.width, p.req.height, p.req.fps,
			 p.req.quality, p.req.rotate, p.req.flip, p.cam, p.max_age_ms, p.flags,
			 p.n_unknown, p.unknown);
	}
	CHECK(ARRAY_LEN(rows) >= 60, "%zu rows", ARRAY_LEN(rows));
}

/* A bad escape is an error even in a parameter we would ignore: the query
 * is malformed, and silently dropping it could hide a typo'd known one. */
static void bad_escape_unknown(void)
{
	struct vc_params p;
	char err[160];
	int rc = vc_params_parse("a=%ZZ", &p, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "percent"), "rc %d '%s'", rc, err);
}

static void given_bits(void)
{
	struct vc_params p;
	int rc = vc_params_parse("size=320x240&quality=70&cam=x", &p, NULL, 0);
	CHECK(rc == 0 &&
		      p.given == (VC_PARAM_SIZE | VC_PARAM_WIDTH | VC_PARAM_HEIGHT |
				  VC_PARAM_QUALITY | VC_PARAM_CAM),
	      "given %x", p.given);
	rc = vc_params_parse("width=0", &p, NULL, 0);
	CHECK(rc == 0 && p.given == VC_PARAM_WIDTH && p.req.width == 0, "width=0 given");
	rc = vc_params_parse("width=x", &p, NULL, 0);
	CHECK(rc == -EINVAL, "NULL err buffer");
	char tiny[8];
	rc = vc_params_parse("width=x", &p, tiny, sizeof(tiny));
	CHECK(rc == -EINVAL && strlen(tiny) == 7, "truncated message terminated");
}

/* placeholder=: a snapshot of an absent camera may ask for the picture. */
static void placeholder_param(void)
{
	static const struct {
		int line;
		const char *q;
		int rc, placeholder;
	} v[] = {
		{ __LINE__, "placeholder=1", 0, 1 },  { __LINE__, "placeholder=YES", 0, 1 },
		{ __LINE__, "placeholder", 0, 1 },    { __LINE__, "placeholder=on", 0, 1 },
		{ __LINE__, "placeholder=0", 0, 0 },  { __LINE__, "placeholder=no", 0, 0 },
		{ __LINE__, "placeholder=1&placeholder=false", 0, 0 },
		{ __LINE__, "placeholder=2", -EINVAL, 0 }, { __LINE__, "placeholder=maybe", -EINVAL, 0 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct vc_params p;
		char err[160];

		memset(&p, 0xff, sizeof(p));
		int rc = vc_params_parse(v[i].q, &p, err, sizeof(err));
		CHECK_AT(v[i].line, rc == v[i].rc, "%s: rc %d %s", v[i].q, rc, err);
		CHECK_AT(v[i].line, p.placeholder == v[i].placeholder, "%s: placeholder %d", v[i].q,
			 p.placeholder);
		if (rc == 0)
			CHECK_AT(v[i].line, p.given == VC_PARAM_PLACEHOLDER, "given %x", p.given);
		else
			CHECK_AT(v[i].line, strstr(err, "'placeholder'") != NULL, "message %s", err);
	}
}

/* A camera's defaults fill what the URL left out, never what it named
 * (rotate=0 in the URL beats a camera mounted upside down). */
static void defaults(void)
{
	const struct vc_request def = { .quality = 60, .rotate = 180, .flip = VC_FLIP_H };
	struct vc_params p;

	vc_params_parse("size=320x240", &p, NULL, 0);
	vc_params_defaults(&p, &def, 1);
	CHECK(p.req.quality == 60 && p.req.rotate == 180 && p.req.flip == VC_FLIP_H &&
	      p.placeholder == 1 && p.req.width == 320, "all from the camera");
	vc_params_parse("quality=90&rotate=0&flip=none&placeholder=0", &p, NULL, 0);
	vc_params_defaults(&p, &def, 1);
	CHECK(p.req.quality == 90 && p.req.rotate == 0 && p.req.flip == 0 && p.placeholder == 0,
	      "the URL's own: q %u r %u f %u p %d", p.req.quality, p.req.rotate, p.req.flip,
	      p.placeholder);
	const struct vc_request none = { 0 };
	vc_params_parse("", &p, NULL, 0);
	vc_params_defaults(&p, &none, 0);
	CHECK(p.req.quality == 0 && p.req.rotate == 0 && p.req.flip == 0 && !p.placeholder,
	      "no defaults: quality stays 'unset' (a JPEG camera's frames pass through)");
}

/* H.264 rate and GOP: bits per second with k / M, the range's ends. */
static void h264_params(void)
{
	static const struct {
		int line;
		const char *q;
		uint32_t bitrate;
		uint16_t gop;
	} t[] = {
		{ __LINE__, "bitrate=2000000", 2000000, 0 },
		{ __LINE__, "bitrate=2000k&gop=60", 2000000, 60 },
		{ __LINE__, "bitrate=2M", 2000000, 0 },
		{ __LINE__, "bitrate=2m&gop=1", 2000000, 1 },
		{ __LINE__, "bitrate=10k&gop=1000", 10000, 1000 },
		{ __LINE__, "bitrate=100M", 100000000, 0 },
		{ __LINE__, "gop=30&bitrate=500K", 500000, 30 },
	};

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		struct vc_params p;
		char err[256];
		int rc = vc_params_parse(t[i].q, &p, err, sizeof(err));

		CHECK_AT(t[i].line, rc == 0 && p.req.bitrate == t[i].bitrate && p.req.gop == t[i].gop,
			 "rc %d (%s) bitrate %u gop %u", rc, err, p.req.bitrate, p.req.gop);
		CHECK_AT(t[i].line, (p.given & VC_PARAM_BITRATE) && (!t[i].gop || (p.given & VC_PARAM_GOP)),
			 "given %#x", p.given);
	}
}

static void limits(void)
{
	struct vc_params p;
	char err[160];
	size_t n = VC_PARAMS_MAX_QUERY + 1;
	char *q = malloc(n + 1);
	memset(q, 'a', n);
	q[n] = 0;
	int rc = vc_params_parse(q, &p, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "longer"), "long query: %d %s", rc, err);
	/* a 256-byte value */
	memcpy(q, "cam=", 4);
	q[4 + 256] = 0;
	rc = vc_params_parse(q, &p, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "255"), "long value: %d %s", rc, err);
	free(q);
}

/* Random bytes never crash, never leave a non-terminated message, and an
 * error always zeroes the result. */
static void fuzz(void)
{
	static const char alphabet[] = "=&%+x0123456789abcdefXGhvmjpegwidthfpsqualityrotatecam_ \x01\xff";
	unsigned seed = 1;
	int ok = 0, bad = 0, wrong = 0;
	for (int it = 0; it < 50000; it++) {
		char q[64];
		seed = seed * 1103515245u + 12345u;
		size_t n = (seed >> 16) % sizeof(q);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			q[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		q[n] = 0;
		struct vc_params p;
		char err[128];
		err[0] = 'x';
		int rc = vc_params_parse(q, &p, err, sizeof(err));
		if (rc == 0) {
			ok++;
			if (err[0] || p.req.width > 16384 || p.req.quality > 100)
				wrong++;
		} else {
			bad++;
			if (rc != -EINVAL || !memchr(err, 0, sizeof(err)) || !err[0] || p.given)
				wrong++;
		}
	}
	CHECK(wrong == 0 && ok > 1000 && bad > 1000, "ok %d bad %d wrong %d", ok, bad, wrong);
}

int main(void)
{
	RUN("params", table);
	RUN("params", bad_escape_unknown);
	RUN("params", given_bits);
	RUN("params", placeholder_param);
	RUN("params", defaults);
	RUN("params", h264_params);
	RUN("params", limits);
	RUN("params", fuzz);
	CHECK_EXIT();
}
