/* The monotonic and thread CPU clocks (see clock.h). */
#include "common/clock.h"

#include <time.h>

int64_t vc_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t vc_mono_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

int64_t vc_thread_cpu_us(void)
{
	return clock_us(CLOCK_THREAD_CPUTIME_ID);
}
