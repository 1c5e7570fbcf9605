/* common/rtsp.c, common/rtp.c, common/digest.c: the RTSP request parser and
 * Transport header, base64, the RFC 6184 packetizer (single NAL units,
 * FU-A, marker bit), RTCP sender reports, the SDP and Digest responses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/digest.h"
#include "common/rtp.h"
#include "common/rtsp.h"

static struct vc_rtsp_req req;

static void parses_requests(void)
{
	const char *m = "DESCRIBE rtsp://h:8554/cam?size=640x480 RTSP/1.0\r\nCSeq: 7\r\n"
			"Accept: application/sdp\r\n\r\nOPTIONS";
	long n = vc_rtsp_parse(m, strlen(m), &req);

	CHECK(n == (long)(strlen(m) - 7), "took %ld", n);
	CHECK(!strcmp(req.method, "DESCRIBE") && !strcmp(req.uri, "rtsp://h:8554/cam?size=640x480"),
	      "%s %s", req.method, req.uri);
	CHECK(req.cseq == 7, "cseq %ld", req.cseq);
	CHECK(vc_rtsp_header(&req, "accept") && !strcmp(vc_rtsp_header(&req, "accept"),
							    "application/sdp"), "accept");
	/* more bytes needed: the head, then the body */
	CHECK(vc_rtsp_parse(m, 20, &req) == 0, "partial head");
	const char *b = "SET_PARAMETER * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\nab";
	CHECK(vc_rtsp_parse(b, strlen(b), &req) == 0, "partial body");
	const char *b2 = "SET_PARAMETER * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\nabcde";
	CHECK(vc_rtsp_parse(b2, strlen(b2), &req) == (long)strlen(b2), "whole body");
}

