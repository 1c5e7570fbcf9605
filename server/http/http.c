/* libmicrohttpd glue: owns the MHD daemons (one per listen address), runs
 * them from the libevent loop, buffers request bodies and dispatches each
 * request through the route table. MHD runs in external epoll mode: its
 * epoll fd is one libevent read event, MHD_get_timeout arms one timer, so
 * idle clients and suspended streams cost nothing. A connection gets
 * header_timeout_s to send its request head and client_timeout once it
 * did; connections still waiting for their head are counted per address
 * (headwait.c) so a half-open flood cannot take every slot. */
#define LOG_PREFIX "http:"
#include "server/http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/clock.h"
#include "common/conf_keys.h"
#include "common/log.h"
#include "server/http/headwait.h"
#include "server/http/portowner.h"
#include "server/http/guard.h"
#include "server/http/proxied.h"

/* Our response headers a cross-origin script may read (beyond the CORS
 * safelisted ones). */
#define CORS_EXPOSE "X-Steps, X-Size, X-Fourcc, X-Format, X-Width, X-Height, X-Bytesperline, " \
	"X-Sizeimage, X-Colorspace, X-Colorimetry, X-Field, X-Timestamp, X-Frame-Seq, ETag, Retry-After"
#define MAX_DAEMONS 16
#define MAX_ROUTES 64

struct route {
	const char *method; /* NULL = GET/HEAD */
	const char *path;
	int prefix;
	enum vc_http_class cls;
	const char *arg;    /* query argument the request must carry, or NULL */
	vc_http_fn fn;
	void *opaque;
};

struct daemon_ev {
	struct vc_http *h;
	struct MHD_Daemon *d;
	struct event *io, *tmo;
	char addr[80];
};

/* Per-request bookkeeping (MHD's req_cls). */
struct req {
	struct vc_http_req pub;
	const struct route *route;
	char *body;
	size_t body_len, body_cap;
	int too_large;
	int gated; /* the gate let it through */
	char *url; /* copy of the path (MHD's may not outlive callbacks) */
	int nul_in_path;    /* the raw path has "%00" (the decoded one stops there) */
	int line_too_long;  /* the raw request target is over VC_HTTP_MAX_LINE */
	struct vc_proxied who; /* the client behind a trusted proxy, if any */
};

struct vc_http {
	struct event_base *base;
	struct vc_http_config cfg;
	struct daemon_ev dm[MAX_DAEMONS];
	size_t n_dm;
	struct route routes[MAX_ROUTES];
	size_t n_routes;
	vc_http_gate_fn gate; /* authentication (ops), may be NULL */
	void *gate_opaque;
	char *cors;           /* owned copy of cfg.cors_origin; NULL = CORS off */
	char *tls_prio;       /* owned copy of cfg.tls_priorities or the default */
	struct vc_headwait *hw; /* connections without a request head yet */
	/* open connections per client address group (IPv6: /64; guard.h),
	 * over all listen addresses: max_clients_per_ip. MHD's own per-IP
	 * limit counts whole IPv6 addresses, of which one host has 2^64 */
	struct conn_group *groups;
	size_t n_groups, cap_groups;
	struct vc_fwd_net *proxies; /* trusted_proxies */
	size_t n_proxies;
};

struct conn_group {
	struct vc_guard_addr k;
	unsigned n;
	int refused; /* refused since it was last under the limit (logged once) */
};

static void run_daemon(struct daemon_ev *de)
{
	MHD_UNSIGNED_LONG_LONG ms;

	MHD_run(de->d);
	if (MHD_get_timeout(de->d, &ms) == MHD_YES) {
		struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

		evtimer_add(de->tmo, &tv);
	} else {
		evtimer_del(de->tmo);
	}
}

static void on_io(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	run_daemon(arg);
}

static void mhd_log(void *cls, const char *fm, va_list ap)
{
	char buf[512];

	(void)cls;
	vsnprintf(buf, sizeof(buf), fm, ap);
	size_t n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = 0;
	/* accept errors and refusals come per connection: a flood must not
	 * become a log flood */
	log_warn_lim("libmicrohttpd", NULL, "mhd: %s", buf);
}

