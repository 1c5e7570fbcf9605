/* Internals of the V4L2 source (server/capture/v4l2src.c and its v4l2_*.c parts):
 * the instance struct and the helpers the parts share. Not for other
 * modules: they use server/capture/source.h and server/capture/v4l2src.h. */
#ifndef VC_V4L2_INT_H
#define VC_V4L2_INT_H

#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>

#include "server/capture/source.h"

/* What tells one filling of a buffer from another: the driver's record of
 * it (QUERYBUF/DQBUF). */
struct v4l2_record {
	struct timeval ts;
	uint32_t seq, used;
};

/* One mmap'd buffer slot. */
struct v4l2_slot {
	uint8_t *mem[VIDEO_MAX_PLANES];
	size_t len[VIDEO_MAX_PLANES];
	unsigned n_mem;
	int held; /* dequeued and lent to the caller until queue() */
	struct v4l2_record at_start; /* QUERYBUF right after REQBUFS (copy-out mode) */
	int dmabuf[VIDEO_MAX_PLANES]; /* VIDIOC_EXPBUF fds, n_dmabuf of them (0: none) */
	unsigned n_dmabuf;
};

/* A private copy of a frame (copy-out mode, server/capture/v4l2_copyout.c). */
struct v4l2_copy {
	uint8_t *mem[3];
	int held; /* lent to the caller until queue() */
};

struct v4l2src {
	struct vc_src base; /* first: capture.c sees a struct vc_src */
	char path[256];
	int fd;             /* a libv4l2 fd: every ioctl goes through v4l2_ioctl */
	uint32_t type;      /* V4L2_BUF_TYPE_VIDEO_CAPTURE or ..._MPLANE */
	int mplane;
	uint32_t device_caps;
	char driver[16], card[32], bus[32];
	struct vc_src_format cur; /* what the driver answered last (G_FMT/S_FMT) */
	int streaming;
	unsigned n_slots;
	struct v4l2_slot *slots;
	int stopped_with_held; /* buffers still lent after stop(): release at last queue() */
	int events;            /* source-change events subscribed */
	int eos_pending;       /* an EOS met while dropping our own source changes */
	int copy_out;          /* the driver overwrites dequeued buffers: copy each frame */
	struct v4l2_copy *copies; /* copy-out mode: what the caller's indices name */
	unsigned n_copies;
	int dv_chosen;         /* DV timings set on purpose (vc_v4l2_dv_set) for the
				* current input: not replaced by detected ones */
};

/* v4l2_io.c, the layer every other part calls down into: */
/* v4l2_ioctl with EINTR retry. Returns 0 or -errno (errno itself untouched
 * meaning: ENODEV/EIO/ENXIO mean the device is gone). */
int v4l2_xioctl(struct v4l2src *d, unsigned long req, void *arg);

/* The V4L2 query idiom: arg (size bytes) zeroed, its leading __u32 (type,
 * index or id) set to first, then the ioctl; 0 or -errno like v4l2_xioctl.
 * Only for structs that start with that field (asserted in v4l2_io.c). */
int v4l2_query(struct v4l2src *d, unsigned long req, void *arg, size_t size, uint32_t first);

/* -ENODEV for "device gone" errnos, the value unchanged otherwise. */
int v4l2_gone(int err);

/* Fills *out from a driver-answered v4l2_format (G_FMT/TRY_FMT/S_FMT).
 * -EPROTO when the fourcc is not in the format table or the geometry the
 * driver answered cannot hold a frame. */
int v4l2_parse_format(struct v4l2src *d, const struct v4l2_format *f,
		      struct vc_src_format *out);

/* v4l2_caps.c: ENUM_FMT/ENUM_FRAMESIZES/ENUM_FRAMEINTERVALS into *caps. */
int v4l2_enum_caps(struct v4l2src *d, struct vc_caps *caps);

/* The offered interval nearest to *want for fourcc at w x h (ENUM_FRAME-
 * INTERVALS); *want unchanged when the driver lists none. */
