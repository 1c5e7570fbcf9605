/* Pipeline timings for the main serving paths, each beside a baseline:
 * decode-scaled plans against the same plan forced to decode at full size
 * then scale (denom 1), so the ratio shows what DCT scaling saves; raw->JPEG
 * against the encode alone. Median of interleaved rounds, ms per frame. */
#include "common/pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/videodev2.h>

#include "common/convert.h"
#include "common/jpeg.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct vc_frame *make_input(const struct vc_mode *m)
{
	const struct vc_fmt *i420 = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	struct vc_frame *pat = vc_frame_new_fmt(i420, m->width, m->height);
	uint8_t *d = vc_frame_data(pat, 0);
	unsigned s = 7;
	for (size_t i = 0; i < pat->geom.sizeimage; i++) {
		s = s * 1103515245u + 12345u;
		/* smooth with some texture, like a camera picture */
		d[i] = (uint8_t)((i % 251) / 2 + ((s >> 16) & 7));
	}
	struct vc_image src, dst;
	vc_image_from_frame(pat, &src);
	const struct vc_fmt *f = vc_fmt_by_fourcc(m->fourcc);
	struct vc_frame *o;
	if (f->family == VC_FAM_COMPRESSED) {
		struct vc_jpeg *j = vc_jpeg_new();
		o = vc_frame_new(vc_jpeg_bound(m->width, m->height));
		size_t len;
		vc_jpeg_encode_ss(j, &src, 85, VC_JPEG_SS_422, vc_frame_data(o, 0),
				  o->geom.mem_size[0], &len);
		o->fmt = f;
		vc_fmt_geometry(f, m->width, m->height, 0, &o->geom);
		o->bytesused[0] = len;
		vc_jpeg_free(j);
	} else {
		struct vc_conv *c = vc_conv_new();
		o = vc_frame_new_fmt(f, m->width, m->height);
		uint8_t *mem[3] = { vc_frame_data(o, 0), NULL, NULL };
		vc_image_from_geom(f, &o->geom, mem, &dst);
		vc_conv_run(c, &src, &dst);
		vc_conv_free(c);
	}
	vc_frame_unref(pat);
	return o;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define ROUNDS 9
#define PER 5

/* Median ms per frame of plan a and plan b, rounds interleaved. */
static void run_pair(const char *name, const struct vc_mode *m, const struct vc_plan *a,
		     const struct vc_plan *b, const char *bname)
{
	struct vc_frame *in = make_input(m);
	struct vc_pipeline *pa = vc_pipeline_new(m, a), *pb = b ? vc_pipeline_new(m, b) : NULL;
	double ta[ROUNDS], tb[ROUNDS];
	struct vc_frame *o;
	char st[96];

	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ms();
		for (int i = 0; i < PER; i++) {
			if (vc_pipeline_run(pa, in, &o) < 0) {
				printf("%s: run failed\n", name);
				goto out;
			}
			vc_frame_unref(o);
		}
		ta[r] = (now_ms() - t0) / PER;
		if (!pb)
			continue;
		t0 = now_ms();
		for (int i = 0; i < PER; i++) {
			if (vc_pipeline_run(pb, in, &o) < 0)
				goto out;
			vc_frame_unref(o);
		}
		tb[r] = (now_ms() - t0) / PER;
	}
	qsort(ta, ROUNDS, sizeof(double), cmp_d);
	vc_steps_str(a->steps, a->decode_denom, st, sizeof(st));
	printf("%-34s %7.2f ms  (%s)", name, ta[ROUNDS / 2], st);
	if (pb) {
		qsort(tb, ROUNDS, sizeof(double), cmp_d);
		printf("  baseline %s %7.2f ms  ratio %.2fx", bname, tb[ROUNDS / 2],
		       tb[ROUNDS / 2] / ta[ROUNDS / 2]);
	}
	printf("\n");
out:
	vc_pipeline_free(pa);
	vc_pipeline_free(pb);
	vc_frame_unref(in);
}

static void path(const char *name, struct vc_mode m, struct vc_request rq, int force_full_decode)
{
	struct vc_plan a, b;
	if (vc_negotiate_plan(&m, &rq, &a) < 0) {
		printf("%s: no plan\n", name);
		return;
	}
	b = a;
	if (force_full_decode && (a.steps & VC_STEP_DECODE) && a.decode_denom > 1) {
		b.decode_denom = 1;
		b.steps |= VC_STEP_SCALE;
		run_pair(name, &m, &a, &b, "decode/1+scale");
	} else if (force_full_decode == 2 && (a.steps & VC_STEP_JPEG_XFORM)) {
		/* the same picture by decode + rotate + encode */
		b.steps = VC_STEP_DECODE | VC_STEP_ROTATE | VC_STEP_ENCODE;
		b.out.quality = 80;
		b.decode_denom = 1;
		run_pair(name, &m, &a, &b, "decode+rotate+encode");
	} else {
		run_pair(name, &m, &a, NULL, NULL);
	}
}

#define MJPG V4L2_PIX_FMT_MJPEG
#define YUYV V4L2_PIX_FMT_YUYV
#define I420 V4L2_PIX_FMT_YUV420

int main(void)
{
	struct vc_mode y720 = { YUYV, 1280, 720, { 1, 30 } };
	struct vc_mode y1080 = { YUYV, 1920, 1080, { 1, 30 } };
	struct vc_mode j1080 = { MJPG, 1920, 1080, { 1, 30 } };
	struct vc_mode j720 = { MJPG, 1280, 720, { 1, 30 } };

	printf("bench_pipeline: ms per frame, median of %d rounds x %d\n", ROUNDS, PER);
	path("YUYV 720p -> MJPEG 720p q80", y720, (struct vc_request){ MJPG }, 0);
	path("YUYV 1080p -> MJPEG 1080p q80", y1080, (struct vc_request){ MJPG }, 0);
	path("YUYV 720p -> I420 640x360", y720, (struct vc_request){ I420, 640, 360 }, 0);
	path("YUYV 720p -> MJPEG rot90", y720, (struct vc_request){ MJPG, 0, 0, 0, 0, 90 }, 0);
	path("MJPEG 1080p -> I420 960x540", j1080, (struct vc_request){ I420, 960, 540 }, 1);
	path("MJPEG 1080p -> YUYV 960x540", j1080, (struct vc_request){ YUYV, 960, 540 }, 1);
	path("MJPEG 1080p -> MJPEG 960x540", j1080, (struct vc_request){ MJPG, 960, 540 }, 1);
	path("MJPEG 1080p -> MJPEG 640x360", j1080, (struct vc_request){ MJPG, 640, 360 }, 1);
	path("MJPEG 1080p -> MJPEG 480x270", j1080, (struct vc_request){ MJPG, 480, 270 }, 1);
	path("MJPEG 1080p -> I420 1080p", j1080, (struct vc_request){ I420 }, 0);
	path("MJPEG 1080p rot90 (lossless)", j1080, (struct vc_request){ MJPG, 0, 0, 0, 0, 90 }, 2);
	path("MJPEG 720p rot180 (lossless)", j720, (struct vc_request){ MJPG, 0, 0, 0, 0, 180 }, 2);
	path("MJPEG 1080p passthrough", j1080, (struct vc_request){ MJPG }, 0);
	return 0;
}
