/* Stream parts in memfds, sent with sendfile (see stream_part.h). The pages
 * of a part are never written after vc_part_new: a socket may still hold
 * references to them after the part is freed, and the kernel keeps them
 * alive until then. */
#include "server/stream/stream_part.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/memstat.h"

/* Writes all of iov into fd from offset 0. */
static int write_all(int fd, const struct iovec *iov, unsigned n)
{
	off_t at = 0;

	for (unsigned i = 0; i < n; i++) {
		const char *b = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left) {
			ssize_t k = pwrite(fd, b, left, at);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
			b += k;
			left -= (size_t)k;
			at += k;
		}
	}
	return 0;
}

struct vc_part *vc_part_new(const struct iovec *iov, unsigned n)
{
	struct vc_part *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->refs = 1;
	for (unsigned i = 0; i < n; i++)
		p->len += iov[i].iov_len;
	p->fd = memfd_create("vcapd-part", MFD_CLOEXEC);
	if (p->fd >= 0 && write_all(p->fd, iov, n) == 0) {
		vc_mem_count(VC_MEM_PARTS, (long long)p->len);
		return p;
	}
	/* no memfd (old kernel, seccomp, fd limit): a heap copy, sent with send() */
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->mem = malloc(p->len ? p->len : 1);
	if (!p->mem) {
		free(p);
		return NULL;
	}
	size_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		memcpy((char *)p->mem + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	vc_mem_count(VC_MEM_PARTS, (long long)p->len);
	return p;
}

struct vc_part *vc_part_ref(struct vc_part *p)
{
	if (p)
		p->refs++;
	return p;
}

void vc_part_unref(struct vc_part *p)
{
	if (!p || --p->refs > 0)
		return;
	vc_mem_count(VC_MEM_PARTS, -(long long)p->len);
	if (p->fd >= 0)
		close(p->fd);
	free(p->mem);
	free(p);
}

ssize_t vc_part_send(const struct vc_part *p, int sock, size_t off)
{
	ssize_t k;

	if (off >= p->len)
		return -EINVAL;
	do {
		if (p->fd >= 0) {
			off_t o = (off_t)off;

			k = sendfile(sock, p->fd, &o, p->len - off);
		} else {
			k = send(sock, (const char *)p->mem + off, p->len - off, MSG_NOSIGNAL);
		}
	} while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (k == 0)
		return -EPIPE; /* nothing taken from a nonempty range: the peer is gone */
	return k;
}

size_t vc_part_copy(const struct vc_part *p, size_t off, void *buf, size_t max)
{
	if (off >= p->len)
		return 0;
	if (max > p->len - off)
		max = p->len - off;
	if (p->fd < 0) {
		memcpy(buf, (const char *)p->mem + off, max);
		return max;
	}
	ssize_t k;
	do
		k = pread(p->fd, buf, max, (off_t)off);
	while (k < 0 && errno == EINTR);
	return k > 0 ? (size_t)k : 0;
}
