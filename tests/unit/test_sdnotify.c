/* sd_notify: a datagram socket bound here stands in for systemd (path and
 * abstract '@' names); message sequence, the watchdog timer pinging only while
 * healthy, WATCHDOG_PID for another process, and the no-systemd case. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "server/sdnotify.h"

static int listen_dgram(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	memcpy(a.sun_path, name, len);
	if (name[0] == '@')
		a.sun_path[0] = '\0';
	else
		unlink(name);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a,
			   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/'))) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Next datagram as a string ("" when none waiting). */
static const char *next_msg(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void sequence_on(const char *name)
{
	char buf[600];
	struct event_base *base = event_base_new();
	struct vc_sdnotify *n = NULL;
	int fd = listen_dgram(name);
	CHECK(fd >= 0, "bind %s: %s", name, strerror(errno));
	if (fd < 0 || !base)
		goto out;
	setenv("NOTIFY_SOCKET", name, 1);
	unsetenv("WATCHDOG_USEC");
	CHECK(vc_sdnotify_new(base, NULL, NULL, &n) == 0, "new");
	if (!n)
		goto out;
	CHECK(!getenv("NOTIFY_SOCKET"), "NOTIFY_SOCKET unset for children");
	CHECK(vc_sdnotify_watchdog_usec(n) == 0, "no watchdog asked");
	CHECK(vc_sdnotify_ready(n) == 0, "ready");
	CHECK(vc_sdnotify_status(n, "%d cams, %s", 2, "line\nbreak") == 0, "status");
	CHECK(vc_sdnotify_reloading(n) == 0, "reloading");
	CHECK(vc_sdnotify_ready(n) == 0, "ready again");
	CHECK(vc_sdnotify_stopping(n) == 0, "stopping");
	CHECK(strcmp(next_msg(fd, buf, sizeof(buf)), "READY=1") == 0, "1st: %s", buf);
	CHECK(strcmp(next_msg(fd, buf, sizeof(buf)), "STATUS=2 cams, line break") == 0, "2nd: %s", buf);
	next_msg(fd, buf, sizeof(buf));
	unsigned long long us = 0;
	CHECK(sscanf(buf, "RELOADING=1\nMONOTONIC_USEC=%llu", &us) == 1 && us > 0, "3rd: %s", buf);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long long now = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
	CHECK(us <= now && now - us < 5000000, "MONOTONIC_USEC is CLOCK_MONOTONIC (%llu vs %llu)", us, now);
	CHECK(strcmp(next_msg(fd, buf, sizeof(buf)), "READY=1") == 0, "4th: %s", buf);
	CHECK(strcmp(next_msg(fd, buf, sizeof(buf)), "STOPPING=1") == 0, "5th: %s", buf);
	CHECK(strcmp(next_msg(fd, buf, sizeof(buf)), "") == 0, "nothing more: %s", buf);
	/* The receiver going away is an error the caller sees, not a crash. */
	close(fd);
	fd = -1;
	if (name[0] == '/')
		unlink(name);
	CHECK(vc_sdnotify_ready(n) < 0, "send to a vanished socket fails");
out:
	vc_sdnotify_free(n);
	if (fd >= 0)
		close(fd);
	if (name[0] == '/')
		unlink(name);
	if (base)
		event_base_free(base);
}

static char path[64];

static void path_socket(void)
{
	sequence_on(path);
}

static void abstract_socket(void)
{
	char name[64];
	snprintf(name, sizeof(name), "@vcapd-test-sdnotify-%d", (int)getpid());
	sequence_on(name);
}

static int healthy;
/* the shortest time between two ticks (health asked) since reset, in ms:
 * over several ticks it shows the timer's period (see watchdog()) */
static long min_gap_ms, last_tick_ms;

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static int health(void *opaque)
{
	long now = now_ms();

	if (last_tick_ms && (min_gap_ms < 0 || now - last_tick_ms < min_gap_ms))
		min_gap_ms = now - last_tick_ms;
	last_tick_ms = now;
	(*(int *)opaque)++;
	return healthy;
}

static int count_pings(int fd)
{
	char buf[64];
	int pings = 0, other = 0;
	while (*next_msg(fd, buf, sizeof(buf))) {
		if (strcmp(buf, "WATCHDOG=1") == 0)
			pings++;
		else
			other++;
	}
	return other ? -other : pings;
}

static void run_for(struct event_base *base, int ms)
{
	struct timeval tv = { 0, ms * 1000 };
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Runs base until the watchdog has ticked at least `ticks` times (health
 * asked; 330 ms windows, 20 at most): under qemu-user on a loaded host a
 * 50 ms timer may not fire for hundreds of ms, so the checks count what the
 * ticks did rather than how many came in a fixed time. Returns the wall
 * time taken in ms. */
static long run_ticks(struct event_base *base, const int *calls, int ticks)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 20 && *calls < ticks; i++)
		run_for(base, 330);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000L;
}

