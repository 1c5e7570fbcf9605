/* HTTP Digest authentication (RFC 2617, MD5, with qop=auth or without) as
 * RTSP clients send it (ffmpeg, GStreamer, VLC, Home Assistant): parsing the
 * Authorization header and checking its response against a stored HA1 =
 * MD5(user:realm:password) in hex. Pure code. */
#ifndef VC_DIGEST_H
#define VC_DIGEST_H

#include <stddef.h>

#define VC_DIGEST_REALM "vcapd" /* the realm every RTSP digest secret is made for */

struct vc_digest {
	char username[64], realm[64], nonce[96], uri[1024], response[33];
	char qop[16], nc[16], cnonce[96], algorithm[16];
};

/* Parses the value of an Authorization header "Digest k=v, k="v", ...".
 * 0, or -EINVAL (not Digest, malformed, a field too long, or one of
 * username, realm, nonce, uri, response missing; qop other than auth). */
int vc_digest_parse(const char *value, struct vc_digest *d);

/* The expected response (32 lowercase hex digits into out[33]) for d,
 * request method and stored ha1 (32 hex digits). */
void vc_digest_expect(const struct vc_digest *d, const char *method, const char *ha1,
		      char out[33]);

/* MD5 of s in lowercase hex. */
void vc_md5_hex(const char *s, size_t len, char out[33]);

/* Whether d's response is right for method and ha1 (constant time). */
int vc_digest_ok(const struct vc_digest *d, const char *method, const char *ha1);

#endif
