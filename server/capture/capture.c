/* One camera on the event loop: opens its source (server/capture/source.h), keeps the
 * state machine absent -> idle -> streaming -> error/retry with exponential
 * backoff, lends dequeued buffers as refcounted frames and re-queues them
 * when the last reference goes, copies instead of lending when too few
 * buffers would stay queued, counts drops/errors/copies, detects stalls and
 * stops streaming when nobody watches.
 *
 * Threads: everything runs on the loop thread except frame release, which may
 * come from a worker. A release only pushes the slot onto a mutex-protected
 * return list and activates an event; the loop re-queues. The process must
 * call evthread_use_pthreads() before creating the event_base.
 *
 * This file is the state machine and streaming; the sessions and the slots
 * lent as frames are capture_lend.c, the getters, controls and inputs
 * capture_access.c, what they share capture_int.h. */
#define LOG_PREFIX "capture: "
#include "server/capture/capture_int.h"
#include "server/capture/testsrc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fmt.h"
#include "common/h264.h"
#include "common/jpeg.h"
#include "common/log.h"
#include "common/pool.h"

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void add_ms(struct event *ev, int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	if (ms < 0)
		tv = (struct timeval){ 0, 0 };
	event_add(ev, &tv);
}

/* ---- source selection ---- */

/* v4l2src.c may be missing from a build (another helper owns it); a weak
 * reference keeps the test and fault sources usable without it. */
extern const struct vc_src_ops vc_src_v4l2 __attribute__((weak));

const struct vc_src_ops *vc_src_for_path(const char *path)
{
	if (!strcmp(path, "test") || !strncmp(path, "test:", 5))
		return &vc_src_test;
	if (!strncmp(path, "fault:", 6))
		return &vc_src_fault;
	return &vc_src_v4l2 ? &vc_src_v4l2 : NULL;
}

/* ---- state ---- */

