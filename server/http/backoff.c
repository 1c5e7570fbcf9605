/* The failed-login table (see backoff.h): a fixed array scanned linearly
 * (256 entries of 40 bytes: cheaper than the hash it protects). */
#include "server/http/backoff.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	uint8_t key[16]; /* IPv4 as v4-mapped, IPv6 /64 + zeros */
	time_t first;    /* start of the counting window */
	time_t last;     /* last failure, for eviction */
	time_t until;    /* blocked before this time */
	unsigned fails;
	int used;
};

struct vc_backoff {
	unsigned limit, window_s, block_s;
	struct ent e[VC_BACKOFF_SLOTS];
};

int vc_backoff_new(unsigned limit, unsigned window_s, unsigned block_s, struct vc_backoff **out)
{
	struct vc_backoff *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->limit = limit ? limit : 1;
	b->window_s = window_s;
	b->block_s = block_s;
	*out = b;
	return 0;
}

void vc_backoff_free(struct vc_backoff *b)
{
	free(b);
}

static int make_key(const struct sockaddr *sa, uint8_t key[16])
{
	memset(key, 0, 16);
	if (!sa)
		return -EINVAL;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &s4->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			memcpy(key, &s6->sin6_addr, 16); /* same key as plain IPv4 */
		else
			memcpy(key, &s6->sin6_addr, 8);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static struct ent *find(struct vc_backoff *b, const uint8_t key[16])
{
	for (unsigned i = 0; i < VC_BACKOFF_SLOTS; i++)
		if (b->e[i].used && memcmp(b->e[i].key, key, 16) == 0)
			return &b->e[i];
	return NULL;
}

unsigned vc_backoff_blocked(struct vc_backoff *b, const struct sockaddr *sa, time_t now)
{
	uint8_t key[16];
	struct ent *e;

	if (make_key(sa, key) < 0 || !(e = find(b, key)) || e->until <= now)
		return 0;
	return (unsigned)(e->until - now);
}

/* A free slot, else the least recently failed unblocked one, else the
 * blocked one whose block ends first. */
static struct ent *victim(struct vc_backoff *b, time_t now)
{
	struct ent *best = NULL;
	int best_blocked = 1;

	for (unsigned i = 0; i < VC_BACKOFF_SLOTS; i++) {
		struct ent *e = &b->e[i];
		if (!e->used)
			return e;
		int blocked = e->until > now;
		if (!best || (best_blocked && !blocked) ||
		    (blocked == best_blocked && (blocked ? e->until < best->until : e->last < best->last))) {
			best = e;
			best_blocked = blocked;
		}
	}
	return best;
}

int vc_backoff_fail(struct vc_backoff *b, const struct sockaddr *sa, time_t now)
{
	uint8_t key[16];
	struct ent *e;

	if (make_key(sa, key) < 0)
		return 0;
	if (!(e = find(b, key))) {
		e = victim(b, now);
		memset(e, 0, sizeof(*e));
		memcpy(e->key, key, 16);
		e->used = 1;
		e->first = now;
	}
	if (now - e->first >= (time_t)b->window_s) {
		e->first = now;
		e->fails = 0;
	}
	e->last = now;
	if (++e->fails >= b->limit) {
		e->until = now + (time_t)b->block_s;
		e->fails = 0;
		e->first = now;
		return 1;
	}
	return 0;
}

unsigned vc_backoff_count(const struct vc_backoff *b)
{
	unsigned n = 0;

	for (unsigned i = 0; i < VC_BACKOFF_SLOTS; i++)
		n += b->e[i].used != 0;
	return n;
}
