/* JSON writer (see json.h). It keeps a per-level "member written" flag so
 * callers never handle commas; strings are escaped so the output is always
 * valid JSON. The request-body parser is common/json_parse.c. */
#include "common/json.h"
#include "common/json_utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writer */

void vc_json_init(struct vc_json *j)
{
	memset(j, 0, sizeof(*j));
}

void vc_json_free(struct vc_json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

int vc_json_error(const struct vc_json *j)
{
	return j->err;
}

const char *vc_json_str_get(const struct vc_json *j)
{
	return j->buf && !j->err ? j->buf : "";
}

size_t vc_json_len(const struct vc_json *j)
{
	return j->err ? 0 : j->len;
}

char *vc_json_take(struct vc_json *j, size_t *len)
{
	if (j->err || j->depth || j->want_value || !j->len)
		return NULL;
	char *b = j->buf;
	if (len)
		*len = j->len;
	memset(j, 0, sizeof(*j));
	return b;
}

static int reserve(struct vc_json *j, size_t more)
{
	if (j->err)
		return -1;
	if (j->len + more + 1 <= j->cap)
		return 0;
	size_t cap = j->cap ? j->cap : 256;
	while (cap < j->len + more + 1) {
		if (cap > SIZE_MAX / 2) {
			j->err = -ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	char *b = realloc(j->buf, cap);
	if (!b) {
		j->err = -ENOMEM;
		return -1;
	}
	j->buf = b;
	j->cap = cap;
	return 0;
}

static void put(struct vc_json *j, const char *s, size_t n)
{
	if (reserve(j, n) < 0)
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = 0;
}

static void putc_(struct vc_json *j, char c)
{
	put(j, &c, 1);
}

/* Before any value: a comma when the level has members, and checks that a
 * value is allowed here (after a key in an object; anywhere in an array;
 * once at top level). */
static int before_value(struct vc_json *j)
{
	if (j->err)
		return -1;
	if (j->depth == 0) {
		if (j->len) { /* a second top-level value */
			j->err = -EINVAL;
			return -1;
		}
		return 0;
	}
	unsigned d = j->depth - 1;
	if (j->in_obj[d]) {
		if (!j->want_value) {
			j->err = -EINVAL;
			return -1;
		}
		j->want_value = 0;
		return 0;
	}
	if (j->count[d])
		putc_(j, ',');
	j->count[d] = 1;
	return j->err ? -1 : 0;
}

static void open_level(struct vc_json *j, int obj)
{
	if (before_value(j) < 0)
		return;
	if (j->depth >= VC_JSON_MAX_DEPTH) {
		j->err = -EINVAL;
		return;
	}
	putc_(j, obj ? '{' : '[');
	j->in_obj[j->depth] = (uint8_t)obj;
	j->count[j->depth] = 0;
	j->depth++;
}

static void close_level(struct vc_json *j, int obj)
{
	if (j->err)
		return;
	if (!j->depth || j->in_obj[j->depth - 1] != obj || j->want_value) {
		j->err = -EINVAL;
		return;
	}
	j->depth--;
	putc_(j, obj ? '}' : ']');
}

void vc_json_obj_begin(struct vc_json *j)
{
	open_level(j, 1);
}

void vc_json_obj_end(struct vc_json *j)
{
	close_level(j, 1);
}

void vc_json_arr_begin(struct vc_json *j)
{
	open_level(j, 0);
}

void vc_json_arr_end(struct vc_json *j)
{
	close_level(j, 0);
}


static void put_escaped(struct vc_json *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	static const char hex[] = "0123456789abcdef";

	putc_(j, '"');
	size_t i = 0;
	while (i < n && !j->err) {
		/* copy the longest run that needs no escaping in one go */
		size_t run = 0;
		while (i + run < n) {
			unsigned char c = s[i + run];
			if (c < 0x20 || c == '"' || c == '\\')
				break;
			if (c >= 0x80) {
				size_t l = vc_json_utf8_len(s + i + run, n - i - run);
				if (!l)
					break;
				run += l;
			} else {
				run++;
			}
		}
		put(j, str + i, run);
		i += run;
		if (i >= n)
			break;
		unsigned char c = s[i];
		char e[7];
		if (c == '"' || c == '\\') {
			e[0] = '\\', e[1] = (char)c;
			put(j, e, 2);
		} else if (c == '\n') {
			put(j, "\\n", 2);
		} else if (c == '\r') {
			put(j, "\\r", 2);
		} else if (c == '\t') {
			put(j, "\\t", 2);
		} else if (c == '\b') {
			put(j, "\\b", 2);
		} else if (c == '\f') {
			put(j, "\\f", 2);
		} else if (c < 0x20) {
			memcpy(e, "\\u00", 4);
			e[4] = hex[c >> 4], e[5] = hex[c & 15];
			put(j, e, 6);
		} else { /* a byte of an invalid UTF-8 sequence */
			put(j, "\\ufffd", 6);
		}
		i++;
	}
	putc_(j, '"');
}

void vc_json_key(struct vc_json *j, const char *key)
{
	if (j->err)
		return;
	if (!j->depth || !j->in_obj[j->depth - 1] || j->want_value || !key) {
		j->err = -EINVAL;
		return;
	}
	unsigned d = j->depth - 1;
	if (j->count[d])
		putc_(j, ',');
	j->count[d] = 1;
	put_escaped(j, key, strlen(key));
	putc_(j, ':');
	j->want_value = 1;
}

void vc_json_string_n(struct vc_json *j, const char *s, size_t n)
{
	if (!s) {
		vc_json_null(j);
		return;
	}
	if (before_value(j) < 0)
		return;
	put_escaped(j, s, n);
}

void vc_json_string(struct vc_json *j, const char *s)
{
	vc_json_string_n(j, s, s ? strlen(s) : 0);
}

static void put_fmt(struct vc_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(struct vc_json *j, const char *fmt, ...)
{
	char tmp[40];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(tmp))
		put(j, tmp, (size_t)n);
}

void vc_json_int(struct vc_json *j, int64_t v)
{
	if (before_value(j) == 0)
		put_fmt(j, "%" PRId64, v);
}

void vc_json_uint(struct vc_json *j, uint64_t v)
{
	if (before_value(j) == 0)
		put_fmt(j, "%" PRIu64, v);
}

void vc_json_double(struct vc_json *j, double v)
{
	if (before_value(j) < 0)
		return;
	if (!isfinite(v)) {
		put(j, "null", 4);
		return;
	}
	/* shortest of %.15g / %.17g that reads back as the same double */
	char tmp[40];
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	put(j, tmp, strlen(tmp));
}

void vc_json_fixed(struct vc_json *j, double v, int decimals)
{
	if (j->err)
		return;
	if (decimals < 0 || decimals > 9) {
		j->err = -EINVAL;
		return;
	}
	if (before_value(j) < 0)
		return;
	if (!isfinite(v)) {
		put(j, "null", 4);
		return;
	}
	/* room for DBL_MAX: '-', 309 digits, '.', 9 decimals */
	char tmp[328];
	int n = snprintf(tmp, sizeof(tmp), "%.*f", decimals, v);
	if (n > 0 && (size_t)n < sizeof(tmp))
		put(j, tmp, (size_t)n);
	else
		j->err = -EINVAL;
}

void vc_json_kfixed(struct vc_json *j, const char *key, double v, int decimals)
{
	vc_json_key(j, key);
	vc_json_fixed(j, v, decimals);
}

void vc_json_newline(struct vc_json *j)
{
	if (j->err)
		return;
	if (j->depth || j->want_value || !j->len || j->buf[j->len - 1] == '\n') {
		j->err = -EINVAL;
		return;
	}
	putc_(j, '\n');
}

void vc_json_bool(struct vc_json *j, int v)
{
	if (before_value(j) == 0)
		put(j, v ? "true" : "false", v ? 4 : 5);
}

void vc_json_null(struct vc_json *j)
{
	if (before_value(j) == 0)
		put(j, "null", 4);
}

void vc_json_raw(struct vc_json *j, const char *text)
{
	if (before_value(j) == 0)
		put(j, text, strlen(text));
}

/* key + value in one call: one definition per value type */
#define KEYED(name, type, value_fn)                                  \
	void name(struct vc_json *j, const char *key, type v)        \
	{                                                            \
		vc_json_key(j, key);                                 \
		value_fn(j, v);                                      \
	}
KEYED(vc_json_kstr, const char *, vc_json_string)
KEYED(vc_json_kint, int64_t, vc_json_int)
KEYED(vc_json_kuint, uint64_t, vc_json_uint)
KEYED(vc_json_kdouble, double, vc_json_double)
KEYED(vc_json_kbool, int, vc_json_bool)
#undef KEYED

/* see json_utf8.h */
/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
size_t vc_json_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}
