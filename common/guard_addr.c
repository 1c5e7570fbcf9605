/* Address groups for per-address limits (guard_addr.h). */
#include "common/guard_addr.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

int vc_guard_addr_key(const struct sockaddr *sa, struct vc_guard_addr *k)
{
	memset(k, 0, sizeof(*k));
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		k->b[10] = k->b[11] = 0xff;
		memcpy(&k->b[12], &s4->sin_addr, 4);
		return 0;
	}
	if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		/* a v4-mapped peer (dual-stack socket) is its IPv4 address */
		memcpy(k->b, a->s6_addr, IN6_IS_ADDR_V4MAPPED(a) ? 16 : 8);
		return 0;
	}
	return -EAFNOSUPPORT;
}

int vc_guard_addr_eq(const struct vc_guard_addr *a, const struct vc_guard_addr *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}
