/* The fragmented MP4 writer: the init segment's box tree (every box's size
 * adds up inside its parent; the avcC holds the SPS/PPS it was given), each
 * fragment's moof/mdat (trun's data offset lands on the mdat payload, the
 * payload is the access unit's NAL units minus SPS/PPS/AUD behind 4-byte
 * lengths, sync flags follow the IDRs, tfdt as given), too small buffers
 * (-ENOSPC, nothing written past cap) and a bad SPS. VC_MP4_DUMP=FILE
 * writes the stream for a look with ffprobe. */
#include <errno.h>

#include "check.h"
#include "common/h264.h"
#include "common/h264enc.h"
#include "common/mp4.h"
#include "h264pic.h"

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Finds the box at path ("moov/trak/tkhd") inside [b, b+len); containers are
 * walked as plain box lists except the few with a header first. Returns a
 * pointer to the box and its size, NULL when absent or a size is wrong. */
static const uint8_t *find_box(const uint8_t *b, size_t len, const char *path, size_t *size)
{
	size_t off = 0;

	while (off + 8 <= len) {
		uint32_t sz = rd32(b + off);

		if (sz < 8 || off + sz > len)
			return NULL;
		if (memcmp(b + off + 4, path, 4) == 0) {
			if (path[4] == '\0') {
				*size = sz;
				return b + off;
			}
			/* header bytes before the children: stsd (full box + count),
			 * avc1 (78-byte visual sample entry), dref */
			size_t skip = !memcmp(path, "stsd", 4) || !memcmp(path, "dref", 4) ? 16
				      : !memcmp(path, "avc1", 4)			      ? 86
												      : 8;
			return find_box(b + off + skip, sz - skip, path + 5, size);
		}
		off += sz;
	}
	return NULL;
}

/* Every box of a list and, recursively, of the containers has a size that
 * fits its parent exactly. */
static int sizes_add_up(const uint8_t *b, size_t len, int depth)
{
	static const char *const containers[] = { "moov", "trak", "mdia", "minf", "dinf", "stbl",
						  "mvex", "moof", "traf" };
	size_t off = 0;

	while (off + 8 <= len) {
		uint32_t sz = rd32(b + off);

		if (sz < 8 || off + sz > len)
			return 0;
		for (size_t i = 0; i < ARRAY_LEN(containers) && depth < 8; i++)
			if (!memcmp(b + off + 4, containers[i], 4) &&
			    !sizes_add_up(b + off + 8, sz - 8, depth + 1))
				return 0;
		off += sz;
	}
	return off == len;
}

static void init_segment(const uint8_t *sps, size_t sps_len, const uint8_t *pps, size_t pps_len,
			 uint8_t *buf, int len)
{
	static const char *const must[] = {
		"ftyp", "moov/mvhd", "moov/trak/tkhd", "moov/trak/mdia/mdhd", "moov/trak/mdia/hdlr",
		"moov/trak/mdia/minf/vmhd", "moov/trak/mdia/minf/dinf/dref/url ",
		"moov/trak/mdia/minf/stbl/stts", "moov/trak/mdia/minf/stbl/stsc",
		"moov/trak/mdia/minf/stbl/stsz", "moov/trak/mdia/minf/stbl/stco",
		"moov/mvex/trex",
	};
	size_t sz;

	CHECK(len > 0 && sizes_add_up(buf, (size_t)len, 0), "init: sizes (len %d)", len);
	for (size_t i = 0; i < ARRAY_LEN(must); i++)
		CHECK(find_box(buf, (size_t)len, must[i], &sz), "init: no %s", must[i]);
	const uint8_t *avcc = find_box(buf, (size_t)len, "moov/trak/mdia/minf/stbl/stsd/avc1/avcC", &sz);

	CHECK(avcc && sz == 8 + 8 + sps_len + 3 + pps_len, "avcC size %zu", avcc ? sz : 0);
	if (!avcc)
		return;
	CHECK(avcc[8] == 1 && avcc[9] == sps[1] && avcc[11] == sps[3] && avcc[12] == 0xff &&
		      avcc[13] == 0xe1, "avcC header");
	CHECK((size_t)(avcc[14] << 8 | avcc[15]) == sps_len && !memcmp(avcc + 16, sps, sps_len),
	      "avcC SPS");
	CHECK(avcc[16 + sps_len] == 1 && !memcmp(avcc + 19 + sps_len, pps, pps_len), "avcC PPS");
	const uint8_t *tkhd = find_box(buf, (size_t)len, "moov/trak/tkhd", &sz);

	CHECK(tkhd && rd32(tkhd + sz - 8) == 320u << 16 && rd32(tkhd + sz - 4) == 240u << 16,
	      "tkhd size");
}

