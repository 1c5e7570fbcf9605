/* H.264 outputs (see h264_out.h). Owns, per output, the MP4 init segment
 * made from the last IDR's SPS/PPS, the latest frame's MP4 fragment bytes
 * (their shared part is output.part[2], dropped with the frame), the rate
 * pacing of frames into the encoder, and for passthrough the kept GOP
 * (common/gop.h) that joining clients start from. */
#define LOG_PREFIX "stream:"
#include "server/stream/h264_out.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/gop.h"
#include "common/h264.h"
#include "common/log.h"
#include "common/mp4.h"
#include "server/stream/hwenc.h"
#include "server/stream/stream_int.h"

struct h264_out {
	uint8_t *ps;          /* SPS then PPS of the current init segment */
	size_t sps_len, pps_len;
	uint8_t *init;        /* the MP4 init segment */
	size_t init_len;
	uint32_t init_gen;    /* bumped with each new init segment */
	int64_t t0_us;        /* capture time of the first frame: MP4 time 0 */
	int64_t t0_real_us;   /* the same moment on CLOCK_REALTIME (for latency) */
	int64_t prev_ts_us;   /* the frame before latest */
	uint32_t dur;         /* latest's duration estimate, 90 kHz ticks */
	int64_t sched_us;     /* pacing: when the next frame is due */
	uint8_t *frag;        /* latest's MP4 fragment (frame frag_n), frag_len bytes */
	size_t frag_len, frag_cap;
	uint64_t frag_n;
	struct vc_gop gop;    /* passthrough: the access units since the last IDR */
	int gop_logged;       /* a drop was logged (again only after a whole GOP fitted) */
	uint64_t last_seq;    /* passthrough: the camera's sequence number of the last frame */
	int seq_known;
	int after_hole;       /* passthrough: frames lost since the last IDR: publish none */
	int key_owed;         /* encoder: a joiner waits for an IDR not forced yet */
	int64_t forced_ts_us; /* capture time of the frame the last IDR was forced on */
	uint64_t forced;      /* IDRs forced so far */
};

/* Joiners force an IDR at most this often per output: each IDR costs
 * about two P frames of bitrate and the encoder's CPU for every viewer, so
 * a loop joining and leaving a viewer's URL made its stream all IDRs
 * (issue 22: 5 -> 229 in 300 frames, 1.22 -> 2.29 Mbit/s). A joiner within
 * the second waits for the next IDR, forced once the second is up. */
#define H264_KEY_MIN_US 1000000

/* An H.264 camera's last SPS and PPS (NAL units without start code), kept
 * per hub from every frame, so an output made later still has them. */
struct h264_ps {
	uint8_t *sps, *pps;
	size_t sps_len, pps_len;
};

int h264_out_is(const struct output *o)
{
	return o->plan.out.fourcc == V4L2_PIX_FMT_H264;
}

static struct h264_out *state(struct output *o)
{
	if (!o->h264)
		o->h264 = calloc(1, sizeof(*o->h264));
	return o->h264;
}

int64_t h264_out_t0_real_us(const struct output *o)
{
	return o->h264 ? o->h264->t0_real_us : 0;
}

/* The camera's own stream, passed through (h264_out_pass): its GOP is kept. */
static int passthrough(const struct output *o)
{
	return !!(o->plan.steps & VC_STEP_PASSTHROUGH);
}

/* Asks o's encoder (software pipeline or hardware) for an IDR on the
 * next frame it takes; `ts_us` is that frame's capture time. */
static void force_key(struct output *o, struct h264_out *h, int64_t ts_us)
{
	h->key_owed = 0;
	h->forced_ts_us = ts_us;
	h->forced++;
	/* atomic flag read by the encoding job: safe while one runs */
	if (o->pipe)
		vc_pipeline_force_key(o->pipe);
	hwenc_force_key(o); /* the hardware encoder, when it has the output */
}

/* Whether frame f (to be encoded) is to be paced out by the output's rate. */
static int paced(struct output *o, struct h264_out *h, const struct vc_frame *f)
{
	uint32_t fps = o->plan.out.fps;

	if (!fps)
		return 1;
	int64_t ival = 1000000 / fps;

	/* 10 % early still counts: capture times jitter */
	if (h->sched_us && f->ts_us + ival / 10 < h->sched_us)
		return 0;
	h->sched_us = h->sched_us && f->ts_us - h->sched_us < ival ? h->sched_us + ival
								    : f->ts_us + ival;
	return 1;
}

