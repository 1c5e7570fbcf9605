/* The stream clients' send path (server/stream/client.c) without HTTP: a
 * client on a socketpair (plain HTTP: parts go out with sendfile while MHD
 * keeps the connection suspended) or read through the content reader
 * (TLS: MHD copies), frames published by the output as capture delivers
 * them; libmicrohttpd's calls are counted by fakes (client_http_ops).
 * Checked: a part is header + JPEG (standard Huffman tables inserted where
 * capture's parse found none) + CRLF; sends split by a full socket resume
 * where they stopped; a slow client holds one part and skips to the newest
 * frame; a gone peer or a socket that takes nothing for client_timeout
 * ends the stream; a reader that still takes bytes is kept; an H.264
 * client starts at an IDR and, once it missed a frame, resumes only at the
 * next IDR; a client joining a passthrough output is sent the kept GOP from
 * its IDR at once, then live frames, none skipped; an fps limit takes a
 * frame up to half a period early and never exceeds its rate over time.
 * Memory held for slow clients (hold.c): a client that has held its part
 * longer than client_hold is dropped (its part freed at once, the socket
 * reset on close); past frame_memory the client holding the oldest part
 * that its output no longer publishes is dropped, never one holding the
 * output's newest part or a part taken less than a second ago; a TLS
 * client copying a frame is dropped by the same age rule. Joiners of
 * an encoded H.264 output force an IDR at most once a second of capture
 * time; a later joiner's is forced when the second is up, unless an IDR
 * came meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "common/h264.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "common/memstat.h"
#include "server/stream/serve_int.h"

static struct {
	unsigned suspends, resumes, wakes;
	unsigned timeout_s; /* client_timeout; 0 = 1 s */
} fake;

static void f_suspend(struct MHD_Connection *c)
{
	(void)c;
	fake.suspends++;
}

static void f_resume(struct MHD_Connection *c)
{
	(void)c;
	fake.resumes++;
}

static void f_wake(struct vc_http *h)
{
	(void)h;
	fake.wakes++;
}

static unsigned f_timeout(const struct vc_http *h)
{
	(void)h;
	return fake.timeout_s ? fake.timeout_s : 1; /* client_timeout */
}

static const struct client_http_ops fake_ops = { f_suspend, f_resume, f_wake, f_timeout };

/* ---- frames, as capture delivers them ---- */

static unsigned released; /* frames whose last reference went */

static void count_release(struct vc_frame *f, void *opaque)
{
	(void)f;
	free(opaque);
	released++;
}

static struct vc_frame *wrap(uint32_t fourcc, uint32_t w, uint32_t h, uint8_t *mem, size_t used,
			     uint64_t seq)
{
	const struct vc_fmt *fmt = vc_fmt_by_fourcc(fourcc);
	struct vc_geom g;

	if (!mem || !fmt || vc_fmt_geometry(fmt, w, h, 0, &g) < 0) {
		free(mem);
		return NULL;
	}
	uint8_t *m[3] = { mem, NULL, NULL };
	size_t bu[3] = { used, 0, 0 };
	struct vc_frame *f = vc_frame_wrap(fmt, &g, m, bu, count_release, mem);
	if (!f) {
		free(mem);
		return NULL;
	}
	f->seq = seq;
	f->ts_us = f->ts_real_us = (int64_t)seq * 1000;
	return f;
}

#define RAW_W 640
#define RAW_H 480
#define RAW_LEN ((size_t)RAW_W * RAW_H * 2)

static uint8_t raw_byte(uint64_t seq, size_t i)
{
	return (uint8_t)(i * 7 + seq * 31 + (i >> 11));
}

/* A YUYV frame whose bytes tell its number. */
static struct vc_frame *raw_frame(uint64_t seq)
{
	uint8_t *mem = malloc(RAW_LEN);

	for (size_t i = 0; mem && i < RAW_LEN; i++)
		mem[i] = raw_byte(seq, i);
	return wrap(V4L2_PIX_FMT_YUYV, RAW_W, RAW_H, mem, RAW_LEN, seq);
}

/* A 64x48 JPEG without Huffman tables (as many USB webcams send) and the
 * same with the standard ones inserted: what a client must receive. */
static uint8_t nodht[16384], withdht[16384 + VC_JPEG_DHT_BYTES];
static size_t nodht_len, withdht_len;
static struct vc_frame_jpeg nodht_facts;

static int make_jpegs(void)
{
	struct vc_frame *src = vc_frame_new_fmt(vc_fmt_by_fourcc(V4L2_PIX_FMT_GREY), 64, 48);
	struct vc_jpeg *j = vc_jpeg_new();
	struct vc_image img;
	uint8_t enc[16384];
	size_t len = 0;
	struct vc_jpeg_info info;
	int ret = -1;

	if (src && j && vc_image_from_frame(src, &img) == 0) {
		for (size_t i = 0; i < src->geom.mem_size[0]; i++)
			vc_frame_data(src, 0)[i] = (uint8_t)(i * 5);
		if (vc_jpeg_encode(j, &img, 90, enc, sizeof(enc), &len) == 0 &&
		    vc_jpeg_strip_dht(enc, len, nodht, sizeof(nodht), &nodht_len) == 0 &&
		    vc_jpeg_add_dht(nodht, nodht_len, withdht, sizeof(withdht), &withdht_len) == 0 &&
		    vc_jpeg_parse(nodht, nodht_len, &info) == 0 && !info.has_dht)
			ret = 0;
		/* what capture's one parse puts on the frame */
		nodht_facts = (struct vc_frame_jpeg){ 1, info.has_dht, info.sos_off };
	}
	vc_jpeg_free(j);
	vc_frame_unref(src);
	return ret;
}

