/* Runs the gate: Host and control-from-network guards, then the policy of
 * the class the matched route row names (http.h: every row has one, so no
 * path is classified here and none can slip through unclassified);
 * password hashes run on a one-thread worker pool while the connection is
 * suspended, so failed logins never stall the loop. */
#define LOG_PREFIX "auth: "
#include "server/http/auth_http.h"

#include <crypt.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "server/http/backoff.h"
#include "server/workers.h"

int vc_auth_class_of(enum vc_http_class c)
{
	switch (c) {
	case VC_HTTP_VIEW:
		return VC_CLASS_VIEW;
	case VC_HTTP_STATUS:
		return VC_CLASS_STATUS;
	case VC_HTTP_CONTROL:
		return VC_CLASS_CONTROL;
	case VC_HTTP_PUBLIC:
		return -1;
	default:
		return -EINVAL;
	}
}

void vc_auth_warn_open(const struct vc_auth *a, const struct vc_guard *g,
		       const char *const *listen, size_t n_listen)
{
	static const char *const what[VC_CLASS_COUNT] = {
		"view (/stream, /snapshot, /raw)", "control (PUT /api/...)",
		"status (/api, /metrics, /state)" };
	static const char *const key[VC_CLASS_COUNT] = { "auth_view", "auth_control", "auth_status" };

	for (size_t i = 0; i < n_listen; i++) {
		if (vc_guard_listen_is_loopback(listen[i]))
			continue;
		for (int cl = 0; cl < VC_CLASS_COUNT; cl++) {
			if (a && vc_auth_policy(a, (enum vc_auth_class)cl))
				continue;
			if (cl == VC_CLASS_CONTROL && !vc_guard_control_open_net(g))
				log_info("listen %s: control writes from non-loopback peers are refused "
					 "(403) until auth_control is set", listen[i]);
			else
				log_warn("listen %s: %s is open to anyone who can reach it (set %s)",
					 listen[i], what[cl], key[cl]);
		}
	}
}

struct vc_auth_gate {
	struct vc_http *http;
	struct vc_auth **auth;
	struct vc_guard **guard;
	struct vc_backoff *bo;
	struct vc_workers *w;
	struct crypt_data *cd; /* one per worker thread (tens of KiB each) */
	unsigned pending;      /* hashes submitted, done not yet run */
	double tokens;         /* hash budget (token bucket, VC_AUTH_HASH_RATE/s) */
	int64_t tokens_us;     /* when tokens was last refilled */
};

/* A request waiting for its hash; r->gate_state. Owned by the request,
 * except while the worker holds it (running): then the request's end only
 * marks it orphaned and the done callback frees it. Loop thread only. */
struct gate_job {
	struct vc_auth_gate *g;
	struct MHD_Connection *conn;
	struct vc_auth_pending *p;
	int running, orphan, done, cancelled;
};

static void job_free(struct gate_job *j)
{
	vc_auth_pending_free(j->p);
	free(j);
}

static void job_release(void *state)
{
	struct gate_job *j = state;

	if (j->running)
		j->orphan = 1;
	else
		job_free(j);
}

static void job_work(void *arg, unsigned worker)
{
	struct gate_job *j = arg;
	/* Per hash thread (thread-local, set once): a nice of 10 lets the loop
	 * and the encoders win the CPU over a flood of logins (on Linux
	 * setpriority on a thread id affects that thread alone). */
	static _Thread_local int niced;
	/* told once per process: a unit whose SystemCallFilter= denies
	 * setpriority (@resources) makes it fail with EPERM */
	static atomic_int told;

	if (!niced) {
		niced = 1;
		if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) < 0 &&
		    !atomic_exchange(&told, 1))
			log_warn("password hash thread: cannot lower its priority (nice 10): %s; "
				 "a login flood competes with the streams for the CPU (systemd: allow "
				 "setpriority in SystemCallFilter=)", strerror(errno));
	}
	vc_auth_pending_run(j->p, &j->g->cd[worker]);
}

static void job_done(void *arg, int status)
{
	struct gate_job *j = arg;

	j->running = 0;
	j->g->pending--;
	if (j->orphan) {
		job_free(j);
		return;
	}
	j->done = 1;
	j->cancelled = status != 0;
	MHD_resume_connection(j->conn);
	vc_http_wake(j->g->http);
}