const char *vc_cam_state_name(enum vc_cam_state s)
{
	static const char *const names[] = { "absent", "idle", "streaming", "error" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* idle_close (common/conf.h): whether the idle stop closes the device. */
static int closes_when_idle(const struct vc_cam *cam)
{
	if (cam->cfg.idle_stop_ms < 0 || cam->cfg.idle_close == VC_IDLE_CLOSE_NEVER)
		return 0;
	return cam->cfg.idle_close == VC_IDLE_CLOSE_ALWAYS || cam->usb;
}

static void notify(struct vc_cam *cam)
{
	if (cam->on_event)
		cam->on_event(cam->opaque, cam);
}

static void set_state(struct vc_cam *cam, enum vc_cam_state s)
{
	if (cam->state == s)
		return;
	log_info("%s (%s): %s -> %s", cam->id, cam->path, vc_cam_state_name(cam->state),
		 vc_cam_state_name(s));
	cam->state = s;
	if (s == VC_CAM_ABSENT)
		cam->n_learned = 0; /* what comes back may be another camera */
	/* copies of a mode's size wait for the next frames only while streaming */
	if (s == VC_CAM_IDLE || s == VC_CAM_ABSENT)
		vc_pool_drop_idle(cam->pool);
	notify(cam);
}

static void start_stream(struct vc_cam *cam);
static void try_open(evutil_socket_t fd, short what, void *arg);
static void schedule_retry(struct vc_cam *cam);
static void restart(struct vc_cam *cam, int reopen);

/* ---- streaming ---- */

static int floor_bufs(unsigned n)
{
	unsigned f = (n + 3) / 4;

	return f ? (int)f : 1;
}

/* Whether a dequeued buffer holds a whole picture. A JPEG must parse (camera
 * MJPEG arrives corrupt, truncated or empty after USB trouble); its
 * bytesused is trimmed to the JPEG itself (drivers and v4l2loopback may
 * report the whole buffer), so consumers can pass it through as is, and
 * what the parse found goes to *jf for the frame (zero for raw formats).
 * H.264 (a camera's own, passed through): a buffer must hold a coded slice;
 * *key says it holds an IDR picture (its SPS/PPS may be missing: the
 * output adds the last ones seen). Parameter sets in a buffer of their own
 * are dropped with it (UVC cameras send them with the IDR). */
static int buffer_ok(const struct vc_src_format *fmt, struct vc_src_buf *b,
		     struct vc_frame_jpeg *jf, uint8_t *key)
{
	const struct vc_geom *g = &fmt->geom;

	if (b->flags & VC_SRC_BUF_ERROR)
		return 0;
	if (fmt->fmt == vc_h264_fmt()) {
		struct vc_h264_au au;

		vc_h264_scan(b->mem[0], b->bytesused[0], &au);
		*key = (uint8_t)(au.idr != 0);
		return au.has_slice; /* parameter sets alone would be a frame without a picture */
	}
	if (fmt->fmt->layout == VC_LAYOUT_COMPRESSED) {
		struct vc_jpeg_info info;

		if (b->bytesused[0] == 0 || vc_jpeg_parse(b->mem[0], b->bytesused[0], &info) < 0)
			return 0;
		b->bytesused[0] = info.size;
		*jf = (struct vc_frame_jpeg){ 1, info.has_dht, info.sos_off };
		return 1;
	}
	for (int p = 0; p < g->color_planes && p < 3; p++) {
		const struct vc_plane_geom *pg = &g->plane[p];
		if (pg->offset + pg->size > b->bytesused[pg->mem])
			return 0;
	}
	return 1;
}

static void deliver(struct vc_cam *cam, struct session *s, const struct vc_src_buf *b,
		    const struct vc_frame_jpeg *jf, uint8_t key)
{
	struct vc_frame *f;
	int lend;

	pthread_mutex_lock(&cam->rq->mu);
	/* Keep a floor of queued buffers: lending this one must leave at least
	 * floor_bufs() with the driver, else consumers get a copy. */
	lend = (int)s->n_bufs - (int)s->lent - 1 >= floor_bufs(s->n_bufs);
	if (lend) {
		s->lent++;
		cam->rq->total_lent++;
	}
	pthread_mutex_unlock(&cam->rq->mu);

	uint8_t *mem[3] = { b->mem[0], b->mem[1], b->mem[2] };
	f = vc_frame_wrap(s->fmt.fmt, &s->fmt.geom, mem, b->bytesused,
			  lend ? cam_slot_release : NULL, lend ? &s->slots[b->index] : NULL);
	if (f) {
		f->color = s->fmt.color;
		f->field = b->field ? b->field : s->fmt.field;
		f->seq = b->seq;
		f->ts_us = b->ts_us ? b->ts_us : mono_us();
		f->ts_real_us = real_us() - (mono_us() - f->ts_us);
		f->jpeg = *jf;
		f->key = key;
		if (lend && s->src->ops->dmabuf) /* zero-copy hand-over to an M2M encoder */
			f->n_dmabuf = (uint8_t)s->src->ops->dmabuf(s->src, b->index, f->dmabuf);
	}
	if (f && !lend) {
		struct vc_frame *c = vc_pool_copy(cam->pool, f);
		vc_frame_unref(f);
		f = c;
		cam->st.copies++;
	}
	if (!lend || !f) {
		int ret = s->src->ops->queue(s->src, b->index);
		if (ret < 0 && cam_is_gone(ret)) {
			vc_frame_unref(f);
			if (lend) { /* the wrap failed: undo the lend */
				pthread_mutex_lock(&cam->rq->mu);
				s->lent--;
				cam->rq->total_lent--;
				pthread_mutex_unlock(&cam->rq->mu);
			}
			cam_device_gone(cam, ret);
			return;
		}
		if (!f) {
			if (lend) {
				pthread_mutex_lock(&cam->rq->mu);
				s->lent--;
				cam->rq->total_lent--;
				pthread_mutex_unlock(&cam->rq->mu);
			}
			cam->st.errors++;
			return;
		}
	}
	cam->st.frames++;
	cam->fps_n++;
	/* the capture's own timeline (driver sequence, capture time, dequeue
	 * time): what a client's gap is measured against (tests/vm/day.sh) */
	log_debug("%s: frame seq %llu ts %lld.%06lld at %.6f", cam->id,
		  (unsigned long long)f->seq, (long long)(f->ts_real_us / 1000000),
		  (long long)(f->ts_real_us % 1000000), (double)real_us() / 1e6);
	if (cam->on_frame)
		cam->on_frame(cam->opaque, f);
	vc_frame_unref(f);
}

static void arm_frame_timer(struct vc_cam *cam)
{
	struct session *s = cam->sess;

	if (!s || !cam->streaming || s->src->ops->fd(s->src) >= 0)
		return;
	int64_t due = s->src->ops->next_due(s->src);
	if (due < 0)
		return;
	int64_t d = due - mono_us();
	struct timeval tv = { 0, 0 };
	if (d > 0)
		tv = (struct timeval){ (time_t)(d / 1000000), (suseconds_t)(d % 1000000) };
	event_add(cam->frame_ev, &tv);
}

static void poll_events(struct vc_cam *cam)
{
	struct session *s = cam->sess;
	struct vc_src_event ev;

	while (s && s == cam->sess && s->src->ops->get_event &&
	       s->src->ops->get_event(s->src, &ev) == 1) {
		if (ev.type == VC_SRC_EV_SOURCE_CHANGE) {
			log_info("%s: source changed; renegotiating", cam->id);
			cam->was_failed = 1;
			restart(cam, 1); /* reopening re-reads caps and the mode */
			return;
		}
		if (ev.type == VC_SRC_EV_EOS)
			cam->last_frame_us = 0; /* the stall check restarts it */
	}
}

static void on_frame_ready(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;
	struct session *s = cam->sess;

	(void)fd;
	(void)what;
	int drained = 0;

	/* Bounded burst: never more than the buffer count per wake-up. */
	for (unsigned i = 0; s && s == cam->sess && cam->streaming && i < s->n_bufs; i++) {
		struct vc_src_buf b;
		int ret = s->src->ops->dequeue(s->src, &b);

		if (ret == -EAGAIN) {
			drained = 1;
			break;
		}
		if (ret < 0) {
			if (cam_is_gone(ret)) {
				cam_device_gone(cam, ret);
			} else {
				log_warn("%s: DQBUF: %s", cam->id, strerror(-ret));
				cam->st.errors++;
			}
			return;
		}
		if (b.index >= s->n_bufs) {
			cam->st.errors++;
			continue;
		}
		if (cam->have_seq && b.seq > cam->last_seq + 1)
			cam->st.dropped += b.seq - cam->last_seq - 1;
		cam->have_seq = 1;
		cam->last_seq = b.seq;
		cam->last_frame_us = mono_us();
		struct vc_frame_jpeg jf = { 0 };
		uint8_t key = 0;

		if (!buffer_ok(&s->fmt, &b, &jf, &key)) {
			cam->st.errors++;
			log_debug("%s: discarded buffer %u (seq %llu)", cam->id, b.index,
				  (unsigned long long)b.seq);
			ret = s->src->ops->queue(s->src, b.index);
			if (ret < 0 && cam_is_gone(ret)) {
				cam_device_gone(cam, ret);
				return;
			}
			continue;
		}
		deliver(cam, s, &b, &jf, key);
		/* A consumer that did not keep the frame released it just now:
		 * re-queue before the next dequeue so a burst does not look like
		 * consumers holding buffers (and cost copies). */
		pthread_mutex_lock(&cam->rq->mu);
		int returned = cam->rq->head != NULL;
		pthread_mutex_unlock(&cam->rq->mu);
		if (returned)
			cam_on_returns(-1, 0, cam);
	}
	if (s && s == cam->sess)
		poll_events(cam);
	/* Some drivers (v4l2loopback) only register for wake-ups in poll()
	 * when no frame is ready; epoll registers once, when the fd is added,
	 * so a frame ready at STREAMON time meant no wake-up ever again. Re-add
	 * the fd now that DQBUF said EAGAIN: two syscalls per wake-up. */
	if (drained && s && s == cam->sess && cam->streaming && event_get_fd(cam->frame_ev) >= 0) {
		event_del(cam->frame_ev);
		event_add(cam->frame_ev, NULL);
	}
	arm_frame_timer(cam);
}

static void stop_stream(struct vc_cam *cam)
{
	if (!cam->streaming)
		return;
	cam->sess->src->ops->stop(cam->sess->src);
	cam->streaming = 0;
	event_del(cam->frame_ev);
	event_del(cam->tick_ev);
}

static void start_stream(struct vc_cam *cam)
{
	struct session *s = cam->sess;
	unsigned n = 0;
	int ret;

	if (!s || cam->streaming)
		return;
	ret = s->src->ops->start(s->src, cam->cfg.buffers ? cam->cfg.buffers : VC_CONF_DEF_BUFFERS,
				 &n);
	if (ret < 0) {
		if (ret != cam->last_err)
			log_error("%s (%s): start streaming: %s", cam->id, cam->path,
				  strerror(-ret));
		cam->last_err = ret;
		if (cam_is_gone(ret)) {
			cam_device_gone(cam, ret);
		} else {
			cam_retire(cam);
			set_state(cam, VC_CAM_ERROR);
			cam->was_failed = 1;
			schedule_retry(cam);
		}
		return;
	}
	if (n > MAX_SLOTS)
		n = MAX_SLOTS; /* never more slots than we can track; extra stay unused */
	s->n_bufs = n;
	cam->streaming = 1;
	cam->have_seq = 0;
	cam->last_frame_us = mono_us();
	cam->fps_t0 = cam->last_frame_us;
	cam->fps_n = 0;
	int fd = s->src->ops->fd(s->src);
	struct event *ev = event_new(cam->base, fd, fd >= 0 ? EV_READ | EV_PERSIST : 0,
				     on_frame_ready, cam);
	if (!ev) {
		s->src->ops->stop(s->src);
		cam->streaming = 0;
		cam_retire(cam);
		set_state(cam, VC_CAM_ERROR);
		schedule_retry(cam);
		return;
	}
	event_free(cam->frame_ev);
	cam->frame_ev = ev;
	if (fd >= 0)
		event_add(cam->frame_ev, NULL);
	else
		arm_frame_timer(cam);
	int tick = cam->cfg.stall_timeout_ms / 4;
	add_ms(cam->tick_ev, tick > 250 ? 250 : tick);
	if (cam->was_failed) {
		cam->st.restarts++;
		cam->was_failed = 0;
		log_info("%s (%s): recovered", cam->id, cam->path);
	}
	cam->last_err = 0;
	cam->backoff_ms = BACKOFF_MIN_MS;
	set_state(cam, VC_CAM_STREAMING);
}

/* Stops streaming and restarts it (or reopens the source) once every lent
 * buffer is back, or after DRAIN_MS at the latest. */
static void restart(struct vc_cam *cam, int reopen)
{
	if (!cam->sess)
		return;
	stop_stream(cam);
	cam->reopen = reopen ? 2 : 1;
	if (cam->sess->lent == 0) {
		cam_after_drain(cam);
		return;
	}
	add_ms(cam->drain_ev, DRAIN_MS);
	notify(cam); /* vc_cam_draining: consumers give back what they keep */
}

/* A device that answers a mode it lists with another (a webcam short of
 * bandwidth for a size, or whose clock rounds the rate): its caps learn the
 * answer, so the mode policy plans for what it gives and does not ask for
 * the same refusal at every choice. Said once: kept over reopens. */
static void learn_answer(struct vc_cam *cam, const struct vc_mode *asked, const struct vc_mode *got)
{
	char a[16], b[16];
	unsigned what = vc_caps_take_answer(&cam->caps, asked, got);

	if (!what)
		return;
	if (cam->n_learned < VC_CAM_LEARNED_MAX) {
		cam->learned[cam->n_learned].asked = *asked;
		cam->learned[cam->n_learned].got = *got;
		cam->n_learned++;
	}
	log_warn("%s: asked for %s %ux%u at %u/%u s, the device runs %s %ux%u at %u/%u s: "
		 "%s, planned for what it gives",
		 cam->id, vc_fourcc_str(asked->fourcc, a), asked->width, asked->height,
		 asked->ival.num, asked->ival.den, vc_fourcc_str(got->fourcc, b), got->width,
		 got->height, got->ival.num, got->ival.den,
		 what & VC_CAPS_SIZE_TAKEN ? "that size is no longer offered"
		 : what & VC_CAPS_IVAL_ADDED ? "its rate is listed instead"
					    : "that rate is no longer offered");
}

/* Caps read afresh from the same device: what it answered before, again. */
static void relearn(struct vc_cam *cam)
{
	for (unsigned i = 0; i < cam->n_learned; i++)
		vc_caps_take_answer(&cam->caps, &cam->learned[i].asked, &cam->learned[i].got);
}

static int apply_mode(struct vc_cam *cam)
{
	struct session *s = cam->sess;
	struct vc_src_format f;
	int ret;

	if (cam->reconf_fn) {
		vc_cam_reconf_fn fn = cam->reconf_fn;

		cam->reconf_fn = NULL;
		ret = fn(s->src, cam->reconf_arg);
		if (ret < 0) {
			log_warn("%s: reconfiguring: %s", cam->id, strerror(-ret));
			if (cam_is_gone(ret))
				return ret;
		}
		/* An input or standard brings its own formats and sizes. */
		vc_caps_clear(&cam->caps);
		cam->n_learned = 0;
		ret = s->src->ops->get_caps(s->src, &cam->caps);
		if (ret < 0)
			log_warn("%s: querying caps: %s", cam->id, strerror(-ret));
	}
	if (!cam->want_pending)
		return s->src->ops->get_format(s->src, &s->fmt);
	ret = s->src->ops->set_mode(s->src, &cam->want, 0, &f);
	if (ret < 0) {
		log_error("%s: set mode: %s", cam->id, strerror(-ret));
		return ret;
	}
	cam->want_pending = 0;
	s->fmt = f;
	learn_answer(cam, &cam->want, &f.mode);
	return 0;
}

void cam_after_drain(struct vc_cam *cam)
{
	int reopen = cam->reopen;

	event_del(cam->drain_ev);
	cam->reopen = 0;
	if (!cam->sess)
		return;
	if (cam->sess->lent == 0 && reopen != 2) {
		/* Same instance: new mode (if any) and stream again. */
		int ret = apply_mode(cam);
		if (ret < 0 && cam_is_gone(ret)) {
			cam_device_gone(cam, ret);
			return;
		}
		cam->fmt = cam->sess->fmt;
		notify(cam);
		if (cam->consumers > 0)
			start_stream(cam);
		else
			set_state(cam, VC_CAM_IDLE);
		return;
	}
	if (cam->sess->lent)
		log_warn("%s: %u buffers still lent; reopening the source", cam->id,
			 cam->sess->lent);
	cam_retire(cam);
	event_active(cam->retry_ev, EV_TIMEOUT, 0);
}

static void on_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;

	(void)fd;
	(void)what;
	if (cam->reopen) {
		cam->reopen = 2;
		cam_after_drain(cam);
	}
}

void cam_device_gone(struct vc_cam *cam, int err)
{
	log_error("%s (%s): device gone: %s", cam->id, cam->path, strerror(-err));
	event_del(cam->frame_ev);
	event_del(cam->tick_ev);
	event_del(cam->drain_ev);
	cam_retire(cam);
	cam->reopen = 0;
	cam->was_failed = 1;
	cam->last_err = err;
	set_state(cam, VC_CAM_ABSENT);
	schedule_retry(cam);
}

/* Housekeeping while streaming: stall detection, fps, source events. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;
	int64_t now = mono_us();

	(void)fd;
	(void)what;
	if (!cam->streaming)
		return;
	if (now - cam->fps_t0 >= 1000000) {
		cam->st.fps = (double)cam->fps_n * 1e6 / (double)(now - cam->fps_t0);
		cam->fps_t0 = now;
		cam->fps_n = 0;
	}
	/* Never shorter than three frame intervals (slow scientific cameras,
	 * 1 fps time-lapse modes). */
	const struct vc_fract *iv = &cam->fmt.mode.ival;
	int64_t stall_us = (int64_t)cam->cfg.stall_timeout_ms * 1000;
	if (iv->den && (int64_t)iv->num * 3000000 / iv->den > stall_us)
		stall_us = (int64_t)iv->num * 3000000 / iv->den;
	if (now - cam->last_frame_us > stall_us) {
		log_warn("%s (%s): no frame for %lld ms; restarting", cam->id, cam->path,
			 (long long)(stall_us / 1000));
		cam->was_failed = 1;
		restart(cam, 1);
		return;
	}
	poll_events(cam);
	if (cam->streaming) {
		int tick = cam->cfg.stall_timeout_ms / 4;
		add_ms(cam->tick_ev, tick > 250 ? 250 : tick);
	}
}

