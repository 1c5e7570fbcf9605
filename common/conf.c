/* Config file parser: owns the text -> struct vc_conf mapping, its strict
 * validation (every error with its file:line) and the printer that writes the
 * effective config back in the same syntax. Key tables drive both the parser
 * and the printer so the two cannot drift apart. */
#include "common/conf.h"

#include <errno.h>
#include <limits.h>
#include <linux/videodev2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/fmt.h"
#include "common/log.h"
#include "common/negotiate.h"

#define MIN_SECRET 16
#define MAX_SECRET 4096

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

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static int parse_int(const char *v, long lo, long hi, long *out)
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
	if (parse_int(colon + 1, 1, 65535, &p) < 0)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return 0;
}

const char *vc_conf_auth_name(unsigned policy)
{
	static const char *const names[] = { "none", "basic", "token", "basic,token" };
	return names[policy & 3];
}

static int parse_policy(const char *v, unsigned *out)
{
	char tmp[64];
	unsigned p = 0;

	size_t n = strlen(v);
	if (n >= sizeof(tmp) || !n || v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,"))
		return -EINVAL;
	strcpy(tmp, v);
	if (strcmp(trim(tmp), "none") == 0) {
		*out = 0;
		return 0;
	}
	for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		t = trim(t);
		if (strcmp(t, "basic") == 0)
			p |= VC_AUTH_BASIC;
		else if (strcmp(t, "token") == 0)
			p |= VC_AUTH_TOKEN;
		else
			return -EINVAL;
	}
	if (!p)
		return -EINVAL;
	*out = p;
	return 0;
}

/* fps as "30" or "30000/1001" -> frame interval (den/num inverted). */
static int parse_fps(const char *v, struct vc_fract *ival)
{
	char *end;
	unsigned long n, d = 1;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		return -EINVAL;
	if (*end == '/') {
		const char *ds = end + 1;
		d = strtoul(ds, &end, 10);
		if (errno || end == ds || ds[0] == '-')
			return -EINVAL;
	}
	if (*end || n == 0 || d == 0 || n > 1000000 || d > 1000000)
		return -EINVAL;
	ival->num = (uint32_t)d;
	ival->den = (uint32_t)n;
	return 0;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int push_str(char ***arr, size_t *n, const char *v)
{
	char **a = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!a)
		return -ENOMEM;
	*arr = a;
	if (!(a[*n] = strdup(v)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int read_secret_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t buf[MAX_SECRET + 1];
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n > MAX_SECRET)
		return -EFBIG;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n < MIN_SECRET)
		return -EMSGSIZE;
	if (!(*out = malloc(n)))
		return -ENOMEM;
	memcpy(*out, buf, n);
	*len = n;
	return 0;
}

/* Per-section parse state that is not part of the result. */
struct pstate {
	struct perr *e;
	struct vc_conf *c;
	struct vc_conf_cam *cam; /* NULL = [server] (or before any section) */
	int in_section;
	/* Lines where single-valued keys were first set, to catch duplicates:
	 * indexed by key table position; reset at each section. */
	int seen[32];
	int secret_line, cert_line, key_line;
	int auth_line[VC_CLASS_COUNT];
};

typedef int (*key_fn)(struct pstate *st, int line, const char *v);

struct key {
	const char *name;
	key_fn fn;
	int repeatable;
};

#define BAD(fmt, ...) (perr(st->e, line, fmt, __VA_ARGS__), 0)

static int k_listen(struct pstate *st, int line, const char *v)
{
	char host[128];
	int port;

	if (vc_conf_split_listen(v, host, sizeof(host), &port) < 0)
		return BAD("listen: '%s' is not HOST:PORT, [IPV6]:PORT or :PORT (port 1-65535)", v);
	return push_str(&st->c->listen, &st->c->n_listen, v);
}

static int k_log_level(struct pstate *st, int line, const char *v)
{
	int l = vc_log_parse_level(v);
	if (l < 0)
		return BAD("log_level: '%s' is not one of error, warn, info, debug", v);
	st->c->log_level = l;
	return 0;
}

static int k_web_root(struct pstate *st, int line, const char *v)
{
	if (v[0] != '/')
		return BAD("web_root: '%s' must be an absolute path", v);
	return set_str(&st->c->web_root, v);
}

static int k_max_clients(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 100000, &x) < 0)
		return BAD("max_clients: '%s' is not an integer 1-100000", v);
	st->c->max_clients = (int)x;
	return 0;
}

