/* H.264 Annex-B from outside (a camera's H.264 frames, once passed
 * through): the NAL scanner, the SPS parser and the MP4 writer on any
 * bytes. Every NAL unit lies inside the input, is not empty and does not
 * end in a zero byte; the scan counts the same units; an SPS that parses
 * has a size within 16384 (what the reader allows), a chroma format of
 * 0..3 and bit depths of 8..14; whatever parses as
 * SPS + PPS makes an init segment no larger than its bound; a fragment is
 * no larger than its bound and a too small buffer is refused; the RTP
 * packetizer's packets give back the input's units (fuzz_rtp.h), with
 * the payload bound taken from the input's last byte. */
#include "tests/fuzz/fuzz.h"

#include "common/h264.h"
#include "common/log.h"
#include "tests/fuzz/fuzz_mp4.h"
#include "tests/fuzz/fuzz_rtp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vc_nal n;
	struct vc_h264_au au;
	struct vc_h264_sps sps;
	size_t pos = 0;
	unsigned count = 0;

	while (vc_h264_next_nal(data, size, &pos, &n)) {
		FUZZ_ASSERT(n.data >= data && n.len >= 1 && n.data + n.len <= data + size);
		FUZZ_ASSERT(n.data[n.len - 1] != 0 && n.type == (n.data[0] & 0x1f));
		FUZZ_ASSERT(pos <= size);
		count++;
		if (n.type == VC_NAL_SPS && vc_h264_parse_sps(n.data, n.len, &sps) == 0)
			FUZZ_ASSERT(sps.width >= 1 && sps.width <= 16384 && sps.height >= 1 &&
				    sps.height <= 32768 && sps.chroma_format_idc <= 3 &&
				    sps.bit_depth_luma >= 8 && sps.bit_depth_luma <= 14 &&
				    sps.bit_depth_chroma >= 8 && sps.bit_depth_chroma <= 14);
	}
	FUZZ_ASSERT(vc_h264_scan(data, size, &au) == count);
	fuzz_mp4_init(&au);
	struct vc_mp4_sample s = { .annexb = data, .len = size, .seq = 1, .duration = 3000,
				   .key = au.idr };

	fuzz_mp4_fragment(&s);
	/* small bounds make FU-A and split STAP-A runs out of small inputs */
	fuzz_rtp_check(data, size, size ? 3 + data[size - 1] % 64 : VC_RTP_PAYLOAD);
	fuzz_rtp_check(data, size, VC_RTP_PAYLOAD);
	return 0;
}
