/* Auth: Basic against real crypt(3) hashes (sha512-crypt and yescrypt made
 * here), signed URL tokens (expiry, scope, tampering, wrong key), policies
 * per class, base64 vectors (RFC 4648 section 10), and the class every
 * route of the daemon's table gives its requests. */
#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "common/conf.h"
#include "server/http/auth.h"
#include "server/http/auth_http.h"
#include "server/http/http.h"
#include "server/routes.h"

static char h6[CRYPT_OUTPUT_SIZE], hy[CRYPT_OUTPUT_SIZE];

static void make_hash(const char *prefix, const char *pw, char *out)
{
	struct crypt_data cd;
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	memset(&cd, 0, sizeof(cd));
	out[0] = '\0';
	if (!crypt_gensalt_rn(prefix, 0, NULL, 0, salt, sizeof(salt)))
		return;
	const char *h = crypt_r(pw, salt, &cd);
	if (h && h[0] == '$')
		snprintf(out, CRYPT_OUTPUT_SIZE, "%s", h);
}

static struct vc_auth *mk(int line, const char *extra)
{
	char text[2048], err[1024];
	struct vc_conf *c = NULL;
	struct vc_auth *a = NULL;
	snprintf(text, sizeof(text), "[server]\nuser = alice:%s\nuser = bob:%s\n"
		 "token_secret = 0123456789abcdef-secret\n%s", h6, hy, extra);
	int r = vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err));
	CHECK_AT(line, r == 0, "conf: %s", err);
	if (r)
		return NULL;
	r = vc_auth_new(c, &a);
	CHECK_AT(line, r == 0, "auth_new %d", r);
	vc_conf_free(c);
	return a;
}

static const char *basic(const char *userpass, char *buf)
{
	strcpy(buf, "Basic ");
	vc_auth_b64url_encode(userpass, strlen(userpass), buf + 6, 200);
	/* Basic uses the standard alphabet with padding; the decoder takes both. */
	return buf;
}

