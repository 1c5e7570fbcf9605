/* Private to server/stream/: the fan-out core's shared state, read by
 * hub.c (requests -> device mode, camera callbacks, gc), output.c (frames
 * in, one conversion/encode per output, publish, merge/split), policy.c,
 * budget.c, placeholder.c, hwenc.c, h264_out.c, and by the serving layer
 * above them (serve_int.h). No HTTP type: the core tells its consumers
 * what happened through their stream_wake, never by calling them.
 * Functions declared here are prefixed by the file that defines them
 * (hub_, output_, ...), not vc_. */
#ifndef VC_STREAM_INT_H
#define VC_STREAM_INT_H

#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include <event2/event.h>

#include "common/frame.h"
#include "common/negotiate.h"
#include "common/params.h"
#include "common/pipeline.h"
#include "common/guard_addr.h"
#include "server/stream/h264_out.h"
#include "server/stream/fanout.h"
#include "server/stream/policy.h"
#include "server/stream/stream_part.h"

#define BOUNDARY "vcapdframe"
#define SNAPSHOT_TIMEOUT_MS 5000
/* ...unless the camera's frame came and its output is still converting or
 * encoding it: then the one-shot waits for that picture up to this long
 * after its request (snapshot_keep_waiting) */
#define SNAPSHOT_WORK_MS 15000
/* An output left without users is freed after this grace (a reconnecting
 * client finds it, a max_age_ms snapshot its frame); the gc runs every
 * second. Longer kept every size and quality a dashboard ever asked for
 * (issue 13: 86 outputs, +58 MiB a minute). */
#define OUTPUT_LINGER_MS 2000

struct hub;
struct output;
struct sockaddr;
struct vc_http;

/* How the core tells a consumer of an output (a stream client, a waiting
 * one-shot, later an RTSP session) what happened: through the callback the
 * consumer set when it subscribed, never by calling its module, so the
 * core (hub, output, budget, h264_out, ...) depends on no serving layer. */
enum stream_ev {
	STREAM_EV_DATA = 0,     /* the output has a new latest frame */
	STREAM_EV_END_GONE,     /* ended: the camera went, the server stops */
	STREAM_EV_END_BUDGET,   /* ended: its output does not fit the budget */
	STREAM_EV_END_CHANGED,  /* ended: the stream's setup changed (new SPS
				 * for an MP4 client's init segment) */
};
struct stream_wake {
	void (*fn)(void *opaque, enum stream_ev ev, int64_t now_us);
	void *opaque;
};

static inline void stream_notify(const struct stream_wake *w, enum stream_ev ev, int64_t now)
{
	w->fn(w->opaque, ev, now);
}

struct client {
	struct client *next, *prev;
	struct output *out;
	struct vc_streams *s;
	struct stream_wake wake;   /* set by its subscriber (client.c) */
	void *conn;                /* the serving layer's connection (MHD's) */
	int raw, suspended, ending;
	uint8_t h264;              /* enum h264_kind: how it takes an H.264 output */
	uint8_t need_key;          /* H.264: waits for an IDR (joined, or missed a frame) */
	uint8_t catchup;           /* H.264 passthrough: joined, sending the kept GOP
				    * until it reaches latest (h264_out_kept) */
	uint32_t init_gen;         /* MP4: the init segment it has (h264_out.c) */
	struct vc_request req;     /* what this client asked (mode choice) */
	/* plain HTTP: after the response headers, parts go from the output's
	 * shared part straight to the socket (sendfile) while the connection
	 * stays suspended; MHD only ends the response */
	int sock;                  /* -1: TLS, MHD's content reader copies (cur) */
	struct event *wev;         /* sock writable again, or stalled too long */
	struct vc_part *part;      /* part being sent on sock */
	size_t part_off;
	int outq;                  /* unacknowledged bytes in sock when it filled */
	struct vc_frame *cur;      /* TLS: part being copied (one frame at most) */
	char hdr[256];
	struct iovec pc[5];        /* the part: header, frame pieces, trailer */
	unsigned n_pc;
	size_t part_len, off;
	int64_t part_us;           /* when it took the part (TLS: frame) it holds; 0: none
				    * (hold.c bounds how long) */
	int dropped;               /* hold.c dropped it: the stream ends mid-part */
	uint64_t sent_n;           /* output frame number last sent */
	int64_t next_due_us;
	uint32_t fps_limit;
	uint64_t frames, skipped, bytes;
	double fps;
	int64_t last_us;
	char peer[64];
	struct vc_guard_addr addr; /* its address group: per-address share (budget.c) */
	int dflt;                  /* asked for the camera's default picture (never
				    * refused or ended by the budget) */
	/* an in-process reader (HLS, hls.c) instead of a connection: it is
	 * handed each frame it takes (client_wake) and told when its stream
	 * ends; conn NULL, sock -1. Freed by its owner (client_free). */
	const struct client_sink *sink;
	void *sink_opaque;
};

