/* m2m_conv_check: vim2m, the kernel's virtual M2M converter, against vcapd's
 * CPU converter (common/convert.h) on the same vivid frames, inside the
 * vivid-vm guest (tests/vm/boot_m2m.sh).
 *
 *   m2m_conv_check CAM CONV [--tag T]
 *
 * For each pair below that vim2m offers (ENUM_FMT on both queues), vivid
 * captures one 640x480 frame in the input format; it goes through vim2m
 * (S_FMT both queues, one MMAP buffer each, QBUF, STREAMON, DQBUF: the plain
 * M2M ioctl sequence) and through vc_conv_run(); the two outputs are compared
 * channel by channel (R G B in the format's own bits, or Y U V), and the
 * largest difference must stay within the pair's tolerance, measured here
 * against vim2m of Linux 6.1 and explained:
 *   RGB24->BGR24     0: a byte shuffle.
 *   RGB24->RGB565    0, with one exception modelled exactly: vim2m writes the
 *                    left pixel of each horizontal pair into both output
 *                    pixels, so an odd column may equal the CPU's pixel to
 *                    its left instead (counted as "pair copies"; seen only
 *                    where vivid's text has an edge between the two).
 *   RGB565->RGB24    7 (R, B), 3 (G): vim2m widens a 5/6-bit sample by a shift
 *                    with the new low bits set to 1 (0 -> 7, 23 -> 191),
 *                    libyuv replicates the high bits (0 -> 0, 23 -> 189,
 *                    31 -> 255): the difference is 7 - (v >> 2) for 5 bits,
 *                    3 - (v >> 4) for 6 bits.
 *   RGB24->YUYV      1: both produce limited-range BT.601; integer rounding.
 *   RGB565->YUYV     Y 5, U 4, V 4: the widening difference above (R, B up to
 *                    +7, G up to +3, never negative) through the BT.601
 *                    matrix (Y +4.0, U and V -1.9..+3.1) plus 1 of rounding.
 * vivid's test picture changes colour only at even columns (its bars) and its
 * text is grey, so the two converters' ways of subsampling chroma between
 * two different neighbours are not exercised by it.
 * Prints "m2m_conv.<tag>.<pair>: OK|FAIL (figures)"; exit 0 when all passed. */
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/convert.h"
#include "common/image.h"

#define W 640
#define H 480

static const char *tag = "single";
static int failed;

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;
	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* A tight picture of one packed format. */
struct pic {
	uint32_t fourcc, bpl;
	uint8_t *data;
	size_t len;
};

static int wait_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 5000) == 1 ? 0 : -ETIMEDOUT;
}

/* Copies one buffer's rows (stride sbpl) into a tight picture. */
static int pic_fill(struct pic *p, uint32_t fourcc, const uint8_t *src, uint32_t sbpl)
{
	const struct vc_fmt *f = vc_fmt_by_fourcc(fourcc);
	struct vc_geom g;
	if (!f || vc_fmt_geometry(f, W, H, 0, &g) < 0)
		return -EINVAL;
	p->fourcc = fourcc;
	p->bpl = g.plane[0].stride;
	p->len = (size_t)p->bpl * H;
	if (!(p->data = malloc(p->len)))
		return -ENOMEM;
	for (unsigned y = 0; y < H; y++)
		memcpy(p->data + (size_t)y * p->bpl, src + (size_t)y * sbpl, p->bpl);
	return 0;
}

/* One frame from vivid in fourcc (the third, past start-up). */
static int capture(const char *path, uint32_t fourcc, struct pic *out)
{
	int fd = open(path, O_RDWR | O_NONBLOCK), r;
	uint32_t t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_format f = { .type = t };
	struct v4l2_requestbuffers rb = { .count = 2, .type = t, .memory = V4L2_MEMORY_MMAP };
	void *map[2] = { MAP_FAILED, MAP_FAILED };
	size_t len[2] = { 0, 0 };

	if (fd < 0)
		return -errno;
	f.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H, .pixelformat = fourcc,
					      .field = V4L2_FIELD_NONE };
	if ((r = xioctl(fd, VIDIOC_S_FMT, &f)) < 0 || (r = f.fmt.pix.pixelformat == fourcc &&
							  f.fmt.pix.width == W && f.fmt.pix.height == H ? 0 : -EINVAL) < 0 ||
	    (r = xioctl(fd, VIDIOC_REQBUFS, &rb)) < 0)
		goto out;
	for (unsigned i = 0; i < 2 && i < rb.count; i++) {
		struct v4l2_buffer b = { .index = i, .type = t, .memory = V4L2_MEMORY_MMAP };
		if ((r = xioctl(fd, VIDIOC_QUERYBUF, &b)) < 0)
			goto out;
		len[i] = b.length;
		map[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, b.m.offset);
		if (map[i] == MAP_FAILED || (r = xioctl(fd, VIDIOC_QBUF, &b)) < 0) {
			r = r < 0 ? r : -errno;
			goto out;
		}
	}
	if ((r = xioctl(fd, VIDIOC_STREAMON, &t)) < 0)
		goto out;
	for (int k = 0; k < 3; k++) {
		struct v4l2_buffer b = { .type = t, .memory = V4L2_MEMORY_MMAP };
		if ((r = wait_in(fd)) < 0 || (r = xioctl(fd, VIDIOC_DQBUF, &b)) < 0)
			goto out;
		if (k == 2)
			r = pic_fill(out, fourcc, map[b.index], f.fmt.pix.bytesperline);
		else if ((r = xioctl(fd, VIDIOC_QBUF, &b)) < 0)
			goto out;
	}
