/* The M2M encoder session (server/encode/m2m_enc.c) against a fake
 * memory-to-memory JPEG encoder behind struct vc_m2m_enc_io (fake_m2m.h:
 * bcm2835-codec's image encoder layout, or a single-planar vicodec-like
 * node; real JPEGs from libjpeg-turbo; an eventfd as its pollable fd).
 *
 * Checked: the exact ioctl sequence of setup, streaming, drain, restart and
 * teardown (the sequence server/encode/M2M.md documents for bcm2835-codec);
 * MMAP feed with one copy per frame, DMABUF feed with none and the frame held
 * until the OUTPUT buffer returns; and the fallback: a device that errors,
 * vanishes or hangs fails the session, the frames in flight come back with the
 * error, and the caller encodes them on the CPU; and an H.264 session's
 * controls, key frames and access units (the fake as an H.264 encoder). */
#include <errno.h>
#include <event2/event.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "check.h"
#include "fake_m2m.h"

/* ---- the caller: results, and the CPU fallback ---- */

struct sink {
	int done, errors, drained, fallbacks, keyframes;
	void *tags[32];
	int errs[32];
	size_t lens[32];
	uint32_t w[32], h[32];
	struct vc_frame *frames[32];   /* the source of each tag, for the CPU fallback */
	struct vc_jpeg *cpu;
	struct vc_m2m_enc *close_me;   /* close from inside the callback */
};

static void on_done(void *opaque, int err, const struct vc_m2m_enc_out *out, void *tag)
{
	struct sink *s = opaque;
	int i = s->done++;
	if (i >= 32)
		return;
	s->tags[i] = tag;
	s->errs[i] = err;
	if (out) {
		struct vc_jpeg_info info;
		s->lens[i] = out->len;
		s->keyframes += out->keyframe;
		if (vc_jpeg_parse(out->data, out->len, &info) == 0) {
			s->w[i] = info.width;
			s->h[i] = info.height;
		}
		return;
	}
	s->errors++;
	/* the fallback: the frame is encoded on the CPU instead */
	struct vc_frame *f = s->frames[(uintptr_t)tag];
	struct vc_image img;
	size_t cap = vc_jpeg_bound(f->geom.width, f->geom.height), len = 0;
	uint8_t *buf = malloc(cap);
	if (buf && vc_image_from_frame(f, &img) == 0 &&
	    vc_jpeg_encode(s->cpu, &img, 80, buf, cap, &len) == 0 && len > 0)
		s->fallbacks++;
	free(buf);
	if (s->close_me) {
		vc_m2m_enc_close(s->close_me);
		s->close_me = NULL;
	}
}

static void on_drained(void *opaque)
{
	((struct sink *)opaque)->drained++;
}

static struct vc_frame *yuyv_frame(uint32_t w, uint32_t h, int seed)
{
	struct vc_frame *f = vc_frame_new_fmt(vc_fmt_by_fourcc(V4L2_PIX_FMT_YUYV), w, h);
	if (!f)
		return NULL;
	uint8_t *d = vc_frame_data(f, 0);
	for (size_t i = 0; i < f->geom.sizeimage; i++)
		d[i] = (uint8_t)(i * 7 + (size_t)seed * 31);
	f->bytesused[0] = f->geom.sizeimage;
	f->seq = (uint64_t)seed;
	return f;
}

/* Runs the loop until the sink has `want` results (or 2 s of loop turns). */
static void run_until(struct event_base *b, struct sink *s, int want_done, int want_drained)
{
	for (int i = 0; i < 200 && (s->done < want_done || s->drained < want_drained); i++) {
		struct timeval tv = { 0, 10000 };
		event_base_loopexit(b, &tv);
		event_base_dispatch(b);
	}
}

static struct vc_m2m_enc_params jpeg_params(uint32_t w, uint32_t h)
{
	struct vc_m2m_enc_params p = { 0 };
	p.in_fourcc = V4L2_PIX_FMT_YUYV;
	p.width = w;
	p.height = h;
	p.bytesperline = w * 2;
	p.coded_fourcc = V4L2_PIX_FMT_JPEG;
	p.quality = 70;
	p.feed = VC_M2M_FEED_AUTO;
	p.timeout_ms = 100;
	return p;
}