/* ---- open / retry ---- */

static void schedule_retry(struct vc_cam *cam)
{
	add_ms(cam->retry_ev, cam->backoff_ms);
	cam->backoff_ms = cam->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : cam->backoff_ms * 2;
}

/* An open that cannot stream: closed again, retried with the backoff. */
static void open_failed(struct vc_cam *cam, int err)
{
	cam->last_err = err;
	cam_retire(cam);
	set_state(cam, cam_is_gone(err) ? VC_CAM_ABSENT : VC_CAM_ERROR);
	cam->was_failed = 1;
	schedule_retry(cam);
}

static void try_open(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;
	struct session *s;
	struct vc_src *src = NULL;
	int ret;

	(void)fd;
	(void)what;
	if (cam->sess)
		return;
	if (!cam->ops) {
		if (cam->last_err != -ENOSYS)
			log_error("%s (%s): no source for this path in this build", cam->id,
				  cam->path);
		cam->last_err = -ENOSYS;
		set_state(cam, VC_CAM_ERROR);
		schedule_retry(cam);
		return;
	}
	ret = cam->ops->open(cam->path, &src);
	if (ret < 0) {
		if (ret != cam->last_err)
			log_warn("%s (%s): open: %s; retrying", cam->id, cam->path,
				 strerror(-ret));
		cam->last_err = ret;
		set_state(cam, ret == -ENOENT || cam_is_gone(ret) ? VC_CAM_ABSENT : VC_CAM_ERROR);
		schedule_retry(cam);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		cam->ops->close(src);
		schedule_retry(cam);
		return;
	}
	s->src = src;
	s->rq = cam->rq;
	for (unsigned i = 0; i < MAX_SLOTS; i++) {
		s->slots[i].sess = s;
		s->slots[i].index = i;
	}
	cam->sess = s;
	int busy = 0;
	if (cam->cfg.input >= 0 && src->ops->input_set) {
		ret = src->ops->input_set(src, (uint32_t)cam->cfg.input);
		busy = ret == -EBUSY;
		if (ret < 0 && !busy)
			log_warn("%s: input %d: %s", cam->id, cam->cfg.input, strerror(-ret));
	}
	ret = 0;
	for (unsigned i = 0; i < VC_CAM_KEEP_MAX && cam->keep[i].fn && !cam_is_gone(ret) && !busy;
	     i++) {
		ret = cam->keep[i].fn(src, cam->keep[i].arg);
		busy = ret == -EBUSY;
		if (ret < 0 && !busy)
			log_warn("%s: re-applying a kept setting: %s", cam->id, strerror(-ret));
	}
	if (busy) {
		/* Another handle holds the device's buffers (the camera this one
		 * replaced on a reload, its last frames still out; or another
		 * program): input and signal cannot be set now, and the sizes of
		 * a half-configured device would be the wrong ones. Again soon. */
		if (cam->last_err != -EBUSY)
			log_warn("%s (%s): busy (another handle holds its buffers); retrying",
				 cam->id, cam->path);
		vc_caps_clear(&cam->caps); /* no mode is planned against them meanwhile */
		open_failed(cam, -EBUSY);
		return;
	}
	/* caps after the input and its standard/timings: they bring their sizes */
	vc_caps_clear(&cam->caps);
	int err = src->ops->get_caps(src, &cam->caps);
	if (err < 0)
		log_warn("%s: querying caps: %s", cam->id, strerror(-err));
	relearn(cam);
	ret = cam_is_gone(ret) ? ret : apply_mode(cam);
	if (ret < 0) {
		open_failed(cam, ret);
		return;
	}
	cam->fmt = s->fmt;
	cam->have_info = vc_v4l2_info(src, &cam->info) == 0;
	cam->usb = cam->have_info && strncmp(cam->info.bus, "usb-", 4) == 0;
	if (cam->consumers > 0) {
		start_stream(cam);
	} else {
		cam->last_err = 0;
		cam->backoff_ms = BACKOFF_MIN_MS;
		if (cam->was_failed) {
			cam->st.restarts++;
			cam->was_failed = 0;
		}
		set_state(cam, VC_CAM_IDLE);
		if (closes_when_idle(cam))
			add_ms(cam->idle_ev, cam->cfg.idle_stop_ms);
	}
	notify(cam);
}