out:
	xioctl(fd, VIDIOC_STREAMOFF, &t);
	for (unsigned i = 0; i < 2; i++)
		if (map[i] != MAP_FAILED)
			munmap(map[i], len[i]);
	close(fd);
	return r;
}

static int offers(int fd, uint32_t type, uint32_t fourcc)
{
	for (uint32_t i = 0; i < 64; i++) {
		struct v4l2_fmtdesc d = { .index = i, .type = type };
		if (xioctl(fd, VIDIOC_ENUM_FMT, &d) < 0)
			return 0;
		if (d.pixelformat == fourcc)
			return 1;
	}
	return 0;
}

/* Maps buffer 0 of a queue set up with one MMAP buffer. */
static void *map0(int fd, uint32_t type, size_t *len)
{
	struct v4l2_buffer b = { .index = 0, .type = type, .memory = V4L2_MEMORY_MMAP };
	if (xioctl(fd, VIDIOC_QUERYBUF, &b) < 0)
		return MAP_FAILED;
	*len = b.length;
	return mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
}

/* in through the converter at fd into out (a tight picture of fourcc). */
static int m2m_convert(int fd, const struct pic *in, uint32_t fourcc, struct pic *out)
{
	uint32_t ot = V4L2_BUF_TYPE_VIDEO_OUTPUT, ct = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_format fo = { .type = ot }, fc = { .type = ct };
	struct v4l2_requestbuffers rb = { .count = 1, .memory = V4L2_MEMORY_MMAP };
	void *om = MAP_FAILED, *cm = MAP_FAILED;
	size_t olen = 0, clen = 0;
	int r;

	fo.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H, .pixelformat = in->fourcc,
					       .field = V4L2_FIELD_NONE };
	fc.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H, .pixelformat = fourcc,
					       .field = V4L2_FIELD_NONE };
	if ((r = xioctl(fd, VIDIOC_S_FMT, &fo)) < 0 || (r = xioctl(fd, VIDIOC_S_FMT, &fc)) < 0)
		return r;
	if (fo.fmt.pix.pixelformat != in->fourcc || fc.fmt.pix.pixelformat != fourcc ||
	    fo.fmt.pix.width != W || fc.fmt.pix.width != W || fo.fmt.pix.height != H || fc.fmt.pix.height != H)
		return -EINVAL;
	rb.type = ot;
	if ((r = xioctl(fd, VIDIOC_REQBUFS, &rb)) < 0)
		return r;
	rb.type = ct;
	rb.count = 1;
	if ((r = xioctl(fd, VIDIOC_REQBUFS, &rb)) < 0)
		goto out;
	om = map0(fd, ot, &olen);
	cm = map0(fd, ct, &clen);
	if (om == MAP_FAILED || cm == MAP_FAILED || olen < (size_t)fo.fmt.pix.bytesperline * H) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned y = 0; y < H; y++)
		memcpy((uint8_t *)om + (size_t)y * fo.fmt.pix.bytesperline, in->data + (size_t)y * in->bpl, in->bpl);
	struct v4l2_buffer bo = { .index = 0, .type = ot, .memory = V4L2_MEMORY_MMAP,
				  .bytesused = fo.fmt.pix.sizeimage, .field = V4L2_FIELD_NONE };
	struct v4l2_buffer bc = { .index = 0, .type = ct, .memory = V4L2_MEMORY_MMAP };
	if ((r = xioctl(fd, VIDIOC_QBUF, &bo)) < 0 || (r = xioctl(fd, VIDIOC_QBUF, &bc)) < 0 ||
	    (r = xioctl(fd, VIDIOC_STREAMON, &ot)) < 0 || (r = xioctl(fd, VIDIOC_STREAMON, &ct)) < 0 ||
	    (r = wait_in(fd)) < 0 || (r = xioctl(fd, VIDIOC_DQBUF, &bc)) < 0)
		goto out;
	r = bc.bytesused < fc.fmt.pix.sizeimage ? -EIO : pic_fill(out, fourcc, cm, fc.fmt.pix.bytesperline);
