/* Unit tests of the format table (common/fmt.c): every row's fields agree
 * with each other, the libyuv fourcc of a row reads the same bytes the row
 * describes, geometry matches the V4L2 specification's numbers, lookups by
 * name and fourcc text work in any case, and bad input is refused.
 * `test_fmt --list` prints the table. */
#include "common/fmt.h"

#include <errno.h>
#include <libyuv/convert.h>
#include <libyuv/convert_argb.h>
#include <libyuv/video_common.h>
#include <linux/videodev2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tests/unit/check.h"

#define N VC_NONE

static uint8_t rnd8(void);

static const char *nm(const struct vc_fmt *f)
{
	return f ? f->name : "(null)";
}

/* ---- the table agrees with itself ---- */

static int layout_family(int layout)
{
	switch (layout) {
	case VC_LAYOUT_PACKED_YUV:
	case VC_LAYOUT_PLANAR_YUV:
	case VC_LAYOUT_SEMIPLANAR:
		return VC_FAM_YUV;
	case VC_LAYOUT_PACKED_RGB:
		return VC_FAM_RGB;
	case VC_LAYOUT_GREY:
		return VC_FAM_GREY;
	case VC_LAYOUT_BAYER:
		return VC_FAM_BAYER;
	case VC_LAYOUT_COMPRESSED:
		return VC_FAM_COMPRESSED;
	default:
		return -1;
	}
}

static int layout_planes(int layout)
{
	return layout == VC_LAYOUT_PLANAR_YUV ? 3 : layout == VC_LAYOUT_SEMIPLANAR ? 2 : 1;
}

static uint64_t field_mask(struct vc_bits b)
{
	return b.depth ? ((((uint64_t)1 << b.depth) - 1) << b.shift) : 0;
}

static void check_rgb_row(const struct vc_fmt *f)
{
	const struct vc_bits *c[4] = { &f->r, &f->g, &f->b, &f->a };
	uint64_t word = ((uint64_t)1 << (8 * f->group_bytes[0])) - 1, all = 0;
	int maxd = 0;

	CHECK(f->group_px == 1, "%s: RGB group_px %d", f->name, f->group_px);
	CHECK(f->group_bytes[0] >= 1 && f->group_bytes[0] <= 4, "%s: word of %d bytes", f->name,
	      f->group_bytes[0]);
	for (int i = 0; i < 4; i++) {
		uint64_t m = field_mask(*c[i]);
		CHECK(i == 3 || c[i]->depth > 0, "%s: colour field %d missing", f->name, i);
		CHECK((m & ~word) == 0, "%s: field %d outside the %d-byte word", f->name, i,
		      f->group_bytes[0]);
		CHECK((m & all) == 0, "%s: field %d overlaps another", f->name, i);
		all |= m;
		if (i < 3 && c[i]->depth > maxd)
			maxd = c[i]->depth;
	}
	/* Every bit of the word is a colour, alpha or padding bit: none unknown. */
	CHECK(all == word, "%s: bits %#llx of the word not described", f->name,
	      (unsigned long long)(word & ~all));
	CHECK(f->depth == maxd, "%s: depth %d, deepest field %d", f->name, f->depth, maxd);
	CHECK(!f->has_alpha || f->a.depth > 0, "%s: alpha without an alpha field", f->name);
	CHECK(!f->big_endian || f->group_bytes[0] > 1, "%s: big-endian single byte", f->name);
}

static void check_packed_yuv_row(const struct vc_fmt *f)
{
	int gp = f->group_px, nch = gp >> f->log2_chroma_w;
	uint32_t used = 0;
	int count = 0;

	CHECK(f->log2_chroma_h == 0, "%s: packed YUV with vertical subsampling", f->name);
	CHECK(gp >= 1 && gp <= 8 && (gp >> f->log2_chroma_w) << f->log2_chroma_w == gp,
	      "%s: group of %d pixels vs chroma 1/%d", f->name, gp, 1 << f->log2_chroma_w);
	CHECK(nch >= 1 && nch <= 2, "%s: %d chroma samples per group", f->name, nch);
	for (int i = 0; i < 8; i++) {
		int want = i < gp;
		CHECK((f->y_off[i] != N) == want, "%s: y_off[%d] = %d", f->name, i, f->y_off[i]);
		if (f->y_off[i] != N && f->y_off[i] < 32) {
			CHECK(!(used & 1u << f->y_off[i]), "%s: byte %d used twice", f->name, f->y_off[i]);
			used |= 1u << f->y_off[i];
			count++;
		}
	}
	for (int k = 0; k < 2; k++) {
		const uint8_t o[2] = { f->u_off[k], f->v_off[k] };
		for (int j = 0; j < 2; j++) {
			CHECK((o[j] != N) == (k < nch), "%s: chroma offset %d/%d = %d", f->name, k, j,
			      o[j]);
			if (o[j] != N && o[j] < 32) {
				CHECK(!(used & 1u << o[j]), "%s: byte %d used twice", f->name, o[j]);
				used |= 1u << o[j];
				count++;
			}
		}
	}
	if (f->a_off != N && f->a_off < 32) {
		CHECK(!(used & 1u << f->a_off), "%s: byte %d used twice", f->name, f->a_off);
		used |= 1u << f->a_off;
		count++;
	}
	/* 8-bit samples: the offsets cover the group exactly. */
	CHECK(count == f->group_bytes[0] && used == (1u << f->group_bytes[0]) - 1,
	      "%s: offsets cover %d of %d bytes (mask %#x)", f->name, count, f->group_bytes[0], used);
	CHECK(!f->has_alpha || f->a_off != N, "%s: alpha without an alpha byte", f->name);
}

static void check_plane_bytes(const struct vc_fmt *f)
{
	for (int p = 0; p < 3; p++) {
		int want = p < f->color_planes && f->layout != VC_LAYOUT_COMPRESSED;
		CHECK((f->group_bytes[p] != 0) == want, "%s: group_bytes[%d] = %d", f->name, p,
		      f->group_bytes[p]);
	}
	if (f->layout == VC_LAYOUT_PLANAR_YUV)
		CHECK(f->group_bytes[1] == f->group_bytes[0] && f->group_bytes[2] == f->group_bytes[0],
		      "%s: planar chroma bytes %d %d", f->name, f->group_bytes[1], f->group_bytes[2]);
	if (f->layout == VC_LAYOUT_SEMIPLANAR)
		CHECK(f->group_bytes[1] == 2 * f->group_bytes[0], "%s: CbCr pair of %d bytes", f->name,
		      f->group_bytes[1]);
}

/* Packing vs group size vs depth. */
static void check_packing(const struct vc_fmt *f)
{
	switch (f->packing) {
	case VC_PACK_NONE:
		if (f->layout == VC_LAYOUT_GREY || f->layout == VC_LAYOUT_BAYER)
			CHECK(f->depth == 8 && f->group_px == 1 && f->group_bytes[0] == 1,
			      "%s: unpacked %d-bit in %d bytes", f->name, f->depth, f->group_bytes[0]);
		break;
	case VC_PACK_16:
		CHECK(f->depth > 8 && f->depth <= 16 && f->group_px == 1 && f->group_bytes[0] == 2,
		      "%s: 16-bit container: depth %d, %d px in %d bytes", f->name, f->depth,
		      f->group_px, f->group_bytes[0]);
		break;
	case VC_PACK_MIPI10:
		CHECK(f->depth == 10 && f->group_px == 4 && f->group_bytes[0] == 5,
		      "%s: MIPI10: depth %d, %d px in %d bytes", f->name, f->depth, f->group_px,
		      f->group_bytes[0]);
		break;
	case VC_PACK_MIPI12:
		CHECK(f->depth == 12 && f->group_px == 2 && f->group_bytes[0] == 3,
		      "%s: MIPI12: depth %d, %d px in %d bytes", f->name, f->depth, f->group_px,
		      f->group_bytes[0]);
		break;
	default:
		CHECK(0, "%s: packing %d unknown", f->name, f->packing);
	}
	if (f->packing != VC_PACK_NONE)
		CHECK(f->layout == VC_LAYOUT_GREY || f->layout == VC_LAYOUT_BAYER,
		      "%s: packing on a %d layout", f->name, f->layout);
	/* bits per group agree with depth for single-component layouts */
	if (f->layout == VC_LAYOUT_GREY || f->layout == VC_LAYOUT_BAYER) {
		int bits = f->packing == VC_PACK_16 ? 16 : f->depth;
		CHECK(f->group_bytes[0] * 8 == f->group_px * bits, "%s: %d bytes for %d px of %d bits",
		      f->name, f->group_bytes[0], f->group_px, bits);
	}
}

