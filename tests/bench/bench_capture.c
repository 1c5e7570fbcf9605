/* Benchmark (not a test): what capture.c costs per frame and what lending
 * buffers saves over copying them, at 1280x720 and 1920x1080 YUYV.
 *  1. hand-off alone: wrap+unref (lend) vs vc_frame_copy (malloc per frame)
 *     vs vc_pool_copy (reused storage), ratios against lending;
 *  2. end to end on the event loop with the test source in still mode (it
 *     does no per-frame work): process CPU per frame and capture->callback
 *     latency, consumers releasing at once (lend) vs holding 3 frames (every
 *     later frame becomes a copy).
 * With VC_BENCH_DEVICE=/dev/videoN (e.g. inside ../shared/vm/vivid-vm) part 2
 * runs on that device in YUYV at each size instead of the test source. */
#include <event2/event.h>
#include <event2/thread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/fmt.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/pool.h"
#include "server/capture/capture.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

static void noop_release(struct vc_frame *f, void *o)
{
	(void)f;
	(void)o;
}

enum { LEND, COPY, POOL };

/* Microseconds per hand-off, best of 5 batches of >= 0.1 s. */
static double handoff(int how, const struct vc_fmt *fmt, const struct vc_geom *g, uint8_t *buf,
		      struct vc_pool *pool)
{
	uint8_t *mem[3] = { buf, NULL, NULL };
	size_t used[3] = { g->sizeimage, 0, 0 };
	double best = 1e9;

	for (int batch = 0; batch < 5; batch++) {
		double t0 = now();
		int n = 0;
		while (now() - t0 < 0.1) {
			struct vc_frame *f = vc_frame_wrap(fmt, g, mem, used, noop_release, NULL);
			struct vc_frame *c = how == COPY ? vc_frame_copy(f) :
					     how == POOL ? vc_pool_copy(pool, f) : vc_frame_ref(f);
			/* a consumer reads the first and last byte */
			volatile uint8_t sink = c->mem[0][0] ^ c->mem[0][g->sizeimage - 1];
			(void)sink;
			vc_frame_unref(c);
			vc_frame_unref(f);
			n++;
		}
		double us = (now() - t0) * 1e6 / n;
		if (us < best)
			best = us;
	}
	return best;
}

struct rec {
	unsigned frames;
	int hold;
	struct vc_frame *held[3];
	unsigned n_held;
	double lat_sum, lat_max;
};

static void on_frame(void *opaque, struct vc_frame *f)
{
	struct rec *r = opaque;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	double lat = (double)((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - f->ts_us);
	r->frames++;
	r->lat_sum += lat;
	if (lat > r->lat_max)
		r->lat_max = lat;
	if (r->hold && r->n_held < 3)
		r->held[r->n_held++] = vc_frame_ref(f);
}

static void run_cam(const char *path, const struct vc_mode *mode, int hold, double secs, double *cpu_us, double *lat_us,
		    double *lat_max, unsigned long long *copies, double *fps)
{
	struct event_base *b = event_base_new();
	struct vc_conf_cam cfg = { .name = (char *)"bench", .device = (char *)path, .input = -1,
				     .idle_stop_ms = -1 };
	struct vc_cam *cam;
	struct rec r = { .hold = hold };
	struct vc_cam_stats st;

	if (mode)
		cfg.mode = *mode;
	vc_cam_new(b, &cfg, &cam);
	vc_cam_set_callbacks(cam, on_frame, NULL, &r);
	vc_cam_acquire(cam);
	struct timeval warm = { 0, 300000 };
	event_base_loopexit(b, &warm);
	event_base_dispatch(b);
	unsigned f0 = r.frames;
	r.lat_sum = r.lat_max = 0;
	double c0 = cpu_s(), t0 = now();
	struct timeval tv = { (time_t)secs, (suseconds_t)((secs - (time_t)secs) * 1e6) };
	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
	unsigned n = r.frames - f0;
	*cpu_us = n ? (cpu_s() - c0) * 1e6 / n : 0;
	*fps = n / (now() - t0);
	*lat_us = n ? r.lat_sum / n : 0;
	*lat_max = r.lat_max;
	vc_cam_get_stats(cam, &st);
	*copies = (unsigned long long)st.copies;
	for (unsigned i = 0; i < r.n_held; i++)
		vc_frame_unref(r.held[i]);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

int main(void)
{
	static const struct {
		uint32_t w, h;
	} sizes[] = { { 1280, 720 }, { 1920, 1080 } };
	const struct vc_fmt *yuyv = vc_fmt_find("YUYV");

	evthread_use_pthreads();
	vc_log_level = VC_LOG_WARN;
	printf("hand-off per frame (YUYV; lend = wrap + ref/unref, copy = vc_frame_copy, pool = vc_pool_copy)\n");
	printf("%-10s %10s %10s %10s %12s %12s\n", "size", "lend us", "copy us", "pool us",
	       "copy/lend", "pool/lend");
	for (size_t i = 0; i < 2; i++) {
		struct vc_geom g;
		vc_fmt_geometry(yuyv, sizes[i].w, sizes[i].h, 0, &g);
		uint8_t *buf = malloc(g.sizeimage);
		memset(buf, 0x80, g.sizeimage);
		struct vc_pool *pool = vc_pool_new(4);
		double l = handoff(LEND, yuyv, &g, buf, pool);
		double c = handoff(COPY, yuyv, &g, buf, pool);
		double p = handoff(POOL, yuyv, &g, buf, pool);
		printf("%4ux%-5u %10.2f %10.1f %10.1f %12.0f %12.0f\n", sizes[i].w, sizes[i].h, l, c,
		       p, c / l, p / l);
		vc_pool_free(pool);
		free(buf);
	}

	const char *dev = getenv("VC_BENCH_DEVICE");
	if (dev)
		printf("\nend to end: vc_cam on %s (YUYV, fastest interval), 2 s\n", dev);
	else
		printf("\nend to end: vc_cam + test source (still, no per-frame rendering) at 120 fps, 2 s\n");
	printf("%-10s %-5s %10s %12s %12s %12s %10s\n", "size", "path", "fps", "cpu us/frame",
	       "lat avg us", "lat max us", "copies");
	for (size_t i = 0; i < 2; i++) {
		char path[64];
		double cpu[2], lat, lmax, fps;
		unsigned long long copies;
		struct vc_mode mode = { yuyv->fourcc, sizes[i].w, sizes[i].h, { 1, 120 } };
		snprintf(path, sizeof(path), "test:%ux%u@120:YUYV:still", sizes[i].w, sizes[i].h);
		for (int hold = 0; hold < 2; hold++) {
			run_cam(dev ? dev : path, dev ? &mode : NULL, hold, 2.0, &cpu[hold], &lat, &lmax, &copies, &fps);
			printf("%4ux%-5u %-5s %10.1f %12.1f %12.1f %12.1f %10llu\n", sizes[i].w,
			       sizes[i].h, hold ? "copy" : "lend", fps, cpu[hold], lat, lmax, copies);
		}
		printf("%4ux%-5u copy/lend CPU per frame: %.1fx\n", sizes[i].w, sizes[i].h,
		       cpu[0] > 0 ? cpu[1] / cpu[0] : 0);
	}
	return 0;
}