static struct vc_frame *jpeg_frame(uint64_t seq)
{
	uint8_t *mem = malloc(nodht_len);
	struct vc_frame *f;

	if (mem)
		memcpy(mem, nodht, nodht_len);
	f = wrap(V4L2_PIX_FMT_MJPEG, 64, 48, mem, nodht_len, seq);
	if (f)
		f->jpeg = nodht_facts;
	return f;
}

/* ---- one output with one client, no HTTP ---- */

struct fx {
	struct vc_streams s;
	struct hub h;
	struct output *o;
	int sv[2];             /* plain: [0] the client's socket, [1] the peer */
};

/* plain: a socketpair with the sender's buffer at sndbuf bytes (0: the
 * default); else the TLS path (content reader). */
static struct client *fx_open(struct fx *x, int plain, int raw, int sndbuf)
{
	struct client *c = calloc(1, sizeof(*c));

	memset(x, 0, sizeof(*x));
	memset(&fake, 0, sizeof(fake));
	released = 0;
	x->sv[0] = x->sv[1] = -1;
	x->s.base = event_base_new();
	x->s.http_ops = &fake_ops;
	x->h.s = &x->s;
	x->o = calloc(1, sizeof(*x->o));
	if (!c || !x->o || !x->s.base) {
		free(c);
		return NULL;
	}
	x->o->hub = &x->h;
	x->o->plan.steps = VC_STEP_PASSTHROUGH;
	x->o->plan.out.fourcc = raw ? V4L2_PIX_FMT_YUYV : V4L2_PIX_FMT_MJPEG;
	DLIST_PUSH(x->h.outputs, x->o);
	c->s = &x->s;
	c->wake = (struct stream_wake){ client_on_event, c };
	c->out = x->o;
	c->raw = raw;
	c->sock = -1;
	snprintf(c->peer, sizeof(c->peer), "test");
	if (plain) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, x->sv) < 0) {
			free(c);
			return NULL;
		}
		if (sndbuf)
			setsockopt(x->sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		fcntl(x->sv[0], F_SETFL, O_NONBLOCK);
		fcntl(x->sv[1], F_SETFL, O_NONBLOCK);
		c->sock = x->sv[0];
	}
	DLIST_PUSH(x->o->clients, c);
	x->o->n_clients++;
	return c;
}

static void fx_close(struct fx *x, struct client *c)
{
	if (c)
		client_free(c); /* as MHD does when the response goes */
	if (x->o)
		output_free(x->o);
	for (int i = 0; i < 2; i++)
		if (x->sv[i] >= 0)
			close(x->sv[i]);
	if (x->s.base)
		event_base_free(x->s.base);
}

/* Capture delivers frame f (lent for the call, as hub_on_frame gets it). */
static void deliver(struct output *o, struct vc_frame *f)
{
	if (f)
		output_frame(o, f);
	vc_frame_unref(f);
}

static void loop_once(struct fx *x)
{
	event_base_loop(x->s.base, EVLOOP_NONBLOCK);
}

