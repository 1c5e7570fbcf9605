/* The current GOP of an H.264 stream: copies of the access units since its
 * last IDR, numbered, so a client joining mid-GOP can be sent them at once
 * (from the IDR on) instead of waiting for the camera's next IDR. Copies,
 * never references: the frames it is given may be lent capture buffers,
 * which the capture needs back. Bounded in bytes and in time: a GOP that
 * crosses a bound is dropped and nothing is kept until the next IDR.
 * Its bytes are counted as VC_MEM_GOP (common/memstat.h). Pure: no event
 * loop; one thread at a time (the frames it hands out are refcounted). */
#ifndef VC_GOP_H
#define VC_GOP_H

#include <stddef.h>
#include <stdint.h>

struct vc_frame;

/* Defaults of the bounds: a camera's GOP is a few seconds at most (many
 * UVC cameras: 1-4 s); a larger one is not worth holding memory for. */
#define VC_GOP_MAX_BYTES ((size_t)8 << 20)
#define VC_GOP_MAX_US    10000000LL

struct vc_gop {
	struct vc_frame **f;  /* f[i] is access unit number first_n + i */
	size_t n, cap;
	uint64_t first_n;     /* number of f[0] (an IDR); meaningless when n == 0 */
	size_t bytes;         /* payload bytes of f[0..n) */
	size_t max_bytes;     /* bounds (0: the VC_GOP_MAX_* default) */
	int64_t max_us;
	uint64_t dropped;     /* GOPs dropped at a bound or for lack of memory */
};

/* Keeps access unit f, number n (the caller's count, +1 per unit): an IDR
 * (f->key) starts a new GOP; any other unit extends the kept one when it
 * follows its last (n consecutive), else is ignored (nothing kept: no IDR
 * seen since the last drop). A copy of f's bytes and timing is kept; f is
 * not referenced. Returns 1 when kept, 0 when ignored, -E2BIG when a
 * bound was crossed or -ENOMEM: the GOP is dropped then (n becomes 0). */
int vc_gop_add(struct vc_gop *g, const struct vc_frame *f, uint64_t n);

/* The kept unit number n, or NULL (not kept). Borrowed: vc_frame_ref() to
 * hold it past the next vc_gop_add/vc_gop_clear. */
struct vc_frame *vc_gop_get(const struct vc_gop *g, uint64_t n);

/* Drops every kept unit (the frames live on while referenced elsewhere). */
void vc_gop_clear(struct vc_gop *g);

/* vc_gop_clear and frees the array. */
void vc_gop_free(struct vc_gop *g);

#endif
