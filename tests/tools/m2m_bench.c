/* m2m_bench: the encoding process's own CPU per frame, M2M encoder session
 * (server/encode/m2m_enc.c) against the CPU path (libjpeg-turbo), on the same
 * vivid frames. Run inside the vivid-vm guest by tests/vm/bench_m2m.sh.
 *
 *   m2m_bench CAM ENC [--frames N] [--sizes WxH,WxH...]
 *
 * Per size: vivid captures 4 YU12 frames, exported with VIDIOC_EXPBUF and
 * kept dequeued; then N frames (cycling over the 4) go through
 *   m2m-dmabuf  vicodec's stateful encoder, OUTPUT fed by the dmabuf fds
 *               (0 copies per frame)
 *   m2m-mmap    the same, each frame copied into an MMAP OUTPUT buffer
 *               (1 copy per frame)
 *   cpu-jpeg    vc_jpeg_encode at quality 80 straight from the mapped
 *               capture buffer (0 copies), as the daemon's CPU path does
 * and getrusage(RUSAGE_SELF) before/after gives user and system CPU per
 * frame. Session setup and 2 warm-up frames are outside the measurement;
 * capture is outside it too (the same for every path).
 * Exit 0 when every cell coded every frame, 1 otherwise, 2 on usage errors. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/image.h"
#include "common/jpeg.h"
#include "server/encode/m2m_enc.h"

#define NCAP 4

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;
	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

struct cam {
	int fd;
	uint32_t w, h, bpl;
	void *map[NCAP];
	size_t len[NCAP];
	int dmabuf[NCAP];
	struct vc_frame *frame[NCAP];
	unsigned n;
};

/* Streams YU12 at w x h and keeps the first NCAP frames dequeued. */
static int cam_grab(struct cam *c, const char *path, uint32_t w, uint32_t h)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = { .count = NCAP, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	const struct vc_fmt *fmt = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	uint32_t t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	int r;

	if ((c->fd = open(path, O_RDWR | O_NONBLOCK)) < 0)
		return -errno;
	f.fmt.pix = (struct v4l2_pix_format){ .width = w, .height = h,
					      .pixelformat = V4L2_PIX_FMT_YUV420, .field = V4L2_FIELD_NONE };
	if ((r = xioctl(c->fd, VIDIOC_S_FMT, &f)) < 0)
		return r;
	if (f.fmt.pix.width != w || f.fmt.pix.height != h || f.fmt.pix.pixelformat != V4L2_PIX_FMT_YUV420)
		return -EINVAL;
	c->w = w;
	c->h = h;
	c->bpl = f.fmt.pix.bytesperline;
	if ((r = xioctl(c->fd, VIDIOC_REQBUFS, &rb)) < 0)
		return r;
	if (rb.count < NCAP)
		return -ENOMEM;
	for (unsigned i = 0; i < NCAP; i++) {
		struct v4l2_buffer b = { .index = i, .type = t, .memory = V4L2_MEMORY_MMAP };
		struct v4l2_exportbuffer x = { .type = t, .index = i, .flags = O_RDONLY | O_CLOEXEC };
		if ((r = xioctl(c->fd, VIDIOC_QUERYBUF, &b)) < 0)
			return r;
		c->len[i] = b.length;
		c->map[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, c->fd, b.m.offset);
		if (c->map[i] == MAP_FAILED)
			return -errno;
		c->n = i + 1;
		if ((r = xioctl(c->fd, VIDIOC_EXPBUF, &x)) < 0)
			return r;
		c->dmabuf[i] = x.fd;
		if ((r = xioctl(c->fd, VIDIOC_QBUF, &b)) < 0)
			return r;
	}
	if ((r = xioctl(c->fd, VIDIOC_STREAMON, &t)) < 0)
		return r;
	for (unsigned k = 0; k < NCAP; k++) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		struct v4l2_buffer b = { .type = t, .memory = V4L2_MEMORY_MMAP };
		struct vc_geom g;
		if (poll(&p, 1, 5000) <= 0 || (r = xioctl(c->fd, VIDIOC_DQBUF, &b)) < 0 ||
		    (r = vc_fmt_geometry(fmt, w, h, c->bpl, &g)) < 0)
			return r < 0 ? r : -ETIMEDOUT;
		uint8_t *mem[3] = { c->map[b.index] };
		size_t used[3] = { b.bytesused };
		c->frame[b.index] = vc_frame_wrap(fmt, &g, mem, used, NULL, NULL);
		if (!c->frame[b.index])
			return -ENOMEM;
	}
	return 0;
}

