/* The command line: options into plain data (struct vc_cli), --help text,
 * and the per-camera flags (--resolution, --fps, --format, --quality,
 * --rotate, --flip) that launchers written for other streamers pass. Each
 * is its camera key's text, checked when parsed and later applied to a
 * camera's struct vc_conf_cam through the key's own row (vc_conf_cam_set):
 * a flag and its config key accept the same values, give the same messages
 * and land in the same field.
 *
 * A per-camera flag after a --device applies to that camera; one before the
 * first --device applies to every camera (discovered ones, [camera]
 * sections, and each --device unless its own flag says otherwise). Flags
 * override the config file. */
#ifndef VC_CLI_H
#define VC_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "common/conf.h"

#define VC_CLI_MAX_CAMS 16
#define VC_CLI_MAX_LISTEN 16

#define VC_CLI_MAX_KEYS 8 /* camera keys the per-camera flags can set (7) */

/* One camera key a flag set, kept as the text of its config line "key =
 * value" (value: len bytes of an argv string; --resolution's width is the
 * part before the x) and applied through the same row (vc_conf_cam_set). */
struct vc_cli_key {
	const char *key;
	const char *value;
	size_t len;
};

/* The per-camera flags given for one camera (or for all): an overlay on
 * its settings. A repeated flag replaces the earlier value. */
struct vc_cli_cam {
	struct vc_cli_key keys[VC_CLI_MAX_KEYS];
	size_t n;
};

struct vc_cli {
	const char *devices[VC_CLI_MAX_CAMS];
	struct vc_cli_cam dev[VC_CLI_MAX_CAMS]; /* flags after each --device */
	struct vc_cli_cam all;  /* flags before the first --device */
	size_t n_devices;
	const char *listen[VC_CLI_MAX_LISTEN];
	size_t n_listen;
	const char *config;     /* --config FILE */
	int config_optional;    /* --config-optional: a missing FILE means defaults */
	/* --default-listen: where to listen when neither --listen nor the
	 * config's listen lines say (else 127.0.0.1:8080). The installed
	 * service passes 0.0.0.0:8080 so a Pi is viewable from the LAN. */
	const char *default_listen[VC_CLI_MAX_LISTEN];
	size_t n_default_listen;
	int print_conf_ref;     /* --print-config-reference */
	int check_config;       /* --check-config */
	int log_level;          /* from the flag, -1 = none; overrides the file */
	const char *make_token; /* --make-token SCOPE[:SECONDS] */
	int routes;             /* --routes */
	const char *rtsp;       /* --rtsp PORT|ADDR:PORT|off (NULL: 8554 on the HTTP addresses) */
	unsigned rtsp_timeout_s; /* --rtsp-timeout S (0: 60) */
};

/* Parses argv into *o (zeroed first; log_level -1). Sets vc_log_level when
 * --log-level is given. Returns 0 to run, 1 when the process should exit 0
 * (--help, --version: printed to stdout), 2 on a usage error (the message
 * on stderr). Strings point into argv. */
int vc_cli_parse(int argc, char **argv, struct vc_cli *o);

/* The --help text. */
void vc_cli_usage(FILE *f);

/* Sets the keys that f gives in cam, as their config lines would (the
 * others stay). 0, or -errno from vc_conf_cam_set (values were checked at
 * parse: only -ENOMEM). */
int vc_cli_apply(const struct vc_cli_cam *f, struct vc_conf_cam *cam);

/* The settings of --device number i: its path into cam->device, every
 * camera's flags, then its own on top; cam's other fields stay. 0 or
 * -ENOMEM. */
int vc_cli_device(const struct vc_cli *o, size_t i, struct vc_conf_cam *cam);

#endif
