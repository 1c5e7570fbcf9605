/* The stream memory budget: the bytes an output is estimated to hold, the
 * config keys that set the limits (max_outputs, max_outputs_per_ip,
 * frame_memory, max_size), with their errors and printed form; admission
 * on the test source: a burst of distinct pictures admitted before any
 * allocates stays within frame_memory, counted and allocated, also while
 * more join as frames flow (issue 22); one address gets its share of a
 * camera's outputs, others (another IPv4 address, another /64) theirs. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <linux/videodev2.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "check.h"
#include "common/conf.h"
#include "common/jpeg.h"
#include "common/memstat.h"
#include "server/stream/budget.h"
#include "server/stream/serve_int.h"

static void output_bytes(void)
{
	/* the camera's mode: YUYV 1920x1080, a frame of SRC bytes */
	const struct vc_mode mode = { .fourcc = V4L2_PIX_FMT_YUYV, .width = 1920, .height = 1080 };
	enum { SRC = 1920 * 1080 * 2 };
	const size_t JPEG_720P = vc_jpeg_bound(1280, 720);
	const struct { uint32_t fcc, w, h; unsigned steps; size_t want; int line; } v[] = {
		{ V4L2_PIX_FMT_MJPEG, 1920, 1080, VC_STEP_PASSTHROUGH, 0, __LINE__ },
		/* two results + the converter's hub (4 B/px) + the camera frame (SRC) */
		{ V4L2_PIX_FMT_YUYV, 1920, 1080, VC_STEP_CONVERT, 1920u * 1080 * (2 * 2 + 4) + SRC, __LINE__ },
		{ V4L2_PIX_FMT_RGB24, 1920, 1080, VC_STEP_CONVERT, 1920u * 1080 * (3 * 2 + 4) + SRC, __LINE__ },
		{ V4L2_PIX_FMT_NV12, 640, 480, VC_STEP_CONVERT, 640u * 480 * (2 * 2 + 4) + SRC, __LINE__ }, /* 4:2:2 floor */
		{ V4L2_PIX_FMT_ABGR32, 4096, 4096, VC_STEP_SCALE, 4096u * 4096 * (4 * 2 + 4) + SRC, __LINE__ },
		/* no hub; the JPEG frames at half the encoder's worst case */
		{ V4L2_PIX_FMT_MJPEG, 1280, 720, VC_STEP_ENCODE, JPEG_720P / 2 * 2 + SRC, __LINE__ },
		{ V4L2_PIX_FMT_MJPEG, 1280, 720, VC_STEP_JPEG_XFORM, 1280u * 720, __LINE__ },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_plan p = { .out = { .fourcc = v[i].fcc, .width = v[i].w, .height = v[i].h },
				     .steps = v[i].steps };
		size_t got = budget_output_bytes(&mode, &p);
		CHECK_AT(v[i].line, got == v[i].want, "got %zu want %zu", got, v[i].want);
	}
}

static void conf_keys(void)
{
	const char *ok = "[server]\nmax_outputs = 4\nframe_memory = 32\nmax_size = 1280x720\n"
			 "max_outputs_per_ip = 3\n";
	struct vc_conf *c = NULL;
	char err[512];
	int r = vc_conf_parse(ok, strlen(ok), "t", &c, err, sizeof(err));
	CHECK(r == 0 && c->max_outputs == 4 && c->frame_memory_mb == 32 && c->max_width == 1280 &&
	      c->max_height == 720 && c->max_outputs_per_ip == 3, "parsed: %s", err);
	if (c) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		vc_conf_print(c, f, 0);
		fclose(f);
		CHECK(buf && strstr(buf, "max_outputs = 4\nmax_outputs_per_ip = 3\nframe_memory = 32\n"
				      "max_size = 1280x720\n"),
		      "printed:\n%s", buf ? buf : "");
		free(buf);
	}
	vc_conf_free(c);
	static const char *const bad[] = { "max_outputs = 0", "max_outputs = x", "frame_memory = 7",
					   "max_size = 1280", "max_size = 1280x", "max_size = x720",
					   "max_size = 8x8", "max_size = 20000x100", "max_size = 640x480x",
					   "frame_memory = 64M", "max_outputs_per_ip = 0",
					   "max_outputs_per_ip = -1" };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		char text[128];
		c = NULL;
		snprintf(text, sizeof(text), "[server]\n%s\n", bad[i]);
		CHECK(vc_conf_parse(text, strlen(text), "t", &c, err, sizeof(err)) == -EINVAL,
		      "%s refused", bad[i]);
		vc_conf_free(c);
	}
}

