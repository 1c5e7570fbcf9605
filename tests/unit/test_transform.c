/* Unit tests of common/transform.c: pixel-exact rotate/flip of every row the
 * transform supports, against an independent reference that maps each source
 * sample forwards (flips, then the clockwise turn); known pixel positions;
 * round trips; odd sizes; padded strides; canary bytes behind every output
 * plane; exact-size sources so ASan sees any over-read; parsing. */
#include "common/transform.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/unit/testbuf.h"

static uint32_t rng = 88172645u;
static uint8_t rnd8(void)
{
	return (uint8_t)check_xorshift(&rng);
}

static void fill_random(struct buf *b)
{
	for (int p = 0; p < 3; p++)
		for (size_t i = 0; i < b->size[p]; i++)
			b->mem[p][i] = rnd8();
}

/* Plane p of an image: units per line, lines, bytes per unit (0 = whole
 * lines only: grouped rows). */
static void plane_dims(const struct vc_fmt *f, int p, uint32_t w, uint32_t h, uint32_t *pw,
		       uint32_t *ph, int *unit)
{
	int planar = f->layout == VC_LAYOUT_PLANAR_YUV || f->layout == VC_LAYOUT_SEMIPLANAR;
	uint32_t cw = 1u << f->log2_chroma_w, ch = 1u << f->log2_chroma_h;

	*pw = p ? (w + cw - 1) / cw : w;
	*ph = p ? (h + ch - 1) / ch : h;
	if (planar)
		*unit = f->group_bytes[p];
	else
		*unit = f->group_px == 1 ? f->group_bytes[0] : 0;
}

/* Where the forward transform sends source unit (x, y) of a w x h plane. */
static void forward(struct vc_transform t, uint32_t w, uint32_t h, uint32_t x, uint32_t y,
		    uint32_t *ox, uint32_t *oy)
{
	if (t.flip & VC_FLIP_H)
		x = w - 1 - x;
	if (t.flip & VC_FLIP_V)
		y = h - 1 - y;
	switch (t.rotate) {
	case 90: *ox = h - 1 - y, *oy = x; break;
	case 180: *ox = w - 1 - x, *oy = h - 1 - y; break;
	case 270: *ox = y, *oy = w - 1 - x; break;
	default: *ox = x, *oy = y; break;
	}
}

/* Compares plane p of d with the reference transform of s; counts bad units. */
static int plane_mismatches(const struct buf *s, const struct buf *d, int p, struct vc_transform t)
{
	const struct vc_fmt *f = s->v.fmt;
	uint32_t pw, ph;
	int unit, bad = 0;

	plane_dims(f, p, s->v.width, s->v.height, &pw, &ph, &unit);
	if (unit == 0) { /* whole lines: identity or vertical flip */
		size_t row = vc_fmt_min_stride(f, s->v.width);
		for (uint32_t y = 0; y < ph; y++) {
			uint32_t ox, oy; /* a one-unit-wide plane: where line y goes */
			forward(t, 1, ph, 0, y, &ox, &oy);
			bad += memcmp(d->v.plane[p] + (size_t)oy * d->v.stride[p],
				      s->v.plane[p] + (size_t)y * s->v.stride[p], row) != 0;
		}
		return bad;
	}
	for (uint32_t y = 0; y < ph; y++)
		for (uint32_t x = 0; x < pw; x++) {
			uint32_t ox, oy;
			forward(t, pw, ph, x, y, &ox, &oy);
			bad += memcmp(d->v.plane[p] + (size_t)oy * d->v.stride[p] + (size_t)ox * unit,
				      s->v.plane[p] + (size_t)y * s->v.stride[p] + (size_t)x * unit,
				      (size_t)unit) != 0;
		}
	return bad;
}

static int is_422_turned(const struct vc_fmt *f, struct vc_transform t)
{
	return f->log2_chroma_w != f->log2_chroma_h && t.rotate % 180 == 90;
}

static const struct vc_transform all_t[] = {
	{ 0, 0 },   { 90, 0 },  { 180, 0 },  { 270, 0 },
	{ 0, 1 },   { 90, 1 },  { 180, 1 },  { 270, 1 },
	{ 0, 2 },   { 90, 2 },  { 180, 2 },  { 270, 2 },
	{ 0, 3 },   { 90, 3 },  { 180, 3 },  { 270, 3 },
};

