/* JPEG: every raw format of the table encoded and decoded back (PSNR against
 * the source, exact size and subsampling), colour correctness (range and
 * BT.601/BT.709 bars), scaled decode, DHT strip/insert, lossless transforms
 * against a decode+rotate reference, and a mutation fuzz of the parser and
 * decoder (run under ASan by the unit-asan suite). Test pictures are written
 * from an RGB reference by a generic, table-driven writer. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "common/color.h"
#include "common/convert.h"
#include "common/fmt.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "tests/unit/check.h"
#include "tests/unit/yuvput.h"

/* ---- pictures */

struct pic {
	struct vc_image img;
	struct vc_geom g;
	uint8_t *mem[3];
	int sep; /* one allocation per colour plane */
};

static int pic_alloc(struct pic *p, const struct vc_fmt *f, uint32_t w, uint32_t h, uint32_t pad)
{
	uint32_t bpl = pad ? vc_fmt_min_stride(f, w) + pad : 0;

	memset(p, 0, sizeof(*p));
	if (vc_fmt_geometry(f, w, h, bpl, &p->g) < 0)
		return -1;
	for (int i = 0; i < p->g.mem_planes; i++) {
		p->mem[i] = malloc(p->g.mem_size[i] + CANARY_LEN);
		memset(p->mem[i], CANARY_BYTE, p->g.mem_size[i] + CANARY_LEN);
	}
	vc_image_from_geom(f, &p->g, p->mem, &p->img);
	return 0;
}

/* The same with every colour plane in its own exact-size allocation (plus a
 * canary), so a write past a plane's end is caught by ASan or the canary
 * instead of landing in the next plane. */
static int pic_alloc_sep(struct pic *p, const struct vc_fmt *f, uint32_t w, uint32_t h, uint32_t pad)
{
	uint32_t bpl = pad ? vc_fmt_min_stride(f, w) + pad : 0;

	memset(p, 0, sizeof(*p));
	if (vc_fmt_geometry(f, w, h, bpl, &p->g) < 0)
		return -1;
	vc_image_from_geom(f, &p->g, p->mem, &p->img); /* strides and sizes */
	for (int i = 0; i < p->g.color_planes; i++) {
		p->mem[i] = malloc(p->g.plane[i].size + CANARY_LEN);
		memset(p->mem[i], CANARY_BYTE, p->g.plane[i].size + CANARY_LEN);
		p->img.plane[i] = p->mem[i];
	}
	p->sep = 1;
	return 0;
}

static void pic_free(struct pic *p)
{
	for (int i = 0; i < 3; i++)
		free(p->mem[i]);
	memset(p, 0, sizeof(*p));
}

static int pic_canaries(const struct pic *p)
{
	for (int i = 0; p->sep && i < p->g.color_planes; i++)
		if (!canary_intact(p->mem[i], p->g.plane[i].size))
			return 0;
	for (int i = 0; !p->sep && i < p->g.mem_planes; i++)
		if (!canary_intact(p->mem[i], p->g.mem_size[i]))
			return 0;
	return 1;
}

/* A smooth test picture with some edges: gradients plus colour blocks. */
static uint8_t *ref_rgb(uint32_t w, uint32_t h)
{
	uint8_t *rgb = malloc((size_t)w * h * 3);

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *p = rgb + ((size_t)y * w + x) * 3;
			double fx = (double)x / w, fy = (double)y / h;

			p[0] = (uint8_t)(40 + 170 * fx);
			p[1] = (uint8_t)(30 + 180 * fy);
			p[2] = (uint8_t)(200 - 150 * fx * fy);
			if ((x / 24 + y / 24) % 5 == 0) { /* blocks */
				p[0] = (uint8_t)(p[0] / 2 + 100);
				p[2] = (uint8_t)(p[2] / 3);
			}
		}
	return rgb;
}

static void rgb_to_ycc(double kr, double kb, int limited, const uint8_t *p, double *Y,
		       double *U, double *V)
{
	double kg = 1 - kr - kb, r = p[0] / 255.0, g = p[1] / 255.0, b = p[2] / 255.0;
	double ey = kr * r + kg * g + kb * b, pb = (b - ey) / (2 * (1 - kb)),
	       pr = (r - ey) / (2 * (1 - kr));

	*Y = limited ? 16 + 219 * ey : 255 * ey;
	*U = 128 + (limited ? 224 : 255) * pb;
	*V = 128 + (limited ? 224 : 255) * pr;
}

static uint8_t sat(double v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
}

/* An 8-bit value at `depth` bits, rounded. */
static uint32_t quant(uint8_t v, int depth)
{
	uint32_t max = (1u << depth) - 1;

	return (v * max + 127) / 255;
}

/* The reference as a source with these channel depths really holds it: each
 * channel quantised and scaled back to 8 bits (the loss the bit depth
 * predicts, e.g. RGB332's 8 red levels). */
static uint8_t *ref_quantised(const uint8_t *rgb, uint32_t w, uint32_t h, const struct vc_fmt *f)
{
	uint8_t *q = malloc((size_t)w * h * 3);
	int d[3] = { f->r.depth, f->g.depth, f->b.depth };

	for (size_t i = 0; i < (size_t)w * h * 3; i++) {
		int dep = d[i % 3];
		uint32_t max = (1u << dep) - 1;

		q[i] = dep >= 8 ? rgb[i] : (uint8_t)((quant(rgb[i], dep) * 255 + max / 2) / max);
	}
	return q;
}

/* Writes the reference into p (any 8-bit YUV/grey/RGB layout of the table);
 * returns 0, or -1 for a layout this writer does not know. */
static int pic_write(struct pic *p, const uint8_t *rgb, double kr, double kb, int limited)
{
	const struct vc_fmt *f = p->img.fmt;
	uint32_t w = p->img.width, h = p->img.height;
	struct vc_image *im = &p->img;

	if (f->layout == VC_LAYOUT_PACKED_RGB) {
		int gb = f->group_bytes[0];

		if (f->group_px != 1)
			return -1;
		for (uint32_t y = 0; y < h; y++)
			for (uint32_t x = 0; x < w; x++) {
				const uint8_t *s = rgb + ((size_t)y * w + x) * 3;
				uint32_t word = 0;
				uint8_t *d = im->plane[0] + (size_t)y * im->stride[0] + (size_t)x * gb;

				word |= quant(s[0], f->r.depth) << f->r.shift;
				word |= quant(s[1], f->g.depth) << f->g.shift;
				word |= quant(s[2], f->b.depth) << f->b.shift;
				if (f->a.depth)
					word |= (uint32_t)((1u << f->a.depth) - 1) << f->a.shift;
				for (int i = 0; i < gb; i++)
					d[f->big_endian ? gb - 1 - i : i] = (uint8_t)(word >> (8 * i));
			}
		return 0;
	}
	if (f->depth != 8)
		return -1;
	if (f->layout != VC_LAYOUT_GREY && f->layout != VC_LAYOUT_PLANAR_YUV &&
	    f->layout != VC_LAYOUT_SEMIPLANAR && f->layout != VC_LAYOUT_PACKED_YUV)
		return -1;
	if (f->layout == VC_LAYOUT_PACKED_YUV && (f->group_px != 2 || f->a_off != VC_NONE))
		return -1;

	size_t n = (size_t)w * h;
	double *Y = malloc(n * sizeof(double)), *U = malloc(n * sizeof(double)),
	       *V = malloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		rgb_to_ycc(kr, kb, f->layout == VC_LAYOUT_GREY ? 0 : limited, rgb + 3 * i, &Y[i],
			   &U[i], &V[i]);
	int hs = f->log2_chroma_w, vs = f->log2_chroma_h;
	uint32_t cw = (w + (1u << hs) - 1) >> hs, ch = (h + (1u << vs) - 1) >> vs;

	/* chroma sample (cx, cy): average of the pixels it covers */
	for (uint32_t cy = 0; f->layout != VC_LAYOUT_GREY && cy < ch; cy++)
		for (uint32_t cx = 0; cx < cw; cx++) {
			double su = 0, sv = 0;
			int k = 0;

			for (uint32_t y = cy << vs; y < ((cy + 1) << vs) && y < h; y++)
				for (uint32_t x = cx << hs; x < ((cx + 1) << hs) && x < w; x++) {
					su += U[(size_t)y * w + x];
					sv += V[(size_t)y * w + x];
					k++;
				}
			uint8_t u = sat(su / k), v = sat(sv / k);

			if (f->layout == VC_LAYOUT_PLANAR_YUV) {
				im->plane[f->swap_uv ? 2 : 1][(size_t)cy * im->stride[1] + cx] = u;
				im->plane[f->swap_uv ? 1 : 2][(size_t)cy * im->stride[2] + cx] = v;
			} else if (f->layout == VC_LAYOUT_SEMIPLANAR) {
				uint8_t *d = im->plane[1] + (size_t)cy * im->stride[1] + 2 * cx;

				d[f->swap_uv] = u;
				d[!f->swap_uv] = v;
			} else {
				uint8_t *d = im->plane[0] + (size_t)cy * im->stride[0] + 4 * cx;

				d[f->u_off[0]] = u;
				d[f->v_off[0]] = v;
			}
		}
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t yy = sat(Y[(size_t)y * w + x]);

			if (f->layout == VC_LAYOUT_PACKED_YUV)
				im->plane[0][(size_t)y * im->stride[0] + 4 * (x / 2) + f->y_off[x & 1]] = yy;
			else
				im->plane[0][(size_t)y * im->stride[0] + x] = yy;
		}
	free(Y);
	free(U);
	free(V);
	return 0;
}