static void b64(void)
{
	static const struct { const char *in, *out; } v[] = {
		{ "", "" }, { "f", "Zg" }, { "fo", "Zm8" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg" },
		{ "fooba", "Zm9vYmE" }, { "foobar", "Zm9vYmFy" }, { "\xfb\xff", "-_8" },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char enc[64], dec[64 + CANARY_LEN];
		int n = vc_auth_b64url_encode(v[i].in, strlen(v[i].in), enc, sizeof(enc));
		CHECK(n == (int)strlen(v[i].out) && strcmp(enc, v[i].out) == 0, "enc %s -> %s", v[i].in, enc);
		memset(dec, CANARY_BYTE, sizeof(dec));
		n = vc_auth_b64_decode(v[i].out, strlen(v[i].out), dec, strlen(v[i].in));
		CHECK(n == (int)strlen(v[i].in) && memcmp(dec, v[i].in, (size_t)n) == 0 &&
		      canary_intact((unsigned char *)dec, strlen(v[i].in)), "dec %s", v[i].out);
	}
	char d[16];
	CHECK(vc_auth_b64_decode("Zg==", 4, d, sizeof(d)) == 1 && d[0] == 'f', "padding");
	CHECK(vc_auth_b64_decode("+/8=", 4, d, sizeof(d)) == 2, "std alphabet");
	CHECK(vc_auth_b64_decode("Zh", 2, d, sizeof(d)) == -EINVAL, "non-canonical bits");
	CHECK(vc_auth_b64_decode("Z", 1, d, sizeof(d)) == -EINVAL, "1 char");
	CHECK(vc_auth_b64_decode("Zm9v!", 5, d, sizeof(d)) == -EINVAL, "bad char");
	CHECK(vc_auth_b64_decode("Zm9vYmFy", 8, d, 5) == -ENOSPC, "overflow");
	char small[4];
	CHECK(vc_auth_b64url_encode("foobar", 6, small, sizeof(small)) == -ENOSPC, "enc overflow");
	CHECK(vc_auth_mem_equal("abc", "abc", 3) && !vc_auth_mem_equal("abc", "abd", 3) &&
	      vc_auth_mem_equal("", "x", 0), "mem_equal");
}

static void basic_auth(void)
{
	struct vc_auth *a = mk(__LINE__, "auth_view = basic\nauth_control = basic\n");
	char buf[256];
	const char *who = NULL;
	if (!a)
		return;
	CHECK(vc_auth_policy(a, VC_CLASS_VIEW) == VC_AUTH_BASIC && vc_auth_policy(a, VC_CLASS_STATUS) == 0, "policy");
	CHECK(vc_auth_check(a, VC_CLASS_STATUS, NULL, NULL, 1000, &who) == 0 && strcmp(who, "") == 0, "open class");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, NULL, 1000, NULL) == -EACCES, "no header");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:pw-alice", buf), NULL, 1000, &who) == 0 &&
	      strcmp(who, "alice") == 0, "alice sha512-crypt");
	CHECK(vc_auth_check(a, VC_CLASS_CONTROL, basic("bob:pw bob:x", buf), NULL, 1000, &who) == 0 &&
	      strcmp(who, "bob") == 0, "bob yescrypt, ':' in password");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:pw-alicf", buf), NULL, 1000, NULL) == -EACCES, "wrong pw");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:", buf), NULL, 1000, NULL) == -EACCES, "empty pw");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("bob:pw-alice", buf), NULL, 1000, NULL) == -EACCES, "other's pw");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("carol:pw-alice", buf), NULL, 1000, NULL) == -EACCES, "unknown user");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alicepw-alice", buf), NULL, 1000, NULL) == -EACCES, "no colon");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, "Bearer abc", NULL, 1000, NULL) == -EACCES, "bearer");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, "Basic !!!", NULL, 1000, NULL) == -EACCES, "garbage");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, "basic YWxpY2U6cHctYWxpY2U=", NULL, 1000, &who) == 0 &&
	      strcmp(who, "alice") == 0, "scheme case, std base64 with padding");
	/* Cache: the same header again is accepted (from the cache) until it
	 * expires; a wrong one after a right one is still refused. */
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:pw-alice", buf), NULL, 1001, NULL) == 0, "cached");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:pw-alicex", buf), NULL, 1001, NULL) == -EACCES,
	      "wrong after right");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:pw-alice", buf), NULL, 5000, NULL) == 0,
	      "after cache expiry, checked again");
	/* Tokens are not accepted where the policy is basic only. */
	char tok[128];
	CHECK(vc_auth_token_make(a, "view", 2000, tok, sizeof(tok)) == 0, "mint");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, tok, 1000, NULL) == -EACCES, "token refused by basic policy");
	CHECK(strcmp(vc_auth_realm(a), "vcapd") == 0, "realm default");
	vc_auth_free(a);
}

/* The stepped check the gate uses: begin answers cached decisions, the hash
 * runs apart, end caches its result; a failed header is answered again
 * without a hash; a reload between begin and end is noticed. */
