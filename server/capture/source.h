/* A capture source: the small ops table every frame producer implements so
 * that capture.c drives a real V4L2 device (server/capture/v4l2src.c, libv4l2), the
 * test-pattern source (server/capture/testsrc.c) and the fault-injecting fake
 * (server/capture/faultsrc.c) the same way, without #ifdefs.
 *
 * CONTRACT between capture.c and the sources: extend it (new ops go at the
 * end, optional ones may be NULL), do not break it.
 *
 * Threading: every op is called on the event-loop thread only, never
 * concurrently for one source. Sources own no event loop, timers or threads.
 *
 * Errors: ops return 0 (or a count) or a negative errno. -ENODEV (also
 * -ENXIO, and -EIO from the streaming ops) means "the device is gone":
 * capture.c closes the source, goes ABSENT and reopens with backoff.
 * open() returning -ENOENT/-ENODEV/-EACCES/-EBUSY means "not there now,
 * retry"; -EINVAL means the path itself is wrong (not retried fast).
 *
 * Lifecycle:  open -> [get_caps] -> set_mode(try/set) -> start
 *             -> { wait fd / next_due -> dequeue -> ... queue }* -> stop
 *             -> (set_mode -> start ...) -> close
 * set_mode() is only called while stopped. */
#ifndef VC_SOURCE_H
#define VC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "common/caps.h"
#include "common/fmt.h"
#include "common/frame.h"

struct vc_src_ops;

/* Base of every source instance. An implementation embeds it as its first
 * member and allocates the whole thing in open(); capture.c only reads
 * `ops`. */
struct vc_src {
	const struct vc_src_ops *ops;
};

/* What the source answers to a mode request (TRY_FMT/S_FMT + S_PARM): the
 * mode it will actually deliver (width/height/fourcc/interval as adjusted by
 * the driver) and the exact buffer layout (driver's bytesperline/sizeimage,
 * multi-planar planes), colorimetry and field order. */
struct vc_src_format {
	struct vc_mode mode;          /* applied; mode.ival 0/0 = unknown */
	const struct vc_fmt *fmt;     /* table row of mode.fourcc, never NULL on success */
	struct vc_geom geom;          /* from vc_fmt_geometry() with the driver's stride,
				       * mem_size[] = the driver's sizeimage per plane */
	struct vc_colorimetry color;
	uint32_t field;               /* enum v4l2_field */
};

/* vc_src_buf.flags */
#define VC_SRC_BUF_ERROR 0x1u     /* driver set V4L2_BUF_FLAG_ERROR: data unusable */
#define VC_SRC_BUF_KEYFRAME 0x2u  /* compressed formats, when known */

/* One dequeued buffer. The memory stays valid and untouched by the source
 * until the caller gives the index back with queue() (or close()s). */
struct vc_src_buf {
	unsigned index;               /* slot, < the count start() reported */
	uint8_t *mem[3];              /* start of each memory plane (geom.mem_planes) */
	size_t bytesused[3];          /* valid bytes per memory plane */
	uint64_t seq;                 /* driver sequence number; gaps = drops */
	int64_t ts_us;                /* capture time, CLOCK_MONOTONIC microseconds; 0 = unknown */
	uint32_t flags;               /* VC_SRC_BUF_* */
	uint32_t field;               /* enum v4l2_field of this buffer (0 = as negotiated) */
};

enum vc_src_event_type {
	VC_SRC_EV_NONE = 0,
	VC_SRC_EV_SOURCE_CHANGE, /* V4L2_EVENT_SOURCE_CHANGE: resolution/timings changed;
				  * capture.c stops, re-queries caps and renegotiates */
	VC_SRC_EV_EOS,           /* V4L2_EVENT_EOS: no more frames; treated as a stall */
	VC_SRC_EV_CTRL,          /* a control changed (id in ctrl_id) */
};

struct vc_src_event {
	int type;                /* enum vc_src_event_type */
	uint32_t ctrl_id;
};

/* A control as QUERY_EXT_CTRL reports it (values widened to int64). */
struct vc_src_ctrl {
	uint32_t id;             /* V4L2_CID_* */
	uint32_t type;           /* enum v4l2_ctrl_type */
	char name[32];
	int64_t min, max, step, def;
	uint32_t flags;          /* V4L2_CTRL_FLAG_* */
};

/* An input as ENUM_INPUT reports it. */
struct vc_src_input {
	uint32_t index;
	char name[32];
	uint32_t type;           /* V4L2_INPUT_TYPE_* */
	uint32_t capabilities;   /* V4L2_IN_CAP_STD / DV_TIMINGS / ... */
	uint64_t std;            /* supported v4l2_std_id, 0 if none */
	uint32_t status;         /* V4L2_IN_ST_* (no signal, ...) */
};

struct vc_src_ops {
	const char *name; /* "v4l2", "test", "fault": for logs */

	/* Opens the source named by path (a device node, a /dev/v4l/by-id link,
	 * "test:640x480@30:YUYV", "fault:..."). On success *out is the new
	 * instance, stopped, in its default mode. */
	int (*open)(const char *path, struct vc_src **out);