/* "a.b.c.d:port" or "[v6]:port" of sa ("?:0" when unknown). */
static const char *addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	} else if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
	}
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	return buf;
}

static enum MHD_Result group_admit(struct vc_http *h, const struct sockaddr *addr);
static void group_track(struct vc_http *h, const struct sockaddr *addr,
			enum MHD_ConnectionNotificationCode toe);

/* Accept policy: max_clients_per_ip per address group (group_admit), then
 * an address already holding connections that have not sent their head
 * gets no more once many are waiting (headwait.h). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct vc_http *h = cls;
	char peer[64];

	(void)len;
	if (group_admit(h, sa) == MHD_NO)
		return MHD_NO;
	if (vc_headwait_admit(h->hw, sa, vc_mono_ms()))
		return MHD_YES;
	log_info_lim("connections without a request head", addr_str(sa, peer, sizeof(peer)),
		     "%s: refused: it holds connections that sent no request head "
		     "(%u such in all)", peer, vc_headwait_count(h->hw));
	return MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct vc_http *h = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		*socket_context = vc_headwait_start(h->hw, ci ? ci->client_addr : NULL, vc_mono_ms());
		group_track(h, ci ? ci->client_addr : NULL, toe);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		vc_headwait_end(*socket_context);
		*socket_context = NULL;
		group_track(h, ci ? ci->client_addr : NULL, toe);
	}
}

/* The head is in: the connection leaves the waiting count and gets the
 * client timeout for the rest of the request and its response. */
static void got_head(struct vc_http *h, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	if (ci)
		vc_headwait_got_head(ci->socket_context);
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, h->cfg.timeout_s);
}

static struct conn_group *group_find(struct vc_http *h, const struct vc_guard_addr *k)
{
	for (size_t i = 0; i < h->n_groups; i++)
		if (vc_guard_addr_eq(&h->groups[i].k, k))
			return &h->groups[i];
	return NULL;
}

/* Accept policy, part 1: a connection over max_clients_per_ip from its
 * address group is closed at once (logged once until the group drops
 * below the limit). */
static enum MHD_Result group_admit(struct vc_http *h, const struct sockaddr *addr)
{
	struct vc_guard_addr k;

	/* a trusted proxy carries many clients: max_clients bounds it */
	if (vc_fwd_trusted(h->proxies, h->n_proxies, addr))
		return MHD_YES;
	vc_guard_addr_key(addr, &k);
	struct conn_group *g = group_find(h, &k);
	if (!g || g->n < h->cfg.per_ip_limit)
		return MHD_YES;
	if (!g->refused) {
		char host[INET6_ADDRSTRLEN] = "?";
		int v4 = IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)k.b);

		g->refused = 1;
		if (v4)
			inet_ntop(AF_INET, k.b + 12, host, sizeof(host));
		else
			inet_ntop(AF_INET6, k.b, host, sizeof(host));
		log_warn("client address %s%s has %u connections (max_clients_per_ip): refusing more",
			 host, v4 ? "" : "/64", g->n);
	}
	return MHD_NO;
}

/* Counts connections per address group as MHD opens and closes them. */
static void group_track(struct vc_http *h, const struct sockaddr *addr,
			enum MHD_ConnectionNotificationCode toe)
{
	struct vc_guard_addr k;

	vc_guard_addr_key(addr, &k);
	struct conn_group *g = group_find(h, &k);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		if (!g && h->n_groups == h->cap_groups) {
			size_t cap = h->cap_groups ? 2 * h->cap_groups : 16;
			struct conn_group *ng = realloc(h->groups, cap * sizeof(*ng));

			if (!ng)
				return; /* not counted: the limit is a bound, not an account */
			h->groups = ng;
			h->cap_groups = cap;
		}
		if (!g) {
			g = &h->groups[h->n_groups++];
			*g = (struct conn_group){ .k = k };
		}
		g->n++;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && g && g->n) {
		if (--g->n < h->cfg.per_ip_limit)
			g->refused = 0;
		if (!g->n) /* last one out: the slot takes the array's last group */
			*g = h->groups[--h->n_groups];
	}
}

