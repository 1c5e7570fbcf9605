/* The [server] keys, one row each (see conf_keys.h), in the printer's
 * order (the restart list's too: "max_clients,web_root"), and the
 * functions of those whose values are lists, levels, users, policies or
 * secrets. */
#include "common/conf_keys.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fwd.h"
#include "common/log.h"

#define MIN_SECRET 16
#define MAX_SECRET 4096

#define SRV(field) offsetof(struct vc_conf, field)
/* An INT or ENUM row's field: where, and how wide (1, 2 or 4 bytes) */
#define SRV_INT(field) SRV(field), .size = sizeof(((struct vc_conf *)0)->field)
#define OTHER(p, pr) .parse = p, .print = pr

/* ---- checks of STR rows ---- */

static int chk_abs_path(const char *v, char *why, size_t n)
{
	if (v[0] == '/')
		return 0;
	snprintf(why, n, "'%s' must be an absolute path", v);
	return -1;
}

static int chk_readable(const char *v, char *why, size_t n)
{
	if (access(v, R_OK) == 0)
		return 0;
	snprintf(why, n, "cannot read '%s': %s", v, strerror(errno));
	return -1;
}

/* GnuTLS checks the syntax when the listener starts (and refuses to start
 * on an error); here only what cannot be one. */
static int chk_tls_priorities(const char *v, char *why, size_t n)
{
	if (strlen(v) <= 512 && strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				       "0123456789-+:!%_.=@") == strlen(v))
		return 0;
	snprintf(why, n, "'%s' is not a GnuTLS priority string", v);
	return -1;
}

static int chk_origin(const char *v, char *why, size_t n)
{
	if (!strcmp(v, "*") || !strncmp(v, "http://", 7) || !strncmp(v, "https://", 8))
		return 0;
	snprintf(why, n, "'%s' must be * or an origin like https://host", v);
	return -1;
}

static int chk_realm(const char *v, char *why, size_t n)
{
	if (!strchr(v, '"') && !strchr(v, '\\'))
		return 0;
	snprintf(why, n, "'%s' must not contain quotes or backslashes", v);
	return -1;
}

/* rtsp: PORT, ADDR:PORT or off. */
static int chk_rtsp(const char *v, char *why, size_t n)
{
	const char *port = strrchr(v, ':');
	char *end;
	unsigned long p;

	if (!strcmp(v, "off"))
		return 0;
	port = port ? port + 1 : v;
	p = strtoul(port, &end, 10);
	if (*port >= '0' && *port <= '9' && !*end && p <= 65535)
		return 0;
	snprintf(why, n, "'%s' must be PORT, ADDR:PORT or off", v);
	return -1;
}

/* rtsp_digest: user:HA1 pairs (32 hex digits), comma-separated. */
static int chk_rtsp_digest(const char *v, char *why, size_t n)
{
	while (*v) {
		size_t len = strcspn(v, ",");
		const char *colon = memchr(v, ':', len);

		if (!colon || colon == v || len - (size_t)(colon - v) - 1 != 32 ||
		    strspn(colon + 1, "0123456789abcdefABCDEF") < 32) {
			snprintf(why, n, "must be user:HA1[,user:HA1...], HA1 = 32 hex digits of "
					 "md5(user:vcapd:password)");
			return -1;
		}
		v += len + (v[len] == ',');
	}
	return 0;
}

/* Appends a copy of v to a list of strings: 0 or -ENOMEM. */
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

static int p_listen(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
		    int line, const char *v)
{
	struct vc_conf *c = base;
	char host[128];
	int port;

	(void)k;
	if (vc_conf_split_listen(v, host, sizeof(host), &port) < 0) {
		vc_conf_bad(st, line, "listen: '%s' is not HOST:PORT, [IPV6]:PORT or :PORT (port 0-65535, 0 = any free one)", v);
		return 0;
	}
	return push_str(&c->listen, &c->n_listen, v);
}

static void pr_listen(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;

	(void)redact;
	for (size_t i = 0; i < c->n_listen; i++)
		fprintf(f, "%s = %s\n", k->name, c->listen[i]);
}

static const char *const levels[] = { "error", "warn", "info", "debug" };

static int p_log_level(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
		       int line, const char *v)
{
	int l = vc_log_parse_level(v);

	(void)k;
	if (l < 0)
		vc_conf_bad(st, line, "log_level: '%s' is not one of error, warn, info, debug", v);
	else
		((struct vc_conf *)base)->log_level = l;
	return 0;
}

