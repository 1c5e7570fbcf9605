/* rtsp_check: an RTSP client over TCP interleaved that checks what players
 * forgive (tests/integ/rtsp_*.sh):
 *   rtsp_check [-n CLIENTS] [-t SECONDS] [-f FPS] [-m MODE] HOST PORT PATH
 * PATH is the URL path with query ("/", "/0?size=320x240"). Every client
 * DESCRIBEs, SETUPs (interleaved 0-1), PLAYs and reads for SECONDS, then
 * checks: contiguous RTP sequence numbers, one timestamp per access unit,
 * the marker bit on each access unit's last packet only, FU-A start/end
 * bits, STAP-A unit sizes and the NAL units (forbidden bit 0, types
 * 1..23), the first access unit an IDR with SPS and PPS (those two in a
 * STAP-A), timestamps advancing by about 90000/FPS per frame (FPS > 0), an
 * RTCP sender report whose NTP time is within 10 s of the wall clock.
 * Prints one line per client and exits 0 when all pass.
 * MODE: "play" (default); "mute": PLAY, then keep reading without sending
 * anything (no keep-alive): passes when the server closes the connection
 * within SECONDS; "vanish": PLAY, then neither read nor send for SECONDS
 * (the script watches /api/status). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC 64

struct cl {
	int fd, ok, done;
	char why[200];
	uint8_t buf[1 << 17];
	size_t len;
	/* RTP state */
	int have_seq;
	uint16_t seq;
	uint32_t ts, first_ts;
	int in_au, au_count, first_idr_checked;
	int au_has_sps, au_has_pps, au_has_idr;
	int fu_open;
	int staps;                 /* STAP-A packets seen */
	uint8_t fu_type;
	size_t fu_len;
	int sr_seen, sr_ok;
	double sr_ntp;             /* the last sender report: NTP time (Unix s) */
	uint32_t sr_ts;            /* and its RTP timestamp */
	double t0;                 /* when PLAY was answered */
	double t0_real;            /* the same on CLOCK_REALTIME */
	double lat[4096];          /* capture -> access unit's last byte here, s */
	int n_lat;
	double join_ms;            /* PLAY answered -> first whole access unit */
	long packets;
	double ts_step_sum;
	int ts_steps;
};

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void failf(struct cl *c, const char *why)
{
	if (c->ok) {
		c->ok = 0;
		snprintf(c->why, sizeof(c->why), "%s", why);
	}
}

/* Sends a request and reads its response head (+ body) into resp; bytes
 * after it (RTP following the PLAY answer) go to c's buffer. */
static int request(struct cl *c, int fd, const char *req, char *resp, size_t cap)
{
	size_t n = 0;
	double until = now_s() + 10;

	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return -1;
	while (now_s() < until && n + 1 < cap) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 500) <= 0)
			continue;
		ssize_t k = read(fd, resp + n, cap - 1 - n);
		if (k <= 0)
			return -1;
		n += (size_t)k;
		resp[n] = 0;
		char *e = strstr(resp, "\r\n\r\n");
		if (e) {
			char *cl = strstr(resp, "Content-Length:");
			size_t body = cl && cl < e ? strtoul(cl + 15, NULL, 10) : 0;
			size_t end = (size_t)(e + 4 - resp) + body;
			if (n >= end) {
				memcpy(c->buf, resp + end, n - end);
				c->len = n - end;
				return 0;
			}
		}
	}
	return -1;
}