static void refuses_garbage(void)
{
	static const char *bad[] = {
		"GET / HTTP/1.1\r\n\r\n",
		"DESCRIBE rtsp://h/ RTSP/1.0\r\nCSeq: x\r\n\r\n",
		"DESCRIBE rtsp://h/ RTSP/1.0\r\nno colon\r\n\r\n",
		"describe rtsp://h/ RTSP/1.0\r\n\r\n",
		"DESCRIBE  RTSP/1.0\r\n\r\n",
		"OPTIONS * RTSP/1.0\r\nContent-Length: 99999\r\n\r\n",
		"OPTIONS * RTSP/1.0\r\nCSeq: 1\x01\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(vc_rtsp_parse(bad[i], strlen(bad[i]), &req) < 0, "row %zu accepted", i);
	char *big = malloc(VC_RTSP_MAX_HEAD + 10);
	memset(big, 'A', VC_RTSP_MAX_HEAD + 10);
	CHECK(vc_rtsp_parse(big, VC_RTSP_MAX_HEAD + 10, &req) == -EMSGSIZE, "no end in 4 KiB");
	free(big);
	/* 33 headers */
	char many[2048] = "OPTIONS * RTSP/1.0\r\n";
	for (int i = 0; i < 33; i++)
		strcat(many, "X: y\r\n");
	strcat(many, "\r\n");
	CHECK(vc_rtsp_parse(many, strlen(many), &req) == -EMSGSIZE, "too many headers");
}

static void transports(void)
{
	struct vc_rtsp_transport t;

	CHECK(vc_rtsp_transport("RTP/AVP/TCP;unicast;interleaved=2-3", &t) == 0 && t.tcp &&
	      t.ch[0] == 2 && t.ch[1] == 3, "tcp");
	CHECK(vc_rtsp_transport("RTP/AVP/TCP;unicast", &t) == 0 && t.ch[0] == 0 && t.ch[1] == 1,
	      "tcp default channels");
	CHECK(vc_rtsp_transport("RTP/AVP;unicast;client_port=5000-5001", &t) == 0 && !t.tcp &&
	      t.port[0] == 5000 && t.port[1] == 5001, "udp");
	CHECK(vc_rtsp_transport("RTP/AVP;multicast,RTP/AVP;unicast;client_port=6000", &t) == 0 &&
	      t.port[0] == 6000 && t.port[1] == 6001, "second choice");
	CHECK(vc_rtsp_transport("RTP/AVP;multicast", &t) == -ENOTSUP, "multicast");
	CHECK(vc_rtsp_transport("RTP/AVP;unicast", &t) == -EINVAL, "udp without ports");
	CHECK(vc_rtsp_transport("RTP/AVP;unicast;client_port=70000-70001", &t) < 0, "port range");
	CHECK(vc_rtsp_transport("RTP/SAVP;unicast;client_port=5000-5001", &t) < 0, "profile");
	CHECK(vc_rtsp_transport(NULL, &t) < 0, "none");
}

static void base64(void)
{
	char out[16];

	CHECK(vc_base64((const uint8_t *)"foob", 4, out, sizeof(out)) == 8 && !strcmp(out, "Zm9vYg=="),
	      "%s", out);
	CHECK(vc_base64((const uint8_t *)"fooba", 5, out, sizeof(out)) == 8 && !strcmp(out, "Zm9vYmE="),
	      "%s", out);
	CHECK(vc_base64((const uint8_t *)"foobar", 6, out, 8) == -ENOSPC, "no room");
}

/* Packets the packetizer emitted, reassembled. */
struct sink {
	int n, markers, last_marker;
	uint16_t seq[64];
	uint8_t nal[4][8192];
	size_t nal_len[4];
	int n_nal, fu_open, bad, staps;
	uint8_t first_pkt[16]; /* the first packet's first bytes */
	size_t max_pkt;
};

static int collect(void *opaque, const uint8_t *h, size_t hl, const uint8_t *d, size_t n)
{
	struct sink *s = opaque;
	uint8_t pkt[2000];

	if (hl + n > sizeof(pkt) || s->n >= 64) {
		s->bad = 1;
		return -E2BIG;
	}
	memcpy(pkt, h, hl);
	memcpy(pkt + hl, d, n);
	size_t len = hl + n;
	if (!s->n)
		memcpy(s->first_pkt, pkt, len < 16 ? len : 16);
	if (len - 12 > s->max_pkt)
		s->max_pkt = len - 12;
	s->seq[s->n++] = (uint16_t)(pkt[2] << 8 | pkt[3]);
	s->last_marker = pkt[1] >> 7;
	s->markers += s->last_marker;
	uint8_t *p = pkt + 12;
	if ((p[0] & 0x1f) == 28) {
		int st = p[1] >> 7, e = p[1] >> 6 & 1;
		if (st) {
			if (s->fu_open)
				s->bad = 1;
			s->fu_open = 1;
			s->nal[s->n_nal][0] = (uint8_t)((p[0] & 0xe0) | (p[1] & 0x1f));
			s->nal_len[s->n_nal] = 1;
		} else if (!s->fu_open) {
			s->bad = 1;
		}
		memcpy(s->nal[s->n_nal] + s->nal_len[s->n_nal], p + 2, len - 14);
		s->nal_len[s->n_nal] += len - 14;
		if (e) {
			s->fu_open = 0;
			s->n_nal++;
		}
	} else if ((p[0] & 0x1f) == 24) {
		/* STAP-A: size-prefixed NAL units after the header byte */
		size_t off = 13;

		s->staps++;
		if (s->fu_open || len <= off)
			s->bad = 1;
		while (off + 2 <= len && s->n_nal < 4) {
			size_t k = (size_t)pkt[off] << 8 | pkt[off + 1];

			if (!k || off + 2 + k > len) {
				s->bad = 1;
				break;
			}
			memcpy(s->nal[s->n_nal], pkt + off + 2, k);
			s->nal_len[s->n_nal++] = k;
			off += 2 + k;
		}
		if (off != len)
			s->bad = 1;
	} else {
		memcpy(s->nal[s->n_nal], p, len - 12);
		s->nal_len[s->n_nal++] = len - 12;
	}
	return 0;
}

static void packetizes(void)
{
	/* AUD, SPS (small), IDR slice of 5000 bytes: AUD left out, SPS in one
	 * packet, the slice in FU-A fragments, the marker on the very last */
	static uint8_t au[6000];
	size_t n = 0;
	const uint8_t aud[] = { 0, 0, 0, 1, 0x09, 0xf0 };
	const uint8_t sps[] = { 0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1e, 0xda };
	memcpy(au + n, aud, sizeof(aud));
	n += sizeof(aud);
	memcpy(au + n, sps, sizeof(sps));
	n += sizeof(sps);
	const uint8_t sc[] = { 0, 0, 1, 0x65 };
	memcpy(au + n, sc, sizeof(sc));
	n += sizeof(sc);
	for (int i = 0; i < 4999; i++)
		au[n++] = (uint8_t)(i % 251 + 1);
	struct vc_rtp r = { .ssrc = 0x11223344, .seq = 65534 };
	struct sink s = { 0 };

	int k = vc_rtp_h264_send(&r, au, n, 90000, collect, &s);
	CHECK(k == s.n && k == 1 + 4, "%d packets", k);
	CHECK(!s.bad && !s.fu_open, "fragments in order");
	CHECK(s.markers == 1 && s.last_marker, "one marker, on the last packet");
	CHECK(s.max_pkt <= VC_RTP_PAYLOAD, "payload %zu", s.max_pkt);
	for (int i = 1; i < s.n; i++)
		CHECK(s.seq[i] == (uint16_t)(s.seq[i - 1] + 1), "seq %u after %u", s.seq[i], s.seq[i - 1]);
	CHECK(s.n_nal == 2 && s.nal_len[0] == 5 && !memcmp(s.nal[0], sps + 4, 5), "SPS whole");
	CHECK(s.nal_len[1] == 5000 && !memcmp(s.nal[1], au + n - 5000, 5000), "slice reassembled");
	CHECK(r.packets == 5 && r.seq == 3, "counts %u seq %u", r.packets, r.seq);
}

/* SPS, PPS and SEI ahead of an IDR slice: one STAP-A (NRI the highest of
 * theirs), then the slice; a frame's lone SEI goes alone; NAL unit types
 * RTP reserves are not sent; too big a run is not aggregated. */
static void aggregates(void)
{
	const uint8_t sps[] = { 0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1e, 0xda };
	const uint8_t pps[] = { 0, 0, 0, 1, 0x68, 0xce, 0x3c, 0x80 };
	const uint8_t sei[] = { 0, 0, 1, 0x06, 0x05, 0x01, 0x00, 0x80 };
	const uint8_t idr[] = { 0, 0, 1, 0x65, 0x88, 0x84, 0x21 };
	uint8_t au[128];
	size_t n = 0;

	memcpy(au + n, sps, sizeof(sps)), n += sizeof(sps);
	memcpy(au + n, pps, sizeof(pps)), n += sizeof(pps);
	memcpy(au + n, sei, sizeof(sei)), n += sizeof(sei);
	memcpy(au + n, idr, sizeof(idr)), n += sizeof(idr);
	struct vc_rtp r = { .ssrc = 1 };
	struct sink s = { 0 };
	uint8_t first[16];

	int k = vc_rtp_h264_send(&r, au, n, 0, collect, &s);
	memcpy(first, s.first_pkt, sizeof(first));
	CHECK(k == 2 && s.n == 2 && s.staps == 1 && !s.bad, "%d packets, %d STAP-A", k, s.staps);
	CHECK(first[12] == (0x60 | 24), "STAP-A header %02x (NRI of the SPS)", first[12]);
	CHECK(s.n_nal == 4 && s.nal_len[0] == 5 && !memcmp(s.nal[0], sps + 4, 5) &&
	      s.nal_len[1] == 4 && !memcmp(s.nal[1], pps + 4, 4) && s.nal_len[2] == 5 &&
	      !memcmp(s.nal[2], sei + 3, 5) && s.nal_len[3] == 4 && !memcmp(s.nal[3], idr + 3, 4),
	      "NAL units whole and in order (%d)", s.n_nal);
	CHECK(s.markers == 1 && s.last_marker, "marker on the slice only");

	/* a P frame with one SEI: nothing to aggregate */
	n = 0;
	memcpy(au + n, sei, sizeof(sei)), n += sizeof(sei);
	memcpy(au + n, idr, sizeof(idr)), n += sizeof(idr);
	au[n - 4] = 0x41;
	memset(&s, 0, sizeof(s));
	k = vc_rtp_h264_send(&r, au, n, 3000, collect, &s);
	CHECK(k == 2 && s.staps == 0 && s.n_nal == 2, "lone SEI: %d packets, %d STAP-A", k, s.staps);

	/* types RTP reads as STAP-A / FU-A (and 0) are not sent as units */
	const uint8_t odd[] = { 0, 0, 1, 0x18, 0x01, 0, 0, 1, 0x1c, 0x02, 0, 0, 1, 0x00, 0x03 };
	n = 0;
	memcpy(au + n, odd, sizeof(odd)), n += sizeof(odd);
	memcpy(au + n, idr, sizeof(idr)), n += sizeof(idr);
	memset(&s, 0, sizeof(s));
	k = vc_rtp_h264_send(&r, au, n, 4500, collect, &s);
	CHECK(k == 1 && s.n_nal == 1 && s.nal_len[0] == 4 && !memcmp(s.nal[0], idr + 3, 4) && !s.bad,
	      "types 24, 28, 0 left out: %d packets", k);

	/* SPS and PPS that do not fit one packet together: one each */
	r.payload = 10;
	memset(&s, 0, sizeof(s));
	n = 0;
	memcpy(au + n, sps, sizeof(sps)), n += sizeof(sps);
	memcpy(au + n, pps, sizeof(pps)), n += sizeof(pps);
	k = vc_rtp_h264_send(&r, au, n, 6000, collect, &s);
	CHECK(k == 2 && s.staps == 0 && s.n_nal == 2 && s.last_marker, "over the payload: %d, %d STAP-A",
	      k, s.staps);
}

static void sender_report(void)
{
	struct vc_rtp r = { .ssrc = 1, .packets = 10, .octets = 1000 };
	uint8_t sr[28];
	int64_t us = 1700000000LL * 1000000 + 500000; /* .5 s */

	CHECK(vc_rtcp_sr(&r, us, 1234, sr) == 28 && sr[1] == 200 && sr[3] == 6, "header");
	uint32_t sec = (uint32_t)sr[8] << 24 | (uint32_t)sr[9] << 16 | (uint32_t)sr[10] << 8 | sr[11];
	uint32_t frac = (uint32_t)sr[12] << 24 | (uint32_t)sr[13] << 16 | (uint32_t)sr[14] << 8 | sr[15];
	CHECK(sec == 1700000000u + 2208988800u, "NTP seconds %u", sec);
	CHECK(frac == 0x80000000u, "NTP fraction %08x", frac);
	CHECK(vc_rtcp_is_report(sr, 28), "is a report");
	const uint8_t rr[8] = { 0x80, 201, 0, 1, 0, 0, 0, 1 };
	CHECK(vc_rtcp_is_report(rr, 8), "receiver report");
	CHECK(!vc_rtcp_is_report(rr, 4), "short");
	CHECK(vc_rtp_ts90k(1000000) == 90000, "90 kHz");
}

static void sdp(void)
{
	const uint8_t sps[] = { 0x67, 0x42, 0xc0, 0x1e, 0xda };
	const uint8_t pps[] = { 0x68, 0xce, 0x3c, 0x80 };
	char out[1024];

	CHECK(vc_sdp_h264(out, sizeof(out), "127.0.0.1", "rtsp://h/c/trackID=0", sps, sizeof(sps),
			  pps, sizeof(pps)) > 0, "written");
	CHECK(strstr(out, "profile-level-id=42C01E;"), "%s", out);
	CHECK(strstr(out, "sprop-parameter-sets=Z0LAHto=,aM48gA==\r\n"), "%s", out);
	CHECK(strstr(out, "packetization-mode=1") && strstr(out, "a=control:rtsp://h/c/trackID=0\r\n") &&
	      strstr(out, "a=rtpmap:96 H264/90000"), "%s", out);
	CHECK(vc_sdp_h264(out, 50, "x", "c", sps, sizeof(sps), pps, sizeof(pps)) == -ENOSPC, "room");
	CHECK(vc_sdp_h264(out, sizeof(out), "x", "c", sps, 3, pps, sizeof(pps)) == -EINVAL, "short");
}

static void digest(void)
{
	/* RFC 2617 section 3.5 */
	struct vc_digest d;
	char ha1[33];
	const char *h = "Digest username=\"Mufasa\", realm=\"testrealm@host.com\", "
			"nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", uri=\"/dir/index.html\", "
			"qop=auth, nc=00000001, cnonce=\"0a4f113b\", "
			"response=\"6629fae49393a05397450978507c4ef1\", "
			"opaque=\"5ccc069c403ebaf9f0171e9517f40e41\"";
	const char *s = "Mufasa:testrealm@host.com:Circle Of Life";

	vc_md5_hex(s, strlen(s), ha1);
	CHECK(vc_digest_parse(h, &d) == 0 && !strcmp(d.username, "Mufasa") && !strcmp(d.nc, "00000001"),
	      "parse");
	CHECK(vc_digest_ok(&d, "GET", ha1), "RFC 2617 example");
	CHECK(!vc_digest_ok(&d, "POST", ha1), "other method");
	d.response[0] ^= 1;
	CHECK(!vc_digest_ok(&d, "GET", ha1), "wrong response");
	/* without qop (RFC 2069 style, what GStreamer sends) */
	char want[33], hdr[1400];
	strcpy(d.qop, "");
	vc_digest_expect(&d, "DESCRIBE", ha1, want);
	snprintf(hdr, sizeof(hdr), "Digest username=\"Mufasa\", realm=\"r\", nonce=\"%s\", "
		 "uri=\"%s\", response=\"%s\"", d.nonce, d.uri, want);
	CHECK(vc_digest_parse(hdr, &d) == 0 && vc_digest_ok(&d, "DESCRIBE", ha1), "no qop");
	CHECK(vc_digest_parse("Basic Zm9v", &d) < 0, "basic");
	CHECK(vc_digest_parse("Digest username=\"a\", nonce=\"n\", uri=\"/\", response=\"short\"", &d) < 0,
	      "short response");
	CHECK(vc_digest_parse("Digest username=\"a", &d) < 0, "unterminated");
}

int main(void)
{
	RUN("rtsp", parses_requests);
	RUN("rtsp", refuses_garbage);
	RUN("rtsp", transports);
	RUN("rtsp", base64);
	RUN("rtsp", packetizes);
	RUN("rtsp", aggregates);
	RUN("rtsp", sender_report);
	RUN("rtsp", sdp);
	RUN("rtsp", digest);
	CHECK_EXIT();
}
