/* Authentication decisions: Basic credentials checked with crypt(3) and a
 * constant-time compare, URL tokens with HMAC-SHA256 (GnuTLS). Small caches
 * of recently verified and recently failed Authorization headers (keyed by an
 * HMAC under a random per-process key, never the password) answer repeats
 * without a hash; the hash itself (yescrypt: tens of ms) runs on a worker
 * through vc_auth_begin / vc_auth_pending_run / vc_auth_end. */
#define LOG_PREFIX "auth: "
#include "server/http/auth.h"

#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define MAC_LEN 32
#define CACHE_N 16
#define CACHE_TTL_S 300
#define FAIL_N 64      /* recent wrong headers: repeating one costs no hash */
#define FAIL_TTL_S 60
#define TOKEN_MAX_PAYLOAD 96

static const char *const class_names[VC_CLASS_COUNT] = { "view", "control", "status" };

struct user {
	char *name, *hash;
};

struct cache_ent {
	uint8_t mac[MAC_LEN];
	time_t until;
	size_t user;
};

struct vc_auth {
	unsigned policy[VC_CLASS_COUNT];
	char *realm;
	size_t n_users;
	struct user *users;
	uint8_t *secret;
	size_t secret_len;
	uint8_t cache_key[32];
	struct cache_ent cache[CACHE_N]; /* verified: only successes enter */
	unsigned cache_next;
	struct cache_ent fail[FAIL_N];   /* failed headers */
	unsigned fail_next;
	struct crypt_data *cd; /* large (tens of KiB): allocated once */
};

