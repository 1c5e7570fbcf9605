/* JPEG structure without decoding: a bounds-checked walk over the marker
 * segments (parse/validate), and the two byte-level edits camera MJPEG
 * needs: inserting the standard Huffman tables and (for tests) removing
 * them. Every read is checked against the buffer length first. */
#include "common/jpeg_int.h"

#include <errno.h>
#include <string.h>

static inline unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* First marker at or after pos in entropy-coded data: 0xFF followed by a
 * byte that is neither a stuffed 0x00, a fill 0xFF nor a restart marker.
 * Returns its offset (of the 0xFF) or len when there is none. */
static size_t next_marker(const uint8_t *in, size_t len, size_t pos)
{
	while (pos < len) {
		const uint8_t *ff = memchr(in + pos, 0xFF, len - pos);

		if (!ff)
			return len;
		pos = (size_t)(ff - in);
		while (pos + 1 < len && in[pos + 1] == 0xFF)
			pos++; /* fill bytes */
		if (pos + 1 >= len)
			return len;
		uint8_t m = in[pos + 1];

		if (m != 0x00 && !(m >= 0xD0 && m <= 0xD7))
			return pos;
		pos += 2;
	}
	return len;
}

static int subsamp_of(const uint8_t hv[3][2], int n)
{
	static const struct { uint8_t h, v, ss; } tab[] = {
		{ 1, 1, VC_JPEG_SS_444 }, { 2, 1, VC_JPEG_SS_422 }, { 2, 2, VC_JPEG_SS_420 },
		{ 1, 2, VC_JPEG_SS_440 }, { 4, 1, VC_JPEG_SS_411 },
	};

	if (n == 1)
		return VC_JPEG_SS_GRAY;
	for (int c = 1; c < 3; c++)
		if (hv[c][0] != 1 || hv[c][1] != 1)
			return VC_JPEG_SS_OTHER;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].h == hv[0][0] && tab[i].v == hv[0][1])
			return tab[i].ss;
	return VC_JPEG_SS_OTHER;
}

/* Checks a DHT segment body: each table's 16 counts and symbols inside it. */
static int dht_ok(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t sum = 0;

		if ((p[i] >> 4) > 1 || (p[i] & 15) > 3 || i + 17 > n)
			return 0;
		for (int k = 1; k <= 16; k++)
			sum += p[i + (size_t)k];
		if (sum > 256 || i + 17 + sum > n)
			return 0;
		i += 17 + sum;
	}
	return 1;
}

/* The scan limits of jpeg.h, checked at each SOS so a frame of thousands of
 * scans is refused after its 65th, not after walking all of them. */
static int scans_ok(const struct vc_jpeg_info *info)
{
	if (info->scans > VC_JPEG_MAX_SCANS)
		return 0;
	if (info->scans <= info->components)
		return 1;
	return (unsigned long long)info->scans * info->width * info->height <=
	       VC_JPEG_MAX_SCAN_PIXELS;
}

/* What the marker walk knows so far: the frame's components (for each SOS
 * to check its scan against) and which quantisation tables exist. */
struct parse_st {
	int have_sof, have_sos, ncomp;
	unsigned qt_defined;
	uint8_t ids[3], hv[3][2], tq[3];
};

