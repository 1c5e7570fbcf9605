/* The M2M encoder session (server/encode/m2m_enc.c) against a fake
 * memory-to-memory JPEG encoder behind struct vc_m2m_enc_io. The fake plays
 * bcm2835-codec's image encoder (/dev/video31: multi-planar API, JPEG out,
 * a JPEG quality control, no video controls) or, single-planar, a vicodec-like
 * node; it encodes with libjpeg-turbo, so the bytes that come back are real
 * JPEGs of the submitted frames. Its fd is an eventfd, readable while a coded
 * buffer waits, so the session runs on a real libevent loop.
 *
 * Checked: the exact ioctl sequence of setup, streaming, drain, restart and
 * teardown (the sequence server/encode/M2M.md documents for bcm2835-codec);
 * MMAP feed with one copy per frame, DMABUF feed with none and the frame held
 * until the OUTPUT buffer returns; and the fallback: a device that errors,
 * vanishes or hangs fails the session, the frames in flight come back with the
 * error, and the caller encodes them on the CPU. */
#include <errno.h>
#include <event2/event.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "check.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "server/encode/m2m_enc.h"

#define NB 8

struct fbuf {
	uint8_t *mem[3];
	size_t len[3];
	uint32_t used[3];
	int dmabuf_fd[3];
	uint32_t flags;
	struct timeval ts;
};

struct fake {
	int mplane;
	int efd;
	int opened, maps;
	uint32_t caps;
	uint32_t cap_fourcc, out_fourcc, w, h, bpl;
	uint32_t buf_h;            /* OUTPUT buffer height: h padded to 16 lines, as bcm2835-codec does */
	size_t out_size[3];
	unsigned n_planes;
	unsigned out_mem;
	struct fbuf out[NB], cap[NB];
	unsigned n_out, n_cap;
	int outq[NB], capq[NB], outdone[NB], capdone[NB]; /* FIFOs of indices */
	int n_outq, n_capq, n_outdone, n_capdone;
	int on_out, on_cap;
	int stop_pending, last_sent;
	int quality;
	int hang;                  /* never finishes a job */
	unsigned long fail_req;    /* this ioctl fails... */
	uint32_t fail_type;        /* ...on this queue (0 = any) */
	int fail_after, fail_err;  /* ...after this many successes, with -fail_err */
	uint8_t *dmabuf_mem[64];   /* the test's fake dmabufs, by fd */
	size_t dmabuf_len[64];
	char log[4096];
	struct vc_jpeg *jpeg;
};

static void logf_(struct fake *f, const char *s)
{
	size_t n = strlen(f->log);
	snprintf(f->log + n, sizeof(f->log) - n, "%s%s", n ? " " : "", s);
}

static const char *qname(uint32_t t)
{
	return t == V4L2_BUF_TYPE_VIDEO_OUTPUT || t == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE ? "OUT" : "CAP";
}

static int is_out(uint32_t t)
{
	return t == V4L2_BUF_TYPE_VIDEO_OUTPUT || t == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
}

static void push(int *q, int *n, int v) { q[(*n)++] = v; }
static int pop(int *q, int *n)
{
	int v = q[0];
	memmove(q, q + 1, (size_t)(--*n) * sizeof(int));
	return v;
}

/* readable while the session has something to dequeue */
static void signal_fd(struct fake *f)
{
	uint64_t v;
	if (read(f->efd, &v, sizeof(v)) < 0) { /* cleared; EAGAIN when it was */ }
	if (f->n_capdone || f->n_outdone) {
		v = 1;
		if (write(f->efd, &v, sizeof(v)) < 0)
			perror("eventfd");
	}
}

/* One encode job per (OUTPUT, CAPTURE) pair, as an M2M device runs them. */
static void run_jobs(struct fake *f)
{
	while (!f->hang && f->on_out && f->on_cap && f->n_outq && f->n_capq) {
		int oi = pop(f->outq, &f->n_outq), ci = pop(f->capq, &f->n_capq);
		struct fbuf *o = &f->out[oi], *c = &f->cap[ci];
		const struct vc_fmt *fmt = vc_fmt_by_fourcc(f->out_fourcc);
		struct vc_geom g;
		uint8_t *mem[3] = { 0 };
		struct vc_image img;
		size_t len = 0;
		for (unsigned p = 0; p < f->n_planes; p++)
			mem[p] = f->out_mem == V4L2_MEMORY_DMABUF ? f->dmabuf_mem[o->dmabuf_fd[p]]
								  : o->mem[p];
		vc_fmt_geometry(fmt, f->w, f->buf_h, f->bpl, &g);
		vc_image_from_geom(fmt, &g, mem, &img);
		img.height = f->h; /* the padding lines are not part of the picture */
		int r = vc_jpeg_encode(f->jpeg, &img, f->quality, c->mem[0], c->len[0], &len);
		c->used[0] = r ? 0 : (uint32_t)len;
		c->flags = V4L2_BUF_FLAG_KEYFRAME | (r ? V4L2_BUF_FLAG_ERROR : 0);
		c->ts = o->ts;
		push(f->outdone, &f->n_outdone, oi);
		push(f->capdone, &f->n_capdone, ci);
	}
	if (f->stop_pending && !f->n_outq && f->n_capq && !f->hang) {
		int ci = pop(f->capq, &f->n_capq);
		f->cap[ci].used[0] = 0;
		f->cap[ci].flags = V4L2_BUF_FLAG_LAST;
		push(f->capdone, &f->n_capdone, ci);
		f->stop_pending = 0;
	}
	signal_fd(f);
}

