/* Benchmark (not a test): single-thread frames/s and ns/pixel of the main
 * raw->raw pairs and scalings at 640x480, 1280x720 and 1920x1080, and, side
 * by side on the same picture, plain C per-pixel loops (YUYV -> RGB24 and
 * the YUYV -> planar 4:2:2 deinterleave) with our/baseline ratios. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/color.h"
#include "common/convert.h"
#include "common/fmt.h"

struct img {
	struct vc_image v;
	uint8_t *mem;
};

static int img_new(struct img *m, const char *name, uint32_t w, uint32_t h)
{
	const struct vc_fmt *f = vc_fmt_find(name);
	struct vc_geom g;

	memset(m, 0, sizeof(*m));
	if (!f || vc_fmt_geometry(f, w, h, 0, &g)) {
		fprintf(stderr, "bench_convert: no format %s\n", name);
		return -1;
	}
	m->mem = malloc(g.sizeimage);
	if (!m->mem)
		return -1;
	for (size_t i = 0; i < g.sizeimage; i++) /* a busy picture, not a flat one */
		m->mem[i] = (uint8_t)(i * 7 + (i >> 9) * 13);
	size_t off = 0;
	uint8_t *mem[3];
	for (int i = 0; i < g.mem_planes; i++) {
		mem[i] = m->mem + off;
		off += g.mem_size[i];
	}
	vc_image_from_geom(f, &g, mem, &m->v);
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds per run of fn, the best of a few batches (>= 0.2 s in all). */
typedef int (*run_fn)(void *);
static double timeit(run_fn fn, void *arg)
{
	double best = 1e9, t0 = now();
	int n = 0;
	while (n < 5 || now() - t0 < 0.25) {
		double a = now();
		if (fn(arg))
			return -1;
		double d = now() - a;
		best = d < best ? d : best;
		n++;
	}
	return best;
}

struct job {
	struct vc_conv *c;
	struct img *s, *d;
};

static int run_conv(void *p)
{
	struct job *j = p;
	return vc_conv_run(j->c, &j->s->v, &j->d->v);
}