static void loop_ms(struct fx *x, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(x->s.base, &tv);
	event_base_dispatch(x->s.base);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the peer's end into buf until it holds `want` bytes, running the
 * loop whenever the socket is empty (the client's writable event). Gives
 * up after 5 s. Returns the count read. */
static size_t drain(struct fx *x, uint8_t *buf, size_t want)
{
	size_t got = 0;
	int64_t end = mono_ms() + 5000;

	while (got < want && mono_ms() < end) {
		ssize_t k = read(x->sv[1], buf + got, want - got);

		if (k > 0)
			got += (size_t)k;
		else
			loop_once(x);
	}
	return got;
}

/* Checks that p[0..len) is one multipart part of the JPEG with the
 * standard tables, for frame seq; returns the part's length, 0 if not. */
static size_t check_part(int line, const uint8_t *p, size_t len, uint64_t seq)
{
	char want[256];
	int n = snprintf(want, sizeof(want),
			 "--vcapdframe\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
			 "X-Timestamp: %" PRId64 ".%06" PRId64 "\r\nX-Frame-Seq: %" PRIu64 "\r\n\r\n",
			 withdht_len, (int64_t)seq * 1000 / 1000000, (int64_t)seq * 1000 % 1000000,
			 seq);
	size_t total = (size_t)n + withdht_len + 2;

	CHECK_AT(line, len >= total, "part of %zu bytes, want %zu", len, total);
	if (len < total)
		return 0;
	CHECK_AT(line, !memcmp(p, want, (size_t)n), "header: %.*s", n, (const char *)p);
	CHECK_AT(line, !memcmp(p + n, withdht, withdht_len), "JPEG bytes (with the standard DHT)");
	CHECK_AT(line, !memcmp(p + n + withdht_len, "\r\n", 2), "trailing CRLF");
	return total;
}

/* ---- plain HTTP: parts on the socket ---- */

/* MHD has sent the headers and calls the reader: the connection is
 * suspended and the first frame's part arrives whole, Huffman tables
 * inserted from the facts capture carried on the frame. */
static void plain_whole_part(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 0, 0);
	static uint8_t buf[32768];

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	CHECK(client_read(c, 0, NULL, 0) == 0 && fake.suspends == 1 && c->suspended, "reader");
	loop_once(&x);
	deliver(x.o, jpeg_frame(7));
	size_t n = drain(&x, buf, 1);
	n += drain(&x, buf + n, sizeof(buf) - n); /* all there is (5 s at most) */
	size_t one = check_part(__LINE__, buf, n, 7);
	CHECK(one && n == one, "received %zu bytes, one part is %zu", n, one);
	CHECK(c->frames == 1 && !c->part && c->sent_n == 1, "frames %" PRIu64 ", part %p",
	      c->frames, (void *)c->part);
	CHECK(fake.resumes == 0, "connection resumed while streaming");
	fx_close(&x, c);
	CHECK(released == 1, "released %u of 1 frame", released);
}

/* A full socket splits a part: the rest goes when it drains. Meanwhile
 * newer frames replace each other: the client holds its one part, the
 * frames between are released at once, and after its part it gets the
 * newest frame (the others counted as skipped). */
static void plain_partial_and_skip(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);
	uint8_t *buf = malloc(2 * RAW_LEN);

	CHECK(c && buf, "fixture");
	if (!c || !buf) {
		free(buf);
		fx_close(&x, c);
		return;
	}
	client_read(c, 0, NULL, 0);
	loop_once(&x);
	deliver(x.o, raw_frame(1));
	CHECK(c->part && c->part_off > 0 && c->part_off < RAW_LEN && c->wev &&
		      event_pending(c->wev, EV_WRITE, NULL),
	      "partial send: %zu of %zu bytes, waiting for the socket", c->part_off, RAW_LEN);
	struct vc_part *held = c->part;
	for (uint64_t seq = 2; seq <= 5; seq++)
		deliver(x.o, raw_frame(seq));
	CHECK(c->part == held && held->refs == 1 && !x.o->part[0] && !x.o->part[1],
	      "the client's part: %p (was %p), refs %d", (void *)c->part, (void *)held,
	      held->refs);
	CHECK(released == 4 && c->sent_n == 1, "released %u of frames 1..4, sent_n %" PRIu64,
	      released, c->sent_n);
	size_t n = drain(&x, buf, 2 * RAW_LEN);
	int ok1 = 1, ok5 = 1;
	for (size_t i = 0; i < RAW_LEN && n == 2 * RAW_LEN; i++) {
		ok1 &= buf[i] == raw_byte(1, i);
		ok5 &= buf[RAW_LEN + i] == raw_byte(5, i);
	}
	CHECK(n == 2 * RAW_LEN && ok1 && ok5, "received %zu bytes: frame 1 %s, frame 5 %s", n,
	      ok1 ? "intact" : "wrong", ok5 ? "intact" : "wrong");
	CHECK(c->frames == 2 && c->skipped == 3, "frames %" PRIu64 ", skipped %" PRIu64, c->frames,
	      c->skipped);
	free(buf);
	fx_close(&x, c);
	CHECK(released == 5, "released %u of 5 frames", released);
}

/* An H.264 access unit of H264_LEN bytes: start code, an IDR or P slice
 * header byte, then its number in every byte. */
#define H264_LEN 400000

static struct vc_frame *h264_frame(uint64_t seq, int key)
{
	uint8_t *mem = malloc(H264_LEN);
	struct vc_geom g = { .width = 640, .height = 480, .mem_planes = 1, .sizeimage = H264_LEN };
	uint8_t *m[3] = { mem, NULL, NULL };
	size_t bu[3] = { H264_LEN, 0, 0 };
	struct vc_frame *f;

	if (!mem)
		return NULL;
	memset(mem, (int)seq, H264_LEN);
	memcpy(mem, "\0\0\0\1", 4);
	mem[4] = key ? 0x65 : 0x41;
	g.mem_size[0] = H264_LEN;
	f = vc_frame_wrap(vc_h264_fmt(), &g, m, bu, count_release, mem);
	if (!f) {
		free(mem);
		return NULL;
	}
	f->seq = seq;
	f->ts_us = f->ts_real_us = (int64_t)seq * 33333;
	f->key = (uint8_t)key;
	return f;
}

/* Reads what the peer has now (the loop run in between), at most max. */
static size_t read_now(struct fx *x, uint8_t *buf, size_t max)
{
	size_t got = 0;

	for (int i = 0; i < 50 && got < max; i++) {
		ssize_t k = read(x->sv[1], buf + got, max - got);

		if (k > 0)
			got += (size_t)k;
		else
			loop_once(x);
	}
	return got;
}

/* Annex-B: a joining client waits for an IDR (a P frame before it is not
 * sent); a client still sending frame 2 when 3 and 4 (P) come has missed
 * them and skips to the IDR 5, then takes 6 (P, consecutive). */
