/* The device-mode policy for a camera with many kinds of clients
 * (negotiate.h, "one camera, many kinds of clients"): requests are resolved
 * against the camera's default mode, not the mode it happens to stream, so
 * a URL means the same picture whoever else is connected; stream clients
 * steer the mode, one-shot requests only while nobody streams; hysteresis
 * keeps the current mode only for the clients still there. Pure code. */
#include "common/negotiate.h"

#include <errno.h>
#include <string.h>

/* negotiate.c's plan, not counted by vc_negotiate_plans (negotiate_int.h
 * is not included: its helpers clash with this file's own) */
int negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		   struct vc_plan *plan);

static uint32_t round_div(uint64_t a, uint64_t b)
{
	return b ? (uint32_t)((a + b / 2) / b) : 0;
}

void vc_negotiate_resolve(const struct vc_mode *def, uint32_t want_fps,
			  const struct vc_request *req, struct vc_request *out)
{
	struct vc_request q = *req;
	int turned = q.rotate % 180 == 90;
	/* the default picture in the delivered orientation */
	uint32_t dw = def ? (turned ? def->height : def->width) : 0;
	uint32_t dh = def ? (turned ? def->width : def->height) : 0;

	if (dw && dh) {
		if (!q.width && !q.height) {
			q.width = dw;
			q.height = dh;
		} else if (!q.height) {
			q.height = round_div((uint64_t)q.width * dh, dw);
			if (!q.height)
				q.height = 1;
		} else if (!q.width) {
			q.width = round_div((uint64_t)q.height * dw, dh);
			if (!q.width)
				q.width = 1;
		}
	}
	if (!q.fps)
		q.fps = want_fps;
	*out = q;
}

const char *vc_mode_why_str(enum vc_mode_why why)
{
	switch (why) {
	case VC_WHY_DEFAULT:
		return "default";
	case VC_WHY_STREAMS:
		return "streams";
	case VC_WHY_KEPT:
		return "kept";
	case VC_WHY_ONESHOT:
		return "oneshot";
	}
	return "?";
}

static int ival_known(struct vc_fract iv)
{
	return iv.num && iv.den;
}

static int same_size(const struct vc_mode *a, const struct vc_mode *b)
{
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height;
}

/* a's rate is below b's (both known). */
static int slower(const struct vc_mode *a, const struct vc_mode *b)
{
	return ival_known(a->ival) && ival_known(b->ival) &&
	       (uint64_t)a->ival.num * b->ival.den > (uint64_t)b->ival.num * a->ival.den;
}

static int mode_same(const struct vc_mode *a, const struct vc_mode *b)
{
	return same_size(a, b) && !slower(a, b) && !slower(b, a);
}

/* Whether mode m gives every request its size (rates aside: a one-shot
 * takes one frame). */
static int serves_all(const struct vc_mode *m, const struct vc_request *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct vc_plan p;
		if (negotiate_plan(m, &reqs[i], &p) < 0 || (p.adjusted & VC_ADJ_SIZE))
			return 0;
	}
	return 1;
}

int vc_negotiate_choose(const struct vc_caps *caps, const struct vc_mode *def,
			const struct vc_mode *cur, const struct vc_request *streams,
			size_t n_streams, const struct vc_request *oneshots, size_t n_oneshots,
			struct vc_mode *out, enum vc_mode_why *why)
{
	struct vc_mode best, kept;
	int rc;

	if (!caps || !def || !out || !why)
		return -EINVAL;
	if (!n_streams && !n_oneshots) {
		*out = *def;
		*why = VC_WHY_DEFAULT;
		return 0;
	}
	const struct vc_request *reqs = n_streams ? streams : oneshots;
	size_t n = n_streams ? n_streams : n_oneshots;

	/* one-shots alone switch only for a picture the current mode cannot
	 * give (a small snapshot is scaled, not worth two switches) */
	if (!n_streams && cur && serves_all(cur, oneshots, n_oneshots)) {
		*out = *cur;
		*why = VC_WHY_ONESHOT;
		return 0;
	}

	/* the best for these clients, as if nothing streamed */
	rc = vc_negotiate_mode(caps, NULL, def, reqs, n, &best);
	if (rc < 0)
		return rc;
	*why = n_streams ? VC_WHY_STREAMS : VC_WHY_ONESHOT;
	*out = best;
	if (!cur || mode_same(cur, &best))
		return 0;
	/* the current mode, unless another is clearly better for them */
	rc = vc_negotiate_mode(caps, cur, def, reqs, n, &kept);
	if (rc < 0 || !mode_same(&kept, cur))
		return 0;
	/* a rate above what the clients get from the best mode of the same
	 * picture serves nobody who is still there */
	if (same_size(cur, &best) && slower(&best, cur))
		return 0;
	*out = *cur;
	if (n_streams)
		*why = VC_WHY_KEPT;
	return 0;
}
