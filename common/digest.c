/* Digest authentication (common/digest.h). */
#include "common/digest.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <gnutls/crypto.h>

void vc_md5_hex(const char *s, size_t len, char out[33])
{
	uint8_t md[16];

	if (gnutls_hash_fast(GNUTLS_DIG_MD5, s, len, md) < 0)
		memset(md, 0, sizeof(md)); /* compares unequal to any real response */
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Copies a value of n bytes into dst (cap bytes); -EINVAL when too long. */
static int put(char *dst, size_t cap, const char *v, size_t n)
{
	if (n >= cap)
		return -EINVAL;
	memcpy(dst, v, n);
	dst[n] = 0;
	return 0;
}

int vc_digest_parse(const char *v, struct vc_digest *d)
{
	memset(d, 0, sizeof(*d));
	if (!v || strncasecmp(v, "Digest ", 7))
		return -EINVAL;
	v += 7;
	while (*v) {
		while (*v == ' ' || *v == ',' || *v == '\t')
			v++;
		if (!*v)
			break;
		const char *eq = strchr(v, '=');
		if (!eq)
			return -EINVAL;
		size_t kl = (size_t)(eq - v);
		const char *val = eq + 1;
		size_t vl;
		if (*val == '"') {
			const char *end = strchr(++val, '"');
			if (!end)
				return -EINVAL;
			vl = (size_t)(end - val);
			v = end + 1;
		} else {
			vl = strcspn(val, ", \t");
			v = val + vl;
		}
		static const struct {
			const char *k;
			size_t off, cap;
		} f[] = {
#define F(x) { #x, offsetof(struct vc_digest, x), sizeof(((struct vc_digest *)0)->x) }
			F(username), F(realm), F(nonce), F(uri), F(response), F(qop), F(nc), F(cnonce),
			F(algorithm),
#undef F
		};
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			if (strlen(f[i].k) == kl && !strncasecmp(eq - kl, f[i].k, kl) &&
			    put((char *)d + f[i].off, f[i].cap, val, vl) < 0)
				return -EINVAL;
	}
	if (!d->username[0] || !d->nonce[0] || !d->uri[0] || strlen(d->response) != 32)
		return -EINVAL;
	if (d->qop[0] && (strcasecmp(d->qop, "auth") || !d->nc[0] || !d->cnonce[0]))
		return -EINVAL;
	if (d->algorithm[0] && strcasecmp(d->algorithm, "MD5"))
		return -EINVAL;
	return 0;
}

void vc_digest_expect(const struct vc_digest *d, const char *method, const char *ha1,
		      char out[33])
{
	char buf[1400], ha2[33];
	int n = snprintf(buf, sizeof(buf), "%s:%s", method, d->uri);

	vc_md5_hex(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, ha2);
	if (d->qop[0])
		n = snprintf(buf, sizeof(buf), "%s:%s:%s:%s:%s:%s", ha1, d->nonce, d->nc, d->cnonce,
			     d->qop, ha2);
	else
		n = snprintf(buf, sizeof(buf), "%s:%s:%s", ha1, d->nonce, ha2);
	vc_md5_hex(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, out);
}

int vc_digest_ok(const struct vc_digest *d, const char *method, const char *ha1)
{
	char want[33];
	unsigned diff = 0;

	vc_digest_expect(d, method, ha1, want);
	for (int i = 0; i < 32; i++)
		diff |= (unsigned)(want[i] ^ (d->response[i] | 0x20)); /* hex either case */
	return diff == 0;
}