int h264_out_due(struct output *o, const struct vc_frame *f)
{
	struct h264_out *h = state(o);

	/* a camera's own stream is never thinned: each picture may be the
	 * reference of the next (a jittery camera clock ran 10 % early) */
	if (!h || passthrough(o))
		return h != NULL;
	if (!paced(o, h, f))
		return 0;
	/* a joiner's IDR, on the capture clock (a camera restart may set it
	 * back: then at once) */
	if (h->key_owed && (!h->forced || f->ts_us - h->forced_ts_us >= H264_KEY_MIN_US ||
			    f->ts_us < h->forced_ts_us))
		force_key(o, h, f->ts_us);
	return 1;
}

uint64_t h264_out_forced(const struct output *o)
{
	return o->h264 ? o->h264->forced : 0;
}

/* *dst (of *len bytes) becomes a copy of nal; 0 or -ENOMEM (old kept). */
static int keep_nal(uint8_t **dst, size_t *len, const uint8_t *nal, size_t n)
{
	if (*dst && *len == n && !memcmp(*dst, nal, n))
		return 0;
	uint8_t *b = malloc(n);

	if (!b)
		return -ENOMEM;
	memcpy(b, nal, n);
	free(*dst);
	*dst = b;
	*len = n;
	return 0;
}

/* Offset in buf where parameter sets go: before the first NAL unit that is
 * not an access unit delimiter (which must stay first), at its start code. */
static size_t ps_insert_off(const uint8_t *buf, size_t len)
{
	size_t pos = 0;
	struct vc_nal nal;

	while (vc_h264_next_nal(buf, len, &pos, &nal)) {
		if (nal.type == VC_NAL_AUD)
			continue;
		size_t off = (size_t)(nal.data - buf) - 3; /* 00 00 01 */
		return off && !buf[off - 1] ? off - 1 : off;
	}
	return 0;
}

/* The IDR f with the kept SPS/PPS it lacks inserted (4-byte start codes);
 * every NAL unit of f stays byte for byte. NULL on ENOMEM. */
static struct vc_frame *with_ps(const struct h264_ps *ps, const struct vc_frame *f, int sps,
			       int pps)
{
	static const uint8_t sc[4] = { 0, 0, 0, 1 };
	size_t len = f->bytesused[0], add = (sps ? 4 + ps->sps_len : 0) +
					    (pps ? 4 + ps->pps_len : 0);
	struct vc_frame *n = vc_frame_new(len + add);

	if (!n)
		return NULL;
	uint8_t *d = vc_frame_data(n, 0);
	size_t at = ps_insert_off(f->mem[0], len), k = at;

	memcpy(d, f->mem[0], at);
	if (sps) {
		memcpy(d + k, sc, 4);
		memcpy(d + k + 4, ps->sps, ps->sps_len);
		k += 4 + ps->sps_len;
	}
	if (pps) {
		memcpy(d + k, sc, 4);
		memcpy(d + k + 4, ps->pps, ps->pps_len);
		k += 4 + ps->pps_len;
	}
	memcpy(d + k, f->mem[0] + at, len - at);
	n->fmt = f->fmt;
	n->geom.width = f->geom.width;
	n->geom.height = f->geom.height;
	n->seq = f->seq;
	n->ts_us = f->ts_us;
	n->ts_real_us = f->ts_real_us;
	n->key = 1;
	return n;
}

int h264_ps_update(struct h264_ps **psp, const struct vc_frame *f)
{
	struct vc_h264_au au;

	if (!*psp && !(*psp = calloc(1, sizeof(**psp))))
		return 0;
	struct h264_ps *ps = *psp;

	vc_h264_scan(f->mem[0], f->bytesused[0], &au);
	/* on ENOMEM the old ones stay: an IDR may then get stale ones, as a
	 * decoder that missed the new would */
	if (au.sps)
		keep_nal(&ps->sps, &ps->sps_len, au.sps, au.sps_len);
	if (au.pps)
		keep_nal(&ps->pps, &ps->pps_len, au.pps, au.pps_len);
	return ps->sps && ps->pps;
}

