/* Stream clients (/stream, /raw/stream) and sending them parts. On plain
 * HTTP, MHD sends the response headers, then the connection stays
 * suspended and direct_pump sends the output's shared part (stream_part.c)
 * on the socket; over TLS the content reader (client_read) copies the part
 * into MHD's buffer and the connection is resumed per frame.
 *
 * Who owns a frame, in the order it travels (refcounts are atomic; the
 * lists and every field here belong to the event-loop thread):
 * - capture lends a frame to hub_on_frame for the call only. output_frame
 *   either publishes it (passthrough: one ref for the output) or gives it to
 *   a job (output_submit: the job holds one ref on its source; one newest
 *   frame may wait in o->pending with one ref, replaced by a newer one).
 *   job_done drops the source's ref and moves the result's ref to the output.
 * - output_publish: o->latest holds one ref on the newest frame; the old
 *   latest and its parts (o->part[], one ref each, made on first need by
 *   output_part) are dropped.
 * - client_take, below, is the one place a stream client gets a frame:
 *   plain HTTP takes a ref on the output's shared part (c->part), TLS a ref
 *   on the frame itself (c->cur), except MP4, whose bytes exist only as
 *   parts: its TLS clients take the part too and copy from it. A client
 *   holds one at most: it takes the next only when the whole part is sent,
 *   and then the newest (frames in between are skipped). The client drops
 *   its ref when the part is sent (direct_pump, client_read), when hold.c
 *   drops a client too slow to keep it (client_drop), or when MHD frees the
 *   response (client_free, the response's free callback; once MHD owns a
 *   response, only that callback frees the client).
 * - snapshot.c: snapshot_wake gives a waiting request one ref on latest,
 *   dropped by waiter_free; send_frame gives the MHD response one ref,
 *   dropped by the response's free callback. */
#define LOG_PREFIX "stream:"
#include "server/stream/serve_int.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "common/jpeg.h"
#include "common/log.h"
#include "common/memstat.h"

void client_free(void *cls)
{
	struct client *c = cls;

	log_debug("client %s: stream ended after %" PRIu64 " frames, %" PRIu64 " skipped",
		  c->peer, c->frames, c->skipped);
	DLIST_UNLINK(c->out->clients, c);
	c->out->n_clients--;
	output_unused(c->out);
	if (c->wev)
		event_free(c->wev);
	vc_part_unref(c->part);
	vc_frame_unref(c->cur);
	free(c);
}

/* The bytes of frame f as sent, in up to 3 pieces: a JPEG (with the
 * standard Huffman tables inserted at offset dht when nonzero) or the raw
 * memory planes. Returns the count; *len = their total. */
unsigned client_frame_pieces(const struct vc_frame *f, size_t dht, struct iovec pc[3],
			     size_t *len)
{
	unsigned n = 0;

	if (f->fmt->layout == VC_LAYOUT_COMPRESSED && dht && dht < f->bytesused[0]) {
		pc[n++] = (struct iovec){ (void *)f->mem[0], dht };
		pc[n++] = (struct iovec){ (void *)vc_jpeg_std_dht(), VC_JPEG_DHT_BYTES };
		pc[n++] = (struct iovec){ (void *)f->mem[0] + dht, f->bytesused[0] - dht };
	} else if (f->fmt->layout == VC_LAYOUT_COMPRESSED) {
		pc[n++] = (struct iovec){ (void *)f->mem[0], f->bytesused[0] };
	} else {
		for (int i = 0; i < f->geom.mem_planes && i < 3; i++)
			pc[n++] = (struct iovec){ (void *)f->mem[i], f->geom.mem_size[i] };
	}
	*len = 0;
	for (unsigned i = 0; i < n; i++)
		*len += pc[i].iov_len;
	return n;
}

/* The pieces of one stream part of frame f: the frame's bytes, and for
 * MJPEG streams the multipart header (formatted into hdr; a placeholder
 * picture says so in X-Placeholder) before them and a CRLF after. Returns
 * the count; *len = their total. */