struct client_sink {
	/* f (borrowed) is the frame number n the client takes now */
	void (*frame)(void *opaque, const struct vc_frame *f, uint64_t n);
	void (*ended)(void *opaque); /* client_end/client_drop: stop, free it soon */
};

/* A snapshot/raw request waiting for the next frame of an output. */
struct waiter {
	struct waiter *next, *prev;
	struct output *out;
	struct vc_streams *s;
	struct stream_wake wake;   /* set by its subscriber (snapshot.c) */
	void *conn;                /* the serving layer's connection (MHD's) */
	struct vc_request req;     /* what this request asked (mode choice) */
	struct vc_frame *frame;    /* set when woken with a frame */
	size_t frame_dht;          /* its DHT insertion offset (see output.latest_dht) */
	struct event *timer;
	int64_t since_us;          /* when it came (now_us) */
	int done, timed_out, raw, resumed;
	struct vc_guard_addr addr; /* its address group: per-address share (budget.c) */
	int dflt;                  /* asked for the camera's default picture */
};

struct output {
	struct output *next, *prev;
	struct hub *hub;
	struct vc_request req;
	struct vc_plan plan;
	struct vc_frame *latest;
	size_t latest_dht;         /* camera JPEG without Huffman tables: where the standard
				    * ones go when sending (0 = none needed) */
	uint64_t latest_n;         /* frames produced so far; latest is number latest_n */
	struct vc_part *part[3];   /* latest as a stream part ([1]: raw, [2]: MP4
				    * fragment), made on first need */
	struct h264_out *h264;     /* H.264 outputs: init segment, pacing (h264_out.c) */
	uint64_t busy_drops;
	int busy;                  /* a job of this output is on the worker pool */
	struct vc_pipeline *pipe;  /* executes plan on target frames; used by one job at a time */
	uint64_t pipe_gen;         /* hub generation pipe was made for */
	struct vc_frame *pending;  /* newest capture frame waiting for the job to end */
	double process_ms, fps;
	int64_t last_us, idle_since_us;
	struct client *clients;
	struct waiter *waiters;
	unsigned n_clients, n_waiters;
	int merged;                /* users moved to an equal output; freed once not busy */
	int provisional;           /* made while the camera was absent: plan.out is the
				    * placeholder's picture, no device mode behind it;
				    * re-planned (hub_set_target) when the camera comes */
	int placeholder;           /* latest is a placeholder picture: for stream clients
				    * only, never a snapshot */
	struct hwenc *hw;          /* hardware JPEG encoder session (hwenc.c), or NULL */
	int refused;               /* did not fit the budget when its camera came
				    * back: its clients are ending, it gets no frames */
};

