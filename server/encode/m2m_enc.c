/* M2M encoder session (server/encode/m2m_enc.h): owns the device fd, the
 * buffers of both queues, the frames lent to the OUTPUT queue and the table
 * of frames in flight; the ioctl sequence is in server/encode/M2M.md.
 * Device setup and teardown: m2m_enc_setup.c; what coded buffers mean
 * (key frames, H.264 headers sent apart): m2m_coded.c.
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

#include "server/capture/m2m_discover.h"
#include "server/encode/m2m_enc.h"
#include "server/encode/m2m_enc_int.h"

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
	if ((r = m2m_xioctl(e, VIDIOC_QUERYCAP, &cap)) < 0)
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
	if ((r = m2m_setup(e)) < 0)
		goto fail_setup;
	*out = e;
	return 0;

fail_setup:
	log_debug("%s: encoder setup failed: %s", path, strerror(-r)); /* the caller logs */
	m2m_teardown(e);
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
	m2m_teardown(e);
	event_free(e->ev);
	event_free(e->fail_ev);
	e->io.close(e->io.opaque, e->fd);
	vc_m2m_join_free(&e->join);
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
	m2m_teardown(e);
	e->p = *p;
	e->fmt = fmt;
	e->err = 0;
	e->st.restarts++;
	r = m2m_setup(e);
	if (r < 0) {
		log_debug("%s: encoder restart failed: %s", e->path, strerror(-r));
		m2m_teardown(e);
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

	return m2m_xioctl(e, VIDIOC_S_CTRL, &c);
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
		m2m_stream(e, VIDIOC_STREAMOFF);
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
		int r = m2m_xioctl(e, VIDIOC_DQBUF, &b);
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
	return m2m_xioctl(e, VIDIOC_QBUF, &b);
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
	int r = m2m_xioctl(e, VIDIOC_ENCODER_CMD, &c);
	if (r < 0) {
		fail(e, r);
		return r;
	}
	e->draining = 1;
	arm(e); /* the LAST buffer comes through the fd even with nothing in flight */
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
	int r = m2m_xioctl(e, VIDIOC_DQBUF, &b);
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
	int held = (b.flags & V4L2_BUF_FLAG_ERROR) ? 0 : vc_m2m_join_header(&e->join, e->p.coded_fourcc, &o);
	if (held < 0)
		return held;
	if (!held && (used || (b.flags & V4L2_BUF_FLAG_ERROR))) {
		o.keyframe = vc_m2m_is_key(e->p.coded_fourcc, b.flags, o.data, o.len, e->path);
		e->dispatching++;
		deliver(e, id, (b.flags & V4L2_BUF_FLAG_ERROR) ? -EIO : 0, &o);
		e->dispatching--;
	}
	if (e->close_pending || e->err)
		return -ECANCELED;
	if (!last && (r = m2m_queue_cap(e, b.index)) < 0)
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
