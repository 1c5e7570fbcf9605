/* H.264 Annex-B scanning and SPS parsing: start codes of 3 and 4 bytes,
 * trailing zeros, empty units and leading garbage; SPS vectors written by
 * x264 (ffmpeg -c:v libx264) for each profile family, cropped sizes,
 * 4:2:2 and interlaced, plus cut-short and wrong-type input. */
#include <errno.h>

#include "check.h"
#include "common/h264.h"

static void scan_units(void)
{
	static const uint8_t au[] = {
		0xff, 0x00,                   /* garbage before the first start code */
		0, 0, 0, 1, 0x09, 0xf0,       /* AUD, 4-byte start code */
		0, 0, 1, 0x67, 0x42, 0, 0,    /* SPS ending in two zeros (trailing) */
		0, 0, 0, 1, 0x68, 0xce,       /* PPS */
		0, 0, 1,                      /* empty unit */
		0, 0, 1, 0x65, 0x88, 0x00, 0x03, 0x01, /* IDR with an escape inside */
	};
	static const struct { uint8_t type; size_t len; } want[] = {
		{ 9, 2 }, { 7, 2 }, { 8, 2 }, { 5, 5 },
	};
	struct vc_nal n;
	size_t pos = 0;
	unsigned i = 0;

	while (vc_h264_next_nal(au, sizeof(au), &pos, &n)) {
		CHECK(i < ARRAY_LEN(want), "too many units (%u)", i);
		if (i >= ARRAY_LEN(want))
			break;
		CHECK(n.type == want[i].type && n.len == want[i].len, "unit %u: type %u len %zu", i,
		      n.type, n.len);
		i++;
	}
	CHECK(i == ARRAY_LEN(want), "%u units", i);

	struct vc_h264_au a;

	CHECK(vc_h264_scan(au, sizeof(au), &a) == 4, "scan count %u", a.n_nal);
	CHECK(a.idr && a.has_slice && a.sps == au + 11 && a.sps_len == 2 && a.pps == au + 19 &&
		      a.pps_len == 2, "scan: idr %d sps %p pps %p", a.idr, (const void *)a.sps,
	      (const void *)a.pps);

	static const uint8_t p[] = { 0, 0, 1, 0x41, 0x9a, 0, 0, 1, 0x41, 0x9b };

	CHECK(vc_h264_scan(p, sizeof(p), &a) == 2 && !a.idr && a.has_slice && !a.sps,
	      "P frame: n %u idr %d", a.n_nal, a.idr);
	CHECK(vc_h264_scan(p, 3, &a) == 0 && vc_h264_scan(NULL, 0, &a) == 0, "empty input");
	static const uint8_t none[] = { 1, 2, 3, 0, 0, 2, 0 };

	CHECK(vc_h264_scan(none, sizeof(none), &a) == 0, "no start code");
}

static const uint8_t sps_1080_high[] = { 0x67, 0x64, 0x00, 0x28, 0xac, 0xd9, 0x40, 0x78, 0x02,
	0x27, 0xe5, 0xc0, 0x44, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x03, 0x00, 0xf0, 0x3c,
	0x60, 0xc6, 0x58 };
static const uint8_t sps_642_high[] = { 0x67, 0x64, 0x00, 0x1e, 0xac, 0xd9, 0x40, 0xa4, 0x2f,
	0xe2, 0x24, 0xc0, 0x44, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x03, 0x00, 0xf0, 0x3c,
	0x58, 0xb6, 0x58 };
static const uint8_t sps_320_base[] = { 0x67, 0x42, 0xc0, 0x0d, 0xd9, 0x01, 0x41, 0xfb, 0x01,
	0x10, 0x00, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0xc0, 0xf1, 0x42, 0xa4, 0x80 };
static const uint8_t sps_636_422[] = { 0x67, 0x7a, 0x00, 0x1e, 0xbc, 0xd9, 0x40, 0xa0, 0x2f,
	0xee, 0x2f, 0x01, 0x10, 0x00, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0xc0, 0xf1,
	0x62, 0xd9, 0x60 };
static const uint8_t sps_720_main[] = { 0x67, 0x4d, 0x40, 0x1f, 0xec, 0xa0, 0x28, 0x02, 0xdd,
	0x80, 0x88, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03, 0x01, 0xe0, 0x78, 0xc1, 0x8c,
	0xb0 };
static const uint8_t sps_576_interlaced[] = { 0x67, 0x64, 0x00, 0x1e, 0xac, 0xd9, 0x40, 0xb4,
	0x24, 0xd8, 0x08, 0x80, 0x00, 0x00, 0x03, 0x00, 0x80, 0x00, 0x00, 0x19, 0x0f, 0x8a, 0x14,
	0xcb };

