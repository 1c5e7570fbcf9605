/* Private to server/stream/: the serving layer on top of the fan-out core
 * (stream_int.h): client.c (stream clients and sending), snapshot.c
 * (one-shot requests), hold.c (clients holding parts too long),
 * stream_decide.c (one decision per request) and stream.c (the public
 * vc_streams_* calls, routes). It speaks HTTP (libmicrohttpd); the core
 * below it does not. Calls run down only: these files call the core, the
 * core calls them back only through a stream_wake. */
#ifndef VC_STREAM_SERVE_INT_H
#define VC_STREAM_SERVE_INT_H

#include "server/http/http.h"
#include "server/stream/stream.h"
#include "server/stream/stream_int.h"

/* What client.c's send path asks of the HTTP layer: calls through a table,
 * so a unit test drives it on a socketpair without libmicrohttpd.
 * vc_streams_new sets client_http_mhd. */
struct client_http_ops {
	void (*suspend)(struct MHD_Connection *conn);
	void (*resume)(struct MHD_Connection *conn);
	void (*wake)(struct vc_http *http);      /* MHD runs the resumed connections */
	unsigned (*timeout_s)(const struct vc_http *http); /* client_timeout */
};

/* ---- client.c ---- */

/* Starts a /stream (raw 0), /raw/stream (raw 1), /stream.h264 (raw 2) or
 * /stream.mp4 (raw 3) response; /stream?format=h264 is served as
 * /stream.h264. */
enum MHD_Result client_start(struct vc_streams *s, struct vc_http_req *r, int raw);
extern const struct client_http_ops client_http_mhd;
/* An H.264 client of o with no connection (struct client_sink): joins like
 * /stream.h264 (from an IDR) and counts as a stream for the mode, budget
 * and /api/status. peer: text for logs/status; addr its address (NULL:
 * unknown). NULL on ENOMEM. Ended by client_end, freed by client_free. */
struct client *client_sink_new(struct output *o, const struct vc_request *req,
			       const struct client_sink *sink, void *opaque, const char *peer,
			       const struct sockaddr *addr, int dflt);
/* The MHD content reader and free callback of a stream response
 * (client_start); unit tests call them as MHD would. */
ssize_t client_read(void *cls, uint64_t pos, char *buf, size_t max);
void client_free(void *cls);
/* o (c's output) has a new latest frame: c takes it when due. */
void client_wake(struct client *c, int64_t now);
/* c's stream ends after the part being sent. */
void client_end(struct client *c);
/* c's stream_wake callback (opaque: c): DATA wakes it, any end ends it. */
void client_on_event(void *opaque, enum stream_ev ev, int64_t now);
/* Ends c's stream at once, mid-part (hold.c: too slow to keep a part):
 * drops what it holds; a plain socket is reset on close, so the kernel
 * frees the pages it still queues. MHD frees c afterwards. */
void client_drop(struct client *c);
/* The bytes of frame f as sent, in up to 3 pieces (dht: see
 * output.latest_dht). Returns the count; *len = their total. */
unsigned client_frame_pieces(const struct vc_frame *f, size_t dht, struct iovec pc[3],
			     size_t *len);

/* ---- hold.c ---- */

/* Why hold.c dropped a client (vc_streams.hold_drops). */
enum { HOLD_AGE, HOLD_MEM };
/* While the fan-out holds more than frame_memory: drops the clients holding
 * the oldest parts their outputs no longer publish (taken 1 s ago or more)
 * until it is back under or none is left. After a new part was made. */
void hold_check(struct vc_streams *s);
/* The gc tick: drops the clients that have held their part longer than
 * client_hold, runs hold_check, logs the drops of the last second. */
void hold_tick(struct vc_streams *s);

/* ---- snapshot.c ---- */

/* /snapshot (raw 0) and /raw (raw 1): called again after resume. */
enum MHD_Result snapshot_serve(struct vc_streams *s, struct vc_http_req *r, int raw);
/* o (w's output) has a new latest frame: w takes a reference and resumes. */
void snapshot_wake(struct waiter *w);
/* w's stream_wake callback (opaque: w): DATA wakes it with the frame, an
 * end resumes it without one (503). */
void snapshot_on_event(void *opaque, enum stream_ev ev, int64_t now);
/* At w's timeout (SNAPSHOT_TIMEOUT_MS without a frame): whether it waits on
 * for a frame its output is converting or encoding (SNAPSHOT_WORK_MS). */
int snapshot_keep_waiting(const struct waiter *w, int64_t now);

/* ---- stream.c ---- */

void stream_raw_headers(struct MHD_Response *resp, const struct vc_output *o,
			const struct vc_frame *f);
void stream_plan_headers(struct MHD_Response *resp, const struct vc_plan *p);
/* Whether parameters p on endpoint raw (0 /stream, /snapshot; 1 raw; 2
 * H.264) ask for nothing but the camera's default picture: the budget
 * always admits those. */
int stream_default_picture(int raw, const struct vc_params *p);
/* The output serving the parameters of r (parsed, what they leave open
 * filled from the camera's default (policy_resolve), camera present, mode
 * updated for a request of `kind`): NULL with *res the answer (404, 400,
 * 503) when there is none. An absent camera's /stream or /raw/stream gets
 * a provisional output and placeholders; a /snapshot with placeholder=1 is
 * answered here with the picture. */
/* The decision for request r on endpoint raw (0 JPEG, 1 raw, 2 H.264, -1
 * the format's) as a request of `kind` (vc_streams_answer): parsed,
 * resolved against the camera's default, placeholder or device mode and
 * plan, admitted under the budget. Nothing is committed. */
void stream_decide(struct vc_streams *s, const struct vc_http_req *r, int raw,
		   enum hub_kind kind, struct vc_streams_answer *a);
/* The same past the parsing: a->cam and a->p (as vc_streams_parse left
 * them) are set, the rest is decided; peer: the client's address (NULL:
 * unknown). Unit tests drive requests through it without HTTP. */
void stream_decide_parsed(struct vc_streams *s, int raw, enum hub_kind kind,
			  const struct sockaddr *peer, struct vc_streams_answer *a);
/* Commits a served decision a (200, no placeholder) on a->cam's hub h:
 * a one-shot counts as a poller, the mode is updated, the output found or
 * made. NULL when none (ENOMEM, or the mode the hub then runs cannot
 * serve it). */
struct output *stream_take_output(struct hub *h, const struct vc_streams_answer *a,
				  enum hub_kind kind, const struct sockaddr *peer);
struct output *stream_request_output(struct vc_streams *s, struct vc_http_req *r, int raw,
				     enum hub_kind kind, struct vc_params *p,
				     enum MHD_Result *res);

#endif