out:
	xioctl(fd, VIDIOC_STREAMOFF, &ot);
	xioctl(fd, VIDIOC_STREAMOFF, &ct);
	if (om != MAP_FAILED)
		munmap(om, olen);
	if (cm != MAP_FAILED)
		munmap(cm, clen);
	rb.count = 0;
	rb.type = ot;
	xioctl(fd, VIDIOC_REQBUFS, &rb);
	rb.count = 0;
	rb.type = ct;
	xioctl(fd, VIDIOC_REQBUFS, &rb);
	return r;
}

static int cpu_convert(const struct pic *in, uint32_t fourcc, struct pic *out)
{
	const struct vc_fmt *sf = vc_fmt_by_fourcc(in->fourcc), *df = vc_fmt_by_fourcc(fourcc);
	struct vc_geom sg, dg;
	struct vc_image s, d;
	struct vc_conv *c = vc_conv_new();
	int r = -EINVAL;

	if (c && sf && df && vc_fmt_geometry(sf, W, H, in->bpl, &sg) == 0 &&
	    vc_fmt_geometry(df, W, H, 0, &dg) == 0) {
		out->fourcc = fourcc;
		out->bpl = dg.plane[0].stride;
		out->len = (size_t)out->bpl * H;
		out->data = calloc(1, out->len);
		uint8_t *sm[3] = { in->data }, *dm[3] = { out->data };
		vc_image_from_geom(sf, &sg, sm, &s);
		vc_image_from_geom(df, &dg, dm, &d);
		r = out->data ? vc_conv_run(c, &s, &d) : -ENOMEM;
	}
	vc_conv_free(c);
	return r;
}

/* Channel ch (0..2) of pixel (x, y): R G B in the format's own bits, or Y U V. */
static int chan(const struct pic *p, unsigned x, unsigned y, int ch)
{
	const uint8_t *row = p->data + (size_t)y * p->bpl;
	switch (p->fourcc) {
	case V4L2_PIX_FMT_RGB24:
		return row[x * 3 + ch];
	case V4L2_PIX_FMT_BGR24:
		return row[x * 3 + 2 - ch];
	case V4L2_PIX_FMT_RGB565: {
		unsigned v = row[x * 2] | row[x * 2 + 1] << 8;
		return ch == 0 ? v >> 11 : ch == 1 ? (v >> 5) & 63 : v & 31;
	}
	case V4L2_PIX_FMT_YUYV:
		return ch == 0 ? row[x * 2] : row[(x & ~1u) * 2 + (ch == 1 ? 1 : 3)];
	}
	return 0;
}

/* VCAP_CONV_DUMP=DIR: the pictures go to DIR/<pair>.<what> for a closer look. */
static void dump(const char *pair, const char *what, const struct pic *p)
{
	const char *dir = getenv("VCAP_CONV_DUMP");
	char path[512];
	if (!dir || !p->data)
		return;
	snprintf(path, sizeof(path), "%s/%s.%s", dir, pair, what);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p->data, 1, p->len, f);
		fclose(f);
	}
}

struct pair {
	uint32_t in, out;
	const char *name, *chans;
	int tol[3];
	int pair_copy; /* an odd column may repeat its left neighbour (see top) */
};

/* tolerances measured and explained at the top of this file */
static const struct pair pairs[] = {
	{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24, "rgb24_bgr24", "RGB", { 0, 0, 0 }, 0 },
	{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_RGB565, "rgb24_rgb565", "RGB", { 0, 0, 0 }, 1 },
	{ V4L2_PIX_FMT_RGB565, V4L2_PIX_FMT_RGB24, "rgb565_rgb24", "RGB", { 7, 3, 7 }, 0 },
	{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUYV, "rgb24_yuyv", "YUV", { 1, 1, 1 }, 0 },
	{ V4L2_PIX_FMT_RGB565, V4L2_PIX_FMT_YUYV, "rgb565_yuyv", "YUV", { 5, 4, 4 }, 0 },
};