/* SOF0/1/2: the frame header (8-bit, 1 or 3 components, sane sampling). */
static int parse_sof(struct parse_st *st, uint8_t m, const uint8_t *b, size_t bl,
		     struct vc_jpeg_info *info)
{
	if (st->have_sof || bl < 6)
		return -EBADMSG;
	st->ncomp = b[5];
	int ncomp = st->ncomp;
	if (b[0] != 8 || (ncomp != 1 && ncomp != 3) || bl != 6 + 3 * (size_t)ncomp)
		return -EBADMSG;
	info->height = be16(b + 1);
	info->width = be16(b + 3);
	if (!info->width || !info->height)
		return -EBADMSG;
	int blocks = 0;
	for (int c = 0; c < ncomp; c++) {
		st->ids[c] = b[6 + 3 * c];
		st->hv[c][0] = b[7 + 3 * c] >> 4;
		st->hv[c][1] = b[7 + 3 * c] & 15;
		st->tq[c] = b[8 + 3 * c];
		if (st->hv[c][0] < 1 || st->hv[c][0] > 4 || st->hv[c][1] < 1 || st->hv[c][1] > 4 ||
		    st->tq[c] > 3)
			return -EBADMSG;
		for (int k = 0; k < c; k++)
			if (st->ids[k] == st->ids[c])
				return -EBADMSG;
		blocks += st->hv[c][0] * st->hv[c][1];
	}
	if (ncomp > 1 && blocks > 10)
		return -EBADMSG;
	info->components = (uint8_t)ncomp;
	info->subsamp = (uint8_t)subsamp_of(st->hv, ncomp);
	info->progressive = m == 0xC2;
	st->have_sof = 1;
	return 0;
}

/* DQT: 8-bit (65) or 16-bit (129) tables; records which ids exist. */
static int parse_dqt(struct parse_st *st, const uint8_t *b, size_t bl)
{
	size_t i = 0;

	while (i < bl) {
		size_t tl = (b[i] >> 4) ? 129 : 65;

		if ((b[i] >> 4) > 1 || (b[i] & 15) > 3 || i + tl > bl)
			return -EBADMSG;
		st->qt_defined |= 1u << (b[i] & 15);
		i += tl;
	}
	return 0;
}

/* SOS header at pos: each scan component is a frame component whose
 * quantisation table exists; counts the scan against the scan limits. */
static int parse_sos(struct parse_st *st, const uint8_t *b, size_t bl, size_t pos,
		     struct vc_jpeg_info *info)
{
	if (!st->have_sof || bl < 1)
		return -EBADMSG;
	int ns = b[0];

	if (ns < 1 || ns > st->ncomp || bl != 4 + 2 * (size_t)ns)
		return -EBADMSG;
	for (int s = 0; s < ns; s++) {
		int found = 0;

		for (int c = 0; c < st->ncomp; c++)
			if (st->ids[c] == b[1 + 2 * s]) {
				found = 1;
				if (!(st->qt_defined & 1u << st->tq[c]))
					return -EBADMSG;
			}
		if (!found)
			return -EBADMSG;
	}
	if (!st->have_sos)
		info->sos_off = pos;
	st->have_sos = 1;
	info->scans++;
	if (!scans_ok(info))
		return -EBADMSG;
	return 0;
}

/* One non-scan segment (marker m, body b of bl bytes): the frame header and
 * tables are checked, unsupported coding processes refused, the rest
 * (DRI, APPn, COM, DNL...) skipped. */
static int parse_segment(struct parse_st *st, uint8_t m, const uint8_t *b, size_t bl,
			 struct vc_jpeg_info *info)
{
	if (m == 0xC0 || m == 0xC1 || m == 0xC2) {
		if (parse_sof(st, m, b, bl, info) < 0)
			return -EBADMSG;
	} else if ((m >= 0xC3 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)) {
		return -EBADMSG; /* lossless/hierarchical/arithmetic: not for us */
	} else if (m == 0xC4) {
		if (!dht_ok(b, bl))
			return -EBADMSG;
		if (!st->have_sos)
			info->has_dht = 1;
	} else if (m == 0xDB) {
		if (parse_dqt(st, b, bl) < 0)
			return -EBADMSG;
	} else if (m == 0xEE && bl >= 5 && !memcmp(b, "Adobe", 5)) {
		info->adobe = 1;
	}
	return 0;
}

