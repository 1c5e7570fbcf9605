/* HLS sessions (hls.h): a sink client of an H.264 output, its access units
 * cut into fMP4 segments at IDRs, a short window of them in memory. */
#define LOG_PREFIX "hls:"
#include "server/stream/hls.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/h264.h"
#include "common/log.h"
#include "common/memstat.h"
#include "common/mp4.h"
#include "server/stream/serve_int.h"

/* A segment is cut at the first IDR at least this long after its start.
 * An IDR forced for a joiner (h264_out.c, at most one a second) restarts
 * the encoder's GOP: cutting there when the segment is half done keeps
 * every segment of a 1 s GOP between 0.5 and 1.5 s, so the target duration
 * (rounded) stays 1 s; a short segment is not made for one earlier. */
#define HLS_MIN_SEG_US 500000

struct hls_seg {
	uint8_t *b;           /* moof+mdat per frame, counted as VC_MEM_PARTS */
	size_t len;
	uint64_t seq;         /* media sequence number */
	int64_t dur_us;       /* on the capture clock */
	uint32_t gen;         /* init segment it needs */
	int disc;             /* a new init segment starts with it */
	uint64_t disc_n;      /* discontinuities up to and including it (the playlist's
			       * EXT-X-DISCONTINUITY-SEQUENCE when it is the first) */
};

struct hls_init {
	uint8_t *b;           /* ftyp+moov; NULL = none */
	size_t len;
	uint32_t gen;
	uint8_t *ps;          /* SPS then PPS it was made from */
	size_t sps_len, pps_len;
};

struct hls {
	struct hls *next;
	struct vc_streams *s;
	struct client *c;     /* NULL once freed */
	const struct vc_cam *cam;
	struct vc_request req;
	int ended;
	int64_t last_us;      /* last request (monotonic) */
	struct hls_init init[2]; /* [0] current, [1] the one before */
	struct hls_seg seg[HLS_WINDOW]; /* oldest first, n of them */
	unsigned n;
	uint64_t next_seq, disc_n;
	int64_t max_dur_us;
	/* the segment being built */
	uint8_t *cur;
	size_t cur_len, cur_cap;
	int open, cur_disc;
	int64_t cur_start_us, t0_us;
	uint32_t frag_seq;
	struct vc_frame *prev; /* the last frame, written when its duration is known */
};

static void count(long long d)
{
	vc_mem_count(VC_MEM_PARTS, d);
}

static int same_req(const struct vc_request *a, const struct vc_request *b)
{
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->fps == b->fps && a->rotate == b->rotate && a->flip == b->flip &&
	       a->bitrate == b->bitrate && a->gop == b->gop;
}

/* Appends frame f's fragment, dur ticks long, to the open segment. */
static void append(struct hls *x, const struct vc_frame *f, uint32_t dur)
{
	size_t need = x->cur_len + vc_mp4_fragment_bound(f->bytesused[0]);

	if (need > x->cur_cap) {
		size_t cap = need > 2 * x->cur_cap ? need : 2 * x->cur_cap;
		uint8_t *b = realloc(x->cur, cap);

		if (!b) {
			x->open = 0; /* the segment is lost; the next IDR starts another */
			return;
		}
		count((long long)cap - (long long)x->cur_cap);
		x->cur = b;
		x->cur_cap = cap;
	}
	struct vc_mp4_sample sm = {
		.annexb = f->mem[0], .len = f->bytesused[0], .seq = ++x->frag_seq,
		.decode_time = (uint64_t)(f->ts_us - x->t0_us) * 9 / 100,
		.duration = dur, .key = f->key,
	};
	long k = vc_mp4_fragment(x->cur + x->cur_len, x->cur_cap - x->cur_len, &sm);

	if (k > 0)
		x->cur_len += (size_t)k;
}

static void seg_free(struct hls_seg *g)
{
	count(-(long long)g->len);
	free(g->b);
	memset(g, 0, sizeof(*g));
}

