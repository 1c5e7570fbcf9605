/* Private to server/stream/: one-shot pollers (issue 21). A client that
 * fetches the same one-shot picture again and again (a timelapse, a
 * dashboard tile: /snapshot every 1-60 s) is a standing request for the
 * device mode, like a stream, until it stops polling: the policy (policy.c)
 * counts each address + picture for POLLER_LINGER_MS after its last request,
 * so the mode keeps serving it and its next snapshot switches nothing. Pure
 * bookkeeping: times come from the caller, no timer here. */
#ifndef VC_STREAM_POLLER_H
#define VC_STREAM_POLLER_H

#include <stdint.h>

#include "common/negotiate.h"

struct sockaddr;

/* How long a poller counts after its last request: the longest interval
 * the issue names (60 s), plus 15 s for a slow answer (a snapshot may wait
 * 5 s for its frame), a client's timer drift and a retry. Longer only keeps
 * a larger mode (CPU) for a poller that is gone; shorter makes every poll
 * of a 60 s poller beside a smaller stream switch up and back down. */
#define POLLER_LINGER_MS 75000
/* Pollers counted per camera: past this, the one seen longest ago is
 * forgotten (a client asking many sizes cannot grow the table). */
#define POLLER_MAX 32

struct poller {
	uint8_t addr[16];        /* IPv4 in the first 4 bytes; the port is not part of it
				  * (each poll is a new connection) */
	int family;              /* AF_INET, AF_INET6, 0 = unknown (one shared entry) */
	struct vc_request req;   /* the picture, resolved (policy_resolve) */
	int64_t last_us;         /* its last request (monotonic) */
};

struct pollers {
	struct poller p[POLLER_MAX];
	unsigned n;
};

/* A one-shot request for req from peer (NULL: unknown) at now: refreshes
 * that poller, else adds it. Returns 1 when it is new, 0 when refreshed. */
int poller_note(struct pollers *ps, const struct sockaddr *peer, const struct vc_request *req,
		int64_t now);
/* Whether p still counts at now. */
int poller_active(const struct poller *p, int64_t now);
/* Forgets the pollers that no longer count: how many. */
unsigned poller_expire(struct pollers *ps, int64_t now);
/* When the next poller stops counting (monotonic us), 0 = none. */
int64_t poller_next_lapse(const struct pollers *ps);

#endif
