/* Buffer counts (common/memstat.h): heap frames, pool copies and converter
 * scratch are counted while held and uncounted when freed, so the memory
 * budget sees what is allocated now. One binary: the counts start at 0. */
#include <linux/videodev2.h>

#include "common/convert.h"
#include "common/frame.h"
#include "common/memstat.h"
#include "common/pool.h"
#include "tests/unit/testbuf.h"

static void frames(void)
{
	const struct vc_fmt *f = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUYV);
	struct vc_frame *a = vc_frame_new(1000), *b = vc_frame_new_fmt(f, 64, 32);

	CHECK(a && b && vc_mem_held(VC_MEM_FRAMES) == 1000 + 64 * 32 * 2, "held %zu",
	      vc_mem_held(VC_MEM_FRAMES));
	struct vc_frame *c = b ? vc_frame_copy(b) : NULL; /* a heap copy counts too */
	CHECK(c && vc_mem_held(VC_MEM_FRAMES) == 1000 + 2 * 64 * 32 * 2, "copy: %zu",
	      vc_mem_held(VC_MEM_FRAMES));
	vc_frame_ref(a);
	vc_frame_unref(a);
	CHECK(vc_mem_held(VC_MEM_FRAMES) == 1000 + 2 * 64 * 32 * 2, "a still held");
	vc_frame_unref(a);
	vc_frame_unref(b);
	vc_frame_unref(c);
	CHECK(vc_mem_held(VC_MEM_FRAMES) == 0, "all freed: %zu", vc_mem_held(VC_MEM_FRAMES));
}

static void pool_copies(void)
{
	struct vc_pool *p = vc_pool_new(2);
	uint8_t *d;
	struct vc_frame *a = vc_pool_get(p, 5000, &d), *b = vc_pool_get(p, 7000, &d);

	CHECK(a && b && vc_mem_held(VC_MEM_COPIES) == 12000, "copies %zu", vc_mem_held(VC_MEM_COPIES));
	CHECK(vc_mem_held(VC_MEM_FRAMES) == 0, "pool frames are not heap frames");
	vc_frame_unref(a); /* idle in the pool: still allocated, still counted */
	CHECK(vc_mem_held(VC_MEM_COPIES) == 12000, "idle: %zu", vc_mem_held(VC_MEM_COPIES));
	vc_pool_drop_idle(p);
	CHECK(vc_mem_held(VC_MEM_COPIES) == 7000, "dropped: %zu", vc_mem_held(VC_MEM_COPIES));
	vc_pool_free(p); /* b outlives the pool */
	CHECK(vc_mem_held(VC_MEM_COPIES) == 7000, "b out: %zu", vc_mem_held(VC_MEM_COPIES));
	vc_frame_unref(b);
	CHECK(vc_mem_held(VC_MEM_COPIES) == 0, "all freed: %zu", vc_mem_held(VC_MEM_COPIES));
}

static void conv_scratch(void)
{
	const struct vc_fmt *sf = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUYV);
	const struct vc_fmt *df = vc_fmt_by_fourcc(V4L2_PIX_FMT_RGB24);
	struct vc_conv *c = vc_conv_new();
	struct buf s, d;

	if (!c || buf_new(&s, sf, 640, 480, 0, 0) || buf_new(&d, df, 320, 240, 0, 1)) {
		CHECK(0, "alloc");
		return;
	}
	CHECK(vc_conv_run(c, &s.v, &d.v) == 0, "scale + convert");
	CHECK(vc_mem_held(VC_MEM_SCRATCH) > 0, "a scaling conversion uses scratch");
	vc_conv_free(c);
	CHECK(vc_mem_held(VC_MEM_SCRATCH) == 0, "freed with the converter: %zu",
	      vc_mem_held(VC_MEM_SCRATCH));
	buf_free(&s);
	buf_free(&d);
}

static void names(void)
{
	CHECK(strcmp(vc_mem_kind_name(VC_MEM_DEVICE), "device") == 0 &&
		      strcmp(vc_mem_kind_name(VC_MEM_GOP), "gop") == 0 &&
		      strcmp(vc_mem_kind_name(VC_MEM_PARTS), "parts") == 0 &&
		      strcmp(vc_mem_kind_name(VC_MEM_KINDS), "?") == 0 && vc_mem_held(VC_MEM_KINDS) == 0,
	      "names, out of range");
}

int main(void)
{
	RUN("memstat", frames);
	RUN("memstat", pool_copies);
	RUN("memstat", conv_scratch);
	RUN("memstat", names);
	CHECK_EXIT();
}
