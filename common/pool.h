/* A pool of heap buffers for frames that are made over and over at the same
 * size (copies of capture buffers, converted or encoded frames), so steady
 * streaming does not malloc/free a frame-sized block per frame. A pool frame
 * is an ordinary refcounted vc_frame; its last unref (any thread) puts the
 * storage back into the pool.
 *
 * Threads: get/copy and unref may run on any thread. The pool is refcounted
 * by its frames: vc_pool_free() only drops the owner's reference, frames
 * still out keep it alive. */
#ifndef VC_POOL_H
#define VC_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/frame.h"

struct vc_pool;

struct vc_pool_stats {
	uint64_t allocs;  /* buffers malloc'd */
	uint64_t reuses;  /* buffers taken from the pool */
	size_t idle;      /* buffers waiting in the pool now */
	size_t out;       /* pool frames not yet released */
};

/* Keeps at most max_idle released buffers (0 = 4). NULL on ENOMEM. */
struct vc_pool *vc_pool_new(size_t max_idle);

/* Drops the owner's reference; idle buffers are freed at once, the rest
 * when their frames go. NULL is a no-op. */
void vc_pool_free(struct vc_pool *p);

/* Frees the idle buffers (a camera that stopped streaming keeps none). */
void vc_pool_drop_idle(struct vc_pool *p);

/* A frame with `size` writable bytes at *data (== mem[0]), bytesused[0] =
 * size, geometry and format unset (the caller fills them before sharing).
 * refs = 1. NULL on ENOMEM. */
struct vc_frame *vc_pool_get(struct vc_pool *p, size_t size, uint8_t **data);

/* Like vc_frame_copy() (all planes, geometry and metadata), into pool
 * storage. NULL on ENOMEM. */
struct vc_frame *vc_pool_copy(struct vc_pool *p, const struct vc_frame *src);

void vc_pool_get_stats(struct vc_pool *p, struct vc_pool_stats *st);

#endif