static double psnr(const uint8_t *a, size_t astride, const uint8_t *b, size_t bstride,
		   uint32_t wbytes, uint32_t h)
{
	double se = 0;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < wbytes; x++) {
			double d = (double)a[(size_t)y * astride + x] - b[(size_t)y * bstride + x];

			se += d * d;
		}
	se /= (double)wbytes * h;
	return se == 0 ? 99 : 10 * log10(255.0 * 255.0 / se);
}

static const struct vc_fmt *F(const char *name)
{
	const struct vc_fmt *f = vc_fmt_find(name);

	if (!f)
		printf("  no format %s in the table\n", name);
	return f;
}

/* Encode a picture; returns a malloc'd JPEG or NULL. */
static uint8_t *enc(struct vc_jpeg *j, const struct vc_image *img, int q, int ss, size_t *len,
		    int *err)
{
	size_t cap = vc_jpeg_bound(img->width, img->height);
	uint8_t *out = malloc(cap + CANARY_LEN);

	memset(out, CANARY_BYTE, cap + CANARY_LEN);
	*err = vc_jpeg_encode_ss(j, img, q, ss, out, cap, len);
	if (*err || !canary_intact(out, cap)) {
		if (!*err)
			*err = -999;
		free(out);
		return NULL;
	}
	return out;
}

/* Decodes to RGB24 of the scaled size; returns a picture or fails the check. */
static int dec_rgb(struct vc_jpeg *j, const uint8_t *jp, size_t len, int denom, struct pic *o)
{
	struct vc_jpeg_info info;

	if (vc_jpeg_parse(jp, len, &info) < 0)
		return -1;
	if (pic_alloc(o, F("RGB24"), vc_jpeg_scaled(info.width, denom),
		      vc_jpeg_scaled(info.height, denom), 0) < 0)
		return -1;
	int r = vc_jpeg_decode(j, jp, len, denom, &o->img);
	if (r < 0 || !pic_canaries(o)) {
		pic_free(o);
		return -1;
	}
	return 0;
}

/* Bayer mosaic of the reference, any CFA order and packing of the table:
 * 8-bit, 16-bit containers (LE/BE), MIPI 10/12-bit packed. */
static int bayer_write(struct pic *p, const uint8_t *rgb)
{
	/* channel at (x & 1, y & 1): [cfa][y & 1][x & 1], 0 R 1 G 2 B */
	static const uint8_t order[5][2][2] = {
		{ { 0 } }, { { 2, 1 }, { 1, 0 } }, { { 1, 2 }, { 0, 1 } },
		{ { 1, 0 }, { 2, 1 } }, { { 0, 1 }, { 1, 2 } },
	};
	const struct vc_fmt *f = p->img.fmt;
	uint32_t w = p->img.width, h = p->img.height, max = (1u << f->depth) - 1;

	if (f->layout != VC_LAYOUT_BAYER || f->cfa < 1 || f->cfa > 4)
		return -1;
	for (uint32_t y = 0; y < h; y++) {
		uint8_t *row = p->img.plane[0] + (size_t)y * p->img.stride[0];

		for (uint32_t x = 0; x < w; x++) {
			uint32_t v8 = rgb[((size_t)y * w + x) * 3 + order[f->cfa][y & 1][x & 1]];
			uint32_t v = (v8 * max + 127) / 255;

			if (f->packing == VC_PACK_NONE) {
				row[x] = (uint8_t)v;
			} else if (f->packing == VC_PACK_16) {
				row[2 * x + f->big_endian] = (uint8_t)v;
				row[2 * x + !f->big_endian] = (uint8_t)(v >> 8);
			} else if (f->packing == VC_PACK_MIPI10) {
				uint8_t *g = row + x / 4 * 5;

				g[x % 4] = (uint8_t)(v >> 2);
				g[4] = (uint8_t)((g[4] & ~(3u << (2 * (x % 4)))) | (v & 3) << (2 * (x % 4)));
			} else if (f->packing == VC_PACK_MIPI12) {
				uint8_t *g = row + x / 2 * 3;

				g[x % 2] = (uint8_t)(v >> 4);
				g[2] = (uint8_t)((g[2] & ~(15u << (4 * (x % 2)))) | (v & 15) << (4 * (x % 2)));
			} else {
				return -1;
			}
		}
	}
	return 0;
}

/* ---- tests */

/* Every raw format the writer can produce, three sizes (odd, padded strides):
 * encode at q90, parse, decode to RGB24 (or GREY), PSNR >= 30 dB. */
static void encode_all_formats(void)
{
	static const struct { uint32_t w, h, pad; } sizes[] = {
		{ 64, 48, 0 }, { 33, 17, 0 }, { 161, 97, 40 }, { 640, 480, 64 },
	};
	struct vc_jpeg *j = vc_jpeg_new();
	struct vc_conv *cv = vc_conv_new();
	int tested = 0;

	for (size_t fi = 0; fi < vc_fmt_count(); fi++) {
		const struct vc_fmt *f = vc_fmt_at(fi);
		char fcc[16];

		if (f->layout == VC_LAYOUT_COMPRESSED)
			continue;
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			struct pic p, o;
			uint32_t w = sizes[si].w, h = sizes[si].h;
			uint8_t *rgb = ref_rgb(w, h);
			size_t len = 0;
			int err;

			if (pic_alloc(&p, f, w, h, sizes[si].pad) < 0) {
				CHECK(0, "%s: no geometry for %ux%u", vc_fourcc_str(f->fourcc, fcc), w, h);
				free(rgb);
				break;
			}
			if (pic_write(&p, rgb, 0.299, 0.114, 1) < 0 && bayer_write(&p, rgb) < 0) {
				/* Layouts the simple writer does not know (Bayer, 10+ bits,
				 * Y41P, YUV410...): the converter writes the source. */
				struct pic src;

				pic_alloc(&src, F("RGB24"), w, h, 0);
				pic_write(&src, rgb, 0.299, 0.114, 1);
				int r = vc_conv_supported(src.img.fmt, f) ? vc_conv_run(cv, &src.img, &p.img)
									  : -EINVAL;
				pic_free(&src);
				if (r < 0) {
					if (si == 0)
						printf("jpeg.encode_%s: SKIP no writer for this source layout\n",
						       vc_fourcc_str(f->fourcc, fcc));
					pic_free(&p);
					free(rgb);
					break;
				}
				p.img.color = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT601, 0 });
				if (f->family == VC_FAM_GREY)
					p.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
			}
			uint8_t *jp = enc(j, &p.img, 90, VC_JPEG_SS_AUTO, &len, &err);

			CHECK(jp, "%s %ux%u: encode failed %d", vc_fourcc_str(f->fourcc, fcc), w, h, err);
			if (jp) {
				struct vc_jpeg_info info;

				memset(&info, 0xff, sizeof(info));
				CHECK(vc_jpeg_parse(jp, len, &info) == 0 && info.width == w &&
					      info.height == h && info.size == len &&
					      info.subsamp == vc_jpeg_auto_subsamp(f) && info.has_dht,
				      "%s %ux%u: parse %ux%u ss %d", vc_fourcc_str(f->fourcc, fcc), w, h,
				      info.width, info.height, info.subsamp);
				if (f->layout == VC_LAYOUT_GREY) {
					struct pic g, ref;

					pic_alloc(&g, F("GREY"), w, h, 0);
					pic_alloc(&ref, F("GREY"), w, h, 0);
					pic_write(&ref, rgb, 0.299, 0.114, 0);
					CHECK(vc_jpeg_decode(j, jp, len, 1, &g.img) == 0, "decode grey");
					double ps = psnr(g.img.plane[0], g.img.stride[0], ref.img.plane[0],
							 ref.img.stride[0], w, h);
					CHECK(ps >= 30, "%s %ux%u: PSNR %.1f dB", vc_fourcc_str(f->fourcc, fcc),
					      w, h, ps);
					pic_free(&g);
					pic_free(&ref);
				} else if (dec_rgb(j, jp, len, 1, &o) == 0) {
					uint8_t *want = f->layout == VC_LAYOUT_PACKED_RGB ? ref_quantised(rgb, w, h, f)
											  : NULL;
					double ps = psnr(o.img.plane[0], o.img.stride[0], want ? want : rgb,
							 (size_t)w * 3, w * 3, h);

					free(want);
					/* Bayer: the converter's bilinear demosaic blurs edges */
					double min = f->layout == VC_LAYOUT_BAYER ? 25 : 30;
					CHECK(ps >= min, "%s %ux%u: PSNR %.1f dB", vc_fourcc_str(f->fourcc, fcc),
					      w, h, ps);
					if (si == 3)
						printf("  %s 640x480: PSNR %.1f dB\n", vc_fourcc_str(f->fourcc, fcc), ps);
					pic_free(&o);
				} else {
					CHECK(0, "%s: decode failed", vc_fourcc_str(f->fourcc, fcc));
				}
				tested++;
			}
			free(jp);
			pic_free(&p);
			free(rgb);
		}
	}
	CHECK(tested >= 4 * 20, "only %d format/size pairs encoded", tested);
	printf("  %d format/size pairs encoded\n", tested);
	vc_conv_free(cv);
	vc_jpeg_free(j);
}

