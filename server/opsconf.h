/* Glue between the config file and the daemon: loading with errors logged
 * line by line, --check-config, and mapping [camera] sections onto
 * vc_cam_config. Kept out of main.c so main stays a list of steps. */
#ifndef VC_OPSCONF_H
#define VC_OPSCONF_H

#include <stddef.h>
#include <stdio.h>

#include "common/conf.h"
#include "server/capture.h"

/* Loads path; on errors logs each "file:line: message" and returns < 0. */
int vc_ops_load(const char *path, struct vc_conf **out);

/* --check-config: validates path (config and the auth setup it implies),
 * prints the effective config to out (secrets redacted) or the errors to err.
 * Returns the process exit status: 0 valid, 1 invalid. */
int vc_ops_check_config(const char *path, FILE *out, FILE *err);

/* Fills cc[0..max) from the camera sections; pointers into c (valid while c
 * lives). idle_stop_ms unset -> default_idle_ms. Returns the count. */
size_t vc_ops_cam_configs(const struct vc_conf *c, struct vc_cam_config *cc, size_t max,
			  int default_idle_ms);

/* 1 when both configs define the same cameras the same way. */
int vc_ops_cams_equal(const struct vc_conf *a, const struct vc_conf *b);
/* 1 when both configs listen on the same addresses. */
int vc_ops_listen_equal(const struct vc_conf *a, const struct vc_conf *b);

/* Reads a whole (small) file, NUL-terminated; 0 or -errno. */
int vc_ops_read_file(const char *path, char **out);

#endif
