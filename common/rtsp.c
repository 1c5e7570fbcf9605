/* RTSP request parsing (common/rtsp.h). */
#include "common/rtsp.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Where the head ends (after CRLFCRLF, or LFLF from sloppy clients), or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] == '\n' && buf[i + 1] == '\n')
			return i + 2;
		if (i + 3 < len && !memcmp(buf + i, "\r\n\r\n", 4))
			return i + 4;
	}
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

/* A non-negative decimal number filling all of s, at most max. */
static int number(const char *s, long max, long *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

long vc_rtsp_parse(const char *buf, size_t len, struct vc_rtsp_req *r)
{
	size_t n = head_end(buf, len < VC_RTSP_MAX_HEAD ? len : VC_RTSP_MAX_HEAD);

	if (!n)
		return len >= VC_RTSP_MAX_HEAD ? -EMSGSIZE : 0;
	memset(r, 0, sizeof(*r));
	r->cseq = -1;
	memcpy(r->buf, buf, n);
	r->buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!r->buf[i] || (r->buf[i] < ' ' && r->buf[i] != '\r' && r->buf[i] != '\n' &&
				   r->buf[i] != '\t'))
			return -EINVAL; /* NUL and control bytes: garbage */

	char *save = NULL, *line = strtok_r(r->buf, "\n", &save);
	if (!line)
		return -EINVAL;
	/* METHOD SP URI SP RTSP/1.0 */
	char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1)
		return -EINVAL;
	*sp1 = *sp2 = 0;
	if (strcmp(trim(sp2 + 1), "RTSP/1.0"))
		return -EINVAL;
	for (char *m = line; *m; m++)
		if (!isupper((unsigned char)*m) && *m != '_')
			return -EINVAL;
	r->method = line;
	r->uri = sp1 + 1;
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *colon = strchr(line, ':');

		if (!*trim(line))
			continue;
		if (!colon || colon == line)
			return -EINVAL;
		if (r->n_hdr >= VC_RTSP_MAX_HDRS)
			return -EMSGSIZE;
		*colon = 0;
		r->name[r->n_hdr] = trim(line);
		r->value[r->n_hdr] = trim(colon + 1);
		r->n_hdr++;
	}
	const char *v = vc_rtsp_header(r, "CSeq");
	long num;
	if (v) {
		if (number(v, 0x7fffffff, &num) < 0)
			return -EINVAL;
		r->cseq = num;
	}
	v = vc_rtsp_header(r, "Content-Length");
	if (v) {
		if (number(v, 0x7fffffff, &num) < 0)
			return -EINVAL;
		if (num > VC_RTSP_MAX_BODY)
			return -EMSGSIZE;
		r->body_len = (size_t)num;
	}
	if (len - n < r->body_len)
		return 0;
	return (long)(n + r->body_len);
}

const char *vc_rtsp_header(const struct vc_rtsp_req *r, const char *name)
{
	for (unsigned i = 0; i < r->n_hdr; i++)
		if (!strcasecmp(r->name[i], name))
			return r->value[i];
	return NULL;
}

/* "a-b" or "a" (then b = a + 1) into two numbers up to max. */
static int pair(const char *s, size_t n, long max, long out[2])
{
	char tmp[32];

	if (n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *dash = strchr(tmp, '-');
	if (dash)
		*dash = 0;
	if (number(tmp, max, &out[0]) < 0)
		return -EINVAL;
	if (!dash) {
		out[1] = out[0] + 1;
		return out[1] <= max ? 0 : -EINVAL;
	}
	return number(dash + 1, max, &out[1]);
}

/* One transport spec (up to the comma): 0, -ENOTSUP or -EINVAL. */
static int one_transport(const char *s, size_t n, struct vc_rtsp_transport *t)
{
	int have_port = 0, have_ch = 0, multicast = 0;
	size_t i = 0;

	memset(t, 0, sizeof(*t));
	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != ';')
			j++;
		const char *p = s + i;
		size_t k = j - i;
		long v[2];

		if (i == 0) {
			if (k == 11 && !strncasecmp(p, "RTP/AVP/TCP", 11))
				t->tcp = 1;
			else if (!((k == 7 && !strncasecmp(p, "RTP/AVP", 7)) ||
				   (k == 11 && !strncasecmp(p, "RTP/AVP/UDP", 11))))
				return -ENOTSUP;
		} else if (k == 9 && !strncasecmp(p, "multicast", 9)) {
			multicast = 1;
		} else if (k > 12 && !strncasecmp(p, "client_port=", 12)) {
			if (pair(p + 12, k - 12, 65535, v) < 0 || !v[0] || !v[1])
				return -EINVAL;
			t->port[0] = (uint16_t)v[0];
			t->port[1] = (uint16_t)v[1];
			have_port = 1;
		} else if (k > 12 && !strncasecmp(p, "interleaved=", 12)) {
			if (pair(p + 12, k - 12, 255, v) < 0)
				return -EINVAL;
			t->ch[0] = (int)v[0];
			t->ch[1] = (int)v[1];
			have_ch = 1;
		}
		i = j + 1;
	}
	if (multicast)
		return -ENOTSUP;
	if (t->tcp && !have_ch) {
		t->ch[0] = 0;
		t->ch[1] = 1;
	}
	if (!t->tcp && !have_port)
		return -EINVAL;
	return 0;
}

int vc_rtsp_transport(const char *value, struct vc_rtsp_transport *t)
{
	int ret = -EINVAL;

	if (!value)
		return -EINVAL;
	while (*value) {
		const char *comma = strchr(value, ',');
		size_t n = comma ? (size_t)(comma - value) : strlen(value);

		while (n && *value == ' ') {
			value++;
			n--;
		}
		ret = one_transport(value, n, t);
		if (!ret)
			return 0;
		if (!comma)
			break;
		value = comma + 1;
	}
	return ret;
}

int vc_base64(const uint8_t *src, size_t len, char *dst, size_t cap)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t need = (len + 2) / 3 * 4;
	size_t o = 0;

	if (need + 1 > cap)
		return -ENOSPC;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)src[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)src[i + 1] << 8;
		if (i + 2 < len)
			v |= src[i + 2];
		dst[o++] = tab[v >> 18 & 63];
		dst[o++] = tab[v >> 12 & 63];
		dst[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
		dst[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	dst[o] = 0;
	return (int)o;
}
