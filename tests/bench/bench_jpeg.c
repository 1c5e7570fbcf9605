/* JPEG encode throughput, one thread, q80: our vc_jpeg_encode per input
 * format beside two references on the same picture in the same run:
 *  - floor:  libjpeg-turbo jpeg_write_raw_data fed planes that are already
 *            planar (I420 for 4:2:0, I422 for 4:2:2), full range, compressor
 *            reused: no conversion at all;
 *  - common: what peers do: YUYV expanded per row into YCbCr 4:4:4 scanlines
 *            and fed to jpeg_write_scanlines (libjpeg downsamples to 4:2:0),
 *            compressor reused.
 * Prints fps, ms/frame, ns/pixel, JPEG size and the our/floor and
 * our/common fps ratios. "limited" rows hold the same picture in limited
 * range (what V4L2 YUV defaults to), converted to JFIF full range on the
 * way, so their output matches the floor's. VC_BENCH_SECONDS (default 0.6) sets time per cell;
 * VC_BENCH_QUICK=1 runs 1920x1080 only (no MJPEG table), for repeated A/B runs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jpeglib.h>
#include <linux/videodev2.h>

#include "common/fmt.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "tests/unit/yuvput.h"

/* This thread's CPU time, not wall time: on a host shared with other jobs
 * the time this thread waits for a core is not the encoder's cost (cache
 * and memory contention from the others still shows). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double seconds = 0.6;

/* A camera-like picture: smooth gradients, some texture and edges, noise. */
static void picture(uint32_t w, uint32_t h, uint8_t *Y, uint8_t *U, uint8_t *V)
{
	uint32_t s = 1;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			s = s * 1103515245 + 12345;
			int n = (int)(s >> 28) - 8;
			int v = (int)(x * 200 / w) + ((x / 40 + y / 40) % 3) * 20 + n;

			Y[(size_t)y * w + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			U[(size_t)y * w + x] = (uint8_t)(128 + (int)(y * 60 / h) - 30);
			V[(size_t)y * w + x] = (uint8_t)(128 + (int)((x ^ y) & 31) - 16);
		}
}

struct src {
	struct vc_image img;
	uint8_t *mem;
};

/* Lays out the 4:4:4 picture in fmt (8-bit YUV/grey/RGB rows only). */
static int make_src(const char *name, uint32_t w, uint32_t h, const uint8_t *Y, const uint8_t *U,
		    const uint8_t *V, struct src *s, int limited)
{
	const struct vc_fmt *f = vc_fmt_find(name);
	struct vc_geom g;

	if (!f || vc_fmt_geometry(f, w, h, 0, &g) < 0)
		return -1;
	s->mem = malloc(g.sizeimage);
	uint8_t *mem[3] = { s->mem, s->mem, s->mem };
	vc_image_from_geom(f, &g, mem, &s->img);
	struct vc_image *im = &s->img;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			size_t i = (size_t)y * w + x;

			if (f->layout == VC_LAYOUT_PACKED_RGB) { /* BT.601 full range */
				double yy = Y[i], u = U[i] - 128.0, v = V[i] - 128.0;
				double c[3] = { yy + 1.402 * v, yy - 0.344136 * u - 0.714136 * v,
						yy + 1.772 * u };
				uint8_t *d = im->plane[0] + (size_t)y * im->stride[0] + 3 * x;
				int off[3] = { f->r.shift / 8, f->g.shift / 8, f->b.shift / 8 };

				for (int k = 0; k < 3; k++)
					d[off[k]] = (uint8_t)(c[k] < 0 ? 0 : c[k] > 255 ? 255 : c[k]);
			} else if (limited) { /* the same picture, limited range */
				yuv_put(im, x, y, (uint8_t)(16 + (Y[i] * 219 + 127) / 255),
					(uint8_t)(128 + ((U[i] - 128) * 224) / 255),
					(uint8_t)(128 + ((V[i] - 128) * 224) / 255));
			} else {
				yuv_put(im, x, y, Y[i], U[i], V[i]);
			}
		}
	return 0;
}

/* ---- references, straight libjpeg */

struct ref {
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr err;
	unsigned char *buf;
	unsigned long size;
};

