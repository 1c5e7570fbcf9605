/* Config file parser: owns the text -> struct vc_conf mapping, its strict
 * validation (every error with its file:line) and the printer that writes the
 * effective config back in the same syntax. One table of keys
 * (common/conf_keys.c) drives the parser, the printer, the equality checks
 * and the restart list, so they cannot drift apart. */
#include "common/conf.h"
#include "common/conf_keys.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Error accumulator: every problem is reported, not just the first. */
struct perr {
	const char *fname;
	char *buf;
	size_t len, used;
	int count;
};

__attribute__((format(printf, 3, 4)))
static void perr(struct perr *e, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->count++;
	if (!e->buf || e->used + 1 >= e->len)
		return;
	int n = line > 0 ? snprintf(e->buf + e->used, e->len - e->used, "%s:%d: %s\n", e->fname, line, msg)
			 : snprintf(e->buf + e->used, e->len - e->used, "%s: %s\n", e->fname, msg);
	if (n > 0)
		e->used += (size_t)n < e->len - e->used ? (size_t)n : e->len - e->used - 1;
}

static int name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

int vc_conf_split_listen(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon, *h = s;
	size_t hl;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
		if (hl == 0)
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL; /* bare IPv6 needs brackets */
		hl = (size_t)(colon - s);
	}
	if (hl >= hostlen)
		return -EINVAL;
	long p;
	/* 0 as for --listen: the kernel picks a free port, the log names it */
	if (vc_conf_parse_long(colon + 1, 0, 65535, &p) < 0)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return 0;
}

#define MAX_KEYS 64 /* rows of the key table (conf_keys.c), checked at parse */

/* Parse state that is not part of the result. */
struct vc_conf_pstate {
	struct perr *e;
	struct vc_conf *c;
	struct vc_conf_cam *cam; /* NULL = [server] (or before any section) */
	int in_section;
	/* Lines where single-valued keys were first set, to catch duplicates:
	 * indexed by key table row; reset at each section. */
	int seen[MAX_KEYS];
	/* The last line each row was set on in the file (for checks that
	 * span keys: tls_cert with tls_key, auth_* with user and secrets). */
	int line_of[MAX_KEYS];
	int secret_line;
};

void vc_conf_bad(struct vc_conf_pstate *st, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	perr(st->e, line, "%s", msg);
}

int *vc_conf_pstate_secret_line(struct vc_conf_pstate *st)
{
	return &st->secret_line;
}

/* Every INT row of the section gets its "unset" value (fields are zeroed
 * before: 0 is unset for the other rows). */
static void keys_init(void *base, int camera)
{
	size_t n;
	const struct vc_conf_key *t = vc_conf_keys(camera, &n);

	for (size_t i = 0; i < n; i++)
		vc_conf_key_init(&t[i], base);
}

/* Where row k's lines are counted in seen[] and line_of[]: the [server]
 * rows first, then the [camera] ones. */
static size_t key_index(const struct vc_conf_key *k)
{
	size_t ns, nc;
	const struct vc_conf_key *s = vc_conf_keys(0, &ns), *c = vc_conf_keys(1, &nc);

	return k->camera ? ns + (size_t)(k - c) : (size_t)(k - s);
}

void vc_conf_cam_init(struct vc_conf_cam *cam)
{
	memset(cam, 0, sizeof(*cam));
	keys_init(cam, 1);
}

void vc_conf_cam_clear(struct vc_conf_cam *cam)
{
	for (size_t j = 0; j < cam->n_ctrls; j++) {
		free(cam->ctrls[j].name);
		free(cam->ctrls[j].value);
	}
	free(cam->ctrls);
	free(cam->name);
	free(cam->device);
	free(cam->encoder);
	vc_conf_cam_init(cam);
}

int vc_conf_cam_copy(struct vc_conf_cam *dst, const struct vc_conf_cam *src)
{
	*dst = *src;
	dst->name = dst->device = dst->encoder = NULL;
	dst->ctrls = NULL;
	dst->n_ctrls = 0;
	if ((src->name && !(dst->name = strdup(src->name))) ||
	    (src->device && !(dst->device = strdup(src->device))) ||
	    (src->encoder && !(dst->encoder = strdup(src->encoder))))
		goto fail;
	if (src->n_ctrls && !(dst->ctrls = calloc(src->n_ctrls, sizeof(*dst->ctrls))))
		goto fail;
	for (; dst->n_ctrls < src->n_ctrls; dst->n_ctrls++) {
		struct vc_conf_ctrl *c = &dst->ctrls[dst->n_ctrls];

		c->name = strdup(src->ctrls[dst->n_ctrls].name);
		c->value = strdup(src->ctrls[dst->n_ctrls].value);
		if (!c->name || !c->value) {
			dst->n_ctrls++; /* cleared below with the rest */
			goto fail;
		}
	}
	return 0;
fail:
	vc_conf_cam_clear(dst);
	return -ENOMEM;
}