int vc_auth_gate_new(struct event_base *base, struct vc_http *http, struct vc_auth **auth,
		     struct vc_guard **guard, struct vc_auth_gate **out)
{
	struct vc_auth_gate *g = calloc(1, sizeof(*g));
	int r = -ENOMEM;

	if (!g)
		return -ENOMEM;
	g->http = http;
	g->auth = auth;
	g->guard = guard;
	g->tokens = VC_AUTH_HASH_BURST;
	g->tokens_us = vc_mono_us();
	/* One thread: hashes must not take both cores from the encoders. */
	if ((r = vc_backoff_new(VC_AUTH_FAIL_LIMIT, VC_AUTH_FAIL_WINDOW_S, VC_AUTH_BLOCK_S, &g->bo)) < 0 ||
	    (r = vc_workers_new(base, 1, &g->w)) < 0)
		goto fail;
	if (!(g->cd = calloc(vc_workers_count(g->w), sizeof(*g->cd)))) {
		r = -ENOMEM;
		goto fail;
	}
	*out = g;
	return 0;
fail:
	vc_auth_gate_free(g);
	return r;
}

void vc_auth_gate_free(struct vc_auth_gate *g)
{
	if (!g)
		return;
	vc_workers_free(g->w); /* runs job_done for every queued job */
	vc_backoff_free(g->bo);
	free(g->cd);
	free(g);
}

/* JSON error with optional Retry-After and WWW-Authenticate. */
static int answer(struct vc_http_req *r, enum MHD_Result *res, unsigned status, unsigned retry,
		  const char *realm, const char *msg)
{
	char body[256], hdr[160];
	int n = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"status\":%u}\n", msg, status);
	struct MHD_Response *resp = MHD_create_response_from_buffer((size_t)n, body,
								    MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		*res = MHD_NO;
		return 1;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (retry) {
		snprintf(hdr, sizeof(hdr), "%u", retry);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, hdr);
	}
	if (realm) {
		snprintf(hdr, sizeof(hdr), "Basic realm=\"%s\", charset=\"UTF-8\"", realm);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, hdr);
	}
	*res = vc_http_queue(r, status, resp);
	return 1;
}

static int deny(struct vc_auth *a, struct vc_http_req *r, enum MHD_Result *res, int cl)
{
	char peer[64];

	log_debug("%s %s from %s: 401", r->method, r->url, vc_http_peer(r, peer, sizeof(peer)));
	return answer(r, res, MHD_HTTP_UNAUTHORIZED, 0,
		      vc_auth_policy(a, (enum vc_auth_class)cl) & VC_AUTH_BASIC ? vc_auth_realm(a) : NULL,
		      "authentication required");
}

/* The hash of r's job finished: allow, or count the failure. */
static int job_result(struct vc_auth_gate *g, struct vc_auth *a, struct vc_http_req *r,
		      enum MHD_Result *res, int cl)
{
	struct gate_job *j = r->gate_state;
	time_t now = time(NULL);
	char peer[64];
	int e = j->cancelled ? -EAGAIN : vc_auth_end(a, j->p, now, NULL);

	r->gate_state = NULL;
	r->gate_state_free = NULL;
	job_free(j);
	if (e == 0)
		return 0;
	if (e == -ESTALE)
		return -ESTALE; /* reloaded meanwhile: decide again */
	if (e == -EAGAIN)
		return answer(r, res, MHD_HTTP_SERVICE_UNAVAILABLE, 1, NULL, "server stopping");
	if (vc_backoff_fail(g->bo, vc_http_peer_addr(r), now))
		log_warn_lim("login back-off", vc_http_peer(r, peer, sizeof(peer)),
			     "%s: %d failed logins within %d s: refused for %d s", peer,
			     VC_AUTH_FAIL_LIMIT, VC_AUTH_FAIL_WINDOW_S, VC_AUTH_BLOCK_S);
	return deny(a, r, res, cl);
}

/* One hash from the budget: a flood of distinct wrong passwords from many
 * addresses gets 503 beyond VC_AUTH_HASH_RATE per second instead of a whole
 * core (yescrypt costs tens of ms; a legitimate login needs one). */
static int take_token(struct vc_auth_gate *g)
{
	int64_t now = vc_mono_us();

	g->tokens += (double)(now - g->tokens_us) * VC_AUTH_HASH_RATE / 1e6;
	g->tokens_us = now;
	if (g->tokens > VC_AUTH_HASH_BURST)
		g->tokens = VC_AUTH_HASH_BURST;
	if (g->tokens < 1)
		return 0;
	g->tokens -= 1;
	return 1;
}

