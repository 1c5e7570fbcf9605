/* Placeholder pictures for an absent camera. An <img src=/stream> in a
 * printer or home-automation page stays broken after a 503 until someone
 * reloads it, so while a camera is absent (or failed and retrying) /stream
 * answers 200 and sends, about once a second, a JPEG saying which camera it
 * is and what state it is in; when the camera comes, the same connection
 * carries live frames (hub.c re-plans the provisional output made here and
 * splits its clients by what each asked; budget.c ends those that do not
 * fit). One picture per camera and second, at one size (the camera's
 * configured or default size, whatever the clients ask) and quality,
 * encoded on the worker pool and shared by reference with every stream
 * output of the camera: 60 clients asking 4096x4096 once made 60 encodes
 * a second on the event loop and starved the live cameras (issue 21). */
#define LOG_PREFIX "stream:"
#include "server/stream/stream_int.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/image.h"
#include "common/jpeg.h"
#include "common/log.h"
#include "server/capture/testsrc_draw.h"
#include "server/workers.h"

#define PH_INTERVAL_MS 1000
#define PH_QUALITY 70
#define PH_DEFAULT_W 640
#define PH_DEFAULT_H 480
#define PH_LINES 4

struct placeholder {
	struct event *timer;
	struct vc_jpeg *jpeg;      /* the loop thread's encoder (snapshots, unit tests) */
	uint64_t seq;              /* placeholder pictures made, for X-Frame-Seq */
};

/* What a picture says, made on the loop thread (the camera's state is
 * read there only), drawn and encoded on a worker. */
struct ph_text {
	char l[PH_LINES][80];
};

static int cam_away(const struct vc_cam *cam)
{
	enum vc_cam_state st = vc_cam_get_state(cam);

	return st == VC_CAM_ABSENT || st == VC_CAM_ERROR;
}

static uint32_t clamp_dim(uint32_t v)
{
	return v < 16 ? 16 : v > 4096 ? 4096 : v;
}

void placeholder_size(const struct hub *h, uint32_t *w, uint32_t *hgt)
{
	const struct vc_conf_cam *cc = vc_cam_get_config(h->cam);
	uint32_t rw = PH_DEFAULT_W, rh = PH_DEFAULT_H;
	struct vc_mode def;

	/* the size the camera is configured for, else the one it defaults
	 * to, else the one it last gave: a client's plain URL then sees the
	 * size it will get once frames come */
	if (cc->mode.width && cc->mode.height) {
		rw = cc->mode.width;
		rh = cc->mode.height;
	} else if (policy_default_mode(h, &def) == 0 && def.width && def.height) {
		rw = def.width;
		rh = def.height;
	} else if (h->target.width && h->target.height) {
		rw = h->target.width;
		rh = h->target.height;
	}
	*w = clamp_dim(rw) & ~1u;
	*hgt = clamp_dim(rh) & ~1u;
}

/* Draws the lines centred on a dark grey ground, each as large as fits. */
static void draw(const struct vc_i420_pic *pc, const char *const *lines, size_t n)
{
	memset(pc->p[0], 40, (size_t)pc->stride[0] * pc->h);
	memset(pc->p[1], 128, (size_t)pc->stride[1] * pc->ch);
	memset(pc->p[2], 128, (size_t)pc->stride[2] * pc->ch);
	/* a line of k characters is (6k + 1) x 9 font pixels of s x s each */
	unsigned by_w = pc->w / 200, by_h = pc->h / (unsigned)(12 * n + 2);
	unsigned big = by_w < by_h ? by_w : by_h;
	if (!big)
		big = 1;
	uint32_t y = pc->h / 2 > (uint32_t)(6 * n * big) ? pc->h / 2 - (uint32_t)(6 * n * big) : 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(lines[i]);
		unsigned s = big;
		while (s > 1 && (uint32_t)(6 * k + 1) * s > pc->w)
			s--;
		uint32_t lw = (uint32_t)(6 * k + 1) * s;
		vc_testsrc_draw_text(pc, lw < pc->w ? (pc->w - lw) / 2 : 0, y, s, lines[i]);
		y += 12 * big;
	}
}