static void on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;

	(void)fd;
	(void)what;
	if (cam->consumers == 0 && cam->streaming) {
		stop_stream(cam);
		set_state(cam, VC_CAM_IDLE);
	}
	/* Closed too, so the kernel may suspend it; not while a reopen or a
	 * reconfiguration is under way (they need the open source). */
	if (cam->consumers == 0 && !cam->streaming && cam->sess && !cam->reopen &&
	    !cam->reconf_fn && closes_when_idle(cam)) {
		struct vc_src *src = cam->sess->src;

		/* kept for the mode policy, which asks on every decision */
		cam->have_input = src->ops->input_get && src->ops->input_enum &&
				  src->ops->input_get(src, &cam->input_idx) == 0 &&
				  src->ops->input_enum(src, cam->input_idx, &cam->input) == 0;
		cam_retire(cam);
		cam->parked = 1;
		log_debug("%s (%s): idle, device closed", cam->id, cam->path);
	}
}

int cam_wake(struct vc_cam *cam)
{
	if (cam->parked && !cam->sess) {
		cam->parked = 0;
		event_del(cam->retry_ev);
		try_open(-1, 0, cam);
	}
	return cam->sess ? 0 : -ENODEV;
}

static void on_apply(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;

	(void)fd;
	(void)what;
	if ((!cam->want_pending && !cam->reconf_fn) || !cam->sess)
		return; /* applied when the source opens */
	if (cam->streaming || cam->reopen)
		restart(cam, 0);
	else {
		cam->reopen = 1;
		cam_after_drain(cam);
	}
}

