/* vcapd entry point: command line, one libevent loop owning the cameras, the
 * HTTP server and the signals; graceful stop on SIGINT/SIGTERM. Features
 * plug in as routes (vc_http_route) from setup_routes(). */
#define LOG_PREFIX "vcapd:"
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/api.h"
#include "server/capture.h"
#include "server/http.h"
#include "server/stream.h"

#define VCAPD_VERSION "0.1"
#define MAX_CAMS 16
#define MAX_LISTEN 16

struct opts {
	const char *devices[MAX_CAMS];
	size_t n_devices;
	const char *listen[MAX_LISTEN];
	size_t n_listen;
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
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vcapd [OPTIONS]\n"
		"Serves V4L2 cameras over HTTP (MJPEG streams, snapshots, raw frames, JSON API).\n\n"
		"  --device PATH       camera: /dev/videoN, /dev/v4l/by-id/..., or the test pattern\n"
		"                      'test' / 'test:WxH@FPS:FORMAT' (repeatable; default: test)\n"
		"  --listen ADDR:PORT  where to listen, IPv4 or [IPv6] (repeatable;\n"
		"                      default 127.0.0.1:8080)\n"
		"  --log-level LEVEL   error, warn, info (default) or debug\n"
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
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:l:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (o->n_devices >= MAX_CAMS) {
				fprintf(stderr, "vcapd: at most %d --device\n", MAX_CAMS);
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
			break;
		}
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
	if (!o->n_devices)
		o->devices[o->n_devices++] = "test";
	if (!o->n_listen)
		o->listen[o->n_listen++] = "127.0.0.1:8080";
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
	vc_streams_shutdown(a->streams);
	struct timeval tv = { 0, 200000 };
	evtimer_add(a->stop_timer, &tv);
}

static int setup_routes(struct app *a)
{
	if (vc_streams_routes(a->streams, a->http) < 0)
		return -ENOSPC;
	return vc_api_routes(a->api, a->http);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct app a = { 0 };
	int ret, rc = 1;

	vc_log_init();
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : 2;
	signal(SIGPIPE, SIG_IGN);
	/* worker threads hand results back through the loop */
	evthread_use_pthreads();
	a.base = event_base_new();
	if (!a.base) {
		log_error("cannot create the event loop");
		return 1;
	}
	for (size_t i = 0; i < o.n_devices; i++) {
		char id[24];
		struct vc_cam_config cc = { .id = id, .path = o.devices[i], .input = -1,
					    .idle_stop_ms = 5000 };

		snprintf(id, sizeof(id), "%zu", i);
		ret = vc_cam_new(a.base, &cc, &a.cams[a.n_cams]);
		if (ret < 0) {
			log_error("device %s: %s", o.devices[i], strerror(-ret));
			goto out;
		}
		a.n_cams++;
	}
	if (vc_http_new(a.base, NULL, &a.http) < 0 ||
	    vc_streams_new(a.base, a.http, a.cams, a.n_cams, &a.streams) < 0 ||
	    vc_api_new(a.streams, a.http, &a.api) < 0 || setup_routes(&a) < 0) {
		log_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < o.n_listen; i++)
		if (vc_http_listen(a.http, o.listen[i]) < 0)
			goto out;
	a.sig_int = evsignal_new(a.base, SIGINT, on_signal, &a);
	a.sig_term = evsignal_new(a.base, SIGTERM, on_signal, &a);
	a.stop_timer = evtimer_new(a.base, on_stop_timer, &a);
	if (!a.sig_int || !a.sig_term || !a.stop_timer || event_add(a.sig_int, NULL) < 0 ||
	    event_add(a.sig_term, NULL) < 0)
		goto out;
	event_base_dispatch(a.base);
	rc = 0;
out:
	if (a.streams && !a.stopping)
		vc_streams_shutdown(a.streams);
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
	event_base_free(a.base);
	log_info("stopped");
	return rc;
}