static int method_matches(const struct route *rt, const char *method)
{
	if (!rt->method || strcmp(rt->method, "GET") == 0)
		return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	return strcmp(rt->method, method) == 0;
}

static int path_matches(const struct route *rt, const char *url)
{
	if (rt->prefix)
		return strncmp(url, rt->path, strlen(rt->path)) == 0;
	return strcmp(url, rt->path) == 0;
}

int vc_http_lookup(const struct vc_http *h, const char *method, const char *url,
		   int (*has_arg)(void *ctx, const char *name), void *ctx)
{
	int known = 0;

	for (size_t i = 0; i < h->n_routes; i++) {
		const struct route *rt = &h->routes[i];

		if (!path_matches(rt, url) || (rt->arg && !(has_arg && has_arg(ctx, rt->arg))))
			continue;
		known = 1;
		if (method_matches(rt, method))
			return (int)i;
	}
	return known ? -EPERM : -ENOENT;
}

static int conn_has_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name) != NULL;
}

/* The methods routed for url, "GET, HEAD, PUT" style ("" = none): the
 * Allow header of a 405 and the methods a CORS preflight may ask for. */
static void allowed_methods(const struct vc_http *h, const char *url, char *allow, size_t len)
{
	allow[0] = '\0';
	for (size_t i = 0; i < h->n_routes; i++) {
		const struct route *rt = &h->routes[i];
		const char *m = rt->method ? rt->method : "GET";

		if (!path_matches(rt, url) || strstr(allow, m))
			continue;
		snprintf(allow + strlen(allow), len - strlen(allow), "%s%s%s",
			 allow[0] ? ", " : "", m, strcmp(m, "GET") ? "" : ", HEAD");
	}
}

/* OPTIONS on a known path (RFC 9110 9.3.7): 204 with Allow, answered before
 * the auth gate (it tells nothing but the methods). With CORS on it is also
 * the preflight browsers send without credentials; with CORS off it carries
 * no Access-Control-* header, so a cross-origin preflight still fails. The
 * actual request is checked as usual. */
static enum MHD_Result options(struct vc_http_req *r, int cors)
{
	char allow[64];
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

	if (!resp)
		return MHD_NO;
	allowed_methods(r->srv, r->url, allow, sizeof(allow));
	strncat(allow, ", OPTIONS", sizeof(allow) - strlen(allow) - 1);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (cors) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods", allow);
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					"Authorization, Content-Type");
		MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
	}
	return vc_http_queue(r, MHD_HTTP_NO_CONTENT, resp);
}

/* MHD's first look at a request: the raw target, before percent-decoding,
 * so what only the raw form shows is kept: a "%00" in the path, which
 * decoding turns into the end of the string ("/snapshot%00.jpg" would be
 * served as /snapshot), and the target's length. What was seen is one of
 * four static objects, not memory: MHD may drop a request between this call
 * and the access handler (a header line it refuses itself, a client gone)
 * without calling on_completed, and an allocation made here leaked then. */
struct uri_seen {
	unsigned char nul_in_path, too_long;
};
static const struct uri_seen uri_seen[2][2] = { { { 0, 0 }, { 0, 1 } }, { { 1, 0 }, { 1, 1 } } };

static const struct uri_seen *seen_of(const void *p)
{
	const struct uri_seen *s = p;

	return s >= &uri_seen[0][0] && s <= &uri_seen[1][1] ? s : NULL;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	size_t path = strcspn(uri, "?");
	int nul = 0;

	(void)cls;
	(void)c;
	for (size_t i = 0; i + 2 < path; i++)
		if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0')
			nul = 1;
	return (void *)&uri_seen[nul][strlen(uri) > VC_HTTP_MAX_LINE];
}

