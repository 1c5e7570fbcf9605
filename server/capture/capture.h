/* One camera: a capture source (V4L2 device through libv4l2, or the
 * test-pattern source) driven by the event loop, with its state machine
 * (absent -> idle -> streaming -> error/retry), its capabilities, controls,
 * inputs and statistics. Frames are delivered to one callback on the loop
 * thread; the fan-out to clients lives elsewhere.
 *
 * CONTRACT between the capture layer and the serving layer: extend it, do not
 * break it. All functions must be called on the loop thread. */
#ifndef VC_CAPTURE_H
#define VC_CAPTURE_H

#include <stdint.h>

#include <stddef.h>

#include "common/caps.h"
#include "common/conf.h"
#include "common/frame.h"
#include "server/capture/source.h"

struct event_base;
struct vc_cam;

enum vc_cam_state {
	VC_CAM_ABSENT = 0, /* device node missing or unopenable; retried with backoff */
	VC_CAM_IDLE,       /* open, not streaming (no consumers) */
	VC_CAM_STREAMING,
	VC_CAM_ERROR,      /* failed; retried with backoff */
};

/* A camera is made from its settings as the config file's [camera] rows
 * hold them (struct vc_conf_cam, common/conf.h; flags and discovery fill
 * the same struct): name is its URL id (NULL = "0"), device its path
 * ("/dev/video0", a by-id link, "test", "test:640x480@30:YUYV"; NULL =
 * "test"), mode the preferred mode, then input, buffers, idle_stop_ms
 * (unset = the key's default, "never" = -1) and stall_timeout_ms. quality,
 * rotate, flip, placeholder and encoder are kept for the serving layer; the
 * capture itself ignores them, and std, dv_timings and control lines (set
 * through v4l2src.h and controls.h). */
struct vc_cam_stats {
	uint64_t frames;      /* frames delivered */
	uint64_t dropped;     /* sequence gaps reported by the driver */
	uint64_t errors;      /* error-flagged or invalid buffers discarded */
	uint64_t copies;      /* frames copied because too few buffers stayed queued */
	uint64_t restarts;    /* recoveries after errors/unplug */
	double fps;           /* measured over the last seconds */
};

/* Called on the loop thread for every captured frame; the callee takes its own
 * reference (vc_frame_ref) if it keeps the frame past the call. */
typedef void (*vc_cam_frame_cb)(void *opaque, struct vc_frame *f);
/* Called on state changes and mode changes (new caps or geometry). */
typedef void (*vc_cam_event_cb)(void *opaque, struct vc_cam *cam);

/* cfg is copied (deep): the caller may free it after. */
int vc_cam_new(struct event_base *base, const struct vc_conf_cam *cfg, struct vc_cam **out);
void vc_cam_free(struct vc_cam *cam); /* frames still referenced stay valid until unref'd */

void vc_cam_set_callbacks(struct vc_cam *cam, vc_cam_frame_cb on_frame,
			  vc_cam_event_cb on_event, void *opaque);

/* Consumers: streaming starts with the first acquire and stops idle_stop_ms
 * after the last release; the device is closed then too where idle_close
 * says so, and opened again by the next acquire. */
void vc_cam_acquire(struct vc_cam *cam);
void vc_cam_release(struct vc_cam *cam);

/* Ask for a new mode; applied asynchronously (STREAMOFF/S_FMT/STREAMON) and
 * reported through on_event. Returns 0 or -errno (unsupported). */
int vc_cam_set_mode(struct vc_cam *cam, const struct vc_mode *m);

const char *vc_cam_id(const struct vc_cam *cam);
/* The settings the camera was made with (its own copy, valid while it
 * lives; name and device set, an unset idle_stop_ms and stall_timeout_ms
 * resolved to their defaults). */
const struct vc_conf_cam *vc_cam_get_config(const struct vc_cam *cam);
const char *vc_cam_path(const struct vc_cam *cam);
enum vc_cam_state vc_cam_get_state(const struct vc_cam *cam);
/* 1 while a restart (a reconfiguration, a source change, a stall) waits for
 * the frames it lent: on_event reports the start of it, and consumers then
 * let go of the capture frames they keep (a device cannot be set up again,
 * nor reopened, while its old buffers are out). */
