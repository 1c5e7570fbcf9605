/* The test pattern's H.264 mode ("test:...:H264", see testsrc.h): the
 * pattern encoded by common/h264enc.c, like a UVC camera's own encoder.
 * Owns one encoder and the sequence number it expects next.
 *
 * Frames stay a function of their number: a GOP is `testsrc_h264_gop()`
 * frames starting at a multiple of it, each GOP is encoded by a fresh
 * encoder from its IDR on (no rate-control state carried over), and a
 * frame of the GOP that was never asked for (the loop was late, the source
 * skipped it) is still encoded, then thrown away, so the next frame refers
 * to the same pictures as it would have. */
#include "server/capture/testsrc_int.h"
#include "server/capture/testsrc_draw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/h264.h"
#include "common/h264enc.h"

struct testsrc_h264 {
	struct vc_mode mode;
	int ps_once;
	uint32_t bitrate; /* the encoder's target, 0 = h264enc's default */
	struct vc_h264enc *enc;
	uint64_t g0;   /* the first frame of enc's GOP */
	uint64_t next; /* the frame enc encodes next; meaningful while enc */
};

static uint32_t fps_of(struct vc_fract iv)
{
	uint32_t f = (iv.den + iv.num / 2) / iv.num;

	return f < 1 ? 1 : f > 240 ? 240 : f;
}

uint32_t testsrc_h264_gop(struct vc_fract ival)
{
	return fps_of(ival); /* one second worth */
}

int testsrc_h264_new(const struct vc_mode *m, int ps_once, uint32_t bitrate,
		     struct testsrc_h264 **out)
{
	struct testsrc_h264 *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->mode = *m;
	h->ps_once = ps_once;
	h->bitrate = bitrate;
	*out = h;
	return 0;
}

void testsrc_h264_free(struct testsrc_h264 *h)
{
	if (!h)
		return;
	vc_h264enc_free(h->enc);
	free(h);
}

/* Draws frame seq into the I420 picture mem laid out by mg and encodes it. */
static int encode_one(struct testsrc_h264 *h, uint8_t *master, const struct vc_geom *mg,
		      uint64_t seq, struct vc_h264enc_out *eo)
{
	const struct vc_plane_geom *p = mg->plane;
	struct vc_i420_pic pc = {
		.p = { master + p[0].offset, master + p[1].offset, master + p[2].offset },
		.stride = { p[0].stride, p[1].stride, p[2].stride },
		.w = mg->width, .h = mg->height,
		.cw = (mg->width + 1) / 2, .ch = (mg->height + 1) / 2,
	};
	const uint8_t *planes[3] = { pc.p[0], pc.p[1], pc.p[2] };
	struct vc_fract iv = h->mode.ival;

	vc_testsrc_draw_frame(&pc, seq, iv);
	return vc_h264enc_encode(h->enc, planes, pc.stride,
				 (int64_t)(seq * iv.num * 1000 / iv.den), eo);
}

/* Copies the access unit to dst, without its SPS/PPS when strip. */
static int copy_au(const struct vc_h264enc_out *eo, int strip, uint8_t *dst, size_t cap,
		   size_t *used)
{
	static const uint8_t sc[4] = { 0, 0, 0, 1 };
	struct vc_nal n;
	size_t pos = 0, len = 0;

	if (!strip) {
		if (eo->len > cap)
			return -ENOSPC;
		memcpy(dst, eo->data, eo->len);
		*used = eo->len;
		return 0;
	}
	while (vc_h264_next_nal(eo->data, eo->len, &pos, &n)) {
		if (n.type == VC_NAL_SPS || n.type == VC_NAL_PPS)
			continue;
		if (len + sizeof(sc) + n.len > cap)
			return -ENOSPC;
		memcpy(dst + len, sc, sizeof(sc));
		memcpy(dst + len + sizeof(sc), n.data, n.len);
		len += sizeof(sc) + n.len;
	}
	*used = len;
	return 0;
}

int testsrc_h264_render(struct testsrc_h264 *h, uint8_t *master, const struct vc_geom *mg,
			uint64_t seq, int still, uint8_t *dst, size_t cap, size_t *used, int *key)
{
	uint32_t gop = testsrc_h264_gop(h->mode.ival);
	uint64_t g0 = seq - seq % gop;
	struct vc_h264enc_out eo;
	int ret;

	*used = 0;
	*key = 0;
	if (!h->enc || h->g0 != g0 || h->next > seq) {
		/* keep_all: a camera's encoder gives every frame, however
		 * low its bitrate */
		struct vc_h264enc_cfg cfg = { h->mode.width, h->mode.height,
					      fps_of(h->mode.ival), h->bitrate, gop, 1 };

		vc_h264enc_free(h->enc);
		h->enc = NULL;
		ret = vc_h264enc_new(&cfg, &h->enc);
		if (ret < 0)
			return ret;
		h->g0 = g0;
		h->next = g0;
	}
	for (; h->next < seq; h->next++) {
		ret = encode_one(h, master, mg, still ? 0 : h->next, &eo);
		if (ret < 0)
			goto fail;
	}
	ret = encode_one(h, master, mg, still ? 0 : seq, &eo);
	if (ret < 0)
		goto fail;
	h->next = seq + 1;
	*key = eo.key;
	/* ps_once: like a camera that sends SPS/PPS only when it starts */
	return copy_au(&eo, h->ps_once && eo.key && seq != 0, dst, cap, used);
fail:
	vc_h264enc_free(h->enc); /* its state no longer matches h->next */
	h->enc = NULL;
	return ret;
}
