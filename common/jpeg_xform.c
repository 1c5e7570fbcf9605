/* Lossless rotation and mirroring with tjTransform: the DCT coefficients are
 * rearranged, nothing is decoded to pixels or re-quantised, so passthrough
 * MJPEG keeps its quality and costs only entropy decode + encode. */
#define LOG_PREFIX "jpeg: "
#include "common/jpeg_int.h"

#include <errno.h>
#include <string.h>

#include "common/log.h"

/* Flips first, then the clockwise rotation, as one of the eight TurboJPEG
 * operations: [flip H|V bits][rotate / 90]. Worked out on coordinates,
 * e.g. mirror left-right then 90 cw maps (x, y) to (H-1-y, W-1-x): the
 * transverse. */
static const int xop[4][4] = {
	{ TJXOP_NONE, TJXOP_ROT90, TJXOP_ROT180, TJXOP_ROT270 },
	{ TJXOP_HFLIP, TJXOP_TRANSVERSE, TJXOP_VFLIP, TJXOP_TRANSPOSE },
	{ TJXOP_VFLIP, TJXOP_TRANSPOSE, TJXOP_HFLIP, TJXOP_TRANSVERSE },
	{ TJXOP_ROT180, TJXOP_ROT270, TJXOP_NONE, TJXOP_ROT90 },
};

int vc_jpeg_transform(struct vc_jpeg *j, const uint8_t *in, size_t len, int rotate,
		      int flip, uint8_t *out, size_t cap, size_t *out_len,
		      uint32_t *out_w, uint32_t *out_h)
{
	struct vc_jpeg_info info, oi;
	tjtransform t;
	int op, r;

	if (!j || !out || !out_len || !out_w || !out_h || flip < 0 || flip > 3 ||
	    rotate < 0 || rotate > 270 || rotate % 90)
		return -EINVAL;
	r = vc_jpeg_parse(in, len, &info);
	if (r < 0)
		return r;
	op = xop[flip][rotate / 90];
	if (op == TJXOP_NONE) {
		if (cap < len)
			return -ENOSPC;
		memcpy(out, in, len);
		*out_len = len;
		*out_w = info.width;
		*out_h = info.height;
		return 0;
	}
	if (!j->tjx && !(j->tjx = tjInitTransform())) {
		log_error("cannot create the transformer: %s", tjGetErrorStr2(NULL));
		return -ENOMEM;
	}
	memset(&t, 0, sizeof(t));
	t.op = op;
	t.options = TJXOPT_TRIM;
	/* TurboJPEG writes into our reusable buffer. With NOREALLOC it assumes
	 * the buffer holds tjBufSize() of the output for its subsampling, which
	 * the 4:4:4 bound of the same (symmetric) size always covers. One copy of
	 * the compressed bytes to the caller is cheap next to the entropy
	 * decode/encode. */
	unsigned long need = tjBufSize((int)info.width, (int)info.height, TJSAMP_444);
	if (need > j->xbuf_size) {
		tjFree(j->xbuf);
		j->xbuf_size = 0;
		j->xbuf = tjAlloc((int)need);
		if (!j->xbuf)
			return -ENOMEM;
		j->xbuf_size = need;
	}
	unsigned long osz = j->xbuf_size;
	const char *msg;
	/* Warnings (corrupt entropy data in a well-formed frame) still give a
	 * frame, as in decoding; fatal errors do not. The buffer's start is
	 * cleared first so a call that stops before writing leaves nothing an
	 * earlier frame wrote there to parse. */
	j->xbuf[0] = 0;
	if (tjTransform(j->tjx, in, info.size, 1, &j->xbuf, &osz, &t,
			 TJFLAG_NOREALLOC | TJFLAG_LIMITSCANS) < 0) {
		int warned = vc_jpeg_tj_warned(j->tjx, &msg);

		log_debug("transform: %s", msg);
		if (!warned)
			return -EBADMSG;
	}
	r = vc_jpeg_parse(j->xbuf, osz, &oi);
	if (r < 0)
		return -EBADMSG;
	if (cap < osz)
		return -ENOSPC;
	memcpy(out, j->xbuf, osz);
	*out_len = osz;
	*out_w = oi.width;
	*out_h = oi.height;
	return 0;
}