/* The open segment ends at end_us (the next segment's first frame). */
static void close_seg(struct hls *x, int64_t end_us)
{
	if (!x->open || !x->cur_len)
		return;
	if (x->n == HLS_WINDOW) {
		seg_free(&x->seg[0]);
		memmove(&x->seg[0], &x->seg[1], (HLS_WINDOW - 1) * sizeof(x->seg[0]));
		x->n--;
	}
	/* shrink to fit: the window's bytes are what is counted */
	uint8_t *b = realloc(x->cur, x->cur_len);

	if (b) {
		count((long long)x->cur_len - (long long)x->cur_cap);
		x->cur = b;
		x->cur_cap = x->cur_len;
	}
	struct hls_seg *g = &x->seg[x->n++];

	x->disc_n += !!x->cur_disc;
	*g = (struct hls_seg){ x->cur, x->cur_cap, x->next_seq++, end_us - x->cur_start_us,
			       x->init[0].gen, x->cur_disc, x->disc_n };
	if (g->dur_us > x->max_dur_us)
		x->max_dur_us = g->dur_us;
	x->cur = NULL;
	x->cur_len = x->cur_cap = 0;
	x->open = 0;
}

/* IDR f carries SPS/PPS other than the current init segment's: a new one
 * (generation + 1), the old kept for the window's segments. 0, or -errno. */
static int new_init(struct hls *x, const struct vc_h264_au *au)
{
	struct hls_init *i = &x->init[0];

	if (i->b && i->sps_len == au->sps_len && i->pps_len == au->pps_len &&
	    !memcmp(i->ps, au->sps, au->sps_len) && !memcmp(i->ps + au->sps_len, au->pps, au->pps_len))
		return 0;
	size_t bound = vc_mp4_init_bound(au->sps_len, au->pps_len);
	uint8_t *b = malloc(bound), *ps = malloc(au->sps_len + au->pps_len);

	if (!b || !ps) {
		free(b);
		free(ps);
		return -ENOMEM;
	}
	int len = vc_mp4_init(b, bound, au->sps, au->sps_len, au->pps, au->pps_len);

	if (len < 0) {
		free(b);
		free(ps);
		return len;
	}
	memcpy(ps, au->sps, au->sps_len);
	memcpy(ps + au->sps_len, au->pps, au->pps_len);
	/* segments of the generation before the old one cannot be fetched
	 * usefully any more: dropped */
	unsigned k = 0;

	for (unsigned j = 0; j < x->n; j++) {
		if (x->init[1].b && x->seg[j].gen == x->init[1].gen)
			seg_free(&x->seg[j]);
		else
			x->seg[k++] = x->seg[j];
	}
	x->n = k;
	free(x->init[1].b);
	free(x->init[1].ps);
	x->init[1] = x->init[0];
	x->init[0] = (struct hls_init){ b, (size_t)len, x->init[1].gen + 1, ps, au->sps_len,
					au->pps_len };
	x->cur_disc = x->init[1].b != NULL;
	return 0;
}

static void on_frame(void *opaque, const struct vc_frame *f, uint64_t n)
{
	struct hls *x = opaque;

	(void)n;
	if (x->ended)
		return;
	if (x->prev) {
		int64_t d = f->ts_us - x->prev->ts_us;

		if (x->open)
			append(x, x->prev, d > 0 ? (uint32_t)(d * 9 / 100) : 1);
		vc_frame_unref(x->prev);
		x->prev = NULL;
	}
	if (f->key) {
		struct vc_h264_au au;

		vc_h264_scan(f->mem[0], f->bytesused[0], &au);
		int chg = au.sps && au.pps && (!x->init[0].b || x->init[0].sps_len != au.sps_len ||
					       memcmp(x->init[0].ps, au.sps, au.sps_len));
		if (chg || !x->open || f->ts_us - x->cur_start_us >= HLS_MIN_SEG_US) {
			close_seg(x, f->ts_us);
			x->cur_disc = 0;
			if (au.sps && au.pps && new_init(x, &au) < 0)
				log_warn_lim("hls init", "", "no init segment for this SPS");
			if (x->init[0].b) {
				if (!x->t0_us)
					x->t0_us = f->ts_us;
				x->open = 1;
				x->cur_start_us = f->ts_us;
			}
		}
	}
	if (x->open)
		x->prev = vc_frame_ref((struct vc_frame *)f);
}

static void on_ended(void *opaque)
{
	struct hls *x = opaque;

	x->ended = 1;
}

static const struct client_sink hls_sink = { on_frame, on_ended };

struct hls *hls_find(struct vc_streams *s, const void *cam, const struct vc_request *req)
{
	for (struct hls *x = s->hls; x; x = x->next)
		if (!x->ended && x->cam == cam && same_req(&x->req, req))
			return x;
	return NULL;
}

