/* The configuration reference cannot drift from the key rows: the tables
 * between conf/README.md's markers are exactly what vc_conf_reference()
 * (vcapd --print-config-reference) writes, and the commented example
 * conf/vcapd.conf shows every key of the rows and no other. Run from the
 * source tree's top (as tests/run-all.sh does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/conf_keys.h"

#define BEGIN "<!-- conf-reference: begin (vcapd --print-config-reference) -->\n"
#define END "<!-- conf-reference: end -->"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	int c;

	while (f && o && (c = fgetc(f)) != EOF)
		fputc(c, o);
	if (f)
		fclose(f);
	if (o)
		fclose(o);
	if (!f) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void readme_matches_rows(void)
{
	char *doc = slurp("conf/README.md"), *ref = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&ref, &len);

	if (o) {
		vc_conf_reference(o);
		fclose(o);
	}
	CHECK(doc && ref, "conf/README.md or the reference missing");
	if (doc && ref) {
		char *b = strstr(doc, BEGIN), *e = b ? strstr(b, END) : NULL;

		CHECK(b && e, "conf/README.md lacks the markers");
		if (b && e) {
			b += strlen(BEGIN);
			*e = '\0';
			CHECK(!strcmp(b, ref),
			      "conf/README.md differs from the rows: regenerate it with "
			      "build/vcapd --print-config-reference");
		}
	}
	free(doc);
	free(ref);
}

/* "key =" at a line's start, commented out (';') or not. */
static int example_has(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (*p == ';')
			p++;
		if (!strncmp(p, key, n) && !strncmp(p + n, " =", 2))
			return 1;
	}
	return 0;
}

static void example_lists_every_key(void)
{
	char *ex = slurp("conf/vcapd.conf");

	CHECK(ex != NULL, "conf/vcapd.conf missing");
	for (int cam = 0; ex && cam < 2; cam++) {
		size_t n;
		const struct vc_conf_key *t = vc_conf_keys(cam, &n);

		for (size_t i = 0; i < n; i++)
			CHECK(example_has(ex, t[i].name), "conf/vcapd.conf does not show '%s'", t[i].name);
	}
	/* and every "key =" line there is a key of the rows */
	for (char *p = ex; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char key[64];

		if (sscanf(p, ";%63[a-z_] =", key) == 1 || sscanf(p, "%63[a-z_] =", key) == 1)
			CHECK(vc_conf_key_find(key, 0) || vc_conf_key_find(key, 1),
			      "conf/vcapd.conf shows '%s', which no row has", key);
	}
	free(ex);
}

int main(void)
{
	RUN("conf_ref", readme_matches_rows);
	RUN("conf_ref", example_lists_every_key);
	CHECK_EXIT();
}
