/* Config loading for the daemon: error reporting, --check-config, and the
 * config -> capture mapping. */
#define LOG_PREFIX "conf: "
#include "server/opsconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/auth.h"

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
	vc_conf_print(c, out, 1);
	vc_conf_free(c);
	return 0;
}

size_t vc_ops_cam_configs(const struct vc_conf *c, struct vc_cam_config *cc, size_t max,
			  int default_idle_ms)
{
	size_t n = 0;

	for (; n < c->n_cams && n < max; n++) {
		const struct vc_conf_cam *k = &c->cams[n];
		cc[n] = (struct vc_cam_config){
			.id = k->name,
			.path = k->device,
			.preferred = k->mode,
			.input = k->input,
			.n_buffers = k->buffers,
			.idle_stop_ms = k->idle_stop_ms == -2 ? default_idle_ms : k->idle_stop_ms,
			.stall_timeout_ms = k->stall_timeout_ms,
		};
		if (k->n_ctrls)
			log_warn("[camera %s]: 'control' lines are parsed but not applied yet", k->name);
	}
	if (c->n_cams > max)
		log_warn("%zu cameras configured, serving the first %zu", c->n_cams, max);
	return n;
}

int vc_ops_cams_equal(const struct vc_conf *a, const struct vc_conf *b)
{
	if (a->n_cams != b->n_cams)
		return 0;
	for (size_t i = 0; i < a->n_cams; i++)
		if (!vc_conf_cam_equal(&a->cams[i], &b->cams[i]))
			return 0;
	return 1;
}

int vc_ops_listen_equal(const struct vc_conf *a, const struct vc_conf *b)
{
	if (a->n_listen != b->n_listen)
		return 0;
	for (size_t i = 0; i < a->n_listen; i++)
		if (strcmp(a->listen[i], b->listen[i]) != 0)
			return 0;
	return 1;
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