static void h264_key_frames(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);
	uint8_t *buf = malloc(4 * H264_LEN);
	static const uint8_t want[] = { 2, 5, 6 };

	CHECK(c && buf, "fixture");
	if (!c || !buf) {
		free(buf);
		fx_close(&x, c);
		return;
	}
	x.o->plan.out.fourcc = V4L2_PIX_FMT_H264;
	c->h264 = H264_ANNEXB;
	h264_out_join(x.o, c);
	client_read(c, 0, NULL, 0);
	loop_once(&x);
	deliver(x.o, h264_frame(1, 0));
	CHECK(!c->part && read_now(&x, buf, 4 * H264_LEN) == 0, "a P frame sent to a new client");
	deliver(x.o, h264_frame(2, 1));
	CHECK(c->part && c->part_off < H264_LEN, "IDR 2 partly sent (%zu)", c->part_off);
	deliver(x.o, h264_frame(3, 0));
	deliver(x.o, h264_frame(4, 0));
	size_t n = read_now(&x, buf, 4 * H264_LEN);
	CHECK(n == H264_LEN && !c->part && c->sent_n == 2, "after IDR 2: %zu bytes, sent_n %" PRIu64,
	      n, c->sent_n);
	deliver(x.o, h264_frame(5, 1));
	n += read_now(&x, buf + n, 4 * H264_LEN - n);
	deliver(x.o, h264_frame(6, 0));
	n += read_now(&x, buf + n, 4 * H264_LEN - n);
	CHECK(n == 3 * H264_LEN, "received %zu bytes, want 3 frames", n);
	for (size_t i = 0; i < 3 && n == 3 * H264_LEN; i++) {
		const uint8_t *f = buf + i * H264_LEN;

		CHECK(f[5] == want[i] && f[H264_LEN - 1] == want[i] && f[4] == (want[i] == 6 ? 0x41 : 0x65),
		      "frame %zu is %u (want %u)", i, f[5], want[i]);
	}
	CHECK(c->frames == 3 && c->skipped == 2, "frames %" PRIu64 ", skipped %" PRIu64, c->frames,
	      c->skipped);
	free(buf);
	fx_close(&x, c);
	CHECK(released == 6, "released %u of 6 frames", released);
}

/* Checks that buf (n bytes) holds the H.264 test frames want[0..k) whole. */
static void check_h264_frames(int line, const uint8_t *buf, size_t n, const uint8_t *want,
			      size_t k)
{
	CHECK_AT(line, n == k * H264_LEN, "received %zu bytes, want %zu frames", n, k);
	for (size_t i = 0; i < k && n == k * H264_LEN; i++) {
		const uint8_t *f = buf + i * H264_LEN;

		CHECK_AT(line, f[5] == want[i] && f[H264_LEN - 1] == want[i],
			 "frame %zu is %u (want %u)", i, f[5], want[i]);
	}
}

/* An Annex-B client of a passthrough output with IDR 1 start its GOP and P
 * frames 2, 3 out: sent 1, 2, 3 (copies kept since the IDR) at once, then 4
 * live; none skipped, the capture's buffers all returned. */
static void h264_join_kept_gop(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);
	uint8_t *buf = malloc(5 * H264_LEN);
	static const uint8_t want[] = { 1, 2, 3, 4 };

	CHECK(c && buf, "fixture");
	if (!c || !buf) {
		free(buf);
		fx_close(&x, c);
		return;
	}
	x.o->plan.out.fourcc = V4L2_PIX_FMT_H264;
	deliver(x.o, h264_frame(1, 1));
	deliver(x.o, h264_frame(2, 0));
	deliver(x.o, h264_frame(3, 0));
	CHECK(released == 2 && vc_mem_held(VC_MEM_GOP) == 3 * H264_LEN,
	      "capture buffers back (%u), GOP copied (%zu bytes)", released, vc_mem_held(VC_MEM_GOP));
	c->h264 = H264_ANNEXB;
	c->sent_n = x.o->latest_n; /* as client_start */
	h264_out_join(x.o, c);
	client_read(c, 0, NULL, 0);
	size_t n = read_now(&x, buf, 5 * H264_LEN);
	CHECK(n == 3 * H264_LEN && c->sent_n == 3 && !c->catchup, "at once: %zu bytes, sent_n %" PRIu64,
	      n, c->sent_n);
	deliver(x.o, h264_frame(4, 0));
	n += read_now(&x, buf + n, 5 * H264_LEN - n);
	check_h264_frames(__LINE__, buf, n, want, 4);
	CHECK(c->frames == 4 && c->skipped == 0, "frames %" PRIu64 ", skipped %" PRIu64, c->frames,
	      c->skipped);
	free(buf);
	fx_close(&x, c);
	CHECK(released == 4 && vc_mem_held(VC_MEM_GOP) == 0, "released %u of 4 frames, GOP %zu",
	      released, vc_mem_held(VC_MEM_GOP));
}

/* A joiner still sending the kept IDR 1 when IDR 4 starts a new GOP (2, 3
 * are dropped with the old one): it goes on from IDR 4 (kept), then 5;
 * never a frame whose reference it lacks. */