int vc_jpeg_parse(const uint8_t *in, size_t len, struct vc_jpeg_info *info)
{
	size_t pos = 2;
	struct parse_st st = { 0 };

	if (!info || (!in && len))
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	if (len < 4 || in[0] != 0xFF || in[1] != 0xD8)
		return -EBADMSG;
	for (;;) {
		if (pos + 1 >= len || in[pos] != 0xFF)
			return -EBADMSG;
		while (pos + 1 < len && in[pos + 1] == 0xFF)
			pos++;
		if (pos + 1 >= len)
			return -EBADMSG;
		uint8_t m = in[pos + 1];

		if (m == 0xD9) { /* EOI */
			if (!st.have_sos)
				return -EBADMSG;
			info->size = pos + 2;
			break;
		}
		if (m == 0x00 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01)
			return -EBADMSG; /* no standalone markers between segments */
		if (pos + 4 > len)
			return -EBADMSG;
		size_t seglen = be16(in + pos + 2);
		const uint8_t *b = in + pos + 4; /* segment body */
		size_t bl = seglen - 2;

		if (seglen < 2 || pos + 2 + seglen > len)
			return -EBADMSG;
		if (m == 0xDA) {
			if (parse_sos(&st, b, bl, pos, info) < 0)
				return -EBADMSG;
			size_t data = pos + 2 + seglen;

			pos = next_marker(in, len, data);
			if (pos >= len || pos == data)
				return -EBADMSG; /* truncated, or a scan without data */
			continue;
		}
		if (parse_segment(&st, m, b, bl, info) < 0)
			return -EBADMSG;
		/* DRI, APPn, COM, DNL...: only their length matters here. */
		pos += 2 + seglen;
	}
	return 0;
}

/* ITU-T T.81 Annex K.3: the typical Huffman tables, as one DHT segment
 * holding luminance DC (0x00), luminance AC (0x10), chrominance DC (0x01)
 * and chrominance AC (0x11). */
static const uint8_t std_dht[VC_JPEG_DHT_BYTES] = {
	0xFF, 0xC4, 0x01, 0xA2,
	0x00, 0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
	0x10, 0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d,
	0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06,
	0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08,
	0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72,
	0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
	0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45,
	0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
	0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
	0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
	0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3,
	0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
	0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9,
	0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
	0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4,
	0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
	0x01, 0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
	0x11, 0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77,
	0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41,
	0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91,
	0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1,
	0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
	0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44,
	0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
	0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74,
	0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
	0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a,
	0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4,
	0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
	0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
	0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4,
	0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
};

const uint8_t *vc_jpeg_std_dht(void)
{
	return std_dht;
}

int vc_jpeg_add_dht(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		    size_t *out_len)
{
	struct vc_jpeg_info info;
	int r;

	if (!out || !out_len)
		return -EINVAL;
	r = vc_jpeg_parse(in, len, &info);
	if (r < 0)
		return r;
	if (info.has_dht) {
		if (cap < len)
			return -ENOSPC;
		memcpy(out, in, len);
		*out_len = len;
		return 0;
	}
	if (cap < len + VC_JPEG_DHT_BYTES)
		return -ENOSPC;
	memcpy(out, in, info.sos_off);
	memcpy(out + info.sos_off, std_dht, VC_JPEG_DHT_BYTES);
	memcpy(out + info.sos_off + VC_JPEG_DHT_BYTES, in + info.sos_off, len - info.sos_off);
	*out_len = len + VC_JPEG_DHT_BYTES;
	return 0;
}

int vc_jpeg_strip_dht(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		      size_t *out_len)
{
	struct vc_jpeg_info info;
	size_t pos = 2, o = 2;
	int r;

	if (!out || !out_len)
		return -EINVAL;
	r = vc_jpeg_parse(in, len, &info);
	if (r < 0)
		return r;
	if (cap < len)
		return -ENOSPC;
	memcpy(out, in, 2);
	/* parse() validated every segment before the first SOS. */
	while (pos < info.sos_off) {
		while (in[pos + 1] == 0xFF)
			pos++;
		size_t n = 2 + be16(in + pos + 2);

		if (in[pos + 1] != 0xC4) {
			memcpy(out + o, in + pos, n);
			o += n;
		}
		pos += n;
	}
	memcpy(out + o, in + pos, len - pos);
	*out_len = o + len - pos;
	return 0;
}