static unsigned part_pieces(const struct vc_frame *f, size_t dht, int raw, int placeholder,
			    char hdr[256], struct iovec pc[5], size_t *len)
{
	static const char crlf[] = "\r\n";
	struct iovec fp[3];
	size_t flen;
	unsigned nf = client_frame_pieces(f, dht, fp, &flen), n = 0;

	*len = 0;
	if (!raw) {
		int k = snprintf(hdr, 256,
				 "--" BOUNDARY "\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
				 "X-Timestamp: %" PRId64 ".%06" PRId64 "\r\nX-Frame-Seq: %" PRIu64
				 "\r\n%s\r\n",
				 flen, f->ts_real_us / 1000000, f->ts_real_us % 1000000, f->seq,
				 placeholder ? "X-Placeholder: camera away\r\n" : "");
		pc[n++] = (struct iovec){ hdr, (size_t)k };
	}
	for (unsigned i = 0; i < nf; i++)
		pc[n++] = fp[i];
	if (!raw)
		pc[n++] = (struct iovec){ (void *)crlf, 2 };
	for (unsigned i = 0; i < n; i++)
		*len += pc[i].iov_len;
	return n;
}

/* Bookkeeping when c starts sending output frame n. */
static void part_begin(struct client *c, uint64_t n, int64_t now)
{
	if (c->sent_n && n > c->sent_n + 1)
		c->skipped += n - c->sent_n - 1;
	c->sent_n = n;
	if (c->fps_limit) {
		/* the limit as a rate, not a fixed grid: next_due_us is when the
		 * next part is due at exactly fps_limit; one taken late moves it
		 * later, one taken early (see early_for_limit) moves it on by a
		 * whole period, so the long-run rate never exceeds the limit */
		int64_t ival = 1000000 / c->fps_limit;

		c->next_due_us = (c->next_due_us > now ? c->next_due_us : now) + ival;
	}
}

/* Whether c's fps limit holds its next part back at now. A part may start
 * up to half a period early: frames jitter (capture, the event loop), and a
 * source at exactly the limit must not lose every other frame to it. */
static int early_for_limit(const struct client *c, int64_t now)
{
	return c->fps_limit && now < c->next_due_us - 1000000 / c->fps_limit / 2;
}

/* Bookkeeping when c has sent a whole part. */
static void part_end(struct client *c)
{
	int64_t now = now_us();

	c->frames++;
	if (c->last_us && now > c->last_us) {
		double inst = 1e6 / (double)(now - c->last_us);
		c->fps = c->fps ? c->fps * 0.9 + inst * 0.1 : inst;
	}
	c->last_us = now;
}

/* Whether c should start a part of o's latest frame now. */
static int part_due(const struct client *c, const struct output *o, int64_t now)
{
	return o->latest && o->latest_n != c->sent_n && !early_for_limit(c, now) &&
	       (!c->h264 || h264_out_may_take(c, o));
}

/* ---- plain HTTP: parts sent on the socket ---- */

/* The output's latest frame as a part of the given kind, made once for all
 * its clients. NULL on ENOMEM. */
static struct vc_part *output_part(struct output *o, int raw)
{
	if (!o->part[raw]) {
		char hdr[256];
		struct iovec iov[5];
		size_t len;
		unsigned n = part_pieces(o->latest, o->latest_dht, raw, o->placeholder, hdr, iov, &len);

		o->part[raw] = vc_part_new(iov, n);
	}
	return o->part[raw];
}

/* The hand-over: c starts sending its output's latest frame (number
 * latest_n), taking one reference, on the output's shared part (plain HTTP
 * and MP4: c->part) or on the frame (TLS: c->cur, its pieces in c->pc). c holds
 * nothing before: its previous part is sent. -ENOMEM when the part cannot
 * be made (c holds nothing then). */
static int client_take(struct client *c, int64_t now)
{
	struct output *o = c->out;
	uint64_t n = o->latest_n;
	size_t parts = vc_mem_held(VC_MEM_PARTS);
	/* H.264 passthrough, just joined: a kept frame before latest */
	struct vc_frame *kept = c->h264 ? h264_out_kept(c, o, &n) : NULL;

	if (c->sock >= 0 || c->h264 == H264_MP4) {
		/* MP4 over TLS too: its bytes exist as parts only (client_read
		 * copies from the part) */
		if (c->h264 == H264_MP4) {
			c->part = h264_out_mp4_part(o, c, kept, n);
		} else if (kept) { /* a part of its own: joiners are few */
			struct iovec iov = { (void *)kept->mem[0], kept->bytesused[0] };

			c->part = vc_part_new(&iov, 1);
		} else {
			c->part = vc_part_ref(output_part(o, c->raw));
		}
		if (!c->part)
			return -ENOMEM;
		c->part_off = 0;
	} else {
		struct vc_frame *f = kept ? kept : o->latest;

		c->cur = vc_frame_ref(f);
		c->off = 0;
		c->n_pc = part_pieces(f, kept ? 0 : o->latest_dht, c->raw, !kept && o->placeholder,
				      c->hdr, c->pc, &c->part_len);
	}
	part_begin(c, n, now);
	c->part_us = now;
	c->need_key = 0; /* H.264: it has this frame's references (h264_out_may_take) */
	if (!kept)
		c->catchup = 0; /* live from now */
	if (vc_mem_held(VC_MEM_PARTS) > parts)
		hold_check(c->s); /* a new part: within frame_memory? */
	return 0;
}

