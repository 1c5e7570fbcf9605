/* Frame pool: reuse of released storage, size classes, the idle bound,
 * copies equal to vc_frame_copy, frames outliving the pool, releases from
 * other threads. */
#include <linux/videodev2.h>
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "common/pool.h"

static void reuse(void)
{
	struct vc_pool *p = vc_pool_new(2);
	struct vc_pool_stats st;
	uint8_t *d1, *d2;

	struct vc_frame *a = vc_pool_get(p, 1000, &d1);
	CHECK(a && d1 && a->mem[0] == d1 && a->bytesused[0] == 1000 &&
		      atomic_load(&a->refs) == 1, "get");
	memset(d1, 0x5a, 1000);
	vc_frame_unref(a);
	struct vc_frame *b = vc_pool_get(p, 900, &d2);
	CHECK(d2 == d1, "released buffer not reused");
	vc_frame_unref(b);
	struct vc_frame *c = vc_pool_get(p, 400, &d2); /* too small for the 1000-byte one */
	CHECK(d2 != d1, "a buffer more than twice the size reused");
	vc_pool_get_stats(p, &st);
	CHECK(st.allocs == 2 && st.reuses == 1 && st.out == 1 && st.idle == 1,
	      "allocs %llu reuses %llu out %zu idle %zu", (unsigned long long)st.allocs,
	      (unsigned long long)st.reuses, st.out, st.idle);
	vc_frame_unref(c);
	/* Idle bound: 5 out, 5 back, only 2 kept. */
	struct vc_frame *f[5];
	for (int i = 0; i < 5; i++)
		f[i] = vc_pool_get(p, 4096, NULL);
	for (int i = 0; i < 5; i++)
		vc_frame_unref(f[i]);
	vc_pool_get_stats(p, &st);
	CHECK(st.idle == 2 && st.out == 0, "idle %zu out %zu", st.idle, st.out);
	vc_pool_free(p);
}

static void copy_matches(void)
{
	const struct vc_fmt *fmt = vc_fmt_by_fourcc(V4L2_PIX_FMT_NV12M);
	struct vc_pool *p = vc_pool_new(0);

	CHECK(fmt != NULL, "no NV12M row");
	if (!fmt)
		return;
	struct vc_frame *src = vc_frame_new_fmt(fmt, 34, 20);
	for (int i = 0; i < src->geom.mem_planes; i++)
		for (size_t k = 0; k < src->geom.mem_size[i]; k++)
			vc_frame_data(src, i)[k] = (uint8_t)(k * 7 + i);
	src->seq = 42;
	src->ts_us = 123;
	src->field = V4L2_FIELD_NONE;
	src->jpeg = (struct vc_frame_jpeg){ 1, 0, 600 }; /* facts travel with copies */
	for (int round = 0; round < 2; round++) { /* fresh, then reused storage */
		struct vc_frame *a = vc_frame_copy(src), *b = vc_pool_copy(p, src);
		int same = b && b->fmt == a->fmt && b->seq == 42 && b->ts_us == 123 &&
			   b->geom.mem_planes == 2 && !memcmp(&b->geom, &a->geom, sizeof(a->geom)) &&
			   a->jpeg.checked && a->jpeg.sos_off == 600 && !a->jpeg.has_dht &&
			   b->jpeg.checked && b->jpeg.sos_off == 600 && !b->jpeg.has_dht;
		for (int i = 0; same && i < 2; i++)
			same = b->bytesused[i] == a->bytesused[i] &&
			       !memcmp(b->mem[i], a->mem[i], a->bytesused[i]) &&
			       b->mem[i] != src->mem[i];
		CHECK(same, "round %d: pool copy differs from vc_frame_copy", round);
		vc_frame_unref(a);
		vc_frame_unref(b);
	}
	struct vc_pool_stats st;
	vc_pool_get_stats(p, &st);
	CHECK(st.allocs == 1 && st.reuses == 1, "allocs %llu reuses %llu",
	      (unsigned long long)st.allocs, (unsigned long long)st.reuses);
	vc_frame_unref(src);
	vc_pool_free(p);
}

static void *unref_all(void *arg)
{
	struct vc_frame **f = arg;

	for (int i = 0; i < 8; i++)
		vc_frame_unref(f[i]);
	return NULL;
}

/* Frames out when the owner frees the pool: still valid, freed by the last
 * unref on another thread (ASan/valgrind check the rest). */
static void outlives_owner(void)
{
	struct vc_pool *p = vc_pool_new(3);
	struct vc_frame *f[8];
	uint8_t *d;

	for (int i = 0; i < 8; i++) {
		f[i] = vc_pool_get(p, 256, &d);
		memset(d, i, 256);
	}
	vc_pool_free(p);
	int ok = 1;
	for (int i = 0; i < 8; i++)
		ok &= f[i]->mem[0][0] == i && f[i]->mem[0][255] == i;
	CHECK(ok, "frame data changed after pool free");
	pthread_t t;
	pthread_create(&t, NULL, unref_all, f);
	pthread_join(t, NULL);
	vc_pool_free(NULL);
}

int main(void)
{
	RUN("pool", reuse);
	RUN("pool", copy_matches);
	RUN("pool", outlives_owner);
	CHECK_EXIT();
}
