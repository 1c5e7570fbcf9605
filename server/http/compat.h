/* URLs other streamers made familiar, mapped onto vcapd's own endpoints so
 * OctoPrint, Mainsail/crowsnest and Home Assistant configs work by changing
 * the host only: mjpg-streamer's /?action=stream|snapshot (with _N for the
 * N-th camera, or &cam=), and µStreamer's /state (its /stream and /snapshot
 * are vcapd's own). Register after the stream and API routes. */
#ifndef VC_COMPAT_H
#define VC_COMPAT_H

#include <stddef.h>

struct vc_http;
struct vc_cam;

/* cams[0..n) give the ids for _N suffixes; the array must outlive http. */
int vc_compat_routes(struct vc_http *http, struct vc_cam *const *cams, const size_t *n_cams);

#endif
