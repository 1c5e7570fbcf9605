/* vcapd entry point: command line, one libevent loop owning the cameras, the
 * HTTP server and the signals; graceful stop on SIGINT/SIGTERM. Features
 * plug in as routes (vc_http_route) from setup_routes(). */
#define LOG_PREFIX "vcapd:"
#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/conf.h"
#include "common/log.h"
#include "server/http/auth_http.h"
#include "server/http/api.h"
#include "server/capture/capture.h"
#include "server/http/compat.h"
#include "server/capture/controls.h"
#include "server/capture/discover.h"
#include "server/http/http.h"
#include "server/loop.h"
#include "server/opsconf.h"
#include "server/sdnotify.h"
#include "server/stream/stream.h"
#include "server/capture/testsrc.h"
#include "server/capture/v4l2src.h"
#include "server/http/webroot.h"

#define VCAPD_VERSION "0.1"
#define MAX_CAMS 16
#define MAX_LISTEN 16

struct opts {
	const char *devices[MAX_CAMS];
	size_t n_devices;
	const char *listen[MAX_LISTEN];
	size_t n_listen;
	const char *config;   /* --config FILE (ops) */
	int check_config;     /* --check-config */
	int log_level;        /* from the flag, -1 = none; overrides the file */
	const char *make_token; /* --make-token SCOPE[:SECONDS] */
};

/* Where a camera comes from: decides what a reload or a hotplug does to it
 * and which config section its control lines come from. */
enum cam_kind {
	CAM_FLAG,  /* --device (controls: a [camera] naming the same device) */
	CAM_CONF,  /* a [camera] section, by id; reloads add/reopen/remove it */
	CAM_AUTO,  /* zero config: discovered, or the test pattern when none */
};

/* Per camera, parallel to app.cams[]. */
struct cam_slot {
	enum cam_kind kind;
	int fallback;              /* the zero-config test pattern: a device replaces it */
	int ctl_open;              /* source was open at the last control tick */
	uint64_t ctl_restarts;
};

/* The running daemon: everything the signal handlers reach. */
struct app {
	struct event_base *base;
	struct vc_cam *cams[MAX_CAMS];
	size_t n_cams;
	struct vc_http *http;
	struct vc_streams *streams;
	struct vc_api *api;
	struct event *sig_int, *sig_term, *stop_timer;
	int stopping;
	/* ops: config, auth (swapped on reload), systemd notify */
	const struct opts *opts;
	struct vc_conf *conf;
	struct vc_auth *auth;
	struct vc_guard *guard;    /* Host names, control policy (swapped on reload) */
	struct vc_auth_gate *gate;
	struct vc_sdnotify *notify;
	struct event *sig_hup;
	char *tls_cert, *tls_key;
	/* wire: hotplug watch, and the tick that applies config control lines
	 * whenever a camera (re)opens */
	struct vc_hotplug *hotplug;
	struct event *ctl_timer;
	struct cam_slot slot[MAX_CAMS];
	int zeroconf;              /* cameras are discovered (no --device, no [camera]) */
	/* the config the server started with: listen/TLS/limits/web root
	 * changes need a restart, and reloads compare against it */
	struct vc_conf *boot_conf;
	int listen_flags;          /* --listen given: the file's listen lines are ignored */
	struct event *status_timer; /* systemd STATUS= refresh */
	char status_last[160];
	time_t status_sent;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vcapd [OPTIONS]\n"
		"Serves V4L2 cameras over HTTP (MJPEG streams, snapshots, raw frames, JSON API).\n\n"
		"  --device PATH       camera: /dev/videoN, /dev/v4l/by-id/..., or the test pattern\n"
		"                      'test' / 'test:WxH@FPS:FORMAT[:still][:only]' (only: offer\n"
		"                      FORMAT alone, like a YUYV-only webcam) (repeatable; default: every\n"
		"                      V4L2 capture device found, also ones plugged in later,\n"
		"                      else the test pattern)\n"
		"  --listen ADDR:PORT  where to listen, IPv4 or [IPv6] (repeatable;\n"
		"                      default 127.0.0.1:8080)\n"
		"  --log-level LEVEL   error, warn, info (default) or debug\n"
		"  --config FILE       read FILE (see conf/vcapd.conf); flags override it;\n"
		"                      SIGHUP rereads it (cameras, auth, log level apply at\n"
		"                      once; listen, TLS, limits, web_root at a restart)\n"
		"  --make-token SCOPE[:SECONDS]  print a ?token= for SCOPE (view, status,\n"
		"                      control, or a comma list) valid SECONDS (default\n"
		"                      token_ttl or 3600), signed with the config's secret\n"
		"  --check-config      validate the config, print the effective config and\n"
		"                      exit (non-zero with file:line messages on errors)\n"
		"  --help              this text\n"
		"  --version           print the version\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "make-token", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char why[128];

