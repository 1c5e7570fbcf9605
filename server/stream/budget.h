/* Private to server/stream/: the memory budget of the fan-out (issue 14).
 * Every distinct picture a client asks for becomes an output holding its own
 * frames and pipeline scratch, so anonymous clients could make the server
 * hold gigabytes. Three limits, checked before a request gets an output:
 * the largest size a client may ask for (max_size, default the camera's
 * largest native mode, of a size range its largest listed size; larger
 * requests are clamped to it like any size beyond the device's), the distinct outputs per camera (max_outputs, 503),
 * and the bytes of frames, converter scratch, capture copies, kept H.264 GOPs
 * and stream parts held for clients (frame_memory, 503:
 * counted as allocated, common/memstat.h, plus an estimate for each output
 * that has not allocated yet; hold.c keeps the parts within it). Kept apart
 * from hub.c/output.c: these only read their lists. Loop thread only. */
#ifndef VC_STREAM_BUDGET_H
#define VC_STREAM_BUDGET_H

#include <stddef.h>

#include "common/conf_keys.h"
#include "common/negotiate.h"

struct hub;
struct vc_cam;
struct vc_streams;

#define BUDGET_MAX_OUTPUTS VC_CONF_DEF_MAX_OUTPUTS
#define BUDGET_FRAME_MIB VC_CONF_DEF_FRAME_MEMORY_MB

/* Bytes an output with plan p on device mode m holds, estimated (its
 * latest frame, a result in flight, converter scratch, a copy of the camera
 * frame its job reads); 0 for passthrough (it lends capture frames). */
size_t budget_output_bytes(const struct vc_mode *m, const struct vc_plan *p);

/* Clamps req's size to the camera's limit (configured max_size, else its
 * largest native mode, rotation considered). 1 when it changed req. */
int budget_clamp_size(const struct vc_streams *s, struct vc_cam *cam, struct vc_request *req);

/* Whether h may serve req: 0 when an existing output serves it or a new one
 * fits; -EBUSY when h has max_outputs outputs, -ENOSPC when the bytes would
 * pass frame_memory (err says which, for a 503). Outputs nobody uses and no
 * job holds are freed first to make room. */
int budget_admit(struct hub *h, const struct vc_request *req, char *err, size_t errlen);

/* After outputs were freed: when the bytes held fell by 8 MiB or more since
 * the last call, returns the freed memory to the system (malloc_trim).
 * glibc keeps freed frames in the worker threads' arenas otherwise, and its
 * mmap threshold grows after the first large free, so hundreds of MiB
 * stayed in RSS after an attack's clients had left. */
void budget_trim(struct vc_streams *s);

#endif