void h264_ps_release(struct h264_ps **psp)
{
	if (!*psp)
		return;
	free((*psp)->sps);
	free((*psp)->pps);
	free(*psp);
	*psp = NULL;
}

struct vc_frame *h264_ps_complete(const struct h264_ps *ps, struct vc_frame *f)
{
	struct vc_h264_au au;

	if (!f->key)
		return vc_frame_ref(f);
	vc_h264_scan(f->mem[0], f->bytesused[0], &au);
	/* as it came when nothing is missing, or nothing was ever seen to add
	 * (MP4 clients wait for an init segment; Annex-B ones get the stream) */
	if ((au.sps && au.pps) || !ps || (!au.sps && !ps->sps) || (!au.pps && !ps->pps))
		return vc_frame_ref(f);
	return with_ps(ps, f, !au.sps, !au.pps);
}

struct vc_frame *h264_out_pass(struct output *o, struct vc_frame *f)
{
	struct h264_out *h = state(o);

	if (!h)
		return NULL;
	/* A hole in the camera's sequence (the driver or the capture dropped
	 * a buffer): the pictures after it may refer to the lost one, so
	 * none is published until the next IDR. Clients see a pause, never a
	 * picture built on a reference they lack; the kept GOP ends there. */
	int hole = h->seq_known && f->seq != h->last_seq + 1;

	h->last_seq = f->seq;
	h->seq_known = 1;
	if (f->key)
		h->after_hole = 0;
	else if (hole || h->after_hole) {
		if (!h->after_hole)
			log_debug("cam %s: H.264 frame %llu after a hole in the camera's sequence: "
				  "waiting for its next IDR",
				  o->hub->cam ? vc_cam_id(o->hub->cam) : "?", (unsigned long long)f->seq);
		h->after_hole = 1;
		return NULL;
	}
	return h264_ps_complete(o->hub->h264_ps, f);
}

/* A new init segment for sps/pps; -ENOMEM or -EINVAL (SPS unreadable). */
static int new_init(struct h264_out *h, const struct vc_h264_au *au)
{
	size_t cap = vc_mp4_init_bound(au->sps_len, au->pps_len);
	uint8_t *init = malloc(cap), *ps = malloc(au->sps_len + au->pps_len);
	int len = init && ps ? vc_mp4_init(init, cap, au->sps, au->sps_len, au->pps, au->pps_len)
			     : -ENOMEM;

	if (len < 0) {
		free(init);
		free(ps);
		return len;
	}
	memcpy(ps, au->sps, au->sps_len);
	memcpy(ps + au->sps_len, au->pps, au->pps_len);
	free(h->init);
	free(h->ps);
	h->init = init;
	h->init_len = (size_t)len;
	h->ps = ps;
	h->sps_len = au->sps_len;
	h->pps_len = au->pps_len;
	h->init_gen++;
	return 0;
}

static int same_ps(const struct h264_out *h, const struct vc_h264_au *au)
{
	return h->ps && h->sps_len == au->sps_len && h->pps_len == au->pps_len &&
	       !memcmp(h->ps, au->sps, au->sps_len) &&
	       !memcmp(h->ps + h->sps_len, au->pps, au->pps_len);
}

/* Passthrough: latest joins the kept GOP (copied: it may be a capture
 * buffer). A GOP over the bounds is dropped: joiners wait for the next IDR
 * then, as with no GOP kept. */
static void keep(struct output *o, struct h264_out *h)
{
	int whole = h->gop.n > 0; /* the GOP this IDR ends stayed within the bounds */
	int rc = vc_gop_add(&h->gop, o->latest, o->latest_n);

	if (rc > 0 && o->latest->key && whole)
		h->gop_logged = 0; /* logged again only after a GOP fitted */
	if (rc < 0 && !h->gop_logged) {
		char why[64];

		h->gop_logged = 1;
		if (rc == -E2BIG)
			snprintf(why, sizeof(why), "over %zu MiB or %lld s since its IDR",
				 (h->gop.max_bytes ? h->gop.max_bytes : VC_GOP_MAX_BYTES) >> 20,
				 (long long)((h->gop.max_us ? h->gop.max_us : VC_GOP_MAX_US) / 1000000));
		else
			snprintf(why, sizeof(why), "%s", strerror(-rc));
		log_info("cam %s: GOP not kept (%s): clients joining now wait for the next IDR",
			 o->hub->cam ? vc_cam_id(o->hub->cam) : "?", why);
	}
}

