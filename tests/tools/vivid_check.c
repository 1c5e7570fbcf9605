/* vivid_check: checks the V4L2 source (server/capture/v4l2src.c through libv4l2)
 * against the vivid driver, inside the vivid-vm guest. Each check prints one
 * line "vivid.<name>: OK" / "FAIL why" / "SKIP why", like v4l2-compliance.
 *
 *   vivid_check formats DEV [--input N] [--sizes WxH,...] [--frames N]
 *                           [--part I/N] [--only-mplane] [--tag T]
 *       every capture format DEV offers (part I of N of the list) at each size:
 *       negotiate (TRY_FMT, S_FMT), compare the driver's bytesperline and
 *       sizeimage with common/fmt.c's geometry, capture N frames (default 30)
 *       and check bytesused, sequence, timestamps and that the frames change.
 *       On a DV (HDMI) input, each size is set through its DV timings.
 *   vivid_check device DEV [--mplane]   QUERYCAP, caps enumeration
 *   vivid_check controls DEV            enumeration, menus, get/set round trip
 *   vivid_check inputs DEV              webcam/TV/S-Video/HDMI: standards,
 *                                       DV timings, source-change events
 *   vivid_check reopen DEV              a camera (server/capture/capture.c) on the TV
 *                                       and the HDMI input: the standard /
 *                                       DV timings chosen are set again when
 *                                       it reopens after an unplug
 *   vivid_check emulated DEV            an MJPEG-only node (v4l2loopback):
 *                                       libv4l2's emulated raw formats
 *   vivid_check discover N              N capture nodes listed; a by-id link
 *                                       names and opens one
 *   vivid_check hotplug PATH CMD...     CMD replugs the device: the inotify
 *                                       watch reports it and PATH opens again
 *   vivid_check errors DEV              busy device, bad formats, vivid's
 *                                       fault injection (streamon/qbuf/reqbufs
 *                                       errors, error flag, fatal error, drops,
 *                                       disconnect + reopen)
 * Exit status 0 when no check failed, 1 otherwise, 2 on usage errors. */
#include <errno.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <libv4l2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "common/fmt.h"
#include "server/capture/capture.h"
#include "server/capture/controls.h"
#include "server/capture/discover.h"
#include "server/capture/source.h"
#include "server/capture/v4l2src.h"

static const struct vc_src_ops *ops = &vc_src_v4l2;
static int n_fail; /* failed checks in this run: the exit status */
static const char *tag = "";

