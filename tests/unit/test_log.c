/* Log lines: one message is one line whatever it quotes (control characters
 * escaped, so a client's "%0a" in a URL cannot forge a line of its own),
 * long messages are cut, never split. Rate-limited lines: a site's budget
 * per window and per address, one summary with the count when the window
 * ends, sites independent. A full socket as stderr: the writer never
 * blocks, whole lines only, the drop count reported. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "tests/unit/check.h"

/* What one vc_log_write call puts on stderr (captured through a file). */
static size_t capture(char *out, size_t cap, const char *fmt, const char *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	dup2(fileno(tmp), STDERR_FILENO);
	vc_log_write(VC_LOG_WARN, "test:", fmt, arg);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, cap - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return n;
}

static void escapes_controls(void)
{
	char out[4096];
	size_t n = capture(out, sizeof(out), "GET %s -> 404",
			   "/x\n2026-12-04 20:00:00.000 info  http: forged\r\t\x01\x7f\\ end");

	printf("  %s", out);
	CHECK(n > 0 && out[n - 1] == '\n' && strchr(out, '\n') == out + n - 1,
	      "more than one line: %s", out);
	CHECK(strstr(out, "test: GET /x\\n2026-12-04 20:00:00.000 info  http: forged\\r\\t\\x01"
			  "\\x7f\\\\ end -> 404\n") != NULL, "escaped: %s", out);
	CHECK(!strchr(out, '\r') && !strchr(out, '\x01') && !strchr(out, '\x7f'), "raw control");
}

static void long_line_cut(void)
{
	char out[8192], *big = malloc(3000);

	memset(big, '\n', 2999); /* each becomes two bytes: cut well before the end */
	big[2999] = '\0';
	size_t n = capture(out, sizeof(out), "%s", big);

	CHECK(n > 100 && n <= 1024 && out[n - 1] == '\n' && strchr(out, '\n') == out + n - 1,
	      "%zu bytes", n);
	CHECK(out[n - 2] == 'n' && out[n - 3] == '\\', "an escape was split: ...%s", out + n - 8);
	free(big);
}

/* stderr into a temporary file between begin() and end(). */
static FILE *cap_tmp;
static int cap_saved;

static void begin(void)
{
	cap_tmp = tmpfile();
	cap_saved = dup(STDERR_FILENO);
	dup2(fileno(cap_tmp), STDERR_FILENO);
}

