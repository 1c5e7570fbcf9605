/* Per-client negotiation (negotiate.h), the plan half: one request against
 * a device mode, like TRY_FMT (the device-mode choice is negotiate_mode.c).
 *
 * Sizes in a request are the delivered size, i.e. after rotation: rotate=90
 * with width=480,height=640 on a 640x480 camera is the full picture. */
#include "common/negotiate.h"
#include "common/negotiate_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <linux/videodev2.h>

#include "common/convert.h"
#include "common/jpeg.h"
#include "common/transform.h"

#define DEFAULT_QUALITY 80

/* Lossless JPEG transforms trim partial MCUs; the MCU of webcam MJPEG
 * (4:2:2) is 16x8. The pipeline reports the real size of each frame; this
 * is the prediction used for the plan. */
#define XFORM_MCU_W 16
#define XFORM_MCU_H 8

/* Width/height multiples a raw output format needs: a whole pixel group and
 * whole chroma samples. */
static void align_of(const struct vc_fmt *f, uint32_t *aw, uint32_t *ah)
{
	uint32_t w = 1u << f->log2_chroma_w, h = 1u << f->log2_chroma_h;
	if (f->group_px > w)
		w = f->group_px;
	if (is_compressed(f) || f->family == VC_FAM_BAYER) {
		w = f->family == VC_FAM_BAYER ? 2 : 1;
		h = f->family == VC_FAM_BAYER ? 2 : 1;
	}
	*aw = w;
	*ah = h;
}

/* Formats libjpeg-turbo reads/writes without our converter in between
 * (8-bit planar 4:2:0/4:2:2 in one buffer, 8-bit grey, 8-bit 3/4-byte RGB);
 * others cost an extra conversion pass, which the plan shows as CONVERT. */
static int jpeg_direct(const struct vc_fmt *f)
{
	if (f->depth != 8 || f->mem_planes != 1)
		return 0;
	if (f->layout == VC_LAYOUT_PLANAR_YUV)
		return f->log2_chroma_w == 1 && f->log2_chroma_h <= 1;
	if (f->layout == VC_LAYOUT_GREY)
		return 1;
	if (f->layout == VC_LAYOUT_PACKED_RGB)
		return (f->group_bytes[0] == 3 || f->group_bytes[0] == 4) && f->r.depth == 8 &&
		       f->g.depth == 8 && f->b.depth == 8;
	return 0;
}

static uint32_t align_down(uint32_t v, uint32_t a)
{
	uint32_t r = v / a * a;
	return r ? r : a;
}

/* The output format a request gets (JPEG and MJPEG are one stream type),
 * refused when no path from the mode's format writes it. */
static int plan_format(const struct vc_mode *mode, const struct vc_fmt *mf,
		       const struct vc_request *req, uint32_t *fccp, const struct vc_fmt **ofp)
{
	uint32_t fcc = req->fourcc ? req->fourcc : mode->fourcc;
	const struct vc_fmt *of = vc_fmt_by_fourcc(fcc);
	if (!of || !vc_fmt_is_raw(of))
		return -EINVAL;
	if (is_compressed(of))
		fcc = V4L2_PIX_FMT_MJPEG; /* JPEG and MJPEG are one stream type */
	if (of->family == VC_FAM_BAYER) {
		/* Bayer can only be passed through: no converter writes it */
		if (fcc != mode->fourcc || req->rotate % 360 || req->flip & 3)
			return -EINVAL;
	} else if (!is_compressed(of)) {
		const struct vc_fmt *src = mf;
		if (is_compressed(mf))
			src = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420); /* what decode yields */
		if (fcc != mode->fourcc && !vc_conv_supported(src, of))
			return -EINVAL;
	}
	*fccp = fcc;
	*ofp = of;
	return 0;
}

/* The delivered size: the request's, clamped to the mode in the delivered
 * orientation (never upscaled), the missing side kept in proportion, then
 * aligned down to what the output row needs. */
