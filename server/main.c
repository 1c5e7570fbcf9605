/* vcapd entry point: command line, one libevent loop owning the cameras, the
 * HTTP server and the signals; graceful stop on SIGINT/SIGTERM. Features
 * plug in as routes (vc_http_route) through vc_routes_add() (routes.c). */
#define LOG_PREFIX "vcapd:"
#include <errno.h>
#include <event2/event.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/conf_keys.h"
#include "common/log.h"
#include "server/http/auth_http.h"
#include "server/http/api.h"
#include "server/capture/capture.h"
#include "server/capture/controls.h"
#include "server/capture/discover.h"
#include "server/http/http.h"
#include "server/http/portowner.h"
#include "server/camset.h"
#include "server/cli.h"
#include "server/loop.h"
#include "server/opsconf.h"
#include "server/routes.h"
#include "server/rtsp/rtsp.h"
#include "server/sdnotify.h"
#include "server/stream/stream.h"
#include "server/capture/v4l2src.h"

/* The running daemon: everything the signal handlers reach. */
struct app {
	struct event_base *base;
	struct vc_camset *camset;
	struct vc_http *http;
	struct vc_streams *streams;
	struct vc_rtsp *rtsp;      /* NULL: RTSP off (or its default port was taken) */
	struct vc_api *api;
	struct event *sig_int, *sig_term, *stop_timer;
	int stopping;
	/* ops: config, auth (swapped on reload), systemd notify */
	const struct vc_cli *opts;
	struct vc_conf *conf;
	struct vc_auth *auth;
	struct vc_guard *guard;    /* Host names, control policy (swapped on reload) */
	struct vc_auth_gate *gate;
	struct vc_sdnotify *notify;
	struct event *sig_hup;
	char *tls_cert, *tls_key;
	/* the config the server started with: listen/TLS/limits/web root
	 * changes need a restart, and reloads compare against it */
	struct vc_conf *boot_conf;
	int listen_flags;          /* --listen given: the file's listen lines are ignored */
	struct event *status_timer; /* systemd STATUS= refresh */
	struct event *log_timer;    /* rate-limited log summaries, once a second */
	char status_last[160];
	time_t status_sent;
	struct vc_loop_stats loop_stats; /* /metrics shows them */
};

static void on_log_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	vc_log_tick();
}

static void on_stop_timer(evutil_socket_t fd, short what, void *arg)
{
	struct app *a = arg;

	(void)fd;
	(void)what;
	event_base_loopbreak(a->base);
}

/* SIGINT/SIGTERM: end every stream (suspended ones are resumed so their
 * readers return end-of-stream), give them a moment to flush, then leave
 * the loop. A second signal leaves at once. */
static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct app *a = arg;

	(void)what;
	if (a->stopping) {
		event_base_loopbreak(a->base);
		return;
	}
	a->stopping = 1;
	log_info("signal %d: stopping", (int)sig);
	vc_sdnotify_stopping(a->notify);
	vc_camset_stopping(a->camset);
	vc_streams_shutdown(a->streams);
	struct timeval tv = { 0, 200000 };
	evtimer_add(a->stop_timer, &tv);
}

/* --make-token: mint a URL token with the config's secret and print it. */
static int make_token(const struct vc_cli *o)
{
	struct vc_conf *c = NULL;
	struct vc_auth *au = NULL;
	char scope[64], tok[256];
	long ttl = 0;
	int r = 1;

	snprintf(scope, sizeof(scope), "%s", o->make_token);
	char *colon = strchr(scope, ':');
	if (colon) {
		*colon = '\0';
		ttl = strtol(colon + 1, NULL, 10);
	}
	if (!o->config || vc_ops_load(o->config, &c) < 0 || vc_auth_new(c, &au) < 0) {
		fprintf(stderr, "vcapd: --make-token needs a valid --config with a token secret\n");
		goto out;
	}
	if (ttl <= 0)
		ttl = c->token_ttl_s ? c->token_ttl_s : VC_CONF_DEF_TOKEN_TTL_S;
	int e = vc_auth_token_make(au, scope, time(NULL) + ttl, tok, sizeof(tok));
	if (e < 0) {
		fprintf(stderr, "vcapd: cannot make a token for '%s': %s\n", scope,
			e == -ENOKEY ? "no token_secret in the config" : strerror(-e));
		goto out;
	}
	printf("%s\n", tok);
	r = 0;
out:
	vc_auth_free(au);
	vc_conf_free(c);
	return r;
}