struct header_sum {
	size_t total, longest;
};

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct header_sum *s = cls;
	size_t n = strlen(key) + 2 + (value ? strlen(value) : 0) + 2; /* "K: V\r\n" */

	(void)kind;
	s->total += n;
	if (n > s->longest)
		s->longest = n;
	return MHD_YES;
}

/* Requests refused before routing: 0, or the answer's status with a
 * message in msg. */
static unsigned refuse_request(const struct req *rq, char *msg, size_t len)
{
	struct header_sum s = { 0, 0 };

	if (rq->line_too_long) {
		snprintf(msg, len, "request target longer than %d bytes", VC_HTTP_MAX_LINE);
		return MHD_HTTP_URI_TOO_LONG;
	}
	MHD_get_connection_values(rq->pub.conn, MHD_HEADER_KIND, add_header, &s);
	if (s.longest > VC_HTTP_MAX_LINE || s.total > VC_HTTP_MAX_HEADERS) {
		snprintf(msg, len, "request headers too large (%zu bytes, longest line %zu; "
			 "limits %d and %d)", s.total, s.longest, VC_HTTP_MAX_HEADERS, VC_HTTP_MAX_LINE);
		return MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE;
	}
	if (rq->nul_in_path) {
		snprintf(msg, len, "NUL byte (%%00) in the path");
		return MHD_HTTP_BAD_REQUEST;
	}
	return 0;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version,
				 const char *upload, size_t *upload_size, void **req_cls)
{
	struct vc_http *h = cls;
	struct req *rq = *req_cls;
	const struct uri_seen *seen = seen_of(rq);

	(void)version;
	if (!rq || seen) { /* first call: what on_uri saw, if it was called */
		char msg[160];
		unsigned status;

		got_head(h, c);
		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*req_cls = rq; /* on_completed frees it from here on */
		if (seen) {
			rq->nul_in_path = seen->nul_in_path;
			rq->line_too_long = seen->too_long;
		}
		rq->url = strdup(url ? url : "/");
		if (!rq->url)
			return MHD_NO;
		rq->pub.srv = h;
		rq->pub.conn = c;
		rq->pub.method = method;
		rq->pub.url = rq->url;
		vc_proxied_resolve(h->proxies, h->n_proxies, c, &rq->who);
		if ((status = refuse_request(rq, msg, sizeof(msg))))
			return vc_http_error(&rq->pub, status, "%s", msg);
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (rq->too_large || rq->body_len + n > h->cfg.body_limit) {
			rq->too_large = 1;
			return MHD_YES;
		}
		if (rq->body_len + n + 1 > rq->body_cap) {
			size_t cap = (rq->body_len + n + 1) * 2;
			char *nb = realloc(rq->body, cap);

			if (!nb)
				return MHD_NO;
			rq->body = nb;
			rq->body_cap = cap;
		}
		memcpy(rq->body + rq->body_len, upload, n);
		rq->body_len += n;
		rq->body[rq->body_len] = 0;
		return MHD_YES;
	}
	rq->pub.method = method;
	if (rq->too_large)
		return vc_http_error(&rq->pub, MHD_HTTP_CONTENT_TOO_LARGE,
				     "request body larger than %zu bytes", h->cfg.body_limit);
	if (!rq->route) {
		/* No row, no answer but 404/405: nothing is served unclassified. */
		int i = vc_http_lookup(h, method, rq->url, conn_has_arg, c);

		if (i == -EPERM && strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0)
			return options(&rq->pub, h->cors != NULL);
		if (i == -EPERM)
			return vc_http_error(&rq->pub, MHD_HTTP_METHOD_NOT_ALLOWED,
					     "method %s not allowed on %s", method, rq->url);
		if (i < 0)
			return vc_http_error(&rq->pub, MHD_HTTP_NOT_FOUND, "no such path: %s",
					     rq->url);
		rq->route = &h->routes[i];
		rq->pub.cls = rq->route->cls;
		rq->pub.rest = rq->url + (rq->route->prefix ? strlen(rq->route->path) : strlen(rq->url));
	}
	if (h->gate && !rq->gated) { /* again after a resume, when the gate suspended */
		enum MHD_Result res = MHD_YES;

		if (h->gate(h->gate_opaque, &rq->pub, &res))
			return res;
		rq->gated = 1;
	}
	rq->pub.body = rq->body;
	rq->pub.body_len = rq->body_len;
	rq->pub.calls++;
	return rq->route->fn(rq->route->opaque, &rq->pub);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct vc_http *h = cls;
	struct req *rq = *req_cls;

	/* a kept-alive connection waits for its next head: header_timeout_s
	 * (MHD calls this with c still on its timeout list) */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
					  h->cfg.header_timeout_s);
	if (!rq || seen_of(rq))
		return;
	if (rq->pub.state_free)
		rq->pub.state_free(rq->pub.state);
	if (rq->pub.gate_state_free)
		rq->pub.gate_state_free(rq->pub.gate_state);
	free(rq->body);
	free(rq->url);
	free(rq);
	*req_cls = NULL;
}

