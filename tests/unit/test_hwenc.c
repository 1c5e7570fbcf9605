/* The serving layer's hardware JPEG path (server/stream/hwenc.c) with a fake
 * M2M JPEG encoder (fake_m2m.h) listed as /dev/video31: an output that only
 * encodes uses it, one copy per frame; when the device fails, the output
 * goes back to the CPU encoder at once (that frame included), the fallback is
 * counted once, the device is left alone until its retry time, and then used
 * again; `encoder = cpu` and outputs that scale never use it. Frames are fed
 * to the output directly (no HTTP, no client sockets). */
#include <errno.h>
#include <event2/event.h>
#include <linux/videodev2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "hwenc_fixture.h"
#include "server/capture/m2m_discover.h"
#include "server/stream/hwenc.h"
#include "server/stream/stream_int.h"

#define MJPG V4L2_PIX_FMT_MJPEG

/* The output serving req on the hub's mode (no user: frames come from us). */
static struct output *output(struct fixture *fx, const struct vc_request *req)
{
	struct vc_plan p;

	if (vc_negotiate_plan(&fx->h->target, req, &p) < 0)
		return NULL;
	struct output *o = output_for_plan(fx->h, req, &p);
	/* no user holds it: keep the gc (OUTPUT_LINGER_MS) from freeing it
	 * while a test waits longer than that (the hung encoder's 2 s) */
	if (o)
		o->idle_since_us = INT64_MAX / 2;
	return o;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A time limit in ms, x3 under qemu-user (VC_TEST_EMULATED), where a CPU
 * JPEG encode of 640x480 can outlast a count of short loop turns. The
 * limit only bounds how long a broken build takes to fail. */
static int64_t deadline(int ms)
{
	const char *emu = getenv("VC_TEST_EMULATED");

	return now_ms() + (int64_t)ms * (emu && *emu && strcmp(emu, "0") ? 3 : 1);
}

/* Runs the loop until o is idle: no encode in flight and, while it
 * encodes in hardware, n frames published; at most 2 s (see deadline). */
static void wait_idle(struct fixture *fx, struct output *o, uint64_t n)
{
	int64_t end = deadline(2000);

	while ((o->busy || (hwenc_path(o) && o->latest_n < n)) && now_ms() < end)
		run_ms(fx->base, 5);
}

/* A captured frame of the hub's mode, as capture would hand it. */
static void feed(struct fixture *fx, struct output *o, int n)
{
	uint64_t before = o->latest_n;

	for (int i = 0; i < n; i++) {
		const struct vc_mode *m = &fx->h->target;
		struct vc_frame *f = vc_frame_new_fmt(vc_fmt_by_fourcc(m->fourcc), m->width, m->height);
		if (!f)
			return;
		memset(vc_frame_data(f, 0), 0x80 + i, f->geom.sizeimage);
		f->bytesused[0] = f->geom.sizeimage;
		f->seq = (uint64_t)i;
		output_frame(o, f);
		vc_frame_unref(f);
		/* the fake encodes at QBUF; the worker pool needs a moment */
		wait_idle(fx, o, before + (uint64_t)i + 1);
		run_ms(fx->base, 5);
	}
}

static int latest_is_jpeg(const struct output *o, uint32_t w, uint32_t h)
{
	struct vc_jpeg_info info;

	return o->latest && vc_jpeg_parse(o->latest->mem[0], o->latest->bytesused[0], &info) == 0 &&
	       info.width == w && info.height == h;
}

static const struct vc_request full = { MJPG, 640, 480, 0, 70, 0, 0 };

static void hardware_then_fallback(void)
{
	struct fixture fx;
	struct vc_hwenc_stats st;

	if (fixture_open(&fx, "auto", "/dev/video31", V4L2_PIX_FMT_JPEG) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = output(&fx, &full);
	CHECK(o && (o->plan.steps & ~(unsigned)VC_STEP_CONVERT) == VC_STEP_ENCODE, "plan %u",
	      o ? o->plan.steps : 0);
	if (!o) {
		fixture_close(&fx);
		return;
	}
	feed(&fx, o, 5);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(fx.fake.jobs == 5 && st.frames == 5 && o->latest_n == 5, "fake encoded %d, hw frames %llu, "
	      "published %llu", fx.fake.jobs, (unsigned long long)st.frames,
	      (unsigned long long)o->latest_n);
	CHECK(st.copies == 5 && st.sessions == 1 && st.fallbacks == 0, "copies %llu sessions %llu",
	      (unsigned long long)st.copies, (unsigned long long)st.sessions);
	CHECK(hwenc_path(o) && !strcmp(hwenc_path(o), "/dev/video31") &&
	      vc_streams_hwenc_active(fx.s, 0) == hwenc_path(o), "path %s", hwenc_path(o));
	CHECK(latest_is_jpeg(o, 640, 480) && fx.fake.quality == 70, "latest JPEG, quality %d",
	      fx.fake.quality);

	/* the device goes away: this frame and the next are CPU-encoded */
	fx.fake.fail_req = VIDIOC_QBUF;
	fx.fake.fail_type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
	fx.fake.fail_err = ENODEV;
	fx.fake.fail_after = 0;
	uint64_t before = o->latest_n;
	feed(&fx, o, 3);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(o->latest_n == before + 3 && latest_is_jpeg(o, 640, 480), "after the failure %llu of 3 "
	      "frames published", (unsigned long long)(o->latest_n - before));
	CHECK(st.fallbacks == 1 && st.frames == 5 && !hwenc_path(o) && !vc_streams_hwenc_active(fx.s, 0),
	      "fallbacks %llu, hw frames %llu, path %s", (unsigned long long)st.fallbacks,
	      (unsigned long long)st.frames, hwenc_path(o));
	CHECK(st.sessions == 1, "the failed device was opened again at once (%llu sessions)",
	      (unsigned long long)st.sessions);

	/* its retry time has come and it is back */
	fx.fake.fail_req = 0;
	fx.s->hw_bad_until_us = 0;
	feed(&fx, o, 2);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(st.sessions == 2 && st.frames == 7 && hwenc_path(o), "after the retry: sessions %llu frames %llu",
	      (unsigned long long)st.sessions, (unsigned long long)st.frames);
	fixture_close(&fx);
	CHECK(fx.fake.opened == 0 && fx.fake.maps == 0, "%d open %d maps after close", fx.fake.opened,
	      fx.fake.maps);
}

/* Lent capture buffers come with dmabuf fds: the encoder reads them in
 * place (0 copies); a copied frame (no fds) in between goes to the CPU
 * without disturbing the session. */
static void dmabuf_frames(void)
{
	struct fixture fx;
	struct vc_hwenc_stats st;

	if (fixture_open(&fx, "auto", "/dev/video31", V4L2_PIX_FMT_JPEG) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = output(&fx, &full);
	const struct vc_mode *m = &fx.h->target;
	for (int i = 0; i < 4 && o; i++) {
		struct vc_frame *f = vc_frame_new_fmt(vc_fmt_by_fourcc(m->fourcc), m->width, m->height);
		if (!f)
			break;
		memset(vc_frame_data(f, 0), 0x40 + i, f->geom.sizeimage);
		f->bytesused[0] = f->geom.sizeimage;
		if (i != 2) { /* frame 2 is a copy: no fd */
			f->n_dmabuf = 1;
			f->dmabuf[0] = 50 + i;
			fx.fake.dmabuf_mem[50 + i] = vc_frame_data(f, 0);
			fx.fake.dmabuf_len[50 + i] = f->geom.sizeimage;
		}
		output_frame(o, f);
		vc_frame_unref(f); /* the session holds its own reference while it reads */
		wait_idle(&fx, o, (uint64_t)i + 1);
	}
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(o && o->latest_n == 4 && st.frames == 3 && st.copies == 0 && st.dmabuf && fx.fake.jobs == 3 &&
	      st.fallbacks == 0 && st.sessions == 1,
	      "published %llu, hw frames %llu, copies %llu, dmabuf %d, fake jobs %d, fallbacks %llu",
	      o ? (unsigned long long)o->latest_n : 0ULL, (unsigned long long)st.frames,
	      (unsigned long long)st.copies, st.dmabuf, fx.fake.jobs, (unsigned long long)st.fallbacks);
	CHECK(strstr(fx.fake.log, "REQBUFS(OUT,DMABUF,2)") != NULL, "setup: %.200s", fx.fake.log);
	fixture_close(&fx);
	CHECK(fx.fake.opened == 0 && fx.fake.maps == 0, "%d open %d maps", fx.fake.opened, fx.fake.maps);
}

/* A hung encoder: the session times out (2 s), the output goes to the CPU. */
static void hung_device(void)
{
	struct fixture fx;
	struct vc_hwenc_stats st;

	if (fixture_open(&fx, "/dev/video31", "/dev/video31", V4L2_PIX_FMT_JPEG) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = output(&fx, &full);
	fx.fake.hang = 1;
	feed(&fx, o, 1);
	for (int64_t end = deadline(4000); hwenc_path(o) && now_ms() < end;)
		run_ms(fx.base, 20);
	feed(&fx, o, 2);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(st.fallbacks == 1 && !hwenc_path(o) && o->latest_n == 2 && latest_is_jpeg(o, 640, 480),
	      "fallbacks %llu, published %llu", (unsigned long long)st.fallbacks,
	      (unsigned long long)o->latest_n);
	fixture_close(&fx);
	CHECK(fx.fake.opened == 0 && fx.fake.maps == 0, "%d open %d maps", fx.fake.opened, fx.fake.maps);
}

/* encoder = cpu, and an output that scales: the CPU encodes, no session. */
static void cpu_paths(void)
{
	struct fixture fx;
	struct vc_hwenc_stats st;
	static const struct vc_request half = { MJPG, 320, 240, 0, 70, 0, 0 };

	if (fixture_open(&fx, "cpu", "/dev/video31", V4L2_PIX_FMT_JPEG) == 0) {
		struct output *o = output(&fx, &full);
		feed(&fx, o, 2);
		vc_streams_hwenc_stats(fx.s, &st);
		CHECK(st.sessions == 0 && o->latest_n == 2 && fx.fake.opened == 0, "cpu: sessions %llu",
		      (unsigned long long)st.sessions);
	} else {
		CHECK(0, "fixture");
	}
	fixture_close(&fx);
	if (fixture_open(&fx, "auto", "/dev/video31", V4L2_PIX_FMT_JPEG) == 0) {
		struct output *o = output(&fx, &half);
		feed(&fx, o, 2);
		vc_streams_hwenc_stats(fx.s, &st);
		CHECK(st.sessions == 0 && o->latest_n == 2 && latest_is_jpeg(o, 320, 240),
		      "scaled: sessions %llu published %llu", (unsigned long long)st.sessions,
		      (unsigned long long)o->latest_n);
	} else {
		CHECK(0, "fixture");
	}
	fixture_close(&fx);
}

int main(void)
{
	RUN("hwenc", hardware_then_fallback);
	RUN("hwenc", dmabuf_frames);
	RUN("hwenc", hung_device);
	RUN("hwenc", cpu_paths);
	CHECK_EXIT();
}
