/* day_watch: the day-in-the-life test's probes (tests/vm/day.sh), one
 * process each, cheap under TCG where every fork of a shell pipeline costs.
 *
 *   day_watch sample PORT PID INTERVAL_MS STOPFILE
 *     every INTERVAL_MS until STOPFILE exists, one line:
 *     "EPOCH MODE STATE CPU_TICKS RSS_KB FDS OUTPUTS CLIENTS FRAMES DROPPED
 *      BUSY_DROPS RSS_ANON_KB RSS_FILE_KB RSS_SHMEM_KB THREADS HEAP_KB
 *      HEAP_FREE_KEPT_KB ANON_HUGE_KB COPIES_KB CPU_IDLE CPU_ALL FIXED_FDS"
 *     (GET /api/status: the first camera's mode, state, its capture's
 *     frames and driver-reported drops, the outputs' busy drops summed,
 *     the heap's bytes in use and freed but kept, the bytes of capture
 *     copies (memory.copies); /proc/PID for the rest; the last two the
 *     machine's idle+iowait and all jiffies from /proc/stat, then the fds
 *     that are neither sockets nor memfds)
 *   day_watch stream PORT PATH SECONDS
 *     GET PATH (an MJPEG stream) for SECONDS; one line per part: the epoch
 *     time (s) its boundary arrived, its X-Timestamp (capture time) and
 *     X-Frame-Seq ("-" when absent), 1 if it is a placeholder else 0
 *     (written at once: the probe may be stopped by a signal); then "#
 *     parts N bytes B from T0 to T1" on stderr: the epoch times (s) its
 *     request was sent and it stopped reading (its session, which the
 *     gap judge measures the first part and the last wait against).
 * Exit 0, or 2 on bad usage. */

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Connects to 127.0.0.1:port and sends GET path: the socket, or -1. */
static int get(int port, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[1024];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (n <= 0 || (size_t)n >= sizeof(req) || write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads the whole response (at most len - 1 bytes, 2 s): its length. */
static size_t slurp(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 2000) <= 0)
			break;
		ssize_t k = read(fd, buf + n, len - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	return n;
}

static unsigned count(const char *s, const char *needle)
{
	unsigned n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static int sample(int port, int pid, int ival_ms, const char *stop)
{
	static char buf[1 << 20];
	char path[64], line[512];

	while (access(stop, F_OK) != 0) {
		double t0 = now_mono();
		char mode[32] = "none", state[32] = "none";
		unsigned w = 0, h = 0, outputs = 0, clients = 0;
		unsigned long frames = 0, dropped = 0, busy = 0, heap = 0, kept = 0, copies = 0;
		long huge = 0;
		long anon = 0, file = 0, shmem = 0, threads = 0;
		int fd = get(port, "/api/status");

		if (fd >= 0) {
			slurp(fd, buf, sizeof(buf));
			close(fd);
			const char *m = strstr(buf, "\"mode\":{");
			const char *wp = m ? strstr(m, "\"width\":") : NULL;
			const char *hp = m ? strstr(m, "\"height\":") : NULL;
			if (wp && hp && sscanf(wp, "\"width\":%u", &w) == 1 &&
			    sscanf(hp, "\"height\":%u", &h) == 1)
				snprintf(mode, sizeof(mode), "%ux%u", w, h);
			const char *s = strstr(buf, "\"state\":\"");
			if (s)
				sscanf(s, "\"state\":\"%31[a-z]", state);
			outputs = count(buf, "\"plan\":");
			clients = count(buf, "\"peer\":");
			const char *hp2 = strstr(buf, "\"heap\":{\"in_use\":");
			if (hp2)
				sscanf(hp2, "\"heap\":{\"in_use\":%lu,\"free_kept\":%lu", &heap, &kept);
			const char *mp = strstr(buf, "\"memory\":{");
			const char *cp = mp ? strstr(mp, "\"copies\":") : NULL;
			if (cp)
				sscanf(cp, "\"copies\":%lu", &copies);
			const char *sp = strstr(buf, "\"stats\":{");
			if (sp)
				sscanf(sp, "\"stats\":{\"frames\":%lu,\"dropped\":%lu", &frames,
				       &dropped);
			for (const char *b = buf; (b = strstr(b, "\"busy_drops\":")); b++) {
				unsigned long v = 0;
				if (sscanf(b, "\"busy_drops\":%lu", &v) == 1)
					busy += v;
			}
		}
		unsigned long ut = 0, st = 0;
		long rss = 0;
		unsigned fds = 0;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		FILE *f = fopen(path, "r");
		if (f) {
			/* utime, stime: fields 14 and 15, after "(comm)" */
			if (fgets(line, sizeof(line), f)) {
				const char *p = strrchr(line, ')');
				if (p)
					sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
					       &ut, &st);
			}
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		f = fopen(path, "r");
		if (f) {
			while (fgets(line, sizeof(line), f)) {
				sscanf(line, "VmRSS: %ld", &rss);
				sscanf(line, "RssAnon: %ld", &anon);
				sscanf(line, "RssFile: %ld", &file);
				sscanf(line, "RssShmem: %ld", &shmem);
				sscanf(line, "Threads: %ld", &threads);
			}
			fclose(f);
		}
		/* transparent huge pages: khugepaged can back a heap's freed
		 * pages with one, RSS then grows by 2 MiB with no allocation */
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
		f = fopen(path, "r");
		if (f) {
			while (fgets(line, sizeof(line), f))
				sscanf(line, "AnonHugePages: %ld", &huge);
			fclose(f);
		}
		/* the guest's CPUs: idle (+iowait) and all jiffies, to tell a
		 * starved loop from a stalled one */
		unsigned long long cu[8] = { 0 }, idle = 0, total = 0;
		f = fopen("/proc/stat", "r");
		if (f) {
			if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &cu[0], &cu[1],
				   &cu[2], &cu[3], &cu[4], &cu[5], &cu[6], &cu[7]) == 8) {
				idle = cu[3] + cu[4];
				for (int k = 0; k < 8; k++)
					total += cu[k];
			}
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		DIR *d = opendir(path);
		unsigned fixed = 0; /* fds other than sockets and memfds */
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				char tgt[128];
				if (e->d_name[0] == '.')
					continue;
				fds++;
				ssize_t k = readlinkat(dirfd(d), e->d_name, tgt, sizeof(tgt) - 1);
				tgt[k > 0 ? k : 0] = '\0';
				/* connections and stream parts (a memfd per frame)
				 * come and go; the rest is the daemon's own */
				fixed += k > 0 && strncmp(tgt, "socket:", 7) && strncmp(tgt, "/memfd:", 7);
			}
			closedir(d);
		}
		printf("%.3f %s %s %lu %ld %u %u %u %lu %lu %lu %ld %ld %ld %ld %lu %lu %ld %lu %llu "
		       "%llu %u\n",
		       now_real(), mode, state, ut + st, rss, fds, outputs, clients, frames, dropped,
		       busy, anon, file, shmem, threads, heap / 1024, kept / 1024, huge,
		       copies / 1024, idle, total, fixed);
		fflush(stdout);
		double left = ival_ms / 1000.0 - (now_mono() - t0);
		if (left > 0)
			usleep((useconds_t)(left * 1e6));
	}
	return 0;
}