static void h264_join_new_gop(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);
	uint8_t *buf = malloc(5 * H264_LEN);
	static const uint8_t want[] = { 1, 4, 5 };

	CHECK(c && buf, "fixture");
	if (!c || !buf) {
		free(buf);
		fx_close(&x, c);
		return;
	}
	x.o->plan.out.fourcc = V4L2_PIX_FMT_H264;
	deliver(x.o, h264_frame(1, 1));
	deliver(x.o, h264_frame(2, 0));
	deliver(x.o, h264_frame(3, 0));
	c->h264 = H264_ANNEXB;
	c->sent_n = x.o->latest_n;
	h264_out_join(x.o, c);
	client_read(c, 0, NULL, 0);
	loop_once(&x);
	CHECK(c->part && c->sent_n == 1 && c->part_off < H264_LEN, "IDR 1 partly sent (%zu)",
	      c->part_off);
	deliver(x.o, h264_frame(4, 1));
	deliver(x.o, h264_frame(5, 0));
	size_t n = read_now(&x, buf, 5 * H264_LEN);
	check_h264_frames(__LINE__, buf, n, want, 3);
	CHECK(c->frames == 3 && c->skipped == 2 && !c->catchup, "frames %" PRIu64 ", skipped %" PRIu64,
	      c->frames, c->skipped);
	free(buf);
	fx_close(&x, c);
	CHECK(released == 5 && vc_mem_held(VC_MEM_GOP) == 0, "released %u of 5 frames, GOP %zu",
	      released, vc_mem_held(VC_MEM_GOP));
}

/* The device mode changes (output_drop_frames): the kept GOP is of the old
 * mode and goes; a client joining then waits for the new mode's IDR. */
/* Joiners of an encoded output (no kept GOP): frames' capture times at
 * ts_ms (h264_frame: seq * 33.3 ms), IDRs forced counted. */
static void h264_join_idr_rate(void)
{
	struct output *o = calloc(1, sizeof(*o));
	struct client *c = calloc(1, sizeof(*c));
	struct hub h = { 0 };

	CHECK(o && c, "fixture");
	if (!o || !c) {
		free(o);
		free(c);
		return;
	}
	o->hub = &h;
	o->plan.out.fourcc = V4L2_PIX_FMT_H264; /* encoded: no passthrough step */
	c->h264 = H264_ANNEXB;
	released = 0;
	/* frame f's capture time is f * 33.3 ms. Before the output's first
	 * picture (an encoder's first is an IDR): none forced */
	h264_out_join(o, c);
	struct vc_frame *f = h264_frame(1, 0);
	CHECK(c->need_key && h264_out_due(o, f) && h264_out_forced(o) == 0,
	      "forced %" PRIu64 " for the first picture", h264_out_forced(o));
	vc_frame_unref(f);
	o->latest_n = 1; /* it was published */
	h264_out_join(o, c);
	CHECK(c->need_key && h264_out_forced(o) == 0, "nothing forced before a frame");
	f = h264_frame(30, 0); /* 1.0 s */
	CHECK(h264_out_due(o, f) && h264_out_forced(o) == 1, "first join: forced %" PRIu64,
	      h264_out_forced(o));
	vc_frame_unref(f);
	h264_out_join(o, c);
	h264_out_join(o, c);
	/* 1.03, 1.33, 1.97 s: within the second; 2.03 s */
	uint64_t seqs[] = { 31, 40, 59, 61 };
	uint64_t want[] = { 1, 1, 1, 2 };
	for (size_t i = 0; i < 4; i++) {
		f = h264_frame(seqs[i], 0);
		CHECK(h264_out_due(o, f) && h264_out_forced(o) == want[i],
		      "frame at %" PRIu64 " ms: forced %" PRIu64 ", want %" PRIu64,
		      seqs[i] * 100 / 3, h264_out_forced(o), want[i]);
		vc_frame_unref(f);
	}
	f = h264_frame(62, 0);
	CHECK(h264_out_due(o, f) && h264_out_forced(o) == 2, "nobody waits: none forced");
	vc_frame_unref(f);
	/* a joiner at 2.1 s, the encoder's own IDR at 2.5 s: nothing left to force */
	h264_out_join(o, c);
	f = h264_frame(75, 1);
	o->latest = f;
	o->latest_n = 2;
	h264_out_published(o);
	o->latest = NULL;
	vc_frame_unref(f);
	f = h264_frame(95, 0);
	CHECK(h264_out_due(o, f) && h264_out_forced(o) == 2, "after an IDR: forced %" PRIu64,
	      h264_out_forced(o));
	vc_frame_unref(f);
	/* the capture clock set back (camera restarted): a joiner's IDR at once */
	h264_out_join(o, c);
	f = h264_frame(3, 0);
	CHECK(h264_out_due(o, f) && h264_out_forced(o) == 3, "clock set back: forced %" PRIu64,
	      h264_out_forced(o));
	vc_frame_unref(f);
	h264_out_free(o);
	free(o);
	free(c);
	CHECK(released == 10, "released %u of 10 frames", released);
}