static int k_client_timeout(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 3600, &x) < 0)
		return BAD("client_timeout: '%s' is not seconds 1-3600", v);
	st->c->client_timeout = (int)x;
	return 0;
}

static int k_max_clients_per_ip(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 100000, &x) < 0)
		return BAD("max_clients_per_ip: '%s' is not an integer 1-100000", v);
	st->c->max_clients_per_ip = (int)x;
	return 0;
}

static int k_tls_cert(struct pstate *st, int line, const char *v)
{
	if (access(v, R_OK) < 0)
		return BAD("tls_cert: cannot read '%s': %s", v, strerror(errno));
	st->cert_line = line;
	return set_str(&st->c->tls_cert, v);
}

static int k_tls_key(struct pstate *st, int line, const char *v)
{
	if (access(v, R_OK) < 0)
		return BAD("tls_key: cannot read '%s': %s", v, strerror(errno));
	st->key_line = line;
	return set_str(&st->c->tls_key, v);
}

/* GnuTLS checks the syntax when the listener starts (and refuses to start
 * on an error); here only what cannot be one. */
static int k_tls_priorities(struct pstate *st, int line, const char *v)
{
	if (!*v || strlen(v) > 512 || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				       "0123456789-+:!%_.=@") != strlen(v))
		return BAD("tls_priorities: '%s' is not a GnuTLS priority string", v);
	return set_str(&st->c->tls_priorities, v);
}

static int k_cors_origin(struct pstate *st, int line, const char *v)
{
	if (strcmp(v, "*") != 0 && strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		return BAD("cors_origin: '%s' must be * or an origin like https://host", v);
	return set_str(&st->c->cors_origin, v);
}

static int k_realm(struct pstate *st, int line, const char *v)
{
	if (strchr(v, '"') || strchr(v, '\\'))
		return BAD("realm: '%s' must not contain quotes or backslashes", v);
	return set_str(&st->c->realm, v);
}

static int k_user(struct pstate *st, int line, const char *v)
{
	const char *colon = strchr(v, ':');
	struct vc_conf *c = st->c;

	if (!colon || colon == v)
		return BAD("user: '%s' is not NAME:HASH", v);
	if (colon[1] != '$' || strchr(colon + 1, ':'))
		return BAD("user: the password of '%.*s' must be a crypt(3) hash such as "
			   "$y$... or $6$... (make one with: mkpasswd -m yescrypt)",
			   (int)(colon - v), v);
	for (size_t i = 0; i < c->n_users; i++)
		if (strlen(c->users[i].name) == (size_t)(colon - v) &&
		    memcmp(c->users[i].name, v, (size_t)(colon - v)) == 0)
			return BAD("user: '%.*s' is defined twice", (int)(colon - v), v);
	struct vc_conf_user *u = realloc(c->users, (c->n_users + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	c->users = u;
	u[c->n_users].name = strndup(v, (size_t)(colon - v));
	u[c->n_users].hash = strdup(colon + 1);
	c->n_users++;
	if (!u[c->n_users - 1].name || !u[c->n_users - 1].hash)
		return -ENOMEM;
	return 0;
}

static int auth_key(struct pstate *st, int line, const char *v, enum vc_auth_class cl, const char *k)
{
	if (parse_policy(v, &st->c->auth[cl]) < 0)
		return BAD("%s: '%s' is not none, basic, token or basic,token", k, v);
	st->c->auth_set = 1;
	st->c->auth_explicit |= 1u << cl;
	st->auth_line[cl] = line;
	return 0;
}

static int k_auth_view(struct pstate *st, int line, const char *v)
{
	return auth_key(st, line, v, VC_CLASS_VIEW, "auth_view");
}

static int k_auth_control(struct pstate *st, int line, const char *v)
{
	return auth_key(st, line, v, VC_CLASS_CONTROL, "auth_control");
}

static int k_auth_status(struct pstate *st, int line, const char *v)
{
	return auth_key(st, line, v, VC_CLASS_STATUS, "auth_status");
}

static int k_token_secret(struct pstate *st, int line, const char *v)
{
	size_t n = strlen(v);
	if (st->secret_line)
		return BAD("token_secret: a secret was already set on line %d", st->secret_line);
	if (n < MIN_SECRET)
		return BAD("token_secret: too short (%zu bytes, need at least %d)", n, MIN_SECRET);
	if (!(st->c->token_secret = malloc(n)))
		return -ENOMEM;
	memcpy(st->c->token_secret, v, n);
	st->c->token_secret_len = n;
	st->secret_line = line;
	return 0;
}

static int k_token_secret_file(struct pstate *st, int line, const char *v)
{
	if (st->secret_line)
		return BAD("token_secret_file: a secret was already set on line %d", st->secret_line);
	int r = read_secret_file(v, &st->c->token_secret, &st->c->token_secret_len);
	if (r == -ENOMEM)
		return r;
	if (r == -EMSGSIZE)
		return BAD("token_secret_file: '%s' holds fewer than %d bytes", v, MIN_SECRET);
	if (r < 0)
		return BAD("token_secret_file: cannot read '%s': %s", v, strerror(-r));
	st->secret_line = line;
	return set_str(&st->c->token_secret_file, v);
}

static int k_token_ttl(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 366L * 86400, &x) < 0)
		return BAD("token_ttl: '%s' is not a number of seconds 1-31622400", v);
	st->c->token_ttl_s = (int)x;
	return 0;
}

/* "name [name...]" (spaces or commas): Host header names of this server. */
static int k_allowed_hosts(struct pstate *st, int line, const char *v)
{
	char buf[512];
	int n = 0;

	if (strlen(v) >= sizeof(buf))
		return BAD("allowed_hosts: list longer than %zu bytes", sizeof(buf) - 1);
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *save = NULL, *t = strtok_r(buf, " ,\t", &save); t; t = strtok_r(NULL, " ,\t", &save)) {
		for (const char *p = t; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '*'))
				return BAD("allowed_hosts: '%s' is not a host name (letters, digits, '-', "
					   "'.'; '*' alone = any; '*.' prefix = subdomains)", t);
		if (strchr(t, '*') && strcmp(t, "*") != 0 && (t[0] != '*' || t[1] != '.' || strchr(t + 1, '*')))
			return BAD("allowed_hosts: '%s': '*' is allowed alone or as a '*.' prefix", t);
		int r = push_str(&st->c->hosts, &st->c->n_hosts, t);
		if (r < 0)
			return r;
		n++;
	}
	if (!n)
		return BAD("allowed_hosts: '%s' names no host", v);
	return 0;
}