int vc_http_new(struct event_base *base, const struct vc_http_config *cfg, struct vc_http **out)
{
	struct vc_http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->base = base;
	if (cfg)
		h->cfg = *cfg;
	if (!h->cfg.conn_limit)
		h->cfg.conn_limit = VC_CONF_DEF_MAX_CLIENTS;
	if (!h->cfg.per_ip_limit)
		h->cfg.per_ip_limit = VC_CONF_DEF_MAX_CLIENTS_PER_IP;
	if (!h->cfg.timeout_s)
		h->cfg.timeout_s = VC_CONF_DEF_CLIENT_TIMEOUT_S;
	if (!h->cfg.header_timeout_s)
		h->cfg.header_timeout_s = VC_CONF_DEF_HEADER_TIMEOUT_S;
	if (vc_headwait_new(h->cfg.conn_limit / 4, &h->hw) < 0) {
		free(h);
		return -ENOMEM;
	}
	if (!h->cfg.mem_limit)
		h->cfg.mem_limit = 128 * 1024;
	if (!h->cfg.body_limit)
		h->cfg.body_limit = 64 * 1024;
	h->tls_prio = strdup(h->cfg.tls_priorities ? h->cfg.tls_priorities : VC_HTTP_TLS_PRIORITIES);
	if (!h->tls_prio || vc_http_set_cors(h, h->cfg.cors_origin) < 0) {
		free(h->tls_prio);
		vc_headwait_free(h->hw);
		free(h);
		return -ENOMEM;
	}
	h->cfg.cors_origin = NULL; /* the caller's string may go; h->cors is ours */
	h->cfg.tls_priorities = NULL; /* likewise: h->tls_prio */
	*out = h;
	return 0;
}

/* "ADDR:PORT", "[V6]:PORT", ":PORT" -> sockaddr. */
static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[64];
	const char *port;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = 0;
		port = e + 2;
	} else {
		const char *e = strrchr(s, ':');

		if (!e || (size_t)(e - s) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, (size_t)(e - s));
		host[e - s] = 0;
		port = e + 1;
		if (!host[0])
			strcpy(host, "0.0.0.0");
	}
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	if (!*port || *end || p > 65535)
		return -EINVAL;

	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sl = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

