/* The HTTP side of authentication: the endpoint class of a route's class
 * (the router found the route; auth never looks at the path), and the gate (vc_http_set_gate) run before every handler: the Host
 * check (guard.h), control writes kept to loopback while auth_control is
 * open, the class policy with 401 + WWW-Authenticate, password hashes on a
 * worker thread while the connection is suspended, and 429 for addresses
 * with too many failed logins (backoff.h). */
#ifndef VC_AUTH_HTTP_H
#define VC_AUTH_HTTP_H

#include <microhttpd.h>

#include "server/http/auth.h"
#include "server/http/guard.h"
#include "server/http/http.h"

struct event_base;
struct vc_auth_gate;

/* Failed password checks from one address (IPv6: /64) within the window
 * before it gets 429 for VC_AUTH_BLOCK_S seconds; hashes queued at once,
 * and hashes started per second (burst: VC_AUTH_HASH_BURST), before more
 * logins get 503. */
#define VC_AUTH_FAIL_LIMIT 10
#define VC_AUTH_FAIL_WINDOW_S 60
#define VC_AUTH_BLOCK_S 60
#define VC_AUTH_MAX_PENDING 16
#define VC_AUTH_HASH_RATE 10
#define VC_AUTH_HASH_BURST 20

/* The auth class (enum vc_auth_class) checked for requests of a route of
 * class c, -1 for PUBLIC (no credentials), -EINVAL for no valid class
 * (the gate refuses those: deny by default). */
int vc_auth_class_of(enum vc_http_class c);

/* auth and guard point to the app's current objects, which a reload swaps
 * in place (*auth NULL = no auth configured; *guard must be set). Starts one
 * worker thread for password hashes. 0 or -errno. */
int vc_auth_gate_new(struct event_base *base, struct vc_http *http, struct vc_auth **auth,
		     struct vc_guard **guard, struct vc_auth_gate **out);
/* Before vc_http_free: finishes queued hashes (their connections resume and
 * are answered or closed with the daemon). NULL is a no-op. */
void vc_auth_gate_free(struct vc_auth_gate *g);

/* Logs a warning for every endpoint class anyone who reaches a non-loopback
 * listen address may use without credentials (a NULL = no auth at all). */
void vc_auth_warn_open(const struct vc_auth *a, const struct vc_guard *g,
		       const char *const *listen, size_t n_listen);

/* vc_http_gate_fn; opaque is the struct vc_auth_gate. */
int vc_auth_gate(void *opaque, struct vc_http_req *r, enum MHD_Result *res);

#endif
