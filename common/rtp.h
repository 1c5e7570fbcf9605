/* RTP for H.264 (RFC 3550, RFC 6184): the packetizer (single NAL unit
 * packets, STAP-A for the parameter sets ahead of a slice, FU-A for NAL
 * units over the payload size), RTCP sender reports
 * and the SDP of one H.264 stream. Pure code, no allocation: packets go
 * out through a callback as a header and a slice of the caller's bytes. */
#ifndef VC_RTP_H
#define VC_RTP_H

#include <stddef.h>
#include <stdint.h>

#define VC_RTP_PAYLOAD 1400 /* payload bytes per packet: fits a 1500 B MTU */
#define VC_RTP_PT 96        /* dynamic payload type of the H.264 stream */

struct vc_rtp {
	uint32_t ssrc;
	uint16_t seq;       /* of the next packet */
	uint32_t packets, octets; /* sent so far (the sender report's counts) */
	size_t payload;     /* max payload per packet (0: VC_RTP_PAYLOAD) */
};

/* One packet: hdr[0..hlen) (the 12-byte RTP header, plus the FU-A indicator
 * and header) followed by data[0..len): the access unit's bytes, or for a
 * STAP-A the packetizer's own, valid during the call only. Returns 0, or a
 * negative errno that stops the access unit. */
typedef int (*vc_rtp_emit_fn)(void *opaque, const uint8_t *hdr, size_t hlen,
			      const uint8_t *data, size_t len);

/* Sends the Annex-B access unit au[0..len) with RTP timestamp ts: a run of
 * two or more NAL units other than slices (SPS, PPS, SEI) in one STAP-A
 * packet where it fits, else one packet per NAL unit that fits, FU-A
 * fragments for the others; the marker bit on the last packet; access unit
 * delimiters and NAL unit types 0 and 24..31 are left out. Returns the
 * packets sent, or emit's error. */
int vc_rtp_h264_send(struct vc_rtp *r, const uint8_t *au, size_t len, uint32_t ts,
		     vc_rtp_emit_fn emit, void *opaque);

/* A 90 kHz RTP timestamp for a capture time in microseconds. */
static inline uint32_t vc_rtp_ts90k(int64_t us)
{
	return (uint32_t)((uint64_t)us * 9 / 100);
}

/* An RTCP sender report (28 bytes into out) for wall-clock time real_us
 * (CLOCK_REALTIME, as NTP time) matching RTP timestamp ts. Returns 28. */
size_t vc_rtcp_sr(const struct vc_rtp *r, int64_t real_us, uint32_t ts, uint8_t out[28]);

/* Whether buf[0..len) is an RTCP compound packet holding a receiver or
 * sender report (a client's keep-alive). */
int vc_rtcp_is_report(const uint8_t *buf, size_t len);

/* The SDP of one H.264 stream (RFC 6184 section 8.2) from its SPS and PPS
 * (NAL units with their header), with the stream's control URL (absolute:
 * clients resolve a relative one against the base URL's path and lose its
 * query). Returns its length, or -ENOSPC / -EINVAL (SPS shorter than 4
 * bytes). */
int vc_sdp_h264(char *out, size_t cap, const char *origin_addr, const char *control,
		const uint8_t *sps, size_t sps_len, const uint8_t *pps, size_t pps_len);

#endif
