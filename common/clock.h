/* The monotonic clock in the units the daemon counts in (rate limits,
 * timeouts, uptime), and the calling thread's CPU clock (how long the
 * event loop's turns ran): one definition instead of a copy per file. */
#ifndef VC_CLOCK_H
#define VC_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds / microseconds. */
int64_t vc_mono_ms(void);
int64_t vc_mono_us(void);

/* CLOCK_THREAD_CPUTIME_ID in microseconds: the CPU time the calling thread
 * has used, which time the kernel gives other threads does not advance. */
int64_t vc_thread_cpu_us(void);

#endif
