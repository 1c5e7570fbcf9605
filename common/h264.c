/* H.264 Annex-B scanning and SPS parsing (ITU-T H.264 7.3.1, 7.3.2.1.1,
 * B.1). Owns nothing: NAL units point into the caller's buffer; the SPS is
 * read from an unescaped copy on the stack. */
#include "common/h264.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"

const struct vc_fmt *vc_h264_fmt(void)
{
	static const struct vc_fmt h264 = {
		.fourcc = V4L2_PIX_FMT_H264, .name = "H264", .desc = "H.264 Annex-B",
		.family = VC_FAM_COMPRESSED, .layout = VC_LAYOUT_COMPRESSED,
		.mem_planes = 1, .color_planes = 1,
	};

	return &h264;
}

const struct vc_fmt *vc_capture_fmt(uint32_t fourcc)
{
	return fourcc == V4L2_PIX_FMT_H264 ? vc_h264_fmt() : vc_fmt_by_fourcc(fourcc);
}

/* Offset of the next 00 00 01 at or after pos, or len when there is none. */
static size_t find_start_code(const uint8_t *b, size_t len, size_t pos)
{
	for (size_t i = pos; i + 2 < len; i++) {
		if (b[i + 2] > 1) {
			i += 2; /* no start code can begin before i + 3 */
			continue;
		}
		if (b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1)
			return i;
	}
	return len;
}

/* *pos is 0 before the first call (then the first start code is looked
 * for), afterwards the offset just past a start code, or len. */
int vc_h264_next_nal(const uint8_t *buf, size_t len, size_t *pos, struct vc_nal *nal)
{
	size_t start = *pos;

	if (start == 0) {
		start = find_start_code(buf, len, 0);
		start = start < len ? start + 3 : len;
	}
	while (start < len) {
		size_t sc = find_start_code(buf, len, start);
		size_t end = sc;

		while (end > start && buf[end - 1] == 0)
			end--; /* trailing zeros, or the zero_byte of a 4-byte start code */
		size_t at = start;

		start = sc < len ? sc + 3 : len;
		if (end > at) {
			*pos = start;
			nal->data = buf + at;
			nal->len = end - at;
			nal->type = buf[at] & 0x1f;
			return 1;
		}
	}
	*pos = len;
	return 0;
}

unsigned vc_h264_scan(const uint8_t *buf, size_t len, struct vc_h264_au *au)
{
	struct vc_nal n;
	size_t pos = 0;

	memset(au, 0, sizeof(*au));
	while (vc_h264_next_nal(buf, len, &pos, &n)) {
		au->n_nal++;
		if (n.type >= 1 && n.type <= 5)
			au->has_slice = 1;
		if (n.type == VC_NAL_IDR)
			au->idr = 1;
		if (n.type == VC_NAL_SPS && !au->sps) {
			au->sps = n.data;
			au->sps_len = n.len;
		}
		if (n.type == VC_NAL_PPS && !au->pps) {
			au->pps = n.data;
			au->pps_len = n.len;
		}
	}
	return au->n_nal;
}

/* ---- SPS ---- */

struct bits {
	const uint8_t *b;
	size_t len, pos; /* in bits */
	int over;        /* read past the end */
};

static uint32_t get_bit(struct bits *r)
{
	if (r->pos >= r->len * 8) {
		r->over = 1;
		return 0;
	}
	uint32_t v = (r->b[r->pos >> 3] >> (7 - (r->pos & 7))) & 1;

	r->pos++;
	return v;
}

static uint32_t get_bits(struct bits *r, int n)
{
	uint32_t v = 0;

	while (n-- > 0)
		v = v << 1 | get_bit(r);
	return v;
}

/* ue(v): exp-Golomb; values beyond 2^31 are reported as over-reads. */
static uint32_t get_ue(struct bits *r)
{
	int zeros = 0;

	while (!get_bit(r)) {
		if (r->over || ++zeros > 31) {
			r->over = 1;
			return 0;
		}
	}
	return ((1u << zeros) - 1) + get_bits(r, zeros);
}

static int32_t get_se(struct bits *r)
{
	uint32_t k = get_ue(r);

	return (k & 1) ? (int32_t)((k + 1) / 2) : -(int32_t)(k / 2);
}

static void skip_scaling_list(struct bits *r, int size)
{
	int last = 8, next = 8;

	for (int j = 0; j < size && !r->over; j++) {
		if (next != 0) {
			int32_t delta = get_se(r);

			/* delta_scale is -128..127 (7.4.2.1.1.1): anything else is
			 * a malformed SPS, and would overflow the sum */
			if (delta < -128 || delta > 127) {
				r->over = 1;
				return;
			}
			next = (last + delta + 256) % 256;
		}
		last = next == 0 ? last : next;
	}
}

static int high_profile(uint8_t p)
{
	static const uint8_t high[] = { 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135 };

	for (size_t i = 0; i < sizeof(high); i++)
		if (high[i] == p)
			return 1;
	return 0;
}

/* chroma_format_idc .. scaling matrices of the high profiles (7.3.2.1.1).
 * Each value is range-checked on its full ue(v) width before it is narrowed
 * into the struct: (uint8_t)257 is 1, and a wrapped value would pass.
 * 0 or -EBADMSG. */