/* Every row x every transform x sizes x paddings: supported rows match the
 * reference exactly (4:2:2 turned by 90: luma exactly), others say ENOTSUP. */
static void every_row(void)
{
	static const struct { uint32_t w, h, pad; } sizes[] = {
		{ 1, 1, 0 }, { 2, 2, 0 }, { 4, 2, 0 }, { 5, 3, 0 }, { 8, 8, 8 }, { 33, 17, 24 },
		{ 16, 9, 3 },
	};
	int ran = 0, refused = 0;

	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		if (f->layout == VC_LAYOUT_COMPRESSED)
			continue;
		for (size_t k = 0; k < ARRAY_LEN(all_t); k++) {
			struct vc_transform t = all_t[k];
			int sup = vc_transform_supported(f, t);
			for (size_t z = 0; z < ARRAY_LEN(sizes); z++) {
				struct buf s, d, s0;
				uint32_t ow, oh;
				vc_transform_size(t, sizes[z].w, sizes[z].h, &ow, &oh);
				if (buf_new(&s, f, sizes[z].w, sizes[z].h, sizes[z].pad, 0) ||
				    buf_new(&s0, f, sizes[z].w, sizes[z].h, sizes[z].pad, 0) ||
				    buf_new(&d, f, ow, oh, sizes[z].pad ? sizes[z].pad + 5 : 0, 1)) {
					CHECK(0, "alloc %s", f->name);
					buf_free(&s), buf_free(&s0), buf_free(&d);
					continue;
				}
				fill_random(&s);
				for (int p = 0; p < 3; p++)
					if (s.mem[p])
						memcpy(s0.mem[p], s.mem[p], s.size[p]);
				int r = vc_transform_run(&s.v, &d.v, t);
				if (!sup) {
					CHECK(r == -ENOTSUP, "%s rot %u flip %u: %d, not ENOTSUP", f->name,
					      t.rotate, t.flip, r);
					refused++;
				} else {
					CHECK(r == 0, "%s %ux%u rot %u flip %u: %d", f->name, sizes[z].w,
					      sizes[z].h, t.rotate, t.flip, r);
					for (int p = 0; r == 0 && p < f->color_planes; p++) {
						if (p > 0 && is_422_turned(f, t))
							continue; /* resampled chroma: see chroma_422 */
						int bad = plane_mismatches(&s, &d, p, t);
						CHECK(bad == 0, "%s %ux%u+%u rot %u flip %u plane %d: %d bad",
						      f->name, sizes[z].w, sizes[z].h, sizes[z].pad, t.rotate,
						      t.flip, p, bad);
					}
					ran++;
				}
				CHECK(canaries_ok(&d), "%s rot %u flip %u: wrote past a plane", f->name,
				      t.rotate, t.flip);
				for (int p = 0; p < 3; p++)
					CHECK(!s.mem[p] || !memcmp(s.mem[p], s0.mem[p], s.size[p]),
					      "%s: source changed", f->name);
				buf_free(&s), buf_free(&s0), buf_free(&d);
			}
		}
	}
	CHECK(ran > 3000 && refused > 100, "ran %d, refused %d", ran, refused);
}

/* The formats the header promises always work, for every transform. */
static void always_supported(void)
{
	static const char *const names[] = { "YUV420", "YVU420", "YUV422P", "YUV444M", "GREY",
					     "XRGB32", "ABGR32", "RGBA32", "BGRX32", "NV12",
					     "NV21", "NV24", "YUV420M", "RGB24", "RGB565" };
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		for (size_t k = 0; k < ARRAY_LEN(all_t); k++)
			CHECK(vc_transform_supported(vc_fmt_find(names[i]), all_t[k]),
			      "%s rot %u flip %u", names[i], all_t[k].rotate, all_t[k].flip);
	/* grouped and Bayer rows: identity always, nothing that moves pixels sideways */
	static const char *const grouped[] = { "YUYV", "UYVY", "Y41P", "Y10P" };
	struct vc_transform id = { 0, 0 }, v = { 0, VC_FLIP_V }, r90 = { 90, 0 }, h = { 0, VC_FLIP_H };
	for (size_t i = 0; i < ARRAY_LEN(grouped); i++) {
		const struct vc_fmt *f = vc_fmt_find(grouped[i]);
		CHECK(vc_transform_supported(f, id) && vc_transform_supported(f, v) &&
			      !vc_transform_supported(f, r90) && !vc_transform_supported(f, h),
		      "%s", grouped[i]);
	}
	CHECK(!vc_transform_supported(vc_fmt_find("SRGGB8"), v), "Bayer vflip changes the CFA");
	CHECK(vc_transform_supported(vc_fmt_find("SRGGB8"), id), "Bayer copy");
	CHECK(!vc_transform_supported(vc_fmt_find("MJPEG"), id), "MJPEG");
	CHECK(!vc_transform_supported(vc_fmt_find("NV16"), r90), "NV16 turned");
	CHECK(vc_transform_supported(vc_fmt_find("NV16"), (struct vc_transform){ 180, 0 }), "NV16 180");
	CHECK(!vc_transform_supported(vc_fmt_find("YUV411P"), r90), "411P turned");
	CHECK(!vc_transform_supported(NULL, id), "NULL");
	CHECK(!vc_transform_supported(vc_fmt_find("GREY"), (struct vc_transform){ 45, 0 }), "45");
}

