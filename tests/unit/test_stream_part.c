/* vc_part: the bytes of a part are the concatenation of its pieces, arrive
 * whole over TCP however the socket splits the sends, stay intact when the
 * part is freed and a new one is made while the socket still holds them
 * (sendfile lends pages), and without a memfd the heap copy does the same.
 * Parts alive count their length once as VC_MEM_PARTS (frame_memory),
 * however many hold them. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "common/memstat.h"
#include "server/stream/stream_part.h"

/* A connected TCP pair on 127.0.0.1: *tx non-blocking with a small send
 * buffer (sends split), *rx the reader. */
static int tcp_pair(int *tx, int *rx)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), sb = 4096, rb = 4096;

	if (l < 0 || bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		return -1;
	*tx = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(*tx, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	if (connect(*tx, (struct sockaddr *)&a, al) < 0)
		return -1;
	*rx = accept(l, NULL, NULL);
	setsockopt(*rx, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	close(l);
	fcntl(*tx, F_SETFL, O_NONBLOCK);
	return *rx < 0 ? -1 : 0;
}

/* Pseudo-random bytes from seed. */
static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)check_xorshift(&seed);
}

/* Sends all of p on tx while reading rx into out; returns the number of
 * vc_part_send calls that moved bytes, or -1 on an error. */
