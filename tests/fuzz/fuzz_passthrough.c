/* H.264 passthrough from outside (a camera's access units): the path a
 * camera's frames take to /stream.h264 and /stream.mp4. The input is a
 * run of access units, each a record [flags][len hi][len lo][len bytes of
 * Annex-B] (flags bit 0: a hole in the sequence numbers before it, bit 1:
 * a new timestamp base); a unit without a coded slice is dropped as the
 * capture does, one with an IDR slice is a key frame. Each unit goes
 * through the hub's parameter-set memory (h264_ps_update/complete, which
 * insert the last SPS/PPS into an IDR that lacks them), the kept GOP
 * (common/gop.c, small bounds so they are crossed) and the MP4 writer (an
 * init segment on each IDR with SPS and PPS, a fragment per unit, and a
 * fragment per kept unit as a joining client would get them).
 * Invariants: what is published keeps every NAL unit of the camera's unit
 * byte for byte and in order, adds only the kept SPS/PPS and only to an
 * IDR; a kept unit is a byte copy of what was published; the GOP never
 * holds more than its bound and starts at an IDR; init segment and
 * fragments stay within their bounds and a short buffer is refused. */
#include "tests/fuzz/fuzz.h"

#include <errno.h>

#include "common/frame.h"
#include "common/gop.h"
#include "common/h264.h"
#include "common/log.h"
#include "common/mp4.h"
#include "server/stream/h264_out.h"
#include "tests/fuzz/fuzz_mp4.h"

#define GOP_BYTES 4096
#define GOP_US 400000

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	return 0;
}

/* Every NAL unit of a appears in b, in order, byte for byte; b has
 * extra units only of the types allowed (SPS/PPS). */
static void check_kept(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, int extra_ok)
{
	size_t pa = 0, pb = 0;
	struct vc_nal na, nb;
	unsigned extra = 0;

	while (vc_h264_next_nal(a, alen, &pa, &na)) {
		int found = 0;

		while (vc_h264_next_nal(b, blen, &pb, &nb)) {
			if (nb.len == na.len && !memcmp(nb.data, na.data, na.len)) {
				found = 1;
				break;
			}
			FUZZ_ASSERT(nb.type == VC_NAL_SPS || nb.type == VC_NAL_PPS);
			extra++;
		}
		FUZZ_ASSERT(found);
	}
	while (vc_h264_next_nal(b, blen, &pb, &nb)) {
		FUZZ_ASSERT(nb.type == VC_NAL_SPS || nb.type == VC_NAL_PPS);
		extra++;
	}
	FUZZ_ASSERT(extra_ok || extra == 0);
	FUZZ_ASSERT(extra <= 2);
}

/* The fragment of f (fuzz_mp4.h). */
static void fragment(const struct vc_frame *f, uint64_t n)
{
	struct vc_mp4_sample s = { .annexb = f->mem[0], .len = f->bytesused[0],
				   .seq = (uint32_t)n, .decode_time = (uint64_t)f->ts_us * 9 / 100,
				   .duration = 3000, .key = f->key };

	fuzz_mp4_fragment(&s);
}

static void init_segment(const struct vc_frame *f)
{
	struct vc_h264_au au;

	vc_h264_scan(f->mem[0], f->bytesused[0], &au);
	fuzz_mp4_init(&au);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct h264_ps *ps = NULL;
	struct vc_gop gop = { .max_bytes = GOP_BYTES, .max_us = GOP_US };
	uint64_t n = 0, seq = 0;
	int64_t ts = 1000000;
	size_t pos = 0;

	while (pos + 3 <= size) {
		uint8_t flags = data[pos];
		size_t len = (size_t)data[pos + 1] << 8 | data[pos + 2];

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		const uint8_t *au_bytes = data + pos;
		struct vc_h264_au au;

		pos += len;
		seq += (flags & 1) ? 2 : 1;
		ts = (flags & 2) ? ts / 2 : ts + 33333;
		vc_h264_scan(au_bytes, len, &au);
		if (!au.has_slice)
			continue; /* the capture drops it */
		struct vc_frame *f = vc_frame_new(len ? len : 1);

		FUZZ_ASSERT(f);
		memcpy(vc_frame_data(f, 0), au_bytes, len);
		f->bytesused[0] = len;
		f->fmt = vc_h264_fmt();
		f->seq = seq;
		f->ts_us = ts;
		f->key = au.idr != 0;

		int both = h264_ps_update(&ps, f);
		struct vc_frame *p = h264_ps_complete(ps, f);

		FUZZ_ASSERT(p);
		FUZZ_ASSERT(p->key == f->key);
		if (p != f) {
			struct vc_h264_au pa;

			FUZZ_ASSERT(f->key && both);
			check_kept(f->mem[0], len, p->mem[0], p->bytesused[0], 1);
			vc_h264_scan(p->mem[0], p->bytesused[0], &pa);
			FUZZ_ASSERT(pa.sps && pa.pps && pa.idr);
		} else {
			FUZZ_ASSERT(p->bytesused[0] == len);
		}
		n++;
		int rc = vc_gop_add(&gop, p, n);

		FUZZ_ASSERT(rc == 0 || rc == 1 || rc == -E2BIG || rc == -ENOMEM);
		FUZZ_ASSERT(gop.bytes <= GOP_BYTES);
		if (rc == 1) {
			const struct vc_frame *k = vc_gop_get(&gop, n);

			FUZZ_ASSERT(k && k->bytesused[0] == p->bytesused[0] &&
				    !memcmp(k->mem[0], p->mem[0], p->bytesused[0]));
			FUZZ_ASSERT(gop.n >= 1 && gop.f[0]->key);
		}
		if (p->key)
			init_segment(p);
		fragment(p, n);
		vc_frame_unref(p);
		vc_frame_unref(f);
	}
	/* a client joining now gets the kept GOP from its IDR */
	for (size_t i = 0; i < gop.n; i++) {
		const struct vc_frame *k = vc_gop_get(&gop, gop.first_n + i);

		FUZZ_ASSERT(k && (i > 0 || k->key));
		fragment(k, gop.first_n + i);
	}
	vc_gop_free(&gop);
	h264_ps_release(&ps);
	return 0;
}
