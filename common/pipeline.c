/* Plan execution (pipeline.h). The picture moves through at most three
 * scratch pictures owned by the pipeline; the last stage always writes into
 * the output frame so no final copy is made. The hub for stages that need
 * one (decoding for an encode, turning a format libyuv cannot turn) is
 * 8-bit I420: libjpeg-turbo reads/writes it directly and every transform
 * supports it. */
#include "common/pipeline.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <linux/videodev2.h>

#include "common/convert.h"
#include "common/h264.h"
#include "common/h264enc.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "common/transform.h"

#define LOG_PREFIX "pipeline: "
#include "common/log.h"

struct scratch {
	struct vc_frame *f;
	struct vc_image img;
};

/* Results the pipeline keeps for reuse (result_frame): the latest one an
 * output holds and the one in flight (what the memory budget estimates). */
#define KEEP 2

struct vc_pipeline {
	struct vc_mode mode;
	struct vc_plan plan;
	const struct vc_fmt *in_fmt, *out_fmt, *hub;
	struct vc_transform t;
	struct vc_jpeg *jpeg;
	struct vc_conv *conv;
	struct scratch s[3];
	struct vc_frame *keep[KEEP]; /* one ref each, for reuse */
	unsigned keep_next;          /* the slot a new result takes */
	size_t jpeg_room;            /* what a JPEG result is made with (jpeg_learn) */
	/* H.264 plans: `pic` makes the I420 picture, `enc` encodes it */
	struct vc_pipeline *pic;
	struct vc_h264enc *enc;
	atomic_int force_key;
};

static int run_h264(struct vc_pipeline *p, const struct vc_frame *in, struct vc_frame **out);

static void scratch_free(struct scratch *s)
{
	vc_frame_unref(s->f);
	memset(s, 0, sizeof(*s));
}

/* A writable picture of fmt/w/h in colorimetry `color`, reusing the
 * previous one when it matches. */
static int scratch_get(struct scratch *s, const struct vc_fmt *fmt, uint32_t w, uint32_t h,
		       const struct vc_colorimetry *color)
{
	if (!s->f || s->f->fmt != fmt || s->f->geom.width != w || s->f->geom.height != h) {
		scratch_free(s);
		s->f = vc_frame_new_fmt(fmt, w, h);
		if (!s->f)
			return -ENOMEM;
		uint8_t *mem[3] = { NULL, NULL, NULL };
		for (int i = 0; i < s->f->geom.mem_planes; i++)
			mem[i] = vc_frame_data(s->f, i);
		vc_image_from_geom(fmt, &s->f->geom, mem, &s->img);
	}
	s->img.color = *color;
	return 0;
}

/* Converts/scales *cur into scratch s (fmt, w x h); *cur then is s's picture. */
static int convert_into(struct vc_conv *conv, struct scratch *s, const struct vc_fmt *fmt,
			uint32_t w, uint32_t h, const struct vc_colorimetry *color,
			const struct vc_image **cur)
{
	int rc = scratch_get(s, fmt, w, h, color);
	if (rc < 0)
		return rc;
	rc = vc_conv_run(conv, *cur, &s->img);
	if (rc < 0)
		return rc;
	*cur = &s->img;
	return 0;
}

/* An H.264 plan: the I420 picture's own pipeline, then the encoder at the
 * plan's rate (30 when neither the request nor the mode says). */
static struct vc_pipeline *new_h264(const struct vc_mode *mode, const struct vc_plan *plan)
{
	struct vc_plan pic = *plan;
	struct vc_h264enc_cfg cfg = { .width = plan->out.width, .height = plan->out.height,
				      .fps = plan->fps ? plan->fps : 30, .bitrate = plan->out.bitrate,
				      .gop = plan->out.gop };
	struct vc_pipeline *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pic.out.fourcc = V4L2_PIX_FMT_YUV420;
	pic.out.bitrate = pic.out.gop = 0;
	pic.out.fps = 0;
	pic.steps &= ~(unsigned)VC_STEP_ENCODE;
	if (!pic.steps) /* the camera gives this I420 picture as it is */
		pic.steps = VC_STEP_PASSTHROUGH;
	p->mode = *mode;
	p->plan = *plan;
	p->in_fmt = vc_fmt_by_fourcc(mode->fourcc);
	p->out_fmt = vc_h264_fmt();
	p->pic = vc_pipeline_new(mode, &pic);
	int rc = p->pic ? vc_h264enc_new(&cfg, &p->enc) : -ENOMEM;

