/* Private to server/stream/: the memory budget of the fan-out (issue 14).
 * Every distinct picture a client asks for becomes an output holding its own
 * frames and pipeline scratch, so anonymous clients could make the server
 * hold gigabytes. Three limits, checked before a request gets an output:
 * the largest size a client may ask for (max_size, default the camera's
 * largest native mode, of a size range its largest listed size; larger
 * requests are clamped to it like any size beyond the device's), the
 * distinct outputs per camera (max_outputs, 503) and per client address
 * group on a camera (max_outputs_per_ip, 429; IPv6 by /64: issue 22), and
 * the bytes of frames, converter scratch, capture copies and kept H.264
 * GOPs held (frame_memory, 503: counted as allocated, common/memstat.h, or
 * as the estimates reserved for every admitted output, whichever is more,
 * plus the stream parts held for clients, which hold.c keeps within it:
 * see held_bytes). The camera's default picture (MJPEG and H.264) is
 * admitted without these checks (stream.c). Kept apart from
 * hub.c/output.c: these only read their lists, and end the clients of
 * outputs that do not fit when a camera comes back. Loop thread only. */
#ifndef VC_STREAM_BUDGET_H
#define VC_STREAM_BUDGET_H

#include <stddef.h>

#include "common/conf_keys.h"
#include "common/negotiate.h"

struct hub;
struct vc_guard_addr;
struct vc_cam;
struct vc_streams;

#define BUDGET_MAX_OUTPUTS VC_CONF_DEF_MAX_OUTPUTS
#define BUDGET_FRAME_MIB VC_CONF_DEF_FRAME_MEMORY_MB
#define BUDGET_MAX_OUTPUTS_PER_IP VC_CONF_DEF_MAX_OUTPUTS_PER_IP

/* Bytes an output with plan p on device mode m holds, estimated (its
 * latest frame, a result in flight, converter scratch, a copy of the camera
 * frame its job reads); 0 for passthrough (it lends capture frames). */
size_t budget_output_bytes(const struct vc_mode *m, const struct vc_plan *p);

/* Clamps req's size to the camera's limit (configured max_size, else its
 * largest native mode, rotation considered). 1 when it changed req. */
int budget_clamp_size(const struct vc_streams *s, struct vc_cam *cam, struct vc_request *req);

/* Whether h may serve req from address group `who` (NULL: not checked):
 * 0 when an existing output serves it or a new one fits; -EUSERS when who
 * already uses max_outputs_per_ip of h's outputs (for a 429), -EBUSY when
 * h has max_outputs outputs, -ENOSPC when the bytes would pass
 * frame_memory (for a 503); err says which. Outputs nobody uses and no job
 * holds are freed first to make room. Admitted, the output the caller then
 * makes is reserved at once (held_bytes). */
int budget_admit(struct hub *h, const struct vc_request *req, const struct vc_guard_addr *who,
		 char *err, size_t errlen);
/* The same for a request already decided: plan against the device mode
 * it leads to (stream_decide). */
int budget_admit_plan(struct hub *h, const struct vc_mode *mode, const struct vc_plan *plan,
		      const struct vc_guard_addr *who, char *err, size_t errlen);

/* h's camera came back and its outputs were planned (those made while it
 * was away are real pictures now): while h passes max_outputs or the
 * bytes pass frame_memory, the newest output that is not the default
 * picture is marked refused and its clients ended (logged with the 503
 * reason). */
void budget_readmit(struct hub *h);

/* On the gc tick: when the bytes counted (common/memstat.h, all kinds) fell
 * by 8 MiB or more since the last trim, or fell and then held still for a
 * tick, returns the freed memory to the system (malloc_trim).
 * glibc keeps freed frames in the worker threads' arenas otherwise, and its
 * mmap threshold grows after the first large free, so hundreds of MiB
 * stayed in RSS after an attack's clients had left. */
void budget_trim(struct vc_streams *s);

#endif
