/* PUT /api/cams/<id>/signal: the TV standard or the HDMI DV timings of a
 * V4L2 camera's current input, chosen over HTTP (server/http/api.c routes it). */
#ifndef VC_API_SIGNAL_H
#define VC_API_SIGNAL_H

#include "server/capture/capture.h"
#include "server/http/http.h"

/* Body {"std": "NTSC"} and/or {"dv_timings": "1280x720p60"}: each is checked
 * against what the current input offers (400 otherwise), then set while the
 * stream is stopped for a moment, kept across reopens like the config keys
 * of the same names; clients stay connected and the device mode follows.
 * 202 with what was chosen; 503 (Retry-After) while the camera has no open
 * device: absent, or reopening after a signal change. */
enum MHD_Result vc_api_put_signal(struct vc_cam *cam, struct vc_http_req *r);

#endif
