/* m2m_enc_check: drives the M2M encoder session (server/encode/m2m_enc.c)
 * through vicodec's stateful encoder inside the vivid-vm guest, fed with
 * frames vivid captured, and checks what comes out by decoding it back with
 * vicodec's stateful decoder.
 *
 *   m2m_enc_check CAM ENC DEC [--tag T] [--frames N]
 *
 * Pass 1: 640x480 YU12, OUTPUT fed by DMABUF (VIDIOC_EXPBUF of vivid's
 *   buffers): 0 copies per frame, the capture buffer held until the encoder
 *   returns it; drain (ENC_CMD_STOP -> LAST buffer).
 * Pass 2: the camera switches to 1280x720; the same session is restarted
 *   (restart after a size change) with the MMAP feed: 1 copy per frame; drain.
 * Each pass: FWHT decoded with vicodec's decoder, PSNR of every frame against
 *   the captured source (>= 30 dB), key frames where the GOP says.
 * Pass 3: the daemon's own capture (server/capture/capture.c on the V4L2
 *   source) lends vivid's buffers with the dmabuf fds it exported
 *   (vc_frame.dmabuf); their bytes are checked through the fd, and they go
 *   to the encoder by DMABUF: 0 copies from the daemon's capture to the
 *   encoder, decoded back and scored as above.
 * Pass 4: a frame queued with an fd that is not a dmabuf: the device refuses
 *   it, the session fails and the frame is encoded on the CPU (libjpeg-turbo)
 *   instead: the fallback the daemon takes.
 * Each check prints "m2m_enc.<tag>.<name>: OK|FAIL why" and the figures.
 * Exit 0 when every check passed, 1 otherwise, 2 on usage errors. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <event2/thread.h>

#include "common/image.h"
#include "common/jpeg.h"
#include "server/capture/capture.h"
#include "server/encode/m2m_enc.h"

#define NCAP 4
#define MAXF 16

static const char *tag = "single";
static int failed;

static void result(const char *name, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void result(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;
	printf("m2m_enc.%s.%s: %s", tag, name, ok ? "OK" : "FAIL");
	if (fmt && *fmt) {
		printf(" (");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(")");
	}
	printf("\n");
	fflush(stdout);
	if (!ok)
		failed++;
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;
	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* ---- the camera: plain V4L2, buffers exported as dmabufs ---- */

struct cam {
	int fd;
	uint32_t w, h, bpl, sizeimage;
	void *map[NCAP];
	size_t len[NCAP];
	int dmabuf[NCAP];
	unsigned n;
};

static int cam_start(struct cam *c, const char *path, uint32_t w, uint32_t h)
{
	struct v4l2_format f;
	struct v4l2_requestbuffers rb;

	if (c->fd <= 0 && (c->fd = open(path, O_RDWR | O_NONBLOCK)) < 0)
		return -errno;
	memset(&f, 0, sizeof(f));
	f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	f.fmt.pix.width = w;
	f.fmt.pix.height = h;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUV420;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	int r = xioctl(c->fd, VIDIOC_S_FMT, &f);
	if (r < 0)
		return r;
	if (f.fmt.pix.width != w || f.fmt.pix.height != h || f.fmt.pix.pixelformat != V4L2_PIX_FMT_YUV420)
		return -EINVAL;
	c->w = w;
	c->h = h;
	c->bpl = f.fmt.pix.bytesperline;
	c->sizeimage = f.fmt.pix.sizeimage;
	memset(&rb, 0, sizeof(rb));
	rb.count = NCAP;
	rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	rb.memory = V4L2_MEMORY_MMAP;
	if ((r = xioctl(c->fd, VIDIOC_REQBUFS, &rb)) < 0)
		return r;
	c->n = rb.count < NCAP ? rb.count : NCAP;
	for (unsigned i = 0; i < c->n; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };
		struct v4l2_exportbuffer x = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .index = i,
					       .flags = O_RDONLY | O_CLOEXEC };
		if ((r = xioctl(c->fd, VIDIOC_QUERYBUF, &b)) < 0)
			return r;
		c->len[i] = b.length;
		c->map[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, c->fd, b.m.offset);
		if (c->map[i] == MAP_FAILED)
			return -errno;
		if ((r = xioctl(c->fd, VIDIOC_EXPBUF, &x)) < 0)
			return r;
		c->dmabuf[i] = x.fd;
		if ((r = xioctl(c->fd, VIDIOC_QBUF, &b)) < 0)
			return r;
	}
	uint32_t t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	return xioctl(c->fd, VIDIOC_STREAMON, &t);
}

