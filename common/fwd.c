/* Forwarding headers and trusted proxies (see fwd.h). The lists are read
 * from the right: a proxy appends the address it saw, so only the entries
 * right of the first untrusted one were written by proxies we trust; what
 * the client wrote further left may be anything and is never looked at
 * (garbage there must not cost the client its address). */
#include "common/fwd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Entries kept per request: the right-most ones (headers are at most 16 KiB,
 * http.h; a real chain has a few hops). */
#define FWD_MAX_HOPS 64

static void to_mapped(const struct sockaddr *sa, struct in6_addr *a, int *ok)
{
	*ok = 0;
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		memset(a, 0, sizeof(*a));
		a->s6_addr[10] = a->s6_addr[11] = 0xff;
		memcpy(&a->s6_addr[12], &s4->sin_addr, 4);
		*ok = 1;
	} else if (sa && sa->sa_family == AF_INET6) {
		*a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		*ok = 1;
	}
}

int vc_fwd_net_parse(const char *s, struct vc_fwd_net *n)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	struct in_addr a4;
	unsigned long bits;
	int v4 = 0;

	if (len && s[0] == '[' && s[len - 1] == ']') { /* "[::1]" as in a URL */
		s++;
		len -= 2;
	}
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	memset(n, 0, sizeof(*n));
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		v4 = 1;
		n->a.s6_addr[10] = n->a.s6_addr[11] = 0xff;
		memcpy(&n->a.s6_addr[12], &a4, 4);
	} else if (inet_pton(AF_INET6, buf, &n->a) != 1) {
		return -EINVAL;
	}
	bits = v4 ? 32 : 128;
	if (slash) {
		char *end;

		if (slash[1] < '0' || slash[1] > '9')
			return -EINVAL;
		bits = strtoul(slash + 1, &end, 10);
		if (*end || bits > (v4 ? 32u : 128u))
			return -EINVAL;
	}
	n->bits = (unsigned)bits + (v4 ? 96 : 0);
	/* clear the host part, so "10.1.2.3/8" is 10.0.0.0/8 */
	for (unsigned i = n->bits; i < 128; i++)
		n->a.s6_addr[i / 8] &= (unsigned char)~(0x80u >> (i % 8));
	return 0;
}

static int in_net(const struct vc_fwd_net *n, const struct in6_addr *a)
{
	unsigned full = n->bits / 8, rest = n->bits % 8;

	if (memcmp(n->a.s6_addr, a->s6_addr, full))
		return 0;
	if (!rest)
		return 1;
	unsigned char mask = (unsigned char)(0xffu << (8 - rest));
	return (n->a.s6_addr[full] & mask) == (a->s6_addr[full] & mask);
}

static int trusted6(const struct vc_fwd_net *nets, size_t n, const struct in6_addr *a)
{
	for (size_t i = 0; i < n; i++)
		if (in_net(&nets[i], a))
			return 1;
	return 0;
}

int vc_fwd_trusted(const struct vc_fwd_net *nets, size_t n, const struct sockaddr *sa)
{
	struct in6_addr a;
	int ok;

	to_mapped(sa, &a, &ok);
	return ok && trusted6(nets, n, &a);
}

int vc_fwd_present(const struct vc_fwd_headers *hd)
{
	return hd->n_forwarded || hd->n_xff || hd->x_real_ip;
}

/* One entry of a list: a span of one header value. */
struct span {
	const char *p;
	size_t n;
};

struct hops {
	struct span s[FWD_MAX_HOPS];
	size_t total; /* entries seen; the last FWD_MAX_HOPS are kept */
};

static int is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static struct span trim(const char *p, size_t n)
{
	while (n && is_ows(*p)) {
		p++;
		n--;
	}
	while (n && is_ows(p[n - 1]))
		n--;
	return (struct span){ p, n };
}

/* Splits a header value at sep outside quoted strings; empty entries are
 * skipped (RFC 9110 5.6.1). Each entry goes to put(). */
static void split(const char *v, char sep, void (*put)(void *ctx, struct span s), void *ctx)
{
	const char *start = v;
	int quoted = 0;

	for (const char *p = v;; p++) {
		if (*p && quoted) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				quoted = 0;
			continue;
		}
		if (*p == '"') {
			quoted = 1;
			continue;
		}
		if (*p && *p != sep)
			continue;
		struct span s = trim(start, (size_t)(p - start));
		if (s.n)
			put(ctx, s);
		if (!*p)
			return;
		start = p + 1;
	}
}

static void hop_put(void *ctx, struct span s)
{
	struct hops *h = ctx;

	h->s[h->total++ % FWD_MAX_HOPS] = s;
}

enum node { NODE_BAD, NODE_ADDR, NODE_HIDDEN };

static int obf_chars(const char *p, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '.' || p[i] == '_' || p[i] == '-'))
			return 0;
	return 1;
}

/* A node (RFC 7239 6): "192.0.2.43", "192.0.2.43:80", "[2001:db8::1]",
 * "[2001:db8::1]:80", a bare IPv6 address (X-Forwarded-For writes them so),
 * "unknown" or "_obfuscated" (ports may be "_obfuscated" too). */
static enum node parse_node(const char *p, size_t n, struct in6_addr *a)
{
	char buf[INET6_ADDRSTRLEN + 1];
	const char *port = NULL, *end = p + n;
	struct in_addr a4;

