/* Refcounted frames: heap frames own their storage, wrapped frames lend
 * somebody else's (a capture buffer) and call back when the last reference
 * is dropped. */
#include "common/frame.h"

#include "common/memstat.h"

#include <stdlib.h>
#include <string.h>

struct vc_frame *vc_frame_new(size_t size)
{
	struct vc_frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->owned = malloc(size ? size : 1);
	if (!f->owned) {
		free(f);
		return NULL;
	}
	f->owned_size = size;
	vc_mem_count(VC_MEM_FRAMES, (long long)size);
	atomic_init(&f->refs, 1);
	f->mem[0] = f->owned;
	f->geom.sizeimage = size;
	f->geom.mem_size[0] = size;
	f->geom.mem_planes = 1;
	f->bytesused[0] = size;
	return f;
}

struct vc_frame *vc_frame_new_fmt(const struct vc_fmt *fmt, uint32_t width, uint32_t height)
{
	struct vc_geom g;

	if (vc_fmt_geometry(fmt, width, height, 0, &g) < 0)
		return NULL;
	struct vc_frame *f = vc_frame_new(g.sizeimage);
	if (!f)
		return NULL;
	f->fmt = fmt;
	f->geom = g;
	/* All memory planes live back to back in one allocation. */
	size_t off = 0;
	for (int i = 0; i < g.mem_planes; i++) {
		f->mem[i] = f->owned + off;
		f->bytesused[i] = g.mem_size[i];
		off += g.mem_size[i];
	}
	return f;
}

struct vc_frame *vc_frame_wrap(const struct vc_fmt *fmt, const struct vc_geom *g,
			       uint8_t *const mem[3], const size_t bytesused[3],
			       vc_frame_release_fn release, void *opaque)
{
	struct vc_frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	atomic_init(&f->refs, 1);
	f->fmt = fmt;
	f->geom = *g;
	for (int i = 0; i < 3; i++) {
		f->mem[i] = mem[i];
		f->bytesused[i] = bytesused[i];
	}
	f->release = release;
	f->release_opaque = opaque;
	return f;
}

uint8_t *vc_frame_data(struct vc_frame *f, int i)
{
	/* Only heap frames are writable; their planes all point into f->owned. */
	if (!f->owned)
		return NULL;
	return f->owned + (f->mem[i] - f->owned);
}

size_t vc_frame_copy_size(const struct vc_frame *src)
{
	size_t total = 0;

	for (int i = 0; i < src->geom.mem_planes; i++)
		total += src->geom.mem_size[i] ? src->geom.mem_size[i] : src->bytesused[i];
	return total;
}

void vc_frame_copy_to(struct vc_frame *f, const struct vc_frame *src, uint8_t *data)
{
	size_t off = 0;

	f->fmt = src->fmt;
	f->geom = src->geom;
	f->color = src->color;
	f->field = src->field;
	f->seq = src->seq;
	f->ts_us = src->ts_us;
	f->ts_real_us = src->ts_real_us;
	f->jpeg = src->jpeg; /* the same bytes: the facts still hold */
	f->n_dmabuf = 0;     /* a copy is not the exported buffer */
	f->key = src->key;
	for (int i = 0; i < 3; i++) {
		f->mem[i] = NULL;
		f->bytesused[i] = 0;
	}
	for (int i = 0; i < src->geom.mem_planes; i++) {
		size_t cap = src->geom.mem_size[i] ? src->geom.mem_size[i] : src->bytesused[i];
		size_t n = src->bytesused[i] < cap ? src->bytesused[i] : cap;

		memcpy(data + off, src->mem[i], n);
		f->mem[i] = data + off;
		f->bytesused[i] = n;
		off += cap;
	}
}

struct vc_frame *vc_frame_copy(const struct vc_frame *src)
{
	struct vc_frame *f = vc_frame_new(vc_frame_copy_size(src));
	if (!f)
		return NULL;
	uint8_t *owned = f->owned;
	size_t owned_size = f->owned_size;

	*f = (struct vc_frame){ 0 };
	atomic_init(&f->refs, 1);
	f->owned = owned;
	f->owned_size = owned_size;
	vc_frame_copy_to(f, src, owned);
	return f;
}

void vc_frame_reset(struct vc_frame *f)
{
	struct vc_frame keep = { .fmt = f->fmt, .geom = f->geom, .owned = f->owned,
				 .owned_size = f->owned_size };

	for (int i = 0; i < 3; i++)
		keep.mem[i] = f->mem[i];
	*f = keep;
	atomic_init(&f->refs, 1);
	for (int i = 0; i < f->geom.mem_planes; i++)
		f->bytesused[i] = f->geom.mem_size[i];
}

struct vc_frame *vc_frame_ref(struct vc_frame *f)
{
	atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	return f;
}

void vc_frame_unref(struct vc_frame *f)
{
	if (!f)
		return;
	if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (f->release)
		f->release(f, f->release_opaque);
	vc_mem_count(VC_MEM_FRAMES, -(long long)f->owned_size);
	free(f->owned);
	free(f);
}