/* GREY 3x2 with known values, each transform written out by hand. */
static void known_positions(void)
{
	static const struct {
		int line;
		struct vc_transform t;
		uint32_t w, h;
		uint8_t px[6];
	} v[] = {
		{ __LINE__, { 0, 0 }, 3, 2, { 1, 2, 3, 4, 5, 6 } },
		{ __LINE__, { 90, 0 }, 2, 3, { 4, 1, 5, 2, 6, 3 } },
		{ __LINE__, { 180, 0 }, 3, 2, { 6, 5, 4, 3, 2, 1 } },
		{ __LINE__, { 270, 0 }, 2, 3, { 3, 6, 2, 5, 1, 4 } },
		{ __LINE__, { 0, VC_FLIP_H }, 3, 2, { 3, 2, 1, 6, 5, 4 } },
		{ __LINE__, { 0, VC_FLIP_V }, 3, 2, { 4, 5, 6, 1, 2, 3 } },
		{ __LINE__, { 0, VC_FLIP_H | VC_FLIP_V }, 3, 2, { 6, 5, 4, 3, 2, 1 } },
		{ __LINE__, { 90, VC_FLIP_H }, 2, 3, { 6, 3, 5, 2, 4, 1 } },
		{ __LINE__, { 90, VC_FLIP_V }, 2, 3, { 1, 4, 2, 5, 3, 6 } },
		{ __LINE__, { 270, VC_FLIP_H }, 2, 3, { 1, 4, 2, 5, 3, 6 } },
	};
	const struct vc_fmt *grey = vc_fmt_find("GREY"), *argb = vc_fmt_find("ABGR32");

	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		uint8_t src[6] = { 1, 2, 3, 4, 5, 6 }, dst[6 + CANARY_LEN];
		memset(dst, CANARY_BYTE, sizeof(dst));
		struct vc_image s = { .fmt = grey, .width = 3, .height = 2, .stride = { 3 },
				      .plane = { src }, .plane_size = { 6 } };
		struct vc_image d = { .fmt = grey, .width = v[i].w, .height = v[i].h,
				      .stride = { v[i].w }, .plane = { dst }, .plane_size = { 6 } };
		int r = vc_transform_run(&s, &d, v[i].t);
		CHECK_AT(v[i].line, r == 0 && !memcmp(dst, v[i].px, 6) && canary_intact(dst, 6),
			 "rot %u flip %u: %d [%d %d %d %d %d %d]", v[i].t.rotate, v[i].t.flip, r, dst[0],
			 dst[1], dst[2], dst[3], dst[4], dst[5]);

		/* the same through 4-byte pixels: pixel n holds bytes n, n+10, n+20, n+30 */
		uint8_t s4[24], d4[24 + CANARY_LEN];
		for (int k = 0; k < 24; k++)
			s4[k] = (uint8_t)(k / 4 + 1 + 10 * (k % 4));
		memset(d4, CANARY_BYTE, sizeof(d4));
		struct vc_image s2 = { .fmt = argb, .width = 3, .height = 2, .stride = { 12 },
				       .plane = { s4 }, .plane_size = { 24 } };
		struct vc_image d2 = { .fmt = argb, .width = v[i].w, .height = v[i].h,
				       .stride = { v[i].w * 4 }, .plane = { d4 }, .plane_size = { 24 } };
		r = vc_transform_run(&s2, &d2, v[i].t);
		int bad = r != 0 || !canary_intact(d4, 24);
		for (int k = 0; k < 24; k++)
			bad += d4[k] != (uint8_t)(v[i].px[k / 4] + 10 * (k % 4));
		CHECK_AT(v[i].line, bad == 0, "ABGR32 rot %u flip %u: %d", v[i].t.rotate, v[i].t.flip, r);
	}
}