/* One part's header being read: the arrival time of its boundary and its
 * bytes so far (the header can straddle two reads). */
struct part_hdr {
	double t;
	char b[512];
	size_t n;
	int pending;
};

static const char *hdr_val(const char *h, const char *name, char *out, size_t len)
{
	const char *p = strstr(h, name);
	size_t k = 0;

	if (!p) {
		snprintf(out, len, "-");
		return out;
	}
	p += strlen(name);
	while (*p == ' ')
		p++;
	while (k + 1 < len && p[k] && p[k] != '\r' && p[k] != '\n') {
		out[k] = p[k];
		k++;
	}
	out[k] = '\0';
	return out;
}

/* Prints the part: "ARRIVAL X-TIMESTAMP X-FRAME-SEQ PLACEHOLDER". */
static void part_emit(struct part_hdr *h)
{
	char ts[32], seq[32];

	h->b[h->n] = '\0';
	hdr_val(h->b, "X-Timestamp:", ts, sizeof(ts));
	hdr_val(h->b, "X-Frame-Seq:", seq, sizeof(seq));
	printf("%.3f %s %s %d\n", h->t, ts, seq, strstr(h->b, "X-Placeholder") != NULL);
	fflush(stdout); /* each part on record even if the probe is killed */
	h->pending = 0;
}

/* Adds bytes to a pending header; prints the part once the header is whole. */
static void part_feed(struct part_hdr *h, const char *p, size_t n)
{
	if (!h->pending)
		return;
	if (n > sizeof(h->b) - 1 - h->n)
		n = sizeof(h->b) - 1 - h->n;
	memcpy(h->b + h->n, p, n);
	h->n += n;
	h->b[h->n] = '\0';
	if (strstr(h->b, "\r\n\r\n") || h->n == sizeof(h->b) - 1)
		part_emit(h);
}

static int stream(int port, const char *path, int seconds)
{
	static const char mark[] = "\r\n--vcapdframe\r\n";
	const size_t ml = sizeof(mark) - 1;
	char buf[65536 + sizeof(mark)];
	size_t carry = 0;
	unsigned long long bytes = 0, parts = 0;
	double end = now_mono() + seconds;
	struct part_hdr h = { 0 };
	int fd = get(port, path);
	double t0 = now_real();

	if (fd < 0) {
		fprintf(stderr, "# connect failed\n");
		return 0;
	}
	/* each part starts with the boundary after a CRLF: the response
	 * headers' last one, or the previous part's trailer */
	for (;;) {
		double left = end - now_mono();
		if (left <= 0)
			break;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		ssize_t k = read(fd, buf + carry, sizeof(buf) - carry);
		if (k <= 0)
			break;
		bytes += (unsigned long long)k;
		size_t n = carry + (size_t)k;
		double t = now_real();
		char *s = buf, *e = buf + n;
		char *m = memmem(s, (size_t)(e - s), mark, ml);
		/* the rest of a header begun in an earlier read: only new bytes */
		char *upto = m ? m : e;
		if (upto > buf + carry)
			part_feed(&h, buf + carry, (size_t)(upto - (buf + carry)));
		for (; m; m = memmem(s, (size_t)(e - s), mark, ml)) {
			if (h.pending)
				part_emit(&h);
			h = (struct part_hdr){ .t = t, .pending = 1 };
			parts++;
			s = m + ml;
			char *next = memmem(s, (size_t)(e - s), mark, ml);
			part_feed(&h, s, (size_t)((next ? next : e) - s));
		}
		carry = n < ml - 1 ? n : ml - 1;
		memmove(buf, buf + n - carry, carry);
	}
	double t1 = now_real();
	if (h.pending)
		part_emit(&h);
	fflush(stdout);
	close(fd);
	fprintf(stderr, "# parts %llu bytes %llu from %.3f to %.3f\n", parts, bytes, t0, t1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "sample"))
		return sample(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argv[5]);
	if (argc == 5 && !strcmp(argv[1], "stream"))
		return stream(atoi(argv[2]), argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: day_watch sample PORT PID INTERVAL_MS STOPFILE\n"
			"       day_watch stream PORT PATH SECONDS\n");
	return 2;
}
