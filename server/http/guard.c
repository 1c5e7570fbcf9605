/* Host header and loopback checks (see guard.h): a list of accepted names
 * built once per config, compared per request without allocation. */
#define LOG_PREFIX "guard: "
#include "server/http/guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/log.h"

#define NAME_MAX_LEN 255

struct vc_guard {
	size_t n;
	char **names;    /* lower case, no trailing dot; "*." prefix = subdomains */
	int any;         /* allowed_hosts = * */
	int control_net; /* auth_control = none, written out */
};

static int add_name(struct vc_guard *g, const char *s, size_t len)
{
	while (len && s[len - 1] == '.')
		len--;
	if (!len || len > NAME_MAX_LEN)
		return 0;
	char **nn = realloc(g->names, (g->n + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	g->names = nn;
	if (!(nn[g->n] = strndup(s, len)))
		return -ENOMEM;
	for (char *p = nn[g->n]; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	g->n++;
	return 0;
}

/* The host part of "host:port" / "[v6]:port" (port not checked: --listen
 * takes port 0). 0 or -EINVAL. */
static int listen_host(const char *s, char *host, size_t len)
{
	const char *b = s, *e = strrchr(s, ':');

	if (s[0] == '[') {
		b = s + 1;
		e = strchr(s, ']');
		if (!e || e[1] != ':')
			return -EINVAL;
	}
	if (!e || (size_t)(e - b) >= len)
		return -EINVAL;
	memcpy(host, b, (size_t)(e - b));
	host[e - b] = '\0';
	return 0;
}

/* The host names of the listen addresses (IP literals need no entry). */
static int add_listen(struct vc_guard *g, const char *const *listen, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char host[128];
		int r;
		struct in6_addr a6;

		if (listen_host(listen[i], host, sizeof(host)) < 0 || !host[0] ||
		    inet_pton(AF_INET, host, &a6) == 1 || inet_pton(AF_INET6, host, &a6) == 1)
			continue;
		if ((r = add_name(g, host, strlen(host))) < 0)
			return r;
	}
	return 0;
}

int vc_guard_new(const struct vc_conf *c, const char *const *listen, size_t n_listen,
		 struct vc_guard **out)
{
	struct vc_guard *g = calloc(1, sizeof(*g));
	char hn[256];
	int r = -ENOMEM;

	if (!g)
		return -ENOMEM;
	if ((r = add_name(g, "localhost", 9)) < 0 || (r = add_name(g, "*.localhost", 11)) < 0)
		goto fail;
	if (gethostname(hn, sizeof(hn) - 8) == 0) {
		hn[sizeof(hn) - 9] = '\0';
		size_t l = strcspn(hn, ".");
		if ((r = add_name(g, hn, strlen(hn))) < 0)
			goto fail;
		memcpy(hn + l, ".local", 7); /* mDNS name (avahi) */
		if ((r = add_name(g, hn, strlen(hn))) < 0)
			goto fail;
	}
	if ((r = add_listen(g, listen, n_listen)) < 0)
		goto fail;
	for (size_t i = 0; c && i < c->n_hosts; i++) {
		if (strcmp(c->hosts[i], "*") == 0)
			g->any = 1;
		else if ((r = add_name(g, c->hosts[i], strlen(c->hosts[i]))) < 0)
			goto fail;
	}
	g->control_net = c && (c->auth_explicit & (1u << VC_CLASS_CONTROL)) &&
			 !c->auth[VC_CLASS_CONTROL];
	*out = g;
	return 0;
fail:
	vc_guard_free(g);
	return r;
}

void vc_guard_free(struct vc_guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->names[i]);
	free(g->names);
	free(g);
}

static int name_matches(const char *pat, const char *h, size_t hl)
{
	if (pat[0] == '*' && pat[1] == '.') {
		size_t pl = strlen(pat + 1); /* ".example.org" */
		return hl > pl && strncasecmp(h + hl - pl, pat + 1, pl) == 0;
	}
	return strlen(pat) == hl && strncasecmp(pat, h, hl) == 0;
}

int vc_guard_host_ok(const struct vc_guard *g, const char *host)
{
	char buf[NAME_MAX_LEN + 1];
	unsigned char a[16];
	size_t hl;

	if (!host || g->any)
		return 1;
	if (host[0] == '[') { /* [v6]:port */
		const char *e = strchr(host, ']');
		if (!e || (size_t)(e - host - 1) >= sizeof(buf) || (e[1] && e[1] != ':'))
			return 0;
		memcpy(buf, host + 1, (size_t)(e - host - 1));
		buf[e - host - 1] = '\0';
		return inet_pton(AF_INET6, buf, a) == 1;
	}
	hl = strcspn(host, ":");
	if (host[hl] == ':' && strchr(host + hl + 1, ':'))
		return 0; /* a bare IPv6 address is not a valid Host */
	if (hl >= sizeof(buf) || !hl)
		return 0;
	memcpy(buf, host, hl);
	buf[hl] = '\0';
	if (inet_pton(AF_INET, buf, a) == 1)
		return 1;
	while (hl && buf[hl - 1] == '.')
		buf[--hl] = '\0';
	for (size_t i = 0; i < g->n; i++)
		if (name_matches(g->names[i], buf, hl))
			return 1;
	return 0;
}

int vc_guard_control_open_net(const struct vc_guard *g)
{
	return g->control_net;
}

int vc_guard_is_loopback(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return 1;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return 0;
}

int vc_guard_listen_is_loopback(const char *listen)
{
	char host[128];
	struct in6_addr a6;
	struct in_addr a4;

	if (listen_host(listen, host, sizeof(host)) < 0 || !host[0])
		return 0;
	if (strcasecmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}