struct hub {
	struct vc_streams *s;
	struct vc_cam *cam;
	struct output *outputs;
	struct vc_mode target;     /* mode the outputs are planned against */
	uint64_t gen;              /* bumped when target changes (stale jobs) */
	int switching;             /* target asked, its frames not seen yet */
	int64_t switch_us;
	int acquired;
	struct hub_policy pol;     /* the device-mode policy's state (policy.c) */
	struct hub *next_dying;    /* removed, waiting for its last user (cam NULL) */
	struct h264_ps *h264_ps;   /* an H.264 camera's last SPS/PPS (h264_out.c) */
	struct vc_frame *ph_frame; /* the last placeholder picture (placeholder.c) */
	int ph_busy;               /* a placeholder job of this hub is on the worker pool */
};

struct vc_streams {
	struct event_base *base;
	struct vc_http *http;
	/* Run by the core after it woke consumers (vc_http_wake: MHD runs the
	 * resumed connections once); set by vc_streams_new, so the core calls
	 * no HTTP function. */
	void (*kick)(struct vc_http *http);
	/* output_publish, for hwenc.c: output.c calls hwenc.c, so hwenc.c
	 * hands its encoded frames back through this pointer (set by
	 * vc_streams_new) rather than calling up into output.c. */
	void (*publish)(struct output *o, struct vc_frame *res, size_t dht, int placeholder);
	const struct client_http_ops *http_ops;
	struct hub **hubs;         /* allocated one by one: outputs and jobs point at them */
	size_t n_hubs, cap_hubs;
	struct hub *dying;         /* removed cameras' hubs with clients or jobs left */
	struct vc_workers *workers;
	int freeing;
	struct event *gc;
	int stopping;
	struct vc_stream_budget budget; /* budget.c */
	size_t budget_trimmed_at;       /* bytes counted at the last trim (budget.c) */
	size_t budget_last_tick;        /* bytes counted at the last gc tick (budget.c) */
	unsigned hold_drops[2];         /* clients hold.c dropped since the last log line, */
	char hold_peer[64];             /* by rule (HOLD_AGE, HOLD_MEM), and the last one */
	struct placeholder *ph;    /* placeholder.c: its timer and JPEG context */
	struct hls *hls;           /* hls.c: the HLS sessions */
	/* hwenc.c: the M2M devices, their I/O (NULL = real), totals, and the
	 * device that failed last (until it works again), left alone until
	 * hw_bad_until_us */
	const struct vc_m2m_list *m2m;
	const struct vc_m2m_enc_io *m2m_io;
	struct vc_hwenc_stats hw;
	char hw_bad[64];
	int64_t hw_bad_until_us;
};

static inline int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline unsigned output_users(const struct output *o)
{
	return o->n_clients + o->n_waiters;
}

/* Doubly linked lists of clients, waiters and outputs (each has next/prev):
 * push at the head, unlink anywhere. Statements only, no hidden control flow. */
#define DLIST_PUSH(head, n)                     \
	do {                                    \
		(n)->prev = NULL;               \
		(n)->next = (head);             \
		if (head)                       \
			(head)->prev = (n);     \
		(head) = (n);                   \
	} while (0)
#define DLIST_UNLINK(head, n)                           \
	do {                                            \
		if ((n)->prev)                          \
			(n)->prev->next = (n)->next;    \
		else                                    \
			(head) = (n)->next;             \
		if ((n)->next)                          \
			(n)->next->prev = (n)->prev;    \
	} while (0)

/* Moves user u (a client or a waiter, on list `list` counted by `count`)
 * from output `from` to output `to`. */
#define USER_MOVE(from, to, list, count, u)        \
	do {                                       \
		DLIST_UNLINK((from)->list, u);     \
		(from)->count--;                   \
		DLIST_PUSH((to)->list, u);         \
		(to)->count++;                     \
		(u)->out = (to);                   \
	} while (0)

/* ---- hub.c ---- */

/* The device mode the policy picks for h's users plus `extra` (NULL: none)
 * arriving as a stream client, rate filled in (policy_pick; /api/try asks
 * through vc_streams_try). 0, -ENODEV (no formats), -ENOMEM. */