/* Pixel (x, y) of a equals pixel (x2, y) of b in every channel. */
static int same_px(const struct pic *a, unsigned x, const struct pic *b, unsigned x2, unsigned y)
{
	for (int c = 0; c < 3; c++)
		if (chan(a, x, y, c) != chan(b, x2, y, c))
			return 0;
	return 1;
}

static void check_pair(const char *cam, int fd, const struct pair *pr)
{
	struct pic in = { 0 }, hw = { 0 }, sw = { 0 };
	char msg[512] = "";
	int ok = 0, r;

	if (!offers(fd, V4L2_BUF_TYPE_VIDEO_OUTPUT, pr->in) || !offers(fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, pr->out))
		snprintf(msg, sizeof(msg), "the converter does not offer this pair");
	else if ((r = capture(cam, pr->in, &in)) < 0)
		snprintf(msg, sizeof(msg), "vivid capture: %s", strerror(-r));
	else if ((r = m2m_convert(fd, &in, pr->out, &hw)) < 0)
		snprintf(msg, sizeof(msg), "M2M conversion: %s", strerror(-r));
	else if ((r = cpu_convert(&in, pr->out, &sw)) < 0)
		snprintf(msg, sizeof(msg), "vc_conv_run: %s", strerror(-r));
	else {
		int max[3] = { 0, 0, 0 }, worst = 0;
		unsigned long differ = 0, n = 0;
		unsigned wx = 0, wy = 0;
		unsigned long copies = 0;
		double sum = 0;
		for (unsigned y = 0; y < H; y++)
			for (unsigned x = 0; x < W; x++) {
				if (pr->pair_copy && (x & 1) && !same_px(&hw, x, &sw, x, y) &&
				    same_px(&hw, x, &sw, x - 1, y)) {
					copies++;
					n += 3;
					continue;
				}
				for (int c = 0; c < 3; c++) {
					int d = abs(chan(&hw, x, y, c) - chan(&sw, x, y, c));
					max[c] = d > max[c] ? d : max[c];
					if (d > worst) {
						worst = d;
						wx = x;
						wy = y;
					}
					differ += d != 0;
					sum += d;
					n++;
				}
			}
		ok = max[0] <= pr->tol[0] && max[1] <= pr->tol[1] && max[2] <= pr->tol[2];
		snprintf(msg, sizeof(msg),
			 "640x480, max |diff| %c %d %c %d %c %d (allowed %d %d %d), %.2f %% of samples differ, mean %.3f%s, %lu odd pixels copied from their left neighbour",
			 pr->chans[0], max[0], pr->chans[1], max[1], pr->chans[2], max[2], pr->tol[0], pr->tol[1],
			 pr->tol[2], 100.0 * differ / n, sum / n, differ ? "" : ": exact match", copies);
		if (worst) {
			size_t l = strlen(msg);
			snprintf(msg + l, sizeof(msg) - l, "; largest at %u,%u: M2M %d %d %d, CPU %d %d %d, input %d %d %d",
				 wx, wy, chan(&hw, wx, wy, 0), chan(&hw, wx, wy, 1), chan(&hw, wx, wy, 2),
				 chan(&sw, wx, wy, 0), chan(&sw, wx, wy, 1), chan(&sw, wx, wy, 2),
				 chan(&in, wx, wy, 0), chan(&in, wx, wy, 1), chan(&in, wx, wy, 2));
		}
	}
	dump(pr->name, "in", &in);
	dump(pr->name, "m2m", &hw);
	dump(pr->name, "cpu", &sw);
	printf("m2m_conv.%s.%s: %s (%s)\n", tag, pr->name, ok ? "OK" : "FAIL", msg);
	fflush(stdout);
	failed += !ok;
	free(in.data);
	free(hw.data);
	free(sw.data);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: m2m_conv_check CAM CONV [--tag T]\n");
		return 2;
	}
	if (argc >= 5 && !strcmp(argv[3], "--tag"))
		tag = argv[4];
	int fd = open(argv[2], O_RDWR);
	struct v4l2_capability cap;
	if (fd < 0 || xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0 || !(cap.device_caps & V4L2_CAP_VIDEO_M2M)) {
		printf("m2m_conv.%s.open: FAIL (%s: not a single-planar M2M device)\n", tag, argv[2]);
		return 1;
	}
	printf("m2m_conv.%s: %s (%s), vivid %s\n", tag, argv[2], (const char *)cap.card, argv[1]);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		check_pair(argv[1], fd, &pairs[i]);
	close(fd);
	printf("m2m_conv.%s: %d failed\n", tag, failed);
	return failed ? 1 : 0;
}