/* The rule VC_JPEG_SS_AUTO follows, as vectors (encode_all_formats checks
 * that every row's JPEG has what vc_jpeg_auto_subsamp says, through the
 * direct paths and the converter alike). */
static void auto_subsamp(void)
{
	static const struct {
		int line;
		const char *fmt;
		int ss;
	} v[] = {
		{ __LINE__, "YUYV", VC_JPEG_SS_422 },   { __LINE__, "UYVY", VC_JPEG_SS_422 },
		{ __LINE__, "NV16", VC_JPEG_SS_422 },   { __LINE__, "422P", VC_JPEG_SS_422 },
		{ __LINE__, "NV12", VC_JPEG_SS_420 },   { __LINE__, "YU12", VC_JPEG_SS_420 },
		{ __LINE__, "NM21", VC_JPEG_SS_420 },   { __LINE__, "NV24", VC_JPEG_SS_444 },
		{ __LINE__, "YUV444M", VC_JPEG_SS_444 }, { __LINE__, "AYUV32", VC_JPEG_SS_444 },
		{ __LINE__, "Y41P", VC_JPEG_SS_411 },   { __LINE__, "411P", VC_JPEG_SS_411 },
		{ __LINE__, "YUV410", VC_JPEG_SS_420 }, { __LINE__, "GREY", VC_JPEG_SS_GRAY },
		{ __LINE__, "Y16", VC_JPEG_SS_GRAY },   { __LINE__, "RGB24", VC_JPEG_SS_420 },
		{ __LINE__, "XRGB32", VC_JPEG_SS_420 }, { __LINE__, "RGB565", VC_JPEG_SS_420 },
		{ __LINE__, "SBGGR8", VC_JPEG_SS_420 }, { __LINE__, "SRGGB10P", VC_JPEG_SS_420 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const struct vc_fmt *f = vc_fmt_find(v[i].fmt);

		CHECK_AT(v[i].line, f && vc_jpeg_auto_subsamp(f) == v[i].ss, "%s: %d", v[i].fmt,
			 f ? vc_jpeg_auto_subsamp(f) : -1);
	}
}

/* Bad arguments and a too-small output buffer are errors, not overruns. */
static void encode_errors(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	struct pic p;
	uint8_t *rgb = ref_rgb(64, 48), small[600 + CANARY_LEN];
	size_t len;

	pic_alloc(&p, F("YUYV"), 64, 48, 0);
	pic_write(&p, rgb, 0.299, 0.114, 1);
	memset(small, CANARY_BYTE, sizeof(small));
	CHECK(vc_jpeg_encode(j, &p.img, 90, small, 600, &len) == -ENOSPC, "small buffer");
	CHECK(canary_intact(small, 600), "overran a small buffer");
	CHECK(vc_jpeg_encode(j, &p.img, 0, small, 600, &len) == -EINVAL, "quality 0");
	CHECK(vc_jpeg_encode(j, &p.img, 101, small, 600, &len) == -EINVAL, "quality 101");
	struct vc_image bad = p.img;
	bad.plane_size[0] = 100;
	CHECK(vc_jpeg_encode(j, &bad, 90, small, 600, &len) == -EINVAL, "short plane");
	bad = p.img;
	bad.stride[0] = 10;
	CHECK(vc_jpeg_encode(j, &bad, 90, small, 600, &len) == -EINVAL, "short stride");
	/* still usable after errors */
	size_t cap = vc_jpeg_bound(64, 48);
	uint8_t *out = malloc(cap);
	CHECK(vc_jpeg_encode(j, &p.img, 90, out, cap, &len) == 0, "encode after errors");
	CHECK(vc_jpeg_bound(0, 10) == 0 && vc_jpeg_bound(20000, 10) == 0, "bound of bad sizes");
	free(out);
	pic_free(&p);
	free(rgb);
	vc_jpeg_free(j);
}

/* Requested subsampling: 4:2:2 sources to 4:2:0 and grey. */
static void encode_subsampling(void)
{
	static const struct { const char *fmt; int ss, expect; } v[] = {
		{ "YUYV", VC_JPEG_SS_420, VC_JPEG_SS_420 },
		{ "UYVY", VC_JPEG_SS_420, VC_JPEG_SS_420 },
		{ "422P", VC_JPEG_SS_420, VC_JPEG_SS_420 },
		{ "NV16", VC_JPEG_SS_420, VC_JPEG_SS_420 },
		{ "NV12", VC_JPEG_SS_GRAY, VC_JPEG_SS_GRAY },
		{ "RGB24", VC_JPEG_SS_444, VC_JPEG_SS_444 },
		{ "RGB24", VC_JPEG_SS_422, VC_JPEG_SS_422 },
		{ "YUYV", VC_JPEG_SS_422, VC_JPEG_SS_422 },
	};
	struct vc_jpeg *j = vc_jpeg_new();

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct pic p, o;
		uint8_t *rgb = ref_rgb(99, 41);
		size_t len;
		int err;
		struct vc_jpeg_info info;

		pic_alloc(&p, F(v[i].fmt), 99, 41, 0);
		pic_write(&p, rgb, 0.299, 0.114, 1);
		uint8_t *jp = enc(j, &p.img, 90, v[i].ss, &len, &err);
		CHECK_AT(v[i].ss, jp, "%s ss %d: %d", v[i].fmt, v[i].ss, err);
		if (jp) {
			CHECK(vc_jpeg_parse(jp, len, &info) == 0 && info.subsamp == v[i].expect,
			      "%s: subsamp %d", v[i].fmt, info.subsamp);
			if (v[i].expect != VC_JPEG_SS_GRAY && dec_rgb(j, jp, len, 1, &o) == 0) {
				double ps = psnr(o.img.plane[0], o.img.stride[0], rgb, 99 * 3, 99 * 3, 41);
				CHECK(ps >= 30, "%s ss %d: PSNR %.1f", v[i].fmt, v[i].ss, ps);
				pic_free(&o);
			}
		}
		free(jp);
		pic_free(&p);
		free(rgb);
	}
	vc_jpeg_free(j);
}

/* A limited-range grey ramp 16..235 becomes full range 0..255 in the JPEG;
 * decoding to limited-range I420 gives 16..235 back. */