int vc_auth_mem_equal(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int vc_auth_b64url_encode(const void *in, size_t n, char *out, size_t outlen)
{
	const uint8_t *p = in;
	size_t o = 0;

	if (outlen < (n * 4 + 2) / 3 + 1)
		return -ENOSPC;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		if (i + 1 < n)
			out[o++] = b64url[(v >> 6) & 63];
		if (i + 2 < n)
			out[o++] = b64url[v & 63];
	}
	out[o] = '\0';
	return (int)o;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int vc_auth_b64_decode(const char *in, size_t n, void *out, size_t outlen)
{
	uint8_t *o = out;
	size_t w = 0;
	uint32_t acc = 0;
	int bits = 0;

	while (n && in[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int v = b64val(in[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (w >= outlen)
				return -ENOSPC;
			o[w++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (acc != 0) /* non-canonical trailing bits: refuse, one token = one string */
		return -EINVAL;
	return (int)w;
}

int vc_auth_new(const struct vc_conf *c, struct vc_auth **out)
{
	struct vc_auth *a = calloc(1, sizeof(*a));
	int r = -ENOMEM;

	if (!a)
		return -ENOMEM;
	memcpy(a->policy, c->auth, sizeof(a->policy));
	if (!(a->realm = strdup(c->realm ? c->realm : "vcapd")))
		goto fail;
	if (c->n_users) {
		if (!(a->users = calloc(c->n_users, sizeof(*a->users))))
			goto fail;
		if (!(a->cd = calloc(1, sizeof(*a->cd))))
			goto fail;
	}
	for (size_t i = 0; i < c->n_users; i++, a->n_users++) {
		a->users[i].name = strdup(c->users[i].name);
		a->users[i].hash = strdup(c->users[i].hash);
		if (!a->users[i].name || !a->users[i].hash) {
			a->n_users++;
			goto fail;
		}
		int cs = crypt_checksalt(c->users[i].hash);
		if (cs != CRYPT_SALT_OK && cs != CRYPT_SALT_METHOD_LEGACY) {
			log_error("user %s: password hash is not a form libcrypt accepts (%d)",
				  c->users[i].name, cs);
			a->n_users++;
			r = -EINVAL;
			goto fail;
		}
	}
	if (c->token_secret) {
		if (!(a->secret = malloc(c->token_secret_len)))
			goto fail;
		memcpy(a->secret, c->token_secret, c->token_secret_len);
		a->secret_len = c->token_secret_len;
	}
	if ((r = gnutls_rnd(GNUTLS_RND_KEY, a->cache_key, sizeof(a->cache_key))) < 0) {
		log_error("random key: %s", gnutls_strerror(r));
		r = -EIO;
		goto fail;
	}
	*out = a;
	return 0;
fail:
	vc_auth_free(a);
	return r;
}

void vc_auth_free(struct vc_auth *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_users; i++) {
		free(a->users[i].name);
		free(a->users[i].hash);
	}
	free(a->users);
	if (a->secret)
		memset(a->secret, 0, a->secret_len);
	free(a->secret);
	free(a->cd);
	free(a->realm);
	memset(a, 0, sizeof(*a));
	free(a);
}

unsigned vc_auth_policy(const struct vc_auth *a, enum vc_auth_class cl)
{
	return a->policy[cl];
}

const char *vc_auth_realm(const struct vc_auth *a)
{
	return a->realm;
}

static int hmac(const void *key, size_t keylen, const void *msg, size_t len, uint8_t mac[MAC_LEN])
{
	return gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, keylen, msg, len, mac) < 0 ? -EIO : 0;
}

static int scope_ok(const char *s, size_t n)
{
	/* A comma list of known class names, each once at most. */
	size_t i = 0;
	if (!n)
		return 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		int found = 0;
		for (int c = 0; c < VC_CLASS_COUNT; c++)
			if (strlen(class_names[c]) == j - i && memcmp(class_names[c], s + i, j - i) == 0)
				found = 1;
		if (!found)
			return 0;
		if (j < n && j + 1 == n)
			return 0; /* trailing comma */
		i = j + 1;
	}
	return 1;
}

static int scope_has(const char *s, size_t n, enum vc_auth_class cl)
{
	const char *want = class_names[cl];
	size_t wl = strlen(want), i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		if (j - i == wl && memcmp(s + i, want, wl) == 0)
			return 1;
		i = j + 1;
	}
	return 0;
}

static int token_mac(const struct vc_auth *a, const char *expiry, size_t el, const char *scope,
		     size_t sl, uint8_t mac[MAC_LEN])
{
	char msg[sizeof("vcapd-token-v1\n") + TOKEN_MAX_PAYLOAD];
	int n = snprintf(msg, sizeof(msg), "vcapd-token-v1\n%.*s\n%.*s", (int)el, expiry, (int)sl, scope);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return -EINVAL;
	return hmac(a->secret, a->secret_len, msg, (size_t)n, mac);
}

int vc_auth_token_make(const struct vc_auth *a, const char *scope, time_t expiry,
		       char *out, size_t outlen)
{
	char payload[TOKEN_MAX_PAYLOAD], exp[24];
	uint8_t mac[MAC_LEN];

	if (!a->secret)
		return -ENOKEY;
	if (!scope_ok(scope, strlen(scope)) || expiry <= 0)
		return -EINVAL;
	snprintf(exp, sizeof(exp), "%lld", (long long)expiry);
	int pl = snprintf(payload, sizeof(payload), "%s.%s", exp, scope);
	if (pl < 0 || (size_t)pl >= sizeof(payload))
		return -EINVAL;
	if (token_mac(a, exp, strlen(exp), scope, strlen(scope), mac) < 0)
		return -EIO;
	int e1 = vc_auth_b64url_encode(payload, (size_t)pl, out, outlen);
	if (e1 < 0 || (size_t)e1 + 1 >= outlen)
		return -ENOSPC;
	out[e1] = '.';
	if (vc_auth_b64url_encode(mac, MAC_LEN, out + e1 + 1, outlen - (size_t)e1 - 1) < 0)
		return -ENOSPC;
	return 0;
}

static int check_token(const struct vc_auth *a, enum vc_auth_class cl, const char *tok, time_t now)
{
	char payload[TOKEN_MAX_PAYLOAD + 1];
	uint8_t mac[MAC_LEN + 4], want[MAC_LEN];
	const char *dot = strchr(tok, '.');

	if (!a->secret || !dot || strlen(tok) > 300)
		return -EACCES;
	int pl = vc_auth_b64_decode(tok, (size_t)(dot - tok), payload, TOKEN_MAX_PAYLOAD);
	int ml = vc_auth_b64_decode(dot + 1, strlen(dot + 1), mac, sizeof(mac));
	if (pl <= 0 || ml != MAC_LEN)
		return -EACCES;
	payload[pl] = '\0';
	char *sep = memchr(payload, '.', (size_t)pl);
	if (!sep)
		return -EACCES;
	size_t el = (size_t)(sep - payload), sl = (size_t)pl - el - 1;
	/* MAC first (constant time), then the fields it vouches for. */
	if (token_mac(a, payload, el, sep + 1, sl, want) < 0 || !vc_auth_mem_equal(mac, want, MAC_LEN))
		return -EACCES;
	char *end;
	*sep = '\0';
	long long exp = strtoll(payload, &end, 10);
	if (*end || el == 0 || exp <= (long long)now)
		return -EACCES;
	if (!scope_ok(sep + 1, sl) || !scope_has(sep + 1, sl, cl))
		return -EACCES;
	return 0;
}

/* A hash every unknown user name is checked against, so "no such user" costs
 * the same time as a wrong password. The salt is fixed; the result is never
 * compared to anything that could match. */
static const char *dummy_setting(const struct vc_auth *a)
{
	return a->n_users ? a->users[0].hash : "$6$vcapddummysalt$";
}

/* One password check taken off the loop: copies of everything the hash
 * needs, so the worker touches nothing the loop owns. */
struct vc_auth_pending {
	uint8_t key[MAC_LEN];   /* cache key of the header */
	char name[256];         /* user name as sent */
	char *pass;             /* password as sent (wiped on free) */
	char *setting;          /* the hash checked against */
	int known;              /* name is a configured user */
	int ran, ok;            /* set by vc_auth_pending_run */
};

void vc_auth_pending_free(struct vc_auth_pending *p)
{
	if (!p)
		return;
	if (p->pass) {
		memset(p->pass, 0, strlen(p->pass));
		free(p->pass);
	}
	free(p->setting);
	memset(p, 0, sizeof(*p));
	free(p);
}

void vc_auth_pending_run(struct vc_auth_pending *p, struct crypt_data *cd)
{
	memset(cd, 0, sizeof(*cd));
	const char *h = crypt_r(p->pass, p->setting, cd);
	p->ok = 0;
	if (h && p->known) {
		size_t hl = strlen(h), sl = strlen(p->setting);
		p->ok = hl == sl && vc_auth_mem_equal(h, p->setting, hl);
	}
	memset(cd, 0, sizeof(*cd)); /* holds key material */
	p->ran = 1;
}

static int cache_find(const struct cache_ent *c, unsigned n, const uint8_t key[MAC_LEN], time_t now)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].until > now && vc_auth_mem_equal(c[i].mac, key, MAC_LEN))
			return (int)i;
	return -1;
}

