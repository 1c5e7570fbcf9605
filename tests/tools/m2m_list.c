/* m2m_list [DEV_DIR]: the M2M devices vcapd finds (server/capture/m2m_discover.c),
 * one line each, for the VM test:
 *   /dev/video5 driver=vicodec card=vicodec api=single roles=video-encoder in=YU12,... out=FWHT
 * Exits 0, or 1 when the scan failed. */
#include <stdio.h>
#include <stdlib.h>

#include "common/fmt.h"
#include "server/capture/m2m_discover.h"

static void fmts(const char *key, const struct vc_m2m_fmt *f, size_t n)
{
	char fcc[16];

	printf(" %s=", key);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", vc_fourcc_str(f[i].fourcc, fcc));
}

int main(int argc, char **argv)
{
	struct vc_m2m_node *l;
	size_t n;

	if (vc_m2m_scan(NULL, argc > 1 ? argv[1] : NULL, &l, &n) < 0) {
		fprintf(stderr, "m2m_list: scan failed\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct vc_m2m_node *m = &l[i];
		int first = 1;

		printf("%s driver=%s card=%s api=%s roles=", m->path, m->driver, m->card,
		       m->mplane ? "multi" : "single");
		for (unsigned r = 0; r < VC_M2M_ROLE_COUNT; r++)
			if (m->roles & (1u << r)) {
				printf("%s%s", first ? "" : ",", vc_m2m_role_name(r));
				first = 0;
			}
		if (first)
			printf("none");
		fmts("in", m->out, m->n_out);
		fmts("out", m->cap, m->n_cap);
		printf("\n");
	}
	free(l);
	return 0;
}
