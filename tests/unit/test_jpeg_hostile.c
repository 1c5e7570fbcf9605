/* JPEG from a hostile camera (a v4l2loopback producer controls every byte):
 * progressive frames of thousands of tiny scans must be refused before the
 * decoder walks them, and the libjpeg-turbo 2.1.5 over-read of scaled 4:1:1
 * YUV decoding must not be reachable (run under ASan by unit-asan). Split
 * from test_jpeg.c, which is long enough. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <turbojpeg.h>
#include <linux/videodev2.h>

#include "common/fmt.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "tests/unit/check.h"

/* ---- a destination picture with one exact allocation per plane + canary */

struct pic {
	struct vc_image img;
	struct vc_geom g;
	uint8_t *mem[3];
};

static int pic_alloc(struct pic *p, const char *fmt, uint32_t w, uint32_t h)
{
	const struct vc_fmt *f = vc_fmt_find(fmt);

	memset(p, 0, sizeof(*p));
	if (!f || vc_fmt_geometry(f, w, h, 0, &p->g) < 0)
		return -1;
	p->img.fmt = f;
	p->img.width = w;
	p->img.height = h;
	for (int i = 0; i < p->g.color_planes; i++) {
		p->mem[i] = malloc(p->g.plane[i].size + CANARY_LEN);
		memset(p->mem[i], CANARY_BYTE, p->g.plane[i].size + CANARY_LEN);
		p->img.plane[i] = p->mem[i];
		p->img.stride[i] = p->g.plane[i].stride;
		p->img.plane_size[i] = p->g.plane[i].size;
	}
	return 0;
}

static int pic_canaries(const struct pic *p)
{
	for (int i = 0; i < p->g.color_planes; i++)
		if (!canary_intact(p->mem[i], p->g.plane[i].size))
			return 0;
	return 1;
}

