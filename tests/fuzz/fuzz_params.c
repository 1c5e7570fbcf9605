/* URL query parameters (common/params.c): any query string parses or gives
 * a printable one-line error; what parses is inside the documented ranges. */
#include "tests/fuzz/fuzz.h"

#include "common/log.h"
#include "common/params.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = fuzz_cstr(data, size);
	struct vc_params p;
	char err[128];

	memset(&p, 0xff, sizeof(p));
	memset(err, 0xff, sizeof(err));
	if (vc_params_parse(q, &p, err, sizeof(err)) == 0) {
		FUZZ_ASSERT(memchr(p.cam, '\0', sizeof(p.cam)));
		FUZZ_ASSERT(memchr(p.unknown, '\0', sizeof(p.unknown)));
		FUZZ_ASSERT(p.req.width <= 16384 && p.req.height <= 16384);
		FUZZ_ASSERT(p.req.fps <= 1000 && p.req.quality <= 100);
		FUZZ_ASSERT(p.req.rotate < 360 && p.req.flip <= 3);
		FUZZ_ASSERT(p.max_age_ms <= 86400000);
	} else {
		size_t n = strnlen(err, sizeof(err));

		FUZZ_ASSERT(n > 0 && n < sizeof(err));
		for (size_t i = 0; i < n; i++) /* quoted input is escaped */
			FUZZ_ASSERT(err[i] >= 0x20 && err[i] < 0x7f);
	}
	free(q);
	return 0;
}