/* A test pattern's spec (test:1280x720@30:YUYV, also the inner source of a
 * fault script) is its configuration: what it gives fills the camera's
 * preferred mode where the config and flags left it open, so clients that
 * name nothing get the picture the command line asked for. */
static void spec_defaults(const char *path, struct vc_mode *m)
{
	const char *semi = strrchr(path, ';');
	const char *spec = !strncmp(path, "fault:", 6) ? (semi ? semi + 1 : NULL) : path;
	struct vc_testsrc_opts o;

	if (!spec || (strcmp(spec, "test") && strncmp(spec, "test:", 5)) ||
	    vc_testsrc_parse(spec, &o, NULL, 0) < 0)
		return;
	if (!m->fourcc)
		m->fourcc = o.mode.fourcc;
	if (!m->width || !m->height) {
		m->width = o.mode.width;
		m->height = o.mode.height;
	}
	if (!m->ival.num || !m->ival.den)
		m->ival = o.mode.ival;
}

/* ---- public ---- */

int vc_cam_new(struct event_base *base, const struct vc_conf_cam *cfg, struct vc_cam **out)
{
	const struct vc_conf_key *idle = vc_conf_key_find("idle_stop_ms", 1);
	struct vc_cam *cam = calloc(1, sizeof(*cam));

	if (!cam)
		return -ENOMEM;
	cam->base = base;
	vc_conf_cam_init(&cam->cfg);
	if (vc_conf_cam_copy(&cam->cfg, cfg) < 0)
		goto fail;
	if (!cam->cfg.name)
		cam->cfg.name = strdup("0");
	if (!cam->cfg.device)
		cam->cfg.device = strdup("test");
	cam->id = cam->cfg.name;
	cam->path = cam->cfg.device;
	cam->rq = calloc(1, sizeof(*cam->rq));
	cam->pool = vc_pool_new(4);
	if (!cam->id || !cam->path || !cam->rq || !cam->pool)
		goto fail;
	pthread_mutex_init(&cam->rq->mu, NULL);
	if (cam->cfg.stall_timeout_ms <= 0)
		cam->cfg.stall_timeout_ms = VC_CONF_DEF_STALL_TIMEOUT_MS;
	if (cam->cfg.idle_stop_ms == idle->unset)
		cam->cfg.idle_stop_ms = (int)idle->def;
	cam->ops = vc_src_for_path(cam->path);
	cam->backoff_ms = BACKOFF_MIN_MS;
	if (cfg->mode.fourcc || cfg->mode.width || cfg->mode.ival.den) {
		cam->want = cfg->mode;
		cam->want_pending = 1;
	}
	spec_defaults(cam->path, &cam->cfg.mode);
	cam->retry_ev = evtimer_new(base, try_open, cam);
	cam->frame_ev = evtimer_new(base, on_frame_ready, cam);
	cam->tick_ev = evtimer_new(base, on_tick, cam);
	cam->idle_ev = evtimer_new(base, on_idle, cam);
	cam->apply_ev = evtimer_new(base, on_apply, cam);
	cam->drain_ev = evtimer_new(base, on_drain_timeout, cam);
	cam->ret_ev = event_new(base, -1, 0, cam_on_returns, cam);
	if (!cam->retry_ev || !cam->frame_ev || !cam->tick_ev || !cam->idle_ev ||
	    !cam->apply_ev || !cam->drain_ev || !cam->ret_ev)
		goto fail;
	cam->rq->ev = cam->ret_ev;
	cam->state = VC_CAM_ABSENT;
	/* Open from the loop, so callbacks set after new() see every event. */
	event_active(cam->retry_ev, EV_TIMEOUT, 0);
	*out = cam;
	return 0;
fail:
	vc_cam_free(cam);
	return -ENOMEM;
}