static void cam_stop(struct cam *c)
{
	uint32_t t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers rb = { .count = 0, .type = t, .memory = V4L2_MEMORY_MMAP };

	xioctl(c->fd, VIDIOC_STREAMOFF, &t);
	for (unsigned i = 0; i < c->n; i++) {
		munmap(c->map[i], c->len[i]);
		close(c->dmabuf[i]);
	}
	c->n = 0;
	xioctl(c->fd, VIDIOC_REQBUFS, &rb);
}

struct lend { /* a captured buffer lent as a frame: its last unref re-queues it */
	struct cam *c;
	unsigned index;
};

static void cam_release(struct vc_frame *f, void *opaque)
{
	struct lend *l = opaque;
	struct v4l2_buffer b = { .index = l->index, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = V4L2_MEMORY_MMAP };
	(void)f;
	if (xioctl(l->c->fd, VIDIOC_QBUF, &b) < 0)
		fprintf(stderr, "re-queue of capture buffer %u failed\n", l->index);
	free(l);
}

/* Waits for the next captured frame (up to 3 s). */
static struct vc_frame *cam_next(struct cam *c, unsigned *index)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	struct vc_geom g;
	const struct vc_fmt *fmt = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);

	if (poll(&p, 1, 3000) <= 0 || xioctl(c->fd, VIDIOC_DQBUF, &b) < 0)
		return NULL;
	struct lend *l = malloc(sizeof(*l));
	if (!l || vc_fmt_geometry(fmt, c->w, c->h, c->bpl, &g) < 0) {
		free(l);
		return NULL;
	}
	l->c = c;
	l->index = b.index;
	uint8_t *mem[3] = { c->map[b.index] };
	size_t used[3] = { b.bytesused };
	struct vc_frame *f = vc_frame_wrap(fmt, &g, mem, used, cam_release, l);
	if (!f) {
		free(l);
		return NULL;
	}
	f->seq = b.sequence;
	*index = b.index;
	return f;
}

/* ---- results of the session ---- */

struct run {
	int done, errors, drained, keys[MAXF];
	uint8_t *coded[MAXF];
	size_t coded_len[MAXF];
	uint8_t *src[MAXF];        /* copy of each source frame (the test's, not the session's) */
	struct vc_jpeg *cpu;
	int fallbacks;
	struct vc_frame *pending[MAXF];
};

static void on_done(void *opaque, int err, const struct vc_m2m_enc_out *out, void *tagp)
{
	struct run *r = opaque;
	unsigned i = (unsigned)(uintptr_t)tagp;

	r->done++;
	if (err || !out || i >= MAXF) {
		r->errors++;
		return;
	}
	r->coded[i] = malloc(out->len);
	if (r->coded[i]) {
		memcpy(r->coded[i], out->data, out->len);
		r->coded_len[i] = out->len;
	}
	r->keys[i] = out->keyframe;
}

static void on_drained(void *opaque)
{
	((struct run *)opaque)->drained++;
}

static void spin(struct event_base *b, struct run *r, int want_done, int want_drained, int ms)
{
	for (int i = 0; i < ms / 10 && (r->done < want_done || r->drained < want_drained); i++) {
		struct timeval tv = { 0, 10000 };
		event_base_loopexit(b, &tv);
		event_base_dispatch(b);
	}
}

/* ---- vicodec's stateful decoder: FWHT back to YU12 ---- */

struct dec {
	int fd, mp;
	uint32_t out_t, cap_t;
	struct v4l2_plane pl[VIDEO_MAX_PLANES];
};

/* A v4l2_buffer for either API (planes point into d). */
static void dbuf_init(struct dec *d, struct v4l2_buffer *b, uint32_t type, unsigned index)
{
	memset(b, 0, sizeof(*b));
	memset(d->pl, 0, sizeof(d->pl));
	b->type = type;
	b->memory = V4L2_MEMORY_MMAP;
	b->index = index;
	if (d->mp) {
		b->m.planes = d->pl;
		b->length = 1;
	}
}

static size_t dbuf_len(const struct dec *d, const struct v4l2_buffer *b)
{
	return d->mp ? d->pl[0].length : b->length;
}