static void sps_vectors(void)
{
	static const struct {
		int line;
		const uint8_t *sps;
		size_t len;
		uint32_t w, h;
		uint8_t profile, level, chroma, frame_mbs_only;
		const char *codec;
	} t[] = {
		{ __LINE__, sps_1080_high, sizeof(sps_1080_high), 1920, 1080, 100, 40, 1, 1, "avc1.640028" },
		{ __LINE__, sps_642_high, sizeof(sps_642_high), 642, 362, 100, 30, 1, 1, "avc1.64001E" },
		{ __LINE__, sps_320_base, sizeof(sps_320_base), 320, 240, 66, 13, 1, 1, "avc1.42C00D" },
		{ __LINE__, sps_636_422, sizeof(sps_636_422), 636, 358, 122, 30, 2, 1, "avc1.7A001E" },
		{ __LINE__, sps_720_main, sizeof(sps_720_main), 1280, 720, 77, 31, 1, 1, "avc1.4D401F" },
		{ __LINE__, sps_576_interlaced, sizeof(sps_576_interlaced), 720, 576, 100, 30, 1, 0,
		  "avc1.64001E" },
	};

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		struct vc_h264_sps s;
		char codec[16];

		memset(&s, 0xff, sizeof(s));
		int rc = vc_h264_parse_sps(t[i].sps, t[i].len, &s);

		CHECK_AT(t[i].line, rc == 0, "rc %d", rc);
		if (rc)
			continue;
		CHECK_AT(t[i].line, s.width == t[i].w && s.height == t[i].h, "size %ux%u", s.width,
			 s.height);
		CHECK_AT(t[i].line, s.profile_idc == t[i].profile && s.level_idc == t[i].level &&
				 s.chroma_format_idc == t[i].chroma &&
				 s.frame_mbs_only == t[i].frame_mbs_only && s.bit_depth_luma == 8,
			 "profile %u level %u chroma %u fmo %u depth %u", s.profile_idc, s.level_idc,
			 s.chroma_format_idc, s.frame_mbs_only, s.bit_depth_luma);
		vc_h264_codec_str(&s, codec, sizeof(codec));
		CHECK_AT(t[i].line, strcmp(codec, t[i].codec) == 0, "codec %s", codec);
	}
}

static void sps_bad(void)
{
	struct vc_h264_sps s;
	static const uint8_t pps[] = { 0x68, 0xce, 0x38, 0x80 };

	CHECK(vc_h264_parse_sps(pps, sizeof(pps), &s) == -EINVAL, "a PPS is no SPS");
	CHECK(vc_h264_parse_sps(sps_1080_high, 3, &s) == -EINVAL, "3 bytes");
	/* every truncation of a valid SPS fails cleanly or parses (the tail is VUI) */
	for (size_t n = 4; n < sizeof(sps_1080_high); n++) {
		int rc = vc_h264_parse_sps(sps_1080_high, n, &s);

		CHECK(rc == 0 || rc == -EBADMSG, "cut at %zu: %d", n, rc);
		if (rc == 0)
			CHECK(s.width == 1920 && s.height == 1080, "cut at %zu: %ux%u", n, s.width,
			      s.height);
	}
	/* all ones: exp-Golomb codes run off the end or values are out of range */
	uint8_t ones[40];

	memset(ones, 0xff, sizeof(ones));
	ones[0] = 0x67;
	int rc = vc_h264_parse_sps(ones, sizeof(ones), &s);

	CHECK(rc == 0 || rc == -EBADMSG, "all ones: %d", rc);
	memset(ones + 1, 0, sizeof(ones) - 1);
	CHECK(vc_h264_parse_sps(ones, sizeof(ones), &s) == -EBADMSG, "all zeros");
}

/* An SPS NAL from a string of '0'/'1' (spaces ignored) after the 0x67
 * header, padded with zeros to whole bytes. Returns its length. */
static size_t sps_from_bits(const char *bits, uint8_t *out, size_t cap)
{
	size_t n = 0;

	memset(out, 0, cap);
	out[0] = 0x67;
	for (const char *p = bits; *p && n < (cap - 1) * 8; p++) {
		if (*p == ' ')
			continue;
		if (*p == '1')
			out[1 + n / 8] |= (uint8_t)(0x80 >> (n % 8));
		n++;
	}
	return 1 + (n + 7) / 8;
}

/* High profile 320x240 SPSes that differ in chroma_format_idc and the bit
 * depths: ue(v) values of 257 or 256 wrapped to 1 or 0 when the old parser
 * narrowed them to uint8_t before the range check, and passed it. */
static void sps_range_before_narrowing(void)
{
#define HEAD "01100100 00000000 00011110 1 "
#define TAIL " 0 0 1 1 1 1 0 000010100 0001111 1 1 0 0 1"
	static const struct {
		int line;
		const char *bits;
		int rc;
	} t[] = {
		{ __LINE__, HEAD "010" " 1 1" TAIL, 0 },                       /* chroma 1 */
		{ __LINE__, HEAD "00000000100000010" " 1 1" TAIL, -EBADMSG },  /* chroma 257 */
		{ __LINE__, HEAD "00101" " 1 1" TAIL, -EBADMSG },              /* chroma 4 */
		{ __LINE__, HEAD "010 00000000100000001 1" TAIL, -EBADMSG },   /* luma 8+256 */
		{ __LINE__, HEAD "010 1 000000011111001" TAIL, -EBADMSG },     /* chroma 8+248 */
		{ __LINE__, HEAD "010 0001000 1" TAIL, -EBADMSG },             /* luma 8+7 */
		{ __LINE__, HEAD "010 00111 00111" TAIL, 0 },                  /* 14 bits */
	};
#undef HEAD
#undef TAIL

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		uint8_t nal[32];
		struct vc_h264_sps s;
		size_t len = sps_from_bits(t[i].bits, nal, sizeof(nal));

		memset(&s, 0xff, sizeof(s));
		int rc = vc_h264_parse_sps(nal, len, &s);

		CHECK_AT(t[i].line, rc == t[i].rc, "rc %d, want %d (chroma %u depths %u/%u)", rc,
			 t[i].rc, s.chroma_format_idc, s.bit_depth_luma, s.bit_depth_chroma);
		if (rc == 0 && t[i].rc == 0)
			CHECK_AT(t[i].line, s.width == 320 && s.height == 240 &&
					    s.chroma_format_idc == 1 && s.bit_depth_luma <= 14,
				 "%ux%u chroma %u depth %u", s.width, s.height, s.chroma_format_idc,
				 s.bit_depth_luma);
	}
}

int main(void)
{
	RUN("h264", scan_units);
	RUN("h264", sps_vectors);
	RUN("h264", sps_bad);
	RUN("h264", sps_range_before_narrowing);
	CHECK_EXIT();
}