#define CB(s) (struct vc_m2m_enc_cb){ on_done, on_drained, (s) }

/* bcm2835-codec's layout: multi-planar API, bytesperline aligned (64x48
 * YUYV: 128 -> 128; 40x32: 80 -> 96, so the copy must restride). */
static void sequence_mplane_mmap(void)
{
	struct fake f;
	struct vc_m2m_enc_io io;
	struct sink s = { 0 };
	struct event_base *base = event_base_new();
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_params p = jpeg_params(64, 48);

	fake_init(&f, 1, &io);
	s.cpu = vc_jpeg_new();
	int r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == 0, "open %d", r);
	const char *want_setup =
		"open QUERYCAP S_FMT(CAP,JPEG,64x48) S_FMT(OUT,YUYV,64x48) "
		"QUERYCTRL(0x9d0903) S_CTRL(0x9d0903,70) "
		"REQBUFS(OUT,MMAP,2) QUERYBUF(OUT,0) QUERYBUF(OUT,1) "
		"REQBUFS(CAP,MMAP,4) QUERYBUF(CAP,0) QUERYBUF(CAP,1) QUERYBUF(CAP,2) QUERYBUF(CAP,3) "
		"QBUF(CAP,0) QBUF(CAP,1) QBUF(CAP,2) QBUF(CAP,3) STREAMON(OUT) STREAMON(CAP)";
	CHECK(strcmp(f.log, want_setup) == 0, "setup sequence\n   got  %s\n   want %s", f.log, want_setup);
	CHECK(f.maps == 6, "%d mappings", f.maps);
	f.log[0] = 0;
	for (int i = 0; i < 3 && e; i++) {
		s.frames[i] = yuyv_frame(64, 48, i);
		struct vc_m2m_enc_in in = { s.frames[i], { -1, -1, -1 }, (void *)(uintptr_t)i };
		r = vc_m2m_enc_submit(e, &in);
		CHECK(r == 0, "submit %d: %d", i, r);
	}
	run_until(base, &s, 3, 0);
	CHECK(s.done >= 3 && s.errors == 0, "%d done, %d errors", s.done, s.errors);
	for (int i = 0; i < 3; i++) {
		CHECK(s.tags[i] == (void *)(uintptr_t)i, "result %d has tag %p", i, s.tags[i]);
		CHECK(s.w[i] == 64 && s.h[i] == 48 && s.lens[i] > 100, "result %d: %ux%u JPEG of %zu bytes",
		      i, s.w[i], s.h[i], s.lens[i]);
	}
	CHECK(s.keyframes == s.done, "%d key frames of %d", s.keyframes, s.done);
	struct vc_m2m_enc_stats st;
	if (e) {
		vc_m2m_enc_get_stats(e, &st);
		CHECK(st.copies == st.frames_in && !st.dmabuf && st.mplane, "copies %llu of %llu frames",
		      (unsigned long long)st.copies, (unsigned long long)st.frames_in);
		/* the fake encodes at QBUF: each submit takes the finished OUTPUT
		 * buffer back first; the loop then takes the coded ones and
		 * re-queues each at once */
		const char *want_run = "QBUF(OUT,0) DQBUF(OUT,0) QBUF(OUT,0) DQBUF(OUT,0) QBUF(OUT,0) "
				       "DQBUF(OUT,0) DQBUF(CAP,0) QBUF(CAP,0) DQBUF(CAP,1) QBUF(CAP,1) "
				       "DQBUF(CAP,2) QBUF(CAP,2)";
		CHECK(strcmp(f.log, want_run) == 0, "run\n   got  %s\n   want %s", f.log, want_run);
	}

	/* drain, then restart at another size (a camera mode change) */
	int before = s.done;
	f.log[0] = 0;
	r = e ? vc_m2m_enc_drain(e) : -1;
	CHECK(r == 0, "drain %d", r);
	run_until(base, &s, before, 1);
	CHECK(s.drained == 1, "drained %d", s.drained);
	CHECK(strstr(f.log, "ENCODER_CMD(STOP)") == f.log, "drain: %s", f.log);
	if (e) {
		struct vc_m2m_enc_in in = { s.frames[0], { -1, -1, -1 }, NULL };
		CHECK(vc_m2m_enc_submit(e, &in) == -EBUSY, "submit after a drain must wait for restart");
	}
	f.log[0] = 0;
	p = jpeg_params(40, 30); /* the fake pads to 32 lines: the copy follows its layout */
	r = e ? vc_m2m_enc_restart(e, &p) : -1;
	CHECK(r == 0, "restart %d", r);
	const char *want_restart =
		"STREAMOFF(OUT) STREAMOFF(CAP) REQBUFS(OUT,MMAP,0) REQBUFS(CAP,MMAP,0) "
		"S_FMT(CAP,JPEG,40x30) S_FMT(OUT,YUYV,40x30) QUERYCTRL(0x9d0903) S_CTRL(0x9d0903,70) "
		"REQBUFS(OUT,MMAP,2)";
	CHECK(strncmp(f.log, want_restart, strlen(want_restart)) == 0, "restart\n   got  %s\n   want %s...",
	      f.log, want_restart);
	s.frames[5] = yuyv_frame(40, 30, 5);
	struct vc_m2m_enc_in in = { s.frames[5], { -1, -1, -1 }, (void *)(uintptr_t)5 };
	before = s.done;
	r = e ? vc_m2m_enc_submit(e, &in) : -1;
	CHECK(r == 0, "submit after restart %d", r);
	run_until(base, &s, before + 1, 0);
	CHECK(s.done == before + 1 && s.w[before] == 40 && s.h[before] == 30 && !s.errs[before],
	      "after restart: %d done, %ux%u", s.done - before, s.w[before], s.h[before]);
	CHECK(f.bpl == 96, "fake stride %u (aligned)", f.bpl);
	/* controls: JPEG quality yes; the fake (like bcm2835's JPEG node) has no key-frame control */
	CHECK(e && vc_m2m_enc_set_ctrl(e, V4L2_CID_JPEG_COMPRESSION_QUALITY, 50) == 0 && f.quality == 50,
	      "quality control");
	CHECK(e && vc_m2m_enc_force_key(e) == -EINVAL, "force key on a JPEG encoder");
	CHECK(e && vc_m2m_enc_error(e) == 0, "a missing control does not fail the session");
	f.log[0] = 0;
	vc_m2m_enc_close(e);
	CHECK(strstr(f.log, "STREAMOFF(OUT) STREAMOFF(CAP) REQBUFS(OUT,MMAP,0) REQBUFS(CAP,MMAP,0) close"),
	      "close: %s", f.log);
	CHECK(f.opened == 0 && f.maps == 0, "%d open, %d mapped after close", f.opened, f.maps);
	for (int i = 0; i < 32; i++)
		vc_frame_unref(s.frames[i]);
	vc_jpeg_free(s.cpu);
	fake_free(&f);
	event_base_free(base);
}

