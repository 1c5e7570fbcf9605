/* Log output to stderr: a timestamp on a terminal or plain file, a syslog
 * "<N>" priority prefix when stderr is the journal. One write() per line,
 * under a mutex, so lines from worker threads never interleave. Output
 * never blocks the caller when stderr is a socket (the journal) or a pipe:
 * a line that does not fit is dropped and counted (a line the socket took
 * only part of is finished first). Lines a client can cause go through the
 * per-site rate limiter (vc_log_limited). */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

int vc_log_level = VC_LOG_INFO;

/* Set once by vc_log_init() before any thread starts; read-only after. */
static int journal_prefix;

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const int syslog_prio[] = { 3, 4, 6, 7 };

/* Output and limiter state, shared by every thread that logs: the log is
 * one per process, so is its back-pressure. All of it under mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct vc_log_site *sites;      /* every site used so far */
static unsigned long dropped, dropped_told;
static char pending[1100];              /* the unsent tail of one line */
static size_t pending_len;

void vc_log_init(void)
{
	struct stat st;

	journal_prefix = getenv("JOURNAL_STREAM") != NULL;
	/* A pipe gets a non-blocking description of its own (through
	 * /proc/self/fd), so a stdout sharing the pipe stays blocking. */
	if (fstat(STDERR_FILENO, &st) == 0 && S_ISFIFO(st.st_mode)) {
		int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd > STDERR_FILENO) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
	}
}

/* Writes without blocking on a socket (MSG_DONTWAIT changes nothing shared);
 * other files are written as they are opened. Bytes written or -1. */
static ssize_t put(const char *b, size_t n)
{
	ssize_t w;

	do
		w = send(STDERR_FILENO, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w >= 0 || errno != ENOTSOCK)
		return w;
	do
		w = write(STDERR_FILENO, b, n);
	while (w < 0 && errno == EINTR);
	return w;
}

/* The rest of a partly written line first; 0 when it is out. Under mu. */
static int flush_pending(void)
{
	while (pending_len) {
		ssize_t w = put(pending, pending_len);

		if (w <= 0)
			return -1;
		memmove(pending, pending + w, pending_len - (size_t)w);
		pending_len -= (size_t)w;
	}
	return 0;
}

static void output(const char *line, size_t n)
{
	pthread_mutex_lock(&mu);
	if (flush_pending() < 0) {
		dropped++;
	} else {
		ssize_t w = put(line, n);

		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				dropped++;
		} else if ((size_t)w < n && n - (size_t)w <= sizeof(pending)) {
			memcpy(pending, line + w, n - (size_t)w);
			pending_len = n - (size_t)w;
		}
	}
	pthread_mutex_unlock(&mu);
}

unsigned long vc_log_dropped(void)
{
	pthread_mutex_lock(&mu);
	unsigned long d = dropped;
	pthread_mutex_unlock(&mu);
	return d;
}

int vc_log_parse_level(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcasecmp(s, level_names[i]) == 0)
			return i;
	if (strcasecmp(s, "warning") == 0)
		return VC_LOG_WARN;
	return -1;
}

/* Appends msg to line[n..cap) with control characters, DEL and backslash
 * written as \xHH (\n, \r, \t, \\ for the common ones): messages quote
 * client input (a decoded URL's "%0a" must not start a line of its own that
 * looks like ours) and camera names; one message is one line. Returns the
 * new length; a sequence that does not fit is dropped whole. */
static size_t escape(char *line, size_t n, size_t cap, const char *msg)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		char e[4];
		size_t k = 0;

		if (*p == '\n' || *p == '\r' || *p == '\t' || *p == '\\') {
			e[k++] = '\\';
			e[k++] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : *p == '\t' ? 't' : '\\';
		} else if (*p < 0x20 || *p == 0x7f) {
			e[k++] = '\\';
			e[k++] = 'x';
			e[k++] = hex[*p >> 4];
			e[k++] = hex[*p & 15];
		} else {
			e[k++] = (char)*p;
		}
		if (n + k > cap)
			break;
		memcpy(line + n, e, k);
		n += k;
	}
	return n;
}

/* Formats and writes one line of msg. errno is kept: callers log a
 * failure, then read errno to decide (a libmicrohttpd message logged
 * inside MHD_start_daemon turned EADDRINUSE into ENOTSOCK, and the
 * port-taken advice was not given). */
static void emit(int level, const char *prefix, const char *msg)
{
	char line[1024];
	size_t n;
	int saved_errno = errno;

	if (level < 0)
		level = 0;
	if (level > 3)
		level = 3;
	if (journal_prefix) {
		n = (size_t)snprintf(line, sizeof(line), "<%d>%s%s", syslog_prio[level],
				     prefix, *prefix ? " " : "");
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		n = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
		n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03ld %-5s %s%s",
				      ts.tv_nsec / 1000000, level_names[level], prefix,
				      *prefix ? " " : "");
	}
	n = escape(line, n < sizeof(line) ? n : sizeof(line), sizeof(line) - 1, msg);
	line[n++] = '\n';
	output(line, n);
	errno = saved_errno;
}

