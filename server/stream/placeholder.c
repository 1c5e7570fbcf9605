/* Placeholder pictures for an absent camera. An <img src=/stream> in a
 * printer or home-automation page stays broken after a 503 until someone
 * reloads it, so while a camera is absent (or failed and retrying) /stream
 * answers 200 and sends, about once a second, a JPEG saying which camera it
 * is and what state it is in; when the camera comes, the same connection
 * carries live frames (hub.c re-plans the provisional outputs made here).
 * The text is drawn with the test pattern's font (testsrc_draw.c) and
 * encoded on the loop thread: one small encode per output and second, only
 * while a camera is away. */
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

#define PH_INTERVAL_MS 1000
#define PH_QUALITY 70
#define PH_DEFAULT_W 640
#define PH_DEFAULT_H 480

struct placeholder {
	struct event *timer;
	struct vc_jpeg *jpeg;      /* the loop thread's encoder */
	uint64_t seq;              /* placeholder pictures made, for X-Frame-Seq */
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

void placeholder_size(const struct hub *h, const struct vc_request *req, uint32_t *w,
		      uint32_t *hgt)
{
	const struct vc_cam_config *cc = vc_cam_get_config(h->cam);
	uint32_t rw = PH_DEFAULT_W, rh = PH_DEFAULT_H;

	/* the picture the camera last gave, else the one it is configured
	 * for: a client then sees the size it will get once frames come */
	if (h->target.width && h->target.height) {
		rw = h->target.width;
		rh = h->target.height;
	} else if (cc->preferred.width && cc->preferred.height) {
		rw = cc->preferred.width;
		rh = cc->preferred.height;
	}
	if (req->rotate == 90 || req->rotate == 270) {
		uint32_t t = rw;

		rw = rh;
		rh = t;
	}
	if (req->width && req->height) {
		rw = req->width;
		rh = req->height;
	} else if (req->width) {
		rh = (uint32_t)((uint64_t)rh * req->width / rw);
		rw = req->width;
	} else if (req->height) {
		rw = (uint32_t)((uint64_t)rw * req->height / rh);
		rh = req->height;
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

/* The picture for hub h at w x hgt, JPEG-encoded into a heap frame. */
static struct vc_frame *render(struct placeholder *ph, const struct hub *h, uint32_t w,
			       uint32_t hgt, int quality)
{
	const struct vc_fmt *i420 = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	struct vc_frame *pic = vc_frame_new_fmt(i420, w, hgt);
	size_t cap = vc_jpeg_bound(w, hgt);
	struct vc_frame *f = cap ? vc_frame_new(cap) : NULL;
	struct vc_image img;
	char l1[80], l2[48], l3[80], l4[16];
	struct timespec ts;
	struct tm tm;

	if (!pic || !f || (!ph->jpeg && !(ph->jpeg = vc_jpeg_new())) ||
	    vc_image_from_frame(pic, &img) < 0)
		goto fail;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	enum vc_cam_state st = h->cam ? vc_cam_get_state(h->cam) : VC_CAM_ABSENT;
	snprintf(l1, sizeof(l1), "camera %s", h->cam ? vc_cam_id(h->cam) : "?");
	snprintf(l2, sizeof(l2), "%s, %s", vc_cam_state_name(st),
		 st == VC_CAM_ABSENT || st == VC_CAM_ERROR ? "retrying" : "starting");
	snprintf(l3, sizeof(l3), "%s", h->cam ? vc_cam_path(h->cam) : "");
	snprintf(l4, sizeof(l4), "%02d:%02d:%02d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec);
	const char *const lines[] = { l1, l2, l3, l4 };
	struct vc_i420_pic pc = {
		.p = { img.plane[0], img.plane[1], img.plane[2] },
		.stride = { img.stride[0], img.stride[1], img.stride[2] },
		.w = w, .h = hgt, .cw = (w + 1) / 2, .ch = (hgt + 1) / 2,
	};
	draw(&pc, lines, 4);
	if (vc_jpeg_encode(ph->jpeg, &img, quality, vc_frame_data(f, 0), cap, &f->bytesused[0]) < 0)
		goto fail;
	vc_frame_unref(pic);
	f->fmt = vc_fmt_by_fourcc(V4L2_PIX_FMT_MJPEG);
	f->geom.width = w;
	f->geom.height = hgt;
	f->seq = ++ph->seq;
	f->ts_us = now_us();
	f->ts_real_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	return f;
fail:
	vc_frame_unref(pic);
	vc_frame_unref(f);
	return NULL;
}

/* Stream outputs of h that show placeholders: JPEG, with stream clients. */
static int wants_placeholder(const struct output *o)
{
	return o->n_clients && !o->merged && o->plan.out.fourcc == V4L2_PIX_FMT_MJPEG;
}

/* One round: every output of an away camera with stream clients gets a
 * new picture (only those without one when `fresh_only`). Returns how many
 * outputs want placeholders. */
static unsigned send_round(struct vc_streams *s, struct hub *h, int fresh_only)
{
	unsigned n = 0;

	if (!h->cam || !cam_away(h->cam))
		return 0;
	for (struct output *o = h->outputs; o; o = o->next) {
		if (!wants_placeholder(o))
			continue;
		n++;
		if (fresh_only && o->latest && o->placeholder)
			continue;
		int q = o->plan.out.quality ? o->plan.out.quality : PH_QUALITY;
		struct vc_frame *f = render(s->ph, h, o->plan.out.width, o->plan.out.height, q);
		if (!f) {
			log_warn("cam %s: no placeholder picture (out of memory)", vc_cam_id(h->cam));
			continue;
		}
		output_publish(o, f, 0, 1);
	}
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
			n += send_round(s, s->hubs[i], 0);
	if (n)
		vc_http_wake(s->http);
	else
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
		if (!ph->timer) {
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

	if (s->stopping || !ph_get(s))
		return;
	/* gone: say so at once. An error (a stall, a restart after a bad
	 * buffer) is often over in a few hundred ms: the first placeholder
	 * comes with the tick, only if the camera is still away then, so a
	 * live stream does not flash a placeholder picture between frames */
	if (away_for_good ? send_round(s, h, 1) > 0 : cam_away(h->cam)) {
		if (away_for_good)
			vc_http_wake(s->http);
		if (!event_pending(s->ph->timer, EV_TIMEOUT, NULL)) {
			struct timeval tv = { PH_INTERVAL_MS / 1000, (PH_INTERVAL_MS % 1000) * 1000 };

			event_add(s->ph->timer, &tv);
		}
	}
}

struct output *placeholder_output(struct hub *h, const struct vc_request *req)
{
	struct vc_plan pl = { .steps = VC_STEP_ENCODE, .fps = req->fps };

	placeholder_size(h, req, &pl.out.width, &pl.out.height);
	pl.out.fourcc = V4L2_PIX_FMT_MJPEG;
	pl.out.quality = req->quality;
	pl.out.rotate = req->rotate;
	pl.out.flip = req->flip;
	/* an output the camera had before it went (same picture) serves this
	 * client too: its plan is right for the mode the camera comes back in */
	for (struct output *o = h->outputs; o; o = o->next)
		if (!o->merged && vc_output_equal(&o->plan.out, &pl.out))
			return o;
	struct output *o = output_for_plan(h, req, &pl);
	if (o)
		o->provisional = 1;
	return o;
}

struct vc_frame *placeholder_frame(struct vc_streams *s, const struct hub *h, uint32_t w,
				   uint32_t hgt, int quality)
{
	if (!ph_get(s))
		return NULL;
	return render(s->ph, h, clamp_dim(w) & ~1u, clamp_dim(hgt) & ~1u,
		      quality ? quality : PH_QUALITY);
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
