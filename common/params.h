/* URL query string -> what a client asked for (struct vc_request plus the
 * serving options that are not part of negotiation: camera, max_age_ms).
 * Shared by /stream, /snapshot, /raw, /raw/stream and /api/try.
 *
 * Parameters (names case-insensitive, values percent-decoded, '+' = space):
 *   cam=ID          which camera (1..63 printable bytes); default: the first
 *   format=NAME     mjpeg | jpeg | h264 (also h.264, avc: fourcc
 *                   V4L2_PIX_FMT_H264) | any name or fourcc of the format
 *                   table ("YUYV", "yuyv", "RGB24", "RGB3", "NV12", ...)
 *   width=N height=N  0..16384 (0 = device's; one of them 0 = keep aspect)
 *   size=WxH        both at once (1..16384 each); must agree with width/height
 *                   when those are also given
 *   fps=N           0..1000 (per-client maximum rate; 0 = as fast as the device)
 *   quality=N       JPEG quality: integers outside 1..100 are clamped and
 *                   flagged (VC_PARAMS_QUALITY_CLAMPED); non-numbers are errors
 *   rotate=N        any integer degrees, taken modulo 360 (negotiation then
 *                   rounds to a multiple of 90 and says so)
 *   flip=h|v|hv|vh|none|0
 *   bitrate=N       H.264 target rate: bits/s, or with k / M (10k..100M)
 *   gop=N           H.264 frames from one IDR to the next, 1..1000
 *   max_age_ms=N    0..86400000: a snapshot may be this old (0 = fresh)
 *   placeholder=1|0 (also yes/no, true/false, on/off; bare = 1): a snapshot
 *                   of an absent camera is the placeholder picture, not 503
 * A parameter given twice: the last one counts. Unknown parameters (and
 * browsers' cache busters such as "_=1700000000") are IGNORED, so URLs with
 * extra tracking/bookkeeping parameters keep working; they are counted and
 * the first one's name is kept so /api/try can show what was ignored. */
#ifndef VC_PARAMS_H
#define VC_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "common/negotiate.h"

#define VC_PARAMS_MAX_QUERY 4096 /* longer query strings are rejected */
#define VC_PARAMS_MAX_VALUE 255  /* longer decoded values are rejected */

enum vc_params_flag {
	VC_PARAMS_QUALITY_CLAMPED = 1u << 0, /* quality was outside 1..100 */
};

/* Bits of vc_params.given: which parameters appeared. */
enum vc_params_given {
	VC_PARAM_CAM = 1u << 0,
	VC_PARAM_FORMAT = 1u << 1,
	VC_PARAM_WIDTH = 1u << 2,
	VC_PARAM_HEIGHT = 1u << 3,
	VC_PARAM_FPS = 1u << 4,
	VC_PARAM_QUALITY = 1u << 5,
	VC_PARAM_ROTATE = 1u << 6,
	VC_PARAM_FLIP = 1u << 7,
	VC_PARAM_MAX_AGE = 1u << 8,
	VC_PARAM_SIZE = 1u << 9,
	VC_PARAM_PLACEHOLDER = 1u << 10,
	VC_PARAM_BITRATE = 1u << 11,
	VC_PARAM_GOP = 1u << 12,
};

struct vc_params {
	struct vc_request req; /* zero fields = not given */
	char cam[64];          /* "" = default camera */
	uint32_t max_age_ms;
	int placeholder;       /* placeholder=1 */
	unsigned given;        /* enum vc_params_given bits */
	unsigned flags;        /* enum vc_params_flag bits */
	unsigned n_unknown;    /* parameters ignored */
	char unknown[32];      /* name of the first one ignored (truncated), "" if none */
};

/* Parses query (the part after '?'; a leading '?' is skipped; NULL or "" =
 * nothing asked). Returns 0 and fills *p (entirely: fields not given are
 * zero), or -EINVAL with a one-line message in err (for an HTTP 400 body;
 * it names the parameter and quotes the bad value, escaped to printable
 * ASCII) and *p zeroed. err may be NULL; errlen >= 128 holds any message. */
int vc_params_parse(const char *query, struct vc_params *p, char *err, size_t errlen);

/* The camera's defaults for what the URL left out: quality (when def's is
 * set), rotate, flip (config keys or command-line flags), and whether a
 * snapshot of an absent camera is the placeholder picture. */
void vc_params_defaults(struct vc_params *p, const struct vc_request *def, int placeholder);

#endif
