/* Setting an M2M encoder session's device up and tearing it down (see
 * m2m_enc_int.h): formats on both queues, encoder parameters as controls,
 * buffers (MMAP, or DMABUF on the OUTPUT queue), streaming. The ioctl
 * sequence is in server/encode/M2M.md. */
#define LOG_PREFIX "m2m-enc:"
#include "common/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "server/encode/m2m_enc_int.h"

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
	int r = m2m_xioctl(e, VIDIOC_REQBUFS, &rb);
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
	int r = m2m_xioctl(e, VIDIOC_QUERYBUF, &b);
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

int m2m_queue_cap(struct vc_m2m_enc *e, unsigned i)
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
	return m2m_xioctl(e, VIDIOC_QBUF, &b);
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
	int r = m2m_xioctl(e, VIDIOC_S_FMT, &f);
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
	r = m2m_xioctl(e, VIDIOC_S_FMT, &f);
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
	return m2m_xioctl(e, VIDIOC_QUERYCTRL, &q) == 0 && !(q.flags & V4L2_CTRL_FLAG_DISABLED);
}

/* Encoder parameters. A control the device lacks is logged (debug), not
 * fatal: the picture still comes out, only not tuned as asked. The H.264
 * ones ask for what every browser decodes (Constrained Baseline) and for
 * SPS/PPS before each IDR (a client joins at any IDR). <= 0 = leave. */
static void set_params(struct vc_m2m_enc *e)
{
	const struct vc_m2m_enc_params *p = &e->p;
	int h264 = p->coded_fourcc == V4L2_PIX_FMT_H264;
	int level = h264 ? vc_m2m_h264_level(p) : 0;
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
		if (m2m_xioctl(e, VIDIOC_S_PARM, &sp) < 0)
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

int m2m_stream(struct vc_m2m_enc *e, unsigned long req)
{
	uint32_t t = e->out_type;
	int r = m2m_xioctl(e, req, &t);
	t = e->cap_type;
	int r2 = m2m_xioctl(e, req, &t);
	return r < 0 ? r : r2;
}

/* Everything after the fd is open: formats, controls, buffers, streaming. */
int m2m_setup(struct vc_m2m_enc *e)
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
		if ((r = m2m_queue_cap(e, i)) < 0)
			return r;
	if ((r = m2m_stream(e, VIDIOC_STREAMON)) < 0)
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
void m2m_teardown(struct vc_m2m_enc *e)
{
	if (e->streaming)
		m2m_stream(e, VIDIOC_STREAMOFF);
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
	e->join.hdr_len = 0; /* the encoder sends its header again after STREAMON */
}
