/* M2M encoder session (server/encode/m2m_enc.h): owns the device fd, the
 * buffers of both queues, the frames lent to the OUTPUT queue and the table
 * of frames in flight; the ioctl sequence is in server/encode/M2M.md.
 *
 * Frames are matched to their coded result by the OUTPUT buffer's
 * timestamp, which M2M drivers copy to the CAPTURE buffer
 * (V4L2_BUF_FLAG_TIMESTAMP_COPY): it carries a session counter, not a time. */
#define LOG_PREFIX "m2m-enc:"
#include "common/log.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/h264.h"
#include "server/encode/m2m_enc.h"
#include "server/capture/m2m_discover.h"

#define MAX_BUFS 16
#define MAX_FLIGHT 32

struct obuf { /* one OUTPUT (raw in) buffer */
	int busy;
	struct vc_frame *frame;   /* DMABUF: held until the buffer comes back */
	int last_fd;              /* DMABUF: fd queued last time (vb2 keeps the mapping) */
	void *map[VIDEO_MAX_PLANES];
	size_t len[VIDEO_MAX_PLANES];
};

struct cbuf { /* one CAPTURE (coded out) buffer */
	void *map;
	size_t len;
};

struct flight { /* a submitted frame not yet back */
	uint64_t id;              /* 0 = free slot */
	void *tag;
	uint64_t seq;
	int64_t ts_us;
};

struct vc_m2m_enc {
	struct vc_m2m_enc_io io;
	struct vc_m2m_enc_cb cb;
	struct vc_m2m_enc_params p;
	struct event_base *base;
	struct event *ev;
	struct event *fail_ev;    /* reports frames of a failed session from the loop */
	char path[64];
	int fd;
	int mplane;
	uint32_t out_type, cap_type;
	unsigned out_memory;
	unsigned n_planes;        /* OUTPUT memory planes */
	uint32_t out_bpl;
	uint32_t out_h;           /* the driver's buffer height (bcm2835-codec: aligned to 16) */
	size_t out_size[VIDEO_MAX_PLANES];
	int dmabuf_worked;        /* a DMABUF frame was accepted since setup */
	const struct vc_fmt *fmt;
	struct obuf out[MAX_BUFS];
	struct cbuf cap[MAX_BUFS];
	unsigned n_out, n_cap;
	struct flight fl[MAX_FLIGHT];
	uint64_t next_id;
	int streaming;            /* both queues on (also after a drain) */
	int draining;             /* ENC_CMD_STOP sent, LAST not seen yet */
	int stopped;              /* drained: restart() before the next frame */
	int err;
	int dispatching, close_pending;
	/* H.264: parameter sets a driver sent in a buffer of their own, held
	 * for the next coded picture (a result is one whole access unit) */
	uint8_t *hdr, *joined;
	size_t hdr_len, hdr_cap, joined_cap;
	struct vc_m2m_enc_stats st;
};

static void *sys_mmap(void *opaque, int fd, size_t len, off_t off)
{
	(void)opaque;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	return p == MAP_FAILED ? NULL : p;
}

static void sys_munmap(void *opaque, void *addr, size_t len)
{
	(void)opaque;
	munmap(addr, len);
}

static const struct vc_m2m_enc_io sys_io = { vc_m2m_sys_open, vc_m2m_sys_ioctl, sys_mmap,
					     sys_munmap, vc_m2m_sys_close, NULL };

static int xioctl(struct vc_m2m_enc *e, unsigned long req, void *arg)
{
	return e->io.ioctl(e->io.opaque, e->fd, req, arg);
}

/* ---- buffers ---- */

static void unmap_all(struct vc_m2m_enc *e)
{
	for (unsigned i = 0; i < e->n_out; i++) {
		for (unsigned p = 0; p < VIDEO_MAX_PLANES; p++)
			if (e->out[i].map[p])
				e->io.munmap(e->io.opaque, e->out[i].map[p], e->out[i].len[p]);
		vc_frame_unref(e->out[i].frame);
		memset(&e->out[i], 0, sizeof(e->out[i]));
	}
	for (unsigned i = 0; i < e->n_cap; i++) {
		if (e->cap[i].map)
			e->io.munmap(e->io.opaque, e->cap[i].map, e->cap[i].len);
		memset(&e->cap[i], 0, sizeof(e->cap[i]));
	}
	e->n_out = e->n_cap = 0;
}

static int reqbufs(struct vc_m2m_enc *e, uint32_t type, unsigned memory, unsigned *count)
{
	struct v4l2_requestbuffers rb;

	memset(&rb, 0, sizeof(rb));
	rb.count = *count;
	rb.type = type;
	rb.memory = memory;
	int r = xioctl(e, VIDIOC_REQBUFS, &rb);
	if (r < 0)
		return r;
	if (*count && (rb.count == 0 || rb.count > MAX_BUFS))
		return rb.count ? -E2BIG : -ENOMEM;
	*count = rb.count;
	return 0;
}

