/* Query-string parsing for the serving endpoints (see params.h): split on
 * '&', percent-decode names and values, dispatch by name through a table,
 * and produce a message naming the parameter for any bad value. */
#include "common/params.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <linux/videodev2.h>

#include "common/fmt.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes s[0..n) into out (cap bytes incl. NUL). -EINVAL on a bad or NUL
 * escape, -E2BIG when too long. */
static int pct_decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi = i + 1 < n ? hexval((unsigned char)s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (hi | lo) == 0)
				return -EINVAL;
			c = hi << 4 | lo;
			i += 2;
		}
		if (o + 1 >= cap)
			return -E2BIG;
		out[o++] = (char)c;
	}
	out[o] = 0;
	return 0;
}

/* Quotes v into buf as printable ASCII (for messages), at most ~40 chars. */
static const char *quote(const char *v, char *buf, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; v[i] && o + 5 < len; i++) {
		unsigned char c = (unsigned char)v[i];
		if (i >= 40) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"' && c != '\'') {
			buf[o++] = (char)c;
		} else {
			snprintf(buf + o, len - o, "\\x%02x", c);
			o += 4;
		}
	}
	buf[o] = 0;
	return buf;
}

static int set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Decimal integer, optional '-' when allow_neg; digits only, no spaces.
 * Values beyond long long saturate (*sat = 1) so callers can clamp. */
static int parse_int(const char *s, int allow_neg, long long *v, int *sat)
{
	int neg = 0;
	unsigned long long acc = 0;

	*sat = 0;
	if (*s == '-' && allow_neg) {
		neg = 1;
		s++;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (acc > (unsigned long long)LLONG_MAX / 10) {
			*sat = 1;
			continue;
		}
		acc = acc * 10 + (unsigned)(*s - '0');
		if (acc > (unsigned long long)LLONG_MAX) {
			*sat = 1;
			acc = (unsigned long long)LLONG_MAX;
		}
	}
	if (*sat)
		acc = (unsigned long long)LLONG_MAX;
	*v = neg ? -(long long)acc : (long long)acc;
	return 0;
}

struct ctx {
	struct vc_params *p;
	uint32_t size_w, size_h;
	char *err;
	size_t errlen;
};

static int range_err(struct ctx *c, const char *name, const char *v, long long lo, long long hi)
{
	char q[64];
	return set_err(c->err, c->errlen, "bad parameter '%s': '%s' is not an integer in %lld..%lld",
		       name, quote(v, q, sizeof(q)), lo, hi);
}

static int get_range(struct ctx *c, const char *name, const char *v, long long lo, long long hi,
		     uint32_t *out)
{
	long long x;
	int sat;
	if (parse_int(v, lo < 0, &x, &sat) < 0 || sat || x < lo || x > hi)
		return range_err(c, name, v, lo, hi);
	*out = (uint32_t)x;
	return 0;
}