	if (rc < 0) {
		log_error("no H.264 encoder for %ux%u@%u: %s", cfg.width, cfg.height, cfg.fps,
			  strerror(-rc));
		vc_pipeline_free(p);
		return NULL;
	}
	return p;
}

struct vc_pipeline *vc_pipeline_new(const struct vc_mode *mode, const struct vc_plan *plan)
{
	if (plan->out.fourcc == V4L2_PIX_FMT_H264)
		return new_h264(mode, plan);
	const struct vc_fmt *in_fmt = vc_fmt_by_fourcc(mode->fourcc);
	const struct vc_fmt *out_fmt = vc_fmt_by_fourcc(plan->out.fourcc);
	if (!in_fmt || !out_fmt || !plan->steps) {
		log_error("bad plan (steps %#x)", plan->steps);
		return NULL;
	}
	struct vc_pipeline *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->mode = *mode;
	p->plan = *plan;
	p->in_fmt = in_fmt;
	p->out_fmt = out_fmt;
	p->hub = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	p->t = (struct vc_transform){ plan->out.rotate, plan->out.flip };
	if (plan->steps & (VC_STEP_DECODE | VC_STEP_ENCODE | VC_STEP_JPEG_XFORM)) {
		p->jpeg = vc_jpeg_new();
		if (!p->jpeg)
			goto fail;
	}
	int repack = (plan->steps & VC_STEP_PASSTHROUGH) && in_fmt->family != VC_FAM_COMPRESSED;
	if (repack || (plan->steps & (VC_STEP_CONVERT | VC_STEP_SCALE | VC_STEP_ROTATE |
				       VC_STEP_DECODE | VC_STEP_ENCODE))) {
		p->conv = vc_conv_new();
		if (!p->conv)
			goto fail;
	}
	return p;
fail:
	vc_pipeline_free(p);
	return NULL;
}

void vc_pipeline_free(struct vc_pipeline *p)
{
	if (!p)
		return;
	for (int i = 0; i < 3; i++)
		scratch_free(&p->s[i]);
	for (int i = 0; i < KEEP; i++)
		vc_frame_unref(p->keep[i]);
	vc_jpeg_free(p->jpeg);
	vc_conv_free(p->conv);
	vc_pipeline_free(p->pic);
	vc_h264enc_free(p->enc);
	free(p);
}

void vc_pipeline_force_key(struct vc_pipeline *p)
{
	atomic_store(&p->force_key, 1);
}


/* Metadata of the output frame o made from in; `color` is what o's pixels
 * are in (see pipeline.h for field and JPEG). */
static void copy_meta(struct vc_frame *o, const struct vc_frame *in,
		      const struct vc_colorimetry *color)
{
	int jpeg = o->fmt->family == VC_FAM_COMPRESSED;

	o->seq = in->seq;
	o->ts_us = in->ts_us;
	o->ts_real_us = in->ts_real_us;
	o->field = jpeg ? V4L2_FIELD_NONE : in->field;
	o->color = jpeg ? (struct vc_colorimetry){ 0 } : *color;
}

/* Whether raw frame f has plane 0 at the minimum stride (chroma strides
 * follow it, V4L2 rule). */
static int packed(const struct vc_frame *f)
{
	return f->geom.plane[0].stride == vc_fmt_min_stride(f->fmt, f->geom.width);
}

int vc_pipeline_zero_copy(const struct vc_plan *plan, const struct vc_frame *in)
{
	if (!(plan->steps & VC_STEP_PASSTHROUGH) || !in->fmt)
		return 0;
	return in->fmt->family == VC_FAM_COMPRESSED || packed(in);
}