/* QUERYBUF + mmap of every plane of buffer i of a queue. */
static int map_buf(struct vc_m2m_enc *e, uint32_t type, unsigned i, unsigned n_planes,
		   void **map, size_t *len)
{
	struct v4l2_buffer b;
	struct v4l2_plane planes[VIDEO_MAX_PLANES];

	memset(&b, 0, sizeof(b));
	memset(planes, 0, sizeof(planes));
	b.type = type;
	b.memory = V4L2_MEMORY_MMAP;
	b.index = i;
	if (e->mplane) {
		b.m.planes = planes;
		b.length = n_planes;
	}
	int r = xioctl(e, VIDIOC_QUERYBUF, &b);
	if (r < 0)
		return r;
	for (unsigned p = 0; p < (e->mplane ? n_planes : 1); p++) {
		len[p] = e->mplane ? planes[p].length : b.length;
		off_t off = e->mplane ? planes[p].m.mem_offset : b.m.offset;
		map[p] = e->io.mmap(e->io.opaque, e->fd, len[p], off);
		if (!map[p])
			return -ENOMEM;
	}
	return 0;
}

static int queue_cap(struct vc_m2m_enc *e, unsigned i)
{
	struct v4l2_buffer b;
	struct v4l2_plane pl[1];

	memset(&b, 0, sizeof(b));
	memset(pl, 0, sizeof(pl));
	b.type = e->cap_type;
	b.memory = V4L2_MEMORY_MMAP;
	b.index = i;
	if (e->mplane) {
		b.m.planes = pl;
		b.length = 1;
		pl[0].length = (uint32_t)e->cap[i].len;
	} else {
		b.length = (uint32_t)e->cap[i].len;
	}
	return xioctl(e, VIDIOC_QBUF, &b);
}

/* ---- setup ---- */

static int set_formats(struct vc_m2m_enc *e)
{
	const struct vc_m2m_enc_params *p = &e->p;
	struct v4l2_format f;

	/* the coded format first: a stateful encoder derives the OUTPUT
	 * queue's choices from it (dev-encoder.rst, Initialization 1-2) */
	memset(&f, 0, sizeof(f));
	f.type = e->cap_type;
	if (e->mplane) {
		f.fmt.pix_mp.width = p->width;
		f.fmt.pix_mp.height = p->height;
		f.fmt.pix_mp.pixelformat = p->coded_fourcc;
		f.fmt.pix_mp.num_planes = 1;
		f.fmt.pix_mp.plane_fmt[0].sizeimage = (uint32_t)p->coded_size;
	} else {
		f.fmt.pix.width = p->width;
		f.fmt.pix.height = p->height;
		f.fmt.pix.pixelformat = p->coded_fourcc;
		f.fmt.pix.sizeimage = (uint32_t)p->coded_size;
	}
	int r = xioctl(e, VIDIOC_S_FMT, &f);
	if (r < 0)
		return r;
	uint32_t got = e->mplane ? f.fmt.pix_mp.pixelformat : f.fmt.pix.pixelformat;
	if (got != p->coded_fourcc)
		return -EINVAL;

	memset(&f, 0, sizeof(f));
	f.type = e->out_type;
	if (e->mplane) {
		f.fmt.pix_mp.width = p->width;
		f.fmt.pix_mp.height = p->height;
		f.fmt.pix_mp.pixelformat = p->in_fourcc;
		f.fmt.pix_mp.field = V4L2_FIELD_NONE;
		f.fmt.pix_mp.num_planes = e->fmt->mem_planes;
		f.fmt.pix_mp.plane_fmt[0].bytesperline = p->bytesperline;
	} else {
		f.fmt.pix.width = p->width;
		f.fmt.pix.height = p->height;
		f.fmt.pix.pixelformat = p->in_fourcc;
		f.fmt.pix.field = V4L2_FIELD_NONE;
		f.fmt.pix.bytesperline = p->bytesperline;
	}
	r = xioctl(e, VIDIOC_S_FMT, &f);
	if (r < 0)
		return r;
	if (e->mplane) {
		if (f.fmt.pix_mp.pixelformat != p->in_fourcc || f.fmt.pix_mp.width != p->width ||
		    f.fmt.pix_mp.height < p->height || f.fmt.pix_mp.num_planes == 0 ||
		    f.fmt.pix_mp.num_planes > 3)
			return -EINVAL;
		e->n_planes = f.fmt.pix_mp.num_planes;
		e->out_h = f.fmt.pix_mp.height;
		e->out_bpl = f.fmt.pix_mp.plane_fmt[0].bytesperline;
		for (unsigned i = 0; i < e->n_planes; i++)
			e->out_size[i] = f.fmt.pix_mp.plane_fmt[i].sizeimage;
	} else {
		if (f.fmt.pix.pixelformat != p->in_fourcc || f.fmt.pix.width != p->width ||
		    f.fmt.pix.height < p->height)
			return -EINVAL;
		e->n_planes = 1;
		e->out_h = f.fmt.pix.height;
		e->out_bpl = f.fmt.pix.bytesperline;
		e->out_size[0] = f.fmt.pix.sizeimage;
	}
	if (e->n_planes != e->fmt->mem_planes)
		return -EINVAL;
	return 0;
}

/* DMABUF when asked, or under AUTO when the encoder reads the source's
 * layout as it is: same stride and height (bcm2835-codec pads the height
 * to 16 lines, which moves the chroma planes), each plane no bigger than
 * the source's. */
