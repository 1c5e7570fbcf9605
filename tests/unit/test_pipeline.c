/* Unit tests of common/pipeline.c: every combination of a few device modes x
 * requests runs on a synthetic, asymmetric picture; the output must have the
 * planned format and size, and its luma must match a reference made by a
 * different route (scale the I420 original with the converter, turn it with
 * the transform) at a PSNR that a wrong orientation, size or colour would
 * never reach. Also: passthrough is the same frame, stale frames are refused. */
#include "common/pipeline.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/videodev2.h>

#include "common/convert.h"
#include "common/h264.h"
#include "common/jpeg.h"
#include "common/transform.h"
#include "tests/unit/check.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct vc_fmt *I420;

/* I420 picture: diagonal gradients, a bright block top-left, a dark bar on
 * the right, so any flip/turn/shift moves a lot of energy. */
static struct vc_frame *pattern(uint32_t w, uint32_t h)
{
	struct vc_frame *f = vc_frame_new_fmt(I420, w, h);
	uint8_t *y = vc_frame_data(f, 0);
	for (uint32_t j = 0; j < h; j++)
		for (uint32_t i = 0; i < w; i++) {
			int v = 40 + (int)(150 * i / w) + (int)(40 * j / h);
			if (i < w / 4 && j < h / 3)
				v = 235;
			if (i > w * 7 / 8)
				v = 20;
			y[j * f->geom.plane[0].stride + i] = (uint8_t)v;
		}
	for (int p = 1; p < 3; p++) {
		uint8_t *c = vc_frame_data(f, 0) + f->geom.plane[p].offset;
		for (uint32_t j = 0; j < f->geom.plane[p].lines; j++)
			for (uint32_t i = 0; i < f->geom.plane[p].stride; i++)
				c[j * f->geom.plane[p].stride + i] =
					(uint8_t)(p == 1 ? 90 + 60 * i / f->geom.plane[p].stride
							 : 160 - 50 * j / f->geom.plane[p].lines);
	}
	return f;
}

static void view(struct vc_frame *f, struct vc_image *img)
{
	uint8_t *mem[3] = { NULL, NULL, NULL };
	for (int i = 0; i < f->geom.mem_planes; i++)
		mem[i] = vc_frame_data(f, i);
	vc_image_from_geom(f->fmt, &f->geom, mem, img);
}

/* The captured frame of a mode: the pattern converted (or JPEG-encoded at
 * q95) into the mode's format. */
static struct vc_frame *capture(struct vc_jpeg *j, struct vc_conv *cv, const struct vc_mode *m,
				const struct vc_frame *pat)
{
	const struct vc_fmt *f = vc_fmt_by_fourcc(m->fourcc);
	struct vc_image src;
	vc_image_from_frame(pat, &src);
	if (f->family == VC_FAM_COMPRESSED) {
		struct vc_frame *o = vc_frame_new(vc_jpeg_bound(m->width, m->height));
		size_t len;
		vc_jpeg_encode(j, &src, 95, vc_frame_data(o, 0), o->geom.mem_size[0], &len);
		o->fmt = f;
		vc_fmt_geometry(f, m->width, m->height, 0, &o->geom);
		o->bytesused[0] = len;
		o->seq = 42;
		return o;
	}
	struct vc_frame *o = vc_frame_new_fmt(f, m->width, m->height);
	struct vc_image dst;
	view(o, &dst);
	vc_conv_run(cv, &src, &dst);
	o->seq = 42;
	return o;
}

/* Output -> I420 heap frame of the same size (decoded if JPEG). */
static struct vc_frame *to_i420(struct vc_jpeg *j, struct vc_conv *cv, const struct vc_frame *f)
{
	uint32_t w = f->geom.width, h = f->geom.height;
	struct vc_frame *o = vc_frame_new_fmt(I420, w, h);
	struct vc_image dst;
	view(o, &dst);
	int rc;
	if (f->fmt->family == VC_FAM_COMPRESSED) {
		rc = vc_jpeg_decode(j, f->mem[0], f->bytesused[0], 1, &dst);
	} else {
		struct vc_image src;
		vc_image_from_frame(f, &src);
		rc = vc_conv_run(cv, &src, &dst);
	}
	if (rc < 0) {
		vc_frame_unref(o);
		return NULL;
	}
	return o;
}