static int p_cam(struct ctx *c, const char *name, const char *v)
{
	char q[64];
	size_t n = strlen(v);
	if (!n || n >= sizeof(c->p->cam))
		return set_err(c->err, c->errlen,
			       "bad parameter '%s': '%s' must be 1..%zu characters", name,
			       quote(v, q, sizeof(q)), sizeof(c->p->cam) - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return set_err(c->err, c->errlen,
				       "bad parameter '%s': '%s' has control characters", name,
				       quote(v, q, sizeof(q)));
	memcpy(c->p->cam, v, n + 1);
	return 0;
}

static int p_format(struct ctx *c, const char *name, const char *v)
{
	char q[64];
	if (!strcasecmp(v, "mjpeg") || !strcasecmp(v, "jpeg") || !strcasecmp(v, "mjpg") ||
	    !strcasecmp(v, "jpg")) {
		c->p->req.fourcc = V4L2_PIX_FMT_MJPEG;
		return 0;
	}
	if (!strcasecmp(v, "h264") || !strcasecmp(v, "h.264") || !strcasecmp(v, "avc")) {
		c->p->req.fourcc = V4L2_PIX_FMT_H264; /* a stream format, not in the table */
		return 0;
	}
	const struct vc_fmt *f = *v ? vc_fmt_find(v) : NULL;
	if (!f || !vc_fmt_is_raw(f))
		return set_err(c->err, c->errlen,
			       "bad parameter '%s': unknown format '%s' (mjpeg, jpeg, h264, or a name "
			       "or fourcc such as YUYV, NV12, RGB24)",
			       name, quote(v, q, sizeof(q)));
	c->p->req.fourcc = f->fourcc;
	return 0;
}

static int p_width(struct ctx *c, const char *name, const char *v)
{
	return get_range(c, name, v, 0, 16384, &c->p->req.width);
}

static int p_height(struct ctx *c, const char *name, const char *v)
{
	return get_range(c, name, v, 0, 16384, &c->p->req.height);
}

static int p_size(struct ctx *c, const char *name, const char *v)
{
	char q[64], buf[VC_PARAMS_MAX_VALUE + 1];
	snprintf(buf, sizeof(buf), "%s", v);
	char *x = strpbrk(buf, "xX");
	long long w, h;
	int s1, s2;
	if (!x)
		goto bad;
	*x = 0;
	if (parse_int(buf, 0, &w, &s1) < 0 || parse_int(x + 1, 0, &h, &s2) < 0 || s1 || s2 ||
	    w < 1 || h < 1 || w > 16384 || h > 16384)
		goto bad;
	c->size_w = (uint32_t)w;
	c->size_h = (uint32_t)h;
	return 0;
bad:
	return set_err(c->err, c->errlen,
		       "bad parameter '%s': '%s' is not WxH with sides in 1..16384", name,
		       quote(v, q, sizeof(q)));
}

static int p_fps(struct ctx *c, const char *name, const char *v)
{
	return get_range(c, name, v, 0, 1000, &c->p->req.fps);
}

static int p_quality(struct ctx *c, const char *name, const char *v)
{
	long long x;
	int sat;
	char q[64];
	if (parse_int(v, 1, &x, &sat) < 0)
		return set_err(c->err, c->errlen,
			       "bad parameter '%s': '%s' is not an integer (1..100)", name,
			       quote(v, q, sizeof(q)));
	c->p->flags &= ~VC_PARAMS_QUALITY_CLAMPED;
	if (x < 1 || x > 100) {
		c->p->flags |= VC_PARAMS_QUALITY_CLAMPED;
		x = x < 1 ? 1 : 100;
	}
	c->p->req.quality = (uint8_t)x;
	return 0;
}

static int p_rotate(struct ctx *c, const char *name, const char *v)
{
	long long x;
	int sat;
	char q[64];
	if (parse_int(v, 1, &x, &sat) < 0 || sat)
		return set_err(c->err, c->errlen,
			       "bad parameter '%s': '%s' is not an integer (degrees: 0, 90, 180, 270)",
			       name, quote(v, q, sizeof(q)));
	x %= 360;
	if (x < 0)
		x += 360;
	c->p->req.rotate = (uint16_t)x;
	return 0;
}

static int p_flip(struct ctx *c, const char *name, const char *v)
{
	static const struct {
		const char *s;
		uint8_t f;
	} t[] = { { "none", 0 }, { "0", 0 }, { "", 0 }, { "h", VC_FLIP_H }, { "v", VC_FLIP_V },
		  { "hv", VC_FLIP_H | VC_FLIP_V }, { "vh", VC_FLIP_H | VC_FLIP_V } };
	char q[64];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcasecmp(v, t[i].s)) {
			c->p->req.flip = t[i].f;
			return 0;
		}
	}
	return set_err(c->err, c->errlen, "bad parameter '%s': '%s' is not h, v, hv or none",
		       name, quote(v, q, sizeof(q)));
}

static int p_placeholder(struct ctx *c, const char *name, const char *v)
{
	static const char *const yes[] = { "1", "yes", "true", "on", "" }, *const no[] = { "0", "no", "false", "off" };
	char q[64];

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(v, yes[i])) {
			c->p->placeholder = 1;
			return 0;
		}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(v, no[i])) {
			c->p->placeholder = 0;
			return 0;
		}
	return set_err(c->err, c->errlen, "bad parameter '%s': '%s' is not 1 or 0", name,
		       quote(v, q, sizeof(q)));
}

/* bitrate=N bits per second, or Nk / NM (kbit/s, Mbit/s): 10k..100M */
static int p_bitrate(struct ctx *c, const char *name, const char *v)
{
	char q[64], buf[32];
	size_t n = strlen(v);
	unsigned long long mul = 1;
	long long x;
	int sat;

	if (n && n < sizeof(buf)) {
		memcpy(buf, v, n + 1);
		if (buf[n - 1] == 'k' || buf[n - 1] == 'K')
			mul = 1000;
		else if (buf[n - 1] == 'm' || buf[n - 1] == 'M')
			mul = 1000000;
		if (mul > 1)
			buf[n - 1] = 0;
		if (parse_int(buf, 0, &x, &sat) == 0 && !sat && x >= 1 &&
		    (unsigned long long)x * mul >= 10000 && (unsigned long long)x * mul <= 100000000) {
			c->p->req.bitrate = (uint32_t)((unsigned long long)x * mul);
			return 0;
		}
	}
	return set_err(c->err, c->errlen,
		       "bad parameter '%s': '%s' is not a rate of 10k..100M bits per second (e.g. "
		       "2000000, 2000k, 2M)",
		       name, quote(v, q, sizeof(q)));
}

