/* Decoding with TurboJPEG, optionally scaled 1/2, 1/4, 1/8 in the DCT (far
 * cheaper than decoding in full and scaling). Planar YUV with the JPEG's own
 * subsampling and GREY are written straight into the destination planes,
 * the 8-bit RGB family through libjpeg-turbo's colour conversion; the
 * range/matrix the destination asks for is then applied in place. Any
 * Structure is checked by vc_jpeg_parse first (a truncated frame has no EOI
 * and fails there); libjpeg *warnings* after that (corrupt entropy data,
 * and "extraneous bytes before marker", which some webcams produce on every
 * frame) still give a picture: dropping those would make such a camera
 * unusable for anything but passthrough. Fatal libjpeg errors fail.
 * Every call passes TJFLAG_LIMITSCANS (TurboJPEG gives up past 500 scans)
 * behind vc_jpeg_parse's tighter scan limit, in case the two ever disagree
 * on what a scan is. */
#define LOG_PREFIX "jpeg: "
#include "common/jpeg_int.h"

#include <errno.h>
#include <string.h>

#include <libyuv.h>

#include "common/color.h"
#include "common/convert.h"
#include "common/log.h"

static const struct { int pf, size, r, g, b, alpha; } tj_layouts[] = {
	{ TJPF_RGB, 3, 0, 1, 2, 0 },  { TJPF_BGR, 3, 2, 1, 0, 0 },
	{ TJPF_RGBX, 4, 0, 1, 2, 0 }, { TJPF_BGRX, 4, 2, 1, 0, 0 },
	{ TJPF_XRGB, 4, 1, 2, 3, 0 }, { TJPF_XBGR, 4, 3, 2, 1, 0 },
	{ TJPF_RGBA, 4, 0, 1, 2, 1 }, { TJPF_BGRA, 4, 2, 1, 0, 1 },
	{ TJPF_ARGB, 4, 1, 2, 3, 1 }, { TJPF_ABGR, 4, 3, 2, 1, 1 },
};

static int byte_of(const struct vc_fmt *f, const struct vc_bits *b)
{
	if (b->depth != 8 || b->shift % 8)
		return -1;
	return f->big_endian ? f->group_bytes[0] - 1 - b->shift / 8 : b->shift / 8;
}

/* TurboJPEG pixel format writing this row's layout, or -1. Alpha rows get
 * the alpha variants so alpha comes out opaque. */
static int rgb_pf(const struct vc_fmt *f)
{
	if (f->layout != VC_LAYOUT_PACKED_RGB || f->group_px != 1)
		return -1;
	int r = byte_of(f, &f->r), g = byte_of(f, &f->g), b = byte_of(f, &f->b);
	int alpha = f->has_alpha && f->a.depth == 8;

	for (size_t i = 0; i < sizeof(tj_layouts) / sizeof(tj_layouts[0]); i++)
		if (tj_layouts[i].size == f->group_bytes[0] && tj_layouts[i].r == r &&
		    tj_layouts[i].g == g && tj_layouts[i].b == b &&
		    tj_layouts[i].alpha == alpha)
			return tj_layouts[i].pf;
	return -1;
}

static const struct { int ss, tj, hs, vs; } ss_map[] = {
	{ VC_JPEG_SS_444, TJSAMP_444, 0, 0 }, { VC_JPEG_SS_422, TJSAMP_422, 1, 0 },
	{ VC_JPEG_SS_420, TJSAMP_420, 1, 1 }, { VC_JPEG_SS_440, TJSAMP_440, 0, 1 },
	{ VC_JPEG_SS_411, TJSAMP_411, 2, 0 },
};

/* A TurboJPEG return code as 0 / -EBADMSG: warnings pass (see the top). */
static int tj_result(struct vc_jpeg *j, int rc, const char *what)
{
	const char *msg;

	if (rc == 0)
		return 0;
	int warned = vc_jpeg_tj_warned(j->tjd, &msg);

	log_debug("%s: %s", what, msg);
	return warned ? 0 : -EBADMSG;
}

