/* What a capture source can deliver, as plain data: formats (native or
 * emulated by libv4l2), frame sizes and frame intervals. Filled by the device
 * layer from ENUM_FMT / ENUM_FRAMESIZES / ENUM_FRAMEINTERVALS (or by the
 * test-pattern source), read by negotiation and the JSON API. */
#ifndef VC_CAPS_H
#define VC_CAPS_H

#include <stddef.h>
#include <stdint.h>

#define VC_CAPS_MAX_IVALS 24

struct vc_fract {
	uint32_t num, den; /* a frame interval in seconds: num/den (1/30 = 30 fps) */
};

struct vc_caps_size {
	uint32_t width, height;
	size_t n_ivals;  /* discrete intervals, fastest first; 0 = unknown (any) */
	struct vc_fract ival[VC_CAPS_MAX_IVALS];
};

struct vc_caps_fmt {
	uint32_t fourcc;
	uint8_t emulated;    /* produced by libv4l2 conversion, costs a copy */
	uint8_t stepwise;    /* sizes are a range, see min/max/step */
	uint32_t min_w, max_w, step_w, min_h, max_h, step_h; /* stepwise/continuous */
	size_t n_sizes;      /* discrete sizes (or a few representative ones when stepwise) */
	struct vc_caps_size *sizes;
};

/* A capture mode: what a device is asked to deliver. */
struct vc_mode {
	uint32_t fourcc;
	uint32_t width, height;
	struct vc_fract ival; /* 0/0 = driver default */
};

struct vc_caps {
	size_t n_fmts;
	struct vc_caps_fmt *fmts;
};

/* Frees the arrays inside *c (not c itself) and zeroes it. */
void vc_caps_clear(struct vc_caps *c);

/* The format entry for a fourcc, or NULL. */
const struct vc_caps_fmt *vc_caps_find(const struct vc_caps *c, uint32_t fourcc);

#endif
