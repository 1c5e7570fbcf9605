/* The test pattern's modes (see testsrc_int.h) and its path options
 * ("test:1280x720@30:YUYV:only", see testsrc.h). */
#include "server/capture/testsrc.h"
#include "server/capture/testsrc_int.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/convert.h"
#include "common/h264.h"

#define DEF_W 640
#define DEF_H 480
#define DEF_FPS 30

const struct vc_fmt *testsrc_i420(void)
{
	return vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
}

int testsrc_producible(const struct vc_fmt *f, int h264)
{
	if (f && f == vc_h264_fmt())
		return h264;
	if (!f || !vc_fmt_is_raw(f))
		return 0;
	if (f->layout == VC_LAYOUT_COMPRESSED)
		return 1;
	return vc_conv_supported(testsrc_i420(), f);
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void testsrc_adjust(struct vc_mode *m, int h264)
{
	const struct vc_fmt *f = vc_capture_fmt(m->fourcc);

	if (!testsrc_producible(f, h264))
		m->fourcc = V4L2_PIX_FMT_YUYV;
	m->width = clamp_u32(m->width ? m->width : DEF_W, MIN_DIM, MAX_DIM) & ~1u;
	m->height = clamp_u32(m->height ? m->height : DEF_H, MIN_DIM, MAX_DIM) & ~1u;
	if (!m->ival.num || !m->ival.den) {
		m->ival.num = 1;
		m->ival.den = DEF_FPS;
	}
	/* 1..240 frames per second. */
	if ((uint64_t)m->ival.den > (uint64_t)m->ival.num * 240)
		m->ival = (struct vc_fract){ 1, 240 };
	if (m->ival.num > m->ival.den)
		m->ival = (struct vc_fract){ 1, 1 };
}

static int parse_uint(const char *s, const char *end, uint32_t *out)
{
	uint64_t v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > 100000)
			return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

/* Option words name what was wrong in *why (if given), so --check-config
 * and --device can say more than "bad path". */
static void say(char *why, size_t why_len, const char *fmt, const char *tok)
{
	if (why && why_len)
		snprintf(why, why_len, fmt, tok);
}

/* bitrate=N, N bits/s with an optional k or M, 10k..100M. */
static int parse_bitrate(const char *tok, const char *s, uint32_t *out, char *why,
			 size_t why_len)
{
	const char *end = s + strlen(s);
	uint32_t mul = 1, v;

	if (end > s && (end[-1] == 'k' || end[-1] == 'K'))
		mul = 1000;
	else if (end > s && end[-1] == 'M')
		mul = 1000000;
	if (parse_uint(s, mul > 1 ? end - 1 : end, &v) < 0 || (uint64_t)v * mul < 10000 ||
	    (uint64_t)v * mul > 100000000) {
		say(why, why_len, "bad bitrate '%s' (want bits/s, 2000k or 20M; 10k..100M)", tok);
		return -EINVAL;
	}
	*out = v * mul;
	return 0;
}

static int parse_opt(const char *s, size_t n, struct vc_testsrc_opts *o, char *why,
		     size_t why_len)
{
	char tok[32];
	const char *at, *x;

	if (n == 0)
		return 0;
	if (n >= sizeof(tok)) {
		say(why, why_len, "option too long: '%.40s...'", s);
		return -EINVAL;
	}
	memcpy(tok, s, n);
	tok[n] = 0;
	if (!strcasecmp(tok, "still")) {
		o->still = 1;
		return 0;
	}
	if (!strcasecmp(tok, "only")) {
		o->only = 1;
		return 0;
	}
	if (!strcasecmp(tok, "noise")) {
		o->noise = 1;
		return 0;
	}
	if (!strcasecmp(tok, "ps_once")) {
		o->ps_once = 1;
		return 0;
	}
	if (!strncasecmp(tok, "bitrate=", 8))
		return parse_bitrate(tok, tok + 8, &o->bitrate, why, why_len);
	if (!strcasecmp(tok, "H264")) {
		o->mode.fourcc = vc_h264_fmt()->fourcc;
		o->h264 = 1;
		return 0;
	}
	at = strchr(tok, '@');
	x = strchr(tok, 'x');
	if (at || (x && tok[0] >= '0' && tok[0] <= '9')) {
		const char *end = at ? at : tok + n;
		if (x && x < end) {
			if (parse_uint(tok, x, &o->mode.width) < 0 ||
			    parse_uint(x + 1, end, &o->mode.height) < 0) {
				say(why, why_len, "bad size '%s' (want WxH, e.g. 1280x720)", tok);
				return -EINVAL;
			}
		} else if (end != tok) {
			say(why, why_len, "bad size '%s' (want WxH, e.g. 1280x720)", tok);
			return -EINVAL;
		}
		if (at) {
			uint32_t fps;
			if (parse_uint(at + 1, tok + n, &fps) < 0 || fps == 0) {
				say(why, why_len, "bad rate '%s' (want @FPS, 1-240)", tok);
				return -EINVAL;
			}
			o->mode.ival = (struct vc_fract){ 1, fps };
		}
		return 0;
	}
	const struct vc_fmt *f = vc_fmt_find(tok);
	if (!f) {
		say(why, why_len,
		    "unknown option '%s' (want WxH, WxH@FPS, @FPS, a format such as YUYV, "
		    "MJPG or H264, still, only, noise, ps_once, bitrate=N)",
		    tok);
		return -EINVAL;
	}
	if (!testsrc_producible(f, 0)) {
		say(why, why_len, "format '%s' cannot be produced by the test pattern", tok);
		return -EINVAL;
	}
	o->mode.fourcc = f->fourcc;
	o->h264 = 0; /* the last format named counts */
	return 0;
}

int vc_testsrc_parse(const char *path, struct vc_testsrc_opts *o, char *why, size_t why_len)
{
	memset(o, 0, sizeof(*o));
	say(why, why_len, "%s", "");
	if (strncmp(path, "test", 4) != 0 || (path[4] != 0 && path[4] != ':')) {
		say(why, why_len, "'%.40s' is not a test pattern path (want test or test:...)",
		    path);
		return -EINVAL;
	}
	const char *p = path[4] ? path + 5 : path + 4;
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (parse_opt(p, n, o, why, why_len) < 0)
			return -EINVAL;
		p += n + (e ? 1 : 0);
	}
	if ((o->ps_once || o->bitrate) && !o->h264) {
		say(why, why_len, "%s needs the H264 format", o->ps_once ? "ps_once" : "bitrate");
		return -EINVAL;
	}
	if (o->noise && o->h264) {
		say(why, why_len, "%s", "noise needs a raw or MJPEG format, not H264");
		return -EINVAL;
	}
	testsrc_adjust(&o->mode, o->h264);
	return 0;
}

int testsrc_make_format(const struct vc_mode *m, struct vc_src_format *out)
{
	memset(out, 0, sizeof(*out));
	out->mode = *m;
	out->fmt = vc_capture_fmt(m->fourcc);
	if (!out->fmt)
		return -EINVAL;
	out->field = V4L2_FIELD_NONE;
	return vc_fmt_geometry(out->fmt, m->width, m->height, 0, &out->geom);
}
