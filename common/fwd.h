/* The client behind a reverse proxy: trusted_proxies entries (addresses and
 * CIDRs) and the forwarding headers a trusted proxy adds (RFC 7239
 * Forwarded: for=, X-Forwarded-For, X-Real-IP). Pure code: the daemon asks
 * it once per request (server/http/http.c) and every per-address rule uses
 * the answer. */
#ifndef VC_FWD_H
#define VC_FWD_H

#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

/* One trusted_proxies entry: an address and prefix, IPv4 kept as
 * ::ffff:a.b.c.d with the prefix counted over all 128 bits. */
struct vc_fwd_net {
	struct in6_addr a;
	unsigned bits;
};

/* Parses "10.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "[::1]" into *n;
 * 0, or -EINVAL (not an address, prefix out of range). */
int vc_fwd_net_parse(const char *s, struct vc_fwd_net *n);

/* 1 when sa (AF_INET or AF_INET6, v4-mapped counts as IPv4) is in one of
 * the nets; NULL or another family = 0. */
int vc_fwd_trusted(const struct vc_fwd_net *nets, size_t n, const struct sockaddr *sa);

/* The forwarding headers of one request; each list in the order the
 * headers came (a proxy may add a second header instead of extending the
 * first: the values read as one list joined by commas). */
struct vc_fwd_headers {
	const char *const *forwarded; /* Forwarded: values */
	size_t n_forwarded;
	const char *const *xff;       /* X-Forwarded-For: values */
	size_t n_xff;
	const char *x_real_ip;        /* X-Real-IP, or NULL */
};

enum vc_fwd_result {
	VC_FWD_NONE = 0, /* no forwarding header: the client is the peer */
	VC_FWD_ADDR,     /* *out holds the client's address */
	VC_FWD_HIDDEN,   /* forwarded, but the client is "unknown" or an
			  * obfuscated identifier (RFC 7239 6.3): not known */
	VC_FWD_BAD,      /* a header is malformed: not known */
};

/* 1 when any forwarding header is there (whoever sent it). */
int vc_fwd_present(const struct vc_fwd_headers *hd);

/* The client of a request whose peer is a trusted proxy: Forwarded when
 * present, else X-Forwarded-For, else X-Real-IP. In a list the right-most
 * entry that is not itself in nets is the client (entries left of it were
 * written by the client itself and prove nothing); when every entry is a
 * trusted proxy, the left-most. Ports and IPv6 brackets are dropped. *out
 * is written only for VC_FWD_ADDR (AF_INET for IPv4, else AF_INET6). */
enum vc_fwd_result vc_fwd_client(const struct vc_fwd_headers *hd, const struct vc_fwd_net *nets,
				 size_t n_nets, struct sockaddr_storage *out);

#endif