static void steps(void)
{
	struct vc_auth *a = mk(__LINE__, "auth_view = basic\n");
	struct vc_auth *a2 = mk(__LINE__, "auth_view = basic\n");
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	struct vc_auth_pending *p = NULL;
	char buf[256];
	const char *who = NULL;
	if (!a || !a2 || !cd)
		goto out;
	CHECK(vc_auth_policy(a, VC_CLASS_CONTROL) == VC_AUTH_BASIC,
	      "unset auth_control takes auth_view's policy");
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("alice:pw-alice", buf), NULL, 100, &who, &p) ==
	      -EINPROGRESS && p, "right password: needs a hash");
	CHECK(vc_auth_end(a, p, 100, &who) == -EAGAIN, "end before run");
	vc_auth_pending_run(p, cd);
	CHECK(vc_auth_end(a, p, 100, &who) == 0 && strcmp(who, "alice") == 0, "end: allowed");
	vc_auth_pending_free(p);
	p = NULL;
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("alice:pw-alice", buf), NULL, 101, &who, &p) == 0 &&
	      !p && strcmp(who, "alice") == 0, "then cached");
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("alice:nope", buf), NULL, 100, NULL, &p) ==
	      -EINPROGRESS && p, "wrong password: needs a hash");
	vc_auth_pending_run(p, cd);
	CHECK(vc_auth_end(a, p, 100, NULL) == -EACCES, "end: refused");
	vc_auth_pending_free(p);
	p = NULL;
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("alice:nope", buf), NULL, 130, NULL, &p) == -EACCES &&
	      !p, "same wrong header again: refused without a hash");
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("alice:nope", buf), NULL, 161, NULL, &p) ==
	      -EINPROGRESS, "failure forgotten after a minute");
	vc_auth_pending_free(p);
	p = NULL;
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("carol:x", buf), NULL, 100, NULL, &p) == -EINPROGRESS,
	      "unknown user costs a hash too");
	vc_auth_pending_run(p, cd);
	CHECK(vc_auth_end(a, p, 100, NULL) == -EACCES, "unknown user refused");
	vc_auth_pending_free(p);
	p = NULL;
	/* Reload: the same users (same hashes) keep the answer valid... */
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("bob:pw bob:x", buf), NULL, 100, NULL, &p) == -EINPROGRESS, "bob");
	vc_auth_pending_run(p, cd);
	CHECK(vc_auth_end(a2, p, 100, &who) == 0 && strcmp(who, "bob") == 0, "end on a reloaded equal config");
	vc_auth_pending_free(p);
	p = NULL;
	vc_auth_free(a2);
	/* ...a changed hash makes it stale. */
	char text[1024], err[256];
	struct vc_conf *c = NULL;
	snprintf(text, sizeof(text), "[server]\nuser = alice:%s\nuser = bob:%s\nauth_view = basic\n", hy, h6);
	a2 = NULL;
	if (vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == 0)
		vc_auth_new(c, &a2);
	vc_conf_free(c);
	CHECK(a2 != NULL, "second config");
	CHECK(vc_auth_begin(a, VC_CLASS_VIEW, basic("bob:pw bob:x", buf), NULL, 500, NULL, &p) == -EINPROGRESS, "bob 2");
	vc_auth_pending_run(p, cd);
	CHECK(a2 && vc_auth_end(a2, p, 500, NULL) == -ESTALE, "end after the hash changed: stale");
	vc_auth_pending_free(p);
	p = NULL;
	CHECK(vc_auth_begin(a, VC_CLASS_STATUS, "Basic garbage!", NULL, 100, &who, &p) == 0 && !p &&
	      strcmp(who, "") == 0, "open class passes whatever is sent");
out:
	free(cd);
	vc_auth_free(a);
	vc_auth_free(a2);
}

