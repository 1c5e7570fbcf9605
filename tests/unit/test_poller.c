/* One-shot pollers (server/stream/poller.c): an address + picture counts
 * from its first request until POLLER_LINGER_MS after its last; the port is
 * not part of the address (each poll is a new connection); the table keeps
 * at most POLLER_MAX, forgetting the one seen longest ago. */
#include <arpa/inet.h>
#include <linux/videodev2.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "server/stream/poller.h"

#define MS 1000LL
#define LINGER_US (POLLER_LINGER_MS * MS)

static struct sockaddr_in v4(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static const struct vc_request def = { V4L2_PIX_FMT_MJPEG, 1280, 720, 30, 0, 0, 0 };
static const struct vc_request thumb = { V4L2_PIX_FMT_MJPEG, 320, 180, 30, 0, 0, 0 };

/* A poll every 5 s keeps one entry; another port of the same address is the
 * same poller; another picture or address is another. */
static void note_and_refresh(void)
{
	struct pollers ps;
	struct sockaddr_in a = v4("192.0.2.1", 40000), a2 = v4("192.0.2.1", 40001);
	struct sockaddr_in b = v4("192.0.2.2", 40000);
	int64_t t = 1000 * MS;

	memset(&ps, 0xff, sizeof(ps));
	ps.n = 0;
	CHECK(poller_note(&ps, (struct sockaddr *)&a, &def, t) == 1 && ps.n == 1, "first poll: n %u",
	      ps.n);
	for (int i = 1; i <= 24; i++)
		CHECK(poller_note(&ps, (struct sockaddr *)(i % 2 ? &a2 : &a), &def, t + i * 5000 * MS) == 0,
		      "poll %d counted as new", i);
	CHECK(ps.n == 1 && ps.p[0].last_us == t + 120000 * MS, "2 min of polls: n %u, last %lld",
	      ps.n, (long long)ps.p[0].last_us);
	CHECK(poller_note(&ps, (struct sockaddr *)&a, &thumb, t) == 1 && ps.n == 2,
	      "another picture: n %u", ps.n);
	CHECK(poller_note(&ps, (struct sockaddr *)&b, &def, t) == 1 && ps.n == 3,
	      "another address: n %u", ps.n);
	struct sockaddr_in6 six;
	memset(&six, 0, sizeof(six));
	six.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::1", &six.sin6_addr);
	CHECK(poller_note(&ps, (struct sockaddr *)&six, &def, t) == 1 &&
		      poller_note(&ps, (struct sockaddr *)&six, &def, t + MS) == 0 && ps.n == 4,
	      "IPv6: n %u", ps.n);
	CHECK(poller_note(&ps, NULL, &def, t) == 1 && poller_note(&ps, NULL, &def, t) == 0 &&
		      ps.n == 5,
	      "unknown address: n %u", ps.n);
}

/* A poller counts until POLLER_LINGER_MS after its last request, not a
 * microsecond longer; the next lapse is the earliest; expire keeps the rest. */
static void lapse(void)
{
	struct pollers ps;
	struct sockaddr_in a = v4("192.0.2.1", 1), b = v4("192.0.2.2", 1);
	int64_t t = 50000 * MS;

	memset(&ps, 0, sizeof(ps));
	CHECK(poller_next_lapse(&ps) == 0, "no poller: lapse %lld", (long long)poller_next_lapse(&ps));
	poller_note(&ps, (struct sockaddr *)&a, &def, t);
	poller_note(&ps, (struct sockaddr *)&b, &def, t + 30000 * MS);
	CHECK(poller_active(&ps.p[0], t + LINGER_US - 1) && !poller_active(&ps.p[0], t + LINGER_US),
	      "active until %d ms after its last poll", POLLER_LINGER_MS);
	CHECK(POLLER_LINGER_MS >= 60000 + 5000, "linger %d ms: shorter than a 60 s poll + 5 s answer",
	      POLLER_LINGER_MS);
	CHECK(poller_next_lapse(&ps) == t + LINGER_US, "next lapse %lld",
	      (long long)poller_next_lapse(&ps));
	CHECK(poller_expire(&ps, t + LINGER_US - 1) == 0 && ps.n == 2, "expired early: n %u", ps.n);
	/* a's poll 60 s later, b silent: b goes first */
	poller_note(&ps, (struct sockaddr *)&a, &def, t + 60000 * MS);
	CHECK(poller_expire(&ps, t + 30000 * MS + LINGER_US) == 1 && ps.n == 1 &&
		      ps.p[0].last_us == t + 60000 * MS,
	      "b lapsed, a kept: n %u", ps.n);
	CHECK(poller_expire(&ps, t + 60000 * MS + LINGER_US) == 1 && ps.n == 0, "a lapsed: n %u",
	      ps.n);
}

/* Past POLLER_MAX the one seen longest ago is replaced: the table never grows. */
static void bounded(void)
{
	struct pollers ps;
	struct sockaddr_in a = v4("192.0.2.1", 1);
	int64_t t = 1000 * MS;

	memset(&ps, 0, sizeof(ps));
	for (unsigned i = 0; i < POLLER_MAX + 10; i++) {
		struct vc_request q = def;

		q.width = 100 + i;
		poller_note(&ps, (struct sockaddr *)&a, &q, t + i * MS);
	}
	int64_t oldest = INT64_MAX;
	for (unsigned i = 0; i < ps.n; i++)
		if (ps.p[i].last_us < oldest)
			oldest = ps.p[i].last_us;
	CHECK(ps.n == POLLER_MAX && oldest == t + 10 * MS, "n %u, oldest kept %lld", ps.n,
	      (long long)oldest);
}

int main(void)
{
	RUN("poller", note_and_refresh);
	RUN("poller", lapse);
	RUN("poller", bounded);
	CHECK_EXIT();
}