static off_t dbuf_off(const struct dec *d, const struct v4l2_buffer *b)
{
	return d->mp ? d->pl[0].m.mem_offset : b->m.offset;
}

static int dec_fmt(struct dec *d, uint32_t type, uint32_t fourcc, uint32_t w, uint32_t h)
{
	struct v4l2_format f = { .type = type };
	if (d->mp) {
		f.fmt.pix_mp.width = w;
		f.fmt.pix_mp.height = h;
		f.fmt.pix_mp.pixelformat = fourcc;
		f.fmt.pix_mp.num_planes = 1;
	} else {
		f.fmt.pix.width = w;
		f.fmt.pix.height = h;
		f.fmt.pix.pixelformat = fourcc;
	}
	return xioctl(d->fd, VIDIOC_S_FMT, &f);
}

struct dmap {
	void *map;
	size_t len;
};

static int dec_map(struct dec *d, uint32_t type, unsigned n, struct dmap *m, int queue)
{
	struct v4l2_buffer b;
	int r;
	for (unsigned i = 0; i < n; i++) {
		dbuf_init(d, &b, type, i);
		if ((r = xioctl(d->fd, VIDIOC_QUERYBUF, &b)) < 0)
			return r;
		m[i].len = dbuf_len(d, &b);
		m[i].map = mmap(NULL, m[i].len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, dbuf_off(d, &b));
		if (m[i].map == MAP_FAILED) {
			m[i].map = NULL;
			return -errno;
		}
		if (queue && (r = xioctl(d->fd, VIDIOC_QBUF, &b)) < 0)
			return r;
	}
	return 0;
}

static int dec_setup_cap(struct dec *d, uint32_t w, uint32_t h, struct dmap *cb, unsigned *n)
{
	struct v4l2_requestbuffers rb = { .count = 4, .type = d->cap_t, .memory = V4L2_MEMORY_MMAP };
	int r;

	if ((r = dec_fmt(d, d->cap_t, V4L2_PIX_FMT_YUV420, w, h)) < 0 ||
	    (r = xioctl(d->fd, VIDIOC_REQBUFS, &rb)) < 0)
		return r;
	*n = rb.count > 8 ? 8 : rb.count;
	if ((r = dec_map(d, d->cap_t, *n, cb, 1)) < 0)
		return r;
	uint32_t t = d->cap_t;
	return xioctl(d->fd, VIDIOC_STREAMON, &t);
}

/* Decodes n coded frames, one OUTPUT buffer each; decoded frame i goes to
 * out[i] (w*h*3/2 bytes, tightly packed). Either buffer API (vicodec
 * multiplanar=1 makes the decoder multi-planar too). Returns the frames
 * decoded or -errno. */
