/* Address groups for per-address limits, shared by the HTTP guards
 * (server/http/) and the fan-out's budget (server/stream/budget.c), which
 * must not depend on the HTTP layer. Plain data, no loop. */
#ifndef VC_GUARD_ADDR_H
#define VC_GUARD_ADDR_H

#include <sys/socket.h>

/* Who a per-address limit counts a peer as: an IPv4 address (also when
 * v4-mapped), or an IPv6 address's /64 (one host or one home network
 * usually holds a whole /64 and picks addresses in it at will). */
struct vc_guard_addr {
	unsigned char b[16];
};

/* Fills *k for sa (the rest of IPv6 zeroed, IPv4 as ::ffff:a.b.c.d);
 * 0, or -EAFNOSUPPORT (sa NULL or not IP: *k all zero, one group). */
int vc_guard_addr_key(const struct sockaddr *sa, struct vc_guard_addr *k);

/* 1 when a and b are the same group. */
int vc_guard_addr_eq(const struct vc_guard_addr *a, const struct vc_guard_addr *b);

#endif