static void cam_close(struct cam *c)
{
	uint32_t t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers rb = { .count = 0, .type = t, .memory = V4L2_MEMORY_MMAP };

	for (unsigned i = 0; i < c->n; i++) {
		vc_frame_unref(c->frame[i]);
		munmap(c->map[i], c->len[i]);
		if (c->dmabuf[i] > 0)
			close(c->dmabuf[i]);
	}
	if (c->fd > 0) {
		xioctl(c->fd, VIDIOC_STREAMOFF, &t);
		xioctl(c->fd, VIDIOC_REQBUFS, &rb);
		close(c->fd);
	}
	memset(c, 0, sizeof(*c));
}

struct tally {
	int done, errors;
	size_t bytes;
};

static void on_done(void *opaque, int err, const struct vc_m2m_enc_out *out, void *tag)
{
	struct tally *t = opaque;
	(void)tag;
	t->done++;
	if (err || !out)
		t->errors++;
	else
		t->bytes += out->len;
}

struct cell {
	double user_ms, sys_ms, wall_ms, kib, copies;
	int frames, ok;
	uint32_t out_bpl;   /* the encoder's OUTPUT layout (S_FMT's reply) */
	size_t out_size;
};

static double tv_ms(struct timeval a, struct timeval b)
{
	return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_usec - a.tv_usec) / 1e3;
}

struct clock3 {
	struct rusage ru;
	struct timespec wall;
};

static void clock_now(struct clock3 *c)
{
	getrusage(RUSAGE_SELF, &c->ru);
	clock_gettime(CLOCK_MONOTONIC, &c->wall);
}

static void cell_set(struct cell *x, const struct clock3 *a, const struct clock3 *b, int n)
{
	x->frames = n;
	x->user_ms = tv_ms(a->ru.ru_utime, b->ru.ru_utime) / n;
	x->sys_ms = tv_ms(a->ru.ru_stime, b->ru.ru_stime) / n;
	x->wall_ms = ((b->wall.tv_sec - a->wall.tv_sec) * 1e3 + (b->wall.tv_nsec - a->wall.tv_nsec) / 1e6) / n;
}

/* Submits n frames (cycling over the camera's) and waits for all of them. */
static int m2m_frames(struct event_base *base, struct vc_m2m_enc *e, struct cam *c, struct tally *t,
		      int n, int dmabuf)
{
	int want = t->done + n;
	for (int i = 0; i < n; i++) {
		unsigned k = (unsigned)i % NCAP;
		struct vc_m2m_enc_in in = { c->frame[k], { dmabuf ? c->dmabuf[k] : -1, -1, -1 }, NULL };
		int s;
		while ((s = vc_m2m_enc_submit(e, &in)) == -EBUSY)
			if (event_base_loop(base, EVLOOP_ONCE) < 0)
				return -EIO;
		if (s < 0)
			return s;
	}
	while (t->done < want)
		if (event_base_loop(base, EVLOOP_ONCE) < 0)
			return -EIO;
	return 0;
}

static void run_m2m(struct event_base *base, const char *enc, struct cam *c, int n, int dmabuf,
		    struct cell *x)
{
	struct tally t = { 0 };
	struct vc_m2m_enc_cb cb = { on_done, NULL, &t };
	struct vc_m2m_enc_params p = { .in_fourcc = V4L2_PIX_FMT_YUV420, .width = c->w, .height = c->h,
				       .bytesperline = c->bpl, .coded_fourcc = V4L2_PIX_FMT_FWHT,
				       .feed = dmabuf ? VC_M2M_FEED_DMABUF : VC_M2M_FEED_MMAP,
				       .src_len = { c->len[0] }, .gop = 30, .n_output = 2,
				       .n_capture = 4, .timeout_ms = 10000 };
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_stats s0, s1;
	struct clock3 a, b;

	int r = vc_m2m_enc_open(base, NULL, enc, &p, &cb, &e);
	if (r == 0) {
		size_t sz[3];
		unsigned np;
		vc_m2m_enc_out_layout(e, &x->out_bpl, sz, &np);
		x->out_size = sz[0];
	}
	if (r == 0)
		r = m2m_frames(base, e, c, &t, 2, dmabuf); /* warm-up */
	if (r == 0) {
		vc_m2m_enc_get_stats(e, &s0);
		size_t bytes0 = t.bytes;
		clock_now(&a);
		r = m2m_frames(base, e, c, &t, n, dmabuf);
		clock_now(&b);
		vc_m2m_enc_get_stats(e, &s1);
		cell_set(x, &a, &b, n);
		x->kib = (double)(t.bytes - bytes0) / 1024 / n;
		x->copies = (double)(s1.copies - s0.copies) / n;
		x->ok = r == 0 && !t.errors && s1.dmabuf == dmabuf;
	}
	if (r && !(dmabuf && r == -EINVAL)) /* DMABUF's -EINVAL: layout, said in the table */
		fprintf(stderr, "m2m_bench: %s %s %ux%u: %s\n", enc, dmabuf ? "dmabuf" : "mmap", c->w, c->h,
			strerror(-r));
	vc_m2m_enc_close(e);
}