static void fragment(const struct vc_mp4_sample *s, const uint8_t *buf, long len)
{
	size_t sz, mdat_sz, want = 0;
	struct vc_nal n;
	size_t pos = 0;

	CHECK(len > 0 && sizes_add_up(buf, (size_t)len, 0), "frag %u: sizes", s->seq);
	const uint8_t *mfhd = find_box(buf, (size_t)len, "moof/mfhd", &sz);
	const uint8_t *tfdt = find_box(buf, (size_t)len, "moof/traf/tfdt", &sz);
	const uint8_t *trun = find_box(buf, (size_t)len, "moof/traf/trun", &sz);
	const uint8_t *moof = find_box(buf, (size_t)len, "moof", &sz);
	const uint8_t *mdat = find_box(buf, (size_t)len, "mdat", &mdat_sz);

	CHECK(mfhd && tfdt && trun && moof == buf && mdat, "frag %u: boxes", s->seq);
	if (!(mfhd && tfdt && trun && mdat))
		return;
	CHECK(rd32(mfhd + 12) == s->seq, "mfhd seq");
	CHECK(tfdt[8] == 1 && ((uint64_t)rd32(tfdt + 12) << 32 | rd32(tfdt + 16)) == s->decode_time,
	      "tfdt");
	CHECK(rd32(trun + 12) == 1, "sample count");
	CHECK(buf + rd32(trun + 16) == mdat + 8, "data offset %u", rd32(trun + 16));
	CHECK(rd32(trun + 20) == s->duration, "duration");
	CHECK(rd32(trun + 24) == mdat_sz - 8, "sample size %u vs mdat %zu", rd32(trun + 24), mdat_sz);
	CHECK(rd32(trun + 28) == (s->key ? 0x02000000u : 0x01010000u), "flags %08x", rd32(trun + 28));
	/* payload: the NAL units but parameter sets, each behind its length */
	const uint8_t *p = mdat + 8;

	while (vc_h264_next_nal(s->annexb, s->len, &pos, &n)) {
		if (n.type == VC_NAL_SPS || n.type == VC_NAL_PPS || n.type == VC_NAL_AUD)
			continue;
		CHECK(rd32(p + want) == n.len && !memcmp(p + want + 4, n.data, n.len),
		      "frag %u: NAL at %zu", s->seq, want);
		want += 4 + n.len;
	}
	CHECK(want == mdat_sz - 8, "payload %zu vs %zu", want, mdat_sz - 8);
}

