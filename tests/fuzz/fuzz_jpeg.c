/* Camera JPEG structure (common/jpeg_parse.c): validation, DHT insertion
 * and removal on any bytes. Whatever parses gets tables inserted; the
 * result parses again, with the same size and tables, and is exactly
 * input + VC_JPEG_DHT_BYTES long when the input had none. */
#include "tests/fuzz/fuzz.h"

#include <errno.h>

#include "common/jpeg.h"
#include "common/log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vc_jpeg_info info, i2;
	uint8_t *out, *back;
	size_t ol, bl;

	if (vc_jpeg_parse(data, size, &info) != 0)
		return 0;
	FUZZ_ASSERT(info.size <= size && info.sos_off < info.size);
	FUZZ_ASSERT(info.scans >= 1 && info.scans <= VC_JPEG_MAX_SCANS);
	FUZZ_ASSERT(info.width && info.height);
	out = malloc(size + VC_JPEG_DHT_BYTES);
	back = malloc(size + VC_JPEG_DHT_BYTES);
	FUZZ_ASSERT(out && back);
	FUZZ_ASSERT(vc_jpeg_add_dht(data, size, out, size + VC_JPEG_DHT_BYTES, &ol) == 0);
	FUZZ_ASSERT(ol == (info.has_dht ? size : size + VC_JPEG_DHT_BYTES));
	FUZZ_ASSERT(vc_jpeg_parse(out, ol, &i2) == 0);
	FUZZ_ASSERT(i2.has_dht && i2.width == info.width && i2.height == info.height);
	FUZZ_ASSERT(i2.scans == info.scans && i2.subsamp == info.subsamp);
	/* too small a buffer is refused, never overrun */
	if (!info.has_dht)
		FUZZ_ASSERT(vc_jpeg_add_dht(data, size, out, ol - 1, &bl) == -ENOSPC);
	if (vc_jpeg_strip_dht(out, ol, back, size + VC_JPEG_DHT_BYTES, &bl) == 0) {
		FUZZ_ASSERT(bl <= ol);
		FUZZ_ASSERT(vc_jpeg_parse(back, bl, &i2) != 0 || !i2.has_dht);
	}
	free(out);
	free(back);
	return 0;
}
