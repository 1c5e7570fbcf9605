/* Fragmented MP4 (ISO/IEC 14496-12 + 14496-15) for one H.264 video track,
 * as browsers' <video> and ffmpeg read a live stream: an init segment
 * (ftyp + moov with the avcC built from SPS/PPS, empty sample tables and an
 * mvex/trex saying fragments follow), then one moof + mdat per frame. The
 * parameter sets live in the avcC only ('avc1' sample entry): samples carry
 * the picture's other NAL units, each behind a 4-byte big-endian length.
 * Pure code: writes into caller buffers, allocates nothing. */
#ifndef VC_MP4_H
#define VC_MP4_H

#include <stddef.h>
#include <stdint.h>

#define VC_MP4_TIMESCALE 90000 /* ticks per second of the track (as RTP video) */

/* Bytes the init segment for these parameter sets takes at most. */
size_t vc_mp4_init_bound(size_t sps_len, size_t pps_len);

/* Writes the init segment for the track described by one SPS and one PPS
 * NAL unit (header byte included, no start code) into buf. Returns its
 * length, -EINVAL for an SPS that does not parse, -ENOSPC when cap is too
 * small (vc_mp4_init_bound is always enough). */
int vc_mp4_init(uint8_t *buf, size_t cap, const uint8_t *sps, size_t sps_len,
		const uint8_t *pps, size_t pps_len);

/* One frame's fragment. */
struct vc_mp4_sample {
	const uint8_t *annexb; /* the access unit, Annex-B */
	size_t len;
	uint32_t seq;          /* mfhd sequence number: increasing, from 1 */
	uint64_t decode_time;  /* tfdt, in VC_MP4_TIMESCALE ticks */
	uint32_t duration;     /* ticks */
	int key;               /* an IDR: a sync sample */
};

/* Bytes the fragment of an Annex-B access unit of len bytes takes at most
 * (start codes are at least 3 bytes and become 4-byte lengths). */
size_t vc_mp4_fragment_bound(size_t len);

/* Writes moof + mdat for one sample into buf. SPS, PPS and access unit
 * delimiters are left out of the sample (they are in the avcC or carry
 * nothing). Returns the length, -ENOSPC when cap is too small, -EINVAL
 * when the access unit holds no other NAL unit. */
long vc_mp4_fragment(uint8_t *buf, size_t cap, const struct vc_mp4_sample *s);

/* The duration to write for a live frame whose successor has not come yet,
 * from the interval before it (ticks): that interval and half of it again.
 * MSE (W3C Media Source Extensions, coded frame processing) takes a decode
 * time more than twice the last frame's duration after the previous one as
 * a discontinuity and drops every frame up to the next key frame: with the
 * bare interval, one frame the camera or the encoder gave late (70 ms after
 * 33 ms) stopped a WebKit video for seconds. With the margin the next
 * frame may come up to 3 intervals later; the overlap a frame that comes on
 * time makes is allowed (MSE removes only frames starting inside a new
 * one). */
uint32_t vc_mp4_live_duration(uint32_t last_interval);

#endif
