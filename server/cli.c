/* Command-line parsing: owns the option table, the --help text and the
 * per-camera flags, checked by the config file's key parsers so both speak
 * the same language. No loop, no devices: unit-tested with argv tables. */
#include "server/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/conf_keys.h"
#include "common/log.h"
#include "server/capture/testsrc.h"

#define VCAPD_VERSION "0.1"

void vc_cli_usage(FILE *f)
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
		"  --config-optional   a missing --config FILE is no error: run on defaults\n"
		"                      (every camera found) until it exists (SIGHUP reads it)\n"
		"  --default-listen ADDR:PORT  where to listen when neither --listen nor the\n"
		"                      config's listen says (repeatable; default 127.0.0.1:8080;\n"
		"                      the installed service uses 0.0.0.0:8080, the LAN)\n"
		"  --make-token SCOPE[:SECONDS]  print a ?token= for SCOPE (view, status,\n"
		"                      control, or a comma list) valid SECONDS (default\n"
		"                      token_ttl or 3600), signed with the config's secret\n"
		"  --check-config      validate the config, print the effective config and\n"
		"                      exit (non-zero with file:line messages on errors)\n"
		"  --routes            print every HTTP route (method, path, match, auth\n"
		"                      class) and exit\n"
		"  --print-config-reference  print every config key (Markdown table) and exit\n"
		"  --rtsp PORT|ADDR:PORT|off  the RTSP server (default: port 8554 on the\n"
		"                      addresses HTTP listens on, skipped with a warning when\n"
		"                      that port is taken; off: none)\n"
		"  --rtsp-timeout S    RTSP session timeout in seconds (default 60)\n"
		"  --help              this text\n"
		"  --version           print the version\n"
		"\n"
		"Camera settings: after a --device they apply to that camera, before the\n"
		"first --device to every camera (also discovered ones and [camera] sections);\n"
		"the config keys of the same name say the same. They are what a client gets\n"
		"when its URL does not ask (a URL's own size, fps, quality... wins):\n"
		"  --resolution WxH    the camera's size, e.g. 1280x720 (keys width, height)\n"
		"  --fps N             its frame rate, 30 or 30000/1001 (key fps;\n"
		"                      --desired-fps is the same)\n"
		"  --format F          its capture format: MJPEG, YUYV, NV12... (key format)\n"
		"  --quality Q         JPEG quality 1-100 where vcapd encodes (default 80)\n"
		"  --rotate DEG        0, 90, 180 or 270\n"
		"  --flip F            none, h, v or hv\n"
		"Example: vcapd --device /dev/video0 --resolution 1280x720 --fps 30 --format MJPEG\n");
}

/* Long options without a short letter: values past the ASCII range. */
enum {
	OPT_LOG_LEVEL = 256,
	OPT_CONFIG,
	OPT_CHECK_CONFIG,
	OPT_MAKE_TOKEN,
	OPT_ROUTES,
	OPT_CONFIG_OPTIONAL,
	OPT_DEFAULT_LISTEN,
	OPT_PRINT_CONF_REF,
	OPT_RTSP,
	OPT_RTSP_TIMEOUT,
	OPT_CAM, /* OPT_CAM + i: cam_flags[i] */
};

/* The per-camera flags, each the camera key of that name (a key's row
 * checks and applies it); --resolution sets both width and height. */
static const struct {
	const char *flag, *key;
} cam_flags[] = {
	{ "resolution", NULL }, { "fps", "fps" },
	{ "desired-fps", "fps" }, /* µStreamer's name */
	{ "format", "format" }, { "quality", "quality" }, { "rotate", "rotate" }, { "flip", "flip" },
};
#define N_CAM_FLAGS (sizeof(cam_flags) / sizeof(cam_flags[0]))
/* every key a flag sets fits (--resolution sets two) */
_Static_assert(N_CAM_FLAGS + 1 <= VC_CLI_MAX_KEYS, "VC_CLI_MAX_KEYS too small");