/* ops: watchdog pings only while the loop runs and we are not stopping. */
static int loop_healthy(void *opaque)
{
	return !((struct app *)opaque)->stopping;
}

static void status_update(struct app *a, int now);

/* The stream memory budget from the config (0 = stream defaults). */
static void apply_budget(struct app *a, const struct vc_conf *c)
{
	struct vc_stream_budget b = { 0 };

	if (c) {
		b.max_outputs = (unsigned)c->max_outputs;
		b.max_outputs_per_ip = (unsigned)c->max_outputs_per_ip;
		b.frame_bytes = (size_t)c->frame_memory_mb << 20;
		b.max_width = c->max_width;
		b.max_height = c->max_height;
		b.hold_s = (unsigned)c->client_hold_s;
	}
	vc_streams_set_budget(a->streams, &b);
}

/* SIGHUP: reread the config; a bad one is rejected and the running one
 * stays. Auth, log level and cameras apply at once; server settings that
 * bind sockets or load certificates need a restart (logged). */
static void on_hup(evutil_socket_t sig, short what, void *arg)
{
	struct app *a = arg;
	struct vc_conf *nc = NULL;
	struct vc_auth *na = NULL;
	struct vc_guard *ng = NULL;
	char keys[160];

	(void)sig;
	(void)what;
	if (a->stopping)
		return;
	if (!a->opts->config) {
		log_info("SIGHUP: no --config, nothing to reload");
		return;
	}
	if (a->opts->config_optional && access(a->opts->config, F_OK) < 0 && errno == ENOENT) {
		log_info("SIGHUP: still no %s, the defaults stay", a->opts->config);
		return;
	}
	vc_sdnotify_reloading(a->notify);
	if (vc_ops_load(a->opts->config, &nc) < 0 || vc_auth_new(nc, &na) < 0 ||
	    vc_guard_new(nc, a->opts->listen, a->opts->n_listen, &ng) < 0) {
		log_error("reload: %s rejected, the running config stays", a->opts->config);
		vc_auth_free(na);
		vc_conf_free(nc);
		vc_sdnotify_ready(a->notify);
		return;
	}
	/* started without a file (--config-optional): compare with the defaults */
	struct vc_conf *empty = NULL;
	char perr[64];
	if (!a->boot_conf && vc_conf_parse("", 0, "(defaults)", &empty, perr, sizeof(perr)) < 0)
		empty = NULL;
	const struct vc_conf *boot = a->boot_conf ? a->boot_conf : empty;
	if (boot && vc_ops_restart_keys(boot, nc, !a->listen_flags, keys, sizeof(keys)))
		log_warn("reload: %s changed: restart vcapd to apply (the running server keeps the old values)",
			 keys);
	vc_conf_free(empty);
	if (a->opts->log_level < 0)
		vc_log_level = nc->log_level >= 0 ? nc->log_level : VC_LOG_INFO;
	vc_auth_free(a->auth);
	a->auth = na;
	vc_guard_free(a->guard);
	a->guard = ng;
	vc_auth_warn_open(a->auth, a->guard, a->opts->listen, a->opts->n_listen);
	if (vc_http_set_cors(a->http, nc->cors_origin) < 0)
		log_warn("reload: cors_origin not changed (out of memory)");
	if (vc_http_set_proxies(a->http, nc->proxies, nc->n_proxies) < 0)
		log_warn("reload: trusted_proxies not changed (out of memory)");
	apply_budget(a, nc);
	vc_camset_reload(a->camset, nc);
	if (a->conf != a->boot_conf)
		vc_conf_free(a->conf);
	a->conf = nc;
	log_info("reload: %s applied", a->opts->config);
	vc_sdnotify_ready(a->notify);
	status_update(a, 1);
}