int vc_http_listen(struct vc_http *h, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	if (h->n_dm >= MAX_DAEMONS)
		return -ENOSPC;
	if (parse_addr(addr, &ss, &sl) < 0) {
		log_error("bad listen address '%s' (want ADDR:PORT or [V6ADDR]:PORT)", addr);
		return -EINVAL;
	}
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	if (h->cfg.tls_cert_pem && h->cfg.tls_key_pem)
		flags |= MHD_USE_TLS;
	uint16_t port;
	if (ss.ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else {
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}

	struct daemon_ev *de = &h->dm[h->n_dm];
	de->h = h;
	de->d = MHD_start_daemon(flags, port, on_accept, h, on_access, h,
				 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
				 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				 MHD_OPTION_CONNECTION_LIMIT, h->cfg.conn_limit,
				 MHD_OPTION_CONNECTION_TIMEOUT, h->cfg.header_timeout_s,
				 MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->cfg.mem_limit,
				 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				 MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				 MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
				 /* TLS (ops): ignored by MHD unless MHD_USE_TLS is set */
				 h->cfg.tls_cert_pem ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END,
				 h->cfg.tls_cert_pem,
				 MHD_OPTION_HTTPS_MEM_KEY, h->cfg.tls_key_pem,
				 MHD_OPTION_HTTPS_PRIORITIES, h->tls_prio,
				 MHD_OPTION_END);
	if (!de->d) {
		int e = errno ? errno : EADDRINUSE;

		char why[400] = "";

		if (e == EADDRINUSE)
			vc_port_owner_advice("/proc", port, why, sizeof(why));
		log_error("cannot listen on %s: %s%s%s", addr, strerror(e), why[0] ? "; " : "", why);
		return -e;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(de->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di) {
		MHD_stop_daemon(de->d);
		log_error("%s: MHD has no epoll fd", addr);
		return -ENOTSUP;
	}
	de->io = event_new(h->base, di->epoll_fd, EV_READ | EV_PERSIST, on_io, de);
	de->tmo = evtimer_new(h->base, on_io, de);
	if (!de->io || !de->tmo || event_add(de->io, NULL) < 0) {
		if (de->io)
			event_free(de->io);
		if (de->tmo)
			event_free(de->tmo);
		MHD_stop_daemon(de->d);
		return -ENOMEM;
	}
	const union MHD_DaemonInfo *pi = MHD_get_daemon_info(de->d, MHD_DAEMON_INFO_BIND_PORT);
	if (pi)
		port = pi->port;
	snprintf(de->addr, sizeof(de->addr), "%s", addr);
	h->n_dm++;
	log_info("listening on %s (port %u)", addr, (unsigned)port);
	if (flags & MHD_USE_TLS)
		log_info("%s: TLS priorities: %s", addr, h->tls_prio);
	return 0;
}

int vc_http_find(const struct vc_http *h, const char *path, vc_http_fn *fn, void **opaque,
		 enum vc_http_class *cls)
{
	for (size_t i = 0; i < h->n_routes; i++) {
		const struct route *rt = &h->routes[i];

		if (!rt->prefix && !rt->arg && strcmp(rt->path, path) == 0 &&
		    (!rt->method || strcmp(rt->method, "GET") == 0)) {
			*fn = rt->fn;
			*opaque = rt->opaque;
			*cls = rt->cls;
			return 0;
		}
	}
	return -ENOENT;
}

int vc_http_route_at(const struct vc_http *h, size_t i, struct vc_http_route_info *out)
{
	if (i >= h->n_routes)
		return -ENOENT;
	const struct route *rt = &h->routes[i];
	*out = (struct vc_http_route_info){ rt->method ? rt->method : "GET", rt->path, rt->arg,
					    rt->prefix, rt->cls };
	return 0;
}

const char *vc_http_class_name(enum vc_http_class c)
{
	static const char *const names[VC_HTTP_CLASS_COUNT] = {
		[VC_HTTP_VIEW] = "view", [VC_HTTP_STATUS] = "status",
		[VC_HTTP_CONTROL] = "control", [VC_HTTP_PUBLIC] = "public",
	};

	return (unsigned)c < VC_HTTP_CLASS_COUNT && names[c] ? names[c] : "?";
}

void vc_http_set_gate(struct vc_http *h, vc_http_gate_fn fn, void *opaque)
{
	h->gate = fn;
	h->gate_opaque = opaque;
}

/* Deny by default: a row that does not say who may use it, or a write
 * (any method but GET/HEAD) not classed as control, is a programming error
 * the daemon refuses to start with rather than serve unchecked. */
static int add_route(struct vc_http *h, const struct vc_http_route_def *d, void *opaque)
{
	const char *m = d->method ? d->method : "GET";
	const char *why = NULL;

	if (!d->path || d->path[0] != '/' || !d->fn)
		why = "no path or handler";
	else if (d->cls <= VC_HTTP_CLASS_UNSET || d->cls >= VC_HTTP_CLASS_COUNT)
		why = "no auth class";
	else if (strcmp(m, "GET") != 0 && d->cls != VC_HTTP_CONTROL)
		why = "a write must be class control";
	if (why) {
		log_error("route %s %s refused: %s", m, d->path ? d->path : "(null)", why);
		return -EINVAL;
	}
	if (h->n_routes >= MAX_ROUTES)
		return -ENOSPC;
	h->routes[h->n_routes++] = (struct route){ d->method, d->path, d->prefix, d->cls, d->arg,
						   d->fn, opaque };
	return 0;
}

int vc_http_routes(struct vc_http *h, const struct vc_http_route_def *t, size_t n, void *opaque)
{
	for (size_t i = 0; i < n; i++) {
		int e = add_route(h, &t[i], opaque);

		if (e < 0)
			return e;
	}
	return 0;
}

int vc_http_route(struct vc_http *h, const char *method, const char *path, int prefix,
		  enum vc_http_class cls, vc_http_fn fn, void *opaque)
{
	const struct vc_http_route_def d = { method, path, prefix, cls, fn, NULL };

	return add_route(h, &d, opaque);
}

int vc_http_set_cors(struct vc_http *h, const char *origin)
{
	char *c = NULL;

	if (origin && !(c = strdup(origin)))
		return -ENOMEM;
	free(h->cors);
	h->cors = c;
	return 0;
}

int vc_http_set_proxies(struct vc_http *h, char *const *list, size_t n)
{
	struct vc_fwd_net *nets = n ? calloc(n, sizeof(*nets)) : NULL;

	if (n && !nets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (vc_fwd_net_parse(list[i], &nets[i]) < 0) {
			free(nets);
			return -EINVAL;
		}
	free(h->proxies);
	h->proxies = nets;
	h->n_proxies = n;
	return 0;
}

void vc_http_wake(struct vc_http *h)
{
	if (!h) /* streams without HTTP (unit tests) */
		return;
	for (size_t i = 0; i < h->n_dm; i++)
		event_active(h->dm[i].io, EV_READ, 0);
}

int vc_http_plain_socket(const struct vc_http *h, struct MHD_Connection *conn)
{
	if (h->cfg.tls_cert_pem && h->cfg.tls_key_pem)
		return -1; /* TLS: only MHD may write the socket */
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? (int)ci->connect_fd : -1;
}

unsigned vc_http_timeout_s(const struct vc_http *h)
{
	return h->cfg.timeout_s;
}

unsigned vc_http_connections(const struct vc_http *h)
{
	unsigned n = 0;

	for (size_t i = 0; i < h->n_dm; i++) {
		const union MHD_DaemonInfo *di =
			MHD_get_daemon_info(h->dm[i].d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (di)
			n += di->num_connections;
	}
	return n;
}

void vc_http_free(struct vc_http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_dm; i++) {
		event_free(h->dm[i].io);
		event_free(h->dm[i].tmo);
		MHD_stop_daemon(h->dm[i].d);
	}
	vc_headwait_free(h->hw);
	free(h->cors);
	free(h->tls_prio);
	free(h->groups);
	free(h->proxies);
	free(h);
}

const char *vc_http_arg(const struct vc_http_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

struct query_buf {
	char *p;
	size_t len, cap;
	int full;
	const char *skip;
};

static void query_put(struct query_buf *q, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *c = (const unsigned char *)s; *c && !q->full; c++) {
		int plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.' ||
			    *c == '~';
		size_t need = plain ? 1 : 3;

		if (q->len + need >= q->cap) {
			q->full = 1;
			break;
		}
		if (plain) {
			q->p[q->len++] = (char)*c;
		} else {
			q->p[q->len++] = '%';
			q->p[q->len++] = hex[*c >> 4];
			q->p[q->len++] = hex[*c & 15];
		}
	}
}

static void query_sep(struct query_buf *q, char c)
{
	if (q->len + 1 < q->cap)
		q->p[q->len++] = c;
	else
		q->full = 1;
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct query_buf *q = cls;

	(void)kind;
	if (q->skip && strcmp(key, q->skip) == 0)
		return MHD_YES;
	if (q->len)
		query_sep(q, '&');
	query_put(q, key);
	if (value) {
		query_sep(q, '=');
		query_put(q, value);
	}
	return q->full ? MHD_NO : MHD_YES;
}

int vc_http_query(const struct vc_http_req *r, const char *skip, char *buf, size_t len)
{
	struct query_buf q = { buf, 0, len, len == 0, skip };

	if (len)
		buf[0] = 0;
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.full)
		return -E2BIG;
	buf[q.len] = 0;
	return (int)q.len;
}

const char *vc_http_header(const struct vc_http_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

/* Every vc_http_req is the pub member of a struct req (on_access). */
static const struct req *req_of(const struct vc_http_req *r)
{
	return (const struct req *)(const void *)((const char *)r - offsetof(struct req, pub));
}

const struct sockaddr *vc_http_peer_addr(const struct vc_http_req *r)
{
	const struct req *rq = req_of(r);
	const union MHD_ConnectionInfo *ci;

	if (rq->who.set)
		return (const struct sockaddr *)&rq->who.addr;
	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	return ci ? ci->client_addr : NULL;
}

int vc_http_peer_local(const struct vc_http_req *r)
{
	return !req_of(r)->who.not_local && vc_guard_is_loopback(vc_http_peer_addr(r));
}

const char *vc_http_peer(const struct vc_http_req *r, char *buf, size_t len)
{
	return addr_str(vc_http_peer_addr(r), buf, len);
}

enum MHD_Result vc_http_queue(struct vc_http_req *r, unsigned status, struct MHD_Response *resp)
{
	if (!resp)
		return MHD_NO;
	if (!MHD_get_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	const char *cors = r->srv->cors;
	if (cors && !MHD_get_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN)) {
		/* "*" echoes the Origin (Vary tells caches the answer depends on it) */
		const char *origin = vc_http_header(r, "Origin");

		if (strcmp(cors, "*") == 0 && origin && *origin) {
			MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Origin");
			cors = origin;
		}
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, cors);
		/* scripts of the other origin may read what a picture is (/raw) */
		MHD_add_response_header(resp, "Access-Control-Expose-Headers", CORS_EXPOSE);
	}
	enum MHD_Result ret = MHD_queue_response(r->conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result vc_http_send(struct vc_http_req *r, unsigned status, const char *ctype,
			     const void *data, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);

	if (!resp)
		return MHD_NO;
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	return vc_http_queue(r, status, resp);
}

enum MHD_Result vc_http_send_owned(struct vc_http_req *r, unsigned status, const char *ctype,
				   char *data, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);

	if (!resp) {
		free(data);
		return MHD_NO;
	}
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	return vc_http_queue(r, status, resp);
}

enum MHD_Result vc_http_error(struct vc_http_req *r, unsigned status, const char *fmt, ...)
{
	char msg[384], body[1024];
	va_list ap;
	size_t o = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_debug("%s %s -> %u %s", r->method, r->url, status, msg);
	o += (size_t)snprintf(body, sizeof(body), "{\"error\":\"");
	/* JSON string escape: the message may quote client input. */
	for (const unsigned char *p = (const unsigned char *)msg; *p && o < sizeof(body) - 40; p++) {
		if (*p == '"' || *p == '\\')
			o += (size_t)snprintf(body + o, sizeof(body) - o, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(body + o, sizeof(body) - o, "\\u%04x", *p);
		else
			body[o++] = (char)*p;
	}
	o += (size_t)snprintf(body + o, sizeof(body) - o, "\",\"status\":%u}\n", status);
	struct MHD_Response *resp = MHD_create_response_from_buffer(o, body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "2");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
		/* Allow lists the methods routed for this path. */
		char allow[64];

		allowed_methods(r->srv, r->url, allow, sizeof(allow));
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	}
	return vc_http_queue(r, status, resp);
}
