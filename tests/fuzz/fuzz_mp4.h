/* The MP4 writer's checks shared by the H.264 harnesses (fuzz_h264.c on
 * any bytes, fuzz_passthrough.c on a camera's access units): what parses
 * as SPS + PPS makes an init segment within its bound; a fragment stays
 * within its bound and a buffer one byte short is refused. */
#ifndef VC_FUZZ_MP4_H
#define VC_FUZZ_MP4_H

#include <errno.h>

#include "common/h264.h"
#include "common/mp4.h"
#include "tests/fuzz/fuzz.h"

/* The init segment of au's SPS and PPS, when it has both. */
static inline void fuzz_mp4_init(const struct vc_h264_au *au)
{
	if (!au->sps || !au->pps)
		return;
	size_t cap = vc_mp4_init_bound(au->sps_len, au->pps_len);
	uint8_t *b = malloc(cap);

	FUZZ_ASSERT(b);
	int len = vc_mp4_init(b, cap, au->sps, au->sps_len, au->pps, au->pps_len);

	FUZZ_ASSERT(len == -EINVAL || (len > 0 && (size_t)len <= cap));
	free(b);
}

/* The fragment of s. */
static inline void fuzz_mp4_fragment(const struct vc_mp4_sample *s)
{
	size_t cap = vc_mp4_fragment_bound(s->len);
	uint8_t *b = malloc(cap);

	FUZZ_ASSERT(b);
	long len = vc_mp4_fragment(b, cap, s);

	FUZZ_ASSERT(len == -EINVAL || (len > 0 && (size_t)len <= cap));
	if (len > 0)
		FUZZ_ASSERT(vc_mp4_fragment(b, (size_t)len - 1, s) == -ENOSPC);
	free(b);
}

#endif