static int k_max_outputs(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 1000, &x) < 0)
		return BAD("max_outputs: '%s' is not an integer 1-1000", v);
	st->c->max_outputs = (int)x;
	return 0;
}

static int k_frame_memory(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 8, 1 << 20, &x) < 0)
		return BAD("frame_memory: '%s' is not MiB 8-1048576", v);
	st->c->frame_memory_mb = (int)x;
	return 0;
}

static int k_max_size(struct pstate *st, int line, const char *v)
{
	char *x, *end = NULL;
	unsigned long w = strtoul(v, &x, 10), h = 0;

	if (x != v && *x == 'x')
		h = strtoul(x + 1, &end, 10);
	if (x == v || *x != 'x' || end == x + 1 || *end || w < 16 || h < 16 || w > 16384 || h > 16384)
		return BAD("max_size: '%s' is not WIDTHxHEIGHT (16-16384 each)", v);
	st->c->max_width = (uint32_t)w;
	st->c->max_height = (uint32_t)h;
	return 0;
}

static const struct key server_keys[] = {
	{ "listen", k_listen, 1 },
	{ "log_level", k_log_level, 0 },
	{ "web_root", k_web_root, 0 },
	{ "max_clients", k_max_clients, 0 },
	{ "max_clients_per_ip", k_max_clients_per_ip, 0 },
	{ "client_timeout", k_client_timeout, 0 },
	{ "tls_cert", k_tls_cert, 0 },
	{ "tls_key", k_tls_key, 0 },
	{ "tls_priorities", k_tls_priorities, 0 },
	{ "cors_origin", k_cors_origin, 0 },
	{ "realm", k_realm, 0 },
	{ "user", k_user, 1 },
	{ "auth_view", k_auth_view, 0 },
	{ "auth_control", k_auth_control, 0 },
	{ "auth_status", k_auth_status, 0 },
	{ "token_secret", k_token_secret, 0 },
	{ "token_secret_file", k_token_secret_file, 0 },
	{ "token_ttl", k_token_ttl, 0 },
	{ "allowed_hosts", k_allowed_hosts, 1 },
	{ "max_outputs", k_max_outputs, 0 },
	{ "frame_memory", k_frame_memory, 0 },
	{ "max_size", k_max_size, 0 },
};

static int c_device(struct pstate *st, int line, const char *v)
{
	(void)line;
	return set_str(&st->cam->device, v);
}