/* The MP4 duration of a frame captured at from_us whose successor came at
 * to_us (0: unknown), in 90 kHz ticks: the time between them when it looks
 * like the rate's jitter or pictures the encoder skipped to hold the
 * bitrate (up to PAUSE_US: the timeline stays without holes); after a
 * pause (the output had no client for a while, the camera restarted) the
 * nominal interval: a pause is a gap in the timeline, never one frame
 * lasting seconds, which a player would stretch its buffer over and show
 * frozen (a page jumping to the live edge then ran seconds ahead of the
 * capture clock). */
#define PAUSE_US 1000000
static uint32_t frame_dur(const struct output *o, int64_t from_us, int64_t to_us)
{
	uint32_t nominal = VC_MP4_TIMESCALE / (o->plan.out.fps ? o->plan.out.fps : 30);
	int64_t gap = to_us - from_us;

	if (from_us && gap > 0 && (gap <= PAUSE_US || gap * 9 / 100 <= 2 * (int64_t)nominal))
		return (uint32_t)(gap * 9 / 100);
	return nominal;
}

void h264_out_published(struct output *o)
{
	struct h264_out *h = state(o);
	const struct vc_frame *f = o->latest;
	struct vc_h264_au au;

	if (!h || !f)
		return;
	if (!h->t0_us) {
		h->t0_us = f->ts_us;
		h->t0_real_us = f->ts_real_us;
	}
	/* its successor's time unknown yet: the interval before it and a
	 * margin (a player's continuity rule, see vc_mp4_live_duration) */
	h->dur = vc_mp4_live_duration(frame_dur(o, h->prev_ts_us, f->ts_us));
	h->prev_ts_us = f->ts_us;
	if (passthrough(o))
		keep(o, h);
	if (!f->key)
		return;
	h->key_owed = 0; /* the joiners waiting have their IDR */
	vc_h264_scan(f->mem[0], f->bytesused[0], &au);
	if (!au.sps || !au.pps || same_ps(h, &au))
		return;
	uint32_t old = h->init_gen;
	int rc = new_init(h, &au);

	if (rc < 0) {
		log_warn("cam %s: no MP4 init segment for this SPS: %s",
			 o->hub->cam ? vc_cam_id(o->hub->cam) : "?", strerror(-rc));
		return;
	}
	for (struct client *c = o->clients; c; c = c->next)
		if (c->h264 == H264_MP4 && c->init_gen && c->init_gen == old)
			/* its decoder was set up for the old SPS */
			stream_notify(&c->wake, STREAM_EV_END_CHANGED, 0);
}

void h264_out_join(struct output *o, struct client *c)
{
	const struct h264_out *h = o->h264;

	c->init_gen = 0;
	if (h && h->gop.n && (c->h264 != H264_MP4 || h->init)) {
		/* passthrough: from the kept IDR on, then live (h264_out_kept) */
		c->sent_n = h->gop.first_n - 1;
		c->need_key = 0;
		c->catchup = 1;
		return;
	}
	c->need_key = 1;
	c->catchup = 0;
	/* an IDR on the next frame encoded, unless one was forced less than
	 * H264_KEY_MIN_US before it (h264_out_due); none before the output's
	 * first picture: an encoder starts with an IDR */
	struct h264_out *hs = state(o);

	if (hs && o->latest_n)
		hs->key_owed = 1;
}

void h264_out_moved(struct output *to, struct client *c)
{
	if (c->h264 == H264_MP4)
		/* its init segment is another output's */
		stream_notify(&c->wake, STREAM_EV_END_CHANGED, 0);
	else
		h264_out_join(to, c);
}

struct vc_frame *h264_out_kept(const struct client *c, const struct output *o, uint64_t *n)
{
	const struct h264_out *h = o->h264;

	if (!c->catchup || !h || !h->gop.n || (c->h264 == H264_MP4 && !h->init))
		return NULL;
	uint64_t k = c->sent_n + 1;

	if (k < h->gop.first_n)
		k = h->gop.first_n; /* a newer GOP began while it caught up: from its IDR */
	if (k >= o->latest_n)
		return NULL; /* live */
	struct vc_frame *f = vc_gop_get(&h->gop, k);

