/* vc_loop_new (loop.h): the one place the event loop's options are chosen.
 * Timer-paced sources (the test pattern, faults) dequeue on a timer at the
 * frame's due time; with epoll's millisecond timeouts libevent rounds every
 * wait up, and the bench measured 2-3 ms more capture -> client latency. */
#define LOG_PREFIX "loop: "
#include "server/loop.h"

#include <event2/event.h>
#include <event2/thread.h>

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