static int f_open(void *opaque, const char *path)
{
	struct fake *f = opaque;
	(void)path;
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	f->opened++;
	logf_(f, "open");
	return f->efd;
}

static void f_close(void *opaque, int fd)
{
	struct fake *f = opaque;
	close(fd);
	f->opened--;
	logf_(f, "close");
}

static void *f_mmap(void *opaque, int fd, size_t len, off_t off)
{
	struct fake *f = opaque;
	(void)fd;
	/* offsets: 0x10000 * queue (0 out, 1 cap) + 0x100 * index + plane */
	struct fbuf *b = (off >> 16) ? &f->cap[(off >> 8) & 0xff] : &f->out[(off >> 8) & 0xff];
	if (len != b->len[off & 0xff])
		return NULL;
	f->maps++;
	return b->mem[off & 0xff];
}

static void f_munmap(void *opaque, void *addr, size_t len)
{
	struct fake *f = opaque;
	(void)addr;
	(void)len;
	f->maps--;
}

static int do_fmt(struct fake *f, struct v4l2_format *v)
{
	char s[64];
	int out = is_out(v->type);
	uint32_t fourcc = f->mplane ? v->fmt.pix_mp.pixelformat : v->fmt.pix.pixelformat;
	uint32_t w = f->mplane ? v->fmt.pix_mp.width : v->fmt.pix.width;
	uint32_t h = f->mplane ? v->fmt.pix_mp.height : v->fmt.pix.height;
	snprintf(s, sizeof(s), "S_FMT(%s,%.4s,%ux%u)", qname(v->type), (char *)&fourcc, w, h);
	logf_(f, s);
	if ((f->mplane != (v->type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE ||
			   v->type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE)))
		return -EINVAL;
	if (!out) { /* only JPEG out: anything else is answered with JPEG, like a driver */
		f->cap_fourcc = V4L2_PIX_FMT_JPEG;
		if (f->mplane) {
			v->fmt.pix_mp.pixelformat = f->cap_fourcc;
			v->fmt.pix_mp.num_planes = 1;
			v->fmt.pix_mp.plane_fmt[0].sizeimage = (uint32_t)vc_jpeg_bound(w, h);
		} else {
			v->fmt.pix.pixelformat = f->cap_fourcc;
			v->fmt.pix.sizeimage = (uint32_t)vc_jpeg_bound(w, h);
		}
		return 0;
	}
	const struct vc_fmt *fmt = vc_fmt_by_fourcc(fourcc);
	struct vc_geom g;
	/* bcm2835-codec aligns bytesperline (to 32 here): the session must
	 * take the driver's stride from the reply */
	uint32_t bpl = (vc_fmt_min_stride(fmt, w) + 31) & ~31u, buf_h = (h + 15) & ~15u;
	if (vc_fmt_geometry(fmt, w, buf_h, bpl, &g) < 0)
		return -EINVAL;
	f->out_fourcc = fourcc;
	f->w = w;
	f->h = h;
	f->buf_h = buf_h;
	f->bpl = bpl;
	f->n_planes = g.mem_planes;
	for (unsigned p = 0; p < 3; p++)
		f->out_size[p] = g.mem_size[p];
	if (f->mplane) {
		v->fmt.pix_mp.height = buf_h;
		v->fmt.pix_mp.num_planes = (uint8_t)g.mem_planes;
		for (unsigned p = 0; p < g.mem_planes; p++) {
			v->fmt.pix_mp.plane_fmt[p].bytesperline = p ? g.plane[p].stride : bpl;
			v->fmt.pix_mp.plane_fmt[p].sizeimage = (uint32_t)g.mem_size[p];
		}
	} else {
		v->fmt.pix.height = buf_h;
		v->fmt.pix.bytesperline = bpl;
		v->fmt.pix.sizeimage = (uint32_t)g.sizeimage;
	}
	return 0;
}

