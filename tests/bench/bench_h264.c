/* H.264 (libopenh264, vcapd's defaults: rate about 0.07 bit per pixel per
 * frame, GOP 2 s, Constrained Baseline) against MJPEG q80 (libjpeg-turbo,
 * vc_jpeg_encode) on the same 60 I420 pictures at 30 fps, 720p and 1080p:
 * bytes per frame, luma PSNR of the decoded result against the source
 * (H.264 decoded by libopenh264, JPEG by vc_jpeg_decode), and the encoder's
 * CPU ms per frame (this thread's CPU time, encode calls only). Two
 * contents: the test pattern (moving bars, text; very compressible) and a
 * camera-like picture (gradients, edges, fresh sensor noise every frame,
 * the whole picture panning by 2 pixels a frame); for the latter also the
 * PSNR against the same picture without its noise. The goal (issue 17):
 * H.264 at most 0.2x MJPEG's bytes at an equal or better PSNR against the
 * source. Where the default rate misses MJPEG's PSNR, H.264 runs again at
 * 2x, 3x, ... 16x the default rate until it reaches it, so the byte ratio
 * at equal PSNR is printed too. One thread. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/videodev2.h>
#include <wels/codec_api.h>

#include "common/fmt.h"
#include "common/frame.h"
#include "common/h264enc.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "server/capture/testsrc_draw.h"

#define FRAMES 60

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef void draw_fn(const struct vc_image *im, unsigned n, bool noise);

static void camera_like(const struct vc_image *im, unsigned n, bool noise)
{
	uint32_t s = 0x9e3779b9u * (n + 1);

	for (uint32_t y = 0; y < im->height; y++)
		for (uint32_t x = 0; x < im->width; x++) {
			uint32_t px = x + 2 * n;
			int v = (int)(px * 180 / im->width) + (int)((px / 40 + y / 40) % 3) * 20 + 20;

			s = s * 1103515245 + 12345;
			if (noise)
				v += (int)(s >> 29) - 4; /* sensor noise, -4..3 */
			im->plane[0][(size_t)y * im->stride[0] + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	for (uint32_t y = 0; y < im->height / 2; y++)
		for (uint32_t x = 0; x < im->width / 2; x++) {
			im->plane[1][(size_t)y * im->stride[1] + x] = (uint8_t)(100 + y * 60 / im->height);
			im->plane[2][(size_t)y * im->stride[2] + x] = (uint8_t)(110 + ((x + n) & 31));
		}
}

static void test_pattern(const struct vc_image *im, unsigned n, bool noise)
{
	struct vc_i420_pic pc = { { im->plane[0], im->plane[1], im->plane[2] },
				  { im->stride[0], im->stride[1], im->stride[2] },
				  im->width, im->height, im->width / 2, im->height / 2 };

	(void)noise;
	vc_testsrc_draw_frame(&pc, n, (struct vc_fract){ 1, 30 });
}

static double psnr_y(const struct vc_image *a, const uint8_t *b, size_t bstride)
{
	double se = 0;

	for (uint32_t y = 0; y < a->height; y++)
		for (uint32_t x = 0; x < a->width; x++) {
			int d = a->plane[0][(size_t)y * a->stride[0] + x] - b[(size_t)y * bstride + x];

			se += d * d;
		}
	se /= (double)a->width * a->height;
	return se == 0 ? 99 : 10 * log10(255.0 * 255.0 / se);
}

struct result {
	double bytes, psnr, psnr_clean, ms;
	double floor; /* the noise-free picture's own PSNR against the source */
};

/* The source picture n, and the same without noise when clean is set. */
static void draw_both(draw_fn *draw, const struct vc_image *src, const struct vc_image *clean,
		      unsigned n)
{
	draw(src, n, true);
	if (clean)
		draw(clean, n, false);
}

static void add_psnr(struct result *r, const struct vc_image *src, const struct vc_image *clean,
		     const uint8_t *y, size_t stride)
{
	r->psnr += psnr_y(src, y, stride);
	if (clean) {
		r->psnr_clean += psnr_y(clean, y, stride);
		r->floor += psnr_y(src, clean->plane[0], clean->stride[0]);
	}
}