static void table_fields(void)
{
	size_t n = vc_fmt_count();

	CHECK(n >= 90, "only %zu rows", n);
	CHECK(vc_fmt_at(n) == NULL, "row past the end");
	for (size_t i = 0; i < n; i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		char fcc[16];

		CHECK(f && f->name && *f->name && f->desc && *f->desc, "row %zu unnamed", i);
		if (!f || !f->name)
			continue;
		CHECK(f->fourcc != 0, "%s: fourcc 0", f->name);
		for (size_t j = 0; j < i; j++) {
			const struct vc_fmt *o = vc_fmt_at(j);
			CHECK(o->fourcc != f->fourcc, "%s and %s: same fourcc", o->name, f->name);
			CHECK(strcasecmp(o->name, f->name) != 0, "name %s twice", f->name);
		}
		CHECK(layout_family(f->layout) == f->family, "%s: family %d vs layout %d", f->name,
		      f->family, f->layout);
		CHECK(f->color_planes == layout_planes(f->layout), "%s: %d colour planes", f->name,
		      f->color_planes);
		CHECK(f->mem_planes == 1 || f->mem_planes == f->color_planes, "%s: %d memory planes",
		      f->name, f->mem_planes);
		if (f->family != VC_FAM_YUV)
			CHECK(f->log2_chroma_w == 0 && f->log2_chroma_h == 0, "%s: subsampled non-YUV",
			      f->name);
		CHECK(f->log2_chroma_w <= 2 && f->log2_chroma_h <= f->log2_chroma_w,
		      "%s: chroma 1/%d x 1/%d", f->name, 1 << f->log2_chroma_w, 1 << f->log2_chroma_h);
		check_plane_bytes(f);
		if (f->layout == VC_LAYOUT_COMPRESSED) {
			CHECK(f->depth == 0 && f->group_px == 0, "%s: compressed with pixel facts", f->name);
		} else {
			CHECK(f->group_px >= 1, "%s: no pixels per group", f->name);
			CHECK(vc_fmt_is_raw(f), "%s: not sendable", f->name);
		}
		if (f->layout == VC_LAYOUT_PACKED_RGB) {
			check_rgb_row(f);
		} else {
			CHECK(!f->r.depth && !f->g.depth && !f->b.depth && !f->a.depth,
			      "%s: bit fields on a non-RGB row", f->name);
		}
		if (f->layout == VC_LAYOUT_PACKED_YUV) {
			check_packed_yuv_row(f);
		} else {
			int none = f->a_off == N && f->u_off[0] == N && f->u_off[1] == N &&
				   f->v_off[0] == N && f->v_off[1] == N;
			for (int k = 0; k < 8; k++)
				none &= f->y_off[k] == N;
			CHECK(none, "%s: byte offsets on a non-packed-YUV row", f->name);
			CHECK(!f->has_alpha || f->layout == VC_LAYOUT_PACKED_RGB, "%s: alpha", f->name);
		}
		if (f->family == VC_FAM_YUV)
			CHECK(f->depth == 8 && f->group_px >= 1, "%s: YUV depth %d", f->name, f->depth);
		if (f->layout == VC_LAYOUT_PLANAR_YUV || f->layout == VC_LAYOUT_SEMIPLANAR)
			CHECK(f->group_px == 1, "%s: planar group of %d", f->name, f->group_px);
		check_packing(f);
		CHECK(!f->swap_uv || f->layout == VC_LAYOUT_PLANAR_YUV ||
			      f->layout == VC_LAYOUT_SEMIPLANAR, "%s: swap_uv", f->name);
		CHECK((f->cfa != VC_CFA_NONE) == (f->layout == VC_LAYOUT_BAYER) &&
			      f->cfa <= VC_CFA_RGGB, "%s: cfa %d", f->name, f->cfa);
		/* V4L2 marks big-endian variants with bit 31 of the fourcc. */
		if (f->fourcc & (1u << 31))
			CHECK(f->big_endian, "%s: BE fourcc, little-endian row", f->name);
		CHECK(!f->big_endian || f->packing == VC_PACK_16 || f->layout == VC_LAYOUT_PACKED_RGB,
		      "%s: byte order on single bytes", f->name);
		CHECK(f->layout != VC_LAYOUT_BAYER || f->libyuv_fourcc == 0,
		      "%s: libyuv has no Bayer", f->name);
		/* lookups round-trip */
		CHECK(vc_fmt_by_fourcc(f->fourcc) == f, "%s: by fourcc", f->name);
		CHECK(vc_fmt_find(f->name) == f, "%s: by name", f->name);
		vc_fourcc_str(f->fourcc, fcc);
		CHECK(vc_fmt_find(fcc) == f, "%s: by fourcc text '%s' -> %s", f->name, fcc,
		      nm(vc_fmt_find(fcc)));
	}
}

/* Rows naming the same libyuv fourcc must describe the same bytes (modulo
 * alpha vs padding and memory planes). */
static void libyuv_consistent(void)
{
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		for (size_t j = 0; j < i; j++) {
			const struct vc_fmt *o = vc_fmt_at(j);
			if (!f->libyuv_fourcc || f->libyuv_fourcc != o->libyuv_fourcc)
				continue;
			int same = f->layout == o->layout && f->group_px == o->group_px &&
				   !memcmp(f->group_bytes, o->group_bytes, 3) &&
				   f->log2_chroma_w == o->log2_chroma_w &&
				   f->log2_chroma_h == o->log2_chroma_h && f->swap_uv == o->swap_uv &&
				   f->big_endian == o->big_endian && f->depth == o->depth &&
				   !memcmp(&f->r, &o->r, sizeof(f->r)) &&
				   !memcmp(&f->g, &o->g, sizeof(f->g)) &&
				   !memcmp(&f->b, &o->b, sizeof(f->b)) &&
				   !memcmp(f->y_off, o->y_off, 8) && !memcmp(f->u_off, o->u_off, 2) &&
				   !memcmp(f->v_off, o->v_off, 2);
			CHECK(same, "%s and %s share a libyuv fourcc but differ", o->name, f->name);
		}
	}
}

/* Bits per pixel of each row as videodev2.h states them (its comments), an
 * independent source for group sizes and subsampling: sizeimage of a 64x64
 * frame * 8 / 4096. Every raw row must be listed. */
static const struct {
	const char *name;
	unsigned bpp;
} bpp_vec[] = {
	{ "RGB332", 8 },   { "RGB444", 16 },  { "XRGB444", 16 }, { "ARGB444", 16 },
	{ "RGBX444", 16 }, { "RGBA444", 16 }, { "XBGR444", 16 }, { "ABGR444", 16 },
	{ "BGRX444", 16 }, { "BGRA444", 16 }, { "RGB555", 16 },  { "XRGB555", 16 },
	{ "ARGB555", 16 }, { "RGBX555", 16 }, { "RGBA555", 16 }, { "XBGR555", 16 },
	{ "ABGR555", 16 }, { "BGRX555", 16 }, { "BGRA555", 16 }, { "RGB565", 16 },
	{ "RGB555X", 16 }, { "XRGB555X", 16 }, { "ARGB555X", 16 }, { "RGB565X", 16 },
	{ "BGR24", 24 },   { "RGB24", 24 },   { "BGR32", 32 },   { "ABGR32", 32 },
	{ "XBGR32", 32 },  { "RGB32", 32 },   { "ARGB32", 32 },  { "XRGB32", 32 },
	{ "RGBA32", 32 },  { "RGBX32", 32 },  { "BGRA32", 32 },  { "BGRX32", 32 },
	{ "YUYV", 16 },    { "YVYU", 16 },    { "UYVY", 16 },    { "VYUY", 16 },
	{ "Y41P", 12 },    { "YUV24", 24 },   { "AYUV32", 32 },  { "XYUV32", 32 },
	{ "VUYA32", 32 },  { "VUYX32", 32 },  { "YUVA32", 32 },  { "YUVX32", 32 },
	{ "YUV420", 12 },  { "YVU420", 12 },  { "YUV422P", 16 }, { "YUV411P", 12 },
	{ "YUV410", 9 },   { "YVU410", 9 },   { "YUV420M", 12 }, { "YVU420M", 12 },
	{ "YUV422M", 16 }, { "YVU422M", 16 }, { "YUV444M", 24 }, { "YVU444M", 24 },
	{ "NV12", 12 },    { "NV21", 12 },    { "NV16", 16 },    { "NV61", 16 },
	{ "NV24", 24 },    { "NV42", 24 },    { "NV12M", 12 },   { "NV21M", 12 },
	{ "NV16M", 16 },   { "NV61M", 16 },   { "GREY", 8 },     { "Y10", 16 },
	{ "Y12", 16 },     { "Y14", 16 },     { "Y16", 16 },     { "Y16_BE", 16 },
	{ "Y10P", 10 },    { "SBGGR8", 8 },   { "SGBRG8", 8 },   { "SGRBG8", 8 },
	{ "SRGGB8", 8 },   { "SBGGR10", 16 }, { "SGBRG10", 16 }, { "SGRBG10", 16 },
	{ "SRGGB10", 16 }, { "SBGGR12", 16 }, { "SGBRG12", 16 }, { "SGRBG12", 16 },
	{ "SRGGB12", 16 }, { "SBGGR14", 16 }, { "SGBRG14", 16 }, { "SGRBG14", 16 },
	{ "SRGGB14", 16 }, { "SBGGR16", 16 }, { "SGBRG16", 16 }, { "SGRBG16", 16 },
	{ "SRGGB16", 16 }, { "SBGGR10P", 10 }, { "SGBRG10P", 10 }, { "SGRBG10P", 10 },
	{ "SRGGB10P", 10 }, { "SBGGR12P", 12 }, { "SGBRG12P", 12 }, { "SGRBG12P", 12 },
	{ "SRGGB12P", 12 },
};

