/* vivid_bench: a benchmark, not a test (issue 3; `make bench` runs it in the
 * vivid-vm guest through tests/vm/bench_vivid.sh). CPU time per captured
 * frame of the capturing process (user + sys of all its threads, getrusage)
 * on the vivid driver, YUYV at 1280x720 and 1920x1080, for the two ways
 * server/capture/capture.c hands a frame over:
 *   lend  the frame points into the mmap'd V4L2 buffer; the consumer drops it
 *         at once and the release re-queues the buffer (zero copy);
 *   copy  the consumer keeps lent frames until fewer than the floor of
 *         buffers stay queued, so capture.c copies every later frame into its
 *         pool and re-queues the buffer at once (stats.copies counts them;
 *         the table shows the share that really was copied).
 * One vc_cam per mode (webcam input: 12.5 fps at 720p, 5 fps at 1080p; HDMI
 * input at 60 Hz DV timings for more frames per second); windows alternate
 * lend, copy, lend, copy... on the same stream; each path's CPU per frame is
 * its total over the rounds (getrusage splits user/sys by tick samples).
 *
 *   vivid_bench DEV [SECONDS per window, default 4]
 * VIVID_BENCH_VERBOSE=1 prints each window (frames, fps, user/sys, drops).
 * Exit status 0, or 1 when a mode could not be captured. */
#include <errno.h>
#include <linux/videodev2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "common/fmt.h"
#include "common/log.h"
#include "server/capture/capture.h"
#include "server/capture/v4l2src.h"

#define MAX_HELD 32
#define ROUNDS 3

