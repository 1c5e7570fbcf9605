/* The process's libevent loop, made one way for the daemon and for the
 * benchmarks that run its serving stack, and run turn by turn so the
 * daemon can say how long its turns kept the loop busy. */
#ifndef VC_LOOP_H
#define VC_LOOP_H

#include <stdint.h>

struct event_base;

/* Turns on libevent's pthread locking (worker threads hand results back
 * through the loop) and returns a new loop whose timers fire at their
 * microsecond (EVENT_BASE_FLAG_PRECISE_TIMER: epoll's millisecond timeout
 * would make every timer-paced frame late by up to a few ms); a plain loop
 * when that cannot be had. NULL when no loop can be made. The caller frees
 * it with event_base_free(). */
struct event_base *vc_loop_new(void);

/* The loop's turns (one wake-up and the callbacks it ran) by the CPU time
 * each took on the loop thread's own clock: a turn that hashed a password
 * or encoded a frame on the loop shows here however busy the host is,
 * while time the kernel gave other processes does not (the wall clock
 * counts both). le[k] counts the turns of at most vc_loop_bucket_us[k]. */
#define VC_LOOP_BUCKETS 5
extern const uint32_t vc_loop_bucket_us[VC_LOOP_BUCKETS];
struct vc_loop_stats {
	uint64_t turns;
	uint64_t le[VC_LOOP_BUCKETS];
	uint64_t sum_us, max_us;
};

/* event_base_dispatch() that also counts each turn in st (owned by the
 * caller, read on the loop thread: no locking). Returns when the loop is
 * broken or exited (0), has no events left (1), or fails (-1). */
int vc_loop_run(struct event_base *base, struct vc_loop_stats *st);

#endif
