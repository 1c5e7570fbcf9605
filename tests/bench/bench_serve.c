/* Serving benchmark: the daemon's serving stack (test-pattern camera,
 * libmicrohttpd in libevent, fan-out, worker pool) runs in a child process;
 * the parent opens N /stream clients on non-blocking sockets and measures,
 * over a window, the child's CPU per delivered frame, the latency from the
 * capture timestamp (X-Timestamp) to the end of the part at the client, the
 * per-client rate, the child's RSS and the stream parts it holds open
 * (memfds: not in RSS). Ratios against the 1-client run of the same device
 * mode show what fan-out costs (goal: 100 clients <= 1.5x).
 * "YUYV -> MJPEG" rows use a YUYV-only test camera (test:...:YUYV:only):
 * with every format offered the daemon would rightly pick the pattern's own
 * MJPEG and pass it through. Each row prints the X-Steps the clients got and
 * the run fails when a row meant to encode did not (or a passthrough row
 * encoded). H.264 rows read /stream.mp4: a frame's capture time is the
 * output's MP4 time 0 on the wall clock (mp4_t0_ms in /api/status) plus the
 * fragment's decode time (tfdt), and its latency runs to the end of its
 * mdat. Not a test otherwise: prints numbers. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "server/http/api.h"
#include "server/capture/capture.h"
#include "server/http/http.h"
#include "server/loop.h"
#include "server/stream/stream.h"

#define PORT 18790
#define MAXC 128

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void server_child(const char *dev, int port)
{
	struct event_base *base;
	struct vc_cam *cam;
	struct vc_http *h;
	struct vc_streams *s;
	struct vc_api *api;
	struct vc_http_config hc = { .conn_limit = 512, .per_ip_limit = 512 };
	struct vc_conf_cam cc = { .name = (char *)"0", .device = (char *)dev, .input = -1, .idle_stop_ms = 5000 };
	char addr[64];

	vc_log_level = VC_LOG_WARN;
	base = vc_loop_new(); /* the daemon's loop */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	if (!base || vc_cam_new(base, &cc, &cam) < 0 || vc_http_new(base, &hc, &h) < 0 ||
	    vc_streams_new(base, h, &cam, 1, &s) < 0 || vc_streams_routes(s, h) < 0 ||
	    vc_api_new(s, h, &api) < 0 || vc_api_routes(api, h) < 0 ||
	    vc_http_listen(h, addr) < 0)
		_exit(3);
	event_base_dispatch(base);
	_exit(0);
}

/* CPU seconds of a process from /proc/PID/stat: user + system (or system
 * alone), in clock ticks (10 ms): coarse, used for the user/system split. */
static double proc_cpu_ticks(pid_t pid, int sys_only)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(sys_only ? st : ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of a process, to the nanosecond: the sum of its threads'
 * run time (/proc/PID/task/TID/schedstat); the tick count when the kernel
 * has no schedstat. The server's threads live for the whole run, so none
 * is lost by exiting inside the window. */
static double proc_cpu(pid_t pid)
{
	char path[300];
	double sum = 0;
	int any = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		unsigned long long ns;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.32s/schedstat", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1) {
			sum += (double)ns / 1e9;
			any = 1;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return any ? sum : proc_cpu_ticks(pid, 0);
}

static long proc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Bytes of the stream parts the child holds open (memfds, not in its RSS). */
static long proc_part_kb(pid_t pid)
{
	char dir[64], path[320], link[128];
	long sum = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strstr(link, "memfd:vcapd-part") && stat(path, &st) == 0)
			sum += (long)st.st_size;
	}
	closedir(d);
	return (sum + 1023) / 1024;
}

static int connect_get_hdr(int port, const char *path, const char *extra)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char req[256];

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path, extra);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_get(int port, const char *path)
{
	return connect_get_hdr(port, path, "");
}

/* One stream client: a tiny multipart parser, or (mp4) an MP4 box reader. */
struct cl {
	int fd;
	int mp4;          /* /stream.mp4: boxes after the HTTP headers */
	int in_body;      /* mp4: past the HTTP headers */
	uint8_t box[4096];/* mp4: the current box's header, and a moof whole */
	size_t blen;
	size_t box_left;  /* mp4: bytes of the current box still to come */
	int box_is_mdat;
	char hdr[2048];
	size_t hlen;
	size_t body_left; /* bytes of the current part's JPEG + CRLF still to come */
	double ts;        /* X-Timestamp of the current part */
	long frames;
	char steps[32];   /* X-Steps of the response */
};

/* Latencies of the window's parts: to the last byte, and to the part's
 * headers (the rest is the transfer of the JPEG). Static: one run at a time. */
static double lat[200000], lat_hdr[200000];
static size_t n_lat, n_lat_hdr;