static int refs(struct vc_frame *f) { return atomic_load(&f->refs); }

/* Single-planar, DMABUF: no copy; the frame is held until its OUTPUT
 * buffer is dequeued. */
static void dmabuf_single(void)
{
	struct fake f;
	struct vc_m2m_enc_io io;
	struct sink s = { 0 };
	struct event_base *base = event_base_new();
	struct vc_m2m_enc *e = NULL;
	/* 64 wide: 128-byte stride, what the fake's alignment keeps, so DMABUF fits */
	struct vc_m2m_enc_params p = jpeg_params(64, 48);

	fake_init(&f, 0, &io);
	p.dmabuf_ok = 1;
	p.src_len[0] = 64 * 48 * 2;
	int r = vc_m2m_enc_open(base, &io, "/dev/video5", &p, &CB(&s), &e);
	CHECK(r == 0, "open %d", r);
	CHECK(strstr(f.log, "REQBUFS(OUT,DMABUF,2) REQBUFS(CAP,MMAP,4)") != NULL, "setup: %s", f.log);
	struct vc_frame *fr = yuyv_frame(64, 48, 1);
	f.dmabuf_mem[40] = vc_frame_data(fr, 0);
	f.dmabuf_len[40] = 64 * 48 * 2;
	f.hang = 1; /* hold the job: the frame must stay referenced */
	struct vc_m2m_enc_in in = { fr, { 40, -1, -1 }, (void *)(uintptr_t)1 };
	r = e ? vc_m2m_enc_submit(e, &in) : -1;
	CHECK(r == 0 && refs(fr) == 2, "submit %d, refs %d while the encoder reads it", r, refs(fr));
	f.hang = 0;
	run_jobs(&f);
	run_until(base, &s, 1, 0);
	CHECK(s.done == 1 && !s.errs[0] && s.w[0] == 64, "done %d err %d w %u", s.done, s.errs[0], s.w[0]);
	CHECK(refs(fr) == 1, "refs %d after the OUTPUT buffer came back", refs(fr));
	struct vc_m2m_enc_stats st = { 0 };
	if (e)
		vc_m2m_enc_get_stats(e, &st);
	CHECK(st.dmabuf && st.copies == 0 && !st.mplane, "dmabuf %d copies %llu", st.dmabuf,
	      (unsigned long long)st.copies);
	struct vc_m2m_enc_in nofd = { fr, { -1, -1, -1 }, NULL };
	CHECK(e && vc_m2m_enc_submit(e, &nofd) == -EINVAL, "DMABUF feed without an fd");
	vc_m2m_enc_close(e);
	CHECK(f.opened == 0 && f.maps == 0 && refs(fr) == 1, "after close: %d open, %d maps, refs %d",
	      f.opened, f.maps, refs(fr));
	vc_frame_unref(fr);
	fake_free(&f);
	event_base_free(base);
}