static void text_of(const struct hub *h, struct ph_text *t)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	enum vc_cam_state st = h->cam ? vc_cam_get_state(h->cam) : VC_CAM_ABSENT;
	snprintf(t->l[0], sizeof(t->l[0]), "camera %s", h->cam ? vc_cam_id(h->cam) : "?");
	snprintf(t->l[1], sizeof(t->l[1]), "%s, %s", vc_cam_state_name(st),
		 st == VC_CAM_ABSENT || st == VC_CAM_ERROR ? "retrying" : "starting");
	snprintf(t->l[2], sizeof(t->l[2]), "%s", h->cam ? vc_cam_path(h->cam) : "");
	snprintf(t->l[3], sizeof(t->l[3]), "%02d:%02d:%02d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The picture saying t at w x hgt, JPEG-encoded by j into a heap frame
 * (seq and times are set by the caller). Any thread. */
static struct vc_frame *render(struct vc_jpeg *j, const struct ph_text *t, uint32_t w,
			       uint32_t hgt, int quality)
{
	const struct vc_fmt *i420 = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	struct vc_frame *pic = vc_frame_new_fmt(i420, w, hgt);
	size_t cap = vc_jpeg_bound(w, hgt);
	struct vc_frame *f = cap ? vc_frame_new(cap) : NULL;
	struct vc_image img;

	if (!pic || !f || !j || vc_image_from_frame(pic, &img) < 0)
		goto fail;
	const char *const lines[PH_LINES] = { t->l[0], t->l[1], t->l[2], t->l[3] };
	struct vc_i420_pic pc = {
		.p = { img.plane[0], img.plane[1], img.plane[2] },
		.stride = { img.stride[0], img.stride[1], img.stride[2] },
		.w = w, .h = hgt, .cw = (w + 1) / 2, .ch = (hgt + 1) / 2,
	};
	draw(&pc, lines, PH_LINES);
	if (vc_jpeg_encode(j, &img, quality, vc_frame_data(f, 0), cap, &f->bytesused[0]) < 0)
		goto fail;
	vc_frame_unref(pic);
	f->fmt = vc_fmt_by_fourcc(V4L2_PIX_FMT_MJPEG);
	f->geom.width = w;
	f->geom.height = hgt;
	return f;
fail:
	vc_frame_unref(pic);
	vc_frame_unref(f);
	return NULL;
}

/* A picture just made for h: numbered, stamped, kept as h's latest (for
 * clients that join and snapshots that ask within the second). */
static void stamp(struct placeholder *ph, struct hub *h, struct vc_frame *f)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	f->seq = ++ph->seq;
	f->ts_us = now_us();
	f->ts_real_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	vc_frame_unref(h->ph_frame);
	h->ph_frame = vc_frame_ref(f);
}

/* Stream outputs of h that show placeholders: JPEG, with stream clients. */
static int wants_placeholder(const struct output *o)
{
	return o->n_clients && !o->merged && !o->refused && o->plan.out.fourcc == V4L2_PIX_FMT_MJPEG;
}

/* Gives h's picture to every output that shows placeholders (only those
 * without one when fresh_only). Returns how many want placeholders. */
static unsigned publish(struct hub *h, int fresh_only)
{
	unsigned n = 0;

	for (struct output *o = h->outputs; o; o = o->next) {
		if (!wants_placeholder(o))
			continue;
		n++;
		if (h->ph_frame && !(fresh_only && o->latest && o->placeholder))
			output_publish(o, vc_frame_ref(h->ph_frame), 0, 1);
	}
	return n;
}

/* One picture being made on the worker pool for a hub. */
struct ph_job {
	struct vc_streams *s;
	struct hub *h;
	struct ph_text text;
	uint32_t w, hgt;
	struct vc_frame *res;
};

static void job_work(void *arg, unsigned worker)
{
	struct ph_job *j = arg;
	/* a fresh encoder: one job a second per absent camera, and no
	 * encoder is shared between threads */
	struct vc_jpeg *enc = vc_jpeg_new();

	(void)worker;
	j->res = render(enc, &j->text, j->w, j->hgt, PH_QUALITY);
	vc_jpeg_free(enc);
}

static void job_done(void *arg, int status)
{
	struct ph_job *j = arg;
	struct hub *h = j->h;

	h->ph_busy = 0;
	if (!j->s->freeing && status == 0 && j->res && j->s->ph) {
		stamp(j->s->ph, h, j->res);
		if (h->cam && cam_away(h->cam) && publish(h, 0))
			j->s->kick(j->s->http);
	} else if (!j->s->freeing && status == 0 && !j->res && h->cam) {
		log_warn("cam %s: no placeholder picture (out of memory)", vc_cam_id(h->cam));
	}
	vc_frame_unref(j->res);
	free(j);
}

/* Starts making h's next picture (one at a time per hub); without a
 * worker pool (unit tests) makes it here. */
static void make_picture(struct vc_streams *s, struct hub *h)
{
	struct ph_job *j;

	if (h->ph_busy || !(j = calloc(1, sizeof(*j))))
		return;
	j->s = s;
	j->h = h;
	text_of(h, &j->text);
	placeholder_size(h, &j->w, &j->hgt);
	if (s->workers && vc_workers_submit(s->workers, job_work, job_done, j) == 0) {
		h->ph_busy = 1;
		return;
	}
	j->res = render(s->ph->jpeg, &j->text, j->w, j->hgt, PH_QUALITY);
	job_done(j, 0);
}

