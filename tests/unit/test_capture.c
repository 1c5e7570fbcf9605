/* capture.c on a real event_base with the test-pattern and the fault source:
 * rate, content, lending and copies, releases from another thread, unplug,
 * STREAMON/QBUF failures, bad buffers, stalls, source change, idle stop,
 * mode change, freeing with frames out. */
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <linux/videodev2.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "common/jpeg.h"
#include "common/pool.h"
#include "server/capture/capture.h"
#include "server/capture/testsrc.h"

#define MAX_HELD 64

struct rec {
	struct vc_cam *cam;
	unsigned frames;
	unsigned events;
	int hold;                 /* keep this many frames */
	struct vc_frame *held[MAX_HELD];
	unsigned n_held;
	int saw[4];               /* states seen */
	enum vc_cam_state states[64];
	unsigned n_states;
	uint32_t last_w, last_fourcc;
	int content_checked, content_bad;
	int sleep_ms;             /* slow consumer */
	unsigned streaming_at;    /* frames when STREAMING was last entered */
	uint64_t restarts_seen;   /* polled by the wait conditions */
	unsigned restart_at;      /* frames when a new restart was first seen */
	unsigned want;            /* frame target of a wait condition */
	int have_seq;
	uint64_t first_seq, last_seq; /* source sequence numbers delivered */
	int64_t first_ts, last_ts;    /* source clock of the first and last frame */
	unsigned early;               /* frames delivered before their source time */
	int give_back;                /* drop held frames when capture drains */
	unsigned drain_events;        /* events seen with vc_cam_draining */
};

/* Copies come from a frame pool; lent frames have capture's own release. */
static vc_frame_release_fn pool_release;

static int is_lent(const struct vc_frame *f)
{
	return f->release && f->release != pool_release;
}

