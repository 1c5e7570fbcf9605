/* The V4L2 capture source: a device node opened through libv4l2 (so odd
 * native formats are also offered converted), driven through the ops of
 * server/capture/source.h. This file owns open/close, format negotiation (TRY_FMT,
 * S_FMT, S_PARM: the driver's answer is what we use) and the ops table; caps
 * enumeration, streaming, inputs and controls live in the v4l2_*.c parts. */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <libv4l2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/h264.h"
#include "server/capture/v4l2_int.h"
#include "server/capture/v4l2src.h"

static struct v4l2src *to_dev(struct vc_src *s)
{
	return (struct v4l2src *)s;
}

int v4l2_parse_format(struct v4l2src *d, const struct v4l2_format *f,
		      struct vc_src_format *out)
{
	struct vc_src_format r;
	uint32_t bpl[VIDEO_MAX_PLANES] = {0};
	uint32_t sizeimage[VIDEO_MAX_PLANES] = {0};
	unsigned n_mem;
	char fcc[16];

	memset(&r, 0, sizeof(r));
	if (d->mplane) {
		const struct v4l2_pix_format_mplane *p = &f->fmt.pix_mp;
		r.mode.fourcc = p->pixelformat;
		r.mode.width = p->width;
		r.mode.height = p->height;
		r.field = p->field;
		r.color.colorspace = (uint8_t)p->colorspace;
		r.color.ycbcr_enc = p->ycbcr_enc;
		r.color.quantization = p->quantization;
		r.color.xfer_func = p->xfer_func;
		n_mem = p->num_planes;
		if (n_mem == 0 || n_mem > 3)
			return -EPROTO;
		for (unsigned i = 0; i < n_mem; i++) {
			bpl[i] = p->plane_fmt[i].bytesperline;
			sizeimage[i] = p->plane_fmt[i].sizeimage;
		}
	} else {
		const struct v4l2_pix_format *p = &f->fmt.pix;
		r.mode.fourcc = p->pixelformat;
		r.mode.width = p->width;
		r.mode.height = p->height;
		r.field = p->field;
		r.color.colorspace = (uint8_t)p->colorspace;
		/* ycbcr_enc etc. are only valid with the extended-format magic */
		if (p->priv == V4L2_PIX_FMT_PRIV_MAGIC) {
			r.color.ycbcr_enc = p->ycbcr_enc;
			r.color.quantization = p->quantization;
			r.color.xfer_func = p->xfer_func;
		}
		n_mem = 1;
		bpl[0] = p->bytesperline;
		sizeimage[0] = p->sizeimage;
	}
	r.fmt = vc_capture_fmt(r.mode.fourcc);
	if (!r.fmt) {
		log_warn("%s: driver answered format %s, unknown to the format table", d->path,
			 vc_fourcc_str(r.mode.fourcc, fcc));
		return -EPROTO;
	}
	if (r.fmt->mem_planes != n_mem) {
		log_warn("%s: %s with %u memory planes, the table says %u", d->path,
			 vc_fourcc_str(r.mode.fourcc, fcc), n_mem, r.fmt->mem_planes);
		return -EPROTO;
	}
	int e = vc_fmt_geometry(r.fmt, r.mode.width, r.mode.height, bpl[0], &r.geom);
	if (e < 0) {
		log_warn("%s: %s %ux%u bytesperline %u: no valid geometry", d->path,
			 vc_fourcc_str(r.mode.fourcc, fcc), r.mode.width, r.mode.height, bpl[0]);
		return -EPROTO;
	}
	/* The driver's sizeimage is what a buffer holds; it may pad beyond the
	 * computed size, never fall short of it. */
	size_t total = 0;
	for (unsigned i = 0; i < n_mem; i++) {
		if (sizeimage[i] && sizeimage[i] < r.geom.mem_size[i] &&
		    r.fmt->family != VC_FAM_COMPRESSED) {
			log_warn("%s: %s plane %u sizeimage %u < computed %zu", d->path,
				 vc_fourcc_str(r.mode.fourcc, fcc), i, sizeimage[i],
				 r.geom.mem_size[i]);
			return -EPROTO;
		}
		if (sizeimage[i])
			r.geom.mem_size[i] = sizeimage[i];
		total += r.geom.mem_size[i];
	}
	r.geom.sizeimage = total;
	*out = r;
	return 0;
}