static double psnr_luma(const struct vc_frame *a, const struct vc_frame *b)
{
	double se = 0;
	uint32_t w = a->geom.width, h = a->geom.height;
	for (uint32_t j = 0; j < h; j++)
		for (uint32_t i = 0; i < w; i++) {
			int d = vc_frame_plane(a, 0)[j * a->geom.plane[0].stride + i] -
				vc_frame_plane(b, 0)[j * b->geom.plane[0].stride + i];
			se += d * d;
		}
	if (se == 0)
		return 99;
	return 10 * log10(255.0 * 255.0 * w * h / se);
}

/* The reference: pattern scaled to the pre-rotation size, then turned. */
static struct vc_frame *reference(struct vc_conv *cv, const struct vc_frame *pat,
				  const struct vc_plan *pl)
{
	struct vc_transform t = { pl->out.rotate, pl->out.flip };
	int turned = t.rotate == 90 || t.rotate == 270;
	uint32_t pw = turned ? pl->out.height : pl->out.width;
	uint32_t ph = turned ? pl->out.width : pl->out.height;
	struct vc_frame *s = vc_frame_new_fmt(I420, pw, ph);
	struct vc_frame *r = vc_frame_new_fmt(I420, pl->out.width, pl->out.height);
	struct vc_image src, a, b;
	vc_image_from_frame(pat, &src);
	view(s, &a);
	view(r, &b);
	vc_conv_run(cv, &src, &a);
	vc_transform_run(&a, &b, t);
	vc_frame_unref(s);
	return r;
}

#define MJPG V4L2_PIX_FMT_MJPEG
#define YUYV V4L2_PIX_FMT_YUYV
#define NV12 V4L2_PIX_FMT_NV12
#define RGB3 V4L2_PIX_FMT_RGB24
#define GREY V4L2_PIX_FMT_GREY
#define YU12 V4L2_PIX_FMT_YUV420
#define UYVY V4L2_PIX_FMT_UYVY

static const struct vc_mode modes[] = {
	{ YUYV, 640, 480, { 1, 30 } },
	{ MJPG, 640, 480, { 1, 30 } },
	{ NV12, 320, 240, { 1, 30 } },
	{ RGB3, 320, 240, { 1, 30 } },
	{ MJPG, 1280, 720, { 1, 30 } },
};

static const struct vc_request reqs[] = {
	{ 0 },
	{ MJPG },
	{ MJPG, 320, 240 },
	{ MJPG, 0, 0, 0, 0, 90 },
	{ MJPG, 160, 0, 0, 50, 0, VC_FLIP_V },
	{ YUYV },
	{ YU12, 160, 120 },
	{ RGB3, 0, 0, 0, 0, 270, VC_FLIP_H },
	{ NV12, 200 },
	{ GREY, 0, 0, 0, 0, 180 },
	{ UYVY, 0, 0, 0, 0, 90 },
	{ MJPG, 0, 0, 0, 0, 180, VC_FLIP_H },
};