static void on_frame(void *opaque, struct vc_frame *f)
{
	struct rec *r = opaque;

	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (f->ts_us > (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000)
		r->early++;
	r->frames++;
	if (!r->have_seq) {
		r->first_seq = f->seq;
		r->first_ts = f->ts_us;
	}
	r->have_seq = 1;
	r->last_seq = f->seq;
	r->last_ts = f->ts_us;
	r->last_w = f->geom.width;
	r->last_fourcc = f->fmt->fourcc;
	if (r->n_held < (unsigned)r->hold && r->n_held < MAX_HELD)
		r->held[r->n_held++] = vc_frame_ref(f);
	if (r->sleep_ms) {
		struct timespec ts = { 0, r->sleep_ms * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static void drop_held(struct rec *r);

static void on_event(void *opaque, struct vc_cam *cam)
{
	struct rec *r = opaque;
	enum vc_cam_state s = vc_cam_get_state(cam);

	r->events++;
	r->saw[s] = 1;
	if (vc_cam_draining(cam)) {
		r->drain_events++;
		if (r->give_back) {
			drop_held(r);
			r->hold = 0;
		}
	}
	if (!r->n_states || r->states[r->n_states - 1] != s) {
		if (s == VC_CAM_STREAMING)
			r->streaming_at = r->frames;
		if (r->n_states < 64)
			r->states[r->n_states++] = s;
	}
}

static void run_ms(struct event_base *b, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

/* Wait for conditions, not for frame counts in fixed wall-clock windows:
 * a loaded 2-core CI machine or qemu-user (VC_TEST_EMULATED, 5-20x slower)
 * delays the loop by many frame intervals. The deadline only bounds how
 * long a broken build takes to fail. */
#define WAIT_MS 10000

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_until(struct event_base *b, struct rec *r, int (*cond)(struct rec *), int ms)
{
	const char *emu = getenv("VC_TEST_EMULATED");
	int64_t end = now_ms() + (int64_t)ms * (emu && *emu && strcmp(emu, "0") ? 3 : 1);

	while (!cond(r)) {
		if (now_ms() >= end)
			return 0;
		run_ms(b, 5);
	}
	return 1;
}

/* Streaming again with r->want frames delivered since the restart (counted
 * from when the restart counter moved, polled every few ms). */
static int resumed(struct rec *r)
{
	struct vc_cam_stats st;

	vc_cam_get_stats(r->cam, &st);
	if (st.restarts != r->restarts_seen) {
		r->restarts_seen = st.restarts;
		r->restart_at = r->frames;
	}
	return st.restarts > 0 && vc_cam_get_state(r->cam) == VC_CAM_STREAMING &&
	       r->frames - r->streaming_at >= r->want && r->frames - r->restart_at >= r->want;
}

static int got_frames(struct rec *r)
{
	return r->frames >= r->want;
}

static int got_held(struct rec *r)
{
	return r->n_held >= (unsigned)r->hold;
}

/* A frame after a mode change arrived (any new-width frame). */
static int new_mode(struct rec *r)
{
	return r->frames >= r->want && r->last_w == 32;
}

static struct vc_cam *cam_open_cfg(struct event_base *b, const struct vc_conf_cam *cfg,
				   struct rec *r)
{
	struct vc_cam *cam = NULL;

	memset(r, 0, sizeof(*r));
	CHECK(vc_cam_new(b, cfg, &cam) == 0, "%s: new", cfg->device);
	if (cam)
		vc_cam_set_callbacks(cam, on_frame, on_event, r);
	r->cam = cam;
	return cam;
}

static struct vc_cam *cam_open(struct event_base *b, const char *path, struct rec *r, int idle_ms,
			       int stall_ms)
{
	struct vc_conf_cam cfg = { .name = (char *)"t", .device = (char *)path, .input = -1,
				     .idle_stop_ms = idle_ms, .stall_timeout_ms = stall_ms };

	return cam_open_cfg(b, &cfg, r);
}

static void drop_held(struct rec *r)
{
	for (unsigned i = 0; i < r->n_held; i++)
		vc_frame_unref(r->held[i]);
	r->n_held = 0;
}

/* A frame's bytes against what the pattern must be for its number. */
static int frame_matches(const struct vc_frame *f, const struct vc_mode *m)
{
	size_t cap[3] = { 0 }, used[3];
	uint8_t *mem[3] = { 0 };
	int ok = 1;

	for (int p = 0; p < f->geom.mem_planes; p++) {
		cap[p] = f->geom.mem_size[p];
		mem[p] = malloc(cap[p]);
	}
	if (vc_testsrc_render(m, f->seq, mem, cap, used) < 0)
		ok = 0;
	for (int p = 0; ok && p < f->geom.mem_planes; p++)
		ok = used[p] == f->bytesused[p] && !memcmp(mem[p], f->mem[p], used[p]);
	for (int p = 0; p < 3; p++)
		free(mem[p]);
	return ok;
}

/* The source clock has reached r->want frames (delivered + dropped) and
 * the capture has measured its frame rate once (a 1 s window). */
static int clock_due(struct rec *r)
{
	struct vc_cam_stats st;

	vc_cam_get_stats(r->cam, &st);
	return st.frames + st.dropped >= r->want && st.fps > 0;
}

static void rate_and_content(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:YUYV", &r, 1000, 0);
	struct vc_cam_stats st;
	struct vc_mode m;
	struct vc_geom g;

	run_ms(b, 50);
	CHECK(vc_cam_get_state(cam) == VC_CAM_IDLE, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	CHECK(r.frames == 0, "frames without a consumer");
	vc_cam_get_mode(cam, &m, &g);
	CHECK(m.width == 64 && m.height == 48 && m.fourcc == V4L2_PIX_FMT_YUYV &&
		      g.plane[0].stride == 128, "mode %ux%u", m.width, m.height);
	CHECK(vc_cam_caps(cam)->n_fmts > 5, "caps");
	vc_cam_acquire(cam);
	int64_t t0 = now_ms();
	/* Judged once the source clock has produced 1.2 s of frames at 100 fps,
	 * not after a fixed 1.2 s: opening the source took a varying part of
	 * that window under qemu-user. */
	r.want = 120;
	int due_ok = wait_until(b, &r, clock_due, WAIT_MS);
	int64_t el = now_ms() - t0;
	vc_cam_get_stats(cam, &st);
	uint64_t due = st.frames + st.dropped;
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "not streaming");
	/* The source clock runs at 100 fps: its frames are 10 ms apart in its
	 * own time, none is handed out before that time, and (against the wall
	 * clock) no more fell due than 100 fps allows since the acquire (the
	 * first is due one interval after start). These replace ">= 105 due in
	 * a fixed 1.2 s", which counted the source's start-up time as well. */
	CHECK(r.last_seq > r.first_seq &&
		      r.last_ts - r.first_ts == (int64_t)(r.last_seq - r.first_seq) * 10000 && r.early == 0,
	      "source clock: frames %llu..%llu at %lld..%lld us, %u early",
	      (unsigned long long)r.first_seq, (unsigned long long)r.last_seq, (long long)r.first_ts,
	      (long long)r.last_ts, r.early);
	CHECK(due_ok && due >= 120 && due <= (uint64_t)el / 10 + 5,
	      "%llu frames + %llu dropped in %lld ms at 100 fps", (unsigned long long)st.frames,
	      (unsigned long long)st.dropped, (long long)el);
	/* Delivered: at least 3/4 of what fell due (an idle machine drops
	 * none; was >= 90 of the ~119 due in a fixed 1.2 s). */
	CHECK(st.frames * 4 >= due * 3, "only %llu of %llu frames delivered",
	      (unsigned long long)st.frames, (unsigned long long)due);
	CHECK(st.frames == r.frames, "stats %llu vs %u", (unsigned long long)st.frames, r.frames);
	CHECK(st.fps > 70 && st.fps < 115, "fps %.1f", st.fps);
	CHECK(st.errors == 0 && st.restarts == 0 && st.copies == 0,
	      "errors %llu restarts %llu copies %llu", (unsigned long long)st.errors,
	      (unsigned long long)st.restarts, (unsigned long long)st.copies);
	r.hold = 3;
	wait_until(b, &r, got_held, WAIT_MS);
	CHECK(r.n_held == 3, "held %u", r.n_held);
	for (unsigned i = 0; i < r.n_held; i++)
		CHECK(frame_matches(r.held[i], &m), "frame %llu differs from the pattern",
		      (unsigned long long)r.held[i]->seq);
	CHECK(r.n_held == 3 && r.held[1]->seq > r.held[0]->seq, "seq order");
	drop_held(&r);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

/* Consumers hold every frame: lending stops at the floor, the rest are
 * copies, the driver keeps getting buffers (no drops), and lent memory is
 * never overwritten while held. */
/* One hold_copies measurement: 40 frames, 30 of them held. 0 = done (the
 * drops fit), 1 = too many drops (only then measured again). */
static int hold_copies_once(int last)
{
	struct event_base *b = event_base_new();
	struct rec r;
	/* 25 fps: with one buffer left queued, a loop late by more than one
	 * interval loses frames (as with a driver), so a longer interval keeps
	 * load-induced drops apart from starvation. */
	struct vc_cam *cam = cam_open(b, "test:64x48@25:YUYV", &r, 1000, 0);
	struct vc_cam_stats st;
	struct vc_mode m;
	int again = 0;

	vc_cam_acquire(cam);
	r.hold = 30;
	r.want = 40;
	wait_until(b, &r, got_frames, WAIT_MS);
	vc_cam_get_mode(cam, &m, NULL);
	vc_cam_get_stats(cam, &st);
	CHECK(r.n_held == 30, "held %u", r.n_held);
	/* 4 buffers, floor 1: 3 lent, every later frame is a copy. */
	CHECK(st.copies + 3 == st.frames, "copies %llu of %llu frames",
	      (unsigned long long)st.copies, (unsigned long long)st.frames);
	/* Timing slack for loaded machines (one queued buffer tolerates one
	 * late interval); a starved driver would drop nearly every frame, in
	 * every attempt. A loop late by seconds on a busy host drops a
	 * quarter once: measured again, up to three times. */
	if (st.dropped * 4 >= st.frames && !last) {
		fprintf(stderr, "hold_copies: %llu of %llu frames dropped (a busy host?): again\n",
			(unsigned long long)st.dropped, (unsigned long long)st.frames);
		again = 1;
	} else {
		CHECK(st.dropped * 4 < st.frames, "dropped %llu of %llu while consumers held frames "
		      "(in each of 3 attempts)", (unsigned long long)st.dropped,
		      (unsigned long long)st.frames);
	}
	int lent = 0;
	for (unsigned i = 0; i < r.n_held; i++) {
		lent += is_lent(r.held[i]);
		CHECK(frame_matches(r.held[i], &m), "held frame %u (seq %llu) changed", i,
		      (unsigned long long)r.held[i]->seq);
	}
	CHECK(lent == 3, "%d lent frames", lent);
	r.hold = 0;
	drop_held(&r);
	uint64_t copies = st.copies;
	r.want = r.frames + 8;
	wait_until(b, &r, got_frames, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(st.copies == copies, "copies after returning buffers: %llu -> %llu",
	      (unsigned long long)copies, (unsigned long long)st.copies);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
	return again;
}

static void hold_copies(void)
{
	for (int i = 0; i < 3 && hold_copies_once(i == 2); i++)
		;
}

/* Frames released on another thread come back to the loop. */
struct thr_arg {
	struct vc_frame *f[MAX_HELD];
	unsigned n;
};

static void *unref_thread(void *p)
{
	struct thr_arg *a = p;

	for (unsigned i = 0; i < a->n; i++)
		vc_frame_unref(a->f[i]);
	return NULL;
}

static void release_from_thread(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:YUYV", &r, 1000, 0);
	struct vc_cam_stats st;

	vc_cam_acquire(cam);
	for (int round = 0; round < 5; round++) {
		r.hold = 3;
		wait_until(b, &r, got_held, WAIT_MS);
		/* Returned slots were re-queued: the first frames of a round are
		 * lent again, not copies. */
		int lent = 0;
		for (unsigned i = 0; i < r.n_held; i++)
			lent += is_lent(r.held[i]);
		CHECK(r.n_held == 3 && lent == 3, "round %d: %d of %u held frames lent", round,
		      lent, r.n_held);
		struct thr_arg a = { .n = r.n_held };
		memcpy(a.f, r.held, sizeof(r.held[0]) * r.n_held);
		r.n_held = 0;
		r.hold = 0;
		pthread_t t;
		pthread_create(&t, NULL, unref_thread, &a);
		pthread_join(t, NULL);
	}
	unsigned before = r.frames;
	r.want = before + 15;
	wait_until(b, &r, got_frames, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(r.frames - before >= 15, "only %u frames after thread releases", r.frames - before);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static void unplug(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "fault:enodev@20", &r, 1000, 0);
	struct vc_cam_stats st;

	vc_cam_acquire(cam);
	r.want = 40; /* resumed: 40 new frames after the recovery */
	int ok = wait_until(b, &r, resumed, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(r.saw[VC_CAM_ABSENT] && r.n_states >= 3, "never went absent (%u states)",
	      r.n_states);
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "not streaming again: %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	CHECK(st.restarts == 1, "restarts %llu", (unsigned long long)st.restarts);
	CHECK(ok, "%u frames, %u since streaming again: did not resume", r.frames,
	      r.frames - r.streaming_at);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static int noop_reconf(struct vc_src *src, const void *arg)
{
	(void)src;
	(void)arg;
	return 0;
}

/* A restart while a consumer keeps a lent frame (an output's latest frame
 * for late joiners): capture says it is draining, the consumer gives the
 * frame back, and streaming resumes at once instead of after DRAIN_MS and
 * a reopen (which a V4L2 device refuses while its old buffers are out). */
static void draining_asks_back(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:YUYV", &r, 1000, 0);

	vc_cam_acquire(cam);
	r.hold = 1;
	r.give_back = 1;
	CHECK(wait_until(b, &r, got_held, WAIT_MS) && is_lent(r.held[0]), "no lent frame held");
	r.want = r.frames + 5;
	int64_t t0 = now_ms();
	CHECK(vc_cam_reconfigure(cam, noop_reconf, NULL, 0) == 0, "reconfigure");
	int ok = wait_until(b, &r, got_frames, WAIT_MS);
	int64_t el = now_ms() - t0;
	CHECK(ok && r.drain_events >= 1 && r.n_held == 0,
	      "draining events %u (want >= 1), held %u, streaming again: %s after %lld ms",
	      r.drain_events, r.n_held, ok ? "yes" : "no", (long long)el);
	const char *emu = getenv("VC_TEST_EMULATED");
	if (!(emu && *emu && strcmp(emu, "0")))
		CHECK(el < 1000, "5 frames %lld ms after the reconfiguration (a drain that waits "
			       "for its timeout takes 2000)", (long long)el);
	vc_cam_release(cam);
	drop_held(&r);
	vc_cam_free(cam);
	event_base_free(b);
}

struct keep_probe {
	int *calls, *last;
	int value;
};

static int keep_fn(struct vc_src *src, const void *arg)
{
	struct keep_probe p;

	(void)src;
	memcpy(&p, arg, sizeof(p));
	(*p.calls)++;
	*p.last = p.value;
	return 0;
}

/* A kept reconfiguration (S_STD, S_DV_TIMINGS on a V4L2 device) runs on
 * every open of the source, here the first and the one after an unplug,
 * with the arg of the latest call for its fn. */
static void kept_reconfigure(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	/* another path than unplug's: a fault fires once per path and process */
	struct vc_cam *cam = cam_open(b, "fault:enodev@25", &r, 1000, 0);
	int calls = 0, last = 0;
	struct keep_probe p = { &calls, &last, 1 };
	static const uint8_t big[VC_CAM_RECONF_ARG_MAX + 1];
	struct vc_cam_stats st;

	CHECK(vc_cam_reconfigure_keep(cam, keep_fn, big, sizeof(big)) == -E2BIG, "too big");
	CHECK(vc_cam_reconfigure_keep(cam, keep_fn, &p, sizeof(p)) == 0, "keep");
	p.value = 2;
	CHECK(vc_cam_reconfigure_keep(cam, keep_fn, &p, sizeof(p)) == 0, "keep again");
	CHECK(calls == 0, "ran %d times without a source", calls);
	vc_cam_acquire(cam);
	r.want = 40;
	int ok = wait_until(b, &r, resumed, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(ok && st.restarts == 1, "restarts %llu, %u frames", (unsigned long long)st.restarts,
	      r.frames);
	CHECK(calls == 2 && last == 2, "kept fn ran %d times (want 2: open, reopen), value %d",
	      calls, last);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static void streamon_fails(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "fault:streamon=2", &r, 1000, 0);
	struct vc_cam_stats st;

	vc_cam_acquire(cam);
	r.want = 20; /* after backoff 250 + 500 ms */
	int ok = wait_until(b, &r, resumed, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(r.saw[VC_CAM_ERROR], "no error state");
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	CHECK(st.restarts == 1 && ok, "restarts %llu frames %u (%u since streaming)",
	      (unsigned long long)st.restarts, r.frames, r.frames - r.streaming_at);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static void bad_buffers(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "fault:error@5,short@9", &r, 1000, 0);
	struct vc_cam_stats st;

	vc_cam_acquire(cam);
	r.want = 25;
	int ok = wait_until(b, &r, got_frames, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(st.errors == 2, "errors %llu", (unsigned long long)st.errors);
	CHECK(ok && st.restarts == 0, "frames %llu restarts %llu",
	      (unsigned long long)st.frames, (unsigned long long)st.restarts);
	/* Like a driver, the test source skips sequence numbers when the loop
	 * is late (dropped > 0 on a loaded machine is correct). Every number
	 * between the first and the last delivered frame (frames 10+ are all
	 * good) is exactly one of delivered, discarded (errors) or dropped: a
	 * discarded buffer also counted as a drop breaks the sum. */
	uint64_t span = r.last_seq - r.first_seq + 1;
	CHECK(st.frames + st.errors + st.dropped == span,
	      "frames %llu + errors %llu + dropped %llu != %llu sequence numbers",
	      (unsigned long long)st.frames, (unsigned long long)st.errors,
	      (unsigned long long)st.dropped, (unsigned long long)span);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static void stall_qbuf_event(void)
{
	static const char *paths[] = { "fault:stall@10", "fault:qbuf@8", "fault:event@6" };

	for (size_t i = 0; i < 3; i++) {
		struct event_base *b = event_base_new();
		struct rec r;
		struct vc_cam *cam = cam_open(b, paths[i], &r, 1000, 200);
		struct vc_cam_stats st;

		vc_cam_acquire(cam);
		r.want = 30;
		int ok = wait_until(b, &r, resumed, WAIT_MS);
		vc_cam_get_stats(cam, &st);
		CHECK(st.restarts == 1, "%s: restarts %llu", paths[i],
		      (unsigned long long)st.restarts);
		CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "%s: state %s", paths[i],
		      vc_cam_state_name(vc_cam_get_state(cam)));
		CHECK(ok, "%s: %u frames, %u since the restart", paths[i], r.frames,
		      r.frames - r.restart_at);
		vc_cam_release(cam);
		vc_cam_free(cam);
		event_base_free(b);
	}
}

static void absent_at_start(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "fault:open=2", &r, 1000, 0);

	run_ms(b, 100);
	CHECK(vc_cam_get_state(cam) == VC_CAM_ABSENT, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	vc_cam_acquire(cam);
	r.want = 11;
	int ok = wait_until(b, &r, got_frames, WAIT_MS);
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	CHECK(ok, "%u frames", r.frames);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static void idle_stop(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:GREY", &r, 100, 0);

	vc_cam_acquire(cam);
	vc_cam_acquire(cam);
	run_ms(b, 200);
	vc_cam_release(cam);
	run_ms(b, 200);
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "stopped with a consumer left");
	vc_cam_release(cam);
	run_ms(b, 50);
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "stopped before idle_stop_ms");
	run_ms(b, 150);
	CHECK(vc_cam_get_state(cam) == VC_CAM_IDLE, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	unsigned n = r.frames;
	run_ms(b, 200);
	CHECK(r.frames == n, "frames while idle");
	vc_cam_acquire(cam);
	r.want = n + 11;
	wait_until(b, &r, got_frames, WAIT_MS);
	CHECK(r.frames > n + 10 && vc_cam_get_state(cam) == VC_CAM_STREAMING, "no restart");
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static int closed_idle(struct rec *r)
{
	return vc_cam_closed_idle(r->cam);
}

static int open_idle(struct rec *r)
{
	return vc_cam_get_state(r->cam) == VC_CAM_IDLE && !vc_cam_closed_idle(r->cam);
}

/* idle_close: an idle camera is closed after idle_stop_ms (so the kernel
 * may suspend a USB one), opened again by a viewer or a request that needs
 * the device, and closed again after; frames held across the close stay
 * valid. "never" (and the default on a device not on USB) keeps it open. */
static void idle_close(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_conf_cam cfg = { .name = (char *)"t", .device = (char *)"test:64x48@100:GREY",
				     .input = -1, .idle_stop_ms = 100,
				     .idle_close = VC_IDLE_CLOSE_ALWAYS };
	struct vc_cam *cam = cam_open_cfg(b, &cfg, &r);
	uint32_t idx = 9;

	CHECK(wait_until(b, &r, closed_idle, WAIT_MS), "not closed %d ms after the first open",
	      WAIT_MS);
	CHECK(vc_cam_get_state(cam) == VC_CAM_IDLE && !vc_cam_source(cam), "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	/* the current input is known without waking it (the mode policy
	 * asks on every decision); a request that needs the device opens it */
	struct vc_src_input in;
	CHECK(vc_cam_input_get(cam, &idx) == 0 && idx == 0 &&
		      vc_cam_input_enum(cam, 0, &in) == 0 && vc_cam_closed_idle(cam),
	      "current input of a closed camera: %u, closed %d", idx, vc_cam_closed_idle(cam));
	CHECK(vc_cam_input_enum(cam, 1, &in) == 0 && !strcmp(in.name, "Still bars") &&
		      !vc_cam_closed_idle(cam),
	      "input_enum of another input on a closed camera");
	CHECK(wait_until(b, &r, closed_idle, WAIT_MS), "not closed again after the request");
	/* a viewer: streams; frames held while it closes again */
	vc_cam_acquire(cam);
	r.want = 10;
	r.hold = 2;
	CHECK(wait_until(b, &r, got_frames, WAIT_MS) && !vc_cam_closed_idle(cam),
	      "%u frames after acquire", r.frames);
	wait_until(b, &r, got_held, WAIT_MS);
	vc_cam_release(cam);
	CHECK(wait_until(b, &r, closed_idle, WAIT_MS), "not closed after the viewer left");
	unsigned n = r.frames;
	run_ms(b, 100);
	CHECK(r.frames == n && r.n_held == 2 && r.held[0]->bytesused[0] == 64 * 48,
	      "frames while closed %u -> %u", n, r.frames);
	drop_held(&r);
	r.hold = 0;
	vc_cam_acquire(cam);
	r.want = n + 10;
	CHECK(wait_until(b, &r, got_frames, WAIT_MS) &&
		      vc_cam_get_state(cam) == VC_CAM_STREAMING,
	      "no stream after reopening: %u frames", r.frames);
	vc_cam_release(cam);
	vc_cam_free(cam);

	/* never: idle, stopped, still open */
	cfg.idle_close = VC_IDLE_CLOSE_NEVER;
	cam = cam_open_cfg(b, &cfg, &r);
	vc_cam_acquire(cam);
	r.want = 5;
	wait_until(b, &r, got_frames, WAIT_MS);
	vc_cam_release(cam);
	CHECK(wait_until(b, &r, open_idle, WAIT_MS), "not idle");
	run_ms(b, 300);
	CHECK(open_idle(&r) && vc_cam_source(cam), "closed with idle_close = never");
	vc_cam_free(cam);
	event_base_free(b);
}

static void set_mode(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:YUYV", &r, 1000, 0);
	struct vc_mode m = { V4L2_PIX_FMT_NV12, 32, 16, { 1, 50 } }, got;
	struct vc_geom g;

	vc_cam_acquire(cam);
	r.hold = 2; /* lent frames across the change */
	wait_until(b, &r, got_held, WAIT_MS);
	CHECK(r.n_held == 2 && r.last_w == 64, "width %u, %u held", r.last_w, r.n_held);
	unsigned ev = r.events;
	CHECK(vc_cam_set_mode(cam, &m) == 0, "set_mode");
	struct vc_mode bad = { 0x31313131, 32, 16, { 0, 0 } };
	CHECK(vc_cam_set_mode(cam, &bad) == -EINVAL, "unknown fourcc accepted");
	/* Held frames: the source is reopened after the drain time. */
	r.want = r.frames + 1;
	wait_until(b, &r, new_mode, WAIT_MS);
	CHECK(r.events > ev, "no event for the mode change");
	vc_cam_get_mode(cam, &got, &g);
	CHECK(got.width == 32 && got.height == 16 && got.fourcc == V4L2_PIX_FMT_NV12 &&
		      got.ival.den == 50 && g.color_planes == 2, "mode %ux%u", got.width,
	      got.height);
	CHECK(r.last_w == 32 && r.last_fourcc == V4L2_PIX_FMT_NV12, "frames %ux? after change",
	      r.last_w);
	CHECK(r.n_held == 2 && r.held[0]->geom.width == 64, "held frames changed");
	r.hold = 0;
	drop_held(&r);
	/* The new interval, on the source clock: timestamps of the frames
	 * after the change advance 20 ms per sequence number (lateness only
	 * skips numbers); and in wall-clock time frames never come faster
	 * than 50 fps (load can only slow them down). */
	unsigned n = r.frames;
	uint64_t seq0 = r.last_seq;
	int64_t ts0 = r.last_ts, t0 = now_ms();
	r.want = n + 20;
	int ok = wait_until(b, &r, got_frames, WAIT_MS);
	int64_t el = now_ms() - t0;
	CHECK(ok && r.last_w == 32, "%u frames after the change", r.frames - n);
	uint64_t dseq = r.last_seq - seq0;
	int64_t dts = r.last_ts - ts0;
	CHECK(dseq >= 20 && dts > (int64_t)dseq * 19900 && dts < (int64_t)dseq * 20100,
	      "%lld us for %llu frames at 50 fps", (long long)dts, (unsigned long long)dseq);
	CHECK((int64_t)(r.frames - n) <= el / 20 + 2, "%u frames in %lld ms at 50 fps",
	      r.frames - n, (long long)el);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

/* Freeing the camera with frames out: they stay readable and their last
 * unref (here from a thread) closes the source. ASan/valgrind watch. */
static void free_with_frames_out(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:RGB3", &r, 1000, 0);
	struct vc_mode m;

	vc_cam_acquire(cam);
	r.hold = 3;
	wait_until(b, &r, got_held, WAIT_MS);
	vc_cam_get_mode(cam, &m, NULL);
	vc_cam_free(cam);
	CHECK(r.n_held == 3, "held %u", r.n_held);
	for (unsigned i = 0; i < r.n_held; i++)
		CHECK(frame_matches(r.held[i], &m), "frame %u after free", i);
	struct thr_arg a = { .n = r.n_held };
	memcpy(a.f, r.held, sizeof(r.held[0]) * r.n_held);
	pthread_t t;
	pthread_create(&t, NULL, unref_thread, &a);
	pthread_join(t, NULL);
	event_base_free(b);
}

/* A slow consumer: the driver runs out of buffers, sequence gaps count. */
static void drops(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:YUYV", &r, 1000, 0);
	struct vc_cam_stats st;

	vc_cam_acquire(cam);
	r.sleep_ms = 30;
	/* Judged once the source clock has produced 60 frames (0.6 s at
	 * 100 fps), not after a fixed 500 ms of wall time: under qemu-user on
	 * a loaded host that window held only 35 (8 delivered, 27 dropped).
	 * A 30 ms consumer takes at most 1 in 3: more than 20 of 60 dropped. */
	r.want = 60;
	int due_ok = wait_until(b, &r, clock_due, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(due_ok && st.dropped > 20, "dropped %llu of %llu with a 30 ms consumer at 100 fps",
	      (unsigned long long)st.dropped, (unsigned long long)(st.frames + st.dropped));
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

/* MJPEG: corrupt/truncated frames are discarded and counted; delivered
 * frames parse, their bytesused is the JPEG's length and they carry what
 * capture's parse found (f->jpeg, so the fan-out does not parse again). */
static struct vc_jpeg_info last_info;
static int last_parse = -1;

static void on_mjpeg(void *opaque, struct vc_frame *f)
{
	on_frame(opaque, f);
	last_parse = vc_jpeg_parse(f->mem[0], f->bytesused[0], &last_info);
	if (last_parse == 0 && last_info.size != f->bytesused[0])
		last_parse = -1000;
	if (last_parse == 0 && (!f->jpeg.checked || f->jpeg.has_dht != last_info.has_dht ||
				f->jpeg.sos_off != last_info.sos_off || !f->jpeg.sos_off))
		last_parse = -2000;
}

static void mjpeg_validation(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "fault:short@4,error@7;test:64x48@100:MJPG", &r, 1000, 0);
	struct vc_cam_stats st;

	vc_cam_set_callbacks(cam, on_mjpeg, on_event, &r);
	vc_cam_acquire(cam);
	r.want = 16;
	wait_until(b, &r, got_frames, WAIT_MS);
	vc_cam_get_stats(cam, &st);
	CHECK(st.errors == 2, "errors %llu (truncated + error-flagged)",
	      (unsigned long long)st.errors);
	CHECK(r.frames > 15 && last_parse == 0 && last_info.width == 64,
	      "frames %u, last parse %d", r.frames, last_parse);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

static int input_switched(struct rec *r)
{
	uint32_t idx = 0;

	return r->events >= r->want && vc_cam_input_get(r->cam, &idx) == 0 && idx == 1;
}

/* Input switching (the test source: 0 moving, 1 still), controls absent. */
static void inputs_controls(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@100:YUYV", &r, 1000, 0);
	struct vc_src_input in;
	struct vc_src_ctrl c;
	int64_t v;
	uint32_t idx = 9;

	CHECK(vc_cam_input_enum(cam, 0, &in) == -ENODEV, "inputs before open");
	vc_cam_acquire(cam);
	r.want = 1;
	wait_until(b, &r, got_frames, WAIT_MS);
	CHECK(vc_cam_input_enum(cam, 1, &in) == 0 && !strcmp(in.name, "Still bars"), "enum");
	CHECK(vc_cam_input_enum(cam, 2, &in) == -EINVAL, "enum past the end");
	CHECK(vc_cam_input_get(cam, &idx) == 0 && idx == 0, "input %u", idx);
	CHECK(vc_cam_input_set(cam, 7) == -EINVAL, "bad input accepted");
	CHECK(vc_cam_ctrl_query(cam, 0x00980900, &c) == -ENOTTY &&
		      vc_cam_ctrl_get(cam, 0x00980900, &v) == -ENOTTY, "controls on the test source");
	unsigned ev = r.events;
	CHECK(vc_cam_input_set(cam, 1) == 0, "set input");
	r.want = ev + 1;
	wait_until(b, &r, input_switched, WAIT_MS);
	CHECK(r.events > ev && vc_cam_input_get(cam, &idx) == 0 && idx == 1, "input %u", idx);
	r.hold = 2;
	wait_until(b, &r, got_held, WAIT_MS);
	CHECK(r.n_held == 2 && r.held[0]->seq != r.held[1]->seq &&
		      !memcmp(r.held[0]->mem[0], r.held[1]->mem[0], r.held[0]->bytesused[0]),
	      "still input still moves");
	CHECK(vc_cam_get_state(cam) == VC_CAM_STREAMING, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	r.hold = 0;
	drop_held(&r);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

/* A 2 fps stream with a 200 ms stall timeout is not a stall: the timeout
 * is at least three frame intervals. */
static void slow_is_not_stall(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "test:64x48@2:GREY", &r, 1000, 200);
	struct vc_cam_stats st;

	vc_cam_acquire(cam);
	run_ms(b, 1700);
	vc_cam_get_stats(cam, &st);
	CHECK(st.restarts == 0 && r.frames >= 2 && r.frames <= 4, "restarts %llu frames %u",
	      (unsigned long long)st.restarts, r.frames);
	vc_cam_release(cam);
	vc_cam_free(cam);
	event_base_free(b);
}

/* Hotplug poke: an absent camera retries at once instead of after backoff. */
static void poke(void)
{
	struct event_base *b = event_base_new();
	struct rec r;
	struct vc_cam *cam = cam_open(b, "fault:open=3", &r, 1000, 0);

	run_ms(b, 20); /* first attempt fails; next in 250 ms */
	CHECK(vc_cam_get_state(cam) == VC_CAM_ABSENT, "state %s",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	for (int i = 0; i < 3; i++) {
		vc_cam_poke(cam);
		run_ms(b, 20);
	}
	CHECK(vc_cam_get_state(cam) == VC_CAM_IDLE, "state %s after 3 pokes in 80 ms",
	      vc_cam_state_name(vc_cam_get_state(cam)));
	vc_cam_poke(cam); /* open: no-op */
	run_ms(b, 20);
	CHECK(vc_cam_get_state(cam) == VC_CAM_IDLE, "poke disturbed an open camera");
	vc_cam_free(cam);
	event_base_free(b);
}

int main(void)
{
	evthread_use_pthreads();
	struct vc_pool *p = vc_pool_new(1);
	struct vc_frame *pf = vc_pool_get(p, 1, NULL);
	pool_release = pf->release;
	vc_frame_unref(pf);
	vc_pool_free(p);
	RUN("capture", rate_and_content);
	RUN("capture", hold_copies);
	RUN("capture", release_from_thread);
	RUN("capture", unplug);
	RUN("capture", kept_reconfigure);
	RUN("capture", draining_asks_back);
	RUN("capture", streamon_fails);
	RUN("capture", bad_buffers);
	RUN("capture", stall_qbuf_event);
	RUN("capture", absent_at_start);
	RUN("capture", idle_stop);
	RUN("capture", idle_close);
	RUN("capture", set_mode);
	RUN("capture", free_with_frames_out);
	RUN("capture", drops);
	RUN("capture", inputs_controls);
	RUN("capture", poke);
	RUN("capture", mjpeg_validation);
	RUN("capture", slow_is_not_stall);
	CHECK_EXIT();
}