static void bits_per_pixel(void)
{
	for (size_t i = 0; i < ARRAY_LEN(bpp_vec); i++) {
		const struct vc_fmt *f = vc_fmt_find(bpp_vec[i].name);
		struct vc_geom g;

		CHECK(f != NULL, "%s missing", bpp_vec[i].name);
		if (!f)
			continue;
		CHECK(vc_fmt_geometry(f, 64, 64, 0, &g) == 0, "%s: 64x64", f->name);
		CHECK(g.sizeimage * 8 == (size_t)64 * 64 * bpp_vec[i].bpp, "%s: %zu bits/px, want %u",
		      f->name, g.sizeimage * 8 / 4096, bpp_vec[i].bpp);
	}
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		int listed = f->layout == VC_LAYOUT_COMPRESSED;
		for (size_t k = 0; k < ARRAY_LEN(bpp_vec); k++)
			listed |= strcmp(bpp_vec[k].name, f->name) == 0;
		CHECK(listed, "%s has no bits-per-pixel vector", f->name);
	}
}

/* The formats the issue and the Pi cameras need are all there. */
static void required_rows(void)
{
	static const uint32_t need[] = {
		V4L2_PIX_FMT_RGB332, V4L2_PIX_FMT_RGB444, V4L2_PIX_FMT_RGB555, V4L2_PIX_FMT_RGB565,
		V4L2_PIX_FMT_RGB555X, V4L2_PIX_FMT_RGB565X, V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_RGB24,
		V4L2_PIX_FMT_BGR32, V4L2_PIX_FMT_RGB32, V4L2_PIX_FMT_SBGGR8, V4L2_PIX_FMT_GREY,
		V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_Y41P, V4L2_PIX_FMT_YUV422P,
		V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_YUV410, V4L2_PIX_FMT_YVU410,
		V4L2_PIX_FMT_JPEG, V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YVYU, V4L2_PIX_FMT_VYUY,
		V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV21, V4L2_PIX_FMT_NV16, V4L2_PIX_FMT_NV61,
		V4L2_PIX_FMT_NV24, V4L2_PIX_FMT_NV42, V4L2_PIX_FMT_XRGB32, V4L2_PIX_FMT_XBGR32,
		V4L2_PIX_FMT_ARGB32, V4L2_PIX_FMT_ABGR32, V4L2_PIX_FMT_RGBX32, V4L2_PIX_FMT_BGRX32,
		V4L2_PIX_FMT_RGBA32, V4L2_PIX_FMT_BGRA32, V4L2_PIX_FMT_SGBRG8, V4L2_PIX_FMT_SGRBG8,
		V4L2_PIX_FMT_SRGGB8, V4L2_PIX_FMT_SBGGR10, V4L2_PIX_FMT_SGBRG10, V4L2_PIX_FMT_SGRBG10,
		V4L2_PIX_FMT_SRGGB10, V4L2_PIX_FMT_SBGGR12, V4L2_PIX_FMT_SRGGB12, V4L2_PIX_FMT_SBGGR16,
		V4L2_PIX_FMT_SBGGR10P, V4L2_PIX_FMT_SGBRG10P, V4L2_PIX_FMT_SGRBG10P,
		V4L2_PIX_FMT_SRGGB10P, V4L2_PIX_FMT_SBGGR12P, V4L2_PIX_FMT_SRGGB12P, V4L2_PIX_FMT_Y10,
		V4L2_PIX_FMT_Y12, V4L2_PIX_FMT_Y16, V4L2_PIX_FMT_Y16_BE, V4L2_PIX_FMT_NV12M,
		V4L2_PIX_FMT_NV21M, V4L2_PIX_FMT_NV16M, V4L2_PIX_FMT_NV61M, V4L2_PIX_FMT_YUV420M,
		V4L2_PIX_FMT_YVU420M, V4L2_PIX_FMT_YUV422M, V4L2_PIX_FMT_YVU422M,
		V4L2_PIX_FMT_YUV444M, V4L2_PIX_FMT_YVU444M, V4L2_PIX_FMT_ARGB444, V4L2_PIX_FMT_XRGB444,
		V4L2_PIX_FMT_ARGB555, V4L2_PIX_FMT_XRGB555, V4L2_PIX_FMT_AYUV32, V4L2_PIX_FMT_XYUV32,
	};
	char fcc[16];

	for (size_t i = 0; i < ARRAY_LEN(need); i++)
		CHECK(vc_fmt_by_fourcc(need[i]) != NULL, "%s missing",
		      vc_fourcc_str(need[i], fcc));
}

/* ---- geometry from the V4L2 specification ---- */

struct geom_vec {
	int line;
	const char *name;
	uint32_t w, h, bpl;
	uint32_t stride[3];
	size_t sizeimage;
	size_t mem[3];
};

