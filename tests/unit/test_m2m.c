/* M2M discovery and classification (common/m2m.c, server/capture/m2m_discover.c)
 * against fake nodes: a table of QUERYCAP answers and format lists behind a
 * fake vc_m2m_io, each row with the roles it must get. Includes the Raspberry
 * Pi's bcm2835-codec layout (read from raspberrypi/linux
 * drivers/staging/vc04_services/bcm2835-codec), multi-planar only. */
#include <errno.h>
#include <limits.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/m2m.h"
#include "server/capture/m2m_discover.h"

#define C V4L2_FMT_FLAG_COMPRESSED
#define F(fcc) { fcc, 0 }
#define FC(fcc) { fcc, C }
#define SFWH v4l2_fourcc('S', 'F', 'W', 'H')
#define ODD1 v4l2_fourcc('Q', 'Q', 'Q', '1') /* a raw format the table does not know */

struct fake {
	int line;
	const char *name;  /* basename under the fake /dev */
	int err;           /* open fails with -err */
	uint32_t caps;     /* capabilities */
	uint32_t dcaps;    /* device_caps (used when caps has DEVICE_CAPS) */
	const char *driver, *card;
	struct vc_m2m_fmt out[12], cap[12]; /* terminated by fourcc 0 */
	int probe;         /* expected vc_m2m_probe result */
	unsigned roles;    /* expected roles */
};

#define DC V4L2_CAP_DEVICE_CAPS
#define MP (V4L2_CAP_VIDEO_M2M_MPLANE | V4L2_CAP_STREAMING)
#define SP (V4L2_CAP_VIDEO_M2M | V4L2_CAP_STREAMING)

