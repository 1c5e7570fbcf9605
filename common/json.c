/* JSON writer and strict request-body parser (see json.h). The writer keeps
 * a per-level "member written" flag so callers never handle commas; the
 * parser is a recursive-descent validator bounded in input size, depth,
 * member count and string length. */
#include "common/json.h"

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

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_len(const unsigned char *s, size_t n)
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
				size_t l = utf8_len(s + i + run, n - i - run);
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

/* ---------------------------------------------------------------- parser */

struct parser {
	const char *s;
	size_t n, pos;
	struct vc_json_perr *err;
	int rc; /* -EINVAL or -ENOMEM once failed */
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *p, const char *fmt, ...)
{
	if (p->rc)
		return p->rc;
	p->rc = -EINVAL;
	if (p->err) {
		va_list ap;
		p->err->pos = p->pos;
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
	return p->rc;
}

static int nomem(struct parser *p)
{
	if (!p->rc) {
		p->rc = -ENOMEM;
		if (p->err) {
			p->err->pos = p->pos;
			snprintf(p->err->msg, sizeof(p->err->msg), "out of memory");
		}
	}
	return p->rc;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->n) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int peek(struct parser *p)
{
	return p->pos < p->n ? (unsigned char)p->s[p->pos] : -1;
}

static int hex4(struct parser *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int c = peek(p);
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return fail(p, "bad \\u escape");
		*v = *v << 4 | d;
		p->pos++;
	}
	return 0;
}

static size_t utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Parses a string at p->pos (on the opening quote). With out != NULL the
 * decoded text is returned in a heap buffer; limit bounds its length. */
static int parse_string(struct parser *p, char **out, size_t limit, const char *what)
{
	p->pos++; /* opening quote */
	/* decoded text is never longer than the escaped input */
	char *buf = NULL;
	size_t len = 0;
	if (out) {
		size_t cap = (p->n - p->pos) < limit ? p->n - p->pos : limit;
		buf = malloc(cap + 4 + 1);
		if (!buf)
			return nomem(p);
	}
	for (;;) {
		int c = peek(p);
		char tmp[4];
		size_t tl;

		if (c < 0) {
			fail(p, "unterminated string");
			goto err;
		}
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			fail(p, "control character in string");
			goto err;
		}
		if (c == '\\') {
			p->pos++;
			c = peek(p);
			const char *esc = "\"\\/bfnrt";
			const char *rep = "\"\\/\b\f\n\r\t";
			const char *e = c > 0 ? strchr(esc, c) : NULL;
			if (c > 0 && e) {
				tmp[0] = rep[e - esc];
				tl = 1;
				p->pos++;
			} else if (c == 'u') {
				uint32_t cp, lo;
				size_t at = p->pos - 1;
				p->pos++;
				if (hex4(p, &cp) < 0)
					goto err;
				if (cp >= 0xdc00 && cp <= 0xdfff) {
					p->pos = at;
					fail(p, "lone low surrogate");
					goto err;
				}
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (p->pos + 1 >= p->n || p->s[p->pos] != '\\' ||
					    p->s[p->pos + 1] != 'u') {
						p->pos = at;
						fail(p, "lone high surrogate");
						goto err;
					}
					p->pos += 2;
					if (hex4(p, &lo) < 0)
						goto err;
					if (lo < 0xdc00 || lo > 0xdfff) {
						p->pos = at;
						fail(p, "lone high surrogate");
						goto err;
					}
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				if (cp == 0) {
					p->pos = at;
					fail(p, "\\u0000 not allowed");
					goto err;
				}
				tl = utf8_put(tmp, cp);
			} else {
				fail(p, "bad escape");
				goto err;
			}
		} else {
			tl = utf8_len((const unsigned char *)p->s + p->pos, p->n - p->pos);
			if (!tl) {
				fail(p, "invalid UTF-8");
				goto err;
			}
			memcpy(tmp, p->s + p->pos, tl);
			p->pos += tl;
		}
		if (len + tl > limit) {
			fail(p, "%s longer than %zu bytes", what, limit);
			goto err;
		}
		if (buf)
			memcpy(buf + len, tmp, tl);
		len += tl;
	}
	if (out) {
		buf[len] = 0;
		*out = buf;
	}
	return 0;
