/* Maps requests to endpoint classes and answers 401 for those the policy
 * refuses. The class table is by path prefix, so new routes under /api/ or
 * /stream inherit the right policy without touching this file. */
#define LOG_PREFIX "auth: "
#include "server/http/auth_http.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

static const struct {
	const char *prefix;
	int cls;
} classes[] = {
	{ "/stream", VC_CLASS_VIEW },   { "/snapshot", VC_CLASS_VIEW }, { "/raw", VC_CLASS_VIEW },
	{ "/api/", VC_CLASS_STATUS },   { "/api", VC_CLASS_STATUS },     { "/metrics", VC_CLASS_STATUS },
	{ "/state", VC_CLASS_STATUS },
};

int vc_auth_classify(const char *method, const char *url, const char *action)
{
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return VC_CLASS_CONTROL;
	if (action && (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0))
		return VC_CLASS_VIEW; /* mjpg-streamer's /?action=stream|snapshot */
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		size_t n = strlen(classes[i].prefix);
		if (strncmp(url, classes[i].prefix, n) == 0 &&
		    (url[n] == '\0' || url[n] == '/' || url[n] == '_' || classes[i].prefix[n - 1] == '/'))
			return classes[i].cls;
	}
	return -1;
}

int vc_auth_gate(void *opaque, struct vc_http_req *r, enum MHD_Result *res)
{
	struct vc_auth *a = *(struct vc_auth **)opaque;
	const char *user;
	char peer[64];

	if (!a)
		return 0;
	int cl = vc_auth_classify(r->method, r->url, vc_http_arg(r, "action"));
	if (cl < 0)
		return 0;
	if (vc_auth_check(a, (enum vc_auth_class)cl, vc_http_header(r, MHD_HTTP_HEADER_AUTHORIZATION),
			  vc_http_arg(r, "token"), time(NULL), &user) == 0)
		return 0;
	log_debug("%s %s from %s: 401", r->method, r->url, vc_http_peer(r, peer, sizeof(peer)));
	static const char body[] = "{\"error\":\"authentication required\",\"status\":401}\n";
	struct MHD_Response *resp = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body,
								    MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		*res = MHD_NO;
		return 1;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (vc_auth_policy(a, (enum vc_auth_class)cl) & VC_AUTH_BASIC) {
		char hdr[160];
		snprintf(hdr, sizeof(hdr), "Basic realm=\"%s\", charset=\"UTF-8\"", vc_auth_realm(a));
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, hdr);
	}
	*res = vc_http_queue(r, MHD_HTTP_UNAUTHORIZED, resp);
	return 1;
}