	if (f)
		*n = k;
	return f;
}

int h264_out_may_take(const struct client *c, const struct output *o)
{
	uint64_t n;

	if (h264_out_kept(c, o, &n))
		return 1;
	if (o->latest->key)
		return c->h264 != H264_MP4 || (o->h264 && o->h264->init);
	return !c->need_key && o->latest_n == c->sent_n + 1;
}

/* The MP4 fragment of frame f (number n, dur ticks long) in *buf (grown
 * as needed, *cap bytes): its decode time is its capture time, so a kept
 * frame sent late still plays in its place. Its length, or -ENOMEM or
 * vc_mp4_fragment's error. */
static long fragment_of(const struct h264_out *h, const struct vc_frame *f, uint64_t n,
			uint32_t dur, uint8_t **buf, size_t *cap)
{
	size_t need = vc_mp4_fragment_bound(f->bytesused[0]);

	if (need > *cap) {
		uint8_t *b = realloc(*buf, need);

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = need;
	}
	struct vc_mp4_sample s = {
		.annexb = f->mem[0], .len = f->bytesused[0], .seq = (uint32_t)n,
		.decode_time = (uint64_t)(f->ts_us - h->t0_us) * 9 / 100,
		.duration = dur, .key = f->key,
	};
	return vc_mp4_fragment(*buf, *cap, &s);
}

/* The latest frame's MP4 fragment bytes in h->frag (made once per frame).
 * -ENOMEM, or vc_mp4_fragment's error. */
static int fragment(struct output *o, struct h264_out *h)
{
	if (h->frag_n == o->latest_n && h->frag_len)
		return 0;
	long len = fragment_of(h, o->latest, o->latest_n, h->dur, &h->frag, &h->frag_cap);

	h->frag_len = len > 0 ? (size_t)len : 0;
	h->frag_n = o->latest_n;
	return len > 0 ? 0 : (int)len;
}

/* The part of kept frame f (number n) for c: its own fragment, after the
 * init segment when c has not had it. Its duration is the gap to the next
 * kept one (f is older than latest), as frame_dur rules. NULL on failure. */
static struct vc_part *kept_mp4_part(const struct output *o, struct h264_out *h,
				     struct client *c, const struct vc_frame *f, uint64_t n)
{
	const struct vc_frame *next = vc_gop_get(&h->gop, n + 1);
	uint32_t dur = next ? frame_dur(o, f->ts_us, next->ts_us) : h->dur;
	uint8_t *buf = NULL;
	size_t cap = 0;
	long len = fragment_of(h, f, n, dur, &buf, &cap);
	struct vc_part *p = NULL;

	if (len > 0) {
		int first = c->init_gen != h->init_gen;
		struct iovec iov[2] = { { h->init, h->init_len }, { buf, (size_t)len } };

		p = vc_part_new(iov + !first, 2 - !first);
		if (p && first)
			c->init_gen = h->init_gen;
	}
	free(buf);
	return p;
}

struct vc_part *h264_out_mp4_part(struct output *o, struct client *c,
				  const struct vc_frame *kept, uint64_t n)
{
	struct h264_out *h = o->h264;

	if (h && h->init && kept)
		return kept_mp4_part(o, h, c, kept, n);
	if (!h || !h->init || fragment(o, h) < 0)
		return NULL;
	struct iovec iov[2] = { { h->init, h->init_len }, { h->frag, h->frag_len } };

	if (c->init_gen != h->init_gen) {
		/* the first part of this client: init segment + fragment, its own */
		struct vc_part *p = vc_part_new(iov, 2);

		if (p)
			c->init_gen = h->init_gen;
		return p;
	}
	if (!o->part[2]) /* shared by the output's MP4 clients, dropped with latest */
		o->part[2] = vc_part_new(iov + 1, 1);
	return o->part[2] ? vc_part_ref(o->part[2]) : NULL;
}

void h264_out_drop(struct output *o)
{
	if (!o->h264)
		return;
	vc_gop_clear(&o->h264->gop);
}

void h264_out_free(struct output *o)
{
	if (!o->h264)
		return;
	free(o->h264->init);
	free(o->h264->ps);
	free(o->h264->frag);
	vc_gop_free(&o->h264->gop);
	free(o->h264);
	o->h264 = NULL;
}