/* Hands c back to MHD, which ends the response (and closes: the body is
 * delimited by the close) once the reader says so. */
static void direct_end(struct client *c)
{
	c->ending = 1;
	if (c->wev) /* none yet when the stream ends before its headers went out */
		event_del(c->wev);
	if (c->suspended) {
		c->suspended = 0;
		c->s->http_ops->resume(c->conn);
		c->s->http_ops->wake(c->s->http);
	}
}

/* Waits for c's full socket to drain, at most the client timeout. */
static void direct_wait(struct client *c)
{
	struct timeval tv = { (time_t)c->s->http_ops->timeout_s(c->s->http), 0 };

	if (ioctl(c->sock, SIOCOUTQ, &c->outq) < 0)
		c->outq = -1;
	event_add(c->wev, &tv);
}

/* Sends parts to c's socket until the socket is full (then waits for it to
 * drain) or c has the newest frame (then wake_clients calls again). */
static void direct_pump(struct client *c)
{
	for (;;) {
		struct output *o = c->out;

		if (!c->part) {
			int64_t now = now_us();

			if (c->ending || c->s->stopping) {
				direct_end(c);
				return;
			}
			if (!part_due(c, o, now))
				return;
			if (client_take(c, now) < 0) {
				log_warn_lim("client out of memory", c->peer,
					     "client %s: out of memory, dropped", c->peer);
				direct_end(c);
				return;
			}
		}
		ssize_t k = vc_part_send(c->part, c->sock, c->part_off);
		if (k == -EAGAIN) {
			direct_wait(c);
			return;
		}
		if (k < 0) {
			log_debug("client %s: %s", c->peer, strerror((int)-k));
			direct_end(c);
			return;
		}
		c->bytes += (uint64_t)k;
		c->part_off += (size_t)k;
		if (c->part_off == c->part->len) {
			vc_part_unref(c->part);
			c->part = NULL;
			c->part_us = 0;
			part_end(c);
		}
	}
}

static void on_sock_writable(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		int outq, was = c->outq;

		/* writable needs a good part of the buffer free: a slow reader
		 * that still acknowledges data is waited for, not dropped */
		if (was > 0 && ioctl(c->sock, SIOCOUTQ, &outq) == 0 && outq < was) {
			direct_wait(c);
			return;
		}
		log_info_lim("stalled client dropped", c->peer,
			     "client %s: took nothing for %u s, dropped", c->peer,
			     c->s->http_ops->timeout_s(c->s->http));
		direct_end(c);
		return;
	}
	direct_pump(c);
}

/* MHD calls the reader once the response headers are sent: from then on a
 * plain-HTTP client's parts go to the socket from direct_pump, with the
 * connection suspended so MHD leaves the socket alone. */