err:
	free(buf);
	return p->rc;
}

static int parse_number(struct parser *p, struct vc_json_member *m)
{
	size_t start = p->pos;
	int integral = 1;

	if (peek(p) == '-')
		p->pos++;
	int c = peek(p);
	if (c == '0') {
		p->pos++;
		c = peek(p);
		if (c >= '0' && c <= '9')
			return fail(p, "leading zero in number");
	} else if (c >= '1' && c <= '9') {
		while ((c = peek(p)) >= '0' && c <= '9')
			p->pos++;
	} else {
		return fail(p, "bad number");
	}
	if (peek(p) == '.') {
		integral = 0;
		p->pos++;
		if (!((c = peek(p)) >= '0' && c <= '9'))
			return fail(p, "digit expected after '.'");
		while ((c = peek(p)) >= '0' && c <= '9')
			p->pos++;
	}
	c = peek(p);
	if (c == 'e' || c == 'E') {
		integral = 0;
		p->pos++;
		c = peek(p);
		if (c == '+' || c == '-')
			p->pos++;
		if (!((c = peek(p)) >= '0' && c <= '9'))
			return fail(p, "digit expected in exponent");
		while ((c = peek(p)) >= '0' && c <= '9')
			p->pos++;
	}
	if (!m)
		return 0;
	size_t len = p->pos - start;
	char tmp[64];
	if (len >= sizeof(tmp)) {
		p->pos = start;
		return fail(p, "number too long");
	}
	memcpy(tmp, p->s + start, len);
	tmp[len] = 0;
	m->type = VC_JSON_NUMBER;
	m->num = strtod(tmp, NULL);
	if (!isfinite(m->num)) {
		p->pos = start;
		return fail(p, "number out of range");
	}
	if (integral) {
		errno = 0;
		long long v = strtoll(tmp, NULL, 10);
		if (!errno) {
			m->is_int = 1;
			m->i = v;
		}
	}
	return 0;
}

static int expect_word(struct parser *p, const char *w)
{
	size_t l = strlen(w);
	if (p->n - p->pos < l || memcmp(p->s + p->pos, w, l))
		return fail(p, "unexpected character");
	p->pos += l;
	return 0;
}

/* Any value, validated and skipped (nested containers of a member). */
static int skip_value(struct parser *p, unsigned depth);

static int skip_container(struct parser *p, unsigned depth, int obj)
{
	if (depth >= VC_JSON_MAX_NEST)
		return fail(p, "nested deeper than %d levels", VC_JSON_MAX_NEST);
	p->pos++;
	skip_ws(p);
	if (peek(p) == (obj ? '}' : ']')) {
		p->pos++;
		return 0;
	}
	for (;;) {
		skip_ws(p);
		if (obj) {
			if (peek(p) != '"')
				return fail(p, "member name expected");
			if (parse_string(p, NULL, VC_JSON_MAX_STRING, "name") < 0)
				return p->rc;
			skip_ws(p);
			if (peek(p) != ':')
				return fail(p, "':' expected");
			p->pos++;
			skip_ws(p);
		}
		if (skip_value(p, depth + 1) < 0)
			return p->rc;
		skip_ws(p);
		int c = peek(p);
		if (c == ',') {
			p->pos++;
			continue;
		}
		if (c == (obj ? '}' : ']')) {
			p->pos++;
			return 0;
		}
		return fail(p, obj ? "',' or '}' expected" : "',' or ']' expected");
	}
}

static int skip_value(struct parser *p, unsigned depth)
{
	switch (peek(p)) {
	case '{':
		return skip_container(p, depth, 1);
	case '[':
		return skip_container(p, depth, 0);
	case '"':
		return parse_string(p, NULL, VC_JSON_MAX_STRING, "string");
	case 't':
		return expect_word(p, "true");
	case 'f':
		return expect_word(p, "false");
	case 'n':
		return expect_word(p, "null");
	case -1:
		return fail(p, "value expected");
	default:
		return parse_number(p, NULL);
	}
}

