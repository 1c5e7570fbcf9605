/* Per-client format negotiation, answered the way a V4L2 driver answers
 * TRY_FMT: a request (format, size, rate, quality, rotation) goes in, the
 * closest thing the server can deliver comes out, with the steps needed to
 * produce it from the device's current mode. A second function chooses the
 * device mode that serves a set of active requests best, with hysteresis.
 * Pure code: no I/O, no event loop; unit-tested with tables.
 *
 * CONTRACT between negotiation and the serving layer: extend it, do not
 * break it. */
#ifndef VC_NEGOTIATE_H
#define VC_NEGOTIATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/caps.h"
#include "common/fmt.h"

/* What one client asked for. Zero means "don't care" for every field. */
struct vc_request {
	uint32_t fourcc;      /* V4L2 fourcc (MJPEG/JPEG = compressed); 0 = endpoint default */
	uint32_t width, height; /* 0 = device's; one of them 0 = keep aspect ratio */
	uint32_t fps;         /* per-client maximum rate; 0 = as fast as the device */
	uint8_t quality;      /* JPEG quality 1..100; 0 = default (80; a JPEG camera's
			       * own frames pass through untouched) */
	uint16_t rotate;      /* 0, 90, 180, 270 */
	uint8_t flip;         /* VC_FLIP_H | VC_FLIP_V */
};

#define VC_FLIP_H 1u
#define VC_FLIP_V 2u

/* What a client gets: the key by which outputs are shared. Two clients whose
 * vc_output compare equal (vc_output_equal) are served by the same encode. */
struct vc_output {
	uint32_t fourcc;        /* delivered format (V4L2_PIX_FMT_MJPEG for JPEG streams) */
	uint32_t width, height; /* delivered size, after rotation */
	uint8_t quality;        /* 0 when no encode happens (passthrough, raw) */
	uint16_t rotate;
	uint8_t flip;
};

/* Steps from a captured frame to the output, in this order. */
enum vc_step {
	VC_STEP_PASSTHROUGH = 1u << 0, /* bytes sent untouched (zero-copy) */
	VC_STEP_DECODE = 1u << 1,      /* JPEG -> raw (maybe scaled by decode_denom) */
	VC_STEP_CONVERT = 1u << 2,     /* raw -> other raw format */
	VC_STEP_SCALE = 1u << 3,       /* raw resize */
	VC_STEP_ROTATE = 1u << 4,      /* raw rotate/flip */
	VC_STEP_ENCODE = 1u << 5,      /* raw -> JPEG */
	VC_STEP_JPEG_XFORM = 1u << 6,  /* lossless JPEG rotate/flip, no re-encode */
};

/* Which request fields the answer changed (like TRY_FMT adjusting). */
enum vc_adjust {
	VC_ADJ_FORMAT = 1u << 0,  /* asked format not deliverable; another chosen */
	VC_ADJ_SIZE = 1u << 1,    /* size clamped (never upscaled) or aligned */
	VC_ADJ_FPS = 1u << 2,     /* asked rate above what the device gives */
	VC_ADJ_QUALITY = 1u << 3, /* quality clamped into 1..100 */
	VC_ADJ_ROTATE = 1u << 4,  /* rotation not a multiple of 90 -> nearest */
};

struct vc_plan {
	struct vc_output out;
	unsigned steps;       /* enum vc_step bits; 0 is never a valid plan */
	unsigned adjusted;    /* enum vc_adjust bits */
	uint32_t fps;         /* delivered maximum rate (<= device rate) */
	uint8_t decode_denom; /* JPEG decode scale 1, 2, 4 or 8 (VC_STEP_DECODE only) */
};

/* Plans one request against the device's current mode (mode->fourcc may be
 * compressed). Never upscales: a size larger than the mode's is clamped to it.
 * Returns 0, or -EINVAL for a request that cannot be served at all (unknown
 * fourcc, Bayer as output, ...), with *plan untouched. */
int vc_negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		      struct vc_plan *plan);

/* Chooses the device mode for the active requests: one a request can take
 * natively (passthrough) when possible, else the smallest mode that serves
 * every request without upscaling, preferring native formats over emulated
 * ones and cheap conversions over costly ones. `cur` (may be NULL) is the mode
 * now streaming: it is kept unless the new one is clearly better (hysteresis),
 * so streams are not restarted for nothing. `preferred` (may be NULL) is the
 * configured mode, used when nobody asks for anything specific (its rate is
 * what requests without fps want). out->ival is the interval to ask the
 * device for, taken from the caps; 0/0 only when the caps list no rate for
 * the chosen format (the driver keeps its own then). Any number of requests
 * count (equal ones weigh by their number); beyond VC_NEGOTIATE_DISTINCT
 * different ones, the rest are served by conversion but do not steer.
 * Returns 0 and *out, or -ENOENT when caps lists no usable format. */
#define VC_NEGOTIATE_DISTINCT 64
int vc_negotiate_mode(const struct vc_caps *caps, const struct vc_mode *cur,
		      const struct vc_mode *preferred, const struct vc_request *reqs,
		      size_t n_reqs, struct vc_mode *out);

/* Whether two outputs can share one conversion/encode. */
int vc_output_equal(const struct vc_output *a, const struct vc_output *b);

/* Human-readable step list ("passthrough", "decode/2+convert+encode"); buf of
 * at least 96 bytes; returns buf. */
const char *vc_steps_str(unsigned steps, uint8_t decode_denom, char *buf, size_t len);

#endif