static ssize_t direct_read(struct client *c)
{
	if (c->ending || c->s->stopping)
		return MHD_CONTENT_READER_END_OF_STREAM; /* the close ends the body: no error to log */
	if (!c->wev) {
		int one = 1;

		c->wev = event_new(c->s->base, c->sock, EV_WRITE, on_sock_writable, c);
		if (!c->wev)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		/* whole parts go out in one send each: push them at once (MHD
		 * may have left the socket corked after the headers) */
		setsockopt(c->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c->suspended = 1;
	c->s->http_ops->suspend(c->conn);
	event_active(c->wev, EV_WRITE, 0); /* first send from the loop, not inside MHD */
	return 0;
}

/* ---- TLS: MHD's content reader copies parts ---- */

/* Copies part bytes [off, off + max) into buf. */
static size_t copy_part(struct client *c, char *buf, size_t max)
{
	size_t done = 0, base = 0;

	for (unsigned i = 0; i < c->n_pc && done < max; i++) {
		size_t sz = c->pc[i].iov_len;

		if (c->off < base + sz) {
			size_t k = base + sz - c->off;

			if (k > max - done)
				k = max - done;
			memcpy(buf + done, (const uint8_t *)c->pc[i].iov_base + (c->off - base), k);
			done += k;
			c->off += k;
		}
		base += sz;
	}
	return done;
}

ssize_t client_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct client *c = cls;
	struct output *o = c->out;

	(void)pos;
	/* ended mid-part: an error would make MHD log each drop (hold.c logs
	 * them coalesced); plain HTTP is reset anyway */
	if (c->dropped)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (c->sock >= 0)
		return direct_read(c);
	if (!c->cur && !c->part) {
		int64_t now = now_us();

		if (c->ending || c->s->stopping)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!part_due(c, o, now)) {
			/* nothing new: sleep until output_frame() wakes us */
			c->suspended = 1;
			c->s->http_ops->suspend(c->conn);
			return 0;
		}
		if (client_take(c, now) < 0) { /* only an MP4 part can fail */
			log_warn_lim("client out of memory", c->peer,
				     "client %s: out of memory, dropped", c->peer);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
	if (c->part) { /* MP4: the shared fragment (and init segment) */
		size_t n = vc_part_copy(c->part, c->part_off, buf, max);

		if (!n)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		c->bytes += n;
		c->part_off += n;
		if (c->part_off == c->part->len) {
			vc_part_unref(c->part);
			c->part = NULL;
			c->part_us = 0;
			part_end(c);
		}
		return (ssize_t)n;
	}
	size_t n = copy_part(c, buf, max);
	c->bytes += n;
	if (c->off >= c->part_len) {
		vc_frame_unref(c->cur);
		c->cur = NULL;
		c->part_us = 0;
		part_end(c);
	}
	return (ssize_t)n;
}

const struct client_http_ops client_http_mhd = {
	MHD_suspend_connection, MHD_resume_connection, vc_http_wake, vc_http_timeout_s,
};

/* A sink client takes every frame it may, at once (it never blocks). */
static void sink_pump(struct client *c, int64_t now)
{
	struct output *o = c->out;

	while (!c->ending && part_due(c, o, now)) {
		uint64_t n = o->latest_n;
		struct vc_frame *kept = h264_out_kept(c, o, &n);
		const struct vc_frame *f = kept ? kept : o->latest;

		part_begin(c, n, now);
		c->need_key = 0;
		if (!kept)
			c->catchup = 0;
		c->sink->frame(c->sink_opaque, f, n);
		c->bytes += f->bytesused[0];
		part_end(c);
	}
}

void client_wake(struct client *c, int64_t now)
{
	if (c->sink) {
		sink_pump(c, now);
		return;
	}
	if (c->sock >= 0) {
		if (c->wev && !c->part) /* idle on its socket (else it takes latest when done) */
			direct_pump(c);
		return;
	}
	if (!c->suspended)
		return;
	if (early_for_limit(c, now))
		return;
	c->suspended = 0;
	c->s->http_ops->resume(c->conn);
}

void client_end(struct client *c)
{
	if (c->sink) {
		if (!c->ending)
			c->sink->ended(c->sink_opaque);
		c->ending = 1;
		return;
	}
	c->ending = 1;
	if (c->sock >= 0) {
		if (!c->part) /* else direct_pump ends it after the part */
			direct_end(c);
	} else if (c->suspended) {
		c->suspended = 0;
		c->s->http_ops->resume(c->conn);
	}
}

void client_on_event(void *opaque, enum stream_ev ev, int64_t now)
{
	struct client *c = opaque;

	if (ev == STREAM_EV_DATA)
		client_wake(c, now);
	else
		client_end(c);
}

void client_drop(struct client *c)
{
	if (c->sink) {
		client_end(c);
		return;
	}
	c->dropped = 1;
	c->part_us = 0;
	vc_part_unref(c->part);
	c->part = NULL;
	vc_frame_unref(c->cur);
	c->cur = NULL;
	if (c->sock >= 0) {
		/* the reset frees the pages queued in the socket at once; a
		 * plain close would leave them to an orphaned socket that
		 * still trickles them out to the slow reader */
		struct linger lg = { 1, 0 };

		setsockopt(c->sock, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		direct_end(c);
	} else {
		client_end(c);
	}
}

/* The response headers of c's stream. */
static void start_headers(struct MHD_Response *resp, const struct client *c,
			  const struct output *o)
{
	if (c->h264)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					c->h264 == H264_MP4 ? "video/mp4" : "video/h264");
	else if (c->raw)
		stream_raw_headers(resp, &o->plan.out, NULL);
	else
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"multipart/x-mixed-replace;boundary=" BOUNDARY);
	if (c->raw && !c->h264)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	stream_plan_headers(resp, &o->plan);
	MHD_add_response_header(resp, "Pragma", "no-cache");
	/* nginx honours this per response: a stream is never held in proxy
	 * buffers even where the site config left proxy_buffering on */
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
}

enum MHD_Result client_start(struct vc_streams *s, struct vc_http_req *r, int raw)
{
	struct vc_params p;
	enum MHD_Result res;
	struct output *o = stream_request_output(s, r, raw > 1 ? 2 : raw,
						 raw == 1 ? HUB_RAW_STREAM : HUB_STREAM, &p, &res);

	if (!o)
		return res;
	int dflt = stream_default_picture(raw > 1 ? 2 : raw, &p); /* before raw changes */
	/* /stream.mp4, /stream.h264, /stream?format=h264 */
	int h264 = raw == 3 ? H264_MP4 : h264_out_is(o) ? H264_ANNEXB : H264_NONE;

	if (h264)
		raw = h264 == H264_MP4 ? 2 : 1; /* the output part it sends */
	struct hub *h = o->hub;
	struct vc_request req = p.req;
	if ((raw || h264) && (!req.width || !req.height)) {
		/* a raw stream has no per-frame header: pin the size it starts
		 * with, so a later mode change (other clients) scales to it
		 * instead of changing the frame size under this client */
		req.width = o->plan.out.width;
		req.height = o->plan.out.height;
		if (!output_users(o))
			o->req = req;
	}

	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		return MHD_NO;
	c->s = s;
	c->out = o;
	c->wake = (struct stream_wake){ client_on_event, c };
	c->conn = r->conn;
	c->raw = raw;
	c->h264 = (uint8_t)h264;
	c->req = req;
	/* this client's own maximum: the output's plan.fps comes from the
	 * request that created the output (maybe another client's). H.264:
	 * the rate is the output's own (h264_out_due), a client never skips */
	c->fps_limit = h264 ? 0 : req.fps;
	c->sent_n = o->latest_n; /* start with the next fresh frame */
	vc_http_peer(r, c->peer, sizeof(c->peer));
	vc_guard_addr_key(vc_http_peer_addr(r), &c->addr);
	c->dflt = dflt;
	c->sock = vc_http_plain_socket(s->http, r->conn);
	if (h264)
		h264_out_join(o, c);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, client_read, c, client_free);
	if (!resp) {
		free(c);
		return MHD_NO;
	}
	/* we write the body ourselves (direct_pump): no chunked framing, the
	 * body ends with the connection (HTTP/1.1 status line, Connection: close) */
	if (c->sock >= 0 && MHD_set_response_options(resp, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT,
						     MHD_RO_END) != MHD_YES)
		c->sock = -1;
	/* linked before queueing: client_free (called when resp dies) unlinks */
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	hub_acquire(h);
	placeholder_kick(h); /* the camera is away: a picture saying so, now */
	start_headers(resp, c, o);
	log_debug("client %s: %s stream on cam %s", c->peer,
		  h264 == H264_MP4 ? "mp4" : h264 ? "h264" : raw ? "raw" : "mjpeg", vc_cam_id(h->cam));
	return vc_http_queue(r, MHD_HTTP_OK, resp);
}

struct client *client_sink_new(struct output *o, const struct vc_request *req,
			       const struct client_sink *sink, void *opaque, const char *peer,
			       const struct sockaddr *addr, int dflt)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = o->hub->s;
	c->out = o;
	c->wake = (struct stream_wake){ client_on_event, c };
	c->sock = -1;
	c->raw = 1;
	c->h264 = H264_ANNEXB;
	c->req = *req;
	c->sent_n = o->latest_n;
	c->sink = sink;
	c->sink_opaque = opaque;
	c->dflt = dflt;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	vc_guard_addr_key(addr, &c->addr);
	h264_out_join(o, c);
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	hub_acquire(o->hub);
	log_debug("client %s: hls reader on cam %s", c->peer,
		  o->hub->cam ? vc_cam_id(o->hub->cam) : "?");
	return c;
}
