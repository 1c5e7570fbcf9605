/* Config loading for the daemon: error reporting, --check-config, and the
 * config -> capture mapping. */
#define LOG_PREFIX "conf: "
#include "server/opsconf.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf_keys.h"
#include "common/log.h"
#include "server/http/auth.h"
#include "server/capture/testsrc.h"

int vc_ops_load(const char *path, struct vc_conf **out)
{
	char err[8192];
	int r = vc_conf_load(path, out, err, sizeof(err));

	if (r < 0)
		for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n"))
			log_error("%s", line);
	return r;
}

int vc_ops_check_config(const char *path, FILE *out, FILE *err)
{
	char msg[8192];
	struct vc_conf *c = NULL;
	struct vc_auth *a = NULL;

	if (vc_conf_load(path, &c, msg, sizeof(msg)) < 0) {
		fputs(msg, err);
		return 1;
	}
	if (vc_auth_new(c, &a) < 0) { /* logged: a hash libcrypt refuses */
		vc_conf_free(c);
		return 1;
	}
	vc_auth_free(a);
	for (size_t i = 0; i < c->n_cams; i++) {
		const char *d = c->cams[i].device;
		/* a malformed test pattern would only retry forever at run time */
		char why[128];

		if (d && (!strcmp(d, "test") || !strncmp(d, "test:", 5)) &&
		    vc_testsrc_parse(d, &(struct vc_testsrc_opts){ 0 }, why, sizeof(why)) < 0) {
			fprintf(err,
				"%s:%d: [camera %s]: bad test pattern '%s': %s\n",
				path, c->cams[i].line, c->cams[i].name, d, why);
			vc_conf_free(c);
			return 1;
		}
	}
	vc_conf_print(c, out, 1);
	vc_conf_free(c);
	return 0;
}

int vc_ops_restart_keys(const struct vc_conf *a, const struct vc_conf *b, int with_listen,
			char *keys, size_t n)
{
	return vc_conf_restart_keys(a, b, with_listen, keys, n);
}

int vc_ops_read_file(const char *path, char **out)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return -EFBIG;
	}
	if (!(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return -ENOMEM;
	}
	size_t got = fread(buf, 1, (size_t)n, f);
	fclose(f);
	buf[got] = '\0';
	*out = buf;
	return 0;
}

/* A control line's value for c: an integer, a boolean word for booleans, or
 * a menu item's name (case-insensitive) for menus and integer menus. */
static int ctrl_value(const struct vc_ctrl *c, const char *text, int64_t *v)
{
	static const char *const yes[] = { "true", "on", "yes" }, *const no[] = { "false", "off", "no" };
	char *end;

	errno = 0;
	long long x = strtoll(text, &end, 0);
	if (*text && !*end && !errno) {
		*v = x;
		return 0;
	}
	if (c->type == V4L2_CTRL_TYPE_BOOLEAN)
		for (size_t i = 0; i < 3; i++)
			if (!strcasecmp(text, yes[i]) || !strcasecmp(text, no[i])) {
				*v = !strcasecmp(text, yes[i]);
				return 0;
			}
	for (size_t i = 0; i < c->n_items; i++)
		if (!strcasecmp(text, c->items[i].name)) {
			*v = c->items[i].index;
			return 0;
		}
	return -EINVAL;
}

int vc_ops_apply_ctrls(const struct vc_ctrls *cs, const char *cam, const struct vc_conf_ctrl *want,
		       size_t n, vc_ops_ctrl_setter set, void *o)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct vc_ctrl *c = vc_ctrls_find_key(cs, want[i].name);
		int64_t v, applied = 0;
		int e;

		for (size_t j = 0; !c && j < cs->n; j++) /* also the driver's own name */
			if (!strcasecmp(cs->v[j].name, want[i].name))
				c = &cs->v[j];
		if (!c) {
			log_error("[camera %s]: control '%s': no such control", cam, want[i].name);
			bad++;
			continue;
		}
		if (ctrl_value(c, want[i].value, &v) < 0) {
			log_error("[camera %s]: control %s = '%s': not a number%s", cam, c->key,
				  want[i].value, c->n_items ? " or menu item" : "");
			bad++;
			continue;
		}
		e = set(o, c->id, v, &applied);
		if (e < 0) {
			log_error("[camera %s]: control %s = %s: %s", cam, c->key, want[i].value,
				  e == -ERANGE ? "out of range" : e == -EACCES ? "read-only or inactive" :
				  strerror(-e));
			bad++;
			continue;
		}
		log_info("[camera %s]: control %s = %" PRId64, cam, c->key, applied);
	}
	return bad;
}