static int decode(const char *path, uint32_t w, uint32_t h, uint8_t **coded, size_t *clen, int n,
		  uint8_t **out)
{
	struct dec d = { .fd = open(path, O_RDWR | O_NONBLOCK) };
	struct v4l2_capability cap;
	struct v4l2_event_subscription sub = { .type = V4L2_EVENT_SOURCE_CHANGE };
	struct dmap ob[2] = { { 0 } }, cb[8] = { { 0 } };
	struct v4l2_buffer b;
	unsigned n_cap = 0;
	int obusy[2] = { 0, 0 }, r, got = 0, fed = 0, cap_on = 0, stop_sent = 0;
	size_t need = (size_t)w * h * 3 / 2;

	if (d.fd < 0)
		return -errno;
	if ((r = xioctl(d.fd, VIDIOC_QUERYCAP, &cap)) < 0)
		goto out;
	d.mp = !!(cap.device_caps & V4L2_CAP_VIDEO_M2M_MPLANE);
	d.out_t = d.mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT;
	d.cap_t = d.mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers rb = { .count = 2, .type = d.out_t, .memory = V4L2_MEMORY_MMAP };
	if ((r = dec_fmt(&d, d.out_t, V4L2_PIX_FMT_FWHT, w, h)) < 0 ||
	    (r = xioctl(d.fd, VIDIOC_SUBSCRIBE_EVENT, &sub)) < 0 ||
	    (r = xioctl(d.fd, VIDIOC_REQBUFS, &rb)) < 0 || rb.count < 2 ||
	    (r = dec_map(&d, d.out_t, 2, ob, 0)) < 0)
		goto out;
	uint32_t t = d.out_t;
	if ((r = xioctl(d.fd, VIDIOC_STREAMON, &t)) < 0)
		goto out;
	for (int turns = 0; turns < 1000 && got < n; turns++) {
		for (unsigned i = 0; i < 2 && fed < n; i++) {
			if (obusy[i] || clen[fed] > ob[i].len)
				continue;
			memcpy(ob[i].map, coded[fed], clen[fed]);
			dbuf_init(&d, &b, d.out_t, i);
			if (d.mp)
				d.pl[0].bytesused = (uint32_t)clen[fed];
			else
				b.bytesused = (uint32_t)clen[fed];
			if ((r = xioctl(d.fd, VIDIOC_QBUF, &b)) < 0)
				goto out;
			obusy[i] = 1;
			fed++;
		}
		if (fed == n && !stop_sent) {
			struct v4l2_decoder_cmd dc = { .cmd = V4L2_DEC_CMD_STOP };
			xioctl(d.fd, VIDIOC_DECODER_CMD, &dc);
			stop_sent = 1;
		}
		struct pollfd p = { .fd = d.fd, .events = POLLIN | POLLOUT | POLLPRI };
		poll(&p, 1, 200);
		struct v4l2_event ev;
		while (xioctl(d.fd, VIDIOC_DQEVENT, &ev) == 0)
			if (ev.type == V4L2_EVENT_SOURCE_CHANGE && !cap_on) {
				if ((r = dec_setup_cap(&d, w, h, cb, &n_cap)) < 0)
					goto out;
				cap_on = 1;
			}
		for (;;) {
			dbuf_init(&d, &b, d.out_t, 0);
			if (xioctl(d.fd, VIDIOC_DQBUF, &b) < 0 || b.index >= 2)
				break;
			obusy[b.index] = 0;
		}
		while (cap_on) {
			dbuf_init(&d, &b, d.cap_t, 0);
			if (xioctl(d.fd, VIDIOC_DQBUF, &b) < 0 || b.index >= n_cap)
				break;
			size_t used = d.mp ? d.pl[0].bytesused : b.bytesused;
			if (used >= need && got < n)
				memcpy(out[got++], cb[b.index].map, need);
			if (b.flags & V4L2_BUF_FLAG_LAST)
				break;
			xioctl(d.fd, VIDIOC_QBUF, &b);
		}
	}
	r = got;
out:
	for (unsigned i = 0; i < 2; i++)
		if (ob[i].map)
			munmap(ob[i].map, ob[i].len);
	for (unsigned i = 0; i < n_cap; i++)
		if (cb[i].map)
			munmap(cb[i].map, cb[i].len);
	close(d.fd);
	return r;
}

/* PSNR over all three planes of two tightly packed YU12 pictures. */
static double psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
	double se = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - b[i];
		se += d * d;
	}
	return se == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 * (double)n / se);
}

/* The source as tight YU12 (the camera's stride may be padded). */
static uint8_t *tight_copy(const struct vc_frame *f)
{
	uint32_t w = f->geom.width, h = f->geom.height;
	uint8_t *d = malloc((size_t)w * h * 3 / 2), *o = d;
	if (!d)
		return NULL;
	for (int p = 0; p < 3; p++) {
		uint32_t pw = p ? w / 2 : w, ph = p ? h / 2 : h;
		for (uint32_t y = 0; y < ph; y++, o += pw)
			memcpy(o, vc_frame_plane(f, p) + (size_t)y * f->geom.plane[p].stride, pw);
	}
	return d;
}

static void run_free(struct run *r)
{
	for (int i = 0; i < MAXF; i++) {
		free(r->coded[i]);
		free(r->src[i]);
		vc_frame_unref(r->pending[i]);
	}
	memset(r, 0, sizeof(*r));
}

