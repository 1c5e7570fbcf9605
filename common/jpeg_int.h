/* Private to the jpeg_*.c files: the per-thread context and the helpers they
 * share. Nothing outside common/jpeg*.c includes this. */
#ifndef VC_JPEG_INT_H
#define VC_JPEG_INT_H

#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */

#include <jpeglib.h>
#include <turbojpeg.h>
#include <linux/videodev2.h>

#include "common/jpeg.h"

/* libjpeg reports errors through a callback that must not return: it
 * longjmps back to the setjmp in the function that called libjpeg. */
struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	int overflow; /* the destination ran out of room (-> -ENOSPC) */
};

/* Destination manager writing straight into the caller's buffer. */
struct jdest {
	struct jpeg_destination_mgr pub;
	struct jerr *err;
};

struct vc_jpeg {
	struct jpeg_compress_struct c; /* raw YCbCr encoder, reused every frame */
	struct jerr cerr;
	struct jdest dest;
	int c_ready;
	int c_quality, c_w, c_h, c_ncomp, c_hs, c_vs; /* what c is set up for */
	tjhandle tjc, tjd, tjx; /* TurboJPEG: RGB encode, decode, transform */
	uint8_t *scratch; /* strip rows, decode planes */
	size_t scratch_size;
	uint8_t *xbuf;    /* tjTransform output (tjAlloc'd) */
	unsigned long xbuf_size;
	struct vc_conv *conv; /* for formats without a direct path */
	uint8_t *cbuf;        /* the converted picture */
	size_t cbuf_size;
};

/* A picture of fourcc (I420, 422P, 444P, GREY, RGB24...) at w x h in the
 * context's conversion buffer, coloured as JFIF (full-range BT.601).
 * 0, -EINVAL (format not in the table, bad size) or -ENOMEM. */
int vc_jpeg_tmp_image(struct vc_jpeg *j, uint32_t fourcc, uint32_t w, uint32_t h,
		      struct vc_image *img);
/* The context's converter, created on first use; NULL on ENOMEM. */
struct vc_conv *vc_jpeg_conv(struct vc_jpeg *j);

/* After a TurboJPEG call on h failed: 1 when it only warned (the output is
 * complete), 0 for a fatal error. *msg gets the message. */
int vc_jpeg_tj_warned(tjhandle h, const char **msg);

/* Scratch of at least n bytes (kept between frames); NULL on ENOMEM. */
uint8_t *vc_jpeg_scratch(struct vc_jpeg *j, size_t n);

/* Checks a raw view: known format, planes present, strides at least the
 * minimum, plane_size covering every line. 0 or -EINVAL. */
int vc_jpeg_check_view(const struct vc_image *s);

/* A YCbCr -> YCbCr conversion between encodings/ranges as fixed-point
 * coefficients (Q12) on centred samples. */
struct ycc_xf {
	int identity; /* nothing to do */
	int scale_only; /* no cross terms: Y and C scaled independently */
	int y_in_off, y_out_off; /* 16 (limited) or 0 (full) */
	int m[3][3]; /* rows Y, Cb, Cr; columns Y, Cb, Cr (centred) */
};

/* Conversion from (matrix_in, full_in) to (matrix_out, full_out); matrices
 * are color.h's enum vc_matrix, resolved with vc_color_resolve_fmt(). */
void vc_jpeg_ycc_xf(int enc_in, int full_in, int enc_out, int full_out, struct ycc_xf *x);
/* Converts one strip in place. y: rows of luma (n_y rows, w samples each),
 * cb/cr: chroma rows (w >> hs samples, rows indexed y >> vs). Luma is
 * converted first from the untouched chroma, then chroma. */
void vc_jpeg_ycc_apply(const struct ycc_xf *x, uint8_t **y, int n_y, int w,
		       uint8_t **cb, uint8_t **cr, int n_c, int cw, int hs, int vs);
/* Whether x is a range conversion the one-pass functions below can do
 * (scale-only, the same factor for Cb and Cr). They read the source once and
 * write the converted samples into the strip, instead of a copy (or libyuv
 * deinterleave/split) and then a conversion pass in place; they give the
 * same samples as that. */
int vc_jpeg_onepass_ok(const struct ycc_xf *x);
/* One row of w luma (chroma = 0) or chroma samples; dst may be src. */
void vc_jpeg_range_row(const struct ycc_xf *x, int chroma, const uint8_t *src, uint8_t *dst,
		       int w);
/* One semi-planar chroma row of n C0 C1 pairs split into c0 and c1. */
void vc_jpeg_range_split(const struct ycc_xf *x, const uint8_t *src, uint8_t *c0, uint8_t *c1,
			 int n);
/* One packed 4:2:2 row of w pixels (4-byte groups Y C0 Y C1, or C0 Y C1 Y
 * when chroma_first) deinterleaved into y (w samples), c0 and c1
 * ((w + 1) / 2 each) with x applied on the way. */
void vc_jpeg_packed_apply(const struct ycc_xf *x, const uint8_t *src, int chroma_first, int w,
			  uint8_t *y, uint8_t *c0, uint8_t *c1);
/* Grey plane only (Y of a GREY picture, or luma of a grey JPEG). */
void vc_jpeg_y_apply(const struct ycc_xf *x, uint8_t *row, int w);

#endif