static void pic_free(struct pic *p)
{
	for (int i = 0; i < 3; i++)
		free(p->mem[i]);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qemu-user (cross suite) runs 5-20x slower: real-time bounds widen. */
static double slack(void)
{
	return getenv("VC_TEST_EMULATED") ? 20 : 1;
}

/* ---- a progressive grey JPEG of n scans, written marker by marker */

struct bits {
	uint8_t *p;
	size_t len;
	uint32_t acc;
	int nacc;
};

static void put_byte(struct bits *b, uint8_t v)
{
	b->p[b->len++] = v;
}

static void put_bits(struct bits *b, uint32_t v, int n)
{
	while (n--) {
		b->acc = b->acc << 1 | ((v >> n) & 1);
		if (++b->nacc == 8) {
			put_byte(b, (uint8_t)b->acc);
			if ((b->acc & 0xFF) == 0xFF)
				put_byte(b, 0); /* byte stuffing */
			b->acc = 0;
			b->nacc = 0;
		}
	}
}

static void flush_bits(struct bits *b)
{
	if (b->nacc)
		put_bits(b, 0x7F, 8 - b->nacc); /* pad with ones */
}

static void put_seg(struct bits *b, uint8_t marker, const uint8_t *body, size_t n)
{
	put_byte(b, 0xFF);
	put_byte(b, marker);
	put_byte(b, (uint8_t)((n + 2) >> 8));
	put_byte(b, (uint8_t)(n + 2));
	memcpy(b->p + b->len, body, n);
	b->len += n;
}

/* w x h grey, one DC scan (every difference 0) and nscans - 1 AC scans of
 * coefficients 1..63 that are all zero: one end-of-band run per 32767
 * blocks, so an AC scan costs about 13 bytes however large the picture is,
 * as in the attack (50,000 scans of 1920x1080 in 612 KB). Decodes to a
 * uniform 128. The caller frees the buffer. */
static uint8_t *progressive(uint32_t w, uint32_t h, unsigned nscans, size_t *len)
{
	size_t blocks = (size_t)((w + 7) / 8) * ((h + 7) / 8);
	struct bits b = { malloc(1024 + blocks / 8 + (size_t)nscans * (16 + blocks / 32767 * 3)),
			  0, 0, 0 };
	uint8_t dqt[65], sof[9] = { 8, (uint8_t)(h >> 8), (uint8_t)h, (uint8_t)(w >> 8),
				    (uint8_t)w, 1, 1, 0x11, 0 };
	/* DC table 0: one code "0" for category 0. AC table 0: 15 four-bit
	 * codes, code i for EOBi (a run of 2^i + i extra bits blocks). */
	uint8_t dht[1 + 16 + 1 + 1 + 16 + 15] = { 0x00, 1 };
	uint8_t sos_dc[] = { 1, 1, 0x00, 0, 0, 0 }, sos_ac[] = { 1, 1, 0x00, 1, 63, 0 };

	dqt[0] = 0;
	memset(dqt + 1, 1, 64);
	dht[17] = 0x00;
	dht[18] = 0x10;
	dht[18 + 4] = 15;
	for (int i = 0; i < 15; i++)
		dht[35 + i] = (uint8_t)(i << 4);
	put_byte(&b, 0xFF);
	put_byte(&b, 0xD8);
	put_seg(&b, 0xDB, dqt, sizeof(dqt));
	put_seg(&b, 0xC2, sof, sizeof(sof));
	put_seg(&b, 0xC4, dht, sizeof(dht));
	put_seg(&b, 0xDA, sos_dc, sizeof(sos_dc));
	for (size_t i = 0; i < blocks; i++)
		put_bits(&b, 0, 1);
	flush_bits(&b);
	for (unsigned s = 1; s < nscans; s++) {
		put_seg(&b, 0xDA, sos_ac, sizeof(sos_ac));
		for (size_t left = blocks; left;) {
			size_t run = left > 32767 ? 32767 : left;
			int r = 0;

			while ((run >> (r + 1)) != 0)
				r++;
			put_bits(&b, (uint32_t)r, 4);
			put_bits(&b, (uint32_t)(run - (1u << r)), r);
			left -= run;
		}
		flush_bits(&b);
	}
	put_byte(&b, 0xFF);
	put_byte(&b, 0xD9);
	*len = b.len;
	return b.p;
}

/* Frames of a few scans parse, decode to grey 128, and transform; the
 * limits of jpeg.h hold at their edges. */
static void scan_limits(void)
{
	static const struct { int line; uint32_t w, h; unsigned scans; int ok; } t[] = {
		{ __LINE__, 64, 48, 1, 1 },
		{ __LINE__, 64, 48, 2, 1 },
		{ __LINE__, 64, 48, VC_JPEG_MAX_SCANS, 1 },
		{ __LINE__, 64, 48, VC_JPEG_MAX_SCANS + 1, 0 },
		{ __LINE__, 8, 8, 1000, 0 },
		{ __LINE__, 1920, 1080, VC_JPEG_MAX_SCANS, 1 },
		{ __LINE__, 1920, 1080, VC_JPEG_MAX_SCANS + 1, 0 },
		/* 4096x2160: the pixel budget allows 15 scans, not 16 */
		{ __LINE__, 4096, 2160, 15, 1 },
		{ __LINE__, 4096, 2160, 16, 0 },
	};
	struct vc_jpeg *j = vc_jpeg_new();

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		size_t len;
		uint8_t *jp = progressive(t[i].w, t[i].h, t[i].scans, &len);
		struct vc_jpeg_info info;
		int r = vc_jpeg_parse(jp, len, &info);

		CHECK_AT(t[i].line, (r == 0) == t[i].ok, "%ux%u, %u scans: parse %d", t[i].w, t[i].h,
			 t[i].scans, r);
		if (r == 0)
			CHECK_AT(t[i].line, info.scans == t[i].scans && info.progressive,
				 "scans %u progressive %d", info.scans, info.progressive);
		if (t[i].w * t[i].h <= 1920 * 1080) {
			struct pic o;
			int all128 = 1;

			pic_alloc(&o, "GREY", t[i].w, t[i].h);
			r = vc_jpeg_decode(j, jp, len, 1, &o.img);
			CHECK_AT(t[i].line, (r == 0) == t[i].ok, "decode %d", r);
			for (uint32_t y = 0; r == 0 && y < t[i].h; y++)
				for (uint32_t x = 0; x < t[i].w; x++)
					all128 &= o.img.plane[0][y * o.img.stride[0] + x] == 128;
			CHECK_AT(t[i].line, all128, "the built frame does not decode to grey");
			CHECK_AT(t[i].line, pic_canaries(&o), "decode overran");
			pic_free(&o);
		}
		if (t[i].w <= 64) {
			uint8_t out[65536];
			size_t ol;
			uint32_t ow, oh;

			r = vc_jpeg_transform(j, jp, len, 90, 0, out, sizeof(out), &ol, &ow, &oh);
			CHECK_AT(t[i].line, (r == 0) == t[i].ok, "transform %d", r);
		}
		free(jp);
	}
	vc_jpeg_free(j);
}