/* Captures n frames from c, encodes them through e, drains. */
static void encode_pass(struct event_base *base, struct vc_m2m_enc *e, struct cam *c, struct run *r,
			int n, int dmabuf, const char *name)
{
	int submitted = 0;
	char what[64];
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		unsigned idx;
		struct vc_frame *f = cam_next(c, &idx);
		if (!f)
			break;
		r->src[i] = tight_copy(f);
		struct vc_m2m_enc_in in = { f, { dmabuf ? c->dmabuf[idx] : -1, -1, -1 },
					    (void *)(uintptr_t)i };
		int s;
		for (int k = 0; k < 300 && (s = vc_m2m_enc_submit(e, &in)) == -EBUSY; k++)
			spin(base, r, r->done + 1, 0, 10);
		vc_frame_unref(f); /* the session holds its own ref while it needs the buffer */
		if (s < 0) {
			snprintf(what, sizeof(what), "%s_submit", name);
			result(what, 0, "frame %d: %s", i, strerror(-s));
			break;
		}
		submitted++;
		spin(base, r, 0, 0, 0);
	}
	spin(base, r, submitted, 0, 5000);
	int dr = vc_m2m_enc_drain(e);
	spin(base, r, submitted, 1, 5000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snprintf(what, sizeof(what), "%s_encode", name);
	result(what, submitted == n && r->done == n && !r->errors, "%d of %d frames coded, %d errors, %.2f s",
	       r->done, n, r->errors, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	snprintf(what, sizeof(what), "%s_drain", name);
	result(what, dr == 0 && r->drained == 1, "ENC_CMD_STOP %d, drained %d", dr, r->drained);
}

static void check_pass(const char *decdev, struct vc_m2m_enc *e, struct run *r, int n, uint32_t w,
		       uint32_t h, int want_dmabuf, const char *name, uint64_t copies_before)
{
	char what[64];
	uint8_t *dec[MAXF] = { 0 };
	struct vc_m2m_enc_stats st;
	size_t total = 0;

	vc_m2m_enc_get_stats(e, &st);
	uint64_t copies = st.copies - copies_before;
	snprintf(what, sizeof(what), "%s_copies", name);
	result(what, st.dmabuf == want_dmabuf && copies == (want_dmabuf ? 0 : (uint64_t)n),
	       "feed %s, %.2f copies per frame", st.dmabuf ? "DMABUF" : "MMAP", (double)copies / n);
	for (int i = 0; i < n; i++) {
		dec[i] = malloc((size_t)w * h * 3 / 2);
		total += r->coded_len[i];
	}
	int got = decode(decdev, w, h, r->coded, r->coded_len, n, dec);
	double min = 1e9, sum = 0;
	for (int i = 0; i < got && i < n; i++) {
		double p = r->src[i] ? psnr(r->src[i], dec[i], (size_t)w * h * 3 / 2) : 0;
		min = p < min ? p : min;
		sum += p;
	}
	snprintf(what, sizeof(what), "%s_psnr", name);
	result(what, got == n && min >= 30.0, "%ux%u, %d of %d decoded, PSNR min %.1f dB mean %.1f dB, %.1f KiB/frame",
	       w, h, got, n, got > 0 ? min : 0.0, got > 0 ? sum / got : 0.0, total / 1024.0 / n);
	/* vicodec's GOP (set to 4 here): an I-frame, then P-frames, I again at 4 */
	int keys_ok = r->keys[0] && (n < 2 || !r->keys[1]) && (n < 5 || r->keys[4]);
	snprintf(what, sizeof(what), "%s_keyframes", name);
	result(what, keys_ok, "key flags %d%d%d%d%d...", r->keys[0], r->keys[1], r->keys[2], r->keys[3],
	       r->keys[4]);
	for (int i = 0; i < n; i++)
		free(dec[i]);
}

/* ---- pass 3: frames from the daemon's capture layer ---- */

struct dcap {
	struct event_base *base;
	struct vc_m2m_enc *e;
	struct run *r;
	int n, want, no_fd, mismatch, busy;
	size_t src_len;
};

/* The exported buffer holds the frame's bytes (read through the fd). */
static int same_through_fd(const struct vc_frame *f)
{
	size_t len = f->bytesused[0];
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, f->dmabuf[0], 0);
	if (m == MAP_FAILED)
		return 0;
	int same = memcmp(m, f->mem[0], len) == 0;
	munmap(m, len);
	return same;
}