static void h264_mode_change_drops_gop(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);

	CHECK(c, "fixture");
	if (!c) {
		fx_close(&x, c);
		return;
	}
	x.o->plan.out.fourcc = V4L2_PIX_FMT_H264;
	deliver(x.o, h264_frame(1, 1));
	deliver(x.o, h264_frame(2, 0));
	CHECK(vc_mem_held(VC_MEM_GOP) == 2 * H264_LEN, "GOP kept: %zu", vc_mem_held(VC_MEM_GOP));
	output_drop_frames(x.o);
	CHECK(vc_mem_held(VC_MEM_GOP) == 0, "dropped with the frames: %zu", vc_mem_held(VC_MEM_GOP));
	c->h264 = H264_ANNEXB;
	c->sent_n = x.o->latest_n;
	h264_out_join(x.o, c);
	CHECK(c->need_key && !c->catchup, "waits for an IDR");
	deliver(x.o, h264_frame(3, 0));
	CHECK(vc_mem_held(VC_MEM_GOP) == 0, "a P frame after the drop is not kept");
	fx_close(&x, c);
}

/* The peer closes: the send fails, the connection goes back to MHD (resumed,
 * the reader says end of stream) and the client is freed with its part. */
static void plain_peer_gone(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 0, 0);

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	client_read(c, 0, NULL, 0);
	loop_once(&x);
	close(x.sv[1]);
	x.sv[1] = -1;
	deliver(x.o, jpeg_frame(1));
	CHECK(c->ending && !c->suspended && fake.resumes == 1 && fake.wakes == 1,
	      "ending %d, resumes %u, wakes %u", c->ending, fake.resumes, fake.wakes);
	CHECK(client_read(c, 0, NULL, 0) == MHD_CONTENT_READER_END_OF_STREAM, "end of stream");
	client_free(c);
	CHECK(x.o->n_clients == 0 && !x.o->clients, "client still on the output");
	fx_close(&x, NULL);
	CHECK(released == 1, "released %u of 1 frame", released);
}

/* A socket that takes nothing for client_timeout (3 s here) ends the stream;
 * one whose reader still takes bytes is waited for.
 * A loop's end and the client's timer fall due at least 1.25 s apart, on
 * the side each step needs: libevent runs everything due when it wakes, so
 * a stall of the whole process (qemu-user, a loaded host) shorter than
 * that cannot reorder them. With a 1 s timeout the margin was 300 ms and
 * such a stall dropped the reader. */
static void plain_stall(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);
	uint8_t buf[4096];

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	fake.timeout_s = 3;
	client_read(c, 0, NULL, 0);
	loop_once(&x);
	deliver(x.o, raw_frame(1));
	CHECK(c->part && c->part_off < RAW_LEN, "socket not full");
	uint64_t sent = c->bytes;
	loop_ms(&x, 1500); /* the timer is due at +3 s */
	size_t took = 0;
	ssize_t k;
	while ((k = read(x.sv[1], buf, sizeof(buf))) > 0)
		took += (size_t)k;
	CHECK(took > 0, "nothing to read");
	/* +3.25 s: past the first deadline, the reader was seen (more was
	 * sent) and kept; the wait renewed at the read is due at +4.5 s */
	loop_ms(&x, 1750);
	CHECK(!c->ending && fake.resumes == 0 && c->bytes > sent,
	      "a reader that took %zu bytes: ending %d, sent %llu then %llu", took, c->ending,
	      (unsigned long long)sent, (unsigned long long)c->bytes);
	loop_ms(&x, 3250); /* +6.5 s: the renewed wait found nothing taken */
	CHECK(c->ending && fake.resumes == 1, "stalled: ending %d, resumes %u", c->ending,
	      fake.resumes);
	fx_close(&x, c);
}

/* ---- memory held for slow clients (hold.c) ---- */

/* A second plain client of x's output on its own socketpair (sv[0] its
 * socket, sv[1] the peer), its headers sent (reader called). */
static struct client *second_client(struct fx *x, int sv[2], int sndbuf)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		free(c);
		return NULL;
	}
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	c->s = &x->s;
	c->wake = (struct stream_wake){ client_on_event, c };
	c->out = x->o;
	c->raw = 1;
	c->sock = sv[0];
	c->sent_n = x->o->latest_n; /* from the next frame on, as client_start */
	snprintf(c->peer, sizeof(c->peer), "second");
	DLIST_PUSH(x->o->clients, c);
	x->o->n_clients++;
	client_read(c, 0, NULL, 0);
	loop_once(x);
	return c;
}

/* Whether sock closes with a reset (SO_LINGER on, 0 s). */
static int resets(int sock)
{
	struct linger lg = { 0, 0 };
	socklen_t len = sizeof(lg);

	return getsockopt(sock, SOL_SOCKET, SO_LINGER, &lg, &len) == 0 && lg.l_onoff && !lg.l_linger;
}

/* A reader still taking bytes keeps its part; past client_hold (1 s here)
 * the gc tick drops it mid-part: part freed at once, stream ended. */