/* Keeps key = len bytes of v in f, replacing an earlier value of the key. */
static void keep(struct vc_cli_cam *f, const char *key, const char *v, size_t len)
{
	size_t i = 0;

	while (i < f->n && strcmp(f->keys[i].key, key))
		i++;
	if (i == VC_CLI_MAX_KEYS) /* cannot be: fewer keys than that have flags */
		return;
	if (i == f->n)
		f->n++;
	f->keys[i] = (struct vc_cli_key){ .key = key, .value = v, .len = len };
}

/* One per-camera flag: checked as its config key(s), kept in f. */
static int cam_flag(struct vc_cli_cam *f, const char *flag, const char *key, const char *v)
{
	struct vc_conf_cam k;
	char err[256] = "", w[32];
	const char *x = NULL;
	int r;

	vc_conf_cam_init(&k);
	if (key) {
		r = vc_conf_cam_set(&k, key, v, err, sizeof(err));
	} else {
		/* "WxH": the config's width and height keys check each part */
		x = strpbrk(v, "xX");
		if (!x || (size_t)(x - v) >= sizeof(w) || x == v) {
			snprintf(err, sizeof(err), "'%s' is not WxH like 1280x720", v);
			r = -EINVAL;
		} else {
			memcpy(w, v, (size_t)(x - v));
			w[x - v] = '\0';
			r = vc_conf_cam_set(&k, "width", w, err, sizeof(err));
			if (r == 0)
				r = vc_conf_cam_set(&k, "height", x + 1, err, sizeof(err));
		}
	}
	vc_conf_cam_clear(&k);
	if (r < 0) {
		/* "fps: 'x' is not a rate": the flag already names the key */
		size_t n = strlen(flag);
		const char *m = !strncmp(err, flag, n) && !strncmp(err + n, ": ", 2) ? err + n + 2 : err;

		fprintf(stderr, "vcapd: --%s: %s\n", flag, m);
		return 2;
	}
	if (key) {
		keep(f, key, v, strlen(v));
	} else {
		keep(f, "width", v, (size_t)(x - v));
		keep(f, "height", x + 1, strlen(x + 1));
	}
	return 0;
}

static int add_device(struct vc_cli *o, const char *path)
{
	char why[128];

	if (o->n_devices >= VC_CLI_MAX_CAMS) {
		fprintf(stderr, "vcapd: at most %d --device\n", VC_CLI_MAX_CAMS);
		return 2;
	}
	/* a malformed test pattern can never open: say so now instead of
	 * retrying (and logging) forever */
	if ((!strcmp(path, "test") || !strncmp(path, "test:", 5)) &&
	    vc_testsrc_parse(path, &(struct vc_testsrc_opts){ 0 }, why, sizeof(why)) < 0) {
		fprintf(stderr, "vcapd: --device %s: bad test pattern: %s\n", path, why);
		return 2;
	}
	o->devices[o->n_devices++] = path;
	return 0;
}

