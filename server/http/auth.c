/* Authentication decisions: Basic credentials checked with crypt(3) and a
 * constant-time compare, URL tokens with HMAC-SHA256 (GnuTLS). A small cache
 * of recently verified Authorization headers (keyed by an HMAC under a random
 * per-process key, never the password) keeps slow hashes such as yescrypt off
 * the loop for every snapshot a browser polls. */
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
	struct cache_ent cache[CACHE_N];
	unsigned cache_next;
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

static int check_basic(struct vc_auth *a, const char *hdr, time_t now, size_t *who)
{
	char cred[512];
	uint8_t key[MAC_LEN];

	if (!a->n_users || strncasecmp(hdr, "Basic ", 6) != 0)
		return -EACCES;
	const char *b = hdr + 6;
	while (*b == ' ')
		b++;
	size_t bl = strlen(b);
	while (bl && b[bl - 1] == ' ')
		bl--;
	/* Cache: HMAC of the whole header under a per-process random key. */
	if (hmac(a->cache_key, sizeof(a->cache_key), b, bl, key) < 0)
		return -EACCES;
	for (unsigned i = 0; i < CACHE_N; i++)
		if (a->cache[i].until > now && vc_auth_mem_equal(a->cache[i].mac, key, MAC_LEN)) {
			*who = a->cache[i].user;
			return 0;
		}

	int n = vc_auth_b64_decode(b, bl, cred, sizeof(cred) - 1);
	if (n <= 0)
		return -EACCES;
	cred[n] = '\0';
	if (memchr(cred, '\0', (size_t)n))
		return -EACCES;
	char *colon = strchr(cred, ':');
	if (!colon)
		return -EACCES;
	*colon = '\0';
	const char *pass = colon + 1;
	size_t found = a->n_users;
	for (size_t i = 0; i < a->n_users; i++)
		if (strcmp(a->users[i].name, cred) == 0)
			found = i;
	const char *setting = found < a->n_users ? a->users[found].hash : dummy_setting(a);
	memset(a->cd, 0, sizeof(*a->cd));
	const char *h = crypt_r(pass, setting, a->cd);
	int ok = 0;
	if (h && found < a->n_users) {
		size_t hl = strlen(h), sl = strlen(setting);
		ok = hl == sl && vc_auth_mem_equal(h, setting, hl);
	}
	memset(cred, 0, sizeof(cred));
	if (!ok)
		return -EACCES;
	struct cache_ent *e = &a->cache[a->cache_next++ % CACHE_N];
	memcpy(e->mac, key, MAC_LEN);
	e->until = now + CACHE_TTL_S;
	e->user = found;
	*who = found;
	return 0;
}

int vc_auth_check(struct vc_auth *a, enum vc_auth_class cl, const char *authorization,
		  const char *token, time_t now, const char **user)
{
	unsigned p = a->policy[cl];
	size_t who;

	if (!p) {
		if (user)
			*user = "";
		return 0;
	}
	if ((p & VC_AUTH_BASIC) && authorization && check_basic(a, authorization, now, &who) == 0) {
		if (user)
			*user = a->users[who].name;
		return 0;
	}
	if ((p & VC_AUTH_TOKEN) && token && check_token(a, cl, token, now) == 0) {
		if (user)
			*user = "token";
		return 0;
	}
	return -EACCES;
}