struct consumer {
	struct vc_cam *cam;
	int copy;                  /* hold lent frames so capture.c must copy */
	struct vc_frame *held[MAX_HELD];
	unsigned n_held;
	uint64_t frames;
	uint64_t copies_seen;      /* stats.copies at the last frame */
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* user and sys CPU seconds of the whole process */
static void cpu_s(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	*sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void on_frame(void *opaque, struct vc_frame *f)
{
	struct consumer *c = opaque;
	struct vc_cam_stats st;

	c->frames++;
	vc_cam_get_stats(c->cam, &st);
	/* A frame that did not raise the copy count is a lent buffer: in copy
	 * mode keep it, so the queue stays below capture.c's floor. */
	if (c->copy && st.copies == c->copies_seen && c->n_held < MAX_HELD)
		c->held[c->n_held++] = vc_frame_ref(f);
	c->copies_seen = st.copies;
}

static void drop_held(struct consumer *c)
{
	for (unsigned i = 0; i < c->n_held; i++)
		vc_frame_unref(c->held[i]);
	c->n_held = 0;
}

static void run_ms(struct event_base *b, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

/* Runs the loop until the camera streams w x h (0 = any), at most max_ms. */
static int wait_mode(struct event_base *b, struct vc_cam *cam, uint32_t w, uint32_t h,
		     int max_ms)
{
	for (int t = 0; t < max_ms; t += 100) {
		struct vc_mode m;
		vc_cam_get_mode(cam, &m, NULL);
		if (vc_cam_get_state(cam) == VC_CAM_STREAMING && (!w || (m.width == w && m.height == h)))
			return 0;
		run_ms(b, 100);
	}
	return -ETIMEDOUT;
}

static int set_dv(struct vc_src *src, const void *arg)
{
	struct vc_v4l2_dv dv;
	memcpy(&dv, arg, sizeof(dv));
	return vc_v4l2_dv_set(src, &dv);
}

/* The progressive DV timings of w x h at 60 Hz the input offers. */
static int find_dv(struct vc_cam *cam, uint32_t w, uint32_t h, struct vc_v4l2_dv *out)
{
	struct vc_src *src = vc_cam_source(cam);
	for (uint32_t i = 0; src && vc_v4l2_dv_enum(src, i, out) == 0; i++)
		if (out->width == w && out->height == h && !out->interlaced &&
		    out->fps_milli == 60000)
			return 0;
	return -ENOENT;
}

struct window {
	double cpu_us, user_us, sys_us; /* CPU per frame: user + sys, user, sys */
	double fps, copied;             /* frame rate, share of frames copied */
	uint64_t frames, dropped, restarts;
};

static void measure(struct event_base *b, struct consumer *c, int copy, int secs,
		    struct window *w)
{
	struct vc_cam_stats st0, st1;

	c->copy = copy;
	if (!copy)
		drop_held(c);
	/* settle; in copy mode until the held frames make capture.c copy */
	vc_cam_get_stats(c->cam, &st0);
	uint64_t copies0 = st0.copies;
	for (int t = 0; t < 5000; t += 100) {
		run_ms(b, 100);
		vc_cam_get_stats(c->cam, &st0);
		if (!copy || st0.copies > copies0 || c->n_held >= MAX_HELD)
			break;
	}
	vc_cam_get_stats(c->cam, &st0);
	uint64_t f0 = c->frames;
	double u0, s0, u1, s1, t0 = mono_s();
	cpu_s(&u0, &s0);
	run_ms(b, secs * 1000);
	cpu_s(&u1, &s1);
	double t1 = mono_s();
	vc_cam_get_stats(c->cam, &st1);
	w->frames = c->frames - f0;
	w->user_us = w->frames ? (u1 - u0) * 1e6 / (double)w->frames : 0;
	w->sys_us = w->frames ? (s1 - s0) * 1e6 / (double)w->frames : 0;
	w->cpu_us = w->user_us + w->sys_us;
	w->fps = (double)w->frames / (t1 - t0);
	w->copied = w->frames ? (double)(st1.copies - st0.copies) / (double)w->frames : 0;
	w->dropped = st1.dropped - st0.dropped;
	w->restarts = st1.restarts - st0.restarts;
	if (getenv("VIVID_BENCH_VERBOSE"))
		printf("  window %s: %llu frames %.1f fps %.0f us/f (user %.0f sys %.0f) dropped %llu restarts %llu\n",
		       copy ? "copy" : "lend", (unsigned long long)w->frames, w->fps, w->cpu_us,
		       w->user_us, w->sys_us,
		       (unsigned long long)w->dropped, (unsigned long long)w->restarts);
}

struct bench_mode {
	const char *input_name;
	int input; /* vivid's default inputs: 0 webcam, 3 HDMI */
	uint32_t w, h;
};

static int bench(const char *dev, const struct bench_mode *bm, int secs)
{
	struct event_base *b = event_base_new();
	struct vc_conf_cam cfg = { .name = (char *)"bench", .device = (char *)dev, .input = bm->input,
				     .idle_stop_ms = -1 };
	struct consumer c = { 0 };
	struct window best[2] = { { 0 } };
	int ret = 0;

	/* the fastest rate vivid offers at this size (it picks the nearest) */
	cfg.mode = (struct vc_mode){ vc_fmt_find("YUYV")->fourcc, bm->w, bm->h, { 1, 60 } };
	if (!b || vc_cam_new(b, &cfg, &c.cam) < 0) {
		fprintf(stderr, "vivid_bench: no event base / camera\n");
		return 1;
	}
	vc_cam_set_callbacks(c.cam, on_frame, NULL, &c);
	vc_cam_acquire(c.cam);
	if (wait_mode(b, c.cam, 0, 0, 15000) < 0) {
		printf("%-7s %4ux%-5u: FAIL not streaming after 15 s\n", bm->input_name, bm->w, bm->h);
		ret = 1;
		goto out;
	}
	if (bm->input == 3) {
		struct vc_v4l2_dv dv;
		if (find_dv(c.cam, bm->w, bm->h, &dv) < 0 ||
		    vc_cam_reconfigure(c.cam, set_dv, &dv, sizeof(dv)) < 0) {
			printf("%-7s %4ux%-5u: FAIL no %ux%up60 DV timings\n", bm->input_name,
			       bm->w, bm->h, bm->w, bm->h);
			ret = 1;
			goto out;
		}
	}
	if (wait_mode(b, c.cam, bm->w, bm->h, 15000) < 0) {
		struct vc_mode m;
		vc_cam_get_mode(c.cam, &m, NULL);
		printf("%-7s %4ux%-5u: FAIL streaming %ux%u, not the size asked\n", bm->input_name,
		       bm->w, bm->h, m.width, m.height);
		ret = 1;
		goto out;
	}
	run_ms(b, 1000); /* warm up: buffers faulted in, rate settled */
	for (int round = 0; round < ROUNDS; round++) {
		for (int copy = 0; copy < 2; copy++) {
			struct window w, *k = &best[copy];
			measure(b, &c, copy, secs, &w);
			/* sums over the rounds: CPU time is sampled per tick */
			k->cpu_us += w.cpu_us * (double)w.frames;
			k->user_us += w.user_us * (double)w.frames;
			k->frames += w.frames;
			k->fps += w.fps / ROUNDS;
			k->copied += w.copied * (double)w.frames;
		}
	}
	for (int copy = 0; copy < 2; copy++) {
		struct window *k = &best[copy];
		double n = k->frames ? (double)k->frames : 1;
		k->cpu_us /= n;
		k->user_us /= n;
		k->copied /= n;
	}
	drop_held(&c);
	const struct window *l = &best[0], *k = &best[1];
	printf("%-6s %4ux%-5u %5.1f %5.1f | %8.0f %8.0f %6.2fx | %8.0f %8.0f %6.2fx | %4.0f%% %4.0f%%\n",
	       bm->input_name, bm->w, bm->h, l->fps, k->fps, l->cpu_us, k->cpu_us,
	       l->cpu_us > 0 ? k->cpu_us / l->cpu_us : 0, l->user_us, k->user_us,
	       l->user_us > 0 ? k->user_us / l->user_us : 0, 100 * l->copied, 100 * k->copied);
	if (!l->frames || !k->frames || k->copied < 0.9 || l->copied > 0.1) {
		printf("%-6s %4ux%-5u: FAIL the paths were not what was asked (frames %llu/%llu)\n",
		       bm->input_name, bm->w, bm->h, (unsigned long long)l->frames,
		       (unsigned long long)k->frames);
		ret = 1;
	}
out:
	drop_held(&c);
	vc_cam_release(c.cam);
	vc_cam_free(c.cam);
	event_base_free(b);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct bench_mode modes[] = {
		{ "webcam", 0, 1280, 720 },
		{ "webcam", 0, 1920, 1080 },
		{ "hdmi", 3, 1280, 720 },
		{ "hdmi", 3, 1920, 1080 },
	};
	const char *accel = getenv("VIVID_VM_ACCEL");
	int secs = argc > 2 ? atoi(argv[2]) : 4;
	int ret = 0;

	if (argc < 2 || secs < 1) {
		fprintf(stderr, "usage: vivid_bench DEV [SECONDS per window]\n");
		return 2;
	}
	evthread_use_pthreads(); /* capture.c's release callbacks may run on any thread */
	vc_log_level = VC_LOG_ERROR;
	printf("vivid_bench %s: CPU per captured frame of this process (getrusage, all\n"
	       "threads), YUYV, %d s windows, %d rounds per path, averaged.\n"
	       "lend = zero copy (the frame is the mmap'd buffer), copy = every frame copied\n"
	       "into capture.c's pool; copied = share of frames that took the copy path.\n"
	       "Run it on ONE vCPU: on two, vivid's kthread holds the device mutex while\n"
	       "it draws a frame and our ioctls spin on it from the other CPU, which shows\n"
	       "up as our sys time (the vivid drawing cost, not ours).\n",
	       argv[1], secs, ROUNDS);
	if (accel && strcmp(accel, "tcg") == 0)
		printf("NOTE: the guest CPU is emulated (QEMU TCG, no KVM): absolute times are\n"
		       "inflated many times over; compare the copy/lend ratios, not the numbers.\n");
	printf("%-6s %-10s %11s | %-24s | %-24s | %s\n", "", "", "fps", "user+sys us/frame",
	       "user us/frame", "copied");
	printf("%-6s %-10s %5s %5s | %8s %8s %7s | %8s %8s %7s | %5s %5s\n", "input", "size",
	       "lend", "copy", "lend", "copy", "ratio", "lend", "copy", "ratio", "lend", "copy");
	fflush(stdout);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ret |= bench(argv[1], &modes[i], secs);
		fflush(stdout);
	}
	return ret;
}
