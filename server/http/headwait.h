/* Connections that have not sent a whole request head yet. A flood of
 * half-open connections (a request line and never the blank line) would
 * hold every connection slot until its timeout; this keeps count of them
 * per client address so the accept path can refuse more from an address
 * that already has some waiting, while a new viewer from elsewhere still
 * gets a slot. Plain bookkeeping, no I/O; loop thread only. */
#ifndef VC_HEADWAIT_H
#define VC_HEADWAIT_H

#include <stdint.h>
#include <sys/socket.h>

/* Connections without a head one address may hold past the grace below.
 * It keeps one address from reaching the busy count alone (which would
 * limit every other address too); floods from many addresses meet the busy
 * rule. Above what a client leaves idle: browsers' preconnects, and
 * qa_badinput's 10 silent sockets beside which a request from the same
 * address is still answered (8 refused it). */
#define VC_HEADWAIT_PER_IP 16
/* Toward VC_HEADWAIT_PER_IP a connection counts only once it has gone this
 * long without its head: a real client sends it within milliseconds, while
 * a burst of connections it opened at once (a dashboard, a test) is
 * accepted before the loop has read any of their heads. Half-open floods
 * hold on for seconds. The busy rule counts every waiting connection. */
#define VC_HEADWAIT_GRACE_MS 500

struct vc_headwait;
struct vc_headwait_conn;

/* busy: from this many waiting connections on, an address that already
 * has one waiting gets no other (conn_limit / 4 leaves room for the rest).
 * 0 or -ENOMEM. */
int vc_headwait_new(unsigned busy, struct vc_headwait **out);
void vc_headwait_free(struct vc_headwait *w);

/* 1 when a new connection from sa may be accepted at now_ms (a monotonic
 * clock in milliseconds), 0 when its address has too many waiting past
 * the grace (see above). sa NULL = 1. */
int vc_headwait_admit(const struct vc_headwait *w, const struct sockaddr *sa, int64_t now_ms);

/* A connection from sa was accepted and waits for its head. The handle
 * (NULL when out of memory: the connection is then not counted) is given
 * to vc_headwait_got_head and vc_headwait_end. */
struct vc_headwait_conn *vc_headwait_start(struct vc_headwait *w, const struct sockaddr *sa,
					    int64_t now_ms);

/* Its head arrived: it no longer counts. Idempotent; NULL is ignored. */
void vc_headwait_got_head(struct vc_headwait_conn *c);

/* The connection closed: frees c. NULL is ignored. */
void vc_headwait_end(struct vc_headwait_conn *c);

/* Connections waiting for their head. */
unsigned vc_headwait_count(const struct vc_headwait *w);

#endif