/* AUTO: the encoder refuses to import the first DMABUF frame (on a Pi,
 * bcm2835-codec's dma-contig queue and a UVC camera's scattered vmalloc
 * buffers): the session sets up again with MMAP and that frame goes as a
 * copy; nothing is lost and no error reaches the caller. */
static void dmabuf_refused(void)
{
	struct fake f;
	struct vc_m2m_enc_io io;
	struct sink s = { 0 };
	struct event_base *base = event_base_new();
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_params p = jpeg_params(64, 48);

	fake_init(&f, 1, &io);
	p.dmabuf_ok = 1;
	p.src_len[0] = 64 * 48 * 2;
	int r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == 0 && strstr(f.log, "REQBUFS(OUT,DMABUF,2)"), "open %d: %s", r, f.log);
	struct vc_frame *fr = yuyv_frame(64, 48, 3); /* fd 41 is no dmabuf the fake knows */
	struct vc_m2m_enc_in in = { fr, { 41, -1, -1 }, (void *)(uintptr_t)0 };
	f.log[0] = 0;
	r = e ? vc_m2m_enc_submit(e, &in) : -1;
	CHECK(r == 0 && strstr(f.log, "REQBUFS(OUT,MMAP,2)"), "submit %d: %s", r, f.log);
	run_until(base, &s, 1, 0);
	struct vc_m2m_enc_stats st = { 0 };
	if (e)
		vc_m2m_enc_get_stats(e, &st);
	CHECK(s.done == 1 && !s.errs[0] && s.w[0] == 64 && !st.dmabuf && st.copies == 1 && st.restarts == 1,
	      "done %d err %d dmabuf %d copies %llu", s.done, s.errs[0], st.dmabuf,
	      (unsigned long long)st.copies);
	CHECK(e && vc_m2m_enc_error(e) == 0 && refs(fr) == 1, "error %d refs %d", e ? vc_m2m_enc_error(e) : 0,
	      refs(fr));
	vc_m2m_enc_close(e);
	CHECK(f.opened == 0 && f.maps == 0, "%d open %d maps", f.opened, f.maps);
	vc_frame_unref(fr);
	fake_free(&f);
	event_base_free(base);
}

/* AUTO falls back to MMAP + copy when the encoder wants another stride
 * than the source has (40 px YUYV: 80 bytes, the fake aligns to 96). */