int hub_pick_mode(const struct hub *h, const struct vc_request *extra, struct vc_mode *m);
/* Who a request is from: the policy lets streams steer the mode, one-shots
 * only while no stream is watched (policy.c). */
enum hub_kind {
	HUB_NONE = 0,   /* no extra request */
	HUB_ONESHOT,    /* /snapshot, /raw */
	HUB_STREAM,     /* /stream */
	HUB_RAW_STREAM, /* /raw/stream */
};
/* The device mode a request req (resolved) of `kind` leads to and the plan
 * it gets against it: what hub_update_mode then does (*served: a one-shot
 * the target already gives its picture; *m is the target then). 0,
 * -EINVAL (unservable), -ENODEV (no formats), -ENOMEM. */
int hub_decide(const struct hub *h, const struct vc_request *req, enum hub_kind kind,
	       struct vc_mode *m, struct vc_plan *plan, int *served);
/* Same format, size and interval (a plan against one holds for the other). */
int hub_mode_same(const struct vc_mode *a, const struct vc_mode *b);
/* Picks the mode (policy_pick) for h's users plus `extra` (of `kind`) and
 * asks the camera for it when it changes and the policy lets it switch now. */
void hub_update_mode(struct hub *h, const struct vc_request *extra, enum hub_kind kind);
void hub_acquire(struct hub *h);
/* The output for req on h after the mode was updated for it (NULL: none). */
struct output *hub_output_get(struct hub *h, const struct vc_request *req, enum hub_kind kind);
/* hub_output_get for a request already decided (stream_decide: mode m,
 * plan pl against it, served by the target): planned again only when the
 * mode the hub then targets is not m. */
struct output *hub_output_get_planned(struct hub *h, const struct vc_request *req,
				      enum hub_kind kind, const struct vc_mode *m,
				      const struct vc_plan *pl, int served);
/* The gc timer's work: frees the outputs nobody used for a while and the
 * removed cameras' hubs nobody uses any more. */
void hub_gc(struct vc_streams *s);
/* Chooses the mode again for h's users (the policy's timer, through
 * hub_policy.choose). */
void hub_choose(struct hub *h);
void hub_detach(struct hub *h);
void hub_end_users(struct hub *h);
void hub_free(struct hub *h);
struct hub *hub_for(const struct vc_streams *s, const struct vc_cam *cam);
/* vc_cam callbacks (opaque: the hub) */
void hub_on_frame(void *opaque, struct vc_frame *f);
void hub_on_event(void *opaque, struct vc_cam *cam);

/* ---- output.c ---- */

struct output *output_for_plan(struct hub *h, const struct vc_request *req,
			       const struct vc_plan *pl);
/* f is of the hub's target mode; processed for o and published. */
void output_frame(struct output *o, struct vc_frame *f);
void output_drop_frames(struct output *o);
/* Gives back the capture frames it keeps (a restart drains), see output.c. */
void output_give_back(struct output *o);
void output_merge(struct output *to, struct output *from);
void output_split(struct hub *h, struct output *o);
void output_unused(struct output *o);
void output_free(struct output *o);

/* Makes res the output's latest frame (dht: see latest_dht), taking over
 * the caller's reference, and wakes its clients; waiting snapshots too
 * unless placeholder (a placeholder picture is for streams only). */
void output_publish(struct output *o, struct vc_frame *res, size_t dht, int placeholder);

/* ---- placeholder.c ---- */

/* While a camera is absent (or failed and retrying) its stream clients get a
 * placeholder picture about once a second: the camera's id, state and path
 * on a dark ground, one picture per camera at one size (placeholder_size),
 * made on the worker pool, until frames come. */

/* The output for a /stream request on an absent camera: an existing output
 * delivering the placeholder's picture, else the camera's provisional one
 * (req is what the first client asked: it is planned for that when the
 * camera comes, hub.c). NULL on ENOMEM. */
struct output *placeholder_output(struct hub *h, const struct vc_request *req);
/* Sends the last placeholder now to h's stream outputs that have none (a
 * client just came, or the camera just went), makes a fresh one when it is
 * older than a second, and keeps the tick running. */