static const struct fake nodes[] = {
	/* bcm2835-codec (Pi 3/4/Zero 2): all multi-planar */
	{ __LINE__, "video10", 0, MP | DC, MP, "bcm2835-codec", "bcm2835-codec-decode",
	  { FC(V4L2_PIX_FMT_H264), FC(V4L2_PIX_FMT_MJPEG), FC(V4L2_PIX_FMT_MPEG4),
	    FC(V4L2_PIX_FMT_H263), FC(V4L2_PIX_FMT_MPEG2), FC(V4L2_PIX_FMT_VC1_ANNEX_G) },
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_YVU420), F(V4L2_PIX_FMT_NV12),
	    F(V4L2_PIX_FMT_NV21), F(V4L2_PIX_FMT_RGB565) },
	  1, VC_M2M_DECODER },
	{ __LINE__, "video11", 0, MP | DC, MP, "bcm2835-codec", "bcm2835-codec-encode",
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_YVU420), F(V4L2_PIX_FMT_NV12),
	    F(V4L2_PIX_FMT_NV21), F(V4L2_PIX_FMT_RGB565), F(V4L2_PIX_FMT_YUYV),
	    F(V4L2_PIX_FMT_UYVY), F(V4L2_PIX_FMT_YVYU), F(V4L2_PIX_FMT_VYUY),
	    F(V4L2_PIX_FMT_RGB24), F(V4L2_PIX_FMT_BGR24), F(V4L2_PIX_FMT_BGR32) },
	  { FC(V4L2_PIX_FMT_H264) },
	  1, VC_M2M_H264_ENC },
	{ __LINE__, "video12", 0, MP | DC, MP, "bcm2835-codec", "bcm2835-codec-isp",
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_NV12), F(V4L2_PIX_FMT_YUYV),
	    F(V4L2_PIX_FMT_RGB24), F(V4L2_PIX_FMT_SRGGB8), F(V4L2_PIX_FMT_SBGGR10P),
	    F(V4L2_PIX_FMT_GREY) },
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_NV12), F(V4L2_PIX_FMT_RGB24),
	    F(V4L2_PIX_FMT_BGR24), F(V4L2_PIX_FMT_YUYV) },
	  1, VC_M2M_CONVERTER },
	{ __LINE__, "video31", 0, MP | DC, MP, "bcm2835-codec", "bcm2835-codec-image_encode",
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_NV12), F(V4L2_PIX_FMT_YUYV),
	    F(V4L2_PIX_FMT_RGB24), F(V4L2_PIX_FMT_BGR32) },
	  { FC(V4L2_PIX_FMT_JPEG) },
	  1, VC_M2M_JPEG_ENC },
	/* vicodec (the test guest), single-planar by default */
	{ __LINE__, "video5", 0, SP | DC, SP, "vicodec", "vicodec",
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_NV12), F(V4L2_PIX_FMT_YUYV),
	    F(V4L2_PIX_FMT_GREY), F(V4L2_PIX_FMT_HSV24) },
	  { FC(V4L2_PIX_FMT_FWHT) },
	  1, VC_M2M_VIDEO_ENC },
	{ __LINE__, "video6", 0, SP | DC, SP, "vicodec", "vicodec",
	  { FC(V4L2_PIX_FMT_FWHT) },
	  { F(V4L2_PIX_FMT_YUV420), F(V4L2_PIX_FMT_NV12), F(V4L2_PIX_FMT_YUYV) },
	  1, VC_M2M_DECODER },
	{ __LINE__, "video7", 0, SP | DC, SP, "vicodec", "vicodec",
	  { FC(SFWH) },
	  { F(V4L2_PIX_FMT_YUV420) },
	  1, VC_M2M_DECODER },
	/* vim2m: raw to raw, Bayer out counts as raw */
	{ __LINE__, "video4", 0, SP | DC, SP, "vim2m", "vim2m",
	  { F(V4L2_PIX_FMT_RGB565), F(V4L2_PIX_FMT_RGB565X), F(V4L2_PIX_FMT_RGB24),
	    F(V4L2_PIX_FMT_BGR24) },
	  { F(V4L2_PIX_FMT_RGB24), F(V4L2_PIX_FMT_YUYV), F(V4L2_PIX_FMT_SBGGR8) },
	  1, VC_M2M_CONVERTER },
	/* an old driver without device_caps: capabilities decide */
	{ __LINE__, "video20", 0, SP, 0, "old", "old-jpeg",
	  { F(V4L2_PIX_FMT_YUYV) },
	  { F(V4L2_PIX_FMT_MJPEG) }, /* no COMPRESSED flag: the format table knows */
	  1, VC_M2M_JPEG_ENC },
	/* the node's device_caps win over the whole device's capabilities */
	{ __LINE__, "video21", 0, SP | V4L2_CAP_VIDEO_CAPTURE | DC,
	  V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING, "uvcvideo", "camera", { F(0) }, { F(0) },
	  0, 0 },
	/* one node, several roles: raw and JPEG out, H.264 without the flag */
	{ __LINE__, "video22", 0, MP | DC, MP, "multi", "multi",
	  { F(V4L2_PIX_FMT_NV12) },
	  { F(V4L2_PIX_FMT_NV12), FC(V4L2_PIX_FMT_JPEG), F(V4L2_PIX_FMT_H264) },
	  1, VC_M2M_CONVERTER | VC_M2M_JPEG_ENC | VC_M2M_H264_ENC },
	/* formats vcapd does not know: listed, no role */
	{ __LINE__, "video23", 0, SP | DC, SP, "odd", "odd",
	  { F(ODD1) }, { FC(V4L2_PIX_FMT_HEVC) },
	  1, 0 },
	/* compressed in and compressed out (a transcoder): no role of ours */
	{ __LINE__, "video24", 0, SP | DC, SP, "tc", "transcoder",
	  { FC(V4L2_PIX_FMT_H264) }, { FC(V4L2_PIX_FMT_HEVC) },
	  1, 0 },
	{ __LINE__, "video25", EACCES, 0, 0, "", "", { F(0) }, { F(0) }, -EACCES, 0 },
};

#define N_NODES (sizeof(nodes) / sizeof(nodes[0]))

static const struct fake *by_fd(int fd)
{
	return fd >= 100 && (size_t)(fd - 100) < N_NODES ? &nodes[fd - 100] : NULL;
}

static int fake_open(void *opaque, const char *path)
{
	const char *base = strrchr(path, '/');
	int *open_fds = opaque;

	base = base ? base + 1 : path;
	for (size_t i = 0; i < N_NODES; i++)
		if (strcmp(nodes[i].name, base) == 0) {
			if (nodes[i].err)
				return -nodes[i].err;
			(*open_fds)++;
			return 100 + (int)i;
		}
	return -ENOENT;
}

static size_t fmt_count(const struct vc_m2m_fmt *l)
{
	size_t n = 0;
	while (n < 12 && l[n].fourcc)
		n++;
	return n;
}