static void hold_age(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 1, 1, 16384);

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	struct hub *hubs[1] = { &x.h }; /* hold.c walks the hubs' clients */

	x.s.hubs = hubs;
	x.s.n_hubs = 1;
	x.s.budget.hold_s = 1;
	client_read(c, 0, NULL, 0);
	loop_once(&x);
	deliver(x.o, raw_frame(1));
	deliver(x.o, raw_frame(2)); /* frame 1's part: c's alone now */
	CHECK(c->part && c->part_off < RAW_LEN && vc_mem_held(VC_MEM_PARTS) == RAW_LEN,
	      "holds frame 1's part: %zu bytes counted", vc_mem_held(VC_MEM_PARTS));
	hold_tick(&x.s);
	CHECK(!c->dropped && c->part, "dropped at once");
	c->part_us -= 1100000; /* taken 1.1 s ago */
	hold_tick(&x.s);
	CHECK(c->dropped && !c->part && c->ending && fake.resumes == 1 && resets(c->sock),
	      "after 1.1 s: dropped %d, part %p, ending %d, resumes %u, reset %d", c->dropped,
	      (void *)c->part, c->ending, fake.resumes, resets(c->sock));
	CHECK(vc_mem_held(VC_MEM_PARTS) == 0, "part freed: %zu counted", vc_mem_held(VC_MEM_PARTS));
	CHECK(client_read(c, 0, NULL, 0) == MHD_CONTENT_READER_END_OF_STREAM, "MHD ends it");
	fx_close(&x, c);
	CHECK(released == 2, "released %u of 2 frames", released);
}

/* frame_memory 1 MiB, parts of 600 KiB: a client holding an old part (2 s)
 * is dropped when a new part passes the limit, the one taking the newest
 * part is not; an old part taken 0.5 s ago is spared. */
static void hold_memory(void)
{
	struct fx x;
	struct client *slow = fx_open(&x, 1, 1, 16384), *fast = NULL;
	int sv[2] = { -1, -1 };

	CHECK(slow != NULL, "fixture");
	if (!slow) {
		fx_close(&x, NULL);
		return;
	}
	struct hub *hubs[1] = { &x.h }; /* hold.c walks the hubs' clients */

	x.s.hubs = hubs;
	x.s.n_hubs = 1;
	x.s.budget.frame_bytes = 1 << 20;
	client_read(slow, 0, NULL, 0);
	loop_once(&x);
	deliver(x.o, raw_frame(1));
	CHECK(slow->part && vc_mem_held(VC_MEM_PARTS) == RAW_LEN, "slow holds frame 1");
	fast = second_client(&x, sv, 16384);
	CHECK(fast != NULL, "second client");
	/* young: frame 2's part passes 1 MiB, frame 1's was taken just now */
	slow->part_us -= 500000;
	deliver(x.o, raw_frame(2));
	CHECK(fast && fast->part && !slow->dropped && slow->part &&
		      vc_mem_held(VC_MEM_PARTS) == 2 * RAW_LEN,
	      "a part taken 0.5 s ago is spared: slow dropped %d, %zu counted", slow->dropped,
	      vc_mem_held(VC_MEM_PARTS));
	/* the fast reader finishes frame 2; frame 3 comes when slow's part is 2 s old */
	uint8_t *buf = malloc(RAW_LEN);
	size_t got = 0;
	int64_t end = mono_ms() + 5000;
	while (buf && fast && got < RAW_LEN && mono_ms() < end) {
		ssize_t k = read(sv[1], buf + got, RAW_LEN - got);
		if (k > 0)
			got += (size_t)k;
		else
			loop_once(&x);
	}
	free(buf);
	CHECK(fast && !fast->part && got == RAW_LEN, "fast got %zu of frame 2", got);
	slow->part_us -= 1500000;
	deliver(x.o, raw_frame(3));
	CHECK(slow->dropped && !slow->part && resets(slow->sock), "slow (2 s, old part) dropped: %d",
	      slow->dropped);
	CHECK(fast && fast->part && !fast->dropped, "fast (newest part) kept");
	CHECK(vc_mem_held(VC_MEM_PARTS) == RAW_LEN, "only frame 3's part left: %zu",
	      vc_mem_held(VC_MEM_PARTS));
	if (fast)
		client_free(fast);
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	fx_close(&x, slow);
	CHECK(released == 3, "released %u of 3 frames", released);
}

/* ---- TLS: MHD's content reader copies ---- */

/* Reads through the content reader in small pieces until the client's
 * part is done; returns the bytes. */
static size_t read_part(struct client *c, uint8_t *buf, size_t cap)
{
	size_t n = 0;

	do {
		ssize_t k = client_read(c, n, (char *)buf + n, cap - n < 100 ? cap - n : 100);

		if (k <= 0)
			break;
		n += (size_t)k;
	} while (c->cur && n < cap);
	return n;
}

/* Nothing to send: the reader suspends the connection; a frame resumes it;
 * the part is copied out in pieces while newer frames arrive, then the
 * newest follows (the ones between skipped, released at once). */
static void tls_copy_and_skip(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 0, 0, 0);
	static uint8_t buf[32768];

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	CHECK(client_read(c, 0, (char *)buf, 100) == 0 && c->suspended && fake.suspends == 1,
	      "nothing to send: suspended %d", c->suspended);
	deliver(x.o, jpeg_frame(1));
	CHECK(!c->suspended && fake.resumes == 1, "not resumed by a frame");
	size_t n = (size_t)client_read(c, 0, (char *)buf, 100);
	CHECK(n == 100 && c->cur, "first piece %zu", n);
	for (uint64_t seq = 2; seq <= 4; seq++)
		deliver(x.o, jpeg_frame(seq));
	CHECK(released == 2, "released %u of frames 2, 3 (1 is being sent)", released);
	n += read_part(c, buf + n, sizeof(buf) - n);
	CHECK(!c->cur && released == 3, "after the part: cur %p, released %u", (void *)c->cur,
	      released);
	check_part(__LINE__, buf, n, 1);
	n = read_part(c, buf, sizeof(buf));
	check_part(__LINE__, buf, n, 4);
	CHECK(c->frames == 2 && c->skipped == 2, "frames %" PRIu64 ", skipped %" PRIu64, c->frames,
	      c->skipped);
	CHECK(client_read(c, 0, (char *)buf, 100) == 0 && fake.suspends == 2, "idle again");
	fx_close(&x, c);
	CHECK(released == 4, "released %u of 4 frames", released);
}