/* Applies dst's colorimetry (JPEG samples are full-range BT.601). */
static void dst_color(const struct vc_image *d, int grey_only)
{
	struct ycc_xf x;
	struct vc_ycbcr e;
	uint8_t *y[16], *u[16], *v[16];
	const struct vc_fmt *f = d->fmt;

	vc_color_resolve_fmt(f, &d->color, &e);
	vc_jpeg_ycc_xf(VC_MATRIX_BT601, 1, e.matrix, e.full_range, &x);
	if (x.identity)
		return;
	if (grey_only || f->layout == VC_LAYOUT_GREY) {
		/* Grey JPEG: chroma is neutral already in any encoding. */
		for (uint32_t r = 0; r < d->height; r++)
			vc_jpeg_y_apply(&x, d->plane[0] + (size_t)r * d->stride[0], (int)d->width);
		return;
	}
	int hs = f->log2_chroma_w, vs = f->log2_chroma_h;
	int cw = (int)((d->width + (1u << hs) - 1) >> hs);
	uint32_t ch = (d->height + (1u << vs) - 1) >> vs;
	int pu = f->swap_uv ? 2 : 1, pv = f->swap_uv ? 1 : 2;

	/* In strips of 16 luma lines so a chroma row is at hand for each. */
	for (uint32_t y0 = 0; y0 < d->height; y0 += 16) {
		int ny = d->height - y0 < 16 ? (int)(d->height - y0) : 16;
		uint32_t c0 = y0 >> vs;
		int nc = 0;

		for (int i = 0; i < ny; i++)
			y[i] = d->plane[0] + (size_t)(y0 + (uint32_t)i) * d->stride[0];
		for (; nc < (16 >> vs) && c0 + (uint32_t)nc < ch; nc++) {
			u[nc] = d->plane[pu] + (size_t)(c0 + (uint32_t)nc) * d->stride[pu];
			v[nc] = d->plane[pv] + (size_t)(c0 + (uint32_t)nc) * d->stride[pv];
		}
		vc_jpeg_ycc_apply(&x, y, ny, (int)d->width, u, v, nc, cw, hs, vs);
	}
}

/* Whether tjDecompressToYUVPlanes of libjpeg-turbo 2.1.5 (Debian 12) would
 * read past its own buffer. Scaled, it decodes whole blocks per component
 * into a scratch buffer and then copies each luma row padded to the MCU
 * (tjPlaneWidth: 2 pixels for 4:2:x, 4 for 4:1:1 at 1/8), which can be wider
 * than the blocks decoded: the copy runs into the following rows, and for a
 * 4:1:1 frame at most 8 pixels wide decoded at 1/8 past the buffer's end
 * (ASan: heap-buffer-overflow in its memcpy). Such geometries decode
 * through RGB instead (tjDecompress2 has no such copy). */
static int yuv_overreads(const struct vc_jpeg_info *info, int jhs, uint32_t sw, int denom)
{
	uint32_t padded = (sw + (1u << jhs) - 1) >> jhs << jhs;
	uint32_t decoded = (info->width + 7) / 8 * (uint32_t)(8 / denom);

	return padded > decoded;
}

/* Into 8-bit planar YUV (any subsampling). Luma goes straight into the
 * destination; chroma too when the destination has the JPEG's sampling,
 * else it is decoded into scratch and resampled by libyuv (box filter:
 * 4:2:2 webcam JPEG -> I420 averages line pairs). TurboJPEG writes planes
 * padded to whole chroma samples (an odd-width 4:2:0 luma row gets one byte
 * more, an odd height one row more), so such sizes go through scratch. */