static void tokens(void)
{
	struct vc_auth *a = mk(__LINE__, "auth_view = basic,token\nauth_status = token\nauth_control = basic\n"
				   "realm = cams\n");
	char tok[128], buf[256];
	const char *who;
	if (!a)
		return;
	CHECK(strcmp(vc_auth_realm(a), "cams") == 0, "realm");
	CHECK(vc_auth_token_make(a, "view", 2000, tok, sizeof(tok)) == 0, "mint");
	CHECK(strlen(tok) < 100 && !strpbrk(tok, "+/=&?# "), "url-safe: %s", tok);
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, tok, 1999, &who) == 0 && strcmp(who, "token") == 0, "valid");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, tok, 2000, NULL) == -EACCES, "expired at expiry");
	CHECK(vc_auth_check(a, VC_CLASS_STATUS, NULL, tok, 1000, NULL) == -EACCES, "wrong scope");
	CHECK(vc_auth_check(a, VC_CLASS_CONTROL, NULL, tok, 1000, NULL) == -EACCES, "control needs basic");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, basic("alice:pw-alice", buf), NULL, 1000, NULL) == 0, "basic also");
	CHECK(vc_auth_token_make(a, "view,status", 2000, tok, sizeof(tok)) == 0 &&
	      vc_auth_check(a, VC_CLASS_VIEW, NULL, tok, 1000, NULL) == 0 &&
	      vc_auth_check(a, VC_CLASS_STATUS, NULL, tok, 1000, NULL) == 0, "two scopes");
	/* Tampering: each character of the token changed in turn. */
	int accepted = 0;
	for (size_t i = 0; i < strlen(tok); i++) {
		char t2[128];
		strcpy(t2, tok);
		t2[i] = t2[i] == 'A' ? 'B' : 'A';
		if (vc_auth_check(a, VC_CLASS_VIEW, NULL, t2, 1000, NULL) == 0)
			accepted++;
	}
	CHECK(accepted == 0, "%d tampered tokens accepted", accepted);
	/* A forged payload with a later expiry but the old MAC. */
	char forged[128], pay[64];
	const char *dot = strchr(tok, '.');
	int pl = vc_auth_b64url_encode("9999999999.view,status", 22, pay, sizeof(pay));
	snprintf(forged, sizeof(forged), "%.*s%s", pl, pay, dot);
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, forged, 1000, NULL) == -EACCES, "forged expiry");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, "", 1000, NULL) == -EACCES, "empty");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, ".", 1000, NULL) == -EACCES, "dot");
	CHECK(vc_auth_check(a, VC_CLASS_VIEW, NULL, tok + 1, 1000, NULL) == -EACCES, "truncated");
	/* Another key refuses it. */
	char text[256], err[256];
	struct vc_conf *c = NULL;
	struct vc_auth *b = NULL;
	snprintf(text, sizeof(text), "[server]\ntoken_secret = another-secret-0123456789\nauth_view = token\n");
	if (vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == 0 && vc_auth_new(c, &b) == 0) {
		CHECK(vc_auth_check(b, VC_CLASS_VIEW, NULL, tok, 1000, NULL) == -EACCES, "other key");
		char t3[128];
		CHECK(vc_auth_token_make(b, "view", 2000, t3, sizeof(t3)) == 0 &&
		      vc_auth_check(b, VC_CLASS_VIEW, NULL, t3, 1000, NULL) == 0 &&
		      vc_auth_check(a, VC_CLASS_VIEW, NULL, t3, 1000, NULL) == -EACCES, "each key its own");
	} else {
		CHECK(0, "second config: %s", err);
	}
	vc_auth_free(b);
	vc_conf_free(c);
	CHECK(vc_auth_token_make(a, "admin", 2000, tok, sizeof(tok)) == -EINVAL, "bad scope");
	CHECK(vc_auth_token_make(a, "view,", 2000, tok, sizeof(tok)) == -EINVAL, "trailing comma");
	CHECK(vc_auth_token_make(a, "", 2000, tok, sizeof(tok)) == -EINVAL, "empty scope");
	CHECK(vc_auth_token_make(a, "view", 2000, tok, 20) == -ENOSPC, "small buffer");
	vc_auth_free(a);
}

static void setup_errors(void)
{
	char text[256], err[256];
	struct vc_conf *c = NULL;
	struct vc_auth *a = NULL;
	/* A hash libcrypt does not know is refused when auth starts. */
	snprintf(text, sizeof(text), "[server]\nuser = eve:$99$abc$def\nauth_view = basic\n");
	if (vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == 0) {
		CHECK(vc_auth_new(c, &a) == -EINVAL, "unknown hash method");
		vc_conf_free(c);
	} else {
		CHECK(0, "conf: %s", err);
	}
	/* No secret: tokens cannot be minted. */
	snprintf(text, sizeof(text), "[server]\n");
	c = NULL;
	if (vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == 0 && vc_auth_new(c, &a) == 0) {
		char tok[128];
		CHECK(vc_auth_token_make(a, "view", 2000, tok, sizeof(tok)) == -ENOKEY, "no secret");
		CHECK(vc_auth_check(a, VC_CLASS_CONTROL, NULL, NULL, 0, NULL) == 0, "default open");
		vc_auth_free(a);
	}
	vc_conf_free(c);
}

/* Requests are classified by the route row the router resolves them to
 * (http.c), never by their path. */
