/* Produces one output frame from one capture frame following a vc_plan:
 * decode -> convert/scale -> rotate -> encode, through common/convert,
 * common/transform and common/jpeg. A context per thread. */
#ifndef VC_STREAM_WORK_H
#define VC_STREAM_WORK_H

#include "common/frame.h"
#include "common/negotiate.h"

struct vc_swork;

struct vc_swork *vc_swork_new(void);
void vc_swork_free(struct vc_swork *w);

/* 1 when frame f can be sent as-is for output o: same format and size and,
 * for raw formats, no stride padding (clients get exact frame sizes). */
int vc_swork_sendable(const struct vc_frame *f, const struct vc_output *o);

/* Makes the output picture of `plan` from src into a new heap frame (*out,
 * refs = 1) carrying src's seq/timestamps. 0 or -errno. */
int vc_swork_run(struct vc_swork *w, const struct vc_plan *plan, const struct vc_frame *src,
		 struct vc_frame **out);

#endif
