/* The command line: options into plain data (struct vc_cli), --help text,
 * and the per-camera flags (--resolution, --fps, --format, --quality,
 * --rotate, --flip) that launchers written for other streamers pass. Those
 * go through the config file's own key checks (vc_conf_cam_set), so a flag
 * and its config key accept the same values and give the same messages.
 *
 * A per-camera flag after a --device applies to that camera; one before the
 * first --device applies to every camera (discovered ones, [camera]
 * sections, and each --device unless its own flag says otherwise). Flags
 * override the config file. */
#ifndef VC_CLI_H
#define VC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/caps.h"
#include "server/capture/capture.h"

#define VC_CLI_MAX_CAMS 16
#define VC_CLI_MAX_LISTEN 16

/* Bits of vc_cli_cam.set: which per-camera flags were given. */
enum vc_cli_set {
	VC_CLI_FORMAT = 1u << 0,
	VC_CLI_SIZE = 1u << 1,
	VC_CLI_FPS = 1u << 2,
	VC_CLI_QUALITY = 1u << 3,
	VC_CLI_ROTATE = 1u << 4,
	VC_CLI_FLIP = 1u << 5,
};

/* Per-camera flags: the camera's mode (what clients that name no size,
 * format or rate get) and the defaults for quality/rotate/flip. */
struct vc_cli_cam {
	struct vc_mode mode;  /* fourcc, width/height, ival as the flags set them */
	uint8_t quality;
	uint16_t rotate;
	uint8_t flip;
	unsigned set;         /* enum vc_cli_set: fields above that were given */
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

/* Writes the flags that f gives into cc (the others stay). */
void vc_cli_apply(const struct vc_cli_cam *f, struct vc_cam_config *cc);

/* The settings of --device number i: its path, every camera's flags, then
 * its own on top. cc's other fields are left for the caller. */
void vc_cli_device(const struct vc_cli *o, size_t i, struct vc_cam_config *cc);

#endif