/* The attack of issue 14: 1920x1080 with 50,000 scans took 69.7 s to
 * decode, 640x480 with 10,000 scans 2 s. Now both are refused at once. */
static void many_scans_refused_fast(void)
{
	static const struct { uint32_t w, h; unsigned scans; } t[] = {
		{ 1920, 1080, 50000 },
		{ 640, 480, 10000 },
	};
	struct vc_jpeg *j = vc_jpeg_new();

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		size_t len;
		uint8_t *jp = progressive(t[i].w, t[i].h, t[i].scans, &len);
		struct vc_jpeg_info info;
		struct pic o;
		uint8_t *out = malloc(len + 4096);
		size_t ol;
		uint32_t ow, oh;

		pic_alloc(&o, "YU12", t[i].w, t[i].h);
		double t0 = now_ms();
		int rp = vc_jpeg_parse(jp, len, &info);
		int rd = vc_jpeg_decode(j, jp, len, 1, &o.img);
		int rd8 = vc_jpeg_decode(j, jp, len, 8, &o.img);
		int rt = vc_jpeg_transform(j, jp, len, 180, 0, out, len + 4096, &ol, &ow, &oh);
		int ra = vc_jpeg_add_dht(jp, len, out, len + 4096, &ol);
		double ms = now_ms() - t0;

		printf("  %ux%u, %u scans, %zu bytes: parse %d, decode %d, transform %d, "
		       "add_dht %d in %.3f ms\n", t[i].w, t[i].h, t[i].scans, len, rp, rd, rt, ra, ms);
		CHECK(rp == -EBADMSG && rd == -EBADMSG && rd8 == -EBADMSG && rt == -EBADMSG &&
		      ra == -EBADMSG, "%u scans accepted", t[i].scans);
		CHECK(ms < 50 * slack(), "refusing took %.1f ms", ms);
		pic_free(&o);
		free(out);
		free(jp);
	}
	vc_jpeg_free(j);
}

/* ---- 4:1:1 decoded scaled into planar YUV */

/* The minimal input of issue 14 (7x9, 4:1:1): decoded at 1/8 into I420 the
 * system libturbojpeg read past a heap buffer. Every scale and planar
 * destination must decode it (its DQT values are odd but valid) without an
 * ASan report or a canary hit. */
static void hex_411_scaled(void)
{
	static const char hex[] =
		"ffd8ffdb00430008060607060508070707090908ffffffff0c0b0b0c1912130f141d1a1f1e1d"
		"1a1c1c20242e2720222c2301000000000000483434341f27393d38323c2e333432ffdb004301"
		"0909090c0b1f1a0d0d1832211c21323232323232323232323232323232323232323232323232"
		"32323232323232320211031100010000ffd9020b323232323232ffc000110800090007030141"
		"00021101031101ffda000c0301000211031100010000ffd90b";
	static const char *const fmts[] = { "YU12", "YV12", "422P", "GREY", "RGB24", "YUYV" };
	size_t n = strlen(hex) / 2;
	uint8_t *b = malloc(n); /* exactly n bytes: ASan sees an over-read */
	struct vc_jpeg *j = vc_jpeg_new();
	struct vc_jpeg_info info;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		b[i] = (uint8_t)v;
	}
	CHECK(vc_jpeg_parse(b, n, &info) == 0 && info.width == 7 && info.height == 9 &&
	      info.subsamp == VC_JPEG_SS_411, "parse: %ux%u ss %d", info.width, info.height,
	      info.subsamp);
	for (int d = 1; d <= 8; d *= 2)
		for (size_t f = 0; f < ARRAY_LEN(fmts); f++) {
			struct pic o;
			int r;

			pic_alloc(&o, fmts[f], vc_jpeg_scaled(7, d), vc_jpeg_scaled(9, d));
			r = vc_jpeg_decode(j, b, n, d, &o.img);
			CHECK(r == 0, "1/%d %s: %d", d, fmts[f], r);
			CHECK(pic_canaries(&o), "1/%d %s overran", d, fmts[f]);
			pic_free(&o);
		}
	free(b);
	vc_jpeg_free(j);
}

