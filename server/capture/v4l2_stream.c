/* Streaming for the V4L2 source: mmap buffers (REQBUFS/QUERYBUF/mmap through
 * libv4l2), QBUF/DQBUF, STREAMON/STREAMOFF, the buffers lent to capture.c
 * (or, for drivers that overwrite them, copies: v4l2_copyout.c) and the
 * event queue (source change, end of stream). */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <libv4l2.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/capture/v4l2_int.h"

#define DEFAULT_BUFFERS 4
#define MAX_BUFFERS 32

static void unmap_slots(struct v4l2src *d)
{
	for (unsigned i = 0; i < d->n_slots; i++) {
		for (unsigned p = 0; p < d->slots[i].n_mem; p++)
			if (d->slots[i].mem[p])
				v4l2_munmap(d->slots[i].mem[p], d->slots[i].len[p]);
		for (unsigned p = 0; p < d->slots[i].n_dmabuf; p++)
			close(d->slots[i].dmabuf[p]);
	}
	free(d->slots);
	d->slots = NULL;
	d->n_slots = 0;
}

void v4l2_release_buffers(struct v4l2src *d)
{
	struct v4l2_requestbuffers rb;
	v4l2_copies_free(d);
	if (!d->slots)
		return;
	unmap_slots(d);
	memset(&rb, 0, sizeof(rb));
	rb.count = 0;
	rb.type = d->type;
	rb.memory = V4L2_MEMORY_MMAP;
	v4l2_xioctl(d, VIDIOC_REQBUFS, &rb); /* a gone device frees them itself */
}

static void init_buf(struct v4l2src *d, struct v4l2_buffer *b, struct v4l2_plane *planes,
		     unsigned index)
{
	memset(b, 0, sizeof(*b));
	b->type = d->type;
	b->memory = V4L2_MEMORY_MMAP;
	b->index = index;
	if (d->mplane) {
		memset(planes, 0, sizeof(*planes) * VIDEO_MAX_PLANES);
		b->m.planes = planes;
		b->length = VIDEO_MAX_PLANES;
	}
}

static int map_slot(struct v4l2src *d, unsigned i)
{
	struct v4l2_buffer b;
	struct v4l2_plane planes[VIDEO_MAX_PLANES];
	struct v4l2_slot *sl = &d->slots[i];

	init_buf(d, &b, planes, i);
	int e = v4l2_xioctl(d, VIDIOC_QUERYBUF, &b);
	if (e < 0) {
		log_error("%s: VIDIOC_QUERYBUF %u: %s", d->path, i, strerror(-e));
		return v4l2_gone(e);
	}
	sl->at_start = (struct v4l2_record){ b.timestamp, b.sequence,
					     d->mplane ? planes[0].bytesused : b.bytesused };
	sl->n_mem = d->mplane ? b.length : 1;
	if (sl->n_mem == 0 || sl->n_mem > 3)
		return -EPROTO;
	for (unsigned p = 0; p < sl->n_mem; p++) {
		size_t len = d->mplane ? planes[p].length : b.length;
		off_t off = d->mplane ? (off_t)planes[p].m.mem_offset : (off_t)b.m.offset;
		void *m = v4l2_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, off);
		if (m == MAP_FAILED) {
			e = -errno;
			log_error("%s: mmap buffer %u plane %u (%zu bytes): %s", d->path, i, p,
				  len, strerror(errno));
			return v4l2_gone(e);
		}
		sl->mem[p] = m;
		sl->len[p] = len;
	}
	return 0;
}

/* Whether the buffers hold what we deliver: libv4l2 converts an emulated
 * format into buffers of its own, while EXPBUF would export the driver's.
 * The kernel's own G_FMT (ioctl(2), past libv4l2) must name our format. */
static int exportable(struct v4l2src *d)
{
	struct v4l2_format f;

	if (d->copy_out)
		return 0;
	memset(&f, 0, sizeof(f));
	f.type = d->type;
	if (ioctl(d->fd, VIDIOC_G_FMT, &f) < 0)
		return 0;
	uint32_t fcc = d->mplane ? f.fmt.pix_mp.pixelformat : f.fmt.pix.pixelformat;
	uint32_t w = d->mplane ? f.fmt.pix_mp.width : f.fmt.pix.width;
	return fcc == d->cur.mode.fourcc && w == d->cur.mode.width;
}

/* VIDIOC_EXPBUF of every plane of every buffer, for zero-copy hand-over to
 * M2M encoders (fds closed by unmap_slots). A refusal only means frames go
 * without fds: logged at debug. */
static void export_slots(struct v4l2src *d)
{
	if (!exportable(d))
		return;
	for (unsigned i = 0; i < d->n_slots; i++) {
		struct v4l2_slot *sl = &d->slots[i];
		for (unsigned p = 0; p < sl->n_mem; p++) {
			struct v4l2_exportbuffer x;
			memset(&x, 0, sizeof(x));
			x.type = d->type;
			x.index = i;
			x.plane = p;
			x.flags = O_RDONLY | O_CLOEXEC;
			if (ioctl(d->fd, VIDIOC_EXPBUF, &x) < 0) {
				log_debug("%s: VIDIOC_EXPBUF %u/%u: %s", d->path, i, p, strerror(errno));
				return; /* the slots exported so far keep their fds */
			}
			sl->dmabuf[p] = x.fd;
			sl->n_dmabuf = p + 1;
		}
	}
}