static void dcap_frame(void *opaque, struct vc_frame *f)
{
	struct dcap *d = opaque;

	if (d->n >= d->want || f->fmt->fourcc != V4L2_PIX_FMT_YUV420 || f->geom.width != 640)
		return;
	if (f->n_dmabuf != 1) {
		d->no_fd++;
		return;
	}
	if (!same_through_fd(f))
		d->mismatch++;
	struct vc_m2m_enc_in in = { f, { f->dmabuf[0], -1, -1 }, (void *)(uintptr_t)d->n };
	int s = vc_m2m_enc_submit(d->e, &in);
	if (s == -EBUSY) {
		d->busy++;
		return;
	}
	if (s < 0)
		return;
	d->r->src[d->n] = tight_copy(f);
	d->n++;
}

static void dcap_event(void *opaque, struct vc_cam *cam)
{
	(void)opaque;
	(void)cam;
}

static void daemon_pass(struct event_base *base, struct vc_m2m_enc *e, const char *camdev,
			const char *decdev, int n, struct run *rp)
{
	struct run *r = rp; /* the session's callbacks fill it */
	struct dcap d = { base, e, r, 0, n, 0, 0, 0, 0 };
	struct vc_conf_cam cfg = { .name = (char *)"m2m", .device = (char *)camdev, .input = -1, .idle_stop_ms = -1 };
	struct vc_cam *cam = NULL;
	struct vc_m2m_enc_stats st;

	cfg.mode = (struct vc_mode){ V4L2_PIX_FMT_YUV420, 640, 480, { 0, 0 } };
	vc_m2m_enc_get_stats(e, &st);
	uint64_t copies0 = st.copies;
	int c = vc_cam_new(base, &cfg, &cam);
	if (c == 0) {
		vc_cam_set_callbacks(cam, dcap_frame, dcap_event, &d);
		vc_cam_acquire(cam);
		for (int i = 0; i < 800 && d.n < n; i++) {
			struct timeval tv = { 0, 10000 };
			event_base_loopexit(base, &tv);
			event_base_dispatch(base);
		}
	}
	result("daemon_capture_fds", c == 0 && d.n == n && d.mismatch == 0,
	       "%s: %d frames lent with their dmabuf fd, %d without, %d differ through the fd%s", camdev,
	       d.n, d.no_fd, d.mismatch, c ? " (camera did not open)" : "");
	spin(base, r, d.n, 0, 5000);
	int dr = vc_m2m_enc_drain(e);
	spin(base, r, d.n, 1, 5000);
	if (cam) {
		vc_cam_release(cam);
		vc_cam_free(cam);
	}
	result("daemon_drain", dr == 0 && r->drained == 1 && r->done == n && !r->errors,
	       "%d of %d coded, drained %d", r->done, n, r->drained);
	if (d.n == n)
		check_pass(decdev, e, r, n, 640, 480, 1, "daemon", copies0);
	run_free(r);
}

static struct vc_m2m_enc_params params(const struct cam *c, int feed)
{
	struct vc_m2m_enc_params p = { 0 };
	p.in_fourcc = V4L2_PIX_FMT_YUV420;
	p.width = c->w;
	p.height = c->h;
	p.bytesperline = c->bpl;
	p.coded_fourcc = V4L2_PIX_FMT_FWHT;
	p.feed = feed;
	p.src_len[0] = c->len[0];
	p.gop = 4;
	p.bitrate = 1000000; /* vicodec has none: logged, not fatal */
	p.n_output = 2;
	p.n_capture = 4;
	p.timeout_ms = 3000;
	return p;
}