/* Y, Cb, Cr of the top-left pixel of a planar (I420, 422P), semi-planar
 * (NV12) or packed (YUYV) picture. */
static void corner(const struct vc_image *img, int *y, int *u, int *v)
{
	const uint8_t *p0 = img->plane[0], *p1 = img->plane[1];

	*y = p0[0];
	if (img->fmt->fourcc == V4L2_PIX_FMT_YUYV) {
		*u = p0[1];
		*v = p0[3];
	} else if (img->fmt->fourcc == V4L2_PIX_FMT_NV12) {
		*u = p1[0];
		*v = p1[1];
	} else {
		*u = p1[0];
		*v = img->plane[2][0];
	}
}

/* Solid-colour 4:1:1 (and 4:2:0, 4:2:2) frames of every width 1..72 and a
 * few heights at every scale into planar and packed YUV: no over-read, no
 * overrun, and the right colour, also where the guard sends them through
 * RGB. */
static void sweep_411(void)
{
	tjhandle tc = tjInitCompress();
	struct vc_jpeg *j = vc_jpeg_new();
	static const uint32_t hs[] = { 1, 7, 9, 17 };
	/* NV12 and YUYV go through the converter's temporary picture, which
	 * the guard must keep off planar YUV too (found by fuzz_jpeg_decode:
	 * a use after free when it did not) */
	static const char *const fmts[] = { "YU12", "422P", "NV12", "YUYV" };
	static const int samps[] = { TJSAMP_411, TJSAMP_420, TJSAMP_422 };
	/* RGB (200, 100, 50) in BT.601, limited range (the destination's default) */
	const double fy = 0.299 * 200 + 0.587 * 100 + 0.114 * 50;
	const int ey = (int)(16 + fy * 219 / 255 + 0.5);
	const int ecb = (int)(128 + (50 - fy) / 1.772 * 224 / 255 + 0.5);
	const int ecr = (int)(128 + (200 - fy) / 1.402 * 224 / 255 + 0.5);
	int bad = 0, cases = 0;

	for (uint32_t w = 1; w <= 72; w++)
		for (size_t hi = 0; hi < ARRAY_LEN(hs) * ARRAY_LEN(samps); hi++) {
			uint32_t h = hs[hi % ARRAY_LEN(hs)];
			int ss = samps[hi / ARRAY_LEN(hs)];
			uint8_t *rgb = malloc((size_t)w * h * 3), *jp = NULL, *exact;
			unsigned long jl = 0;

			for (size_t i = 0; i < (size_t)w * h; i++)
				memcpy(rgb + 3 * i, "\xc8\x64\x32", 3);
			if (tjCompress2(tc, rgb, (int)w, 0, (int)h, TJPF_RGB, &jp, &jl, ss, 95,
					0) < 0) {
				CHECK(0, "encode %ux%u: %s", w, h, tjGetErrorStr2(tc));
				free(rgb);
				continue;
			}
			exact = malloc(jl);
			memcpy(exact, jp, jl);
			for (int d = 1; d <= 8; d *= 2)
				for (size_t f = 0; f < ARRAY_LEN(fmts); f++) {
					uint32_t sw = vc_jpeg_scaled(w, d), sh = vc_jpeg_scaled(h, d);
					struct pic o;
					int r;

					pic_alloc(&o, fmts[f], sw, sh);
					r = vc_jpeg_decode(j, exact, jl, d, &o.img);
					cases++;
					int y, u, v;

					/* the top-left sample: edges blur little on a
					 * solid picture */
					corner(&o.img, &y, &u, &v);
					if (r != 0 || !pic_canaries(&o) || abs(y - ey) > 3 ||
					    abs(u - ecb) > 3 || abs(v - ecr) > 3) {
						if (bad++ < 5)
							printf("  %ux%u ss %d 1/%d %s: r %d Y %d Cb %d Cr %d\n",
							       w, h, ss, d, fmts[f], r, y, u, v);
					}
					pic_free(&o);
				}
			free(exact);
			tjFree(jp);
			free(rgb);
		}
	printf("  %d decodes of small 4:1:1/4:2:0/4:2:2 frames, %d wrong\n", cases, bad);
	CHECK(bad == 0, "%d of %d decodes wrong", bad, cases);
	tjDestroy(tc);
	vc_jpeg_free(j);
}