static void plan_size(const struct vc_mode *mode, const struct vc_request *req,
		      const struct vc_fmt *of, int turned, struct vc_plan *p, uint32_t *wp,
		      uint32_t *hp)
{
	uint32_t sw = turned ? mode->height : mode->width;
	uint32_t sh = turned ? mode->width : mode->height;
	uint32_t w = req->width, h = req->height;
	if (!w && !h) {
		w = sw;
		h = sh;
	} else if (!h) {
		if (w > sw) {
			w = sw;
			p->adjusted |= VC_ADJ_SIZE;
		}
		h = round_div((uint64_t)w * sh, sw);
	} else if (!w) {
		if (h > sh) {
			h = sh;
			p->adjusted |= VC_ADJ_SIZE;
		}
		w = round_div((uint64_t)h * sw, sh);
	} else {
		if (w > sw) {
			w = sw;
			p->adjusted |= VC_ADJ_SIZE;
		}
		if (h > sh) {
			h = sh;
			p->adjusted |= VC_ADJ_SIZE;
		}
	}
	if (!w)
		w = 1;
	if (!h)
		h = 1;
	uint32_t aw, ah;
	align_of(of, &aw, &ah);
	if (of->family == VC_FAM_BAYER) {
		w = sw; /* never scaled */
		h = sh;
	}
	uint32_t w2 = align_down(w, aw), h2 = align_down(h, ah);
	if ((req->width && w2 != req->width) || (req->height && h2 != req->height))
		p->adjusted |= VC_ADJ_SIZE;
	*wp = w2;
	*hp = h2;
}

/* The delivered size of a lossless JPEG transform: its predicted trim of
 * partial MCUs (see XFORM_MCU_*). */
static void plan_xform_size(const struct vc_mode *mode, struct vc_transform t, int turned,
			    uint32_t *wp, uint32_t *hp)
{
	/* the one tjTransform op of the canonical transform trims the edge
	 * that would have to move to the top/left */
	uint32_t tw = mode->width, th = mode->height;
	struct vc_transform c = vc_transform_canon(t);
	int k = (c.flip ? 4 : 0) + c.rotate / 90;
	/* none rot90 rot180 rot270 | hflip transverse vflip transpose */
	static const uint8_t trim_w[8] = { 0, 0, 1, 1, 1, 1, 0, 0 };
	static const uint8_t trim_h[8] = { 0, 1, 1, 0, 0, 1, 1, 0 };
	if (trim_w[k])
		tw = align_down(tw, XFORM_MCU_W);
	if (trim_h[k])
		th = align_down(th, XFORM_MCU_H);
	*wp = turned ? th : tw;
	*hp = turned ? tw : th;
}

/* The steps of the general path (decode -> convert/scale -> rotate ->
 * encode), with the largest JPEG decode scaling that still covers the
 * target size pw x ph (before rotation). */
static void plan_staged(const struct vc_mode *mode, const struct vc_fmt *mf,
			const struct vc_fmt *of, struct vc_transform t, int xform, uint32_t pw,
			uint32_t ph, struct vc_plan *p)
{
	const struct vc_fmt *cur = mf; /* format of the picture at each stage */
	uint32_t cw = mode->width, ch = mode->height;
	if (is_compressed(mf)) {
		p->steps |= VC_STEP_DECODE;
		/* largest DCT scaling that still covers the target */
		for (int d = 8; d >= 2; d /= 2) {
			if (vc_jpeg_scaled(mode->width, d) >= pw &&
			    vc_jpeg_scaled(mode->height, d) >= ph) {
				p->decode_denom = (uint8_t)d;
				break;
			}
		}
		cw = vc_jpeg_scaled(mode->width, p->decode_denom);
		ch = vc_jpeg_scaled(mode->height, p->decode_denom);
		cur = NULL; /* decode writes whatever the next step wants */
	}
	if (is_compressed(of)) {
		/* encode reads most rows directly; Bayer needs demosaicing
		 * and the rest a pass through the converter */
		if (cur && !jpeg_direct(cur))
			p->steps |= VC_STEP_CONVERT;
	} else if (cur ? cur != of : !jpeg_direct(of)) {
		p->steps |= VC_STEP_CONVERT;
	}
	if (cw != pw || ch != ph)
		p->steps |= VC_STEP_SCALE;
	if (xform) {
		p->steps |= VC_STEP_ROTATE;
		/* rows the transform cannot turn go through a hub format */
		if (!is_compressed(of) && !vc_transform_supported(of, t))
			p->steps |= VC_STEP_CONVERT;
	}
	if (is_compressed(of))
		p->steps |= VC_STEP_ENCODE;
}