static void pr_log_level(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	int l = ((const struct vc_conf *)base)->log_level;

	(void)redact;
	if (l >= 0 && l < 4)
		fprintf(f, "%s = %s\n", k->name, levels[l]);
}

static int p_user(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
		  int line, const char *v)
{
	const char *colon = strchr(v, ':');
	struct vc_conf *c = base;

	(void)k;
	if (!colon || colon == v) {
		vc_conf_bad(st, line, "user: '%s' is not NAME:HASH", v);
		return 0;
	}
	if (colon[1] != '$' || strchr(colon + 1, ':')) {
		vc_conf_bad(st, line, "user: the password of '%.*s' must be a crypt(3) hash such as "
			    "$y$... or $6$... (make one with: mkpasswd -m yescrypt)",
			    (int)(colon - v), v);
		return 0;
	}
	for (size_t i = 0; i < c->n_users; i++)
		if (strlen(c->users[i].name) == (size_t)(colon - v) &&
		    memcmp(c->users[i].name, v, (size_t)(colon - v)) == 0) {
			vc_conf_bad(st, line, "user: '%.*s' is defined twice", (int)(colon - v), v);
			return 0;
		}
	struct vc_conf_user nu = { strndup(v, (size_t)(colon - v)), strdup(colon + 1) };
	struct vc_conf_user *u = nu.name && nu.hash ? realloc(c->users, (c->n_users + 1) * sizeof(*u))
						    : NULL;
	if (!u) {
		free(nu.name);
		free(nu.hash);
		return -ENOMEM;
	}
	c->users = u;
	u[c->n_users++] = nu;
	return 0;
}