/* A heap JPEG frame of w x h with room for cap bytes. */
static struct vc_frame *jpeg_frame(const struct vc_fmt *mjpg, uint32_t w, uint32_t h, size_t cap)
{
	struct vc_geom g;
	if (vc_fmt_geometry(mjpg, w, h, 0, &g) < 0)
		return NULL;
	struct vc_frame *f = vc_frame_new(cap);
	if (!f)
		return NULL;
	f->fmt = mjpg;
	g.sizeimage = g.mem_size[0] = cap;
	f->geom = g;
	return f;
}

/* A JPEG that outgrew its room is made again in a worst-case buffer, not
 * kept for reuse: the next results are sized by it. */
static struct vc_frame *jpeg_worst_case(const struct vc_pipeline *p, uint32_t w, uint32_t h)
{
	return jpeg_frame(p->out_fmt, w, h, vc_jpeg_bound(w, h));
}

/* A result frame of fmt, w x h (JPEG, jpeg_cap > 0: with room for that
 * many bytes) for the caller, one ref. A result made earlier is reused once
 * nobody else holds it (its refs back to the pipeline's own): an output's
 * results stay a few allocations instead of a malloc and free per frame,
 * which left glibc's arenas holding tens of MiB of freed frames under many
 * outputs (tests/integ/qa_memory_budget.sh) and faulted fresh pages in.
 * Only this pipeline's job (one at a time) calls it; other holders only
 * ever drop their refs, so refs == 1 stays true once seen. */
static struct vc_frame *result_frame(struct vc_pipeline *p, const struct vc_fmt *fmt, uint32_t w,
				     uint32_t h, size_t jpeg_cap)
{
	for (unsigned i = 0; i < KEEP; i++) {
		struct vc_frame *f = p->keep[i];
		if (!f || atomic_load_explicit(&f->refs, memory_order_acquire) != 1 || f->fmt != fmt ||
		    f->geom.width != w || f->geom.height != h || f->owned_size < jpeg_cap ||
		    (jpeg_cap && f->owned_size / 2 > jpeg_cap)) /* made for a guess: let go */
			continue;
		vc_frame_reset(f);
		return vc_frame_ref(f);
	}
	struct vc_frame *f = jpeg_cap ? jpeg_frame(fmt, w, h, jpeg_cap) : vc_frame_new_fmt(fmt, w, h);
	if (!f)
		return NULL;
	unsigned k = p->keep_next++ % KEEP;
	vc_frame_unref(p->keep[k]); /* a holder elsewhere keeps it alive */
	p->keep[k] = vc_frame_ref(f);
	return f;
}

static int out_image(struct vc_frame *f, struct vc_image *img)
{
	uint8_t *mem[3] = { NULL, NULL, NULL };
	for (int i = 0; i < f->geom.mem_planes; i++)
		mem[i] = vc_frame_data(f, i);
	vc_image_from_geom(f->fmt, &f->geom, mem, img);
	return 0;
}

/* The input matches the mode the pipeline was built for: a JPEG's header
 * is parsed into *info (unless passed through), a raw frame described in
 * *src. 0, -ESTALE (another mode), or the parse's error. */
static int check_input(const struct vc_pipeline *p, const struct vc_frame *in,
		       struct vc_jpeg_info *info, struct vc_image *src)
{
	const struct vc_plan *pl = &p->plan;
	int compressed_in = p->in_fmt->family == VC_FAM_COMPRESSED;
	int rc;

	if (!in->fmt || in->fmt->fourcc != p->mode.fourcc)
		return -ESTALE;
	if (compressed_in && (pl->steps & VC_STEP_PASSTHROUGH)) {
		/* capture validated the JPEG already (vc_jpeg_parse per buffer);
		 * a full parse here would cost ~0.3 ms per 1080p frame */
		if (in->geom.width != p->mode.width || in->geom.height != p->mode.height)
			return -ESTALE;
	} else if (compressed_in) {
		rc = vc_jpeg_parse(in->mem[0], in->bytesused[0], info);
		if (rc < 0)
			return rc;
		if (info->width != p->mode.width || info->height != p->mode.height)
			return -ESTALE;
	} else {
		if (in->geom.width != p->mode.width || in->geom.height != p->mode.height)
			return -ESTALE;
		if (vc_image_from_frame(in, src) < 0)
			return -EBADMSG;
	}
	return 0;
}

