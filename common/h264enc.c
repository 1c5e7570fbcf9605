/* libopenh264 behind vc_h264enc (see h264enc.h). Owns the library encoder
 * and a buffer the layers of each picture are gathered into. */
#define LOG_PREFIX "h264enc:"
#include "common/h264enc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wels/codec_api.h>

#include "common/log.h"
#include "common/memstat.h"

struct vc_h264enc {
	ISVCEncoder *enc;
	uint32_t width, height;
	size_t mem;      /* what the library holds, estimated (counted as scratch) */
	uint8_t *buf;
	size_t cap;
	/* IDRs are placed here, by pictures given, not by the library, which
	 * counts pictures coded and would stretch the GOP by the skipped ones */
	uint32_t gop;
	uint32_t since_idr; /* pictures since the last IDR, it included */
	bool idr_owed;      /* the next picture is to be an IDR */
};

uint32_t vc_h264enc_default_bitrate(uint32_t width, uint32_t height, uint32_t fps)
{
	uint64_t b = (uint64_t)width * height * (fps ? fps : 30) * 7 / 100;

	if (b < 100000)
		b = 100000;
	return b > 100000000 ? 100000000 : (uint32_t)b;
}

static void set_params(SEncParamExt *p, const struct vc_h264enc_cfg *c)
{
	uint32_t rate = c->bitrate ? c->bitrate : vc_h264enc_default_bitrate(c->width, c->height, c->fps);
	SSpatialLayerConfig *l = &p->sSpatialLayers[0];

	p->iUsageType = CAMERA_VIDEO_REAL_TIME;
	p->iPicWidth = (int)c->width;
	p->iPicHeight = (int)c->height;
	p->iTargetBitrate = (int)rate;
	p->iMaxBitrate = UNSPECIFIED_BIT_RATE;
	/* Without skipping, P pictures at the highest quantiser stay at about
	 * 1.5-2.5 KB at 720p on the test pattern: bitrate=300000 (1.25 KB a
	 * picture at 30 fps) ran at 1.5-2x. The timestamp mode's budget is the
	 * capture clock's (a picture arriving late, or dropped before the
	 * encoder, leaves its bits to the next), and it skips a picture while
	 * more than half a second's bits are spent ahead; bench_h264 at the
	 * default rate skipped none and coded the same bytes and PSNR */
	p->iRCMode = c->keep_all ? RC_BITRATE_MODE : RC_TIMESTAMP_MODE;
	p->fMaxFrameRate = (float)c->fps;
	p->iTemporalLayerNum = 1;
	p->iSpatialLayerNum = 1;
	p->uiIntraPeriod = c->gop ? c->gop : 2 * c->fps;
	p->eSpsPpsIdStrategy = CONSTANT_ID; /* the avcC's SPS/PPS stay valid */
	p->bPrefixNalAddingCtrl = false;
	p->bEnableFrameSkip = !c->keep_all;
	p->iMultipleThreadIdc = 1;   /* the daemon's worker pool is the parallelism */
	p->iEntropyCodingModeFlag = 0;
	p->bEnableSceneChangeDetect = false; /* IDRs only where we place them */
	/* Background detection codes what it takes for still background
	 * coarsely or not at all. Off, bench_h264 measured at the same bytes
	 * 0.5 dB more on a noisy panning picture, 6-9 dB more on the test
	 * pattern, and a quarter less CPU per frame on the noisy picture */
	p->bEnableBackgroundDetection = false;
	l->iVideoWidth = (int)c->width;
	l->iVideoHeight = (int)c->height;
	l->fFrameRate = (float)c->fps;
	l->iSpatialBitrate = (int)rate;
	l->iMaxSpatialBitrate = UNSPECIFIED_BIT_RATE;
	l->uiProfileIdc = PRO_BASELINE;
	l->sSliceArgument.uiSliceMode = SM_SINGLE_SLICE;
}