static void auto_feed_mmap_on_stride(void)
{
	struct fake f;
	struct vc_m2m_enc_io io;
	struct sink s = { 0 };
	struct event_base *base = event_base_new();
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_params p = jpeg_params(40, 32);

	fake_init(&f, 1, &io);
	p.dmabuf_ok = 1;
	int r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == 0 && strstr(f.log, "REQBUFS(OUT,MMAP,2)"), "open %d: %s", r, f.log);
	vc_m2m_enc_close(e);
	p.feed = VC_M2M_FEED_DMABUF;
	f.log[0] = 0;
	r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == -EINVAL && f.opened == 0 && f.maps == 0, "DMABUF forced on a stride mismatch: %d", r);
	fake_free(&f);
	event_base_free(base);
}

struct fault {
	int line;
	const char *what;
	unsigned long req;
	uint32_t type;
	int after, err;
	int hang;
};

/* A device that errors or vanishes mid-stream: the session fails, every
 * frame in flight comes back with the error (from the loop), the caller
 * encodes those on the CPU, and new submits answer the error at once. */
static void fallback(void)
{
	static const struct fault faults[] = {
		{ __LINE__, "QBUF(OUT) ENODEV: unplugged", VIDIOC_QBUF, V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE, 1, ENODEV, 0 },
		{ __LINE__, "DQBUF(CAP) EIO", VIDIOC_DQBUF, V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, 0, EIO, 0 },
		{ __LINE__, "DQBUF(OUT) ENODEV", VIDIOC_DQBUF, V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE, 0, ENODEV, 0 },
		{ __LINE__, "QBUF(CAP) re-queue EIO", VIDIOC_QBUF, V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, 0, EIO, 0 },
		{ __LINE__, "hung encoder", 0, 0, 0, 0, 1 },
	};
	for (size_t k = 0; k < ARRAY_LEN(faults); k++) {
		const struct fault *t = &faults[k];
		struct fake f;
		struct vc_m2m_enc_io io;
		struct sink s = { 0 };
		struct event_base *base = event_base_new();
		struct vc_m2m_enc *e = NULL;
		struct vc_m2m_enc_params p = jpeg_params(64, 48);

		fake_init(&f, 1, &io);
		s.cpu = vc_jpeg_new();
		int r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
		CHECK_AT(t->line, r == 0, "open %d", r);
		f.fail_req = t->req;
		f.fail_type = t->type;
		f.fail_after = t->after;
		f.fail_err = t->err;
		f.hang = t->hang;
		int accepted = 0, refused = 0;
		for (int i = 0; i < 2 && e; i++) {
			s.frames[i] = yuyv_frame(64, 48, i);
			struct vc_m2m_enc_in in = { s.frames[i], { -1, -1, -1 }, (void *)(uintptr_t)i };
			r = vc_m2m_enc_submit(e, &in);
			if (r == 0)
				accepted++;
			else
				refused++;
			if (r < 0) /* refused at submit: the caller encodes it itself */
				on_done(&s, r, NULL, (void *)(uintptr_t)i);
		}
		run_until(base, &s, 2, 0);
		int err = e ? vc_m2m_enc_error(e) : 0;
		int want = t->hang ? -ETIMEDOUT : -t->err;
		CHECK_AT(t->line, err == want, "%s: session error %d, want %d", t->what, err, want);
		CHECK_AT(t->line, s.done == 2 && s.fallbacks == s.errors && s.errors + (s.done - s.errors) == 2,
			 "%s: %d done (%d accepted, %d refused), %d errors, %d CPU fallbacks", t->what,
			 s.done, accepted, refused, s.errors, s.fallbacks);
		CHECK_AT(t->line, s.errors >= 1, "%s: no frame reported an error", t->what);
		if (e) {
			struct vc_m2m_enc_in in = { s.frames[0], { -1, -1, -1 }, NULL };
			r = vc_m2m_enc_submit(e, &in);
			CHECK_AT(t->line, r == want, "%s: submit after the failure %d", t->what, r);
			CHECK_AT(t->line, refs(s.frames[0]) == 1 && refs(s.frames[1]) == 1,
				 "%s: frames still referenced: %d %d", t->what, refs(s.frames[0]),
				 refs(s.frames[1]));
		}
		vc_m2m_enc_close(e);
		CHECK_AT(t->line, f.opened == 0 && f.maps == 0, "%s: %d open %d maps", t->what, f.opened, f.maps);
		for (int i = 0; i < 32; i++)
			vc_frame_unref(s.frames[i]);
		vc_jpeg_free(s.cpu);
		fake_free(&f);
		event_base_free(base);
	}
}

