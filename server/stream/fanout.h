/* The fan-out core's public part (server/README.md, "Layers"): what the
 * API and the daemon ask of it beside HTTP: budget, hardware encoders,
 * policy state, and the plan a request would get. No HTTP type here: the
 * core (hub, policy, budget, outputs, hwenc, h264_out, placeholder)
 * includes this, never server/stream/stream.h. Loop thread only. */
#ifndef VC_STREAM_FANOUT_H
#define VC_STREAM_FANOUT_H

#include <stddef.h>
#include <stdint.h>

#include "common/negotiate.h"
#include "server/capture/capture.h"

struct vc_streams;

/* Memory budget (issue 14; budget.h): 0 fields take the defaults (8
 * outputs per camera, 64 MiB of output frames, the camera's largest native
 * mode). Applies to requests that follow (config reload). */
struct vc_stream_budget {
	unsigned max_outputs;
	unsigned max_outputs_per_ip; /* new outputs one address may make per camera */
	size_t frame_bytes;
	uint32_t max_width, max_height;
	unsigned hold_s;      /* client_hold: s a stream client may hold one part (hold.c,
			       * issue 22; 0: 5 s) */
};

/* Hardware JPEG encoders (server/stream/hwenc.c). l: the M2M devices the
 * camera set found (NULL = none; it must outlive the streams, its contents
 * may change on hotplug); io: the device I/O (NULL = the real devices; tests
 * pass a fake). An output that only encodes (same size, no conversion) uses
 * the encoder its camera's `encoder` setting picks, falling back to the CPU
 * when the device fails. */
struct vc_m2m_list;
struct vc_m2m_enc_io;
void vc_streams_set_m2m(struct vc_streams *s, const struct vc_m2m_list *l,
			const struct vc_m2m_enc_io *io);

struct vc_hwenc_stats {
	uint64_t frames;    /* coded frames (JPEG, H.264) the hardware encoders delivered */
	uint64_t copies;    /* frames copied into an encoder's buffer (0 with DMABUF) */
	uint64_t fallbacks; /* times a failed encoder sent an output back to the CPU */
	uint64_t sessions;  /* encoder sessions opened */
	int dmabuf;         /* the last frame submitted went by DMABUF */
};
void vc_streams_hwenc_stats(const struct vc_streams *s, struct vc_hwenc_stats *st);
/* The device an output of camera i encodes with now, or NULL (CPU). */
const char *vc_streams_hwenc_active(const struct vc_streams *s, size_t cam);

/* The device-mode policy of camera i (/api/status): why the mode is what it
 * is, and for whom (server/stream/policy.c). */
struct vc_policy_info {
	const char *why;          /* "default", "streams", "kept", "oneshot" */
	unsigned streams;         /* stream requests the mode was chosen for */
	unsigned oneshots;        /* one-shot requests then waiting or polling */
	uint64_t switches;        /* modes asked of the camera */
	double since_switch_s;    /* -1: never switched */
	int rechoice_pending;     /* chosen again soon (a client left, or a hold) */
	struct vc_mode def;       /* the camera's default mode (0 when unknown) */
	char last[160];           /* the last switch, as logged ("" = none) */
};
/* 0, or -ENOENT for no camera i. */
int vc_streams_policy(const struct vc_streams *s, size_t cam, struct vc_policy_info *pi);
/* Calls cb for each request of camera i's users as the mode choice sees it
 * (sizes resolved): kind "stream", "raw", "oneshot" (waiting) or "poller"
 * (a one-shot picture polled within the last 75 s, server/stream/poller.h). */
typedef void (*vc_policy_req_cb)(void *opaque, const char *kind, const struct vc_request *req);
void vc_streams_policy_requests(const struct vc_streams *s, size_t cam, vc_policy_req_cb cb,
				void *opaque);

/* The plan a request would get now, and the device mode it would lead to
 * (unit tests; /api/try asks vc_streams_answer): as a stream client's (oneshot 0) or a snapshot's / raw
 * frame's (oneshot 1: it does not switch the mode while a stream is
 * watched). What the request leaves open is resolved against the camera's
 * default first, as when it arrives. 0, -EINVAL (unservable), -ENODEV
 * (camera absent), -ENOMEM. */
int vc_streams_try(const struct vc_streams *s, struct vc_cam *cam, const struct vc_request *req,
		   int oneshot, struct vc_plan *plan, struct vc_mode *mode);

#endif