static void color_range(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	struct pic p, o, back;
	uint32_t w = 256, h = 16;
	size_t len;
	int err;

	pic_alloc(&p, F("YU12"), w, h, 0);
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			p.img.plane[0][y * p.img.stride[0] + x] = (uint8_t)(16 + (x * 219 + 127) / 255);
	for (int c = 1; c < 3; c++)
		memset(p.img.plane[c], 128, p.img.plane_size[c]);
	p.img.color.quantization = V4L2_QUANTIZATION_LIM_RANGE;
	uint8_t *jp = enc(j, &p.img, 95, VC_JPEG_SS_AUTO, &len, &err);
	CHECK(jp, "encode %d", err);
	if (jp && dec_rgb(j, jp, len, 1, &o) == 0) {
		int maxerr = 0;

		for (uint32_t x = 0; x < w; x++) {
			const uint8_t *px = o.img.plane[0] + 8 * o.img.stride[0] + 3 * x;

			for (int c = 0; c < 3; c++)
				if (abs(px[c] - (int)x) > maxerr)
					maxerr = abs(px[c] - (int)x);
		}
		CHECK(o.img.plane[0][8 * o.img.stride[0]] <= 2, "black %u", o.img.plane[0][8 * o.img.stride[0]]);
		CHECK(o.img.plane[0][8 * o.img.stride[0] + 3 * 255] >= 253, "white");
		CHECK(maxerr <= 3, "ramp off by %d", maxerr);
		pic_free(&o);
	}
	/* And back: full-range JPEG into limited-range (default) I420. */
	pic_alloc_sep(&back, F("YU12"), w, h, 0);
	CHECK(jp && vc_jpeg_decode(j, jp, len, 1, &back.img) == 0, "decode to I420");
	CHECK(psnr(back.img.plane[0], back.img.stride[0], p.img.plane[0], p.img.stride[0], w, h) >= 40,
	      "limited range round trip");
	CHECK(back.img.plane[0][0] >= 15 && back.img.plane[0][0] <= 17 && back.img.plane[0][255] >= 234 &&
		      back.img.plane[0][255] <= 236,
	      "range ends %u %u", back.img.plane[0][0], back.img.plane[0][255]);
	/* Full-range I420 goes in untouched. */
	back.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
	CHECK(jp && vc_jpeg_decode(j, jp, len, 1, &back.img) == 0 && back.img.plane[0][0] <= 2 &&
		      back.img.plane[0][255] >= 253,
	      "full range out %u %u", back.img.plane[0][0], back.img.plane[0][255]);
	pic_free(&back);
	free(jp);
	pic_free(&p);
	vc_jpeg_free(j);
}


/* Limited-range RGB (V4L2 LIM_RANGE: 16 black, 235 white; HDMI capture of
 * CEA-861 timings) is expanded on the way to JFIF: 75% bars in limited RGB
 * (180/16) decode to the full-range BT.601 bar values, 16 -> Y 0 and 235 ->
 * Y 255, for several RGB layouts; full-range RGB JPEGs are unchanged. */
static void rgb_limited(void)
{
	static const uint8_t bars[8][3] = { { 1, 1, 1 }, { 1, 1, 0 }, { 0, 1, 1 }, { 0, 1, 0 },
					    { 1, 0, 1 }, { 1, 0, 0 }, { 0, 0, 1 }, { 0, 0, 0 } };
	/* JFIF (full-range BT.601) Y Cb Cr of 75% bars, then black and white */
	static const uint8_t want[10][3] = { { 191, 128, 128 }, { 169, 32, 144 }, { 134, 160, 32 },
		{ 112, 65, 48 }, { 79, 191, 208 }, { 57, 96, 224 }, { 22, 224, 112 }, { 0, 128, 128 },
		{ 0, 128, 128 }, { 255, 128, 128 } };
	const char *layouts[] = { "RGB3", "BGR3", "XR24", "AB24" };
	struct vc_jpeg *j = vc_jpeg_new();
	struct vc_conv *cv = vc_conv_new();
	const uint32_t BW = 16, W = 10 * BW, H = 16;
	struct pic s;

	if (!j || !cv || pic_alloc(&s, F("RGB3"), W, H, 0))
		return;
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++)
			for (int k = 0; k < 3; k++) {
				uint32_t bar = x / BW;
				int v = bar == 8 ? 16 : bar == 9 ? 235 : bars[bar][k] ? 180 : 16;
				s.img.plane[0][y * s.img.stride[0] + 3 * x + k] = (uint8_t)v;
			}
	for (size_t l = 0; l < ARRAY_LEN(layouts); l++) {
		struct pic m, o;
		size_t len, len2;
		int err;
		if (pic_alloc(&m, F(layouts[l]), W, H, 12))
			continue;
		CHECK(vc_conv_run(cv, &s.img, &m.img) == 0, "RGB24 -> %s", layouts[l]);
		/* full range: default colour and explicit full give the same JPEG */
		uint8_t *a = enc(j, &m.img, 100, VC_JPEG_SS_444, &len, &err);
		m.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
		uint8_t *b = enc(j, &m.img, 100, VC_JPEG_SS_444, &len2, &err);
		CHECK(a && b && len == len2 && !memcmp(a, b, len), "%s full range JPEG changed", layouts[l]);
		free(a), free(b);
		m.img.color.quantization = V4L2_QUANTIZATION_LIM_RANGE;
		uint8_t *jp = enc(j, &m.img, 100, VC_JPEG_SS_444, &len, &err);
		CHECK(jp, "%s limited encode %d", layouts[l], err);
		if (jp && pic_alloc(&o, F("YM24"), W, H, 0) == 0) {
			o.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
			CHECK(vc_jpeg_decode(j, jp, len, 1, &o.img) == 0, "%s decode", layouts[l]);
			for (uint32_t bar = 0; bar < 10; bar++) {
				size_t x = bar * BW + 4, y = 4;
				int Y = o.img.plane[0][y * o.img.stride[0] + x];
				int U = o.img.plane[1][y * o.img.stride[1] + x];
				int V = o.img.plane[2][y * o.img.stride[2] + x];
				CHECK(abs(Y - want[bar][0]) <= 1 && abs(U - want[bar][1]) <= 1 &&
					      abs(V - want[bar][2]) <= 1,
				      "%s limited bar %u: %d %d %d want %d %d %d", layouts[l], bar, Y, U, V,
				      want[bar][0], want[bar][1], want[bar][2]);
			}
			CHECK(pic_canaries(&o), "%s canary", layouts[l]);
			pic_free(&o);
		}
		free(jp);
		pic_free(&m);
	}
	pic_free(&s);
	vc_conv_free(cv);
	vc_jpeg_free(j);
}

/* The encoder's limited -> full range mapping, in its documented fixed
 * point (Q7 of 255/219 and 255/224, rounded), clamped. */
static uint8_t full_y(uint8_t v)
{
	int o = v * 149 - 16 * 149 + 64;

	o = o < 0 ? 0 : o >> 7;
	return (uint8_t)(o > 255 ? 255 : o);
}

static uint8_t full_c(uint8_t v)
{
	int o = v * 146 - 128 * 146 + 64 + (128 << 7);

	o = o < 0 ? 0 : o >> 7;
	return (uint8_t)(o > 255 ? 255 : o);
}

/* Limited-range YUV is converted while the source is read into the strip
 * (one pass: packed 4:2:2 deinterleaved, semi-planar chroma split, planar
 * rows copied). Every 8-bit YUV/grey layout, filled with random bytes (so
 * the clamps below 16 and above 235/240 are hit), must give the very JPEG
 * of a full-range planar picture holding the mapped samples, which goes
 * in untouched; at odd sizes, 1 pixel wide and with padded strides. Also
 * packed 4:2:2 limited -> 4:2:0 and full range against planar 4:2:2 (the
 * libyuv deinterleave paths): byte-identical. */
