/* auth_flood: failed logins at a fixed rate against a running vcapd while an
 * authenticated stream client and a latency probe run, to show that
 * password checks cannot stall the server (issue 14).
 *
 * auth_flood PORT SECONDS RATE CLIENTS SPREAD USER:PASS
 *   CLIENTS threads together open RATE connections per second (open loop:
 *   a slow answer does not slow the senders; each request is GET
 *   /api/status with Basic USER:<a new wrong password> and Connection:
 *   close; passwords differ across runs too). Thread i sends from 127.0.0.(2+i) when SPREAD is 1, else it
 *   cycles through SPREAD source addresses 127.(10+i).x.y, so a per-address
 *   back-off never engages and every request may reach the password hash.
 *   Meanwhile one client streams /stream with USER:PASS from 127.0.0.1 (the
 *   longest gap between parts is measured) and a probe fetches / and
 *   /api/status (with USER:PASS) every 100 ms.
 * Prints one line per measure:
 *   flood: sent=N secs=S rate=R/s answered=A 401=.. 429=.. 503=.. other=.. failed=.. skipped=..
 *   stream: parts=N max_gap_ms=G
 *   probe_root: n=N max_ms=M p50_ms=P
 *   probe_auth: n=N max_ms=M p50_ms=P codes_ok=N
 * Exit 0 when it ran (the test script judges the numbers), 2 on usage.
 *
 * auth_flood --hash PASSWORD prints a yescrypt hash of PASSWORD (the slow
 * kind the flood is about; openssl makes only $6$). */

#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_INFLIGHT 512
#define MAX_PROBES 1024

static int port, secs, rate, clients, spread;
static char good_b64[256];
static const char *user;
static atomic_int stop;
static atomic_long n_sent, n_answered, n_401, n_429, n_503, n_other, n_failed, n_skipped;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void b64(const char *in, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)in[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)in[i + 2];
		out[o++] = t[(v >> 18) & 63];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

static int connect_from(uint32_t src, int nonblock)
{
	int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(src) };
	struct sockaddr_in d = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(0x7f000001) };
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&s, sizeof(s)) < 0 ||
	    (connect(fd, (struct sockaddr *)&d, sizeof(d)) < 0 && errno != EINPROGRESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct conn {
	int fd, sent;
	double start;
	char req[512];
	size_t len;
	char resp[16];
	size_t got;
};

static void count(const char *resp, size_t got)
{
	int code = 0;
	if (got >= 12 && strncmp(resp, "HTTP/1.", 7) == 0)
		code = atoi(resp + 9);
	atomic_fetch_add(&n_answered, 1);
	if (code == 401)
		atomic_fetch_add(&n_401, 1);
	else if (code == 429)
		atomic_fetch_add(&n_429, 1);
	else if (code == 503)
		atomic_fetch_add(&n_503, 1);
	else
		atomic_fetch_add(&n_other, 1);
}

static void conn_end(int ep, struct conn *c, int answered)
{
	if (answered)
		count(c->resp, c->got);
	else
		atomic_fetch_add(&n_failed, 1);
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

/* Reads what the socket has; at EOF the response is complete. */
static void conn_read(int ep, struct conn *c)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof(buf));
		if (n > 0) {
			size_t k = sizeof(c->resp) - c->got;
			if ((size_t)n < k)
				k = (size_t)n;
			memcpy(c->resp + c->got, buf, k);
			c->got += k;
			continue;
		}
		if (n == 0)
			conn_end(ep, c, c->got > 0);
		else if (errno != EAGAIN)
			conn_end(ep, c, c->got > 0);
		return;
	}
}

