/* Test images laid out by the format table, each colour plane in its own
 * block: a destination gets canary bytes behind every plane, a source is
 * exact so ASan sees any over-read. Shared by the converter and transform
 * tests (header-only: each test is one binary). */
#ifndef VC_TEST_TESTBUF_H
#define VC_TEST_TESTBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "common/image.h"
#include "tests/unit/check.h"

struct buf {
	struct vc_image v;
	uint8_t *mem[3];
	size_t size[3];
};

/* pad = extra bytes per line of plane 0; dst = add canaries. */
static inline int buf_new(struct buf *b, const struct vc_fmt *f, uint32_t w, uint32_t h,
			  uint32_t pad, int dst)
{
	struct vc_geom g;

	memset(b, 0, sizeof(*b));
	uint32_t bpl = pad ? vc_fmt_min_stride(f, w) + pad : 0;
	if (vc_fmt_geometry(f, w, h, bpl, &g))
		return -1;
	b->v.fmt = f;
	b->v.width = w;
	b->v.height = h;
	for (int p = 0; p < g.color_planes; p++) {
		size_t n = g.plane[p].size;
		b->mem[p] = malloc(n + (dst ? CANARY_LEN : 0));
		if (!b->mem[p])
			return -1;
		memset(b->mem[p], dst ? CANARY_BYTE : 0, n + (dst ? CANARY_LEN : 0));
		b->size[p] = n;
		b->v.plane[p] = b->mem[p];
		b->v.stride[p] = g.plane[p].stride;
		b->v.plane_size[p] = n;
	}
	return 0;
}

static inline void buf_free(struct buf *b)
{
	for (int p = 0; p < 3; p++)
		free(b->mem[p]);
	memset(b, 0, sizeof(*b));
}

static inline int canaries_ok(const struct buf *b)
{
	for (int p = 0; p < 3; p++)
		if (b->mem[p] && !canary_intact(b->mem[p], b->size[p]))
			return 0;
	return 1;
}

#endif
