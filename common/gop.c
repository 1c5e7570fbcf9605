/* The kept GOP of an H.264 stream (see gop.h): an array of heap copies,
 * each counted as VC_MEM_GOP until its last reference goes. */
#include "common/gop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/memstat.h"

static void copy_release(struct vc_frame *f, void *opaque)
{
	vc_mem_count(VC_MEM_GOP, -(long long)f->bytesused[0]);
	free(opaque);
}

/* A copy of f's first plane (an access unit), its timing and key flag. */
static struct vc_frame *copy_au(const struct vc_frame *f)
{
	size_t len = f->bytesused[0];
	uint8_t *b = malloc(len ? len : 1);
	struct vc_geom g = { .width = f->geom.width, .height = f->geom.height, .mem_planes = 1,
			     .sizeimage = len };
	uint8_t *m[3] = { b, NULL, NULL };
	size_t bu[3] = { len, 0, 0 };

	if (!b)
		return NULL;
	memcpy(b, f->mem[0], len);
	g.mem_size[0] = len;
	struct vc_frame *c = vc_frame_wrap(f->fmt, &g, m, bu, copy_release, b);
	if (!c) {
		free(b);
		return NULL;
	}
	vc_mem_count(VC_MEM_GOP, (long long)len);
	c->seq = f->seq;
	c->ts_us = f->ts_us;
	c->ts_real_us = f->ts_real_us;
	c->color = f->color;
	c->key = f->key;
	return c;
}

void vc_gop_clear(struct vc_gop *g)
{
	for (size_t i = 0; i < g->n; i++)
		vc_frame_unref(g->f[i]);
	g->n = 0;
	g->bytes = 0;
}

void vc_gop_free(struct vc_gop *g)
{
	vc_gop_clear(g);
	free(g->f);
	g->f = NULL;
	g->cap = 0;
}

/* Drops the GOP after a failure (err), counted. */
static int drop(struct vc_gop *g, int err)
{
	vc_gop_clear(g);
	g->dropped++;
	return err;
}

int vc_gop_add(struct vc_gop *g, const struct vc_frame *f, uint64_t n)
{
	size_t max_bytes = g->max_bytes ? g->max_bytes : VC_GOP_MAX_BYTES;
	int64_t max_us = g->max_us ? g->max_us : VC_GOP_MAX_US;

	if (f->key)
		vc_gop_clear(g);
	else if (!g->n || n != g->first_n + g->n)
		return 0; /* no IDR to decode it from: a joiner waits for the next */
	if (g->n && (g->bytes + f->bytesused[0] > max_bytes || f->ts_us - g->f[0]->ts_us > max_us))
		return drop(g, -E2BIG);
	if (!g->n && f->bytesused[0] > max_bytes)
		return drop(g, -E2BIG);
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct vc_frame **a = realloc(g->f, cap * sizeof(*a));

		if (!a)
			return drop(g, -ENOMEM);
		g->f = a;
		g->cap = cap;
	}
	struct vc_frame *c = copy_au(f);
	if (!c)
		return drop(g, -ENOMEM);
	if (!g->n)
		g->first_n = n;
	g->f[g->n++] = c;
	g->bytes += f->bytesused[0];
	return 1;
}

struct vc_frame *vc_gop_get(const struct vc_gop *g, uint64_t n)
{
	if (!g->n || n < g->first_n || n - g->first_n >= g->n)
		return NULL;
	return g->f[n - g->first_n];
}
