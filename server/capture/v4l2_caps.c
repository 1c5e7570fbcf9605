/* What a V4L2 device can deliver, as struct vc_caps: ENUM_FMT (native
 * formats first, libv4l2's emulated ones after, each marked; the pixel
 * format table's formats and H.264, which is passed through only), ENUM_FRAMESIZES
 * (discrete lists, or stepwise/continuous ranges with a few representative
 * sizes) and ENUM_FRAMEINTERVALS per size. Devices without size enumeration
 * (an analog input, many capture cards) get their current size. */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/h264.h"
#include "server/capture/v4l2_int.h"

#define MAX_SIZES 64

/* Sizes offered for a stepwise/continuous range (clamped and aligned into
 * it): what clients commonly ask for. */
static const uint32_t common_sizes[][2] = {
	{320, 240}, {640, 480}, {800, 600}, {1280, 720}, {1920, 1080}, {3840, 2160},
};

static int cmp_fract(const void *a, const void *b)
{
	const struct vc_fract *x = a, *y = b;
	/* x < y as x.num/x.den < y.num/y.den; 64-bit products cannot overflow */
	uint64_t l = (uint64_t)x->num * y->den, r = (uint64_t)y->num * x->den;
	return l < r ? -1 : l > r;
}

static void enum_ivals(struct v4l2src *d, uint32_t fourcc, struct vc_caps_size *sz)
{
	struct v4l2_frmivalenum iv;
	sz->n_ivals = 0;
	for (uint32_t i = 0; sz->n_ivals < VC_CAPS_MAX_IVALS; i++) {
		memset(&iv, 0, sizeof(iv));
		iv.index = i;
		iv.pixel_format = fourcc;
		iv.width = sz->width;
		iv.height = sz->height;
		if (v4l2_xioctl(d, VIDIOC_ENUM_FRAMEINTERVALS, &iv) < 0)
			break;
		if (iv.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
			if (!iv.discrete.numerator || !iv.discrete.denominator)
				continue;
			sz->ival[sz->n_ivals].num = iv.discrete.numerator;
			sz->ival[sz->n_ivals].den = iv.discrete.denominator;
			sz->n_ivals++;
			continue;
		}
		/* a range: its two ends (fastest first) */
		if (iv.stepwise.min.numerator && iv.stepwise.min.denominator) {
			sz->ival[sz->n_ivals].num = iv.stepwise.min.numerator;
			sz->ival[sz->n_ivals].den = iv.stepwise.min.denominator;
			sz->n_ivals++;
		}
		if (iv.stepwise.max.numerator && iv.stepwise.max.denominator &&
		    sz->n_ivals < VC_CAPS_MAX_IVALS) {
			sz->ival[sz->n_ivals].num = iv.stepwise.max.numerator;
			sz->ival[sz->n_ivals].den = iv.stepwise.max.denominator;
			sz->n_ivals++;
		}
		break;
	}
	qsort(sz->ival, sz->n_ivals, sizeof(sz->ival[0]), cmp_fract);
}

void v4l2_nearest_ival(struct v4l2src *d, uint32_t fourcc, uint32_t w, uint32_t h,
		       struct vc_fract *want)
{
	struct vc_caps_size sz;
	memset(&sz, 0, sizeof(sz));
	sz.width = w;
	sz.height = h;
	enum_ivals(d, fourcc, &sz);
	if (sz.n_ivals == 0)
		return;
	/* nearest in frame rate: compare |den/num - wden/wnum| as doubles */
	double fw = (double)want->den / want->num, best_diff = -1;
	size_t best = 0;
	for (size_t i = 0; i < sz.n_ivals; i++) {
		double f = (double)sz.ival[i].den / sz.ival[i].num;
		double diff = f > fw ? f - fw : fw - f;
		if (best_diff < 0 || diff < best_diff) {
			best_diff = diff;
			best = i;
		}
	}
	*want = sz.ival[best];
}

static uint32_t clamp_step(uint32_t v, uint32_t lo, uint32_t hi, uint32_t step)
{
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	if (step > 1)
		v = lo + (v - lo) / step * step;
	return v;
}

