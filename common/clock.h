/* The monotonic clock in the units the daemon counts in (rate limits,
 * timeouts, uptime): one definition instead of a copy per file. */
#ifndef VC_CLOCK_H
#define VC_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds / microseconds. */
int64_t vc_mono_ms(void);
int64_t vc_mono_us(void);

#endif