/* Passthrough of a raw frame with padded strides: repacked into *out. */
static int run_repack(struct vc_pipeline *p, const struct vc_frame *in, const struct vc_image *src,
		      const struct vc_colorimetry *color, struct vc_frame **out)
{
	struct vc_image dst;
	struct vc_frame *o = result_frame(p, p->out_fmt, in->geom.width, in->geom.height, 0);
	if (!o)
		return -ENOMEM;
	out_image(o, &dst);
	dst.color = *color;
	int rc = vc_conv_run(p->conv, src, &dst);
	if (rc < 0) {
		vc_frame_unref(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* The lossless rotation/flip of in (size bytes of JPEG) into o. */
static int xform_into(struct vc_pipeline *p, const struct vc_frame *in, size_t size,
		      struct vc_frame *o)
{
	uint32_t w, h;
	size_t len;
	int rc = vc_jpeg_transform(p->jpeg, in->mem[0], size, p->t.rotate, p->t.flip,
				   vc_frame_data(o, 0), o->geom.mem_size[0], &len, &w, &h);

	if (rc < 0)
		return rc;
	o->bytesused[0] = len;
	o->geom.width = w;
	o->geom.height = h;
	return 0;
}

/* A JPEG rotated or flipped losslessly (no decode) into *out. */
static int run_jpeg_xform(struct vc_pipeline *p, const struct vc_frame *in,
			  const struct vc_jpeg_info *info, struct vc_frame **out)
{
	struct vc_frame *o = result_frame(p, p->out_fmt, p->mode.width, p->mode.height,
					  info->size + info->size / 4 + 4096);
	if (!o)
		return -ENOMEM;
	int rc = xform_into(p, in, info->size, o);
	if (rc == -ENOSPC) { /* never seen: a transform keeps the size, give or take */
		vc_frame_unref(o);
		o = jpeg_worst_case(p, p->mode.width, p->mode.height);
		rc = o ? xform_into(p, in, info->size, o) : -ENOMEM;
	}
	if (rc < 0) {
		vc_frame_unref(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* What the decode/convert/rotate/encode stages share for one frame. */
struct run {
	struct vc_pipeline *p;
	const struct vc_frame *in;
	const struct vc_jpeg_info *info;
	struct vc_colorimetry color;
	struct vc_image dst;       /* the output frame's picture */
	const struct vc_image *cur; /* the picture the next stage reads */
	const struct vc_fmt *rfmt; /* format the rotation runs in (rotate only) */
	uint32_t ow, oh;           /* delivered size (after rotation) */
	uint32_t pw, ph;           /* size before rotation */
	int encode, rotate;
	int short_room;            /* the encode ran out of the output's room */
};

/* Stage 1: decode a JPEG, straight into the output when nothing follows.
 * 1 when the output is complete, 0 to go on (r->cur decoded), or -errno. */
static int stage_decode(struct run *r)
{
	struct vc_pipeline *p = r->p;
	const struct vc_plan *pl = &p->plan;
	uint32_t dw = vc_jpeg_scaled(p->mode.width, pl->decode_denom);
	uint32_t dh = vc_jpeg_scaled(p->mode.height, pl->decode_denom);
	const struct vc_image *target;
	int rc;

	if (!r->encode && !r->rotate && dw == r->ow && dh == r->oh) {
		target = &r->dst; /* straight into the output */
	} else {
		const struct vc_fmt *df = r->rotate && dw == r->pw && dh == r->ph ? r->rfmt : p->hub;
		rc = scratch_get(&p->s[0], df, dw, dh, &r->color);
		if (rc < 0)
			return rc;
		target = &p->s[0].img;
	}
	rc = vc_jpeg_decode(p->jpeg, r->in->mem[0], r->info->size, pl->decode_denom, target);
	if (rc < 0)
		return rc;
	if (target == &r->dst)
		return 1;
	r->cur = target;
	return 0;
}

/* Stages 2 and 3 with a rotation: convert/scale into the rotation's format
 * and size, rotate (into the output when the format is right), convert to
 * the output unless encoding follows. 1 done, 0 go on, or -errno. */
static int stage_rotate(struct run *r)
{
	struct vc_pipeline *p = r->p;
	int rc;

	if (r->cur->fmt != r->rfmt || r->cur->width != r->pw || r->cur->height != r->ph) {
		rc = convert_into(p->conv, &p->s[1], r->rfmt, r->pw, r->ph, &r->color, &r->cur);
		if (rc < 0)
			return rc;
	}
	/* stage 3: rotate, into the output when the format is right */
	const struct vc_image *rt;
	if (!r->encode && r->rfmt == p->out_fmt) {
		rt = &r->dst;
	} else {
		rc = scratch_get(&p->s[2], r->rfmt, r->ow, r->oh, &r->color);
		if (rc < 0)
			return rc;
		rt = &p->s[2].img;
	}
	rc = vc_transform_run(r->cur, rt, p->t);
	if (rc < 0)
		return rc;
	if (rt == &r->dst)
		return 1;
	r->cur = rt;
	if (!r->encode) {
		rc = vc_conv_run(p->conv, r->cur, &r->dst);
		return rc < 0 ? rc : 1;
	}
	return 0;
}

/* Stage 4: encode r->cur into o; -ENOSPC (and r->short_room) when the
 * JPEG does not fit o. */
static int stage_encode(struct run *r, struct vc_frame *o)
{
	size_t len;
	int rc = vc_jpeg_encode(r->p->jpeg, r->cur, r->p->plan.out.quality, vc_frame_data(o, 0),
				o->geom.mem_size[0], &len);

	r->short_room = rc == -ENOSPC;
	if (rc < 0)
		return rc;
	o->bytesused[0] = len;
	return 0;
}

/* JPEG results are made with room for the largest this pipeline wrote and
 * half as much again (rounded to 4 KiB), not at the encoder's worst case
 * (vc_jpeg_bound: 6 bytes per pixel, 1.8 MB for a VGA frame of 30-100 KB).
 * The first frame guesses a quarter of the worst case (1.5 bytes per
 * pixel). The room grows only when a frame leaves less than a third of it
 * free, so the kept results go on being reused. */
static size_t jpeg_room_for(const struct vc_pipeline *p, uint32_t w, uint32_t h)
{
	return p->jpeg_room ? p->jpeg_room : (vc_jpeg_bound(w, h) / 4 + 4095) & ~(size_t)4095;
}

static void jpeg_learn(struct vc_pipeline *p, size_t len, size_t worst)
{
	if (len + len / 2 > p->jpeg_room)
		p->jpeg_room = (len + len / 2 + 4096 + 4095) & ~(size_t)4095;
	if (p->jpeg_room > worst)
		p->jpeg_room = worst;
}

/* Decode, convert/scale, rotate and encode as the plan says, into o. */
static int run_stages(struct run *r, struct vc_frame *o)
{
	struct vc_pipeline *p = r->p;
	int rc;

	/* stage 1: decode */
	if (p->in_fmt->family == VC_FAM_COMPRESSED) {
		rc = stage_decode(r);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}

	/* stage 2: convert/scale */
	if (r->rotate) {
		rc = stage_rotate(r);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	} else if (!r->encode) {
		return vc_conv_run(p->conv, r->cur, &r->dst);
	} else if (r->cur->width != r->ow || r->cur->height != r->oh) {
		/* scale before encoding, in the hub format */
		rc = convert_into(p->conv, &p->s[1], p->hub, r->ow, r->oh, &r->color, &r->cur);
		if (rc < 0)
			return rc;
	}

	return stage_encode(r, o);
}

/* The general path: sizes and the rotation's format chosen, the output
 * frame allocated, then run_stages(). */
static int run_general(struct vc_pipeline *p, const struct vc_frame *in,
		       const struct vc_jpeg_info *info, const struct vc_image *src,
		       const struct vc_colorimetry *color, struct vc_frame **out)
{
	const struct vc_plan *pl = &p->plan;
	int compressed_in = p->in_fmt->family == VC_FAM_COMPRESSED;
	struct run r = { .p = p, .in = in, .info = info, .color = *color, .cur = src };

	/* sizes: delivered (after rotation) and before rotation */
	r.ow = pl->out.width, r.oh = pl->out.height;
	int turned = p->t.rotate == 90 || p->t.rotate == 270;
	r.pw = turned ? r.oh : r.ow, r.ph = turned ? r.ow : r.oh;
	r.rotate = pl->steps & VC_STEP_ROTATE;
	r.encode = pl->steps & VC_STEP_ENCODE;

	struct vc_frame *o = result_frame(p, p->out_fmt, r.ow, r.oh,
					  r.encode ? jpeg_room_for(p, r.ow, r.oh) : 0);
	if (!o)
		return -ENOMEM;
	out_image(o, &r.dst);
	r.dst.color = r.color;

	/* format the rotation runs in */
	if (r.rotate) {
		const struct vc_fmt *want = r.encode ? (compressed_in ? p->hub : p->in_fmt) : p->out_fmt;
		r.rfmt = vc_transform_supported(want, p->t) ? want : p->hub;
	}
	int rc = run_stages(&r, o);
	if (rc == -ENOSPC && r.short_room) {
		vc_frame_unref(o);
		o = jpeg_worst_case(p, r.ow, r.oh);
		rc = o ? stage_encode(&r, o) : -ENOMEM;
	}
	if (rc < 0) {
		vc_frame_unref(o);
		return rc;
	}
	if (r.encode)
		jpeg_learn(p, o->bytesused[0], vc_jpeg_bound(r.ow, r.oh));
	*out = o;
	return 0;
}

int vc_pipeline_run(struct vc_pipeline *p, const struct vc_frame *in, struct vc_frame **out)
{
	const struct vc_plan *pl = &p->plan;
	int compressed_in = p->in_fmt->family == VC_FAM_COMPRESSED;
	struct vc_jpeg_info info;
	struct vc_image src;
	struct vc_frame *o = NULL;
	int rc;

	*out = NULL;
	if (p->enc)
		return run_h264(p, in, out);
	rc = check_input(p, in, &info, &src);
	if (rc < 0)
		return rc;
	if (vc_pipeline_zero_copy(pl, in)) {
		*out = vc_frame_ref((struct vc_frame *)in); /* shared, never written */
		return 0;
	}
	/* raw stages keep the device's colorimetry: no matrix/range change
	 * between formats, and the output states what it is in */
	struct vc_colorimetry color = compressed_in ? (struct vc_colorimetry){ 0 } : src.color;
	if (pl->steps & VC_STEP_PASSTHROUGH) /* padded strides: repack */
		rc = run_repack(p, in, &src, &color, &o);
	else if (pl->steps & VC_STEP_JPEG_XFORM)
		rc = run_jpeg_xform(p, in, &info, &o);
	else
		rc = run_general(p, in, &info, &src, &color, &o);
	if (rc < 0)
		return rc;
	copy_meta(o, in, &color);
	*out = o;
	return 0;
}

/* H.264: the I420 picture, encoded. A picture the encoder skips (to hold
 * the output's bitrate) is -EAGAIN: nothing to publish, no empty access
 * unit; the next one published keeps its own capture time. */
static int run_h264(struct vc_pipeline *p, const struct vc_frame *in, struct vc_frame **out)
{
	struct vc_frame *pic = NULL, *o;
	struct vc_h264enc_out eo;
	int rc = vc_pipeline_run(p->pic, in, &pic);

	if (rc < 0)
		return rc;
	if (atomic_exchange(&p->force_key, 0))
		vc_h264enc_force_idr(p->enc);
	const uint8_t *plane[3];
	uint32_t stride[3];

	for (int i = 0; i < 3; i++) {
		plane[i] = vc_frame_plane(pic, i);
		stride[i] = pic->geom.plane[i].stride;
	}
	rc = vc_h264enc_encode(p->enc, plane, stride, pic->ts_us / 1000, &eo);
	vc_frame_unref(pic);
	if (rc < 0)
		return rc;
	if (!eo.len)
		return -EAGAIN;
	o = vc_frame_new(eo.len);
	if (!o)
		return -ENOMEM;
	memcpy(vc_frame_data(o, 0), eo.data, eo.len);
	o->fmt = p->out_fmt;
	o->geom.width = p->plan.out.width;
	o->geom.height = p->plan.out.height;
	o->key = (uint8_t)eo.key;
	copy_meta(o, in, &(struct vc_colorimetry){ 0 });
	*out = o;
	return 0;
}
