/* The RTP packetizer (common/rtp.c) on an access unit from outside, its
 * packets taken apart again as a receiver does (single NAL unit, STAP-A,
 * FU-A): every payload within the bound, sequence numbers consecutive, one
 * timestamp, the marker on the last packet only, and the units that come
 * out are the input's, whole and in order, but for the ones left out
 * (access unit delimiters, types 0 and 24..31). */
#ifndef VC_FUZZ_RTP_H
#define VC_FUZZ_RTP_H

#include "common/h264.h"
#include "common/rtp.h"
#include "tests/fuzz/fuzz.h"

struct fuzz_depay {
	const uint8_t *au;
	size_t len, pos;     /* the next unit expected is at or after au[pos] */
	size_t max;          /* payload bound */
	struct vc_nal fu;    /* the unit a FU-A run carries */
	size_t fu_off;       /* its bytes seen so far (0: no run open) */
	unsigned packets;
	uint16_t seq;
	int marker_seen;
};

/* The next unit the packetizer is meant to send. */
static inline int fuzz_rtp_want(struct fuzz_depay *d, struct vc_nal *n)
{
	int have;

	do {
		have = vc_h264_next_nal(d->au, d->len, &d->pos, n);
	} while (have && (n->type == 9 || n->type == 0 || n->type >= 24));
	return have;
}

static inline void fuzz_rtp_unit(struct fuzz_depay *d, const uint8_t *p, size_t n)
{
	struct vc_nal w;

	FUZZ_ASSERT(fuzz_rtp_want(d, &w) && w.len == n && memcmp(w.data, p, n) == 0);
}

static inline int fuzz_rtp_emit(void *opaque, const uint8_t *hdr, size_t hlen,
				const uint8_t *data, size_t len)
{
	struct fuzz_depay *d = opaque;
	uint8_t p[VC_RTP_PAYLOAD + 16];
	size_t n = hlen - 12 + len;

	FUZZ_ASSERT(hlen >= 12 && n >= 1 && n <= d->max && n <= sizeof(p));
	FUZZ_ASSERT(!d->marker_seen); /* nothing after the access unit's end */
	uint16_t seq = (uint16_t)(hdr[2] << 8 | hdr[3]);
	FUZZ_ASSERT(!d->packets || seq == (uint16_t)(d->seq + 1));
	d->seq = seq;
	d->packets++;
	d->marker_seen = hdr[1] >> 7;
	memcpy(p, hdr + 12, hlen - 12);
	memcpy(p + hlen - 12, data, len);
	uint8_t type = p[0] & 0x1f;
	if (type == 28) {
		FUZZ_ASSERT(n >= 3);
		int s = p[1] >> 7, e = p[1] >> 6 & 1;
		if (s) {
			FUZZ_ASSERT(!d->fu_off && fuzz_rtp_want(d, &d->fu));
			FUZZ_ASSERT(((p[0] & 0xe0) | (p[1] & 0x1f)) == d->fu.data[0]);
			d->fu_off = 1;
		}
		FUZZ_ASSERT(d->fu_off && d->fu_off + n - 2 <= d->fu.len);
		FUZZ_ASSERT(memcmp(d->fu.data + d->fu_off, p + 2, n - 2) == 0);
		d->fu_off += n - 2;
		FUZZ_ASSERT(e == (d->fu_off == d->fu.len));
		if (e)
			d->fu_off = 0;
		return 0;
	}
	FUZZ_ASSERT(!d->fu_off);
	if (type == 24) {
		size_t off = 1, units = 0;

		while (off < n) {
			FUZZ_ASSERT(off + 2 <= n);
			size_t k = (size_t)p[off] << 8 | p[off + 1];
			FUZZ_ASSERT(k >= 1 && off + 2 + k <= n);
			fuzz_rtp_unit(d, p + off + 2, k);
			off += 2 + k;
			units++;
		}
		FUZZ_ASSERT(units >= 2);
		return 0;
	}
	fuzz_rtp_unit(d, p, n);
	return 0;
}

/* Packetizes au[0..len) with a payload bound between 3 and the default. */
static inline void fuzz_rtp_check(const uint8_t *au, size_t len, size_t payload)
{
	struct fuzz_depay d = { .au = au, .len = len, .max = payload };
	struct vc_rtp r = { .ssrc = 1, .seq = 65530, .payload = payload };
	struct vc_nal rest;

	int sent = vc_rtp_h264_send(&r, au, len, 1234, fuzz_rtp_emit, &d);
	FUZZ_ASSERT(sent >= 0 && (unsigned)sent == d.packets && r.packets == d.packets);
	FUZZ_ASSERT(!d.fu_off && d.marker_seen == (d.packets > 0));
	FUZZ_ASSERT(!fuzz_rtp_want(&d, &rest)); /* every unit went out */
}

#endif