/* Decodes "Basic b64(user:pass)": cache hits answer at once; a miss
 * prepares *out for the hash. 0 (hit), -EACCES, -EINPROGRESS, -ENOMEM. */
static int basic_begin(struct vc_auth *a, const char *hdr, time_t now, size_t *who,
		       struct vc_auth_pending **out)
{
	char cred[512];
	uint8_t key[MAC_LEN];
	int i;

	if (!a->n_users || strncasecmp(hdr, "Basic ", 6) != 0)
		return -EACCES;
	const char *b = hdr + 6;
	while (*b == ' ')
		b++;
	size_t bl = strlen(b);
	while (bl && b[bl - 1] == ' ')
		bl--;
	/* Caches: HMAC of the whole header under a per-process random key. */
	if (hmac(a->cache_key, sizeof(a->cache_key), b, bl, key) < 0)
		return -EACCES;
	if ((i = cache_find(a->cache, CACHE_N, key, now)) >= 0) {
		*who = a->cache[i].user;
		return 0;
	}
	if (cache_find(a->fail, FAIL_N, key, now) >= 0)
		return -EACCES; /* this exact header failed recently: no new hash */

	int n = vc_auth_b64_decode(b, bl, cred, sizeof(cred) - 1);
	if (n <= 0)
		return -EACCES;
	cred[n] = '\0';
	char *colon = strchr(cred, ':');
	if (memchr(cred, '\0', (size_t)n) || !colon || (size_t)(colon - cred) >= 256) {
		memset(cred, 0, sizeof(cred));
		return -EACCES;
	}
	*colon = '\0';
	struct vc_auth_pending *p = calloc(1, sizeof(*p));
	size_t found = a->n_users;
	for (size_t u = 0; u < a->n_users; u++)
		if (strcmp(a->users[u].name, cred) == 0)
			found = u;
	if (p) {
		memcpy(p->key, key, MAC_LEN);
		memcpy(p->name, cred, (size_t)(colon - cred) + 1); /* < 256: checked above */
		p->known = found < a->n_users;
		p->pass = strdup(colon + 1);
		p->setting = strdup(p->known ? a->users[found].hash : dummy_setting(a));
	}
	memset(cred, 0, sizeof(cred));
	if (!p || !p->pass || !p->setting) {
		vc_auth_pending_free(p);
		return -ENOMEM;
	}
	*out = p;
	return -EINPROGRESS;
}

