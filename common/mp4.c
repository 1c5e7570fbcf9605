/* Fragmented MP4 boxes for one H.264 track (see mp4.h). A small writer with
 * a cursor and a stack of open boxes whose sizes are filled in on close;
 * running past the buffer sets a flag checked once at the end. */
#include "common/mp4.h"

#include <errno.h>
#include <string.h>

#include "common/h264.h"

struct w {
	uint8_t *b;
	size_t cap, n;
	size_t open[8]; /* offsets of open boxes */
	int depth, full;
};

static void put(struct w *w, const void *p, size_t len)
{
	if (w->n + len > w->cap) {
		w->full = 1;
		return;
	}
	memcpy(w->b + w->n, p, len);
	w->n += len;
}

static void u8(struct w *w, uint8_t v)
{
	put(w, &v, 1);
}

static void u16(struct w *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(w, b, 2);
}

static void u32(struct w *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(w, b, 4);
}

static void u64(struct w *w, uint64_t v)
{
	u32(w, (uint32_t)(v >> 32));
	u32(w, (uint32_t)v);
}

static void zeros(struct w *w, size_t n)
{
	while (n--)
		u8(w, 0);
}

static void set32(struct w *w, size_t at, uint32_t v)
{
	if (w->full || at + 4 > w->n)
		return;
	w->b[at] = (uint8_t)(v >> 24);
	w->b[at + 1] = (uint8_t)(v >> 16);
	w->b[at + 2] = (uint8_t)(v >> 8);
	w->b[at + 3] = (uint8_t)v;
}

static void box(struct w *w, const char type[4])
{
	w->open[w->depth++] = w->n;
	u32(w, 0);
	put(w, type, 4);
}

static void full_box(struct w *w, const char type[4], uint8_t version, uint32_t flags)
{
	box(w, type);
	u32(w, (uint32_t)version << 24 | flags);
}

static void end(struct w *w)
{
	size_t at = w->open[--w->depth];

	set32(w, at, (uint32_t)(w->n - at));
}

static void matrix(struct w *w)
{
	static const uint32_t m[9] = { 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000 };

	for (int i = 0; i < 9; i++)
		u32(w, m[i]);
}

static void avcc(struct w *w, const struct vc_h264_sps *s, const uint8_t *sps, size_t sps_len,
		 const uint8_t *pps, size_t pps_len)
{
	box(w, "avcC");
	u8(w, 1); /* configurationVersion */
	u8(w, s->profile_idc);
	u8(w, s->constraint_flags);
	u8(w, s->level_idc);
	u8(w, 0xff); /* lengthSizeMinusOne = 3 */
	u8(w, 0xe1); /* one SPS */
	u16(w, (uint16_t)sps_len);
	put(w, sps, sps_len);
	u8(w, 1); /* one PPS */
	u16(w, (uint16_t)pps_len);
	put(w, pps, pps_len);
	if (s->profile_idc == 100 || s->profile_idc == 110 || s->profile_idc == 122 ||
	    s->profile_idc == 144) {
		u8(w, 0xfc | s->chroma_format_idc);
		u8(w, 0xf8 | (s->bit_depth_luma - 8));
		u8(w, 0xf8 | (s->bit_depth_chroma - 8));
		u8(w, 0); /* no SPS extensions */
	}
	end(w);
}

static void sample_entry(struct w *w, const struct vc_h264_sps *s, const uint8_t *sps,
			 size_t sps_len, const uint8_t *pps, size_t pps_len)
{
	full_box(w, "stsd", 0, 0);
	u32(w, 1);
	box(w, "avc1");
	zeros(w, 6);
	u16(w, 1); /* data_reference_index */
	zeros(w, 16);
	u16(w, (uint16_t)s->width);
	u16(w, (uint16_t)s->height);
	u32(w, 0x00480000); /* 72 dpi */
	u32(w, 0x00480000);
	u32(w, 0);
	u16(w, 1); /* frame_count */
	zeros(w, 32); /* compressorname */
	u16(w, 0x18);
	u16(w, 0xffff);
	avcc(w, s, sps, sps_len, pps, pps_len);
	end(w);
	end(w);
}

static void empty_tables(struct w *w)
{
	static const char *const t[] = { "stts", "stsc", "stco" };

	for (int i = 0; i < 3; i++) {
		full_box(w, t[i], 0, 0);
		u32(w, 0);
		end(w);
	}
	full_box(w, "stsz", 0, 0);
	u32(w, 0);
	u32(w, 0);
	end(w);
}

