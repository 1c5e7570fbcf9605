/* The fault-injecting fake source: a test-pattern source with a script of
 * failures a real device produces, so capture.c's recovery paths run in unit
 * tests without hardware.
 *
 * Path: "fault:<rules>" or "fault:<rules>;<test path>", rules separated by
 * ',' (default inner source "test:64x48@100:YUYV"):
 *   open=K       the next K opens fail with -ENOENT (device absent)
 *   streamon=K   the next K start() calls fail with -EINVAL
 *   enodev@N     dequeue fails with -ENODEV after N frames, once; the next
 *                open fails with -ENOENT (unplugged) unless open= says more
 *   replug@N     like enodev@N, but on every instance: unplugged after each
 *                N frames, back at the second open (repeated replug cycles)
 *   qbuf@N       the N-th queue() fails with -ENODEV, once
 *   error@N      frame N (per instance, counted from 0) has the ERROR flag, once
 *   short@N      frame N is half its size, once
 *   stall@N      no frame after frame N until reopened, once
 *   event@N      a source-change event after frame N, once
 * "once" rules fire on the first instance that reaches them: their state is
 * kept per path across reopens, as a real device's faults would be. */
#define LOG_PREFIX "faultsrc: "
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/capture/source.h"

enum { R_ENODEV, R_QBUF, R_ERROR, R_SHORT, R_STALL, R_EVENT, R_REPLUG, R_COUNT };
static const char *const rule_names[R_COUNT] = { "enodev", "qbuf", "error", "short", "stall",
						 "event", "replug" };

/* What survives a reopen: remaining open/start failures and which one-shot
 * rules already fired. */
struct fault_state {
	char path[160];
	int open_fail, streamon_fail;
	int fired[R_COUNT];
};

/* Process-wide because a reopened instance must see the same device state
 * as the one that failed (capture.c closes and opens anew); a handful of
 * entries, locked since tests may run cameras from several threads. */
static struct fault_state states[16];
static size_t n_states;
static pthread_mutex_t states_mu = PTHREAD_MUTEX_INITIALIZER;

struct faultsrc {
	struct vc_src base;
	struct vc_src *in;
	struct fault_state *st;
	long at[R_COUNT];  /* frame/queue number of each rule, -1 = none */
	long frames, queues;
	int stalled, gone, event_pending;
};

static struct faultsrc *fs_of(struct vc_src *s)
{
	return (struct faultsrc *)s;
}

static int parse_rules(const char *r, size_t n, long at[R_COUNT], int *open_fail,
		       int *streamon_fail)
{
	char buf[160];

	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, r, n);
	buf[n] = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *sep = strpbrk(t, "=@");
		char *end;
		long v;
		int k;

		if (!sep)
			return -EINVAL;
		v = strtol(sep + 1, &end, 10);
		if (*end || end == sep + 1 || v < 0)
			return -EINVAL;
		*sep = 0;
		if (!strcmp(t, "open")) {
			*open_fail = (int)v;
			continue;
		}
		if (!strcmp(t, "streamon")) {
			*streamon_fail = (int)v;
			continue;
		}
		for (k = 0; k < R_COUNT && strcmp(t, rule_names[k]); k++)
			;
		if (k == R_COUNT)
			return -EINVAL;
		at[k] = v;
	}
	return 0;
}

static int fs_open(const char *path, struct vc_src **out)
{
	const char *rules = path + strlen("fault:");
	const char *semi = strchr(rules, ';');
	const char *inner = semi ? semi + 1 : "test:64x48@100:YUYV";
	long at[R_COUNT];
	int open_fail = 0, streamon_fail = 0, ret;
	struct fault_state *st = NULL;

	if (strncmp(path, "fault:", 6) || strlen(path) >= sizeof(states[0].path))
		return -EINVAL;
	for (int k = 0; k < R_COUNT; k++)
		at[k] = -1;
	ret = parse_rules(rules, semi ? (size_t)(semi - rules) : strlen(rules), at, &open_fail,
			  &streamon_fail);
	if (ret < 0) {
		log_error("%s: bad fault script", path);
		return ret;
	}
	pthread_mutex_lock(&states_mu);
	for (size_t i = 0; i < n_states; i++)
		if (!strcmp(states[i].path, path))
			st = &states[i];
	if (!st && n_states < sizeof(states) / sizeof(states[0])) {
		st = &states[n_states++];
		memset(st, 0, sizeof(*st));
		strcpy(st->path, path);
		st->open_fail = open_fail;
		st->streamon_fail = streamon_fail;
	}
	if (st && st->open_fail > 0) {
		st->open_fail--;
		pthread_mutex_unlock(&states_mu);
		return -ENOENT;
	}
	pthread_mutex_unlock(&states_mu);
	if (!st)
		return -ENOMEM;

	struct faultsrc *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = vc_src_test.open(inner, &f->in);
	if (ret < 0) {
		free(f);
		return ret;
	}
	f->base.ops = &vc_src_fault;
	f->st = st;
	memcpy(f->at, at, sizeof(at));
	*out = &f->base;
	return 0;
}

