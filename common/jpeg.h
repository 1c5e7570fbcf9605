/* JPEG with libjpeg-turbo: encode any raw picture of the format table, decode
 * (optionally at 1/2, 1/4, 1/8 through the DCT scaling), parse/validate
 * without decoding, insert the standard Huffman tables into camera MJPEG that
 * lacks them, and lossless rotate/flip without re-encoding.
 *
 * Threads: a struct vc_jpeg is a per-thread context (it owns libjpeg-turbo
 * handles and scratch memory); use one per worker thread, never share one
 * between threads at the same time. vc_jpeg_bound/parse/add_dht/strip_dht
 * take no context and are thread-safe.
 *
 * Colour: JPEG here is JFIF, i.e. full-range BT.601 YCbCr. Encoding reads the
 * source's vc_image.color (V4L2 ycbcr_enc/quantization) and converts limited
 * range and BT.709 input to full-range BT.601; decoding into a YUV
 * destination writes what dst->color asks for (default for YUV: limited range
 * BT.601, like V4L2's default for SDTV sizes; set quantization FULL to get the
 * JPEG's samples untouched).
 *
 * Errors: 0 or a negative errno. -EINVAL bad arguments or unsupported format,
 * -EBADMSG corrupt/truncated/empty JPEG data, -ENOSPC output capacity too
 * small, -ENOMEM. No function ever reads outside [in, in + len). */
#ifndef VC_JPEG_H
#define VC_JPEG_H

#include <stddef.h>
#include <stdint.h>

#include "common/image.h"

struct vc_jpeg;

/* A context for one thread; NULL on ENOMEM. Handles are created lazily on
 * first use and then reused for every frame. */
struct vc_jpeg *vc_jpeg_new(void);
void vc_jpeg_free(struct vc_jpeg *j); /* NULL is a no-op */

/* Chroma subsampling of a JPEG (what vc_jpeg_parse reports, what encode may
 * be asked for). */
enum vc_jpeg_subsamp {
	VC_JPEG_SS_AUTO = 0, /* encode: keep the source's (4:2:2 stays 4:2:2; RGB -> 4:2:0) */
	VC_JPEG_SS_444,
	VC_JPEG_SS_422,
	VC_JPEG_SS_420,
	VC_JPEG_SS_GRAY,
	VC_JPEG_SS_440,
	VC_JPEG_SS_411,
	VC_JPEG_SS_OTHER, /* parse only: a sampling libjpeg-turbo names no constant for */
};

/* Worst-case size of a JPEG of w x h encoded by vc_jpeg_encode (any
 * subsampling, any quality); 0 for zero or absurd (> 16384) sizes. */
size_t vc_jpeg_bound(uint32_t w, uint32_t h);

/* Encodes src (any raw, non-Bayer format of the table; Bayer and formats the
 * fast paths do not cover go through the converter to I420) at quality 1..100
 * into out[0..cap). *len receives the JPEG length. Chroma: as the source
 * (VC_JPEG_SS_AUTO). Baseline, standard Huffman tables, no optimize_coding.
 * cap >= vc_jpeg_bound(width, height) never fails with -ENOSPC. */
int vc_jpeg_encode(struct vc_jpeg *j, const struct vc_image *src, int quality,
		   uint8_t *out, size_t cap, size_t *len);

/* The subsampling VC_JPEG_SS_AUTO encodes a source of format f with: the
 * source's chroma resolution where JPEG has it (4:4:4, 4:2:2, 4:2:0, 4:1:1),
 * VC_JPEG_SS_GRAY for grey, else 4:2:0 (RGB, Bayer, 4:1:0). */
int vc_jpeg_auto_subsamp(const struct vc_fmt *f);

/* The same with an explicit subsampling (VC_JPEG_SS_420/422/444/GRAY or AUTO). */
int vc_jpeg_encode_ss(struct vc_jpeg *j, const struct vc_image *src, int quality,
		      int subsamp, uint8_t *out, size_t cap, size_t *len);

/* What a JPEG's headers say, read without decoding. */
struct vc_jpeg_info {
	uint32_t width, height;
	uint8_t components; /* 1 grey, 3 YCbCr */
	uint8_t subsamp;    /* enum vc_jpeg_subsamp */
	uint8_t has_dht;    /* a DHT segment precedes the first SOS */
	uint8_t progressive;
	uint8_t adobe;      /* has an APP14 Adobe marker (may mean RGB/CMYK) */
	unsigned scans;     /* SOS segments (1 for a camera's baseline frame) */
	size_t sos_off;     /* offset of the first SOS marker (0xFF 0xDA) */
	size_t size;        /* bytes up to and including EOI (<= len; trailing garbage after it is ignored) */
};