#define NO_ROW (-100)    /* no row for the path: 404 before the gate */
#define NO_METHOD (-101) /* rows for the path, none for the method: 405 */

static int has_arg(void *ctx, const char *name)
{
	return ctx && strcmp(ctx, name) == 0;
}

/* The auth class a request gets (-1 public), or NO_ROW / NO_METHOD; *row:
 * the row's index. */
static int class_of(const struct vc_http *h, const char *m, const char *url, const char *arg,
		    int *row)
{
	struct vc_http_route_info ri;
	int i = vc_http_lookup(h, m, url, has_arg, (void *)arg);

	*row = i;
	if (i == -ENOENT)
		return NO_ROW;
	if (i < 0)
		return NO_METHOD;
	if (vc_http_route_at(h, (size_t)i, &ri) < 0)
		return -99;
	return vc_auth_class_of(ri.cls);
}

static struct vc_http *daemon_table(void)
{
	static const size_t no_cams;
	struct vc_http *h = NULL;

	if (vc_http_new(NULL, NULL, &h) < 0)
		return NULL;
	if (vc_routes_add(h, NULL, NULL, NULL, &no_cams, NULL) < 0) {
		vc_http_free(h);
		return NULL;
	}
	return h;
}

/* Today's URLs by hand, with the class the README documents; every row of
 * the daemon's table must be hit by one of them, so a new route needs its
 * class written down here too. arg: the query argument present. */
