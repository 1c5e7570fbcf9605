/* Raw rotate/flip. Every transform is reduced to "optional vertical flip,
 * then rotate": the flip costs nothing (the source is read bottom-up through
 * a negative stride) and the rotation is one libyuv call per plane, picked by
 * the plane's sample size. Only 3-byte pixels and misaligned 16/32-bit
 * planes, which libyuv has no routine for, go through the small generic
 * mover below. */
#include "common/transform.h"

#include <errno.h>
#include <libyuv/planar_functions.h>
#include <libyuv/rotate.h>
#include <libyuv/rotate_argb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers on the transform itself ---- */

static int valid(struct vc_transform t)
{
	return t.rotate % 90 == 0 && t.rotate < 360 && (t.flip & ~(VC_FLIP_H | VC_FLIP_V)) == 0;
}

struct vc_transform vc_transform_canon(struct vc_transform t)
{
	struct vc_transform c = { (uint16_t)(t.rotate % 360), (uint8_t)(t.flip & VC_FLIP_H) };

	/* vflip = hflip then rotate 180 */
	if (t.flip & VC_FLIP_V) {
		c.flip ^= VC_FLIP_H;
		c.rotate = (uint16_t)((c.rotate + 180) % 360);
	}
	return c;
}

int vc_transform_is_identity(struct vc_transform t)
{
	struct vc_transform c = vc_transform_canon(t);
	return c.rotate == 0 && c.flip == 0;
}

void vc_transform_size(struct vc_transform t, uint32_t width, uint32_t height,
		       uint32_t *out_w, uint32_t *out_h)
{
	int swap = t.rotate % 180 == 90;
	*out_w = swap ? height : width;
	*out_h = swap ? width : height;
}

/* "90", "-90", "rotate=270", "rot=180" -> 0..270; -1 otherwise. */
static int parse_angle(const char *s, size_t n)
{
	char buf[16], *end;

	if (n >= 7 && strncasecmp(s, "rotate=", 7) == 0)
		s += 7, n -= 7;
	else if (n >= 4 && strncasecmp(s, "rot=", 4) == 0)
		s += 4, n -= 4;
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	long v = strtol(buf, &end, 10);
	if (*end || v % 90 || v < -360 || v > 360)
		return -1;
	return (int)((v % 360 + 360) % 360);
}

/* "flip=h", "hflip", ... -> flip bits; -1 otherwise. */
static int parse_flip(const char *s, size_t n)
{
	static const struct {
		const char *text;
		int flip;
	} words[] = {
		{ "hflip", VC_FLIP_H },         { "vflip", VC_FLIP_V },
		{ "mirror", VC_FLIP_H },        { "flip=h", VC_FLIP_H },
		{ "flip=v", VC_FLIP_V },        { "flip=hv", VC_FLIP_H | VC_FLIP_V },
		{ "flip=vh", VC_FLIP_H | VC_FLIP_V }, { "flip=both", VC_FLIP_H | VC_FLIP_V },
		{ "flip=none", 0 },             { "flip=0", 0 },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].text) == n && strncasecmp(words[i].text, s, n) == 0)
			return words[i].flip;
	return -1;
}

int vc_transform_parse(const char *s, struct vc_transform *t)
{
	struct vc_transform r = { 0, 0 };

	while (s && *s) {
		size_t n = strcspn(s, ",+ ");
		if (n > 0) {
			int a = parse_angle(s, n), f = a < 0 ? parse_flip(s, n) : -1;
			if (a >= 0)
				r.rotate = (uint16_t)a;
			else if (f >= 0)
				r.flip = (uint8_t)f;
			else
				return -EINVAL;
		}
		s += n;
		if (*s)
			s++;
	}
	*t = r;
	return 0;
}

const char *vc_transform_str(struct vc_transform t, char *buf, size_t len)
{
	static const char *const flips[] = { "", ",flip=h", ",flip=v", ",flip=hv" };

	snprintf(buf, len, "rotate=%u%s", (unsigned)t.rotate, flips[t.flip & 3]);
	return buf;
}

/* ---- what can be done directly ---- */