static int decode_planes(struct vc_jpeg *j, const uint8_t *in, const struct vc_jpeg_info *info,
			 int jhs, int jvs, uint32_t sw, uint32_t sh, const struct vc_image *dst)
{
	const struct vc_fmt *f = dst->fmt;
	int pu = f->swap_uv ? 2 : 1, pv = f->swap_uv ? 1 : 2;
	int dhs = f->log2_chroma_w, dvs = f->log2_chroma_h;
	int gray = info->subsamp == VC_JPEG_SS_GRAY;
	int pad = (sw & ((1u << jhs) - 1)) || (sh & ((1u << jvs) - 1));
	int same = gray || (jhs == dhs && jvs == dvs);
	unsigned char *planes[3] = { dst->plane[0], dst->plane[pu], dst->plane[pv] };
	int strides[3] = { (int)dst->stride[0], (int)dst->stride[pu], (int)dst->stride[pv] };
	int r;

	if (!pad && same)
		return tj_result(j, tjDecompressToYUVPlanes(j->tjd, in, info->size, planes, (int)sw,
							    strides, (int)sh, TJFLAG_LIMITSCANS), "decode");

	uint32_t pw = (sw + (1u << jhs) - 1) >> jhs << jhs, ph = (sh + (1u << jvs) - 1) >> jvs << jvs;
	uint32_t jcw = pw >> jhs, jch = ph >> jvs;
	size_t ysz = pad ? (size_t)pw * ph : 0;
	uint8_t *sc = vc_jpeg_scratch(j, ysz + 2 * (size_t)jcw * jch);

	if (!sc)
		return -ENOMEM;
	unsigned char *tp[3] = { pad ? sc : planes[0], sc + ysz, sc + ysz + (size_t)jcw * jch };
	int ts[3] = { pad ? (int)pw : strides[0], (int)jcw, (int)jcw };

	r = tj_result(j, tjDecompressToYUVPlanes(j->tjd, in, info->size, tp, (int)sw, ts, (int)sh,
						      TJFLAG_LIMITSCANS),
		      "decode");
	if (r < 0)
		return r;
	if (pad)
		CopyPlane(tp[0], ts[0], planes[0], strides[0], (int)sw, (int)sh);
	if (gray)
		return 0;
	int scw = (int)((sw + (1u << jhs) - 1) >> jhs), sch = (int)((sh + (1u << jvs) - 1) >> jvs);
	int dcw = (int)((sw + (1u << dhs) - 1) >> dhs), dch = (int)((sh + (1u << dvs) - 1) >> dvs);
	for (int p = 1; p < 3; p++) {
		if (same)
			CopyPlane(tp[p], ts[p], planes[p], strides[p], dcw, dch);
		else
			ScalePlane(tp[p], ts[p], scw, sch, planes[p], strides[p], dcw, dch, kFilterBox);
	}
	return 0;
}

/* Other destinations: decode to the planar YUV the JPEG has (or grey, or
 * RGB24 for unusual samplings), then the converter. */
static int decode_converted(struct vc_jpeg *j, const uint8_t *in, size_t len, int denom,
			    const struct vc_jpeg_info *info, int via_rgb, const struct vc_image *dst)
{
	static const struct { int ss; uint32_t fourcc; } tmp_fmt[] = {
		{ VC_JPEG_SS_420, V4L2_PIX_FMT_YUV420 }, { VC_JPEG_SS_422, V4L2_PIX_FMT_YUV422P },
		{ VC_JPEG_SS_444, V4L2_PIX_FMT_YUV444M }, { VC_JPEG_SS_GRAY, V4L2_PIX_FMT_GREY },
	};
	uint32_t fourcc = V4L2_PIX_FMT_RGB24;
	struct vc_image tmp;
	struct vc_conv *cv = vc_jpeg_conv(j);
	char fcc[16];
	int r;

	if (!cv)
		return -ENOMEM;
	for (size_t i = 0; !via_rgb && i < sizeof(tmp_fmt) / sizeof(tmp_fmt[0]); i++)
		if (tmp_fmt[i].ss == info->subsamp && vc_fmt_by_fourcc(tmp_fmt[i].fourcc))
			fourcc = tmp_fmt[i].fourcc;
	r = vc_jpeg_tmp_image(j, fourcc, dst->width, dst->height, &tmp);
	if (r < 0)
		return r;
	if (!vc_conv_supported(tmp.fmt, dst->fmt)) {
		log_debug("decode: no path to %s", vc_fourcc_str(dst->fmt->fourcc, fcc));
		return -EINVAL;
	}
	r = vc_jpeg_decode(j, in, len, denom, &tmp);
	if (r < 0)
		return r;
	return vc_conv_run(cv, &tmp, dst);
}

