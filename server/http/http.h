/* The HTTP server: libmicrohttpd daemons (one per listen address) driven by
 * the libevent loop (MHD's epoll fd is watched by libevent, MHD_run runs on
 * readiness and on MHD's own timeout; no thread per client, no polling), and
 * a routing table filled by vc_http_route() calls, so features add endpoints
 * without touching the dispatcher. All functions run on the loop thread. */
#ifndef VC_HTTP_H
#define VC_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

struct event_base;
struct vc_http;

/* Who may use a route: the auth class its requests are checked against
 * (server/http/auth_http.c maps these onto the config's auth_view,
 * auth_status and auth_control), or PUBLIC for what needs no credentials
 * ever (the web page's files). Every route names one: 0 is no class, and
 * vc_http_route refuses it, so a route added without a class keeps the
 * daemon from starting instead of being served unchecked. */
enum vc_http_class {
	VC_HTTP_CLASS_UNSET = 0, /* refused */
	VC_HTTP_VIEW,            /* pictures and streams */
	VC_HTTP_STATUS,          /* status JSON, metrics */
	VC_HTTP_CONTROL,         /* writes; the only class a non-GET route may have */
	VC_HTTP_PUBLIC,          /* open in every auth mode */
	VC_HTTP_CLASS_COUNT
};

/* "view", "status", "control", "public"; "?" for anything else. */
const char *vc_http_class_name(enum vc_http_class c);

/* One request as handlers see it. `state` survives suspend/resume: a handler
 * that suspends the connection (MHD_suspend_connection) is called again after
 * MHD_resume_connection with the same struct. */
struct vc_http_req {
	struct vc_http *srv;
	struct MHD_Connection *conn;
	const char *method;   /* "GET", "HEAD", "PUT"... */
	const char *url;      /* path without the query */
	const char *rest;     /* for prefix routes: the part after the prefix */
	enum vc_http_class cls; /* the matched route's class (the auth gate's input) */
	const char *body;     /* request body (PUT/POST), NUL-terminated; NULL when none */
	size_t body_len;
	void *state;          /* handler-owned; freed by state_free when the request ends */
	void (*state_free)(void *state);
	void *gate_state;     /* the gate's, likewise (a gate may suspend too) */
	void (*gate_state_free)(void *state);
	int calls;            /* how many times the handler ran for this request */
};

/* A handler queues a response (vc_http_send*, MHD_queue_response) or
 * suspends the connection; it returns MHD_YES, or MHD_NO to drop it. */
typedef enum MHD_Result (*vc_http_fn)(void *opaque, struct vc_http_req *r);

/* TLS 1.2 and 1.3 only: 1.0 and 1.1 are deprecated (RFC 8996). */
#define VC_HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* Requests with a longer request line or header line, or more header bytes
 * in all, are refused (414 / 431) before any handler runs (nginx refuses
 * lines past 8 KiB by default). */
#define VC_HTTP_MAX_LINE 8192
#define VC_HTTP_MAX_HEADERS 16384

struct vc_http_config {
	unsigned conn_limit;      /* all clients; 0 = 256 */
	unsigned per_ip_limit;    /* per address, IPv6 per /64 (guard.h); 0 = 64 */
	unsigned timeout_s;       /* no progress once the head is in; 0 = 30 */
	/* a connection gets this long to send a whole request head (also
	 * between requests on a kept-alive one); 0 = 5 */
	unsigned header_timeout_s;
	size_t mem_limit;         /* per-connection header/request memory; 0 = 32 KiB */
	size_t body_limit;        /* largest request body accepted; 0 = 64 KiB */
	/* TLS (ops): PEM text of the certificate chain and key; both NULL =
	 * plain HTTP. Must outlive h. */
	const char *tls_cert_pem, *tls_key_pem;
	/* GnuTLS priority string for those listeners; NULL =
	 * VC_HTTP_TLS_PRIORITIES. Must outlive h. */
	const char *tls_priorities;
	/* CORS (web): NULL = off (no Access-Control-* headers, OPTIONS as any
	 * unrouted method); "*" = any origin (the request's Origin is echoed);
	 * else the one origin allowed ("https://host[:port]"). Copied. */
	const char *cors_origin;
};

int vc_http_new(struct event_base *base, const struct vc_http_config *cfg, struct vc_http **out);

/* Starts listening on "ADDR:PORT" ("127.0.0.1:8080", "[::1]:8080",
 * "0.0.0.0:80", ":8080" = all IPv4). Port 0 picks a free port (logged).
 * Returns 0 or -errno (-EINVAL unparsable, -EADDRINUSE...). */
int vc_http_listen(struct vc_http *h, const char *addr);

/* Adds a route. `method` NULL = GET (and HEAD); "GET" also answers HEAD.
 * prefix = 1 matches every path starting with `path` (r->rest = the
 * remainder). cls is required: VC_HTTP_CLASS_UNSET or an unknown value, or
 * a non-GET method with a class other than CONTROL, is -EINVAL (logged), and
 * the daemon does not start. Routes are tried in order; the first match
 * wins. Strings must outlive h. 0, -EINVAL or -ENOSPC. */
int vc_http_route(struct vc_http *h, const char *method, const char *path, int prefix,
		  enum vc_http_class cls, vc_http_fn fn, void *opaque);
/* One row of a route table. cls sits before fn so that a row written
 * without a class does not compile. arg: the row matches only requests that
 * carry this query argument (mjpg-streamer's "/?action=..."), NULL = any. */
