/* The config file (common/conf.c): any text parses or gives errors, each
 * "fname:line: message"; what parses prints (vc_conf_print) to text that
 * parses again and prints the same. */
#include <errno.h>

#include "tests/fuzz/fuzz.h"

#include "common/conf.h"
#include "common/log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	return 0;
}

/* The config printed into a heap buffer (freed by the caller). */
static char *print(const struct vc_conf *c, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	FUZZ_ASSERT(f);
	FUZZ_ASSERT(vc_conf_print(c, f, 0) == 0);
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1), err[1024];
	struct vc_conf *c = NULL, *c2 = NULL;

	FUZZ_ASSERT(text);
	memcpy(text, data, size);
	memset(err, 0xff, sizeof(err));
	int r = vc_conf_parse(text, size, "fuzz.conf", &c, err, sizeof(err));
	if (r != 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ENOMEM);
		FUZZ_ASSERT(memchr(err, '\0', sizeof(err)));
		FUZZ_ASSERT(strncmp(err, "fuzz.conf:", 10) == 0);
		free(text);
		return 0;
	}
	size_t l1, l2;
	char *p1 = print(c, &l1);

	r = vc_conf_parse(p1, l1, "fuzz.conf", &c2, err, sizeof(err)); /* same name: it is printed */
	if (r != 0)
		fprintf(stderr, "printed config does not parse: %s\n---\n%s---\n", err, p1);
	FUZZ_ASSERT(r == 0);
	char *p2 = print(c2, &l2);
	FUZZ_ASSERT(l1 == l2 && memcmp(p1, p2, l1) == 0);
	free(p1);
	free(p2);
	vc_conf_free(c2);
	vc_conf_free(c);
	free(text);
	return 0;
}