static int c_format(struct pstate *st, int line, const char *v)
{
	const struct vc_fmt *f = vc_fmt_find(v);
	if (!f)
		return BAD("format: unknown pixel format '%s' (use a V4L2 name like YUYV, MJPEG, NV12)", v);
	st->cam->mode.fourcc = f->fourcc;
	return 0;
}

static int c_width(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 16384, &x) < 0)
		return BAD("width: '%s' is not an integer 1-16384", v);
	st->cam->mode.width = (uint32_t)x;
	return 0;
}

static int c_height(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 16384, &x) < 0)
		return BAD("height: '%s' is not an integer 1-16384", v);
	st->cam->mode.height = (uint32_t)x;
	return 0;
}

static int c_fps(struct pstate *st, int line, const char *v)
{
	if (parse_fps(v, &st->cam->mode.ival) < 0)
		return BAD("fps: '%s' is not a rate like 30 or 30000/1001", v);
	return 0;
}

static int c_input(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 0, 255, &x) < 0)
		return BAD("input: '%s' is not an input index 0-255", v);
	st->cam->input = (int)x;
	return 0;
}

/* TV standard names as V4L2 spells them (v4l2-ctl --list-standards). */
static const struct {
	const char *name;
	uint64_t id;
} std_names[] = {
	{ "NTSC", V4L2_STD_NTSC }, { "NTSC-M", V4L2_STD_NTSC_M },
	{ "NTSC-M-JP", V4L2_STD_NTSC_M_JP }, { "NTSC-M-KR", V4L2_STD_NTSC_M_KR },
	{ "NTSC-443", V4L2_STD_NTSC_443 }, { "PAL", V4L2_STD_PAL },
	{ "PAL-BG", V4L2_STD_PAL_BG }, { "PAL-B", V4L2_STD_PAL_B }, { "PAL-G", V4L2_STD_PAL_G },
	{ "PAL-H", V4L2_STD_PAL_H }, { "PAL-I", V4L2_STD_PAL_I }, { "PAL-DK", V4L2_STD_PAL_DK },
	{ "PAL-D", V4L2_STD_PAL_D }, { "PAL-K", V4L2_STD_PAL_K }, { "PAL-M", V4L2_STD_PAL_M },
	{ "PAL-N", V4L2_STD_PAL_N }, { "PAL-Nc", V4L2_STD_PAL_Nc }, { "PAL-60", V4L2_STD_PAL_60 },
	{ "SECAM", V4L2_STD_SECAM }, { "SECAM-B", V4L2_STD_SECAM_B },
	{ "SECAM-G", V4L2_STD_SECAM_G }, { "SECAM-H", V4L2_STD_SECAM_H },
	{ "SECAM-DK", V4L2_STD_SECAM_DK }, { "SECAM-L", V4L2_STD_SECAM_L },
	{ "SECAM-LC", V4L2_STD_SECAM_LC },
};

const char *vc_conf_std_name(uint64_t std)
{
	for (size_t i = 0; i < sizeof(std_names) / sizeof(std_names[0]); i++)
		if (std_names[i].id == std)
			return std_names[i].name;
	return NULL;
}

int vc_conf_std_parse(const char *name, uint64_t *std)
{
	for (size_t i = 0; i < sizeof(std_names) / sizeof(std_names[0]); i++)
		if (strcasecmp(std_names[i].name, name) == 0) {
			*std = std_names[i].id;
			return 0;
		}
	return -EINVAL;
}

static int c_std(struct pstate *st, int line, const char *v)
{
	if (vc_conf_std_parse(v, &st->cam->std) == 0)
		return 0;
	return BAD("std: '%s' is not a TV standard (PAL, NTSC, SECAM, PAL-BG, NTSC-M, ...)", v);
}

static int c_dv_timings(struct pstate *st, int line, const char *v)
{
	if (vc_conf_dv_parse(v, &st->cam->dv) == 0)
		return 0;
	return BAD("dv_timings: '%s' is not 'detect' or timings like 1280x720p60, 1920x1080i59.94",
		   v);
}

