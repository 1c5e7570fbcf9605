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
	/* H.264 (fourcc V4L2_PIX_FMT_H264, a stream format outside the pixel
	 * format table): 0 = the encoder's default */
	uint32_t bitrate;     /* bits per second */
	uint16_t gop;         /* frames from one IDR to the next */
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
	/* H.264 outputs only (0 for every other format): the encoder's
	 * settings and the rate it encodes at are part of what is shared */
	uint32_t bitrate;       /* as asked (0 = default) */
	uint16_t gop;
	uint32_t fps;           /* = plan.fps */
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
 * compressed). An H.264 request (fourcc V4L2_PIX_FMT_H264) is planned as
 * I420 of the same size, rotation and rate, then VC_STEP_ENCODE (by the
 * H.264 encoder), out.fourcc V4L2_PIX_FMT_H264, when the mode is raw or
 * JPEG; on an H.264 mode (a camera delivering H.264) it is passthrough at
 * the mode's size and rate (out.fps, bitrate, gop 0: nothing encodes), and
 * every other request on such a mode is -EINVAL (no H.264 decoder).
 * Never upscales: a size larger than the mode's is clamped to it.
 * Returns 0, or -EINVAL for a request that cannot be served at all (unknown
 * fourcc, Bayer as output, ...), with *plan untouched. */
int vc_negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		      struct vc_plan *plan);
/* How many times vc_negotiate_plan was called so far (by anyone: tests take
 * the difference around one request). */
unsigned long vc_negotiate_plans(void);

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

/* ---- one camera, many kinds of clients (negotiate.c, negotiate_policy.c) ----
 *
 * The device mode is one for all clients of a camera; these functions decide
 * it so that the same URL gets the same picture whoever else is watching,
 * a one-shot request never interrupts the viewers, and a mode kept for
 * clients who left is given up. The timing side (at most one switch per
 * VC_NEGOTIATE_HOLD_MS, re-choosing after a client leaves) is the caller's. */

#define VC_NEGOTIATE_FPS_CAP 30   /* default rate cap for requests without fps */
#define VC_NEGOTIATE_HOLD_MS 2000 /* minimum time between two mode switches */

/* The camera's default mode: what a request that names no size, format or
 * rate is planned against, whoever else is connected. `configured` (may be
 * NULL; zero fields = not configured: config keys, command-line flags)
 * comes first; what it leaves open (or names but the caps lack) follows the
 * rule: native formats over emulated ones; sizes up to 1920x1080 (a format
 * whose sizes are all larger offers its smallest; a range without listed
 * sizes its largest up to 1920x1080); among these, the rate each runs at
 * capped to `fps_cap` (0 = VC_NEGOTIATE_FPS_CAP; a configured rate replaces
 * the cap) must be at least 4/5 of the best such rate, then the most
 * pixels, then a compressed format (passthrough), then caps order. So a
 * YUYV-only webcam offering 1920x1080 at 5 fps and 640x480 at 30 defaults
 * to 640x480 at 30, an MJPEG one to 1920x1080 at 30. The interval is the
 * slowest listed that reaches the cap, else the fastest. H.264 (served by
 * passthrough to H.264 clients only) is the default only of a camera with
 * nothing else; configured H.264 on a camera with other formats gives its
 * size and rate in another format.
 * Returns 0 and *out, -ENOENT when caps list no usable format. */
int vc_negotiate_default(const struct vc_caps *caps, const struct vc_mode *configured,
			 uint32_t fps_cap, struct vc_mode *out);

/* A request with what it leaves open filled from the default mode `def`
 * (so it means the same whatever the device streams now): no size = def's
 * size (turned for rotate 90/270); one side = the other from def's aspect
 * ratio; no rate = want_fps (the configured rate or the cap). The format
 * and the rest are kept. */
void vc_negotiate_resolve(const struct vc_mode *def, uint32_t want_fps,
			  const struct vc_request *req, struct vc_request *out);

/* Why the device mode is what it is (for the log and /api/status). */
enum vc_mode_why {
	VC_WHY_DEFAULT = 0, /* no client: the camera's default mode */
	VC_WHY_STREAMS,     /* the best mode for the stream clients */
	VC_WHY_KEPT,        /* streams: the current mode serves them about as well
			     * as the best (hysteresis: no restart for little) */
	VC_WHY_ONESHOT,     /* no stream watched: what the waiting snapshot/raw
			     * requests asked for */
};
const char *vc_mode_why_str(enum vc_mode_why why);

/* Chooses the device mode for a camera's clients, requests resolved
 * (vc_negotiate_resolve). Long-lived clients (`streams`: MJPEG and raw
 * streams) steer; one-shot requests (`oneshots`: snapshots, /raw) steer
 * only when no stream is watched (and then only when `cur` cannot give them
 * the size they ask for), and are otherwise served from the streams' mode. With neither, the default. `cur` (may be NULL) is the mode
 * the device streams now: kept for the streams only while it serves them
 * about as well as the best (vc_negotiate_mode's hysteresis), never for a
 * faster rate than theirs alone would get. `def` is from
 * vc_negotiate_default. Returns 0 with *out and *why, -ENOENT when the
 * caps list no usable format. */
int vc_negotiate_choose(const struct vc_caps *caps, const struct vc_mode *def,
			const struct vc_mode *cur, const struct vc_request *streams,
			size_t n_streams, const struct vc_request *oneshots, size_t n_oneshots,
			struct vc_mode *out, enum vc_mode_why *why);

#endif
