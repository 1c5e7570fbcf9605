/* Glue between the config file and the daemon: loading with errors logged
 * line by line, --check-config, and applying control lines. Kept out of
 * main.c so main stays a list of steps. */
#ifndef VC_OPSCONF_H
#define VC_OPSCONF_H

#include <stddef.h>
#include <stdio.h>

#include "common/conf.h"
#include "server/capture/capture.h"
#include "server/capture/controls.h"

/* Loads path; on errors logs each "file:line: message" and returns < 0. */
int vc_ops_load(const char *path, struct vc_conf **out);

/* --check-config: validates path (config and the auth setup it implies),
 * prints the effective config to out (secrets redacted) or the errors to err.
 * Returns the process exit status: 0 valid, 1 invalid. */
int vc_ops_check_config(const char *path, FILE *out, FILE *err);

/* The [server] settings that differ between the running config a and a
 * reloaded b but only apply at a restart (they bind sockets, load
 * certificates or size the server): a comma list into keys ("listen,
 * tls_cert"), listen only when with_listen (--listen flags win over the
 * file). Returns 1 when there is any, else 0 (keys ""). The key table
 * (common/conf_keys.c) says which keys these are: vc_conf_restart_keys. */
int vc_ops_restart_keys(const struct vc_conf *a, const struct vc_conf *b, int with_listen,
			char *keys, size_t n);

/* Reads a whole (small) file, NUL-terminated; 0 or -errno. */
int vc_ops_read_file(const char *path, char **out);

/* Applies a [camera]'s "control = NAME=VALUE" lines: NAME is a control key
 * ("brightness") or the driver's name, VALUE an integer, true/false for
 * booleans, or a menu item's name. cs is the camera's loaded control list;
 * set(o, ...) is vc_cam_ctrl_set_checked (or a fake in tests). Each refused
 * line is logged as an error and skipped; returns how many were refused. */
typedef int (*vc_ops_ctrl_setter)(void *o, uint32_t id, int64_t value, int64_t *applied);
int vc_ops_apply_ctrls(const struct vc_ctrls *cs, const char *cam, const struct vc_conf_ctrl *want,
		       size_t n, vc_ops_ctrl_setter set, void *o);

#endif
