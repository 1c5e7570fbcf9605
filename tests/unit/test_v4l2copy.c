/* Copy-out decisions for drivers that overwrite dequeued buffers
 * (server/capture/v4l2_copyout.c): when is a copy possibly torn, given the frame's
 * sequence and every buffer's sequence read after the copy; when does a
 * buffer still carry the record REQBUFS reset. Table-driven;
 * the live behaviour against v4l2loopback is checked in tests/vm/boot_loopback.sh. */
#include "check.h"
#include "server/capture/v4l2_int.h"

static void overtaken_table(void)
{
	static const struct {
		int line;
		uint32_t seq;
		uint32_t seqs[8];
		unsigned n;
		int want;
	} rows[] = {
		/* ring of 4, our frame the newest or 1-2 behind: the producer
		 * writes into other buffers next */
		{ __LINE__, 10, { 8, 9, 10, 7 }, 4, 0 },
		{ __LINE__, 9, { 8, 9, 10, 11 - 4 }, 4, 0 },
		{ __LINE__, 9, { 8, 9, 10, 11 }, 4, 0 },
		/* 3 newer frames complete: the next write goes into ours */
		{ __LINE__, 8, { 8, 9, 10, 11 }, 4, 1 },
		/* ours was rewritten already (its record shows 12) */
		{ __LINE__, 8, { 12, 9, 10, 11 }, 4, 1 },
		/* far behind */
		{ __LINE__, 3, { 40, 41, 42, 43 }, 4, 1 },
		/* the ring is 2 while we asked 4: records alias (index mod 2) */
		{ __LINE__, 20, { 20, 21, 20, 21 }, 4, 1 },
		{ __LINE__, 21, { 20, 21, 20, 21 }, 4, 0 },
		/* no sequence kept by the driver (all 0): cannot tell, keep it */
		{ __LINE__, 0, { 0, 0, 0, 0 }, 4, 0 },
		/* start-up: only two frames written so far, ring looks like 2 */
		{ __LINE__, 0, { 0, 1, 0, 0 }, 4, 1 },
		{ __LINE__, 1, { 0, 1, 0, 0 }, 4, 0 },
		/* 32-bit wrap of the producer's counter */
		{ __LINE__, 0xfffffffeu, { 0xfffffffeu, 0xffffffffu, 0, 0xfffffffdu }, 4, 0 },
		{ __LINE__, 0xfffffffdu, { 0xfffffffeu, 0xffffffffu, 0, 0xfffffffdu }, 4, 1 },
		/* ring of 8 */
		{ __LINE__, 100, { 100, 101, 102, 103, 104, 105, 106, 99 }, 8, 0 },
		{ __LINE__, 100, { 100, 101, 102, 103, 104, 105, 106, 107 }, 8, 1 },
	};

	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		int got = v4l2_copy_overtaken(rows[i].seq, rows[i].seqs, rows[i].n);
		CHECK_AT(rows[i].line, got == rows[i].want, "seq %u: got %d want %d", rows[i].seq,
			 got, rows[i].want);
	}
}

static void stale_records(void)
{
	const struct v4l2_record reset = { { 1234, 567 }, 0, 460800 };
	struct v4l2_record r = reset;

	CHECK(v4l2_copy_stale(&r, &reset), "the record REQBUFS left: not filled since");
	r.ts.tv_usec++;
	CHECK(!v4l2_copy_stale(&r, &reset), "a new timestamp: filled since");
	r = reset;
	r.seq = 9;
	CHECK(!v4l2_copy_stale(&r, &reset), "a new sequence: filled since");
	r = reset;
	r.used = 31000;
	CHECK(!v4l2_copy_stale(&r, &reset), "a new length: filled since");
	r = reset;
	r.ts.tv_sec++;
	CHECK(!v4l2_copy_stale(&r, &reset), "a later second: filled since");
}

static void which_drivers(void)
{
	CHECK(v4l2_copyout_needed("v4l2 loopback"), "v4l2loopback overwrites held buffers");
	CHECK(!v4l2_copyout_needed("uvcvideo"), "uvcvideo (vb2) owns its buffers: zero-copy");
	CHECK(!v4l2_copyout_needed("vivid"), "vivid (vb2): zero-copy");
	CHECK(!v4l2_copyout_needed(""), "unknown: zero-copy");
}

int main(void)
{
	RUN("v4l2copy", overtaken_table);
	RUN("v4l2copy", stale_records);
	RUN("v4l2copy", which_drivers);
	CHECK_EXIT();
}
