/* RTSP authentication (rtsp_auth.h). */
#define LOG_PREFIX "rtsp:"
#include "server/rtsp/rtsp_auth.h"

#include <crypt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/conf.h"
#include "common/digest.h"
#include "common/log.h"
#include "server/http/auth.h"
#include "server/workers.h"

#define NONCE_TTL_S 600 /* a Digest nonce is good this long (then stale=TRUE) */

struct rtsp_auth {
	struct vc_auth *const *auth;
	struct vc_conf *const *conf;
	struct vc_workers *w;      /* one thread: hashes never take the encoders' cores */
	struct crypt_data *cd;
	char secret[33];           /* signs nonces: stateless, any connection */
};

struct rtsp_auth_job {
	struct rtsp_auth *ra;
	struct vc_auth_pending *p;
	rtsp_auth_done_fn done;
	void *opaque;              /* NULL: cancelled */
};

int rtsp_auth_new(struct event_base *base, struct vc_auth *const *auth,
		  struct vc_conf *const *conf, struct rtsp_auth **out)
{
	struct rtsp_auth *ra = calloc(1, sizeof(*ra));
	uint8_t rnd[16];
	int ret;

	if (!ra)
		return -ENOMEM;
	ra->auth = auth;
	ra->conf = conf;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		free(ra);
		return -EIO;
	}
	for (int i = 0; i < 16; i++)
		snprintf(ra->secret + 2 * i, 3, "%02x", rnd[i]);
	if ((ret = vc_workers_new(base, 1, &ra->w)) < 0 || !(ra->cd = calloc(1, sizeof(*ra->cd)))) {
		vc_workers_free(ra->w);
		free(ra);
		return ret < 0 ? ret : -ENOMEM;
	}
	*out = ra;
	return 0;
}

void rtsp_auth_free(struct rtsp_auth *ra)
{
	if (!ra)
		return;
	vc_workers_free(ra->w); /* done runs for every job: they free themselves */
	free(ra->cd);
	free(ra);
}

/* nonce = expiry (hex) + 16 hex digits of md5(secret:expiry) */
static void make_nonce(const struct rtsp_auth *ra, time_t expiry, char out[40])
{
	char buf[64], md[33];
	int n = snprintf(buf, sizeof(buf), "%s:%" PRIx64, ra->secret, (uint64_t)expiry);

	vc_md5_hex(buf, (size_t)n, md);
	snprintf(out, 40, "%016" PRIx64 "%.16s", (uint64_t)expiry, md);
}

static int nonce_ok(const struct rtsp_auth *ra, const char *nonce)
{
	char want[40], *end;

	if (strlen(nonce) != 32)
		return 0;
	char hex[17];
	memcpy(hex, nonce, 16);
	hex[16] = 0;
	uint64_t expiry = strtoull(hex, &end, 16);
	if (*end || (time_t)expiry < time(NULL))
		return 0;
	make_nonce(ra, (time_t)expiry, want);
	return vc_auth_mem_equal(want, nonce, 32);
}

/* The HA1 of user in rtsp_digest ("user:HA1,..."), into ha1[33]: 0 or -ENOENT. */
static int find_ha1(const char *list, const char *user, char ha1[33])
{
	size_t ul = strlen(user);

	while (list && *list) {
		size_t len = strcspn(list, ",");

		if (len == ul + 33 && !strncmp(list, user, ul) && list[ul] == ':') {
			for (int i = 0; i < 32; i++)
				ha1[i] = (char)(list[ul + 1 + i] | 0x20);
			ha1[32] = 0;
			return 0;
		}
		list += len + (list[len] == ',');
	}
	return -ENOENT;
}

static int check_digest(struct rtsp_auth *ra, const char *method, const char *authorization)
{
	struct vc_digest d;
	char ha1[33];
	const struct vc_conf *c = *ra->conf;

	if (vc_digest_parse(authorization, &d) < 0 || strcmp(d.realm, VC_DIGEST_REALM) ||
	    !nonce_ok(ra, d.nonce) || find_ha1(c ? c->rtsp_digest : NULL, d.username, ha1) < 0 ||
	    !vc_digest_ok(&d, method, ha1))
		return -EACCES;
	return 0;
}

static void job_work(void *arg, unsigned worker)
{
	struct rtsp_auth_job *j = arg;

	(void)worker;
	vc_auth_pending_run(j->p, j->ra->cd);
}

static void job_done(void *arg, int status)
{
	struct rtsp_auth_job *j = arg;
	const char *user;
	int ret = -EACCES;

	if (!status && j->opaque && *j->ra->auth)
		ret = vc_auth_end(*j->ra->auth, j->p, time(NULL), &user) == 0 ? 0 : -EACCES;
	vc_auth_pending_free(j->p);
	if (j->opaque)
		j->done(j->opaque, ret);
	free(j);
}

int rtsp_auth_check(struct rtsp_auth *ra, const char *method, const char *authorization,
		    const char *token, rtsp_auth_done_fn done, void *opaque,
		    struct rtsp_auth_job **job)
{
	struct vc_auth *a = *ra->auth;
	struct vc_auth_pending *p = NULL;
	const char *user;
	unsigned pol = a ? vc_auth_policy(a, VC_CLASS_VIEW) : 0;

	if (!pol) /* no config, or the view class is open */
		return 0;
	if (authorization && !strncasecmp(authorization, "Digest ", 7))
		return (pol & VC_AUTH_BASIC) ? check_digest(ra, method, authorization) : -EACCES;
	int ret = vc_auth_begin(a, VC_CLASS_VIEW, authorization, token, time(NULL), &user, &p);
	if (ret != -EINPROGRESS)
		return ret == 0 ? 0 : -EACCES;
	struct rtsp_auth_job *j = calloc(1, sizeof(*j));
	if (!j || vc_workers_submit(ra->w, job_work, job_done, j) < 0) {
		free(j);
		vc_auth_pending_free(p);
		return -EACCES;
	}
	j->ra = ra;
	j->p = p;
	j->done = done;
	j->opaque = opaque;
	*job = j;
	return -EINPROGRESS;
}

void rtsp_auth_cancel(struct rtsp_auth_job *job)
{
	if (job)
		job->opaque = NULL; /* job_done frees it */
}

void rtsp_auth_challenge(struct rtsp_auth *ra, char *out, size_t n)
{
	const struct vc_conf *c = *ra->conf;
	char nonce[40];
	int k = 0;

	out[0] = 0;
	if (!*ra->auth || !(vc_auth_policy(*ra->auth, VC_CLASS_VIEW) & VC_AUTH_BASIC))
		return;
	if (c && c->rtsp_digest && *c->rtsp_digest) {
		make_nonce(ra, time(NULL) + NONCE_TTL_S, nonce);
		k = snprintf(out, n, "WWW-Authenticate: Digest realm=\"" VC_DIGEST_REALM
				     "\", nonce=\"%s\", algorithm=MD5\r\n", nonce);
		if (k < 0 || (size_t)k >= n)
			k = 0;
	}
	snprintf(out + k, n - (size_t)k, "WWW-Authenticate: Basic realm=\"%s\"\r\n",
		 vc_auth_realm(*ra->auth));
}