/* ---- admission on the test source (no HTTP: users put on outputs) ---- */

struct fixture {
	struct event_base *base;
	struct vc_cam *cam;
	struct vc_streams *s;
	struct hub *h;
};

static void run_ms(struct event_base *b, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

static int fixture_open(struct fixture *fx, const char *path, const struct vc_stream_budget *b)
{
	struct vc_conf_cam cfg = { .name = (char *)"t", .device = (char *)path, .input = -1, .idle_stop_ms = 1000 };

	memset(fx, 0, sizeof(*fx));
	fx->base = event_base_new();
	if (!fx->base || vc_cam_new(fx->base, &cfg, &fx->cam) < 0 ||
	    vc_streams_new(fx->base, NULL, &fx->cam, 1, &fx->s) < 0)
		return -1;
	vc_streams_set_budget(fx->s, b);
	fx->h = hub_for(fx->s, fx->cam);
	for (int i = 0; fx->h && i < 100 && !fx->h->target.fourcc; i++)
		run_ms(fx->base, 20);
	return fx->h && fx->h->target.fourcc ? 0 : -1;
}

/* The clients go; vc_streams_free waits for the jobs in flight, then
 * frees the outputs. */
static void fixture_close(struct fixture *fx)
{
	for (struct output *o = fx->h ? fx->h->outputs : NULL; o; o = o->next) {
		while (o->clients) {
			struct client *c = o->clients;

			DLIST_UNLINK(o->clients, c);
			free(c);
		}
		o->n_clients = 0;
	}
	vc_streams_free(fx->s);
	vc_cam_free(fx->cam);
	if (fx->base)
		event_base_free(fx->base);
}

/* A stream client from `who` asking req, as stream.c admits it: 0 and a
 * client on its output, or budget_admit's refusal. */
static int join(struct hub *h, const struct vc_request *req, const struct vc_guard_addr *who)
{
	char err[256];
	int r = budget_admit(h, req, who, err, sizeof(err));
	struct output *o = r < 0 ? NULL : hub_output_get(h, req, HUB_STREAM);
	struct client *c = o ? calloc(1, sizeof(*c)) : NULL;

	if (r < 0 || !c)
		return r < 0 ? r : -ENOMEM;
	c->out = o;
	c->s = h->s;
	c->wake = (struct stream_wake){ client_on_event, c };
	c->req = *req;
	c->sock = -1;
	if (who)
		c->addr = *who;
	DLIST_PUSH(o->clients, c);
	o->n_clients++;
	hub_acquire(h);
	return 0;
}

static size_t allocated(void)
{
	return vc_mem_held(VC_MEM_FRAMES) + vc_mem_held(VC_MEM_SCRATCH) +
	       vc_mem_held(VC_MEM_COPIES) + vc_mem_held(VC_MEM_GOP);
}

static size_t peak;
static void sample(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (allocated() > peak)
		peak = allocated();
}

/* 30 distinct 640x480 JPEG pictures asked at once, before any output has
 * a frame (so nothing is allocated yet), then 30 more while frames flow,
 * 3 at a time every 100 ms: the estimates admitted stay within
 * frame_memory, and so does what the outputs allocate, sampled every 5 ms.
 * Counted by allocation alone, all 30 of the burst were admitted. */
static void burst(void)
{
	const struct vc_stream_budget b = { .max_outputs = 100, .max_outputs_per_ip = 100,
					    .frame_bytes = (size_t)24 << 20 };
	struct fixture fx;

	if (fixture_open(&fx, "test:640x480@30:YUYV:only", &b) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct vc_request req = { .fourcc = V4L2_PIX_FMT_MJPEG, .width = 640, .height = 480 };
	struct vc_mode m = fx.h->target;
	struct vc_plan plan;
	unsigned n = 0;
	req.quality = 30;
	CHECK(vc_negotiate_plan(&m, &req, &plan) == 0, "plan");
	size_t est = budget_output_bytes(&m, &plan);
	for (unsigned i = 0; i < 30; i++) {
		req.quality = 30 + i;
		n += join(fx.h, &req, NULL) == 0;
	}
	CHECK(n >= 2 && n * est <= b.frame_bytes, "burst: %u of 30 admitted at ~%zu KiB each (%zu KiB "
	      "allowed)", n, est >> 10, b.frame_bytes >> 10);
	struct event *t = event_new(fx.base, -1, EV_PERSIST, sample, NULL);
	struct timeval tv5 = { 0, 5000 };
	event_add(t, &tv5);
	peak = 0;
	unsigned more = 0;
	for (unsigned k = 0; k < 10; k++) {
		run_ms(fx.base, 100);
		for (unsigned i = 0; i < 3; i++) {
			req.quality = 60 + k * 3 + i;
			more += join(fx.h, &req, NULL) == 0;
		}
	}
	run_ms(fx.base, 500);
	unsigned produced = 0;
	for (const struct output *o = fx.h->outputs; o; o = o->next)
		produced += o->latest_n > 0;
	CHECK(produced >= 2, "%u outputs produced frames", produced);
	CHECK(peak > 0 && peak <= b.frame_bytes, "allocated peak %zu KiB, limit %zu KiB (%u + %u admitted)",
	      peak >> 10, b.frame_bytes >> 10, n, more);
	printf("budget.burst: %u of 30 admitted at once (~%zu KiB each), %u of 30 later; allocated "
	       "peak %zu KiB of %zu\n", n, est >> 10, more, peak >> 10, b.frame_bytes >> 10);
	event_free(t);
	fixture_close(&fx);
}

static struct vc_guard_addr key(const char *a)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	struct vc_guard_addr k;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, a, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, a, &s6->sin6_addr) == 1)
		s6->sin6_family = AF_INET6;
	vc_guard_addr_key((struct sockaddr *)&ss, &k);
	return k;
}