void v4l2_nearest_ival(struct v4l2src *d, uint32_t fourcc, uint32_t w, uint32_t h,
		       struct vc_fract *want);

/* v4l2_input.c: inputs, TV standards, DV timings. */
int v4l2_input_enum(struct vc_src *s, uint32_t index, struct vc_src_input *in);
int v4l2_input_get(struct vc_src *s, uint32_t *index);
int v4l2_input_set(struct vc_src *s, uint32_t index);
/* Brings the current input's signal setup in line with what it receives:
 * a DV input gets the timings QUERY_DV_TIMINGS detects, an analog input
 * keeps its standard (or gets QUERYSTD's). Only while not streaming. */
int v4l2_sync_signal(struct v4l2src *d);
/* (Re)subscribes source-change events for the current input. */
void v4l2_subscribe(struct v4l2src *d);
/* Discards the source-change events queued by our own S_INPUT, S_STD or
 * S_DV_TIMINGS (some drivers send one to every listener, us included: vivid
 * on Debian's 6.1.192 kernel does): renegotiating on them would reopen the
 * device, set the kept signal again and loop. */
void v4l2_drop_own_source_changes(struct v4l2src *d);

/* v4l2_ctrl.c: control ops. */
int v4l2_ctrl_query(struct vc_src *s, uint32_t id, struct vc_src_ctrl *c);
int v4l2_ctrl_menu(struct vc_src *s, uint32_t id, uint32_t index, char name[32]);
int v4l2_ctrl_get(struct vc_src *s, uint32_t id, int64_t *value);
int v4l2_ctrl_set(struct vc_src *s, uint32_t id, int64_t value);

/* v4l2_stream.c: buffers and streaming ops. */
int v4l2_start(struct vc_src *s, unsigned n_buffers, unsigned *n_actual);
int v4l2_dmabuf(struct vc_src *s, unsigned index, int fds[3]);
void v4l2_stop(struct vc_src *s);
int v4l2_dequeue(struct vc_src *s, struct vc_src_buf *b);
int v4l2_queue(struct vc_src *s, unsigned index);
/* Buffers (or copies) the caller holds. */
unsigned v4l2_held(const struct v4l2src *d);
int v4l2_get_event(struct vc_src *s, struct vc_src_event *ev);
/* Unmaps every slot and frees the driver's buffers (REQBUFS 0). */
void v4l2_release_buffers(struct v4l2src *d);

/* v4l2_copyout.c: frames copied out of drivers that overwrite dequeued
 * buffers (v4l2loopback). */
/* Whether the driver (QUERYCAP name) needs copy-out. */
int v4l2_copyout_needed(const char *driver);
/* Pure: whether a copy of the frame filled at sequence seq may be torn,
 * given every buffer's sequence read after the copy (seqs[n]). */
int v4l2_copy_overtaken(uint32_t seq, const uint32_t *seqs, unsigned n);
/* Pure: whether a dequeued buffer still carries the record REQBUFS gave it,
 * i.e. the producer has not filled it since: v4l2loopback resets every
 * record (length = sizeimage) on a reader's REQBUFS but not the data, so
 * such a buffer holds an old, possibly half-overwritten picture. */
int v4l2_copy_stale(const struct v4l2_record *now, const struct v4l2_record *at_start);
/* One copy per slot, each as large as the largest slot. 0 or -ENOMEM. */
int v4l2_copies_alloc(struct v4l2src *d);
void v4l2_copies_free(struct v4l2src *d);
/* After DQBUF: copies out's planes into a free copy and points out at it
 * (out->index becomes the copy's), flags a stale or possibly torn copy as
 * an error frame. The driver's buffer is the caller's to queue back. 0 or -ENOBUFS. */
int v4l2_copy_out(struct v4l2src *d, const struct v4l2_buffer *b, struct vc_src_buf *out);

#endif
