/* Process-wide buffer counts (see memstat.h). */
#include "common/memstat.h"

#include <stdatomic.h>

/* Global on purpose: frames and scratch are allocated and freed on any
 * thread (loop, workers) by code that has no context to carry a counter,
 * and the budget wants one process-wide figure. Atomic, never reset. */
static atomic_llong held[VC_MEM_KINDS];

void vc_mem_count(enum vc_mem_kind k, long long delta)
{
	if ((unsigned)k < VC_MEM_KINDS && delta)
		atomic_fetch_add_explicit(&held[k], delta, memory_order_relaxed);
}

size_t vc_mem_held(enum vc_mem_kind k)
{
	long long v = (unsigned)k < VC_MEM_KINDS
			      ? atomic_load_explicit(&held[k], memory_order_relaxed)
			      : 0;
	return v > 0 ? (size_t)v : 0;
}

const char *vc_mem_kind_name(enum vc_mem_kind k)
{
	static const char *const names[VC_MEM_KINDS] = { "frames", "scratch", "copies", "device",
								 "gop", "parts" };
	return (unsigned)k < VC_MEM_KINDS ? names[k] : "?";
}