/* max_outputs_per_ip = 2 of 8: one address (or /64) gets 2 new pictures,
 * the third is refused (-EUSERS, a 429) while pictures it already has stay
 * free; another address still gets its own. */
static void share(void)
{
	const struct vc_stream_budget b = { .max_outputs = 8, .max_outputs_per_ip = 2,
					    .frame_bytes = (size_t)512 << 20 };
	struct fixture fx;

	if (fixture_open(&fx, "test:640x480@30:YUYV", &b) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct vc_guard_addr a = key("2001:db8:0:1::10"), a2 = key("2001:db8:0:1::99"),
			     c = key("2001:db8:0:2::10"), d = key("192.0.2.7");
	/* distinct pictures: 320x240 at distinct qualities */
	static const struct { const char *who; uint8_t q; int want; int line; } v[] = {
		{ "a", 40, 0, __LINE__ },
		{ "a", 41, 0, __LINE__ },
		{ "a", 42, -EUSERS, __LINE__ },
		{ "a2", 43, -EUSERS, __LINE__ }, /* same /64 */
		{ "a2", 40, 0, __LINE__ },       /* a picture it has: no new output */
		{ "c", 44, 0, __LINE__ },        /* another /64 */
		{ "c", 41, 0, __LINE__ },        /* a's picture: no new output */
		{ "d", 45, 0, __LINE__ },
		{ "d", 46, 0, __LINE__ },
		{ "d", 47, -EUSERS, __LINE__ },
	};
	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		const struct vc_guard_addr *who = !strcmp(v[i].who, "a") ? &a : !strcmp(v[i].who, "a2")
						  ? &a2 : !strcmp(v[i].who, "c") ? &c : &d;
		struct vc_request req = { .fourcc = V4L2_PIX_FMT_MJPEG, .width = 320, .height = 240,
					  .quality = v[i].q };
		int r = join(fx.h, &req, who);
		CHECK_AT(v[i].line, r == v[i].want, "%s q%u: %d, want %d", v[i].who, v[i].q, r,
			 v[i].want);
	}
	fixture_close(&fx);
}

int main(void)
{
	/* before any event_base: the worker pool and capture release frames
	 * from their threads (event_active), which needs the base's lock */
	evthread_use_pthreads();
	RUN("budget", output_bytes);
	RUN("budget", conf_keys);
	RUN("budget", burst);
	RUN("budget", share);
	CHECK_EXIT();
}
