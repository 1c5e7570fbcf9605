/* Writes frames of the test pattern, as the source delivers them, back to
 * back to a file: for the integration tests that compare what a client
 * got from a "test:...:H264" camera with what the camera sent.
 *   testsrc_frames PATH FIRST COUNT OUT
 * PATH is a test pattern path ("test:640x480@30:H264"); frames FIRST ..
 * FIRST+COUNT-1 of its mode and options (H.264: Annex-B access units, the
 * path's bitrate and ps_once applied). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/capture/testsrc.h"

static int put(void *opaque, uint64_t seq, uint8_t *const mem[3], const size_t used[3])
{
	(void)seq;
	for (int p = 0; p < 3; p++)
		if (used[p] && fwrite(mem[p], 1, used[p], opaque) != used[p])
			return -EIO;
	return 0;
}

int main(int argc, char **argv)
{
	struct vc_testsrc_opts o;
	char why[128];

	if (argc != 5) {
		fprintf(stderr, "usage: %s PATH FIRST COUNT OUT\n", argv[0]);
		return 2;
	}
	if (vc_testsrc_parse(argv[1], &o, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], why);
		return 2;
	}
	FILE *f = fopen(argv[4], "wb");
	if (!f) {
		perror(argv[4]);
		return 1;
	}
	int ret = vc_testsrc_render_run(&o, strtoull(argv[2], NULL, 10),
					strtoull(argv[3], NULL, 10), put, f);
	if (fclose(f) != 0 && ret == 0)
		ret = -EIO;
	if (ret < 0) {
		fprintf(stderr, "render: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
