/* The test-pattern source: behaves like a V4L2 device without one. Owns its
 * heap "driver buffers", a frame clock (frame k is due at start + k *
 * interval), the I420 master picture each frame is drawn into and the
 * converter/JPEG contexts that turn it into the negotiated format.
 *
 * Drawing happens once in I420 (bars, digits); every other format comes from
 * vc_conv_run() / vc_jpeg_encode(), so the source covers the whole table
 * without a line of per-format code.
 *
 * A real driver fills buffers outside our process; to cost the event loop no
 * more than one, a render thread draws the next frame ahead of its due time
 * (render-ahead) and dequeue only hands it out. When the guess was wrong (the
 * loop was late and frames were lost) dequeue renders the right one itself.
 *
 * The drawing itself is testsrc_draw.c, the modes and path options
 * testsrc_mode.c, the H.264 mode's encoder testsrc_h264.c. */
#define LOG_PREFIX "testsrc: "
#include "server/capture/testsrc.h"
#include "server/capture/testsrc_int.h"
#include "server/capture/testsrc_draw.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/convert.h"
#include "common/h264.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "common/memstat.h"
#include "common/log.h"
#include "server/capture/source.h"

#define MAX_BUFS 32
#define DEF_BUFS 4
#define JPEG_QUALITY 85

struct tbuf {
	uint8_t *mem[3];
	int queued; /* with the "driver": may be filled */
	int held;   /* dequeued, caller owns it */
};

/* The one render-ahead job: the loop thread asks (WANTED), the render
 * thread answers (DONE); both under ahead.mu. */
enum { JOB_NONE, JOB_WANTED, JOB_DONE };