/* Quality (when encoding), rate (never above the device's) and the format
 * flag: the parts of the plan that do not depend on the steps' order. */
static void plan_limits(const struct vc_mode *mode, const struct vc_request *req, uint32_t fcc,
			struct vc_plan *p)
{
	if (p->steps & VC_STEP_ENCODE) {
		p->out.quality = req->quality ? req->quality : DEFAULT_QUALITY;
		if (p->out.quality > 100) {
			p->out.quality = 100;
			p->adjusted |= VC_ADJ_QUALITY;
		}
	}
	uint32_t dev_fps = ival_fps(mode->ival);
	p->fps = req->fps;
	if (dev_fps && (!p->fps || p->fps > dev_fps)) {
		if (p->fps > dev_fps)
			p->adjusted |= VC_ADJ_FPS;
		p->fps = dev_fps;
	}
	if (fcc != (req->fourcc == V4L2_PIX_FMT_JPEG ? V4L2_PIX_FMT_MJPEG : req->fourcc) &&
	    req->fourcc)
		p->adjusted |= VC_ADJ_FORMAT;
}

/* H.264 from an H.264 camera: its stream as it comes, so only at the
 * camera's size (a larger request is clamped, as never upscaled), without
 * rotation, at the camera's rate (dropping frames would break references),
 * with no encoder settings (nothing encodes). Anything else cannot be
 * served from this mode: there is no H.264 decoder. */
static int plan_h264_pass(const struct vc_mode *mode, const struct vc_request *req,
			  struct vc_plan *plan)
{
	struct vc_plan p;
	uint32_t w = req->width, h = req->height;

	memset(&p, 0, sizeof(p));
	if ((w && w < mode->width) || (h && h < mode->height) || req->rotate % 360 ||
	    req->flip & 3 || !mode->width || !mode->height)
		return -EINVAL;
	if (w > mode->width || h > mode->height)
		p.adjusted |= VC_ADJ_SIZE;
	p.steps = VC_STEP_PASSTHROUGH;
	p.decode_denom = 1;
	p.fps = ival_fps(mode->ival);
	if (req->fps && p.fps && req->fps != p.fps)
		p.adjusted |= VC_ADJ_FPS;
	if (!p.fps)
		p.fps = req->fps;
	p.out.fourcc = V4L2_PIX_FMT_H264;
	p.out.width = mode->width;
	p.out.height = mode->height;
	*plan = p;
	return 0;
}

/* H.264: the I420 picture the encoder takes, planned like a raw request,
 * then encoded. The rate is part of the output (the encoder's clock). */
static int plan_h264(const struct vc_mode *mode, const struct vc_request *req,
		     struct vc_plan *plan)
{
	struct vc_request r = *req;
	struct vc_plan p;

	if (mode->fourcc == V4L2_PIX_FMT_H264)
		return plan_h264_pass(mode, req, plan);
	r.fourcc = V4L2_PIX_FMT_YUV420;
	r.quality = 0;
	if (negotiate_plan(mode, &r, &p) < 0 || p.out.width < 16 || p.out.height < 16)
		return -EINVAL;
	p.steps = (p.steps & ~(unsigned)VC_STEP_PASSTHROUGH) | VC_STEP_ENCODE;
	p.adjusted &= ~(unsigned)VC_ADJ_FORMAT;
	p.out.fourcc = V4L2_PIX_FMT_H264;
	p.out.bitrate = req->bitrate;
	p.out.gop = req->gop;
	p.out.fps = p.fps;
	*plan = p;
	return 0;
}

/* Plans asked from outside negotiate*.c (the mode choice's own are not
 * counted): a unit test checks one request costs one (issue 21). Global
 * because it counts every caller; atomic, plans run on any thread. */
