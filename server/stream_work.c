/* Per-frame work of an output: turns a capture frame into what the output
 * delivers. Intermediate pictures are planar 4:2:0 (YU12), the hub every
 * converter, transform and the JPEG encoder handle directly. */
#define LOG_PREFIX "work:"
#include "server/stream_work.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>

#include "common/convert.h"
#include "common/jpeg.h"
#include "common/log.h"
#include "common/transform.h"

struct vc_swork {
	struct vc_jpeg *jpeg;
	struct vc_conv *conv;
};

struct vc_swork *vc_swork_new(void)
{
	struct vc_swork *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->jpeg = vc_jpeg_new();
	w->conv = vc_conv_new();
	if (!w->jpeg || !w->conv) {
		vc_swork_free(w);
		return NULL;
	}
	return w;
}

void vc_swork_free(struct vc_swork *w)
{
	if (!w)
		return;
	vc_jpeg_free(w->jpeg);
	vc_conv_free(w->conv);
	free(w);
}

static int is_jpeg(const struct vc_fmt *f)
{
	return f && f->layout == VC_LAYOUT_COMPRESSED;
}

int vc_swork_sendable(const struct vc_frame *f, const struct vc_output *o)
{
	if (!f->fmt || f->geom.width != o->width || f->geom.height != o->height)
		return 0;
	if (is_jpeg(f->fmt))
		return is_jpeg(vc_fmt_by_fourcc(o->fourcc));
	if (f->fmt->fourcc != o->fourcc)
		return 0;
	for (int p = 0; p < f->geom.color_planes; p++) {
		uint32_t min = vc_fmt_min_stride(f->fmt, f->geom.width);

		/* plane 0's minimum decides; chroma strides follow it (V4L2 rule) */
		if (p == 0 && f->geom.plane[0].stride != min)
			return 0;
	}
	return 1;
}

static struct vc_frame *new_raw(const struct vc_fmt *fmt, uint32_t w, uint32_t h,
				struct vc_image *img)
{
	struct vc_frame *f = vc_frame_new_fmt(fmt, w, h);

	if (!f)
		return NULL;
	uint8_t *mem[3];
	for (int i = 0; i < 3; i++)
		mem[i] = f->geom.mem_planes > i ? vc_frame_data(f, i) : NULL;
	vc_image_from_geom(fmt, &f->geom, mem, img);
	return f;
}

int vc_swork_run(struct vc_swork *w, const struct vc_plan *plan, const struct vc_frame *src,
		 struct vc_frame **out)
{
	const struct vc_output *o = &plan->out;
	const struct vc_fmt *ofmt = vc_fmt_by_fourcc(o->fourcc);
	const struct vc_fmt *hub = vc_fmt_by_fourcc(V4L2_PIX_FMT_YUV420);
	struct vc_frame *tmp[3] = { NULL, NULL, NULL };
	struct vc_image img, dst;
	struct vc_frame *res = NULL;
	int ret;

	if (!ofmt || !hub)
		return -EINVAL;
	ret = vc_image_from_frame(src, &img);
	if (ret < 0)
		return ret;

	struct vc_transform t = { o->rotate, o->flip };
	int turn = !vc_transform_is_identity(t);
	/* size before rotation */
	uint32_t pw = o->width, ph = o->height;
	if (o->rotate == 90 || o->rotate == 270) {
		pw = o->height;
		ph = o->width;
	}

	/* JPEG in, JPEG out at the same size: lossless rotate/flip only. */
	if (is_jpeg(img.fmt) && is_jpeg(ofmt) && img.width == pw && img.height == ph &&
	    (plan->steps & VC_STEP_JPEG_XFORM)) {
		size_t cap = vc_jpeg_bound(o->width, o->height), len;
		uint32_t ow, oh;

		res = vc_frame_new(cap);
		if (!res)
			return -ENOMEM;
		ret = vc_jpeg_transform(w->jpeg, src->mem[0], src->bytesused[0], o->rotate, o->flip,
					vc_frame_data(res, 0), cap, &len, &ow, &oh);
		if (ret < 0)
			goto fail;
		res->fmt = ofmt;
		vc_fmt_geometry(ofmt, ow, oh, 0, &res->geom);
		res->bytesused[0] = len;
		goto done;
	}