static void combinations(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	struct vc_conv *cv = vc_conv_new();
	int runs = 0;
	double worst = 99;
	for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
		struct vc_frame *pat = pattern(modes[m].width, modes[m].height);
		struct vc_frame *in = capture(j, cv, &modes[m], pat);
		for (size_t r = 0; r < ARRAY_LEN(reqs); r++) {
			struct vc_plan pl;
			char st[96];
			if (vc_negotiate_plan(&modes[m], &reqs[r], &pl) < 0) {
				CHECK(0, "mode %zu req %zu: no plan", m, r);
				continue;
			}
			vc_steps_str(pl.steps, pl.decode_denom, st, sizeof(st));
			struct vc_pipeline *p = vc_pipeline_new(&modes[m], &pl);
			struct vc_frame *out = NULL;
			int rc = p ? vc_pipeline_run(p, in, &out) : -ENOMEM;
			/* twice: scratch reuse must give the same result */
			struct vc_frame *out2 = NULL;
			int rc2 = p ? vc_pipeline_run(p, in, &out2) : -ENOMEM;
			CHECK(rc == 0 && rc2 == 0, "mode %zu req %zu (%s): rc %d %d", m, r, st, rc, rc2);
			if (rc || rc2) {
				vc_frame_unref(out);
				vc_frame_unref(out2);
				vc_pipeline_free(p);
				continue;
			}
			runs++;
			uint32_t ofcc = out->fmt->fourcc;
			uint32_t w = out->geom.width, h = out->geom.height;
			if (ofcc == MJPG) {
				struct vc_jpeg_info info;
				CHECK(vc_jpeg_parse(out->mem[0], out->bytesused[0], &info) == 0 &&
					      info.width == w && info.height == h,
				      "mode %zu req %zu: JPEG header %ux%u vs %ux%u", m, r,
				      info.width, info.height, w, h);
			}
			CHECK(ofcc == pl.out.fourcc && w == pl.out.width && h == pl.out.height &&
				      out->seq == 42,
			      "mode %zu req %zu (%s): got %08x %ux%u want %08x %ux%u", m, r, st, ofcc,
			      w, h, pl.out.fourcc, pl.out.width, pl.out.height);
			CHECK(out2->bytesused[0] == out->bytesused[0] &&
				      !memcmp(out2->mem[0], out->mem[0], out->bytesused[0]),
			      "mode %zu req %zu: second run differs", m, r);
			if (pl.steps & VC_STEP_PASSTHROUGH)
				CHECK(out == in, "passthrough is the captured frame");
			struct vc_frame *got = to_i420(j, cv, out);
			struct vc_frame *ref = reference(cv, pat, &pl);
			double q = got ? psnr_luma(got, ref) : 0;
			if (q < worst)
				worst = q;
			/* JPEG q50 and 4:2:x chroma paths lose some; a wrong
			 * turn/flip/size gives < 15 dB on this picture */
			CHECK(q >= 28, "mode %zu req %zu (%s): luma PSNR %.1f dB", m, r, st, q);
			vc_frame_unref(got);
			vc_frame_unref(ref);
			vc_frame_unref(out);
			vc_frame_unref(out2);
			vc_pipeline_free(p);
		}
		vc_frame_unref(in);
		vc_frame_unref(pat);
	}
	printf("  %d runs, worst luma PSNR %.1f dB\n", runs, worst);
	CHECK(runs == (int)(ARRAY_LEN(modes) * ARRAY_LEN(reqs)), "runs %d", runs);
	vc_jpeg_free(j);
	vc_conv_free(cv);
}

/* The reference itself must be able to fail: a flipped reference scores low. */
static void reference_discriminates(void)
{
	struct vc_conv *cv = vc_conv_new();
	struct vc_frame *pat = pattern(320, 240);
	struct vc_plan a = { .out = { YU12, 320, 240, 0, 0, 0 } };
	struct vc_plan b = { .out = { YU12, 320, 240, 0, 0, VC_FLIP_H } };
	struct vc_plan c = { .out = { YU12, 320, 240, 0, 180, 0 } };
	struct vc_frame *ra = reference(cv, pat, &a), *rb = reference(cv, pat, &b),
			*rc = reference(cv, pat, &c);
	double ab = psnr_luma(ra, rb), ac = psnr_luma(ra, rc), aa = psnr_luma(ra, pat);
	CHECK(ab < 15 && ac < 15 && aa > 60, "flip %.1f rot %.1f same %.1f", ab, ac, aa);
	vc_frame_unref(ra);
	vc_frame_unref(rb);
	vc_frame_unref(rc);
	vc_frame_unref(pat);
	vc_conv_free(cv);
}

