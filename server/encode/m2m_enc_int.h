/* Inside an M2M encoder session (server/encode/m2m_enc.c runs it,
 * m2m_enc_setup.c sets the device up and tears it down): the session's
 * state, shared by those two files only. Loop thread. */
#ifndef VC_M2M_ENC_INT_H
#define VC_M2M_ENC_INT_H

#include <event2/event.h>
#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>

#include "server/encode/m2m_coded.h"
#include "server/encode/m2m_enc.h"

#define MAX_BUFS 16
#define MAX_FLIGHT 32

struct obuf { /* one OUTPUT (raw in) buffer */
	int busy;
	struct vc_frame *frame;   /* DMABUF: held until the buffer comes back */
	int last_fd;              /* DMABUF: fd queued last time (vb2 keeps the mapping) */
	void *map[VIDEO_MAX_PLANES];
	size_t len[VIDEO_MAX_PLANES];
};

struct cbuf { /* one CAPTURE (coded out) buffer */
	void *map;
	size_t len;
};

struct flight { /* a submitted frame not yet back */
	uint64_t id;              /* 0 = free slot */
	void *tag;
	uint64_t seq;
	int64_t ts_us;
};

struct vc_m2m_enc {
	struct vc_m2m_enc_io io;
	struct vc_m2m_enc_cb cb;
	struct vc_m2m_enc_params p;
	struct event_base *base;
	struct event *ev;
	struct event *fail_ev;    /* reports frames of a failed session from the loop */
	char path[64];
	int fd;
	int mplane;
	uint32_t out_type, cap_type;
	unsigned out_memory;
	unsigned n_planes;        /* OUTPUT memory planes */
	uint32_t out_bpl;
	uint32_t out_h;           /* the driver's buffer height (bcm2835-codec: aligned to 16) */
	size_t out_size[VIDEO_MAX_PLANES];
	int dmabuf_worked;        /* a DMABUF frame was accepted since setup */
	const struct vc_fmt *fmt;
	struct obuf out[MAX_BUFS];
	struct cbuf cap[MAX_BUFS];
	unsigned n_out, n_cap;
	struct flight fl[MAX_FLIGHT];
	uint64_t next_id;
	int streaming;            /* both queues on (also after a drain) */
	int draining;             /* ENC_CMD_STOP sent, LAST not seen yet */
	int stopped;              /* drained: restart() before the next frame */
	int err;
	int dispatching, close_pending;
	struct vc_m2m_join join;   /* H.264: SPS/PPS sent apart, for the next picture */
	struct vc_m2m_enc_stats st;
};

static inline int m2m_xioctl(struct vc_m2m_enc *e, unsigned long req, void *arg)
{
	return e->io.ioctl(e->io.opaque, e->fd, req, arg);
}

/* Queues CAPTURE buffer i (empty, for the next coded result). */
int m2m_queue_cap(struct vc_m2m_enc *e, unsigned i);
/* STREAMON/STREAMOFF (req) on both queues. */
int m2m_stream(struct vc_m2m_enc *e, unsigned long req);
/* Formats, parameters, buffers and streaming for e->p; 0 or -errno. */
int m2m_setup(struct vc_m2m_enc *e);
/* Streaming off, buffers freed (frames lent to the OUTPUT queue dropped). */
void m2m_teardown(struct vc_m2m_enc *e);

#endif