struct hls *hls_get(struct vc_streams *s, struct output *o, const struct vc_request *req,
		    const char *peer, const struct sockaddr *addr, int dflt)
{
	struct hls *x = hls_find(s, o->hub->cam, req);

	if (x)
		return x;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->s = s;
	x->cam = o->hub->cam;
	x->req = *req;
	x->last_us = now_us();
	x->c = client_sink_new(o, req, &hls_sink, x, peer, addr, dflt);
	if (!x->c) {
		free(x);
		return NULL;
	}
	x->next = s->hls;
	s->hls = x;
	log_info("cam %s: HLS session for %ux%u (%s)", vc_cam_id(o->hub->cam), o->plan.out.width,
		 o->plan.out.height, peer);
	return x;
}

void hls_touch(struct hls *x)
{
	x->last_us = now_us();
}

unsigned hls_segments(const struct hls *x)
{
	return x->n;
}

/* The target duration: whole seconds, at least every segment's length
 * rounded to the nearest (RFC 8216 4.3.3.1; rounded, not ceiled, so 1.03 s
 * segments keep it at 1 s: it must not change while the playlist lives). */
static unsigned target_s(const struct hls *x)
{
	int64_t t = (x->max_dur_us + 500000) / 1000000;

	return t < 1 ? 1 : (unsigned)t;
}

int hls_playlist(const struct hls *x, const char *base, char *buf, size_t cap)
{
	size_t len = 0;
	int k;

#define PUT(...)                                                          \
	do {                                                              \
		k = snprintf(buf + len, cap - len, __VA_ARGS__);          \
		if (k < 0 || (size_t)k >= cap - len)                      \
			return -E2BIG;                                    \
		len += (size_t)k;                                         \
	} while (0)
	PUT("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:%u\n#EXT-X-MEDIA-SEQUENCE:%" PRIu64
	    "\n#EXT-X-DISCONTINUITY-SEQUENCE:%" PRIu64 "\n#EXT-X-INDEPENDENT-SEGMENTS\n",
	    target_s(x), x->n ? x->seg[0].seq : x->next_seq, x->n ? x->seg[0].disc_n : x->disc_n);
	for (unsigned i = 0; i < x->n; i++) {
		const struct hls_seg *g = &x->seg[i];

		if (i && g->disc)
			PUT("#EXT-X-DISCONTINUITY\n");
		if (!i || g->gen != x->seg[i - 1].gen)
			PUT("#EXT-X-MAP:URI=\"%sinit=%" PRIu32 "\"\n", base, g->gen);
		PUT("#EXTINF:%.3f,\n%sseg=%" PRIu64 "\n", (double)g->dur_us / 1e6, base, g->seq);
	}
#undef PUT
	return (int)len;
}

const uint8_t *hls_segment(const struct hls *x, uint64_t seq, size_t *len)
{
	for (unsigned i = 0; i < x->n; i++) {
		if (x->seg[i].seq == seq) {
			*len = x->seg[i].len;
			return x->seg[i].b;
		}
	}
	return NULL;
}

const uint8_t *hls_init(const struct hls *x, uint32_t gen, size_t *len)
{
	for (int i = 0; i < 2; i++) {
		if (x->init[i].b && x->init[i].gen == gen) {
			*len = x->init[i].len;
			return x->init[i].b;
		}
	}
	return NULL;
}

static void hls_free(struct hls *x)
{
	if (x->c)
		client_free(x->c); /* unlinks it from its output (output_unused) */
	for (unsigned i = 0; i < x->n; i++)
		seg_free(&x->seg[i]);
	count(-(long long)x->cur_cap);
	free(x->cur);
	vc_frame_unref(x->prev);
	for (int i = 0; i < 2; i++) {
		free(x->init[i].b);
		free(x->init[i].ps);
	}
	free(x);
}

void hls_tick(struct vc_streams *s)
{
	int64_t now = now_us();

	for (struct hls **pp = &s->hls; *pp;) {
		struct hls *x = *pp;
		int64_t linger = (int64_t)HLS_LINGER_TD * target_s(x) * 1000000;

		if (x->ended || now - x->last_us > linger) {
			log_info("HLS session %s: %s", x->c ? x->c->peer : "?",
				 x->ended ? "its stream ended" : "no reader left");
			*pp = x->next;
			hls_free(x);
		} else {
			pp = &x->next;
		}
	}
}

void hls_free_all(struct vc_streams *s)
{
	while (s->hls) {
		struct hls *x = s->hls;

		s->hls = x->next;
		hls_free(x);
	}
}
