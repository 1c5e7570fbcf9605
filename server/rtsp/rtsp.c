/* The RTSP server (rtsp.h): connections, requests, sessions, RTP out.
 * One session per connection (what ffmpeg, GStreamer, VLC and NVRs do);
 * the session ends with its connection, on TEARDOWN, or when neither a
 * request nor an RTCP report came for the session timeout. TCP clients
 * get RTP interleaved in the connection's output buffer, bounded: a client
 * behind by more than RTSP_MAX_QUEUE skips to the next IDR. UDP packets go
 * out with MSG_DONTWAIT and are dropped when the socket is full. */
#define LOG_PREFIX "rtsp:"
#include "server/rtsp/rtsp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "common/frame.h"
#include "common/log.h"
#include "common/rtp.h"
#include "common/rtsp.h"
#include "server/http/portowner.h"
#include "server/rtsp/rtsp_auth.h"
#include "server/rtsp/rtsp_source.h"

#define RTSP_MAX_QUEUE (1u << 20)  /* bytes queued for a TCP client before it skips */
#define RTSP_MAX_CONNS 256
#define RTSP_DESCRIBE_WAIT_S 5     /* for the first IDR's parameter sets */
#define RTSP_SR_INTERVAL_US 2000000

struct conn;

struct vc_rtsp {
	struct event_base *base;
	struct vc_streams *s;
	unsigned timeout_s;
	struct evconnlistener *lis[8];
	unsigned n_lis;
	struct conn *conns;
	unsigned n_conns;
	struct rtsp_auth *auth;
};

struct conn {
	struct conn *next, *prev;
	struct vc_rtsp *r;
	struct bufferevent *bev;
	struct sockaddr_storage addr;
	char peer[64];
	char local[64];             /* the address it connected to, for the SDP */
	struct rtsp_source *src;
	char src_key[1200];         /* camera and query the source was opened for */
	struct event *timer;        /* each second: session timeout, sender reports */
	int64_t alive_us;           /* last request or RTCP report */
	/* DESCRIBE waiting for the parameter sets */
	int describe_wait;
	long describe_cseq;
	int64_t describe_until_us;
	char describe_url[1024];
	/* authentication: once per connection (the session's) */
	int authed, auth_wait, auth_denied;
	struct rtsp_auth_job *auth_job;
	/* the session */
	int setup, playing, closing;
	char sid[17];
	int tcp, ch[2];
	int udp[2];                 /* our RTP/RTCP sockets (-1: none) */
	uint16_t udp_port[2];
	struct sockaddr_storage dst[2];
	socklen_t dst_len;
	struct event *rtcp_ev;
	struct vc_rtp rtp;
	uint32_t last_ts;
	int64_t last_real_us, last_sr_us;
	uint64_t drops;
};

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void addr_str(const struct sockaddr *sa, char *out, size_t n, int with_port)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	if (with_port)
		snprintf(out, n, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
	else
		snprintf(out, n, "%s", host);
}

static void conn_free(struct conn *c)
{
	struct vc_rtsp *r = c->r;

	if (c->src) {
		uint64_t frames, skipped;

		rtsp_source_counts(c->src, &frames, &skipped);
		log_debug("%s: session ended after %" PRIu64 " frames, %" PRIu64 " skipped, %" PRIu64
			  " dropped", c->peer, frames, skipped, c->drops);
	}
	rtsp_source_close(c->src);
	rtsp_auth_cancel(c->auth_job);
	if (c->rtcp_ev)
		event_free(c->rtcp_ev);
	for (int i = 0; i < 2; i++)
		if (c->udp[i] >= 0)
			close(c->udp[i]);
	if (c->timer)
		event_free(c->timer);
	if (c->bev)
		bufferevent_free(c->bev);
	if (c->prev)
		c->prev->next = c->next;
	else
		r->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	r->n_conns--;
	free(c);
}

/* Closes c once what it was told is sent. */
static void on_flushed(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_free(arg);
}

static void conn_close_after_write(struct conn *c)
{
	c->closing = 1;
	rtsp_source_close(c->src);
	c->src = NULL;
	bufferevent_disable(c->bev, EV_READ);
	if (!evbuffer_get_length(bufferevent_get_output(c->bev)))
		conn_free(c);
	else
		bufferevent_setcb(c->bev, NULL, on_flushed, NULL, c);
}