static void range_onepass_exact(void)
{
	static const char *const fmts[] = { "YUYV", "UYVY", "YVYU", "VYUY", "NV16", "NV61", "422P",
					    "NM16", "NV12", "NV21", "YU12", "YV12", "NM21", "GREY" };
	static const struct { uint32_t w, h, pad; } sizes[] = {
		{ 64, 48, 0 }, { 33, 17, 0 }, { 161, 97, 40 }, { 640, 480, 64 }, { 1, 9, 0 },
	};
	struct vc_jpeg *j = vc_jpeg_new();
	uint32_t seed = 7;
	int compared = 0;

	for (size_t fi = 0; fi < sizeof(fmts) / sizeof(fmts[0]); fi++)
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			const struct vc_fmt *f = F(fmts[fi]);
			const char *rn = f->family == VC_FAM_GREY ? "GREY"
					 : f->log2_chroma_h ? "YU12" : "422P";
			uint32_t w = sizes[si].w, h = sizes[si].h;
			struct pic src, ref, lim;

			if (pic_alloc(&src, f, w, h, sizes[si].pad) < 0 ||
			    pic_alloc_sep(&ref, F(rn), w, h, sizes[si].pad) < 0 ||
			    pic_alloc_sep(&lim, F(rn), w, h, sizes[si].pad) < 0) {
				CHECK(0, "%s %ux%u: no geometry", fmts[fi], w, h);
				continue;
			}
			/* random picture in planar layout (a chroma sample keeps the last
			 * value written to it), then copied into the source's layout and,
			 * mapped to full range, into the reference */
			for (uint32_t y = 0; y < h; y++)
				for (uint32_t x = 0; x < w; x++) {
					uint8_t v[3];

					for (int k = 0; k < 3; k++)
						v[k] = (uint8_t)(check_xorshift(&seed) >> 24);
					yuv_put(&lim.img, x, y, v[0], v[1], v[2]);
				}
			for (uint32_t y = 0; y < h; y++)
				for (uint32_t x = 0; x < w; x++) {
					const struct vc_image *l = &lim.img;
					uint32_t cx = x >> l->fmt->log2_chroma_w, cy = y >> l->fmt->log2_chroma_h;
					uint8_t Y = l->plane[0][(size_t)y * l->stride[0] + x], cb = 128, cr = 128;

					if (l->fmt->color_planes == 3) {
						cb = l->plane[1][(size_t)cy * l->stride[1] + cx];
						cr = l->plane[2][(size_t)cy * l->stride[2] + cx];
					}
					yuv_put(&src.img, x, y, Y, cb, cr);
					yuv_put(&ref.img, x, y, full_y(Y), full_c(cb), full_c(cr));
				}
			src.img.color.quantization = V4L2_QUANTIZATION_LIM_RANGE;
			lim.img.color.quantization = V4L2_QUANTIZATION_LIM_RANGE;
			ref.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;

			size_t la = 0, lb = 0;
			int ea, eb;
			uint8_t *a = enc(j, &src.img, 90, VC_JPEG_SS_AUTO, &la, &ea);
			uint8_t *b = enc(j, &ref.img, 90, VC_JPEG_SS_AUTO, &lb, &eb);

			CHECK(a && b && la == lb && !memcmp(a, b, la),
			      "%s %ux%u limited vs mapped full %s: %d/%d, %zu vs %zu bytes", fmts[fi], w,
			      h, rn, ea, eb, la, lb);
			compared += a && b;
			free(a);
			free(b);
			if (f->layout == VC_LAYOUT_PACKED_YUV) { /* the libyuv paths */
				uint8_t *c = enc(j, &src.img, 90, VC_JPEG_SS_420, &la, &ea);
				uint8_t *d = enc(j, &lim.img, 90, VC_JPEG_SS_420, &lb, &eb);

				CHECK(c && d && la == lb && !memcmp(c, d, la),
				      "%s %ux%u limited ->4:2:0: %d/%d", fmts[fi], w, h, ea, eb);
				free(c);
				free(d);
				src.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
				lim.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
				c = enc(j, &src.img, 90, VC_JPEG_SS_AUTO, &la, &ea);
				d = enc(j, &lim.img, 90, VC_JPEG_SS_AUTO, &lb, &eb);
				CHECK(c && d && la == lb && !memcmp(c, d, la), "%s %ux%u full: %d/%d",
				      fmts[fi], w, h, ea, eb);
				free(c);
				free(d);
			}
			CHECK(pic_canaries(&src) && pic_canaries(&ref), "%s: canaries", fmts[fi]);
			pic_free(&src);
			pic_free(&ref);
			pic_free(&lim);
		}
	CHECK(compared == 14 * 5, "only %d layouts/sizes compared", compared);
	vc_jpeg_free(j);
}

/* 75% colour bars in BT.601 and BT.709 limited-range YUYV decode to the
 * right RGB (191 = 75% of 255) within a small tolerance. */
static void color_bars(void)
{
	static const uint8_t bars[8][3] = {
		{ 191, 191, 191 }, { 191, 191, 0 }, { 0, 191, 191 }, { 0, 191, 0 },
		{ 191, 0, 191 },   { 191, 0, 0 },   { 0, 0, 191 },   { 0, 0, 0 },
	};
	static const struct { int enc; double kr, kb; } encs[] = {
		{ V4L2_YCBCR_ENC_601, 0.299, 0.114 },
		{ V4L2_YCBCR_ENC_709, 0.2126, 0.0722 },
	};
	struct vc_jpeg *j = vc_jpeg_new();
	uint32_t w = 256, h = 32;
	uint8_t *rgb = malloc((size_t)w * h * 3);

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			memcpy(rgb + ((size_t)y * w + x) * 3, bars[x / 32], 3);
	for (size_t e = 0; e < 2; e++) {
		const char *fmts[] = { "YUYV", "NV12", "YU12" };

		for (size_t fi = 0; fi < 3; fi++) {
			struct pic p, o;
			size_t len;
			int err, maxerr = 0;

			pic_alloc(&p, F(fmts[fi]), w, h, 0);
			pic_write(&p, rgb, encs[e].kr, encs[e].kb, 1);
			p.img.color.ycbcr_enc = (uint8_t)encs[e].enc;
			p.img.color.quantization = V4L2_QUANTIZATION_LIM_RANGE;
			uint8_t *jp = enc(j, &p.img, 95, VC_JPEG_SS_AUTO, &len, &err);
			if (jp && dec_rgb(j, jp, len, 1, &o) == 0) {
				for (int b = 0; b < 8; b++)
					for (int c = 0; c < 3; c++) {
						int v = o.img.plane[0][16 * o.img.stride[0] + 3 * (32 * b + 16) + c];

						if (abs(v - bars[b][c]) > maxerr)
							maxerr = abs(v - bars[b][c]);
					}
				pic_free(&o);
			} else {
				maxerr = 999;
			}
			CHECK(maxerr <= 5, "%s enc %d: bars off by %d", fmts[fi], encs[e].enc, maxerr);
			free(jp);
			pic_free(&p);
		}
	}
	free(rgb);
	vc_jpeg_free(j);
}

/* Decoding into each direct destination gives the same picture. */
static void decode_to(struct vc_jpeg *j, const char *src_fmt, const char *const *dsts, size_t ndst,
		      uint32_t w, uint32_t h);

static void decode_destinations(void)
{
	static const char *dsts[] = { "RGB24", "BGR24", "XRGB32", "ABGR32", "RGBA32", "BGRX32",
				      "YU12", "YV12", "YU12", "GREY", "422P", "YUV444M", "YUV410",
				      /* through the converter: */ "NV12", "YUYV", "UYVY", "NV21" };
	struct vc_jpeg *j = vc_jpeg_new();

	/* 4:2:0, 4:2:2 and 4:4:4 JPEGs into every destination (the planar ones
	 * resample chroma when the sampling differs) */
	static const char *srcs[] = { "YU12", "YUYV", "NV24" };
	for (size_t si = 0; si < 3; si++)
		for (uint32_t w = 75, h = 51; w <= 76; w++, h++)
			decode_to(j, srcs[si], dsts, sizeof(dsts) / sizeof(dsts[0]), w, h);
	vc_jpeg_free(j);
}

