/* Count of connections waiting for their request head, per address (see
 * headwait.h). A list: at most max_clients entries, walked once per
 * accepted connection. */
#include "server/http/headwait.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* An address as 16 bytes (IPv4 as ::ffff:a.b.c.d, as the kernel maps it). */
struct key {
	unsigned char a[16];
};

struct vc_headwait_conn {
	struct vc_headwait *w;
	struct vc_headwait_conn *prev, *next; /* on w's list while waiting */
	int waiting;
	int64_t since_ms; /* accepted at */
	struct key k;
};

struct vc_headwait {
	struct vc_headwait_conn *head;
	unsigned n, busy;
};

static int key_of(const struct sockaddr *sa, struct key *k)
{
	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET6) {
		memcpy(k->a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		return 0;
	}
	if (sa->sa_family == AF_INET) {
		k->a[10] = k->a[11] = 0xff;
		memcpy(k->a + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 0;
	}
	return -EAFNOSUPPORT;
}

int vc_headwait_new(unsigned busy, struct vc_headwait **out)
{
	struct vc_headwait *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->busy = busy ? busy : 1;
	*out = w;
	return 0;
}

void vc_headwait_free(struct vc_headwait *w)
{
	if (!w)
		return;
	/* connections still open belong to MHD, which ends them (and calls
	 * vc_headwait_end) before the daemon is gone: detach what is left */
	for (struct vc_headwait_conn *c = w->head; c; c = c->next)
		c->w = NULL;
	free(w);
}

int vc_headwait_admit(const struct vc_headwait *w, const struct sockaddr *sa, int64_t now_ms)
{
	struct key k;
	unsigned same = 0, same_stale = 0;

	if (!sa || key_of(sa, &k) < 0)
		return 1;
	for (const struct vc_headwait_conn *c = w->head; c; c = c->next)
		if (memcmp(c->k.a, k.a, 16) == 0) {
			same++;
			same_stale += now_ms - c->since_ms >= VC_HEADWAIT_GRACE_MS;
		}
	/* the per-address cap counts connections past the grace only (a
	 * burst of one client's heads is on its way); the pressure rule
	 * counts every waiting one, so a fast flood still meets it */
	if (same_stale >= VC_HEADWAIT_PER_IP)
		return 0;
	return w->n < w->busy || same == 0;
}

struct vc_headwait_conn *vc_headwait_start(struct vc_headwait *w, const struct sockaddr *sa,
					    int64_t now_ms)
{
	struct vc_headwait_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->w = w;
	c->since_ms = now_ms;
	if (sa && key_of(sa, &c->k) == 0) {
		c->waiting = 1;
		c->next = w->head;
		if (w->head)
			w->head->prev = c;
		w->head = c;
		w->n++;
	}
	return c;
}

void vc_headwait_got_head(struct vc_headwait_conn *c)
{
	if (!c || !c->waiting)
		return;
	c->waiting = 0;
	if (!c->w)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		c->w->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->w->n--;
}

void vc_headwait_end(struct vc_headwait_conn *c)
{
	vc_headwait_got_head(c);
	free(c);
}

unsigned vc_headwait_count(const struct vc_headwait *w)
{
	return w->n;
}