/* ---- responses ---- */

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 401: return "Unauthorized";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Request Entity Too Large";
	case 453: return "Not Enough Bandwidth";
	case 454: return "Session Not Found";
	case 455: return "Method Not Valid in This State";
	case 459: return "Aggregate Operation Not Allowed";
	case 461: return "Unsupported Transport";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

/* Status line, CSeq, the extra headers (each ending in CRLF), and body. */
static void reply(struct conn *c, long cseq, int status, const char *headers, const char *body)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	evbuffer_add_printf(out, "RTSP/1.0 %d %s\r\n", status, reason(status));
	if (cseq >= 0)
		evbuffer_add_printf(out, "CSeq: %ld\r\n", cseq);
	evbuffer_add_printf(out, "Server: vcapd\r\n%s", headers ? headers : "");
	if (body)
		evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
	else
		evbuffer_add(out, "\r\n", 2);
}

static void reply_err(struct conn *c, long cseq, int status, const char *why)
{
	if (why && *why)
		log_info_lim("rtsp request refused", c->peer, "%s: %d %s", c->peer, status, why);
	reply(c, cseq, status, NULL, NULL);
}

/* ---- URLs ---- */

/* Splits rtsp://host[:port]/path[?query] into the camera (path without
 * slashes and without the control suffix "trackID=N") and query. */
static int split_url(const char *url, char *cam, size_t camlen, char *query, size_t qlen)
{
	char tmp[1024];
	const char *p = url;

	if (!strncasecmp(p, "rtsp://", 7)) {
		p = strchr(p + 7, '/');
		if (!p)
			p = "/";
	}
	if (*p != '/' || strlen(p) >= sizeof(tmp))
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), "%s", p);
	/* the control URL: base + "/trackID=0", after the query when the base
	 * had one (ffmpeg) or before it (GStreamer): the segment goes */
	char *t = strstr(tmp, "/trackID=");
	if (t) {
		size_t seg = 1 + strcspn(t + 1, "?/&");
		memmove(t, t + seg, strlen(t + seg) + 1);
	}
	char *q = strchr(tmp, '?');
	if (q)
		*q++ = 0;
	snprintf(query, qlen, "%s", q ? q : "");
	char *path = tmp;
	while (*path == '/')
		path++;
	size_t n = strlen(path);
	while (n && path[n - 1] == '/')
		path[--n] = 0;
	if (strchr(path, '/') || n >= camlen)
		return -EINVAL;
	memcpy(cam, path, n + 1);
	return 0;
}

/* ---- sending ---- */

struct emit_ctx {
	struct conn *c;
	struct evbuffer *out;
};

static int emit_tcp(void *opaque, const uint8_t *hdr, size_t hlen, const uint8_t *data, size_t len)
{
	struct emit_ctx *e = opaque;
	size_t n = hlen + len;
	uint8_t pre[4] = { '$', (uint8_t)e->c->ch[0], (uint8_t)(n >> 8), (uint8_t)n };

	if (evbuffer_add(e->out, pre, 4) < 0 || evbuffer_add(e->out, hdr, hlen) < 0 ||
	    evbuffer_add(e->out, data, len) < 0)
		return -ENOMEM;
	return 0;
}

static int emit_udp(void *opaque, const uint8_t *hdr, size_t hlen, const uint8_t *data, size_t len)
{
	struct emit_ctx *e = opaque;
	struct conn *c = e->c;
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)data, len } };
	struct msghdr m = { .msg_name = &c->dst[0], .msg_namelen = c->dst_len, .msg_iov = iov,
			    .msg_iovlen = 2 };

	if (sendmsg(c->udp[0], &m, MSG_DONTWAIT) < 0)
		c->drops++; /* UDP never waits: a full socket loses the packet */
	return 0;
}