static void stale_and_bad(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	struct vc_conv *cv = vc_conv_new();
	struct vc_mode m = { YUYV, 320, 240, { 1, 30 } };
	struct vc_mode m2 = { YUYV, 640, 480, { 1, 30 } };
	struct vc_mode mj = { MJPG, 320, 240, { 1, 30 } };
	struct vc_request rq = { MJPG };
	struct vc_plan pl;
	vc_negotiate_plan(&m, &rq, &pl);
	struct vc_pipeline *p = vc_pipeline_new(&m, &pl);
	struct vc_frame *pat = pattern(640, 480), *pat_s = pattern(320, 240);
	struct vc_frame *big = capture(j, cv, &m2, pat);
	struct vc_frame *jp = capture(j, cv, &mj, pat_s);
	struct vc_frame *out = (struct vc_frame *)1;
	CHECK(vc_pipeline_run(p, big, &out) == -ESTALE && out == NULL, "size changed");
	CHECK(vc_pipeline_run(p, jp, &out) == -ESTALE && out == NULL, "format changed");
	vc_pipeline_free(p);

	/* corrupt JPEG into an MJPEG pipeline */
	vc_negotiate_plan(&mj, &(struct vc_request){ YUYV }, &pl);
	p = vc_pipeline_new(&mj, &pl);
	size_t keep = jp->bytesused[0];
	jp->bytesused[0] = keep / 2;
	CHECK(vc_pipeline_run(p, jp, &out) == -EBADMSG && out == NULL, "truncated JPEG");
	jp->bytesused[0] = keep;
	CHECK(vc_pipeline_run(p, jp, &out) == 0 && out, "whole JPEG");
	vc_frame_unref(out);
	vc_pipeline_free(p);

	/* MJPEG passthrough trusts the frame geometry (capture parsed it) */
	vc_negotiate_plan(&mj, &(struct vc_request){ MJPG }, &pl);
	p = vc_pipeline_new(&mj, &pl);
	CHECK(vc_pipeline_run(p, jp, &out) == 0 && out == jp, "passthrough");
	vc_frame_unref(out);
	jp->geom.width = 640;
	CHECK(vc_pipeline_run(p, jp, &out) == -ESTALE && out == NULL, "passthrough size changed");
	jp->geom.width = 320;
	vc_pipeline_free(p);

	/* short raw frame */
	struct vc_frame *sm = capture(j, cv, &m, pat_s);
	vc_negotiate_plan(&m, &(struct vc_request){ RGB3 }, &pl);
	p = vc_pipeline_new(&m, &pl);
	sm->bytesused[0] /= 2;
	CHECK(vc_pipeline_run(p, sm, &out) == -EBADMSG, "short raw frame");
	vc_pipeline_free(p);
	CHECK(vc_pipeline_new(&m, &(struct vc_plan){ 0 }) == NULL, "empty plan refused");

	vc_frame_unref(sm);
	vc_frame_unref(big);
	vc_frame_unref(jp);
	vc_frame_unref(pat);
	vc_frame_unref(pat_s);
	vc_jpeg_free(j);
	vc_conv_free(cv);
}

/* A raw passthrough: zero copy for packed frames only; a frame with padded
 * strides comes back packed (clients get exact sizes) with the same pixels.
 * Raw outputs keep the device's field and colorimetry, JPEGs are progressive
 * with JPEG's own colorimetry. */