static int add_size(struct vc_caps_fmt *cf, uint32_t w, uint32_t h)
{
	for (size_t i = 0; i < cf->n_sizes; i++)
		if (cf->sizes[i].width == w && cf->sizes[i].height == h)
			return 0;
	if (cf->n_sizes >= MAX_SIZES)
		return 0;
	struct vc_caps_size *n = realloc(cf->sizes, (cf->n_sizes + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	cf->sizes = n;
	memset(&n[cf->n_sizes], 0, sizeof(n[0]));
	n[cf->n_sizes].width = w;
	n[cf->n_sizes].height = h;
	cf->n_sizes++;
	return 0;
}

static int enum_sizes(struct v4l2src *d, struct vc_caps_fmt *cf)
{
	struct v4l2_frmsizeenum fs;
	int e = 0;
	for (uint32_t i = 0; i < MAX_SIZES; i++) {
		memset(&fs, 0, sizeof(fs));
		fs.index = i;
		fs.pixel_format = cf->fourcc;
		if (v4l2_xioctl(d, VIDIOC_ENUM_FRAMESIZES, &fs) < 0)
			break;
		if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
			e = add_size(cf, fs.discrete.width, fs.discrete.height);
			if (e < 0)
				return e;
			continue;
		}
		const struct v4l2_frmsize_stepwise *sw = &fs.stepwise;
		cf->stepwise = 1;
		cf->min_w = sw->min_width;
		cf->max_w = sw->max_width;
		cf->step_w = fs.type == V4L2_FRMSIZE_TYPE_CONTINUOUS ? 1 : sw->step_width;
		cf->min_h = sw->min_height;
		cf->max_h = sw->max_height;
		cf->step_h = fs.type == V4L2_FRMSIZE_TYPE_CONTINUOUS ? 1 : sw->step_height;
		for (size_t k = 0; k < sizeof(common_sizes) / sizeof(common_sizes[0]); k++) {
			uint32_t w = clamp_step(common_sizes[k][0], cf->min_w, cf->max_w, cf->step_w);
			uint32_t h = clamp_step(common_sizes[k][1], cf->min_h, cf->max_h, cf->step_h);
			if ((e = add_size(cf, w, h)) < 0)
				return e;
		}
		if ((e = add_size(cf, cf->max_w, cf->max_h)) < 0)
			return e;
		break;
	}
	if (cf->n_sizes == 0 && d->cur.fmt) {
		/* No size enumeration: the current size is the one we know works. */
		e = add_size(cf, d->cur.mode.width, d->cur.mode.height);
		if (e < 0)
			return e;
	}
	for (size_t i = 0; i < cf->n_sizes; i++)
		enum_ivals(d, cf->fourcc, &cf->sizes[i]);
	if (cf->n_sizes == 1 && cf->sizes[0].n_ivals == 0 && d->cur.mode.ival.num &&
	    cf->sizes[0].width == d->cur.mode.width && cf->sizes[0].height == d->cur.mode.height) {
		cf->sizes[0].ival[0] = d->cur.mode.ival; /* e.g. an analog standard's rate */
		cf->sizes[0].n_ivals = 1;
	}
	return 0;
}

/* libv4l2 lists its emulated formats (RGB3, YU12...) for a device whose
 * only native format is H.264, which libv4lconvert cannot decode: they
 * would fail when streamed, so they are dropped. Returns the new count. */
static size_t drop_undecodable_emulation(struct v4l2src *d, struct vc_caps_fmt *fmts, size_t n,
					 int native_h264_only)
{
	size_t k = 0;

	if (!native_h264_only)
		return n; /* some native format libv4lconvert may read */
	for (size_t i = 0; i < n; i++) {
		if (!fmts[i].emulated) {
			fmts[k++] = fmts[i];
			continue;
		}
		free(fmts[i].sizes);
	}
	if (k < n)
		log_info("%s: only H.264 natively: %zu formats libv4l2 offers from it dropped "
			 "(nothing decodes H.264)", d->path, n - k);
	return k;
}

int v4l2_enum_caps(struct v4l2src *d, struct vc_caps *caps)
{
	struct v4l2_fmtdesc fd;
	struct vc_caps_fmt *fmts = NULL;
	size_t n = 0;
	char fcc[16];
	int e = 0, native_h264 = 0, native_other = 0;

	memset(caps, 0, sizeof(*caps));
	/* Two passes: native formats first, then the emulated ones. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < 256; i++) {
			memset(&fd, 0, sizeof(fd));
			fd.index = i;
			fd.type = d->type;
			e = v4l2_xioctl(d, VIDIOC_ENUM_FMT, &fd);
			if (e == -EINVAL) {
				e = 0;
				break;
			}
			if (e < 0) {
				e = v4l2_gone(e);
				goto fail;
			}
			int emulated = (fd.flags & V4L2_FMT_FLAG_EMULATED) != 0;
			if (emulated != pass)
				continue;
			if (!emulated && fd.pixelformat == V4L2_PIX_FMT_H264)
				native_h264 = 1;
			else if (!emulated)
				native_other = 1;
			if (!vc_capture_fmt(fd.pixelformat)) {
				if (pass == 0)
					log_debug("%s: format %s unknown, skipped", d->path,
						  vc_fourcc_str(fd.pixelformat, fcc));
				continue;
			}
			int dup = 0;
			for (size_t k = 0; k < n; k++)
				dup |= fmts[k].fourcc == fd.pixelformat;
			if (dup)
				continue;
			struct vc_caps_fmt *nf = realloc(fmts, (n + 1) * sizeof(*nf));
			if (!nf) {
				e = -ENOMEM;
				goto fail;
			}
			fmts = nf;
			memset(&fmts[n], 0, sizeof(fmts[n]));
			fmts[n].fourcc = fd.pixelformat;
			fmts[n].emulated = (uint8_t)emulated;
			n++;
			e = enum_sizes(d, &fmts[n - 1]);
			if (e < 0)
				goto fail;
		}
	}
	n = drop_undecodable_emulation(d, fmts, n, native_h264 && !native_other);
	caps->fmts = fmts;
	caps->n_fmts = n;
	return 0;
fail:
	caps->fmts = fmts;
	caps->n_fmts = n;
	vc_caps_clear(caps);
	log_error("%s: enumerating formats: %s", d->path, strerror(-e));
	return e;
}