#define GV(...) { __LINE__, __VA_ARGS__ }
static const struct geom_vec geom_vec[] = {
	/* packed YUV: 2 bytes per pixel, Y41P 12 bytes per 8 pixels */
	GV("YUYV", 640, 480, 0, { 1280 }, 614400, { 614400 }),
	GV("YUYV", 640, 480, 1536, { 1536 }, 737280, { 737280 }),
	GV("YUYV", 641, 480, 0, { 1284 }, 616320, { 616320 }),
	GV("UYVY", 1920, 1080, 0, { 3840 }, 4147200, { 4147200 }),
	GV("VYUY", 2, 1, 0, { 4 }, 4, { 4 }),
	GV("Y41P", 640, 480, 0, { 960 }, 460800, { 460800 }),
	GV("Y41P", 644, 2, 0, { 972 }, 1944, { 1944 }),
	GV("AYUV32", 2, 2, 0, { 8 }, 16, { 16 }),
	GV("YUV24", 3, 3, 0, { 9 }, 27, { 27 }),
	/* semi-planar: chroma stride = luma stride (4:2:x) or twice (4:4:4) */
	GV("NV12", 1920, 1080, 0, { 1920, 1920 }, 3110400, { 3110400 }),
	GV("NV12", 1920, 1080, 2048, { 2048, 2048 }, 3317760, { 3317760 }),
	GV("NV12", 641, 481, 0, { 641, 642 }, 463043, { 463043 }),
	GV("NV21", 640, 480, 0, { 640, 640 }, 460800, { 460800 }),
	GV("NV16", 640, 480, 0, { 640, 640 }, 614400, { 614400 }),
	GV("NV24", 640, 480, 0, { 640, 1280 }, 921600, { 921600 }),
	GV("NV42", 3, 2, 0, { 3, 6 }, 18, { 18 }),
	GV("NV12M", 640, 480, 0, { 640, 640 }, 460800, { 307200, 153600 }),
	GV("NV12M", 640, 480, 768, { 768, 768 }, 552960, { 368640, 184320 }),
	GV("NV61M", 641, 3, 0, { 641, 642 }, 3849, { 1923, 1926 }),
	/* planar: chroma stride = luma stride / 2 (4:2:x), / 4 (4:1:x) */
	GV("YUV420", 640, 480, 0, { 640, 320, 320 }, 460800, { 460800 }),
	GV("YUV420", 640, 480, 704, { 704, 352, 352 }, 506880, { 506880 }),
	GV("YUV420", 640, 480, 641, { 641, 321, 321 }, 461760, { 461760 }),
	GV("YUV420", 1, 1, 0, { 1, 1, 1 }, 3, { 3 }),
	GV("YUV420", 3, 3, 0, { 3, 2, 2 }, 17, { 17 }),
	GV("YVU420", 1280, 720, 0, { 1280, 640, 640 }, 1382400, { 1382400 }),
	GV("YUV422P", 640, 480, 0, { 640, 320, 320 }, 614400, { 614400 }),
	GV("YUV411P", 640, 480, 0, { 640, 160, 160 }, 460800, { 460800 }),
	GV("YUV410", 640, 480, 0, { 640, 160, 160 }, 345600, { 345600 }),
	GV("YUV410", 160, 120, 0, { 160, 40, 40 }, 21600, { 21600 }),
	GV("YVU410", 642, 481, 0, { 642, 161, 161 }, 347764, { 347764 }),
	GV("YUV420M", 640, 480, 0, { 640, 320, 320 }, 460800, { 307200, 76800, 76800 }),
	GV("YVU420M", 640, 480, 768, { 768, 384, 384 }, 552960, { 368640, 92160, 92160 }),
	GV("YUV422M", 640, 480, 0, { 640, 320, 320 }, 614400, { 307200, 153600, 153600 }),
	GV("YUV444M", 640, 480, 0, { 640, 640, 640 }, 921600, { 307200, 307200, 307200 }),
	GV("YUV444M", 640, 480, 768, { 768, 768, 768 }, 1105920, { 368640, 368640, 368640 }),
	GV("YVU444M", 1, 1, 0, { 1, 1, 1 }, 3, { 1, 1, 1 }),
	/* grey and Bayer: MIPI RAW10 stride = w * 5 / 4, RAW12 w * 3 / 2 */
	GV("GREY", 640, 480, 0, { 640 }, 307200, { 307200 }),
	GV("Y10", 640, 480, 0, { 1280 }, 614400, { 614400 }),
	GV("Y16_BE", 100, 100, 0, { 200 }, 20000, { 20000 }),
	GV("Y10P", 640, 480, 0, { 800 }, 384000, { 384000 }),
	GV("SBGGR8", 640, 480, 0, { 640 }, 307200, { 307200 }),
	GV("SBGGR10", 640, 480, 0, { 1280 }, 614400, { 614400 }),
	GV("SBGGR10P", 640, 480, 0, { 800 }, 384000, { 384000 }),
	GV("SBGGR10P", 1920, 1080, 0, { 2400 }, 2592000, { 2592000 }),
	GV("SRGGB10P", 3280, 2464, 0, { 4100 }, 10102400, { 10102400 }), /* Pi camera v2 */
	GV("SRGGB10P", 642, 2, 0, { 805 }, 1610, { 1610 }),
	GV("SRGGB10P", 640, 2, 832, { 832 }, 1664, { 1664 }),
	GV("SBGGR12P", 640, 480, 0, { 960 }, 460800, { 460800 }),
	GV("SGRBG12P", 3, 1, 0, { 6 }, 6, { 6 }),
	GV("SGRBG16", 4, 4, 0, { 8 }, 32, { 32 }),
	/* packed RGB */
	GV("RGB24", 640, 480, 0, { 1920 }, 921600, { 921600 }),
	GV("BGR24", 1, 1, 0, { 3 }, 3, { 3 }),
	GV("RGB32", 640, 480, 0, { 2560 }, 1228800, { 1228800 }),
	GV("XRGB32", 1920, 1080, 7680, { 7680 }, 8294400, { 8294400 }),
	GV("RGB565", 640, 480, 0, { 1280 }, 614400, { 614400 }),
	GV("RGB332", 5, 5, 0, { 5 }, 25, { 25 }),
	GV("RGB444", 3, 1, 0, { 6 }, 6, { 6 }),
	/* compressed: a bound, 6 bytes per pixel of the 16-aligned frame + 64 KiB */
	GV("MJPEG", 640, 480, 0, { 0 }, 1908736, { 1908736 }),
	GV("JPEG", 1, 1, 0, { 0 }, 67072, { 67072 }),
	GV("MJPEG", 16384, 16384, 0, { 0 }, 1610678272, { 1610678272 }),
	/* the largest frames still fit V4L2's 32-bit sizeimage */
	GV("NV12", 16384, 16384, 0, { 16384, 16384 }, 402653184, { 402653184 }),
	GV("RGB32", 16384, 16384, 0, { 65536 }, 1073741824, { 1073741824 }),
};

static void geometry_vectors(void)
{
	for (size_t i = 0; i < ARRAY_LEN(geom_vec); i++) {
		const struct geom_vec *v = &geom_vec[i];
		const struct vc_fmt *f = vc_fmt_find(v->name);
		struct vc_geom g;

		CHECK_AT(v->line, f != NULL, "%s missing", v->name);
		if (!f)
			continue;
		memset(&g, 0xff, sizeof(g));
		int r = vc_fmt_geometry(f, v->w, v->h, v->bpl, &g);
		CHECK_AT(v->line, r == 0, "%s %ux%u: %d", v->name, v->w, v->h, r);
		if (r)
			continue;
		CHECK_AT(v->line, g.width == v->w && g.height == v->h, "size %ux%u", g.width, g.height);
		CHECK_AT(v->line, g.color_planes == f->color_planes && g.mem_planes == f->mem_planes,
			 "planes %d/%d", g.color_planes, g.mem_planes);
		for (int p = 0; p < f->color_planes; p++)
			CHECK_AT(v->line, g.plane[p].stride == v->stride[p], "%s plane %d stride %u, want %u",
				 v->name, p, g.plane[p].stride, v->stride[p]);
		CHECK_AT(v->line, g.sizeimage == v->sizeimage, "%s sizeimage %zu, want %zu", v->name,
			 g.sizeimage, v->sizeimage);
		for (int m = 0; m < 3; m++)
			CHECK_AT(v->line, g.mem_size[m] == v->mem[m], "%s mem %d: %zu, want %zu", v->name,
				 m, g.mem_size[m], v->mem[m]);
		if (v->bpl == 0 && f->layout != VC_LAYOUT_COMPRESSED)
			CHECK_AT(v->line, vc_fmt_min_stride(f, v->w) == v->stride[0], "min stride %u",
				 vc_fmt_min_stride(f, v->w));
	}
	CHECK(ARRAY_LEN(geom_vec) >= 40, "only %zu vectors", ARRAY_LEN(geom_vec));
}

/* YUV420 640x480: V4L2's plane order and offsets in the one buffer. */
static void plane_offsets(void)
{
	struct vc_geom g;

	CHECK(vc_fmt_geometry(vc_fmt_find("YU12"), 640, 480, 0, &g) == 0, "YU12");
	CHECK(g.plane[0].offset == 0 && g.plane[1].offset == 307200 && g.plane[2].offset == 384000,
	      "offsets %zu %zu %zu", g.plane[0].offset, g.plane[1].offset, g.plane[2].offset);
	CHECK(g.plane[1].lines == 240 && g.plane[1].size == 76800, "chroma %u lines %zu bytes",
	      g.plane[1].lines, g.plane[1].size);
	CHECK(vc_fmt_geometry(vc_fmt_find("YM12"), 640, 480, 0, &g) == 0, "YM12");
	for (int p = 0; p < 3; p++)
		CHECK(g.plane[p].mem == p && g.plane[p].offset == 0, "YM12 plane %d in mem %d at %zu", p,
		      g.plane[p].mem, g.plane[p].offset);
	CHECK(vc_fmt_geometry(vc_fmt_find("NV12"), 640, 480, 704, &g) == 0, "NV12");
	CHECK(g.plane[1].offset == 704 * 480 && g.plane[1].mem == 0, "NV12 chroma at %zu",
	      g.plane[1].offset);
	CHECK(vc_fmt_geometry(vc_fmt_find("YUV9"), 640, 480, 0, &g) == 0, "YUV9");
	CHECK(g.plane[1].lines == 120 && g.plane[2].offset == 307200 + 19200, "YUV9 %u lines, Cr at %zu",
	      g.plane[1].lines, g.plane[2].offset);
}

/* Invariants on every row, many sizes and paddings: planes in bounds and
 * disjoint, strides at least what a line needs, sizes add up. */