struct ahead {
	pthread_t thread;
	int running;      /* thread started (joined in stop_ahead) */
	int quit;
	int state;        /* JOB_* */
	unsigned idx;     /* buffer it renders into (still queued for the loop) */
	uint64_t seq;     /* frame it renders */
	int ret;
	size_t used[3];
	uint32_t flags;   /* VC_SRC_BUF_KEYFRAME */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct testsrc {
	struct vc_src base; /* first: capture.c sees a struct vc_src */
	struct vc_testsrc_opts opts;
	struct vc_src_format cur;
	struct tbuf bufs[MAX_BUFS];
	unsigned n_bufs;
	int streaming;
	int64_t t0_us;    /* when frame 0 was due */
	uint64_t next_seq; /* the next frame the clock produces */
	struct vc_conv *conv;
	struct vc_jpeg *jpeg;
	struct testsrc_h264 *h264; /* the H.264 mode's encoder, made by start */
	uint8_t *master;  /* I420 picture of the current mode */
	struct vc_geom master_geom;
	size_t counted;   /* bytes of bufs + master in memstat's device count */
	/* conv, jpeg, h264 and master are used by the render thread while a job is
	 * WANTED, by the loop thread otherwise: never both at once. */
	struct ahead ah;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* What render() works with: the loop's (or the render thread's) contexts. */
struct rctx {
	struct vc_conv *conv;
	struct vc_jpeg *jpeg;
	struct testsrc_h264 *h264; /* H.264 mode only */
	uint8_t *master;
	const struct vc_geom *mg;
	int still;                 /* H.264: frame 0's picture (others render once) */
	int noise;                 /* fresh noise on every frame (path option "noise") */
};

/* Draws frame seq into master (I420 laid out by mg), then produces the
 * requested format into mem[]; *flags gets VC_SRC_BUF_KEYFRAME for an IDR. */
static int render(const struct rctx *rc, const struct vc_fmt *fmt, const struct vc_geom *g,
		  struct vc_fract ival, uint64_t seq, uint8_t *const mem[3], const size_t cap[3],
		  size_t bytesused[3], uint32_t *flags)
{
	struct vc_image src, dst;
	uint8_t *mm[3] = { rc->master, rc->master, rc->master };
	const struct vc_geom *mg = rc->mg;
	int ret, key = 0;

	*flags = 0;
	memset(bytesused, 0, 3 * sizeof(bytesused[0]));
	if (fmt == vc_h264_fmt()) {
		if (!rc->h264)
			return -EINVAL;
		ret = testsrc_h264_render(rc->h264, rc->master, mg, seq, rc->still, mem[0], cap[0],
					  &bytesused[0], &key);
		*flags = key ? VC_SRC_BUF_KEYFRAME : 0;
		return ret;
	}
	vc_image_from_geom(testsrc_i420(), mg, mm, &src);
	struct vc_i420_pic pc = {
		.p = { src.plane[0], src.plane[1], src.plane[2] },
		.stride = { src.stride[0], src.stride[1], src.stride[2] },
		.w = mg->width, .h = mg->height,
		.cw = (mg->width + 1) / 2, .ch = (mg->height + 1) / 2,
	};
	vc_testsrc_draw_frame(&pc, seq, ival);
	if (rc->noise)
		vc_testsrc_draw_noise(&pc, seq);
	if (fmt->layout == VC_LAYOUT_COMPRESSED) {
		ret = vc_jpeg_encode(rc->jpeg, &src, JPEG_QUALITY, mem[0], cap[0], &bytesused[0]);
		return ret;
	}
	vc_image_from_geom(fmt, g, mem, &dst);
	ret = vc_conv_run(rc->conv, &src, &dst);
	if (ret < 0)
		return ret;
	for (int i = 0; i < g->mem_planes; i++)
		bytesused[i] = g->mem_size[i];
	return 0;
}

/* Renders frames seq .. seq+n-1 of m: into mem[] (cap[]) when cb is NULL
 * (n = 1), else into a buffer of its own handed to cb. */
static int render_run(const struct vc_mode *m, int ps_once, uint32_t bitrate, int noise,
		      uint64_t seq, uint64_t n, uint8_t *const mem[3], const size_t cap[3],
		      size_t bytesused[3], vc_testsrc_frame_cb cb, void *opaque)
{
	struct vc_src_format f;
	struct vc_geom mg;
	int ret = testsrc_make_format(m, &f);

	if (ret < 0)
		return ret;
	ret = vc_fmt_geometry(testsrc_i420(), m->width, m->height, 0, &mg);
	if (ret < 0)
		return ret;
	struct rctx rc = { vc_conv_new(), vc_jpeg_new(), NULL, malloc(mg.sizeimage), &mg, 0,
			   noise };
	uint8_t *own = cb ? malloc(f.geom.sizeimage) : NULL;
	uint8_t *omem[3] = { own, own, own };
	size_t ocap[3] = { f.geom.mem_size[0], f.geom.mem_size[1], f.geom.mem_size[2] }, used[3];
	uint32_t flags;

	for (int p = 1; own && p < f.geom.mem_planes; p++)
		omem[p] = omem[p - 1] + ocap[p - 1];
	if (f.fmt == vc_h264_fmt() && testsrc_h264_new(&f.mode, ps_once, bitrate, &rc.h264) < 0)
		rc.master = (free(rc.master), NULL);
	if (!rc.conv || !rc.jpeg || !rc.master || (cb && !own))
		ret = -ENOMEM;
	for (uint64_t i = 0; ret == 0 && i < n; i++) {
		ret = render(&rc, f.fmt, &f.geom, m->ival, seq + i, cb ? omem : mem,
			     cb ? ocap : cap, cb ? used : bytesused, &flags);
		if (ret == 0 && cb)
			ret = cb(opaque, seq + i, omem, used);
	}
	free(own);
	testsrc_h264_free(rc.h264);
	free(rc.master);
	vc_jpeg_free(rc.jpeg);
	vc_conv_free(rc.conv);
	return ret;
}

int vc_testsrc_render(const struct vc_mode *m, uint64_t seq, uint8_t *const mem[3],
		      const size_t cap[3], size_t bytesused[3])
{
	return render_run(m, 0, 0, 0, seq, 1, mem, cap, bytesused, NULL, NULL);
}

int vc_testsrc_render_run(const struct vc_testsrc_opts *o, uint64_t first, uint64_t n,
			  vc_testsrc_frame_cb cb, void *opaque)
{
	return render_run(&o->mode, o->ps_once, o->bitrate, o->noise, first, n, NULL, NULL, NULL,
			  cb, opaque);
}

/* ---- ops ---- */

static struct testsrc *ts_of(struct vc_src *s)
{
	return (struct testsrc *)s;
}

static void free_bufs(struct testsrc *t)
{
	for (unsigned i = 0; i < t->n_bufs; i++)
		for (int p = 0; p < 3; p++)
			free(t->bufs[i].mem[p]);
	memset(t->bufs, 0, sizeof(t->bufs));
	t->n_bufs = 0;
	vc_mem_count(VC_MEM_DEVICE, -(long long)t->counted);
	t->counted = 0;
}

static struct rctx rctx_of(const struct testsrc *t)
{
	return (struct rctx){ t->conv, t->jpeg, t->h264, t->master, &t->master_geom,
			      t->opts.still, t->opts.noise };
}

/* ---- render-ahead ---- */

static void *ahead_main(void *arg)
{
	struct testsrc *t = arg;
	struct ahead *ah = &t->ah;

	pthread_mutex_lock(&ah->mu);
	for (;;) {
		while (!ah->quit && ah->state != JOB_WANTED)
			pthread_cond_wait(&ah->cv, &ah->mu);
		if (ah->quit)
			break;
		unsigned idx = ah->idx;
		uint64_t seq = ah->seq;
		size_t used[3];
		uint32_t flags;
		struct rctx rc = rctx_of(t);

		pthread_mutex_unlock(&ah->mu);
		int ret = render(&rc, t->cur.fmt, &t->cur.geom, t->cur.mode.ival, seq,
				 t->bufs[idx].mem, t->cur.geom.mem_size, used, &flags);
		pthread_mutex_lock(&ah->mu);
		ah->ret = ret;
		ah->flags = flags;
		memcpy(ah->used, used, sizeof(used));
		ah->state = JOB_DONE;
		pthread_cond_broadcast(&ah->cv);
	}
	pthread_mutex_unlock(&ah->mu);
	return NULL;
}

/* Without the thread (still mode, or it could not start) dequeue renders
 * itself: slower for the loop, same frames. */
static void start_ahead(struct testsrc *t)
{
	struct ahead *ah = &t->ah;
	int ret;

	ah->quit = 0;
	ah->state = JOB_NONE;
	if (t->opts.still && t->cur.fmt != vc_h264_fmt())
		return;
	ret = pthread_create(&ah->thread, NULL, ahead_main, t);
	if (ret) {
		log_warn("no render thread (%s): rendering on the loop", strerror(ret));
		return;
	}
	ah->running = 1;
}

static void stop_ahead(struct testsrc *t)
{
	struct ahead *ah = &t->ah;

	if (!ah->running)
		return;
	pthread_mutex_lock(&ah->mu);
	ah->quit = 1;
	pthread_cond_broadcast(&ah->cv);
	pthread_mutex_unlock(&ah->mu);
	pthread_join(ah->thread, NULL);
	ah->running = 0;
	ah->state = JOB_NONE;
}

/* Loop thread: asks for the frame the clock produces next, in a queued
 * buffer, unless a job is already out or every buffer is held. */
static void want_ahead(struct testsrc *t)
{
	struct ahead *ah = &t->ah;

	if (!ah->running)
		return;
	pthread_mutex_lock(&ah->mu);
	for (unsigned i = 0; ah->state == JOB_NONE && i < t->n_bufs; i++)
		if (t->bufs[i].queued) {
			ah->idx = i;
			ah->seq = t->next_seq;
			ah->state = JOB_WANTED;
			pthread_cond_signal(&ah->cv);
		}
	pthread_mutex_unlock(&ah->mu);
}

/* Loop thread: waits for the job out, if any, and takes it when it holds
 * frame seq (returns 1 with *idx, *ret, used[], *flags); 0 = render it
 * yourself. */
static int take_ahead(struct testsrc *t, uint64_t seq, unsigned *idx, int *ret, size_t used[3],
		      uint32_t *flags)
{
	struct ahead *ah = &t->ah;
	int hit = 0;

	if (!ah->running)
		return 0;
	pthread_mutex_lock(&ah->mu);
	while (ah->state == JOB_WANTED)
		pthread_cond_wait(&ah->cv, &ah->mu);
	if (ah->state == JOB_DONE && ah->seq == seq && t->bufs[ah->idx].queued) {
		*idx = ah->idx;
		*ret = ah->ret;
		memcpy(used, ah->used, 3 * sizeof(used[0]));
		*flags = ah->flags;
		hit = 1;
	}
	ah->state = JOB_NONE;
	pthread_mutex_unlock(&ah->mu);
	return hit;
}

static int ts_open(const char *path, struct vc_src **out)
{
	struct testsrc *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	t->base.ops = &vc_src_test;
	char why[128];

	ret = vc_testsrc_parse(path, &t->opts, why, sizeof(why));
	if (ret < 0) {
		log_error("%s: bad test pattern: %s", path, why);
		free(t);
		return ret;
	}
	ret = testsrc_make_format(&t->opts.mode, &t->cur);
	if (ret < 0) {
		free(t);
		return ret;
	}
	t->conv = vc_conv_new();
	t->jpeg = vc_jpeg_new();
	if (!t->conv || !t->jpeg) {
		vc_conv_free(t->conv);
		vc_jpeg_free(t->jpeg);
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->ah.mu, NULL);
	pthread_cond_init(&t->ah.cv, NULL);
	*out = &t->base;
	return 0;
}

static void ts_close(struct vc_src *s)
{
	struct testsrc *t = ts_of(s);

	stop_ahead(t);
	pthread_cond_destroy(&t->ah.cv);
	pthread_mutex_destroy(&t->ah.mu);
	free_bufs(t);
	free(t->master);
	testsrc_h264_free(t->h264);
	vc_conv_free(t->conv);
	vc_jpeg_free(t->jpeg);
	free(t);
}

static const struct vc_fract ivals[] = { { 1, 60 }, { 1, 30 }, { 1, 25 }, { 1, 15 },
					 { 1, 10 }, { 1, 5 },  { 1, 1 } };
static const uint32_t sizes[][2] = { { 160, 120 },  { 320, 240 },   { 640, 480 },
				     { 800, 600 },  { 1280, 720 },  { 1920, 1080 } };

/* The standard rates plus the configured one (test:WxH@FPS) in order,
 * fastest first, so negotiation can choose exactly what was configured. */
static size_t rates_with(struct vc_fract want, struct vc_fract out[VC_CAPS_MAX_IVALS])
{
	size_t n = 0, nstd = sizeof(ivals) / sizeof(ivals[0]);
	int added = 0;

	for (size_t i = 0; i < nstd; i++) {
		/* ivals[i] compared with want: num/den cross products */
		uint64_t a = (uint64_t)ivals[i].num * want.den, b = (uint64_t)want.num * ivals[i].den;
		if (a == b)
			added = 1;
		else if (!added && a > b) {
			out[n++] = want;
			added = 1;
		}
		out[n++] = ivals[i];
	}
	if (!added)
		out[n++] = want;
	return n;
}

/* The standard sizes plus the configured one, smallest first. */
static size_t sizes_with(uint32_t w, uint32_t h, uint32_t out[][2])
{
	size_t n = 0, nstd = sizeof(sizes) / sizeof(sizes[0]);
	int added = 0;

	for (size_t i = 0; i < nstd; i++) {
		uint64_t a = (uint64_t)sizes[i][0] * sizes[i][1], b = (uint64_t)w * h;
		if (sizes[i][0] == w && sizes[i][1] == h)
			added = 1;
		else if (!added && a > b) {
			out[n][0] = w;
			out[n++][1] = h;
			added = 1;
		}
		out[n][0] = sizes[i][0];
		out[n++][1] = sizes[i][1];
	}
	if (!added) {
		out[n][0] = w;
		out[n++][1] = h;
	}
	return n;
}

/* What the caps list: every producible format, or with "only" just the
 * configured one (a YUYV-only webcam: clients must be served by encoding). */
static int offered(const struct testsrc *t, const struct vc_fmt *f)
{
	return testsrc_producible(f, t->opts.h264) &&
	       (!t->opts.only || f->fourcc == t->opts.mode.fourcc);
}

/* The formats the caps list, in order: the table's, then H.264 (a UVC
 * H.264 webcam lists it beside YUYV and MJPEG), n = vc_fmt_count() + 1. */
static const struct vc_fmt *caps_fmt_at(size_t i)
{
	return i < vc_fmt_count() ? vc_fmt_at(i) : vc_h264_fmt();
}

static int ts_get_caps(struct vc_src *s, struct vc_caps *caps)
{
	const struct vc_mode *cm = &ts_of(s)->opts.mode;
	struct vc_fract rates[VC_CAPS_MAX_IVALS];
	uint32_t szs[sizeof(sizes) / sizeof(sizes[0]) + 1][2];
	size_t n = 0, n_rates = rates_with(cm->ival, rates), n_szs = sizes_with(cm->width, cm->height, szs);

	memset(caps, 0, sizeof(*caps));
	for (size_t i = 0; i <= vc_fmt_count(); i++)
		n += offered(ts_of(s), caps_fmt_at(i));
	caps->fmts = calloc(n ? n : 1, sizeof(*caps->fmts));
	if (!caps->fmts)
		return -ENOMEM;
	for (size_t i = 0; i <= vc_fmt_count(); i++) {
		const struct vc_fmt *f = caps_fmt_at(i);
		if (!offered(ts_of(s), f))
			continue;
		struct vc_caps_fmt *cf = &caps->fmts[caps->n_fmts++];
		cf->fourcc = f->fourcc;
		cf->stepwise = 1;
		cf->min_w = cf->min_h = MIN_DIM;
		cf->max_w = cf->max_h = MAX_DIM;
		cf->step_w = cf->step_h = 2;
		cf->n_sizes = n_szs;
		cf->sizes = calloc(cf->n_sizes, sizeof(*cf->sizes));
		if (!cf->sizes) {
			vc_caps_clear(caps);
			return -ENOMEM;
		}
		for (size_t k = 0; k < cf->n_sizes; k++) {
			cf->sizes[k].width = szs[k][0];
			cf->sizes[k].height = szs[k][1];
			cf->sizes[k].n_ivals = n_rates;
			memcpy(cf->sizes[k].ival, rates, n_rates * sizeof(rates[0]));
		}
	}
	return 0;
}

static int ts_set_mode(struct vc_src *s, const struct vc_mode *want, int try_only,
		       struct vc_src_format *out)
{
	struct testsrc *t = ts_of(s);
	struct vc_mode m = t->cur.mode;
	struct vc_src_format f;
	int ret;