/* Bytes per pixel when each group is one pixel in a single plane, else 0. */
static int pixel_bytes(const struct vc_fmt *f)
{
	if ((f->layout == VC_LAYOUT_PACKED_RGB || f->layout == VC_LAYOUT_GREY ||
	     f->layout == VC_LAYOUT_PACKED_YUV) && f->group_px == 1)
		return f->group_bytes[0];
	return 0;
}

static int is_planar(const struct vc_fmt *f)
{
	return f->layout == VC_LAYOUT_PLANAR_YUV || f->layout == VC_LAYOUT_SEMIPLANAR;
}

/* Plane p's samples move as units of this many bytes; 0 for grouped rows. */
static int unit_bytes(const struct vc_fmt *f, int p)
{
	return is_planar(f) ? f->group_bytes[p] : pixel_bytes(f);
}

int vc_transform_supported(const struct vc_fmt *f, struct vc_transform t)
{
	if (!f || !valid(t) || !vc_fmt_is_raw(f) || f->layout == VC_LAYOUT_COMPRESSED)
		return 0;
	struct vc_transform c = vc_transform_canon(t);
	if (c.rotate == 0 && c.flip == 0)
		return 1; /* a copy */
	if (pixel_bytes(f))
		return 1;
	if (is_planar(f)) {
		/* Turning by 90 swaps the subsampling axes: only symmetric
		 * subsampling survives, and planar 4:2:2 through I422Rotate. */
		if (c.rotate % 180 == 0 || f->log2_chroma_w == f->log2_chroma_h)
			return 1;
		return f->layout == VC_LAYOUT_PLANAR_YUV && f->log2_chroma_w == 1 &&
		       f->log2_chroma_h == 0;
	}
	/* Grouped rows (YUYV, Y41P, MIPI, Bayer): only whole lines can move. */
	return f->layout != VC_LAYOUT_BAYER && c.rotate == 180 && c.flip == VC_FLIP_H;
}

/* ---- doing it ---- */

static enum RotationMode mode_of(int rotate)
{
	return rotate == 90 ? kRotate90 : rotate == 180 ? kRotate180 :
	       rotate == 270 ? kRotate270 : kRotate0;
}

/* Pixels libyuv has no mover for (3 bytes, or misaligned 2/4-byte units):
 * dst(x', y') takes the source pixel the rotation brings there. */
static void rotate_generic(const uint8_t *s, int ss, uint8_t *d, int ds, int w, int h, int bpp,
			   int rotate)
{
	int ow = rotate % 180 ? h : w, oh = rotate % 180 ? w : h;

	for (int y = 0; y < oh; y++) {
		uint8_t *drow = d + (ptrdiff_t)y * ds;
		for (int x = 0; x < ow; x++) {
			int sx = rotate == 90 ? y : rotate == 180 ? w - 1 - x : rotate == 270 ? w - 1 - y : x;
			int sy = rotate == 90 ? h - 1 - x : rotate == 180 ? h - 1 - y : rotate == 270 ? x : y;
			memcpy(drow + (ptrdiff_t)x * bpp, s + (ptrdiff_t)sy * ss + (ptrdiff_t)sx * bpp,
			       (size_t)bpp);
		}
	}
}

static int aligned(const void *p, int stride, int n)
{
	return ((uintptr_t)p % (uintptr_t)n) == 0 && stride % n == 0;
}

/* One plane of w x h units of `unit` bytes (the source already flipped). */
static void rotate_plane(const uint8_t *s, int ss, uint8_t *d, int ds, int w, int h, int unit,
			 int rotate)
{
	enum RotationMode m = mode_of(rotate);

	if (unit == 1) {
		RotatePlane(s, ss, d, ds, w, h, m);
	} else if (unit == 2 && aligned(s, ss, 2) && aligned(d, ds, 2)) {
		/* libyuv's 16-bit strides count samples; alignment was checked */
		RotatePlane_16((const uint16_t *)(const void *)s, ss / 2, (uint16_t *)(void *)d, ds / 2,
			       w, h, m);
	} else if (unit == 4 && aligned(s, ss, 4) && aligned(d, ds, 4)) {
		ARGBRotate(s, ss, d, ds, w, h, m); /* moves 4-byte pixels whatever they hold */
	} else {
		rotate_generic(s, ss, d, ds, w, h, unit, rotate);
	}
}