static void decode_to(struct vc_jpeg *j, const char *src_fmt, const char *const *dsts, size_t ndst,
		      uint32_t w, uint32_t h)
{
	uint8_t *rgb = ref_rgb(w, h);
	struct pic p, ref;
	size_t len;
	int err;

	pic_alloc(&p, F(src_fmt), w, h, 0);
	pic_write(&p, rgb, 0.299, 0.114, 1);
	uint8_t *jp = enc(j, &p.img, 92, VC_JPEG_SS_AUTO, &len, &err);
	CHECK(jp, "encode");
	for (size_t i = 0; jp && i < ndst; i++) {
		struct pic o;
		const struct vc_fmt *f = F(dsts[i]);

		if (!f) {
			CHECK(0, "no %s", dsts[i]);
			continue;
		}
		if ((w & 1) && f->layout == VC_LAYOUT_PACKED_YUV)
			continue; /* the pixel after an odd width is undefined in a pair */
		pic_alloc_sep(&o, f, w, h, (i & 1) ? 24 : 0);
		pic_alloc(&ref, f, w, h, 0);
		pic_write(&ref, rgb, 0.299, 0.114, 1);
		int r = vc_jpeg_decode(j, jp, len, 1, &o.img);
		CHECK(r == 0, "%s -> %s %ux%u: %d", src_fmt, dsts[i], w, h, r);
		CHECK(pic_canaries(&o), "%s: wrote past its planes", dsts[i]);
		double ps = psnr(o.img.plane[0], o.img.stride[0], ref.img.plane[0], ref.img.stride[0],
				 vc_fmt_min_stride(f, w), h);
		CHECK(r == 0 && ps >= 30, "%s -> %s %ux%u: PSNR %.1f", src_fmt, dsts[i], w, h, ps);
		for (int pl = 1; pl < o.g.color_planes; pl++) { /* chroma planes too */
			double pc = psnr(o.img.plane[pl], o.img.stride[pl], ref.img.plane[pl],
					 ref.img.stride[pl], ref.g.plane[pl].stride, ref.g.plane[pl].lines);
			CHECK(pc >= 30, "%s -> %s %ux%u: plane %d PSNR %.1f", src_fmt, dsts[i], w, h, pl, pc);
		}
		pic_free(&o);
		pic_free(&ref);
	}
	/* size mismatch and compressed destinations are refused */
	struct pic o;
	pic_alloc(&o, F("RGB24"), w + 1, h, 0);
	CHECK(jp && vc_jpeg_decode(j, jp, len, 1, &o.img) == -EINVAL, "size mismatch");
	CHECK(jp && vc_jpeg_decode(j, jp, len, 3, &o.img) == -EINVAL, "scale 1/3");
	pic_free(&o);
	free(jp);
	pic_free(&p);
	free(rgb);
}

/* Decoding at 1/2, 1/4, 1/8 gives ceil(size / n) and the picture, scaled. */
static void decode_scaled(void)
{
	static const struct { uint32_t w, h; } sizes[] = { { 640, 480 }, { 333, 177 } };
	struct vc_jpeg *j = vc_jpeg_new();

	for (size_t si = 0; si < 2; si++) {
		uint32_t w = sizes[si].w, h = sizes[si].h;
		uint8_t *rgb = ref_rgb(w, h);
		struct pic p;
		size_t len;
		int err;

		pic_alloc(&p, F("YUYV"), w, h, 0);
		pic_write(&p, rgb, 0.299, 0.114, 1);
		uint8_t *jp = enc(j, &p.img, 90, VC_JPEG_SS_AUTO, &len, &err);
		for (int d = 2; jp && d <= 8; d *= 2) {
			struct pic o, o420;
			uint32_t sw = (w + d - 1) / d, sh = (h + d - 1) / d;

			CHECK(vc_jpeg_scaled(w, d) == sw, "scaled size");
			if (dec_rgb(j, jp, len, d, &o) < 0) {
				CHECK(0, "%ux%u 1/%d: decode failed", w, h, d);
				continue;
			}
			CHECK(o.img.width == sw && o.img.height == sh, "size");
			/* box-averaged reference over full blocks */
			double se = 0;
			size_t n = 0;
			for (uint32_t y = 0; y + 1 < h / d; y++)
				for (uint32_t x = 0; x + 1 < w / d; x++)
					for (int c = 0; c < 3; c++) {
						double s = 0;

						for (int yy = 0; yy < d; yy++)
							for (int xx = 0; xx < d; xx++)
								s += rgb[(((size_t)y * d + yy) * w + x * d + xx) * 3 + c];
						double e = s / (d * d) - o.img.plane[0][y * o.img.stride[0] + 3 * x + c];
						se += e * e;
						n++;
					}
			double ps = 10 * log10(255.0 * 255 / (se / n));
			/* at 1/8 the chroma is upsampled from 1/16: the colour block edges blur */
			CHECK(ps >= (d == 8 ? 24 : 28), "%ux%u 1/%d: PSNR %.1f", w, h, d, ps);
			printf("  %ux%u 1/%d: PSNR %.1f dB\n", w, h, d, ps);
			pic_free(&o);
			pic_alloc_sep(&o420, F("422P"), sw, sh, 0);
			CHECK(vc_jpeg_decode(j, jp, len, d, &o420.img) == 0 && pic_canaries(&o420),
			      "1/%d into 422P", d);
			pic_free(&o420);
		}
		free(jp);
		pic_free(&p);
		free(rgb);
	}
	vc_jpeg_free(j);
}

/* Collects the Huffman tables of a JPEG's header: tab[class * 4 + id] gets
 * the 16 counts and the symbols. Returns how many tables were found. */
static int huff_tables(const uint8_t *jp, size_t len, uint8_t tab[8][17 + 256], size_t tl[8])
{
	size_t pos = 2;
	int n = 0;

	memset(tl, 0, 8 * sizeof(tl[0]));
	while (pos + 4 <= len && jp[pos] == 0xFF && jp[pos + 1] != 0xDA) {
		size_t sl = (size_t)jp[pos + 2] << 8 | jp[pos + 3];

		if (jp[pos + 1] == 0xC4)
			for (size_t i = pos + 4; i < pos + 2 + sl;) {
				size_t sum = 0;
				int k = (jp[i] >> 4) * 4 + (jp[i] & 3);

				for (int b = 1; b <= 16; b++)
					sum += jp[i + b];
				memcpy(tab[k], jp + i + 1, 16 + sum);
				tl[k] = 16 + sum;
				i += 17 + sum;
				n++;
			}
		pos += 2 + sl;
	}
	return n;
}

/* DHT strip + insert: the stripped frame still parses (has_dht 0) and the
 * repaired one decodes to exactly the original's pixels. */
static void dht_round_trip(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	const char *fmts[] = { "YUYV", "YU12", "GREY", "RGB24" };

	for (size_t fi = 0; fi < 4; fi++) {
		uint32_t w = 120, h = 90;
		uint8_t *rgb = ref_rgb(w, h);
		struct pic p, a, b, c;
		size_t len = 0, slen = 0, alen = 0;
		int err;
		struct vc_jpeg_info info;

		pic_alloc(&p, F(fmts[fi]), w, h, 0);
		pic_write(&p, rgb, 0.299, 0.114, 1);
		uint8_t *jp = enc(j, &p.img, 85, VC_JPEG_SS_AUTO, &len, &err);
		uint8_t *st = malloc(len), *ad = malloc(len + VC_JPEG_DHT_BYTES), *ad2 = malloc(len + 1000);

		CHECK(jp && vc_jpeg_strip_dht(jp, len, st, len, &slen) == 0, "%s: strip", fmts[fi]);
		CHECK(vc_jpeg_parse(st, slen, &info) == 0 && !info.has_dht && slen < len, "stripped parse");
		CHECK(vc_jpeg_add_dht(st, slen, ad, slen + VC_JPEG_DHT_BYTES - 1, &alen) == -ENOSPC,
		      "add_dht ENOSPC");
		CHECK(vc_jpeg_add_dht(st, slen, ad, slen + VC_JPEG_DHT_BYTES, &alen) == 0 &&
			      alen == slen + VC_JPEG_DHT_BYTES,
		      "add_dht");
		CHECK(vc_jpeg_parse(ad, alen, &info) == 0 && info.has_dht, "repaired parse");
		/* the zero-copy form: three pieces give the same bytes */
		struct vc_jpeg_info si;
		CHECK(vc_jpeg_parse(st, slen, &si) == 0 && !memcmp(ad, st, si.sos_off) &&
			      !memcmp(ad + si.sos_off, vc_jpeg_std_dht(), VC_JPEG_DHT_BYTES) &&
			      !memcmp(ad + si.sos_off + VC_JPEG_DHT_BYTES, st + si.sos_off,
				      slen - si.sos_off),
		      "%s: pieces differ from add_dht", fmts[fi]);
		/* The inserted tables are exactly the ones libjpeg's encoder writes
		 * (its standard tables, optimize_coding off). */
		static uint8_t ta[8][17 + 256], tb[8][17 + 256];
		size_t la[8], lb[8];
		int na = huff_tables(jp, len, ta, la), nb = huff_tables(ad, slen + VC_JPEG_DHT_BYTES, tb, lb);
		CHECK(nb == 4 && na >= 2, "%s: %d and %d tables", fmts[fi], na, nb);
		for (int k = 0; k < 8; k++)
			CHECK(!la[k] || (la[k] == lb[k] && !memcmp(ta[k], tb[k], la[k])),
			      "%s: table class %d id %d differs from libjpeg's", fmts[fi], k / 4, k % 4);
		/* A JPEG with tables is copied unchanged. */
		CHECK(vc_jpeg_add_dht(jp, len, ad2, len + 1000, &alen) == 0 && alen == len &&
			      !memcmp(ad2, jp, len),
		      "add_dht on a complete JPEG copies it");
		if (dec_rgb(j, jp, len, 1, &a) == 0) {
			CHECK(dec_rgb(j, ad, slen + VC_JPEG_DHT_BYTES, 1, &b) == 0 &&
				      !memcmp(a.mem[0], b.mem[0], a.g.sizeimage),
			      "%s: repaired decodes identically", fmts[fi]);
			/* libjpeg-turbo itself falls back to the same tables */
			CHECK(dec_rgb(j, st, slen, 1, &c) == 0 && !memcmp(a.mem[0], c.mem[0], a.g.sizeimage),
			      "%s: stripped decodes identically", fmts[fi]);
			pic_free(&a);
			pic_free(&b);
			pic_free(&c);
		} else {
			CHECK(0, "decode original");
		}
		free(jp);
		free(st);
		free(ad);
		free(ad2);
		pic_free(&p);
		free(rgb);
	}
	vc_jpeg_free(j);
}

