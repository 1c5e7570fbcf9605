/* Request authentication: HTTP Basic against crypt(3) hashes from the config,
 * and signed expiring URL tokens (?token=) for clients that cannot send a
 * password (<img src>, players). Policy per endpoint class (view, control,
 * status) from the config. Knows nothing of HTTP libraries: the serving layer
 * passes the Authorization header value and the token parameter.
 *
 * Token: base64url("EXPIRY.SCOPE") "." base64url(HMAC-SHA256(secret,
 * "vcapd-token-v1\n" EXPIRY "\n" SCOPE)); EXPIRY in Unix seconds, SCOPE a
 * comma list of class names ("view", "view,status"). */
#ifndef VC_AUTH_H
#define VC_AUTH_H

#include <stddef.h>
#include <time.h>

#include "common/conf.h"

struct vc_auth;

/* Copies what it needs from c (users, secret, policies, realm); c may be
 * freed afterwards. Checks every hash is a form libcrypt supports. 0 or
 * -EINVAL (logged, names the user) / -ENOMEM. */
int vc_auth_new(const struct vc_conf *c, struct vc_auth **out);
void vc_auth_free(struct vc_auth *a);

/* Policy bitmask (VC_AUTH_BASIC | VC_AUTH_TOKEN) of a class; 0 = open. */
unsigned vc_auth_policy(const struct vc_auth *a, enum vc_auth_class cl);

/* Basic realm for WWW-Authenticate. */
const char *vc_auth_realm(const struct vc_auth *a);

/* Decides one request. authorization: the Authorization header value or
 * NULL; token: the token query parameter or NULL; now: current Unix time.
 * Returns 0 when allowed, -EACCES when denied (answer 401, with
 * WWW-Authenticate: Basic when the policy includes basic). On success *user
 * (when user is not NULL) points to the authenticated user name, "token" or
 * "" (open class); valid while a lives. */
int vc_auth_check(struct vc_auth *a, enum vc_auth_class cl, const char *authorization,
		  const char *token, time_t now, const char **user);

/* The same decision in steps, so the password hash can run off the loop.
 * vc_auth_begin answers what needs no hash: 0 allowed (open class, token,
 * or a recently verified header: *user set as above), -EACCES denied
 * (malformed, unknown scheme, or this exact header failed within the last
 * minute), or -EINPROGRESS: *p is a new pending check holding copies of
 * what the hash needs. vc_auth_pending_run(p, cd) hashes on any thread (cd:
 * that thread's scratch) touching nothing but p and cd. vc_auth_end (loop
 * thread, on the current auth object, which may differ from the one begin
 * ran on after a reload) returns 0 allowed (cached for later requests),
 * -EACCES wrong password (remembered as failed), -ESTALE the user's hash
 * changed meanwhile (begin again), -EAGAIN when run never ran. The caller
 * frees p with vc_auth_pending_free (wipes the password). */
struct vc_auth_pending;
struct crypt_data;
int vc_auth_begin(struct vc_auth *a, enum vc_auth_class cl, const char *authorization,
		  const char *token, time_t now, const char **user, struct vc_auth_pending **p);
void vc_auth_pending_run(struct vc_auth_pending *p, struct crypt_data *cd);
int vc_auth_end(struct vc_auth *a, struct vc_auth_pending *p, time_t now, const char **user);
void vc_auth_pending_free(struct vc_auth_pending *p);

/* Writes a token for scope (comma list of "view", "control", "status")
 * expiring at expiry into out (outlen >= 128 is enough for every scope).
 * 0, -ENOKEY (no secret configured), -EINVAL (bad scope), -ENOSPC. */
int vc_auth_token_make(const struct vc_auth *a, const char *scope, time_t expiry,
		       char *out, size_t outlen);

/* Constant-time comparison of n bytes: 1 when equal. */
int vc_auth_mem_equal(const void *a, const void *b, size_t n);

/* base64url without padding (RFC 4648 section 5): encode returns the length
 * written (NUL-terminated) or -ENOSPC; decode accepts both alphabets and
 * optional padding, returns the byte count or -EINVAL / -ENOSPC. */
int vc_auth_b64url_encode(const void *in, size_t n, char *out, size_t outlen);
int vc_auth_b64_decode(const char *in, size_t n, void *out, size_t outlen);

#endif
