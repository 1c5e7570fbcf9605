/* The client behind a reverse proxy (see proxied.h). */
#define LOG_PREFIX "http:"
#include "server/http/proxied.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "server/http/guard.h"

/* Headers of one name kept per request: the last ones (a list reads from
 * the right, fwd.c). */
#define MAX_SAME 8

struct collect {
	const char *fwd[MAX_SAME], *xff[MAX_SAME], *real;
	size_t n_fwd, n_xff;
};

static void keep(const char **arr, size_t *n, const char *v)
{
	if (*n == MAX_SAME) {
		memmove(arr, arr + 1, (MAX_SAME - 1) * sizeof(*arr));
		(*n)--;
	}
	arr[(*n)++] = v;
}

static enum MHD_Result collect_one(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct collect *k = cls;

	(void)kind;
	if (!key || !value)
		return MHD_YES;
	if (strcasecmp(key, "Forwarded") == 0)
		keep(k->fwd, &k->n_fwd, value);
	else if (strcasecmp(key, "X-Forwarded-For") == 0)
		keep(k->xff, &k->n_xff, value);
	else if (strcasecmp(key, "X-Real-IP") == 0)
		k->real = value;
	return MHD_YES;
}

static const char *host_str(const struct sockaddr *sa, char *buf, size_t len)
{
	snprintf(buf, len, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
			  (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf,
			  (socklen_t)len);
	return buf;
}

void vc_proxied_resolve(const struct vc_fwd_net *nets, size_t n_nets, struct MHD_Connection *c,
			struct vc_proxied *out)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *peer = ci ? ci->client_addr : NULL;
	struct collect k = { .n_fwd = 0 };
	char ph[INET6_ADDRSTRLEN + 2];

	memset(out, 0, sizeof(*out));
	MHD_get_connection_values(c, MHD_HEADER_KIND, collect_one, &k);
	struct vc_fwd_headers hd = { k.fwd, k.n_fwd, k.xff, k.n_xff, k.real };
	if (!vc_fwd_present(&hd))
		return;
	if (!vc_fwd_trusted(nets, n_nets, peer)) {
		/* a client may send anything: only a loopback peer is worth a
		 * word (a proxy on this host nobody listed) */
		if (!vc_guard_is_loopback(peer))
			return;
		out->not_local = 1;
		log_info_lim("forwarded request from an untrusted proxy", host_str(peer, ph, sizeof(ph)),
			     "request from %s carries Forwarded/X-Forwarded-For/X-Real-IP but %s is "
			     "not in trusted_proxies: it counts as %s and not as a local client "
			     "(list the proxy in trusted_proxies so each client counts by its own address)",
			     ph, ph, ph);
		return;
	}
	switch (vc_fwd_client(&hd, nets, n_nets, &out->addr)) {
	case VC_FWD_ADDR:
		out->set = 1;
		return;
	case VC_FWD_HIDDEN:
		out->not_local = 1; /* the proxy hid its client: the proxy counts */
		return;
	case VC_FWD_BAD:
		out->not_local = 1;
		log_warn_lim("malformed forwarding header", host_str(peer, ph, sizeof(ph)),
			     "trusted proxy %s sent a malformed %s '%.80s': the proxy's address counts",
			     ph, k.n_fwd ? "Forwarded" : k.n_xff ? "X-Forwarded-For" : "X-Real-IP",
			     k.n_fwd ? k.fwd[k.n_fwd - 1] : k.n_xff ? k.xff[k.n_xff - 1] : k.real);
		return;
	case VC_FWD_NONE:
		return;
	}
}