int vc_h264enc_new(const struct vc_h264enc_cfg *cfg, struct vc_h264enc **out)
{
	struct vc_h264enc *e;
	SEncParamExt p;
	int fmt = videoFormatI420, trace = WELS_LOG_ERROR;

	if (cfg->width < 16 || cfg->width > 4096 || cfg->height < 16 || cfg->height > 4096 ||
	    (cfg->width | cfg->height) & 1 || cfg->fps < 1 || cfg->fps > 240)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->width = cfg->width;
	e->height = cfg->height;
	e->gop = cfg->gop ? cfg->gop : 2 * cfg->fps;
	if (WelsCreateSVCEncoder(&e->enc) != 0 || !e->enc) {
		free(e);
		return -ENOMEM;
	}
	/* its warnings (e.g. that rate control overshoots without frame
	 * skipping, which keep_all turns off on purpose) would go to stderr */
	(*e->enc)->SetOption(e->enc, ENCODER_OPTION_TRACE_LEVEL, &trace);
	(*e->enc)->GetDefaultParams(e->enc, &p);
	set_params(&p, cfg);
	if ((*e->enc)->InitializeExt(e->enc, &p) != cmResultSuccess ||
	    (*e->enc)->SetOption(e->enc, ENCODER_OPTION_DATAFORMAT, &fmt) != cmResultSuccess) {
		log_error("openh264 refuses %ux%u@%u %u bit/s", cfg->width, cfg->height, cfg->fps,
			     p.iTargetBitrate);
		WelsDestroySVCEncoder(e->enc);
		free(e);
		return -EIO;
	}
	/* libopenh264's own allocations, which the memory budget cannot see:
	 * measured with mallinfo2 after 5 pictures at 640x480, 1280x720 and
	 * 1920x1080: 13-15 bytes per pixel plus about 6 MiB */
	e->mem = (size_t)cfg->width * cfg->height * 16 + ((size_t)6 << 20);
	vc_mem_count(VC_MEM_SCRATCH, (long long)e->mem);
	*out = e;
	return 0;
}

void vc_h264enc_free(struct vc_h264enc *e)
{
	if (!e)
		return;
	(*e->enc)->Uninitialize(e->enc);
	WelsDestroySVCEncoder(e->enc);
	vc_mem_count(VC_MEM_SCRATCH, -(long long)e->mem);
	free(e->buf);
	free(e);
}

void vc_h264enc_force_idr(struct vc_h264enc *e)
{
	e->idr_owed = true;
}

/* Gathers the layers' NAL units into e->buf (they may not be adjacent). */
static int gather(struct vc_h264enc *e, const SFrameBSInfo *info, size_t *len)
{
	size_t n = 0;

	for (int i = 0; i < info->iLayerNum; i++) {
		const SLayerBSInfo *l = &info->sLayerInfo[i];
		size_t sz = 0;

		for (int j = 0; j < l->iNalCount; j++)
			sz += (size_t)l->pNalLengthInByte[j];
		if (n + sz > e->cap) {
			size_t cap = (n + sz) * 2;
			uint8_t *b = realloc(e->buf, cap);

			if (!b)
				return -ENOMEM;
			e->buf = b;
			e->cap = cap;
		}
		memcpy(e->buf + n, l->pBsBuf, sz);
		n += sz;
	}
	*len = n;
	return 0;
}

int vc_h264enc_encode(struct vc_h264enc *e, const uint8_t *const plane[3],
		      const uint32_t stride[3], int64_t ts_ms, struct vc_h264enc_out *out)
{
	SSourcePicture pic;
	SFrameBSInfo info;
	size_t len = 0;

	memset(&pic, 0, sizeof(pic));
	memset(&info, 0, sizeof(info));
	pic.iColorFormat = videoFormatI420;
	pic.iPicWidth = (int)e->width;
	pic.iPicHeight = (int)e->height;
	pic.uiTimeStamp = ts_ms;
	for (int i = 0; i < 3; i++) {
		pic.iStride[i] = (int)stride[i];
		pic.pData[i] = (unsigned char *)plane[i]; /* the library only reads it */
	}
	if (e->since_idr >= e->gop)
		e->idr_owed = true;
	if (e->idr_owed)
		(*e->enc)->ForceIntraFrame(e->enc, true);
	if ((*e->enc)->EncodeFrame(e->enc, &pic, &info) != cmResultSuccess)
		return -EIO;
	memset(out, 0, sizeof(*out));
	e->since_idr++;
	/* a skipped picture leaves an owed IDR owed (asked again next time) */
	if (info.eFrameType == videoFrameTypeSkip || info.eFrameType == videoFrameTypeInvalid)
		return 0;
	int rc = gather(e, &info, &len);

	if (rc < 0)
		return rc;
	out->data = e->buf;
	out->len = len;
	out->key = info.eFrameType == videoFrameTypeIDR;
	if (out->key) {
		e->since_idr = 1;
		e->idr_owed = false;
	}
	return 0;
}