static void average(struct result *r)
{
	r->bytes /= FRAMES;
	r->psnr /= FRAMES;
	r->psnr_clean /= FRAMES;
	r->floor /= FRAMES;
	r->ms /= FRAMES;
}

static int run_h264(const struct vc_image *src, const struct vc_image *clean, draw_fn *draw,
		    unsigned rate_x, struct result *r)
{
	struct vc_h264enc_cfg cfg = {
		.width = src->width, .height = src->height, .fps = 30,
		.bitrate = rate_x * vc_h264enc_default_bitrate(src->width, src->height, 30),
	};
	struct vc_h264enc *e;
	ISVCDecoder *dec;
	SDecodingParam dp;

	memset(r, 0, sizeof(*r));
	memset(&dp, 0, sizeof(dp));
	dp.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
	if (vc_h264enc_new(&cfg, &e) < 0 || WelsCreateDecoder(&dec) != 0 ||
	    (*dec)->Initialize(dec, &dp) != 0)
		return -1;
	for (unsigned n = 0; n < FRAMES; n++) {
		struct vc_h264enc_out o;
		uint8_t *dst[3] = { 0 };
		SBufferInfo bi;

		draw_both(draw, src, clean, n);
		double t = cpu_now();

		if (vc_h264enc_encode(e, (const uint8_t *const *)src->plane, src->stride, n * 33, &o) < 0)
			return -1;
		r->ms += (cpu_now() - t) * 1000;
		r->bytes += (double)o.len;
		memset(&bi, 0, sizeof(bi));
		if ((*dec)->DecodeFrameNoDelay(dec, o.data, (int)o.len, dst, &bi) != dsErrorFree ||
		    bi.iBufferStatus != 1)
			return -1;
		add_psnr(r, src, clean, dst[0], (size_t)bi.UsrData.sSystemBuffer.iStride[0]);
	}
	(*dec)->Uninitialize(dec);
	WelsDestroyDecoder(dec);
	vc_h264enc_free(e);
	average(r);
	return 0;
}

static int run_jpeg(const struct vc_image *src, const struct vc_image *clean, draw_fn *draw,
		    struct result *r)
{
	struct vc_jpeg *j = vc_jpeg_new();
	size_t cap = vc_jpeg_bound(src->width, src->height);
	uint8_t *buf = malloc(cap);
	struct vc_frame *back = vc_frame_new_fmt(src->fmt, src->width, src->height);
	struct vc_image bimg;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!j || !buf || !back || vc_image_from_frame(back, &bimg) < 0)
		goto out;
	bimg.color = src->color; /* decoded in the source's range: no conversion */
	for (unsigned n = 0; n < FRAMES; n++) {
		size_t len;

		draw_both(draw, src, clean, n);
		double t = cpu_now();

		if (vc_jpeg_encode(j, src, 80, buf, cap, &len) < 0)
			goto out;
		r->ms += (cpu_now() - t) * 1000;
		r->bytes += (double)len;
		if (vc_jpeg_decode(j, buf, len, 1, &bimg) < 0)
			goto out;
		add_psnr(r, src, clean, bimg.plane[0], bimg.stride[0]);
	}
	average(r);
	rc = 0;
out:
	vc_frame_unref(back);
	free(buf);
	vc_jpeg_free(j);
	return rc;
}

static void print_row(const char *label, const struct result *h, const struct result *m,
		      bool clean)
{
	double ratio = h->bytes / m->bytes, dpsnr = h->psnr - m->psnr;
	char hc[16] = "-", mc[16] = "-";

	if (clean) {
		snprintf(hc, sizeof(hc), "%.2f", h->psnr_clean);
		snprintf(mc, sizeof(mc), "%.2f", m->psnr_clean);
	}
	printf("%-26s | %9.0f %7.2f %6s %6.2f | %9.0f %7.2f %6s %5.2f | %6.3fx %+6.2f %s\n", label,
	       h->bytes, h->psnr, hc, h->ms, m->bytes, m->psnr, mc, m->ms, ratio, dpsnr,
	       ratio <= 0.2 && dpsnr >= 0 ? "yes" : "no");
}