static void passthrough_padded_and_meta(void)
{
	struct vc_conv *cv = vc_conv_new();
	const struct vc_fmt *yuyv = vc_fmt_by_fourcc(YUYV);
	struct vc_mode m = { YUYV, 320, 240, { 1, 30 } };
	struct vc_frame *pat = pattern(320, 240);
	struct vc_geom g;
	const uint32_t pad_stride = 320 * 2 + 64;

	CHECK(vc_fmt_geometry(yuyv, 320, 240, pad_stride, &g) == 0, "padded geometry");
	struct vc_frame *in = vc_frame_new(g.sizeimage);
	in->fmt = yuyv;
	in->geom = g;
	in->bytesused[0] = g.sizeimage;
	memset(vc_frame_data(in, 0), 0x5a, g.sizeimage); /* padding bytes must not leak */
	struct vc_image src, dst;
	vc_image_from_frame(pat, &src);
	view(in, &dst);
	CHECK(vc_conv_run(cv, &src, &dst) == 0, "fill padded frame");
	in->seq = 7;
	in->field = V4L2_FIELD_INTERLACED;
	in->color = (struct vc_colorimetry){ V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709,
					     V4L2_QUANTIZATION_FULL_RANGE, V4L2_XFER_FUNC_709 };
	struct vc_frame *packed_in = capture(NULL, cv, &m, pat);

	struct vc_plan pt, conv, enc;
	vc_negotiate_plan(&m, &(struct vc_request){ YUYV }, &pt);
	vc_negotiate_plan(&m, &(struct vc_request){ NV12 }, &conv);
	vc_negotiate_plan(&m, &(struct vc_request){ MJPG }, &enc);
	CHECK(pt.steps == VC_STEP_PASSTHROUGH, "plan steps %#x", pt.steps);
	CHECK(vc_pipeline_zero_copy(&pt, packed_in) == 1, "packed frame: zero copy");
	CHECK(vc_pipeline_zero_copy(&pt, in) == 0, "padded frame: no zero copy");
	CHECK(vc_pipeline_zero_copy(&conv, packed_in) == 0, "conversion: no zero copy");

	struct vc_pipeline *p = vc_pipeline_new(&m, &pt);
	struct vc_frame *out = NULL;
	CHECK(p && vc_pipeline_run(p, packed_in, &out) == 0 && out == packed_in, "packed: same frame");
	vc_frame_unref(out);
	out = NULL;
	int rc = p ? vc_pipeline_run(p, in, &out) : -1;
	CHECK(rc == 0 && out && out != in, "padded: rc %d, a new frame", rc);
	if (out) {
		int same = out->fmt == yuyv && out->geom.width == 320 && out->geom.height == 240 &&
			   out->geom.plane[0].stride == 640 && out->geom.sizeimage == 320 * 240 * 2;
		for (uint32_t y = 0; same && y < 240; y++)
			same = !memcmp(vc_frame_data(out, 0) + y * 640,
				       vc_frame_data(in, 0) + y * pad_stride, 640);
		CHECK(same, "packed copy: stride %u size %zu, rows equal", out->geom.plane[0].stride,
		      out->geom.sizeimage);
		CHECK(out->seq == 7 && out->field == V4L2_FIELD_INTERLACED &&
			      !memcmp(&out->color, &in->color, sizeof(in->color)),
		      "meta: seq %llu field %u quantization %u", (unsigned long long)out->seq,
		      out->field, out->color.quantization);
		vc_frame_unref(out);
	}
	vc_pipeline_free(p);

	p = vc_pipeline_new(&m, &conv);
	out = NULL;
	rc = p ? vc_pipeline_run(p, in, &out) : -1;
	CHECK(rc == 0 && out && out->field == V4L2_FIELD_INTERLACED &&
		      !memcmp(&out->color, &in->color, sizeof(in->color)),
	      "converted keeps field/colorimetry: rc %d", rc);
	vc_frame_unref(out);
	vc_pipeline_free(p);

	p = vc_pipeline_new(&m, &enc);
	out = NULL;
	rc = p ? vc_pipeline_run(p, in, &out) : -1;
	static const struct vc_colorimetry none;
	CHECK(rc == 0 && out && out->field == V4L2_FIELD_NONE &&
		      !memcmp(&out->color, &none, sizeof(none)),
	      "JPEG: progressive, own colorimetry: rc %d", rc);
	vc_frame_unref(out);
	vc_pipeline_free(p);

	vc_frame_unref(packed_in);
	vc_frame_unref(in);
	vc_frame_unref(pat);
	vc_conv_free(cv);
}

/* Results are reused once released: a run whose previous results nobody
 * holds any more gets one of their buffers back (same storage, fresh
 * metadata, right content); while a result is held it is never written.
 * (A pipeline's first JPEG is made at the worst case and not kept: one
 * frame before.) */