	while ((c = getopt_long(argc, argv, "d:l:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (o->n_devices >= MAX_CAMS) {
				fprintf(stderr, "vcapd: at most %d --device\n", MAX_CAMS);
				return 2;
			}
			/* a malformed test pattern can never open: say so now instead
			 * of retrying (and logging) forever */
			if ((!strcmp(optarg, "test") || !strncmp(optarg, "test:", 5)) &&
			    vc_testsrc_parse(optarg, &(struct vc_testsrc_opts){ 0 }, why,
					     sizeof(why)) < 0) {
				fprintf(stderr,
					"vcapd: --device %s: bad test pattern: %s\n",
					optarg, why);
				return 2;
			}
			o->devices[o->n_devices++] = optarg;
			break;
		case 'l':
			if (o->n_listen >= MAX_LISTEN) {
				fprintf(stderr, "vcapd: at most %d --listen\n", MAX_LISTEN);
				return 2;
			}
			o->listen[o->n_listen++] = optarg;
			break;
		case 'L': {
			int lvl = vc_log_parse_level(optarg);

			if (lvl < 0) {
				fprintf(stderr, "vcapd: bad --log-level '%s'\n", optarg);
				return 2;
			}
			vc_log_level = lvl;
			o->log_level = lvl;
			break;
		}
		case 'c':
			o->config = optarg;
			break;
		case 'C':
			o->check_config = 1;
			break;
		case 'T':
			o->make_token = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("vcapd %s\n", VCAPD_VERSION);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vcapd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
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
	vc_streams_shutdown(a->streams);
	struct timeval tv = { 0, 200000 };
	evtimer_add(a->stop_timer, &tv);
}

/* --make-token: mint a URL token with the config's secret and print it. */
static int make_token(const struct opts *o)
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
		ttl = c->token_ttl_s ? c->token_ttl_s : 3600;
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

/* ---- the camera set: added, reopened and removed at run time ---- */

static void status_update(struct app *a, int now);

/* Creates a camera and serves it (once the streams exist). 0 or -errno, logged. */
static int cam_add(struct app *a, const struct vc_cam_config *cc, enum cam_kind kind)
{
	struct vc_cam *cam;
	int ret;

	if (a->n_cams >= MAX_CAMS) {
		log_error("camera %s (%s): at most %d cameras", cc->id, cc->path, MAX_CAMS);
		return -ENOSPC;
	}
	ret = vc_cam_new(a->base, cc, &cam);
	if (ret == 0 && a->streams && (ret = vc_streams_add_cam(a->streams, cam)) < 0)
		vc_cam_free(cam);
	if (ret < 0) {
		log_error("camera %s (%s): %s", cc->id, cc->path, strerror(-ret));
		return ret;
	}
	a->cams[a->n_cams] = cam;
	a->slot[a->n_cams] = (struct cam_slot){ .kind = kind };
	a->n_cams++;
	return 0;
}

/* Stops serving camera i (its streams end) and closes it. */
static void cam_remove(struct app *a, size_t i)
{
	if (a->streams)
		vc_streams_remove_cam(a->streams, a->cams[i]);
	vc_cam_free(a->cams[i]);
	memmove(&a->cams[i], &a->cams[i + 1], (a->n_cams - i - 1) * sizeof(a->cams[0]));
	memmove(&a->slot[i], &a->slot[i + 1], (a->n_cams - i - 1) * sizeof(a->slot[0]));
	a->n_cams--;
}

/* Reopens camera i with new settings in the same place: its clients stay
 * connected. The old device is closed before the new one opens (vc_cam_new
 * opens from the loop). */
static int cam_replace(struct app *a, size_t i, const struct vc_cam_config *cc)
{
	struct vc_cam *cam;
	int ret = vc_cam_new(a->base, cc, &cam);

	if (ret == 0 && (ret = vc_streams_replace_cam(a->streams, a->cams[i], cam)) < 0)
		vc_cam_free(cam);
	if (ret < 0) {
		log_error("camera %s (%s): %s; the old settings stay", cc->id, cc->path,
			  strerror(-ret));
		return ret;
	}
	vc_cam_free(a->cams[i]);
	a->cams[i] = cam;
	a->slot[i].ctl_open = 0;
	return 0;
}

/* 1 when a camera already serves the device d (same path or link, or a
 * path that resolves to d's node). */
static int cam_serving(const struct app *a, const struct vc_dev_info *d)
{
	for (size_t i = 0; i < a->n_cams; i++) {
		const char *p = vc_cam_path(a->cams[i]);
		char node[64];

		if (!strcmp(p, d->stable) || !strcmp(p, d->path) ||
		    (vc_discover_resolve(p, node, sizeof(node)) == 0 && !strcmp(node, d->path)))
			return 1;
	}
	return 0;
}

/* The lowest number no camera uses as its id: ids of discovered cameras
 * stay those of a start with the same devices. */
static void free_id(const struct app *a, char *id, size_t n)
{
	for (unsigned k = 0;; k++) {
		size_t i = 0;

		snprintf(id, n, "%u", k);
		while (i < a->n_cams && strcmp(vc_cam_id(a->cams[i]), id))
			i++;
		if (i == a->n_cams)
			return;
	}
}

/* Zero config: serves every capture node discover finds that no camera
 * serves yet, named by its by-id/by-path link; the test pattern when there
 * is no camera at all, which makes way for the first device that appears.
 * Unplugged cameras stay listed (ABSENT): they may come back. */
static void discover_add(struct app *a, const char *why)
{
	struct vc_dev_info *l = NULL;
	size_t n = 0, fresh = 0;

	if (vc_discover_list(&l, &n) < 0)
		n = 0;
	for (size_t i = 0; i < n; i++)
		fresh += !cam_serving(a, &l[i]);
	for (size_t i = 0; fresh && i < a->n_cams; i++)
		if (a->slot[i].fallback) {
			log_info("%s: a device appeared: the test pattern (camera %s) makes way", why,
				 vc_cam_id(a->cams[i]));
			cam_remove(a, i);
			break;
		}
	for (size_t i = 0; i < n; i++) {
		char id[24];
		struct vc_cam_config cc = { .id = id, .path = l[i].stable, .input = -1,
					    .idle_stop_ms = 5000 };

		if (cam_serving(a, &l[i]))
			continue;
		free_id(a, id, sizeof(id));
		if (cam_add(a, &cc, CAM_AUTO) == 0)
			log_info("%s: serving %s (%s, %s) as camera %s", why, l[i].stable, l[i].path,
				 l[i].card, id);
	}
	free(l);
	if (!a->n_cams) {
		struct vc_cam_config cc = { .id = "0", .path = "test", .input = -1,
					    .idle_stop_ms = 5000 };

		log_info("%s and no V4L2 capture device found: serving the test pattern", why);
		if (cam_add(a, &cc, CAM_AUTO) == 0)
			a->slot[a->n_cams - 1].fallback = 1;
	}
}

/* Hotplug: a node or by-id/by-path link appeared; an ABSENT camera whose
 * path resolves now reopens at once instead of at its next backoff, and in
 * zero-config mode a new device is served. */
static void on_hotplug(void *opaque)
{
	struct app *a = opaque;

	if (a->stopping)
		return;
	for (size_t i = 0; i < a->n_cams; i++) {
		char node[64];

		if (vc_cam_get_state(a->cams[i]) != VC_CAM_ABSENT ||
		    vc_discover_resolve(vc_cam_path(a->cams[i]), node, sizeof(node)) < 0)
			continue;
		log_info("hotplug: %s is back as %s: reopening camera %s", vc_cam_path(a->cams[i]),
			 node, vc_cam_id(a->cams[i]));
		vc_cam_poke(a->cams[i]);
	}
	if (a->zeroconf) {
		discover_add(a, "hotplug");
		status_update(a, 1);
	}
}

/* SIGHUP, camera part (before a->conf becomes nc): [camera] sections that
 * went are removed, changed ones reopened in place (only their control lines
 * changed: set again, no reopen), new ones added; unchanged ones are not
 * touched (no gap). With --device the flags keep
 * deciding the cameras; their control lines apply again. */
static void reload_cams(struct app *a, const struct vc_conf *nc)
{
	struct vc_cam_config ccs[MAX_CAMS];
	size_t n = nc->n_cams ? vc_ops_cam_configs(nc, ccs, MAX_CAMS, 5000) : 0;

	if (a->opts->n_devices) {
		for (size_t i = 0; i < a->n_cams; i++)
			a->slot[i].ctl_open = 0;
		return;
	}
	for (size_t i = a->n_cams; i-- > 0;) {
		const char *id = vc_cam_id(a->cams[i]);
		const struct vc_conf_cam *ko = a->conf ? vc_conf_find_cam(a->conf, id) : NULL;
		const struct vc_conf_cam *kn = vc_conf_find_cam(nc, id);

		if (a->slot[i].kind != CAM_CONF)
			continue;
		if (!kn || (size_t)(kn - nc->cams) >= n) {
			log_info("reload: camera %s removed", id);
			cam_remove(a, i);
		} else if (!ko || !vc_conf_cam_same_open(ko, kn)) {
			log_info("reload: camera %s changed: reopening it", id);
			if (cam_replace(a, i, &ccs[kn - nc->cams]) == 0)
				vc_v4l2_cam_conf(a->cams[i], kn); /* std, dv_timings */
		} else if (!vc_conf_cam_equal(ko, kn)) {
			/* controls need no reopen: the next control tick sets the
			 * new lines (from nc, a->conf by then) while it streams */
			log_info("reload: camera %s: control lines changed: applying them", id);
			a->slot[i].ctl_open = 0;
		}
	}
	if (n && a->zeroconf) {
		log_info("reload: [camera] sections now decide the cameras (no more discovery)");
		a->zeroconf = 0;
		for (size_t i = a->n_cams; i-- > 0;)
			if (a->slot[i].kind == CAM_AUTO)
				cam_remove(a, i);
	}
	for (size_t j = 0; j < n; j++) {
		size_t i = 0;

		while (i < a->n_cams && strcmp(vc_cam_id(a->cams[i]), ccs[j].id))
			i++;
		if (i < a->n_cams)
			continue;
		if (cam_add(a, &ccs[j], CAM_CONF) == 0) {
			vc_v4l2_cam_conf(a->cams[a->n_cams - 1], &nc->cams[j]); /* std, dv_timings */
			log_info("reload: camera %s added (%s)", ccs[j].id, ccs[j].path);
		}
	}
	if (!n && !a->zeroconf) {
		a->zeroconf = 1;
		discover_add(a, "reload: no [camera] left");
	}
}

/* The stream memory budget from the config (0 = stream defaults). */
static void apply_budget(struct app *a, const struct vc_conf *c)
{
	struct vc_stream_budget b = { 0 };

	if (c) {
		b.max_outputs = (unsigned)c->max_outputs;
		b.frame_bytes = (size_t)c->frame_memory_mb << 20;
		b.max_width = c->max_width;
		b.max_height = c->max_height;
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
	vc_sdnotify_reloading(a->notify);
	if (vc_ops_load(a->opts->config, &nc) < 0 || vc_auth_new(nc, &na) < 0 ||
	    vc_guard_new(nc, a->opts->listen, a->opts->n_listen, &ng) < 0) {
		log_error("reload: %s rejected, the running config stays", a->opts->config);
		vc_auth_free(na);
		vc_conf_free(nc);
		vc_sdnotify_ready(a->notify);
		return;
	}
	if (vc_ops_restart_keys(a->boot_conf, nc, !a->listen_flags, keys, sizeof(keys)))
		log_warn("reload: %s changed: restart vcapd to apply (the running server keeps the old values)",
			 keys);
	if (a->opts->log_level < 0)
		vc_log_level = nc->log_level >= 0 ? nc->log_level : VC_LOG_INFO;
	vc_auth_free(a->auth);
	a->auth = na;
	vc_guard_free(a->guard);
	a->guard = ng;
	vc_auth_warn_open(a->auth, a->guard, a->opts->listen, a->opts->n_listen);
	if (vc_http_set_cors(a->http, nc->cors_origin) < 0)
		log_warn("reload: cors_origin not changed (out of memory)");
	apply_budget(a, nc);
	reload_cams(a, nc);
	if (a->conf != a->boot_conf)
		vc_conf_free(a->conf);
	a->conf = nc;
	log_info("reload: %s applied", a->opts->config);
	vc_sdnotify_ready(a->notify);
	status_update(a, 1);
}

/* The [camera] section whose control lines apply to camera i: its own for a
 * config camera; for --device, a section naming the same device (same text,
 * or the same node once links are resolved). */
static const struct vc_conf_cam *cam_section(const struct app *a, size_t i)
{
	const char *p = vc_cam_path(a->cams[i]);
	char node[64], kn[64];

	if (!a->conf || a->slot[i].kind == CAM_AUTO)
		return NULL;
	if (a->slot[i].kind == CAM_CONF)
		return vc_conf_find_cam(a->conf, vc_cam_id(a->cams[i]));
	for (size_t j = 0; j < a->conf->n_cams; j++)
		if (!strcmp(a->conf->cams[j].device, p))
			return &a->conf->cams[j];
	if (vc_discover_resolve(p, node, sizeof(node)) < 0)
		return NULL;
	for (size_t j = 0; j < a->conf->n_cams; j++)
		if (vc_discover_resolve(a->conf->cams[j].device, kn, sizeof(kn)) == 0 &&
		    !strcmp(kn, node))
			return &a->conf->cams[j];
	return NULL;
}

static int cam_ctrl_set(void *o, uint32_t id, int64_t value, int64_t *applied)
{
	return vc_cam_ctrl_set_checked(o, id, value, applied);
}

/* Config control lines apply whenever a camera's source (re)opens: the
 * capture layer reports opens only to the stream hub's callback, so this
 * polls for "source open now, was not (or restarted since)". */
static void on_ctl_tick(evutil_socket_t fd, short what, void *arg)
{
	struct app *a = arg;

	(void)fd;
	(void)what;
	for (size_t i = 0; a->conf && i < a->n_cams; i++) {
		struct vc_cam *cam = a->cams[i];
		struct cam_slot *sl = &a->slot[i];
		struct vc_cam_stats st;
		struct vc_ctrls cs;

		if (!vc_cam_source(cam)) {
			sl->ctl_open = 0;
			continue;
		}
		vc_cam_get_stats(cam, &st);
		if (sl->ctl_open && st.restarts == sl->ctl_restarts)
			continue;
		sl->ctl_open = 1;
		sl->ctl_restarts = st.restarts;
		const struct vc_conf_cam *k = cam_section(a, i);
		if (!k || !k->n_ctrls)
			continue;
		if (sl->kind == CAM_FLAG)
			log_info("--device %s: control lines of [camera %s]", vc_cam_path(cam), k->name);
		if (vc_cam_ctrls_load(cam, &cs) < 0)
			continue; /* gone again: the next open retries */
		vc_ops_apply_ctrls(&cs, k->name, k->ctrls, k->n_ctrls, cam_ctrl_set, cam);
		vc_ctrls_clear(&cs);
	}
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

static void on_status_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	status_update(arg, 0);
}

static int setup_routes(struct app *a)
{
	if (vc_streams_routes(a->streams, a->http) < 0)
		return -ENOSPC;
	if (vc_api_routes(a->api, a->http) < 0)
		return -ENOSPC;
	if (vc_compat_routes(a->http, a->cams, &a->n_cams) < 0)
		return -ENOSPC;
	/* last: the web page takes every other path */
	return vc_webroot_routes(a->http, a->conf ? a->conf->web_root : NULL);
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

int main(int argc, char **argv)
{
	struct opts o = { .log_level = -1 };
	struct app a = { .opts = &o };
	struct vc_cam_config ccs[MAX_CAMS];
	size_t n_ccs = 0;
	int ret, rc = 1;

	vc_log_init();
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : 2;
	if (o.check_config) {
		if (!o.config) {
			fprintf(stderr, "vcapd: --check-config needs --config FILE\n");
			return 2;
		}
		return vc_ops_check_config(o.config, stdout, stderr);
	}
	if (o.make_token)
		return make_token(&o);
	/* Config first, then flags on top of it. */
	if (o.config && vc_ops_load(o.config, &a.conf) < 0)
		return 1;
	if (a.conf && o.log_level < 0 && a.conf->log_level >= 0)
		vc_log_level = a.conf->log_level;
	if (a.conf && vc_auth_new(a.conf, &a.auth) < 0)
		return 1;
	if (!o.n_devices && a.conf && a.conf->n_cams)
		n_ccs = vc_ops_cam_configs(a.conf, ccs, MAX_CAMS, 5000);
	a.listen_flags = o.n_listen > 0;
	if (!o.n_listen && a.conf)
		for (size_t i = 0; i < a.conf->n_listen && o.n_listen < MAX_LISTEN; i++)
			o.listen[o.n_listen++] = a.conf->listen[i];
	if (!o.n_listen)
		o.listen[o.n_listen++] = "127.0.0.1:8080";
	struct vc_http_config hc = { 0 };
	if (a.conf) {
		hc.conn_limit = (unsigned)a.conf->max_clients;
		hc.per_ip_limit = (unsigned)a.conf->max_clients_per_ip;
		hc.timeout_s = (unsigned)a.conf->client_timeout;
		if (a.conf->tls_cert && (vc_ops_read_file(a.conf->tls_cert, &a.tls_cert) < 0 ||
					 vc_ops_read_file(a.conf->tls_key, &a.tls_key) < 0)) {
			log_error("cannot read %s / %s", a.conf->tls_cert, a.conf->tls_key);
			return 1;
		}
		hc.tls_cert_pem = a.tls_cert;
		hc.tls_key_pem = a.tls_key;
		hc.cors_origin = a.conf->cors_origin;
	}
	signal(SIGPIPE, SIG_IGN); /* sendfile() to a closed client has no MSG_NOSIGNAL */
	raise_fd_limit();
	a.base = vc_loop_new(); /* thread-safe, precise timers */
	if (!a.base) {
		log_error("cannot create the event loop");
		return 1;
	}
	if (vc_sdnotify_new(a.base, loop_healthy, &a, &a.notify) < 0)
		goto out;
	for (size_t i = 0; i < o.n_devices; i++) {
		char id[24];
		struct vc_cam_config cc = { .id = id, .path = o.devices[i], .input = -1,
					    .idle_stop_ms = 5000 };

		snprintf(id, sizeof(id), "%zu", i);
		if (cam_add(&a, &cc, CAM_FLAG) < 0)
			goto out;
		const struct vc_conf_cam *k = cam_section(&a, a.n_cams - 1);
		if (k)
			vc_v4l2_cam_conf(a.cams[a.n_cams - 1], k); /* std, dv_timings */
	}
	for (size_t i = 0; i < n_ccs; i++) {
		if (cam_add(&a, &ccs[i], CAM_CONF) < 0)
			goto out;
		vc_v4l2_cam_conf(a.cams[a.n_cams - 1], &a.conf->cams[i]); /* std, dv_timings */
	}
	if (!o.n_devices && !n_ccs) {
		a.zeroconf = 1;
		discover_add(&a, "no --device or [camera]");
	}
	if (vc_http_new(a.base, &hc, &a.http) < 0 ||
	    vc_streams_new(a.base, a.http, a.cams, a.n_cams, &a.streams) < 0 ||
	    vc_api_new(a.streams, a.http, &a.api) < 0 || setup_routes(&a) < 0) {
		log_error("out of memory");
		goto out;
	}
	if (vc_guard_new(a.conf, o.listen, o.n_listen, &a.guard) < 0 ||
	    vc_auth_gate_new(a.base, a.http, &a.auth, &a.guard, &a.gate) < 0) {
		log_error("out of memory");
		goto out;
	}
	vc_http_set_gate(a.http, vc_auth_gate, a.gate);
	apply_budget(&a, a.conf);
	ret = vc_hotplug_new(a.base, NULL, on_hotplug, &a, &a.hotplug);
	if (ret < 0)
		log_warn("no hotplug watch on /dev (%s): unplugged cameras retry on their backoff",
			 strerror(-ret));
	if (a.conf) { /* control lines can only come from a config */
		struct timeval tv = { 0, 250000 };

		a.ctl_timer = event_new(a.base, -1, EV_PERSIST, on_ctl_tick, &a);
		if (!a.ctl_timer || evtimer_add(a.ctl_timer, &tv) < 0)
			goto out;
	}
	if (vc_sdnotify_enabled(a.notify)) {
		struct timeval tv = { 1, 0 };

		a.status_timer = event_new(a.base, -1, EV_PERSIST, on_status_tick, &a);
		if (!a.status_timer || evtimer_add(a.status_timer, &tv) < 0)
			goto out;
	}
	for (size_t i = 0; i < o.n_listen; i++)
		if (vc_http_listen(a.http, o.listen[i]) < 0)
			goto out;
	a.sig_hup = evsignal_new(a.base, SIGHUP, on_hup, &a);
	if (!a.sig_hup || event_add(a.sig_hup, NULL) < 0)
		goto out;
	a.sig_int = evsignal_new(a.base, SIGINT, on_signal, &a);
	a.sig_term = evsignal_new(a.base, SIGTERM, on_signal, &a);
	a.stop_timer = evtimer_new(a.base, on_stop_timer, &a);
	if (!a.sig_int || !a.sig_term || !a.stop_timer || event_add(a.sig_int, NULL) < 0 ||
	    event_add(a.sig_term, NULL) < 0)
		goto out;
	a.boot_conf = a.conf;
	vc_auth_warn_open(a.auth, a.guard, o.listen, o.n_listen);
	status_update(&a, 1);
	vc_sdnotify_ready(a.notify);
	event_base_dispatch(a.base);
	rc = 0;
out:
	if (a.streams && !a.stopping)
		vc_streams_shutdown(a.streams);
	vc_auth_gate_free(a.gate); /* resumes connections waiting for a hash */
	vc_http_free(a.http);      /* closes every connection: clients unlink */
	vc_api_free(a.api);
	vc_streams_free(a.streams);
	for (size_t i = 0; i < a.n_cams; i++)
		vc_cam_free(a.cams[i]);
	if (a.sig_int)
		event_free(a.sig_int);
	if (a.sig_term)
		event_free(a.sig_term);
	if (a.stop_timer)
		event_free(a.stop_timer);
	if (a.sig_hup)
		event_free(a.sig_hup);
	if (a.ctl_timer)
		event_free(a.ctl_timer);
	if (a.status_timer)
		event_free(a.status_timer);
	vc_hotplug_free(a.hotplug);
	vc_sdnotify_free(a.notify);
	vc_auth_free(a.auth);
	vc_guard_free(a.guard);
	if (a.boot_conf != a.conf)
		vc_conf_free(a.boot_conf);
	vc_conf_free(a.conf);
	free(a.tls_cert);
	free(a.tls_key);
	event_base_free(a.base);
	log_info("stopped");
	return rc;
}
