/* The client behind a reverse proxy: trusted_proxies entries and the
 * Forwarded / X-Forwarded-For / X-Real-IP parsing (common/fwd.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "check.h"
#include "common/conf.h"
#include "common/fwd.h"

/* "a.b.c.d", "v6", or "-" for no address, from an answer. */
static const char *addr_of(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)ss)->sin_addr, buf,
			  (socklen_t)len);
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr, buf,
			  (socklen_t)len);
	else
		snprintf(buf, len, "-");
	return buf;
}

static size_t nets_of(const char *const *list, struct vc_fwd_net *nets)
{
	size_t n = 0;

	for (; list[n]; n++)
		CHECK(vc_fwd_net_parse(list[n], &nets[n]) == 0, "net '%s'", list[n]);
	return n;
}

static void nets(void)
{
	static const struct { const char *s; int ok; } v[] = {
		{ "127.0.0.1", 1 }, { "10.0.0.0/8", 1 }, { "10.1.2.3/8", 1 }, { "0.0.0.0/0", 1 },
		{ "::1", 1 }, { "[::1]", 1 }, { "fd00::/8", 1 }, { "2001:db8::/128", 1 },
		{ "", 0 }, { "10.0.0.0/33", 0 }, { "::/129", 0 }, { "10.0.0.0/", 0 },
		{ "10.0.0.0/x", 0 }, { "10.0.0.0/-1", 0 }, { "localhost", 0 }, { "1.2.3", 0 },
		{ "[::1", 0 }, { "1.2.3.4:80", 0 }, { "10.0.0.0/8/8", 0 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct vc_fwd_net n;
		memset(&n, 0xff, sizeof(n));
		CHECK((vc_fwd_net_parse(v[i].s, &n) == 0) == v[i].ok, "'%s' ok=%d", v[i].s, v[i].ok);
		CHECK(!v[i].ok || n.bits <= 128, "'%s': %u bits", v[i].s, n.bits);
	}
	static const char *const list[] = { "10.1.2.3/8", "::1", "fd00::/8", "192.168.1.7",
					    "172.16.0.0/12", "2001:db8:8000::/33", NULL };
	struct vc_fwd_net t[6];
	size_t n = nets_of(list, t);
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	static const struct { const char *a; int in; } m[] = {
		{ "10.0.0.1", 1 }, { "10.255.255.255", 1 }, { "11.0.0.0", 0 }, { "192.168.1.7", 1 },
		{ "192.168.1.8", 0 }, { "::1", 1 }, { "::2", 0 }, { "fd12:3456::1", 1 },
		{ "fe80::1", 0 }, { "::ffff:10.9.9.9", 1 }, { "::ffff:192.168.1.8", 0 },
		/* prefixes that end inside a byte */
		{ "172.16.0.1", 1 }, { "172.31.255.255", 1 }, { "172.32.0.0", 0 }, { "172.15.0.1", 0 },
		{ "2001:db8:8000::1", 1 }, { "2001:db8:ffff:1::", 1 }, { "2001:db8:7fff::1", 0 },
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		const struct sockaddr *sa;
		if (inet_pton(AF_INET, m[i].a, &s4.sin_addr) == 1) {
			sa = (const struct sockaddr *)&s4;
		} else {
			inet_pton(AF_INET6, m[i].a, &s6.sin6_addr);
			sa = (const struct sockaddr *)&s6;
		}
		CHECK(vc_fwd_trusted(t, n, sa) == m[i].in, "%s in=%d", m[i].a, m[i].in);
	}
	CHECK(vc_fwd_trusted(t, n, NULL) == 0, "NULL");
	CHECK(vc_fwd_trusted(NULL, 0, (const struct sockaddr *)&s4) == 0, "empty list");
}

/* One case: headers (NULL-terminated lists), trusted nets, the answer. */
struct fcase {
	int line;
	const char *fwd[4], *xff[4], *real;
	enum vc_fwd_result want;
	const char *addr; /* for VC_FWD_ADDR */
};

static void run_cases(const struct fcase *v, size_t nv, const char *const *trusted)
{
	struct vc_fwd_net t[8];
	size_t nt = nets_of(trusted, t);

	for (size_t i = 0; i < nv; i++) {
		size_t nf = 0, nx = 0;
		while (nf < 4 && v[i].fwd[nf])
			nf++;
		while (nx < 4 && v[i].xff[nx])
			nx++;
		struct vc_fwd_headers hd = { v[i].fwd, nf, v[i].xff, nx, v[i].real };
		struct sockaddr_storage ss, canary;
		char buf[64];
		memset(&ss, 0xff, sizeof(ss)); /* written only for an address */
		memset(&canary, 0xff, sizeof(canary));
		enum vc_fwd_result r = vc_fwd_client(&hd, t, nt, &ss);
		CHECK_AT(v[i].line, r == v[i].want, "result %d, want %d", r, v[i].want);
		if (r == VC_FWD_ADDR && v[i].want == VC_FWD_ADDR)
			CHECK_AT(v[i].line, strcmp(addr_of(&ss, buf, sizeof(buf)), v[i].addr) == 0,
				 "client %s, want %s", buf, v[i].addr);
		if (r != VC_FWD_ADDR)
			CHECK_AT(v[i].line, memcmp(&ss, &canary, sizeof(ss)) == 0, "out written");
		CHECK_AT(v[i].line, vc_fwd_present(&hd) == (nf || nx || v[i].real), "present");
	}
}

#define ONLY_LO ((const char *const[]){ "127.0.0.1", NULL })

static void xff(void)
{
	static const struct fcase v[] = {
		{ __LINE__, { NULL }, { NULL }, NULL, VC_FWD_NONE, NULL },
		{ __LINE__, { NULL }, { "203.0.113.7" }, NULL, VC_FWD_ADDR, "203.0.113.7" },
		{ __LINE__, { NULL }, { " 203.0.113.7 " }, NULL, VC_FWD_ADDR, "203.0.113.7" },
		{ __LINE__, { NULL }, { "203.0.113.7:5123" }, NULL, VC_FWD_ADDR, "203.0.113.7" },
		{ __LINE__, { NULL }, { "2001:db8::7" }, NULL, VC_FWD_ADDR, "2001:db8::7" },
		{ __LINE__, { NULL }, { "[2001:db8::7]" }, NULL, VC_FWD_ADDR, "2001:db8::7" },
		{ __LINE__, { NULL }, { "[2001:db8::7]:443" }, NULL, VC_FWD_ADDR, "2001:db8::7" },
		{ __LINE__, { NULL }, { "[::ffff:198.51.100.1]" }, NULL, VC_FWD_ADDR, "198.51.100.1" },
		/* the right-most untrusted entry; left of it is the client's own */
		{ __LINE__, { NULL }, { "1.1.1.1, 2.2.2.2" }, NULL, VC_FWD_ADDR, "2.2.2.2" },
		{ __LINE__, { NULL }, { "1.1.1.1, 2.2.2.2, 127.0.0.1" }, NULL, VC_FWD_ADDR, "2.2.2.2" },
		{ __LINE__, { NULL }, { "garbage!!, 2.2.2.2" }, NULL, VC_FWD_ADDR, "2.2.2.2" },
		{ __LINE__, { NULL }, { "2.2.2.2,,  ," }, NULL, VC_FWD_ADDR, "2.2.2.2" },
		/* several headers read as one list */
		{ __LINE__, { NULL }, { "1.1.1.1", "2.2.2.2" }, NULL, VC_FWD_ADDR, "2.2.2.2" },
		{ __LINE__, { NULL }, { "1.1.1.1, 2.2.2.2", "127.0.0.1" }, NULL, VC_FWD_ADDR, "2.2.2.2" },
		/* every entry a trusted proxy: the left-most */
		{ __LINE__, { NULL }, { "127.0.0.1, 127.0.0.1" }, NULL, VC_FWD_ADDR, "127.0.0.1" },
		/* the client cannot be named */
		{ __LINE__, { NULL }, { "unknown" }, NULL, VC_FWD_HIDDEN, NULL },
		{ __LINE__, { NULL }, { "2.2.2.2, _hidden" }, NULL, VC_FWD_HIDDEN, NULL },
		/* garbage where it counts */
		{ __LINE__, { NULL }, { "2.2.2.2, garbage" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { " , " }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "300.1.1.1" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "1.2.3.4:80:90" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "[2001:db8::7" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "[2001:db8::7]x" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "[1.2.3.4]" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "1.2.3.4:" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "_bad*chars" }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { NULL }, { "fe80::1%eth0" }, NULL, VC_FWD_BAD, NULL },
		/* X-Real-IP when nothing else names the client */
		{ __LINE__, { NULL }, { NULL }, "198.51.100.9", VC_FWD_ADDR, "198.51.100.9" },
		{ __LINE__, { NULL }, { "2.2.2.2" }, "198.51.100.9", VC_FWD_ADDR, "2.2.2.2" },
		{ __LINE__, { NULL }, { NULL }, "not an address", VC_FWD_BAD, NULL },
	};
	run_cases(v, sizeof(v) / sizeof(v[0]), ONLY_LO);
}

static void forwarded(void)
{
	static const struct fcase v[] = {
		{ __LINE__, { "for=192.0.2.60" }, { NULL }, NULL, VC_FWD_ADDR, "192.0.2.60" },
		{ __LINE__, { "For=192.0.2.60;proto=http;by=203.0.113.43" }, { NULL }, NULL,
		  VC_FWD_ADDR, "192.0.2.60" },
		{ __LINE__, { "proto=https; for=\"192.0.2.60:8080\" ;by=_p" }, { NULL }, NULL,
		  VC_FWD_ADDR, "192.0.2.60" },
		{ __LINE__, { "for=\"[2001:db8:cafe::17]:4711\"" }, { NULL }, NULL, VC_FWD_ADDR,
		  "2001:db8:cafe::17" },
		{ __LINE__, { "for=\"[2001:db8:cafe::17]\"" }, { NULL }, NULL, VC_FWD_ADDR,
		  "2001:db8:cafe::17" },
		{ __LINE__, { "for=\"\\[2001:db8::1\\]\"" }, { NULL }, NULL, VC_FWD_ADDR, "2001:db8::1" },
		{ __LINE__, { "for=192.0.2.43, for=198.51.100.17" }, { NULL }, NULL, VC_FWD_ADDR,
		  "198.51.100.17" },
		{ __LINE__, { "for=192.0.2.43, for=127.0.0.1;proto=http" }, { NULL }, NULL, VC_FWD_ADDR,
		  "192.0.2.43" },
		{ __LINE__, { "for=192.0.2.43", "for=198.51.100.17" }, { NULL }, NULL, VC_FWD_ADDR,
		  "198.51.100.17" },
		/* a quoted comma stays inside its element */
		{ __LINE__, { "for=192.0.2.43;ext=\"a,b\"" }, { NULL }, NULL, VC_FWD_ADDR,
		  "192.0.2.43" },
		/* Forwarded wins over X-Forwarded-For */
		{ __LINE__, { "for=192.0.2.43" }, { "198.51.100.17" }, NULL, VC_FWD_ADDR, "192.0.2.43" },
		{ __LINE__, { "for=_hidden" }, { NULL }, NULL, VC_FWD_HIDDEN, NULL },
		{ __LINE__, { "for=unknown" }, { NULL }, NULL, VC_FWD_HIDDEN, NULL },
		{ __LINE__, { "for=\"_gazonk\"" }, { NULL }, NULL, VC_FWD_HIDDEN, NULL },
		{ __LINE__, { "proto=https" }, { NULL }, NULL, VC_FWD_HIDDEN, NULL },
		{ __LINE__, { "for=garbage!!, for=192.0.2.43" }, { NULL }, NULL, VC_FWD_ADDR,
		  "192.0.2.43" },
		{ __LINE__, { "for=192.0.2.43, garbage" }, { NULL }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { "for=192.0.2.43;for=198.51.100.1" }, { NULL }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { "for=\"192.0.2.43" }, { NULL }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { "for=" }, { NULL }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { "=1.2.3.4" }, { NULL }, NULL, VC_FWD_BAD, NULL },
		{ __LINE__, { "for=\"[2001:db8::1]:80:90\"" }, { NULL }, NULL, VC_FWD_BAD, NULL },
	};
	run_cases(v, sizeof(v) / sizeof(v[0]), ONLY_LO);
}

/* Chains through several trusted hops (a CDN, then nginx on this host). */
static void chains(void)
{
	static const char *const trusted[] = { "127.0.0.1", "10.0.0.0/8", "2001:db8:1::/48", NULL };
	static const struct fcase v[] = {
		{ __LINE__, { NULL }, { "203.0.113.5, 10.1.1.1" }, NULL, VC_FWD_ADDR, "203.0.113.5" },
		{ __LINE__, { NULL }, { "6.6.6.6, 203.0.113.5, 10.2.2.2, 10.1.1.1" }, NULL,
		  VC_FWD_ADDR, "203.0.113.5" },
		{ __LINE__, { NULL }, { "203.0.113.5", "10.2.2.2", "[2001:db8:1::9]:80" }, NULL,
		  VC_FWD_ADDR, "203.0.113.5" },
		{ __LINE__, { "for=203.0.113.5, for=10.9.9.9, for=\"[2001:db8:1:2::3]\"" }, { NULL },
		  NULL, VC_FWD_ADDR, "203.0.113.5" },
		{ __LINE__, { NULL }, { "10.2.2.2, 10.1.1.1" }, NULL, VC_FWD_ADDR, "10.2.2.2" },
		/* a hop hid its client behind the trusted ones */
		{ __LINE__, { "for=_a, for=10.1.1.1" }, { NULL }, NULL, VC_FWD_HIDDEN, NULL },
		{ __LINE__, { NULL }, { "x, 10.1.1.1" }, NULL, VC_FWD_BAD, NULL },
	};
	run_cases(v, sizeof(v) / sizeof(v[0]), trusted);
}

/* A client-written left part of any length costs nothing; the right-most
 * entries still count. */
static void long_lists(void)
{
	static char big[12000];
	size_t o = 0;
	while (o + 16 < sizeof(big) - 40)
		o += (size_t)snprintf(big + o, sizeof(big) - o, "9.9.9.%zu, ", o % 250);
	snprintf(big + o, sizeof(big) - o, "203.0.113.5, 127.0.0.1");
	const char *x[] = { big };
	struct vc_fwd_headers hd = { NULL, 0, x, 1, NULL };
	struct vc_fwd_net t;
	struct sockaddr_storage ss;
	char buf[64];
	CHECK(vc_fwd_net_parse("127.0.0.1", &t) == 0, "net");
	CHECK(vc_fwd_client(&hd, &t, 1, &ss) == VC_FWD_ADDR &&
	      strcmp(addr_of(&ss, buf, sizeof(buf)), "203.0.113.5") == 0, "long list");
	/* every hop trusted, more than are kept: still an address */
	o = 0;
	while (o + 12 < sizeof(big))
		o += (size_t)snprintf(big + o, sizeof(big) - o, "127.0.0.1,");
	CHECK(vc_fwd_client(&hd, &t, 1, &ss) == VC_FWD_ADDR &&
	      strcmp(addr_of(&ss, buf, sizeof(buf)), "127.0.0.1") == 0, "long trusted list");
	/* a long Forwarded element is refused, not overrun */
	memset(big, 'a', 4000);
	memcpy(big, "for=1.2.3.4;x=", 14);
	big[4000] = 0;
	const char *f[] = { big };
	struct vc_fwd_headers hf = { f, 1, NULL, 0, NULL };
	CHECK(vc_fwd_client(&hf, &t, 1, &ss) == VC_FWD_BAD, "long element");
}

static void conf_key(void)
{
	static const char good[] = "[server]\ntrusted_proxies = 127.0.0.1, ::1\n"
				   "trusted_proxies = 10.0.0.0/8\n";
	struct vc_conf *c = NULL;
	char err[512];
	CHECK(vc_conf_parse(good, strlen(good), "t", &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c && c->n_proxies == 3 && strcmp(c->proxies[2], "10.0.0.0/8") == 0, "three entries");
	vc_conf_free(c);
	c = NULL;
	static const char bad[] = "[server]\ntrusted_proxies = 127.0.0.1 nginx.local\n";
	CHECK(vc_conf_parse(bad, strlen(bad), "t", &c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "t:2: trusted_proxies: 'nginx.local'"), "bad entry: %s", err);
	vc_conf_free(c);
}

int main(void)
{
	RUN("fwd", nets);
	RUN("fwd", xff);
	RUN("fwd", forwarded);
	RUN("fwd", chains);
	RUN("fwd", long_lists);
	RUN("fwd", conf_key);
	CHECK_EXIT();
}