static void feed(struct cl *c, const char *p, size_t n, int measuring, long *frames)
{
	while (n) {
		if (c->body_left) {
			size_t k = n < c->body_left ? n : c->body_left;

			c->body_left -= k;
			p += k;
			n -= k;
			if (!c->body_left) {
				c->frames++;
				if (measuring) {
					(*frames)++;
					if (n_lat < sizeof(lat) / sizeof(lat[0]))
						lat[n_lat++] = now_s(CLOCK_REALTIME) - c->ts;
				}
			}
			continue;
		}
		/* collect headers up to the blank line */
		c->hdr[c->hlen++] = *p++;
		n--;
		if (c->hlen >= sizeof(c->hdr) - 1)
			c->hlen = 0;
		c->hdr[c->hlen] = 0;
		if (c->hlen >= 4 && memcmp(c->hdr + c->hlen - 4, "\r\n\r\n", 4) == 0) {
			char *cl = strstr(c->hdr, "Content-Length: ");
			char *ts = strstr(c->hdr, "X-Timestamp: ");

			char *st = strstr(c->hdr, "X-Steps: ");

			if (cl && ts && strstr(c->hdr, "--vcapdframe")) {
				c->body_left = strtoul(cl + 16, NULL, 10) + 2;
				c->ts = strtod(ts + 13, NULL);
				if (measuring && n_lat_hdr < sizeof(lat_hdr) / sizeof(lat_hdr[0]))
					lat_hdr[n_lat_hdr++] = now_s(CLOCK_REALTIME) - c->ts;
			} else if (st && !c->steps[0]) {
				sscanf(st + 9, "%31[^\r\n]", c->steps);
			}
			c->hlen = 0;
		}
	}
}

/* Wall-clock seconds of MP4 time 0 (mp4_t0_ms of the H.264 output). */
static double mp4_t0_s;

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The decode time (90 kHz ticks, tfdt version 1) in a whole moof; -1 = none. */
static double moof_time_s(const uint8_t *m, size_t n)
{
	for (size_t i = 4; i + 16 <= n; i++)
		if (!memcmp(m + i, "tfdt", 4) && m[i + 4] == 1)
			return (double)be(m + i + 8, 8) / 90000.0;
	return -1;
}

/* MP4 bytes: boxes are read by their 8-byte header; a moof is kept whole for
 * its tfdt, an mdat is skipped, and its end is one frame delivered. */
static void feed_mp4(struct cl *c, const uint8_t *p, size_t n, int measuring, long *frames)
{
	while (n) {
		if (c->box_left) {
			size_t k = n < c->box_left ? n : c->box_left;

			if (!c->box_is_mdat && c->blen + k <= sizeof(c->box))
				memcpy(c->box + c->blen, p, k);
			c->blen += k;
			c->box_left -= k;
			p += k;
			n -= k;
			if (c->box_left)
				continue;
			if (c->box_is_mdat) {
				c->frames++;
				if (measuring && mp4_t0_s > 0 && c->ts >= 0) {
					(*frames)++;
					if (n_lat < sizeof(lat) / sizeof(lat[0]))
						lat[n_lat++] = now_s(CLOCK_REALTIME) - (mp4_t0_s + c->ts);
				}
			} else if (!memcmp(c->box + 4, "moof", 4) && c->blen <= sizeof(c->box)) {
				c->ts = moof_time_s(c->box, c->blen);
			}
			c->blen = 0;
			continue;
		}
		c->box[c->blen++] = *p++;
		n--;
		if (c->blen == 8) {
			size_t sz = (size_t)be(c->box, 4);

			c->box_is_mdat = !memcmp(c->box + 4, "mdat", 4);
			c->box_left = sz > 8 ? sz - 8 : 0;
			if (!c->box_left)
				c->blen = 0;
		}
	}
}