static int pick_feed(struct vc_m2m_enc *e)
{
	const struct vc_m2m_enc_params *p = &e->p;
	int fits = p->bytesperline == e->out_bpl && e->out_h == p->height;

	for (unsigned i = 0; i < e->n_planes; i++)
		if (p->src_len[i] && e->out_size[i] > p->src_len[i])
			fits = 0;
	if (p->feed == VC_M2M_FEED_MMAP)
		return V4L2_MEMORY_MMAP;
	if (p->feed == VC_M2M_FEED_DMABUF)
		return fits ? V4L2_MEMORY_DMABUF : -EINVAL;
	return p->dmabuf_ok && fits ? V4L2_MEMORY_DMABUF : V4L2_MEMORY_MMAP;
}

static int has_ctrl(struct vc_m2m_enc *e, uint32_t id)
{
	struct v4l2_queryctrl q;

	memset(&q, 0, sizeof(q));
	q.id = id;
	return xioctl(e, VIDIOC_QUERYCTRL, &q) == 0 && !(q.flags & V4L2_CTRL_FLAG_DISABLED);
}

/* The smallest H.264 level whose limits (macroblocks per frame and per
 * second, Baseline bit rate: H.264 table A-1) fit the picture, its rate and
 * the bitrate asked; 0 = past 4.2, leave the driver's. */
static int h264_level(const struct vc_m2m_enc_params *p)
{
	static const struct { uint32_t frame_mbs, mbs_per_s, kbps; int level; } t[] = {
		{ 1620, 40500, 10000, V4L2_MPEG_VIDEO_H264_LEVEL_3_0 },
		{ 3600, 108000, 14000, V4L2_MPEG_VIDEO_H264_LEVEL_3_1 },
		{ 5120, 216000, 20000, V4L2_MPEG_VIDEO_H264_LEVEL_3_2 },
		{ 8192, 245760, 20000, V4L2_MPEG_VIDEO_H264_LEVEL_4_0 },
		{ 8704, 522240, 50000, V4L2_MPEG_VIDEO_H264_LEVEL_4_2 },
	};
	uint32_t fps = p->fps_num && p->fps_den ? (p->fps_num + p->fps_den - 1) / p->fps_den : 30;
	uint32_t mbs = ((p->width + 15) / 16) * ((p->height + 15) / 16);
	uint32_t kbps = p->bitrate > 0 ? ((uint32_t)p->bitrate + 999) / 1000 : 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (mbs <= t[i].frame_mbs && mbs * fps <= t[i].mbs_per_s && kbps <= t[i].kbps)
			return t[i].level;
	return 0;
}

/* Encoder parameters. A control the device lacks is logged (debug), not
 * fatal: the picture still comes out, only not tuned as asked. The H.264
 * ones ask for what every browser decodes (Constrained Baseline) and for
 * SPS/PPS before each IDR (a client joins at any IDR). <= 0 = leave. */
