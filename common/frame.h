/* Refcounted frames. A frame is either a lent capture buffer (its release
 * callback re-queues the V4L2 slot when the last reference goes) or a heap
 * buffer (converted, encoded or copied data). Consumers never write into a
 * frame they did not allocate themselves. Refcounts are atomic: frames cross
 * between the event loop and the worker threads. */
#ifndef VC_FRAME_H
#define VC_FRAME_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/fmt.h"

/* V4L2 colorimetry as the driver reported it (enum v4l2_colorspace,
 * v4l2_ycbcr_encoding, v4l2_quantization, v4l2_xfer_func values; 0 = default). */
struct vc_colorimetry {
	uint8_t colorspace, ycbcr_enc, quantization, xfer_func;
};

/* What the one vc_jpeg_parse of a captured JPEG found (capture checks every
 * compressed frame before delivering it), carried so consumers need not
 * parse it again. All zero on frames nobody checked (encoder output). */
struct vc_frame_jpeg {
	uint8_t checked;  /* parsed whole; bytesused[0] ends at its EOI */
	uint8_t has_dht;  /* a DHT segment precedes the first SOS */
	size_t sos_off;   /* offset of the first SOS marker (0xFF 0xDA) */
};

struct vc_frame;
typedef void (*vc_frame_release_fn)(struct vc_frame *f, void *opaque);

struct vc_frame {
	atomic_int refs;
	const struct vc_fmt *fmt;
	struct vc_geom geom;          /* strides/plane sizes; for compressed, sizeimage = capacity */
	const uint8_t *mem[3];        /* start of each memory plane */
	size_t bytesused[3];          /* valid bytes per memory plane (JPEG: its length) */
	struct vc_colorimetry color;
	uint32_t field;               /* enum v4l2_field */
	uint64_t seq;                 /* capture sequence number */
	int64_t ts_us;                /* capture time, CLOCK_MONOTONIC, microseconds */
	int64_t ts_real_us;           /* the same moment on CLOCK_REALTIME */
	struct vc_frame_jpeg jpeg;    /* compressed frames from capture */
	/* A lent capture buffer exported with VIDIOC_EXPBUF (one fd per memory
	 * plane, owned by the capture source and open while the frame lives),
	 * so an M2M encoder can read it without a copy; n_dmabuf 0 = none
	 * (heap frames, copies). */
	uint8_t n_dmabuf;
	int dmabuf[3];
	uint8_t key;                  /* H.264: an IDR access unit, decodable alone */
	vc_frame_release_fn release;  /* called once when refs drops to 0 */
	void *release_opaque;
	uint8_t *owned;               /* heap storage freed after release, or NULL */
	size_t owned_size;            /* its size, counted in common/memstat.h */
};

/* A heap frame with `size` bytes of storage in mem[0] (owned, writable by the
 * creator through vc_frame_data()); refs = 1. NULL on ENOMEM. */
struct vc_frame *vc_frame_new(size_t size);

/* A heap frame laid out for fmt/width/height (minimum strides), all planes in
 * one allocation; refs = 1. NULL on bad geometry or ENOMEM. */
struct vc_frame *vc_frame_new_fmt(const struct vc_fmt *fmt, uint32_t width, uint32_t height);

/* A frame that lends foreign memory: release(f, opaque) runs when the last
 * reference goes (e.g. to re-queue a V4L2 buffer). refs = 1. */
struct vc_frame *vc_frame_wrap(const struct vc_fmt *fmt, const struct vc_geom *g,
			       uint8_t *const mem[3], const size_t bytesused[3],
			       vc_frame_release_fn release, void *opaque);

/* Writable pointer to memory plane i of a frame created by vc_frame_new*()
 * (the creator fills it before sharing the frame). */
uint8_t *vc_frame_data(struct vc_frame *f, int i);

/* A heap copy of f (all planes, same geometry, metadata kept). refs = 1. */
struct vc_frame *vc_frame_copy(const struct vc_frame *f);

/* Bytes a copy of src needs: each memory plane's size (or bytesused when
 * the geometry gives none, e.g. compressed frames). */
size_t vc_frame_copy_size(const struct vc_frame *src);

/* Copies src's metadata and planes into f, its planes laid out back to back
 * in data (vc_frame_copy_size(src) bytes). Shared by vc_frame_copy and the
 * frame pool so both copy the same way. */
void vc_frame_copy_to(struct vc_frame *f, const struct vc_frame *src, uint8_t *data);

struct vc_frame *vc_frame_ref(struct vc_frame *f);

/* Makes heap frame f (refs 1, its storage no one else reads) fresh for
 * reuse: metadata as vc_frame_new() left it, storage, format and layout
 * kept, bytesused back to the plane sizes. */
void vc_frame_reset(struct vc_frame *f);
void vc_frame_unref(struct vc_frame *f); /* NULL is a no-op */

/* Pointer to the first byte of colour plane p (mem + plane offset). */
static inline const uint8_t *vc_frame_plane(const struct vc_frame *f, int p)
{
	return f->mem[f->geom.plane[p].mem] + f->geom.plane[p].offset;
}

#endif
