/* Who a request is from when it came through a reverse proxy: the peer's
 * address unless the peer is a trusted proxy (trusted_proxies), whose
 * Forwarded / X-Forwarded-For / X-Real-IP name the client (common/fwd.h).
 * http.c asks once per request; vc_http_peer_addr() answers with the result,
 * so every per-address rule (shares, poller, login back-off, log limits) and
 * the loopback test of the control class see the client, not the proxy. */
#ifndef VC_PROXIED_H
#define VC_PROXIED_H

#include <microhttpd.h>
#include <stddef.h>
#include <sys/socket.h>

#include "common/fwd.h"

struct vc_proxied {
	struct sockaddr_storage addr; /* the client, when set */
	int set;       /* 1: addr holds the forwarded client; 0: the peer is it */
	int not_local; /* forwarded from somewhere: never "local", whatever
			* the peer's address (a proxy on this host) */
};

/* Resolves the client of connection c's current request. A trusted peer's
 * malformed header (the peer counts) and forwarding headers from a loopback
 * peer that is not trusted (likely an unlisted proxy) are logged,
 * rate-limited. */
void vc_proxied_resolve(const struct vc_fwd_net *nets, size_t n_nets, struct MHD_Connection *c,
			struct vc_proxied *out);

#endif