static int start(struct cl *c, const char *host, int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[2600], resp[8192], url[1200], sess[64] = "";

	c->ok = 1;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	inet_pton(AF_INET, host, &sa.sin_addr);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		failf(c, "connect");
		return -1;
	}
	snprintf(url, sizeof(url), "rtsp://%s:%d%s", host, port, path);
	snprintf(req, sizeof(req), "DESCRIBE %s RTSP/1.0\r\nCSeq: 1\r\nAccept: application/sdp\r\n\r\n", url);
	if (request(c, c->fd, req, resp, sizeof(resp)) < 0 || strncmp(resp, "RTSP/1.0 200", 12) ||
	    !strstr(resp, "sprop-parameter-sets=") || !strstr(resp, "packetization-mode=1") ||
	    !strstr(resp, "profile-level-id=")) {
		failf(c, "DESCRIBE: no 200 with sprop-parameter-sets/profile-level-id");
		return -1;
	}
	/* the stream's control URL: the last a=control (the media's), absolute
	 * or relative to the URL */
	char track[2400], ctl[1100] = ""; /* url "/" ctl */
	for (const char *a = strstr(resp, "a=control:"); a; a = strstr(a + 1, "a=control:"))
		sscanf(a + 10, "%1099[^\r\n]", ctl);
	if (!strncmp(ctl, "rtsp://", 7))
		snprintf(track, sizeof(track), "%s", ctl);
	else if (*ctl && strcmp(ctl, "*"))
		snprintf(track, sizeof(track), "%s/%s", url, ctl);
	else
		snprintf(track, sizeof(track), "%s", url);
	snprintf(req, sizeof(req), "SETUP %s RTSP/1.0\r\nCSeq: 2\r\n"
		 "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n", track);
	if (request(c, c->fd, req, resp, sizeof(resp)) < 0 || strncmp(resp, "RTSP/1.0 200", 12)) {
		failf(c, "SETUP failed");
		return -1;
	}
	char *s = strstr(resp, "Session: ");
	if (!s || sscanf(s + 9, "%63[^;\r]", sess) != 1 || !strstr(s, "timeout=")) {
		failf(c, "SETUP: no Session with timeout");
		return -1;
	}
	snprintf(req, sizeof(req), "PLAY %s RTSP/1.0\r\nCSeq: 3\r\nSession: %s\r\n\r\n", url, sess);
	if (request(c, c->fd, req, resp, sizeof(resp)) < 0 || strncmp(resp, "RTSP/1.0 200", 12)) {
		failf(c, "PLAY failed");
		return -1;
	}
	c->t0 = now_s();
	c->t0_real = clock_s(CLOCK_REALTIME);
	return 0;
}

static void nal_check(struct cl *c, uint8_t type)
{
	if (type == 0 || type > 23) {
		failf(c, "reassembled NAL unit of invalid type");
		return;
	}
	if (type == 7)
		c->au_has_sps = 1;
	if (type == 8)
		c->au_has_pps = 1;
	if (type == 5)
		c->au_has_idr = 1;
}

static void au_end(struct cl *c, double fps)
{
	if (!c->first_idr_checked) {
		c->first_idr_checked = 1;
		c->join_ms = (now_s() - c->t0) * 1000;
		if (!c->au_has_idr || !c->au_has_sps || !c->au_has_pps)
		{
			char why[100];
			snprintf(why, sizeof(why), "first access unit is not an IDR with SPS and PPS "
				 "(idr %d sps %d pps %d)", c->au_has_idr, c->au_has_sps, c->au_has_pps);
			failf(c, why);
		}
	}
	(void)fps;
	if (c->sr_seen && c->n_lat < (int)(sizeof(c->lat) / sizeof(c->lat[0]))) {
		/* the sender report maps RTP time to the capture's wall clock;
		 * frames captured before PLAY (the kept GOP) are left out */
		double cap = c->sr_ntp + (double)(int32_t)(c->ts - c->sr_ts) / 90000.0;

		if (cap >= c->t0_real)
			c->lat[c->n_lat++] = clock_s(CLOCK_REALTIME) - cap;
	}
	c->au_count++;
	c->au_has_sps = c->au_has_pps = c->au_has_idr = 0;
	c->in_au = 0;
}