int vc_cli_parse(int argc, char **argv, struct vc_cli *o)
{
	static const struct option fixed[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "make-token", required_argument, NULL, OPT_MAKE_TOKEN },
		{ "routes", no_argument, NULL, OPT_ROUTES },
		{ "config-optional", no_argument, NULL, OPT_CONFIG_OPTIONAL },
		{ "default-listen", required_argument, NULL, OPT_DEFAULT_LISTEN },
		{ "print-config-reference", no_argument, NULL, OPT_PRINT_CONF_REF },
		{ "rtsp", required_argument, NULL, OPT_RTSP },
		{ "rtsp-timeout", required_argument, NULL, OPT_RTSP_TIMEOUT },
	};
	const size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
	struct option lo[sizeof(fixed) / sizeof(fixed[0]) + N_CAM_FLAGS + 1];
	int c, li, r;

	memcpy(lo, fixed, sizeof(fixed));
	for (size_t i = 0; i < N_CAM_FLAGS; i++)
		lo[n_fixed + i] = (struct option){ cam_flags[i].flag, required_argument, NULL,
						   OPT_CAM + (int)i };
	lo[n_fixed + N_CAM_FLAGS] = (struct option){ NULL, 0, NULL, 0 };

	memset(o, 0, sizeof(*o));
	o->log_level = -1;
	optind = 0; /* GNU getopt: start afresh (tests parse several argvs) */
	opterr = 1;
	while ((c = getopt_long(argc, argv, "d:l:hV", lo, &li)) != -1) {
		switch (c) {
		case 'd':
			if ((r = add_device(o, optarg)))
				return r;
			break;
		case 'l':
			if (o->n_listen >= VC_CLI_MAX_LISTEN) {
				fprintf(stderr, "vcapd: at most %d --listen\n", VC_CLI_MAX_LISTEN);
				return 2;
			}
			o->listen[o->n_listen++] = optarg;
			break;
		case OPT_DEFAULT_LISTEN:
			if (o->n_default_listen >= VC_CLI_MAX_LISTEN) {
				fprintf(stderr, "vcapd: at most %d --default-listen\n", VC_CLI_MAX_LISTEN);
				return 2;
			}
			o->default_listen[o->n_default_listen++] = optarg;
			break;
		case OPT_RTSP:
			o->rtsp = optarg;
			break;
		case OPT_RTSP_TIMEOUT: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || !v || v > 3600) {
				fprintf(stderr, "vcapd: bad --rtsp-timeout '%s' (1..3600 s)\n", optarg);
				return 2;
			}
			o->rtsp_timeout_s = (unsigned)v;
			break;
		}
		case OPT_CONFIG_OPTIONAL:
			o->config_optional = 1;
			break;
		case OPT_PRINT_CONF_REF:
			o->print_conf_ref = 1;
			break;
		case OPT_LOG_LEVEL: {
			int lvl = vc_log_parse_level(optarg);

			if (lvl < 0) {
				fprintf(stderr, "vcapd: bad --log-level '%s'\n", optarg);
				return 2;
			}
			vc_log_level = lvl;
			o->log_level = lvl;
			break;
		}
		case OPT_CONFIG:
			o->config = optarg;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = 1;
			break;
		case OPT_MAKE_TOKEN:
			o->make_token = optarg;
			break;
		case OPT_ROUTES:
			o->routes = 1;
			break;
		case 'h':
			vc_cli_usage(stdout);
			return 1;
		case 'V':
			printf("vcapd %s\n", VCAPD_VERSION);
			return 1;
		default:
			if (c >= OPT_CAM && c < OPT_CAM + (int)N_CAM_FLAGS) {
				r = cam_flag(o->n_devices ? &o->dev[o->n_devices - 1] : &o->all,
					     cam_flags[c - OPT_CAM].flag, cam_flags[c - OPT_CAM].key,
					     optarg);
				if (r)
					return r;
				break;
			}
			vc_cli_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vcapd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

int vc_cli_apply(const struct vc_cli_cam *f, struct vc_conf_cam *cam)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct vc_cli_key *k = &f->keys[i];
		char part[32]; /* --resolution's width: checked shorter at parse */
		const char *v = k->value;

		if (v[k->len]) {
			if (k->len >= sizeof(part))
				return -EINVAL;
			memcpy(part, v, k->len);
			part[k->len] = '\0';
			v = part;
		}
		int r = vc_conf_cam_set(cam, k->key, v, NULL, 0);
		if (r < 0)
			return r;
	}
	return 0;
}

int vc_cli_device(const struct vc_cli *o, size_t i, struct vc_conf_cam *cam)
{
	int r = vc_conf_set_str(&cam->device, o->devices[i]);

	if (r < 0 || (r = vc_cli_apply(&o->all, cam)) < 0)
		return r;
	return vc_cli_apply(&o->dev[i], cam);
}