static void free_bufs(struct fbuf *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned p = 0; p < 3; p++) {
			free(b[i].mem[p]);
			b[i].mem[p] = NULL;
		}
}

static int do_reqbufs(struct fake *f, struct v4l2_requestbuffers *rb)
{
	char s[64];
	int out = is_out(rb->type);
	snprintf(s, sizeof(s), "REQBUFS(%s,%s,%u)", qname(rb->type),
		 rb->memory == V4L2_MEMORY_DMABUF ? "DMABUF" : "MMAP", rb->count);
	logf_(f, s);
	if ((out && f->on_out) || (!out && f->on_cap))
		return -EBUSY;
	if (rb->count && f->maps && !out && f->n_cap)
		return -EBUSY;
	struct fbuf *b = out ? f->out : f->cap;
	free_bufs(b, out ? f->n_out : f->n_cap);
	unsigned n = rb->count > NB ? NB : rb->count;
	for (unsigned i = 0; i < n; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		for (unsigned p = 0; p < (out ? f->n_planes : 1); p++) {
			b[i].len[p] = out ? f->out_size[p] : vc_jpeg_bound(f->w, f->h);
			if (!out || rb->memory == V4L2_MEMORY_MMAP)
				b[i].mem[p] = malloc(b[i].len[p]);
		}
	}
	if (out) {
		f->n_out = n;
		f->out_mem = rb->memory;
	} else {
		f->n_cap = n;
	}
	rb->count = n;
	return 0;
}

static int do_querybuf(struct fake *f, struct v4l2_buffer *b)
{
	char s[64];
	int out = is_out(b->type);
	snprintf(s, sizeof(s), "QUERYBUF(%s,%u)", qname(b->type), b->index);
	logf_(f, s);
	struct fbuf *fb = out ? &f->out[b->index] : &f->cap[b->index];
	unsigned np = out ? f->n_planes : 1;
	uint32_t base = (out ? 0 : 0x10000) + 0x100 * b->index;
	if (b->index >= (out ? f->n_out : f->n_cap))
		return -EINVAL;
	if (f->mplane) {
		if (b->length < np)
			return -EINVAL;
		for (unsigned p = 0; p < np; p++) {
			b->m.planes[p].length = (uint32_t)fb->len[p];
			b->m.planes[p].m.mem_offset = base + p;
		}
		b->length = np;
	} else {
		b->length = (uint32_t)fb->len[0];
		b->m.offset = base;
	}
	return 0;
}

static int do_qbuf(struct fake *f, struct v4l2_buffer *b)
{
	char s[64];
	int out = is_out(b->type);
	snprintf(s, sizeof(s), "QBUF(%s,%u)", qname(b->type), b->index);
	logf_(f, s);
	if (b->index >= (out ? f->n_out : f->n_cap))
		return -EINVAL;
	if (out) {
		struct fbuf *o = &f->out[b->index];
		for (unsigned p = 0; p < f->n_planes; p++) {
			uint32_t used = f->mplane ? b->m.planes[p].bytesused : b->bytesused;
			int fd = f->mplane ? b->m.planes[p].m.fd : b->m.fd;
			if (used < f->out_size[p])
				return -EINVAL;
			if (f->out_mem == V4L2_MEMORY_DMABUF) {
				if (fd < 0 || fd >= 64 || !f->dmabuf_mem[fd] ||
				    f->dmabuf_len[fd] < f->out_size[p])
					return -EINVAL;
				o->dmabuf_fd[p] = fd;
			}
		}
		o->ts = b->timestamp;
		push(f->outq, &f->n_outq, (int)b->index);
	} else {
		push(f->capq, &f->n_capq, (int)b->index);
	}
	run_jobs(f);
	return 0;
}

static int do_dqbuf(struct fake *f, struct v4l2_buffer *b)
{
	int out = is_out(b->type);
	if (out) {
		if (!f->n_outdone)
			return -EAGAIN;
		b->index = (unsigned)pop(f->outdone, &f->n_outdone);
	} else {
		if (f->last_sent && !f->n_capdone)
			return -EPIPE;
		if (!f->n_capdone)
			return -EAGAIN;
		b->index = (unsigned)pop(f->capdone, &f->n_capdone);
		struct fbuf *c = &f->cap[b->index];
		b->flags = c->flags;
		b->timestamp = c->ts;
		if (f->mplane) {
			b->m.planes[0].bytesused = c->used[0];
			b->m.planes[0].data_offset = 0;
		} else {
			b->bytesused = c->used[0];
		}
		if (c->flags & V4L2_BUF_FLAG_LAST)
			f->last_sent = 1;
	}
	char s[64];
	snprintf(s, sizeof(s), "DQBUF(%s,%u)", qname(b->type), b->index);
	logf_(f, s);
	signal_fd(f);
	return 0;
}