/* ---- systemd STATUS= ---- */

static void count_client(void *opaque, const struct vc_client_info *ci)
{
	(void)ci;
	(*(unsigned *)opaque)++;
}

/* STATUS= for systemctl status: cameras by state, streaming clients and
 * the frames captured per second over all cameras, e.g. "2 cams (2
 * streaming), 3 clients, 30.0 fps". Sent at once when a state or the
 * client count changes (checked every second, and by reloads and hotplug:
 * force), else at most every 5 s while the fps moves. */
static void status_update(struct app *a, int force)
{
	static const char *const names[] = { "absent", "idle", "streaming", "error" };
	unsigned by_state[4] = { 0 }, clients = 0;
	double fps = 0;
	char key[128], text[160];
	size_t n, k = 0;
	time_t now = time(NULL);

	if (!vc_sdnotify_enabled(a->notify) || !a->streams || a->stopping)
		return;
	n = vc_streams_n_cams(a->streams);
	for (size_t i = 0; i < n; i++) {
		struct vc_cam *cam = vc_streams_cam(a->streams, i);
		enum vc_cam_state st = vc_cam_get_state(cam);
		struct vc_cam_stats cs;

		by_state[st < 4 ? st : VC_CAM_ERROR]++;
		vc_cam_get_stats(cam, &cs);
		if (st == VC_CAM_STREAMING)
			fps += cs.fps;
		vc_streams_clients(a->streams, i, count_client, &clients);
	}
	k += (size_t)snprintf(key, sizeof(key), "%zu cam%s (%u streaming", n, n == 1 ? "" : "s",
			      by_state[VC_CAM_STREAMING]);
	for (int st = 0; st < 4; st++)
		if (st != VC_CAM_STREAMING && by_state[st] && k < sizeof(key))
			k += (size_t)snprintf(key + k, sizeof(key) - k, ", %u %s", by_state[st],
					      names[st]);
	if (k < sizeof(key))
		snprintf(key + k, sizeof(key) - k, "), %u client%s", clients, clients == 1 ? "" : "s");
	snprintf(text, sizeof(text), "%s, %.1f fps", key, fps);
	int changed = strncmp(a->status_last, key, strlen(key)) != 0 ||
		      a->status_last[strlen(key)] != ',';
	if (!force && !changed && (now - a->status_sent < 5 || !strcmp(text, a->status_last)))
		return;
	vc_sdnotify_status(a->notify, "%s", text);
	snprintf(a->status_last, sizeof(a->status_last), "%s", text);
	a->status_sent = now;
}

/* Hotplug changed the camera set. */
static void on_camset_changed(void *opaque)
{
	status_update(opaque, 1);
}

static void on_status_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	status_update(arg, 0);
}

static int setup_routes(struct app *a)
{
	const size_t *n_cams;
	struct vc_cam *const *cams = vc_camset_cams(a->camset, &n_cams);

	return vc_routes_add(a->http, a->streams, a->api, cams, n_cams,
			     a->conf ? a->conf->web_root : NULL);
}

/* --routes: the table the daemon would serve, built the same way but with
 * no camera, loop or listener behind it. */
static int print_routes(void)
{
	static const size_t no_cams;
	struct vc_http *h = NULL;
	int e = vc_http_new(NULL, NULL, &h);

	if (e == 0)
		e = vc_routes_add(h, NULL, NULL, NULL, &no_cams, NULL);
	if (e == 0)
		vc_routes_print(h, stdout);
	else
		fprintf(stderr, "vcapd: cannot build the route table: %s\n", strerror(-e));
	vc_http_free(h);
	return e == 0 ? 0 : 1;
}