static void set_params(struct vc_m2m_enc *e)
{
	const struct vc_m2m_enc_params *p = &e->p;
	int h264 = p->coded_fourcc == V4L2_PIX_FMT_H264;
	int level = h264 ? h264_level(p) : 0;
	const struct { uint32_t id; int value; const char *name; } c[] = {
		{ V4L2_CID_JPEG_COMPRESSION_QUALITY, p->quality, "JPEG quality" },
		{ V4L2_CID_MPEG_VIDEO_BITRATE, p->bitrate, "bitrate" },
		{ V4L2_CID_MPEG_VIDEO_GOP_SIZE, p->gop, "GOP size" },
		{ V4L2_CID_MPEG_VIDEO_H264_I_PERIOD, h264 ? p->gop : 0, "H.264 I-period" },
		{ V4L2_CID_MPEG_VIDEO_REPEAT_SEQ_HEADER, h264 ? 1 : -1, "repeat sequence header" },
		{ V4L2_CID_MPEG_VIDEO_H264_PROFILE,
		  h264 ? V4L2_MPEG_VIDEO_H264_PROFILE_CONSTRAINED_BASELINE : -1, "H.264 profile" },
		{ V4L2_CID_MPEG_VIDEO_H264_LEVEL, level, "H.264 level" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (c[i].value <= 0) /* every value asked for is > 0 */
			continue;
		int r = has_ctrl(e, c[i].id) ? vc_m2m_enc_set_ctrl(e, c[i].id, c[i].value)
					     : -ENOTTY;
		if (r < 0 && r != -ENOTTY && c[i].id == V4L2_CID_MPEG_VIDEO_H264_PROFILE)
			/* a menu without Constrained Baseline: plain Baseline */
			r = vc_m2m_enc_set_ctrl(e, c[i].id, V4L2_MPEG_VIDEO_H264_PROFILE_BASELINE);
		if (r < 0)
			log_debug("%s: %s %d not set: %s", e->path, c[i].name, c[i].value,
				  strerror(-r));
	}
	if (p->fps_num && p->fps_den) {
		struct v4l2_streamparm sp;
		memset(&sp, 0, sizeof(sp));
		sp.type = e->out_type;
		sp.parm.output.timeperframe.numerator = p->fps_den;
		sp.parm.output.timeperframe.denominator = p->fps_num;
		if (xioctl(e, VIDIOC_S_PARM, &sp) < 0)
			log_debug("%s: S_PARM on OUTPUT refused", e->path);
	}
}

static int alloc_bufs(struct vc_m2m_enc *e)
{
	unsigned n = e->p.n_output ? e->p.n_output : 2;
	int r = reqbufs(e, e->out_type, e->out_memory, &n);
	if (r < 0)
		return r;
	e->n_out = n;
	for (unsigned i = 0; i < n; i++) {
		e->out[i].last_fd = -1;
		if (e->out_memory == V4L2_MEMORY_MMAP &&
		    (r = map_buf(e, e->out_type, i, e->n_planes, e->out[i].map, e->out[i].len)) < 0)
			return r;
	}
	n = e->p.n_capture ? e->p.n_capture : 4;
	if ((r = reqbufs(e, e->cap_type, V4L2_MEMORY_MMAP, &n)) < 0)
		return r;
	e->n_cap = n;
	for (unsigned i = 0; i < n; i++)
		if ((r = map_buf(e, e->cap_type, i, 1, &e->cap[i].map, &e->cap[i].len)) < 0)
			return r;
	return 0;
}

static int stream(struct vc_m2m_enc *e, unsigned long req)
{
	uint32_t t = e->out_type;
	int r = xioctl(e, req, &t);
	t = e->cap_type;
	int r2 = xioctl(e, req, &t);
	return r < 0 ? r : r2;
}

/* Everything after the fd is open: formats, controls, buffers, streaming. */
static int setup(struct vc_m2m_enc *e)
{
	int r = set_formats(e);
	if (r < 0)
		return r;
	r = pick_feed(e);
	if (r < 0)
		return r;
	e->out_memory = (unsigned)r;
	set_params(e);
	if ((r = alloc_bufs(e)) < 0)
		return r;
	for (unsigned i = 0; i < e->n_cap; i++)
		if ((r = queue_cap(e, i)) < 0)
			return r;
	if ((r = stream(e, VIDIOC_STREAMON)) < 0)
		return r;
	e->streaming = 1;
	e->draining = e->stopped = 0;
	e->dmabuf_worked = 0;
	e->st.dmabuf = e->out_memory == V4L2_MEMORY_DMABUF;
	e->st.mplane = e->mplane;
	log_debug("%s: encoding %ux%u %.4s -> %.4s, %s API, OUTPUT by %s (%u+%u buffers)",
		 e->path, e->p.width, e->p.height, (const char *)&e->p.in_fourcc,
		 (const char *)&e->p.coded_fourcc, e->mplane ? "multi-planar" : "single-planar",
		 e->st.dmabuf ? "DMABUF" : "MMAP + copy", e->n_out, e->n_cap);
	return 0;
}

/* STREAMOFF both queues (the driver gives every buffer back), drop what was
 * lent, free the buffers. Errors ignored: this also runs on a dead device. */
static void teardown(struct vc_m2m_enc *e)
{
	if (e->streaming)
		stream(e, VIDIOC_STREAMOFF);
	e->streaming = 0;
	if (e->ev)
		event_del(e->ev);
	unmap_all(e);
	unsigned zero = 0;
	reqbufs(e, e->out_type, e->out_memory ? e->out_memory : V4L2_MEMORY_MMAP, &zero);
	zero = 0;
	reqbufs(e, e->cap_type, V4L2_MEMORY_MMAP, &zero);
	memset(e->fl, 0, sizeof(e->fl));
	e->st.in_flight = 0;
	e->hdr_len = 0; /* the encoder sends its header again after STREAMON */
}

static int check_params(const struct vc_m2m_enc_params *p, const struct vc_fmt **fmt)
{
	*fmt = vc_fmt_by_fourcc(p->in_fourcc);
	if (!*fmt || !vc_fmt_is_raw(*fmt) || !p->width || !p->height || !p->coded_fourcc ||
	    p->n_output > MAX_BUFS || p->n_capture > MAX_BUFS)
		return -EINVAL;
	return 0;
}

static void on_fd(evutil_socket_t fd, short what, void *arg);
static void on_fail(evutil_socket_t fd, short what, void *arg);

int vc_m2m_enc_open(struct event_base *base, const struct vc_m2m_enc_io *io, const char *path,
		    const struct vc_m2m_enc_params *p, const struct vc_m2m_enc_cb *cb,
		    struct vc_m2m_enc **out)
{
	struct v4l2_capability cap;
	const struct vc_fmt *fmt;
	int r = check_params(p, &fmt);

	*out = NULL;
	if (r < 0 || !cb || !cb->done)
		return -EINVAL;
	struct vc_m2m_enc *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->io = io ? *io : sys_io;
	e->cb = *cb;
	e->p = *p;
	e->fmt = fmt;
	e->base = base;
	e->next_id = 1;
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->fd = e->io.open(e->io.opaque, path);
	if (e->fd < 0) {
		r = e->fd;
		free(e);
		return r;
	}
	memset(&cap, 0, sizeof(cap));
	if ((r = xioctl(e, VIDIOC_QUERYCAP, &cap)) < 0)
		goto fail_fd;
	uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
								 : cap.capabilities;
	if (!(caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE)) ||
	    !(caps & V4L2_CAP_STREAMING)) {
		r = -ENOTTY;
		goto fail_fd;
	}
	e->mplane = !(caps & V4L2_CAP_VIDEO_M2M);
	e->out_type = e->mplane ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT;
	e->cap_type = e->mplane ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	if (!e->mplane && fmt->mem_planes > 1) {
		r = -EINVAL;
		goto fail_fd;
	}
	e->ev = event_new(base, e->fd, EV_READ | EV_PERSIST, on_fd, e);
	e->fail_ev = evtimer_new(base, on_fail, e);
	if (!e->ev || !e->fail_ev) {
		r = -ENOMEM;
		goto fail_ev;
	}
	if ((r = setup(e)) < 0)
		goto fail_setup;
	*out = e;
	return 0;

fail_setup:
	log_debug("%s: encoder setup failed: %s", path, strerror(-r)); /* the caller logs */
	teardown(e);
fail_ev:
	if (e->ev)
		event_free(e->ev);
	if (e->fail_ev)
		event_free(e->fail_ev);
fail_fd:
	e->io.close(e->io.opaque, e->fd);
	free(e);
	return r;
}