static uint32_t div_up(uint32_t a, int log2)
{
	return (a + (1u << log2) - 1) >> log2;
}

/* Bytes a line of plane p needs, and its line count, for w x h. */
static void plane_need(const struct vc_fmt *f, int p, uint32_t w, uint32_t h, uint64_t *row,
		       uint32_t *lines)
{
	if (p == 0) {
		*row = vc_fmt_min_stride(f, w);
		*lines = h;
	} else {
		*row = (uint64_t)div_up(w, f->log2_chroma_w) * f->group_bytes[p];
		*lines = div_up(h, f->log2_chroma_h);
	}
}

static int check_image(const struct vc_image *im)
{
	const struct vc_fmt *f = im->fmt;

	if (im->width == 0 || im->height == 0 || im->width > 16384 || im->height > 16384)
		return -EINVAL;
	for (int p = 0; p < f->color_planes; p++) {
		uint64_t row;
		uint32_t lines;

		plane_need(f, p, im->width, im->height, &row, &lines);
		if (!im->plane[p] || im->stride[p] < row || im->stride[p] > INT32_MAX / 2 ||
		    (uint64_t)im->stride[p] * (lines - 1) + row > im->plane_size[p])
			return -EINVAL;
	}
	return 0;
}

int vc_transform_run(const struct vc_image *src, const struct vc_image *dst,
		     struct vc_transform t)
{
	if (!src || !dst || !src->fmt || dst->fmt != src->fmt || !valid(t))
		return -EINVAL;
	const struct vc_fmt *f = src->fmt;
	if (!vc_transform_supported(f, t))
		return -ENOTSUP;
	uint32_t ow, oh;
	vc_transform_size(t, src->width, src->height, &ow, &oh);
	if (dst->width != ow || dst->height != oh || check_image(src) || check_image(dst))
		return -EINVAL;

	/* optional vertical flip (through the source stride), then rotate */
	struct vc_transform c = vc_transform_canon(t);
	int vflip = c.flip != 0, rotate = c.rotate;
	if (vflip)
		rotate = (rotate + 180) % 360; /* hflip = vflip + 180 */

	uint32_t w = src->width, h = src->height;
	if (f->layout == VC_LAYOUT_PLANAR_YUV && f->log2_chroma_w == 1 && f->log2_chroma_h == 0 &&
	    rotate % 180) {
		/* 4:2:2 turned on its side: libyuv resamples the chroma */
		const uint8_t *sp[3];
		int ss[3];
		for (int p = 0; p < 3; p++) {
			uint32_t lines = p ? div_up(h, f->log2_chroma_h) : h;
			sp[p] = src->plane[p] + (vflip ? (ptrdiff_t)(lines - 1) * src->stride[p] : 0);
			ss[p] = vflip ? -(int)src->stride[p] : (int)src->stride[p];
		}
		int r = I422Rotate(sp[0], ss[0], sp[1], ss[1], sp[2], ss[2], dst->plane[0],
				   (int)dst->stride[0], dst->plane[1], (int)dst->stride[1], dst->plane[2],
				   (int)dst->stride[2], (int)w, (int)h, mode_of(rotate));
		return r == 0 ? 0 : -EINVAL;
	}
	for (int p = 0; p < f->color_planes; p++) {
		int unit = unit_bytes(f, p);
		uint32_t pw = p ? div_up(w, f->log2_chroma_w) : w;
		uint32_t ph = p ? div_up(h, f->log2_chroma_h) : h;
		const uint8_t *s = src->plane[p];
		int ss = (int)src->stride[p];

		if (vflip) {
			s += (ptrdiff_t)(ph - 1) * ss;
			ss = -ss;
		}
		if (unit == 0) {
			/* grouped row, whole lines only (supported() allowed a pure vflip) */
			uint64_t row;
			uint32_t lines;
			plane_need(f, p, w, h, &row, &lines);
			for (uint32_t y = 0; y < ph; y++)
				memcpy(dst->plane[p] + (size_t)y * dst->stride[p], s + (ptrdiff_t)y * ss,
				       (size_t)row);
			continue;
		}
		rotate_plane(s, ss, dst->plane[p], (int)dst->stride[p], (int)pw, (int)ph, unit, rotate);
	}
	return 0;
}
