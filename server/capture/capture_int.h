/* Inside one camera (server/capture/capture.c): the camera's state, its open
 * source sessions and their lendable slots, shared by capture.c (the state
 * machine and streaming), capture_lend.c (slots lent as frames and their
 * return) and capture_access.c (getters, controls, inputs, reconfiguring).
 * Not for other modules: they use server/capture/capture.h. */
#ifndef VC_CAPTURE_INT_H
#define VC_CAPTURE_INT_H

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>

#include "common/conf_keys.h" /* the defaults of buffers, stall and idle times */
#include "server/capture/capture.h"
#include "server/capture/source.h"
#include "server/capture/v4l2src.h"

#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 5000
/* Wait this long for lent buffers before reopening anyway. A reopen while
 * frames are out leaves the old handle holding the device's buffer queue,
 * so the new one cannot set its input, signal or buffers (EBUSY) until they
 * come back; a 1080p encode takes over 300 ms on a slow CPU. */
#define DRAIN_MS 2000
#define MAX_SLOTS 32

struct session;

/* One lendable slot; its address is the release opaque. */
struct slot {
	struct session *sess;
	unsigned index;
	struct slot *next; /* on the return list */
};

/* Shared with releasing threads; outlives the camera while frames are out. */
struct retq {
	pthread_mutex_t mu;
	struct slot *head;     /* returned slots waiting for the loop */
	struct event *ev;      /* activated on return; NULL once the camera is freed */
	unsigned total_lent;   /* over all sessions */
};

/* One open source instance. Retired sessions wait for their lent buffers
 * before closing (the source unmaps on close). */
struct session {
	struct vc_src *src;
	struct retq *rq;
	struct vc_src_format fmt;
	unsigned n_bufs;
	unsigned lent;         /* under rq->mu */
	int retired;           /* under rq->mu */
	struct slot slots[MAX_SLOTS];
};

#define VC_CAM_LEARNED_MAX 8

struct vc_cam {
	struct event_base *base;
	const char *id, *path; /* cfg.name, cfg.device */
	struct vc_conf_cam cfg; /* the camera's own copy of its settings */
	const struct vc_src_ops *ops;

	enum vc_cam_state state;
	struct session *sess;
	struct vc_caps caps;
	struct vc_src_format fmt;
	int streaming;
	int consumers;
	int backoff_ms;
	int last_err;          /* last logged open/start error, to log a cause once */
	int was_failed;        /* a recovery is counted as a restart */
	int reopen;            /* after draining: close and reopen the source */
	int parked;            /* closed while idle (idle_close): opened on demand */
	int usb;               /* the open device is on USB (QUERYCAP bus_info) */
	int have_info;         /* info: QUERYCAP of the last open V4L2 device */
	struct vc_v4l2_info info;
	int have_input;        /* while parked: its input then (the policy asks) */
	uint32_t input_idx;
	struct vc_src_input input;
	struct vc_mode want;   /* pending mode (fourcc 0 = none) */
	int want_pending;
	vc_cam_reconf_fn reconf_fn; /* pending reconfiguration, run while stopped */
	uint8_t reconf_arg[VC_CAM_RECONF_ARG_MAX];
	struct {                    /* re-run after every open */
		vc_cam_reconf_fn fn;
		uint8_t arg[VC_CAM_RECONF_ARG_MAX];
	} keep[VC_CAM_KEEP_MAX];
	/* The device's answers to modes it lists (learn_answer), taken out of
	 * every fresh read of its caps: a USB camera closed while idle, or
	 * reopened after a stall, is the same camera and would refuse the same
	 * way. Forgotten when it is gone or its input changes. */
	struct {
		struct vc_mode asked, got;
	} learned[VC_CAM_LEARNED_MAX];
	unsigned n_learned;

	struct event *retry_ev, *frame_ev, *tick_ev, *idle_ev, *apply_ev, *drain_ev, *ret_ev;
	struct retq *rq;
	struct vc_pool *pool;  /* storage for copies; frames out keep it alive */

	int have_seq;
	uint64_t last_seq;
	int64_t last_frame_us;
	int64_t fps_t0;
	uint64_t fps_n;
	struct vc_cam_stats st;

	vc_cam_frame_cb on_frame;
	vc_cam_event_cb on_event;
	void *opaque;
};

/* An error that means the device went away (unplugged, driver gone). */
static inline int cam_is_gone(int err)
{
	return err == -ENODEV || err == -ENXIO || err == -EIO;
}

/* capture_lend.c */

/* Release callback of lent frames (opaque: the struct slot): any thread. */
void cam_slot_release(struct vc_frame *f, void *opaque);
/* Retires the current session: closed now if nothing is lent, else by the
 * last return. */
void cam_retire(struct vc_cam *cam);
/* Re-queues returned slots (the ret_ev callback; also called directly). */
void cam_on_returns(evutil_socket_t fd, short what, void *arg);
void cam_retq_free(struct retq *rq);

/* capture.c */

/* Logs, retires the session, goes absent and schedules a reopen. */
void cam_device_gone(struct vc_cam *cam, int err);
/* Once every lent buffer is back (or the drain timed out): new mode and
 * stream again, or reopen the source. */
void cam_after_drain(struct vc_cam *cam);
/* Opens a camera closed while idle (parked), now, for a request that needs
 * the device; 0, or -ENODEV when it is not open after all. */
int cam_wake(struct vc_cam *cam);

#endif
