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
 * converter can write from I420. */
int testsrc_producible(const struct vc_fmt *f);

/* TRY_FMT semantics: never fails, adjusts to the nearest supported mode. */
void testsrc_adjust(struct vc_mode *m);

/* The source format of mode m (a producible fourcc): 0 or -EINVAL. */
int testsrc_make_format(const struct vc_mode *m, struct vc_src_format *out);

#endif