/* Users as the file has them (redacting hides only an inline token secret). */
static void pr_user(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;

	(void)redact;
	/* Indexed, not end-pointer: users is NULL when there are none, and
	 * NULL + 0 is undefined behaviour in C (UBSan, fuzz_conf on "") */
	for (size_t i = 0; i < c->n_users; i++)
		fprintf(f, "%s = %s:%s\n", k->name, c->users[i].name, c->users[i].hash);
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
	if (strcmp(vc_conf_trim(tmp), "none") == 0) {
		*out = 0;
		return 0;
	}
	for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		t = vc_conf_trim(t);
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

/* auth_view, auth_control, auth_status: off is the class's auth[] entry. */
static unsigned auth_class(const struct vc_conf_key *k)
{
	return (unsigned)((k->off - offsetof(struct vc_conf, auth)) / sizeof(unsigned));
}

static int p_auth(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
		  int line, const char *v)
{
	struct vc_conf *c = base;

	if (parse_policy(v, &c->auth[auth_class(k)]) < 0) {
		vc_conf_bad(st, line, "%s: '%s' is not none, basic, token or basic,token", k->name, v);
		return 0;
	}
	c->auth_set = 1;
	c->auth_explicit |= 1u << auth_class(k);
	return 0;
}

/* An unset auth_control that derived "none" stays unset: written out it
 * would open control writes to the network. */
static void pr_auth(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;
	unsigned cl = auth_class(k);

	(void)redact;
	if (c->auth_set && (cl != VC_CLASS_CONTROL || c->auth[cl] || (c->auth_explicit & (1u << cl))))
		fprintf(f, "%s = %s\n", k->name, vc_conf_auth_name(c->auth[cl]));
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

static int p_token_secret(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
		          int line, const char *v)
{
	struct vc_conf *c = base;
	int *secret_line = vc_conf_pstate_secret_line(st);
	size_t n = strlen(v);

	(void)k;
	if (*secret_line) {
		vc_conf_bad(st, line, "token_secret: a secret was already set on line %d", *secret_line);
		return 0;
	}
	if (n < MIN_SECRET) {
		vc_conf_bad(st, line, "token_secret: too short (%zu bytes, need at least %d)", n,
			    MIN_SECRET);
		return 0;
	}
	if (!(c->token_secret = malloc(n)))
		return -ENOMEM;
	memcpy(c->token_secret, v, n);
	c->token_secret_len = n;
	*secret_line = line;
	return 0;
}

/* An inline secret; one read from a file is printed as its file. */
static void pr_token_secret(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;

	if (c->token_secret_file || !c->token_secret)
		return;
	if (redact)
		fprintf(f, "%s = <%zu bytes, redacted>\n", k->name, c->token_secret_len);
	else
		fprintf(f, "%s = %.*s\n", k->name, (int)c->token_secret_len,
			(const char *)c->token_secret);
}

static int p_token_secret_file(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
		               int line, const char *v)
{
	struct vc_conf *c = base;
	int *secret_line = vc_conf_pstate_secret_line(st);

	(void)k;
	if (*secret_line) {
		vc_conf_bad(st, line, "token_secret_file: a secret was already set on line %d",
			    *secret_line);
		return 0;
	}
	/* A name without '/' is a systemd credential (LoadCredential=NAME:PATH
	 * in the unit): root reads PATH and hands it to this service alone in
	 * $CREDENTIALS_DIRECTORY, which DynamicUser= cannot do with a file. */
	char cred[4096];
	const char *path = v;

	if (!strchr(v, '/')) {
		const char *dir = getenv("CREDENTIALS_DIRECTORY");

		if (!dir || !*dir) {
			vc_conf_bad(st, line, "token_secret_file: '%s' is a credential name (no '/') "
				    "but CREDENTIALS_DIRECTORY is not set (LoadCredential=%s:PATH in "
				    "the unit, or give a path)", v, v);
			return 0;
		}
		snprintf(cred, sizeof(cred), "%s/%s", dir, v);
		path = cred;
	}
	int r = read_secret_file(path, &c->token_secret, &c->token_secret_len);
	if (r == -ENOMEM)
		return r;
	if (r == -EMSGSIZE) {
		vc_conf_bad(st, line, "token_secret_file: '%s' holds fewer than %d bytes", path,
			    MIN_SECRET);
		return 0;
	}
	if (r < 0) {
		vc_conf_bad(st, line, "token_secret_file: cannot read '%s': %s", path, strerror(-r));
		return 0;
	}
	*secret_line = line;
	return vc_conf_set_str(&c->token_secret_file, v);
}

/* A list value "word [word...]" (spaces or commas; the key repeatable):
 * each word ok() accepts goes onto *arr; ok() reports a bad one and returns
 * 0, which ends the line. what names a word in "names no ...". */
static int p_words(struct vc_conf_pstate *st, int line, const char *key, const char *v,
		   int (*ok)(struct vc_conf_pstate *st, int line, const char *w), char ***arr,
		   size_t *n, const char *what)
{
	char buf[512];
	int got = 0;

	if (strlen(v) >= sizeof(buf)) {
		vc_conf_bad(st, line, "%s: list longer than %zu bytes", key, sizeof(buf) - 1);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *save = NULL, *t = strtok_r(buf, " ,\t", &save); t; t = strtok_r(NULL, " ,\t", &save)) {
		if (!ok(st, line, t))
			return 0;
		int r = push_str(arr, n, t);
		if (r < 0)
			return r;
		got++;
	}
	if (!got)
		vc_conf_bad(st, line, "%s: '%s' names no %s", key, v, what);
	return 0;
}

/* One "key = word" line per word of a list key. */
static void pr_words(const char *key, char *const *arr, size_t n, FILE *f)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s = %s\n", key, arr[i]);
}

static int host_ok(struct vc_conf_pstate *st, int line, const char *t)
{
	for (const char *p = t; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '*')) {
			vc_conf_bad(st, line, "allowed_hosts: '%s' is not a host name (letters, digits, '-', "
				    "'.'; '*' alone = any; '*.' prefix = subdomains)", t);
			return 0;
		}
	if (strchr(t, '*') && strcmp(t, "*") != 0 && (t[0] != '*' || t[1] != '.' || strchr(t + 1, '*'))) {
		vc_conf_bad(st, line, "allowed_hosts: '%s': '*' is allowed alone or as a '*.' prefix", t);
		return 0;
	}
	return 1;
}

/* "name [name...]": Host header names of this server. */
static int p_allowed_hosts(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
			   int line, const char *v)
{
	struct vc_conf *c = base;

	return p_words(st, line, k->name, v, host_ok, &c->hosts, &c->n_hosts, "host");
}

static void pr_allowed_hosts(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;

	(void)redact;
	pr_words(k->name, c->hosts, c->n_hosts, f);
}

static int proxy_ok(struct vc_conf_pstate *st, int line, const char *t)
{
	struct vc_fwd_net net;

	if (vc_fwd_net_parse(t, &net) == 0)
		return 1;
	vc_conf_bad(st, line, "trusted_proxies: '%s' is not an IPv4 or IPv6 address or "
		    "ADDRESS/PREFIX", t);
	return 0;
}

