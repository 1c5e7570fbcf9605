/* Connections waiting for their request head (server/http/headwait.c): an
 * address gets at most VC_HEADWAIT_PER_IP; once `busy` wait in all, an
 * address with one waiting gets no other while a new address still gets
 * in; a head or a close frees the place; IPv4 and v4-mapped IPv6 are one
 * address; a connection counts only once it waited past the grace. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "check.h"
#include "server/http/headwait.h"

static struct sockaddr_in v4(const char *a, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

#define SA(x) ((const struct sockaddr *)(const void *)&(x))
/* connections started at 0 ms are judged here, past the grace */
#define LATER (VC_HEADWAIT_GRACE_MS + 1)

static void per_address(void)
{
	struct vc_headwait *w;
	struct vc_headwait_conn *c[VC_HEADWAIT_PER_IP + 1];
	struct sockaddr_in a = v4("10.0.0.1", 1), b = v4("10.0.0.2", 1);

	CHECK(vc_headwait_new(100, &w) == 0, "new");
	for (int i = 0; i < VC_HEADWAIT_PER_IP; i++) {
		CHECK(vc_headwait_admit(w, SA(a), LATER) == 1, "connection %d refused", i);
		c[i] = vc_headwait_start(w, SA(a), 0);
	}
	CHECK(vc_headwait_admit(w, SA(a), LATER) == 0, "one more than %d admitted", VC_HEADWAIT_PER_IP);
	CHECK(vc_headwait_admit(w, SA(b), LATER) == 1, "another address refused");
	CHECK(vc_headwait_count(w) == VC_HEADWAIT_PER_IP, "count %u", vc_headwait_count(w));
	vc_headwait_got_head(c[0]);
	vc_headwait_got_head(c[0]); /* twice: counted once */
	CHECK(vc_headwait_count(w) == VC_HEADWAIT_PER_IP - 1, "count %u", vc_headwait_count(w));
	CHECK(vc_headwait_admit(w, SA(a), LATER) == 1, "a head arrived: room again");
	vc_headwait_end(c[1]);
	CHECK(vc_headwait_count(w) == VC_HEADWAIT_PER_IP - 2, "count %u", vc_headwait_count(w));
	for (int i = 0; i < VC_HEADWAIT_PER_IP; i++)
		if (i != 1)
			vc_headwait_end(c[i]);
	CHECK(vc_headwait_count(w) == 0, "count %u", vc_headwait_count(w));
	vc_headwait_end(NULL);
	vc_headwait_got_head(NULL);
	vc_headwait_free(w);
}

/* 32 flooding addresses: once 8 wait in all, each of them gets no more,
 * a fresh address still gets in. */
static void busy(void)
{
	struct vc_headwait *w;
	struct vc_headwait_conn *c[64];
	int n = 0, refused = 0;
	char ip[32];

	CHECK(vc_headwait_new(8, &w) == 0, "new");
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 32; i++) {
			snprintf(ip, sizeof(ip), "127.0.0.%d", 2 + i);
			struct sockaddr_in a = v4(ip, 1000 + i);

			if (!vc_headwait_admit(w, SA(a), LATER)) {
				refused++;
				continue;
			}
			c[n++] = vc_headwait_start(w, SA(a), 0);
		}
	/* 32 first connections (one per address), all second ones refused */
	CHECK(n == 32 && refused == 32, "%d admitted, %d refused", n, refused);
	struct sockaddr_in fresh = v4("127.0.0.1", 5);
	struct sockaddr_in6 mapped = { .sin6_family = AF_INET6 };

	CHECK(vc_headwait_admit(w, SA(fresh), LATER) == 1, "a new viewer refused");
	inet_pton(AF_INET6, "::ffff:127.0.0.2", &mapped.sin6_addr);
	CHECK(vc_headwait_admit(w, SA(mapped), LATER) == 0, "v4-mapped 127.0.0.2 is not the same address");
	for (int i = 0; i < n; i++)
		vc_headwait_end(c[i]);
	CHECK(vc_headwait_admit(w, SA(mapped), LATER) == 1, "all closed: refused still");
	vc_headwait_free(w);
}

/* One client opening 30 connections at once (a dashboard): none is
 * refused while their heads are on the way; left without heads past the
 * grace, they count, and the address gets no more. */
static void burst_within_grace(void)
{
	struct vc_headwait *w;
	struct vc_headwait_conn *c[30];
	struct sockaddr_in a = v4("10.0.0.9", 1);
	int refused = 0;

	CHECK(vc_headwait_new(64, &w) == 0, "new");
	for (int i = 0; i < 30; i++) {
		if (!vc_headwait_admit(w, SA(a), 1000 + i)) {
			refused++;
			c[i] = NULL;
			continue;
		}
		c[i] = vc_headwait_start(w, SA(a), 1000 + i);
	}
	CHECK(refused == 0, "%d of 30 refused within %d ms", refused, 30);
	CHECK(vc_headwait_admit(w, SA(a), 1000 + VC_HEADWAIT_GRACE_MS + 30) == 0,
	      "30 waiting past the grace, one more admitted");
	for (int i = 0; i < 30; i++)
		vc_headwait_end(c[i]);
	vc_headwait_free(w);
}

int main(void)
{
	RUN("headwait", per_address);
	RUN("headwait", busy);
	RUN("headwait", burst_within_grace);
	CHECK_EXIT();
}