void vc_m2m_enc_close(struct vc_m2m_enc *e)
{
	if (!e)
		return;
	if (e->dispatching) { /* called from a callback: free once it returns */
		e->close_pending = 1;
		return;
	}
	teardown(e);
	event_free(e->ev);
	event_free(e->fail_ev);
	e->io.close(e->io.opaque, e->fd);
	free(e->hdr);
	free(e->joined);
	free(e);
}

int vc_m2m_enc_restart(struct vc_m2m_enc *e, const struct vc_m2m_enc_params *p)
{
	const struct vc_fmt *fmt;
	int r = check_params(p, &fmt);

	if (r < 0)
		return r;
	if (!e->mplane && fmt->mem_planes > 1)
		return -EINVAL;
	teardown(e);
	e->p = *p;
	e->fmt = fmt;
	e->err = 0;
	e->st.restarts++;
	r = setup(e);
	if (r < 0) {
		log_debug("%s: encoder restart failed: %s", e->path, strerror(-r));
		teardown(e);
		e->err = r;
	}
	return r;
}

int vc_m2m_enc_error(const struct vc_m2m_enc *e)
{
	return e->err;
}

void vc_m2m_enc_get_stats(const struct vc_m2m_enc *e, struct vc_m2m_enc_stats *s)
{
	*s = e->st;
}

void vc_m2m_enc_out_layout(const struct vc_m2m_enc *e, uint32_t *bytesperline,
			   size_t sizeimage[3], unsigned *n_planes)
{
	*bytesperline = e->out_bpl;
	for (unsigned i = 0; i < 3; i++)
		sizeimage[i] = i < e->n_planes ? e->out_size[i] : 0;
	*n_planes = e->n_planes;
}

int vc_m2m_enc_set_ctrl(struct vc_m2m_enc *e, uint32_t id, int32_t value)
{
	struct v4l2_control c = { .id = id, .value = value };

	return xioctl(e, VIDIOC_S_CTRL, &c);
}

int vc_m2m_enc_force_key(struct vc_m2m_enc *e)
{
	return vc_m2m_enc_set_ctrl(e, V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME, 1);
}

/* ---- running ---- */

static void arm(struct vc_m2m_enc *e)
{
	int ms = e->p.timeout_ms > 0 ? e->p.timeout_ms : 2000;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_add(e->ev, &tv); /* re-adding restarts the timeout */
}

static void idle_check(struct vc_m2m_enc *e)
{
	if (!e->st.in_flight && !e->draining)
		event_del(e->ev);
}

/* Fails the session: STREAMOFF gives every buffer back, lent frames are
 * released, and the frames in flight are reported with err from the loop
 * (on_fail), never from inside the caller's submit()/drain(). */
static void fail(struct vc_m2m_enc *e, int err)
{
	if (e->err)
		return;
	e->err = err;
	log_debug("%s: encoder failed: %s", e->path, strerror(-err)); /* the caller logs once */
	if (e->streaming)
		stream(e, VIDIOC_STREAMOFF);
	e->streaming = 0;
	event_del(e->ev);
	for (unsigned i = 0; i < e->n_out; i++) {
		vc_frame_unref(e->out[i].frame);
		e->out[i].frame = NULL;
		e->out[i].busy = 0;
	}
	e->draining = 0;
	event_active(e->fail_ev, EV_TIMEOUT, 0);
}

static void on_fail(evutil_socket_t fd, short what, void *arg)
{
	struct vc_m2m_enc *e = arg;

	(void)fd;
	(void)what;
	e->dispatching++;
	for (unsigned i = 0; i < MAX_FLIGHT && !e->close_pending; i++) {
		if (!e->fl[i].id)
			continue;
		void *tag = e->fl[i].tag;
		e->fl[i].id = 0;
		e->st.in_flight--;
		e->st.errors++;
		e->cb.done(e->cb.opaque, e->err, NULL, tag);
	}
	e->dispatching--;
	if (e->close_pending) {
		e->close_pending = 0;
		vc_m2m_enc_close(e);
	}
}