static int parse_member_value(struct parser *p, struct vc_json_member *m)
{
	m->raw_off = p->pos;
	int c = peek(p);
	int rc;
	switch (c) {
	case '{':
	case '[':
		m->type = c == '{' ? VC_JSON_OBJECT : VC_JSON_ARRAY;
		rc = skip_container(p, 1, c == '{');
		break;
	case '"':
		m->type = VC_JSON_STRING;
		rc = parse_string(p, &m->str, VC_JSON_MAX_STRING, "string");
		break;
	case 't':
	case 'f':
		m->type = VC_JSON_BOOL;
		m->b = c == 't';
		rc = expect_word(p, c == 't' ? "true" : "false");
		break;
	case 'n':
		m->type = VC_JSON_NULL;
		rc = expect_word(p, "null");
		break;
	case -1:
		rc = fail(p, "value expected");
		break;
	default:
		rc = parse_number(p, m);
		break;
	}
	m->raw_len = p->pos - m->raw_off;
	return rc;
}

void vc_json_object_free(struct vc_json_object *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->m[i].name);
		free(o->m[i].str);
	}
	free(o->m);
	o->m = NULL;
	o->n = 0;
}

const struct vc_json_member *vc_json_object_get(const struct vc_json_object *o,
						const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->m[i].name, name))
			return &o->m[i];
	return NULL;
}

int vc_json_parse_object(const char *text, size_t len, struct vc_json_object *out,
			 struct vc_json_perr *err)
{
	struct parser p = { text, len, 0, err, 0 };
	struct vc_json_object o = { 0, NULL };

	if (err) {
		err->pos = 0;
		err->msg[0] = 0;
	}
	out->n = 0;
	out->m = NULL;
	if (len > VC_JSON_MAX_INPUT) {
		fail(&p, "body larger than %d bytes", VC_JSON_MAX_INPUT);
		return p.rc;
	}
	if (!text && len) {
		fail(&p, "no body");
		return p.rc;
	}
	skip_ws(&p);
	if (peek(&p) != '{') {
		fail(&p, p.pos < p.n ? "object expected" : "empty body");
		return p.rc;
	}
	p.pos++;
	skip_ws(&p);
	if (peek(&p) == '}') {
		p.pos++;
		goto tail;
	}
	o.m = calloc(VC_JSON_MAX_MEMBERS, sizeof(*o.m));
	if (!o.m)
		return nomem(&p);
	for (;;) {
		skip_ws(&p);
		if (peek(&p) != '"') {
			fail(&p, "member name expected");
			goto err;
		}
		if (o.n == VC_JSON_MAX_MEMBERS) {
			fail(&p, "more than %d members", VC_JSON_MAX_MEMBERS);
			goto err;
		}
		struct vc_json_member *m = &o.m[o.n];
		size_t name_at = p.pos;
		if (parse_string(&p, &m->name, VC_JSON_MAX_NAME, "name") < 0)
			goto err;
		o.n++;
		for (size_t i = 0; i + 1 < o.n; i++) {
			if (!strcmp(o.m[i].name, m->name)) {
				p.pos = name_at;
				fail(&p, "duplicate name '%.40s'", m->name);
				goto err;
			}
		}
		skip_ws(&p);
		if (peek(&p) != ':') {
			fail(&p, "':' expected");
			goto err;
		}
		p.pos++;
		skip_ws(&p);
		if (parse_member_value(&p, m) < 0)
			goto err;
		skip_ws(&p);
		int c = peek(&p);
		if (c == ',') {
			p.pos++;
			continue;
		}
		if (c == '}') {
			p.pos++;
			break;
		}
		fail(&p, "',' or '}' expected");
		goto err;
	}
tail:
	skip_ws(&p);
	if (p.pos != p.n) {
		fail(&p, "trailing characters after the object");
		goto err;
	}
	*out = o;
	return 0;
err:
	vc_json_object_free(&o);
	return p.rc;
}