static void results_reused(void)
{
	struct vc_conv *cv = vc_conv_new();
	struct vc_mode m = { YUYV, 320, 240, { 1, 30 } };
	struct vc_frame *pat = pattern(320, 240), *in = capture(NULL, cv, &m, pat);
	const enum { RAW, JPG } kinds[] = { RAW, JPG };

	for (size_t k = 0; k < 2; k++) {
		struct vc_plan pl;
		vc_negotiate_plan(&m, &(struct vc_request){ kinds[k] == RAW ? NV12 : MJPG, 160, 120 }, &pl);
		struct vc_pipeline *p = vc_pipeline_new(&m, &pl);
		struct vc_frame *a = NULL, *b = NULL, *c = NULL;
		in->seq = 0;
		if (p && vc_pipeline_run(p, in, &a) == 0)
			vc_frame_unref(a);
		a = NULL;
		in->seq = 1;
		int r1 = p ? vc_pipeline_run(p, in, &a) : -1;
		in->seq = 2;
		int r2 = p ? vc_pipeline_run(p, in, &b) : -1; /* a still held: not reused */
		CHECK(!r1 && !r2 && a && b && a != b && a->owned != b->owned && a->seq == 1,
		      "kind %zu: held results are not written: %d %d", k, r1, r2);
		size_t alen = a ? a->bytesused[0] : 0;
		uint8_t *astore = a ? a->owned : NULL;
		vc_frame_unref(a); /* released: its buffer may come back */
		in->seq = 3;
		int r3 = p ? vc_pipeline_run(p, in, &c) : -1;
		CHECK(!r3 && c && c->owned == astore && c != b && c->seq == 3 &&
			      atomic_load(&c->refs) == 2 && c->n_dmabuf == 0, /* ours + the pipeline's */
		      "kind %zu: released buffer reused with fresh metadata", k);
		/* same picture in, same bytes out (JPEG: same length) */
		CHECK(c && b && c->bytesused[0] == b->bytesused[0] && c->bytesused[0] == alen &&
			      !memcmp(c->mem[0], b->mem[0], b->bytesused[0]),
		      "kind %zu: reused buffer holds the new result", k);
		vc_frame_unref(b);
		vc_frame_unref(c);
		vc_pipeline_free(p); /* frees the kept ones: ASan/valgrind see no leak */
	}
	vc_frame_unref(in);
	vc_frame_unref(pat);
	vc_conv_free(cv);
}

/* JPEG results are sized by what the pipeline wrote, not the encoder's
 * worst case: after the first (flat picture), the kept results have room
 * for a few KiB; a noisy picture that outgrows it comes out whole (the
 * same bytes as a fresh pipeline's), and the next results have room for
 * it. */
static void jpeg_results_sized(void)
{
	struct vc_conv *cv = vc_conv_new();
	struct vc_mode m = { YUYV, 320, 240, { 1, 30 } };
	struct vc_frame *flat_pat = vc_frame_new_fmt(I420, 320, 240);
	struct vc_frame *noise_pat = vc_frame_new_fmt(I420, 320, 240);
	uint32_t x = 12345;
	memset(vc_frame_data(flat_pat, 0), 128, flat_pat->geom.mem_size[0]);
	for (size_t i = 0; i < noise_pat->geom.mem_size[0]; i++) {
		x = x * 1103515245u + 12345u;
		vc_frame_data(noise_pat, 0)[i] = (uint8_t)(x >> 16);
	}
	struct vc_frame *flat = capture(NULL, cv, &m, flat_pat), *noise = capture(NULL, cv, &m, noise_pat);
	struct vc_plan pl;
	vc_negotiate_plan(&m, &(struct vc_request){ MJPG, 320, 240, .quality = 95 }, &pl);
	struct vc_pipeline *p = vc_pipeline_new(&m, &pl), *q = vc_pipeline_new(&m, &pl);
	struct vc_frame *f[4] = { NULL }, *ref = NULL;
	const struct vc_frame *ins[4] = { flat, flat, noise, noise };
	int rc = !p || !q;
	for (int i = 0; i < 4 && !rc; i++) {
		rc = vc_pipeline_run(p, ins[i], &f[i]);
		if (i < 2) { /* released: the next may reuse it */
			vc_frame_unref(f[i]);
			f[i] = NULL;
		}
	}
	if (!rc)
		rc = vc_pipeline_run(q, noise, &ref);
	size_t bound = vc_jpeg_bound(320, 240);
	CHECK(!rc && f[2] && f[3] && ref, "runs: %d", rc);
	if (!rc && f[2] && f[3] && ref) {
		size_t small = f[3]->owned_size, big = f[2]->bytesused[0];
		CHECK(big > 8 * 1024 && f[2]->bytesused[0] == ref->bytesused[0] &&
			      !memcmp(f[2]->mem[0], ref->mem[0], ref->bytesused[0]),
		      "the noisy JPEG outgrew the room and came out whole: %zu bytes, fresh %zu",
		      big, ref->bytesused[0]);
		printf("pipeline.jpeg_results_sized: noise q95 %zu bytes (%.2f B/px) in %zu; worst case %zu\n", big, big / (320.0 * 240), small, bound);
		CHECK(f[3]->bytesused[0] == big && small >= big + big / 2 && small < bound,
		      "the next has room for it: %zu bytes in %zu (worst case %zu)",
		      f[3]->bytesused[0], small, bound);
	}
	/* the flat picture's room: run again after the noisy ones are gone */
	struct vc_pipeline *r = vc_pipeline_new(&m, &pl);
	struct vc_frame *g = NULL;
	for (int i = 0; r && i < 3; i++) {
		vc_frame_unref(g);
		g = NULL;
		if (vc_pipeline_run(r, flat, &g) < 0)
			break;
	}
	CHECK(g && g->owned_size <= 16 * 1024 && g->owned_size >= g->bytesused[0] + g->bytesused[0] / 2,
	      "a flat picture's result: %zu bytes in %zu (worst case %zu)",
	      g ? g->bytesused[0] : 0, g ? g->owned_size : 0, bound);
	vc_frame_unref(g);
	for (int i = 0; i < 4; i++)
		vc_frame_unref(f[i]);
	vc_frame_unref(ref);
	vc_pipeline_free(p);
	vc_pipeline_free(q);
	vc_pipeline_free(r);
	vc_frame_unref(flat);
	vc_frame_unref(noise);
	vc_frame_unref(flat_pat);
	vc_frame_unref(noise_pat);
	vc_conv_free(cv);
}

