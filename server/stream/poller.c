/* One-shot pollers (poller.h): who polls which picture, and until when they
 * count as demand. A fixed table per camera, no allocation. */
#include "server/stream/poller.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* Field by field: the struct has padding. */
static int same_picture(const struct vc_request *a, const struct vc_request *b)
{
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->fps == b->fps && a->quality == b->quality && a->rotate == b->rotate &&
	       a->flip == b->flip;
}

/* The address of peer without its port. */
static void peer_key(const struct sockaddr *peer, uint8_t addr[16], int *family)
{
	memset(addr, 0, 16);
	*family = 0;
	if (peer && peer->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)peer;

		memcpy(addr, &s4->sin_addr, 4);
		*family = AF_INET;
	} else if (peer && peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)peer;

		memcpy(addr, &s6->sin6_addr, 16);
		*family = AF_INET6;
	}
}

int poller_active(const struct poller *p, int64_t now)
{
	return now - p->last_us < POLLER_LINGER_MS * 1000LL;
}

int poller_note(struct pollers *ps, const struct sockaddr *peer, const struct vc_request *req,
		int64_t now)
{
	uint8_t addr[16];
	int family;
	unsigned oldest = 0;

	peer_key(peer, addr, &family);
	for (unsigned i = 0; i < ps->n; i++) {
		struct poller *p = &ps->p[i];

		if (p->family == family && !memcmp(p->addr, addr, 16) && same_picture(&p->req, req)) {
			p->last_us = now;
			return 0;
		}
		if (p->last_us < ps->p[oldest].last_us)
			oldest = i;
	}
	struct poller *p = ps->n < POLLER_MAX ? &ps->p[ps->n++] : &ps->p[oldest];
	memcpy(p->addr, addr, 16);
	p->family = family;
	p->req = *req;
	p->last_us = now;
	return 1;
}

unsigned poller_expire(struct pollers *ps, int64_t now)
{
	unsigned k = 0, gone = 0;

	for (unsigned i = 0; i < ps->n; i++) {
		if (poller_active(&ps->p[i], now))
			ps->p[k++] = ps->p[i];
		else
			gone++;
	}
	ps->n = k;
	return gone;
}

int64_t poller_next_lapse(const struct pollers *ps)
{
	int64_t next = 0;

	for (unsigned i = 0; i < ps->n; i++) {
		int64_t at = ps->p[i].last_us + POLLER_LINGER_MS * 1000LL;

		if (!next || at < next)
			next = at;
	}
	return next;
}
