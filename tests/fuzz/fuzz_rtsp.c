/* RTSP input from the network (common/rtsp.c, common/digest.c): any bytes
 * parse to a request within its bounds or are refused; a parsed request's
 * Transport and Authorization headers parse or are refused. Never a crash,
 * never a read past the input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

#include "common/digest.h"
#include "common/rtsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vc_rtsp_req r;
	char *buf = malloc(size ? size : 1); /* exact size: ASan sees over-reads */

	FUZZ_ASSERT(buf);
	memcpy(buf, data, size);
	long n = vc_rtsp_parse(buf, size, &r);
	FUZZ_ASSERT(n <= (long)size);
	FUZZ_ASSERT(n >= 0 || n == -EINVAL || n == -EMSGSIZE);
	if (n > 0) {
		struct vc_rtsp_transport t;
		struct vc_digest d;

		FUZZ_ASSERT(r.method && r.uri && r.n_hdr <= VC_RTSP_MAX_HDRS);
		vc_rtsp_transport(vc_rtsp_header(&r, "Transport"), &t);
		if (vc_digest_parse(vc_rtsp_header(&r, "Authorization"), &d) == 0)
			vc_digest_ok(&d, r.method, "0123456789abcdef0123456789abcdef");
	}
	free(buf);
	return 0;
}
