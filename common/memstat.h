/* Process-wide counts of the daemon's big buffers: heap frames (outputs,
 * snapshots, pipeline scratch frames), converter scratch, copies of capture
 * buffers (made while consumers hold too many), and the buffers of the test
 * pattern (what a V4L2 driver would hold in kernel memory), and the access
 * units an H.264 passthrough output keeps since its last IDR, and the stream
 * parts held for clients (server/stream/stream_part.c). The memory
 * budget (server/stream/budget.c) admits new outputs on all but "device";
 * /metrics and /api/status print all. */
#ifndef VC_MEMSTAT_H
#define VC_MEMSTAT_H

#include <stddef.h>

enum vc_mem_kind {
	VC_MEM_FRAMES,  /* vc_frame_new() storage */
	VC_MEM_SCRATCH, /* converter strips and hubs (common/convert*.c) */
	VC_MEM_COPIES,  /* copies of lent capture buffers (common/pool.c) */
	VC_MEM_DEVICE,  /* the test pattern's capture buffers */
	VC_MEM_GOP,     /* H.264 passthrough: the kept GOP's copies (common/gop.c) */
	VC_MEM_PARTS,   /* stream parts (memfds) alive: queued or being sent, each once */
	VC_MEM_KINDS
};

/* Adds delta bytes (negative when freed) to kind k; any thread. */
void vc_mem_count(enum vc_mem_kind k, long long delta);

/* Bytes of kind k held now. */
size_t vc_mem_held(enum vc_mem_kind k);

/* "frames", "scratch", "copies", "device", "gop", "parts". */
const char *vc_mem_kind_name(enum vc_mem_kind k);

#endif
