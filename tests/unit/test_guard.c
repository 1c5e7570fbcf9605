/* Guards without credentials: the Host header check (DNS rebinding),
 * loopback tests, and the failed-login back-off table. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "common/conf.h"
#include "server/http/backoff.h"
#include "server/http/guard.h"

static struct vc_conf *conf(int line, const char *text)
{
	struct vc_conf *c = NULL;
	char err[512];
	int r = vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err));
	CHECK_AT(line, r == 0, "conf: %s", err);
	return c;
}

static void hosts(void)
{
	static const char *const listen[] = { "127.0.0.1:8080", "camhost.lan:8080", "[::1]:0" };
	struct vc_conf *c = conf(__LINE__, "[server]\nallowed_hosts = cam.example.org, *.home.arpa\n");
	struct vc_guard *g = NULL, *g0 = NULL, *gany = NULL;
	char hn[256], buf[300];
	if (!c || vc_guard_new(c, listen, 3, &g) < 0 || vc_guard_new(NULL, NULL, 0, &g0) < 0) {
		CHECK(0, "guard_new");
		goto out;
	}
	static const struct { const char *host; int ok; } v[] = {
		{ NULL, 1 }, { "localhost:8080", 1 }, { "LOCALHOST", 1 }, { "localhost.:80", 1 },
		{ "127.0.0.1:8080", 1 }, { "[::1]:8080", 1 }, { "[::1]", 1 }, { "192.168.1.20", 1 },
		{ "10.0.0.1:1", 1 }, { "app.localhost:9", 1 }, { "camhost.lan:8080", 1 },
		{ "cam.example.org", 1 }, { "CAM.Example.Org.:443", 1 }, { "a.home.arpa", 1 },
		{ "x.y.home.arpa:1", 1 },
		{ "rebind.attacker.example:8080", 0 }, { "home.arpa", 0 }, { "xhome.arpa", 0 },
		{ "example.org", 0 }, { "localhost.attacker.example", 0 }, { "127.0.0.1.nip.io", 0 },
		{ "", 0 }, { ":8080", 0 }, { "::1", 0 }, { "[::1", 0 }, { "[evil]:80", 0 },
		{ "[::1]x", 0 }, { "localhostx", 0 },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++)
		CHECK(vc_guard_host_ok(g, v[i].host) == v[i].ok, "host %s -> %d", v[i].host ? v[i].host : "(none)", v[i].ok);
	CHECK(!vc_guard_host_ok(g0, "cam.example.org") && !vc_guard_host_ok(g0, "camhost.lan") &&
	      vc_guard_host_ok(g0, "localhost"), "no config: only built-in names");
	if (gethostname(hn, sizeof(hn)) == 0 && hn[0]) {
		hn[strcspn(hn, ".")] = '\0';
		snprintf(buf, sizeof(buf), "%s:8080", hn);
		CHECK(vc_guard_host_ok(g0, buf), "machine name %s", buf);
		snprintf(buf, sizeof(buf), "%s.local", hn);
		CHECK(vc_guard_host_ok(g0, buf), "mDNS name %s", buf);
	}
	vc_conf_free(c);
	c = conf(__LINE__, "[server]\nallowed_hosts = *\n");
	CHECK(c && vc_guard_new(c, NULL, 0, &gany) == 0 && vc_guard_host_ok(gany, "anything.example"), "'*' = any");
out:
	vc_conf_free(c);
	vc_guard_free(g);
	vc_guard_free(g0);
	vc_guard_free(gany);
}

static void bad_hosts_conf(void)
{
	static const char *const bad[] = { "allowed_hosts = a/b", "allowed_hosts = *x", "allowed_hosts = a.*.b",
					   "allowed_hosts = ,", "allowed_hosts = **.a" };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		char text[128], err[256];
		struct vc_conf *c = NULL;
		snprintf(text, sizeof(text), "[server]\n%s\n", bad[i]);
		CHECK(vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "allowed_hosts"), "%s refused: %s", bad[i], err);
		vc_conf_free(c);
	}
}

static void control_policy(void)
{
	static const struct { const char *text; int open_net; } v[] = {
		{ "[server]\n", 0 },
		{ "[server]\nauth_control = none\n", 1 },
		{ "[server]\nauth_view = none\n", 0 },
		{ "[server]\nuser = u:$6$a$b\nauth_control = basic\n", 0 },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_conf *c = conf(__LINE__, v[i].text);
		struct vc_guard *g = NULL;
		CHECK(c && vc_guard_new(c, NULL, 0, &g) == 0 && vc_guard_control_open_net(g) == v[i].open_net,
		      "%s -> %d", v[i].text, v[i].open_net);
		vc_guard_free(g);
		vc_conf_free(c);
	}
	struct vc_conf *c = conf(__LINE__, "[server]\nuser = u:$6$a$b\nauth_status = basic\n");
	CHECK(c && c->auth[VC_CLASS_CONTROL] == VC_AUTH_BASIC && c->auth[VC_CLASS_VIEW] == 0,
	      "auth_status alone protects control too");
	vc_conf_free(c);
}

static struct sockaddr_storage addr(const char *s)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1)
		s6->sin6_family = AF_INET6;
	return ss;
}

static void loopback(void)
{
	static const struct { const char *a; int lo; } v[] = {
		{ "127.0.0.1", 1 }, { "127.8.9.10", 1 }, { "::1", 1 }, { "::ffff:127.0.0.1", 1 },
		{ "128.0.0.1", 0 }, { "192.168.0.1", 0 }, { "::2", 0 }, { "::ffff:10.0.0.1", 0 }, { "fe80::1", 0 },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct sockaddr_storage ss = addr(v[i].a);
		CHECK(vc_guard_is_loopback((struct sockaddr *)&ss) == v[i].lo, "%s", v[i].a);
	}
	CHECK(!vc_guard_is_loopback(NULL), "NULL");
	static const struct { const char *l; int lo; } w[] = {
		{ "127.0.0.1:8080", 1 }, { "[::1]:0", 1 }, { "localhost:1", 1 }, { "0.0.0.0:80", 0 },
		{ ":8080", 0 }, { "[::]:80", 0 }, { "192.168.1.2:80", 0 }, { "cam.lan:80", 0 },
	};
	for (size_t i = 0; i < ARRAY_LEN(w); i++)
		CHECK(vc_guard_listen_is_loopback(w[i].l) == w[i].lo, "listen %s", w[i].l);
}

/* Per-address limits: IPv6 peers of one /64 are one group, IPv4 peers one
 * per address, a v4-mapped peer the same as its IPv4 address. */