/* Decoding cost limits. Each scan of a progressive JPEG makes the decoder
 * walk every block of the picture again, so a frame of many tiny scans (a
 * hostile v4l2loopback producer: 50,000 scans in 612 KB) would hold a worker
 * for a minute. Real encoders write at most about a dozen scans
 * (jpeg_simple_progression: 10). A frame may have VC_JPEG_MAX_SCANS scans,
 * and beyond one scan per component (what any sequential JPEG needs) the
 * scans times the pixels may not pass VC_JPEG_MAX_SCAN_PIXELS: 64 scans of
 * 1920x1080, about 0.1 s of decoding. */
#define VC_JPEG_MAX_SCANS 64
#define VC_JPEG_MAX_SCAN_PIXELS (64ull * 1920 * 1080)

/* Checks the structure: SOI first, every segment length inside the buffer,
 * one SOF (baseline/extended/progressive Huffman, 8-bit, 1 or 3 components,
 * nonzero size), SOS after SOF with known components, entropy data, EOI at
 * the end, the scan limits above. Never reads out of bounds. Returns 0 and
 * fills *info, or -EBADMSG (corrupt/truncated/empty/too many scans) /
 * -EINVAL (NULL arguments). */
int vc_jpeg_parse(const uint8_t *in, size_t len, struct vc_jpeg_info *info);

/* Output size of decoding w x h at 1/scale_denom (libjpeg-turbo rounds up:
 * ceil(w / denom)). scale_denom 1, 2, 4 or 8; others give 0. */
uint32_t vc_jpeg_scaled(uint32_t dim, int scale_denom);

/* Decodes in[0..len) at 1/scale_denom (1, 2, 4, 8) into dst, whose
 * width/height must equal vc_jpeg_scaled() of the JPEG's size. Direct paths:
 * I420 (YU12)/YV12/I422 (422P)/GREY and the 8-bit RGB family libjpeg-turbo
 * writes (RGB24, BGR24, the 32-bit RGBX/BGRX/XRGB/XBGR/ARGB... rows);
 * other raw formats through the converter. dst strides may be padded.
 * The frame's structure must pass vc_jpeg_parse (so truncated/empty frames
 * fail); libjpeg warnings about the entropy-coded data (bit errors, the
 * "extraneous bytes before marker" some webcams always produce) do not fail
 * the decode: the picture may then show damaged blocks.
 * Returns 0, -EBADMSG for bad data, -EINVAL for a size mismatch or an
 * unsupported destination. Never writes outside dst's planes. */
int vc_jpeg_decode(struct vc_jpeg *j, const uint8_t *in, size_t len, int scale_denom,
		   const struct vc_image *dst);

/* Size of the DHT segment vc_jpeg_add_dht inserts (the four Annex K tables). */
#define VC_JPEG_DHT_BYTES 420

/* Copies in to out inserting the standard (ITU-T T.81 Annex K.3) Huffman
 * tables before the first SOS when the JPEG has no DHT, as MJPEG from USB
 * webcams often does, so browsers and other decoders accept it. A JPEG that
 * already has tables is copied unchanged (callers that want zero copy check
 * vc_jpeg_info.has_dht first). cap >= len + VC_JPEG_DHT_BYTES always suffices.
 * Returns 0, -EBADMSG if in is not a valid JPEG, -ENOSPC. */
int vc_jpeg_add_dht(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		    size_t *out_len);

/* The DHT segment vc_jpeg_add_dht inserts: VC_JPEG_DHT_BYTES static,
 * read-only bytes. A server can send a DHT-less frame without copying it,
 * as three pieces: in[0 .. info.sos_off), this, in[info.sos_off .. len)
 * (exactly what vc_jpeg_add_dht writes). */
const uint8_t *vc_jpeg_std_dht(void);

/* The reverse, for tests and fault injection: copies in to out without its
 * DHT segments (cap >= len suffices). Returns 0, -EBADMSG, -ENOSPC. */
int vc_jpeg_strip_dht(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		      size_t *out_len);

/* Flip flags for vc_jpeg_transform. */
#define VC_JPEG_FLIP_H 1 /* mirror left-right */
#define VC_JPEG_FLIP_V 2 /* mirror top-bottom */

/* Lossless rotation/mirroring of a JPEG (tjTransform: DCT coefficients are
 * moved, nothing is re-encoded). The flips are applied first, then the
 * clockwise rotation by `rotate` degrees (0, 90, 180, 270).
 * Partial MCU blocks (width or height not a multiple of the MCU: 8 or 16
 * pixels depending on subsampling) cannot move to the top/left edge, so they
 * are trimmed (TJXOPT_TRIM): the result may be up to 15 pixels narrower or
 * shorter than the rotated input. *out_w and *out_h report the real output size.
 * rotate 0 without flips copies the input. cap >= len + len/4 + 4096 is
 * plenty in practice; vc_jpeg_bound(w, h) always suffices.
 * Returns 0, -EINVAL (bad rotate/flip), -EBADMSG, -ENOSPC. */
int vc_jpeg_transform(struct vc_jpeg *j, const uint8_t *in, size_t len, int rotate,
		      int flip, uint8_t *out, size_t cap, size_t *out_len,
		      uint32_t *out_w, uint32_t *out_h);

#endif