static void rtp(struct cl *c, const uint8_t *p, size_t n, double fps)
{
	char why[160];

	if (n < 13 || (p[0] & 0xc0) != 0x80 || (p[1] & 0x7f) != 96) {
		failf(c, "bad RTP header");
		return;
	}
	uint16_t seq = (uint16_t)(p[2] << 8 | p[3]);
	uint32_t ts = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
	int marker = p[1] >> 7;

	if (c->have_seq && seq != (uint16_t)(c->seq + 1)) {
		snprintf(why, sizeof(why), "sequence jumps %u -> %u", c->seq, seq);
		failf(c, why);
	}
	if (c->in_au && ts != c->ts)
		failf(c, "timestamp changed inside an access unit (marker missing)");
	if (!c->in_au && c->have_seq) {
		int32_t d = (int32_t)(ts - c->ts);

		if (d == 0)
			failf(c, "marker bit before the end of an access unit (its timestamp goes on)");
		else if (d < 0)
			failf(c, "timestamp going back between access units");
		c->ts_step_sum += d;
		c->ts_steps++;
	}
	if (!c->have_seq)
		c->first_ts = ts;
	c->have_seq = 1;
	c->seq = seq;
	c->ts = ts;
	c->in_au = 1;
	c->packets++;
	const uint8_t *pl = p + 12;
	size_t pn = n - 12;
	uint8_t type = pl[0] & 0x1f;

	if (pl[0] & 0x80)
		failf(c, "forbidden bit set");
	if (type == 28) {
		if (pn < 3) {
			failf(c, "short FU-A");
			return;
		}
		int s = pl[1] >> 7, e = (pl[1] >> 6) & 1;
		if (s && c->fu_open)
			failf(c, "FU-A start inside a fragmented NAL unit");
		if (!s && !c->fu_open)
			failf(c, "FU-A continuation without a start");
		if (s) {
			c->fu_open = 1;
			c->fu_type = pl[1] & 0x1f;
			c->fu_len = 1;
		}
		c->fu_len += pn - 2;
		if (e) {
			c->fu_open = 0;
			nal_check(c, c->fu_type);
		}
		if (marker && !e)
			failf(c, "marker on a packet that does not end its NAL unit");
	} else if (type == 24) {
		/* STAP-A: NAL units, each behind its 16-bit size */
		size_t off = 1;

		if (c->fu_open)
			failf(c, "STAP-A inside a fragmented NAL unit");
		if (pn < 4)
			failf(c, "empty STAP-A");
		c->staps++;
		while (off + 2 <= pn) {
			size_t k = (size_t)pl[off] << 8 | pl[off + 1];

			if (!k || off + 2 + k > pn) {
				failf(c, "STAP-A unit size past the packet");
				return;
			}
			if (pl[off + 2] & 0x80)
				failf(c, "forbidden bit set in a STAP-A unit");
			nal_check(c, pl[off + 2] & 0x1f);
			off += 2 + k;
		}
		if (off != pn)
			failf(c, "STAP-A with trailing bytes");
	} else {
		if (c->fu_open)
			failf(c, "single NAL unit inside a fragmented one");
		nal_check(c, type);
	}
	if (marker)
		au_end(c, fps);
}

static void rtcp(struct cl *c, const uint8_t *p, size_t n)
{
	if (n >= 28 && p[1] == 200) {
		uint32_t sec = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
		uint32_t frac = (uint32_t)p[12] << 24 | (uint32_t)p[13] << 16 | (uint32_t)p[14] << 8 | p[15];
		double ntp_unix = (double)sec - 2208988800.0;

		c->sr_seen = 1;
		c->sr_ntp = ntp_unix + (double)frac / 4294967296.0;
		c->sr_ts = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19];
		if (ntp_unix > (double)time(NULL) - 10 && ntp_unix < (double)time(NULL) + 10)
			c->sr_ok = 1;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q quantile of v[0..n) (sorts v); -1 when empty. */
static double pct(double *v, int n, double q)
{
	if (n <= 0)
		return -1;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(int)(q * (n - 1) + 0.5)];
}

