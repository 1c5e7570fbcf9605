/* One encoder session on a V4L2 memory-to-memory (M2M) stateful encoder:
 * raw frames go in on its OUTPUT queue, coded frames (JPEG, H.264, vicodec's
 * FWHT) come back on its CAPTURE queue. The same code drives the Raspberry
 * Pi's bcm2835-codec (/dev/video31 JPEG, /dev/video11 H.264, multi-planar
 * API) and the kernel's vicodec test driver (single- or multi-planar).
 *
 * The session runs on one libevent loop: submit() queues a frame, the device
 * fd is watched while frames are in flight, and each coded frame comes back
 * through the done callback on the loop thread. Nothing here blocks except
 * the setup ioctls of open()/restart().
 *
 * Feeding the OUTPUT queue:
 *  - DMABUF: the caller passes the dmabuf fd of each memory plane of the
 *    frame (VIDIOC_EXPBUF of the capture buffer). The session holds a
 *    reference on the frame until the encoder gives the OUTPUT buffer back,
 *    so the capture slot is not re-queued while the encoder reads it. No
 *    copy of the picture is made (stats.copies stays 0).
 *  - MMAP: the frame is copied into a mapped OUTPUT buffer (one copy per
 *    frame, counted in stats.copies) and released at once.
 *  VC_M2M_FEED_AUTO picks DMABUF when the caller said it can give fds and
 *  the encoder's OUTPUT layout (bytesperline, buffer height, sizeimage per
 *  plane) equals the source's, else MMAP; and when the encoder refuses the
 *  first DMABUF frame (a dma-contig encoder cannot import scattered memory)
 *  it sets up again with MMAP and sends that frame as a copy.
 *
 * Errors: every function returns 0 or a negative errno. After a device error
 * (an ioctl failing with anything but EAGAIN, no answer within the timeout)
 * the session is "failed": frames in flight come
 * back through the callback with that error, submit() answers it at once, and
 * the caller encodes on the CPU instead (the frame it passed is still its
 * own). The caller then closes the session (also allowed from inside the
 * callback), and may open a new one later. The session logs its failures at
 * debug level only: the caller knows whether it is the first (warn once). A coded buffer the driver flags
 * V4L2_BUF_FLAG_ERROR fails only its frame (-EIO), not the session.
 *
 * The ioctl sequence, as the V4L2 stateful encoder interface documents it
 * (Documentation/userspace-api/media/v4l/dev-encoder.rst) and as
 * bcm2835-codec and vicodec implement it, is written out in
 * server/encode/M2M.md and checked call by call by tests/unit/test_m2m_enc.c.
 *
 * Threads: everything on the loop thread that made the session. */
#ifndef VC_M2M_ENC_H
#define VC_M2M_ENC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/frame.h"

struct event_base;
struct vc_m2m_enc;

/* Device I/O, so a fake device can stand in (tests/unit/test_m2m_enc.c).
 * NULL = the real device (open(2) O_RDWR|O_NONBLOCK, ioctl(2), mmap(2)).
 * open returns an fd the loop can watch (readable = a coded frame is ready)
 * or -errno; ioctl 0 or -errno; mmap NULL on failure. */
struct vc_m2m_enc_io {
	int (*open)(void *opaque, const char *path);
	int (*ioctl)(void *opaque, int fd, unsigned long req, void *arg);
	void *(*mmap)(void *opaque, int fd, size_t len, off_t offset);
	void (*munmap)(void *opaque, void *addr, size_t len);
	void (*close)(void *opaque, int fd);
	void *opaque;
};

enum vc_m2m_feed {
	VC_M2M_FEED_AUTO = 0, /* DMABUF when possible (see above), else MMAP */
	VC_M2M_FEED_DMABUF,   /* DMABUF or fail with -EINVAL at open/restart */
	VC_M2M_FEED_MMAP,     /* always copy */
};

/* What to encode. Zero fields keep the driver's default. */
struct vc_m2m_enc_params {
	uint32_t in_fourcc;        /* raw format of the frames (V4L2 fourcc) */
	uint32_t width, height;
	uint32_t bytesperline;     /* of the source frames' first plane (0 = minimum) */
	uint32_t coded_fourcc;     /* V4L2_PIX_FMT_JPEG, _H264, _FWHT... */
	size_t coded_size;         /* CAPTURE sizeimage to ask for (0 = driver's) */
	int feed;                  /* enum vc_m2m_feed */
	int dmabuf_ok;             /* AUTO only: the caller can pass dmabuf fds */
	size_t src_len[3];         /* AUTO/DMABUF: length of each source dmabuf */
	unsigned n_output;         /* OUTPUT buffers (0 = 2) */
	unsigned n_capture;        /* CAPTURE buffers (0 = 4) */
	int quality;               /* V4L2_CID_JPEG_COMPRESSION_QUALITY 1..100 (0 = leave) */
	int bitrate;               /* V4L2_CID_MPEG_VIDEO_BITRATE, bits/s (0 = leave) */
	int gop;                   /* V4L2_CID_MPEG_VIDEO_GOP_SIZE and, for H.264,
				    * _H264_I_PERIOD (0 = leave). H.264 also sets
				    * _REPEAT_SEQ_HEADER 1, _H264_PROFILE Constrained
				    * Baseline (else Baseline) and _H264_LEVEL from
				    * size and rate, each where the device has it */
	uint32_t fps_num, fps_den; /* frame rate for the OUTPUT queue's S_PARM (0 = leave) */
	int timeout_ms;            /* a frame not back by then fails the session (0 = 2000) */
};