static void media(struct w *w, const struct vc_h264_sps *s, const uint8_t *sps, size_t sps_len,
		  const uint8_t *pps, size_t pps_len)
{
	box(w, "mdia");
	full_box(w, "mdhd", 0, 0);
	zeros(w, 8);
	u32(w, VC_MP4_TIMESCALE);
	u32(w, 0);
	u16(w, 0x55c4); /* "und" */
	u16(w, 0);
	end(w);
	full_box(w, "hdlr", 0, 0);
	u32(w, 0);
	put(w, "vide", 4);
	zeros(w, 12);
	put(w, "VideoHandler", 13);
	end(w);
	box(w, "minf");
	full_box(w, "vmhd", 0, 1);
	zeros(w, 8);
	end(w);
	box(w, "dinf");
	full_box(w, "dref", 0, 0);
	u32(w, 1);
	full_box(w, "url ", 0, 1); /* media in this file */
	end(w);
	end(w);
	end(w);
	box(w, "stbl");
	sample_entry(w, s, sps, sps_len, pps, pps_len);
	empty_tables(w);
	end(w);
	end(w);
	end(w);
}

size_t vc_mp4_init_bound(size_t sps_len, size_t pps_len)
{
	return 1024 + sps_len + pps_len;
}

int vc_mp4_init(uint8_t *buf, size_t cap, const uint8_t *sps, size_t sps_len,
		const uint8_t *pps, size_t pps_len)
{
	struct vc_h264_sps s;
	struct w w = { .b = buf, .cap = cap };

	if (sps_len > 0xffff || pps_len > 0xffff || pps_len < 1 ||
	    vc_h264_parse_sps(sps, sps_len, &s) < 0)
		return -EINVAL;
	box(&w, "ftyp");
	put(&w, "isom", 4);
	u32(&w, 0x200);
	put(&w, "isomiso6avc1mp41", 16);
	end(&w);
	box(&w, "moov");
	full_box(&w, "mvhd", 0, 0);
	zeros(&w, 8);
	u32(&w, 1000);
	u32(&w, 0);
	u32(&w, 0x00010000); /* rate 1.0 */
	u16(&w, 0x0100);     /* volume 1.0 */
	zeros(&w, 10);
	matrix(&w);
	zeros(&w, 24);
	u32(&w, 2); /* next_track_ID */
	end(&w);
	box(&w, "trak");
	full_box(&w, "tkhd", 0, 3); /* enabled, in movie */
	zeros(&w, 8);
	u32(&w, 1); /* track_ID */
	zeros(&w, 4 + 4 + 8 + 2 + 2 + 2 + 2);
	matrix(&w);
	u32(&w, s.width << 16);
	u32(&w, s.height << 16);
	end(&w);
	media(&w, &s, sps, sps_len, pps, pps_len);
	end(&w);
	box(&w, "mvex");
	full_box(&w, "trex", 0, 0);
	u32(&w, 1); /* track_ID */
	u32(&w, 1); /* sample description */
	zeros(&w, 12);
	end(&w);
	end(&w);
	end(&w);
	return w.full ? -ENOSPC : (int)w.n;
}

size_t vc_mp4_fragment_bound(size_t len)
{
	/* every 3-byte start code may grow by one byte */
	return 256 + len + len / 3 + 4;
}

static int in_sample(uint8_t type)
{
	return type != VC_NAL_SPS && type != VC_NAL_PPS && type != VC_NAL_AUD;
}

long vc_mp4_fragment(uint8_t *buf, size_t cap, const struct vc_mp4_sample *s)
{
	struct w w = { .b = buf, .cap = cap };
	struct vc_nal n;
	size_t pos = 0, size = 0;

	while (vc_h264_next_nal(s->annexb, s->len, &pos, &n))
		if (in_sample(n.type))
			size += 4 + n.len;
	if (size == 0)
		return -EINVAL;
	box(&w, "moof");
	full_box(&w, "mfhd", 0, 0);
	u32(&w, s->seq);
	end(&w);
	box(&w, "traf");
	full_box(&w, "tfhd", 0, 0x020000); /* default-base-is-moof */
	u32(&w, 1);
	end(&w);
	full_box(&w, "tfdt", 1, 0);
	u64(&w, s->decode_time);
	end(&w);
	/* data offset, sample duration, size and flags present */
	full_box(&w, "trun", 0, 0x000701);
	u32(&w, 1);
	size_t data_off = w.n;

	u32(&w, 0);
	u32(&w, s->duration);
	u32(&w, (uint32_t)size);
	/* sync: depends on no other; else depends on others, non-sync */
	u32(&w, s->key ? 0x02000000 : 0x01010000);
	end(&w);
	end(&w);
	end(&w);
	set32(&w, data_off, (uint32_t)(w.n + 8));
	box(&w, "mdat");
	pos = 0;
	while (vc_h264_next_nal(s->annexb, s->len, &pos, &n)) {
		if (!in_sample(n.type))
			continue;
		u32(&w, (uint32_t)n.len);
		put(&w, n.data, n.len);
	}
	end(&w);
	return w.full ? -ENOSPC : (long)w.n;
}

uint32_t vc_mp4_live_duration(uint32_t last_interval)
{
	return last_interval + last_interval / 2;
}