int v4l2_dmabuf(struct vc_src *s, unsigned index, int fds[3])
{
	struct v4l2src *d = (struct v4l2src *)s;

	if (index >= d->n_slots || d->copy_out)
		return 0;
	const struct v4l2_slot *sl = &d->slots[index];
	if (sl->n_dmabuf != sl->n_mem || sl->n_mem > 3)
		return 0;
	for (unsigned p = 0; p < sl->n_dmabuf; p++)
		fds[p] = sl->dmabuf[p];
	return (int)sl->n_dmabuf;
}

static int qbuf(struct v4l2src *d, unsigned index)
{
	struct v4l2_buffer b;
	struct v4l2_plane planes[VIDEO_MAX_PLANES];
	init_buf(d, &b, planes, index);
	if (d->mplane)
		b.length = d->slots[index].n_mem;
	return v4l2_xioctl(d, VIDIOC_QBUF, &b);
}

int v4l2_start(struct vc_src *s, unsigned n_buffers, unsigned *n_actual)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct v4l2_requestbuffers rb;
	int e;

	if (d->streaming)
		return -EBUSY;
	if (d->stopped_with_held)
		return -EBUSY;
	v4l2_release_buffers(d);
	if (n_buffers == 0)
		n_buffers = DEFAULT_BUFFERS;
	if (n_buffers > MAX_BUFFERS)
		n_buffers = MAX_BUFFERS;

	memset(&rb, 0, sizeof(rb));
	rb.count = n_buffers;
	rb.type = d->type;
	rb.memory = V4L2_MEMORY_MMAP;
	e = v4l2_xioctl(d, VIDIOC_REQBUFS, &rb);
	if (e < 0) {
		log_error("%s: VIDIOC_REQBUFS %u: %s", d->path, n_buffers, strerror(-e));
		return v4l2_gone(e);
	}
	if (rb.count == 0) {
		log_error("%s: VIDIOC_REQBUFS gave no buffers", d->path);
		return -ENOMEM;
	}
	d->slots = calloc(rb.count, sizeof(*d->slots));
	if (!d->slots) {
		e = -ENOMEM;
		goto fail_free;
	}
	d->n_slots = rb.count;
	for (unsigned i = 0; i < d->n_slots; i++) {
		e = map_slot(d, i);
		if (e < 0)
			goto fail;
	}
	if (d->copy_out && (e = v4l2_copies_alloc(d)) < 0)
		goto fail;
	export_slots(d);
	for (unsigned i = 0; i < d->n_slots; i++) {
		e = qbuf(d, i);
		if (e < 0) {
			log_error("%s: VIDIOC_QBUF %u: %s", d->path, i, strerror(-e));
			e = v4l2_gone(e);
			goto fail;
		}
	}
	int type = (int)d->type;
	e = v4l2_xioctl(d, VIDIOC_STREAMON, &type);
	if (e < 0) {
		log_error("%s: VIDIOC_STREAMON: %s", d->path, strerror(-e));
		e = v4l2_gone(e);
		goto fail;
	}
	d->streaming = 1;
	if (n_actual)
		*n_actual = d->n_slots;
	log_debug("%s: streaming with %u buffers", d->path, d->n_slots);
	return 0;
fail:
	type = (int)d->type;
	v4l2_xioctl(d, VIDIOC_STREAMOFF, &type); /* takes back what was queued */
	v4l2_release_buffers(d);
	return e;
fail_free:
	rb.count = 0;
	v4l2_xioctl(d, VIDIOC_REQBUFS, &rb);
	return e;
}

void v4l2_stop(struct vc_src *s)
{
	struct v4l2src *d = (struct v4l2src *)s;
	if (!d->streaming)
		return;
	int type = (int)d->type;
	int e = v4l2_xioctl(d, VIDIOC_STREAMOFF, &type);
	if (e < 0 && v4l2_gone(e) != -ENODEV)
		log_warn("%s: VIDIOC_STREAMOFF: %s", d->path, strerror(-e));
	d->streaming = 0;
	if (v4l2_held(d))
		d->stopped_with_held = 1; /* unmap when the last one comes back */
	else
		v4l2_release_buffers(d);
}

