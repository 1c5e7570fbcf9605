/* The JPEG context: libjpeg/TurboJPEG handles and scratch owned by one
 * thread, reused across frames; size helpers. Encoding lives in
 * jpeg_enc.c, decoding in jpeg_dec.c, parsing and DHT in jpeg_parse.c,
 * lossless transforms in jpeg_xform.c, colour in jpeg_color.c. */
#define LOG_PREFIX "jpeg: "
#include "common/jpeg_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>

#include "common/color.h"
#include "common/convert.h"
#include "common/log.h"

/* Whether a failed TurboJPEG call only warned. tjGetErrorCode of 2.1.5
 * answers TJERR_WARNING for any call that warned, even when a fatal error
 * followed and the output was never finished (nothing clears the flag);
 * trusting it let a transform hand out what an earlier frame had left in
 * the buffer (found by tests/fuzz/fuzz_jpeg_decode). The message tells
 * them apart: it is the last event's, so after a fatal error it is that
 * error's. It only warned when the code says so and the message is one of
 * libjpeg's warnings (JWRN_*, from libjpeg's own table, compared up to the
 * first conversion). */
int vc_jpeg_tj_warned(tjhandle h, const char **msg)
{
	static const int warnings[] = {
		JWRN_ADOBE_XFORM, JWRN_ARITH_BAD_CODE, JWRN_BOGUS_PROGRESSION,
		JWRN_EXTRANEOUS_DATA, JWRN_HIT_MARKER, JWRN_HUFF_BAD_CODE, JWRN_JFIF_MAJOR,
		JWRN_JPEG_EOF, JWRN_MUST_RESYNC, JWRN_NOT_SEQUENTIAL, JWRN_TOO_MUCH_DATA,
	};
	struct jpeg_error_mgr em;
	const char *m = tjGetErrorStr2(h);

	*msg = m;
	if (tjGetErrorCode(h) != TJERR_WARNING)
		return 0;
	jpeg_std_error(&em);
	for (size_t i = 0; i < sizeof(warnings) / sizeof(warnings[0]); i++) {
		const char *fmt = em.jpeg_message_table[warnings[i]];
		size_t n = strcspn(fmt, "%");

		if (strncmp(m, fmt, n) == 0 && (fmt[n] || !m[n]))
			return 1;
	}
	return 0;
}

struct vc_jpeg *vc_jpeg_new(void)
{
	struct vc_jpeg *j = calloc(1, sizeof(*j));

	if (!j)
		log_error("context: %s", "out of memory");
	return j;
}

void vc_jpeg_free(struct vc_jpeg *j)
{
	if (!j)
		return;
	if (j->c_ready)
		jpeg_destroy_compress(&j->c);
	if (j->tjc)
		tjDestroy(j->tjc);
	if (j->tjd)
		tjDestroy(j->tjd);
	if (j->tjx)
		tjDestroy(j->tjx);
	tjFree(j->xbuf);
	vc_conv_free(j->conv);
	free(j->cbuf);
	free(j->scratch);
	free(j);
}

uint8_t *vc_jpeg_scratch(struct vc_jpeg *j, size_t n)
{
	if (n > j->scratch_size) {
		/* Grow by half again so alternating sizes do not reallocate. */
		size_t sz = n + n / 2;
		uint8_t *p = malloc(sz);

		if (!p)
			return NULL;
		free(j->scratch);
		j->scratch = p;
		j->scratch_size = sz;
	}
	return j->scratch;
}

size_t vc_jpeg_bound(uint32_t w, uint32_t h)
{
	if (w == 0 || h == 0 || w > 16384 || h > 16384)
		return 0;
	/* TurboJPEG's own worst case for 4:4:4 (the largest subsampling case),
	 * which also covers what our raw-data encoder writes. */
	return tjBufSize((int)w, (int)h, TJSAMP_444);
}

uint32_t vc_jpeg_scaled(uint32_t dim, int scale_denom)
{
	if (scale_denom != 1 && scale_denom != 2 && scale_denom != 4 && scale_denom != 8)
		return 0;
	return (dim + (uint32_t)scale_denom - 1) / (uint32_t)scale_denom;
}

int vc_jpeg_check_view(const struct vc_image *s)
{
	const struct vc_fmt *f = s->fmt;
	struct vc_geom g;

	if (!f || vc_fmt_geometry(f, s->width, s->height, 0, &g) < 0)
		return -EINVAL;
	for (int p = 0; p < g.color_planes && p < 3; p++) {
		uint32_t lines = g.plane[p].lines;

		if (!s->plane[p] || s->stride[p] < g.plane[p].stride || lines == 0)
			return -EINVAL;
		if (s->plane_size[p] < (size_t)s->stride[p] * (lines - 1) + g.plane[p].stride)
			return -EINVAL;
	}
	return 0;
}

int vc_jpeg_tmp_image(struct vc_jpeg *j, uint32_t fourcc, uint32_t w, uint32_t h,
		      struct vc_image *img)
{
	const struct vc_fmt *f = vc_fmt_by_fourcc(fourcc);
	struct vc_geom g;

	if (!f || vc_fmt_geometry(f, w, h, 0, &g) < 0)
		return -EINVAL;
	if (g.sizeimage > j->cbuf_size) {
		uint8_t *p = malloc(g.sizeimage);

		if (!p)
			return -ENOMEM;
		free(j->cbuf);
		j->cbuf = p;
		j->cbuf_size = g.sizeimage;
	}
	/* multi-planar rows (YUV444M): memory planes one after the other */
	uint8_t *mem[3] = { j->cbuf, j->cbuf + g.mem_size[0],
			    j->cbuf + g.mem_size[0] + g.mem_size[1] };
	vc_image_from_geom(f, &g, mem, img);
	img->color = vc_color_from_ycbcr(VC_YCBCR_JFIF);
	return 0;
}

struct vc_conv *vc_jpeg_conv(struct vc_jpeg *j)
{
	if (!j->conv)
		j->conv = vc_conv_new();
	return j->conv;
}