/* Closing the session from inside its own error callback (the daemon's
 * reaction to a failed encoder) is safe. */
static void close_in_callback(void)
{
	struct fake f;
	struct vc_m2m_enc_io io;
	struct sink s = { 0 };
	struct event_base *base = event_base_new();
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_params p = jpeg_params(64, 48);

	fake_init(&f, 1, &io);
	s.cpu = vc_jpeg_new();
	int r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == 0, "open %d", r);
	f.hang = 1;
	for (int i = 0; i < 2 && e; i++) {
		s.frames[i] = yuyv_frame(64, 48, i);
		struct vc_m2m_enc_in in = { s.frames[i], { -1, -1, -1 }, (void *)(uintptr_t)i };
		CHECK(vc_m2m_enc_submit(e, &in) == 0, "submit");
	}
	if (e) { /* both OUTPUT buffers are with the (hung) encoder */
		struct vc_m2m_enc_in in = { s.frames[0], { -1, -1, -1 }, NULL };
		CHECK(vc_m2m_enc_submit(e, &in) == -EBUSY, "a third frame must wait");
	}
	s.close_me = e;
	run_until(base, &s, 1, 0);
	run_until(base, &s, 2, 0); /* the second must not come: the session is gone */
	CHECK(s.done == 1 && s.errs[0] == -ETIMEDOUT && s.fallbacks == 1, "done %d err %d", s.done, s.errs[0]);
	CHECK(f.opened == 0 && f.maps == 0, "%d open %d maps", f.opened, f.maps);
	CHECK(refs(s.frames[0]) == 1 && refs(s.frames[1]) == 1, "refs");
	for (int i = 0; i < 32; i++)
		vc_frame_unref(s.frames[i]);
	vc_jpeg_free(s.cpu);
	fake_free(&f);
	event_base_free(base);
}

/* Setup refusals: nothing stays open or mapped, the error tells the caller
 * to use the CPU. */
static void open_errors(void)
{
	struct fake f;
	struct vc_m2m_enc_io io;
	struct sink s = { 0 };
	struct event_base *base = event_base_new();
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_params p = jpeg_params(64, 48);

	fake_init(&f, 1, &io);
	f.caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING; /* a camera, not M2M */
	int r = vc_m2m_enc_open(base, &io, "/dev/video0", &p, &CB(&s), &e);
	CHECK(r == -ENOTTY && !e && f.opened == 0, "camera node: %d", r);
	fake_free(&f);
	fake_init(&f, 1, &io);
	p.coded_fourcc = V4L2_PIX_FMT_H264; /* the fake answers JPEG */
	r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == -EINVAL && !e && f.opened == 0, "coded format refused: %d", r);
	fake_free(&f);
	fake_init(&f, 1, &io);
	p = jpeg_params(64, 48);
	f.fail_req = VIDIOC_STREAMON;
	f.fail_err = EIO;
	r = vc_m2m_enc_open(base, &io, "/dev/video31", &p, &CB(&s), &e);
	CHECK(r == -EIO && !e && f.opened == 0 && f.maps == 0, "STREAMON fails: %d, %d open %d maps",
	      r, f.opened, f.maps);
	fake_free(&f);
	event_base_free(base);
}

/* ---- H.264 (the fake as bcm2835-codec's video encoder) ---- */

struct h264_sink {
	int done, errors;
	int key[16], idr[16], ps[16], slices[16];
};

static void on_h264(void *opaque, int err, const struct vc_m2m_enc_out *out, void *tag)
{
	struct h264_sink *s = opaque;
	struct vc_h264_au au;

	(void)tag;
	if (err || !out || s->done >= 16) {
		s->errors++;
		return;
	}
	vc_h264_scan(out->data, out->len, &au);
	s->key[s->done] = out->keyframe;
	s->idr[s->done] = au.idr;
	s->ps[s->done] = au.sps && au.pps;
	s->slices[s->done] = au.has_slice;
	s->done++;
}