/* "detect" or WxH, 'p' or 'i', a rate with up to 3 decimals: 1920x1080p59.94. */
int vc_conf_dv_parse(const char *v, struct vc_conf_dv *out)
{
	struct vc_conf_dv dv = { 0 };
	unsigned long w, h, fps, milli = 0, scale = 100;
	char *end;

	if (strcmp(v, "detect") == 0) {
		*out = dv;
		return 0;
	}
	errno = 0;
	w = strtoul(v, &end, 10);
	if (errno || end == v || *end != 'x' || v[0] == '-')
		goto bad;
	v = end + 1;
	h = strtoul(v, &end, 10);
	if (errno || end == v || (*end != 'p' && *end != 'i') || v[0] == '-')
		goto bad;
	dv.interlaced = *end == 'i';
	v = end + 1;
	fps = strtoul(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		goto bad;
	if (*end == '.') {
		for (end++; *end >= '0' && *end <= '9' && scale; end++, scale /= 10)
			milli += (unsigned long)(*end - '0') * scale;
		if (end[-1] == '.')
			goto bad;
	}
	if (*end || !w || !h || w > 16384 || h > 16384 || !fps || fps > 1000)
		goto bad;
	dv.width = (uint32_t)w;
	dv.height = (uint32_t)h;
	dv.fps_milli = (uint32_t)(fps * 1000 + milli);
	*out = dv;
	return 0;
bad:
	return -EINVAL;
}

static int c_buffers(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 2, 32, &x) < 0)
		return BAD("buffers: '%s' is not an integer 2-32", v);
	st->cam->buffers = (unsigned)x;
	return 0;
}

static int c_idle_stop_ms(struct pstate *st, int line, const char *v)
{
	long x;
	if (strcmp(v, "never") == 0) {
		st->cam->idle_stop_ms = -1;
		return 0;
	}
	if (parse_int(v, 0, 86400000, &x) < 0)
		return BAD("idle_stop_ms: '%s' is not 'never' or milliseconds 0-86400000", v);
	st->cam->idle_stop_ms = (int)x;
	return 0;
}

static int c_stall_timeout_ms(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 100, 600000, &x) < 0)
		return BAD("stall_timeout_ms: '%s' is not milliseconds 100-600000", v);
	st->cam->stall_timeout_ms = (int)x;
	return 0;
}

/* Defaults for clients that leave quality/rotate/flip out of their URL. */
static int c_quality(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 1, 100, &x) < 0)
		return BAD("quality: '%s' is not a JPEG quality 1-100", v);
	st->cam->quality = (uint8_t)x;
	return 0;
}

static int c_rotate(struct pstate *st, int line, const char *v)
{
	long x;
	if (parse_int(v, 0, 270, &x) < 0 || x % 90)
		return BAD("rotate: '%s' is not 0, 90, 180 or 270", v);
	st->cam->rotate = (uint16_t)x;
	return 0;
}

static const struct {
	const char *name;
	uint8_t bits;
} flips[] = { { "none", 0 }, { "h", VC_FLIP_H }, { "v", VC_FLIP_V }, { "hv", VC_FLIP_H | VC_FLIP_V } };

static int c_flip(struct pstate *st, int line, const char *v)
{
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++)
		if (!strcasecmp(v, flips[i].name) || (flips[i].bits == 3 && !strcasecmp(v, "vh"))) {
			st->cam->flip = flips[i].bits;
			return 0;
		}
	return BAD("flip: '%s' is not none, h, v or hv", v);
}

static int c_placeholder(struct pstate *st, int line, const char *v)
{
	static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++)
		if (!strcasecmp(v, yes[i]) || !strcasecmp(v, no[i])) {
			st->cam->placeholder = !strcasecmp(v, yes[i]);
			return 0;
		}
	return BAD("placeholder: '%s' is not yes or no", v);
}

/* "encoder = auto | cpu | /dev/videoN": which JPEG encoder the camera
 * would use (common/m2m.h). A path is kept as written: the device may be
 * absent now and appear later. */
static int c_encoder(struct pstate *st, int line, const char *v)
{
	char *dup = NULL;

	if (strcmp(v, "auto") != 0) {
		if (strcmp(v, "cpu") != 0 && (strncmp(v, "/dev/", 5) != 0 || strlen(v) >= 64 ||
					      strpbrk(v, " \t")))
			return BAD("encoder: '%s' is not auto, cpu or a device path like /dev/video31", v);
		if (!(dup = strdup(v)))
			return -ENOMEM;
	}
	free(st->cam->encoder);
	st->cam->encoder = dup;
	return 0;
}

/* "control = name=value"; repeatable; a later line for the same name wins
 * would hide a typo, so duplicates are errors. */
