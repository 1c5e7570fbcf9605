/* A stream part: the bytes of one frame as every client of an output sends
 * them (multipart header + JPEG + CRLF, or a raw frame), made once per frame
 * and shared. The bytes live in a memfd so that each client's send is a
 * sendfile(): the socket takes references to the part's pages instead of
 * copying them (with 100 clients of one 720p stream, the per-client copies
 * into MHD's buffer and into the socket were 45 % of the server's CPU).
 * Each part alive counts its length once as VC_MEM_PARTS (common/memstat.h,
 * in the frame_memory budget), however many clients hold it.
 * Loop thread only (the refcount is not atomic). */
#ifndef VC_STREAM_PART_H
#define VC_STREAM_PART_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

struct vc_part {
	int refs;
	int fd;       /* memfd holding the bytes; -1: `mem` holds them */
	void *mem;
	size_t len;
};

/* A part holding the concatenation of iov[0..n). NULL on failure (errno). */
struct vc_part *vc_part_new(const struct iovec *iov, unsigned n);
struct vc_part *vc_part_ref(struct vc_part *p);
void vc_part_unref(struct vc_part *p);

/* Sends bytes [off, len) of p on the non-blocking stream socket sock, as
 * much as it takes now. Returns the count sent (> 0), or -errno (-EAGAIN:
 * socket full). sendfile() has no MSG_NOSIGNAL: SIGPIPE must be ignored. */
ssize_t vc_part_send(const struct vc_part *p, int sock, size_t off);

/* Copies up to max bytes of p from offset off into buf (for TLS, where MHD
 * encrypts from its own buffer). Returns the count, 0 at the end or on a
 * read error of the memfd. */
size_t vc_part_copy(const struct vc_part *p, size_t off, void *buf, size_t max);

#endif