static int free_obuf(struct vc_m2m_enc *e, int fd0)
{
	int any = -1;

	for (unsigned i = 0; i < e->n_out; i++) {
		if (e->out[i].busy)
			continue;
		if (e->out_memory == V4L2_MEMORY_DMABUF && e->out[i].last_fd == fd0)
			return (int)i; /* same dmabuf in the same slot: no new attach */
		if (any < 0)
			any = (int)i;
	}
	return any;
}

/* Takes back every OUTPUT buffer the encoder is done with. */
static int reclaim_out(struct vc_m2m_enc *e)
{
	for (;;) {
		struct v4l2_buffer b;
		struct v4l2_plane pl[VIDEO_MAX_PLANES];
		memset(&b, 0, sizeof(b));
		b.type = e->out_type;
		b.memory = e->out_memory;
		if (e->mplane) {
			memset(pl, 0, sizeof(pl));
			b.m.planes = pl;
			b.length = e->n_planes;
		}
		int r = xioctl(e, VIDIOC_DQBUF, &b);
		if (r == -EAGAIN)
			return 0;
		if (r < 0)
			return r;
		if (b.index >= e->n_out)
			return -EIO;
		vc_frame_unref(e->out[b.index].frame);
		e->out[b.index].frame = NULL;
		e->out[b.index].busy = 0;
	}
}

/* The frame into mapped OUTPUT buffer o, row by row, in the driver's
 * layout (its stride and padded height; the padding lines stay as they are:
 * the encoder crops them). */
static int copy_in(struct vc_m2m_enc *e, struct obuf *o, const struct vc_frame *f)
{
	struct vc_geom g;
	int r = vc_fmt_geometry(e->fmt, e->p.width, e->out_h, e->out_bpl, &g);
	if (r < 0)
		return r;
	for (unsigned p = 0; p < g.color_planes; p++) {
		const struct vc_plane_geom *dp = &g.plane[p], *sp = &f->geom.plane[p];
		uint8_t *dst = (uint8_t *)o->map[dp->mem] + dp->offset;
		const uint8_t *src = vc_frame_plane(f, (int)p);
		uint32_t row = dp->stride < sp->stride ? dp->stride : sp->stride;
		if (dp->offset + dp->size > o->len[dp->mem] ||
		    sp->offset + (size_t)sp->stride * sp->lines > f->bytesused[sp->mem] ||
		    sp->lines > dp->lines)
			return -EINVAL;
		for (uint32_t y = 0; y < sp->lines; y++)
			memcpy(dst + (size_t)y * dp->stride, src + (size_t)y * sp->stride, row);
	}
	return 0;
}

static int queue_out(struct vc_m2m_enc *e, unsigned i, const struct vc_m2m_enc_in *in,
		     uint64_t id)
{
	struct v4l2_buffer b;
	struct v4l2_plane pl[VIDEO_MAX_PLANES];
	const struct vc_frame *f = in->frame;

	memset(&b, 0, sizeof(b));
	memset(pl, 0, sizeof(pl));
	b.type = e->out_type;
	b.memory = e->out_memory;
	b.index = i;
	b.field = V4L2_FIELD_NONE;
	b.timestamp.tv_sec = (time_t)id; /* copied to the coded buffer: our match key */
	for (unsigned p = 0; p < e->n_planes; p++) {
		size_t used = e->out_memory == V4L2_MEMORY_DMABUF ? f->bytesused[p] : e->out_size[p];
		size_t len = e->out_memory == V4L2_MEMORY_DMABUF ? e->p.src_len[p] : e->out[i].len[p];
		if (e->mplane) {
			pl[p].bytesused = (uint32_t)used;
			pl[p].length = (uint32_t)len;
			if (e->out_memory == V4L2_MEMORY_DMABUF)
				pl[p].m.fd = in->dmabuf_fd[p];
		} else {
			b.bytesused = (uint32_t)used;
			b.length = (uint32_t)len;
			if (e->out_memory == V4L2_MEMORY_DMABUF)
				b.m.fd = in->dmabuf_fd[0];
		}
	}
	if (e->mplane) {
		b.m.planes = pl;
		b.length = e->n_planes;
	}
	return xioctl(e, VIDIOC_QBUF, &b);
}

/* The encoder refused the first DMABUF frame (bcm2835-codec's dma-contig
 * queue cannot import a scattered buffer, e.g. from a UVC camera's vmalloc
 * memory): set up again with MMAP and send this frame as a copy. */
static int feed_by_copy(struct vc_m2m_enc *e, const struct vc_m2m_enc_in *in, int why)
{
	struct vc_m2m_enc_params p = e->p;

	log_info("%s: DMABUF import refused (%s): feeding by MMAP + copy", e->path, strerror(-why));
	p.feed = VC_M2M_FEED_MMAP;
	int r = vc_m2m_enc_restart(e, &p);
	if (r < 0)
		return r;
	return vc_m2m_enc_submit(e, in);
}