static void watchdog(void)
{
	struct event_base *base = event_base_new();
	struct vc_sdnotify *n = NULL;
	int fd = listen_dgram(path), calls = 0;
	char pid[16];
	CHECK(fd >= 0 && base, "setup");
	if (fd < 0 || !base)
		goto out;
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "100000", 1); /* ping every 50 ms */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	CHECK(vc_sdnotify_new(base, health, &calls, &n) == 0, "new");
	if (!n)
		goto out;
	CHECK(vc_sdnotify_watchdog_usec(n) == 100000, "usec");
	CHECK(!getenv("WATCHDOG_USEC") && !getenv("WATCHDOG_PID"), "unset");
	/* every tick asks health and pings when healthy; never more often
	 * than every 50 ms. Ticks fall due at least 50 ms apart, so a window
	 * of ms holds at most ms / 50 + 1 due times, plus one tick that fell
	 * due before the window, while the loop was not run (between
	 * run_ticks calls), and runs at its start: ms / 50 + 2. */
	healthy = 1;
	calls = 0;
	min_gap_ms = -1;
	last_tick_ms = 0;
	long ms = run_ticks(base, &calls, 6);
	int p = count_pings(fd);
	CHECK(calls >= 6 && p == calls && p <= ms / 50 + 2, "healthy: %d pings, %d ticks in %ld ms at 50 ms",
	      p, calls, ms);
	/* and not slower: the period is half of WATCHDOG_USEC (systemd's
	 * advice). libevent schedules a persistent timer from its last due
	 * time, so a late tick is followed by an early one: the shortest gap
	 * is near the period even when the loop is starved */
	CHECK(min_gap_ms >= 0 && min_gap_ms < 90, "shortest gap between ticks %ld ms (period 50 ms)",
	      min_gap_ms);
	healthy = 0;
	calls = 0;
	ms = run_ticks(base, &calls, 4);
	p = count_pings(fd);
	CHECK(p == 0 && calls >= 4 && calls <= ms / 50 + 2, "unhealthy: %d pings, health asked %d times in %ld ms",
	      p, calls, ms);
	healthy = 1;
	calls = 0;
	ms = run_ticks(base, &calls, 2);
	p = count_pings(fd);
	CHECK(calls >= 2 && p == calls, "healthy again: %d pings, %d ticks in %ld ms", p, calls, ms);
	vc_sdnotify_free(n);
	n = NULL;
	/* WATCHDOG_PID naming another process: no watchdog for us. */
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "100000", 1);
	setenv("WATCHDOG_PID", "1", 1);
	CHECK(vc_sdnotify_new(base, health, &calls, &n) == 0, "new");
	if (n) {
		CHECK(vc_sdnotify_watchdog_usec(n) == 0, "other pid's watchdog ignored");
		run_for(base, 120);
		CHECK(count_pings(fd) == 0, "no pings");
	}
out:
	vc_sdnotify_free(n);
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (base)
		event_base_free(base);
}

static void no_systemd(void)
{
	struct event_base *base = event_base_new();
	struct vc_sdnotify *n = NULL;
	unsetenv("NOTIFY_SOCKET");
	setenv("WATCHDOG_USEC", "100000", 1);
	CHECK(vc_sdnotify_new(base, NULL, NULL, &n) == 0, "new without socket");
	if (n) {
		CHECK(vc_sdnotify_ready(n) == 0 && vc_sdnotify_stopping(n) == 0, "no-op sends");
		CHECK(vc_sdnotify_watchdog_usec(n) == 0, "no watchdog without a socket");
		vc_sdnotify_free(n);
	}
	CHECK(vc_sdnotify_send(NULL, "READY=1") == 0, "NULL handle");
	n = NULL;
	setenv("NOTIFY_SOCKET", "relative/sock", 1);
	CHECK(vc_sdnotify_new(base, NULL, NULL, &n) == -EINVAL && !n, "relative path refused");
	unsetenv("NOTIFY_SOCKET");
	event_base_free(base);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/vcapd-test-sdnotify-%d.sock", (int)getpid());
	RUN("sdnotify", path_socket);
	RUN("sdnotify", abstract_socket);
	RUN("sdnotify", watchdog);
	RUN("sdnotify", no_systemd);
	CHECK_EXIT();
}