static void addr_groups(void)
{
	static const struct { const char *a, *b; int same; int line; } v[] = {
		{ "2001:db8:1:2::1", "2001:db8:1:2:ffff:eeee:dddd:cccc", 1, __LINE__ },
		{ "2001:db8:1:2::1", "2001:db8:1:3::1", 0, __LINE__ },
		{ "2001:db8:1:2::1", "2001:db9:1:2::1", 0, __LINE__ },
		{ "fe80::1", "fe80::2", 1, __LINE__ },
		{ "192.0.2.1", "192.0.2.1", 1, __LINE__ },
		{ "192.0.2.1", "192.0.2.2", 0, __LINE__ },
		{ "127.0.0.1", "127.0.0.2", 0, __LINE__ },
		{ "192.0.2.1", "::ffff:192.0.2.1", 1, __LINE__ },
		{ "::ffff:192.0.2.1", "::ffff:192.0.2.2", 0, __LINE__ },
		{ "::1", "::2", 1, __LINE__ },
		{ "::ffff:192.0.2.1", "::1", 0, __LINE__ },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct sockaddr_storage sa = addr(v[i].a), sb = addr(v[i].b);
		struct vc_guard_addr ka, kb;

		memset(&ka, 0xa5, sizeof(ka));
		memset(&kb, 0x5a, sizeof(kb));
		int ra = vc_guard_addr_key((struct sockaddr *)&sa, &ka);
		int rb = vc_guard_addr_key((struct sockaddr *)&sb, &kb);
		CHECK_AT(v[i].line, ra == 0 && rb == 0 && vc_guard_addr_eq(&ka, &kb) == v[i].same,
			 "%s vs %s: want %s", v[i].a, v[i].b, v[i].same ? "one group" : "two");
	}
	struct vc_guard_addr k, zero = { { 0 } };
	memset(&k, 0xff, sizeof(k));
	CHECK(vc_guard_addr_key(NULL, &k) == -EAFNOSUPPORT && vc_guard_addr_eq(&k, &zero),
	      "NULL: one group of its own");
}