static int send_all(const struct vc_part *p, int tx, int rx, uint8_t *out, int *eagains)
{
	size_t off = 0, got = 0;
	int sends = 0;

	while (got < p->len) {
		if (off < p->len) {
			ssize_t k = vc_part_send(p, tx, off);

			if (k > 0) {
				off += (size_t)k;
				sends++;
			} else if (k == -EAGAIN) {
				(*eagains)++;
			} else {
				return -1;
			}
		}
		struct pollfd pf = { rx, POLLIN, 0 };
		if (poll(&pf, 1, 1000) <= 0)
			return -1;
		ssize_t r = read(rx, out + got, p->len - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return sends;
}

static void pieces_whole(void)
{
	enum { A = 100, B = 300000, C = 2 };
	static uint8_t a[A], b[B], c[C], out[A + B + C];
	struct iovec iov[3] = { { a, A }, { b, B }, { c, C } };
	int tx, rx, eagains = 0;

	fill(a, A, 1);
	fill(b, B, 2);
	fill(c, C, 3);
	struct vc_part *p = vc_part_new(iov, 3);
	CHECK(p && p->len == A + B + C, "len %zu", p ? p->len : 0);
	CHECK(p && p->fd >= 0, "no memfd on this kernel");
	CHECK(tcp_pair(&tx, &rx) == 0, "tcp pair");
	int sends = p ? send_all(p, tx, rx, out, &eagains) : -1;
	CHECK(sends > 1 && eagains > 0, "%d sends, %d EAGAIN: the 300 KB part was not split", sends,
	      eagains);
	CHECK(memcmp(out, a, A) == 0 && memcmp(out + A, b, B) == 0 && memcmp(out + A + B, c, C) == 0,
	      "bytes differ");
	CHECK(p && vc_part_send(p, tx, p->len) == -EINVAL, "send past the end");
	vc_part_unref(p);
	close(tx);
	close(rx);
}

/* The socket holds the first part's pages after it is freed; the next part
 * must not change what the reader gets. */
static void freed_part_intact(void)
{
	enum { N = 32768 };
	static uint8_t one[N], two[N], out[N];
	struct iovec i1 = { one, N }, i2 = { two, N };
	int tx, rx, sb = 1 << 20;

	fill(one, N, 7);
	fill(two, N, 8);
	CHECK(tcp_pair(&tx, &rx) == 0, "tcp pair");
	setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	struct vc_part *p1 = vc_part_new(&i1, 1);
	ssize_t k = p1 ? vc_part_send(p1, tx, 0) : -1;
	CHECK(k > 0, "send %zd", k);
	vc_part_unref(p1);
	struct vc_part *p2 = vc_part_new(&i2, 1);
	size_t got = 0;
	while (got < (size_t)(k > 0 ? k : 0)) {
		ssize_t r = read(rx, out + got, (size_t)k - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	CHECK(got == (size_t)k && memcmp(out, one, got) == 0, "got %zu of %zd, bytes %s", got, k,
	      memcmp(out, two, got) == 0 ? "of the NEXT part" : "differ");
	vc_part_unref(p2);
	close(tx);
	close(rx);
}

/* Without a memfd (no fd left) the part is a heap copy sent with send(). */
static void heap_fallback(void)
{
	enum { N = 50000 };
	static uint8_t a[N], out[N];
	struct iovec iov = { a, N };
	struct rlimit old, lim;
	int tx, rx, eagains = 0;

	fill(a, N, 9);
	CHECK(tcp_pair(&tx, &rx) == 0, "tcp pair");
	getrlimit(RLIMIT_NOFILE, &old);
	int low = dup(tx); /* the lowest free fd: the limit forbids it and all above */
	close(low);
	lim = old;
	lim.rlim_cur = (rlim_t)low;
	setrlimit(RLIMIT_NOFILE, &lim);
	struct vc_part *p = vc_part_new(&iov, 1);
	setrlimit(RLIMIT_NOFILE, &old);
	CHECK(p && p->fd < 0 && p->mem, "memfd made under a full fd table");
	CHECK(p && send_all(p, tx, rx, out, &eagains) > 0 && memcmp(out, a, N) == 0, "bytes");
	vc_part_unref(p);
	close(tx);
	close(rx);
}

/* A peer that closed makes the send fail (no SIGPIPE kill: ignored, as in
 * the daemon). */
static void peer_gone(void)
{
	static uint8_t a[200000];
	struct iovec iov = { a, sizeof(a) };
	int tx, rx;
	ssize_t k = 0;

	CHECK(tcp_pair(&tx, &rx) == 0, "tcp pair");
	close(rx);
	struct vc_part *p = vc_part_new(&iov, 1);
	for (int i = 0; i < 50 && p; i++) {
		k = vc_part_send(p, tx, 0);
		if (k < 0 && k != -EAGAIN)
			break;
		usleep(2000);
	}
	CHECK(k == -EPIPE || k == -ECONNRESET, "send to a closed peer: %zd", k);
	vc_part_unref(p);
	close(tx);
}

/* Each part alive counts once, memfd or heap copy, until its last ref. */
static void counted_once(void)
{
	static uint8_t a[70000];
	struct iovec iov = { a, sizeof(a) };
	struct vc_part *p = vc_part_new(&iov, 1), *q = vc_part_new(&iov, 1);

	CHECK(p && q && vc_mem_held(VC_MEM_PARTS) == 2 * sizeof(a), "two parts: %zu",
	      vc_mem_held(VC_MEM_PARTS));
	vc_part_ref(p);
	vc_part_ref(p);
	CHECK(vc_mem_held(VC_MEM_PARTS) == 2 * sizeof(a), "shared by 3, still once: %zu",
	      vc_mem_held(VC_MEM_PARTS));
	vc_part_unref(q);
	vc_part_unref(p);
	vc_part_unref(p);
	CHECK(vc_mem_held(VC_MEM_PARTS) == sizeof(a), "one ref left: %zu", vc_mem_held(VC_MEM_PARTS));
	vc_part_unref(p);
	CHECK(vc_mem_held(VC_MEM_PARTS) == 0, "all freed: %zu", vc_mem_held(VC_MEM_PARTS));
}

/* Every part of the tests above was freed: none counted (the heap
 * fallback too). */
static void none_counted_after(void)
{
	CHECK(vc_mem_held(VC_MEM_PARTS) == 0, "parts left counted: %zu", vc_mem_held(VC_MEM_PARTS));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN("stream_part", counted_once);
	RUN("stream_part", pieces_whole);
	RUN("stream_part", freed_part_intact);
	RUN("stream_part", heap_fallback);
	RUN("stream_part", peer_gone);
	RUN("stream_part", none_counted_after);
	CHECK_EXIT();
}
