/* RTSP 1.0 messages (RFC 2326): a strict, bounded request parser and the
 * Transport header of SETUP. Pure code: no sockets, no allocation. Anything
 * malformed or over the bounds is refused, never half-read. */
#ifndef VC_RTSP_H
#define VC_RTSP_H

#include <stddef.h>
#include <stdint.h>

#define VC_RTSP_MAX_HEAD 4096  /* request line + headers, with the blank line */
#define VC_RTSP_MAX_HDRS 32
#define VC_RTSP_MAX_BODY 4096  /* Content-Length accepted (and skipped) */

struct vc_rtsp_req {
	char buf[VC_RTSP_MAX_HEAD + 1]; /* the head, split in place */
	const char *method, *uri;
	const char *name[VC_RTSP_MAX_HDRS], *value[VC_RTSP_MAX_HDRS];
	unsigned n_hdr;
	long cseq;              /* -1: none */
	size_t body_len;        /* Content-Length (the body follows the head) */
};

/* Parses the request at the start of buf[0..len). Returns the bytes it takes
 * (head and body) with *r filled, 0 when more bytes are needed, -EMSGSIZE
 * when the head or body is over the bounds, -EINVAL when malformed. */
long vc_rtsp_parse(const char *buf, size_t len, struct vc_rtsp_req *r);

/* The value of header name (case-insensitive), or NULL. */
const char *vc_rtsp_header(const struct vc_rtsp_req *r, const char *name);

/* What a SETUP's Transport header asks. */
struct vc_rtsp_transport {
	int tcp;                /* RTP/AVP/TCP interleaved */
	int ch[2];              /* interleaved channels (RTP, RTCP) */
	uint16_t port[2];       /* UDP client_port (RTP, RTCP) */
};
/* The first transport of value we can serve (RTP/AVP unicast over UDP with
 * client_port, or RTP/AVP/TCP; interleaved defaults to 0-1). 0, or -EINVAL
 * (-ENOTSUP for multicast or another profile only). */
int vc_rtsp_transport(const char *value, struct vc_rtsp_transport *t);

/* RFC 4648 base64 of src into dst (NUL-terminated). Returns the length, or
 * -ENOSPC when dst is too small. */
int vc_base64(const uint8_t *src, size_t len, char *dst, size_t cap);

#endif