static atomic_ulong plans_asked;

unsigned long vc_negotiate_plans(void)
{
	return atomic_load_explicit(&plans_asked, memory_order_relaxed);
}

int vc_negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		      struct vc_plan *plan)
{
	atomic_fetch_add_explicit(&plans_asked, 1, memory_order_relaxed);
	return negotiate_plan(mode, req, plan);
}

int negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		   struct vc_plan *plan)
{
	if (req && req->fourcc == V4L2_PIX_FMT_H264)
		return mode && plan ? plan_h264(mode, req, plan) : -EINVAL;
	const struct vc_fmt *mf = mode ? vc_fmt_by_fourcc(mode->fourcc) : NULL;
	if (!mf || !req || !plan || !mode->width || !mode->height || !vc_fmt_is_raw(mf))
		return -EINVAL;

	struct vc_plan p;
	memset(&p, 0, sizeof(p));
	p.decode_denom = 1;

	/* format */
	uint32_t fcc;
	const struct vc_fmt *of;
	if (plan_format(mode, mf, req, &fcc, &of) < 0)
		return -EINVAL;

	/* rotation: nearest multiple of 90 */
	uint32_t r = req->rotate % 360;
	uint32_t rn = (r + 45) / 90 % 4 * 90;
	if (rn != r)
		p.adjusted |= VC_ADJ_ROTATE;
	struct vc_transform t = { (uint16_t)rn, (uint8_t)(req->flip & 3) };
	int turned = rn == 90 || rn == 270;
	int xform = !vc_transform_is_identity(t);

	/* size, in the delivered orientation */
	uint32_t w, h;
	plan_size(mode, req, of, turned, &p, &w, &h);
	/* the same size before rotation */
	uint32_t pw = turned ? h : w, ph = turned ? w : h;
	int same_size = pw == mode->width && ph == mode->height;

	/* The camera's own JPEG goes out untouched unless the client named a
	 * quality: quality= on a JPEG camera re-encodes (decode + encode, shared
	 * by the clients that ask the same), since that is what it is asked for
	 * (a smaller stream over a slow link). */
	if (is_compressed(mf) && is_compressed(of) && same_size && !req->quality) {
		if (!xform) {
			p.steps = VC_STEP_PASSTHROUGH;
		} else {
			p.steps = VC_STEP_JPEG_XFORM;
			plan_xform_size(mode, t, turned, &w, &h);
		}
	} else if (!is_compressed(mf) && fcc == mode->fourcc && same_size && !xform) {
		p.steps = VC_STEP_PASSTHROUGH;
	} else {
		plan_staged(mode, mf, of, t, xform, pw, ph, &p);
	}

	plan_limits(mode, req, fcc, &p);
	p.out.fourcc = fcc;
	p.out.width = w;
	p.out.height = h;
	p.out.rotate = (uint16_t)rn;
	p.out.flip = t.flip;
	*plan = p;
	return 0;
}

int vc_output_equal(const struct vc_output *a, const struct vc_output *b)
{
	struct vc_transform ta = vc_transform_canon((struct vc_transform){ a->rotate, a->flip });
	struct vc_transform tb = vc_transform_canon((struct vc_transform){ b->rotate, b->flip });
	return a->fourcc == b->fourcc && a->width == b->width && a->height == b->height &&
	       a->quality == b->quality && ta.rotate == tb.rotate && ta.flip == tb.flip &&
	       a->bitrate == b->bitrate && a->gop == b->gop && a->fps == b->fps;
}

const char *vc_steps_str(unsigned steps, uint8_t decode_denom, char *buf, size_t len)
{
	static const char *const names[] = { "passthrough", "decode", "convert", "scale",
					     "rotate",      "encode", "jpeg_xform" };
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(steps & (1u << i)))
			continue;
		int k;
		if ((1u << i) == VC_STEP_DECODE && decode_denom > 1)
			k = snprintf(buf + n, len - n, "%sdecode/%u", n ? "+" : "", decode_denom);
		else
			k = snprintf(buf + n, len - n, "%s%s", n ? "+" : "", names[i]);
		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

