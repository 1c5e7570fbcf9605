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

void vc_log_write(int level, const char *prefix, const char *fmt, ...)
{
	char line[1024];
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
	if (n < sizeof(line)) {
		va_list ap;

		va_start(ap, fmt);
		int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		va_end(ap);
		if (m > 0)
			n += (size_t)m;
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}
