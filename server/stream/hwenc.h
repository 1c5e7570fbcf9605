/* Hardware JPEG encoding for the fan-out (private to server/stream/): an
 * output whose plan is only "encode" (raw frame of the camera's mode -> JPEG
 * at the same size, no conversion, scaling or rotation) hands its frames to
 * an M2M JPEG encoder session (server/encode/m2m_enc.h) instead of the worker
 * pool, when the camera's `encoder` setting picks one (common/m2m.h
 * vc_m2m_pick: auto = the first JPEG encoder that takes the camera's format,
 * cpu = never, a path = that node).
 *
 * One session per output, opened at the output's first frame, restarted on
 * a mode change. When the device errors, hangs or vanishes, the session is
 * closed, the output goes back to the CPU encoder at once (the frame that
 * failed is encoded there; clients stay connected, at most the frames in
 * flight are lost), the fallback is logged once and counted, and the device
 * is left alone for HWENC_RETRY_S before an output tries it again. */
#ifndef VC_HWENC_H
#define VC_HWENC_H

#include "server/stream/stream_int.h"

#define HWENC_RETRY_S 30

/* Gives frame f (of the hub's target mode) to o's hardware encoder. Returns 1
 * when the hardware took it (the JPEG is published later, or the frame
 * dropped because the encoder is full: counted in o->busy_drops), 0 when the
 * CPU path must encode it. Loop thread. */
int hwenc_frame(struct output *o, struct vc_frame *f);

/* Closes o's session, if any (no callback follows). */
void hwenc_free(struct output *o);

/* The device path o encodes with, or NULL for the CPU. */
const char *hwenc_path(const struct output *o);

#endif