static void ref_init(struct ref *r, uint32_t w, uint32_t h, int raw, int hv)
{
	memset(r, 0, sizeof(*r));
	r->c.err = jpeg_std_error(&r->err);
	jpeg_create_compress(&r->c);
	r->c.image_width = w;
	r->c.image_height = h;
	r->c.input_components = 3;
	r->c.in_color_space = JCS_YCbCr;
	jpeg_set_defaults(&r->c);
	jpeg_set_quality(&r->c, 80, TRUE);
	r->c.raw_data_in = raw;
	r->c.comp_info[0].v_samp_factor = hv; /* 2: 4:2:0, 1: 4:2:2 */
	r->size = (unsigned long)w * h * 4;
	r->buf = malloc(r->size);
}

/* Floor: planes already planar, rows handed to libjpeg directly. */
static size_t floor_encode(struct ref *r, const struct vc_image *p, int vs)
{
	unsigned long sz = r->size;
	JSAMPROW yr[16], ur[8], vr[8];
	JSAMPARRAY planes[3] = { yr, ur, vr };
	uint32_t h = p->height, mh = 8u << vs;

	jpeg_mem_dest(&r->c, &r->buf, &sz);
	jpeg_start_compress(&r->c, TRUE);
	while (r->c.next_scanline < h) {
		uint32_t y0 = r->c.next_scanline;

		for (uint32_t i = 0; i < mh; i++) {
			uint32_t y = y0 + i < h ? y0 + i : h - 1;

			yr[i] = p->plane[0] + (size_t)y * p->stride[0];
		}
		for (uint32_t i = 0; i < 8; i++) {
			uint32_t ch = (h + (1u << vs) - 1) >> vs, y = (y0 >> vs) + i < ch ? (y0 >> vs) + i : ch - 1;

			ur[i] = p->plane[1] + (size_t)y * p->stride[1];
			vr[i] = p->plane[2] + (size_t)y * p->stride[2];
		}
		jpeg_write_raw_data(&r->c, planes, mh);
	}
	jpeg_finish_compress(&r->c);
	return sz;
}

/* Common way: YUYV to a YCbCr 4:4:4 scanline per row, write_scanlines. */
static size_t common_encode(struct ref *r, const struct vc_image *p, uint8_t *line)
{
	unsigned long sz = r->size;
	uint32_t w = p->width;

	jpeg_mem_dest(&r->c, &r->buf, &sz);
	jpeg_start_compress(&r->c, TRUE);
	while (r->c.next_scanline < p->height) {
		const uint8_t *s = p->plane[0] + (size_t)r->c.next_scanline * p->stride[0];
		JSAMPROW row = line;

		for (uint32_t x = 0; x < w; x += 2, s += 4) {
			uint8_t *d = line + 3 * x;

			d[0] = s[0];
			d[1] = s[1];
			d[2] = s[3];
			d[3] = s[2];
			d[4] = s[1];
			d[5] = s[3];
		}
		jpeg_write_scanlines(&r->c, &row, 1);
	}
	jpeg_finish_compress(&r->c);
	return sz;
}

/* ---- timing: every cell runs in each of several rounds, interleaved, and
 * keeps its fastest round, so a burst of load from other processes on the
 * shared cores does not land on one cell only. */

enum { C_FLOOR420, C_FLOOR422, C_COMMON, C_OURS };

struct cell {
	const char *label;
	int kind, ss, ref; /* ref: index of the floor cell to compare with */
	int common;        /* also compare with the common way */
	struct src src;
	struct ref r;
	double best;       /* seconds per frame */
	double rt[16];     /* seconds per frame in each round */
	size_t bytes;
};