/* HTTP headers of an MP4 client (X-Steps kept), then its boxes. */
static void feed_any(struct cl *c, const char *p, size_t n, int measuring, long *frames)
{
	if (!c->mp4) {
		feed(c, p, n, measuring, frames);
		return;
	}
	while (n && !c->in_body) {
		c->hdr[c->hlen++] = *p++;
		n--;
		if (c->hlen >= sizeof(c->hdr) - 1)
			c->hlen = 0;
		c->hdr[c->hlen] = 0;
		if (c->hlen >= 4 && !memcmp(c->hdr + c->hlen - 4, "\r\n\r\n", 4)) {
			char *st = strstr(c->hdr, "X-Steps: ");

			if (st)
				sscanf(st + 9, "%31[^\r\n]", c->steps);
			c->in_body = 1;
			c->blen = 0;
			c->ts = -1;
		}
	}
	if (n)
		feed_mp4(c, (const uint8_t *)p, n, measuring, frames);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A number from /api/status: the first "key": value; -1 when absent. */
static double status_num(int port, const char *key)
{
	int fd = connect_get_hdr(port, "/api/status", "Connection: close\r\n");
	char buf[65536];
	size_t n = 0;
	ssize_t k;

	if (fd < 0)
		return -1;
	while (n < sizeof(buf) - 1 && (k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0) {
		n += (size_t)k;
	}
	close(fd);
	buf[n] = 0;
	char want[64];

	snprintf(want, sizeof(want), "\"%s\":", key);
	char *p = strstr(buf, want);
	return p ? strtod(p + strlen(want), NULL) : -1;
}

struct result {
	double cpu_per_s, sys_per_s, cpu_us_per_frame, fps_per_client, p50, p99, hdr_p50, process_ms;
	long rss_kb, part_kb;
	char steps[32]; /* X-Steps of client 0 */
};

static int run(const char *dev, const char *path, int nclients, double secs, struct result *r)
{
	static int port = PORT;
	struct cl cls[MAXC];
	pid_t pid;

	port++;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		server_child(dev, port);
	usleep(300000);
	memset(cls, 0, sizeof(cls));
	for (int i = 0; i < nclients; i++) {
		cls[i].fd = connect_get(port, path);
		if (cls[i].fd < 0) {
			fprintf(stderr, "bench_serve: cannot connect client %d\n", i);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -1;
		}
		fcntl(cls[i].fd, F_SETFL, O_NONBLOCK);
		cls[i].mp4 = strstr(path, ".mp4") != NULL;
	}
	struct pollfd pfd[MAXC];
	static char buf[1 << 16];
	double t_start = now_s(CLOCK_MONOTONIC), t_meas = t_start + 1.0, t_end = t_meas + secs;
	double cpu0 = 0, sys0 = 0;
	long frames = 0;
	int measuring = 0;

	n_lat = n_lat_hdr = 0;
	mp4_t0_s = 0;
	for (;;) {
		double t = now_s(CLOCK_MONOTONIC);

		if (!measuring && t >= t_meas) {
			measuring = 1;
			if (cls[0].mp4)
				mp4_t0_s = status_num(port, "mp4_t0_ms") / 1e3;
			cpu0 = proc_cpu(pid);
			sys0 = proc_cpu_ticks(pid, 1);
		}
		if (t >= t_end)
			break;
		for (int i = 0; i < nclients; i++)
			pfd[i] = (struct pollfd){ .fd = cls[i].fd, .events = POLLIN };
		if (poll(pfd, (nfds_t)nclients, 50) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < nclients; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			ssize_t n = read(cls[i].fd, buf, sizeof(buf));

			if (n > 0)
				feed_any(&cls[i], buf, (size_t)n, measuring, &frames);
		}
	}
	double cpu = proc_cpu(pid) - cpu0;
	r->sys_per_s = (proc_cpu_ticks(pid, 1) - sys0) / secs;
	snprintf(r->steps, sizeof(r->steps), "%s", cls[0].steps[0] ? cls[0].steps : "?");
	r->rss_kb = proc_rss_kb(pid);
	r->part_kb = proc_part_kb(pid);
	r->process_ms = status_num(port, "process_ms");
	for (int i = 0; i < nclients; i++)
		close(cls[i].fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	qsort(lat, n_lat, sizeof(lat[0]), cmp_d);
	r->cpu_per_s = cpu / secs;
	r->cpu_us_per_frame = frames ? cpu * 1e6 / (double)frames : 0;
	r->fps_per_client = (double)frames / secs / nclients;
	r->p50 = n_lat ? lat[n_lat / 2] * 1e3 : 0;
	r->p99 = n_lat ? lat[n_lat * 99 / 100] * 1e3 : 0;
	qsort(lat_hdr, n_lat_hdr, sizeof(lat_hdr[0]), cmp_d);
	r->hdr_p50 = n_lat_hdr ? lat_hdr[n_lat_hdr / 2] * 1e3 : 0;
	return 0;
}

static void row(const char *label, int n, const struct result *r, const struct result *base)
{
	printf("%-24s %4d %-15s %6.1f %6.1f %5.1f %9.1f %6.2f %6.2f %7.2f %7.2f %8ld %8ld %6.2fx\n",
	       label, n, r->steps, r->fps_per_client, r->cpu_per_s * 100, r->sys_per_s * 100,
	       r->cpu_us_per_frame, r->process_ms, r->hdr_p50, r->p50, r->p99, r->rss_kb, r->part_kb,
	       base && base->cpu_per_s > 0 ? r->cpu_per_s / base->cpu_per_s : 1.0);
}

/* A row meant to encode must show it (steps and a measured encode time), a
 * passthrough row must not: otherwise the numbers measure something else. */
static int row_is_what_it_says(const char *label, int encode, const struct result *r)
{
	int enc = strstr(r->steps, "encode") != NULL;

	if (encode ? enc && r->process_ms > 0 : !strcmp(r->steps, "passthrough"))
		return 1;
	fprintf(stderr, "bench_serve: %s: expected %s, got steps '%s', encode %.2f ms\n", label,
		encode ? "an encode" : "passthrough", r->steps, r->process_ms);
	return 0;
}

struct bcase {
	const char *dev, *label, *path; /* path NULL: /stream */
	int encode;
	int n[3];
};

static int table(const struct bcase *cs, size_t n_cs, double secs)
{
	struct result r, base;

	printf("%-24s %4s %-15s %6s %6s %5s %9s %6s %6s %7s %7s %8s %8s %7s\n", "case", "cl", "steps",
	       "fps/cl", "cpu %", "sys %", "cpu us/fr", "enc ms", "hdr50", "p50 ms", "p99 ms",
	       "rss KiB", "part KiB", "cpu/1cl");
	for (size_t m = 0; m < n_cs; m++)
		for (size_t i = 0; i < 3 && cs[m].n[i]; i++) {
			if (run(cs[m].dev, cs[m].path ? cs[m].path : "/stream", cs[m].n[i], secs,
				&r) < 0)
				return -1;
			if (i == 0)
				base = r;
			row(cs[m].label, cs[m].n[i], &r, &base);
			fflush(stdout);
			if (!row_is_what_it_says(cs[m].label, cs[m].encode, &r))
				return -1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	/* YUYV -> MJPEG: a YUYV-only camera; passthrough: an MJPEG camera */
	static const struct bcase serve[] = {
		{ "test:1280x720@30:YUYV:only", "720p YUYV -> MJPEG", NULL, 1, { 1, 10, 100 } },
		{ "test:1920x1080@30:YUYV:only", "1080p YUYV -> MJPEG", NULL, 1, { 1, 10, 100 } },
		{ "test:1280x720@30:MJPG:only", "720p MJPEG passthrough", NULL, 0, { 1, 10, 100 } },
	};
	/* H.264 by the software encoder, as /stream.mp4 (issue 17) */
	static const struct bcase h264[] = {
		{ "test:640x480@30:YUYV:only", "480p YUYV -> H.264 mp4", "/stream.mp4", 1,
		  { 1, 10, 100 } },
		{ "test:1280x720@30:YUYV:only", "720p YUYV -> H.264 mp4", "/stream.mp4", 1,
		  { 1, 10, 100 } },
	};
	static const struct bcase pi[] = {
		{ "test:640x480@30:MJPG:only", "480p MJPEG passthrough", NULL, 0, { 1, 20 } },
		{ "test:640x480@30:YUYV:only", "480p YUYV -> MJPEG", NULL, 1, { 1, 20 } },
		{ "test:1280x720@30:MJPG:only", "720p MJPEG passthrough", NULL, 0, { 1, 20 } },
		{ "test:1280x720@30:YUYV:only", "720p YUYV -> MJPEG", NULL, 1, { 1, 20 } },
	};
	struct result r;

	signal(SIGPIPE, SIG_IGN);
	if (argc == 5) { /* one case: SECS DEVICE PATH CLIENTS (for profiling) */
		if (run(argv[2], argv[3], atoi(argv[4]), secs, &r) < 0)
			return 1;
		row(argv[2], atoi(argv[4]), &r, NULL);
		return 0;
	}
	printf("bench_serve: %.1f s windows; CPU = the serving process (test-pattern capture\n"
	       "included: it draws YUYV, or draws and encodes for the MJPEG camera);\n"
	       "cpu %% = run time of all its threads (schedstat), sys %% = its kernel part (ticks);\n"
	       "latency = capture timestamp -> last byte of the part at the client (p50, p99;\n"
	       "hdr50 = p50 to the part's headers, before its JPEG bytes);\n"
	       "steps = X-Steps the clients got; enc ms = the output's encode time (/api/status);\n"
	       "part KiB = stream parts (memfds) the server holds at the end, not in its rss\n",
	       secs);
	if (table(serve, sizeof(serve) / sizeof(serve[0]), secs) < 0)
		return 1;
	printf("\nH.264 (software encoder) as fragmented MP4: latency = capture -> end of the "
	       "frame's mdat\n");
	if (table(h264, sizeof(h264) / sizeof(h264[0]), secs) < 0)
		return 1;
	printf("\nMJPEG passthrough vs YUYV -> MJPEG (issue 6)\n");
	if (table(pi, sizeof(pi) / sizeof(pi[0]), secs) < 0)
		return 1;
	return 0;
}