static void fs_close(struct vc_src *s)
{
	struct faultsrc *f = fs_of(s);

	f->in->ops->close(f->in);
	free(f);
}

static int fs_get_caps(struct vc_src *s, struct vc_caps *caps)
{
	return vc_src_test.get_caps(fs_of(s)->in, caps);
}

static int fs_set_mode(struct vc_src *s, const struct vc_mode *want, int try_only,
		       struct vc_src_format *out)
{
	return vc_src_test.set_mode(fs_of(s)->in, want, try_only, out);
}

static int fs_get_format(struct vc_src *s, struct vc_src_format *out)
{
	return vc_src_test.get_format(fs_of(s)->in, out);
}

static int fs_start(struct vc_src *s, unsigned n, unsigned *n_actual)
{
	struct faultsrc *f = fs_of(s);
	int fail;

	if (f->gone)
		return -ENODEV;
	pthread_mutex_lock(&states_mu);
	fail = f->st->streamon_fail > 0;
	if (fail)
		f->st->streamon_fail--;
	pthread_mutex_unlock(&states_mu);
	if (fail)
		return -EINVAL;
	f->stalled = 0;
	return vc_src_test.start(f->in, n, n_actual);
}

static void fs_stop(struct vc_src *s)
{
	vc_src_test.stop(fs_of(s)->in);
}

static int fs_fd(struct vc_src *s)
{
	(void)s;
	return -1;
}

static int64_t fs_next_due(struct vc_src *s)
{
	struct faultsrc *f = fs_of(s);

	if (f->stalled)
		return -1;
	return vc_src_test.next_due(f->in);
}

/* Whether one-shot rule k applies at count n; marks it fired. */
static int fire(struct faultsrc *f, int k, long n)
{
	int hit = 0;

	if (f->at[k] < 0 || n < f->at[k])
		return 0;
	pthread_mutex_lock(&states_mu);
	if (!f->st->fired[k]) {
		f->st->fired[k] = 1;
		hit = 1;
	}
	pthread_mutex_unlock(&states_mu);
	return hit;
}

static int fs_dequeue(struct vc_src *s, struct vc_src_buf *b)
{
	struct faultsrc *f = fs_of(s);
	int ret;

	if (f->gone)
		return -ENODEV;
	if (f->stalled)
		return -EAGAIN;
	if (fire(f, R_ENODEV, f->frames) || (f->at[R_REPLUG] >= 0 && f->frames >= f->at[R_REPLUG])) {
		f->gone = 1;
		/* Unplugged: the node stays away for the next open. */
		pthread_mutex_lock(&states_mu);
		if (f->st->open_fail < 1)
			f->st->open_fail = 1;
		pthread_mutex_unlock(&states_mu);
		return -ENODEV;
	}
	ret = vc_src_test.dequeue(f->in, b);
	if (ret < 0)
		return ret;
	long n = f->frames++;
	if (fire(f, R_ERROR, n))
		b->flags |= VC_SRC_BUF_ERROR;
	if (fire(f, R_SHORT, n))
		b->bytesused[0] /= 2;
	if (fire(f, R_STALL, n))
		f->stalled = 1;
	if (fire(f, R_EVENT, n))
		f->event_pending = 1;
	return 0;
}

static int fs_queue(struct vc_src *s, unsigned index)
{
	struct faultsrc *f = fs_of(s);
	int ret = vc_src_test.queue(f->in, index);

	if (ret < 0)
		return ret;
	if (f->gone)
		return -ENODEV;
	if (fire(f, R_QBUF, f->queues++)) {
		f->gone = 1;
		return -ENODEV;
	}
	return 0;
}

static int fs_get_event(struct vc_src *s, struct vc_src_event *ev)
{
	struct faultsrc *f = fs_of(s);

	if (!f->event_pending)
		return 0;
	f->event_pending = 0;
	memset(ev, 0, sizeof(*ev));
	ev->type = VC_SRC_EV_SOURCE_CHANGE;
	return 1;
}

const struct vc_src_ops vc_src_fault = {
	.name = "fault",
	.open = fs_open,
	.close = fs_close,
	.get_caps = fs_get_caps,
	.set_mode = fs_set_mode,
	.get_format = fs_get_format,
	.start = fs_start,
	.stop = fs_stop,
	.fd = fs_fd,
	.next_due = fs_next_due,
	.dequeue = fs_dequeue,
	.queue = fs_queue,
	.get_event = fs_get_event,
};