static void stream(void)
{
	struct vc_h264enc_cfg cfg = { .width = 320, .height = 240, .fps = 30, .gop = 5 };
	struct vc_h264enc *e = NULL;
	struct h264pic pic;
	uint8_t *buf = NULL;
	const char *dump = getenv("VC_MP4_DUMP");
	FILE *f = dump ? fopen(dump, "wb") : NULL;

	CHECK(vc_h264enc_new(&cfg, &e) == 0 && h264pic_new(&pic, 320, 240) == 0, "setup");
	buf = malloc(1 << 20);
	if (!e || !buf)
		return;
	for (unsigned i = 0; i < 12; i++) {
		struct vc_h264enc_out o;
		struct vc_h264_au au;

		h264pic_draw(&pic, i);
		CHECK(vc_h264enc_encode(e, (const uint8_t *const *)pic.plane, pic.stride, i * 33, &o) == 0,
		      "encode");
		vc_h264_scan(o.data, o.len, &au);
		if (i == 0) {
			size_t bound = vc_mp4_init_bound(au.sps_len, au.pps_len);
			int len = vc_mp4_init(buf, bound, au.sps, au.sps_len, au.pps, au.pps_len);

			init_segment(au.sps, au.sps_len, au.pps, au.pps_len, buf, len);
			/* one byte short: -ENOSPC, canary intact */
			memset(buf, CANARY_BYTE, (size_t)len + CANARY_LEN);
			CHECK(vc_mp4_init(buf, (size_t)len - 1, au.sps, au.sps_len, au.pps,
					  au.pps_len) == -ENOSPC && canary_intact(buf, (size_t)len - 1),
			      "init short");
			len = vc_mp4_init(buf, bound, au.sps, au.sps_len, au.pps, au.pps_len);
			if (f)
				fwrite(buf, 1, (size_t)len, f);
		}
		struct vc_mp4_sample s = { .annexb = o.data, .len = o.len, .seq = i + 1,
					   .decode_time = (uint64_t)i * 3000 + (1ull << 33),
					   .duration = 3000, .key = o.key };
		size_t bound = vc_mp4_fragment_bound(o.len);
		long len = vc_mp4_fragment(buf, bound, &s);

		CHECK(bound < (1 << 20) && len > 0 && (size_t)len <= bound, "frag %u: %ld", i, len);
		fragment(&s, buf, len);
		if (f)
			fwrite(buf, 1, (size_t)len, f);
		memset(buf, CANARY_BYTE, (size_t)len + CANARY_LEN);
		CHECK(vc_mp4_fragment(buf, (size_t)len - 1, &s) == -ENOSPC &&
			      canary_intact(buf, (size_t)len - 1), "frag %u short", i);
	}
	if (f)
		fclose(f);
	free(buf);
	h264pic_free(&pic);
	vc_h264enc_free(e);
}

static void bad_input(void)
{
	static const uint8_t pps[] = { 0x68, 0xce, 0x38, 0x80 };
	static const uint8_t only_ps[] = { 0, 0, 1, 0x68, 0xce, 0, 0, 1, 0x09, 0xf0 };
	uint8_t buf[2048];
	struct vc_mp4_sample s = { .annexb = only_ps, .len = sizeof(only_ps), .seq = 1 };

	CHECK(vc_mp4_init(buf, sizeof(buf), pps, sizeof(pps), pps, sizeof(pps)) == -EINVAL,
	      "PPS as SPS");
	CHECK(vc_mp4_fragment(buf, sizeof(buf), &s) == -EINVAL, "no picture NAL");
}

/* A live 30 fps stream's capture times (ms) with what a busy host gives: a
 * frame 70.5 ms after one on time (seen: 1 in 598 beside stress-ng, and
 * WebKitGTK's video stood still), a frame dropped, jitter. Each frame's
 * duration, written before its successor came, must keep the successor
 * within MSE's continuity (decode time at most twice the duration later)
 * and end before the frame after it is due (at most twice the interval). */
static void live_duration(void)
{
	static const double ms[] = { 0, 33.3, 66.7, 137.2, 170.5, 237.0, 270.3, 296.6, 333.3, 366.7 };
	uint64_t t[sizeof(ms) / sizeof(ms[0])];

	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		t[i] = (uint64_t)(ms[i] * 90 + 0.5);
	for (size_t i = 1; i + 1 < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t interval = (uint32_t)(t[i] - t[i - 1]);
		uint32_t d = vc_mp4_live_duration(interval);

		CHECK(t[i + 1] - t[i] <= 2 * (uint64_t)d && d <= 2 * interval,
		      "frame at %.1f ms: duration %u ticks after an interval of %u, next %.1f ms later",
		      ms[i], d, interval, ms[i + 1] - ms[i]);
	}
}

int main(void)
{
	RUN("mp4", stream);
	RUN("mp4", live_duration);
	RUN("mp4", bad_input);
	CHECK_EXIT();
}
