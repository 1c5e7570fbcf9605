/* systemd's notify protocol without libsystemd: datagrams to $NOTIFY_SOCKET
 * (a path, or '@' for the abstract namespace). READY=1 once listening,
 * STATUS= lines, RELOADING=1 with MONOTONIC_USEC on reload, STOPPING=1, and
 * WATCHDOG=1 from a loop timer at half of $WATCHDOG_USEC, sent only while a
 * health callback says the daemon is healthy: a stuck loop or a failed check
 * lets systemd restart it. Everything is a no-op outside systemd. */
#ifndef VC_SDNOTIFY_H
#define VC_SDNOTIFY_H

#include <stdint.h>

struct event_base;
struct vc_sdnotify;

/* 1 = healthy (ping), 0 = skip this ping. Called on the loop thread. */
typedef int (*vc_sdnotify_health_cb)(void *opaque);

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID from the environment
 * (and unsets them, so children do not inherit them). *out is valid even
 * when not under systemd (messages are then dropped). 0 or -errno (bad
 * NOTIFY_SOCKET value, socket() failure; logged). */
int vc_sdnotify_new(struct event_base *base, vc_sdnotify_health_cb health, void *opaque,
		    struct vc_sdnotify **out);
void vc_sdnotify_free(struct vc_sdnotify *n);

/* Sends one message ("READY=1", "STATUS=...\n..."). 0, or -errno of the send
 * (logged once per distinct errno); 0 without a notify socket. */
int vc_sdnotify_send(struct vc_sdnotify *n, const char *msg);

int vc_sdnotify_ready(struct vc_sdnotify *n);
int vc_sdnotify_status(struct vc_sdnotify *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* RELOADING=1 with MONOTONIC_USEC (what Type=notify-reload expects); follow
 * with vc_sdnotify_ready() when the reload is done. */
int vc_sdnotify_reloading(struct vc_sdnotify *n);
int vc_sdnotify_stopping(struct vc_sdnotify *n);

/* 1 when running under systemd's notify protocol (a socket is set up). */
int vc_sdnotify_enabled(const struct vc_sdnotify *n);

/* Watchdog interval in microseconds (0 = no watchdog requested). */
uint64_t vc_sdnotify_watchdog_usec(const struct vc_sdnotify *n);

#endif