static void run_cpu(struct cam *c, int n, struct cell *x)
{
	struct vc_jpeg *j = vc_jpeg_new();
	size_t cap = vc_jpeg_bound(c->w, c->h), len = 0, total = 0;
	uint8_t *buf = malloc(cap);
	struct clock3 a, b;
	int bad = !j || !buf;

	for (int i = -2; i < n && !bad; i++) { /* 2 warm-up frames */
		struct vc_image img;
		if (i == 0)
			clock_now(&a);
		bad = vc_image_from_frame(c->frame[(unsigned)(i + 2) % NCAP], &img) < 0 ||
		      vc_jpeg_encode(j, &img, 80, buf, cap, &len) < 0;
		if (i >= 0)
			total += len;
	}
	clock_now(&b);
	if (!bad) {
		cell_set(x, &a, &b, n);
		x->kib = (double)total / 1024 / n;
		x->ok = 1;
	}
	free(buf);
	vc_jpeg_free(j);
}

static void row(const char *size, const char *path, const struct cell *x)
{
	if (!x->ok) {
		printf("  %-10s %-11s FAILED\n", size, path);
		return;
	}
	printf("  %-10s %-11s %5d %8.2f %8.2f %8.2f %8.2f %7.1f %7.2f\n", size, path, x->frames, x->user_ms,
	       x->sys_ms, x->user_ms + x->sys_ms, x->wall_ms, x->kib, x->copies);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = 20, failed = 0;
	char sizes[128] = "640x480,1280x720,1920x1080";

	if (argc < 3) {
		fprintf(stderr, "usage: m2m_bench CAM ENC [--frames N] [--sizes WxH,...]\n");
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--frames"))
			n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--sizes"))
			snprintf(sizes, sizeof(sizes), "%s", argv[i + 1]);
	}
	if (n < 1 || n > 100000)
		return 2;
	struct event_base *base = event_base_new();
	if (!base)
		return 1;
	printf("  %-10s %-11s %5s %8s %8s %8s %8s %7s %7s\n", "size", "path", "frames", "user", "sys",
	       "CPU", "wall", "KiB", "copies");
	printf("  %-10s %-11s %5s %8s %8s %8s %8s %7s %7s\n", "", "", "", "ms/frame", "ms/frame",
	       "ms/frame", "ms/frame", "/frame", "/frame");
	for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ",")) {
		unsigned w, h;
		struct cam c = { 0 };
		struct cell dm = { 0 }, mm = { 0 }, cpu = { 0 };
		if (sscanf(s, "%ux%u", &w, &h) != 2)
			return 2;
		int r = cam_grab(&c, argv[1], w, h);
		if (r < 0) {
			printf("  %-10s vivid does not capture YU12 at this size: %s\n", s, strerror(-r));
			cam_close(&c);
			continue;
		}
		run_m2m(base, argv[2], &c, n, 0, &mm);
		run_m2m(base, argv[2], &c, n, 1, &dm);
		run_cpu(&c, n, &cpu);
		/* DMABUF needs the encoder to read vivid's buffer as it is */
		int no_dmabuf = !dm.ok && mm.ok && mm.out_size > c.len[0];
		if (no_dmabuf)
			printf("  %-10s %-11s n/a: the encoder wants %zu-byte OUTPUT buffers (stride %u), vivid's\n"
			       "  %-10s %-11s are %zu bytes (stride %u): vicodec pads the height to 16 lines, as\n"
			       "  %-10s %-11s bcm2835-codec does; the daemon feeds such a size by MMAP (1 copy)\n",
			       s, "m2m-dmabuf", mm.out_size, mm.out_bpl, "", "", c.len[0], c.bpl, "", "");
		else
			row(s, "m2m-dmabuf", &dm);
		row(s, "m2m-mmap", &mm);
		row(s, "cpu-jpeg", &cpu);
		const struct cell *m = dm.ok ? &dm : &mm;
		/* user/sys are split by sampling at the scheduler tick (USER_HZ here, a
		 * conservative bound): below one tick per
		 * run a figure reads 0, so the ratio is then a lower bound */
		double tick = 1000.0 / sysconf(_SC_CLK_TCK) / n, mu = m->user_ms > tick ? m->user_ms : tick;
		if (m->ok && cpu.ok)
			printf("  %-10s user: cpu-jpeg / %s = %s%.0fx; user+sys (vicodec's FWHT in sys): %s / cpu-jpeg = %.2fx\n",
			       s, dm.ok ? "m2m-dmabuf" : "m2m-mmap", m->user_ms > tick ? "" : "> ", cpu.user_ms / mu,
			       dm.ok ? "m2m-dmabuf" : "m2m-mmap", (m->user_ms + m->sys_ms) / (cpu.user_ms + cpu.sys_ms));
		failed += (!dm.ok && !no_dmabuf) + !mm.ok + !cpu.ok;
		cam_close(&c);
	}
	event_base_free(base);
	return failed ? 1 : 0;
}