static int p_gop(struct ctx *c, const char *name, const char *v)
{
	uint32_t g = 0;
	int rc = get_range(c, name, v, 1, 1000, &g);

	if (rc == 0)
		c->p->req.gop = (uint16_t)g;
	return rc;
}

static int p_max_age(struct ctx *c, const char *name, const char *v)
{
	return get_range(c, name, v, 0, 86400000, &c->p->max_age_ms);
}

static const struct {
	const char *name;
	unsigned bit;
	int (*fn)(struct ctx *c, const char *name, const char *v);
} params[] = {
	{ "cam", VC_PARAM_CAM, p_cam },
	{ "format", VC_PARAM_FORMAT, p_format },
	{ "width", VC_PARAM_WIDTH, p_width },
	{ "height", VC_PARAM_HEIGHT, p_height },
	{ "size", VC_PARAM_SIZE, p_size },
	{ "fps", VC_PARAM_FPS, p_fps },
	{ "quality", VC_PARAM_QUALITY, p_quality },
	{ "rotate", VC_PARAM_ROTATE, p_rotate },
	{ "flip", VC_PARAM_FLIP, p_flip },
	{ "max_age_ms", VC_PARAM_MAX_AGE, p_max_age },
	{ "placeholder", VC_PARAM_PLACEHOLDER, p_placeholder },
	{ "bitrate", VC_PARAM_BITRATE, p_bitrate },
	{ "gop", VC_PARAM_GOP, p_gop },
};

int vc_params_parse(const char *query, struct vc_params *p, char *err, size_t errlen)
{
	struct ctx c = { p, 0, 0, err, errlen };
	char name[VC_PARAMS_MAX_VALUE + 1], val[VC_PARAMS_MAX_VALUE + 1];
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (err && errlen)
		err[0] = 0;
	if (!query)
		return 0;
	if (*query == '?')
		query++;
	size_t qlen = strlen(query);
	if (qlen > VC_PARAMS_MAX_QUERY) {
		rc = set_err(err, errlen, "query string longer than %d bytes", VC_PARAMS_MAX_QUERY);
		goto out;
	}
	const char *s = query;
	while (*s) {
		size_t n = strcspn(s, "&");
		const char *eq = memchr(s, '=', n);
		size_t nl = eq ? (size_t)(eq - s) : n;
		if (n == 0) { /* "a=1&&b=2" */
			s++;
			continue;
		}
		int d = pct_decode(s, nl, name, sizeof(name));
		if (d == 0 && eq)
			d = pct_decode(eq + 1, n - nl - 1, val, sizeof(val));
		else if (d == 0)
			val[0] = 0;
		if (d < 0) {
			char q[64], raw[VC_PARAMS_MAX_VALUE + 1];
			snprintf(raw, sizeof(raw), "%.*s", (int)(n < 200 ? n : 200), s);
			rc = set_err(err, errlen, "bad parameter '%s': %s", quote(raw, q, sizeof(q)),
				     d == -E2BIG ? "name or value longer than 255 bytes"
						 : "bad percent-encoding");
			goto out;
		}
		size_t i;
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
			if (!strcasecmp(name, params[i].name))
				break;
		if (i == sizeof(params) / sizeof(params[0])) {
			if (!p->n_unknown++) {
				char q[64];
				snprintf(p->unknown, sizeof(p->unknown), "%s",
					 quote(name, q, sizeof(q)));
			}
		} else {
			rc = params[i].fn(&c, params[i].name, val);
			if (rc < 0)
				goto out;
			p->given |= params[i].bit;
		}
		s += n;
		if (*s == '&')
			s++;
	}
	if (p->given & VC_PARAM_SIZE) {
		if (((p->given & VC_PARAM_WIDTH) && p->req.width != c.size_w) ||
		    ((p->given & VC_PARAM_HEIGHT) && p->req.height != c.size_h)) {
			rc = set_err(err, errlen,
				     "bad parameter 'size': %ux%u disagrees with width/height",
				     c.size_w, c.size_h);
			goto out;
		}
		p->req.width = c.size_w;
		p->req.height = c.size_h;
		p->given |= VC_PARAM_WIDTH | VC_PARAM_HEIGHT;
	}
out:
	if (rc < 0)
		memset(p, 0, sizeof(*p));
	return rc;
}

void vc_params_defaults(struct vc_params *p, const struct vc_request *def, int placeholder)
{
	if (!(p->given & VC_PARAM_QUALITY) && def->quality)
		p->req.quality = def->quality;
	if (!(p->given & VC_PARAM_ROTATE))
		p->req.rotate = def->rotate;
	if (!(p->given & VC_PARAM_FLIP))
		p->req.flip = def->flip;
	if (!(p->given & VC_PARAM_PLACEHOLDER))
		p->placeholder = placeholder;
}