static void geometry_invariants(void)
{
	static const uint32_t sizes[][2] = { { 1, 1 }, { 2, 2 }, { 3, 5 }, { 7, 1 }, { 17, 9 },
					     { 640, 480 }, { 641, 479 }, { 1920, 1080 } };
	static const uint32_t pads[] = { 0, 1, 3, 64, 4096 };

	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		int cw = 1 << f->log2_chroma_w, ch = 1 << f->log2_chroma_h;

		for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
			for (size_t k = 0; k < ARRAY_LEN(pads); k++) {
				uint32_t w = sizes[s][0], h = sizes[s][1];
				uint32_t min = vc_fmt_min_stride(f, w);
				uint32_t bpl = pads[k] ? min + pads[k] : 0;
				struct vc_geom g;
				int r = vc_fmt_geometry(f, w, h, bpl, &g);

				CHECK(r == 0, "%s %ux%u bpl %u: %d", f->name, w, h, bpl, r);
				if (r || f->layout == VC_LAYOUT_COMPRESSED)
					continue;
				CHECK(g.plane[0].stride == (bpl ? bpl : min), "%s: stride %u", f->name,
				      g.plane[0].stride);
				size_t sum = 0, sum_mem = 0;
				for (int p = 0; p < f->color_planes; p++) {
					const struct vc_plane_geom *pg = &g.plane[p];
					uint32_t pw = p ? (w + cw - 1) / cw : w;
					uint32_t ph = p ? (h + ch - 1) / ch : h;
					size_t need = p ? (size_t)pw * f->group_bytes[p] : min;

					CHECK(pg->stride >= need, "%s %ux%u+%u plane %d: stride %u < %zu",
					      f->name, w, h, pads[k], p, pg->stride, need);
					CHECK(pg->lines == ph, "%s plane %d: %u lines", f->name, p, pg->lines);
					CHECK(pg->size == (size_t)pg->stride * pg->lines, "%s plane %d size",
					      f->name, p);
					CHECK(pg->mem < g.mem_planes &&
						      pg->offset + pg->size <= g.mem_size[pg->mem],
					      "%s plane %d outside memory plane %d", f->name, p, pg->mem);
					/* planes sharing a buffer follow one another */
					for (int q = 0; q < p; q++)
						if (g.plane[q].mem == pg->mem)
							CHECK(g.plane[q].offset + g.plane[q].size <= pg->offset,
							      "%s planes %d and %d overlap", f->name, q, p);
					sum += pg->size;
				}
				for (int m = 0; m < 3; m++) {
					CHECK((m < g.mem_planes) == (g.mem_size[m] != 0), "%s mem %d: %zu",
					      f->name, m, g.mem_size[m]);
					sum_mem += g.mem_size[m];
				}
				CHECK(sum == g.sizeimage && sum_mem == g.sizeimage, "%s: %zu/%zu vs %zu",
				      f->name, sum, sum_mem, g.sizeimage);
			}
		}
	}
}

static void bad_input(void)
{
	const struct vc_fmt *yuyv = vc_fmt_find("YUYV"), *nv12 = vc_fmt_find("NV12");
	struct vc_geom g;
	static const struct {
		int line;
		const char *name;
		uint32_t w, h, bpl;
	} bad[] = {
		{ __LINE__, "YUYV", 0, 480, 0 },
		{ __LINE__, "YUYV", 640, 0, 0 },
		{ __LINE__, "YUYV", 16385, 480, 0 },
		{ __LINE__, "YUYV", 640, 16385, 0 },
		{ __LINE__, "YUYV", UINT32_MAX, UINT32_MAX, 0 },
		{ __LINE__, "YUYV", 640, 480, 1279 },
		{ __LINE__, "YUYV", 641, 480, 1282 },
		{ __LINE__, "NV12", 640, 480, 639 },
		{ __LINE__, "SBGGR10P", 640, 480, 799 },
		{ __LINE__, "Y41P", 641, 1, 960 },
		{ __LINE__, "MJPEG", 0, 0, 0 },
		{ __LINE__, "MJPEG", 20000, 100, 0 },
		/* a stride whose frame would not fit V4L2's 32-bit sizeimage */
		{ __LINE__, "XRGB32", 16384, 16384, 300000 },
		{ __LINE__, "YUV444M", 16384, 16384, UINT32_MAX },
	};

	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		memset(&g, 0xff, sizeof(g));
		int r = vc_fmt_geometry(vc_fmt_find(bad[i].name), bad[i].w, bad[i].h, bad[i].bpl, &g);
		CHECK_AT(bad[i].line, r == -EINVAL, "%s %ux%u bpl %u: %d", bad[i].name, bad[i].w,
			 bad[i].h, bad[i].bpl, r);
		CHECK_AT(bad[i].line, g.sizeimage == 0 && g.mem_size[0] == 0, "geometry left set");
	}
	CHECK(vc_fmt_geometry(NULL, 640, 480, 0, &g) == -EINVAL, "NULL row");
	CHECK(vc_fmt_geometry(yuyv, 640, 480, 0, NULL) == -EINVAL, "NULL geometry");
	CHECK(vc_fmt_geometry(nv12, 16384, 16384, 0, &g) == 0, "largest NV12");
	CHECK(vc_fmt_min_stride(NULL, 640) == 0, "min stride of NULL");
	CHECK(vc_fmt_min_stride(yuyv, UINT32_MAX) == UINT32_MAX, "saturating min stride %u",
	      vc_fmt_min_stride(yuyv, UINT32_MAX));
	CHECK(!vc_fmt_is_raw(NULL), "NULL sendable");
	/* a driver's bytesperline on a compressed format is ignored, as in V4L2 */
	CHECK(vc_fmt_geometry(vc_fmt_find("MJPEG"), 640, 480, 1234, &g) == 0 &&
		      g.sizeimage == 1908736, "MJPEG with bytesperline");
}

/* Random sizes and strides, extreme values included: every call either
 * refuses with -EINVAL and leaves a zeroed geometry, or returns planes that
 * fit their memory planes and a sizeimage that fits 32 bits. */
static void geometry_fuzz(void)
{
	static const uint32_t edge[] = { 0, 1, 2, 3, 15, 16, 17, 16383, 16384, 16385, 65535,
					 0x7fffffffu, 0x80000000u, UINT32_MAX };
	int ok = 0, refused = 0;

	for (int it = 0; it < 200000; it++) {
		const struct vc_fmt *f = vc_fmt_at((size_t)(rnd8() | rnd8() << 8) % vc_fmt_count());
		uint32_t r = (uint32_t)rnd8() | (uint32_t)rnd8() << 8 | (uint32_t)rnd8() << 16 |
			     (uint32_t)rnd8() << 24;
		uint32_t w = r & 1 ? edge[rnd8() % ARRAY_LEN(edge)] : (r >> 1) % 17000;
		uint32_t h = r & 2 ? edge[rnd8() % ARRAY_LEN(edge)] : (r >> 3) % 17000;
		uint32_t min = vc_fmt_min_stride(f, w);
		uint32_t bpl = r & 4 ? edge[rnd8() % ARRAY_LEN(edge)] :
			       r & 8 ? 0 : min + (r >> 20) % 300 - (r & 16 ? 3 : 0);
		struct vc_geom g;

		memset(&g, 0xff, sizeof(g));
		int ret = vc_fmt_geometry(f, w, h, bpl, &g);
		if (ret) {
			refused++;
			CHECK(ret == -EINVAL && g.sizeimage == 0 && g.mem_size[0] == 0 && g.width == 0,
			      "%s %ux%u bpl %u: %d", f->name, w, h, bpl, ret);
			continue;
		}
		ok++;
		CHECK(w >= 1 && h >= 1 && w <= 16384 && h <= 16384, "%s accepted %ux%u", f->name, w, h);
		CHECK(g.sizeimage <= UINT32_MAX && g.sizeimage > 0, "%s sizeimage %zu", f->name,
		      g.sizeimage);
		if (f->layout == VC_LAYOUT_COMPRESSED)
			continue;
		CHECK(bpl == 0 || bpl >= min, "%s accepted bpl %u < %u", f->name, bpl, min);
		for (int p = 0; p < g.color_planes; p++)
			CHECK(g.plane[p].offset + g.plane[p].size <= g.mem_size[g.plane[p].mem],
			      "%s plane %d out of its memory plane", f->name, p);
	}
	CHECK(ok > 10000 && refused > 10000, "ok %d refused %d", ok, refused);
}

/* ---- lookups ---- */

