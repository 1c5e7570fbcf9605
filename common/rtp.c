/* RTP/RTCP/SDP for H.264 (common/rtp.h). */
#include "common/rtp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/h264.h"
#include "common/rtsp.h"

static void rtp_header(struct vc_rtp *r, uint8_t h[12], int marker, uint32_t ts)
{
	h[0] = 0x80; /* version 2 */
	h[1] = (uint8_t)((marker ? 0x80 : 0) | VC_RTP_PT);
	h[2] = (uint8_t)(r->seq >> 8);
	h[3] = (uint8_t)r->seq;
	h[4] = (uint8_t)(ts >> 24);
	h[5] = (uint8_t)(ts >> 16);
	h[6] = (uint8_t)(ts >> 8);
	h[7] = (uint8_t)ts;
	h[8] = (uint8_t)(r->ssrc >> 24);
	h[9] = (uint8_t)(r->ssrc >> 16);
	h[10] = (uint8_t)(r->ssrc >> 8);
	h[11] = (uint8_t)r->ssrc;
	r->seq++;
}

static int emit1(struct vc_rtp *r, uint8_t *h, size_t hlen, const uint8_t *d, size_t n,
		 vc_rtp_emit_fn emit, void *opaque)
{
	int ret = emit(opaque, h, hlen, d, n);

	if (ret < 0)
		return ret;
	r->packets++;
	r->octets += (uint32_t)(hlen - 12 + n);
	return 0;
}

/* The next NAL unit to send: access unit delimiters are left out (RTP has
 * the marker), and so are types 0 and 24..31, unspecified in H.264 and
 * read as aggregation or fragmentation packets in RTP (a camera's stream
 * is outside input). */
static int next_unit(const uint8_t *au, size_t len, size_t *pos, struct vc_nal *nal)
{
	int have;

	do {
		have = vc_h264_next_nal(au, len, pos, nal);
	} while (have && (nal->type == 9 || nal->type == 0 || nal->type >= 24));
	return have;
}

static int is_slice(uint8_t type)
{
	return type >= 1 && type <= 5;
}

int vc_rtp_h264_send(struct vc_rtp *r, const uint8_t *au, size_t len, uint32_t ts,
		     vc_rtp_emit_fn emit, void *opaque)
{
	size_t max = r->payload ? r->payload : VC_RTP_PAYLOAD;
	uint8_t stap[VC_RTP_PAYLOAD];
	size_t stap_cap = max < sizeof(stap) ? max : sizeof(stap);
	size_t pos = 0, next_pos;
	struct vc_nal nal, next;
	int have, sent = 0, ret;

	/* one NAL unit ahead: the marker goes on the last packet of the last one */
	have = next_unit(au, len, &pos, &nal);
	while (have) {
		uint8_t h[14];

		next_pos = pos;
		int more = next_unit(au, len, &next_pos, &next);

		if (!is_slice(nal.type) && more && !is_slice(next.type) &&
		    1 + 2 + nal.len + 2 + next.len <= stap_cap) {
			/* STAP-A (RFC 6184 5.7.1): the parameter sets and SEI
			 * ahead of a slice in one packet, each behind its size;
			 * F and the highest NRI of theirs in the STAP-A header */
			size_t n = 1;
			uint8_t fbit = 0, nri = 0;

			for (;;) {
				stap[n] = (uint8_t)(nal.len >> 8);
				stap[n + 1] = (uint8_t)nal.len;
				memcpy(stap + n + 2, nal.data, nal.len);
				n += 2 + nal.len;
				if ((nal.data[0] & 0x60) > nri)
					nri = nal.data[0] & 0x60;
				fbit |= nal.data[0] & 0x80;
				if (!more || is_slice(next.type) || n + 2 + next.len > stap_cap)
					break;
				nal = next;
				pos = next_pos;
				more = next_unit(au, len, &next_pos, &next);
			}
			stap[0] = (uint8_t)(fbit | nri | 24);
			rtp_header(r, h, !more, ts);
			if ((ret = emit1(r, h, 12, stap, n, emit, opaque)) < 0)
				return ret;
			sent++;
		} else if (nal.len <= max) {
			rtp_header(r, h, !more, ts);
			if ((ret = emit1(r, h, 12, nal.data, nal.len, emit, opaque)) < 0)
				return ret;
			sent++;
		} else {
			/* FU-A: indicator F|NRI|28, header S|E|R|type, the
			 * NAL unit's header byte left out */
			size_t off = 1;

			while (off < nal.len) {
				size_t n = nal.len - off > max - 2 ? max - 2 : nal.len - off;
				int last = off + n == nal.len;

				rtp_header(r, h, last && !more, ts);
				h[12] = (uint8_t)((nal.data[0] & 0xe0) | 28);
				h[13] = (uint8_t)((off == 1 ? 0x80 : 0) | (last ? 0x40 : 0) |
						  (nal.data[0] & 0x1f));
				if ((ret = emit1(r, h, 14, nal.data + off, n, emit, opaque)) < 0)
					return ret;
				sent++;
				off += n;
			}
		}
		nal = next;
		pos = next_pos;
		have = more;
	}
	return sent;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

size_t vc_rtcp_sr(const struct vc_rtp *r, int64_t real_us, uint32_t ts, uint8_t out[28])
{
	/* NTP: seconds since 1900, and the fraction in 1/2^32 s */
	uint64_t sec = (uint64_t)(real_us / 1000000) + 2208988800u;
	uint64_t frac = ((uint64_t)(real_us % 1000000) << 32) / 1000000;

	out[0] = 0x80; /* V=2, no reception report blocks */
	out[1] = 200;  /* SR */
	out[2] = 0;
	out[3] = 6;    /* length in 32-bit words minus one */
	put32(out + 4, r->ssrc);
	put32(out + 8, (uint32_t)sec);
	put32(out + 12, (uint32_t)frac);
	put32(out + 16, ts);
	put32(out + 20, r->packets);
	put32(out + 24, r->octets);
	return 28;
}

int vc_rtcp_is_report(const uint8_t *buf, size_t len)
{
	return len >= 8 && (buf[0] & 0xc0) == 0x80 && (buf[1] == 200 || buf[1] == 201);
}

int vc_sdp_h264(char *out, size_t cap, const char *origin_addr, const char *control,
		const uint8_t *sps, size_t sps_len, const uint8_t *pps, size_t pps_len)
{
	char b_sps[512], b_pps[512];

	if (sps_len < 4 || !pps_len)
		return -EINVAL;
	if (vc_base64(sps, sps_len, b_sps, sizeof(b_sps)) < 0 ||
	    vc_base64(pps, pps_len, b_pps, sizeof(b_pps)) < 0)
		return -ENOSPC;
	int n = snprintf(out, cap,
			 "v=0\r\n"
			 "o=- 0 0 IN IP4 %s\r\n"
			 "s=vcapd\r\n"
			 "c=IN IP4 0.0.0.0\r\n"
			 "t=0 0\r\n"
			 "a=control:*\r\n"
			 "m=video 0 RTP/AVP %d\r\n"
			 "a=rtpmap:%d H264/90000\r\n"
			 "a=fmtp:%d packetization-mode=1;profile-level-id=%02X%02X%02X;"
			 "sprop-parameter-sets=%s,%s\r\n"
			 "a=control:%s\r\n",
			 origin_addr, VC_RTP_PT, VC_RTP_PT, VC_RTP_PT, sps[1], sps[2], sps[3], b_sps,
			 b_pps, control);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}