/* One frame to encode. */
struct vc_m2m_enc_in {
	struct vc_frame *frame;    /* raw, laid out as params said; the session takes
				    * its own reference while it needs the frame */
	int dmabuf_fd[3];          /* DMABUF feed: one fd per memory plane (the caller
				    * keeps them open as long as the frame lives) */
	void *tag;                 /* handed back with the result */
};

/* One coded frame, valid during the callback only (the buffer is re-queued
 * when it returns): copy what you keep. H.264: one access unit; a CAPTURE
 * buffer holding only parameter sets is not reported but put before the
 * next picture's bytes. */
struct vc_m2m_enc_out {
	const uint8_t *data;
	size_t len;
	int keyframe;              /* V4L2_BUF_FLAG_KEYFRAME, every JPEG, FWHT I-frames;
				    * H.264: an IDR slice in the access unit (the
				    * bitstream decides, not the flag) */
	uint64_t seq;              /* the source frame's seq */
	int64_t ts_us;             /* the source frame's ts_us */
	void *tag;                 /* from vc_m2m_enc_in */
};

struct vc_m2m_enc_cb {
	/* A frame is done: err 0 and *out, or err < 0 (out NULL, tag in
	 * `tag`): the frame was not encoded; encode it elsewhere. */
	void (*done)(void *opaque, int err, const struct vc_m2m_enc_out *out, void *tag);
	/* Optional: a drain (vc_m2m_enc_drain) has finished: every frame
	 * submitted before it has come back. */
	void (*drained)(void *opaque);
	void *opaque;
};

struct vc_m2m_enc_stats {
	uint64_t frames_in, frames_out; /* submitted, came back coded */
	uint64_t copies;           /* frames copied into an MMAP OUTPUT buffer */
	uint64_t bytes_out;
	uint64_t errors;           /* frames that came back with an error */
	uint64_t restarts;
	int dmabuf;                /* the current configuration feeds by DMABUF */
	int mplane;                /* multi-planar API */
	unsigned in_flight;
};

/* Opens path, checks it is an M2M device (QUERYCAP), configures both queues
 * (S_FMT CAPTURE coded, S_FMT OUTPUT raw, S_PARM, controls), allocates and
 * maps the buffers, queues every CAPTURE buffer and starts both queues.
 * base: the loop the session runs on. io NULL = the real device. Returns 0
 * and *out, or -errno (-ENOTTY: not an M2M device; -EINVAL: the device does
 * not take these formats/sizes; -ENODEV/-ENOENT: not there), nothing left
 * open then. */
int vc_m2m_enc_open(struct event_base *base, const struct vc_m2m_enc_io *io, const char *path,
		    const struct vc_m2m_enc_params *p, const struct vc_m2m_enc_cb *cb,
		    struct vc_m2m_enc **out);

/* Stops both queues, unmaps, closes the fd, drops every frame reference and
 * frees e. Frames still in flight are NOT reported (the caller is going
 * away). NULL is a no-op. */
void vc_m2m_enc_close(struct vc_m2m_enc *e);

/* Queues one frame. Returns 0 (the result comes through cb.done), or
 * -EBUSY when every OUTPUT buffer is in use or a drain runs (drop the frame
 * or encode it elsewhere), -EINVAL when the frame does not fit the
 * configuration (other size/format, DMABUF without fds), or the session's
 * device error. On failure the session holds nothing of in. */
int vc_m2m_enc_submit(struct vc_m2m_enc *e, const struct vc_m2m_enc_in *in);

/* Starts a drain: VIDIOC_ENCODER_CMD(V4L2_ENC_CMD_STOP). Frames in flight
 * come back as usual; then cb.drained runs (at once, from the loop, when
 * nothing is in flight). Until restart() submit() answers -EBUSY. */
int vc_m2m_enc_drain(struct vc_m2m_enc *e);

/* Reconfigures on the same open device, e.g. for a new frame size: STREAMOFF
 * both queues (dropping frames in flight without callbacks: drain first to
 * keep them), free the buffers (REQBUFS 0), then the whole setup of open()
 * with p. On failure the session is failed (close it). */
int vc_m2m_enc_restart(struct vc_m2m_enc *e, const struct vc_m2m_enc_params *p);

/* Controls. set: VIDIOC_S_CTRL; -EINVAL/-ENOTTY when the device has no such
 * control (vicodec has no bitrate). force_key: the next frame is a key frame
 * (V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME). Neither fails the session. */
int vc_m2m_enc_set_ctrl(struct vc_m2m_enc *e, uint32_t id, int32_t value);
int vc_m2m_enc_force_key(struct vc_m2m_enc *e);

/* 0 while usable, else the error that failed the session. */
int vc_m2m_enc_error(const struct vc_m2m_enc *e);

void vc_m2m_enc_get_stats(const struct vc_m2m_enc *e, struct vc_m2m_enc_stats *s);

/* The OUTPUT queue's layout as the driver set it (bytesperline of plane 0
 * and sizeimage per memory plane), e.g. for a test to lay out frames. */
void vc_m2m_enc_out_layout(const struct vc_m2m_enc *e, uint32_t *bytesperline,
			   size_t sizeimage[3], unsigned *n_planes);

#endif