static void lookups(void)
{
	static const struct {
		int line;
		const char *text;
		uint32_t want; /* 0 = not found */
	} v[] = {
		{ __LINE__, "YUYV", V4L2_PIX_FMT_YUYV },
		{ __LINE__, "yuyv", V4L2_PIX_FMT_YUYV },
		{ __LINE__, "RGB24", V4L2_PIX_FMT_RGB24 },
		{ __LINE__, "rgb24", V4L2_PIX_FMT_RGB24 },
		{ __LINE__, "RGB3", V4L2_PIX_FMT_RGB24 },
		{ __LINE__, "rgb3", V4L2_PIX_FMT_RGB24 },
		{ __LINE__, "NV12", V4L2_PIX_FMT_NV12 },
		{ __LINE__, "nv12m", V4L2_PIX_FMT_NV12M },
		{ __LINE__, "NM12", V4L2_PIX_FMT_NV12M },
		{ __LINE__, "MJPEG", V4L2_PIX_FMT_MJPEG },
		{ __LINE__, "MJPG", V4L2_PIX_FMT_MJPEG },
		{ __LINE__, "mjpg", V4L2_PIX_FMT_MJPEG },
		{ __LINE__, "Mjpeg", V4L2_PIX_FMT_MJPEG },
		{ __LINE__, "JPEG", V4L2_PIX_FMT_JPEG },
		{ __LINE__, "YU12", V4L2_PIX_FMT_YUV420 },
		{ __LINE__, "yuv420", V4L2_PIX_FMT_YUV420 },
		{ __LINE__, "YV12", V4L2_PIX_FMT_YVU420 },
		/* other tools' names, after every row's own */
		{ __LINE__, "I420", V4L2_PIX_FMT_YUV420 },
		{ __LINE__, "yuv420p", V4L2_PIX_FMT_YUV420 },
		{ __LINE__, "YUY2", V4L2_PIX_FMT_YUYV },
		{ __LINE__, "gray", V4L2_PIX_FMT_GREY },
		{ __LINE__, "I421", 0 },
		{ __LINE__, "422P", V4L2_PIX_FMT_YUV422P },
		{ __LINE__, "YUV9", V4L2_PIX_FMT_YUV410 },
		{ __LINE__, "yvu9", V4L2_PIX_FMT_YVU410 },
		{ __LINE__, "BA81", V4L2_PIX_FMT_SBGGR8 },
		{ __LINE__, "ba81", V4L2_PIX_FMT_SBGGR8 },
		{ __LINE__, "RGBP", V4L2_PIX_FMT_RGB565 },
		{ __LINE__, "RGBO", V4L2_PIX_FMT_RGB555 },
		{ __LINE__, "RGBQ", V4L2_PIX_FMT_RGB555X },
		{ __LINE__, "RGB1", V4L2_PIX_FMT_RGB332 },
		{ __LINE__, "R444", V4L2_PIX_FMT_RGB444 },
		{ __LINE__, "BGR4", V4L2_PIX_FMT_BGR32 },
		{ __LINE__, "BX24", V4L2_PIX_FMT_XRGB32 },
		{ __LINE__, "AR24", V4L2_PIX_FMT_ABGR32 },
		{ __LINE__, "Y10", V4L2_PIX_FMT_Y10 },
		{ __LINE__, "Y10 ", V4L2_PIX_FMT_Y10 },
		{ __LINE__, "y10", V4L2_PIX_FMT_Y10 },
		{ __LINE__, "Y16", V4L2_PIX_FMT_Y16 },
		{ __LINE__, "Y16 -BE", V4L2_PIX_FMT_Y16_BE },
		{ __LINE__, "y16_be", V4L2_PIX_FMT_Y16_BE },
		{ __LINE__, "BYR2", V4L2_PIX_FMT_SBGGR16 },
		/* only the case tells these MIPI Bayer fourccs apart */
		{ __LINE__, "pgAA", V4L2_PIX_FMT_SGRBG10P },
		{ __LINE__, "pGAA", V4L2_PIX_FMT_SGBRG10P },
		{ __LINE__, "pgCC", V4L2_PIX_FMT_SGRBG12P },
		{ __LINE__, "pGCC", V4L2_PIX_FMT_SGBRG12P },
		{ __LINE__, "pBAA", V4L2_PIX_FMT_SBGGR10P },
		{ __LINE__, "PBAA", V4L2_PIX_FMT_SBGGR10P },
		{ __LINE__, "sgrbg10p", V4L2_PIX_FMT_SGRBG10P },
		{ __LINE__, "", 0 },
		{ __LINE__, "H264", 0 },
		{ __LINE__, "YUYV2", 0 },
		{ __LINE__, "YUY", 0 },
		{ __LINE__, "nonsense-format", 0 },
		{ __LINE__, "-BE", 0 },
	};

	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		const struct vc_fmt *f = vc_fmt_find(v[i].text);
		CHECK_AT(v[i].line, (f ? f->fourcc : 0) == v[i].want, "'%s' -> %s", v[i].text, nm(f));
	}
	CHECK(vc_fmt_find(NULL) == NULL, "NULL name");
	CHECK(vc_fmt_by_fourcc(0) == NULL && vc_fmt_by_fourcc(V4L2_PIX_FMT_H264) == NULL,
	      "unknown fourcc");

	/* every row by name and fourcc text in lower and upper case: found,
	 * and the same row unless another fourcc differs only in case */
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		char lo[32], up[32], fcc[16];
		size_t n = strlen(f->name);

		for (size_t k = 0; k <= n && k < sizeof(lo); k++) {
			lo[k] = (char)(f->name[k] >= 'A' && f->name[k] <= 'Z' ? f->name[k] + 32 : f->name[k]);
			up[k] = (char)(f->name[k] >= 'a' && f->name[k] <= 'z' ? f->name[k] - 32 : f->name[k]);
		}
		CHECK(vc_fmt_find(lo) == f && vc_fmt_find(up) == f, "%s: %s/%s", f->name, lo, up);
		vc_fourcc_str(f->fourcc, fcc);
		for (int k = 0; fcc[k]; k++)
			lo[k] = (char)(fcc[k] >= 'A' && fcc[k] <= 'Z' ? fcc[k] + 32 : fcc[k]), lo[k + 1] = 0;
		const struct vc_fmt *g = vc_fmt_find(lo);
		CHECK(g != NULL, "%s: '%s' not found", f->name, lo);
		if (g && g != f) {
			char a[16], b[16];
			vc_fourcc_str(g->fourcc, a);
			vc_fourcc_str(f->fourcc, b);
			CHECK(strcasecmp(a, b) == 0 || strcasecmp(g->name, lo) == 0,
			      "%s: '%s' found %s", f->name, lo, g->name);
		}
	}
}

static void fourcc_text(void)
{
	char buf[16];

	CHECK(!strcmp(vc_fourcc_str(V4L2_PIX_FMT_YUYV, buf), "YUYV"), "%s", buf);
	CHECK(!strcmp(vc_fourcc_str(V4L2_PIX_FMT_Y10, buf), "Y10 "), "%s", buf);
	CHECK(!strcmp(vc_fourcc_str(V4L2_PIX_FMT_Y16_BE, buf), "Y16 -BE"), "%s", buf);
	CHECK(!strcmp(vc_fourcc_str(V4L2_PIX_FMT_SGRBG10P, buf), "pgAA"), "%s", buf);
	CHECK(!strcmp(vc_fourcc_str(0, buf), "...."), "%s", buf);
	CHECK(!strcmp(vc_fourcc_str(0xffffffffu, buf), "....-BE"), "%s", buf);
}

/* ---- the libyuv fourcc reads the bytes the row describes ---- */

static uint32_t rng = 2463534242u;
static uint8_t rnd8(void)
{
	return (uint8_t)check_xorshift(&rng);
}

/* RGB rows: decode random pixels through libyuv (ConvertToARGB with the
 * row's libyuv fourcc, output bytes B G R A) and through the row's bit
 * fields; the top `depth` bits of each channel must agree. */
