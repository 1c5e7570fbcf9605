/* A fake V4L2 memory-to-memory JPEG (or H.264) encoder behind struct vc_m2m_enc_io, for
 * tests of server/encode/m2m_enc.c and of its users: it plays
 * bcm2835-codec's image encoder (/dev/video31: multi-planar API, JPEG out,
 * stride aligned to 32 bytes, buffer height padded to 16 lines, a JPEG
 * quality control and no video controls) or, single-planar, a vicodec-like
 * node, and encodes with libjpeg-turbo, so what comes back is a real JPEG of
 * the frame. Its fd is an eventfd, readable while a buffer waits to be
 * dequeued, so a session runs on a real libevent loop. It logs every ioctl
 * in `log` (for exact sequence checks) and can fail one ioctl on request.
 * With `h264` set before the session opens it plays bcm2835-codec's video
 * encoder (/dev/video11) instead: H.264 out, made by common/h264enc.c from
 * YUYV frames, with the video controls (bitrate, GOP size, I-period,
 * repeat sequence header, profile, level, force key frame), each of which
 * a test can take away, and the quirks of other encoders on request: no
 * key-frame flag, SPS/PPS in a buffer of their own, SPS/PPS only before
 * the first IDR (when repeat sequence header is not set).
 * Everything static: included by one test file each. */
#ifndef VC_TEST_FAKE_M2M_H
#define VC_TEST_FAKE_M2M_H

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/h264.h"
#include "common/h264enc.h"
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
	int jobs;                  /* frames encoded */
	unsigned long fail_req;    /* this ioctl fails... */
	uint32_t fail_type;        /* ...on this queue (0 = any) */
	int fail_after, fail_err;  /* ...after this many successes, with -fail_err */
	uint8_t *dmabuf_mem[64];   /* the test's fake dmabufs, by fd */
	size_t dmabuf_len[64];
	char log[4096];
	struct vc_jpeg *jpeg;
	/* H.264 mode */
	int h264;
	unsigned lacks;            /* bit i: control ctrl_ids[i] absent */
	int no_key_flag;           /* never sets V4L2_BUF_FLAG_KEYFRAME */
	int flag_every;            /* sets V4L2_BUF_FLAG_KEYFRAME on every picture */
	int hdr_apart;             /* SPS/PPS in a CAPTURE buffer before the picture's */
	int bitrate, gop, i_period, repeat_hdr, profile, level;
	int force_key, forced;     /* FORCE_KEY_FRAME pending; times asked */
	int idrs_sent;
	struct vc_h264enc *enc;
	uint8_t *i420;
};

/* The H.264 node's controls, in the order of fake.lacks' bits. */
static const uint32_t ctrl_ids[] = {
	V4L2_CID_MPEG_VIDEO_BITRATE, V4L2_CID_MPEG_VIDEO_GOP_SIZE,
	V4L2_CID_MPEG_VIDEO_H264_I_PERIOD, V4L2_CID_MPEG_VIDEO_REPEAT_SEQ_HEADER,
	V4L2_CID_MPEG_VIDEO_H264_PROFILE, V4L2_CID_MPEG_VIDEO_H264_LEVEL,
	V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME,
};
enum { LACK_BITRATE = 1, LACK_GOP = 2, LACK_I_PERIOD = 4, LACK_REPEAT = 8, LACK_PROFILE = 16,
       LACK_LEVEL = 32, LACK_FORCE_KEY = 64 };

static int has_ctrl_(const struct fake *f, uint32_t id)
{
	if (!f->h264)
		return id == V4L2_CID_JPEG_COMPRESSION_QUALITY;
	for (unsigned i = 0; i < sizeof(ctrl_ids) / sizeof(ctrl_ids[0]); i++)
		if (ctrl_ids[i] == id)
			return !(f->lacks & (1u << i));
	return 0;
}

static void set_ctrl_(struct fake *f, uint32_t id, int v)
{
	switch (id) {
	case V4L2_CID_JPEG_COMPRESSION_QUALITY: f->quality = v; break;
	case V4L2_CID_MPEG_VIDEO_BITRATE: f->bitrate = v; break;
	case V4L2_CID_MPEG_VIDEO_GOP_SIZE: f->gop = v; break;
	case V4L2_CID_MPEG_VIDEO_H264_I_PERIOD: f->i_period = v; break;
	case V4L2_CID_MPEG_VIDEO_REPEAT_SEQ_HEADER: f->repeat_hdr = v; break;
	case V4L2_CID_MPEG_VIDEO_H264_PROFILE: f->profile = v; break;
	case V4L2_CID_MPEG_VIDEO_H264_LEVEL: f->level = v; break;
	case V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME: f->force_key = 1; f->forced++; break;
	}
}

static size_t cap_len(const struct fake *f)
{
	return f->h264 ? (size_t)f->w * f->h * 2 + 4096 : vc_jpeg_bound(f->w, f->h);
}

/* Copies the NAL units of an access unit but SPS/PPS (when drop_ps) into
 * dst; returns the length. */
static size_t copy_nals(uint8_t *dst, const uint8_t *src, size_t len, int drop_ps, int only_ps)
{
	size_t pos = 0, n = 0;
	struct vc_nal nal;

	while (vc_h264_next_nal(src, len, &pos, &nal)) {
		int ps = nal.type == VC_NAL_SPS || nal.type == VC_NAL_PPS;
		if ((ps && drop_ps) || (!ps && only_ps))
			continue;
		memcpy(dst + n, "\0\0\0\1", 4);
		memcpy(dst + n + 4, nal.data, nal.len);
		n += 4 + nal.len;
	}
	return n;
}