static void send_sr(struct conn *c)
{
	uint8_t sr[28];

	if (!c->last_real_us)
		return;
	vc_rtcp_sr(&c->rtp, c->last_real_us, c->last_ts, sr);
	c->last_sr_us = mono_us();
	if (c->tcp) {
		uint8_t pre[4] = { '$', (uint8_t)c->ch[1], 0, sizeof(sr) };
		struct evbuffer *out = bufferevent_get_output(c->bev);

		evbuffer_add(out, pre, 4);
		evbuffer_add(out, sr, sizeof(sr));
	} else if (c->udp[1] >= 0) {
		if (sendto(c->udp[1], sr, sizeof(sr), MSG_DONTWAIT, (struct sockaddr *)&c->dst[1],
			   c->dst_len) < 0)
			c->drops++;
	}
}

static int on_au(void *opaque, const struct vc_frame *f)
{
	struct conn *c = opaque;
	struct emit_ctx e = { c, bufferevent_get_output(c->bev) };
	uint32_t ts = vc_rtp_ts90k(f->ts_us);

	if (c->tcp && evbuffer_get_length(e.out) > RTSP_MAX_QUEUE)
		return -ENOBUFS;
	c->last_ts = ts;
	c->last_real_us = f->ts_real_us;
	if (!c->last_sr_us) /* the first report right away: players sync on it */
		send_sr(c);
	if (vc_rtp_h264_send(&c->rtp, f->mem[0], f->bytesused[0], ts, c->tcp ? emit_tcp : emit_udp,
			     &e) < 0)
		return -ENOBUFS;
	return 0;
}

/* ---- DESCRIBE ---- */

static void describe_answer(struct conn *c)
{
	const uint8_t *sps, *pps;
	size_t sps_len, pps_len;
	char sdp[3072], hdr[1200], control[1100];
	size_t n = strlen(c->describe_url);

	c->describe_wait = 0;
	bufferevent_enable(c->bev, EV_READ);
	snprintf(control, sizeof(control), "%.*s/trackID=0",
		 (int)(n && c->describe_url[n - 1] == '/' ? n - 1 : n), c->describe_url);
	if (!c->src || rtsp_source_ps(c->src, &sps, &sps_len, &pps, &pps_len) < 0 ||
	    vc_sdp_h264(sdp, sizeof(sdp), c->local, control, sps, sps_len, pps, pps_len) < 0) {
		reply_err(c, c->describe_cseq, 503, "no H.264 parameter sets from the camera");
		return;
	}
	snprintf(hdr, sizeof(hdr), "Content-Base: %s%s\r\nContent-Type: application/sdp\r\n",
		 c->describe_url, n && c->describe_url[n - 1] == '/' ? "" : "/");
	reply(c, c->describe_cseq, 200, hdr, sdp);
}

static void on_ps(void *opaque)
{
	struct conn *c = opaque;

	if (c->describe_wait)
		describe_answer(c);
}

static void on_end(void *opaque)
{
	struct conn *c = opaque;

	log_debug("%s: stream ended by the server", c->peer);
	conn_close_after_write(c);
}

static const struct rtsp_source_cbs source_cbs = { on_ps, on_au, on_end };

/* Opens (or keeps) the source for url: 0 or an RTSP status. */
static int source_for(struct conn *c, const char *url, char *err, size_t errlen)
{
	char cam[64], query[1024], key[1200];

	if (split_url(url, cam, sizeof(cam), query, sizeof(query)) < 0) {
		snprintf(err, errlen, "bad URL");
		return 400;
	}
	snprintf(key, sizeof(key), "%s?%s", cam, query);
	if (c->src && !strcmp(key, c->src_key))
		return 0;
	/* a control URL resolved against the base's path alone: the stream
	 * DESCRIBE opened */
	if (c->src && !c->setup && !cam[0] && !query[0])
		return 0;
	if (c->setup) {
		snprintf(err, errlen, "one stream per session");
		return 459;
	}
	rtsp_source_close(c->src);
	c->src = NULL;
	int st = rtsp_source_open(c->r->s, cam, query, (struct sockaddr *)&c->addr, c->peer,
				  &source_cbs, c, &c->src, err, errlen);
	if (st)
		return st;
	snprintf(c->src_key, sizeof(c->src_key), "%s", key);
	return 0;
}

