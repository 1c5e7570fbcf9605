/* Compatibility aliases: parse the foreign URL, set the query arguments the
 * vcapd handler understands, then call that handler directly, so behaviour
 * (negotiation, auth class, headers) is exactly the native endpoint's. */
#define LOG_PREFIX "compat: "
#include "server/http/compat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/capture/capture.h"
#include "server/http/http.h"

struct compat {
	struct vc_http *http;
	struct vc_cam *const *cams;
	const size_t *n_cams;
};

/* One per process: the routes keep a pointer to it for the server's life. */
static struct compat the_compat;

static enum MHD_Result delegate(struct vc_http_req *r, const char *path)
{
	vc_http_fn fn;
	void *opaque;

	if (vc_http_find(r->srv, path, &fn, &opaque) < 0)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no such path: %s", path);
	return fn(opaque, r);
}

/* "/?action=stream", "stream_1", "snapshot_0" (mjpg-streamer input index). */
static enum MHD_Result h_root(void *opaque, struct vc_http_req *r)
{
	struct compat *c = opaque;
	const char *action = vc_http_arg(r, "action");
	const char *target;
	size_t n;

	if (!action) /* the web page (server/http/webroot.c) */
		return delegate(r, "/index.html");
	if (strncmp(action, "stream", 6) == 0) {
		target = "/stream";
		n = 6;
	} else if (strncmp(action, "snapshot", 8) == 0) {
		target = "/snapshot";
		n = 8;
	} else {
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "unknown action '%s'", action);
	}
	if (r->calls == 1 && action[n] == '_') {
		char *end;
		long idx = strtol(action + n + 1, &end, 10);
		if (*end || idx < 0 || (size_t)idx >= *c->n_cams)
			return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no camera %s", action + n + 1);
		if (!vc_http_arg(r, "cam"))
			MHD_set_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "cam",
						 vc_cam_id(c->cams[idx]));
	} else if (action[n] != '\0' && action[n] != '_') {
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "unknown action '%s'", action);
	}
	return delegate(r, target);
}

/* µStreamer's /state: our status JSON. */
static enum MHD_Result h_state(void *opaque, struct vc_http_req *r)
{
	(void)opaque;
	return delegate(r, "/api/status");
}

int vc_compat_routes(struct vc_http *http, struct vc_cam *const *cams, const size_t *n_cams)
{
	the_compat = (struct compat){ http, cams, n_cams };
	int ret = vc_http_route(http, "GET", "/", 0, h_root, &the_compat);
	ret |= vc_http_route(http, "GET", "/state", 0, h_state, &the_compat);
	return ret ? -ENOSPC : 0;
}