/* Takes the whole packets in c's buffer. */
static void parse(struct cl *c, double fps)
{
	size_t off = 0;
	while (c->len - off >= 4) {
		uint8_t *p = c->buf + off;

		if (p[0] != '$') { /* a response (keep-alive answer): skip its head */
			uint8_t *e = memmem(p, c->len - off, "\r\n\r\n", 4);
			if (!e)
				break;
			off = (size_t)(e + 4 - c->buf);
			continue;
		}
		size_t n = (size_t)p[2] << 8 | p[3];
		if (c->len - off < 4 + n)
			break;
		if (p[1] == 0)
			rtp(c, p + 4, n, fps);
		else if (p[1] == 1)
			rtcp(c, p + 4, n);
		off += 4 + n;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
}

/* Reads what is there; returns -1 on EOF. */
static int pump(struct cl *c, double fps)
{
	ssize_t k = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);

	if (k <= 0)
		return -1;
	c->len += (size_t)k;
	parse(c, fps);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 1, opt;
	double secs = 5, fps = 0;
	const char *mode = "play";

	while ((opt = getopt(argc, argv, "n:t:f:m:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'f': fps = atof(optarg); break;
		case 'm': mode = optarg; break;
		default: return 2;
		}
	}
	if (argc - optind != 3 || n < 1 || n > MAXC) {
		fprintf(stderr, "usage: rtsp_check [-n N] [-t S] [-f FPS] [-m play|mute|vanish] HOST PORT PATH\n");
		return 2;
	}
	static struct cl cls[MAXC];
	int bad = 0;

	for (int i = 0; i < n; i++) {
		start(&cls[i], argv[optind], atoi(argv[optind + 1]), argv[optind + 2]);
		if (cls[i].ok && cls[i].len)
			parse(&cls[i], fps);
	}
	if (!strcmp(mode, "vanish")) {
		sleep((unsigned)secs);
		return 0;
	}
	double until = now_s() + secs;
	while (now_s() < until) {
		struct pollfd p[MAXC];

		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){ cls[i].ok && !cls[i].done ? cls[i].fd : -1, POLLIN, 0 };
		if (poll(p, (nfds_t)n, 200) <= 0)
			continue;
		for (int i = 0; i < n; i++)
			if (p[i].revents && pump(&cls[i], fps) < 0)
				cls[i].done = 1;
	}
	for (int i = 0; i < n; i++) {
		struct cl *c = &cls[i];

		if (!strcmp(mode, "mute")) {
			if (c->ok && !c->done)
				failf(c, "no keep-alive, yet the session was not ended");
		} else {
			char why[160];

			if (c->ok && c->done)
				failf(c, "connection closed by the server");
			if (c->ok && c->au_count < 2)
				failf(c, "fewer than 2 access units");
			/* the first access unit has SPS and PPS (checked above) */
			if (c->ok && !c->staps)
				failf(c, "SPS and PPS not in one STAP-A packet");
			if (c->ok && (!c->sr_seen || !c->sr_ok))
				failf(c, c->sr_seen ? "sender report NTP time off the wall clock"
						    : "no RTCP sender report");
			if (c->ok && fps > 0 && c->ts_steps) {
				double step = c->ts_step_sum / c->ts_steps, want = 90000 / fps;
				if (step < want * 0.8 || step > want * 1.25) {
					snprintf(why, sizeof(why), "mean timestamp step %.0f, %.0f expected",
						 step, want);
					failf(c, why);
				}
			}
			if (c->ok && c->ts_steps && fps > 0) {
				/* the 90 kHz clock against the wall clock */
				double media = (double)(uint32_t)(c->ts - c->first_ts) / 90000.0;
				double wall = now_s() - c->t0;
				if (media < wall * 0.6 || media > wall * 1.3) {
					snprintf(why, sizeof(why), "%.2f s of media in %.2f s", media, wall);
					failf(c, why);
				}
			}
		}
		if (c->ok)
			printf("client %d: OK %d access units, %ld packets (%d STAP-A), first after %.0f ms, "
			       "latency p50 %.1f p99 %.1f ms\n", i, c->au_count, c->packets, c->staps,
			       c->join_ms, pct(c->lat, c->n_lat, 0.5) * 1e3, pct(c->lat, c->n_lat, 0.99) * 1e3);
		else
			printf("client %d: FAIL %s (%d access units)\n", i, c->why, c->au_count);
		bad += !c->ok;
	}
	return bad ? 1 : 0;
}