static void backoff(void)
{
	struct vc_backoff *b = NULL;
	struct sockaddr_storage a1 = addr("192.0.2.1"), a2 = addr("192.0.2.2");
	struct sockaddr_storage m1 = addr("::ffff:192.0.2.1");
	struct sockaddr_storage v6a = addr("2001:db8:1:2::1"), v6b = addr("2001:db8:1:2:ffff::9");
	struct sockaddr_storage v6c = addr("2001:db8:1:3::1");
	const struct sockaddr *p1 = (void *)&a1, *p2 = (void *)&a2;

	if (vc_backoff_new(3, 60, 30, &b) < 0) {
		CHECK(0, "new");
		return;
	}
	CHECK(vc_backoff_blocked(b, p1, 1000) == 0, "fresh");
	CHECK(vc_backoff_fail(b, p1, 1000) == 0 && vc_backoff_fail(b, p1, 1001) == 0, "2 fails");
	CHECK(vc_backoff_blocked(b, p1, 1001) == 0, "under the limit");
	CHECK(vc_backoff_fail(b, p1, 1002) == 1, "third starts the block");
	CHECK(vc_backoff_blocked(b, p1, 1002) == 30 && vc_backoff_blocked(b, p1, 1031) == 1, "blocked 30 s");
	CHECK(vc_backoff_blocked(b, p1, 1032) == 0, "block ends");
	CHECK(vc_backoff_blocked(b, p2, 1002) == 0, "other address free");
	CHECK(vc_backoff_blocked(b, (void *)&m1, 1010) > 0, "v4-mapped = same address");
	/* failures spread wider than the window never block */
	for (int i = 0; i < 10; i++)
		CHECK(vc_backoff_fail(b, p2, 2000 + i * 31) == 0, "slow fail %d", i);
	/* IPv6 counts per /64 */
	vc_backoff_fail(b, (void *)&v6a, 3000);
	vc_backoff_fail(b, (void *)&v6b, 3000);
	vc_backoff_fail(b, (void *)&v6a, 3000);
	CHECK(vc_backoff_blocked(b, (void *)&v6b, 3001) > 0 && vc_backoff_blocked(b, (void *)&v6c, 3001) == 0,
	      "one /64 blocked, the next free");
	/* many addresses: the table stays bounded, blocked entries survive */
	for (uint32_t i = 0; i < 5000; i++) {
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0a000000u + i) };
		vc_backoff_fail(b, (struct sockaddr *)&s4, 3002);
	}
	CHECK(vc_backoff_count(b) <= VC_BACKOFF_SLOTS, "bounded: %u", vc_backoff_count(b));
	CHECK(vc_backoff_blocked(b, (void *)&v6a, 3003) > 0, "blocked entry kept while others churn");
	CHECK(vc_backoff_blocked(b, NULL, 3003) == 0, "NULL address");
	vc_backoff_free(b);
}

int main(void)
{
	RUN("guard", hosts);
	RUN("guard", bad_hosts_conf);
	RUN("guard", control_policy);
	RUN("guard", loopback);
	RUN("guard", addr_groups);
	RUN("guard", backoff);
	CHECK_EXIT();
}