static size_t end(char *out, size_t cap)
{
	size_t n;

	dup2(cap_saved, STDERR_FILENO);
	close(cap_saved);
	rewind(cap_tmp);
	n = fread(out, 1, cap - 1, cap_tmp);
	out[n] = '\0';
	fclose(cap_tmp);
	return n;
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static struct vc_log_site site_a = { .kind = "bad Host", .level = VC_LOG_INFO };
static struct vc_log_site site_b = { .kind = "503", .level = VC_LOG_INFO };

static void limit_window(void)
{
	static char out[65536];
	char addr[32];

	begin();
	/* one address floods: 3 lines pass */
	for (int i = 0; i < 100; i++) {
		snprintf(addr, sizeof(addr), "10.0.0.1:%d", 1000 + i);
		vc_log_limited_at(&site_a, 1000 + i, "test:", addr, "Host from %s", addr);
	}
	/* twenty others: the site's budget (VC_LOG_LIMIT_SITE = 5) holds */
	for (int i = 2; i < 22; i++) {
		snprintf(addr, sizeof(addr), "10.0.0.%d:80", i);
		vc_log_limited_at(&site_a, 2000, "test:", addr, "Host from %s", addr);
	}
	/* IPv6 keys by the bracketed address */
	for (int i = 0; i < 5; i++)
		vc_log_limited_at(&site_b, 1000, "test:", "[::1]:5", "503 from [::1]:%d", i);
	vc_log_tick_at(10999); /* window still open: nothing */
	vc_log_tick_at(11000);
	vc_log_tick_at(11500); /* once only */
	vc_log_limited_at(&site_a, 12000, "test:", "10.0.0.1:1", "Host from again");
	size_t n = end(out, sizeof(out));

	printf("%s", out);
	CHECK(n > 0, "no output");
	CHECK(count(out, "Host from 10.0.0.1:") == 3, "%u lines of the flooder",
	      count(out, "Host from 10.0.0.1:"));
	CHECK(count(out, "Host from 10.0.0.") == VC_LOG_LIMIT_SITE, "%u lines of site a in the window",
	      count(out, "Host from 10.0.0."));
	char want[128];

	snprintf(want, sizeof(want), "test: bad Host: %d more in the last 10 s (last from 10.0.0.21)\n",
		 120 - VC_LOG_LIMIT_SITE);
	CHECK(count(out, want) == 1, "summary of site a: want %s", want);
	CHECK(count(out, "503 from") == 3 &&
	      count(out, "test: 503: 2 more in the last 10 s (last from [::1])\n") == 1,
	      "site b: %u lines", count(out, "503 from"));
	CHECK(count(out, "more in the last") == 2, "%u summaries", count(out, "more in the last"));
	CHECK(count(out, "Host from again") == 1, "next window passes");
	CHECK(count(out, "\n") == VC_LOG_LIMIT_SITE + 3 + 2 + 1, "%u lines in all",
	      count(out, "\n"));
}

/* The summary also comes with the next line of the site when no tick ran. */
static void limit_summary_on_next(void)
{
	static struct vc_log_site s = { .kind = "k", .level = VC_LOG_WARN };
	char out[8192];

	begin();
	for (int i = 0; i < 15; i++)
		vc_log_limited_at(&s, 100000, "test:", NULL, "line %d", i);
	vc_log_limited_at(&s, 110000, "test:", NULL, "late");
	end(out, sizeof(out));
	CHECK(count(out, "line ") == VC_LOG_LIMIT_SITE, "%u lines", count(out, "line "));
	CHECK(strstr(out, "test: k: 10 more in the last 10 s\n") && strstr(out, "late") &&
	      strstr(out, "10 more") < strstr(out, "late"), "%s", out);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "log.nonblocking: FAIL a log write blocked\n";
	ssize_t w = write(STDOUT_FILENO, m, sizeof(m) - 1);
	(void)w;
	_exit(1);
}

/* stderr is a socket nobody reads (a stalled journal): logging goes on. */
static void nonblocking(void)
{
	int sv[2], saved = dup(STDERR_FILENO), small = 4096;
	static char out[1 << 20];
	size_t n = 0;
	unsigned long before = vc_log_dropped();

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	dup2(sv[0], STDERR_FILENO);
	signal(SIGALRM, on_alarm);
	alarm(10);
	for (int i = 0; i < 3000; i++)
		vc_log_write(VC_LOG_WARN, "test:", "line %d %0200d", i, 0);
	alarm(0);
	unsigned long lost = vc_log_dropped() - before;

	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	/* Read, then let the log write what it kept back (the rest of a cut
	 * line, then the count), until a round brings nothing new: two fixed
	 * rounds once left the count's line unread (the socket's buffer
	 * accounting lags the reads). */
	for (int round = 0, idle = 0; round < 50 && idle < 2; round++) {
		ssize_t r;
		size_t n0 = n;

		while (n < sizeof(out) - 1 && (r = read(sv[1], out + n, sizeof(out) - 1 - n)) > 0)
			n += (size_t)r;
		vc_log_tick_at(1LL << 40);
		idle = n == n0 && round > 0 ? idle + 1 : 0;
	}
	out[n] = '\0';
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(sv[0]);
	close(sv[1]);
	CHECK(lost > 0, "nothing dropped: the socket took 3000 lines?");
	char want[96];
	snprintf(want, sizeof(want), "log: %lu lines dropped: the log output was not writable\n",
		 lost);
	CHECK(strstr(out, want) != NULL, "no drop report \"%s\"", want);
	/* every line whole: "test: line N 000..0" or the drop report */
	unsigned lines = 0, bad = 0;
	for (char *p = out, *e; *p; p = e + 1) {
		if (!(e = strchr(p, '\n'))) {
			bad++;
			break;
		}
		*e = '\0';
		lines++;
		if (!(strstr(p, "test: line ") && strlen(strstr(p, "test: line ")) > 210) &&
		    !strstr(p, "log: ")) {
			printf("  bad line: %.80s\n", p);
			bad++;
		}
	}
	CHECK(bad == 0 && lines > 0, "%u of %u lines cut or mixed", bad, lines);
	printf("  %u lines through, %lu dropped\n", lines, lost);
}

/* A line written to a non-socket stderr (send() fails with ENOTSOCK,
 * then write()) leaves errno as the caller had it. */
static void errno_kept(void)
{
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);

	dup2(null, STDERR_FILENO);
	errno = EADDRINUSE;
	vc_log_write(VC_LOG_WARN, "test:", "bind failed");
	int e = errno;
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(null);
	CHECK(e == EADDRINUSE, "errno %d after a log line (want EADDRINUSE %d)", e, EADDRINUSE);
}

int main(void)
{
	vc_log_init();
	RUN("log", escapes_controls);
	RUN("log", long_line_cut);
	RUN("log", limit_window);
	RUN("log", limit_summary_on_next);
	RUN("log", nonblocking);
	RUN("log", errno_kept);
	CHECK_EXIT();
}