/* Setup asks for every H.264 control the device has, in this order, before
 * REQBUFS (bcm2835-codec applies stored controls when it makes the firmware
 * component there); controls the device lacks are only queried. A forced
 * key frame and the GOP give IDRs; key frames are the pictures with an IDR
 * slice, with or without the driver's flags (a flag on a P picture does not
 * count); SPS/PPS sent in a buffer of their own come back joined to the
 * picture (one result per frame). */
static void sequence_h264(void)
{
	static const struct {
		int line;
		unsigned lacks;
		int no_key_flag, hdr_apart, flag_every;
	} t[] = {
		{ __LINE__, 0, 0, 0, 0 },
		{ __LINE__, LACK_FORCE_KEY | LACK_LEVEL | LACK_I_PERIOD, 1, 1, 0 },
		{ __LINE__, 0, 0, 0, 1 }, /* a flag on P pictures does not make them key */
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		struct fake f;
		struct vc_m2m_enc_io io;
		struct h264_sink s = { 0 };
		struct event_base *base = event_base_new();
		struct vc_m2m_enc *e = NULL;
		struct vc_m2m_enc_params p = jpeg_params(64, 48);
		struct vc_m2m_enc_cb cb = { on_h264, NULL, &s };
		char want[1024], c[96];

		p.coded_fourcc = V4L2_PIX_FMT_H264;
		p.quality = 0;
		p.bitrate = 300000;
		p.gop = 4;
		p.fps_num = 30;
		p.fps_den = 1;
		p.timeout_ms = 1000;
		fake_init(&f, 1, &io);
		f.h264 = 1;
		f.lacks = t[k].lacks;
		f.no_key_flag = t[k].no_key_flag;
		f.hdr_apart = t[k].hdr_apart;
		f.flag_every = t[k].flag_every;
		int r = vc_m2m_enc_open(base, &io, "/dev/video11", &p, &cb, &e);
		CHECK_AT(t[k].line, r == 0, "open %d", r);
		const int32_t val[] = { 300000, 4, 4, 1, V4L2_MPEG_VIDEO_H264_PROFILE_CONSTRAINED_BASELINE,
					V4L2_MPEG_VIDEO_H264_LEVEL_3_0 };
		snprintf(want, sizeof(want), "open QUERYCAP S_FMT(CAP,H264,64x48) S_FMT(OUT,YUYV,64x48)");
		for (unsigned i = 0; i < 6; i++) {
			int lacks = t[k].lacks & (1u << i);
			if (lacks)
				snprintf(c, sizeof(c), " QUERYCTRL(%#x)", ctrl_ids[i]);
			else
				snprintf(c, sizeof(c), " QUERYCTRL(%#x) S_CTRL(%#x,%d)", ctrl_ids[i],
					 ctrl_ids[i], val[i]);
			strncat(want, c, sizeof(want) - strlen(want) - 1);
		}
		strncat(want, " S_PARM REQBUFS(OUT,MMAP,2)", sizeof(want) - strlen(want) - 1);
		CHECK_AT(t[k].line, strncmp(f.log, want, strlen(want)) == 0,
			 "setup\n   got  %s\n   want %s...", f.log, want);
		CHECK_AT(t[k].line, f.bitrate == 300000 && f.gop == 4 && f.repeat_hdr == 1,
			 "bitrate %d gop %d repeat %d", f.bitrate, f.gop, f.repeat_hdr);
		/* frames 0..5; a key frame asked before frame 2 */
		int fk_err = 0;
		for (int i = 0; i < 6 && e; i++) {
			if (i == 2)
				fk_err = vc_m2m_enc_force_key(e);
			struct vc_frame *fr = yuyv_frame(64, 48, i);
			struct vc_m2m_enc_in in = { fr, { -1, -1, -1 }, NULL };
			r = fr ? vc_m2m_enc_submit(e, &in) : -ENOMEM;
			CHECK_AT(t[k].line, r == 0, "submit %d: %d", i, r);
			vc_frame_unref(fr);
			for (int n = 0; n < 100 && s.done + s.errors < i + 1; n++) {
				struct timeval tv = { 0, 5000 };
				event_base_loopexit(base, &tv);
				event_base_dispatch(base);
			}
		}
		int forced = !(t[k].lacks & LACK_FORCE_KEY);
		/* IDRs: 0, 2 (forced) and 6 (gop from 2) or 0 and 4 (gop) */
		const int want_idr[2][6] = { { 1, 0, 0, 0, 1, 0 }, { 1, 0, 1, 0, 0, 0 } };
		CHECK_AT(t[k].line, s.done == 6 && !s.errors && (forced ? fk_err == 0 : fk_err < 0) &&
				    vc_m2m_enc_error(e) == 0,
			 "%d results %d errors, force key %d", s.done, s.errors, fk_err);
		for (int i = 0; i < s.done; i++)
			CHECK_AT(t[k].line, s.idr[i] == want_idr[forced][i] && s.key[i] == s.idr[i] &&
					    s.ps[i] == s.idr[i] && s.slices[i],
				 "frame %d: idr %d key %d sps/pps %d slice %d", i, s.idr[i], s.key[i],
				 s.ps[i], s.slices[i]);
		vc_m2m_enc_close(e);
		CHECK_AT(t[k].line, f.opened == 0 && f.maps == 0, "%d open %d maps", f.opened, f.maps);
		fake_free(&f);
		event_base_free(base);
	}
}