/* H.264 at rising multiples of the default rate until its PSNR reaches
 * MJPEG's; prints the 2x row (about the goal's 0.2x bytes) and the one that
 * reaches it, or the last one tried. */
static int match_psnr(const char *size, const struct vc_image *src, const struct vc_image *clean,
		      draw_fn *draw, const struct result *m)
{
	static const unsigned rates[] = { 2, 3, 4, 6, 8, 12, 16 };
	struct result h;
	char label[48];

	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		if (run_h264(src, clean, draw, rates[i], &h) < 0)
			return -1;
		bool last = h.psnr >= m->psnr || i + 1 == sizeof(rates) / sizeof(rates[0]);

		if (rates[i] == 2 || last) {
			snprintf(label, sizeof(label), "%-9s H.264 at %ux", size, rates[i]);
			print_row(label, &h, m, clean != NULL);
		}
		if (last) {
			if (h.psnr < m->psnr)
				printf("%-26s   (MJPEG's PSNR not reached)\n", "");
			return 0;
		}
	}
	return 0;
}

int main(void)
{
	static const struct {
		uint32_t w, h;
	} sizes[] = { { 1280, 720 }, { 1920, 1080 } };
	static const struct {
		const char *name;
		draw_fn *draw;
		bool noisy; /* PSNR against the noise-free picture too */
	} contents[] = { { "test pattern", test_pattern, false },
			 { "camera-like", camera_like, true } };
	const struct vc_fmt *i420 = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);

	printf("%d frames at 30 fps per row; H.264: libopenh264 at vcapd's default rate and GOP "
	       "unless the row says otherwise; MJPEG: q80\n",
	       FRAMES);
	printf("%-26s | %9s %7s %6s %6s | %9s %7s %6s %5s | %7s %6s %s\n", "size, content",
	       "h264 B/f", "PSNR", "clean", "ms/f", "mjpeg B/f", "PSNR", "clean", "ms/f", "bytes",
	       "dPSNR", "goal");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t c = 0; c < sizeof(contents) / sizeof(contents[0]); c++) {
			struct vc_frame *f = vc_frame_new_fmt(i420, sizes[s].w, sizes[s].h);
			struct vc_frame *g = vc_frame_new_fmt(i420, sizes[s].w, sizes[s].h);
			struct vc_image img, cimg;
			const struct vc_image *clean = contents[c].noisy ? &cimg : NULL;
			struct result h, m;
			char size[16], label[48];

			if (!f || !g || vc_image_from_frame(f, &img) < 0 ||
			    vc_image_from_frame(g, &cimg) < 0)
				return 1;
			/* full range: the JPEG needs no range conversion, so
			 * both PSNRs compare the same luma values */
			img.color.ycbcr_enc = V4L2_YCBCR_ENC_601;
			img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
			snprintf(size, sizeof(size), "%ux%u", sizes[s].w, sizes[s].h);
			snprintf(label, sizeof(label), "%-9s %s", size, contents[c].name);
			if (run_h264(&img, clean, contents[c].draw, 1, &h) < 0 ||
			    run_jpeg(&img, clean, contents[c].draw, &m) < 0) {
				fprintf(stderr, "bench_h264: %s failed\n", label);
				return 1;
			}
			print_row(label, &h, &m, clean != NULL);
			if (clean)
				printf("%-26s   (the noise-free picture itself: %.2f dB against the "
				       "source)\n", "", m.floor);
			if (h.psnr < m.psnr && match_psnr(size, &img, clean, contents[c].draw, &m) < 0) {
				fprintf(stderr, "bench_h264: %s at a higher rate failed\n", label);
				return 1;
			}
			vc_frame_unref(g);
			vc_frame_unref(f);
		}
	printf("bytes: H.264 bytes per frame / MJPEG's; PSNR: luma, against the source; clean: "
	       "against the picture without its noise; dPSNR: H.264's PSNR - MJPEG's (against the "
	       "source); goal: bytes <= 0.2x and dPSNR >= 0\n");
	return 0;
}
