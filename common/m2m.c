/* Role classification of M2M nodes (common/m2m.h): pure functions over the
 * formats a scan found. Owns the one table of codec fourccs. */
#include "common/m2m.h"

#include <linux/videodev2.h>
#include <string.h>

#include "common/fmt.h"

/* Which codec a compressed fourcc carries, for the roles that name one.
 * Compressed fourccs not listed here make a "video-encoder". */
static const struct {
	uint32_t fourcc;
	unsigned role; /* the encoder role producing it */
} codecs[] = {
	{ V4L2_PIX_FMT_JPEG, VC_M2M_JPEG_ENC },
	{ V4L2_PIX_FMT_MJPEG, VC_M2M_JPEG_ENC },
	{ V4L2_PIX_FMT_H264, VC_M2M_H264_ENC },
	{ V4L2_PIX_FMT_H264_NO_SC, VC_M2M_H264_ENC },
	{ V4L2_PIX_FMT_H264_MVC, VC_M2M_H264_ENC },
};

static const char *const role_names[VC_M2M_ROLE_COUNT] = {
	"jpeg-encoder", "h264-encoder", "video-encoder", "decoder", "converter",
};

const char *vc_m2m_role_name(unsigned i)
{
	return i < VC_M2M_ROLE_COUNT ? role_names[i] : NULL;
}

static int is_compressed(const struct vc_m2m_fmt *f)
{
	const struct vc_fmt *row = vc_fmt_by_fourcc(f->fourcc);

	if (f->flags & V4L2_FMT_FLAG_COMPRESSED)
		return 1;
	if (row)
		return row->family == VC_FAM_COMPRESSED;
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (codecs[i].fourcc == f->fourcc)
			return 1;
	return 0;
}

/* Raw = a layout the format table knows that is not compressed: one vcapd
 * can produce or read. */
static int is_raw(const struct vc_m2m_fmt *f)
{
	const struct vc_fmt *row = vc_fmt_by_fourcc(f->fourcc);

	return !is_compressed(f) && row && row->family != VC_FAM_COMPRESSED;
}

static unsigned encoder_role(uint32_t fourcc)
{
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (codecs[i].fourcc == fourcc)
			return codecs[i].role;
	return VC_M2M_VIDEO_ENC;
}

unsigned vc_m2m_classify(const struct vc_m2m_node *n)
{
	int raw_in = 0, comp_in = 0, raw_out = 0;
	unsigned roles = 0, enc = 0;

	if (!(n->device_caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE)))
		return 0;
	for (size_t i = 0; i < n->n_out && i < VC_M2M_MAX_FMTS; i++) {
		raw_in |= is_raw(&n->out[i]);
		comp_in |= is_compressed(&n->out[i]);
	}
	for (size_t i = 0; i < n->n_cap && i < VC_M2M_MAX_FMTS; i++) {
		raw_out |= is_raw(&n->cap[i]);
		if (is_compressed(&n->cap[i]))
			enc |= encoder_role(n->cap[i].fourcc);
	}
	if (raw_in)
		roles |= enc;
	if (raw_in && raw_out)
		roles |= VC_M2M_CONVERTER;
	if (comp_in && raw_out)
		roles |= VC_M2M_DECODER;
	return roles;
}

int vc_m2m_takes(const struct vc_m2m_node *n, uint32_t fourcc)
{
	for (size_t i = 0; i < n->n_out && i < VC_M2M_MAX_FMTS; i++)
		if (n->out[i].fourcc == fourcc)
			return 1;
	return 0;
}

int vc_m2m_pick_role(const struct vc_m2m_node *nodes, size_t n, const char *setting,
		     uint32_t fourcc, unsigned role, const char **why)
{
	const struct vc_fmt *row = fourcc ? vc_fmt_by_fourcc(fourcc) : NULL;
	int h264 = role == VC_M2M_H264_ENC, any = 0;

	*why = "";
	if (setting && strcmp(setting, "cpu") == 0) {
		*why = "encoder = cpu";
		return -1;
	}
	if (row && row->family == VC_FAM_COMPRESSED) {
		*why = "the camera sends JPEG: nothing to encode";
		return -1;
	}
	int fixed = setting && setting[0] && strcmp(setting, "auto") != 0;
	for (size_t i = 0; i < n; i++) {
		if (fixed && strcmp(nodes[i].path, setting) != 0)
			continue;
		if (!(nodes[i].roles & role)) {
			if (fixed) {
				*why = h264 ? "the configured device is not an H.264 encoder"
					    : "the configured device is not a JPEG encoder";
				return -1;
			}
			continue;
		}
		any = 1;
		if (!fourcc || vc_m2m_takes(&nodes[i], fourcc))
			return (int)i;
	}
	if (fixed && !any)
		*why = "the configured device is not an M2M device present now";
	else if (any)
		*why = h264 ? "no H.264 encoder takes the camera's format"
			    : "no JPEG encoder takes the camera's format";
	else
		*why = h264 ? "no hardware H.264 encoder found" : "no hardware JPEG encoder found";
	return -1;
}

int vc_m2m_pick(const struct vc_m2m_node *nodes, size_t n, const char *setting,
		uint32_t fourcc, const char **why)
{
	return vc_m2m_pick_role(nodes, n, setting, fourcc, VC_M2M_JPEG_ENC, why);
}
