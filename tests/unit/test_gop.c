/* The kept GOP (common/gop.h): an IDR starts it, consecutive access units
 * extend it, a gap or no IDR keeps nothing; kept units are copies (the
 * given frame is not referenced: a capture buffer goes back at once),
 * counted as VC_MEM_GOP until their last reference goes; crossing the byte
 * or the time bound drops the GOP until the next IDR. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "common/frame.h"
#include "common/gop.h"
#include "common/h264.h"
#include "common/memstat.h"

static unsigned released;

static void count_release(struct vc_frame *f, void *opaque)
{
	(void)f;
	released++;
	free(opaque);
}

/* A lent-buffer-like access unit of len bytes, all `seq`, at seq * 100 ms. */
static struct vc_frame *au(uint64_t seq, int key, size_t len)
{
	uint8_t *mem = malloc(len);
	struct vc_geom g = { .width = 64, .height = 48, .mem_planes = 1, .sizeimage = len };
	uint8_t *m[3] = { mem, NULL, NULL };
	size_t bu[3] = { len, 0, 0 };

	if (!mem)
		return NULL;
	memset(mem, (int)seq, len);
	g.mem_size[0] = len;
	struct vc_frame *f = vc_frame_wrap(vc_h264_fmt(), &g, m, bu, count_release, mem);
	if (!f) {
		free(mem);
		return NULL;
	}
	f->seq = seq;
	f->ts_us = (int64_t)seq * 100000;
	f->ts_real_us = f->ts_us + 7;
	f->key = (uint8_t)key;
	return f;
}

/* Adds unit (seq, key, len) as number n, the frame dropped right after as
 * capture does; returns vc_gop_add's result. */
static int add(struct vc_gop *g, uint64_t n, uint64_t seq, int key, size_t len)
{
	struct vc_frame *f = au(seq, key, len);

	if (!f)
		return -ENOMEM;
	int rc = vc_gop_add(g, f, n);
	vc_frame_unref(f);
	return rc;
}

static void keeps_from_idr(void)
{
	struct vc_gop g = { 0 };

	released = 0;
	CHECK(add(&g, 1, 1, 0, 100) == 0 && g.n == 0, "a P frame before any IDR is not kept");
	CHECK(add(&g, 2, 2, 1, 100) == 1 && g.n == 1 && g.first_n == 2, "IDR starts it");
	CHECK(add(&g, 3, 3, 0, 200) == 1 && add(&g, 4, 4, 0, 300) == 1 && g.n == 3, "P frames");
	CHECK(released == 4, "the given frames are not held: %u released", released);
	CHECK(g.bytes == 600 && vc_mem_held(VC_MEM_GOP) == 600, "bytes %zu, counted %zu", g.bytes,
	      vc_mem_held(VC_MEM_GOP));
	struct vc_frame *f = vc_gop_get(&g, 3);
	CHECK(f && f->bytesused[0] == 200 && f->mem[0][0] == 3 && f->mem[0][199] == 3 &&
		      f->seq == 3 && f->ts_us == 300000 && f->ts_real_us == 300007 && !f->key,
	      "unit 3: a copy with its timing");
	CHECK(vc_gop_get(&g, 2) && vc_gop_get(&g, 2)->key, "unit 2 is the IDR");
	CHECK(!vc_gop_get(&g, 1) && !vc_gop_get(&g, 5), "not kept: 1, 5");
	/* a gap: 6 cannot be decoded from the kept IDR's pictures alone */
	CHECK(add(&g, 6, 6, 0, 100) == 0 && g.n == 3 && !vc_gop_get(&g, 6), "a gap is not kept");
	/* a new IDR replaces the GOP; a unit held elsewhere lives on, counted */
	vc_frame_ref(f);
	CHECK(add(&g, 7, 7, 1, 50) == 1 && g.n == 1 && g.first_n == 7 && !vc_gop_get(&g, 3),
	      "IDR 7 starts a new GOP");
	CHECK(vc_mem_held(VC_MEM_GOP) == 250, "unit 3 still held: counted %zu",
	      vc_mem_held(VC_MEM_GOP));
	vc_frame_unref(f);
	CHECK(vc_mem_held(VC_MEM_GOP) == 50, "after its last ref: %zu", vc_mem_held(VC_MEM_GOP));
	vc_gop_free(&g);
	CHECK(vc_mem_held(VC_MEM_GOP) == 0 && !g.f && !g.n, "freed: %zu", vc_mem_held(VC_MEM_GOP));
}

static void bounds(void)
{
	struct vc_gop g = { .max_bytes = 1000, .max_us = 500000 };

	/* bytes: 400 + 400 fit, + 400 does not */
	CHECK(add(&g, 1, 1, 1, 400) == 1 && add(&g, 2, 2, 0, 400) == 1, "under the byte bound");
	CHECK(add(&g, 3, 3, 0, 400) == -E2BIG && g.n == 0 && g.dropped == 1, "over: dropped");
	CHECK(add(&g, 4, 4, 0, 10) == 0 && g.n == 0, "nothing kept until the next IDR");
	CHECK(vc_mem_held(VC_MEM_GOP) == 0, "dropped GOP uncounted: %zu", vc_mem_held(VC_MEM_GOP));
	CHECK(add(&g, 5, 5, 1, 1001) == -E2BIG && g.n == 0 && g.dropped == 2,
	      "an IDR alone over the bound");
	/* time: units 10..15 are 0.5 s after IDR 10; 16 is past it */
	CHECK(add(&g, 10, 10, 1, 10) == 1, "IDR 10");
	for (uint64_t n = 11; n <= 15; n++)
		CHECK(add(&g, n, n, 0, 10) == 1, "unit %u within 0.5 s", (unsigned)n);
	CHECK(add(&g, 16, 16, 0, 10) == -E2BIG && g.n == 0 && g.dropped == 3, "0.6 s: dropped");
	CHECK(add(&g, 17, 17, 1, 10) == 1 && g.n == 1, "the next IDR keeps again");
	vc_gop_free(&g);
	struct vc_gop d = { 0 };
	CHECK(add(&d, 1, 1, 1, VC_GOP_MAX_BYTES) == 1 && add(&d, 2, 2, 0, 1) == -E2BIG,
	      "default bound: %zu bytes", (size_t)VC_GOP_MAX_BYTES);
	vc_gop_free(&d);
	CHECK(vc_mem_held(VC_MEM_GOP) == 0, "all freed: %zu", vc_mem_held(VC_MEM_GOP));
}

int main(void)
{
	RUN("gop", keeps_from_idr);
	RUN("gop", bounds);
	CHECK_EXIT();
}