/* An H.264 plan: YUYV in, Annex-B access units out (vc_h264_fmt), the
 * first an IDR with SPS/PPS saying the planned size, then P pictures until
 * an IDR is forced; metadata copied from the input. */
static void h264_plan(void)
{
	struct vc_mode m = { V4L2_PIX_FMT_YUYV, 320, 240, { 1, 30 } };
	struct vc_request req = { .fourcc = V4L2_PIX_FMT_H264, .width = 160, .gop = 100 };
	struct vc_conv *cv = vc_conv_new();
	struct vc_frame *pat = pattern(320, 240), *in = capture(NULL, cv, &m, pat);
	struct vc_plan plan;
	struct vc_pipeline *p = NULL;

	CHECK(vc_negotiate_plan(&m, &req, &plan) == 0 && (p = vc_pipeline_new(&m, &plan)) != NULL,
	      "plan/pipeline");
	for (int i = 0; p && i < 6; i++) {
		struct vc_frame *out = NULL;
		struct vc_h264_au au;
		struct vc_h264_sps sps = { 0 };

		if (i == 4)
			vc_pipeline_force_key(p);
		in->seq = 100 + (uint64_t)i;
		in->ts_us = 1000000 + i * 33333;
		int rc = vc_pipeline_run(p, in, &out);

		CHECK(rc == 0 && out, "frame %d: rc %d", i, rc);
		if (!out)
			continue;
		vc_h264_scan(out->mem[0], out->bytesused[0], &au);
		int want_key = i == 0 || i == 4;

		CHECK(out->fmt == vc_h264_fmt() && out->key == want_key && au.idr == want_key &&
			      out->seq == in->seq && out->ts_us == in->ts_us,
		      "frame %d: fmt %s key %d idr %d seq %" PRIu64, i, out->fmt ? out->fmt->name : "-",
		      out->key, au.idr, out->seq);
		if (want_key)
			CHECK(au.sps && vc_h264_parse_sps(au.sps, au.sps_len, &sps) == 0 &&
				      sps.width == 160 && sps.height == 120,
			      "frame %d: SPS %ux%u", i, sps.width, sps.height);
		vc_frame_unref(out);
	}
	vc_pipeline_free(p);
	vc_frame_unref(in);
	vc_frame_unref(pat);
	vc_conv_free(cv);
}

int main(void)
{
	I420 = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	RUN("pipeline", reference_discriminates);
	RUN("pipeline", combinations);
	RUN("pipeline", stale_and_bad);
	RUN("pipeline", passthrough_padded_and_meta);
	RUN("pipeline", results_reused);
	RUN("pipeline", jpeg_results_sized);
	RUN("pipeline", h264_plan);
	CHECK_EXIT();
}
