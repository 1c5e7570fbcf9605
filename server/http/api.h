/* The JSON API and Prometheus metrics: GET /api/cams, /api/cams/<id>,
 * /api/try, /api/status and /metrics. Read-only views over the cameras
 * (server/capture/capture.h) and the fan-out (server/stream/stream.h). Loop thread only. */
#ifndef VC_API_H
#define VC_API_H

#include "server/http/http.h"
#include "server/stream/stream.h"

struct vc_api;

int vc_api_new(struct vc_streams *s, struct vc_http *http, struct vc_api **out);
void vc_api_free(struct vc_api *a); /* NULL is a no-op */

/* The M2M device list /api/status shows (owned by the caller, e.g. the
 * camera set: vc_camset_m2m), and each camera's encoder is picked from. */
struct vc_m2m_list;
void vc_api_set_m2m(struct vc_api *a, const struct vc_m2m_list *l);

/* The loop's turn statistics /metrics shows (server/loop.h); NULL or never
 * set: not shown. */
struct vc_loop_stats;
void vc_api_set_loop_stats(struct vc_api *a, const struct vc_loop_stats *st);

/* Registers the API routes on http. */
int vc_api_routes(struct vc_api *a, struct vc_http *http);

#endif