static int read_parm(struct v4l2src *d, struct vc_fract *ival)
{
	struct v4l2_streamparm p;
	int e = v4l2_query(d, VIDIOC_G_PARM, &p, sizeof(p), d->type);
	if (e < 0) {
		ival->num = ival->den = 0; /* unknown: not every driver has G_PARM */
		return e;
	}
	ival->num = p.parm.capture.timeperframe.numerator;
	ival->den = p.parm.capture.timeperframe.denominator;
	if (!ival->num || !ival->den)
		ival->num = ival->den = 0;
	return 0;
}

static int read_format(struct v4l2src *d, struct vc_src_format *out)
{
	struct v4l2_format f;
	int e = v4l2_query(d, VIDIOC_G_FMT, &f, sizeof(f), d->type);
	if (e < 0) {
		log_error("%s: VIDIOC_G_FMT: %s", d->path, strerror(-e));
		return v4l2_gone(e);
	}
	e = v4l2_parse_format(d, &f, out);
	if (e < 0)
		return e;
	read_parm(d, &out->mode.ival);
	return 0;
}

static int v4l2src_get_format(struct vc_src *s, struct vc_src_format *out)
{
	struct v4l2src *d = to_dev(s);
	int e = read_format(d, &d->cur);
	if (e == 0 && out)
		*out = d->cur;
	return e;
}

/* A field of the asked mode, or the driver's current value where it is 0. */
static uint32_t asked(uint32_t want, uint32_t cur)
{
	return want ? want : cur;
}

static int v4l2src_set_mode(struct vc_src *s, const struct vc_mode *want, int try_only,
			    struct vc_src_format *out)
{
	struct v4l2src *d = to_dev(s);
	struct v4l2_format f;
	struct vc_src_format r;
	char fcc[16];
	int e;

	if (d->streaming || d->stopped_with_held)
		return -EBUSY;
	if (!try_only)
		v4l2_release_buffers(d); /* S_FMT is refused while buffers exist */
	e = v4l2_query(d, VIDIOC_G_FMT, &f, sizeof(f), d->type);
	if (e < 0)
		return v4l2_gone(e);
	/* what is asked replaces the current mode; the driver chooses strides
	 * and sizes for it */
	if (d->mplane) {
		struct v4l2_pix_format_mplane *p = &f.fmt.pix_mp;
		p->pixelformat = asked(want->fourcc, p->pixelformat);
		p->width = asked(want->width, p->width);
		p->height = asked(want->height, p->height);
		for (unsigned i = 0; i < VIDEO_MAX_PLANES; i++) {
			p->plane_fmt[i].bytesperline = 0;
			p->plane_fmt[i].sizeimage = 0;
		}
	} else {
		struct v4l2_pix_format *p = &f.fmt.pix;
		p->pixelformat = asked(want->fourcc, p->pixelformat);
		p->width = asked(want->width, p->width);
		p->height = asked(want->height, p->height);
		p->bytesperline = 0;
		p->sizeimage = 0;
	}
	e = v4l2_xioctl(d, VIDIOC_TRY_FMT, &f);
	if (e < 0) {
		log_warn("%s: VIDIOC_TRY_FMT %s %ux%u: %s", d->path,
			 vc_fourcc_str(want->fourcc, fcc), want->width, want->height,
			 strerror(-e));
		return v4l2_gone(e);
	}
	if (!try_only) {
		e = v4l2_xioctl(d, VIDIOC_S_FMT, &f);
		if (e < 0) {
			log_warn("%s: VIDIOC_S_FMT %s %ux%u: %s", d->path,
				 vc_fourcc_str(want->fourcc, fcc), want->width,
				 want->height, strerror(-e));
			return v4l2_gone(e);
		}
	}
	e = v4l2_parse_format(d, &f, &r);
	if (e < 0)
		return e;