/* Median over rounds of ref time / our time (n <= 16). */
static double median_ratio(const struct cell *ref, const struct cell *our, int n)
{
	double r[16];

	for (int i = 0; i < n; i++) {
		double v = ref->rt[i] / our->rt[i];
		int k = i;

		for (; k > 0 && r[k - 1] > v; k--) /* insertion sort */
			r[k] = r[k - 1];
		r[k] = v;
	}
	return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

static size_t run_once(struct cell *c, struct vc_jpeg *j, uint8_t *out, size_t cap, uint8_t *line)
{
	size_t len = 0;
	int r;

	switch (c->kind) {
	case C_FLOOR420: return floor_encode(&c->r, &c->src.img, 1);
	case C_FLOOR422: return floor_encode(&c->r, &c->src.img, 0);
	case C_COMMON: return common_encode(&c->r, &c->src.img, line);
	default:
		r = vc_jpeg_encode_ss(j, &c->src.img, 80, c->ss, out, cap, &len);
		if (r < 0) {
			fprintf(stderr, "%s: encode failed: %d\n", c->label, r);
			exit(1);
		}
		return len;
	}
}

/* The MJPEG camera path: what each step costs on a webcam-like 4:2:2 JPEG
 * (q85, as many cameras send): validate, insert DHT, decode (full and DCT-
 * scaled) to I420 and RGB24, lossless rotation. */
static double time_it(double secs, int (*fn)(void *), void *arg)
{
	double best = 1e30;

	for (int r = 0; r < 5; r++) {
		int n = 0;
		double t0 = now(), t;

		do {
			if (fn(arg) < 0) {
				fprintf(stderr, "mjpeg path step failed\n");
				exit(1);
			}
			n++;
		} while ((t = now() - t0) < secs / 5);
		if (t / n < best)
			best = t / n;
	}
	return best;
}

struct mj {
	struct vc_jpeg *j;
	const uint8_t *jpg, *nodht;
	size_t len, nlen;
	uint8_t *out;
	size_t cap;
	int denom;
	struct vc_image dst;
};

static int step_parse(void *a)
{
	struct mj *m = a;
	struct vc_jpeg_info info;

	return vc_jpeg_parse(m->jpg, m->len, &info);
}

static int step_add_dht(void *a)
{
	struct mj *m = a;
	size_t l;

	return vc_jpeg_add_dht(m->nodht, m->nlen, m->out, m->cap, &l);
}

static int step_decode(void *a)
{
	struct mj *m = a;

	return vc_jpeg_decode(m->j, m->jpg, m->len, m->denom, &m->dst);
}

static int step_rot90(void *a)
{
	struct mj *m = a;
	size_t l;
	uint32_t w, h;

	return vc_jpeg_transform(m->j, m->jpg, m->len, 90, 0, m->out, m->cap, &l, &w, &h);
}

static void mjpeg_path(void)
{
	static const struct { uint32_t w, h; } sizes[] = { { 640, 480 }, { 1280, 720 }, { 1920, 1080 } };

	printf("MJPEG camera path (4:2:2 q85 JPEG in), ms per frame:\n");
	printf("  %-11s %7s %7s %8s %8s %8s %8s %8s\n", "size", "parse", "add_dht", "->I420", "->I420/2",
	       "->I420/4", "->RGB24", "rot90");
	for (size_t si = 0; si < 3; si++) {
		uint32_t w = sizes[si].w, h = sizes[si].h;
		size_t n = (size_t)w * h;
		uint8_t *Y = malloc(n), *U = malloc(n), *V = malloc(n);
		struct src s;
		struct mj m;
		double t[7];

		memset(&m, 0, sizeof(m));
		picture(w, h, Y, U, V);
		make_src("YUYV", w, h, Y, U, V, &s, 0);
		s.img.color.quantization = V4L2_QUANTIZATION_FULL_RANGE;
		m.j = vc_jpeg_new();
		m.cap = vc_jpeg_bound(w, h);
		m.out = malloc(m.cap);
		uint8_t *jpg = malloc(m.cap), *nodht = malloc(m.cap);
		if (vc_jpeg_encode(m.j, &s.img, 85, jpg, m.cap, &m.len) < 0 ||
		    vc_jpeg_strip_dht(jpg, m.len, nodht, m.cap, &m.nlen) < 0)
			exit(1);
		m.jpg = jpg;
		m.nodht = nodht;
		t[0] = time_it(seconds, step_parse, &m);
		t[1] = time_it(seconds, step_add_dht, &m);
		int denoms[3] = { 1, 2, 4 };
		for (int d = 0; d < 3; d++) {
			struct src o;
			uint32_t sw = vc_jpeg_scaled(w, denoms[d]), sh = vc_jpeg_scaled(h, denoms[d]);

			make_src("YU12", sw, sh, Y, U, V, &o, 0); /* contents overwritten */
			m.dst = o.img;
			m.denom = denoms[d];
			t[2 + d] = time_it(seconds, step_decode, &m);
			free(o.mem);
		}
		struct src o;
		make_src("RGB24", w, h, Y, U, V, &o, 0);
		m.dst = o.img;
		m.denom = 1;
		t[5] = time_it(seconds, step_decode, &m);
		free(o.mem);
		t[6] = time_it(seconds, step_rot90, &m);
		printf("  %4ux%-6u %7.3f %7.3f %8.2f %8.2f %8.2f %8.2f %8.2f\n", w, h, t[0] * 1e3,
		       t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, t[4] * 1e3, t[5] * 1e3, t[6] * 1e3);
		vc_jpeg_free(m.j);
		free(m.out);
		free(jpg);
		free(nodht);
		free(s.mem);
		free(Y);
		free(U);
		free(V);
	}
}

int main(void)
{
	static const struct { uint32_t w, h; } sizes[] = { { 640, 480 }, { 1280, 720 }, { 1920, 1080 } };
	static const struct { const char *fmt, *label; int kind, full, ss, ref, common; } defs[] = {
		{ "YU12", "floor raw 4:2:0 (I420)", C_FLOOR420, 1, 0, -1, 0 },
		{ "422P", "floor raw 4:2:2 (I422)", C_FLOOR422, 1, 0, -1, 0 },
		{ "YUYV", "common YUYV scanlines 4:2:0", C_COMMON, 1, 0, -1, 0 },
		{ "YUYV", "YUYV full 4:2:2", C_OURS, 1, VC_JPEG_SS_AUTO, 1, 1 },
		{ "YUYV", "YUYV limited 4:2:2", C_OURS, 0, VC_JPEG_SS_AUTO, 1, 1 },
		{ "YUYV", "YUYV full ->4:2:0", C_OURS, 1, VC_JPEG_SS_420, 0, 1 },
		{ "YUYV", "YUYV limited ->4:2:0", C_OURS, 0, VC_JPEG_SS_420, 0, 1 },
		{ "UYVY", "UYVY full 4:2:2", C_OURS, 1, VC_JPEG_SS_AUTO, 1, 0 },
		{ "NV12", "NV12 full 4:2:0", C_OURS, 1, VC_JPEG_SS_AUTO, 0, 0 },
		{ "NV12", "NV12 limited 4:2:0", C_OURS, 0, VC_JPEG_SS_AUTO, 0, 0 },
		{ "YU12", "I420 full 4:2:0", C_OURS, 1, VC_JPEG_SS_AUTO, 0, 0 },
		{ "YU12", "I420 limited 4:2:0", C_OURS, 0, VC_JPEG_SS_AUTO, 0, 0 },
		{ "RGB24", "RGB24 4:2:0", C_OURS, 1, VC_JPEG_SS_AUTO, 0, 0 },
		{ "GREY", "GREY", C_OURS, 1, VC_JPEG_SS_AUTO, 0, 0 },
	};
	enum { NDEF = sizeof(defs) / sizeof(defs[0]), ROUNDS = 9 };
	const char *env = getenv("VC_BENCH_SECONDS");
	const char *quick = getenv("VC_BENCH_QUICK");
	int q = quick && *quick && strcmp(quick, "0");

	if (env)
		seconds = atof(env);
	printf("bench_jpeg: ->JPEG q80, one thread, %.1f s of thread CPU time per cell in %d "
	       "interleaved rounds (fastest round kept)\n", seconds, ROUNDS);
	for (size_t si = q ? 2 : 0; si < 3; si++) {
		uint32_t w = sizes[si].w, h = sizes[si].h;
		size_t n = (size_t)w * h, cap = vc_jpeg_bound(w, h);
		uint8_t *Y = malloc(n), *U = malloc(n), *V = malloc(n), *out = malloc(cap);
		uint8_t *line = malloc((size_t)w * 3);
		struct vc_jpeg *j = vc_jpeg_new();
		struct cell cells[NDEF];

		picture(w, h, Y, U, V);
		memset(cells, 0, sizeof(cells));
		for (int k = 0; k < NDEF; k++) {
			struct cell *c = &cells[k];

			c->label = defs[k].label;
			c->kind = defs[k].kind;
			c->ss = defs[k].ss;
			c->ref = defs[k].ref;
			c->common = defs[k].common;
			c->best = 1e30;
			if (make_src(defs[k].fmt, w, h, Y, U, V, &c->src, !defs[k].full) < 0) {
				fprintf(stderr, "no %s in the format table\n", defs[k].fmt);
				return 1;
			}
			c->src.img.color.quantization = defs[k].full ? V4L2_QUANTIZATION_FULL_RANGE
								     : V4L2_QUANTIZATION_LIM_RANGE;
			if (c->kind != C_OURS)
				ref_init(&c->r, w, h, c->kind != C_COMMON, c->kind == C_FLOOR422 ? 1 : 2);
			for (int wu = 0; wu < 2; wu++) /* warm up */
				c->bytes = run_once(c, j, out, cap, line);
		}
		for (int round = 0; round < ROUNDS; round++)
			for (int k = 0; k < NDEF; k++) {
				struct cell *c = &cells[k];
				int frames = 0;
				double t0 = now(), t;

				do {
					c->bytes = run_once(c, j, out, cap, line);
					frames++;
				} while ((t = now() - t0) < seconds / ROUNDS);
				c->rt[round] = t / frames;
				if (t / frames < c->best)
					c->best = t / frames;
			}
		printf("%ux%u\n", w, h);
		for (int k = 0; k < NDEF; k++) {
			struct cell *c = &cells[k];

			printf("  %-28s %8.1f fps %7.2f ms %6.2f ns/px %8zu B", c->label, 1 / c->best,
			       1e3 * c->best, 1e9 * c->best / (double)n, c->bytes);
			if (c->ref >= 0)
				printf("  our/floor %.2f", cells[c->ref].best / c->best);
			if (c->common)
				printf("  our/common %.2f", cells[2].best / c->best);
			printf("\n");
		}
		if (si == 2) { /* the targets, at 1080p */
			struct { int k, vs; double min; const char *what; } t[] = {
				{ 4, 1, 0.9, "YUYV limited 4:2:2 / floor 4:2:2" },
				{ 3, 1, 0.9, "YUYV full 4:2:2 / floor 4:2:2" },
				{ 4, 2, 1.6, "YUYV limited 4:2:2 / common" },
				{ 6, 2, 1.6, "YUYV limited ->4:2:0 / common (same output)" },
				{ 8, 0, 0.95, "NV12 full / floor 4:2:0" },
				{ 10, 0, 0.95, "I420 full / floor 4:2:0" },
				{ 9, 0, 0.95, "NV12 limited / floor 4:2:0" },
			};
			printf("targets at 1920x1080 (noise: 'I420 full' runs the floor's own path);\n"
			       "ratio of the fastest rounds, and the median of the %d per-round ratios\n"
			       "(each round runs the two cells back to back):\n", ROUNDS);
			for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
				double ratio = cells[t[i].vs].best / cells[t[i].k].best;
				double med = median_ratio(&cells[t[i].vs], &cells[t[i].k], ROUNDS);

				printf("  %-44s %.2f, median %.2f (target >= %.2f): %s\n", t[i].what, ratio,
				       med, t[i].min, ratio >= t[i].min && med >= t[i].min ? "met"
				       : ratio >= t[i].min ? "met by the fastest round only" : "NOT met");
			}
		}
		for (int k = 0; k < NDEF; k++) {
			if (cells[k].kind != C_OURS) {
				jpeg_destroy_compress(&cells[k].r.c);
				free(cells[k].r.buf);
			}
			free(cells[k].src.mem);
		}
		vc_jpeg_free(j);
		free(Y);
		free(U);
		free(V);
		free(out);
		free(line);
	}
	if (!q)
		mjpeg_path();
	printf("our/floor: against the 4:2:2 floor for 4:2:2 output, the 4:2:0 floor for 4:2:0 "
	       "output; our/common: against the common way (4:2:0 output)\n");
	return 0;
}
