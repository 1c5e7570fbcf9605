/* Software H.264 encoder: I420 pictures in, one Annex-B access unit per
 * picture out, through libopenh264 (Cisco's BSD-licensed encoder; x264 is
 * GPL, which would bind the whole daemon). Constrained Baseline, one slice,
 * no B-frames (decode order = display order, no reordering delay), SPS and
 * PPS (constant ids) before every IDR, an IDR `gop` pictures after the
 * previous one (pictures skipped included) and whenever asked. The rate is
 * held by skipping pictures (see vc_h264enc_encode) unless keep_all is set.
 * Not thread-safe: one encoder serves one output, its frames one at a
 * time, in order. No I/O. */
#ifndef VC_H264ENC_H
#define VC_H264ENC_H

#include <stddef.h>
#include <stdint.h>

struct vc_h264enc_cfg {
	uint32_t width, height; /* even, 16..4096 */
	uint32_t fps;           /* expected rate (rate control); 1..240 */
	uint32_t bitrate;       /* target, bits per second; 0 = vc_h264enc_default_bitrate */
	uint32_t gop;           /* frames from one IDR to the next; 0 = 2 s worth */
	/* 1: an access unit for every picture, never one skipped (a camera's
	 * own encoder: one buffer per frame), so a low bitrate is overshot;
	 * 0: pictures are skipped where the rate would be exceeded */
	int keep_all;
};

/* A target rate for a size and rate: about 0.07 bits per pixel per frame
 * (1280x720@30: 1.9 Mbit/s), at least 100 kbit/s. */
uint32_t vc_h264enc_default_bitrate(uint32_t width, uint32_t height, uint32_t fps);

struct vc_h264enc;

/* Returns 0 and *out, -EINVAL for a size or rate outside the ranges above,
 * -ENOMEM, or -EIO when the library refuses the parameters. */
int vc_h264enc_new(const struct vc_h264enc_cfg *cfg, struct vc_h264enc **out);
void vc_h264enc_free(struct vc_h264enc *e); /* NULL is a no-op */

/* The next picture to encode is an IDR (a joining client needs one); the
 * library never skips an IDR. */
void vc_h264enc_force_idr(struct vc_h264enc *e);

/* One encoded picture: valid until the next call on the encoder. */
struct vc_h264enc_out {
	const uint8_t *data; /* Annex-B, 4-byte start codes */
	size_t len;
	int key;             /* an IDR, preceded by SPS and PPS */
};

/* Encodes one I420 picture of the configured size (planes y, u, v with
 * their strides; only read). ts_ms is its capture time in milliseconds:
 * the rate control spends `bitrate` bits per second of it, and without
 * keep_all skips a picture (len 0) when its bits would overrun that
 * budget by more than about half a second's worth (P pictures cannot
 * shrink below ~1.5-2.5 KB at 720p whatever the quantiser). Returns 0 and
 * *out (len 0: the encoder skipped the picture; send nothing for it), or
 * -EIO. */
int vc_h264enc_encode(struct vc_h264enc *e, const uint8_t *const plane[3],
		      const uint32_t stride[3], int64_t ts_ms, struct vc_h264enc_out *out);

#endif