/* Round trips: four quarter turns, 90 then 270, a flip twice; and every
 * transform gives the same picture as its canonical form. */
static void round_trips(void)
{
	static const char *const names[] = { "YUV420", "NV12", "XRGB32", "RGB24", "GREY", "Y16",
					     "YUV444M", "RGB565", "YUV410" };
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		const struct vc_fmt *f = vc_fmt_find(names[i]);
		struct buf a, b, c;
		const uint32_t w = 12, h = 8; /* even in every subsampling, so exact */

		if (buf_new(&a, f, w, h, 4, 0) || buf_new(&b, f, h, w, 0, 1) ||
		    buf_new(&c, f, w, h, 4, 1)) {
			CHECK(0, "alloc");
			buf_free(&a), buf_free(&b), buf_free(&c);
			continue;
		}
		fill_random(&a);
		struct vc_transform r90 = { 90, 0 }, r270 = { 270, 0 };
		int r = vc_transform_run(&a.v, &b.v, r90);
		r |= vc_transform_run(&b.v, &c.v, r270);
		int bad = 0;
		for (int p = 0; p < f->color_planes; p++)
			bad += plane_mismatches(&a, &c, p, (struct vc_transform){ 0, 0 });
		CHECK(r == 0 && bad == 0, "%s 90+270: %d, %d bad", f->name, r, bad);

		/* four quarter turns, through a second buffer */
		struct buf e;
		if (buf_new(&e, f, h, w, 2, 1) == 0) {
			r = vc_transform_run(&a.v, &b.v, r90);
			r |= vc_transform_run(&b.v, &c.v, r90);
			r |= vc_transform_run(&c.v, &e.v, r90);
			struct buf g;
			if (buf_new(&g, f, w, h, 0, 1) == 0) {
				r |= vc_transform_run(&e.v, &g.v, r90);
				bad = 0;
				for (int p = 0; p < f->color_planes; p++)
					bad += plane_mismatches(&a, &g, p, (struct vc_transform){ 0, 0 });
				CHECK(r == 0 && bad == 0 && canaries_ok(&g), "%s 4x90: %d, %d bad", f->name,
				      r, bad);
				buf_free(&g);
			}
			buf_free(&e);
		}

		/* every transform equals its canonical form */
		for (size_t k = 0; k < ARRAY_LEN(all_t); k++) {
			struct vc_transform t = all_t[k], cn = vc_transform_canon(t);
			struct buf x, y;
			uint32_t ow, oh;
			vc_transform_size(t, w, h, &ow, &oh);
			if (buf_new(&x, f, ow, oh, 0, 1) || buf_new(&y, f, ow, oh, 0, 1)) {
				buf_free(&x), buf_free(&y);
				continue;
			}
			r = vc_transform_run(&a.v, &x.v, t) | vc_transform_run(&a.v, &y.v, cn);
			bad = 0;
			for (int p = 0; p < f->color_planes; p++)
				bad += memcmp(x.mem[p], y.mem[p], x.size[p]) != 0;
			CHECK(r == 0 && bad == 0 && (cn.flip & ~VC_FLIP_H) == 0 && cn.rotate < 360,
			      "%s rot %u flip %u vs canon %u/%u", f->name, t.rotate, t.flip, cn.rotate,
			      cn.flip);
			buf_free(&x), buf_free(&y);
		}
		buf_free(&a), buf_free(&b), buf_free(&c);
	}
}

/* Planar 4:2:2 turned by 90: libyuv resamples the chroma; a chroma that is
 * constant stays exactly so, and a horizontal ramp becomes a vertical one. */
