/* sd_notify over an AF_UNIX datagram socket, and the watchdog timer. One
 * socket per process, opened at start so a ProtectSystem/chroot later does
 * not matter; sendto() per message because the receiver may restart. */
#define LOG_PREFIX "sdnotify: "
#include "server/sdnotify.h"

#include <errno.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

struct vc_sdnotify {
	int fd;                 /* -1 = not under systemd */
	struct sockaddr_un addr;
	socklen_t addrlen;
	uint64_t wd_usec;
	struct event *wd_timer;
	vc_sdnotify_health_cb health;
	void *opaque;
	int last_errno;         /* log each distinct send failure once */
	int unhealthy_logged;
};

static void wd_tick(evutil_socket_t fd, short what, void *arg)
{
	struct vc_sdnotify *n = arg;
	(void)fd;
	(void)what;
	if (n->health && !n->health(n->opaque)) {
		if (!n->unhealthy_logged)
			log_warn("unhealthy: withholding watchdog pings");
		n->unhealthy_logged = 1;
		return;
	}
	if (n->unhealthy_logged)
		log_info("healthy again: watchdog pings resume");
	n->unhealthy_logged = 0;
	vc_sdnotify_send(n, "WATCHDOG=1");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || s[0] == '-')
		return -EINVAL;
	*v = x;
	return 0;
}

int vc_sdnotify_new(struct event_base *base, vc_sdnotify_health_cb health, void *opaque,
		    struct vc_sdnotify **out)
{
	struct vc_sdnotify *n = calloc(1, sizeof(*n));
	const char *path = getenv("NOTIFY_SOCKET");
	const char *wd = getenv("WATCHDOG_USEC"), *wdpid = getenv("WATCHDOG_PID");
	int r;

	if (!n)
		return -ENOMEM;
	n->fd = -1;
	n->health = health;
	n->opaque = opaque;
	if (path && *path) {
		size_t len = strlen(path);
		if ((path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
			log_error("NOTIFY_SOCKET=%s: not an absolute path or @abstract name", path);
			free(n);
			return -EINVAL;
		}
		n->addr.sun_family = AF_UNIX;
		memcpy(n->addr.sun_path, path, len);
		if (path[0] == '@')
			n->addr.sun_path[0] = '\0'; /* abstract namespace: leading NUL, no terminator */
		n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
		n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (n->fd < 0) {
			r = -errno;
			log_error("socket: %s", strerror(-r));
			free(n);
			return r;
		}
	}
	uint64_t pid = 0;
	if (n->fd >= 0 && parse_u64(wd, &n->wd_usec) == 0 && n->wd_usec > 0 &&
	    (!wdpid || (parse_u64(wdpid, &pid) == 0 && pid == (uint64_t)getpid()))) {
		uint64_t half = n->wd_usec / 2;
		struct timeval tv = { .tv_sec = (time_t)(half / 1000000), .tv_usec = (suseconds_t)(half % 1000000) };
		n->wd_timer = event_new(base, -1, EV_PERSIST, wd_tick, n);
		if (!n->wd_timer || event_add(n->wd_timer, &tv) < 0) {
			log_error("watchdog timer: cannot create");
			vc_sdnotify_free(n);
			return -ENOMEM;
		}
		log_info("watchdog every %llu ms", (unsigned long long)(half / 1000));
	} else {
		n->wd_usec = 0;
	}
	/* Children (none today, but a helper later) must not ping for us. */
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	*out = n;
	return 0;
}

void vc_sdnotify_free(struct vc_sdnotify *n)
{
	if (!n)
		return;
	if (n->wd_timer)
		event_free(n->wd_timer);
	if (n->fd >= 0)
		close(n->fd);
	free(n);
}

int vc_sdnotify_send(struct vc_sdnotify *n, const char *msg)
{
	if (!n || n->fd < 0)
		return 0;
	if (sendto(n->fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&n->addr, n->addrlen) < 0) {
		int e = errno;
		if (e != n->last_errno)
			log_warn("send '%.20s': %s", msg, strerror(e));
		n->last_errno = e;
		return -e;
	}
	if (n->last_errno)
		log_info("notify socket reachable again");
	n->last_errno = 0;
	return 0;
}

int vc_sdnotify_ready(struct vc_sdnotify *n)
{
	return vc_sdnotify_send(n, "READY=1");
}

int vc_sdnotify_status(struct vc_sdnotify *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	memcpy(msg, "STATUS=", 7);
	va_start(ap, fmt);
	vsnprintf(msg + 7, sizeof(msg) - 7, fmt, ap);
	va_end(ap);
	/* One STATUS line: a newline would start another assignment. */
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return vc_sdnotify_send(n, msg);
}

int vc_sdnotify_reloading(struct vc_sdnotify *n)
{
	struct timespec ts;
	char msg[96];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	return vc_sdnotify_send(n, msg);
}

int vc_sdnotify_stopping(struct vc_sdnotify *n)
{
	return vc_sdnotify_send(n, "STOPPING=1");
}

uint64_t vc_sdnotify_watchdog_usec(const struct vc_sdnotify *n)
{
	return n->wd_usec;
}

int vc_sdnotify_enabled(const struct vc_sdnotify *n)
{
	return n && n->fd >= 0;
}