int vc_m2m_enc_submit(struct vc_m2m_enc *e, const struct vc_m2m_enc_in *in)
{
	const struct vc_frame *f = in->frame;
	int r;

	if (e->err)
		return e->err;
	if (e->draining || e->stopped || !e->streaming)
		return -EBUSY;
	if (!f || f->fmt != e->fmt || f->geom.width != e->p.width || f->geom.height != e->p.height)
		return -EINVAL;
	if (e->out_memory == V4L2_MEMORY_DMABUF)
		for (unsigned p = 0; p < e->n_planes; p++)
			if (in->dmabuf_fd[p] < 0)
				return -EINVAL;
	if ((r = reclaim_out(e)) < 0) {
		fail(e, r);
		return r;
	}
	int fd0 = e->out_memory == V4L2_MEMORY_DMABUF ? in->dmabuf_fd[0] : -1;
	int i = free_obuf(e, fd0);
	unsigned slot = 0;
	while (slot < MAX_FLIGHT && e->fl[slot].id)
		slot++;
	if (i < 0 || slot == MAX_FLIGHT)
		return -EBUSY;
	struct obuf *o = &e->out[i];
	if (e->out_memory == V4L2_MEMORY_MMAP && (r = copy_in(e, o, f)) < 0)
		return r; /* a frame that does not fit: the frame's fault, not the device's */
	uint64_t id = e->next_id++;
	r = queue_out(e, (unsigned)i, in, id);
	if (r < 0 && e->out_memory == V4L2_MEMORY_DMABUF && e->p.feed == VC_M2M_FEED_AUTO &&
	    !e->dmabuf_worked && !e->st.in_flight && r != -ENODEV && r != -EIO)
		return feed_by_copy(e, in, r);
	if (r < 0) {
		fail(e, r);
		return r;
	}
	e->dmabuf_worked = 1;
	o->busy = 1;
	if (e->out_memory == V4L2_MEMORY_DMABUF) {
		o->frame = vc_frame_ref(in->frame); /* the capture slot stays ours */
		o->last_fd = fd0;
	} else {
		e->st.copies++;
	}
	e->fl[slot] = (struct flight){ id, in->tag, f->seq, f->ts_us };
	e->st.frames_in++;
	e->st.in_flight++;
	arm(e);
	return 0;
}

int vc_m2m_enc_drain(struct vc_m2m_enc *e)
{
	struct v4l2_encoder_cmd c;

	if (e->err)
		return e->err;
	if (e->draining || e->stopped || !e->streaming)
		return -EBUSY;
	memset(&c, 0, sizeof(c));
	c.cmd = V4L2_ENC_CMD_STOP;
	int r = xioctl(e, VIDIOC_ENCODER_CMD, &c);
	if (r < 0) {
		fail(e, r);
		return r;
	}
	e->draining = 1;
	arm(e); /* the LAST buffer comes through the fd even with nothing in flight */
	return 0;
}

/* Key frame: the driver's flag, else what the bitstream says. */
static int is_key(const struct vc_m2m_enc *e, uint32_t flags, const uint8_t *d, size_t len)
{
	/* H.264: the IDR slice, whatever the flag says. It is where a client
	 * may start; a flag on a non-IDR I picture (pictures after it may
	 * still refer to ones before) would make a bad join point, and some
	 * drivers set no flags at all. */
	if (e->p.coded_fourcc == V4L2_PIX_FMT_H264) {
		struct vc_h264_au au;
		vc_h264_scan(d, len, &au);
		if (!!(flags & V4L2_BUF_FLAG_KEYFRAME) != au.idr)
			log_debug("%s: key-frame flag %d on a picture with%s an IDR slice", e->path,
				  !!(flags & V4L2_BUF_FLAG_KEYFRAME), au.idr ? "" : "out");
		return au.idr;
	}
	if (flags & V4L2_BUF_FLAG_KEYFRAME)
		return 1;
	if (e->p.coded_fourcc == V4L2_PIX_FMT_JPEG || e->p.coded_fourcc == V4L2_PIX_FMT_MJPEG)
		return 1;
	if (e->p.coded_fourcc == V4L2_PIX_FMT_FWHT && len >= 24) /* header: flags, big-endian, at 20 */
		return !!((((uint32_t)d[20] << 24) | ((uint32_t)d[21] << 16) |
			   ((uint32_t)d[22] << 8) | d[23]) & V4L2_FWHT_FL_I_FRAME);
	return 0;
}

/* Reports the frame with match key id; frames submitted before it that
 * the encoder skipped are reported as not encoded (-ENODATA). */
static void deliver(struct vc_m2m_enc *e, uint64_t id, int err, struct vc_m2m_enc_out *o)
{
	for (unsigned i = 0; i < MAX_FLIGHT && !e->close_pending; i++) {
		if (!e->fl[i].id || e->fl[i].id > id)
			continue;
		struct flight f = e->fl[i];
		e->fl[i].id = 0;
		e->st.in_flight--;
		if (f.id < id || err) {
			e->st.errors++;
			e->cb.done(e->cb.opaque, f.id < id ? -ENODATA : err, NULL, f.tag);
			continue;
		}
		o->seq = f.seq;
		o->ts_us = f.ts_us;
		o->tag = f.tag;
		e->st.frames_out++;
		e->st.bytes_out += o->len;
		e->cb.done(e->cb.opaque, 0, o, f.tag);
	}
}

