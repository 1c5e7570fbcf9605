/* Log output to stderr: a timestamp on a terminal or plain file, a syslog
 * "<N>" priority prefix when stderr is the journal. One write() per line so
 * lines from worker threads never interleave. */
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int vc_log_level = VC_LOG_INFO;

/* Set once by vc_log_init() before any thread starts; read-only after. */
static int journal_prefix;

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const int syslog_prio[] = { 3, 4, 6, 7 };

void vc_log_init(void)
{
	journal_prefix = getenv("JOURNAL_STREAM") != NULL;
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

void vc_log_write(int level, const char *prefix, const char *fmt, ...)
{
	char line[1024], msg[1024];
	size_t n;

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
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = escape(line, n < sizeof(line) ? n : sizeof(line), sizeof(line) - 1, msg);
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}
