/* Reading, printing and comparing a config key's value as its row says
 * (see conf_keys.h); the rows are common/conf_server.c and conf_cam.c. */
#include "common/conf_keys.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* INT and ENUM fields: 1 or 2 bytes unsigned (uint8_t, uint16_t), or 4
 * bytes (int, unsigned, uint32_t: their values fit an int32_t). */
static long int_get(const void *base, size_t off, size_t size)
{
	const char *p = (const char *)base + off;
	uint8_t b;
	uint16_t h;
	int32_t w;

	switch (size) {
	case 1:
		memcpy(&b, p, 1);
		return b;
	case 2:
		memcpy(&h, p, 2);
		return h;
	default:
		memcpy(&w, p, 4);
		return w;
	}
}

static void int_set(void *base, size_t off, size_t size, long x)
{
	char *p = (char *)base + off;
	uint8_t b = (uint8_t)x;
	uint16_t h = (uint16_t)x;
	int32_t w = (int32_t)x;

	switch (size) {
	case 1:
		memcpy(p, &b, 1);
		break;
	case 2:
		memcpy(p, &h, 2);
		break;
	default:
		memcpy(p, &w, 4);
		break;
	}
}

static char **str_at(void *base, size_t off)
{
	return (char **)((char *)base + off);
}

static const char *str_get(const void *base, size_t off)
{
	return *(char *const *)((const char *)base + off);
}

int vc_conf_set_str(char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int vc_conf_str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

char *vc_conf_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

int vc_conf_parse_long(const char *v, long lo, long hi, long *out)
{
	char *end;

	if (!*v)
		return -EINVAL;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -EINVAL;
	*out = x;
	return 0;
}

const struct vc_conf_key *vc_conf_keys(int camera, size_t *n)
{
	*n = camera ? vc_conf_n_cam_keys : vc_conf_n_server_keys;
	return camera ? vc_conf_cam_keys : vc_conf_server_keys;
}

const struct vc_conf_key *vc_conf_key_find(const char *name, int camera)
{
	size_t n;
	const struct vc_conf_key *t = vc_conf_keys(camera, &n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

/* ---- reading, printing and comparing a row's value ---- */

void vc_conf_key_init(const struct vc_conf_key *k, void *base)
{
	if (k->type == VC_CONF_T_INT || k->type == VC_CONF_T_ENUM)
		int_set(base, k->off, k->size, k->unset);
}

/* The value of an ENUM row's name (case-insensitive): 0, or -EINVAL. */
static int enum_parse(const struct vc_conf_key *k, const char *v, long *out)
{
	for (const struct vc_conf_name *n = k->names; n->name; n++)
		if (strcasecmp(n->name, v) == 0) {
			*out = n->value;
			return 0;
		}
	return -EINVAL;
}

/* The first name an ENUM row gives value x, or NULL. */
static const char *enum_name(const struct vc_conf_key *k, long x)
{
	for (const struct vc_conf_name *n = k->names; n->name; n++)
		if (n->value == x)
			return n->name;
	return NULL;
}

int vc_conf_key_parse(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		      const char *v)
{
	char why[400];
	long x;

	if (k->parse)
		return k->parse(st, k, base, line, v);
	switch (k->type) {
	case VC_CONF_T_INT:
		if (k->word && strcmp(v, k->word) == 0)
			int_set(base, k->off, k->size, k->word_value);
		else if (vc_conf_parse_long(v, k->lo, k->hi, &x) < 0 || (k->step && (x - k->lo) % k->step))
			vc_conf_bad(st, line, "%s: '%s' is not %s", k->name, v, k->range);
		else
			int_set(base, k->off, k->size, x);
		return 0;
	case VC_CONF_T_ENUM:
		if (enum_parse(k, v, &x) < 0)
			vc_conf_bad(st, line, "%s: '%s' is not %s", k->name, v, k->range);
		else
			int_set(base, k->off, k->size, x);
		return 0;
	case VC_CONF_T_STR:
		if (k->check && k->check(v, why, sizeof(why)) < 0) {
			vc_conf_bad(st, line, "%s: %s", k->name, why);
			return 0;
		}
		return vc_conf_set_str(str_at(base, k->off), v);
	default: /* OTHER rows have parse() */
		return -EINVAL;
	}
}

static void pr_str(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const char *s = str_get(base, k->off);

	(void)redact;
	if (s)
		fprintf(f, "%s = %s\n", k->name, s);
}

static int eq_str(const struct vc_conf_key *k, const void *a, const void *b)
{
	return vc_conf_str_eq(str_get(a, k->off), str_get(b, k->off));
}

void vc_conf_key_print(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	long x;

	if (k->print) {
		k->print(k, base, f, redact);
		return;
	}
	switch (k->type) {
	case VC_CONF_T_INT:
		x = int_get(base, k->off, k->size);
		if (k->word && x == k->word_value)
			fprintf(f, "%s = %s\n", k->name, k->word);
		else if (x != k->unset)
			fprintf(f, "%s = %ld\n", k->name, x);
		break;
	case VC_CONF_T_ENUM:
		x = int_get(base, k->off, k->size);
		if (x != k->unset && enum_name(k, x))
			fprintf(f, "%s = %s\n", k->name, enum_name(k, x));
		break;
	case VC_CONF_T_STR:
		pr_str(k, base, f, redact);
		break;
	default: /* OTHER rows have print() */
		break;
	}
}

/* Lists (listen, user, control lines...): equal when they print the same
 * lines; out of memory counts as different. */
static int printed_equal(const struct vc_conf_key *k, const void *a, const void *b)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	int eq;

	if (fa && fb) {
		k->print(k, a, fa, 0);
		k->print(k, b, fb, 0);
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	eq = fa && fb && la == lb && (!la || memcmp(ta, tb, la) == 0);
	free(ta);
	free(tb);
	return eq;
}

int vc_conf_key_equal(const struct vc_conf_key *k, const void *a, const void *b)
{
	switch (k->type) {
	case VC_CONF_T_INT:
	case VC_CONF_T_ENUM:
		return int_get(a, k->off, k->size) == int_get(b, k->off, k->size);
	case VC_CONF_T_STR:
		return eq_str(k, a, b);
	default:
		if (k->size) /* a plain field: its bytes */
			return memcmp((const char *)a + k->off, (const char *)b + k->off, k->size) == 0;
		return printed_equal(k, a, b);
	}
}