void vc_cam_free(struct vc_cam *cam)
{
	int free_rq = 1;

	if (!cam)
		return;
	if (cam->rq) {
		/* Handle returns already queued, then make later ones finish on
		 * their own thread. */
		if (cam->ret_ev)
			cam_on_returns(-1, 0, cam);
		cam_retire(cam);
		pthread_mutex_lock(&cam->rq->mu);
		cam->rq->ev = NULL;
		free_rq = cam->rq->total_lent == 0;
		pthread_mutex_unlock(&cam->rq->mu);
		if (free_rq)
			cam_retq_free(cam->rq);
	}
	struct event *evs[] = { cam->retry_ev, cam->frame_ev, cam->tick_ev, cam->idle_ev,
				cam->apply_ev, cam->drain_ev, cam->ret_ev };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	vc_caps_clear(&cam->caps);
	vc_pool_free(cam->pool);
	vc_conf_cam_clear(&cam->cfg);
	free(cam);
}

void vc_cam_set_callbacks(struct vc_cam *cam, vc_cam_frame_cb on_frame, vc_cam_event_cb on_event,
			  void *opaque)
{
	cam->on_frame = on_frame;
	cam->on_event = on_event;
	cam->opaque = opaque;
}

void vc_cam_acquire(struct vc_cam *cam)
{
	if (cam->consumers++ > 0)
		return;
	event_del(cam->idle_ev);
	if (cam->parked) {
		/* opened from the loop, as at start: try_open streams it */
		cam->parked = 0;
		cam->backoff_ms = BACKOFF_MIN_MS;
		event_del(cam->retry_ev);
		event_active(cam->retry_ev, EV_TIMEOUT, 0);
		return;
	}
	if (cam->sess && !cam->streaming && !cam->reopen)
		start_stream(cam);
}

void vc_cam_release(struct vc_cam *cam)
{
	if (cam->consumers <= 0 || --cam->consumers > 0)
		return;
	if (cam->cfg.idle_stop_ms >= 0)
		add_ms(cam->idle_ev, cam->cfg.idle_stop_ms);
}

int vc_cam_set_mode(struct vc_cam *cam, const struct vc_mode *m)
{
	if (m->fourcc && !vc_capture_fmt(m->fourcc))
		return -EINVAL;
	if (m->fourcc && cam->caps.n_fmts && !vc_caps_find(&cam->caps, m->fourcc))
		return -EINVAL;
	cam->want = *m;
	cam->want_pending = 1;
	event_active(cam->apply_ev, EV_TIMEOUT, 0);
	return 0;
}