static void libyuv_rgb_bytes(void)
{
	enum { W = 16, H = 2 };
	int tested = 0;

	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		uint8_t src[W * H * 4], argb[W * H * 4];
		int n = f->group_bytes[0];

		if (f->layout != VC_LAYOUT_PACKED_RGB || !f->libyuv_fourcc)
			continue;
		for (size_t k = 0; k < sizeof(src); k++)
			src[k] = rnd8();
		int r = ConvertToARGB(src, (size_t)W * H * n, argb, W * 4, 0, 0, W, H, W, H, kRotate0,
				      f->libyuv_fourcc);
		CHECK(r == 0, "%s: libyuv refuses its fourcc (%d)", f->name, r);
		if (r)
			continue;
		tested++;
		for (int px = 0; px < W * H; px++) {
			uint32_t word = 0;
			for (int b = 0; b < n; b++)
				word |= (uint32_t)src[px * n + (f->big_endian ? n - 1 - b : b)] << (8 * b);
			const struct vc_bits *c[3] = { &f->b, &f->g, &f->r };
			for (int ch = 0; ch < 3; ch++) {
				unsigned v = (word >> c[ch]->shift) & ((1u << c[ch]->depth) - 1);
				unsigned lv = argb[px * 4 + ch] >> (8 - c[ch]->depth);
				CHECK(v == lv, "%s px %d channel %d: table %u, libyuv %u", f->name, px, ch, v,
				      lv);
			}
			if (f->has_alpha) {
				unsigned v = (word >> f->a.shift) & ((1u << f->a.depth) - 1);
				unsigned lv = argb[px * 4 + 3] >> (8 - f->a.depth);
				CHECK(v == lv, "%s px %d alpha: table %u, libyuv %u", f->name, px, v, lv);
			}
		}
	}
	CHECK(tested >= 15, "only %d RGB rows checked against libyuv", tested);
}

/* YUV and grey rows: lay out known Y, Cb, Cr samples by the table (chroma
 * constant over each 2x2 block so any subsampling is exact), pack the planes
 * contiguously at minimum stride (the ...M rows included), convert with
 * libyuv's ConvertToI420 and the row's fourcc, and compare. */
static void libyuv_yuv_bytes(void)
{
	enum { W = 8, H = 4 };
	int tested = 0;

	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		uint8_t yv[H][W], uv[H][W], vv[H][W];
		uint8_t buf[W * H * 4];
		struct vc_geom g;

		if (!f->libyuv_fourcc || (f->family != VC_FAM_YUV && f->family != VC_FAM_GREY))
			continue;
		CHECK(vc_fmt_geometry(f, W, H, 0, &g) == 0 && g.sizeimage <= sizeof(buf), "%s", f->name);
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				yv[y][x] = (uint8_t)(16 + 7 * x + 29 * y);
				uv[y][x] = (uint8_t)(40 + 50 * (x / 2) + 9 * (y / 2));
				vv[y][x] = (uint8_t)(200 - 30 * (x / 2) - 13 * (y / 2));
			}
		memset(buf, 0, sizeof(buf));
		size_t off[3] = { 0, g.plane[0].size, g.plane[0].size + g.plane[1].size };
		if (f->layout == VC_LAYOUT_PACKED_YUV) {
			int gp = f->group_px, lw = f->log2_chroma_w;
			for (int y = 0; y < H; y++)
				for (int x0 = 0; x0 < W; x0 += gp) {
					uint8_t *d = buf + y * g.plane[0].stride + x0 / gp * f->group_bytes[0];
					for (int k = 0; k < gp; k++)
						d[f->y_off[k]] = yv[y][x0 + k];
					for (int k = 0; k < gp >> lw; k++) {
						d[f->u_off[k]] = uv[y][x0 + (k << lw)];
						d[f->v_off[k]] = vv[y][x0 + (k << lw)];
					}
				}
		} else {
			int lw = f->log2_chroma_w, lh = f->log2_chroma_h;
			for (int y = 0; y < H; y++)
				for (int x = 0; x < W; x++)
					buf[y * g.plane[0].stride + x] = yv[y][x];
			for (int y = 0; f->color_planes > 1 && y < (H >> lh); y++)
				for (int x = 0; x < (W >> lw); x++) {
					uint8_t u = uv[y << lh][x << lw], v = vv[y << lh][x << lw];
					uint8_t first = f->swap_uv ? v : u, second = f->swap_uv ? u : v;
					if (f->color_planes == 2) {
						uint8_t *d = buf + off[1] + y * g.plane[1].stride + 2 * x;
						d[0] = first, d[1] = second;
					} else {
						buf[off[1] + y * g.plane[1].stride + x] = first;
						buf[off[2] + y * g.plane[2].stride + x] = second;
					}
				}
		}
		uint8_t oy[W * H], ou[W * H / 4], ov[W * H / 4];
		int r = ConvertToI420(buf, g.sizeimage, oy, W, ou, W / 2, ov, W / 2, 0, 0, W, H, W, H,
				      kRotate0, f->libyuv_fourcc);
		CHECK(r == 0, "%s: libyuv refuses its fourcc (%d)", f->name, r);
		if (r)
			continue;
		tested++;
		int bad = 0;
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				bad += oy[y * W + x] != yv[y][x];
				if (f->family == VC_FAM_YUV && !(x & 1) && !(y & 1))
					bad += ou[y / 2 * W / 2 + x / 2] != uv[y][x] ||
					       ov[y / 2 * W / 2 + x / 2] != vv[y][x];
			}
		CHECK(bad == 0, "%s: %d samples differ from libyuv's reading", f->name, bad);
	}
	CHECK(tested >= 12, "only %d YUV rows checked against libyuv", tested);
}

/* ---- the spec's own words, an independent encoding of the rows ---- */

/* Rows whose fourth component is real alpha (V4L2 "A" formats), and rows
 * that store Cr before Cb; every other row must say it has neither. */
static const char *const alpha_rows[] = {
	"ARGB444", "RGBA444", "ABGR444", "BGRA444", "ARGB555", "RGBA555", "ABGR555", "BGRA555",
	"ARGB555X", "ABGR32", "ARGB32", "RGBA32", "BGRA32", "AYUV32", "VUYA32", "YUVA32",
};
static const char *const cr_first_rows[] = {
	"YVU420", "YVU410", "YVU420M", "YVU422M", "YVU444M", "NV21", "NV61", "NV42", "NV21M", "NV61M",
};

static int listed(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return 1;
	return 0;
}

static void alpha_and_order(void)
{
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		CHECK(f->has_alpha == listed(alpha_rows, ARRAY_LEN(alpha_rows), f->name),
		      "%s: has_alpha %d", f->name, f->has_alpha);
		CHECK(f->swap_uv == listed(cr_first_rows, ARRAY_LEN(cr_first_rows), f->name),
		      "%s: swap_uv %d", f->name, f->swap_uv);
	}
}

/* Packed YUV: the order of samples in memory, as the V4L2 documentation
 * draws it (A = alpha or padding byte). */
static const struct {
	const char *name, *order;
} yuv_order[] = {
	{ "YUYV", "YUYV" },   { "YVYU", "YVYU" },   { "UYVY", "UYVY" },   { "VYUY", "VYUY" },
	{ "Y41P", "UYVYUYVYYYYY" }, { "YUV24", "YUV" }, { "AYUV32", "AYUV" }, { "XYUV32", "AYUV" },
	{ "VUYA32", "VUYA" }, { "VUYX32", "VUYA" }, { "YUVA32", "YUVA" }, { "YUVX32", "YUVA" },
};

static void packed_yuv_order(void)
{
	for (size_t i = 0; i < ARRAY_LEN(yuv_order); i++) {
		const struct vc_fmt *f = vc_fmt_find(yuv_order[i].name);
		const char *o = yuv_order[i].order;
		int ny = 0, nu = 0, nv = 0, bad = 0;

		CHECK(f != NULL, "%s missing", yuv_order[i].name);
		if (!f)
			continue;
		CHECK(strlen(o) == f->group_bytes[0], "%s: %zu bytes drawn, row has %d", f->name,
		      strlen(o), f->group_bytes[0]);
		for (int b = 0; o[b]; b++) {
			switch (o[b]) {
			case 'Y': bad += ny >= 8 || f->y_off[ny++] != b; break;
			case 'U': bad += nu >= 2 || f->u_off[nu++] != b; break;
			case 'V': bad += nv >= 2 || f->v_off[nv++] != b; break;
			case 'A': bad += f->a_off != b; break;
			}
		}
		CHECK(bad == 0, "%s: offsets differ from %s", f->name, o);
	}
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		int found = f->layout != VC_LAYOUT_PACKED_YUV;
		for (size_t k = 0; k < ARRAY_LEN(yuv_order); k++)
			found |= !strcmp(yuv_order[k].name, f->name);
		CHECK(found, "%s: no memory-order vector", f->name);
	}
}

/* Packed RGB: the bytes in memory of pure red, green and blue (all other
 * bits 0), worked out from the V4L2 documentation's bit tables. */