int vc_auth_begin(struct vc_auth *a, enum vc_auth_class cl, const char *authorization,
		  const char *token, time_t now, const char **user, struct vc_auth_pending **p)
{
	unsigned pol = a->policy[cl];
	size_t who;
	int r = -EACCES;

	*p = NULL;
	if (!pol) {
		if (user)
			*user = "";
		return 0;
	}
	if ((pol & VC_AUTH_TOKEN) && token && check_token(a, cl, token, now) == 0) {
		if (user)
			*user = "token";
		return 0;
	}
	if ((pol & VC_AUTH_BASIC) && authorization)
		r = basic_begin(a, authorization, now, &who, p);
	if (r == 0 && user)
		*user = a->users[who].name;
	return r == -ENOMEM ? -EACCES : r;
}

int vc_auth_end(struct vc_auth *a, struct vc_auth_pending *p, time_t now, const char **user)
{
	size_t found = a->n_users;

	if (!p->ran)
		return -EAGAIN;
	for (size_t u = 0; u < a->n_users; u++)
		if (strcmp(a->users[u].name, p->name) == 0)
			found = u;
	/* The config may have been reloaded while the hash ran: the answer
	 * holds only if the user still has the hash that was checked. */
	if (p->known != (found < a->n_users) ||
	    strcmp(p->known ? a->users[found].hash : dummy_setting(a), p->setting) != 0)
		return -ESTALE;
	struct cache_ent *e = p->ok ? &a->cache[a->cache_next++ % CACHE_N]
				    : &a->fail[a->fail_next++ % FAIL_N];
	memcpy(e->mac, p->key, MAC_LEN);
	e->until = now + (p->ok ? CACHE_TTL_S : FAIL_TTL_S);
	e->user = found;
	if (!p->ok)
		return -EACCES;
	if (user)
		*user = a->users[found].name;
	return 0;
}

int vc_auth_check(struct vc_auth *a, enum vc_auth_class cl, const char *authorization,
		  const char *token, time_t now, const char **user)
{
	struct vc_auth_pending *p;
	int r = vc_auth_begin(a, cl, authorization, token, now, user, &p);

	if (r != -EINPROGRESS)
		return r;
	vc_auth_pending_run(p, a->cd);
	r = vc_auth_end(a, p, now, user);
	vc_auth_pending_free(p);
	return r == 0 ? 0 : -EACCES;
}
