/* Memory held for stream clients (issue 22). A client holds one part at
 * most (client.c: the frame it is sending) and takes the newest frame once
 * it is done, so it already skips every frame in between; but a part
 * cannot be cut short (a raw stream has no framing, a cut multipart part is
 * a broken picture), and client.c's stall rule keeps a reader that takes
 * anything at all: at 2 KB/s a raw 1080p part (4 MiB) stayed pinned for
 * half an hour, and 200 such readers pinned 792 MiB outside the budget.
 * Parts alive are counted (VC_MEM_PARTS, in frame_memory); a client too
 * slow for the skip rule is dropped here:
 * - one that has held its part longer than client_hold (default 5 s): a
 *   viewer needing that long for one frame sees no video anyway;
 * - while the fan-out holds more than frame_memory (what budget.c counts):
 *   the clients holding the oldest parts, until it is back under. Never a
 *   client whose part is the newest its output has (dropping it frees
 *   nothing) or that took its part less than HOLD_MIN_US ago (a viewer
 *   keeping up holds a part for about a frame time).
 * Drops are logged once per gc tick, coalesced. Loop thread only. */
#define LOG_PREFIX "stream:"
#include "server/stream/serve_int.h"

#include "common/log.h"
#include "common/memstat.h"
#include "server/stream/budget.h"

/* The memory rule spares parts younger than this: a viewer that keeps up
 * is never dropped because others pinned the memory. */
#define HOLD_MIN_US 1000000

static size_t hold_limit(const struct vc_streams *s)
{
	return s->budget.frame_bytes ? s->budget.frame_bytes : (size_t)BUDGET_FRAME_MIB << 20;
}

/* The bytes budget.c counts against frame_memory: every kind but the test
 * pattern's buffers (a real camera's are the driver's). */
static size_t held_total(void)
{
	size_t n = 0;

	for (int k = 0; k < VC_MEM_KINDS; k++)
		if (k != VC_MEM_DEVICE)
			n += vc_mem_held((enum vc_mem_kind)k);
	return n;
}

/* Whether c holds a part (or, over TLS, a frame) its output no longer
 * publishes: only such a part is pinned by c alone. */
static int holds_old(const struct client *c)
{
	const struct output *o = c->out;

	if (c->dropped || !c->part_us)
		return 0;
	if (c->part)
		return c->part != o->part[0] && c->part != o->part[1] && c->part != o->part[2];
	return c->cur && c->cur != o->latest;
}

/* Calls fn on every stream client of s (live and dying hubs), while it
 * returns 0. Drops inside fn are safe: a dropped client is freed later,
 * by MHD (client_drop only ends its response). */
static void each_client(struct vc_streams *s, int (*fn)(struct client *, void *), void *arg)
{
	for (size_t i = 0; i <= s->n_hubs; i++) {
		struct hub *h = i < s->n_hubs ? s->hubs[i] : s->dying;

		for (; h; h = i < s->n_hubs ? NULL : h->next_dying)
			for (struct output *o = h->outputs; o; o = o->next)
				for (struct client *c = o->clients; c; c = c->next)
					if (fn(c, arg))
						return;
	}
}

struct oldest {
	int64_t now_us;
	struct client *c;
};

static int find_oldest(struct client *c, void *arg)
{
	struct oldest *o = arg;

	if (holds_old(c) && o->now_us - c->part_us >= HOLD_MIN_US &&
	    (!o->c || c->part_us < o->c->part_us))
		o->c = c;
	return 0;
}

void hold_check(struct vc_streams *s)
{
	size_t limit = hold_limit(s);

	/* each drop frees the part at once when c held it alone */
	while (held_total() > limit) {
		struct oldest o = { now_us(), NULL };

		each_client(s, find_oldest, &o);
		if (!o.c)
			return;
		client_drop(o.c);
		s->hold_drops[HOLD_MEM]++;
		snprintf(s->hold_peer, sizeof(s->hold_peer), "%s", o.c->peer);
	}
}

struct aged {
	struct vc_streams *s;
	int64_t now_us, max_us;
};

static int drop_aged(struct client *c, void *arg)
{
	struct aged *a = arg;

	if (!c->dropped && c->part_us && a->now_us - c->part_us > a->max_us) {
		client_drop(c);
		a->s->hold_drops[HOLD_AGE]++;
		snprintf(a->s->hold_peer, sizeof(a->s->hold_peer), "%s", c->peer);
	}
	return 0;
}

void hold_tick(struct vc_streams *s)
{
	unsigned hold_s = s->budget.hold_s ? s->budget.hold_s : VC_CONF_DEF_CLIENT_HOLD_S;
	struct aged a = { s, now_us(), (int64_t)hold_s * 1000000 };

	each_client(s, drop_aged, &a);
	hold_check(s);
	if (s->hold_drops[HOLD_AGE])
		log_info("%u stream client(s) took over %u s to send one frame, dropped (last: %s)",
			 s->hold_drops[HOLD_AGE], hold_s, s->hold_peer);
	if (s->hold_drops[HOLD_MEM])
		log_info("%u slow stream client(s) dropped: the frames held for them passed "
			 "frame_memory (%zu MiB) (last: %s)",
			 s->hold_drops[HOLD_MEM], hold_limit(s) >> 20, s->hold_peer);
	s->hold_drops[HOLD_AGE] = s->hold_drops[HOLD_MEM] = 0;
}