/* Found by tests/fuzz/fuzz_jpeg_decode: a progressive frame that makes
 * libjpeg warn and then fail ("Invalid progressive parameters"). TurboJPEG
 * 2.1.5 reports that as a warning, and the transform then returned what
 * the previous frame's transform had left in the buffer (96x96 here) as
 * this frame's. Both transform and decode must fail. */
static void fatal_after_warning(void)
{
	static const char hex[] =
		"ffd8ffe000104a46494600010100000100010000ffdb00430008060607060508070707090908"
		"0a0c140d0c0b0b0c1912130f141d1a1f1e1d1a1c1c20242e2720222c231c1c2837292c303134"
		"34cce0d8c63d38323c2e333432ffc2000b080008005801011100ffc400160000030000000000"
		"000000000000000000010203ffda00080101000000010b4fffc4001810000301010000000000"
		"000000000000000001021123ffda00080101000105029994672a47ffc4002110000103040105"
		"0000000000000000000001021131001221b10332415191e2ffda0008010100063f0218038ee2"
		"968075b342e8523a5bc7ad1a2f9765252d1da3e6bfffc4001c10010100020203000000000000"
		"000000000111417100312151f0ffda0008010100011fc821cc3f0e30487c2f0240580a2be564"
		"0f668d1c1004831ece88df596de7ffda0008010100000010ff00ffc400181001010101010000"
		"0000000000000000000111210041ffda0008010100013f10ba3d28af286e246a38a51044db8e"
		"2555b08e228f0cdc5c2a8480586d08b6c3ffd9";
	size_t n = strlen(hex) / 2, ol, jl;
	uint8_t *b = malloc(n), *out = malloc(1 << 20);
	struct vc_jpeg *j = vc_jpeg_new();
	uint32_t ow, oh;
	struct pic prev, o;
	struct vc_jpeg_info info;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		b[i] = (uint8_t)v;
	}
	CHECK(vc_jpeg_parse(b, n, &info) == 0 && info.progressive, "the frame's structure is valid");
	/* a good 96x96 frame transformed first fills the buffer */
	pic_alloc(&prev, "GREY", 96, 96);
	memset(prev.img.plane[0], 77, 96 * 96);
	uint8_t *jp = malloc(vc_jpeg_bound(96, 96));
	CHECK(vc_jpeg_encode(j, &prev.img, 80, jp, vc_jpeg_bound(96, 96), &jl) == 0, "encode");
	CHECK(vc_jpeg_transform(j, jp, jl, 90, 1, out, 1 << 20, &ol, &ow, &oh) == 0 && ow == 96,
	      "good transform");
	int r = vc_jpeg_transform(j, b, n, 90, 1, out, 1 << 20, &ol, &ow, &oh);
	CHECK(r == -EBADMSG, "transform of the broken frame: %d, %ux%u", r, ow, oh);
	pic_alloc(&o, "GREY", info.width, info.height);
	r = vc_jpeg_decode(j, b, n, 1, &o.img);
	CHECK(r == -EBADMSG, "decode of the broken frame: %d", r);
	pic_free(&o);
	pic_free(&prev);
	free(jp);
	free(out);
	free(b);
	vc_jpeg_free(j);
}

int main(void)
{
	RUN("jpeg_hostile", scan_limits);
	RUN("jpeg_hostile", many_scans_refused_fast);
	RUN("jpeg_hostile", hex_411_scaled);
	RUN("jpeg_hostile", sweep_411);
	RUN("jpeg_hostile", fatal_after_warning);
	CHECK_EXIT();
}
