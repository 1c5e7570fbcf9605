/* Shared by the libFuzzer harnesses: an input as a C string, and the one
 * way a harness reports a broken invariant (abort, which libFuzzer records
 * as a crash with the input that caused it). */
#ifndef VC_FUZZ_H
#define VC_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The input copied into its own heap block plus a NUL (the parsers take C
 * strings; ASan sees a read past the terminator). Never NULL. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#define FUZZ_ASSERT(cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",      \
				__FILE__, __LINE__, #cond);                   \
			abort();                                              \
		}                                                             \
	} while (0)

#endif