/* *buf (capacity *cap) grown to n bytes; 0 or -ENOMEM. */
static int grow(uint8_t **buf, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *b = realloc(*buf, n);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = n;
	return 0;
}

/* H.264: a buffer with no coded slice (only SPS/PPS/SEI: some encoders
 * send the stream header on its own) is held and put before the next
 * picture, so each result is one decodable access unit. Returns 1 when
 * held, 0 when *o is the picture to report (with what was held joined in
 * front), -ENOMEM. */
static int join_header(struct vc_m2m_enc *e, struct vc_m2m_enc_out *o)
{
	struct vc_h264_au au;

	if (e->p.coded_fourcc != V4L2_PIX_FMT_H264 || !o->len)
		return 0;
	vc_h264_scan(o->data, o->len, &au);
	if (!au.has_slice) {
		if (grow(&e->hdr, &e->hdr_cap, e->hdr_len + o->len) < 0)
			return -ENOMEM;
		memcpy(e->hdr + e->hdr_len, o->data, o->len);
		e->hdr_len += o->len;
		return 1;
	}
	if (!e->hdr_len)
		return 0;
	if (grow(&e->joined, &e->joined_cap, e->hdr_len + o->len) < 0)
		return -ENOMEM;
	memcpy(e->joined, e->hdr, e->hdr_len);
	memcpy(e->joined + e->hdr_len, o->data, o->len);
	o->data = e->joined;
	o->len += e->hdr_len;
	e->hdr_len = 0;
	return 0;
}

/* One coded buffer: returns 1 when it was the last of a drain, 0 when
 * none was ready, 2 after a frame, or -errno. */
static int take_cap(struct vc_m2m_enc *e)
{
	struct v4l2_buffer b;
	struct v4l2_plane pl[1];

	memset(&b, 0, sizeof(b));
	memset(pl, 0, sizeof(pl));
	b.type = e->cap_type;
	b.memory = V4L2_MEMORY_MMAP;
	if (e->mplane) {
		b.m.planes = pl;
		b.length = 1;
	}
	int r = xioctl(e, VIDIOC_DQBUF, &b);
	if (r == -EAGAIN)
		return 0;
	if (r == -EPIPE) /* the last buffer was dequeued before: drain over */
		return 1;
	if (r < 0)
		return r;
	if (b.index >= e->n_cap)
		return -EIO;
	if (e->mplane && pl[0].data_offset > pl[0].bytesused)
		return -EIO;
	size_t used = e->mplane ? pl[0].bytesused - pl[0].data_offset : b.bytesused;
	const uint8_t *data = (const uint8_t *)e->cap[b.index].map +
			      (e->mplane ? pl[0].data_offset : 0);
	if (used > e->cap[b.index].len)
		return -EIO;
	int last = !!(b.flags & V4L2_BUF_FLAG_LAST);
	uint64_t id = (uint64_t)b.timestamp.tv_sec;
	struct vc_m2m_enc_out o = { .data = data, .len = used };
	int held = (b.flags & V4L2_BUF_FLAG_ERROR) ? 0 : join_header(e, &o);
	if (held < 0)
		return held;
	if (!held && (used || (b.flags & V4L2_BUF_FLAG_ERROR))) {
		o.keyframe = is_key(e, b.flags, o.data, o.len);
		e->dispatching++;
		deliver(e, id, (b.flags & V4L2_BUF_FLAG_ERROR) ? -EIO : 0, &o);
		e->dispatching--;
	}
	if (e->close_pending || e->err)
		return -ECANCELED;
	if (!last && (r = queue_cap(e, b.index)) < 0)
		return r;
	return last ? 1 : 2;
}

static void drained(struct vc_m2m_enc *e)
{
	/* anything still listed was swallowed by the drain */
	e->dispatching++;
	deliver(e, UINT64_MAX, -ENODATA, NULL);
	e->draining = 0;
	e->stopped = 1; /* restart() brings it back */
	event_del(e->ev);
	if (e->cb.drained && !e->close_pending)
		e->cb.drained(e->cb.opaque);
	e->dispatching--;
}

static void on_fd(evutil_socket_t fd, short what, void *arg)
{
	struct vc_m2m_enc *e = arg;
	int r = 0;

	(void)fd;
	if (e->err)
		return;
	if ((r = reclaim_out(e)) < 0)
		goto out;
	while ((r = take_cap(e)) == 2)
		;
	if (r == 1 && e->draining)
		drained(e);
	else if (r == 0 && (what & EV_TIMEOUT) && (e->st.in_flight || e->draining))
		r = -ETIMEDOUT;
	else if (r == 0 || r == 1)
		arm(e);
out:
	if (r < 0 && r != -ECANCELED)
		fail(e, r);
	if (e->close_pending) {
		e->close_pending = 0;
		vc_m2m_enc_close(e);
		return;
	}
	if (!e->err)
		idle_check(e);
}
