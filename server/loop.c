/* vc_loop_new (loop.h): the one place the event loop's options are chosen;
 * vc_loop_run: the loop run turn by turn, each turn's CPU time counted.
 * Timer-paced sources (the test pattern, faults) dequeue on a timer at the
 * frame's due time; with epoll's millisecond timeouts libevent rounds every
 * wait up, and the bench measured 2-3 ms more capture -> client latency. */
#define LOG_PREFIX "loop: "
#include "server/loop.h"

#include <event2/event.h>
#include <event2/thread.h>

#include "common/clock.h"
#include "common/log.h"

struct event_base *vc_loop_new(void)
{
	struct event_config *cfg;
	struct event_base *base = NULL;

	if (evthread_use_pthreads() < 0)
		log_warn("no libevent thread support");
	cfg = event_config_new();
	if (cfg) {
		if (event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == 0)
			base = event_base_new_with_config(cfg);
		event_config_free(cfg);
	}
	if (!base) {
		log_warn("no precise-timer loop; timers round to milliseconds");
		base = event_base_new();
	}
	return base;
}

/* Prometheus-style upper bounds: a turn that serves requests and frames
 * takes well under 1 ms; 25 ms and more is work that belongs on a worker
 * (one yescrypt hash is tens of ms). */
const uint32_t vc_loop_bucket_us[VC_LOOP_BUCKETS] = { 1000, 5000, 25000, 100000, 500000 };

static void stats_add(struct vc_loop_stats *st, uint64_t us)
{
	st->turns++;
	st->sum_us += us;
	if (us > st->max_us)
		st->max_us = us;
	for (int k = 0; k < VC_LOOP_BUCKETS; k++)
		st->le[k] += us <= vc_loop_bucket_us[k];
}

int vc_loop_run(struct event_base *base, struct vc_loop_stats *st)
{
	for (;;) {
		int64_t t0 = vc_thread_cpu_us();
		/* EVLOOP_ONCE: wait (off the CPU clock), run what became active */
		int r = event_base_loop(base, EVLOOP_ONCE);
		int64_t t1 = vc_thread_cpu_us();

		stats_add(st, t1 > t0 ? (uint64_t)(t1 - t0) : 0);
		if (r != 0)
			return r;
		if (event_base_got_break(base) || event_base_got_exit(base))
			return 0;
	}
}