static void do_describe(struct conn *c, const struct vc_rtsp_req *q)
{
	char err[256] = "";
	int st = source_for(c, q->uri, err, sizeof(err));

	if (st) {
		reply_err(c, q->cseq, st, err);
		return;
	}
	c->describe_cseq = q->cseq;
	snprintf(c->describe_url, sizeof(c->describe_url), "%s", q->uri);
	const uint8_t *a, *b;
	size_t al, bl;
	if (rtsp_source_ps(c->src, &a, &al, &b, &bl) == 0) {
		describe_answer(c);
		return;
	}
	/* no IDR seen yet (the encoder is starting): answer when it comes */
	c->describe_wait = 1;
	c->describe_until_us = mono_us() + RTSP_DESCRIBE_WAIT_S * 1000000LL;
	bufferevent_disable(c->bev, EV_READ);
}

/* ---- SETUP ---- */

static void on_rtcp(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	uint8_t buf[1500];

	(void)what;
	for (int i = 0; i < 16; i++) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0)
			break;
		if (vc_rtcp_is_report(buf, (size_t)n))
			c->alive_us = mono_us(); /* a receiver report keeps the session */
	}
}

/* Two UDP sockets on an even port and the next, on the address family of
 * the connection. 0 or -errno. */
static int udp_pair(struct conn *c)
{
	for (int tries = 0; tries < 32; tries++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd0 = socket(c->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int fd1 = socket(c->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd0 < 0 || fd1 < 0)
			goto fail;
		if (getsockname(bufferevent_getfd(c->bev), (struct sockaddr *)&ss, &sl) < 0)
			goto fail;
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = 0;
		if (bind(fd0, (struct sockaddr *)&ss, sl) < 0 ||
		    getsockname(fd0, (struct sockaddr *)&ss, &sl) < 0)
			goto fail;
		unsigned p = ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
						     : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		if (p % 2 || p >= 65535)
			goto retry;
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)(p + 1));
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)(p + 1));
		if (bind(fd1, (struct sockaddr *)&ss, sl) < 0)
			goto retry;
		c->udp[0] = fd0;
		c->udp[1] = fd1;
		c->udp_port[0] = (uint16_t)p;
		c->udp_port[1] = (uint16_t)(p + 1);
		return 0;
retry:
		close(fd0);
		close(fd1);
		continue;
fail:
		if (fd0 >= 0)
			close(fd0);
		if (fd1 >= 0)
			close(fd1);
		return -errno;
	}
	return -EADDRINUSE;
}

static void do_setup(struct conn *c, const struct vc_rtsp_req *q)
{
	struct vc_rtsp_transport t;
	char err[256] = "", hdr[512];
	int ret = vc_rtsp_transport(vc_rtsp_header(q, "Transport"), &t);

	if (ret < 0) {
		reply_err(c, q->cseq, 461, "unsupported transport");
		return;
	}
	const char *sess = vc_rtsp_header(q, "Session");
	if (c->setup && (!sess || strncmp(sess, c->sid, 16))) {
		reply_err(c, q->cseq, 459, "a second stream in one connection");
		return;
	}
	int st = source_for(c, q->uri, err, sizeof(err));
	if (st) {
		reply_err(c, q->cseq, st, err);
		return;
	}
	if (!c->setup) {
		uint8_t rnd[12];

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			reply_err(c, q->cseq, 503, "no randomness");
			return;
		}
		for (int i = 0; i < 8; i++)
			snprintf(c->sid + 2 * i, 3, "%02x", rnd[i]);
		c->rtp.ssrc = (uint32_t)rnd[8] << 24 | (uint32_t)rnd[9] << 16 | (uint32_t)rnd[10] << 8 |
			      rnd[11];
		c->rtp.seq = (uint16_t)(rnd[0] << 8 | rnd[1]);
	}
	if (t.tcp) {
		c->tcp = 1;
		c->ch[0] = t.ch[0];
		c->ch[1] = t.ch[1];
		snprintf(hdr, sizeof(hdr),
			 "Transport: RTP/AVP/TCP;unicast;interleaved=%d-%d;ssrc=%08X\r\n"
			 "Session: %s;timeout=%u\r\n",
			 t.ch[0], t.ch[1], c->rtp.ssrc, c->sid, c->r->timeout_s);
	} else {
		if (c->udp[0] < 0 && (ret = udp_pair(c)) < 0) {
			reply_err(c, q->cseq, 503, strerror(-ret));
			return;
		}
		c->tcp = 0;
		memcpy(&c->dst[0], &c->addr, sizeof(c->addr));
		memcpy(&c->dst[1], &c->addr, sizeof(c->addr));
		c->dst_len = c->addr.ss_family == AF_INET ? sizeof(struct sockaddr_in)
							  : sizeof(struct sockaddr_in6);
		for (int i = 0; i < 2; i++) {
			if (c->addr.ss_family == AF_INET)
				((struct sockaddr_in *)&c->dst[i])->sin_port = htons(t.port[i]);
			else
				((struct sockaddr_in6 *)&c->dst[i])->sin6_port = htons(t.port[i]);
		}
		if (!c->rtcp_ev) {
			c->rtcp_ev = event_new(c->r->base, c->udp[1], EV_READ | EV_PERSIST, on_rtcp, c);
			if (!c->rtcp_ev || event_add(c->rtcp_ev, NULL) < 0) {
				reply_err(c, q->cseq, 503, "out of memory");
				return;
			}
		}
		snprintf(hdr, sizeof(hdr),
			 "Transport: RTP/AVP;unicast;client_port=%u-%u;server_port=%u-%u;ssrc=%08X\r\n"
			 "Session: %s;timeout=%u\r\n",
			 t.port[0], t.port[1], c->udp_port[0], c->udp_port[1], c->rtp.ssrc, c->sid,
			 c->r->timeout_s);
	}
	c->setup = 1;
	reply(c, q->cseq, 200, hdr, NULL);
}