	if (is_jpeg(img.fmt)) {
		struct vc_jpeg_info info;
		int denom = plan->decode_denom ? plan->decode_denom : 1;

		ret = vc_jpeg_parse(src->mem[0], src->bytesused[0], &info);
		if (ret < 0)
			goto fail;
		/* never decode smaller than the output needs */
		while (denom > 1 && (vc_jpeg_scaled(info.width, denom) < pw ||
				     vc_jpeg_scaled(info.height, denom) < ph))
			denom /= 2;
		tmp[0] = new_raw(hub, vc_jpeg_scaled(info.width, denom),
				 vc_jpeg_scaled(info.height, denom), &dst);
		if (!tmp[0]) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = vc_jpeg_decode(w->jpeg, src->mem[0], src->bytesused[0], denom, &dst);
		if (ret < 0)
			goto fail;
		img = dst;
	}

	/* Convert/scale to the pre-rotation picture: the output format itself
	 * when it is raw and can be turned directly, else the 4:2:0 hub. */
	const struct vc_fmt *mid = is_jpeg(ofmt) ? img.fmt : ofmt;
	if (turn && !vc_transform_supported(mid, t))
		mid = hub;
	if (img.fmt != mid || img.width != pw || img.height != ph) {
		if (!vc_conv_supported(img.fmt, mid))
			mid = hub;
		tmp[1] = new_raw(mid, pw, ph, &dst);
		if (!tmp[1]) {
			ret = -ENOMEM;
			goto fail;
		}
		dst.color = is_jpeg(ofmt) ? img.color : src->color;
		ret = vc_conv_run(w->conv, &img, &dst);
		if (ret < 0)
			goto fail;
		img = dst;
	}
	if (turn) {
		tmp[2] = new_raw(img.fmt, o->width, o->height, &dst);
		if (!tmp[2]) {
			ret = -ENOMEM;
			goto fail;
		}
		dst.color = img.color;
		ret = vc_transform_run(&img, &dst, t);
		if (ret < 0)
			goto fail;
		img = dst;
	}

	if (is_jpeg(ofmt)) {
		size_t cap = vc_jpeg_bound(o->width, o->height), len;
		int q = o->quality ? o->quality : 80;

		res = vc_frame_new(cap);
		if (!res) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = vc_jpeg_encode(w->jpeg, &img, q, vc_frame_data(res, 0), cap, &len);
		if (ret < 0)
			goto fail;
		res->fmt = ofmt;
		vc_fmt_geometry(ofmt, o->width, o->height, 0, &res->geom);
		res->bytesused[0] = len;
	} else if (img.fmt == ofmt && img.width == o->width && img.height == o->height &&
		   (tmp[2] || tmp[1])) {
		/* the last intermediate is the result */
		res = tmp[2] ? tmp[2] : tmp[1];
		if (res == tmp[2])
			tmp[2] = NULL;
		else
			tmp[1] = NULL;
	} else {
		/* a copy/repack (stride padding) or a final conversion */
		res = new_raw(ofmt, o->width, o->height, &dst);
		if (!res) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = vc_conv_run(w->conv, &img, &dst);
		if (ret < 0)
			goto fail;
	}
done:
	res->seq = src->seq;
	res->ts_us = src->ts_us;
	res->ts_real_us = src->ts_real_us;
	res->field = is_jpeg(ofmt) ? V4L2_FIELD_NONE : src->field;
	res->color = is_jpeg(ofmt) ? (struct vc_colorimetry){ 0 } : src->color;
	for (int i = 0; i < 3; i++)
		vc_frame_unref(tmp[i]);
	*out = res;
	return 0;
fail:
	for (int i = 0; i < 3; i++)
		vc_frame_unref(tmp[i]);
	vc_frame_unref(res);
	return ret;
}