struct vc_http_route_def {
	const char *method, *path;
	int prefix;
	enum vc_http_class cls;
	vc_http_fn fn;
	const char *arg;
};
/* A table of routes sharing one opaque, added in order: 0, -EINVAL (a row
 * vc_http_route refuses) or -ENOSPC. */
int vc_http_routes(struct vc_http *h, const struct vc_http_route_def *t, size_t n, void *opaque);

/* The rows as registered, in order (tests, vcapd --routes): 0 with *out
 * filled (fn and opaque left out), -ENOENT past the end. */
struct vc_http_route_info {
	const char *method; /* "GET" for the GET/HEAD default */
	const char *path, *arg;
	int prefix;
	enum vc_http_class cls;
};
int vc_http_route_at(const struct vc_http *h, size_t i, struct vc_http_route_info *out);

/* The row a request resolves to, the same lookup requests get: its index,
 * or -ENOENT (no row for the path: 404) / -EPERM (rows for the path, none
 * for the method: 405). has_arg tells whether the request carries a query
 * argument (NULL = none does). */
int vc_http_lookup(const struct vc_http *h, const char *method, const char *url,
		   int (*has_arg)(void *ctx, const char *name), void *ctx);

/* The handler and class routed for an exact GET path, so an alias
 * (compatibility URLs) can delegate to it. 0 or -ENOENT. (ops) */
int vc_http_find(const struct vc_http *h, const char *path, vc_http_fn *fn, void **opaque,
		 enum vc_http_class *cls);

/* A gate runs after a request's route is found and before the handler
 * (authentication): it returns 0 to let the request through, or 1 after
 * queuing a response itself or suspending the connection (*res = the result
 * to return to MHD). A gate that suspended runs again after the resume, until
 * it returns 0 or answers; r->gate_state keeps its progress. One gate per
 * server; NULL removes it. (ops) */
typedef int (*vc_http_gate_fn)(void *opaque, struct vc_http_req *r, enum MHD_Result *res);
void vc_http_set_gate(struct vc_http *h, vc_http_gate_fn fn, void *opaque);

/* Changes the CORS origin (same values as vc_http_config.cors_origin,
 * copied) for the requests that follow: config reload. 0 or -ENOMEM. (web) */
int vc_http_set_cors(struct vc_http *h, const char *origin);

/* Sets trusted_proxies (the config's strings, common/fwd.h syntax) for the
 * requests that follow: their forwarding headers name the client, and their
 * connections count against max_clients only, not max_clients_per_ip.
 * 0, -EINVAL (an entry does not parse; nothing changed) or -ENOMEM. */
int vc_http_set_proxies(struct vc_http *h, char *const *list, size_t n);

/* Ends the server: suspended connections must already be resumed (stream
 * layer's shutdown); stops every daemon. */
void vc_http_free(struct vc_http *h);

/* Kicks the MHD daemons to run soon (after MHD_resume_connection). NULL is a
 * no-op (streams without HTTP, in unit tests). */
void vc_http_wake(struct vc_http *h);

/* Number of open connections over all daemons. */
unsigned vc_http_connections(const struct vc_http *h);

/* The socket of a plain-HTTP connection, which a handler may write itself
 * while the connection is suspended (streams); -1 on TLS. */
int vc_http_plain_socket(const struct vc_http *h, struct MHD_Connection *conn);

/* Seconds a connection may make no progress before it is dropped. */
unsigned vc_http_timeout_s(const struct vc_http *h);

/* Helpers for handlers. */
/* A query argument, or NULL. */
const char *vc_http_arg(const struct vc_http_req *r, const char *key);
/* The query arguments as one query string ("a=1&b=x%20y"), rebuilt from
 * what MHD decoded plus arguments handlers set (compat.c), re-encoded so
 * that common/params.h parses them; an argument without '=' stays bare;
 * arguments named `skip` (NULL = none) are left out. Returns the length, or
 * -E2BIG when it does not fit in buf (len bytes). */
int vc_http_query(const struct vc_http_req *r, const char *skip, char *buf, size_t len);
/* A request header, or NULL. */
const char *vc_http_header(const struct vc_http_req *r, const char *key);
/* Client address, or NULL: the peer's (MHD's), or when the peer is a
 * trusted proxy the client its forwarding headers name (proxied.h); every
 * per-address rule uses it. Valid while the request lives. */
const struct sockaddr *vc_http_peer_addr(const struct vc_http_req *r);
/* 1 when the client is on this machine (loopback) and the request was not
 * forwarded from elsewhere (a forwarding header from an unlisted proxy, or
 * a trusted proxy's client it could not name, is never local). */
int vc_http_peer_local(const struct vc_http_req *r);
/* Client address as text ("127.0.0.1:5555"); buf of 64 bytes. */
const char *vc_http_peer(const struct vc_http_req *r, char *buf, size_t len);

/* Sends a copy of data[0..len) with status and content type. */
enum MHD_Result vc_http_send(struct vc_http_req *r, unsigned status, const char *ctype,
			     const void *data, size_t len);
/* Sends a malloc'd buffer, taking ownership (freed by MHD). */
enum MHD_Result vc_http_send_owned(struct vc_http_req *r, unsigned status, const char *ctype,
				   char *data, size_t len);
/* JSON error body {"error":"...","status":N}; logged at debug. */
enum MHD_Result vc_http_error(struct vc_http_req *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Queues a response with the standard headers added (Cache-Control no-store
 * for live data, Access-Control-Allow-Origin when CORS is configured) and
 * drops our reference to it. */
enum MHD_Result vc_http_queue(struct vc_http_req *r, unsigned status, struct MHD_Response *resp);

#endif
