/* RTSP authentication: the HTTP users and the view class's policy
 * (server/http/auth.h). Basic against the users' crypt hashes (hashed on a
 * worker thread, never on the loop; verified headers are cached by
 * vc_auth), ?token= URLs, and Digest (RFC 2617 MD5) against the per-user
 * secrets of the config key rtsp_digest (a crypt hash cannot answer a
 * Digest challenge). Loop thread only. */
#ifndef VC_RTSP_AUTH_H
#define VC_RTSP_AUTH_H

#include <stddef.h>

struct event_base;
struct vc_auth;
struct vc_conf;
struct rtsp_auth;
struct rtsp_auth_job;

/* auth, conf: where the daemon keeps the current ones (replaced on reload). */
int rtsp_auth_new(struct event_base *base, struct vc_auth *const *auth,
		  struct vc_conf *const *conf, struct rtsp_auth **out);
void rtsp_auth_free(struct rtsp_auth *ra);

/* Whether a request may stream: 0 allowed, -EACCES denied (answer 401 with
 * rtsp_auth_challenge), or -EINPROGRESS: done(opaque, 0 or -EACCES) runs
 * later on the loop unless *job is cancelled first. */
typedef void (*rtsp_auth_done_fn)(void *opaque, int result);
int rtsp_auth_check(struct rtsp_auth *ra, const char *method, const char *authorization,
		    const char *token, rtsp_auth_done_fn done, void *opaque,
		    struct rtsp_auth_job **job);
void rtsp_auth_cancel(struct rtsp_auth_job *job);

/* The WWW-Authenticate header lines (each ending CRLF) for a 401. */
void rtsp_auth_challenge(struct rtsp_auth *ra, char *out, size_t n);

#endif
