/* Per-address back-off for failed logins: after `limit` password checks
 * failed from one address within `window_s` seconds, further checks from it
 * are refused (429) for `block_s` seconds without running the hash. A fixed
 * table: many addresses evict the least recently seen (unblocked ones
 * first), so memory stays bounded whatever the attacker does. IPv6 peers
 * count per /64 (one host usually owns a whole /64). Loop thread only. */
#ifndef VC_BACKOFF_H
#define VC_BACKOFF_H

#include <sys/socket.h>
#include <time.h>

#define VC_BACKOFF_SLOTS 256

struct vc_backoff;

/* 0 or -ENOMEM. limit >= 1. */
int vc_backoff_new(unsigned limit, unsigned window_s, unsigned block_s, struct vc_backoff **out);
void vc_backoff_free(struct vc_backoff *b);

/* Seconds the address stays blocked (>= 1), or 0 when it may try. NULL
 * address = 0. */
unsigned vc_backoff_blocked(struct vc_backoff *b, const struct sockaddr *sa, time_t now);

/* Records one failed check from the address: 1 when this one starts a
 * block (log it), else 0. */
int vc_backoff_fail(struct vc_backoff *b, const struct sockaddr *sa, time_t now);

/* Addresses in the table (for tests and metrics). */
unsigned vc_backoff_count(const struct vc_backoff *b);

#endif