/* One round: an away camera whose outputs want placeholders gets a new
 * picture (given to them when made). Returns how many outputs want one. */
static unsigned send_round(struct vc_streams *s, struct hub *h)
{
	unsigned n = 0;

	if (!h->cam || !cam_away(h->cam))
		return 0;
	for (const struct output *o = h->outputs; o; o = o->next)
		n += wants_placeholder(o);
	if (n)
		make_picture(s, h);
	return n;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct vc_streams *s = arg;
	unsigned n = 0;

	(void)fd;
	(void)what;
	if (!s->stopping)
		for (size_t i = 0; i < s->n_hubs; i++)
			n += send_round(s, s->hubs[i]);
	if (!n)
		event_del(s->ph->timer); /* nobody waits: kicked again when needed */
}

/* The placeholder state of s, made on first use; NULL on ENOMEM. */
static struct placeholder *ph_get(struct vc_streams *s)
{
	if (!s->ph) {
		struct placeholder *ph = calloc(1, sizeof(*ph));

		if (!ph)
			return NULL;
		ph->timer = event_new(s->base, -1, EV_PERSIST, on_tick, s);
		ph->jpeg = vc_jpeg_new();
		if (!ph->timer || !ph->jpeg) {
			if (ph->timer)
				event_free(ph->timer);
			vc_jpeg_free(ph->jpeg);
			free(ph);
			return NULL;
		}
		s->ph = ph;
	}
	return s->ph;
}

void placeholder_kick(struct hub *h)
{
	struct vc_streams *s = h->s;
	int away_for_good = h->cam && vc_cam_get_state(h->cam) == VC_CAM_ABSENT;

	if (s->stopping || !ph_get(s) || !h->cam || !cam_away(h->cam))
		return;
	/* gone: say so at once (the last picture now, a fresh one when
	 * made). An error (a stall, a restart after a bad buffer) is often
	 * over in a few hundred ms: the first placeholder comes with the tick,
	 * only if the camera is still away then, so a live stream does not
	 * flash a placeholder picture between frames */
	if (away_for_good) {
		if (!publish(h, 1))
			return;
		s->kick(s->http);
		if (!h->ph_frame || now_us() - h->ph_frame->ts_us > PH_INTERVAL_MS * 1000LL)
			make_picture(s, h);
	}
	if (!event_pending(s->ph->timer, EV_TIMEOUT, NULL)) {
		struct timeval tv = { PH_INTERVAL_MS / 1000, (PH_INTERVAL_MS % 1000) * 1000 };

		event_add(s->ph->timer, &tv);
	}
}

void placeholder_plan(const struct hub *h, struct vc_plan *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->steps = VC_STEP_ENCODE;
	placeholder_size(h, &pl->out.width, &pl->out.height);
	pl->out.fourcc = V4L2_PIX_FMT_MJPEG;
	pl->out.quality = PH_QUALITY;
}

struct output *placeholder_output(struct hub *h, const struct vc_request *req)
{
	struct vc_plan pl;

	/* one picture for every client, whatever it asks: one output */
	placeholder_plan(h, &pl);
	/* an output the camera had before it went (same picture) serves
	 * these clients too */
	for (struct output *o = h->outputs; o; o = o->next)
		if (!o->merged && !o->refused && vc_output_equal(&o->plan.out, &pl.out))
			return o;
	struct output *o = output_for_plan(h, req, &pl);
	if (o)
		o->provisional = 1;
	return o;
}

struct vc_frame *placeholder_frame(struct vc_streams *s, struct hub *h)
{
	struct ph_text t;
	uint32_t w, hgt;

	if (!ph_get(s))
		return NULL;
	/* a snapshot within a second of the last picture gets that one: no
	 * encode per request on the loop thread */
	if (h->ph_frame && now_us() - h->ph_frame->ts_us < PH_INTERVAL_MS * 1000LL)
		return vc_frame_ref(h->ph_frame);
	text_of(h, &t);
	placeholder_size(h, &w, &hgt);
	struct vc_frame *f = render(s->ph->jpeg, &t, w, hgt, PH_QUALITY);
	if (f)
		stamp(s->ph, h, f);
	return f;
}

void placeholder_free(struct vc_streams *s)
{
	if (!s->ph)
		return;
	event_free(s->ph->timer);
	vc_jpeg_free(s->ph->jpeg);
	free(s->ph);
	s->ph = NULL;
}
