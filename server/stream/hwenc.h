/* Hardware JPEG and H.264 encoding for the fan-out (private to
 * server/stream/): an output whose plan is only "encode" (raw frame of the
 * camera's mode -> JPEG or H.264 at the same size, no scaling or rotation;
 * the encoder takes the camera's format as it is) hands its frames to an M2M
 * encoder session (server/encode/m2m_enc.h) instead of the worker pool, when
 * the camera's `encoder` setting picks one (common/m2m.h vc_m2m_pick_role:
 * auto = the first encoder of that codec that takes the camera's format,
 * cpu = never, a path = that node). H.264 sources, best first: passthrough
 * from an H.264 camera (output.c, never here), this, the software encoder
 * (common/pipeline.c). The H.264 session gets the output's bitrate= and gop=
 * (else the software encoder's defaults), joining clients ask it for a key
 * frame (hwenc_force_key), and an IDR it sends without SPS/PPS gets the
 * last ones it sent (h264_out.h h264_ps_complete).
 *
 * One session per output, opened at the output's first frame, restarted on
 * a mode change. When the device errors, hangs or vanishes, the session is
 * closed, the output goes back to the CPU encoder at once (the frame that
 * failed is encoded there; clients stay connected, at most the frames in
 * flight are lost), the fallback is logged once and counted, and the device
 * is left alone for HWENC_RETRY_S before an output tries it again (an
 * H.264 output whose CPU stream has MP4 clients stays on the CPU until they
 * leave: the device's SPS would end them). */
#ifndef VC_HWENC_H
#define VC_HWENC_H

#include "server/stream/stream_int.h"

#define HWENC_RETRY_S 30

/* Gives frame f (of the hub's target mode) to o's hardware encoder. Returns 1
 * when the hardware took it (the JPEG is published later, or the frame
 * dropped because the encoder is full: counted in o->busy_drops), 0 when the
 * CPU path must encode it. Loop thread. */
int hwenc_frame(struct output *o, struct vc_frame *f);

/* H.264: a client joined o: asks o's hardware encoder, if it has one, for a
 * key frame now (V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME; a device without it
 * is logged once at debug, the client then waits for the next IDR). */
void hwenc_force_key(struct output *o);

/* Closes o's session, if any (no callback follows). */
void hwenc_free(struct output *o);

/* The device path o encodes with, or NULL for the CPU. */
const char *hwenc_path(const struct output *o);

#endif