int vc_cam_draining(const struct vc_cam *cam);
const char *vc_cam_state_name(enum vc_cam_state s);
/* Current negotiated mode and geometry (valid when not ABSENT). */
void vc_cam_get_mode(const struct vc_cam *cam, struct vc_mode *m, struct vc_geom *g);
const struct vc_caps *vc_cam_caps(const struct vc_cam *cam);
void vc_cam_get_stats(const struct vc_cam *cam, struct vc_cam_stats *st);

/* ---- additions (capture helper): hotplug, controls, inputs ---- */

/* A device node appeared (hotplug): an ABSENT/ERROR camera retries now with
 * its backoff reset; no-op when the source is open. */
void vc_cam_poke(struct vc_cam *cam);

/* Controls of the current source (struct vc_src_ctrl, server/capture/source.h),
 * synchronous. -ENODEV while no source is open, -ENOTTY when the source has
 * no controls; else what the source answers (ctrl_query with
 * id | V4L2_CTRL_FLAG_NEXT_CTRL enumerates, -EINVAL at the end). */
int vc_cam_ctrl_query(struct vc_cam *cam, uint32_t id, struct vc_src_ctrl *c);
int vc_cam_ctrl_menu(struct vc_cam *cam, uint32_t id, uint32_t index, char name[32]);
int vc_cam_ctrl_get(struct vc_cam *cam, uint32_t id, int64_t *value);
int vc_cam_ctrl_set(struct vc_cam *cam, uint32_t id, int64_t value);

/* Inputs. input_set validates the index (-EINVAL), then switches
 * asynchronously like vc_cam_set_mode (stop, S_INPUT, caps re-read, mode
 * renegotiated, restart; on_event reports it) and keeps the choice across
 * reopens. While no source is open it only records the choice. */
int vc_cam_input_enum(struct vc_cam *cam, uint32_t index, struct vc_src_input *in);
int vc_cam_input_get(struct vc_cam *cam, uint32_t *index);
int vc_cam_input_set(struct vc_cam *cam, uint32_t index);

/* Anything that needs a stopped stream (S_STD, S_DV_TIMINGS through
 * server/capture/v4l2src.h): fn(src, copy of arg) runs on the loop thread once
 * streaming is stopped and lent buffers are back, then caps and format are
 * re-read and streaming resumes. len <= VC_CAM_RECONF_ARG_MAX (-E2BIG);
 * one pending at a time (-EBUSY); -ENODEV when no source is open. */
#define VC_CAM_RECONF_ARG_MAX 256
typedef int (*vc_cam_reconf_fn)(struct vc_src *src, const void *arg);
int vc_cam_reconfigure(struct vc_cam *cam, vc_cam_reconf_fn fn, const void *arg, size_t len);

/* Like vc_cam_reconfigure, for choices a device forgets when it goes away
 * (S_STD, S_DV_TIMINGS: unplug and replug, a driver reload, a reopen after
 * an error): fn(src, arg) runs now as vc_cam_reconfigure does, and again
 * each time the source is opened, after the input is set and before the
 * mode is negotiated. One kept choice per fn: a later call with the same fn
 * replaces its arg. fn itself decides whether the choice still applies
 * (e.g. only to the input it was made for; return 0 to skip). While no
 * source is open it only records the choice (0). -ENOSPC when
 * VC_CAM_KEEP_MAX other fns are kept; else as vc_cam_reconfigure (the
 * choice is not kept when that fails). */
#define VC_CAM_KEEP_MAX 4
int vc_cam_reconfigure_keep(struct vc_cam *cam, vc_cam_reconf_fn fn, const void *arg,
			    size_t len);

/* The open source for read-only queries of source-specific extras
 * (vc_v4l2_info, ..._enum/_get); NULL while none is open. Valid until control
 * returns to the loop. */
struct vc_src *vc_cam_source(struct vc_cam *cam);
/* The same, opening a camera closed while idle (idle_close) first: for a
 * request that needs the device (signal, inputs); it closes again
 * idle_stop_ms later if no viewer comes. */
struct vc_src *vc_cam_source_wake(struct vc_cam *cam);
/* QUERYCAP (card, driver, bus) of the camera's last open V4L2 device: kept
 * while it is closed when idle; -ENODEV when none was ever open. */
struct vc_v4l2_info;
int vc_cam_info(const struct vc_cam *cam, struct vc_v4l2_info *out);
/* 1 while the camera is closed because it is idle (idle_close). */
int vc_cam_closed_idle(const struct vc_cam *cam);

#endif