static const struct {
	const char *name;
	uint8_t red[4], green[4], blue[4];
} rgb_bytes[] = {
	{ "RGB332", { 0xe0 }, { 0x1c }, { 0x03 } },
	{ "RGB444", { 0x00, 0x0f }, { 0xf0, 0x00 }, { 0x0f, 0x00 } },
	{ "XRGB444", { 0x00, 0x0f }, { 0xf0, 0x00 }, { 0x0f, 0x00 } },
	{ "ARGB444", { 0x00, 0x0f }, { 0xf0, 0x00 }, { 0x0f, 0x00 } },
	{ "RGBX444", { 0x00, 0xf0 }, { 0x00, 0x0f }, { 0xf0, 0x00 } },
	{ "RGBA444", { 0x00, 0xf0 }, { 0x00, 0x0f }, { 0xf0, 0x00 } },
	{ "XBGR444", { 0x0f, 0x00 }, { 0xf0, 0x00 }, { 0x00, 0x0f } },
	{ "ABGR444", { 0x0f, 0x00 }, { 0xf0, 0x00 }, { 0x00, 0x0f } },
	{ "BGRX444", { 0xf0, 0x00 }, { 0x00, 0x0f }, { 0x00, 0xf0 } },
	{ "BGRA444", { 0xf0, 0x00 }, { 0x00, 0x0f }, { 0x00, 0xf0 } },
	{ "RGB555", { 0x00, 0x7c }, { 0xe0, 0x03 }, { 0x1f, 0x00 } },
	{ "XRGB555", { 0x00, 0x7c }, { 0xe0, 0x03 }, { 0x1f, 0x00 } },
	{ "ARGB555", { 0x00, 0x7c }, { 0xe0, 0x03 }, { 0x1f, 0x00 } },
	{ "RGBX555", { 0x00, 0xf8 }, { 0xc0, 0x07 }, { 0x3e, 0x00 } },
	{ "RGBA555", { 0x00, 0xf8 }, { 0xc0, 0x07 }, { 0x3e, 0x00 } },
	{ "XBGR555", { 0x1f, 0x00 }, { 0xe0, 0x03 }, { 0x00, 0x7c } },
	{ "ABGR555", { 0x1f, 0x00 }, { 0xe0, 0x03 }, { 0x00, 0x7c } },
	{ "BGRX555", { 0x3e, 0x00 }, { 0xc0, 0x07 }, { 0x00, 0xf8 } },
	{ "BGRA555", { 0x3e, 0x00 }, { 0xc0, 0x07 }, { 0x00, 0xf8 } },
	{ "RGB565", { 0x00, 0xf8 }, { 0xe0, 0x07 }, { 0x1f, 0x00 } },
	{ "RGB555X", { 0x7c, 0x00 }, { 0x03, 0xe0 }, { 0x00, 0x1f } },
	{ "XRGB555X", { 0x7c, 0x00 }, { 0x03, 0xe0 }, { 0x00, 0x1f } },
	{ "ARGB555X", { 0x7c, 0x00 }, { 0x03, 0xe0 }, { 0x00, 0x1f } },
	{ "RGB565X", { 0xf8, 0x00 }, { 0x07, 0xe0 }, { 0x00, 0x1f } },
	{ "BGR24", { 0, 0, 0xff }, { 0, 0xff, 0 }, { 0xff, 0, 0 } },
	{ "RGB24", { 0xff, 0, 0 }, { 0, 0xff, 0 }, { 0, 0, 0xff } },
	{ "BGR32", { 0, 0, 0xff, 0 }, { 0, 0xff, 0, 0 }, { 0xff, 0, 0, 0 } },
	{ "ABGR32", { 0, 0, 0xff, 0 }, { 0, 0xff, 0, 0 }, { 0xff, 0, 0, 0 } },
	{ "XBGR32", { 0, 0, 0xff, 0 }, { 0, 0xff, 0, 0 }, { 0xff, 0, 0, 0 } },
	{ "RGB32", { 0, 0xff, 0, 0 }, { 0, 0, 0xff, 0 }, { 0, 0, 0, 0xff } },
	{ "ARGB32", { 0, 0xff, 0, 0 }, { 0, 0, 0xff, 0 }, { 0, 0, 0, 0xff } },
	{ "XRGB32", { 0, 0xff, 0, 0 }, { 0, 0, 0xff, 0 }, { 0, 0, 0, 0xff } },
	{ "RGBA32", { 0xff, 0, 0, 0 }, { 0, 0xff, 0, 0 }, { 0, 0, 0xff, 0 } },
	{ "RGBX32", { 0xff, 0, 0, 0 }, { 0, 0xff, 0, 0 }, { 0, 0, 0xff, 0 } },
	{ "BGRA32", { 0, 0, 0, 0xff }, { 0, 0, 0xff, 0 }, { 0, 0xff, 0, 0 } },
	{ "BGRX32", { 0, 0, 0, 0xff }, { 0, 0, 0xff, 0 }, { 0, 0xff, 0, 0 } },
};

/* Bytes of a pixel whose only set bits are all of field b. */
static void field_bytes(const struct vc_fmt *f, struct vc_bits b, uint8_t out[4])
{
	uint32_t word = (uint32_t)field_mask(b);
	int n = f->group_bytes[0];

	memset(out, 0, 4);
	for (int i = 0; i < n; i++)
		out[f->big_endian ? n - 1 - i : i] = (uint8_t)(word >> (8 * i));
}

static void rgb_memory_bytes(void)
{
	for (size_t i = 0; i < ARRAY_LEN(rgb_bytes); i++) {
		const struct vc_fmt *f = vc_fmt_find(rgb_bytes[i].name);
		uint8_t r[4], g[4], b[4];

		CHECK(f != NULL, "%s missing", rgb_bytes[i].name);
		if (!f)
			continue;
		field_bytes(f, f->r, r);
		field_bytes(f, f->g, g);
		field_bytes(f, f->b, b);
		CHECK(!memcmp(r, rgb_bytes[i].red, 4), "%s: red %02x %02x %02x %02x", f->name, r[0],
		      r[1], r[2], r[3]);
		CHECK(!memcmp(g, rgb_bytes[i].green, 4), "%s: green %02x %02x %02x %02x", f->name, g[0],
		      g[1], g[2], g[3]);
		CHECK(!memcmp(b, rgb_bytes[i].blue, 4), "%s: blue %02x %02x %02x %02x", f->name, b[0],
		      b[1], b[2], b[3]);
	}
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		int found = f->layout != VC_LAYOUT_PACKED_RGB;
		for (size_t k = 0; k < ARRAY_LEN(rgb_bytes); k++)
			found |= !strcmp(rgb_bytes[k].name, f->name);
		CHECK(found, "%s: no pure-colour vector", f->name);
	}
}

/* ---- --list ---- */

static const char *family_name(int fam)
{
	static const char *const n[] = { "?", "yuv", "rgb", "bayer", "grey", "compressed" };
	return fam >= 0 && fam <= VC_FAM_COMPRESSED ? n[fam] : "?";
}

static void list_table(void)
{
	printf("%-9s %-7s %-10s mp cp sub  px bytes     dp  libyuv  description\n", "name", "fourcc",
	       "family");
	for (size_t i = 0; i < vc_fmt_count(); i++) {
		const struct vc_fmt *f = vc_fmt_at(i);
		char fcc[16], yuv[16];
		struct vc_geom g;

		vc_fourcc_str(f->fourcc, fcc);
		if (f->libyuv_fourcc)
			vc_fourcc_str(f->libyuv_fourcc, yuv);
		else
			strcpy(yuv, "-");
		vc_fmt_geometry(f, 640, 480, 0, &g);
		printf("%-9s %-7s %-10s %d  %d  %d,%d  %d  %2d/%d/%d  %2d  %-6s  %s (640x480: %zu bytes)\n",
		       f->name, fcc, family_name(f->family), f->mem_planes, f->color_planes,
		       f->log2_chroma_w, f->log2_chroma_h, f->group_px, f->group_bytes[0],
		       f->group_bytes[1], f->group_bytes[2], f->depth, yuv, f->desc, g.sizeimage);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		list_table();
		return 0;
	}
	RUN("fmt", table_fields);
	RUN("fmt", required_rows);
	RUN("fmt", libyuv_consistent);
	RUN("fmt", alpha_and_order);
	RUN("fmt", packed_yuv_order);
	RUN("fmt", rgb_memory_bytes);
	RUN("fmt", bits_per_pixel);
	RUN("fmt", geometry_vectors);
	RUN("fmt", plane_offsets);
	RUN("fmt", geometry_invariants);
	RUN("fmt", bad_input);
	RUN("fmt", geometry_fuzz);
	RUN("fmt", lookups);
	RUN("fmt", fourcc_text);
	RUN("fmt", libyuv_rgb_bytes);
	RUN("fmt", libyuv_yuv_bytes);
	CHECK_EXIT();
}