/* One H.264 job: the YUYV OUTPUT buffer to I420, encoded; returns the
 * CAPTURE buffer's flags (ERROR when it cannot). The SPS/PPS go into
 * *hdr_buf (when hdr_apart and one is free) or are dropped after the first
 * IDR when repeat sequence header is off. */
static uint32_t h264_job(struct fake *f, const uint8_t *src, struct fbuf *c, struct fbuf *hdr)
{
	uint32_t w = f->w, h = f->h;
	struct vc_h264enc_out eo;

	if (!f->enc) {
		struct vc_h264enc_cfg cfg = { w, h, 30, (uint32_t)f->bitrate,
					      (uint32_t)(f->i_period ? f->i_period : f->gop) };
		if (vc_h264enc_new(&cfg, &f->enc) < 0)
			return V4L2_BUF_FLAG_ERROR;
		free(f->i420);
		f->i420 = malloc((size_t)w * h * 3 / 2);
	}
	if (!f->i420 || f->out_fourcc != V4L2_PIX_FMT_YUYV)
		return V4L2_BUF_FLAG_ERROR;
	uint8_t *y = f->i420, *u = y + (size_t)w * h, *v = u + (size_t)w * h / 4;
	for (uint32_t r = 0; r < h; r++)
		for (uint32_t x = 0; x < w; x += 2) {
			const uint8_t *q = src + (size_t)r * f->bpl + x * 2;
			y[(size_t)r * w + x] = q[0];
			y[(size_t)r * w + x + 1] = q[2];
			if (!(r & 1)) {
				u[(size_t)r / 2 * w / 2 + x / 2] = q[1];
				v[(size_t)r / 2 * w / 2 + x / 2] = q[3];
			}
		}
	const uint8_t *pl[3] = { y, u, v };
	uint32_t st[3] = { w, w / 2, w / 2 };
	if (f->force_key)
		vc_h264enc_force_idr(f->enc);
	f->force_key = 0;
	if (vc_h264enc_encode(f->enc, pl, st, f->jobs * 33, &eo) < 0 || eo.len + 64 > c->len[0])
		return V4L2_BUF_FLAG_ERROR;
	int drop = eo.key && ((hdr && f->hdr_apart) || (!f->repeat_hdr && f->idrs_sent));
	if (hdr && eo.key && f->hdr_apart) {
		hdr->used[0] = (uint32_t)copy_nals(hdr->mem[0], eo.data, eo.len, 0, 1);
		hdr->flags = 0;
	}
	c->used[0] = (uint32_t)copy_nals(c->mem[0], eo.data, eo.len, drop, 0);
	f->idrs_sent += eo.key;
	return (eo.key || f->flag_every) && !f->no_key_flag ? V4L2_BUF_FLAG_KEYFRAME : 0;
}


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
		if (f->h264) {
			/* a header buffer first when the encoder sends them apart */
			int hi = f->hdr_apart && f->n_capq ? pop(f->capq, &f->n_capq) : -1;
			struct fbuf *hb = hi >= 0 ? &f->cap[hi] : NULL;
			if (hb)
				hb->used[0] = 0;
			c->flags = h264_job(f, mem[0], c, hb);
			c->ts = o->ts;
			if (hb && hb->used[0]) {
				hb->ts = o->ts;
				push(f->capdone, &f->n_capdone, hi);
			} else if (hb) {
				push(f->capq, &f->n_capq, hi); /* not needed: back in the queue */
			}
			push(f->outdone, &f->n_outdone, oi);
			push(f->capdone, &f->n_capdone, ci);
			f->jobs++;
			continue;
		}
		vc_fmt_geometry(fmt, f->w, f->buf_h, f->bpl, &g);
		vc_image_from_geom(fmt, &g, mem, &img);
		img.height = f->h; /* the padding lines are not part of the picture */
		int r = vc_jpeg_encode(f->jpeg, &img, f->quality, c->mem[0], c->len[0], &len);
		c->used[0] = r ? 0 : (uint32_t)len;
		c->flags = V4L2_BUF_FLAG_KEYFRAME | (r ? V4L2_BUF_FLAG_ERROR : 0);
		c->ts = o->ts;
		push(f->outdone, &f->n_outdone, oi);
		push(f->capdone, &f->n_capdone, ci);
		f->jobs++;
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
	if (!out) { /* only JPEG (H.264) out: anything else is answered with it, like a driver */
		f->cap_fourcc = f->h264 ? V4L2_PIX_FMT_H264 : V4L2_PIX_FMT_JPEG;
		f->w = w;
		f->h = h;
		if (f->mplane) {
			v->fmt.pix_mp.pixelformat = f->cap_fourcc;
			v->fmt.pix_mp.num_planes = 1;
			v->fmt.pix_mp.plane_fmt[0].sizeimage = (uint32_t)cap_len(f);
		} else {
			v->fmt.pix.pixelformat = f->cap_fourcc;
			v->fmt.pix.sizeimage = (uint32_t)cap_len(f);
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
			b[i].len[p] = out ? f->out_size[p] : cap_len(f);
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
			vc_h264enc_free(f->enc); /* a new stream starts with an IDR */
			f->enc = NULL;
			f->idrs_sent = 0;
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
		return has_ctrl_(f, q->id) ? 0 : -EINVAL;
	}
	case VIDIOC_S_CTRL: {
		struct v4l2_control *c = arg;
		snprintf(s, sizeof(s), "S_CTRL(%#x,%d)", c->id, c->value);
		logf_(f, s);
		if (!has_ctrl_(f, c->id))
			return -EINVAL;
		set_ctrl_(f, c->id, c->value);
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
	vc_h264enc_free(f->enc);
	free(f->i420);
}

#endif
