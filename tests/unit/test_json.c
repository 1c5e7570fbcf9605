/* Unit tests of common/json_write.c and common/json_parse.c: writer output byte for byte (escaping, UTF-8
 * passthrough and repair, numbers, nesting, misuse), parser vectors valid and
 * malformed with the error position, limits, and a round trip of every byte
 * value through writer then parser. */
#include "common/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void writer_strings(void)
{
	static const struct {
		int line;
		const char *in;
		size_t n; /* 0 = strlen */
		const char *want;
	} v[] = {
		{ __LINE__, "", 0, "\"\"" },
		{ __LINE__, "abc", 0, "\"abc\"" },
		{ __LINE__, "a\"b", 0, "\"a\\\"b\"" },
		{ __LINE__, "a\\b", 0, "\"a\\\\b\"" },
		{ __LINE__, "/", 0, "\"/\"" },
		{ __LINE__, "\n\r\t\b\f", 0, "\"\\n\\r\\t\\b\\f\"" },
		{ __LINE__, "\x01\x1f", 0, "\"\\u0001\\u001f\"" },
		{ __LINE__, "x\0y", 3, "\"x\\u0000y\"" },
		{ __LINE__, "\x7f", 0, "\"\x7f\"" },
		{ __LINE__, "caf\xc3\xa9", 0, "\"caf\xc3\xa9\"" },              /* é */
		{ __LINE__, "\xe2\x82\xac", 0, "\"\xe2\x82\xac\"" },             /* € */
		{ __LINE__, "\xf0\x9f\x93\xb7", 0, "\"\xf0\x9f\x93\xb7\"" },     /* 📷 */
		{ __LINE__, "\xff", 0, "\"\\ufffd\"" },                          /* never valid */
		{ __LINE__, "a\xc3", 0, "\"a\\ufffd\"" },                        /* truncated */
		{ __LINE__, "\xc0\xaf", 0, "\"\\ufffd\\ufffd\"" },               /* overlong / */
		{ __LINE__, "\xed\xa0\x80", 0, "\"\\ufffd\\ufffd\\ufffd\"" },    /* surrogate */
		{ __LINE__, "\xf4\x90\x80\x80", 0, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* > U+10FFFF */
		{ __LINE__, "\xe2\x82", 0, "\"\\ufffd\\ufffd\"" },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_json j;
		vc_json_init(&j);
		vc_json_string_n(&j, v[i].in, v[i].n ? v[i].n : strlen(v[i].in));
		CHECK_AT(v[i].line, !vc_json_error(&j) && !strcmp(vc_json_str_get(&j), v[i].want),
			 "got %s want %s", vc_json_str_get(&j), v[i].want);
		vc_json_free(&j);
	}
}

static void writer_numbers(void)
{
	static const struct {
		int line;
		int kind; /* 0 int, 1 uint, 2 double */
		double d;
		long long i;
		const char *want;
	} v[] = {
		{ __LINE__, 0, 0, 0, "0" },
		{ __LINE__, 0, 0, -1, "-1" },
		{ __LINE__, 0, 0, INT64_MIN, "-9223372036854775808" },
		{ __LINE__, 0, 0, INT64_MAX, "9223372036854775807" },
		{ __LINE__, 1, 0, -1, "18446744073709551615" },
		{ __LINE__, 2, 0.5, 0, "0.5" },
		{ __LINE__, 2, 30, 0, "30" },
		{ __LINE__, 2, 29.97, 0, "29.97" },
		{ __LINE__, 2, 0.1, 0, "0.1" },
		{ __LINE__, 2, 1e300, 0, "1e+300" },
		{ __LINE__, 2, -2.5e-7, 0, "-2.5e-07" },
		{ __LINE__, 2, NAN, 0, "null" },
		{ __LINE__, 2, INFINITY, 0, "null" },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_json j;
		vc_json_init(&j);
		if (v[i].kind == 0)
			vc_json_int(&j, v[i].i);
		else if (v[i].kind == 1)
			vc_json_uint(&j, (uint64_t)v[i].i);
		else
			vc_json_double(&j, v[i].d);
		CHECK_AT(v[i].line, !strcmp(vc_json_str_get(&j), v[i].want), "got %s want %s",
			 vc_json_str_get(&j), v[i].want);
		vc_json_free(&j);
	}
	/* doubles read back exactly */
	static const double rt[] = { 1.0 / 3, 2.0 / 3, 1e-310, 123456789.123456789, 0.3 };
	for (size_t i = 0; i < ARRAY_LEN(rt); i++) {
		struct vc_json j;
		vc_json_init(&j);
		vc_json_double(&j, rt[i]);
		CHECK(strtod(vc_json_str_get(&j), NULL) == rt[i], "%s", vc_json_str_get(&j));
		vc_json_free(&j);
	}
}

static void writer_nesting(void)
{
	struct vc_json j;
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_json_kstr(&j, "name", "cam0");
	vc_json_kint(&j, "n", 3);
	vc_json_key(&j, "list");
	vc_json_arr_begin(&j);
	vc_json_int(&j, 1);
	vc_json_obj_begin(&j);
	vc_json_obj_end(&j);
	vc_json_arr_begin(&j);
	vc_json_arr_end(&j);
	vc_json_null(&j);
	vc_json_bool(&j, 0);
	vc_json_arr_end(&j);
	vc_json_key(&j, "o");
	vc_json_obj_begin(&j);
	vc_json_kbool(&j, "b", 1);
	vc_json_kdouble(&j, "fps", 29.97);
	vc_json_kuint(&j, "u", 7);
	vc_json_key(&j, "raw");
	vc_json_raw(&j, "[1,2]");
	vc_json_obj_end(&j);
	vc_json_obj_end(&j);
	const char *want = "{\"name\":\"cam0\",\"n\":3,\"list\":[1,{},[],null,false],"
			   "\"o\":{\"b\":true,\"fps\":29.97,\"u\":7,\"raw\":[1,2]}}";
	CHECK(!strcmp(vc_json_str_get(&j), want), "got %s", vc_json_str_get(&j));
	size_t len = 0;
	char *t = vc_json_take(&j, &len);
	CHECK(t && len == strlen(want) && !strcmp(t, want), "take");
	free(t);
	CHECK(j.buf == NULL && j.len == 0, "take resets");

	/* a big document grows the buffer */
	vc_json_init(&j);
	vc_json_arr_begin(&j);
	for (int i = 0; i < 10000; i++)
		vc_json_string(&j, "0123456789");
	vc_json_arr_end(&j);
	CHECK(!vc_json_error(&j) && vc_json_len(&j) == 2 + 10000 * 13 - 1, "len %zu",
	      vc_json_len(&j));
	vc_json_free(&j);
}

static void writer_misuse(void)
{
	struct vc_json j;

	vc_json_init(&j); /* value where a key is due */
	vc_json_obj_begin(&j);
	vc_json_int(&j, 1);
	CHECK(vc_json_error(&j) == -EINVAL, "value without key");
	CHECK(!strcmp(vc_json_str_get(&j), ""), "no text after an error");
	vc_json_free(&j);

	vc_json_init(&j); /* key in an array */
	vc_json_arr_begin(&j);
	vc_json_key(&j, "k");
	CHECK(vc_json_error(&j) == -EINVAL, "key in array");
	vc_json_free(&j);

	vc_json_init(&j); /* mismatched end */
	vc_json_arr_begin(&j);
	vc_json_obj_end(&j);
	CHECK(vc_json_error(&j) == -EINVAL, "mismatched end");
	vc_json_free(&j);

	vc_json_init(&j); /* key without value then end */
	vc_json_obj_begin(&j);
	vc_json_key(&j, "k");
	vc_json_obj_end(&j);
	CHECK(vc_json_error(&j) == -EINVAL, "dangling key");
	vc_json_free(&j);

	vc_json_init(&j); /* two top-level values */
	vc_json_int(&j, 1);
	vc_json_int(&j, 2);
	CHECK(vc_json_error(&j) == -EINVAL, "two top-level values");
	vc_json_free(&j);

	vc_json_init(&j); /* incomplete document cannot be taken */
	vc_json_obj_begin(&j);
	CHECK(vc_json_take(&j, NULL) == NULL, "incomplete take");
	vc_json_free(&j);

	vc_json_init(&j); /* too deep */
	for (int i = 0; i < VC_JSON_MAX_DEPTH + 1; i++)
		vc_json_arr_begin(&j);
	CHECK(vc_json_error(&j) == -EINVAL, "too deep");
	vc_json_free(&j);

	vc_json_init(&j); /* exactly max depth is fine */
	for (int i = 0; i < VC_JSON_MAX_DEPTH; i++)
		vc_json_arr_begin(&j);
	for (int i = 0; i < VC_JSON_MAX_DEPTH; i++)
		vc_json_arr_end(&j);
	CHECK(!vc_json_error(&j) && vc_json_len(&j) == 2 * VC_JSON_MAX_DEPTH, "max depth");
	vc_json_free(&j);
}

/* Valid bodies and what they hold. */
static void parse_valid(void)
{
	struct vc_json_object o;
	struct vc_json_perr e;
	const struct vc_json_member *m;

	const char *s = " {\"brightness\": 128, \"contrast\":-5 ,\"gain\":1.5e1,"
			"\"auto\":true,\"hflip\":false,\"name\":\"a\\\"b\\u00e9\\ud83d\\udcf7\\n\","
			"\"nil\":null,\"big\":12345678901234567890,\"z\":0,\"neg0\":-0.0,"
			"\"nested\":{\"a\":[1,{\"b\":[]}]},\"arr\":[1,2,3],\"utf\":\"\xc3\xa9\"}\r\n";
	memset(&e, 0xff, sizeof(e));
	int rc = vc_json_parse_object(s, strlen(s), &o, &e);
	CHECK(rc == 0, "rc %d at %zu: %s", rc, e.pos, e.msg);
	if (rc)
		return;
	CHECK(o.n == 13, "n %zu", o.n);
	m = vc_json_object_get(&o, "brightness");
	CHECK(m && m->type == VC_JSON_NUMBER && m->is_int && m->i == 128 && m->num == 128, "bri");
	m = vc_json_object_get(&o, "contrast");
	CHECK(m && m->is_int && m->i == -5, "contrast");
	m = vc_json_object_get(&o, "gain");
	CHECK(m && !m->is_int && m->num == 15.0, "gain");
	m = vc_json_object_get(&o, "auto");
	CHECK(m && m->type == VC_JSON_BOOL && m->b == 1, "auto");
	m = vc_json_object_get(&o, "hflip");
	CHECK(m && m->type == VC_JSON_BOOL && m->b == 0, "hflip");
	m = vc_json_object_get(&o, "name");
	CHECK(m && m->type == VC_JSON_STRING &&
		      !strcmp(m->str, "a\"b\xc3\xa9\xf0\x9f\x93\xb7\n"),
	      "name %s", m ? m->str : "-");
	m = vc_json_object_get(&o, "nil");
	CHECK(m && m->type == VC_JSON_NULL, "nil");
	m = vc_json_object_get(&o, "big");
	CHECK(m && m->type == VC_JSON_NUMBER && !m->is_int && m->num > 1.2e19, "big");
	m = vc_json_object_get(&o, "nested");
	CHECK(m && m->type == VC_JSON_OBJECT && m->raw_len == strlen("{\"a\":[1,{\"b\":[]}]}") &&
		      !memcmp(s + m->raw_off, "{\"a\"", 4),
	      "nested raw");
	m = vc_json_object_get(&o, "arr");
	CHECK(m && m->type == VC_JSON_ARRAY && m->raw_len == 7, "arr");
	m = vc_json_object_get(&o, "utf");
	CHECK(m && !strcmp(m->str, "\xc3\xa9"), "utf");
	CHECK(vc_json_object_get(&o, "missing") == NULL, "missing");
	vc_json_object_free(&o);

	rc = vc_json_parse_object("{}", 2, &o, &e);
	CHECK(rc == 0 && o.n == 0, "empty object");
	vc_json_object_free(&o);
	rc = vc_json_parse_object("\t{ }\n", 5, &o, NULL);
	CHECK(rc == 0 && o.n == 0, "empty object ws, NULL err");
	vc_json_object_free(&o);
	/* not NUL-terminated: len bounds the parse */
	char buf[8] = { '{', '}', 'x', 'x', 'x', 'x', 'x', 'x' };
	rc = vc_json_parse_object(buf, 2, &o, &e);
	CHECK(rc == 0, "len bound");
	vc_json_object_free(&o);
}

/* Malformed bodies: rejected at the expected byte offset. */
static void parse_malformed(void)
{
	static const struct {
		int line;
		const char *in;
		size_t pos;
	} v[] = {
		{ __LINE__, "", 0 },
		{ __LINE__, "   ", 3 },
		{ __LINE__, "[]", 0 },
		{ __LINE__, "1", 0 },
		{ __LINE__, "\"a\"", 0 },
		{ __LINE__, "{", 1 },
		{ __LINE__, "{\"a\"", 4 },
		{ __LINE__, "{\"a\":", 5 },
		{ __LINE__, "{\"a\":1", 6 },
		{ __LINE__, "{\"a\":1,}", 7 },          /* trailing comma */
		{ __LINE__, "{,}", 1 },
		{ __LINE__, "{a:1}", 1 },               /* unquoted name */
		{ __LINE__, "{'a':1}", 1 },             /* single quotes */
		{ __LINE__, "{\"a\" 1}", 5 },
		{ __LINE__, "{\"a\":01}", 6 },          /* leading zero */
		{ __LINE__, "{\"a\":+1}", 5 },
		{ __LINE__, "{\"a\":.5}", 5 },
		{ __LINE__, "{\"a\":1.}", 7 },
		{ __LINE__, "{\"a\":1e}", 7 },
		{ __LINE__, "{\"a\":-}", 6 },
		{ __LINE__, "{\"a\":NaN}", 5 },
		{ __LINE__, "{\"a\":1e999}", 5 },       /* overflows a double */
		{ __LINE__, "{\"a\":tru}", 5 },
		{ __LINE__, "{\"a\":True}", 5 },
		{ __LINE__, "{\"a\":nul}", 5 },
		{ __LINE__, "{\"a\":1 2}", 7 },
		{ __LINE__, "{\"a\":1}x", 7 },          /* trailing garbage */
		{ __LINE__, "{\"a\":1}{}", 7 },
		{ __LINE__, "{\"a\":\"x}", 8 },         /* unterminated */
		{ __LINE__, "{\"a\":\"x\ny\"}", 7 },    /* raw control char */
		{ __LINE__, "{\"a\":\"\\x\"}", 7 },     /* bad escape */
		{ __LINE__, "{\"a\":\"\\u12\"}", 10 },
		{ __LINE__, "{\"a\":\"\\u0000\"}", 6 },
		{ __LINE__, "{\"a\":\"\\udc00\"}", 6 }, /* lone low surrogate */
		{ __LINE__, "{\"a\":\"\\ud800\"}", 6 }, /* lone high surrogate */
		{ __LINE__, "{\"a\":\"\\ud800\\u0041\"}", 6 },
		{ __LINE__, "{\"a\":\"\xff\"}", 6 },    /* invalid UTF-8 */
		{ __LINE__, "{\"a\":\"\xc3\"}", 6 },
		{ __LINE__, "{\"a\":\"\xed\xa0\x80\"}", 6 }, /* encoded surrogate */
		{ __LINE__, "{\"a\":1,\"a\":2}", 7 },   /* duplicate */
		{ __LINE__, "{\"a\":[1,]}", 8 },
		{ __LINE__, "{\"a\":[1 2]}", 8 },
		{ __LINE__, "{\"a\":{\"b\"}}", 9 },
		{ __LINE__, "{\"a\":{\"b\":1,}}", 12 },
		{ __LINE__, "{\"a\":1}/*c*/", 7 },
		{ __LINE__, "/*c*/{}", 0 },
		{ __LINE__, "{\"a\":[[[[[[[[[1]]]]]]]]]}", 12 }, /* nested too deep */
		{ __LINE__, "{\"a\":\"\\", 7 },
		{ __LINE__, "{\"\\u0000\":1}", 2 },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_json_object o;
		struct vc_json_perr e;
		memset(&o, 0xff, sizeof(o));
		memset(&e, 0xff, sizeof(e));
		/* exact-size heap copy so ASan catches over-reads */
		size_t n = strlen(v[i].in);
		char *copy = malloc(n ? n : 1);
		memcpy(copy, v[i].in, n);
		int rc = vc_json_parse_object(copy, n, &o, &e);
		CHECK_AT(v[i].line, rc == -EINVAL && e.pos == v[i].pos && e.msg[0] && o.n == 0 &&
					    o.m == NULL,
			 "rc %d pos %zu (want %zu) msg '%s'", rc, e.pos, v[i].pos,
			 rc ? e.msg : "");
		if (rc == 0)
			vc_json_object_free(&o);
		free(copy);
	}
}

static void parse_limits(void)
{
	struct vc_json_object o;
	struct vc_json_perr e;
	struct vc_json j;
	int rc;

	/* exactly the member limit passes, one more fails */
	for (int extra = 0; extra < 2; extra++) {
		vc_json_init(&j);
		vc_json_obj_begin(&j);
		for (int i = 0; i < VC_JSON_MAX_MEMBERS + extra; i++) {
			char k[16];
			snprintf(k, sizeof(k), "k%d", i);
			vc_json_kint(&j, k, i);
		}
		vc_json_obj_end(&j);
		rc = vc_json_parse_object(vc_json_str_get(&j), vc_json_len(&j), &o, &e);
		CHECK(extra ? rc == -EINVAL : rc == 0 && o.n == VC_JSON_MAX_MEMBERS,
		      "members +%d: rc %d %s", extra, rc, e.msg);
		if (!rc) {
			CHECK(vc_json_object_get(&o, "k255")->i == 255, "k255");
			vc_json_object_free(&o);
		}
		vc_json_free(&j);
	}
	/* name and string length limits */
	char *big = malloc(VC_JSON_MAX_STRING + 64);
	for (int extra = 0; extra < 2; extra++) {
		size_t n = 0;
		big[n++] = '{', big[n++] = '"';
		for (int i = 0; i < VC_JSON_MAX_NAME + extra; i++)
			big[n++] = 'n';
		memcpy(big + n, "\":1}", 4);
		n += 4;
		rc = vc_json_parse_object(big, n, &o, &e);
		CHECK(extra ? rc == -EINVAL && strstr(e.msg, "name") : rc == 0, "name +%d rc %d",
		      extra, rc);
		vc_json_object_free(&o);

		n = 0;
		memcpy(big, "{\"s\":\"", 6);
		n = 6;
		for (int i = 0; i < VC_JSON_MAX_STRING + extra; i++)
			big[n++] = 's';
		memcpy(big + n, "\"}", 2);
		n += 2;
		rc = vc_json_parse_object(big, n, &o, &e);
		CHECK(extra ? rc == -EINVAL : rc == 0 && strlen(o.m[0].str) == VC_JSON_MAX_STRING,
		      "string +%d rc %d", extra, rc);
		vc_json_object_free(&o);
	}
	free(big);
	/* input size limit */
	size_t n = VC_JSON_MAX_INPUT + 1;
	char *huge = malloc(n);
	memset(huge, ' ', n);
	huge[0] = '{', huge[1] = '}';
	rc = vc_json_parse_object(huge, n, &o, &e);
	CHECK(rc == -EINVAL && strstr(e.msg, "larger"), "input limit rc %d", rc);
	rc = vc_json_parse_object(huge, n - 1, &o, &e);
	CHECK(rc == 0, "input at limit rc %d", rc);
	vc_json_object_free(&o);
	free(huge);
	/* deep nesting within the limit */
	const char *ok = "{\"a\":[[[[[[[1]]]]]]]}";
	rc = vc_json_parse_object(ok, strlen(ok), &o, &e);
	CHECK(rc == 0, "depth 8 ok: %s", e.msg);
	vc_json_object_free(&o);
}

/* Every byte value in a string through the writer then the parser. */
static void round_trip(void)
{
	char s[256];
	for (int i = 1; i < 256; i++)
		s[i - 1] = (char)i;
	s[255] = 0;
	struct vc_json j;
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_json_kstr(&j, "k\x01\"", s);
	vc_json_kstr(&j, "ok", "caf\xc3\xa9 \xf0\x9f\x93\xb7");
	vc_json_obj_end(&j);
	struct vc_json_object o;
	struct vc_json_perr e;
	int rc = vc_json_parse_object(vc_json_str_get(&j), vc_json_len(&j), &o, &e);
	CHECK(rc == 0, "rc %d: %s", rc, e.msg);
	if (!rc) {
		const struct vc_json_member *m = vc_json_object_get(&o, "k\x01\"");
		/* ASCII 1..127 come back unchanged; each byte >= 0x80 (invalid
		 * alone) came back as U+FFFD (3 bytes) */
		CHECK(m && strlen(m->str) == 127 + 128 * 3 && !memcmp(m->str, s, 127), "ascii");
		m = vc_json_object_get(&o, "ok");
		CHECK(m && !strcmp(m->str, "caf\xc3\xa9 \xf0\x9f\x93\xb7"), "utf8 kept");
		vc_json_object_free(&o);
	}
	vc_json_free(&j);
}

/* Pseudo-random mutations of a valid body: never crash, never leak, every
 * failure has a position inside the input. (A longer loop is in the notes.) */
static void mutations(void)
{
	const char *base = "{\"brightness\":128,\"name\":\"a\\u00e9\",\"x\":[1,{\"y\":null}],"
			   "\"f\":-1.5e3,\"b\":true}";
	size_t n = strlen(base);
	char *buf = malloc(n);
	unsigned seed = 12345;
	int ok = 0, bad = 0, pos_bad = 0;
	for (int it = 0; it < 20000; it++) {
		memcpy(buf, base, n);
		int k = 1 + it % 3;
		for (int m = 0; m < k; m++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % n;
			seed = seed * 1103515245u + 12345u;
			buf[at] = (char)(seed >> 16);
		}
		size_t len = n - (it % 7 == 0 ? (seed >> 4) % n : 0);
		struct vc_json_object o;
		struct vc_json_perr e;
		int rc = vc_json_parse_object(buf, len, &o, &e);
		if (rc == 0) {
			ok++;
			vc_json_object_free(&o);
		} else {
			bad++;
			if (rc != -EINVAL || e.pos > len)
				pos_bad++;
		}
	}
	free(buf);
	CHECK(pos_bad == 0 && ok > 0 && bad > 0, "ok %d bad %d pos_bad %d", ok, bad, pos_bad);
}

/* Fixed decimals are printf's "%.*f" to the byte (the API's rates and
 * durations), and a document may end with one newline. */
static void writer_fixed(void)
{
	static const struct {
		int line;
		double v;
		int dec;
		const char *want;
	} v[] = {
		{ __LINE__, 29.97, 2, "29.97" },
		{ __LINE__, 29.975, 2, "29.98" }, /* 29.975 is 29.97500000000000142... */
		{ __LINE__, 0, 3, "0.000" },
		{ __LINE__, 0.456, 3, "0.456" },
		{ __LINE__, 1.25, 1, "1.2" },    /* exactly halfway: to even, as printf */
		{ __LINE__, -3.5, 0, "-4" },
		{ __LINE__, 60.317, 3, "60.317" },
		{ __LINE__, 1e300, 9, NULL },    /* 301 digits + 9: fits, matches printf */
		{ __LINE__, NAN, 2, "null" },
		{ __LINE__, -INFINITY, 2, "null" },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_json j;
		char want[400];
		snprintf(want, sizeof(want), "%.*f", v[i].dec, v[i].v);
		vc_json_init(&j);
		vc_json_fixed(&j, v[i].v, v[i].dec);
		const char *w = v[i].want ? v[i].want : want;
		CHECK_AT(v[i].line, !vc_json_error(&j) && !strcmp(vc_json_str_get(&j), w),
			 "got %s want %s", vc_json_str_get(&j), w);
		vc_json_free(&j);
	}

	struct vc_json j;
	vc_json_init(&j);
	vc_json_obj_begin(&j);
	vc_json_kfixed(&j, "fps", 14.8249, 2);
	vc_json_kfixed(&j, "ms", 0.0004, 3);
	vc_json_obj_end(&j);
	vc_json_newline(&j);
	size_t len = 0;
	char *t = vc_json_take(&j, &len);
	CHECK(t && !strcmp(t, "{\"fps\":14.82,\"ms\":0.000}\n") && len == strlen(t), "got %s",
	      t ? t : "(null)");
	free(t);

	vc_json_init(&j); /* decimals out of range */
	vc_json_fixed(&j, 1, 10);
	CHECK(vc_json_error(&j) == -EINVAL, "decimals 10");
	vc_json_free(&j);
	vc_json_init(&j); /* newline inside a document, on nothing, twice */
	vc_json_arr_begin(&j);
	vc_json_newline(&j);
	CHECK(vc_json_error(&j) == -EINVAL, "newline inside");
	vc_json_free(&j);
	vc_json_init(&j);
	vc_json_newline(&j);
	CHECK(vc_json_error(&j) == -EINVAL, "newline on nothing");
	vc_json_free(&j);
	vc_json_init(&j);
	vc_json_null(&j);
	vc_json_newline(&j);
	CHECK(!vc_json_error(&j) && !strcmp(vc_json_str_get(&j), "null\n"), "after null");
	vc_json_newline(&j);
	CHECK(vc_json_error(&j) == -EINVAL, "second newline");
	vc_json_free(&j);
	vc_json_init(&j); /* nothing after the newline */
	vc_json_null(&j);
	vc_json_newline(&j);
	vc_json_int(&j, 1);
	CHECK(vc_json_error(&j) == -EINVAL, "value after newline");
	vc_json_free(&j);
}

int main(void)
{
	RUN("json", writer_strings);
	RUN("json", writer_numbers);
	RUN("json", writer_nesting);
	RUN("json", writer_misuse);
	RUN("json", writer_fixed);
	RUN("json", parse_valid);
	RUN("json", parse_malformed);
	RUN("json", parse_limits);
	RUN("json", round_trip);
	RUN("json", mutations);
	CHECK_EXIT();
}