int main(int argc, char **argv)
{
	int nframes = 8;

	evthread_use_pthreads(); /* capture.c's frame releases */
	if (argc < 4) {
		fprintf(stderr, "usage: m2m_enc_check CAM ENC DEC [--tag T] [--frames N]\n");
		return 2;
	}
	for (int i = 4; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tag"))
			tag = argv[i + 1];
		else if (!strcmp(argv[i], "--frames"))
			nframes = atoi(argv[i + 1]);
	}
	if (nframes < 5 || nframes > MAXF)
		nframes = 8;
	const char *camdev = argv[1], *encdev = argv[2], *decdev = argv[3];
	struct event_base *base = event_base_new();
	struct cam c = { 0 };
	struct run r = { 0 };
	struct vc_m2m_enc *e = NULL;
	struct vc_m2m_enc_cb cb = { on_done, on_drained, &r };

	int s = cam_start(&c, camdev, 640, 480);
	result("camera", s == 0, "%s 640x480 YU12: %s", camdev, s ? strerror(-s) : "streaming, buffers exported");
	if (s)
		return 1;
	struct vc_m2m_enc_params p = params(&c, VC_M2M_FEED_DMABUF);
	s = vc_m2m_enc_open(base, NULL, encdev, &p, &cb, &e);
	result("open", s == 0, "%s: %s", encdev, s ? strerror(-s) : "configured, streaming");
	if (s)
		return 1;
	struct vc_m2m_enc_stats st;
	vc_m2m_enc_get_stats(e, &st);
	printf("m2m_enc.%s: api %s\n", tag, st.mplane ? "multi-planar" : "single-planar");
	int fk = vc_m2m_enc_force_key(e);
	result("controls", vc_m2m_enc_error(e) == 0, "force key frame: %s (vicodec has no such control)",
	       fk ? strerror(-fk) : "set");

	/* pass 1: DMABUF, 640x480 */
	encode_pass(base, e, &c, &r, nframes, 1, "dmabuf");
	check_pass(decdev, e, &r, nframes, 640, 480, 1, "dmabuf", 0);
	run_free(&r);

	/* pass 2: the camera changes size; restart the same session, MMAP feed */
	cam_stop(&c);
	s = cam_start(&c, camdev, 1280, 720);
	p = params(&c, VC_M2M_FEED_MMAP);
	vc_m2m_enc_get_stats(e, &st);
	uint64_t copies0 = st.copies;
	int rs = s == 0 ? vc_m2m_enc_restart(e, &p) : s;
	result("restart", rs == 0, "1280x720 after 640x480: %s", rs ? strerror(-rs) : "restarted");
	if (rs == 0) {
		int n2 = nframes > 6 ? 6 : nframes;
		encode_pass(base, e, &c, &r, n2, 0, "mmap");
		check_pass(decdev, e, &r, n2, 1280, 720, 0, "mmap", copies0);
		run_free(&r);
	}

	/* pass 3: the daemon's capture lends vivid's buffers with their fds */
	cam_stop(&c);
	close(c.fd);
	c.fd = 0;
	p = params(&c, VC_M2M_FEED_DMABUF);
	p.width = 640;
	p.height = 480;
	p.bytesperline = 640;
	p.src_len[0] = 640 * 480 * 3 / 2;
	rs = vc_m2m_enc_restart(e, &p);
	result("daemon_restart", rs == 0, "640x480 DMABUF: %s", rs ? strerror(-rs) : "restarted");
	if (rs == 0)
		daemon_pass(base, e, camdev, decdev, nframes, &r);

	/* pass 4: the device refuses a frame (an fd that is no dmabuf): the
	 * session fails and the frame is encoded on the CPU */
	s = cam_start(&c, camdev, 640, 480);
	p = params(&c, VC_M2M_FEED_DMABUF);
	rs = s == 0 ? vc_m2m_enc_restart(e, &p) : s;
	unsigned idx;
	struct vc_frame *f = rs == 0 ? cam_next(&c, &idx) : NULL;
	int fb = 0, sr = -1;
	if (f) {
		int bogus = open("/dev/null", O_RDONLY);
		struct vc_m2m_enc_in in = { f, { bogus, -1, -1 }, (void *)(uintptr_t)0 };
		sr = vc_m2m_enc_submit(e, &in);
		close(bogus);
		if (sr < 0) { /* the caller's fallback: libjpeg-turbo */
			struct vc_jpeg *j = vc_jpeg_new();
			struct vc_image img;
			size_t cap = vc_jpeg_bound(c.w, c.h), len = 0;
			uint8_t *buf = malloc(cap);
			fb = j && buf && vc_image_from_frame(f, &img) == 0 &&
			     vc_jpeg_encode(j, &img, 80, buf, cap, &len) == 0 && len > 0;
			free(buf);
			vc_jpeg_free(j);
		}
		vc_frame_unref(f);
	}
	spin(base, &r, 1, 0, 100);
	int err = vc_m2m_enc_error(e);
	result("fallback", rs == 0 && sr < 0 && err == sr && fb,
	       "submit of a non-dmabuf fd: %s, session error %s, CPU encode %s", strerror(-sr),
	       strerror(-err), fb ? "done" : "failed");
	vc_m2m_enc_close(e);
	cam_stop(&c);
	close(c.fd);
	event_base_free(base);
	printf("m2m_enc.%s: %d failed\n", tag, failed);
	return failed ? 1 : 0;
}