/* The H.264 level asked for: the smallest whose frame size, macroblock
 * rate and Baseline bit rate limits (H.264 table A-1) fit; none past 4.2. */
static void h264_levels(void)
{
	static const struct {
		int line;
		uint32_t w, h, fps;
		int bitrate, want; /* want -1: the level is left alone */
	} t[] = {
		{ __LINE__, 640, 480, 30, 1000000, V4L2_MPEG_VIDEO_H264_LEVEL_3_0 },
		{ __LINE__, 640, 480, 30, 12000000, V4L2_MPEG_VIDEO_H264_LEVEL_3_1 }, /* > 10 Mbit/s */
		{ __LINE__, 1280, 720, 30, 2000000, V4L2_MPEG_VIDEO_H264_LEVEL_3_1 },
		{ __LINE__, 1280, 720, 60, 4000000, V4L2_MPEG_VIDEO_H264_LEVEL_3_2 },
		{ __LINE__, 1920, 1080, 30, 4000000, V4L2_MPEG_VIDEO_H264_LEVEL_4_0 },
		{ __LINE__, 1920, 1080, 60, 8000000, V4L2_MPEG_VIDEO_H264_LEVEL_4_2 },
		{ __LINE__, 2560, 1600, 30, 8000000, -1 },
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		struct fake f;
		struct vc_m2m_enc_io io;
		struct h264_sink s = { 0 };
		struct event_base *base = event_base_new();
		struct vc_m2m_enc *e = NULL;
		struct vc_m2m_enc_params p = jpeg_params(t[k].w, t[k].h);
		struct vc_m2m_enc_cb cb = { on_h264, NULL, &s };

		p.coded_fourcc = V4L2_PIX_FMT_H264;
		p.quality = 0;
		p.bitrate = t[k].bitrate;
		p.fps_num = t[k].fps;
		p.fps_den = 1;
		fake_init(&f, 1, &io);
		f.h264 = 1;
		f.level = -1;
		int r = vc_m2m_enc_open(base, &io, "/dev/video11", &p, &cb, &e);
		CHECK_AT(t[k].line, r == 0 && f.level == t[k].want, "open %d, level %d want %d", r,
			 f.level, t[k].want);
		vc_m2m_enc_close(e);
		fake_free(&f);
		event_base_free(base);
	}
}

int main(void)
{
	RUN("m2m_enc", sequence_mplane_mmap);
	RUN("m2m_enc", dmabuf_single);
	RUN("m2m_enc", dmabuf_refused);
	RUN("m2m_enc", auto_feed_mmap_on_stride);
	RUN("m2m_enc", fallback);
	RUN("m2m_enc", close_in_callback);
	RUN("m2m_enc", open_errors);
	RUN("m2m_enc", sequence_h264);
	RUN("m2m_enc", h264_levels);
	CHECK_EXIT();
}