static void classify(void)
{
	static const struct { int line; const char *m, *url, *arg; int cls; } v[] = {
		{ __LINE__, "GET", "/stream", NULL, VC_CLASS_VIEW },
		{ __LINE__, "HEAD", "/stream", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/snapshot", NULL, VC_CLASS_VIEW },
		{ __LINE__, "HEAD", "/snapshot", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/raw", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/raw/stream", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/stream.h264", NULL, VC_CLASS_VIEW },
		{ __LINE__, "HEAD", "/stream.h264", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/stream.mp4", NULL, VC_CLASS_VIEW },
		{ __LINE__, "HEAD", "/stream.mp4", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/stream.m3u8", NULL, VC_CLASS_VIEW },
		{ __LINE__, "HEAD", "/stream.m3u8", NULL, VC_CLASS_VIEW },
		{ __LINE__, "GET", "/stream.m4s", "seg=1", VC_CLASS_VIEW },
		{ __LINE__, "GET", "/STREAM.M3U8", NULL, -1 },
		{ __LINE__, "GET", "/", "action", VC_CLASS_VIEW }, /* /?action=stream, snapshot_1 */
		{ __LINE__, "HEAD", "/", "action", VC_CLASS_VIEW },
		{ __LINE__, "GET", "/api/cams", NULL, VC_CLASS_STATUS },
		{ __LINE__, "GET", "/api/cams/0", NULL, VC_CLASS_STATUS },
		{ __LINE__, "GET", "/api/cams/0/controls", NULL, VC_CLASS_STATUS },
		{ __LINE__, "PUT", "/api/cams/0/controls", NULL, VC_CLASS_CONTROL },
		{ __LINE__, "GET", "/api/try", NULL, VC_CLASS_STATUS },
		{ __LINE__, "GET", "/api/status", NULL, VC_CLASS_STATUS },
		{ __LINE__, "GET", "/metrics", NULL, VC_CLASS_STATUS },
		{ __LINE__, "GET", "/state", NULL, VC_CLASS_STATUS },
		/* the web page: open; what names no file answers 404 there */
		{ __LINE__, "GET", "/", NULL, -1 },
		{ __LINE__, "GET", "/index.html", NULL, -1 },
		{ __LINE__, "GET", "/app.js", NULL, -1 },
		{ __LINE__, "GET", "/streamer.html", NULL, -1 },
		{ __LINE__, "GET", "/apix", NULL, -1 },
		{ __LINE__, "GET", "/index.html", "action", -1 },
		/* variants reach the same row or a row that serves no picture:
		 * case, doubled and trailing slashes fall to the page's files
		 * (404); MHD decodes %XX before the router sees the path */
		{ __LINE__, "GET", "/STREAM.MP4", NULL, -1 },
		{ __LINE__, "GET", "//stream.mp4", NULL, -1 },
		{ __LINE__, "GET", "/stream.mp4/", NULL, -1 },
		{ __LINE__, "GET", "/Stream.h264", NULL, -1 },
		{ __LINE__, "GET", "stream.mp4", NULL, NO_ROW },
		{ __LINE__, "GET", "http://h/stream.mp4", NULL, NO_ROW },
		{ __LINE__, "GET", "*", NULL, NO_ROW },
		{ __LINE__, "GET", "", NULL, NO_ROW },
		/* writes go only where a control row is: elsewhere 405 before
		 * auth (they used to be classed control and then 404/405) */
		{ __LINE__, "POST", "/stream", NULL, NO_METHOD },
		{ __LINE__, "PUT", "/stream.mp4", NULL, NO_METHOD },
		{ __LINE__, "POST", "/", "action", NO_METHOD },
		{ __LINE__, "PUT", "/api/status", NULL, NO_METHOD },
		{ __LINE__, "DELETE", "/api/cams/0/controls", NULL, NO_METHOD },
		{ __LINE__, "PUT", "/app.js", NULL, NO_METHOD },
	};
	struct vc_http *h = daemon_table();
	struct vc_http_route_info ri;
	unsigned char hit[256] = { 0 };
	size_t n = 0;

	CHECK(h != NULL, "the daemon's route table builds");
	if (!h)
		return;
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		int row, cls = class_of(h, v[i].m, v[i].url, v[i].arg, &row);

		CHECK_AT(v[i].line, cls == v[i].cls, "%s %s%s%s: class %d, want %d", v[i].m, v[i].url,
			 v[i].arg ? " ?" : "", v[i].arg ? v[i].arg : "", cls, v[i].cls);
		if (row >= 0 && (size_t)row < sizeof(hit))
			hit[row] = 1;
	}
	while (vc_http_route_at(h, n, &ri) == 0)
		n++;
	CHECK(n > 0 && n < sizeof(hit), "%zu rows", n);
	for (size_t i = 0; i < n && i < sizeof(hit); i++) {
		vc_http_route_at(h, i, &ri);
		CHECK(hit[i], "row %s %s%s (%s) has no entry in this table: write its class down",
		      ri.method, ri.path, ri.prefix ? "*" : "", vc_http_class_name(ri.cls));
	}
	vc_http_free(h);
}

/* Generated from the daemon's rows: each has a valid class, writes are
 * control, each is reached by its own URL (none shadowed) and by HEAD as by
 * GET, and upper-casing its path never reaches a protected row. */
static void every_route(void)
{
	struct vc_http *h = daemon_table();
	struct vc_http_route_info ri;
	size_t n = 0;

	CHECK(h != NULL, "the daemon's route table builds");
	if (!h)
		return;
	for (size_t i = 0; vc_http_route_at(h, i, &ri) == 0; i++, n++) {
		char url[256], up[256];
		int row, cls;

		snprintf(url, sizeof(url), "%s%s", ri.path, ri.prefix ? "0" : "");
		cls = class_of(h, ri.method, url, ri.arg, &row);
		CHECK(row == (int)i, "%s %s reaches row %d, not its own %zu", ri.method, url, row, i);
		CHECK(cls >= -1 && cls < VC_CLASS_COUNT, "%s %s: class %d", ri.method, url, cls);
		CHECK(strcmp(ri.method, "GET") == 0 || cls == VC_CLASS_CONTROL,
		      "%s %s is a write of class %s", ri.method, url, vc_http_class_name(ri.cls));
		if (strcmp(ri.method, "GET") == 0) {
			int hrow;

			CHECK(class_of(h, "HEAD", url, ri.arg, &hrow) == cls && hrow == row,
			      "HEAD %s: row %d, GET row %d", url, hrow, row);
		}
		for (size_t k = 0; k < sizeof(up); k++) {
			up[k] = (char)toupper((unsigned char)url[k]);
			if (!url[k])
				break;
		}
		int ucls = class_of(h, ri.method, up, ri.arg, &row);
		CHECK(strcmp(up, url) == 0 || ucls == -1 || ucls == NO_ROW || ucls == NO_METHOD,
		      "%s %s (upper case) reaches class %d", ri.method, up, ucls);
	}
	CHECK(n >= 14, "only %zu rows", n);
	vc_http_free(h);
}

static enum MHD_Result no_handler(void *opaque, struct vc_http_req *r)
{
	(void)opaque;
	(void)r;
	return MHD_NO;
}

/* Deny by default: a row without a valid class, or a write not classed
 * control, is refused, and so is the table holding it (the daemon then
 * does not start: main.c setup_routes). */
static void route_needs_class(void)
{
	static const struct vc_http_route_def bad_table[] = {
		{ "GET", "/ok", 0, VC_HTTP_VIEW, no_handler },
		{ .method = "GET", .path = "/noclass", .fn = no_handler },
	};
	struct vc_http *h = NULL;
	struct vc_http_route_info ri;

	CHECK(vc_http_new(NULL, NULL, &h) == 0, "new");
	if (!h)
		return;
	CHECK(vc_http_route(h, "GET", "/a", 0, VC_HTTP_CLASS_UNSET, no_handler, NULL) == -EINVAL, "unset");
	CHECK(vc_http_route(h, "GET", "/a", 0, (enum vc_http_class)99, no_handler, NULL) == -EINVAL, "99");
	CHECK(vc_http_route(h, "GET", "/a", 0, VC_HTTP_CLASS_COUNT, no_handler, NULL) == -EINVAL, "count");
	CHECK(vc_http_route(h, "PUT", "/a", 0, VC_HTTP_VIEW, no_handler, NULL) == -EINVAL, "PUT view");
	CHECK(vc_http_route(h, "POST", "/a", 0, VC_HTTP_PUBLIC, no_handler, NULL) == -EINVAL, "POST public");
	CHECK(vc_http_route(h, "GET", "/a", 0, VC_HTTP_VIEW, NULL, NULL) == -EINVAL, "no handler");
	CHECK(vc_http_route(h, "GET", "a", 0, VC_HTTP_VIEW, no_handler, NULL) == -EINVAL, "relative");
	CHECK(vc_http_route_at(h, 0, &ri) == -ENOENT, "nothing refused was added");
	CHECK(vc_http_routes(h, bad_table, ARRAY_LEN(bad_table), NULL) == -EINVAL, "table");
	CHECK(vc_http_lookup(h, "GET", "/noclass", NULL, NULL) == -ENOENT, "/noclass not routed");
	CHECK(vc_http_route(h, "PUT", "/a", 0, VC_HTTP_CONTROL, no_handler, NULL) == 0, "PUT control");
	CHECK(vc_http_route(h, NULL, "/b", 0, VC_HTTP_PUBLIC, no_handler, NULL) == 0, "GET public");
	CHECK(vc_auth_class_of(VC_HTTP_CLASS_UNSET) == -EINVAL && vc_auth_class_of(VC_HTTP_PUBLIC) == -1 &&
	      vc_auth_class_of(VC_HTTP_VIEW) == VC_CLASS_VIEW &&
	      vc_auth_class_of(VC_HTTP_STATUS) == VC_CLASS_STATUS &&
	      vc_auth_class_of(VC_HTTP_CONTROL) == VC_CLASS_CONTROL, "vc_auth_class_of");
	vc_http_free(h);
}

int main(void)
{
	make_hash("$6$", "pw-alice", h6);
	make_hash("$y$", "pw bob:x", hy);
	if (!h6[0] || !hy[0]) {
		printf("auth.setup: FAIL crypt_gensalt/crypt_r did not make $6$/$y$ hashes\n");
		return 1;
	}
	RUN("auth", b64);
	RUN("auth", basic_auth);
	RUN("auth", steps);
	RUN("auth", tokens);
	RUN("auth", setup_errors);
	RUN("auth", classify);
	RUN("auth", every_route);
	RUN("auth", route_needs_class);
	CHECK_EXIT();
}