static int fake_ioctl(void *opaque, int fd, unsigned long req, void *arg)
{
	const struct fake *f = by_fd(fd);

	(void)opaque;
	if (!f)
		return -EBADF;
	if (req == VIDIOC_QUERYCAP) {
		struct v4l2_capability *c = arg;
		memset(c, 0, sizeof(*c));
		snprintf((char *)c->driver, sizeof(c->driver), "%s", f->driver);
		snprintf((char *)c->card, sizeof(c->card), "%s", f->card);
		snprintf((char *)c->bus_info, sizeof(c->bus_info), "platform:%s", f->driver);
		c->capabilities = f->caps;
		c->device_caps = f->dcaps;
		return 0;
	}
	if (req == VIDIOC_ENUM_FMT) {
		struct v4l2_fmtdesc *d = arg;
		uint32_t caps = (f->caps & DC) ? f->dcaps : f->caps;
		int mp = !(caps & V4L2_CAP_VIDEO_M2M);
		/* like the kernel: the other API's buffer types are refused */
		const struct vc_m2m_fmt *l =
			d->type == (mp ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE : V4L2_BUF_TYPE_VIDEO_OUTPUT)
				? f->out
			: d->type == (mp ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE
					 : V4L2_BUF_TYPE_VIDEO_CAPTURE)
				? f->cap
				: NULL;
		if (!l || d->index >= fmt_count(l))
			return -EINVAL;
		d->pixelformat = l[d->index].fourcc;
		d->flags = l[d->index].flags;
		return 0;
	}
	return -ENOTTY;
}

static void fake_close(void *opaque, int fd)
{
	int *open_fds = opaque;
	if (by_fd(fd))
		(*open_fds)--;
}

static int open_fds;
static const struct vc_m2m_io fake_io = { fake_open, fake_ioctl, fake_close, &open_fds };

static void classify_table(void)
{
	for (size_t i = 0; i < N_NODES; i++) {
		const struct fake *f = &nodes[i];
		struct vc_m2m_node m;
		char path[64];

		snprintf(path, sizeof(path), "/dev/%s", f->name);
		int r = vc_m2m_probe(&fake_io, path, &m);
		CHECK_AT(f->line, r == f->probe, "%s: probe %d, want %d", f->name, r, f->probe);
		if (r <= 0)
			continue;
		CHECK_AT(f->line, m.roles == f->roles, "%s: roles 0x%x, want 0x%x", f->name,
			 m.roles, f->roles);
		CHECK_AT(f->line, m.n_out == fmt_count(f->out) && m.n_cap == fmt_count(f->cap),
			 "%s: %zu/%zu formats, want %zu/%zu", f->name, m.n_out, m.n_cap,
			 fmt_count(f->out), fmt_count(f->cap));
		CHECK_AT(f->line, !strcmp(m.card, f->card) && !strcmp(m.driver, f->driver),
			 "%s: card '%s' driver '%s'", f->name, m.card, m.driver);
		uint32_t caps = (f->caps & DC) ? f->dcaps : f->caps;
		CHECK_AT(f->line, m.mplane == !(caps & V4L2_CAP_VIDEO_M2M), "%s: mplane %d",
			 f->name, m.mplane);
		CHECK_AT(f->line, m.n_cap && m.cap[0].fourcc == f->cap[0].fourcc,
			 "%s: first CAPTURE format", f->name);
	}
	CHECK(open_fds == 0, "%d fds left open", open_fds);
}

static void role_names(void)
{
	static const char *const want[] = { "jpeg-encoder", "h264-encoder", "video-encoder",
					    "decoder", "converter" };
	for (unsigned i = 0; i < VC_M2M_ROLE_COUNT; i++)
		CHECK(vc_m2m_role_name(i) && !strcmp(vc_m2m_role_name(i), want[i]), "role %u", i);
	CHECK(vc_m2m_role_name(VC_M2M_ROLE_COUNT) == NULL, "past the end");
}

/* The scan walks a directory, orders by number and keeps only M2M nodes. */
static void scan_dir(void)
{
	char root[PATH_MAX], p[PATH_MAX + 32];
	static const char *const files[] = { "video31", "video5", "video21", "video25",
					     "video99", "videoX", "media0", "video10" };
	struct vc_m2m_node *l = NULL;
	size_t n = 99;

	snprintf(root, sizeof(root), "%s/vc-m2m.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		FILE *f = fopen(p, "w");
		if (f)
			fclose(f);
	}
	int r = vc_m2m_scan(&fake_io, root, &l, &n);
	CHECK(r == 0, "scan %d", r);
	/* video21 is a camera, video25 unopenable, video99 unknown to the fake */
	CHECK(n == 3, "%zu nodes", n);
	if (n == 3) {
		CHECK(strstr(l[0].path, "/video5") && l[0].roles == VC_M2M_VIDEO_ENC, "%s", l[0].path);
		CHECK(strstr(l[1].path, "/video10") && l[1].roles == VC_M2M_DECODER, "%s", l[1].path);
		CHECK(strstr(l[2].path, "/video31") && l[2].roles == VC_M2M_JPEG_ENC, "%s", l[2].path);
	}
	free(l);
	r = vc_m2m_scan(&fake_io, "/nonexistent-vc-m2m", &l, &n);
	CHECK(r == 0 && n == 0 && l == NULL, "missing dir: %d %zu", r, n);
	CHECK(open_fds == 0, "%d fds left open", open_fds);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		unlink(p);
	}
	rmdir(root);
}