void placeholder_kick(struct hub *h);
/* A JPEG heap frame (placeholder_size) saying what the camera is doing, for
 * a snapshot that asks for the placeholder: the last one made when it is
 * less than a second old. NULL on ENOMEM. */
struct vc_frame *placeholder_frame(struct vc_streams *s, struct hub *h);
/* The placeholder's size on hub h: the camera's configured size, else its
 * default mode's, else its last mode's, else 640x480 (clamped to 16..4096,
 * even); the same for every request (issue 21). */
void placeholder_size(const struct hub *h, uint32_t *w, uint32_t *hgt);
/* What a placeholder picture is, as a plan: MJPEG at placeholder_size, encoded. */
void placeholder_plan(const struct hub *h, struct vc_plan *pl);
void placeholder_free(struct vc_streams *s);

/* ---- policy.c ---- */

/* The camera's default mode (configured, else negotiate's rule): what a
 * request that leaves things open is resolved against. 0 or -ENODEV. */
int policy_default_mode(const struct hub *h, struct vc_mode *def);
/* req's open size filled from the default mode (vc_negotiate_resolve); its
 * rate stays the client's own. */
void policy_resolve(const struct hub *h, struct vc_request *req);
/* The mode for h's users plus `extra` (of `kind`), why, and how many stream
 * and one-shot requests it was chosen for (ns, no may be NULL). 0,
 * -ENODEV (no formats), -ENOMEM. */
int policy_pick(const struct hub *h, const struct vc_request *extra, enum hub_kind kind,
		struct vc_mode *m, enum vc_mode_why *why, unsigned *ns, unsigned *no);
/* Whether the camera may switch now; else a new choice is scheduled for
 * when the hold ends (0). */
int policy_may_switch(struct hub *h, enum hub_kind kind, enum vc_mode_why why);
/* A switch was asked of the camera: counted, logged once with its reason. */
void policy_switched(struct hub *h, const struct vc_mode *from, const struct vc_mode *to,
		     enum vc_mode_why why, unsigned ns, unsigned no);
/* Around a switch: a camera nobody uses that streams is kept streaming
 * across it (begin, before vc_cam_set_mode) and let go of once a frame of
 * the new mode came or the switch failed (end: done 1 then; 0 on camera
 * events, which let go only of an absent or failed camera). */
void policy_switch_begin(struct hub *h);
void policy_switch_end(struct hub *h, int done);
/* The target mode stands for these requests (for /api/status). */
void policy_chosen(struct hub *h, enum vc_mode_why why, unsigned ns, unsigned no);
/* A user of h left: the mode is chosen again shortly. */
void policy_user_left(struct hub *h);
/* A one-shot request for req (resolved) from peer (NULL: unknown): that
 * poller counts as demand for POLLER_LINGER_MS from now (poller.h); the
 * mode is chosen again when it stops counting. Before hub_output_get. */
void policy_poll(struct hub *h, const struct sockaddr *peer, const struct vc_request *req);
/* Forgets the pollers that stopped counting and chooses again if any did
 * (the lapse timer's job; unit tests call it). */
void policy_pollers_lapse(struct hub *h);
/* Whether h's target mode gives a one-shot request req its size (then it
 * switches nothing). */
int policy_serves(const struct hub *h, const struct vc_request *req);
/* policy_serves, and the plan req gets from the target when it does. */
int policy_serves_plan(const struct hub *h, const struct vc_request *req, struct vc_plan *plan);
/* Whether a one-shot asking req takes a frame of the current mode now: not
 * while the switch to a mode giving its size is held back. */
int policy_oneshot_ready(const struct hub *h, const struct vc_request *req);
/* Whether output o gets the frames now (not while its one-shots wait for
 * a held switch). */
int policy_feeds(const struct hub *h, const struct output *o);
void policy_free(struct hub *h);

#endif