static void chroma_422(void)
{
	const struct vc_fmt *f = vc_fmt_find("YUV422P");
	struct buf s, d;
	const uint32_t w = 16, h = 8;

	if (buf_new(&s, f, w, h, 0, 0) || buf_new(&d, f, h, w, 0, 1)) {
		CHECK(0, "alloc");
		buf_free(&s), buf_free(&d);
		return;
	}
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w / 2; x++) {
			s.v.plane[1][y * s.v.stride[1] + x] = 77;
			s.v.plane[2][y * s.v.stride[2] + x] = (uint8_t)(40 + 20 * x); /* by column */
		}
	int r = vc_transform_run(&s.v, &d.v, (struct vc_transform){ 90, 0 });
	int bad = 0;
	/* output is 8 wide x 16 high, chroma 4 x 16: source column x is now row x */
	for (uint32_t y = 0; y < w; y++)
		for (uint32_t x = 0; x < h / 2; x++) {
			int want = 40 + 20 * (int)(y / 2), got = d.v.plane[2][y * d.v.stride[2] + x];
			bad += d.v.plane[1][y * d.v.stride[1] + x] != 77;
			bad += abs(got - want) > 10;
		}
	CHECK(r == 0 && bad == 0 && canaries_ok(&d), "4:2:2 chroma: %d, %d bad", r, bad);
	buf_free(&s), buf_free(&d);
}

static void bad_input(void)
{
	const struct vc_fmt *grey = vc_fmt_find("GREY"), *nv12 = vc_fmt_find("NV12");
	uint8_t a[64], b[64];
	struct vc_image s = { .fmt = grey, .width = 4, .height = 4, .stride = { 4 },
			      .plane = { a }, .plane_size = { 16 } };
	struct vc_image d = s;
	struct vc_transform id = { 0, 0 }, r90 = { 90, 0 };

	d.plane[0] = b;
	CHECK(vc_transform_run(&s, &d, id) == 0, "sane");
	CHECK(vc_transform_run(&s, &d, (struct vc_transform){ 45, 0 }) == -EINVAL, "45 degrees");
	CHECK(vc_transform_run(&s, &d, (struct vc_transform){ 360, 0 }) == -EINVAL, "360");
	CHECK(vc_transform_run(&s, &d, (struct vc_transform){ 0, 4 }) == -EINVAL, "flip 4");
	CHECK(vc_transform_run(NULL, &d, id) == -EINVAL && vc_transform_run(&s, NULL, id) == -EINVAL,
	      "NULL");
	struct vc_image x = d;
	x.width = 3;
	CHECK(vc_transform_run(&s, &x, id) == -EINVAL, "size mismatch");
	x = d, x.width = 2, x.height = 8, x.stride[0] = 2;
	CHECK(vc_transform_run(&s, &x, r90) == -EINVAL, "unswapped size");
	x = d, x.fmt = nv12;
	CHECK(vc_transform_run(&s, &x, id) == -EINVAL, "format change");
	x = d, x.plane[0] = NULL;
	CHECK(vc_transform_run(&s, &x, id) == -EINVAL, "NULL plane");
	x = s, x.stride[0] = 3;
	CHECK(vc_transform_run(&x, &d, id) == -EINVAL, "short stride");
	x = s, x.plane_size[0] = 15;
	CHECK(vc_transform_run(&x, &d, id) == -EINVAL, "short source");
	x = d, x.plane_size[0] = 15;
	CHECK(vc_transform_run(&s, &x, id) == -EINVAL, "short destination");
	x = s, x.width = 0;
	CHECK(vc_transform_run(&x, &x, id) == -EINVAL, "zero size");
	x = s, x.fmt = vc_fmt_find("YUYV"), x.stride[0] = 8, x.plane_size[0] = 32;
	struct vc_image y = x;
	y.plane[0] = b;
	CHECK(vc_transform_run(&x, &y, r90) == -ENOTSUP, "YUYV turned");
	x = s, x.fmt = vc_fmt_find("MJPEG");
	y = x, y.plane[0] = b;
	CHECK(vc_transform_run(&x, &y, id) == -ENOTSUP, "MJPEG");
}

