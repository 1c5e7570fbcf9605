/* Strict JSON request-body parser (see json.h): a recursive-descent
 * validator bounded in input size, depth, member count and string length.
 * The writer is common/json_write.c. */
#include "common/json.h"
#include "common/json_utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Decodes the escape at p->pos (on the character after the backslash) into
 * tmp (up to 4 bytes, *tl of them). Returns 0 or p->rc. */
static int parse_escape(struct parser *p, char *tmp, size_t *tl)
{
	int c = peek(p);
	const char *esc = "\"\\/bfnrt";
	const char *rep = "\"\\/\b\f\n\r\t";
	const char *e = c > 0 ? strchr(esc, c) : NULL;
	if (c > 0 && e) {
		tmp[0] = rep[e - esc];
		*tl = 1;
		p->pos++;
		return 0;
	}
	if (c != 'u')
		return fail(p, "bad escape");
	uint32_t cp, lo;
	size_t at = p->pos - 1;
	p->pos++;
	if (hex4(p, &cp) < 0)
		return p->rc;
	if (cp >= 0xdc00 && cp <= 0xdfff) {
		p->pos = at;
		return fail(p, "lone low surrogate");
	}
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (p->pos + 1 >= p->n || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
			p->pos = at;
			return fail(p, "lone high surrogate");
		}
		p->pos += 2;
		if (hex4(p, &lo) < 0)
			return p->rc;
		if (lo < 0xdc00 || lo > 0xdfff) {
			p->pos = at;
			return fail(p, "lone high surrogate");
		}
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (cp == 0) {
		p->pos = at;
		return fail(p, "\\u0000 not allowed");
	}
	*tl = utf8_put(tmp, cp);
	return 0;
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
		size_t tl = 0;

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
			if (parse_escape(p, tmp, &tl) < 0)
				goto err;
		} else {
			tl = vc_json_utf8_len((const unsigned char *)p->s + p->pos, p->n - p->pos);
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