	/* like S_FMT on a driver with one format: any other is adjusted to it */
	if (want->fourcc && !t->opts.only)
		m.fourcc = want->fourcc;
	if (want->width)
		m.width = want->width;
	if (want->height)
		m.height = want->height;
	if (want->ival.num && want->ival.den)
		m.ival = want->ival;
	testsrc_adjust(&m, t->opts.h264);
	ret = testsrc_make_format(&m, &f);
	if (ret < 0)
		return ret;
	if (out)
		*out = f;
	if (try_only)
		return 0;
	if (t->streaming)
		return -EBUSY;
	t->cur = f;
	return 0;
}

static int ts_get_format(struct vc_src *s, struct vc_src_format *out)
{
	*out = ts_of(s)->cur;
	return 0;
}

/* A still picture rendered once at start; not H.264, whose frames differ
 * by their number (frame_num, IDR every GOP) even on a frozen picture. */
static int still_once(const struct testsrc *t)
{
	return t->opts.still && t->cur.fmt != vc_h264_fmt();
}

static int ts_start(struct vc_src *s, unsigned n_buffers, unsigned *n_actual)
{
	struct testsrc *t = ts_of(s);
	const struct vc_geom *g = &t->cur.geom;
	int ret;

	if (t->streaming)
		return -EBUSY;
	for (unsigned i = 0; i < t->n_bufs; i++)
		if (t->bufs[i].held)
			return -EBUSY; /* like REQBUFS with buffers still mapped */
	free_bufs(t);
	free(t->master);
	t->master = NULL;
	if (!n_buffers)
		n_buffers = DEF_BUFS;
	if (n_buffers < 2)
		n_buffers = 2;
	if (n_buffers > MAX_BUFS)
		n_buffers = MAX_BUFS;
	ret = vc_fmt_geometry(testsrc_i420(), g->width, g->height, 0, &t->master_geom);
	if (ret < 0)
		return ret;
	t->master = malloc(t->master_geom.sizeimage);
	if (!t->master)
		return -ENOMEM;
	testsrc_h264_free(t->h264); /* a new stream: its frame 0 starts a GOP */
	t->h264 = NULL;
	if (t->cur.fmt == vc_h264_fmt()) {
		ret = testsrc_h264_new(&t->cur.mode, t->opts.ps_once, t->opts.bitrate, &t->h264);
		if (ret < 0)
			return ret;
	}
	for (unsigned i = 0; i < n_buffers; i++) {
		for (int p = 0; p < g->mem_planes; p++) {
			t->bufs[i].mem[p] = malloc(g->mem_size[p]);
			if (!t->bufs[i].mem[p]) {
				t->n_bufs = i + 1;
				free_bufs(t);
				return -ENOMEM;
			}
		}
		t->bufs[i].queued = 1;
	}
	t->n_bufs = n_buffers;
	t->counted = t->master_geom.sizeimage + (size_t)n_buffers * g->sizeimage;
	vc_mem_count(VC_MEM_DEVICE, (long long)t->counted);
	if (still_once(t)) {
		/* Rendered once; dequeue then only hands buffers out. */
		struct rctx rc = rctx_of(t);
		for (unsigned i = 0; i < n_buffers; i++) {
			size_t used[3];
			uint32_t flags;
			ret = render(&rc, t->cur.fmt, g, t->cur.mode.ival, 0, t->bufs[i].mem,
				     g->mem_size, used, &flags);
			if (ret < 0) {
				free_bufs(t);
				return ret;
			}
		}
	}
	t->t0_us = now_us() + (int64_t)t->cur.mode.ival.num * 1000000 / t->cur.mode.ival.den;
	t->next_seq = 0;
	t->streaming = 1;
	start_ahead(t);
	want_ahead(t);
	*n_actual = n_buffers;
	return 0;
}

static void ts_stop(struct vc_src *s)
{
	struct testsrc *t = ts_of(s);

	stop_ahead(t);
	t->streaming = 0;
	for (unsigned i = 0; i < t->n_bufs; i++)
		t->bufs[i].queued = 0;
	/* the buffers stay, like a driver's until REQBUFS; the converter's
	 * scratch is ours, grown to the largest mode rendered (8-14 MiB after
	 * tests/integ/qa_memory_budget.sh's attack), and not needed idle */
	vc_conv_release(t->conv);
}

static int ts_fd(struct vc_src *s)
{
	(void)s;
	return -1;
}

static int64_t due_of(const struct testsrc *t, uint64_t seq)
{
	const struct vc_fract *iv = &t->cur.mode.ival;

	return t->t0_us + (int64_t)(seq * iv->num * 1000000 / iv->den);
}

static int64_t ts_next_due(struct vc_src *s)
{
	struct testsrc *t = ts_of(s);

	return t->streaming ? due_of(t, t->next_seq) : -1;
}

static int ts_dequeue(struct vc_src *s, struct vc_src_buf *b)
{
	struct testsrc *t = ts_of(s);
	int64_t now = now_us();
	const struct vc_geom *g = &t->cur.geom;
	struct tbuf *tb = NULL;
	unsigned idx = 0;
	int ret;

	if (!t->streaming)
		return -EINVAL;
	if (now < due_of(t, t->next_seq))
		return -EAGAIN;
	unsigned n_free = 0;
	for (unsigned i = t->n_bufs; i-- > 0;)
		if (t->bufs[i].queued) {
			tb = &t->bufs[i];
			idx = i;
			n_free++;
		}
	/* Like a driver: while nobody dequeues, the queued buffers fill with
	 * the next frames and later ones are lost (the sequence number shows
	 * the gap); so lateness up to n_free intervals loses nothing. */
	while (due_of(t, t->next_seq + (n_free ? n_free : 1)) <= now)
		t->next_seq++;
	uint64_t seq = t->next_seq++;
	if (!tb)
		return -EAGAIN;
	memset(b, 0, sizeof(*b));
	if (still_once(t)) {
		for (int p = 0; p < g->mem_planes; p++)
			b->bytesused[p] = g->mem_size[p];
		if (t->cur.fmt->layout == VC_LAYOUT_COMPRESSED) {
			struct vc_jpeg_info info;
			ret = vc_jpeg_parse(tb->mem[0], g->mem_size[0], &info);
			b->bytesused[0] = ret < 0 ? 0 : info.size;
		}
	} else {
		struct rctx rc = rctx_of(t);

		if (take_ahead(t, seq, &idx, &ret, b->bytesused, &b->flags))
			tb = &t->bufs[idx];
		else
			ret = render(&rc, t->cur.fmt, g, t->cur.mode.ival, seq, tb->mem,
				     g->mem_size, b->bytesused, &b->flags);
		if (ret < 0) {
			log_error("render %ux%u failed: %s", g->width, g->height, strerror(-ret));
			return ret;
		}
	}
	tb->queued = 0;
	tb->held = 1;
	b->index = idx;
	for (int p = 0; p < 3; p++)
		b->mem[p] = tb->mem[p];
	b->seq = seq;
	b->ts_us = due_of(t, seq);
	b->field = V4L2_FIELD_NONE;
	want_ahead(t);
	return 0;
}

static int ts_queue(struct vc_src *s, unsigned index)
{
	struct testsrc *t = ts_of(s);

	if (index >= t->n_bufs || !t->bufs[index].held)
		return -EINVAL;
	t->bufs[index].held = 0;
	t->bufs[index].queued = t->streaming;
	want_ahead(t);
	return 0;
}

/* Two inputs, so input switching runs without hardware: moving and still. */
static const char *const input_names[] = { "Moving bars", "Still bars" };

static int ts_input_enum(struct vc_src *s, uint32_t index, struct vc_src_input *in)
{
	(void)s;
	if (index >= sizeof(input_names) / sizeof(input_names[0]))
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	in->index = index;
	snprintf(in->name, sizeof(in->name), "%s", input_names[index]);
	in->type = V4L2_INPUT_TYPE_CAMERA;
	return 0;
}

static int ts_input_get(struct vc_src *s, uint32_t *index)
{
	*index = ts_of(s)->opts.still ? 1 : 0;
	return 0;
}

static int ts_input_set(struct vc_src *s, uint32_t index)
{
	struct testsrc *t = ts_of(s);

	if (index >= sizeof(input_names) / sizeof(input_names[0]))
		return -EINVAL;
	if (t->streaming)
		return -EBUSY;
	t->opts.still = index == 1;
	return 0;
}

const struct vc_src_ops vc_src_test = {
	.name = "test",
	.open = ts_open,
	.close = ts_close,
	.get_caps = ts_get_caps,
	.set_mode = ts_set_mode,
	.get_format = ts_get_format,
	.start = ts_start,
	.stop = ts_stop,
	.fd = ts_fd,
	.next_due = ts_next_due,
	.dequeue = ts_dequeue,
	.queue = ts_queue,
	.input_enum = ts_input_enum,
	.input_get = ts_input_get,
	.input_set = ts_input_set,
};