void vc_log_write(int level, const char *prefix, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, prefix, msg);
}

/* ---- rate limiting ---- */

/* The address without its port: "host:port" -> host, "[v6]:port" -> [v6]. */
static void addr_key(const char *addr, char *key, size_t len)
{
	size_t n;

	if (!addr) {
		key[0] = '\0';
		return;
	}
	if (addr[0] == '[') {
		const char *e = strchr(addr, ']');
		n = e ? (size_t)(e - addr) + 1 : strlen(addr);
	} else {
		const char *c = strchr(addr, ':');
		n = c && !strchr(c + 1, ':') ? (size_t)(c - addr) : strlen(addr);
	}
	if (n >= len)
		n = len - 1;
	memcpy(key, addr, n);
	key[n] = '\0';
}

/* Ends site's window when it is over; its summary (if lines were held
 * back) goes to sum, "" otherwise. Under mu. */
static void close_window(struct vc_log_site *s, long long now, char *sum, size_t len)
{
	sum[0] = '\0';
	if (!(s->passed + s->suppressed) || now - s->win_ms < VC_LOG_LIMIT_WINDOW_S * 1000LL)
		return;
	if (s->suppressed)
		snprintf(sum, len, "%s: %u more in the last %d s%s%s%s", s->kind, s->suppressed,
			 VC_LOG_LIMIT_WINDOW_S, s->last[0] ? " (last from " : "", s->last,
			 s->last[0] ? ")" : "");
	s->passed = s->suppressed = 0;
	s->last[0] = '\0';
	memset(s->a, 0, sizeof(s->a));
}

/* Counts the line in site's window: 1 when it may be written. Under mu. */
static int admit(struct vc_log_site *s, long long now, const char *key)
{
	int slot = -1;

	if (!(s->passed + s->suppressed))
		s->win_ms = now;
	for (int i = 0; key[0] && i < VC_LOG_LIMIT_NADDR && slot < 0; i++)
		if (s->a[i].n && strcmp(s->a[i].addr, key) == 0)
			slot = i;
	for (int i = 0; key[0] && i < VC_LOG_LIMIT_NADDR && slot < 0; i++)
		if (!s->a[i].n) {
			slot = i;
			snprintf(s->a[i].addr, sizeof(s->a[i].addr), "%s", key);
		}
	/* an address beyond the table counts against the site only */
	if (s->passed >= VC_LOG_LIMIT_SITE || (slot >= 0 && s->a[slot].n >= VC_LOG_LIMIT_ADDR)) {
		s->suppressed++;
		snprintf(s->last, sizeof(s->last), "%s", key);
		return 0;
	}
	s->passed++;
	if (slot >= 0)
		s->a[slot].n++;
	return 1;
}

static void limited(struct vc_log_site *s, long long now, const char *prefix, const char *addr,
		    const char *fmt, va_list ap)
{
	char key[48], sum[256], msg[1024];
	int pass;

	addr_key(addr, key, sizeof(key));
	pthread_mutex_lock(&mu);
	if (!s->linked) {
		s->linked = 1;
		s->prefix = prefix;
		s->next = sites;
		sites = s;
	}
	close_window(s, now, sum, sizeof(sum));
	pass = admit(s, now, key);
	pthread_mutex_unlock(&mu);
	if (sum[0])
		emit(s->level, s->prefix, sum);
	if (pass) {
		vsnprintf(msg, sizeof(msg), fmt, ap);
		emit(s->level, prefix, msg);
	}
}

void vc_log_limited(struct vc_log_site *site, const char *prefix, const char *addr,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	limited(site, vc_mono_ms(), prefix, addr, fmt, ap);
	va_end(ap);
}

void vc_log_limited_at(struct vc_log_site *site, long long now_ms, const char *prefix,
		       const char *addr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	limited(site, now_ms, prefix, addr, fmt, ap);
	va_end(ap);
}

void vc_log_tick_at(long long now_ms)
{
	char sum[256];
	unsigned long lost = 0;

	/* one summary per pass: emit() takes mu itself */
	for (;;) {
		struct vc_log_site *s, *found = NULL;

		pthread_mutex_lock(&mu);
		for (s = sites; s && !found; s = s->next) {
			close_window(s, now_ms, sum, sizeof(sum));
			if (sum[0])
				found = s;
		}
		if (!found) {
			if (flush_pending() == 0 && dropped > dropped_told) {
				lost = dropped - dropped_told;
				dropped_told = dropped;
			}
			pthread_mutex_unlock(&mu);
			break;
		}
		pthread_mutex_unlock(&mu);
		emit(found->level, found->prefix, sum);
	}
	if (lost) {
		snprintf(sum, sizeof(sum), "%lu lines dropped: the log output was not writable",
			 lost);
		emit(VC_LOG_WARN, "log:", sum);
	}
}

void vc_log_tick(void)
{
	vc_log_tick_at(vc_mono_ms());
}

void vc_log_flush(void)
{
	vc_log_tick_at(vc_mono_ms() + VC_LOG_LIMIT_WINDOW_S * 1000LL);
}