int v4l2_dequeue(struct vc_src *s, struct vc_src_buf *out)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct v4l2_buffer b;
	struct v4l2_plane planes[VIDEO_MAX_PLANES];

	if (!d->streaming)
		return -EAGAIN;
	/* Ask first: libv4l2 prints an error line for every DQBUF that finds
	 * nothing, and a burst of dequeues always ends with one. */
	struct pollfd pfd = {.fd = d->fd, .events = POLLIN};
	if (poll(&pfd, 1, 0) == 0)
		return -EAGAIN;
	init_buf(d, &b, planes, 0);
	int e = v4l2_xioctl(d, VIDIOC_DQBUF, &b);
	if (e == -EAGAIN)
		return e;
	if (e < 0) {
		log_debug("%s: VIDIOC_DQBUF: %s", d->path, strerror(-e));
		return v4l2_gone(e);
	}
	if (b.index >= d->n_slots) {
		log_error("%s: VIDIOC_DQBUF gave index %u of %u", d->path, b.index, d->n_slots);
		return -EPROTO;
	}
	struct v4l2_slot *sl = &d->slots[b.index];
	memset(out, 0, sizeof(*out));
	out->index = b.index;
	for (unsigned p = 0; p < sl->n_mem && p < 3; p++) {
		size_t used = d->mplane ? planes[p].bytesused : b.bytesused;
		size_t off = d->mplane ? planes[p].data_offset : 0;
		if (off > used || used > sl->len[p]) { /* a driver bug: report it unusable */
			out->flags |= VC_SRC_BUF_ERROR;
			off = used = 0;
		}
		out->mem[p] = sl->mem[p] + off;
		out->bytesused[p] = used - off;
	}
	out->seq = b.sequence;
	if ((b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
		out->ts_us = (int64_t)b.timestamp.tv_sec * 1000000 + b.timestamp.tv_usec;
	if (b.flags & V4L2_BUF_FLAG_ERROR)
		out->flags |= VC_SRC_BUF_ERROR;
	if (b.flags & V4L2_BUF_FLAG_KEYFRAME)
		out->flags |= VC_SRC_BUF_KEYFRAME;
	out->field = b.field;
	if (d->copy_out) {
		e = v4l2_copy_out(d, &b, out);
		int q = qbuf(d, b.index); /* the copy is what the caller holds */
		if (q < 0) {
			log_debug("%s: VIDIOC_QBUF %u: %s", d->path, b.index, strerror(-q));
			return v4l2_gone(q);
		}
		if (e < 0)
			log_warn("%s: every copy is held: frame %u dropped", d->path, b.sequence);
		return e < 0 ? -EAGAIN : 0;
	}
	sl->held = 1;
	return 0;
}

unsigned v4l2_held(const struct v4l2src *d)
{
	unsigned held = 0;

	for (unsigned i = 0; i < d->n_slots; i++)
		held += d->slots[i].held != 0;
	for (unsigned i = 0; i < d->n_copies; i++)
		held += d->copies[i].held != 0;
	return held;
}

int v4l2_queue(struct vc_src *s, unsigned index)
{
	struct v4l2src *d = (struct v4l2src *)s;
	int *held = d->copy_out ? (index < d->n_copies ? &d->copies[index].held : NULL)
				: (index < d->n_slots ? &d->slots[index].held : NULL);

	if (!held || !*held)
		return -EINVAL;
	*held = 0;
	if (!d->streaming) {
		if (d->stopped_with_held && !v4l2_held(d)) {
			d->stopped_with_held = 0;
			v4l2_release_buffers(d);
		}
		return 0;
	}
	if (d->copy_out)
		return 0; /* the driver's buffer went back at dequeue */
	int e = qbuf(d, index);
	if (e < 0) {
		log_debug("%s: VIDIOC_QBUF %u: %s", d->path, index, strerror(-e));
		return v4l2_gone(e);
	}
	return 0;
}

void v4l2_drop_own_source_changes(struct v4l2src *d)
{
	struct v4l2_event e;

	while (d->events) {
		memset(&e, 0, sizeof(e));
		if (v4l2_xioctl(d, VIDIOC_DQEVENT, &e) < 0)
			return; /* none left (or gone: the next get_event says so) */
		if (e.type == V4L2_EVENT_EOS)
			d->eos_pending = 1;
	}
}

int v4l2_get_event(struct vc_src *s, struct vc_src_event *ev)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct v4l2_event e;

	if (!d->events)
		return 0;
	if (d->eos_pending) {
		d->eos_pending = 0;
		memset(ev, 0, sizeof(*ev));
		ev->type = VC_SRC_EV_EOS;
		return 1;
	}
	for (;;) {
		memset(&e, 0, sizeof(e));
		int r = v4l2_xioctl(d, VIDIOC_DQEVENT, &e);
		if (r == -ENOENT || r == -EAGAIN)
			return 0;
		if (r < 0)
			return v4l2_gone(r);
		memset(ev, 0, sizeof(*ev));
		if (e.type == V4L2_EVENT_SOURCE_CHANGE &&
		    (e.u.src_change.changes & V4L2_EVENT_SRC_CH_RESOLUTION)) {
			log_info("%s: source change on input %u", d->path, e.id);
			ev->type = VC_SRC_EV_SOURCE_CHANGE;
			return 1;
		}
		if (e.type == V4L2_EVENT_EOS) {
			ev->type = VC_SRC_EV_EOS;
			return 1;
		}
		if (e.type == V4L2_EVENT_CTRL) {
			ev->type = VC_SRC_EV_CTRL;
			ev->ctrl_id = e.id;
			return 1;
		}
		/* anything else: not ours to report, take the next one */
	}
}
