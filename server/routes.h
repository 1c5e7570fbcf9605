/* The daemon's whole route table, in the order requests try it: stream
 * endpoints, API, compatibility aliases, then the web page as the fallback.
 * The daemon, `vcapd --routes` and the tests build it with the same call, so
 * a route added to any module shows up in all three. */
#ifndef VC_ROUTES_H
#define VC_ROUTES_H

#include <stddef.h>
#include <stdio.h>

struct vc_api;
struct vc_cam;
struct vc_http;
struct vc_streams;

/* Registers every route on http. s, api and cams are only stored as the
 * handlers' context: a table built to be listed (no request is served) may
 * pass NULL for them. web_root: as vc_webroot_routes. 0 or -errno (a route
 * refused: see vc_http_route). */
int vc_routes_add(struct vc_http *http, struct vc_streams *s, struct vc_api *api,
		  struct vc_cam *const *cams, const size_t *n_cams, const char *web_root);

/* Writes one line per route, "METHOD PATH MATCH ARG CLASS" (MATCH "exact" or
 * "prefix", ARG the query argument the row needs or "-"), after a "#" header
 * line: the input of tests/integ/http_auth_routes.sh. */
void vc_routes_print(const struct vc_http *http, FILE *f);

#endif