static int c_control(struct pstate *st, int line, const char *v)
{
	const char *eq = strchr(v, '=');
	struct vc_conf_cam *cam = st->cam;
	char name[64];

	if (!eq || eq == v)
		return BAD("control: '%s' is not NAME=VALUE", v);
	size_t nl = (size_t)(eq - v);
	while (nl && (v[nl - 1] == ' ' || v[nl - 1] == '\t'))
		nl--;
	const char *val = eq + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	if (nl >= sizeof(name) || !*val)
		return BAD("control: '%s' is not NAME=VALUE", v);
	memcpy(name, v, nl);
	name[nl] = '\0';
	for (size_t i = 0; i < nl; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return BAD("control: '%s' is not a control name (lower case, digits, _)", name);
	for (size_t i = 0; i < cam->n_ctrls; i++)
		if (strcmp(cam->ctrls[i].name, name) == 0)
			return BAD("control: '%s' is set twice", name);
	struct vc_conf_ctrl *a = realloc(cam->ctrls, (cam->n_ctrls + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	cam->ctrls = a;
	a[cam->n_ctrls].name = strdup(name);
	a[cam->n_ctrls].value = strdup(val);
	cam->n_ctrls++;
	if (!a[cam->n_ctrls - 1].name || !a[cam->n_ctrls - 1].value)
		return -ENOMEM;
	return 0;
}

static const struct key cam_keys[] = {
	{ "device", c_device, 0 },
	{ "format", c_format, 0 },
	{ "width", c_width, 0 },
	{ "height", c_height, 0 },
	{ "fps", c_fps, 0 },
	{ "input", c_input, 0 },
	{ "std", c_std, 0 },
	{ "dv_timings", c_dv_timings, 0 },
	{ "buffers", c_buffers, 0 },
	{ "idle_stop_ms", c_idle_stop_ms, 0 },
	{ "stall_timeout_ms", c_stall_timeout_ms, 0 },
	{ "quality", c_quality, 0 },
	{ "rotate", c_rotate, 0 },
	{ "flip", c_flip, 0 },
	{ "placeholder", c_placeholder, 0 },
	{ "encoder", c_encoder, 0 },
	{ "control", c_control, 1 },
};

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

void vc_conf_cam_init(struct vc_conf_cam *cam)
{
	memset(cam, 0, sizeof(*cam));
	cam->input = -1;
	cam->idle_stop_ms = -2;
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

int vc_conf_cam_set(struct vc_conf_cam *cam, const char *key, const char *value, char *err,
		    size_t errlen)
{
	char msg[512] = "";
	/* perr writes "fname: message": an empty fname leaves ": message" */
	struct perr e = { .fname = "", .buf = msg, .len = sizeof(msg) };
	struct pstate st = { .e = &e, .cam = cam };

	if (err && errlen)
		err[0] = '\0';
	for (size_t i = 0; i < NKEYS(cam_keys); i++) {
		if (strcmp(cam_keys[i].name, key) != 0)
			continue;
		if (!*value) {
			snprintf(err, errlen, "%s: empty value", key);
			return -EINVAL;
		}
		int r = cam_keys[i].fn(&st, 0, value);
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
	snprintf(err, errlen, "'%s' is not a camera setting", key);
	return -ENOENT;
}

/* Checks that need the whole section (or file). */
static void end_section(struct pstate *st)
{
	if (st->cam && !st->cam->device)
		perr(st->e, st->cam->line, "[camera %s]: 'device' is missing", st->cam->name);
	if (st->cam && (!st->cam->mode.width) != (!st->cam->mode.height))
		perr(st->e, st->cam->line, "[camera %s]: set both width and height, or neither",
		     st->cam->name);
}

static int section(struct pstate *st, int line, char *s)
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
		char *name = trim(s + 7);
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

static int key_line(struct pstate *st, int line, char *s)
{
	char *eq = strchr(s, '=');
	if (!eq) {
		perr(st->e, line, "expected 'key = value' or '[section]', got '%s'", s);
		return 0;
	}
	*eq = '\0';
	char *k = trim(s), *v = trim(eq + 1);
	const struct key *tab = st->cam ? cam_keys : server_keys;
	size_t n = st->cam ? NKEYS(cam_keys) : NKEYS(server_keys);
	const char *where = st->cam ? "a [camera] section" : "[server]";

	for (size_t i = 0; i < n; i++) {
		if (strcmp(tab[i].name, k) != 0)
			continue;
		if (!*v) {
			perr(st->e, line, "%s: empty value", k);
			return 0;
		}
		if (!tab[i].repeatable && st->seen[i]) {
			perr(st->e, line, "%s: set twice in this section (first on line %d)", k, st->seen[i]);
			return 0;
		}
		st->seen[i] = line;
		return tab[i].fn(st, line, v);
	}
	/* Say where a known key would belong: the usual cause of this error. */
	const struct key *other = st->cam ? server_keys : cam_keys;
	size_t on = st->cam ? NKEYS(server_keys) : NKEYS(cam_keys);
	for (size_t i = 0; i < on; i++)
		if (strcmp(other[i].name, k) == 0) {
			perr(st->e, line, "'%s' is not valid in %s (it belongs in %s)", k, where,
			     st->cam ? "[server]" : "a [camera NAME] section");
			return 0;
		}
	perr(st->e, line, "unknown key '%s' in %s", k, where);
	return 0;
}

static void finish(struct pstate *st)
{
	struct vc_conf *c = st->c;

	end_section(st);
	if (!c->tls_cert != !c->tls_key)
		perr(st->e, c->tls_cert ? st->cert_line : st->key_line,
		     "tls_cert and tls_key must be set together");
	static const char *const names[] = { "auth_view", "auth_control", "auth_status" };
	for (int cl = 0; cl < VC_CLASS_COUNT; cl++) {
		if ((c->auth[cl] & VC_AUTH_BASIC) && !c->n_users)
			perr(st->e, st->auth_line[cl], "%s: uses basic but no 'user' is defined", names[cl]);
		if ((c->auth[cl] & VC_AUTH_TOKEN) && !c->token_secret)
			perr(st->e, st->auth_line[cl], "%s: uses token but neither token_secret nor "
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
	struct pstate st = { .e = &e };
	struct vc_conf *c;
	char *copy;
	int r = 0, lineno = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!(c = calloc(1, sizeof(*c))) || !(copy = malloc(len + 1))) {
		free(c);
		return -ENOMEM;
	}
	c->log_level = -1;
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
		char *s = trim(p);
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
			r = section(&st, lineno, trim(s + 1));
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

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int vc_conf_cam_same_open(const struct vc_conf_cam *a, const struct vc_conf_cam *b)
{
	return str_eq(a->name, b->name) && str_eq(a->device, b->device) &&
	       a->mode.fourcc == b->mode.fourcc && a->mode.width == b->mode.width &&
	       a->mode.height == b->mode.height && a->mode.ival.num == b->mode.ival.num &&
	       a->mode.ival.den == b->mode.ival.den && a->input == b->input && a->std == b->std &&
	       memcmp(&a->dv, &b->dv, sizeof(a->dv)) == 0 && a->buffers == b->buffers &&
	       a->idle_stop_ms == b->idle_stop_ms && a->stall_timeout_ms == b->stall_timeout_ms &&
	       /* the serving defaults live in the camera object: a change
		* replaces it in place (its clients stay connected) */
	       a->quality == b->quality && a->rotate == b->rotate && a->flip == b->flip &&
	       a->placeholder == b->placeholder && str_eq(a->encoder, b->encoder);
}

int vc_conf_cam_equal(const struct vc_conf_cam *a, const struct vc_conf_cam *b)
{
	if (!vc_conf_cam_same_open(a, b) || a->n_ctrls != b->n_ctrls)
		return 0;
	for (size_t i = 0; i < a->n_ctrls; i++)
		if (!str_eq(a->ctrls[i].name, b->ctrls[i].name) ||
		    !str_eq(a->ctrls[i].value, b->ctrls[i].value))
			return 0;
	return 1;
}

int vc_conf_print(const struct vc_conf *c, FILE *f, int redact)
{
	static const char *const levels[] = { "error", "warn", "info", "debug" };
	static const char *const classes[] = { "auth_view", "auth_control", "auth_status" };

	fprintf(f, "# effective configuration (from %s)\n[server]\n", c->file);
	for (size_t i = 0; i < c->n_listen; i++)
		fprintf(f, "listen = %s\n", c->listen[i]);
	if (c->log_level >= 0 && c->log_level < 4)
		fprintf(f, "log_level = %s\n", levels[c->log_level]);
	if (c->web_root)
		fprintf(f, "web_root = %s\n", c->web_root);
	if (c->max_clients)
		fprintf(f, "max_clients = %d\n", c->max_clients);
	if (c->max_clients_per_ip)
		fprintf(f, "max_clients_per_ip = %d\n", c->max_clients_per_ip);
	if (c->client_timeout)
		fprintf(f, "client_timeout = %d\n", c->client_timeout);
	if (c->tls_cert)
		fprintf(f, "tls_cert = %s\ntls_key = %s\n", c->tls_cert, c->tls_key);
	if (c->tls_priorities)
		fprintf(f, "tls_priorities = %s\n", c->tls_priorities);
	if (c->cors_origin)
		fprintf(f, "cors_origin = %s\n", c->cors_origin);
	if (c->realm)
		fprintf(f, "realm = %s\n", c->realm);
	for (size_t i = 0; i < c->n_users; i++)
		fprintf(f, "user = %s:%s\n", c->users[i].name, c->users[i].hash);
	/* An unset auth_control that derived "none" stays unset: written out it
	 * would open control writes to the network. */
	for (int cl = 0; c->auth_set && cl < VC_CLASS_COUNT; cl++)
		if (cl != VC_CLASS_CONTROL || c->auth[cl] || (c->auth_explicit & (1u << cl)))
			fprintf(f, "%s = %s\n", classes[cl], vc_conf_auth_name(c->auth[cl]));
	if (c->token_secret_file)
		fprintf(f, "token_secret_file = %s\n", c->token_secret_file);
	else if (c->token_secret && redact)
		fprintf(f, "token_secret = <%zu bytes, redacted>\n", c->token_secret_len);
	else if (c->token_secret)
		fprintf(f, "token_secret = %.*s\n", (int)c->token_secret_len, (const char *)c->token_secret);
	if (c->token_ttl_s)
		fprintf(f, "token_ttl = %d\n", c->token_ttl_s);
	for (size_t i = 0; i < c->n_hosts; i++)
		fprintf(f, "allowed_hosts = %s\n", c->hosts[i]);
	if (c->max_outputs)
		fprintf(f, "max_outputs = %d\n", c->max_outputs);
	if (c->frame_memory_mb)
		fprintf(f, "frame_memory = %d\n", c->frame_memory_mb);
	if (c->max_width)
		fprintf(f, "max_size = %ux%u\n", (unsigned)c->max_width, (unsigned)c->max_height);

	for (size_t i = 0; i < c->n_cams; i++) {
		const struct vc_conf_cam *cam = &c->cams[i];
		fprintf(f, "\n[camera %s]\ndevice = %s\n", cam->name, cam->device);
		if (cam->mode.fourcc) {
			const struct vc_fmt *row = vc_fmt_by_fourcc(cam->mode.fourcc);
			char fcc[16];
			fprintf(f, "format = %s\n", row ? row->name : vc_fourcc_str(cam->mode.fourcc, fcc));
		}
		if (cam->mode.width)
			fprintf(f, "width = %u\nheight = %u\n", cam->mode.width, cam->mode.height);
		if (cam->mode.ival.num) {
			if (cam->mode.ival.num == 1)
				fprintf(f, "fps = %u\n", cam->mode.ival.den);
			else
				fprintf(f, "fps = %u/%u\n", cam->mode.ival.den, cam->mode.ival.num);
		}
		if (cam->input >= 0)
			fprintf(f, "input = %d\n", cam->input);
		if (cam->std)
			fprintf(f, "std = %s\n", vc_conf_std_name(cam->std));
		if (cam->dv.width)
			fprintf(f, "dv_timings = %ux%u%c%u.%03u\n", cam->dv.width, cam->dv.height,
				cam->dv.interlaced ? 'i' : 'p', cam->dv.fps_milli / 1000,
				cam->dv.fps_milli % 1000);
		if (cam->buffers)
			fprintf(f, "buffers = %u\n", cam->buffers);
		if (cam->idle_stop_ms == -1)
			fprintf(f, "idle_stop_ms = never\n");
		else if (cam->idle_stop_ms >= 0)
			fprintf(f, "idle_stop_ms = %d\n", cam->idle_stop_ms);
		if (cam->stall_timeout_ms)
			fprintf(f, "stall_timeout_ms = %d\n", cam->stall_timeout_ms);
		if (cam->quality)
			fprintf(f, "quality = %u\n", cam->quality);
		if (cam->rotate)
			fprintf(f, "rotate = %u\n", cam->rotate);
		for (size_t k = 1; k < sizeof(flips) / sizeof(flips[0]); k++)
			if (cam->flip == flips[k].bits)
				fprintf(f, "flip = %s\n", flips[k].name);
		if (cam->placeholder)
			fprintf(f, "placeholder = yes\n");
		if (cam->encoder)
			fprintf(f, "encoder = %s\n", cam->encoder);
		for (size_t j = 0; j < cam->n_ctrls; j++)
			fprintf(f, "control = %s=%s\n", cam->ctrls[j].name, cam->ctrls[j].value);
	}
	return ferror(f) ? -EIO : 0;
}