static void *flood(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg, seq = 0;
	struct conn *cs = calloc(MAX_INFLIGHT, sizeof(*cs));
	int ep = epoll_create1(0);
	double interval = (double)clients / rate, next = now_s(), end = next + secs;

	if (!cs || ep < 0)
		return NULL;
	for (int i = 0; i < MAX_INFLIGHT; i++)
		cs[i].fd = -1;
	while (!atomic_load(&stop)) {
		double t = now_s();
		while (next <= t && t < end) {
			struct conn *c = NULL;
			for (int i = 0; i < MAX_INFLIGHT && !c; i++)
				if (cs[i].fd < 0)
					c = &cs[i];
			next += interval;
			atomic_fetch_add(&n_sent, 1);
			if (!c) {
				atomic_fetch_add(&n_skipped, 1);
				continue;
			}
			uint32_t src = spread <= 1 ? 0x7f000002u + idx
				       : 0x7f000000u | ((10u + idx) << 16) | (1u + seq % (unsigned)spread);
			char cred[128], enc[200];
			snprintf(cred, sizeof(cred), "%s:wrong-%d-%u-%u", user, (int)getpid(), idx, seq++);
			b64(cred, enc);
			c->len = (size_t)snprintf(c->req, sizeof(c->req),
						  "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
						  "Authorization: Basic %s\r\nConnection: close\r\n\r\n",
						  port, enc);
			c->fd = connect_from(src, 1);
			if (c->fd < 0) {
				atomic_fetch_add(&n_failed, 1);
				continue;
			}
			c->sent = 0;
			c->got = 0;
			c->start = t;
			struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.ptr = c };
			epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
		}
		if (t >= end + 5)
			break;
		int inflight = 0;
		for (int i = 0; i < MAX_INFLIGHT; i++)
			inflight += cs[i].fd >= 0;
		if (t >= end && !inflight)
			break;
		struct epoll_event evs[64];
		int wait_ms = (int)((next - t) * 1000);
		int n = epoll_wait(ep, evs, 64, wait_ms < 0 ? 0 : wait_ms > 5 ? 5 : wait_ms);
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c->fd < 0)
				continue;
			if (!c->sent && (evs[i].events & EPOLLOUT)) {
				if (write(c->fd, c->req, c->len) != (ssize_t)c->len) {
					conn_end(ep, c, 0);
					continue;
				}
				c->sent = 1;
				struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			} else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
				conn_read(ep, c);
			}
		}
	}
	for (int i = 0; i < MAX_INFLIGHT; i++)
		if (cs[i].fd >= 0)
			conn_end(ep, &cs[i], 0);
	close(ep);
	free(cs);
	return NULL;
}

static int stream_parts;
static double stream_max_gap;

/* Counts stream parts by their Content-Type line; the gap is measured
 * between reads that completed a part. */
static void *stream_fn(void *arg)
{
	static const char pat[] = "Content-Type: image/jpeg";
	char buf[65536 + sizeof(pat)], req[512];
	size_t carry = 0;
	double last = 0;
	int fd = connect_from(0x7f000001, 0);

	(void)arg;
	if (fd < 0)
		return NULL;
	snprintf(req, sizeof(req), "GET /stream HTTP/1.1\r\nHost: localhost:%d\r\nAuthorization: Basic %s\r\n\r\n",
		 port, good_b64);
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return NULL;
	}
	struct timeval tv = { 1, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (!atomic_load(&stop)) {
		ssize_t n = read(fd, buf + carry, sizeof(buf) - carry - 1);
		double t = now_s();
		if (n <= 0) {
			if (n < 0 && errno == EAGAIN)
				continue; /* the gap keeps growing; measured at the next part */
			break;
		}
		size_t len = carry + (size_t)n;
		buf[len] = '\0';
		int found = 0;
		for (char *p = buf; (p = memmem(p, len - (size_t)(p - buf), pat, sizeof(pat) - 1)); p++)
			found++;
		if (found) {
			if (last > 0 && t - last > stream_max_gap)
				stream_max_gap = t - last;
			last = t;
			stream_parts += found;
		}
		carry = len < sizeof(pat) ? len : sizeof(pat) - 1;
		memmove(buf, buf + len - carry, carry);
	}
	close(fd);
	return NULL;
}

struct probe {
	const char *path;
	int auth;
	double ms[MAX_PROBES];
	int n, ok;
};