int vc_conf_cam_set(struct vc_conf_cam *cam, const char *key, const char *value, char *err,
		    size_t errlen)
{
	char msg[512] = "";
	/* perr writes "fname: message": an empty fname leaves ": message" */
	struct perr e = { .fname = "", .buf = msg, .len = sizeof(msg) };
	struct vc_conf_pstate st = { .e = &e, .cam = cam };
	const struct vc_conf_key *k = vc_conf_key_find(key, 1);

	if (err && errlen)
		err[0] = '\0';
	if (!k) {
		snprintf(err, errlen, "'%s' is not a camera setting", key);
		return -ENOENT;
	}
	if (!*value) {
		snprintf(err, errlen, "%s: empty value", key);
		return -EINVAL;
	}
	int r = vc_conf_key_parse(&st, k, cam, 0, value);
	if (r < 0)
		return r;
	if (e.count) {
		size_t n = strlen(msg);
		if (n && msg[n - 1] == '\n')
			msg[n - 1] = '\0';
		snprintf(err, errlen, "%s", msg + (strncmp(msg, ": ", 2) ? 0 : 2));
		return -EINVAL;
	}
	return 0;
}

/* Checks that need the whole section (or file). */
static void end_section(struct vc_conf_pstate *st)
{
	if (st->cam && !st->cam->device)
		perr(st->e, st->cam->line, "[camera %s]: 'device' is missing", st->cam->name);
	if (st->cam && (!st->cam->mode.width) != (!st->cam->mode.height))
		perr(st->e, st->cam->line, "[camera %s]: set both width and height, or neither",
		     st->cam->name);
}