	if (try_only) {
		r.mode.ival = want->ival;
		if (want->ival.num && want->ival.den)
			v4l2_nearest_ival(d, r.mode.fourcc, r.mode.width, r.mode.height,
					  &r.mode.ival);
		else
			read_parm(d, &r.mode.ival);
	} else {
		if (want->ival.num && want->ival.den) {
			struct v4l2_streamparm p;
			memset(&p, 0, sizeof(p));
			p.type = d->type;
			p.parm.capture.timeperframe.numerator = want->ival.num;
			p.parm.capture.timeperframe.denominator = want->ival.den;
			e = v4l2_xioctl(d, VIDIOC_S_PARM, &p);
			if (e < 0 && v4l2_gone(e) == -ENODEV)
				return -ENODEV;
			if (e < 0) /* a fixed-rate device: keep its rate */
				log_info("%s: VIDIOC_S_PARM %u/%u: %s", d->path, want->ival.num,
					 want->ival.den, strerror(-e));
		}
		read_parm(d, &r.mode.ival); /* what the driver settled on */
		d->cur = r;
		log_info("%s: mode %s %ux%u @ %u/%u s, bytesperline %u, sizeimage %zu",
			 d->path, vc_fourcc_str(r.mode.fourcc, fcc), r.mode.width,
			 r.mode.height, r.mode.ival.num, r.mode.ival.den,
			 r.geom.plane[0].stride, r.geom.sizeimage);
	}
	if (out)
		*out = r;
	return 0;
}

static int v4l2src_get_caps(struct vc_src *s, struct vc_caps *caps)
{
	struct v4l2src *d = to_dev(s);
	if (!d->streaming)
		v4l2_sync_signal(d);
	return v4l2_enum_caps(d, caps);
}

static int v4l2src_fd(struct vc_src *s)
{
	return to_dev(s)->fd;
}

static void v4l2src_close(struct vc_src *s)
{
	struct v4l2src *d = to_dev(s);
	if (!d)
		return;
	if (d->streaming) {
		int type = (int)d->type;
		v4l2_xioctl(d, VIDIOC_STREAMOFF, &type);
		d->streaming = 0;
	}
	for (unsigned i = 0; i < d->n_slots; i++)
		d->slots[i].held = 0; /* the contract: nothing is outstanding now */
	for (unsigned i = 0; i < d->n_copies; i++)
		d->copies[i].held = 0;
	d->stopped_with_held = 0;
	v4l2_release_buffers(d);
	if (d->fd >= 0)
		v4l2_close(d->fd);
	free(d);
}

/* Opens path and picks how to drive it: *fd is a libv4l2 fd, or the plain
 * one of a multi-planar-only device. 0, or -errno (logged; nothing open). */
static int open_fd(const char *path, int *fd)
{
	struct v4l2_capability cap;
	int raw, e;

	raw = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (raw < 0) {
		e = -errno;
		log_warn("%s: open: %s", path, strerror(errno));
		return e;
	}
	/* A multi-planar-only device stays a plain fd: libv4l2 would load its
	 * mplane plugin and present it as single-planar, which cannot carry
	 * formats with several memory planes (NV12M...); libv4lconvert has no
	 * multi-planar conversions anyway. v4l2_ioctl() and v4l2_mmap() pass
	 * an fd libv4l2 does not know straight to the kernel. */
	memset(&cap, 0, sizeof(cap));
	if (ioctl(raw, VIDIOC_QUERYCAP, &cap) < 0) {
		e = -errno;
		log_error("%s: VIDIOC_QUERYCAP: %s", path, strerror(errno));
		close(raw);
		return v4l2_gone(e);
	}
	uint32_t raw_caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
								      : cap.capabilities;
	if ((raw_caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE) && !(raw_caps & V4L2_CAP_VIDEO_CAPTURE)) {
		*fd = raw;
		log_info("%s: multi-planar: no libv4l2 format emulation", path);
		return 0;
	}
	/* libv4l2 takes over the fd; -1 means it cannot (the fd stays ours) */
	int lfd = v4l2_fd_open(raw, 0);
	if (lfd < 0) {
		log_error("%s: libv4l2 cannot handle this device", path);
		close(raw);
		return -EINVAL;
	}
	*fd = lfd;
	return 0;
}