/* ---- the request loop ---- */

static int session_ok(struct conn *c, const struct vc_rtsp_req *q)
{
	const char *sess = vc_rtsp_header(q, "Session");

	if (!c->setup || !sess || strncmp(sess, c->sid, 16) ||
	    (sess[16] && sess[16] != ';' && sess[16] != ' ')) {
		reply_err(c, q->cseq, 454, NULL);
		return 0;
	}
	return 1;
}

static void handle(struct conn *c, const struct vc_rtsp_req *q)
{
	char hdr[1300];

	c->alive_us = mono_us();
	log_debug("%s: %s %s", c->peer, q->method, q->uri);
	if (!strcmp(q->method, "OPTIONS")) {
		reply(c, q->cseq, 200,
		      "Public: OPTIONS, DESCRIBE, SETUP, PLAY, PAUSE, TEARDOWN, GET_PARAMETER\r\n",
		      NULL);
	} else if (!strcmp(q->method, "DESCRIBE")) {
		do_describe(c, q);
	} else if (!strcmp(q->method, "SETUP")) {
		do_setup(c, q);
	} else if (!strcmp(q->method, "PLAY")) {
		if (!session_ok(c, q))
			return;
		snprintf(hdr, sizeof(hdr), "Session: %s;timeout=%u\r\nRange: npt=0.000-\r\n", c->sid,
			 c->r->timeout_s);
		reply(c, q->cseq, 200, hdr, NULL);
		c->playing = 1;
		rtsp_source_play(c->src, 1);
	} else if (!strcmp(q->method, "PAUSE")) {
		if (!session_ok(c, q))
			return;
		c->playing = 0;
		rtsp_source_play(c->src, 0);
		snprintf(hdr, sizeof(hdr), "Session: %s;timeout=%u\r\n", c->sid, c->r->timeout_s);
		reply(c, q->cseq, 200, hdr, NULL);
	} else if (!strcmp(q->method, "TEARDOWN")) {
		reply(c, q->cseq, 200, NULL, NULL);
		conn_close_after_write(c);
	} else if (!strcmp(q->method, "GET_PARAMETER") || !strcmp(q->method, "SET_PARAMETER")) {
		if (c->setup) {
			snprintf(hdr, sizeof(hdr), "Session: %s;timeout=%u\r\n", c->sid,
				 c->r->timeout_s);
			reply(c, q->cseq, 200, hdr, NULL);
		} else {
			reply(c, q->cseq, 200, NULL, NULL);
		}
	} else {
		reply(c, q->cseq, 501, "Allow: OPTIONS, DESCRIBE, SETUP, PLAY, PAUSE, TEARDOWN, "
				       "GET_PARAMETER\r\n", NULL);
	}
}