static double fetch_ms(const char *path, int auth, int *code)
{
	char req[512], buf[8192];
	double t0 = now_s();
	int fd = connect_from(0x7f000001, 0);

	*code = 0;
	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s%sConnection: close\r\n\r\n",
		 path, port, auth ? "Authorization: Basic " : "", auth ? good_b64 : "", auth ? "\r\n" : "");
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return -1;
	}
	ssize_t n, total = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (!total && n >= 12)
			*code = atoi(buf + 9);
		total += n;
	}
	close(fd);
	return (now_s() - t0) * 1000;
}

static void *probe_fn(void *arg)
{
	struct probe *p = arg;
	while (!atomic_load(&stop) && p->n < MAX_PROBES) {
		int code;
		double ms = fetch_ms(p->path, p->auth, &code);
		if (ms >= 0)
			p->ms[p->n++] = ms;
		p->ok += code == 200;
		usleep(100000);
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *name, struct probe *p)
{
	qsort(p->ms, (size_t)p->n, sizeof(double), cmp);
	printf("%s: n=%d max_ms=%.1f p50_ms=%.1f codes_ok=%d\n", name, p->n, p->n ? p->ms[p->n - 1] : -1.0,
	       p->n ? p->ms[p->n / 2] : -1.0, p->ok);
}

int main(int argc, char **argv)
{
	static struct probe root = { .path = "/" }, authp = { .path = "/api/status", .auth = 1 };
	pthread_t ft[64], st, pr, pa;
	char up[200];

	if (argc == 3 && strcmp(argv[1], "--hash") == 0) {
		static struct crypt_data cd;
		char salt[CRYPT_GENSALT_OUTPUT_SIZE];
		const char *h = crypt_gensalt_rn("$y$", 0, NULL, 0, salt, sizeof(salt)) ?
				crypt_r(argv[2], salt, &cd) : NULL;
		if (!h || h[0] != '$')
			return 1;
		printf("%s\n", h);
		return 0;
	}
	if (argc != 7) {
		fprintf(stderr, "usage: auth_flood PORT SECONDS RATE CLIENTS SPREAD USER:PASS\n");
		return 2;
	}
	port = atoi(argv[1]);
	secs = atoi(argv[2]);
	rate = atoi(argv[3]);
	clients = atoi(argv[4]);
	spread = atoi(argv[5]);
	snprintf(up, sizeof(up), "%s", argv[6]);
	if (port <= 0 || secs <= 0 || rate <= 0 || clients <= 0 || clients > 64 || spread < 1 ||
	    !strchr(up, ':')) {
		fprintf(stderr, "auth_flood: bad arguments\n");
		return 2;
	}
	b64(up, good_b64);
	*strchr(up, ':') = '\0';
	user = up;
	pthread_create(&st, NULL, stream_fn, NULL);
	usleep(500000); /* the stream's login (one hash) before the flood */
	pthread_create(&pr, NULL, probe_fn, &root);
	pthread_create(&pa, NULL, probe_fn, &authp);
	double t0 = now_s();
	for (int i = 0; i < clients; i++)
		pthread_create(&ft[i], NULL, flood, (void *)(uintptr_t)i);
	for (int i = 0; i < clients; i++)
		pthread_join(ft[i], NULL);
	double el = now_s() - t0;
	atomic_store(&stop, 1);
	pthread_join(st, NULL);
	pthread_join(pr, NULL);
	pthread_join(pa, NULL);
	long sent = atomic_load(&n_sent) - atomic_load(&n_skipped);
	printf("flood: sent=%ld secs=%d rate=%.0f/s answered=%ld 401=%ld 429=%ld 503=%ld other=%ld "
	       "failed=%ld skipped=%ld elapsed=%.1f\n",
	       sent, secs, (double)sent / secs, atomic_load(&n_answered), atomic_load(&n_401),
	       atomic_load(&n_429), atomic_load(&n_503), atomic_load(&n_other), atomic_load(&n_failed),
	       atomic_load(&n_skipped), el);
	printf("stream: parts=%d max_gap_ms=%.1f\n", stream_parts, stream_max_gap * 1000);
	report("probe_root", &root);
	report("probe_auth", &authp);
	return 0;
}
