/* Copy-out for drivers that write into buffers a reader holds.
 *
 * v4l2loopback keeps one ring of buffers indexed by its write position and
 * ignores which of them a reader dequeued: the producer rewrites a buffer
 * ring-size writes after it filled it, held or not, and a reader that is a
 * whole ring behind is handed the very buffer the producer writes next.
 * Lending such a buffer (zero-copy) serves torn pictures to slow clients.
 * The source contract (server/capture/source.h: memory untouched until queue()) is
 * kept here instead: each frame is copied into a private buffer right after
 * DQBUF, the driver's buffer is queued back at once, and a copy the producer
 * may have overtaken meanwhile is flagged as an error frame (capture.c drops
 * and counts it), as is a buffer not filled since our REQBUFS (its length
 * was reset to the whole buffer, its bytes are an old picture). Drivers that own their buffers (vb2: uvcvideo, vivid,
 * capture cards) never come here and stay zero-copy. */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server/capture/v4l2_int.h"

int v4l2_copyout_needed(const char *driver)
{
	/* QUERYCAP driver names of drivers known to overwrite dequeued buffers */
	return !strcmp(driver, "v4l2 loopback");
}

int v4l2_copy_overtaken(uint32_t seq, const uint32_t *seqs, unsigned n)
{
	uint32_t newest = seq;
	unsigned distinct = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned k = 0;

		while (k < i && seqs[k] != seqs[i])
			k++;
		distinct += k == i;
		if ((int32_t)(seqs[i] - newest) > 0)
			newest = seqs[i];
	}
	/* The records alias when the ring is smaller than our buffer count
	 * (QUERYBUF index modulo the ring), so the distinct sequences are the
	 * ring as far as we can see it; fewer than two: the driver keeps no
	 * sequence (frames queued by the producer in some versions), cannot
	 * tell. The next write goes into our buffer once ring - 1 newer frames
	 * are complete. */
	if (distinct < 2)
		return 0;
	return newest - seq + 1 >= distinct;
}

int v4l2_copy_stale(const struct v4l2_record *now, const struct v4l2_record *at_start)
{
	/* Any filling sets a new timestamp (the write time or the producer's);
	 * sequence and length are compared too, in case a clock is coarse. */
	return now->ts.tv_sec == at_start->ts.tv_sec && now->ts.tv_usec == at_start->ts.tv_usec &&
	       now->seq == at_start->seq && now->used == at_start->used;
}

void v4l2_copies_free(struct v4l2src *d)
{
	for (unsigned i = 0; i < d->n_copies; i++)
		for (unsigned p = 0; p < 3; p++)
			free(d->copies[i].mem[p]);
	free(d->copies);
	d->copies = NULL;
	d->n_copies = 0;
}

int v4l2_copies_alloc(struct v4l2src *d)
{
	d->copies = calloc(d->n_slots, sizeof(*d->copies));
	if (!d->copies)
		return -ENOMEM;
	d->n_copies = d->n_slots;
	size_t len[3] = { 0, 0, 0 }; /* any slot's frame fits any copy */
	for (unsigned i = 0; i < d->n_slots; i++)
		for (unsigned p = 0; p < d->slots[i].n_mem && p < 3; p++)
			len[p] = d->slots[i].len[p] > len[p] ? d->slots[i].len[p] : len[p];
	for (unsigned i = 0; i < d->n_copies; i++) {
		for (unsigned p = 0; p < 3 && len[p]; p++) {
			d->copies[i].mem[p] = malloc(len[p]);
			if (!d->copies[i].mem[p]) {
				v4l2_copies_free(d);
				return -ENOMEM;
			}
		}
	}
	return 0;
}

/* Whether the producer may have written into buffer `index` (filled at
 * sequence seq) while we copied it: every buffer's record, read after the
 * copy, tells how far the producer got. */
static int overtaken(struct v4l2src *d, uint32_t seq)
{
	uint32_t seqs[32];
	unsigned n = d->n_slots < 32 ? d->n_slots : 32;

	for (unsigned i = 0; i < n; i++) {
		struct v4l2_buffer b;
		struct v4l2_plane planes[VIDEO_MAX_PLANES];

		memset(&b, 0, sizeof(b));
		b.type = d->type;
		b.memory = V4L2_MEMORY_MMAP;
		b.index = i;
		if (d->mplane) {
			memset(planes, 0, sizeof(planes));
			b.m.planes = planes;
			b.length = VIDEO_MAX_PLANES;
		}
		if (v4l2_xioctl(d, VIDIOC_QUERYBUF, &b) < 0)
			return 1; /* cannot tell: not worth serving a torn frame */
		seqs[i] = b.sequence;
	}
	return v4l2_copy_overtaken(seq, seqs, n);
}

int v4l2_copy_out(struct v4l2src *d, const struct v4l2_buffer *b, struct vc_src_buf *out)
{
	uint32_t seq = b->sequence;
	struct v4l2_record rec = { b->timestamp, b->sequence,
				   d->mplane ? b->m.planes[0].bytesused : b->bytesused };
	unsigned j = 0;

	while (j < d->n_copies && d->copies[j].held)
		j++;
	if (j == d->n_copies)
		return -ENOBUFS; /* capture.c keeps buffers free: not expected */
	for (unsigned p = 0; p < 3; p++) {
		if (!out->mem[p])
			continue;
		memcpy(d->copies[j].mem[p], out->mem[p], out->bytesused[p]);
		out->mem[p] = d->copies[j].mem[p];
	}
	if (b->index < d->n_slots && v4l2_copy_stale(&rec, &d->slots[b->index].at_start)) {
		out->flags |= VC_SRC_BUF_ERROR;
		log_debug("%s: buffer %u not filled since streaming started: dropped", d->path,
			  b->index);
	} else if (overtaken(d, seq)) {
		out->flags |= VC_SRC_BUF_ERROR;
		log_debug("%s: frame %u overwritten by the producer while copied: dropped", d->path,
			  seq);
	}
	out->index = j;
	d->copies[j].held = 1;
	return 0;
}
