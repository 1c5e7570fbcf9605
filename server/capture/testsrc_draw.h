/* Drawing into an I420 picture, BT.601 limited range: the test pattern's
 * moving colour bars and its text (a 5x7 font of the digits, upper-case
 * letters (lower case drawn as upper) and ": . , - _ / ( ) = !").
 * Pure functions of their arguments, no state: server/capture/testsrc.c draws
 * each frame with them; anything that needs a generated picture may too. */
#ifndef VC_TESTSRC_DRAW_H
#define VC_TESTSRC_DRAW_H

#include <stdint.h>

#include "common/caps.h"

/* Three planes of w x h luma and cw x ch chroma samples (cw, ch: w, h
 * halved, rounded up), each with its stride in bytes. */
struct vc_i420_pic {
	uint8_t *p[3];
	uint32_t stride[3];
	uint32_t w, h, cw, ch;
};

/* A black box with white text at (x0, y0) in luma pixels, each font pixel
 * s x s; clipped at the picture's edges. Characters without a glyph leave
 * a blank cell. */
void vc_testsrc_draw_text(const struct vc_i420_pic *pc, uint32_t x0, uint32_t y0, unsigned s,
			  const char *txt);

/* Frame seq of a stream with interval ival: the bars move by a fixed number
 * of pixels per frame, the text shows seq and the stream time seq * ival
 * (not the wall clock: a frame must depend on its number only). */
void vc_testsrc_draw_frame(const struct vc_i420_pic *pc, uint64_t seq, struct vc_fract ival);

/* Adds noise to the luma of a drawn frame: -16..15 per pixel, from a
 * generator seeded by seq (the same frame gets the same noise), fresh
 * every frame, so no block can be predicted from the frame before. */
void vc_testsrc_draw_noise(const struct vc_i420_pic *pc, uint64_t seq);

#endif
