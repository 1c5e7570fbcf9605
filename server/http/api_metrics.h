/* GET /metrics: the cameras, outputs and clients in the Prometheus text
 * exposition format (server/http/api.c routes it). Loop thread only. */
#ifndef VC_API_METRICS_H
#define VC_API_METRICS_H

#include "server/http/http.h"
#include "server/stream/stream.h"

/* Answers r with the metrics of every camera of s and, when loop is not
 * NULL, the loop's turn histogram (200, text/plain), or a 500 when out of
 * memory. */
struct vc_loop_stats;
enum MHD_Result vc_api_metrics(struct vc_streams *s, struct vc_http *http,
			       const struct vc_loop_stats *loop, struct vc_http_req *r);

#endif