static void parse(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint16_t rotate;
		uint8_t flip;
	} v[] = {
		{ __LINE__, "90", 0, 90, 0 },
		{ __LINE__, "180", 0, 180, 0 },
		{ __LINE__, "270", 0, 270, 0 },
		{ __LINE__, "0", 0, 0, 0 },
		{ __LINE__, "360", 0, 0, 0 },
		{ __LINE__, "-90", 0, 270, 0 },
		{ __LINE__, "rotate=90", 0, 90, 0 },
		{ __LINE__, "ROT=180", 0, 180, 0 },
		{ __LINE__, "flip=h", 0, 0, VC_FLIP_H },
		{ __LINE__, "flip=V", 0, 0, VC_FLIP_V },
		{ __LINE__, "flip=hv", 0, 0, VC_FLIP_H | VC_FLIP_V },
		{ __LINE__, "hflip", 0, 0, VC_FLIP_H },
		{ __LINE__, "vflip", 0, 0, VC_FLIP_V },
		{ __LINE__, "mirror", 0, 0, VC_FLIP_H },
		{ __LINE__, "90,flip=h", 0, 90, VC_FLIP_H },
		{ __LINE__, "rotate=270+vflip", 0, 270, VC_FLIP_V },
		{ __LINE__, "hflip 180", 0, 180, VC_FLIP_H },
		{ __LINE__, "90,180", 0, 180, 0 },
		{ __LINE__, "flip=h,flip=none", 0, 0, 0 },
		{ __LINE__, "", 0, 0, 0 },
		{ __LINE__, ",,", 0, 0, 0 },
		{ __LINE__, "45", -EINVAL, 0, 0 },
		{ __LINE__, "450", -EINVAL, 0, 0 },
		{ __LINE__, "90deg", -EINVAL, 0, 0 },
		{ __LINE__, "flip", -EINVAL, 0, 0 },
		{ __LINE__, "flip=x", -EINVAL, 0, 0 },
		{ __LINE__, "rotate=", -EINVAL, 0, 0 },
		{ __LINE__, "90,upside", -EINVAL, 0, 0 },
		{ __LINE__, "99999999999999999999", -EINVAL, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		struct vc_transform t = { 7, 7 };
		int r = vc_transform_parse(v[i].text, &t);
		CHECK_AT(v[i].line, r == v[i].ret, "'%s': %d", v[i].text, r);
		if (v[i].ret == 0)
			CHECK_AT(v[i].line, t.rotate == v[i].rotate && t.flip == v[i].flip,
				 "'%s': %u/%u", v[i].text, t.rotate, t.flip);
		else
			CHECK_AT(v[i].line, t.rotate == 7 && t.flip == 7, "'%s' touched *t", v[i].text);
	}
	struct vc_transform t = { 9, 9 };
	CHECK(vc_transform_parse(NULL, &t) == 0 && t.rotate == 0 && t.flip == 0, "NULL");
	/* text round trip */
	for (size_t k = 0; k < ARRAY_LEN(all_t); k++) {
		char buf[32];
		struct vc_transform u;
		vc_transform_str(all_t[k], buf, sizeof(buf));
		CHECK(vc_transform_parse(buf, &u) == 0 && u.rotate == all_t[k].rotate &&
			      u.flip == all_t[k].flip, "'%s'", buf);
	}
}

static void helpers(void)
{
	uint32_t w, h;

	vc_transform_size((struct vc_transform){ 90, 0 }, 640, 480, &w, &h);
	CHECK(w == 480 && h == 640, "90: %ux%u", w, h);
	vc_transform_size((struct vc_transform){ 180, 3 }, 640, 480, &w, &h);
	CHECK(w == 640 && h == 480, "180: %ux%u", w, h);
	vc_transform_size((struct vc_transform){ 270, 0 }, 1, 7, &w, &h);
	CHECK(w == 7 && h == 1, "270: %ux%u", w, h);
	CHECK(vc_transform_is_identity((struct vc_transform){ 0, 0 }), "0");
	CHECK(vc_transform_is_identity((struct vc_transform){ 180, 3 }), "180 + both flips");
	CHECK(!vc_transform_is_identity((struct vc_transform){ 180, 1 }), "180 + h = v");
	CHECK(!vc_transform_is_identity((struct vc_transform){ 0, 2 }), "v");
	struct vc_transform c = vc_transform_canon((struct vc_transform){ 90, VC_FLIP_V });
	CHECK(c.rotate == 270 && c.flip == VC_FLIP_H, "canon 90+v: %u/%u", c.rotate, c.flip);
	c = vc_transform_canon((struct vc_transform){ 0, 3 });
	CHECK(c.rotate == 180 && c.flip == 0, "canon hv: %u/%u", c.rotate, c.flip);
}

int main(void)
{
	RUN("transform", parse);
	RUN("transform", helpers);
	RUN("transform", known_positions);
	RUN("transform", always_supported);
	RUN("transform", every_row);
	RUN("transform", round_trips);
	RUN("transform", chroma_422);
	RUN("transform", bad_input);
	CHECK_EXIT();
}
