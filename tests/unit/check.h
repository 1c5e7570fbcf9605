/* Minimal unit-test harness: every CHECK reports file:line on failure; each
 * test function prints one "suite.name: OK|FAIL" line, the runner counts them.
 * Vector tables pass their own line numbers with CHECK_AT so a failing row is
 * found at once. */
#ifndef VC_TEST_CHECK_H
#define VC_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Failures in the running test function; reset by RUN(). Test binaries are
 * single-threaded, so one counter is enough. */
static int check_failures;
static int check_total_failed;

#define CHECK_AT(line, cond, ...)                                             \
	do {                                                                  \
		if (!(cond)) {                                                \
			check_failures++;                                     \
			fprintf(stdout, "  %s:%d: check failed: %s: ",        \
				__FILE__, (int)(line), #cond);                \
			fprintf(stdout, __VA_ARGS__);                         \
			fputc('\n', stdout);                                  \
		}                                                             \
	} while (0)

#define CHECK(cond, ...) CHECK_AT(__LINE__, cond, __VA_ARGS__)

#define RUN(suite, fn)                                                        \
	do {                                                                  \
		check_failures = 0;                                           \
		fn();                                                         \
		printf("%s.%s: %s\n", suite, #fn,                             \
		       check_failures ? "FAIL" : "OK");                       \
		if (check_failures)                                           \
			check_total_failed++;                                 \
		fflush(stdout);                                               \
	} while (0)

#define CHECK_EXIT() return check_total_failed ? 1 : 0

/* Canary: output buffers are allocated CANARY_LEN bytes larger and filled
 * with CANARY_BYTE; canary_intact() tells whether a writer overran. */
#define CANARY_BYTE 0xA5
#define CANARY_LEN 64
static inline int canary_intact(const unsigned char *buf, size_t used)
{
	for (size_t i = 0; i < CANARY_LEN; i++)
		if (buf[used + i] != CANARY_BYTE)
			return 0;
	return 1;
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* One xorshift32 step: reproducible pseudo-random test data. Each test keeps
 * its own state (its seed, never 0), so adding draws to one test does not
 * change another's data. */
static inline uint32_t check_xorshift(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

#endif
