/* What an M2M encoder's coded buffers mean, apart from the session that
 * moves them (server/encode/m2m_enc.c): whether a result is a key frame,
 * H.264 parameter sets sent in a buffer of their own joined to the next
 * picture, and the H.264 level a picture needs. No device I/O: unit-tested
 * through the session's fake device. Loop thread (one session's state). */
#ifndef VC_M2M_CODED_H
#define VC_M2M_CODED_H

#include <stddef.h>
#include <stdint.h>

struct vc_m2m_enc_params;
struct vc_m2m_enc_out;

/* Whether a coded buffer (V4L2 buffer flags, bytes) is a key frame: for
 * H.264 an access unit with an IDR slice, whatever the flag says (a flag
 * on a non-IDR I picture would be a bad join point; some drivers set none);
 * JPEG always; FWHT by its header; else the driver's flag. path: for the
 * debug line on a flag that disagrees with the bitstream. */
int vc_m2m_is_key(uint32_t coded_fourcc, uint32_t flags, const uint8_t *d, size_t len,
		  const char *path);

/* H.264 parameter sets that came without a picture, held for the next one
 * (each result is then one decodable access unit). Zeroed = empty. */
struct vc_m2m_join {
	uint8_t *hdr, *joined;
	size_t hdr_len, hdr_cap, joined_cap;
};

/* For H.264 only: a buffer *o with no coded slice (only SPS/PPS/SEI) is
 * held: returns 1. A picture gets what was held joined in front (o->data
 * then points into j, valid until the next call): returns 0, as for any
 * other buffer or format. -ENOMEM. */
int vc_m2m_join_header(struct vc_m2m_join *j, uint32_t coded_fourcc, struct vc_m2m_enc_out *o);
void vc_m2m_join_free(struct vc_m2m_join *j);

/* The smallest H.264 level (V4L2_MPEG_VIDEO_H264_LEVEL_*) whose limits fit
 * p's picture, rate and bitrate (H.264 table A-1); 0 = past 4.2. */
int vc_m2m_h264_level(const struct vc_m2m_enc_params *p);

#endif