/* Frames live in the worker threads' malloc arenas. glibc's defaults
 * adapt: after the first large frame is freed, its mmap threshold rises to
 * that size (up to 32 MiB) and its trim threshold to twice it, so every
 * arena may keep a free top of up to 64 MiB resident, and malloc_trim()
 * (server/stream/budget.c) trims only the main arena's top. Fixed values:
 * frames stay in the arenas as the adapted threshold would keep them, and a
 * free top beyond 4 MiB goes back to the system. Idle after
 * tests/integ/qa_memory_budget.sh's attack, RSS over the baseline went from
 * +3..+20 MiB to +1..+7 MiB; bench_serve's CPU per frame did not move. */
static void tune_allocator(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
}

/* Every stream client is a socket and may hold a frame's memfd while it
 * sends it: the usual soft limit of 1024 descriptors would cap a daemon
 * configured for more clients well below max_clients. */
static void raise_fd_limit(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max && r.rlim_cur < 65536) {
		r.rlim_cur = r.rlim_max < 65536 ? r.rlim_max : 65536;
		if (setrlimit(RLIMIT_NOFILE, &r) < 0)
			log_debug("cannot raise the descriptor limit: %s", strerror(errno));
	}
}

/* The RTSP server (--rtsp): PORT alone means that port on each address
 * HTTP listens on. The default (8554) is a convenience: when the port is
 * taken (another streamer, a second daemon) one warning names the holder
 * and the daemon runs without RTSP; a port asked for that cannot be bound
 * is fatal. -1 on a fatal error (logged). */
static int start_rtsp(struct app *a, const struct vc_cli *o)
{
	const char *spec = o->rtsp ? o->rtsp : a->conf && a->conf->rtsp ? a->conf->rtsp : "8554";
	int explicit = o->rtsp || (a->conf && a->conf->rtsp);
	unsigned timeout = o->rtsp_timeout_s ? o->rtsp_timeout_s
			 : a->conf && a->conf->rtsp_timeout_s > 0 ? (unsigned)a->conf->rtsp_timeout_s : 0;

	if (!strcmp(spec, "off"))
		return 0;
	if (vc_rtsp_new(a->base, a->streams, timeout, &a->auth, &a->conf, &a->rtsp) < 0) {
		log_error("out of memory");
		return -1;
	}
	int port_only = strspn(spec, "0123456789") == strlen(spec);
	size_t n = port_only ? o->n_listen : 1;

	for (size_t i = 0; i < n; i++) {
		char addr[96];

		if (port_only) {
			const char *colon = strrchr(o->listen[i], ':');
			int hl = colon ? (int)(colon - o->listen[i]) : 0;

			snprintf(addr, sizeof(addr), "%.*s:%s", hl, o->listen[i], spec);
		} else {
			snprintf(addr, sizeof(addr), "%s", spec);
		}
		int ret = vc_rtsp_listen(a->rtsp, addr);
		if (!ret)
			continue;
		if (explicit) {
			log_error("rtsp: cannot listen on %s: %s", addr, strerror(-ret));
			return -1;
		}
		char who[256] = "";
		if (ret == -EADDRINUSE)
			vc_port_owner_advice("/proc", 8554, who, sizeof(who));
		log_warn("rtsp: cannot listen on %s: %s; running without RTSP (--rtsp PORT "
			 "moves it) %s", addr, strerror(-ret), who);
		vc_rtsp_free(a->rtsp);
		a->rtsp = NULL;
		return 0;
	}
	return 0;
}

/* Everything main() set up, in reverse: streams end, connections close
 * (clients unlink), then the cameras and the rest. */