/* Baseline 1: the usual per-pixel C loop, YUYV (BT.601 limited) -> RGB24. */
static int c_yuyv_rgb24(void *p)
{
	struct job *j = p;
	const struct vc_image *s = &j->s->v, *d = &j->d->v;
	for (uint32_t y = 0; y < s->height; y++) {
		const uint8_t *in = s->plane[0] + (size_t)y * s->stride[0];
		uint8_t *out = d->plane[0] + (size_t)y * d->stride[0];
		for (uint32_t x = 0; x + 1 < s->width; x += 2, in += 4, out += 6) {
			int u = in[1] - 128, v = in[3] - 128;
			for (int k = 0; k < 2; k++) {
				int c = (in[2 * k] - 16) * 298;
				int r = (c + 409 * v + 128) >> 8;
				int g = (c - 100 * u - 208 * v + 128) >> 8;
				int b = (c + 516 * u + 128) >> 8;
				out[3 * k] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
				out[3 * k + 1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
				out[3 * k + 2] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
			}
		}
	}
	return 0;
}

/* Baseline 2: per-pixel C deinterleave of YUYV into planar 4:2:2. */
static int c_deinterleave(void *p)
{
	struct job *j = p;
	const struct vc_image *s = &j->s->v, *d = &j->d->v;
	for (uint32_t y = 0; y < s->height; y++) {
		const uint8_t *in = s->plane[0] + (size_t)y * s->stride[0];
		uint8_t *py = d->plane[0] + (size_t)y * d->stride[0];
		uint8_t *pu = d->plane[1] + (size_t)y * d->stride[1];
		uint8_t *pv = d->plane[2] + (size_t)y * d->stride[2];
		for (uint32_t x = 0; x + 1 < s->width; x += 2, in += 4) {
			py[x] = in[0], py[x + 1] = in[2];
			pu[x / 2] = in[1], pv[x / 2] = in[3];
		}
	}
	return 0;
}

static const struct { const char *src, *dst; } pairs[] = {
	{ "YUYV", "YUV420" }, { "YUYV", "RGB24" }, { "NV12", "RGB24" }, { "UYVY", "NV12" },
	{ "YUV420", "YUYV" }, { "SBGGR8", "RGB24" }, { "RGB24", "YUV420" }, { "YUYV", "YUV422P" },
	{ "YUYV", "NV12" }, { "RGB24", "YUYV" }, { "SBGGR10P", "RGB24" }, { "Y41P", "YUV420" }, { "YUV420", "RGB24" },
	{ "NV12", "XRGB32" }, { "YUYV", "RGB565" }, { "YUYV/709", "RGB24" }, { "YUYV", "YUYV/full" },
};

static void line(const char *what, uint32_t w, uint32_t h, double sec)
{
	printf("%-28s %5ux%-5u %9.1f fps %8.2f ns/px\n", what, w, h, 1.0 / sec, sec * 1e9 / ((double)w * h));
}

int main(void)
{
	static const uint32_t sizes[][2] = { { 640, 480 }, { 1280, 720 }, { 1920, 1080 } };
	struct vc_conv *c = vc_conv_new();
	char what[64];

	if (!c)
		return 1;
	printf("bench_convert: single thread, best of >= 5 runs\n");
	for (size_t k = 0; k < 3; k++) {
		uint32_t w = sizes[k][0], h = sizes[k][1];
		printf("--- %ux%u\n", w, h);
		for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
			struct img s, d;
			char sn[16], dn[16];
			/* "NAME/709": BT.709 limited; "NAME/full": BT.601 full range */
			snprintf(sn, sizeof(sn), "%.*s", (int)strcspn(pairs[i].src, "/"), pairs[i].src);
			snprintf(dn, sizeof(dn), "%.*s", (int)strcspn(pairs[i].dst, "/"), pairs[i].dst);
			if (img_new(&s, sn, w, h) || img_new(&d, dn, w, h))
				return 1;
			if (strstr(pairs[i].src, "/709"))
				s.v.color = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT709, 0 });
			if (strstr(pairs[i].dst, "/full"))
				d.v.color = vc_color_from_ycbcr((struct vc_ycbcr){ VC_MATRIX_BT601, 1 });
			struct job j = { c, &s, &d };
			double t = timeit(run_conv, &j);
			snprintf(what, sizeof(what), "%s -> %s", pairs[i].src, pairs[i].dst);
			if (t < 0) {
				printf("%-28s FAILED\n", what);
				return 1;
			}
			line(what, w, h, t);
			free(s.mem);
			free(d.mem);
		}
		/* Baselines beside the libyuv-backed paths, same picture. */
		struct img s, rgb, p422;
		if (img_new(&s, "YUYV", w, h) || img_new(&rgb, "RGB24", w, h) || img_new(&p422, "YUV422P", w, h))
			return 1;
		struct job jr = { c, &s, &rgb }, jp = { c, &s, &p422 };
		double ours = timeit(run_conv, &jr), base = timeit(c_yuyv_rgb24, &jr);
		line("  C loop YUYV -> RGB24", w, h, base);
		printf("  ratio YUYV->RGB24 ours/C loop speed: %.2fx\n", base / ours);
		ours = timeit(run_conv, &jp), base = timeit(c_deinterleave, &jp);
		line("  C loop YUYV -> 422P", w, h, base);
		printf("  ratio YUYV->422P ours/C loop speed: %.2fx\n", base / ours);
		free(s.mem);
		free(rgb.mem);
		free(p422.mem);
	}
	printf("--- scaling from 1920x1080\n");
	static const struct { const char *fmt; uint32_t w, h; } sc[] = {
		{ "YUYV", 1280, 720 }, { "YUYV", 960, 540 }, { "NV12", 1280, 720 }, { "NV12", 960, 540 },
		{ "YUV420", 1280, 720 }, { "YUV420", 960, 540 }, { "RGB24", 1280, 720 }, { "RGB24", 960, 540 },
		{ "YUYV:YUV420", 1280, 720 }, { "YUYV:YUV420", 960, 540 },
	};
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		char sf[16], df[16];
		const char *colon = strchr(sc[i].fmt, ':');
		snprintf(sf, sizeof(sf), "%.*s", colon ? (int)(colon - sc[i].fmt) : 15, sc[i].fmt);
		snprintf(df, sizeof(df), "%s", colon ? colon + 1 : sc[i].fmt);
		struct img s, d;
		if (img_new(&s, sf, 1920, 1080) || img_new(&d, df, sc[i].w, sc[i].h))
			return 1;
		struct job j = { c, &s, &d };
		double t = timeit(run_conv, &j);
		snprintf(what, sizeof(what), "%s 1080p -> %s %up", sf, df, sc[i].h);
		line(what, 1920, 1080, t);
		free(s.mem);
		free(d.mem);
	}
	vc_conv_free(c);
	return 0;
}