/* An fps limit is a rate with room for jitter: a frame up to half a period
 * early is taken, and the next is then due a whole period after the one it
 * was taken for (the room is not added per period: fps=5 once gave 5.56/s);
 * a frame earlier than that waits for a later one. fps_limit 1: a period
 * of 1 s, so the margins (200-300 ms) hold on a slow machine too. */
/* A TLS client copying an old frame past client_hold (1 s) is dropped by
 * the gc tick: the frame let go at once, MHD's next read ends the stream. */
static void tls_hold_age(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 0, 0, 0);
	static uint8_t buf[100];
	struct hub *hubs[1] = { &x.h }; /* hold.c walks the hubs' clients */

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	x.s.hubs = hubs;
	x.s.n_hubs = 1;
	x.s.budget.hold_s = 1;
	client_read(c, 0, (char *)buf, sizeof(buf));
	deliver(x.o, jpeg_frame(1));
	CHECK(client_read(c, 0, (char *)buf, sizeof(buf)) == 100 && c->cur, "copying frame 1");
	deliver(x.o, jpeg_frame(2));
	hold_tick(&x.s);
	CHECK(!c->dropped && c->cur && released == 0, "dropped at once");
	c->part_us -= 1100000; /* taken 1.1 s ago */
	hold_tick(&x.s);
	CHECK(c->dropped && !c->cur && c->ending && released == 1,
	      "after 1.1 s: dropped %d, cur %p, ending %d, released %u", c->dropped,
	      (void *)c->cur, c->ending, released);
	CHECK(client_read(c, 0, (char *)buf, sizeof(buf)) == MHD_CONTENT_READER_END_OF_STREAM,
	      "MHD ends it");
	fx_close(&x, c);
	CHECK(released == 2, "released %u of 2 frames", released);
}

static void tls_fps_limit(void)
{
	struct fx x;
	struct client *c = fx_open(&x, 0, 0, 0);
	static uint8_t buf[32768];

	CHECK(c != NULL, "fixture");
	if (!c) {
		fx_close(&x, NULL);
		return;
	}
	c->fps_limit = 1;
	CHECK(client_read(c, 0, (char *)buf, 100) == 0 && c->suspended, "idle at first");
	deliver(x.o, jpeg_frame(1));
	CHECK(!c->suspended, "the first frame is due at once");
	int64_t t0 = now_us();
	check_part(__LINE__, buf, read_part(c, buf, sizeof(buf)), 1);
	int64_t due = c->next_due_us;
	CHECK(due > t0 && due <= now_us() + 1000000, "next due %" PRId64 " us after the part",
	      due - t0);
	CHECK(client_read(c, 0, (char *)buf, 100) == 0 && c->suspended, "idle after the part");
	deliver(x.o, jpeg_frame(2)); /* about a period early */
	CHECK(c->suspended, "a frame a period early was taken");
	c->next_due_us = due = now_us() + 300000; /* as if 0.7 s had passed */
	deliver(x.o, jpeg_frame(3));
	CHECK(!c->suspended, "a frame 300 ms early (room: 500 ms) was held back");
	check_part(__LINE__, buf, read_part(c, buf, sizeof(buf)), 3);
	CHECK(c->next_due_us == due + 1000000, "next due moved by %" PRId64 " us, want a period",
	      c->next_due_us - due);
	CHECK(client_read(c, 0, (char *)buf, 100) == 0 && c->suspended, "idle after the part");
	c->next_due_us = now_us() + 800000;
	deliver(x.o, jpeg_frame(4));
	CHECK(c->suspended, "a frame 800 ms early (room: 500 ms) was taken");
	CHECK(c->frames == 2 && c->skipped == 1, "frames %" PRIu64 ", skipped %" PRIu64 " (want 2, 1)", c->frames,
	      c->skipped);
	fx_close(&x, c);
	CHECK(released == 4, "released %u of 4 frames", released);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the daemon: sendfile has no MSG_NOSIGNAL */
	if (make_jpegs() < 0) {
		printf("client.make_jpegs: FAIL\n");
		return 1;
	}
	RUN("client", plain_whole_part);
	RUN("client", plain_partial_and_skip);
	RUN("client", plain_peer_gone);
	RUN("client", plain_stall);
	RUN("client", hold_age);
	RUN("client", hold_memory);
	RUN("client", tls_copy_and_skip);
	RUN("client", tls_hold_age);
	RUN("client", tls_fps_limit);
	RUN("client", h264_key_frames);
	RUN("client", h264_join_kept_gop);
	RUN("client", h264_join_new_gop);
	RUN("client", h264_mode_change_drops_gop);
	RUN("client", h264_join_idr_rate);
	CHECK_EXIT();
}
