/* Forwarding headers and trusted_proxies entries (common/fwd.c): the input
 * is lines, the first byte of each naming what it is (T trusted_proxies
 * entry, F Forwarded, X X-Forwarded-For, R X-Real-IP). Any input gives one
 * of the four answers, VC_FWD_NONE exactly when no header is there, an
 * address of family IPv4 or IPv6; and one more trusted hop appended on the
 * right (what a second proxy of ours writes) changes no answer. */
#include "tests/fuzz/fuzz.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/fwd.h"

#define MAX_LINES 16

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	const char *fwd[MAX_LINES], *xff[MAX_LINES], *real = NULL;
	struct vc_fwd_net nets[MAX_LINES];
	size_t nf = 0, nx = 0, nn = 0;

	for (char *save = NULL, *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == 'T' && nn < MAX_LINES && vc_fwd_net_parse(l + 1, &nets[nn]) == 0) {
			FUZZ_ASSERT(nets[nn].bits <= 128);
			nn++;
		} else if (l[0] == 'F' && nf < MAX_LINES) {
			fwd[nf++] = l + 1;
		} else if (l[0] == 'X' && nx < MAX_LINES) {
			xff[nx++] = l + 1;
		} else if (l[0] == 'R') {
			real = l + 1;
		}
	}
	struct vc_fwd_headers hd = { fwd, nf, xff, nx, real };
	struct sockaddr_storage ss;
	memset(&ss, 0xa5, sizeof(ss));
	enum vc_fwd_result r = vc_fwd_client(&hd, nets, nn, &ss);
	FUZZ_ASSERT(r == VC_FWD_NONE || r == VC_FWD_ADDR || r == VC_FWD_HIDDEN || r == VC_FWD_BAD);
	FUZZ_ASSERT((r == VC_FWD_NONE) == !vc_fwd_present(&hd));
	if (r == VC_FWD_ADDR)
		FUZZ_ASSERT(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
	/* X-Forwarded-For only, few entries (64 are kept): a trusted hop more */
	/* (an empty list is malformed, and one entry is not) */
	size_t commas = 0, other = 0;
	for (size_t i = 0; i < nx; i++)
		for (const char *p = xff[i]; *p; p++) {
			commas += *p == ',';
			other += *p != ',' && *p != ' ' && *p != '\t';
		}
	if (nn && !nf && nx && nx < MAX_LINES && other && commas + nx < 48) {
		char hop[INET6_ADDRSTRLEN];
		struct sockaddr_storage ss2;

		inet_ntop(AF_INET6, &nets[0].a, hop, sizeof(hop));
		xff[nx] = hop;
		struct vc_fwd_headers hd2 = { NULL, 0, xff, nx + 1, real };
		enum vc_fwd_result r2 = vc_fwd_client(&hd2, nets, nn, &ss2);
		FUZZ_ASSERT(r2 == r);
		if (r == VC_FWD_ADDR) {
			FUZZ_ASSERT(ss2.ss_family == ss.ss_family);
			if (ss.ss_family == AF_INET)
				FUZZ_ASSERT(!memcmp(&((struct sockaddr_in *)&ss)->sin_addr,
						    &((struct sockaddr_in *)&ss2)->sin_addr, 4));
			else
				FUZZ_ASSERT(!memcmp(&((struct sockaddr_in6 *)&ss)->sin6_addr,
						    &((struct sockaddr_in6 *)&ss2)->sin6_addr, 16));
		}
	}
	free(s);
	return 0;
}
