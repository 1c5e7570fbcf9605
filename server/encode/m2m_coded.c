/* Coded M2M encoder buffers (see m2m_coded.h). */
#define LOG_PREFIX "m2m-enc:"
#include "server/encode/m2m_coded.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>

#include "common/h264.h"
#include "common/log.h"
#include "server/encode/m2m_enc.h"

/* Key frame: the driver's flag, else what the bitstream says. */
int vc_m2m_is_key(uint32_t coded_fourcc, uint32_t flags, const uint8_t *d, size_t len,
		  const char *path)
{
	/* H.264: the IDR slice, whatever the flag says. It is where a client
	 * may start; a flag on a non-IDR I picture (pictures after it may
	 * still refer to ones before) would make a bad join point, and some
	 * drivers set no flags at all. */
	if (coded_fourcc == V4L2_PIX_FMT_H264) {
		struct vc_h264_au au;
		vc_h264_scan(d, len, &au);
		if (!!(flags & V4L2_BUF_FLAG_KEYFRAME) != au.idr)
			log_debug("%s: key-frame flag %d on a picture with%s an IDR slice", path,
				  !!(flags & V4L2_BUF_FLAG_KEYFRAME), au.idr ? "" : "out");
		return au.idr;
	}
	if (flags & V4L2_BUF_FLAG_KEYFRAME)
		return 1;
	if (coded_fourcc == V4L2_PIX_FMT_JPEG || coded_fourcc == V4L2_PIX_FMT_MJPEG)
		return 1;
	if (coded_fourcc == V4L2_PIX_FMT_FWHT && len >= 24) /* header: flags, big-endian, at 20 */
		return !!((((uint32_t)d[20] << 24) | ((uint32_t)d[21] << 16) |
			   ((uint32_t)d[22] << 8) | d[23]) & V4L2_FWHT_FL_I_FRAME);
	return 0;
}

/* The smallest H.264 level whose limits (macroblocks per frame and per
 * second, Baseline bit rate: H.264 table A-1) fit the picture, its rate and
 * the bitrate asked; 0 = past 4.2, leave the driver's. */
int vc_m2m_h264_level(const struct vc_m2m_enc_params *p)
{
	static const struct { uint32_t frame_mbs, mbs_per_s, kbps; int level; } t[] = {
		{ 1620, 40500, 10000, V4L2_MPEG_VIDEO_H264_LEVEL_3_0 },
		{ 3600, 108000, 14000, V4L2_MPEG_VIDEO_H264_LEVEL_3_1 },
		{ 5120, 216000, 20000, V4L2_MPEG_VIDEO_H264_LEVEL_3_2 },
		{ 8192, 245760, 20000, V4L2_MPEG_VIDEO_H264_LEVEL_4_0 },
		{ 8704, 522240, 50000, V4L2_MPEG_VIDEO_H264_LEVEL_4_2 },
	};
	uint32_t fps = p->fps_num && p->fps_den ? (p->fps_num + p->fps_den - 1) / p->fps_den : 30;
	uint32_t mbs = ((p->width + 15) / 16) * ((p->height + 15) / 16);
	uint32_t kbps = p->bitrate > 0 ? ((uint32_t)p->bitrate + 999) / 1000 : 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (mbs <= t[i].frame_mbs && mbs * fps <= t[i].mbs_per_s && kbps <= t[i].kbps)
			return t[i].level;
	return 0;
}

/* *buf (capacity *cap) grown to n bytes; 0 or -ENOMEM. */
static int grow(uint8_t **buf, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *b = realloc(*buf, n);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = n;
	return 0;
}

/* H.264: a buffer with no coded slice (only SPS/PPS/SEI: some encoders
 * send the stream header on its own) is held and put before the next
 * picture, so each result is one decodable access unit. Returns 1 when
 * held, 0 when *o is the picture to report (with what was held joined in
 * front), -ENOMEM. */
int vc_m2m_join_header(struct vc_m2m_join *j, uint32_t coded_fourcc, struct vc_m2m_enc_out *o)
{
	struct vc_h264_au au;

	if (coded_fourcc != V4L2_PIX_FMT_H264 || !o->len)
		return 0;
	vc_h264_scan(o->data, o->len, &au);
	if (!au.has_slice) {
		if (grow(&j->hdr, &j->hdr_cap, j->hdr_len + o->len) < 0)
			return -ENOMEM;
		memcpy(j->hdr + j->hdr_len, o->data, o->len);
		j->hdr_len += o->len;
		return 1;
	}
	if (!j->hdr_len)
		return 0;
	if (grow(&j->joined, &j->joined_cap, j->hdr_len + o->len) < 0)
		return -ENOMEM;
	memcpy(j->joined, j->hdr, j->hdr_len);
	memcpy(j->joined + j->hdr_len, o->data, o->len);
	o->data = j->joined;
	o->len += j->hdr_len;
	j->hdr_len = 0;
	return 0;
}

void vc_m2m_join_free(struct vc_m2m_join *j)
{
	free(j->hdr);
	free(j->joined);
	memset(j, 0, sizeof(*j));
}