static void app_close(struct app *a)
{
	if (a->streams && !a->stopping)
		vc_streams_shutdown(a->streams);
	vc_rtsp_free(a->rtsp);      /* its sessions are stream clients */
	vc_auth_gate_free(a->gate); /* resumes connections waiting for a hash */
	vc_http_free(a->http);      /* closes every connection: clients unlink */
	vc_api_free(a->api);
	vc_streams_free(a->streams);
	vc_camset_free(a->camset);
	struct event *evs[] = { a->sig_int, a->sig_term, a->stop_timer, a->sig_hup,
				a->status_timer, a->log_timer };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	vc_sdnotify_free(a->notify);
	vc_auth_free(a->auth);
	vc_guard_free(a->guard);
	if (a->boot_conf != a->conf)
		vc_conf_free(a->boot_conf);
	vc_conf_free(a->conf);
	free(a->tls_cert);
	free(a->tls_key);
	if (a->base)
		event_base_free(a->base);
}

/* The config file (when given) and what it decides before the loop
 * exists: log level, users, listen addresses where no flag named one, and
 * the HTTP server's limits and TLS keys. -1 after logging why. */
static int load_config(struct app *a, struct vc_cli *o, struct vc_http_config *hc)
{
	/* --config-optional (the installed service): no file is a first run,
	 * not an error that systemd would restart every few seconds */
	if (o->config && o->config_optional && access(o->config, F_OK) < 0 && errno == ENOENT)
		log_info("no %s: running on defaults (every camera found); write it and reload",
			 o->config);
	else if (o->config && vc_ops_load(o->config, &a->conf) < 0)
		return -1;
	if (a->conf && o->log_level < 0 && a->conf->log_level >= 0)
		vc_log_level = a->conf->log_level;
	if (a->conf && vc_auth_new(a->conf, &a->auth) < 0)
		return -1;
	a->listen_flags = o->n_listen > 0;
	if (!o->n_listen && a->conf)
		for (size_t i = 0; i < a->conf->n_listen && o->n_listen < VC_CLI_MAX_LISTEN; i++)
			o->listen[o->n_listen++] = a->conf->listen[i];
	if (!o->n_listen)
		for (size_t i = 0; i < o->n_default_listen; i++)
			o->listen[o->n_listen++] = o->default_listen[i];
	if (!o->n_listen)
		o->listen[o->n_listen++] = "127.0.0.1:8080";
	if (a->conf) {
		hc->conn_limit = (unsigned)a->conf->max_clients;
		hc->per_ip_limit = (unsigned)a->conf->max_clients_per_ip;
		hc->timeout_s = (unsigned)a->conf->client_timeout;
		hc->header_timeout_s = (unsigned)a->conf->header_timeout;
		if (a->conf->tls_cert && (vc_ops_read_file(a->conf->tls_cert, &a->tls_cert) < 0 ||
					 vc_ops_read_file(a->conf->tls_key, &a->tls_key) < 0)) {
			log_error("cannot read %s / %s", a->conf->tls_cert, a->conf->tls_key);
			return -1;
		}
		hc->tls_cert_pem = a->tls_cert;
		hc->tls_key_pem = a->tls_key;
		hc->tls_priorities = a->conf->tls_priorities;
		hc->cors_origin = a->conf->cors_origin;
	}
	return 0;
}

/* SIGHUP reloads the config; SIGINT/SIGTERM end the streams and arm the
 * stop timer that leaves the loop once they had a moment to flush. */