/* Reference for a transform: flips, then clockwise rotation, on the
 * top-left wt x ht region of the decoded original. */
static void ref_transform(const struct pic *src, uint32_t wt, uint32_t ht, int rot, int flip,
			  uint8_t *out, uint32_t *ow, uint32_t *oh)
{
	for (uint32_t y = 0; y < ht; y++)
		for (uint32_t x = 0; x < wt; x++) {
			uint32_t fx = flip & 1 ? wt - 1 - x : x, fy = flip & 2 ? ht - 1 - y : y;
			uint32_t cw = wt, chh = ht;

			for (int k = 0; k < rot / 90; k++) { /* (x, y) in cw x ch -> (ch-1-y, x) */
				uint32_t nx = chh - 1 - fy, ny = fx, t = cw;

				fx = nx;
				fy = ny;
				cw = chh;
				chh = t;
			}
			*ow = cw;
			*oh = chh;
			memcpy(out + ((size_t)fy * cw + fx) * 3,
			       src->img.plane[0] + (size_t)y * src->img.stride[0] + 3 * x, 3);
		}
}

static void transform(void)
{
	static const struct { uint32_t w, h; const char *fmt; } pics[] = {
		{ 320, 240, "YU12" }, { 100, 75, "YU12" }, { 90, 70, "YUYV" }, { 77, 45, "GREY" },
	};
	struct vc_jpeg *j = vc_jpeg_new();

	for (size_t pi = 0; pi < sizeof(pics) / sizeof(pics[0]); pi++) {
		uint32_t w = pics[pi].w, h = pics[pi].h;
		uint8_t *rgb = ref_rgb(w, h);
		struct pic p, d0;
		size_t len;
		int err;

		pic_alloc(&p, F(pics[pi].fmt), w, h, 0);
		pic_write(&p, rgb, 0.299, 0.114, 1);
		uint8_t *jp = enc(j, &p.img, 90, VC_JPEG_SS_AUTO, &len, &err);
		if (!jp || dec_rgb(j, jp, len, 1, &d0) < 0) {
			CHECK(0, "encode/decode %ux%u", w, h);
			continue;
		}
		for (int flip = 0; flip < 4; flip++)
			for (int rot = 0; rot < 360; rot += 90) {
				size_t cap = vc_jpeg_bound(w, h), olen;
				uint8_t *out = malloc(cap + CANARY_LEN), *ref = malloc((size_t)w * h * 3);
				uint32_t ow, oh, rw = 0, rh = 0;
				struct pic dt;

				memset(out, CANARY_BYTE, cap + CANARY_LEN);
				int r = vc_jpeg_transform(j, jp, len, rot, flip, out, cap, &olen, &ow, &oh);
				CHECK(r == 0 && canary_intact(out, cap), "%ux%u rot %d flip %d: %d", w, h, rot,
				      flip, r);
				if (r == 0 && dec_rgb(j, out, olen, 1, &dt) == 0) {
					int tr = (rot / 90) & 1;
					uint32_t wt = tr ? oh : ow, ht = tr ? ow : oh;

					CHECK(wt <= w && ht <= h && w - wt < 16 && h - ht < 16,
					      "trimmed to %ux%u", ow, oh);
					CHECK(dt.img.width == ow && dt.img.height == oh, "reported size");
					ref_transform(&d0, wt, ht, rot, flip, ref, &rw, &rh);
					double ps = psnr(dt.img.plane[0], dt.img.stride[0], ref, (size_t)rw * 3,
							 rw * 3, rh);
					CHECK(rw == ow && rh == oh && ps >= 38, "%ux%u rot %d flip %d: PSNR %.1f",
					      w, h, rot, flip, ps);
					pic_free(&dt);
				} else {
					CHECK(0, "%ux%u rot %d flip %d: no decodable output", w, h, rot, flip);
				}
				free(out);
				free(ref);
			}
		size_t olen;
		uint32_t ow, oh;
		uint8_t small[64];
		CHECK(vc_jpeg_transform(j, jp, len, 45, 0, small, 64, &olen, &ow, &oh) == -EINVAL, "45 deg");
		CHECK(vc_jpeg_transform(j, jp, len, 90, 0, small, 64, &olen, &ow, &oh) == -ENOSPC, "ENOSPC");
		pic_free(&d0);
		free(jp);
		pic_free(&p);
		free(rgb);
	}
	vc_jpeg_free(j);
}

/* Deterministic PRNG (xorshift) so failures reproduce. */
static uint32_t rng_state = 0x12345678;
static uint32_t rnd(void)
{
	return check_xorshift(&rng_state);
}

/* Truncated, empty, corrupt and random input: parse/decode/add_dht/transform
 * return errors or succeed, never crash or read out of bounds (every buffer
 * is exactly as long as its data, so ASan sees any overread). */