static int section(struct vc_conf_pstate *st, int line, char *s)
{
	struct vc_conf *c = st->c;

	end_section(st);
	memset(st->seen, 0, sizeof(st->seen));
	st->in_section = 1;
	if (strcmp(s, "server") == 0) {
		st->cam = NULL;
		return 0;
	}
	if (strncmp(s, "camera", 6) == 0 && (s[6] == ' ' || s[6] == '\t')) {
		char *name = vc_conf_trim(s + 7);
		if (!name_ok(name)) {
			perr(st->e, line, "[camera %s]: a camera name is 1-64 of A-Z a-z 0-9 _ -", name);
			name = "invalid";
		} else if (vc_conf_find_cam(c, name)) {
			perr(st->e, line, "[camera %s]: defined twice (first on line %d)", name,
			     vc_conf_find_cam(c, name)->line);
		}
		struct vc_conf_cam *a = realloc(c->cams, (c->n_cams + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		c->cams = a;
		st->cam = &a[c->n_cams++];
		vc_conf_cam_init(st->cam);
		st->cam->line = line;
		if (!(st->cam->name = strdup(name)))
			return -ENOMEM;
		return 0;
	}
	perr(st->e, line, "unknown section [%s] (expected [server] or [camera NAME])", s);
	st->in_section = -1; /* its keys would all be errors too: skip them */
	st->cam = NULL;
	return 1;
}

static int key_line(struct vc_conf_pstate *st, int line, char *s)
{
	char *eq = strchr(s, '=');
	if (!eq) {
		perr(st->e, line, "expected 'key = value' or '[section]', got '%s'", s);
		return 0;
	}
	*eq = '\0';
	char *k = vc_conf_trim(s), *v = vc_conf_trim(eq + 1);
	const char *where = st->cam ? "a [camera] section" : "[server]";
	const struct vc_conf_key *row = vc_conf_key_find(k, st->cam != NULL);

	if (row) {
		size_t i = key_index(row);
		if (!*v) {
			perr(st->e, line, "%s: empty value", k);
			return 0;
		}
		if (!row->repeatable && st->seen[i]) {
			perr(st->e, line, "%s: set twice in this section (first on line %d)", k, st->seen[i]);
			return 0;
		}
		st->seen[i] = line;
		st->line_of[i] = line;
		return vc_conf_key_parse(st, row, st->cam ? (void *)st->cam : (void *)st->c, line, v);
	}
	/* Say where a known key would belong: the usual cause of this error. */
	if (vc_conf_key_find(k, st->cam == NULL)) {
		perr(st->e, line, "'%s' is not valid in %s (it belongs in %s)", k, where,
		     st->cam ? "[server]" : "a [camera NAME] section");
		return 0;
	}
	perr(st->e, line, "unknown key '%s' in %s", k, where);
	return 0;
}

/* The last line the [server] key name was set on. */
static int line_of(const struct vc_conf_pstate *st, const char *name)
{
	return st->line_of[key_index(vc_conf_key_find(name, 0))];
}

static void finish(struct vc_conf_pstate *st)
{
	struct vc_conf *c = st->c;

	end_section(st);
	if (!c->tls_cert != !c->tls_key)
		perr(st->e, line_of(st, c->tls_cert ? "tls_cert" : "tls_key"),
		     "tls_cert and tls_key must be set together");
	static const char *const names[] = { "auth_view", "auth_control", "auth_status" };
	for (int cl = 0; cl < VC_CLASS_COUNT; cl++) {
		if ((c->auth[cl] & VC_AUTH_BASIC) && !c->n_users)
			perr(st->e, line_of(st, names[cl]), "%s: uses basic but no 'user' is defined",
			     names[cl]);
		if ((c->auth[cl] & VC_AUTH_TOKEN) && !c->token_secret)
			perr(st->e, line_of(st, names[cl]), "%s: uses token but neither token_secret nor "
				       "token_secret_file is set", names[cl]);
	}
	/* auth_view/auth_status without auth_control: control writes take
	 * their policies (a password for viewing must not leave PUT open). */
	if (!(c->auth_explicit & (1u << VC_CLASS_CONTROL)))
		c->auth[VC_CLASS_CONTROL] = c->auth[VC_CLASS_VIEW] | c->auth[VC_CLASS_STATUS];
}

int vc_conf_parse(const char *text, size_t len, const char *fname,
		  struct vc_conf **out, char *err, size_t errlen)
{
	struct perr e = { .fname = fname, .buf = err, .len = errlen };
	struct vc_conf_pstate st = { .e = &e };
	struct vc_conf *c;
	char *copy;
	int r = 0, lineno = 0;

	if (err && errlen)
		err[0] = '\0';
	size_t ns, nc;
	vc_conf_keys(0, &ns);
	vc_conf_keys(1, &nc);
	assert(ns + nc <= MAX_KEYS);
	if (!(c = calloc(1, sizeof(*c))) || !(copy = malloc(len + 1))) {
		free(c);
		return -ENOMEM;
	}
	c->log_level = -1;
	keys_init(c, 0);
	if (!(c->file = strdup(fname))) {
		free(copy);
		vc_conf_free(c);
		return -ENOMEM;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	st.c = c;
	if (strlen(copy) != len) { /* a binary file: say where and stop */
		int l = 1;
		for (size_t i = 0; i < strlen(copy); i++)
			l += copy[i] == '\n';
		perr(&e, l, "NUL byte (not a text file?)");
		r = -EINVAL;
	}

	for (char *p = copy, *nl; p && r >= 0; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		else if (!*p)
			break;
		lineno++;
		char *s = vc_conf_trim(p);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *rb = strchr(s, ']');
			if (!rb || rb[1]) {
				perr(&e, lineno, "malformed section header '%s'", s);
				end_section(&st);
				st.in_section = -1;
				st.cam = NULL;
				st.cam = NULL;
				continue;
			}
			*rb = '\0';
			r = section(&st, lineno, vc_conf_trim(s + 1));
			continue;
		}
		if (st.in_section < 0)
			continue; /* inside an unknown section, reported once at its header */
		if (!st.in_section) {
			perr(&e, lineno, "'%s' outside a section (start with [server] or [camera NAME])", s);
			continue;
		}
		r = key_line(&st, lineno, s);
	}
	free(copy);
	if (r >= 0)
		finish(&st);
	if (r < 0 || e.count) {
		vc_conf_free(c);
		return r < 0 && r != -EINVAL ? r : -EINVAL;
	}
	*out = c;
	return 0;
}

int vc_conf_load(const char *path, struct vc_conf **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r;

	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s\n", path, strerror(-r));
		return r;
	}
	for (;;) {
		if (len + 4096 > cap) {
			if (cap > (16u << 20)) {
				fclose(f);
				free(buf);
				snprintf(err, errlen, "%s: larger than 16 MiB\n", path);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap = cap * 2 + 8192);
			if (!nb) {
				fclose(f);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (r == 0)
		r = vc_conf_parse(buf, len, path, out, err, errlen);
	else
		snprintf(err, errlen, "%s: read error\n", path);
	free(buf);
	return r;
}

void vc_conf_free(struct vc_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_listen; i++)
		free(c->listen[i]);
	free(c->listen);
	for (size_t i = 0; i < c->n_hosts; i++)
		free(c->hosts[i]);
	free(c->hosts);
	for (size_t i = 0; i < c->n_proxies; i++)
		free(c->proxies[i]);
	free(c->proxies);
	for (size_t i = 0; i < c->n_users; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	for (size_t i = 0; i < c->n_cams; i++)
		vc_conf_cam_clear(&c->cams[i]);
	free(c->cams);
	if (c->token_secret)
		memset(c->token_secret, 0, c->token_secret_len); /* don't leave keys in freed memory */
	free(c->token_secret);
	free(c->token_secret_file);
	free(c->web_root);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->tls_priorities);
	free(c->cors_origin);
	free(c->realm);
	free(c->rtsp);
	if (c->rtsp_digest)
		memset(c->rtsp_digest, 0, strlen(c->rtsp_digest)); /* secrets */
	free(c->rtsp_digest);
	free(c->file);
	free(c);
}

const struct vc_conf_cam *vc_conf_find_cam(const struct vc_conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_cams; i++)
		if (strcmp(c->cams[i].name, name) == 0)
			return &c->cams[i];
	return NULL;
}

/* 1 when every [camera] row that passes want() has the same value in a and b. */
static int cam_rows_equal(const struct vc_conf_cam *a, const struct vc_conf_cam *b, int reopen_only)
{
	size_t n;
	const struct vc_conf_key *t = vc_conf_keys(1, &n);

	for (size_t i = 0; i < n; i++) {
		if (reopen_only && t[i].apply != VC_CONF_REOPEN)
			continue;
		if (!vc_conf_key_equal(&t[i], a, b))
			return 0;
	}
	return 1;
}

int vc_conf_cam_same_open(const struct vc_conf_cam *a, const struct vc_conf_cam *b)
{
	return vc_conf_str_eq(a->name, b->name) && cam_rows_equal(a, b, 1);
}

int vc_conf_cam_equal(const struct vc_conf_cam *a, const struct vc_conf_cam *b)
{
	return vc_conf_str_eq(a->name, b->name) && cam_rows_equal(a, b, 0);
}

int vc_conf_restart_keys(const struct vc_conf *a, const struct vc_conf *b, int with_listen,
			 char *keys, size_t n)
{
	size_t nk, len = 0;
	const struct vc_conf_key *t = vc_conf_keys(0, &nk);
	int any = 0;

	if (n)
		keys[0] = '\0';
	for (size_t i = 0; i < nk; i++) {
		if (t[i].apply != VC_CONF_RESTART || vc_conf_key_equal(&t[i], a, b))
			continue;
		if (!with_listen && !strcmp(t[i].name, "listen"))
			continue;
		any = 1;
		int w = len < n ? snprintf(keys + len, n - len, "%s%s", len ? "," : "", t[i].name) : -1;
		if (w < 0 || (size_t)w >= n - len)
			len = n; /* full: the rest is left out */
		else
			len += (size_t)w;
	}
	return any;
}

int vc_conf_print(const struct vc_conf *c, FILE *f, int redact)
{
	size_t ns, nc;
	const struct vc_conf_key *ts = vc_conf_keys(0, &ns), *tc = vc_conf_keys(1, &nc);

	fprintf(f, "# effective configuration (from %s)\n[server]\n", c->file);
	for (size_t i = 0; i < ns; i++)
		vc_conf_key_print(&ts[i], c, f, redact);
	for (size_t j = 0; j < c->n_cams; j++) {
		fprintf(f, "\n[camera %s]\n", c->cams[j].name);
		for (size_t i = 0; i < nc; i++)
			vc_conf_key_print(&tc[i], &c->cams[j], f, redact);
	}
	return ferror(f) ? -EIO : 0;
}
