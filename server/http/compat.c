/* Compatibility aliases: parse the foreign URL, set the query arguments the
 * vcapd handler understands, then call that handler directly, so behaviour
 * (negotiation, headers) is exactly the native endpoint's. The auth class is
 * the alias row's own (the gate ran before the handler); delegate() refuses
 * a target of another class, so an alias cannot drift from its target. */
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
	enum vc_http_class cls;

	if (vc_http_find(r->srv, path, &fn, &opaque, &cls) < 0)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no such path: %s", path);
	if (cls != r->cls) {
		log_error("%s delegates to %s of class %s, but was checked as %s", r->url, path,
			  vc_http_class_name(cls), vc_http_class_name(r->cls));
		return vc_http_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "alias class mismatch");
	}
	return fn(opaque, r);
}

/* "/?action=stream", "stream_1", "snapshot_0" (mjpg-streamer input index). */
static enum MHD_Result h_root(void *opaque, struct vc_http_req *r)
{
	struct compat *c = opaque;
	const char *action = vc_http_arg(r, "action");
	const char *target;
	size_t n;

	if (!action) /* the row needs it: "/" alone is the web page's */
		return vc_http_error(r, MHD_HTTP_BAD_REQUEST, "no action");
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
	/* "/" only with ?action=: without it "/" is the web page (webroot.c) */
	static const struct vc_http_route_def t[] = {
		{ "GET", "/", 0, VC_HTTP_VIEW, h_root, "action" },
		{ "GET", "/state", 0, VC_HTTP_STATUS, h_state },
	};

	the_compat = (struct compat){ http, cams, n_cams };
	return vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), &the_compat);
}
