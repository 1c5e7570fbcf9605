/* Raw -> raw pixel conversion and scaling between any two raw rows of the
 * format table (destination: any raw non-Bayer row), honouring strides,
 * colorimetry and sizes. libyuv does the work wherever it covers the pair
 * (directly, or through an 8-bit I420/I422/I444 or ARGB hub); generic
 * table-driven readers/writers cover the rest (Y41P, YUV410, RGB332/444,
 * big-endian RGB, 10..16-bit grey, AYUV, Bayer demosaic). */
#ifndef VC_CONVERT_H
#define VC_CONVERT_H

#include "common/fmt.h"
#include "common/image.h"

/* Reusable context: scratch buffers grow on demand and are kept between
 * frames. One per thread; not shared between threads. */
struct vc_conv;

/* NULL on ENOMEM. */
struct vc_conv *vc_conv_new(void);
void vc_conv_free(struct vc_conv *c); /* NULL is a no-op */

/* Frees c's scratch buffers (they grow to the largest picture converted):
 * for a user that goes idle; c stays usable. */
void vc_conv_release(struct vc_conv *c);

/* 1 when vc_conv_run() can convert src rows to dst rows (any sizes), else 0.
 * Compressed rows on either side and Bayer as destination are not supported. */
int vc_conv_supported(const struct vc_fmt *src, const struct vc_fmt *dst);

/* Converts src into dst and scales it from src->width x src->height to
 * dst->width x dst->height (any sizes >= 1x1, up or down; box/bilinear
 * filtering). Strides and padding of both views are honoured; src is only
 * read. Colour: src->color says how src is encoded (0 = V4L2 defaults for its
 * format); for a YUV/grey destination dst->color says which encoding and
 * range to produce (0 = defaults); RGB destinations ignore it.
 * Interlaced sources: SEQ_TB/SEQ_BT (fields stored one after the other) are
 * woven into a frame first; INTERLACED(_TB/_BT) frames are already woven
 * and converted as they are (no motion-adaptive deinterlacing); an
 * ALTERNATE buffer is one field and is scaled like any picture.
 * Returns 0; -EINVAL for an unsupported pair, a zero size, a NULL plane, a
 * stride below the row's minimum, or a plane_size shorter than the geometry
 * needs; -ENOMEM when scratch memory cannot grow. dst is left partially
 * written on failure after validation passed only for -ENOMEM. */
int vc_conv_run(struct vc_conv *c, const struct vc_image *src, const struct vc_image *dst);

#endif
