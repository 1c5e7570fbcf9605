/* Shared by the test pattern's files: server/capture/testsrc.c (the source's
 * ops and render-ahead) and testsrc_mode.c (modes and path options). Not
 * for other modules: they use testsrc.h. */
#ifndef VC_TESTSRC_INT_H
#define VC_TESTSRC_INT_H

#include "common/caps.h"
#include "common/fmt.h"
#include "server/capture/source.h"

#define MIN_DIM 16
#define MAX_DIM 4096

/* The format every frame is drawn in first. */
const struct vc_fmt *testsrc_i420(void);

/* A format the source can produce: JPEG through the encoder, raw rows the
 * converter can write from I420, H.264 (vc_h264_fmt()) when h264 is set
 * (the path asked for it). */
int testsrc_producible(const struct vc_fmt *f, int h264);

/* TRY_FMT semantics: never fails, adjusts to the nearest supported mode
 * (H.264 only when h264 is set). */
void testsrc_adjust(struct vc_mode *m, int h264);

/* ---- the H.264 mode (testsrc_h264.c) ---- */

struct testsrc_h264;

/* Frames from one IDR to the next: one second worth at interval ival. */
uint32_t testsrc_h264_gop(struct vc_fract ival);

/* An encoder state for mode m (fourcc H.264); ps_once: SPS/PPS only with
 * frame 0's IDR; bitrate: the encoder's target (0: its default). 0 or
 * -ENOMEM. */
int testsrc_h264_new(const struct vc_mode *m, int ps_once, uint32_t bitrate,
		     struct testsrc_h264 **out);
void testsrc_h264_free(struct testsrc_h264 *h); /* NULL is a no-op */

/* Frame seq as Annex-B into dst (cap bytes; *used its length, *key set on
 * an IDR), drawn in master (I420 laid out by mg; still: frame 0's
 * picture). Frames of seq's GOP before it that this state has not encoded
 * are encoded and dropped first. 0, -ENOSPC, -ENOMEM, -EIO, -EINVAL. */
int testsrc_h264_render(struct testsrc_h264 *h, uint8_t *master, const struct vc_geom *mg,
			uint64_t seq, int still, uint8_t *dst, size_t cap, size_t *used, int *key);

/* The source format of mode m (a producible fourcc): 0 or -EINVAL. */
int testsrc_make_format(const struct vc_mode *m, struct vc_src_format *out);

#endif