static void on_read(struct bufferevent *bev, void *arg);

static void on_auth_done(void *opaque, int result)
{
	struct conn *c = opaque;

	c->auth_job = NULL;
	c->auth_wait = 0;
	if (result == 0)
		c->authed = 1;
	else
		c->auth_denied = 1;
	bufferevent_enable(c->bev, EV_READ);
	on_read(c->bev, c); /* the request is still in the input: handled now */
}

/* The token= parameter of uri's query into out ("" when none). */
static void uri_token(const char *uri, char *out, size_t n)
{
	const char *q = strchr(uri, '?');

	out[0] = 0;
	while (q) {
		q++;
		if (!strncmp(q, "token=", 6)) {
			size_t len = strcspn(q + 6, "&/");

			if (len < n)
				snprintf(out, n, "%.*s", (int)len, q + 6);
			return;
		}
		q = strchr(q, '&');
	}
}

/* Whether request q may go on: 1, or 0 when it was answered (401) or waits
 * for a password hash (the request stays in the input until then). */
static int auth_gate(struct conn *c, const struct vc_rtsp_req *q, size_t used)
{
	char tok[512], hdr[600];
	int ret;

	if (c->authed || !strcmp(q->method, "OPTIONS") || !strcmp(q->method, "TEARDOWN") ||
	    !strcmp(q->method, "GET_PARAMETER"))
		return 1;
	if (c->auth_denied) {
		c->auth_denied = 0;
		ret = -EACCES;
	} else {
		uri_token(q->uri, tok, sizeof(tok));
		ret = rtsp_auth_check(c->r->auth, q->method, vc_rtsp_header(q, "Authorization"),
				      tok[0] ? tok : NULL, on_auth_done, c, &c->auth_job);
	}
	if (ret == 0) {
		c->authed = 1;
		return 1;
	}
	if (ret == -EINPROGRESS) {
		c->auth_wait = 1;
		bufferevent_disable(c->bev, EV_READ);
		return 0;
	}
	evbuffer_drain(bufferevent_get_input(c->bev), used);
	if (vc_rtsp_header(q, "Authorization"))
		log_info_lim("rtsp auth failed", c->peer, "%s: %s: wrong credentials", c->peer,
			     q->method);
	rtsp_auth_challenge(c->r->auth, hdr, sizeof(hdr));
	reply(c, q->cseq, 401, hdr, NULL);
	return 0;
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	while (!c->closing && !c->describe_wait && !c->auth_wait) {
		size_t len = evbuffer_get_length(in);
		unsigned char *p;

		if (!len)
			return;
		p = evbuffer_pullup(in, len < 4 ? (ssize_t)len : 4);
		if (p[0] == '$') { /* interleaved data from the client: RTCP reports */
			if (len < 4)
				return;
			size_t n = (size_t)p[2] << 8 | p[3];
			if (len < 4 + n)
				return;
			p = evbuffer_pullup(in, (ssize_t)(4 + n));
			if (c->tcp && p[1] == c->ch[1] && vc_rtcp_is_report(p + 4, n))
				c->alive_us = mono_us();
			evbuffer_drain(in, 4 + n);
			continue;
		}
		size_t want = len < VC_RTSP_MAX_HEAD + VC_RTSP_MAX_BODY ? len
								   : VC_RTSP_MAX_HEAD + VC_RTSP_MAX_BODY;
		struct vc_rtsp_req *q = malloc(sizeof(*q));
		if (!q) {
			conn_close_after_write(c);
			return;
		}
		long used = vc_rtsp_parse((const char *)evbuffer_pullup(in, (ssize_t)want), want, q);
		if (used == 0) {
			free(q);
			return;
		}
		if (used < 0) {
			log_info_lim("rtsp bad request", c->peer, "%s: bad request (%s), closed",
				     c->peer, used == -EMSGSIZE ? "too large" : "malformed");
			reply(c, -1, used == -EMSGSIZE ? 413 : 400, NULL, NULL);
			free(q);
			conn_close_after_write(c);
			return;
		}
		if (!auth_gate(c, q, (size_t)used)) {
			free(q);
			continue;
		}
		evbuffer_drain(in, (size_t)used);
		handle(c, q);
		free(q);
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what; /* EOF, error: the session ends with its connection */
	conn_free(arg);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	int64_t now = mono_us();

	(void)fd;
	(void)what;
	if (c->closing)
		return;
	if (c->describe_wait && now > c->describe_until_us) {
		describe_answer(c);
		return;
	}
	if (now - c->alive_us > (int64_t)c->r->timeout_s * 1000000) {
		log_info_lim("rtsp session timeout", c->peer,
			     "%s: no request or RTCP report for %u s, session ended", c->peer,
			     c->r->timeout_s);
		conn_free(c);
		return;
	}
	if (c->playing && now - c->last_sr_us >= RTSP_SR_INTERVAL_US)
		send_sr(c);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int sl,
		      void *arg)
{
	struct vc_rtsp *r = arg;
	struct conn *c;
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local);
	int one = 1;

	(void)l;
	if (r->n_conns >= RTSP_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		log_warn_lim("rtsp connections", "rtsp", "too many RTSP connections: refused");
		close(fd);
		return;
	}
	c->r = r;
	c->udp[0] = c->udp[1] = -1;
	memcpy(&c->addr, sa, (size_t)sl < sizeof(c->addr) ? (size_t)sl : sizeof(c->addr));
	addr_str(sa, c->peer, sizeof(c->peer), 1);
	if (getsockname(fd, (struct sockaddr *)&local, &ll) == 0)
		addr_str((struct sockaddr *)&local, c->local, sizeof(c->local), 0);
	c->next = r->conns;
	if (r->conns)
		r->conns->prev = c;
	r->conns = c;
	r->n_conns++;
	c->alive_us = mono_us();
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->bev = bufferevent_socket_new(r->base, fd, BEV_OPT_CLOSE_ON_FREE);
	struct timeval tv = { 1, 0 };
	c->timer = event_new(r->base, -1, EV_PERSIST, on_tick, c);
	if (!c->bev || !c->timer || event_add(c->timer, &tv) < 0) {
		if (!c->bev)
			close(fd);
		conn_free(c);
		return;
	}
	bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
	bufferevent_enable(c->bev, EV_READ);
}