static int do_stream(struct fake *f, uint32_t type, int on)
{
	char s[64];
	snprintf(s, sizeof(s), "%s(%s)", on ? "STREAMON" : "STREAMOFF", qname(type));
	logf_(f, s);
	if (is_out(type)) {
		f->on_out = on;
		if (!on)
			f->n_outq = f->n_outdone = 0;
	} else {
		f->on_cap = on;
		if (!on) {
			f->n_capq = f->n_capdone = 0;
			f->last_sent = f->stop_pending = 0;
		}
	}
	run_jobs(f);
	return 0;
}

static int f_ioctl(void *opaque, int fd, unsigned long req, void *arg)
{
	struct fake *f = opaque;
	char s[64];
	(void)fd;
	if (req == f->fail_req) {
		uint32_t t = req == VIDIOC_QBUF || req == VIDIOC_DQBUF ? ((struct v4l2_buffer *)arg)->type : 0;
		if ((!f->fail_type || t == f->fail_type) && f->fail_after-- <= 0) {
			logf_(f, "FAIL");
			return -f->fail_err;
		}
	}
	switch (req) {
	case VIDIOC_QUERYCAP: {
		struct v4l2_capability *c = arg;
		logf_(f, "QUERYCAP");
		memset(c, 0, sizeof(*c));
		c->capabilities = f->caps | V4L2_CAP_DEVICE_CAPS;
		c->device_caps = f->caps;
		return 0;
	}
	case VIDIOC_S_FMT: return do_fmt(f, arg);
	case VIDIOC_QUERYCTRL: {
		struct v4l2_queryctrl *q = arg;
		snprintf(s, sizeof(s), "QUERYCTRL(%#x)", q->id);
		logf_(f, s);
		return q->id == V4L2_CID_JPEG_COMPRESSION_QUALITY ? 0 : -EINVAL;
	}
	case VIDIOC_S_CTRL: {
		struct v4l2_control *c = arg;
		snprintf(s, sizeof(s), "S_CTRL(%#x,%d)", c->id, c->value);
		logf_(f, s);
		if (c->id != V4L2_CID_JPEG_COMPRESSION_QUALITY)
			return -EINVAL;
		f->quality = c->value;
		return 0;
	}
	case VIDIOC_S_PARM: logf_(f, "S_PARM"); return 0;
	case VIDIOC_REQBUFS: return do_reqbufs(f, arg);
	case VIDIOC_QUERYBUF: return do_querybuf(f, arg);
	case VIDIOC_QBUF: return do_qbuf(f, arg);
	case VIDIOC_DQBUF: return do_dqbuf(f, arg);
	case VIDIOC_STREAMON: return do_stream(f, *(uint32_t *)arg, 1);
	case VIDIOC_STREAMOFF: return do_stream(f, *(uint32_t *)arg, 0);
	case VIDIOC_ENCODER_CMD: {
		struct v4l2_encoder_cmd *c = arg;
		logf_(f, c->cmd == V4L2_ENC_CMD_STOP ? "ENCODER_CMD(STOP)" : "ENCODER_CMD(?)");
		f->stop_pending = c->cmd == V4L2_ENC_CMD_STOP;
		run_jobs(f);
		return 0;
	}
	}
	snprintf(s, sizeof(s), "ioctl(%#lx)", req);
	logf_(f, s);
	return -ENOTTY;
}

static void fake_init(struct fake *f, int mplane, struct vc_m2m_enc_io *io)
{
	memset(f, 0, sizeof(*f));
	f->mplane = mplane;
	f->caps = (mplane ? V4L2_CAP_VIDEO_M2M_MPLANE : V4L2_CAP_VIDEO_M2M) | V4L2_CAP_STREAMING;
	f->quality = 75;
	f->jpeg = vc_jpeg_new();
	*io = (struct vc_m2m_enc_io){ f_open, f_ioctl, f_mmap, f_munmap, f_close, f };
}

static void fake_free(struct fake *f)
{
	free_bufs(f->out, NB);
	free_bufs(f->cap, NB);
	vc_jpeg_free(f->jpeg);
}

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

int main(void)
{
	RUN("m2m_enc", sequence_mplane_mmap);
	RUN("m2m_enc", dmabuf_single);
	RUN("m2m_enc", dmabuf_refused);
	RUN("m2m_enc", auto_feed_mmap_on_stride);
	RUN("m2m_enc", fallback);
	RUN("m2m_enc", close_in_callback);
	RUN("m2m_enc", open_errors);
	CHECK_EXIT();
}
