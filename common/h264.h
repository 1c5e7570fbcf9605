/* H.264 Annex-B byte streams: split an access unit into NAL units, tell
 * their types, find IDR pictures and the parameter sets, and read what a
 * container needs from an SPS (profile, level, coded size after cropping).
 * Pure code, no allocation: every result points into the caller's buffer. */
#ifndef VC_H264_H
#define VC_H264_H

#include <stddef.h>
#include <stdint.h>

enum vc_nal_type {
	VC_NAL_SLICE = 1,
	VC_NAL_IDR = 5,
	VC_NAL_SEI = 6,
	VC_NAL_SPS = 7,
	VC_NAL_PPS = 8,
	VC_NAL_AUD = 9,
};

struct vc_fmt;

/* The format row of encoded H.264 frames (Annex-B in mem[0], bytesused[0]
 * long): layout compressed, fourcc V4L2_PIX_FMT_H264. Kept out of the pixel
 * format table on purpose: nothing converts from or to it, and a client
 * asks for it through format=h264 on the stream endpoints only. */
const struct vc_fmt *vc_h264_fmt(void);

/* The row of a format a camera may deliver: the table's, or vc_h264_fmt()
 * for V4L2_PIX_FMT_H264 (a camera mode served by passthrough only, since
 * there is no H.264 decoder); NULL when neither knows it. */
const struct vc_fmt *vc_capture_fmt(uint32_t fourcc);

/* One NAL unit: its bytes without the start code and without trailing zero
 * bytes (a NAL unit never ends in 0x00; zeros before the next start code
 * belong to the byte stream). */
struct vc_nal {
	const uint8_t *data;
	size_t len;  /* >= 1 */
	uint8_t type; /* nal_unit_type, data[0] & 0x1f */
};

/* The next NAL unit of an Annex-B buffer at or after *pos (start at 0).
 * Returns 1 and fills *nal, advancing *pos past it; 0 when none is left.
 * Bytes before the first start code are skipped; empty units too. */
int vc_h264_next_nal(const uint8_t *buf, size_t len, size_t *pos, struct vc_nal *nal);

/* What one access unit (or any run of NAL units) holds. */
struct vc_h264_au {
	unsigned n_nal;
	int idr;                 /* an IDR slice is present: decodable alone */
	int has_slice;           /* any coded slice (types 1..5) */
	const uint8_t *sps, *pps; /* the first SPS / PPS seen, or NULL */
	size_t sps_len, pps_len;
};

/* Scans buf (Annex-B) and fills *au. Returns the number of NAL units. */
unsigned vc_h264_scan(const uint8_t *buf, size_t len, struct vc_h264_au *au);

/* What an SPS says that a container needs. */
struct vc_h264_sps {
	uint8_t profile_idc, constraint_flags, level_idc;
	uint8_t chroma_format_idc;      /* 1 = 4:2:0 (default when not coded) */
	uint8_t bit_depth_luma, bit_depth_chroma; /* 8 unless high profiles say */
	uint32_t width, height;         /* displayed size: macroblocks minus cropping */
	uint8_t frame_mbs_only;
};

/* Parses an SPS NAL unit (with its one-byte header, emulation prevention
 * bytes still in). Returns 0, -EINVAL when it is no SPS, -EBADMSG when it
 * is cut short or a value is out of range (more than 1024 macroblocks
 * across or map units down, crops larger than the picture). */
int vc_h264_parse_sps(const uint8_t *nal, size_t len, struct vc_h264_sps *out);

/* The RFC 6381 codecs string for the SPS ("avc1.42E01F"); buf >= 12. */
void vc_h264_codec_str(const struct vc_h264_sps *s, char *buf, size_t len);

#endif