/* "addr[/bits] [addr[/bits]...]": reverse proxies whose Forwarded /
 * X-Forwarded-For headers name the client (common/fwd.h). */
static int p_trusted_proxies(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base,
			     int line, const char *v)
{
	struct vc_conf *c = base;

	return p_words(st, line, k->name, v, proxy_ok, &c->proxies, &c->n_proxies, "address");
}

static void pr_trusted_proxies(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;

	(void)redact;
	pr_words(k->name, c->proxies, c->n_proxies, f);
}

static int p_max_size(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		      const char *v)
{
	struct vc_conf *c = base;
	char *x, *end = NULL;
	unsigned long w = strtoul(v, &x, 10), h = 0;

	(void)k;
	if (x != v && *x == 'x')
		h = strtoul(x + 1, &end, 10);
	if (x == v || *x != 'x' || end == x + 1 || *end || w < 16 || h < 16 || w > 16384 || h > 16384) {
		vc_conf_bad(st, line, "max_size: '%s' is not WIDTHxHEIGHT (16-16384 each)", v);
		return 0;
	}
	c->max_width = (uint32_t)w;
	c->max_height = (uint32_t)h;
	return 0;
}

static void pr_max_size(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf *c = base;

	(void)redact;
	if (c->max_width)
		fprintf(f, "%s = %ux%u\n", k->name, (unsigned)c->max_width, (unsigned)c->max_height);
}