static void report(const char *name, const char *verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(const char *name, const char *verdict, const char *fmt, ...)
{
	char why[512] = "";
	va_list ap;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	if (strcmp(verdict, "FAIL") == 0)
		n_fail++;
	printf("vivid.%s%s: %s%s%s\n", tag, name, verdict, why[0] ? " " : "", why);
	fflush(stdout);
}
#define OK(name) report(name, "OK", NULL)
#define FAIL(name, ...) report(name, "FAIL", __VA_ARGS__)
#define SKIP(name, ...) report(name, "SKIP", __VA_ARGS__)

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- capture ---------------------------------------------------------- */

struct cap_result {
	unsigned frames, errors, gaps, short_bufs, ts_bad, seq_bad, seq_repeat;
	int changed;      /* last frame differs from the first */
	unsigned lead_errors; /* error-flagged frames before the first good one */
	int err;          /* -errno that ended the capture, 0 */
	double fps;       /* from buffer timestamps */
	char why[160];
};

/* Captures n frames (or until an error / timeout_ms without a frame). With
 * check_size, bytesused must equal the negotiated size of each plane. */
static void capture(struct vc_src *s, const struct vc_src_format *f, unsigned n,
		    int timeout_ms, const struct vc_geom *expect, struct cap_result *r)
{
	unsigned n_bufs = 0;
	uint8_t *first = NULL;
	size_t first_len = 0;
	uint64_t last_seq = 0;
	int64_t first_ts = 0, last_ts = 0;

	memset(r, 0, sizeof(*r));
	r->err = ops->start(s, 4, &n_bufs);
	if (r->err < 0) {
		snprintf(r->why, sizeof(r->why), "start: %s", strerror(-r->err));
		return;
	}
	while (r->frames < n) {
		struct vc_src_buf b;
		int e = ops->dequeue(s, &b);
		if (e == -EAGAIN) {
			struct pollfd p = {.fd = ops->fd(s), .events = POLLIN};
			int pr = poll(&p, 1, timeout_ms);
			if (pr == 0) {
				r->err = -ETIMEDOUT;
				snprintf(r->why, sizeof(r->why), "no frame in %d ms after %u",
					 timeout_ms, r->frames);
				break;
			}
			continue;
		}
		if (e < 0) {
			r->err = e;
			snprintf(r->why, sizeof(r->why), "dequeue after %u frames: %s", r->frames,
				 strerror(-e));
			break;
		}
		if (b.flags & VC_SRC_BUF_ERROR) {
			r->errors++;
			r->lead_errors += r->frames == r->lead_errors;
		}
		if (r->frames > 0) {
			/* vivid rounds jiffies into sequence numbers and may
			 * repeat one (seen at stream start under TCG); going
			 * backwards is a bug */
			if (b.seq == last_seq)
				r->seq_repeat++;
			else if (b.seq < last_seq)
				r->seq_bad++;
			else if (b.seq > last_seq + 1)
				r->gaps += (unsigned)(b.seq - last_seq - 1);
			if (b.ts_us <= last_ts)
				r->ts_bad++;
		} else {
			first_ts = b.ts_us;
		}
		if (b.ts_us == 0)
			r->ts_bad++;
		last_seq = b.seq;
		last_ts = b.ts_us;
		size_t total = 0;
		/* the payload (after a driver's data_offset) is exactly the frame */
		if (expect && !(b.flags & VC_SRC_BUF_ERROR))
			for (unsigned p = 0; p < expect->mem_planes; p++)
				if (b.bytesused[p] != expect->mem_size[p])
					r->short_bufs++;
		for (unsigned p = 0; p < f->geom.mem_planes; p++)
			total += b.bytesused[p];
		/* Frames change: keep the first one (plane 0), compare the last. */
		if (r->frames == 0 && b.bytesused[0]) {
			first = malloc(b.bytesused[0]);
			if (first) {
				memcpy(first, b.mem[0], b.bytesused[0]);
				first_len = b.bytesused[0];
			}
		} else if (r->frames == n - 1 && first) {
			r->changed = first_len != b.bytesused[0] ||
				     memcmp(first, b.mem[0], first_len) != 0;
		}
		(void)total;
		r->frames++;
		e = ops->queue(s, b.index);
		if (e < 0) {
			r->err = e;
			snprintf(r->why, sizeof(r->why), "queue: %s", strerror(-e));
			break;
		}
	}
	ops->stop(s);
	free(first);
	if (r->frames > 1 && last_ts > first_ts)
		r->fps = (r->frames - 1 + r->gaps) * 1e6 / (double)(last_ts - first_ts);
}

/* ---- helpers ---------------------------------------------------------- */

static struct vc_src *open_dev(const char *dev, const char *check)
{
	struct vc_src *s = NULL;
	int e = ops->open(dev, &s);
	if (e < 0) {
		if (check)
			FAIL(check, "open %s: %s", dev, strerror(-e));
		return NULL;
	}
	return s;
}

/* The raw driver answer for the current format (G_FMT on the libv4l2 fd). */
static int raw_fmt(struct vc_src *s, int mplane, struct v4l2_format *f)
{
	memset(f, 0, sizeof(*f));
	f->type = mplane ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	return v4l2_ioctl(ops->fd(s), VIDIOC_G_FMT, f) < 0 ? -errno : 0;
}

static int set_ctrl_key(struct vc_src *s, const struct vc_ctrls *cs, const char *key,
			int64_t v)
{
	const struct vc_ctrl *c = vc_ctrls_find_key(cs, key);
	if (!c)
		return -ENOENT;
	return vc_ctrl_set(s, c->id, v, NULL);
}

/* Compares the driver's strides/sizes with common/fmt.c's geometry. */
static int check_geometry(struct vc_src *s, int mplane, const struct vc_src_format *f,
			  struct vc_geom *gout, unsigned *padded, char *why, size_t n)
{
	struct v4l2_format raw;
	struct vc_geom g;
	*padded = 0;
	char fcc[16];
	int e = raw_fmt(s, mplane, &raw);
	if (e < 0) {
		snprintf(why, n, "G_FMT: %s", strerror(-e));
		return -1;
	}
	e = vc_fmt_geometry(f->fmt, f->mode.width, f->mode.height, 0, &g);
	if (e < 0) {
		snprintf(why, n, "vc_fmt_geometry(%s %ux%u): %s",
			 vc_fourcc_str(f->mode.fourcc, fcc), f->mode.width, f->mode.height,
			 strerror(-e));
		return -1;
	}
	if (mplane) {
		const struct v4l2_pix_format_mplane *p = &raw.fmt.pix_mp;
		if (p->num_planes != g.mem_planes) {
			snprintf(why, n, "num_planes %u, table %u", p->num_planes, g.mem_planes);
			return -1;
		}
		for (unsigned m = 0; m < g.mem_planes; m++) {
			/* the first colour plane in memory plane m gives its stride */
			unsigned cp = 0;
			while (cp < g.color_planes && g.plane[cp].mem != m)
				cp++;
			if (cp < g.color_planes && p->plane_fmt[m].bytesperline != g.plane[cp].stride) {
				snprintf(why, n, "plane %u bytesperline %u, fmt.c %u", m,
					 p->plane_fmt[m].bytesperline, g.plane[cp].stride);
				return -1;
			}
			/* a driver may add room (vivid: a data_offset on NM16/NM61) */
			if (p->plane_fmt[m].sizeimage < g.mem_size[m] ||
			    p->plane_fmt[m].sizeimage > g.mem_size[m] + 4096) {
				snprintf(why, n, "plane %u sizeimage %u, fmt.c %zu", m,
					 p->plane_fmt[m].sizeimage, g.mem_size[m]);
				return -1;
			}
			*padded += p->plane_fmt[m].sizeimage - (unsigned)g.mem_size[m];
		}
	} else {
		const struct v4l2_pix_format *p = &raw.fmt.pix;
		if (p->bytesperline != g.plane[0].stride) {
			snprintf(why, n, "bytesperline %u, fmt.c %u", p->bytesperline,
				 g.plane[0].stride);
			return -1;
		}
		if (p->sizeimage != g.sizeimage) {
			snprintf(why, n, "sizeimage %u, fmt.c %zu", p->sizeimage, g.sizeimage);
			return -1;
		}
	}
	/* what the source reports must be the driver's answer too */
	if (f->geom.sizeimage != g.sizeimage + *padded ||
	    f->geom.plane[0].stride != g.plane[0].stride) {
		snprintf(why, n, "source reports stride %u size %zu, driver %u %zu",
			 f->geom.plane[0].stride, f->geom.sizeimage, g.plane[0].stride,
			 g.sizeimage + *padded);
		return -1;
	}
	*gout = g;
	return 0;
}

static int is_dv_input(struct vc_src *s)
{
	uint32_t idx = 0;
	struct vc_src_input in;
	if (ops->input_get(s, &idx) < 0 || ops->input_enum(s, idx, &in) < 0)
		return 0;
	return (in.capabilities & V4L2_IN_CAP_DV_TIMINGS) != 0;
}

/* Sets DV timings of exactly w x h progressive, the highest rate offered. */
static int set_dv_size(struct vc_src *s, uint32_t w, uint32_t h, uint32_t max_fps)
{
	struct vc_v4l2_dv dv, best;
	int found = 0;
	for (uint32_t i = 0; vc_v4l2_dv_enum(s, i, &dv) == 0; i++) {
		if (dv.width != w || dv.height != h || dv.interlaced)
			continue;
		if (dv.fps_milli > max_fps * 1000 + 500)
			continue;
		if (!found || dv.fps_milli > best.fps_milli)
			best = dv;
		found = 1;
	}
	if (!found)
		return -ENOENT;
	return vc_v4l2_dv_set(s, &best);
}

/* ---- formats ---------------------------------------------------------- */

struct size {
	uint32_t w, h;
};

static int parse_sizes(const char *arg, struct size *sz, int max)
{
	int n = 0;
	const char *p = arg;
	while (*p && n < max) {
		unsigned w, h;
		if (sscanf(p, "%ux%u", &w, &h) != 2)
			return -1;
		sz[n].w = w;
		sz[n].h = h;
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return n;
}

static int cmd_formats(const char *dev, int argc, char **argv)
{
	struct size sizes[8] = {{320, 180}, {640, 480}, {1280, 720}};
	int n_sizes = 3, input = -1, part = 0, parts = 1, only_mplane = 0;
	unsigned frames = 30, max_fps = 60;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
			n_sizes = parse_sizes(argv[++i], sizes, 8);
		else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
			frames = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--input") && i + 1 < argc)
			input = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--max-fps") && i + 1 < argc)
			max_fps = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--part") && i + 1 < argc)
			sscanf(argv[++i], "%d/%d", &part, &parts);
		else if (!strcmp(argv[i], "--only-mplane"))
			only_mplane = 1;
		else if (!strcmp(argv[i], "--tag") && i + 1 < argc)
			tag = argv[++i];
		else
			return 2;
	}
	if (n_sizes <= 0 || parts < 1 || part < 0 || part >= parts || frames < 2)
		return 2;

	struct vc_src *s = open_dev(dev, "formats.open");
	if (!s)
		return 1;
	struct vc_v4l2_info info;
	vc_v4l2_info(s, &info);
	if (input >= 0 && ops->input_set(s, (uint32_t)input) < 0) {
		FAIL("formats.input", "S_INPUT %d failed", input);
		ops->close(s);
		return 1;
	}
	struct vc_ctrls cs;
	vc_ctrls_load(s, &cs);
	/* moving pattern: consecutive frames must differ */
	set_ctrl_key(s, &cs, "horizontal_movement", 6);
	vc_ctrls_clear(&cs);

	struct vc_caps caps;
	int e = ops->get_caps(s, &caps);
	if (e < 0 || caps.n_fmts == 0) {
		FAIL("formats.caps", "get_caps: %s, %zu formats", strerror(-e), caps.n_fmts);
		ops->close(s);
		return 1;
	}
	int dv = is_dv_input(s);
	unsigned tested = 0;
	int64_t t0 = now_us();
	for (int si = 0; si < n_sizes; si++) {
		if (dv) {
			e = set_dv_size(s, sizes[si].w, sizes[si].h, max_fps);
			if (e < 0) {
				FAIL("formats.dv_timings", "no DV timings for %ux%u: %s", sizes[si].w,
				     sizes[si].h, strerror(-e));
				continue;
			}
		}
		for (size_t fi = 0; fi < caps.n_fmts; fi++) {
			if ((int)(fi % (size_t)parts) != part)
				continue;
			const struct vc_caps_fmt *cf = &caps.fmts[fi];
			const struct vc_fmt *row = vc_fmt_by_fourcc(cf->fourcc);
			if (only_mplane && row->mem_planes < 2)
				continue;
			char fcc[16], name[96];
			vc_fourcc_str(cf->fourcc, fcc);
			for (char *c = fcc; *c; c++)
				if (*c == ' ')
					*c = '_';
			snprintf(name, sizeof(name), "fmt.%s.%ux%u", fcc, sizes[si].w, sizes[si].h);

			struct vc_mode want = {.fourcc = cf->fourcc, .width = sizes[si].w,
					       .height = sizes[si].h};
			struct vc_src_format tf, f;
			/* fastest rate offered for this size */
			for (size_t k = 0; k < cf->n_sizes; k++)
				if (cf->sizes[k].width == want.width &&
				    cf->sizes[k].height == want.height && cf->sizes[k].n_ivals)
					want.ival = cf->sizes[k].ival[0];
			e = ops->set_mode(s, &want, 1, &tf);
			if (e < 0) {
				FAIL(name, "TRY_FMT: %s", strerror(-e));
				continue;
			}
			e = ops->set_mode(s, &want, 0, &f);
			if (e < 0) {
				FAIL(name, "S_FMT: %s", strerror(-e));
				continue;
			}
			if (f.mode.fourcc != want.fourcc || f.mode.width != want.width ||
			    f.mode.height != want.height) {
				FAIL(name, "driver answered %ux%u %s", f.mode.width, f.mode.height,
				     vc_fourcc_str(f.mode.fourcc, fcc));
				continue;
			}
			if (tf.mode.width != f.mode.width || tf.mode.height != f.mode.height ||
			    tf.geom.sizeimage != f.geom.sizeimage) {
				FAIL(name, "TRY_FMT %ux%u/%zu differs from S_FMT %ux%u/%zu",
				     tf.mode.width, tf.mode.height, tf.geom.sizeimage, f.mode.width,
				     f.mode.height, f.geom.sizeimage);
				continue;
			}
			char why[256];
			struct vc_geom g;
			unsigned padded;
			if (check_geometry(s, info.mplane, &f, &g, &padded, why, sizeof(why)) < 0) {
				FAIL(name, "geometry: %s", why);
				continue;
			}
			struct cap_result r;
			capture(s, &f, frames, 3000, &g, &r);
			tested++;
			if (r.err < 0)
				FAIL(name, "%s", r.why);
			else if (r.errors || r.short_bufs || r.seq_bad || r.ts_bad)
				FAIL(name, "%u frames: %u error-flagged, %u wrong bytesused, %u seq "
				     "not increasing, %u bad timestamps", r.frames, r.errors,
				     r.short_bufs, r.seq_bad, r.ts_bad);
			else if (!r.changed)
				FAIL(name, "the last of %u frames equals the first", r.frames);
			else
				report(name, "OK", "%u frames %.1f fps (ival %u/%u) %u dropped%s, "
				       "stride %u size %zu (+%u driver padding)", r.frames, r.fps,
				       f.mode.ival.num, f.mode.ival.den, r.gaps,
				       r.seq_repeat ? " (seq repeated)" : "", f.geom.plane[0].stride,
				       g.sizeimage, padded);
		}
	}
	report("formats.summary", tested ? "OK" : "FAIL", "%u format/size pairs captured in %.1f s",
	       tested, (now_us() - t0) / 1e6);
	vc_caps_clear(&caps);
	ops->close(s);
	return n_fail ? 1 : 0;
}

/* ---- device ----------------------------------------------------------- */

static int cmd_device(const char *dev, int argc, char **argv)
{
	int want_mplane = argc > 0 && !strcmp(argv[0], "--mplane");
	const char *pre = want_mplane ? "mplane." : "";
	char name[64];
	struct vc_src *s = open_dev(dev, want_mplane ? "mplane.open" : "device.open");
	if (!s)
		return 1;
	struct vc_v4l2_info info;
	int e = vc_v4l2_info(s, &info);
	snprintf(name, sizeof(name), "%sdevice.querycap", pre);
	if (e < 0 || strcmp(info.driver, "vivid") != 0)
		FAIL(name, "driver '%s'", info.driver);
	else if (!(info.device_caps & V4L2_CAP_STREAMING))
		FAIL(name, "no streaming in device_caps 0x%08x", info.device_caps);
	else if (info.mplane != want_mplane)
		FAIL(name, "mplane %d, expected %d (device_caps 0x%08x)", info.mplane,
		     want_mplane, info.device_caps);
	else
		report(name, "OK", "%s, %s, caps 0x%08x", info.card, info.bus, info.device_caps);

	struct vc_caps caps;
	snprintf(name, sizeof(name), "%sdevice.caps", pre);
	e = ops->get_caps(s, &caps);
	if (e < 0) {
		FAIL(name, "get_caps: %s", strerror(-e));
	} else {
		size_t native = 0, emulated = 0, order_bad = 0, no_sizes = 0, no_ivals = 0;
		for (size_t i = 0; i < caps.n_fmts; i++) {
			const struct vc_caps_fmt *cf = &caps.fmts[i];
			if (cf->emulated)
				emulated++;
			else
				native++;
			if (!cf->emulated && i > 0 && caps.fmts[i - 1].emulated)
				order_bad++;
			if (cf->n_sizes == 0)
				no_sizes++;
			for (size_t k = 0; k < cf->n_sizes; k++)
				if (!cf->sizes[k].n_ivals)
					no_ivals++;
		}
		const struct vc_caps_fmt *y = vc_caps_find(&caps, V4L2_PIX_FMT_YUYV);
		/* vivid's webcam: 6 discrete sizes, 320x180 up to 60 fps */
		int sizes_ok = y && !y->emulated && y->n_sizes == 6 && !y->stepwise &&
			       y->sizes[0].width == 320 && y->sizes[0].n_ivals >= 10 &&
			       y->sizes[0].ival[0].num == 1 && y->sizes[0].ival[0].den == 60;
		if (!native || order_bad || no_sizes || no_ivals || !sizes_ok)
			FAIL(name, "%zu native %zu emulated, %zu out of order, %zu without sizes, "
			     "%zu sizes without intervals, YUYV sizes %s", native, emulated,
			     order_bad, no_sizes, no_ivals, sizes_ok ? "ok" : "wrong");
		else
			report(name, "OK", "%zu native + %zu emulated formats", native, emulated);
		if (want_mplane) {
			snprintf(name, sizeof(name), "mplane.device.m_formats");
			const struct vc_caps_fmt *m = vc_caps_find(&caps, V4L2_PIX_FMT_NV12M);
			if (!m || !vc_caps_find(&caps, V4L2_PIX_FMT_YUV420M))
				FAIL(name, "NV12M/YM12 not offered on the multi-planar node");
			else
				OK(name);
		}
		vc_caps_clear(&caps);
	}
	/* libv4l2 emulation: a format the driver lacks (e.g. RGB24 when absent)
	 * marked emulated. vivid offers almost everything natively, so only
	 * check the marking is consistent with ENUM_FMT's flag. */
	ops->close(s);
	return n_fail ? 1 : 0;
}

/* ---- controls --------------------------------------------------------- */

static int cmd_controls(const char *dev)
{
	struct vc_src *s = open_dev(dev, "controls.open");
	if (!s)
		return 1;
	struct vc_ctrls cs;
	int e = vc_ctrls_load(s, &cs);
	if (e < 0 || cs.n < 10) {
		FAIL("controls.enum", "%s, %zu controls", strerror(-e), cs.n);
		ops->close(s);
		return 1;
	}
	size_t menus = 0, intmenus = 0, int64s = 0, classes = 0;
	for (size_t i = 0; i < cs.n; i++) {
		menus += cs.v[i].type == V4L2_CTRL_TYPE_MENU;
		intmenus += cs.v[i].type == V4L2_CTRL_TYPE_INTEGER_MENU;
		int64s += cs.v[i].type == V4L2_CTRL_TYPE_INTEGER64;
		classes += cs.v[i].type == V4L2_CTRL_TYPE_CTRL_CLASS;
	}
	if (classes || !menus || !intmenus || !int64s)
		FAIL("controls.enum", "%zu controls: %zu menus %zu int menus %zu int64 %zu classes",
		     cs.n, menus, intmenus, int64s, classes);
	else
		report("controls.enum", "OK", "%zu controls, %zu menus, %zu integer menus", cs.n,
		       menus, intmenus);

	/* brightness: integer round trip, and out of range refused */
	const struct vc_ctrl *b = vc_ctrls_find(&cs, V4L2_CID_BRIGHTNESS);
	if (!b) {
		FAIL("controls.int_roundtrip", "no brightness control");
	} else {
		int64_t want = b->def == b->min ? b->min + b->step : b->min, got = -1, back = -1;
		e = vc_ctrl_set(s, b->id, want, &got);
		int e2 = vc_ctrl_get(s, b->id, &back);
		int e3 = vc_ctrl_set(s, b->id, b->max + 1, NULL);
		vc_ctrl_set(s, b->id, b->def, NULL);
		if (e < 0 || e2 < 0 || got != want || back != want || e3 != -ERANGE)
			FAIL("controls.int_roundtrip", "set %" PRId64 ": %d got %" PRId64
			     " read %" PRId64 "; out of range: %d", want, e, got, back, e3);
		else
			OK("controls.int_roundtrip");
	}
	/* a menu: names listed, every item settable */
	const struct vc_ctrl *m = vc_ctrls_find_key(&cs, "test_pattern");
	if (!m || m->type != V4L2_CTRL_TYPE_MENU || m->n_items < 2) {
		FAIL("controls.menu", "test_pattern menu %s", m ? "without items" : "missing");
	} else {
		int bad = 0;
		for (size_t i = 0; i < m->n_items; i++) {
			int64_t got = -1;
			if (vc_ctrl_set(s, m->id, m->items[i].index, &got) < 0 ||
			    got != m->items[i].index)
				bad++;
		}
		int e2 = vc_ctrl_set(s, m->id, m->max + 1, NULL);
		vc_ctrl_set(s, m->id, m->def, NULL);
		if (bad || e2 != -ERANGE)
			FAIL("controls.menu", "%d of %zu items failed; beyond the menu: %d", bad,
			     m->n_items, e2);
		else
			report("controls.menu", "OK", "%zu items, first '%s'", m->n_items,
			       m->items[0].name);
	}
	/* an integer menu and a 64-bit integer (vivid's test controls) */
	const struct vc_ctrl *im = NULL, *i64 = NULL;
	for (size_t i = 0; i < cs.n; i++) {
		if (!im && cs.v[i].type == V4L2_CTRL_TYPE_INTEGER_MENU &&
		    !(cs.v[i].flags & V4L2_CTRL_FLAG_READ_ONLY) && cs.v[i].n_items >= 2)
			im = &cs.v[i];
		if (!i64 && cs.v[i].type == V4L2_CTRL_TYPE_INTEGER64 &&
		    !(cs.v[i].flags & V4L2_CTRL_FLAG_READ_ONLY))
			i64 = &cs.v[i];
	}
	if (!im) {
		FAIL("controls.intmenu", "no writable integer menu");
	} else {
		int64_t idx = im->items[im->n_items - 1].index, got = -1;
		char *end = NULL;
		strtoll(im->items[0].name, &end, 10);
		e = vc_ctrl_set(s, im->id, idx, &got);
		vc_ctrl_set(s, im->id, im->def, NULL);
		if (e < 0 || got != idx || !end || *end)
			FAIL("controls.intmenu", "%s: set %" PRId64 ": %d got %" PRId64
			     ", item 0 '%s'", im->name, idx, e, got, im->items[0].name);
		else
			report("controls.intmenu", "OK", "%s: %zu items, '%s'..'%s'", im->name,
			       im->n_items, im->items[0].name, im->items[im->n_items - 1].name);
	}
	if (!i64) {
		FAIL("controls.int64", "no writable 64-bit control");
	} else {
		/* a value beyond 32 bits proves the 64-bit path */
		int64_t want = i64->max > ((int64_t)1 << 40) ? ((int64_t)1 << 40) + 3 : i64->max;
		int64_t got = -1;
		e = vc_ctrl_set(s, i64->id, want, &got);
		vc_ctrl_set(s, i64->id, i64->def, NULL);
		if (e < 0 || got != want)
			FAIL("controls.int64", "%s: set %" PRId64 ": %d got %" PRId64, i64->name,
			     want, e, got);
		else
			OK("controls.int64");
	}
	/* a reload sees what was set (the list is plain data, not a cache) */
	const struct vc_ctrl *con = vc_ctrls_find(&cs, V4L2_CID_CONTRAST);
	if (con) {
		int64_t want = con->def == con->max ? con->min : con->max;
		struct vc_ctrls cs2;
		vc_ctrl_set(s, con->id, want, NULL);
		e = vc_ctrls_load(s, &cs2);
		const struct vc_ctrl *c2 = e == 0 ? vc_ctrls_find(&cs2, con->id) : NULL;
		if (!c2 || !c2->has_value || c2->value != want)
			FAIL("controls.reload", "contrast after set %" PRId64 ": %" PRId64, want,
			     c2 ? c2->value : -1);
		else
			OK("controls.reload");
		vc_ctrl_set(s, con->id, con->def, NULL);
		vc_ctrls_clear(&cs2);
	} else {
		FAIL("controls.reload", "no contrast control");
	}
	vc_ctrls_clear(&cs);
	ops->close(s);
	return n_fail ? 1 : 0;
}

/* ---- inputs ----------------------------------------------------------- */

static int find_input(struct vc_src *s, uint32_t type, uint32_t cap, const char *skip_name,
		      struct vc_src_input *out)
{
	for (uint32_t i = 0; ops->input_enum(s, i, out) == 0; i++) {
		if (out->type != type || (cap && !(out->capabilities & cap)))
			continue;
		if (!cap && out->capabilities & (V4L2_IN_CAP_STD | V4L2_IN_CAP_DV_TIMINGS))
			continue;
		if (skip_name && strstr(out->name, skip_name))
			continue;
		return 0;
	}
	return -ENOENT;
}

static void check_capture(struct vc_src *s, const char *name, unsigned frames, const char *what)
{
	struct vc_src_format f;
	struct cap_result r;
	int e = ops->get_format(s, &f);
	if (e < 0) {
		FAIL(name, "get_format: %s", strerror(-e));
		return;
	}
	struct vc_geom g;
	capture(s, &f, frames, 3000,
		vc_fmt_geometry(f.fmt, f.mode.width, f.mode.height, 0, &g) == 0 ? &g : NULL, &r);
	if (r.err < 0 || r.errors || r.short_bufs)
		FAIL(name, "%s: %s, %u error-flagged, %u short", what, r.why, r.errors,
		     r.short_bufs);
	else
		report(name, "OK", "%s: %ux%u field %u, %u frames %.1f fps", what, f.mode.width,
		       f.mode.height, f.field, r.frames, r.fps);
}

static int analog(struct vc_src *s, const char *prefix, uint32_t type)
{
	struct vc_src_input in;
	char name[64];
	snprintf(name, sizeof(name), "inputs.%s", prefix);
	if (find_input(s, type, V4L2_IN_CAP_STD, type == V4L2_INPUT_TYPE_CAMERA ? NULL : NULL,
		       &in) < 0) {
		FAIL(name, "no such input");
		return -1;
	}
	int e = ops->input_set(s, in.index);
	uint32_t got = 99;
	ops->input_get(s, &got);
	if (e < 0 || got != in.index) {
		FAIL(name, "S_INPUT %u: %s, G_INPUT %u", in.index, strerror(-e), got);
		return -1;
	}
	/* standards: NTSC gives 720x480 at 30000/1001, PAL 720x576 at 25 */
	struct vc_v4l2_std st, ntsc = {0}, pal = {0};
	for (uint32_t i = 0; vc_v4l2_std_enum(s, i, &st) == 0; i++) {
		if (!ntsc.id && (st.id & V4L2_STD_NTSC_M))
			ntsc = st;
		if (!pal.id && (st.id & V4L2_STD_PAL_B))
			pal = st;
	}
	snprintf(name, sizeof(name), "inputs.%s.std", prefix);
	if (!ntsc.id || !pal.id) {
		FAIL(name, "NTSC/PAL not enumerated on %s", in.name);
		return -1;
	}
	struct vc_src_format f1, f2;
	uint64_t cur = 0;
	int e1 = vc_v4l2_std_set(s, ntsc.id), g1 = ops->get_format(s, &f1);
	int e2 = vc_v4l2_std_set(s, pal.id), g2 = ops->get_format(s, &f2);
	int e3 = vc_v4l2_std_get(s, &cur);
	if (e1 || e2 || e3 || g1 || g2 || f1.mode.height != 480 || f2.mode.height != 576 ||
	    !(cur & pal.id) || ntsc.frameperiod.den != 30000 || pal.frameperiod.den != 25)
		FAIL(name, "NTSC %d -> %ux%u, PAL %d -> %ux%u, G_STD %d 0x%" PRIx64
		     ", periods %u/%u %u/%u", e1, f1.mode.width, f1.mode.height, e2,
		     f2.mode.width, f2.mode.height, e3, cur, ntsc.frameperiod.num,
		     ntsc.frameperiod.den, pal.frameperiod.num, pal.frameperiod.den);
	else
		report(name, "OK", "%s: %s %ux%u, %s %ux%u", in.name, ntsc.name, f1.mode.width,
		       f1.mode.height, pal.name, f2.mode.width, f2.mode.height);
	snprintf(name, sizeof(name), "inputs.%s.capture_pal", prefix);
	check_capture(s, name, 10, in.name);
	vc_v4l2_std_set(s, ntsc.id);
	snprintf(name, sizeof(name), "inputs.%s.capture_ntsc", prefix);
	check_capture(s, name, 10, in.name);
	return 0;
}

static int wait_event(struct vc_src *s, int type, int ms)
{
	int64_t end = now_us() + ms * 1000;
	while (now_us() < end) {
		struct vc_src_event ev;
		int r = ops->get_event(s, &ev);
		if (r < 0)
			return r;
		if (r == 1 && ev.type == type)
			return 1;
		if (r == 0) {
			struct pollfd p = {.fd = ops->fd(s), .events = POLLPRI};
			poll(&p, 1, 50);
		}
	}
	return 0;
}

static int cmd_inputs(const char *dev)
{
	struct vc_src *s = open_dev(dev, "inputs.open");
	struct vc_src_input in;
	if (!s)
		return 1;
	uint32_t n = 0;
	while (ops->input_enum(s, n, &in) == 0)
		n++;
	if (n < 4)
		FAIL("inputs.enum", "%u inputs", n);
	else
		report("inputs.enum", "OK", "%u inputs", n);

	/* webcam: no standards, discrete sizes */
	if (find_input(s, V4L2_INPUT_TYPE_CAMERA, 0, NULL, &in) < 0 ||
	    ops->input_set(s, in.index) < 0) {
		FAIL("inputs.webcam", "no webcam input");
	} else {
		struct vc_v4l2_std st;
		struct vc_caps caps;
		int has_std = vc_v4l2_std_enum(s, 0, &st) == 0;
		int e = ops->get_caps(s, &caps);
		const struct vc_caps_fmt *y = e == 0 ? vc_caps_find(&caps, V4L2_PIX_FMT_YUYV) : NULL;
		if (has_std || !y || y->n_sizes < 2)
			FAIL("inputs.webcam", "%s: standards %d, YUYV sizes %zu", in.name, has_std,
			     y ? y->n_sizes : 0);
		else
			check_capture(s, "inputs.webcam", 10, in.name);
		vc_caps_clear(&caps);
	}
	analog(s, "tv", V4L2_INPUT_TYPE_TUNER);
	analog(s, "svideo", V4L2_INPUT_TYPE_CAMERA);

	/* HDMI: DV timings, follow the detected timings, source change */
	if (find_input(s, V4L2_INPUT_TYPE_CAMERA, V4L2_IN_CAP_DV_TIMINGS, NULL, &in) < 0 ||
	    ops->input_set(s, in.index) < 0) {
		FAIL("inputs.hdmi", "no HDMI input");
		ops->close(s);
		return 1;
	}
	struct vc_v4l2_dv dv, q;
	uint32_t n_dv = 0;
	while (vc_v4l2_dv_enum(s, n_dv, &dv) == 0)
		n_dv++;
	int e = set_dv_size(s, 1280, 720, 60);
	struct vc_src_format f;
	int g = ops->get_format(s, &f);
	int qe = vc_v4l2_dv_query(s, &q);
	if (n_dv < 10 || e || g || f.mode.width != 1280 || f.mode.height != 720 || qe ||
	    q.width != 1280 || q.fps_milli < 59000)
		FAIL("inputs.hdmi.timings", "%u timings; 720p60: set %d, format %ux%u, query %d "
		     "%ux%u %u mHz", n_dv, e, f.mode.width, f.mode.height, qe, q.width, q.height,
		     q.fps_milli);
	else
		report("inputs.hdmi.timings", "OK", "%u timings; 1280x720 at %.2f fps", n_dv,
		       q.fps_milli / 1000.0);
	check_capture(s, "inputs.hdmi.capture_720p", 20, in.name);

	/* No signal: the control sends a source-change event, QUERY_DV_TIMINGS
	 * reports no link, ENUMINPUT shows it; back to normal the same way. */
	struct vc_ctrls cs;
	vc_ctrls_load(s, &cs);
	const struct vc_ctrl *sm = vc_ctrls_find_key(&cs, "dv_timings_signal_mode");
	if (!sm) {
		FAIL("inputs.hdmi.source_change", "no dv_timings_signal_mode control");
	} else {
		while (ops->get_event(s, &(struct vc_src_event){0}) == 1)
			; /* drain */
		int e1 = vc_ctrl_set(s, sm->id, 1, NULL); /* No Signal */
		int ev1 = wait_event(s, VC_SRC_EV_SOURCE_CHANGE, 2000);
		int q1 = vc_v4l2_dv_query(s, &q);
		struct vc_src_input st;
		ops->input_enum(s, in.index, &st);
		int e2 = vc_ctrl_set(s, sm->id, sm->def, NULL);
		int ev2 = wait_event(s, VC_SRC_EV_SOURCE_CHANGE, 2000);
		int q2 = vc_v4l2_dv_query(s, &q);
		if (e1 || ev1 != 1 || q1 != -ENOLINK || !(st.status & V4L2_IN_ST_NO_SIGNAL) ||
		    e2 || ev2 != 1 || q2)
			FAIL("inputs.hdmi.source_change", "no signal: set %d event %d query %d "
			     "status 0x%x; back: set %d event %d query %d", e1, ev1, q1, st.status,
			     e2, ev2, q2);
		else
			OK("inputs.hdmi.source_change");
	}
	vc_ctrls_clear(&cs);
	/* back to the webcam for whoever comes next */
	if (find_input(s, V4L2_INPUT_TYPE_CAMERA, 0, NULL, &in) == 0)
		ops->input_set(s, in.index);
	ops->close(s);
	return n_fail ? 1 : 0;
}

/* ---- errors ----------------------------------------------------------- */

static int fault_start(struct vc_src *s, struct vc_ctrls *cs, const char *key,
		       const char *name)
{
	struct vc_src_format f;
	struct cap_result r;
	unsigned n;
	ops->get_format(s, &f);
	int e = set_ctrl_key(s, cs, key, 1);
	if (e < 0) {
		FAIL(name, "control %s: %s", key, strerror(-e));
		return -1;
	}
	int e1 = ops->start(s, 4, &n);
	if (e1 == 0)
		ops->stop(s);
	capture(s, &f, 5, 3000, NULL, &r);
	if (e1 == 0 || r.err < 0)
		FAIL(name, "start with the fault: %d; then: %s", e1, r.err ? r.why : "ok");
	else
		report(name, "OK", "start failed (%s), the next one captured %u frames",
		       strerror(-e1), r.frames);
	return 0;
}

/* One buffer dequeued within 4 s: 0, else the error (-EAGAIN: none came). */
static int dequeue_one(struct vc_src *s, struct vc_src_buf *b)
{
	struct pollfd p = {.fd = ops->fd(s), .events = POLLIN};
	int d = -EAGAIN;
	for (int i = 0; i < 40 && d == -EAGAIN; i++) {
		poll(&p, 1, 100);
		d = ops->dequeue(s, b);
	}
	return d;
}

/* Streams (dequeue, queue again) until dequeue fails, at most ms: the
 * error, or -EAGAIN when none came. */
static int stream_until_error(struct vc_src *s, int ms)
{
	int d = -EAGAIN;
	int64_t end = now_us() + ms * 1000;
	while (now_us() < end) {
		struct vc_src_buf b;
		struct pollfd p = {.fd = ops->fd(s), .events = POLLIN};
		poll(&p, 1, 200);
		d = ops->dequeue(s, &b);
		if (d == 0)
			ops->queue(s, b.index);
		else if (d != -EAGAIN)
			break;
	}
	return d;
}

static int cmd_errors(const char *dev)
{
	struct vc_src *s = open_dev(dev, "errors.open");
	struct vc_src *s2;
	struct vc_src_format f;
	struct cap_result r;
	struct vc_ctrls cs;
	unsigned n;
	int e;
	if (!s)
		return 1;
	if (ops->input_set(s, 0) < 0) /* webcam */
		FAIL("errors.input", "S_INPUT 0");
	struct vc_mode m = {.fourcc = V4L2_PIX_FMT_YUYV, .width = 320, .height = 180,
			    .ival = {1, 60}};
	e = ops->set_mode(s, &m, 0, &f);
	if (e < 0) {
		FAIL("errors.mode", "%s", strerror(-e));
		ops->close(s);
		return 1;
	}
	/* a format the driver does not have: it answers another one, valid */
	struct vc_mode bad = {.fourcc = v4l2_fourcc('Q', 'Q', 'Q', 'Q'), .width = 320,
			      .height = 180};
	struct vc_src_format bf;
	e = ops->set_mode(s, &bad, 1, &bf);
	if (e < 0 || bf.mode.fourcc == bad.fourcc || !bf.fmt)
		FAIL("errors.bad_fourcc", "TRY_FMT: %d", e);
	else
		OK("errors.bad_fourcc");
	/* absurd sizes are clamped to what the webcam offers */
	struct vc_mode huge = {.fourcc = V4L2_PIX_FMT_YUYV, .width = 20000, .height = 20000};
	struct vc_mode tiny = {.fourcc = V4L2_PIX_FMT_YUYV, .width = 1, .height = 1};
	struct vc_src_format hf, tf;
	int eh = ops->set_mode(s, &huge, 1, &hf), et = ops->set_mode(s, &tiny, 1, &tf);
	if (eh || et || hf.mode.width > 4096 || tf.mode.width < 320 || tf.mode.width > 640)
		FAIL("errors.bad_size", "20000x20000 -> %d %ux%u, 1x1 -> %d %ux%u", eh,
		     hf.mode.width, hf.mode.height, et, tf.mode.width, tf.mode.height);
	else
		report("errors.bad_size", "OK", "20000x20000 -> %ux%u, 1x1 -> %ux%u", hf.mode.width,
		       hf.mode.height, tf.mode.width, tf.mode.height);
	ops->set_mode(s, &m, 0, &f);

	/* busy: a second handle cannot start while the first streams */
	s2 = open_dev(dev, "errors.busy");
	if (s2) {
		e = ops->start(s, 4, &n);
		int e2 = ops->start(s2, 4, &n);
		int e3 = ops->set_mode(s2, &m, 0, NULL);
		if (e2 == 0)
			ops->stop(s2);
		ops->stop(s);
		if (e || e2 != -EBUSY || e3 != -EBUSY)
			FAIL("errors.busy", "first start %d, second start %d, second S_FMT %d", e, e2,
			     e3);
		else
			OK("errors.busy");
		ops->close(s2);
	}
	/* stop with a buffer held: it stays valid, set_mode/start refuse until
	 * it comes back */
	e = ops->start(s, 4, &n);
	if (e == 0) {
		struct vc_src_buf b;
		int d = dequeue_one(s, &b);
		ops->stop(s);
		uint8_t x = d == 0 ? b.mem[0][0] : 0; /* still mapped (ASan would tell) */
		(void)x;
		int eb = ops->start(s, 4, &n);
		int em = ops->set_mode(s, &m, 0, NULL);
		int eq = d == 0 ? ops->queue(s, b.index) : -1;
		capture(s, &f, 5, 3000, NULL, &r);
		if (d || eb != -EBUSY || em != -EBUSY || eq || r.err)
			FAIL("errors.stop_held", "dequeue %d, start %d, set_mode %d, queue %d, "
			     "capture %s", d, eb, em, eq, r.why);
		else
			OK("errors.stop_held");
	}

	if (vc_ctrls_load(s, &cs) < 0) {
		FAIL("errors.controls", "cannot enumerate controls");
		ops->close(s);
		return 1;
	}
	fault_start(s, &cs, "inject_vidioc_streamon_error", "errors.streamon_error");
	fault_start(s, &cs, "inject_vidioc_reqbufs_error", "errors.reqbufs_error");

	/* QBUF error while streaming: queue() fails, a restart recovers */
	e = ops->start(s, 4, &n);
	if (e == 0) {
		struct vc_src_buf b;
		int d = dequeue_one(s, &b);
		int ec = set_ctrl_key(s, &cs, "inject_vidioc_qbuf_error", 1);
		int eq = d == 0 ? ops->queue(s, b.index) : 0;
		if (eq < 0 && d == 0)
			ops->queue(s, b.index); /* not re-queued: give it back before stop */
		ops->stop(s);
		capture(s, &f, 5, 3000, NULL, &r);
		if (d || ec || eq == 0 || r.err)
			FAIL("errors.qbuf_error", "dequeue %d control %d queue %d; restart: %s", d, ec,
			     eq, r.why);
		else
			report("errors.qbuf_error", "OK", "queue failed (%s), restart captured %u",
			       strerror(-eq), r.frames);
	}

	/* V4L2_BUF_FLAG_ERROR on one buffer */
	e = ops->start(s, 4, &n);
	if (e == 0) {
		int ec = set_ctrl_key(s, &cs, "inject_v4l2_buf_flag_error", 1);
		unsigned flagged = 0, got = 0;
		int64_t end = now_us() + 4000000;
		while (got < 15 && now_us() < end) {
			struct vc_src_buf b;
			struct pollfd p = {.fd = ops->fd(s), .events = POLLIN};
			poll(&p, 1, 200);
			if (ops->dequeue(s, &b) < 0)
				continue;
			got++;
			flagged += (b.flags & VC_SRC_BUF_ERROR) != 0;
			ops->queue(s, b.index);
		}
		ops->stop(s);
		if (ec || flagged != 1)
			FAIL("errors.buf_flag_error", "control %d, %u of %u buffers flagged", ec,
			     flagged, got);
		else
			report("errors.buf_flag_error", "OK", "1 of %u buffers flagged", got);
	}

	/* fatal streaming error: dequeue reports the device gone; STREAMOFF +
	 * restart recovers */
	e = ops->start(s, 4, &n);
	if (e == 0) {
		int ec = set_ctrl_key(s, &cs, "inject_fatal_streaming_error", 1);
		int d = stream_until_error(s, 3000);
		ops->stop(s);
		capture(s, &f, 5, 3000, NULL, &r);
		if (ec || d != -ENODEV || r.err)
			FAIL("errors.fatal_streaming", "control %d dequeue %d; restart: %s", ec, d,
			     r.why);
		else
			OK("errors.fatal_streaming");
	}

	/* dropped buffers show as sequence gaps */
	e = set_ctrl_key(s, &cs, "percentage_of_dropped_buffers", 50);
	capture(s, &f, 20, 3000, NULL, &r);
	set_ctrl_key(s, &cs, "percentage_of_dropped_buffers", 0);
	if (e || r.err || r.gaps < 3)
		FAIL("errors.dropped", "control %d, %u frames %u gaps: %s", e, r.frames, r.gaps,
		     r.why);
	else
		report("errors.dropped", "OK", "%u frames, %u sequence gaps", r.frames, r.gaps);

	/* disconnect mid-stream: -ENODEV, close, the node comes back, reopen */
	e = ops->start(s, 4, &n);
	if (e == 0) {
		int ec = set_ctrl_key(s, &cs, "disconnect", 1);
		int d = stream_until_error(s, 3000);
		vc_ctrls_clear(&cs);
		ops->close(s);
		s = NULL;
		int eo = -ENOENT;
		for (int i = 0; i < 50 && eo < 0; i++) {
			eo = ops->open(dev, &s);
			if (eo < 0)
				usleep(100000);
		}
		if (eo == 0) {
			ops->set_mode(s, &m, 0, &f);
			capture(s, &f, 5, 3000, NULL, &r);
		}
		if (ec || d != -ENODEV || eo || r.err)
			FAIL("errors.disconnect", "control %d dequeue %d reopen %d capture %s", ec, d,
			     eo, eo ? "-" : r.why);
		else
			report("errors.disconnect", "OK", "dequeue: %s; reopened, %u frames",
			       strerror(-d), r.frames);
	} else {
		vc_ctrls_clear(&cs);
	}
	if (s)
		ops->close(s);
	return n_fail ? 1 : 0;
}

/* ---- standards / timings after a reopen ------------------------------- */

struct reopen_cam {
	struct event_base *base;
	struct vc_cam *cam;
};

static void run_loop_ms(struct event_base *b, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

/* Runs the loop until the camera streams a frame size of `height` lines
 * (0: any) or, with want_down, until it stops streaming; at most ms. */
static int wait_cam(struct reopen_cam *rc, uint32_t height, int want_down, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		struct vc_mode m;
		enum vc_cam_state st = vc_cam_get_state(rc->cam);
		vc_cam_get_mode(rc->cam, &m, NULL);
		if (want_down ? st != VC_CAM_STREAMING :
				st == VC_CAM_STREAMING && (!height || m.height == height))
			return 0;
		run_loop_ms(rc->base, 50);
	}
	return -ETIMEDOUT;
}

/* Unplugs the camera's device (vivid's disconnect control, set through a
 * handle of our own) and waits until the camera noticed and closed it: vivid
 * comes back once every handle is closed. */
static int unplug(const char *dev, struct reopen_cam *rc)
{
	struct vc_src *s = open_dev(dev, NULL);
	struct vc_ctrls cs;
	if (!s)
		return -ENODEV;
	int e = vc_ctrls_load(s, &cs);
	if (e == 0)
		e = set_ctrl_key(s, &cs, "disconnect", 1);
	vc_ctrls_clear(&cs);
	ops->close(s);
	return e < 0 ? e : wait_cam(rc, 0, 1, 5000);
}

/* What the device is set to behind the camera's back while it is away (as a
 * driver reload would reset it): fn on a handle of our own, on `input`. */
static int behind(const char *dev, uint32_t input, int (*fn)(struct vc_src *, const void *),
		  const void *arg)
{
	struct vc_src *s = NULL;
	int e = -ENODEV;
	for (int i = 0; i < 50 && e < 0; i++) { /* the node is back at once; allow a delay */
		e = ops->open(dev, &s);
		if (e < 0)
			usleep(100000);
	}
	if (e < 0)
		return e;
	e = ops->input_set(s, input);
	if (e == 0)
		e = fn(s, arg);
	ops->close(s);
	return e;
}

static int std_fn(struct vc_src *s, const void *arg)
{
	return vc_v4l2_std_set(s, *(const uint64_t *)arg);
}

static int dv_fn(struct vc_src *s, const void *arg)
{
	return vc_v4l2_dv_set(s, arg);
}

/* One input: the camera is told `chosen` (a standard or timings of
 * `chosen_h` lines), streams it, is unplugged; while it is away the device
 * is set to `other` (other_h lines); after it is back by itself it must
 * stream `chosen` again. */
static void reopen_one(const char *dev, const char *name, uint32_t input, int dv,
		       const void *chosen, uint32_t chosen_h, const void *other, uint32_t other_h)
{
	struct reopen_cam rc = { .base = event_base_new() };
	struct vc_conf_cam cfg = { .name = (char *)"reopen", .device = (char *)dev, .input = (int)input,
				     .idle_stop_ms = -1 };
	struct vc_cam_stats st;
	struct vc_mode m;
	const char *step = "start";
	int e;

	/* the device starts on `other`: the choice must be what changes it */
	e = behind(dev, input, dv ? dv_fn : std_fn, other);
	if (e == 0)
		e = vc_cam_new(rc.base, &cfg, &rc.cam);
	if (e == 0) {
		vc_cam_acquire(rc.cam);
		e = wait_cam(&rc, other_h, 0, 10000);
	}
	if (e == 0) {
		step = "choose";
		e = dv ? vc_v4l2_cam_dv(rc.cam, input, chosen) :
			 vc_v4l2_cam_std(rc.cam, input, *(const uint64_t *)chosen);
		if (e == 0)
			e = wait_cam(&rc, chosen_h, 0, 10000);
	}
	if (e == 0) {
		step = "unplug";
		e = unplug(dev, &rc);
	}
	if (e == 0) {
		step = "reset behind";
		e = behind(dev, input, dv ? dv_fn : std_fn, other);
	}
	if (e == 0) {
		step = "reopen";
		e = wait_cam(&rc, chosen_h, 0, 15000);
	}
	vc_cam_get_mode(rc.cam, &m, NULL);
	vc_cam_get_stats(rc.cam, &st);
	uint64_t std = 0;
	struct vc_v4l2_dv t = { 0 };
	struct vc_src *src = vc_cam_source(rc.cam);
	int eg = !src ? -ENODEV : dv ? vc_v4l2_dv_get(src, &t) : vc_v4l2_std_get(src, &std);
	int same = dv ? t.height == chosen_h && t.width == ((const struct vc_v4l2_dv *)chosen)->width :
			(std & *(const uint64_t *)chosen) != 0;
	if (e || eg || !same || st.restarts < 1)
		FAIL(name, "%s: %s; streaming %ux%u (chose %u lines, reset to %u), %s %d "
		     "0x%" PRIx64 " %ux%u, restarts %llu", step, strerror(-e), m.width, m.height,
		     chosen_h, other_h, dv ? "G_DV_TIMINGS" : "G_STD", eg, std, t.width, t.height,
		     (unsigned long long)st.restarts);
	else
		report(name, "OK", "reset to %u lines while unplugged; after the reopen %ux%u "
		       "again (%s), restarts %llu", other_h, m.width, m.height,
		       dv ? "DV timings" : "standard", (unsigned long long)st.restarts);
	vc_cam_release(rc.cam);
	vc_cam_free(rc.cam);
	event_base_free(rc.base);
}

static int cmd_reopen(const char *dev)
{
	struct vc_src *s = open_dev(dev, "reopen.open");
	struct vc_src_input tv, hdmi;
	if (!s)
		return 1;
	uint64_t ntsc = 0, pal = 0;
	struct vc_v4l2_dv dv, small = { 0 }, big = { 0 };
	int have_tv = find_input(s, V4L2_INPUT_TYPE_TUNER, V4L2_IN_CAP_STD, NULL, &tv) == 0 &&
		      ops->input_set(s, tv.index) == 0;
	struct vc_v4l2_std st;
	for (uint32_t i = 0; have_tv && vc_v4l2_std_enum(s, i, &st) == 0; i++) {
		if (!ntsc && (st.id & V4L2_STD_NTSC_M))
			ntsc = st.id;
		if (!pal && (st.id & V4L2_STD_PAL_B))
			pal = st.id;
	}
	int have_hdmi = find_input(s, V4L2_INPUT_TYPE_CAMERA, V4L2_IN_CAP_DV_TIMINGS, NULL,
				   &hdmi) == 0 && ops->input_set(s, hdmi.index) == 0;
	for (uint32_t i = 0; have_hdmi && vc_v4l2_dv_enum(s, i, &dv) == 0; i++) {
		if (dv.interlaced)
			continue;
		if (dv.width == 640 && dv.height == 480 && !small.width)
			small = dv;
		if (dv.width == 1280 && dv.height == 720 && !big.width)
			big = dv;
	}
	ops->close(s);
	evthread_use_pthreads(); /* capture.c's frame releases */
	if (!ntsc || !pal)
		FAIL("reopen.tv_std", "no TV input with NTSC and PAL");
	else
		reopen_one(dev, "reopen.tv_std", tv.index, 0, &pal, 576, &ntsc, 480);
	if (!small.width || !big.width)
		FAIL("reopen.hdmi_dv", "no HDMI input with 640x480 and 1280x720 timings");
	else
		reopen_one(dev, "reopen.hdmi_dv", hdmi.index, 1, &small, 480, &big, 720);
	return n_fail ? 1 : 0;
}

/* ---- libv4l2 emulation ----------------------------------------------- */

/* DEV delivers a compressed format only (v4l2loopback fed with MJPEG, like a
 * USB webcam): libv4l2 offers raw formats decoded from it, marked emulated,
 * after the native ones; each must negotiate with the minimal geometry and
 * capture changing frames of exactly that size. */
static int cmd_emulated(const char *dev)
{
	struct vc_src *s = open_dev(dev, "emulated.open");
	struct vc_caps caps;
	char fcc[16], name[64];
	if (!s)
		return 1;
	int e = ops->get_caps(s, &caps);
	size_t native = 0, emulated = 0, order_bad = 0;
	for (size_t i = 0; e == 0 && i < caps.n_fmts; i++) {
		if (caps.fmts[i].emulated)
			emulated++;
		else
			native++;
		if (i > 0 && !caps.fmts[i].emulated && caps.fmts[i - 1].emulated)
			order_bad++;
	}
	const struct vc_caps_fmt *mj = e == 0 ? vc_caps_find(&caps, V4L2_PIX_FMT_MJPEG) : NULL;
	if (e || !mj || mj->emulated || !emulated || order_bad) {
		FAIL("emulated.caps", "%s: %zu native, %zu emulated, MJPG %s, %zu out of order",
		     strerror(-e), native, emulated, mj ? (mj->emulated ? "emulated" : "native") : "absent",
		     order_bad);
		if (e == 0)
			vc_caps_clear(&caps);
		ops->close(s);
		return 1;
	}
	report("emulated.caps", "OK", "%zu native + %zu emulated formats", native, emulated);
	struct vc_src_format cur;
	ops->get_format(s, &cur);
	for (size_t i = 0; i < caps.n_fmts; i++) {
		const struct vc_caps_fmt *cf = &caps.fmts[i];
		if (!cf->emulated)
			continue;
		vc_fourcc_str(cf->fourcc, fcc);
		snprintf(name, sizeof(name), "emulated.%s", fcc);
		struct vc_mode want = {.fourcc = cf->fourcc, .width = cur.mode.width,
				       .height = cur.mode.height};
		struct vc_src_format f;
		struct vc_geom g;
		struct cap_result r;
		e = ops->set_mode(s, &want, 0, &f);
		if (e < 0 || f.mode.fourcc != want.fourcc) {
			FAIL(name, "S_FMT: %s, answered %s", strerror(-e), vc_fourcc_str(f.mode.fourcc, fcc));
			continue;
		}
		vc_fmt_geometry(f.fmt, f.mode.width, f.mode.height, 0, &g);
		if (f.geom.plane[0].stride != g.plane[0].stride || f.geom.sizeimage != g.sizeimage) {
			FAIL(name, "libv4l2 stride %u size %zu, fmt.c %u %zu", f.geom.plane[0].stride,
			     f.geom.sizeimage, g.plane[0].stride, g.sizeimage);
			continue;
		}
		capture(s, &f, 10, 3000, &g, &r);
		/* The source copies v4l2loopback's frames out and flags (drops) a
		 * buffer the producer has not refilled since our REQBUFS (its
		 * length was reset), before the producer's first frame, one per
		 * buffer of the loopback's 4 (max_buffers=4) at most, and a copy
		 * the producer overtook while it was made (a torn frame:
		 * server/capture/v4l2_copyout.c). Torn copies depend on timing (on
		 * a loaded guest 1 in 10); more than 2 in 10 is not timing. */
		unsigned lead = r.lead_errors < 4 ? r.lead_errors : 4;
		unsigned bad = r.errors - lead > 2 ? r.errors - lead : 0;
		if (r.err < 0 || bad || r.short_bufs || !r.changed)
			FAIL(name, "%s; %u frames, %u error-flagged, %u wrong size, changed %d", r.why,
			     r.frames, r.errors, r.short_bufs, r.changed);
		else
			report(name, "OK", "%ux%u decoded by libv4l2, %u frames%s", f.mode.width,
			       f.mode.height, r.frames,
			       r.fps > 0 ? "" : " (no monotonic timestamps from the loopback)");
	}
	vc_caps_clear(&caps);
	ops->close(s);
	return n_fail ? 1 : 0;
}

/* ---- discovery and hotplug ------------------------------------------- */

/* Expects the vivid instances of boot_vivid.sh: video0..2, video1
 * multi-planar. A by-id link made here like udev would (no udev in the
 * guest) names video2 stably and opens. */
static int cmd_discover(int n_expect)
{
	struct vc_dev_info *list = NULL;
	size_t n = 0;
	int e = vc_discover_list(&list, &n);
	size_t vivid = 0, mplane = 0;
	for (size_t i = 0; i < n; i++) {
		vivid += strcmp(list[i].driver, "vivid") == 0;
		mplane += list[i].mplane;
	}
	if (e || (int)n != n_expect || vivid != n || mplane != 1)
		FAIL("discover.list", "%d: %zu capture nodes (%zu vivid, %zu multi-planar), expected %d",
		     e, n, vivid, mplane, n_expect);
	else
		report("discover.list", "OK", "%zu capture nodes, first %s '%s'", n, list[0].path,
		       list[0].card);
	free(list);

	const char *link = "/dev/v4l/by-id/usb-vivid_Cam-video-index0";
	mkdir("/dev/v4l", 0755);
	mkdir("/dev/v4l/by-id", 0755);
	unlink(link);
	if (symlink("../../video2", link) < 0) {
		FAIL("discover.by_id", "symlink: %s", strerror(errno));
		return 1;
	}
	struct vc_dev_info info;
	char node[64] = "";
	memset(&info, 0, sizeof(info));
	int e1 = vc_discover_names("/dev", "/dev/video2", &info);
	int e2 = vc_discover_resolve(link, node, sizeof(node));
	struct vc_src *s = open_dev(link, NULL);
	struct vc_v4l2_info vi = {0};
	if (s)
		vc_v4l2_info(s, &vi);
	if (e1 || strcmp(info.stable, link) || e2 || strcmp(node, "/dev/video2") || !s ||
	    strcmp(vi.bus, "platform:vivid-002"))
		FAIL("discover.by_id", "names %d stable '%s', resolve %d '%s', open %s bus '%s'", e1,
		     info.stable, e2, node, s ? "ok" : "failed", vi.bus);
	else
		report("discover.by_id", "OK", "%s -> %s (%s)", link, node, vi.bus);
	if (s)
		ops->close(s);
	unlink(link);
	return n_fail ? 1 : 0;
}

struct hotplug_state {
	struct event_base *base;
	const char *path;
	int calls;
	int opened;
};

static void on_hotplug(void *opaque)
{
	struct hotplug_state *h = opaque;
	struct vc_src *s = NULL;
	h->calls++;
	/* what capture.c does for an ABSENT camera when poked */
	if (ops->open(h->path, &s) == 0) {
		h->opened = 1;
		ops->close(s);
		event_base_loopbreak(h->base);
	}
}

/* Watches /dev, runs CMD (which unloads and reloads vivid, making path
 * disappear and reappear), and expects the watch to report it and path to
 * open afterwards. */
static int cmd_hotplug(const char *path, int argc, char **argv)
{
	struct hotplug_state h = {.base = event_base_new(), .path = path};
	struct vc_hotplug *w = NULL;
	if (argc < 1)
		return 2;
	int e = vc_hotplug_new(h.base, NULL, on_hotplug, &h, &w);
	if (e < 0) {
		FAIL("hotplug", "vc_hotplug_new: %s", strerror(-e));
		event_base_free(h.base);
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	int64_t t0 = now_us();
	waitpid(pid, &st, 0); /* inotify queues the events meanwhile */
	struct timeval tv = {10, 0};
	event_base_loopexit(h.base, &tv);
	event_base_dispatch(h.base);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("hotplug", "the replug command failed (status 0x%x)", st);
	else if (!h.calls || !h.opened)
		FAIL("hotplug", "%d hotplug calls, %s %s", h.calls, path,
		     h.opened ? "opened" : "never opened");
	else
		report("hotplug", "OK", "%s back after replug: %d call(s), %.1f s", path, h.calls,
		       (now_us() - t0) / 1e6);
	vc_hotplug_free(w);
	event_base_free(h.base);
	return n_fail ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: vivid_check formats|device|controls|inputs|errors|reopen|emulated|discover|hotplug DEV [options]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *cmd = argv[1], *dev = argv[2];
	int r;
	if (!strcmp(cmd, "formats"))
		r = cmd_formats(dev, argc - 3, argv + 3);
	else if (!strcmp(cmd, "device"))
		r = cmd_device(dev, argc - 3, argv + 3);
	else if (!strcmp(cmd, "controls"))
		r = cmd_controls(dev);
	else if (!strcmp(cmd, "inputs"))
		r = cmd_inputs(dev);
	else if (!strcmp(cmd, "errors"))
		r = cmd_errors(dev);
	else if (!strcmp(cmd, "reopen"))
		r = cmd_reopen(dev);
	else if (!strcmp(cmd, "emulated"))
		r = cmd_emulated(dev);
	else if (!strcmp(cmd, "discover"))
		r = cmd_discover(atoi(dev));
	else if (!strcmp(cmd, "hotplug"))
		r = cmd_hotplug(dev, argc - 3, argv + 3);
	else
		return usage();
	if (r == 2)
		return usage();
	return r;
}