/* A password needs hashing: suspend r until a worker did it. */
static int job_start(struct vc_auth_gate *g, struct vc_http_req *r, enum MHD_Result *res,
		     struct vc_auth_pending *p)
{
	unsigned wait = vc_backoff_blocked(g->bo, vc_http_peer_addr(r), time(NULL));
	struct gate_job *j = NULL;

	if (wait) {
		vc_auth_pending_free(p);
		return answer(r, res, MHD_HTTP_TOO_MANY_REQUESTS, wait, NULL,
			      "too many failed logins from this address");
	}
	if (g->pending >= VC_AUTH_MAX_PENDING || !take_token(g) || !(j = calloc(1, sizeof(*j)))) {
		vc_auth_pending_free(p);
		return answer(r, res, MHD_HTTP_SERVICE_UNAVAILABLE, 1, NULL, "busy checking passwords");
	}
	*j = (struct gate_job){ .g = g, .conn = r->conn, .p = p, .running = 1 };
	if (vc_workers_submit(g->w, job_work, job_done, j) < 0) {
		job_free(j);
		return answer(r, res, MHD_HTTP_SERVICE_UNAVAILABLE, 1, NULL, "busy checking passwords");
	}
	g->pending++;
	r->gate_state = j;
	r->gate_state_free = job_release;
	MHD_suspend_connection(r->conn);
	*res = MHD_YES;
	return 1;
}

/* Answers what needs no credentials: Host, control from the network. */
static int guard(struct vc_auth_gate *g, struct vc_auth *a, struct vc_http_req *r,
		 enum MHD_Result *res, int cl)
{
	const struct vc_guard *gd = *g->guard;
	const char *host = vc_http_header(r, MHD_HTTP_HEADER_HOST);
	char peer[64];

	if (!vc_guard_host_ok(gd, host)) {
		log_info_lim("Host not a name of this server (421)", vc_http_peer(r, peer, sizeof(peer)),
			     "%s %s from %s: Host '%.80s' is not a name of this server "
			     "(allowed_hosts): 421", r->method, r->url, peer, host);
		return answer(r, res, MHD_HTTP_MISDIRECTED_REQUEST, 0, NULL,
			      "Host is not a name of this server (add it to allowed_hosts)");
	}
	if (cl == VC_CLASS_CONTROL && (!a || !vc_auth_policy(a, VC_CLASS_CONTROL)) &&
	    !vc_guard_control_open_net(gd) && !vc_http_peer_local(r)) {
		log_info_lim("control from the network (403)", vc_http_peer(r, peer, sizeof(peer)),
			     "%s %s from %s: control from the network needs auth_control: 403",
			     r->method, r->url, peer);
		return answer(r, res, MHD_HTTP_FORBIDDEN, 0, NULL,
			      "control from a non-loopback address needs auth_control in the config");
	}
	return 0;
}

int vc_auth_gate(void *opaque, struct vc_http_req *r, enum MHD_Result *res)
{
	struct vc_auth_gate *g = opaque;
	struct vc_auth *a = *g->auth;
	struct vc_auth_pending *p;
	int cl = vc_auth_class_of(r->cls);

	if (r->gate_state) {
		struct gate_job *j = r->gate_state;
		if (!j->done) { /* resumed by someone else: keep waiting */
			MHD_suspend_connection(r->conn);
			*res = MHD_YES;
			return 1;
		}
		if (!a) {
			job_release(j);
			r->gate_state = NULL;
			r->gate_state_free = NULL;
		} else {
			int e = job_result(g, a, r, res, cl);
			if (e != -ESTALE)
				return e;
		}
	} else if (cl == -EINVAL) { /* unreachable: http.c refuses such rows */
		log_error("%s %s: route without an auth class: 403", r->method, r->url);
		return answer(r, res, MHD_HTTP_FORBIDDEN, 0, NULL, "route without an auth class");
	} else if (guard(g, a, r, res, cl)) {
		return 1;
	}
	if (!a || cl < 0)
		return 0;
	int e = vc_auth_begin(a, (enum vc_auth_class)cl, vc_http_header(r, MHD_HTTP_HEADER_AUTHORIZATION),
			      vc_http_arg(r, "token"), time(NULL), NULL, &p);
	if (e == 0)
		return 0;
	if (e == -EINPROGRESS)
		return job_start(g, r, res, p);
	return deny(a, r, res, cl);
}