const struct vc_conf_key vc_conf_server_keys[] = {
	{ .name = "listen", .type = VC_CONF_T_OTHER, .apply = VC_CONF_RESTART, .repeatable = 1,
	  .example = "127.0.0.1:8080", OTHER(p_listen, pr_listen) },
	{ .name = "log_level", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE, .example = "debug",
	  .off = SRV(log_level), .size = sizeof(int),
	  OTHER(p_log_level, pr_log_level) },
	{ .name = "max_clients", .type = VC_CONF_T_INT, .apply = VC_CONF_RESTART,
	  .off = SRV_INT(max_clients), .lo = 1, .hi = 100000, .def = VC_CONF_DEF_MAX_CLIENTS,
	  .range = "an integer 1-100000", .example = "100" },
	{ .name = "max_clients_per_ip", .type = VC_CONF_T_INT, .apply = VC_CONF_RESTART,
	  .off = SRV_INT(max_clients_per_ip), .lo = 1, .hi = 100000,
	  .def = VC_CONF_DEF_MAX_CLIENTS_PER_IP, .range = "an integer 1-100000", .example = "8" },
	{ .name = "client_timeout", .type = VC_CONF_T_INT, .apply = VC_CONF_RESTART,
	  .off = SRV_INT(client_timeout), .lo = 1, .hi = 3600, .def = VC_CONF_DEF_CLIENT_TIMEOUT_S,
	  .range = "seconds 1-3600", .example = "60" },
	{ .name = "header_timeout", .type = VC_CONF_T_INT, .apply = VC_CONF_RESTART,
	  .off = SRV_INT(header_timeout), .lo = 1, .hi = 3600, .def = VC_CONF_DEF_HEADER_TIMEOUT_S,
	  .range = "seconds 1-3600", .example = "10" },
	{ .name = "tls_cert", .type = VC_CONF_T_STR, .apply = VC_CONF_RESTART, .off = SRV(tls_cert),
	  .check = chk_readable, .example = "/etc/vcapd/cert.pem" },
	{ .name = "tls_key", .type = VC_CONF_T_STR, .apply = VC_CONF_RESTART, .off = SRV(tls_key),
	  .check = chk_readable, .example = "/etc/vcapd/key.pem" },
	{ .name = "tls_priorities", .type = VC_CONF_T_STR, .apply = VC_CONF_RESTART,
	  .off = SRV(tls_priorities), .check = chk_tls_priorities, .example = "NORMAL:-VERS-TLS1.2" },
	{ .name = "web_root", .type = VC_CONF_T_STR, .apply = VC_CONF_RESTART, .off = SRV(web_root),
	  .check = chk_abs_path, .example = "/usr/share/vcapd/web" },
	{ .name = "cors_origin", .type = VC_CONF_T_STR, .apply = VC_CONF_LIVE, .off = SRV(cors_origin),
	  .check = chk_origin, .example = "https://example.org" },
	{ .name = "realm", .type = VC_CONF_T_STR, .apply = VC_CONF_LIVE, .off = SRV(realm),
	  .check = chk_realm, .example = "cameras" },
	{ .name = "rtsp", .type = VC_CONF_T_STR, .apply = VC_CONF_RESTART, .off = SRV(rtsp),
	  .check = chk_rtsp, .example = "8554" },
	{ .name = "rtsp_timeout", .type = VC_CONF_T_INT, .apply = VC_CONF_RESTART,
	  .off = SRV_INT(rtsp_timeout_s), .lo = 5, .hi = 3600, .def = VC_CONF_DEF_RTSP_TIMEOUT_S,
	  .range = "seconds 5-3600", .example = "60" },
	{ .name = "rtsp_digest", .type = VC_CONF_T_STR, .apply = VC_CONF_LIVE,
	  .off = SRV(rtsp_digest), .check = chk_rtsp_digest,
	  .example = "alice:0123456789abcdef0123456789abcdef" },
	{ .name = "user", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE, .repeatable = 1,
	  .example = "alice:$y$j9T$salt$hash", OTHER(p_user, pr_user) },
	{ .name = "auth_view", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE,
	  .off = SRV(auth[VC_CLASS_VIEW]), .example = "none", .size = sizeof(unsigned),
	  OTHER(p_auth, pr_auth) },
	{ .name = "auth_control", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE,
	  .off = SRV(auth[VC_CLASS_CONTROL]), .example = "none", .size = sizeof(unsigned),
	  OTHER(p_auth, pr_auth) },
	{ .name = "auth_status", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE,
	  .off = SRV(auth[VC_CLASS_STATUS]), .example = "none", .size = sizeof(unsigned),
	  OTHER(p_auth, pr_auth) },
	{ .name = "token_secret", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE,
	  .example = "0123456789abcdef0123", OTHER(p_token_secret, pr_token_secret) },
	{ .name = "token_secret_file", .type = VC_CONF_T_STR, .apply = VC_CONF_LIVE,
	  .off = SRV(token_secret_file), .example = "/etc/vcapd/token.key",
	  .parse = p_token_secret_file },
	{ .name = "token_ttl", .type = VC_CONF_T_INT, .apply = VC_CONF_LIVE, .off = SRV_INT(token_ttl_s),
	  .lo = 1, .hi = 366L * 86400, .def = VC_CONF_DEF_TOKEN_TTL_S,
	  .range = "a number of seconds 1-31622400", .example = "600" },
	/* the stream layer's memory budget (0 = its defaults) and Host names */
	{ .name = "allowed_hosts", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE, .repeatable = 1,
	  .example = "cam.example.org", OTHER(p_allowed_hosts, pr_allowed_hosts) },
	{ .name = "trusted_proxies", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE, .repeatable = 1,
	  .range = "addresses or ADDRESS/PREFIX, IPv4 or IPv6", .example = "127.0.0.1 ::1",
	  OTHER(p_trusted_proxies, pr_trusted_proxies) },
	{ .name = "max_outputs", .type = VC_CONF_T_INT, .apply = VC_CONF_LIVE,
	  .off = SRV_INT(max_outputs), .lo = 1, .hi = 1000, .def = VC_CONF_DEF_MAX_OUTPUTS,
	  .range = "an integer 1-1000", .example = "4" },
	{ .name = "max_outputs_per_ip", .type = VC_CONF_T_INT, .apply = VC_CONF_LIVE,
	  .off = SRV_INT(max_outputs_per_ip), .lo = 1, .hi = 1000,
	  .def = VC_CONF_DEF_MAX_OUTPUTS_PER_IP, .range = "an integer 1-1000", .example = "2" },
	{ .name = "frame_memory", .type = VC_CONF_T_INT, .apply = VC_CONF_LIVE,
	  .off = SRV_INT(frame_memory_mb), .lo = 8, .hi = 1 << 20, .def = VC_CONF_DEF_FRAME_MEMORY_MB,
	  .range = "MiB 8-1048576", .example = "128" },
	{ .name = "client_hold", .type = VC_CONF_T_INT, .apply = VC_CONF_LIVE,
	  .off = SRV_INT(client_hold_s), .lo = 1, .hi = 3600, .def = VC_CONF_DEF_CLIENT_HOLD_S,
	  .range = "seconds 1-3600", .example = "10" },
	{ .name = "max_size", .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE, .off = SRV(max_width),
	  .size = 2 * sizeof(uint32_t), .example = "1920x1080", OTHER(p_max_size, pr_max_size) },
};
const size_t vc_conf_n_server_keys = sizeof(vc_conf_server_keys) / sizeof(vc_conf_server_keys[0]);
