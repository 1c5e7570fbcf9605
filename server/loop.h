/* The process's libevent loop, made one way for the daemon and for the
 * benchmarks that run its serving stack. */
#ifndef VC_LOOP_H
#define VC_LOOP_H

struct event_base;

/* Turns on libevent's pthread locking (worker threads hand results back
 * through the loop) and returns a new loop whose timers fire at their
 * microsecond (EVENT_BASE_FLAG_PRECISE_TIMER: epoll's millisecond timeout
 * would make every timer-paced frame late by up to a few ms); a plain loop
 * when that cannot be had. NULL when no loop can be made. The caller frees
 * it with event_base_free(). */
struct event_base *vc_loop_new(void);

#endif
