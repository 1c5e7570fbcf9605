/* Bridge to the negotiation module (see stream_neg.h). TEMPORARY stand-in:
 * delete the fallbacks once common/negotiate.c has landed. */
#include "server/stream_neg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#pragma weak vc_negotiate_plan
#pragma weak vc_negotiate_mode
#pragma weak vc_output_equal
#pragma weak vc_steps_str

static int fallback_plan(const struct vc_mode *m, const struct vc_request *r, struct vc_plan *p)
{
	uint32_t fcc = r->fourcc ? r->fourcc : m->fourcc;
	const struct vc_fmt *f = vc_fmt_by_fourcc(fcc);
	uint32_t w = r->width, h = r->height;

	if (!f || !vc_fmt_is_raw(f) || f->family == VC_FAM_BAYER || !m->width || !m->height)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	if (!w && !h) {
		w = m->width;
		h = m->height;
	} else if (!w) {
		w = (uint32_t)((uint64_t)m->width * h / m->height) & ~1u;
	} else if (!h) {
		h = (uint32_t)((uint64_t)m->height * w / m->width) & ~1u;
	}
	if (w > m->width || h > m->height) {
		w = m->width;
		h = m->height;
		p->adjusted |= VC_ADJ_SIZE;
	}
	if (!w || !h)
		return -EINVAL;
	int turn = r->rotate == 90 || r->rotate == 270;
	p->out = (struct vc_output){ fcc, turn ? h : w, turn ? w : h, 0, r->rotate, r->flip };
	p->fps = r->fps;
	p->decode_denom = 1;
	if (fcc == m->fourcc && w == m->width && h == m->height && !r->rotate && !r->flip) {
		p->steps = VC_STEP_PASSTHROUGH;
		return 0;
	}
	const struct vc_fmt *mf = vc_fmt_by_fourcc(m->fourcc);
	if (f->layout == VC_LAYOUT_COMPRESSED && mf && mf->layout == VC_LAYOUT_COMPRESSED &&
	    w == m->width && h == m->height) {
		/* JPEG camera, JPEG client, only rotate/flip: lossless, no re-encode */
		p->steps = VC_STEP_JPEG_XFORM;
		return 0;
	}
	if (f->layout == VC_LAYOUT_COMPRESSED) {
		p->steps |= VC_STEP_ENCODE;
		p->out.quality = r->quality ? r->quality : 80;
	} else if (fcc != m->fourcc) {
		p->steps |= VC_STEP_CONVERT;
	}
	if (w != m->width || h != m->height)
		p->steps |= VC_STEP_SCALE;
	if (r->rotate || r->flip)
		p->steps |= VC_STEP_ROTATE;
	return 0;
}

int vc_sneg_plan(const struct vc_mode *mode, const struct vc_request *req, struct vc_plan *plan)
{
	if (vc_negotiate_plan)
		return vc_negotiate_plan(mode, req, plan);
	return fallback_plan(mode, req, plan);
}

int vc_sneg_mode(const struct vc_caps *caps, const struct vc_mode *cur,
		 const struct vc_request *reqs, size_t n, struct vc_mode *out)
{
	if (vc_negotiate_mode)
		return vc_negotiate_mode(caps, cur, NULL, reqs, n, out);
	if (cur) {
		*out = *cur;
		return 0;
	}
	if (!caps->n_fmts || !caps->fmts[0].n_sizes)
		return -ENOENT;
	const struct vc_caps_size *s = &caps->fmts[0].sizes[0];
	*out = (struct vc_mode){ caps->fmts[0].fourcc, s->width, s->height,
				 s->n_ivals ? s->ival[0] : (struct vc_fract){ 0, 0 } };
	return 0;
}

int vc_sneg_equal(const struct vc_output *a, const struct vc_output *b)
{
	if (vc_output_equal)
		return vc_output_equal(a, b);
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->quality == b->quality && a->rotate == b->rotate && a->flip == b->flip;
}

const char *vc_sneg_steps(unsigned steps, uint8_t denom, char *buf, size_t len)
{
	static const char *const names[] = { "passthrough", "decode", "convert", "scale",
					     "rotate", "encode", "jpeg-transform" };
	size_t o = 0;

	if (vc_steps_str)
		return vc_steps_str(steps, denom, buf, len);
	buf[0] = 0;
	for (unsigned i = 0; i < 7 && o < len; i++)
		if (steps & (1u << i))
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "+" : "", names[i]);
	return buf;
}