	/* Releases everything (STREAMOFF if needed, munmap, close fd) and frees
	 * s. capture.c calls it only once no dequeued buffer is outstanding, so
	 * the source may unmap. Never fails; NULL-safe is not required. */
	void (*close)(struct vc_src *s);

	/* Fills *caps (caller-owned, released with vc_caps_clear()) with every
	 * format (native before emulated, each marked), frame sizes (discrete
	 * or stepwise) and frame intervals. */
	int (*get_caps)(struct vc_src *s, struct vc_caps *caps);

	/* Negotiates a mode: the nearest the source supports to *want (zero
	 * fields = keep current / default). try_only != 0: TRY_FMT semantics,
	 * nothing changes. Otherwise S_FMT + S_PARM: the mode becomes current.
	 * *out (may be NULL) gets what was (or would be) applied. Only while
	 * stopped (-EBUSY otherwise). */
	int (*set_mode)(struct vc_src *s, const struct vc_mode *want, int try_only,
			struct vc_src_format *out);

	/* Current mode and layout (after open: the driver's default). */
	int (*get_format)(struct vc_src *s, struct vc_src_format *out);

	/* Allocates and maps n_buffers (0 = source default) buffers, queues them
	 * all and starts streaming (REQBUFS/QUERYBUF/mmap/QBUF/STREAMON). The
	 * actual count goes to *n_actual. On failure nothing is streaming. */
	int (*start)(struct vc_src *s, unsigned n_buffers, unsigned *n_actual);

	/* Stops streaming (STREAMOFF). Buffers the caller still holds stay
	 * mapped and valid; giving them back with queue() afterwards just returns
	 * them to the source without re-queueing them to the driver. start()
	 * may then be called again (the source re-uses or reallocates buffers;
	 * with buffers still held it may answer -EBUSY). */
	void (*stop)(struct vc_src *s);

	/* The fd to watch for readability (a frame is ready to dequeue), or -1
	 * for a synthetic source that uses next_due() instead. Constant between
	 * open and close. */
	int (*fd)(struct vc_src *s);

	/* Synthetic sources only (fd() == -1; NULL otherwise): the
	 * CLOCK_MONOTONIC time in microseconds at which the next frame can be
	 * dequeued, or -1 when none will come (stopped, still stalled). */
	int64_t (*next_due)(struct vc_src *s);

	/* Takes one filled buffer without blocking. Returns 0 and fills *b;
	 * -EAGAIN when none is ready; -ENODEV/-EIO when the device is gone; other
	 * -errno for other failures. An ERROR-flagged or short buffer is still
	 * returned (capture.c counts and re-queues it). */
	int (*dequeue)(struct vc_src *s, struct vc_src_buf *b);

	/* Gives buffer `index` back (QBUF while streaming; after stop() just
	 * marks it free). -ENODEV/-EIO = gone. */
	int (*queue)(struct vc_src *s, unsigned index);

	/* Optional (may be NULL): takes one pending event without blocking
	 * (VIDIOC_DQEVENT). Returns 1 and fills *ev, 0 when none is pending,
	 * -errno. capture.c polls it after each dequeue burst and on a timer,
	 * because libevent cannot wait on POLLPRI. */
	int (*get_event)(struct vc_src *s, struct vc_src_event *ev);

	/* Optional controls (NULL = none). ctrl_query: the control with `id`, or
	 * with id | V4L2_CTRL_FLAG_NEXT_CTRL the next one (enumeration); -EINVAL
	 * at the end. ctrl_menu: name of menu item `index` (-EINVAL if skipped). */
	int (*ctrl_query)(struct vc_src *s, uint32_t id, struct vc_src_ctrl *c);
	int (*ctrl_menu)(struct vc_src *s, uint32_t id, uint32_t index, char name[32]);
	int (*ctrl_get)(struct vc_src *s, uint32_t id, int64_t *value);
	int (*ctrl_set)(struct vc_src *s, uint32_t id, int64_t value);

	/* Optional inputs (NULL = single input). input_enum: -EINVAL past the
	 * end. input_set only while stopped; the caller re-reads caps after. */
	int (*input_enum)(struct vc_src *s, uint32_t index, struct vc_src_input *in);
	int (*input_get)(struct vc_src *s, uint32_t *index);
	int (*input_set)(struct vc_src *s, uint32_t index);

	/* Optional (may be NULL): the dmabuf fds of buffer `index`, one per
	 * memory plane, exported (VIDIOC_EXPBUF) when start() allocated the
	 * buffers; owned by the source and closed when it frees them, so valid
	 * while the buffer is lent. Returns the number of fds, 0 when the
	 * buffers are not exportable (a libv4l2-converted format, copy-out mode,
	 * a driver without EXPBUF). */
	int (*dmabuf)(struct vc_src *s, unsigned index, int fds[3]);
};

/* The built-in sources. vc_src_v4l2 lives in server/capture/v4l2src.c. */
extern const struct vc_src_ops vc_src_test;
extern const struct vc_src_ops vc_src_fault;
extern const struct vc_src_ops vc_src_v4l2;

/* The ops that handle a path: "test" / "test:..." -> vc_src_test,
 * "fault:..." -> vc_src_fault, anything else -> vc_src_v4l2. NULL when the
 * path needs a source this build does not have. */
const struct vc_src_ops *vc_src_for_path(const char *path);

#endif