static int parse_high(struct bits *r, struct vc_h264_sps *s)
{
	uint32_t chroma = get_ue(r), luma, cdepth;

	if (chroma > 3)
		return -EBADMSG;
	s->chroma_format_idc = (uint8_t)chroma;
	if (chroma == 3)
		get_bit(r); /* separate_colour_plane_flag */
	luma = get_ue(r);   /* bit_depth_luma_minus8 */
	cdepth = get_ue(r); /* bit_depth_chroma_minus8 */
	if (luma > 6 || cdepth > 6)
		return -EBADMSG; /* 0..6 (7.4.2.1.1): depths 8..14 */
	s->bit_depth_luma = (uint8_t)(luma + 8);
	s->bit_depth_chroma = (uint8_t)(cdepth + 8);
	get_bit(r); /* qpprime_y_zero_transform_bypass_flag */
	if (get_bit(r)) { /* seq_scaling_matrix_present_flag */
		int n = chroma != 3 ? 8 : 12;

		for (int i = 0; i < n && !r->over; i++)
			if (get_bit(r))
				skip_scaling_list(r, i < 6 ? 16 : 64);
	}
	return 0;
}

static int parse_poc(struct bits *r)
{
	uint32_t poc_type = get_ue(r);

	if (poc_type == 0) {
		get_ue(r); /* log2_max_pic_order_cnt_lsb_minus4 */
	} else if (poc_type == 1) {
		get_bit(r); /* delta_pic_order_always_zero_flag */
		get_se(r);  /* offset_for_non_ref_pic */
		get_se(r);  /* offset_for_top_to_bottom_field */
		uint32_t n = get_ue(r);

		if (n > 255)
			return -EBADMSG;
		for (uint32_t i = 0; i < n && !r->over; i++)
			get_se(r);
	} else if (poc_type != 2) {
		return -EBADMSG;
	}
	return 0;
}

/* Frame size from macroblocks and the cropping window (7.4.2.1.1). */
static int parse_size(struct bits *r, struct vc_h264_sps *s)
{
	uint32_t w_mbs = get_ue(r) + 1;
	uint32_t h_units = get_ue(r) + 1;

	s->frame_mbs_only = (uint8_t)get_bit(r);
	if (!s->frame_mbs_only)
		get_bit(r); /* mb_adaptive_frame_field_flag */
	get_bit(r); /* direct_8x8_inference_flag */
	if (r->over || w_mbs > 1024 || h_units > 1024)
		return -EBADMSG;
	uint32_t w = w_mbs * 16, h = h_units * 16 * (2u - s->frame_mbs_only);
	uint32_t cx = 1, cy = 2u - s->frame_mbs_only;

	if (s->chroma_format_idc == 1 || s->chroma_format_idc == 2)
		cx = 2;
	if (s->chroma_format_idc == 1)
		cy *= 2;
	if (get_bit(r)) { /* frame_cropping_flag */
		uint32_t l = get_ue(r), rt = get_ue(r), t = get_ue(r), b = get_ue(r);

		if (r->over || (uint64_t)cx * (l + rt) >= w || (uint64_t)cy * (t + b) >= h)
			return -EBADMSG;
		w -= cx * (l + rt);
		h -= cy * (t + b);
	}
	s->width = w;
	s->height = h;
	return r->over ? -EBADMSG : 0;
}

int vc_h264_parse_sps(const uint8_t *nal, size_t len, struct vc_h264_sps *out)
{
	uint8_t rbsp[1024];
	size_t n = 0;
	int zeros = 0;

	if (len < 4 || (nal[0] & 0x1f) != VC_NAL_SPS)
		return -EINVAL;
	/* drop emulation prevention bytes (00 00 03 -> 00 00) */
	for (size_t i = 1; i < len && n < sizeof(rbsp); i++) {
		if (zeros >= 2 && nal[i] == 3) {
			zeros = 0;
			continue;
		}
		zeros = nal[i] == 0 ? zeros + 1 : 0;
		rbsp[n++] = nal[i];
	}
	struct bits r = { .b = rbsp, .len = n };
	struct vc_h264_sps s = { .chroma_format_idc = 1, .bit_depth_luma = 8, .bit_depth_chroma = 8 };

	s.profile_idc = (uint8_t)get_bits(&r, 8);
	s.constraint_flags = (uint8_t)get_bits(&r, 8);
	s.level_idc = (uint8_t)get_bits(&r, 8);
	if (get_ue(&r) > 31) /* seq_parameter_set_id */
		return -EBADMSG;
	if (high_profile(s.profile_idc) && parse_high(&r, &s) < 0)
		return -EBADMSG;
	get_ue(&r); /* log2_max_frame_num_minus4 */
	if (parse_poc(&r) < 0)
		return -EBADMSG;
	get_ue(&r); /* max_num_ref_frames */
	get_bit(&r); /* gaps_in_frame_num_value_allowed_flag */
	if (r.over || parse_size(&r, &s) < 0)
		return -EBADMSG;
	*out = s;
	return 0;
}

void vc_h264_codec_str(const struct vc_h264_sps *s, char *buf, size_t len)
{
	snprintf(buf, len, "avc1.%02X%02X%02X", s->profile_idc, s->constraint_flags, s->level_idc);
}