int vc_jpeg_decode(struct vc_jpeg *j, const uint8_t *in, size_t len, int scale_denom,
		   const struct vc_image *dst)
{
	struct vc_jpeg_info info;
	const struct vc_fmt *f;
	int r, pf;
	uint32_t sw, sh;

	if (!j || !dst || !dst->fmt)
		return -EINVAL;
	f = dst->fmt;
	r = vc_jpeg_parse(in, len, &info);
	if (r < 0)
		return r;
	sw = vc_jpeg_scaled(info.width, scale_denom);
	sh = vc_jpeg_scaled(info.height, scale_denom);
	if (!sw || dst->width != sw || dst->height != sh)
		return -EINVAL;
	if (f->layout == VC_LAYOUT_COMPRESSED || vc_jpeg_check_view(dst) < 0)
		return -EINVAL;
	if (!j->tjd && !(j->tjd = tjInitDecompress())) {
		log_error("cannot create the decompressor: %s", tjGetErrorStr2(NULL));
		return -ENOMEM;
	}
	/* TurboJPEG reads a few bytes past EOI never; info.size trims junk. */
	pf = rgb_pf(f);
	if (f->layout == VC_LAYOUT_GREY && f->depth == 8 && f->group_bytes[0] == 1)
		pf = TJPF_GRAY;
	if (pf >= 0) {
		r = tj_result(j, tjDecompress2(j->tjd, in, info.size, dst->plane[0], (int)sw,
					       (int)dst->stride[0], (int)sh, pf, TJFLAG_LIMITSCANS),
				       "decode");
		if (r < 0)
			return r;
		if (pf == TJPF_GRAY)
			dst_color(dst, 1);
		return 0;
	}
	int jhs = -1, jvs = 0;

	if (info.subsamp == VC_JPEG_SS_GRAY)
		jhs = 0;
	for (size_t i = 0; i < sizeof(ss_map) / sizeof(ss_map[0]); i++)
		if (ss_map[i].ss == info.subsamp) {
			jhs = ss_map[i].hs;
			jvs = ss_map[i].vs;
		}
	/* Decided here, for this call and the converter's temporary picture
	 * alike: that one must not be planar YUV either. */
	int via_rgb = jhs >= 0 && yuv_overreads(&info, jhs, sw, scale_denom);

	if (f->layout == VC_LAYOUT_PLANAR_YUV && f->color_planes == 3 && f->depth == 8 &&
	    jhs >= 0 && !via_rgb) {
		r = decode_planes(j, in, &info, jhs, jvs, sw, sh, dst);
		if (r < 0)
			return r;
		if (info.subsamp == VC_JPEG_SS_GRAY) {
			uint32_t cw = (sw + (1u << f->log2_chroma_w) - 1) >> f->log2_chroma_w;
			uint32_t ch = (sh + (1u << f->log2_chroma_h) - 1) >> f->log2_chroma_h;

			for (int p = 1; p < 3; p++)
				for (uint32_t y = 0; y < ch; y++)
					memset(dst->plane[p] + (size_t)y * dst->stride[p], 128, cw);
		}
		dst_color(dst, info.subsamp == VC_JPEG_SS_GRAY);
		return 0;
	}
	return decode_converted(j, in, len, scale_denom, &info, via_rgb, dst);
}
