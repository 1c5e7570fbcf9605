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

/* Whether c lists mode m: its format, its size (any within a stepwise
 * range) and, when both are known, its interval. */
int vc_caps_has_mode(const struct vc_caps *c, const struct vc_mode *m);

/* vc_caps_take_answer's result: what it changed */
#define VC_CAPS_SIZE_TAKEN 0x1u   /* the asked size left its format's list */
#define VC_CAPS_IVAL_TAKEN 0x2u   /* the asked interval left its size's list */
#define VC_CAPS_IVAL_ADDED 0x4u   /* the interval the device runs took its place */

/* Learns from a device that answered a mode it lists (*asked) with another
 * (*got), as webcams do when a size needs a bandwidth they lack or their
 * clock cannot hit the listed rate: the size it would not give leaves the
 * list (never the last one), an interval it rounded is replaced by the one
 * it runs. Asked again, the list then says what the device gives, so a
 * mode policy does not switch to the same refusal over and over. Discrete
 * sizes of the same format only; 0 when nothing changed. */
unsigned vc_caps_take_answer(struct vc_caps *c, const struct vc_mode *asked,
			     const struct vc_mode *got);

#endif