	if (n == 7 && strncasecmp(p, "unknown", 7) == 0)
		return NODE_HIDDEN;
	if (n && p[0] == '_')
		return obf_chars(p, n) ? NODE_HIDDEN : NODE_BAD;
	if (n && p[0] == '[') {
		const char *rb = memchr(p, ']', n);

		if (!rb || (rb + 1 < end && rb[1] != ':'))
			return NODE_BAD;
		port = rb + 1 < end ? rb + 2 : NULL;
		p++;
		n = (size_t)(rb - p);
		if (n >= sizeof(buf))
			return NODE_BAD;
		memcpy(buf, p, n);
		buf[n] = 0;
		if (inet_pton(AF_INET6, buf, a) != 1)
			return NODE_BAD;
	} else {
		const char *colon = memchr(p, ':', n);
		int many = colon && memchr(colon + 1, ':', (size_t)(end - colon - 1));

		if (colon && !many) { /* IPv4 with a port */
			port = colon + 1;
			n = (size_t)(colon - p);
		}
		if (n >= sizeof(buf) || !n)
			return NODE_BAD;
		memcpy(buf, p, n);
		buf[n] = 0;
		if (many) {
			if (inet_pton(AF_INET6, buf, a) != 1)
				return NODE_BAD;
		} else {
			if (inet_pton(AF_INET, buf, &a4) != 1)
				return NODE_BAD;
			memset(a, 0, sizeof(*a));
			a->s6_addr[10] = a->s6_addr[11] = 0xff;
			memcpy(&a->s6_addr[12], &a4, 4);
		}
	}
	if (port && !obf_chars(port, (size_t)(end - port)))
		return NODE_BAD;
	return NODE_ADDR;
}

/* The for= of one Forwarded element ("for=1.2.3.4;proto=https;by=_p"),
 * unquoted into buf. NODE_HIDDEN without for= (that hop named no client),
 * NODE_BAD for a pair without '=' or a second for=. */
struct pairs {
	char *buf;
	size_t cap, len;
	int n_for, bad;
};

static void pair_put(void *ctx, struct span s)
{
	struct pairs *pr = ctx;
	const char *eq = memchr(s.p, '=', s.n);

	if (!eq || eq == s.p) {
		pr->bad = 1;
		return;
	}
	struct span name = trim(s.p, (size_t)(eq - s.p));
	struct span val = trim(eq + 1, (size_t)(s.p + s.n - eq - 1));
	if (name.n != 3 || strncasecmp(name.p, "for", 3) != 0)
		return;
	if (pr->n_for++) {
		pr->bad = 1;
		return;
	}
	pr->len = 0;
	if (val.n && val.p[0] == '"') { /* quoted-string: unescape */
		if (val.n < 2 || val.p[val.n - 1] != '"') {
			pr->bad = 1;
			return;
		}
		for (size_t i = 1; i + 1 < val.n; i++) {
			if (val.p[i] == '\\' && i + 2 < val.n)
				i++;
			if (pr->len + 1 >= pr->cap) {
				pr->bad = 1;
				return;
			}
			pr->buf[pr->len++] = val.p[i];
		}
	} else {
		if (val.n >= pr->cap) {
			pr->bad = 1;
			return;
		}
		memcpy(pr->buf, val.p, val.n);
		pr->len = val.n;
	}
	pr->buf[pr->len] = 0;
}

static enum node forwarded_node(struct span el, struct in6_addr *a)
{
	char tmp[FWD_MAX_HOPS * 4], buf[128];
	struct pairs pr = { buf, sizeof(buf), 0, 0, 0 };

	if (el.n >= sizeof(tmp))
		return NODE_BAD;
	memcpy(tmp, el.p, el.n); /* split() wants a NUL-terminated string */
	tmp[el.n] = 0;
	split(tmp, ';', pair_put, &pr);
	if (pr.bad)
		return NODE_BAD;
	if (!pr.n_for)
		return NODE_HIDDEN;
	return parse_node(buf, pr.len, a);
}

static void to_sockaddr(const struct in6_addr *a, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (IN6_IS_ADDR_V4MAPPED(a)) {
		struct sockaddr_in *s4 = (void *)out;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, &a->s6_addr[12], 4);
	} else {
		struct sockaddr_in6 *s6 = (void *)out;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = *a;
	}
}

enum vc_fwd_result vc_fwd_client(const struct vc_fwd_headers *hd, const struct vc_fwd_net *nets,
				 size_t n_nets, struct sockaddr_storage *out)
{
	const char *const *vals = hd->forwarded;
	size_t n_vals = hd->n_forwarded;
	int rfc = 1;
	struct hops h = { .total = 0 };
	struct in6_addr a, last;
	int have = 0;

	if (!n_vals) {
		rfc = 0;
		vals = hd->xff;
		n_vals = hd->n_xff;
	}
	if (!n_vals && hd->x_real_ip) {
		vals = &hd->x_real_ip;
		n_vals = 1;
	}
	if (!n_vals)
		return VC_FWD_NONE;
	for (size_t i = 0; i < n_vals; i++)
		split(vals[i], ',', hop_put, &h);
	if (!h.total)
		return VC_FWD_BAD; /* a header with nothing in it */
	size_t kept = h.total < FWD_MAX_HOPS ? h.total : FWD_MAX_HOPS;
	for (size_t k = 0; k < kept; k++) {
		struct span s = h.s[(h.total - 1 - k) % FWD_MAX_HOPS];
		enum node nd = rfc ? forwarded_node(s, &a) : parse_node(s.p, s.n, &a);

		if (nd == NODE_BAD)
			return VC_FWD_BAD;
		if (nd == NODE_HIDDEN)
			return VC_FWD_HIDDEN;
		last = a;
		have = 1;
		if (!trusted6(nets, n_nets, &a))
			break;
	}
	if (!have)
		return VC_FWD_BAD;
	to_sockaddr(&last, out);
	return VC_FWD_ADDR;
}