static int v4l2src_open(const char *path, struct vc_src **out)
{
	struct v4l2src *d;
	struct v4l2_capability cap;
	struct stat st;
	int e;

	if (stat(path, &st) < 0) {
		e = -errno;
		log_debug("%s: %s", path, strerror(errno));
		return e;
	}
	if (!S_ISCHR(st.st_mode)) {
		log_error("%s: not a character device", path);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->base.ops = &vc_src_v4l2;
	d->fd = -1;
	snprintf(d->path, sizeof(d->path), "%s", path);

	e = open_fd(path, &d->fd);
	if (e < 0) {
		free(d);
		return e;
	}
	memset(&cap, 0, sizeof(cap));
	e = v4l2_xioctl(d, VIDIOC_QUERYCAP, &cap);
	if (e < 0) {
		log_error("%s: VIDIOC_QUERYCAP: %s", path, strerror(-e));
		goto fail;
	}
	d->device_caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
								 : cap.capabilities;
	vc_v4l2_name(d->driver, sizeof(d->driver), cap.driver, sizeof(cap.driver));
	vc_v4l2_name(d->card, sizeof(d->card), cap.card, sizeof(cap.card));
	vc_v4l2_name(d->bus, sizeof(d->bus), cap.bus_info, sizeof(cap.bus_info));
	if (d->device_caps & V4L2_CAP_VIDEO_CAPTURE) {
		d->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	} else if (d->device_caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE) {
		d->type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
		d->mplane = 1;
	} else {
		log_error("%s: %s is not a video capture device (caps 0x%08x)", path, d->card,
			  d->device_caps);
		e = -EINVAL;
		goto fail;
	}
	if (!(d->device_caps & V4L2_CAP_STREAMING)) {
		log_error("%s: %s cannot stream (no V4L2_CAP_STREAMING)", path, d->card);
		e = -EINVAL;
		goto fail;
	}
	v4l2_sync_signal(d);
	v4l2_subscribe(d);
	e = read_format(d, &d->cur);
	if (e < 0 && e != -EPROTO)
		goto fail;
	d->copy_out = v4l2_copyout_needed(d->driver);
	log_info("%s: %s (%s, %s)%s%s", path, d->card, d->driver, d->bus,
		 d->mplane ? ", multi-planar" : "",
		 d->copy_out ? "; the driver overwrites buffers it handed out: frames are copied" : "");
	*out = &d->base;
	return 0;
fail:
	v4l2_close(d->fd);
	free(d);
	return v4l2_gone(e);
}

int vc_v4l2_info(struct vc_src *s, struct vc_v4l2_info *out)
{
	if (!s || s->ops != &vc_src_v4l2)
		return -EINVAL;
	struct v4l2src *d = to_dev(s);
	memset(out, 0, sizeof(*out));
	memcpy(out->driver, d->driver, sizeof(out->driver));
	memcpy(out->card, d->card, sizeof(out->card));
	memcpy(out->bus, d->bus, sizeof(out->bus));
	out->device_caps = d->device_caps;
	out->mplane = d->mplane;
	return 0;
}

const struct vc_src_ops vc_src_v4l2 = {
	.name = "v4l2",
	.open = v4l2src_open,
	.close = v4l2src_close,
	.get_caps = v4l2src_get_caps,
	.set_mode = v4l2src_set_mode,
	.get_format = v4l2src_get_format,
	.start = v4l2_start,
	.stop = v4l2_stop,
	.fd = v4l2src_fd,
	.next_due = NULL,
	.dequeue = v4l2_dequeue,
	.queue = v4l2_queue,
	.get_event = v4l2_get_event,
	.ctrl_query = v4l2_ctrl_query,
	.ctrl_menu = v4l2_ctrl_menu,
	.ctrl_get = v4l2_ctrl_get,
	.ctrl_set = v4l2_ctrl_set,
	.input_enum = v4l2_input_enum,
	.input_get = v4l2_input_get,
	.input_set = v4l2_input_set,
	.dmabuf = v4l2_dmabuf,
};
