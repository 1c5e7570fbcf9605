/* The fan-out: per camera, one "output" per distinct delivered picture
 * (vc_output_equal), producing each frame once (passthrough shares the
 * capture frame itself; otherwise one convert/encode for every client of the
 * output); streaming clients and snapshot requests hang off an output and
 * only ever see its latest frame. A slow client skips frames (counted), never
 * queues them, never stalls capture or other clients. The device mode is
 * chosen by vc_negotiate_mode over every active request.
 * Loop thread only. */
#ifndef VC_STREAM_H
#define VC_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/negotiate.h"
#include "common/params.h"
#include "server/capture/capture.h"
#include "server/http/http.h"
#include "server/stream/fanout.h"

struct event_base;
struct vc_streams;

/* cams[0..n) stay owned by the caller and must outlive the streams. */
int vc_streams_new(struct event_base *base, struct vc_http *http, struct vc_cam *const *cams,
		   size_t n, struct vc_streams **out);
/* Cameras come and go at run time (config reload, hotplug); the caller
 * keeps owning each camera, which must live until it is removed or the
 * streams are freed.
 * add: serves cam after the others. 0 or -ENOMEM.
 * remove: the camera is no longer listed or found; its streams end after
 * the part being sent, its waiting snapshots answer 503; the caller may
 * vc_cam_free it on return. -ENOENT when not served.
 * replace: cam takes old's place (same position, clients stay connected and
 * get cam's frames once it streams, re-planned for its modes); old may be
 * freed on return. -ENOENT when old is not served. */
int vc_streams_add_cam(struct vc_streams *s, struct vc_cam *cam);
int vc_streams_remove_cam(struct vc_streams *s, struct vc_cam *cam);
int vc_streams_replace_cam(struct vc_streams *s, struct vc_cam *old, struct vc_cam *cam);

void vc_streams_set_budget(struct vc_streams *s, const struct vc_stream_budget *b);

/* After vc_http_free (which ends every connection). */
void vc_streams_free(struct vc_streams *s);

/* Ends every stream and wakes every waiting snapshot (they answer 503), so
 * that the HTTP server can stop with nothing suspended. */
void vc_streams_shutdown(struct vc_streams *s);

/* Registers GET /stream, /snapshot, /raw, /raw/stream, /stream.h264 and
 * /stream.mp4 on http (class view). */
int vc_streams_routes(struct vc_streams *s, struct vc_http *http);

size_t vc_streams_n_cams(const struct vc_streams *s);
struct vc_cam *vc_streams_cam(const struct vc_streams *s, size_t i);
/* Camera by id ("0", "front"); NULL id or "" = the first. NULL when unknown. */
struct vc_cam *vc_streams_find(const struct vc_streams *s, const char *id);

/* Statistics for the API and /metrics. */
struct vc_output_info {
	struct vc_output out;
	struct vc_plan plan;
	unsigned clients;       /* streaming clients */
	uint64_t produced;      /* frames produced */
	uint64_t busy_drops;    /* capture frames not processed: the previous one was still busy */
	double process_ms;      /* average convert/encode time per frame (0 for passthrough) */
	double fps;             /* produced frames per second, recent */
	const char *encoder;    /* hardware encoder device, NULL = CPU (or no encode) */
	int64_t mp4_t0_real_us; /* H.264: wall-clock time of MP4 time 0 (0 = none) */
};

struct vc_client_info {
	char peer[64];
	int raw;                /* raw stream (else MJPEG multipart) */
	int h264;               /* 1 H.264 Annex-B, 2 MP4, 3 HLS (then raw says nothing) */
	struct vc_output out;
	uint64_t frames, skipped, bytes;
	double fps;             /* sent frames per second, recent */
	uint32_t fps_limit;     /* 0 = none */
};

typedef void (*vc_output_info_cb)(void *opaque, const struct vc_output_info *oi);
typedef void (*vc_client_info_cb)(void *opaque, const struct vc_client_info *ci);

/* Calls cb for each output / client of camera i. */
void vc_streams_outputs(const struct vc_streams *s, size_t cam, vc_output_info_cb cb, void *opaque);
void vc_streams_clients(const struct vc_streams *s, size_t cam, vc_client_info_cb cb, void *opaque);

/* The request parameters of an HTTP request (common/params.h: cam, format,
 * width, height, size, fps, quality, rotate, flip, max_age_ms; unknown ones
 * ignored) for an endpoint: raw 0 = JPEG (/stream, /snapshot; req.fourcc =
 * MJPEG), 1 = raw pixels (/raw...; default: the device's raw format, else
 * YUYV), 2 = H.264 (/stream.h264, /stream.mp4; req.fourcc =
 * V4L2_PIX_FMT_H264, also what format=h264 gives on /stream and /api/try,
 * refused on the raw endpoints), -1 = decided by the format (/api/try;
 * JPEG when none). Serving rules
 * on top of the parser: the format must be of the endpoint's family, and a
 * quality outside 1..100, fps=0 or a rotation not a multiple of 90 are
 * refused. 0, -EINVAL with a message in err, or -ENOENT for an unknown cam. */
int vc_streams_parse(const struct vc_streams *s, const struct vc_http_req *r, int raw,
		     struct vc_params *p, struct vc_cam **cam, char *err, size_t errlen);
/* The same for a query string q (without '?'; NULL = none) from another
 * protocol (RTSP): no HTTP request behind it. */
int vc_streams_parse_query(const struct vc_streams *s, const char *q, int raw,
			   struct vc_params *p, struct vc_cam **cam, char *err, size_t errlen);
/* The same, answering a failure itself (404 unknown cam, 400 bad value):
 * 0, or -1 with *res what the handler returns. */
int vc_streams_request(const struct vc_streams *s, struct vc_http_req *r, int raw,
		       struct vc_params *p, struct vc_cam **cam, enum MHD_Result *res);

/* The endpoint a request is for (/api/try's endpoint=). */
enum vc_endpoint {
	VC_EP_ANY = 0, /* /api/try without one: the format decides (JPEG when none) */
	VC_EP_STREAM,
	VC_EP_SNAPSHOT,
	VC_EP_RAW,
	VC_EP_RAW_STREAM,
	VC_EP_H264,
	VC_EP_MP4,
};

/* What serving a request answers now (issue 21: one decision per request):
 * the endpoint handlers serve it, /api/try reports it and stops there. */
struct vc_streams_answer {
	unsigned status;     /* 200, else the HTTP status it is refused with */
	char err[256];       /* why, when refused */
	struct vc_cam *cam;  /* NULL: unknown (404) or unparsable */
	struct vc_params p;  /* the parameters, resolved against the camera */
	int placeholder;     /* camera absent: the placeholder picture is served */
	struct vc_mode mode; /* the device mode it leads to (200, no placeholder) */
	struct vc_plan plan; /* what is delivered (200) */
	/* for the serving path */
	int dflt;            /* the camera's default picture: never refused by the budget */
	int over_budget;     /* refused by the budget (429/503) */
	int served;          /* a one-shot the running mode already gives its picture */
};
/* The answer to request r on endpoint ep; commits nothing (may free
 * outputs nobody uses to make room, as admission does). */
void vc_streams_answer(struct vc_streams *s, const struct vc_http_req *r, enum vc_endpoint ep,
		       struct vc_streams_answer *a);

#endif
