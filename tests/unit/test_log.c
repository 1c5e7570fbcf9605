/* Log lines: one message is one line whatever it quotes (control characters
 * escaped, so a client's "%0a" in a URL cannot forge a line of its own),
 * long messages are cut, never split. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	vc_log_init();
	RUN("log", escapes_controls);
	RUN("log", long_line_cut);
	CHECK_EXIT();
}