int vc_rtsp_new(struct event_base *base, struct vc_streams *s, unsigned timeout_s,
		struct vc_auth *const *auth, struct vc_conf *const *conf, struct vc_rtsp **out)
{
	struct vc_rtsp *r = calloc(1, sizeof(*r));

	if (!r || rtsp_auth_new(base, auth, conf, &r->auth) < 0) {
		free(r);
		return -ENOMEM;
	}
	r->base = base;
	r->s = s;
	r->timeout_s = timeout_s ? timeout_s : 60;
	*out = r;
	return 0;
}

int vc_rtsp_listen(struct vc_rtsp *r, const char *addr)
{
	char host[64];
	const char *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;

	if (r->n_lis >= sizeof(r->lis) / sizeof(r->lis[0]))
		return -ENOSPC;
	if (addr[0] == '[') {
		const char *e = strchr(addr, ']');
		if (!e || e[1] != ':' || (size_t)(e - addr - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(e - addr - 1), addr + 1);
		port = e + 2;
	} else {
		const char *e = strrchr(addr, ':');
		if (!e || (size_t)(e - addr) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(e - addr), addr);
		port = e + 1;
		if (!host[0])
			snprintf(host, sizeof(host), "0.0.0.0");
	}
	if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai) {
		log_error("rtsp: bad address %s", addr);
		return -EINVAL;
	}
	struct evconnlistener *l = evconnlistener_new_bind(
		r->base, on_accept, r, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
		64, ai->ai_addr, (int)ai->ai_addrlen);
	freeaddrinfo(ai);
	if (!l)
		return errno ? -errno : -EADDRINUSE;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned p = 0;
	if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&ss, &sl) == 0)
		p = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					     : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	r->lis[r->n_lis++] = l;
	log_info("listening on %s (port %u)", addr, p);
	return 0;
}

void vc_rtsp_free(struct vc_rtsp *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n_lis; i++)
		evconnlistener_free(r->lis[i]);
	while (r->conns)
		conn_free(r->conns);
	rtsp_auth_free(r->auth);
	free(r);
}