static void bad_input(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	uint32_t w = 47, h = 31; /* odd: TurboJPEG pads planes, we must not */
	uint8_t *rgb = ref_rgb(w, h);
	struct pic p, o, o2;
	size_t len;
	int err, ok_parse = 0, ok_dec = 0;
	struct vc_jpeg_info info;

	pic_alloc(&p, F("YUYV"), w, h, 0);
	pic_write(&p, rgb, 0.299, 0.114, 1);
	uint8_t *jp = enc(j, &p.img, 80, VC_JPEG_SS_AUTO, &len, &err);
	pic_alloc(&o, F("RGB24"), w, h, 0);
	pic_alloc_sep(&o2, F("YU12"), w, h, 0);
	CHECK(vc_jpeg_parse(NULL, 0, &info) == -EBADMSG, "empty");
	CHECK(vc_jpeg_decode(j, NULL, 0, 1, &o.img) == -EBADMSG, "decode empty");
	CHECK(vc_jpeg_parse(jp, 2, &info) == -EBADMSG, "SOI only");
	/* every truncation fails */
	int trunc_ok = 1;
	for (size_t n = 0; jp && n < len - 1; n++) {
		uint8_t *t = malloc(n ? n : 1);

		memcpy(t, jp, n);
		if (vc_jpeg_parse(t, n, &info) != -EBADMSG || vc_jpeg_decode(j, t, n, 1, &o.img) >= 0)
			trunc_ok = 0;
		free(t);
	}
	CHECK(trunc_ok, "a truncated JPEG was accepted");
	/* 20000 mutations: flips, byte sets, deletions, insertions, truncations */
	for (int it = 0; jp && it < 20000; it++) {
		size_t n = len;
		uint8_t *m = malloc(len + 16);

		memcpy(m, jp, len);
		int k = 1 + (int)(rnd() % 4);
		for (int e = 0; e < k; e++) {
			size_t at = rnd() % n;

			switch (rnd() % 5) {
			case 0: m[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
			case 1: m[at] = (uint8_t)rnd(); break;
			case 2: m[at] = (rnd() & 1) ? 0xFF : 0x00; break;
			case 3: /* delete */
				memmove(m + at, m + at + 1, n - at - 1);
				n--;
				break;
			default: /* insert, within the slack */
				if (n < len + 16) {
					memmove(m + at + 1, m + at, n - at);
					m[at] = (uint8_t)rnd();
					n++;
				}
			}
		}
		if (rnd() % 8 == 0)
			n = rnd() % n;
		uint8_t *exact = malloc(n ? n : 1); /* exactly n bytes: ASan catches overreads */
		memcpy(exact, m, n);
		if (vc_jpeg_parse(exact, n, &info) == 0) {
			ok_parse++;
			CHECK(info.size <= n, "size beyond buffer");
			struct vc_image *d = (info.width == w && info.height == h) ? &o.img : NULL;

			if (d && vc_jpeg_decode(j, exact, n, 1, (it & 1) ? &o2.img : d) == 0)
				ok_dec++;
			if (info.width <= 256 && info.height <= 256) {
				uint8_t out[8192];
				size_t ol;
				uint32_t ow, oh;

				vc_jpeg_transform(j, exact, n, 90, 1, out, sizeof(out), &ol, &ow, &oh);
				vc_jpeg_add_dht(exact, n, out, sizeof(out), &ol);
			}
		}
		free(exact);
		free(m);
	}
	CHECK(pic_canaries(&o) && pic_canaries(&o2), "decode overran its destination");
	/* random bytes with a JPEG start */
	for (int it = 0; it < 2000; it++) {
		size_t n = rnd() % 600;
		uint8_t *r = malloc(n + 1);

		for (size_t i = 0; i < n; i++)
			r[i] = (uint8_t)rnd();
		if (n >= 2) {
			r[0] = 0xFF;
			r[1] = 0xD8;
		}
		if (vc_jpeg_parse(r, n, &info) == 0)
			vc_jpeg_decode(j, r, n, 1, &o.img);
		free(r);
	}
	printf("  fuzz: %d of 20000 mutants parsed, %d decoded\n", ok_parse, ok_dec);
	CHECK(ok_parse > 0, "the fuzz never produced a parseable JPEG (mutations too heavy?)");
	free(jp);
	pic_free(&p);
	pic_free(&o);
	pic_free(&o2);
	free(rgb);
	vc_jpeg_free(j);
}

/* What real webcams send besides clean JPEGs: padding before EOI (libjpeg
 * warns "extraneous bytes before marker 0xd9"), junk after EOI (bytesused
 * covering the whole buffer). Both must parse and decode to the same
 * picture; a frame cut before EOI must not. */
static void webcam_quirks(void)
{
	struct vc_jpeg *j = vc_jpeg_new();
	uint32_t w = 96, h = 64;
	uint8_t *rgb = ref_rgb(w, h);
	struct pic p, a, b;
	size_t len;
	int err;
	struct vc_jpeg_info info;

	pic_alloc(&p, F("YUYV"), w, h, 0);
	pic_write(&p, rgb, 0.299, 0.114, 1);
	uint8_t *jp = enc(j, &p.img, 85, VC_JPEG_SS_AUTO, &len, &err);
	uint8_t *q = malloc(len + 64);

	/* 12 zero bytes between the entropy data and EOI */
	memcpy(q, jp, len - 2);
	memset(q + len - 2, 0, 12);
	q[len + 10] = 0xFF;
	q[len + 11] = 0xD9;
	CHECK(vc_jpeg_parse(q, len + 12, &info) == 0 && info.size == len + 12, "padded before EOI");
	CHECK(dec_rgb(j, jp, len, 1, &a) == 0, "decode clean");
	CHECK(dec_rgb(j, q, len + 12, 1, &b) == 0 && !memcmp(a.mem[0], b.mem[0], a.g.sizeimage),
	      "padded frame decodes to the same picture");
	pic_free(&b);
	/* junk after EOI */
	memcpy(q, jp, len);
	memset(q + len, 0x5A, 64);
	CHECK(vc_jpeg_parse(q, len + 64, &info) == 0 && info.size == len, "junk after EOI");
	CHECK(dec_rgb(j, q, len + 64, 1, &b) == 0 && !memcmp(a.mem[0], b.mem[0], a.g.sizeimage),
	      "frame with trailing junk decodes to the same picture");
	pic_free(&b);
	/* cut in the entropy data, padded with zeros to the old length */
	memcpy(q, jp, len / 2);
	memset(q + len / 2, 0, len - len / 2);
	CHECK(vc_jpeg_parse(q, len, &info) == -EBADMSG, "cut frame parses");
	CHECK(vc_jpeg_decode(j, q, len, 1, &a.img) == -EBADMSG, "cut frame decodes");
	pic_free(&a);
	free(q);
	free(jp);
	pic_free(&p);
	free(rgb);
	vc_jpeg_free(j);
}

/* Independent oracle: ffmpeg decodes our q90 JPEGs; its luma must match the
 * source's (in JFIF full range) at >= 38 dB. Skipped without ffmpeg. */
static void ffmpeg_oracle(void)
{
	static const char *fmts[] = { "YUYV", "NV12", "YU12", "RGB24", "UYVY", "GREY" };
	struct vc_jpeg *j = vc_jpeg_new();
	uint32_t w = 320, h = 240;
	uint8_t *rgb = ref_rgb(w, h);
	char dir[] = "/tmp/test_jpeg.XXXXXX", path[64], cmd[256];

	if (system("ffmpeg -version >/dev/null 2>&1") != 0) {
		printf("jpeg.ffmpeg_oracle: SKIP ffmpeg not installed\n");
		free(rgb);
		vc_jpeg_free(j);
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/f.jpg", dir);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct pic p, grey;
		size_t len;
		int err;

		pic_alloc(&p, F(fmts[i]), w, h, 0);
		pic_write(&p, rgb, 0.299, 0.114, 1); /* YUV: limited range, converted on the way */
		pic_alloc(&grey, F("GREY"), w, h, 0);
		pic_write(&grey, rgb, 0.299, 0.114, 0); /* the expected full-range luma */
		uint8_t *jp = enc(j, &p.img, 90, VC_JPEG_SS_AUTO, &len, &err);
		FILE *f = fopen(path, "wb");

		CHECK(jp && f && fwrite(jp, 1, len, f) == len, "write %s", path);
		if (f)
			fclose(f);
		/* native pixel format, no conversion: the Y plane comes first */
		snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -i %s -f rawvideo - 2>/dev/null", path);
		FILE *pp = popen(cmd, "r");
		uint8_t *y = malloc((size_t)w * h);
		size_t got = pp ? fread(y, 1, (size_t)w * h, pp) : 0;

		while (pp && fgetc(pp) != EOF)
			;
		if (pp)
			pclose(pp);
		CHECK(got == (size_t)w * h, "%s: ffmpeg gave %zu bytes", fmts[i], got);
		if (got == (size_t)w * h) {
			double ps = psnr(y, w, grey.img.plane[0], grey.img.stride[0], w, h);

			CHECK(ps >= 38, "%s: ffmpeg luma PSNR %.1f dB", fmts[i], ps);
			printf("  %s q90 decoded by ffmpeg: luma PSNR %.1f dB\n", fmts[i], ps);
		}
		free(y);
		free(jp);
		pic_free(&p);
		pic_free(&grey);
	}
	unlink(path);
	rmdir(dir);
	free(rgb);
	vc_jpeg_free(j);
}

int main(void)
{
	RUN("jpeg", encode_all_formats);
	RUN("jpeg", auto_subsamp);
	RUN("jpeg", encode_errors);
	RUN("jpeg", encode_subsampling);
	RUN("jpeg", color_range);
	RUN("jpeg", rgb_limited);
	RUN("jpeg", range_onepass_exact);
	RUN("jpeg", color_bars);
	RUN("jpeg", decode_destinations);
	RUN("jpeg", decode_scaled);
	RUN("jpeg", dht_round_trip);
	RUN("jpeg", transform);
	RUN("jpeg", bad_input);
	RUN("jpeg", webcam_quirks);
	RUN("jpeg", ffmpeg_oracle);
	CHECK_EXIT();
}
