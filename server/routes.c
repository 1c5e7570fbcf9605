/* Assembles the route table from the modules that own the handlers and
 * prints it (vcapd --routes). Order matters: the first matching row wins,
 * and the web page's "/" prefix row takes whatever no other row does. */
#include "server/routes.h"

#include "server/http/api.h"
#include "server/http/compat.h"
#include "server/http/http.h"
#include "server/http/webroot.h"
#include "server/stream/stream.h"

int vc_routes_add(struct vc_http *http, struct vc_streams *s, struct vc_api *api,
		  struct vc_cam *const *cams, const size_t *n_cams, const char *web_root)
{
	int e;

	if ((e = vc_streams_routes(s, http)) < 0 || (e = vc_api_routes(api, http)) < 0 ||
	    (e = vc_compat_routes(http, cams, n_cams)) < 0)
		return e;
	/* last: the web page takes every other path */
	return vc_webroot_routes(http, web_root);
}

void vc_routes_print(const struct vc_http *http, FILE *f)
{
	struct vc_http_route_info ri;

	fprintf(f, "# method path match arg class\n");
	for (size_t i = 0; vc_http_route_at(http, i, &ri) == 0; i++)
		fprintf(f, "%s %s %s %s %s\n", ri.method, ri.path, ri.prefix ? "prefix" : "exact",
			ri.arg ? ri.arg : "-", vc_http_class_name(ri.cls));
}