static void probe_node(const char *name, struct vc_m2m_node *m)
{
	char path[64];
	snprintf(path, sizeof(path), "/dev/%s", name);
	if (vc_m2m_probe(&fake_io, path, m) != 1)
		CHECK(0, "probe %s", name);
}

/* Which JPEG encoder a camera would use for each "encoder =" setting. */
static void pick(void)
{
	struct vc_m2m_node l[4];
	const char *why;

	probe_node("video10", &l[0]);
	probe_node("video11", &l[1]);
	probe_node("video12", &l[2]);
	probe_node("video31", &l[3]);
	static const struct {
		int line;
		const char *setting;
		uint32_t fourcc;
		size_t n;
		int want;
	} t[] = {
		{ __LINE__, NULL, V4L2_PIX_FMT_YUYV, 4, 3 },
		{ __LINE__, "auto", V4L2_PIX_FMT_NV12, 4, 3 },
		{ __LINE__, "", 0, 4, 3 },
		{ __LINE__, "auto", V4L2_PIX_FMT_SRGGB8, 4, -1 }, /* the JPEG encoder does not take Bayer */
		{ __LINE__, "auto", V4L2_PIX_FMT_MJPEG, 4, -1 },  /* nothing to encode */
		{ __LINE__, "cpu", V4L2_PIX_FMT_YUYV, 4, -1 },
		{ __LINE__, "/dev/video31", V4L2_PIX_FMT_YUYV, 4, 3 },
		{ __LINE__, "/dev/video11", V4L2_PIX_FMT_YUYV, 4, -1 }, /* H.264, not JPEG */
		{ __LINE__, "/dev/video40", V4L2_PIX_FMT_YUYV, 4, -1 }, /* absent */
		{ __LINE__, "auto", V4L2_PIX_FMT_YUYV, 3, -1 },         /* no JPEG encoder */
		{ __LINE__, "auto", V4L2_PIX_FMT_YUYV, 0, -1 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = vc_m2m_pick(l, t[i].n, t[i].setting, t[i].fourcc, &why);
		CHECK_AT(t[i].line, r == t[i].want, "got %d want %d", r, t[i].want);
		CHECK_AT(t[i].line, (r < 0) == (why[0] != 0), "why '%s'", why);
	}
	/* the H.264 role under the same setting (H.264 outputs) */
	static const struct {
		int line;
		const char *setting;
		uint32_t fourcc;
		size_t n;
		int want;
	} h[] = {
		{ __LINE__, "auto", V4L2_PIX_FMT_YUYV, 4, 1 },
		{ __LINE__, NULL, V4L2_PIX_FMT_YUV420, 4, 1 },
		{ __LINE__, "/dev/video11", V4L2_PIX_FMT_YUYV, 4, 1 },
		{ __LINE__, "/dev/video31", V4L2_PIX_FMT_YUYV, 4, -1 }, /* JPEG, not H.264 */
		{ __LINE__, "cpu", V4L2_PIX_FMT_YUYV, 4, -1 },
		{ __LINE__, "auto", V4L2_PIX_FMT_YUYV, 1, -1 },         /* only the decoder */
	};
	for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		int r = vc_m2m_pick_role(l, h[i].n, h[i].setting, h[i].fourcc, VC_M2M_H264_ENC, &why);
		CHECK_AT(h[i].line, r == h[i].want, "got %d want %d (%s)", r, h[i].want, why);
		CHECK_AT(h[i].line, (r < 0) == (why[0] != 0), "why '%s'", why);
	}
}

int main(void)
{
	RUN("m2m", classify_table);
	RUN("m2m", role_names);
	RUN("m2m", scan_dir);
	RUN("m2m", pick);
	CHECK_EXIT();
}
