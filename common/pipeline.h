/* Executes a negotiated plan (negotiate.h) on captured frames: JPEG decode
 * (with DCT scaling) -> convert/scale -> rotate/flip -> JPEG encode, or a
 * lossless JPEG transform, or passthrough. One pipeline per worker thread per
 * output: it owns libjpeg-turbo/converter contexts and scratch pictures that
 * are reused from frame to frame. Not thread-safe; no I/O. */
#ifndef VC_PIPELINE_H
#define VC_PIPELINE_H

#include "common/caps.h"
#include "common/frame.h"
#include "common/negotiate.h"

struct vc_pipeline;

/* A pipeline producing plan->out from frames of `mode`. Both are copied.
 * NULL on ENOMEM or a plan that does not belong to the mode (steps 0,
 * unknown formats). */
struct vc_pipeline *vc_pipeline_new(const struct vc_mode *mode, const struct vc_plan *plan);
void vc_pipeline_free(struct vc_pipeline *p); /* NULL is a no-op */

/* Produces the output for one captured frame. On success *out is a new
 * reference the caller unrefs: `in` itself (ref taken) for passthrough, else
 * a new heap frame (raw: exact geometry of the output format, minimum
 * strides; JPEG: fmt MJPEG, bytesused[0] = JPEG length, geom.width/height =
 * the real size, which for a lossless transform may be a few pixels smaller
 * than the plan predicted). seq and timestamps are copied from `in`; a raw
 * output from a raw input keeps its field and colorimetry (conversions keep
 * the device's matrix and range), a JPEG is progressive (V4L2_FIELD_NONE,
 * colorimetry zero = JPEG's own). Passthrough of a raw frame with padded
 * strides returns a packed copy.
 * `in` is only read. Returns 0; -ESTALE when `in` no longer matches the
 * mode (format or size changed: re-plan; for JPEG passthrough the size is
 * in->geom's, the capture layer having validated the JPEG, otherwise the
 * size in the JPEG header); H.264 plans: a heap frame of vc_h264_fmt()
 * (Annex-B, one access unit, `key` set for an IDR), -EAGAIN when the
 * encoder gave nothing for this picture; -EBADMSG for a corrupt JPEG or a
 * short raw frame; -ENOMEM; other negative errnos from the converters. */
int vc_pipeline_run(struct vc_pipeline *p, const struct vc_frame *in, struct vc_frame **out);

/* H.264 plans (out.fourcc V4L2_PIX_FMT_H264): the next picture is encoded
 * as an IDR (a client joins). Any thread, also while a run is under way on
 * another (the next run that encodes takes it). */
void vc_pipeline_force_key(struct vc_pipeline *p);

/* 1 when vc_pipeline_run with `plan` would hand back `in` itself: a
 * passthrough of a compressed frame, or of a raw one without stride padding
 * (a padded one is repacked, so clients get exact frame sizes). Pure: the
 * serving layer asks it on its own thread to skip the worker. */
int vc_pipeline_zero_copy(const struct vc_plan *plan, const struct vc_frame *in);

#endif