static int add_signals(struct app *a)
{
	a->sig_hup = evsignal_new(a->base, SIGHUP, on_hup, a);
	if (!a->sig_hup || event_add(a->sig_hup, NULL) < 0)
		return -1;
	a->sig_int = evsignal_new(a->base, SIGINT, on_signal, a);
	a->sig_term = evsignal_new(a->base, SIGTERM, on_signal, a);
	a->stop_timer = evtimer_new(a->base, on_stop_timer, a);
	if (!a->sig_int || !a->sig_term || !a->stop_timer || event_add(a->sig_int, NULL) < 0 ||
	    event_add(a->sig_term, NULL) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct vc_cli o;
	struct app a = { .opts = &o };
	int ret, rc = 1;

	vc_log_init();
	ret = vc_cli_parse(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : 2;
	if (o.check_config) {
		if (!o.config) {
			fprintf(stderr, "vcapd: --check-config needs --config FILE\n");
			return 2;
		}
		return vc_ops_check_config(o.config, stdout, stderr);
	}
	if (o.print_conf_ref) {
		vc_conf_reference(stdout);
		return 0;
	}
	if (o.make_token)
		return make_token(&o);
	if (o.routes)
		return print_routes();
	/* Config first, then flags on top of it. */
	struct vc_http_config hc = { 0 };
	if (load_config(&a, &o, &hc) < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN); /* sendfile() to a closed client has no MSG_NOSIGNAL */
	raise_fd_limit();
	tune_allocator();
	a.base = vc_loop_new(); /* thread-safe, precise timers */
	if (!a.base) {
		log_error("cannot create the event loop");
		return 1;
	}
	if (vc_sdnotify_new(a.base, loop_healthy, &a, &a.notify) < 0)
		goto out;
	if (vc_camset_new(a.base, a.conf, &a.camset) < 0 ||
	    vc_camset_start(a.camset, &o) < 0)
		goto out;
	const size_t *n_cams;
	struct vc_cam *const *cams = vc_camset_cams(a.camset, &n_cams);
	if (vc_http_new(a.base, &hc, &a.http) < 0 ||
	    (a.conf && vc_http_set_proxies(a.http, a.conf->proxies, a.conf->n_proxies) < 0) ||
	    vc_streams_new(a.base, a.http, cams, *n_cams, &a.streams) < 0 ||
	    vc_api_new(a.streams, a.http, &a.api) < 0) {
		log_error("out of memory");
		goto out;
	}
	if (setup_routes(&a) < 0) {
		log_error("cannot build the route table");
		goto out;
	}
	vc_camset_serve(a.camset, a.streams);
	vc_api_set_m2m(a.api, vc_camset_m2m(a.camset));
	vc_api_set_loop_stats(a.api, &a.loop_stats);
	vc_streams_set_m2m(a.streams, vc_camset_m2m(a.camset), NULL);
	if (vc_guard_new(a.conf, o.listen, o.n_listen, &a.guard) < 0 ||
	    vc_auth_gate_new(a.base, a.http, &a.auth, &a.guard, &a.gate) < 0) {
		log_error("out of memory");
		goto out;
	}
	vc_http_set_gate(a.http, vc_auth_gate, a.gate);
	apply_budget(&a, a.conf);
	if (vc_camset_watch(a.camset, on_camset_changed, &a) < 0)
		goto out;
	if (vc_sdnotify_enabled(a.notify)) {
		struct timeval tv = { 1, 0 };

		a.status_timer = event_new(a.base, -1, EV_PERSIST, on_status_tick, &a);
		if (!a.status_timer || evtimer_add(a.status_timer, &tv) < 0)
			goto out;
	}
	for (size_t i = 0; i < o.n_listen; i++)
		if (vc_http_listen(a.http, o.listen[i]) < 0)
			goto out;
	if (start_rtsp(&a, &o) < 0)
		goto out;
	if (add_signals(&a) < 0)
		goto out;
	struct timeval log_tv = { 1, 0 };
	a.log_timer = event_new(a.base, -1, EV_PERSIST, on_log_tick, NULL);
	if (!a.log_timer || evtimer_add(a.log_timer, &log_tv) < 0)
		goto out;
	a.boot_conf = a.conf;
	vc_auth_warn_open(a.auth, a.guard, o.listen, o.n_listen);
	status_update(&a, 1);
	vc_sdnotify_ready(a.notify);
	vc_loop_run(a.base, &a.loop_stats);
	rc = 0;
out:
	app_close(&a);
	vc_log_flush();
	log_info("stopped");
	return rc;
}
