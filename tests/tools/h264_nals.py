#!/usr/bin/env python3
"""H.264 Annex-B checks for the passthrough tests.

  h264_nals.py strip-ps IN OUT   copy IN with SPS/PPS only before every 4th
                                 IDR (a camera that leaves them out of most)
  h264_nals.py trim IN OUT       IN without its last picture (a stream cut by
                                 the client's timeout ends in a partial one)
  h264_nals.py mp4trim IN OUT    IN's whole top-level boxes only (the same
                                 for a fragmented MP4)
  h264_nals.py check FED SERVED  prints one line:
    nals N slices S idr I idr_ps P foreign F sps_first 0|1
  (foreign: served NAL units that are not byte for byte a fed one; idr:
  IDR pictures; idr_ps: those with an SPS and a PPS since the previous slice; sps_first: the served
  stream starts with an SPS, i.e. at an access unit a decoder can begin at)
"""
import sys


def nals(buf):
    """NAL units (without start codes and trailing zero bytes), in order."""
    out, i, n = [], 0, len(buf)
    starts = []
    while True:
        j = buf.find(b"\x00\x00\x01", i)
        if j < 0:
            break
        starts.append(j + 3)
        i = j + 3
    for k, s in enumerate(starts):
        e = starts[k + 1] - 3 if k + 1 < len(starts) else n
        u = buf[s:e].rstrip(b"\x00")
        if u:
            out.append(u)
    return out


def strip_ps(src, dst):
    units = nals(open(src, "rb").read())
    keep, idr, prev = [], 0, 0
    for k, u in enumerate(units):
        t = u[0] & 0x1F
        if t in (7, 8):
            # the IDR this SPS/PPS belongs to is the next slice
            nxt = next((v[0] & 0x1F for v in units[k:] if v[0] & 0x1F in (1, 5)), 0)
            if nxt == 5 and idr % 4 != 0:
                continue
        if t == 5 and prev != 5:
            idr += 1
        if t in (1, 5):
            prev = t
        keep.append(u)
    with open(dst, "wb") as f:
        for u in keep:
            f.write(b"\x00\x00\x00\x01" + u)


def check(fed, served):
    fed_set = set(nals(open(fed, "rb").read()))
    units = nals(open(served, "rb").read())
    slices = idr = idr_ps = foreign = prev = 0
    sps = pps = False
    for u in units:
        t = u[0] & 0x1F
        if u not in fed_set:
            foreign += 1
        if t == 7:
            sps = True
        elif t == 8:
            pps = True
        elif t in (1, 5):
            slices += 1
            if t == 5 and prev != 5:  # an IDR picture's first slice
                idr += 1
                idr_ps += sps and pps
            prev = t
            sps = pps = False
    first = bool(units) and (units[0][0] & 0x1F) in (7, 9)
    print("nals %d slices %d idr %d idr_ps %d foreign %d sps_first %d"
          % (len(units), slices, idr, idr_ps, foreign, int(first)))


def trim(src, dst):
    units = nals(open(src, "rb").read())
    last = 0
    for k, u in enumerate(units):
        # a slice with first_mb_in_slice 0 (ue(v) "1") starts a picture
        if (u[0] & 0x1F) in (1, 5) and len(u) > 1 and u[1] & 0x80:
            last = k
    # the SEI, SPS, PPS or AUD before it belong to its access unit: a cut
    # after the parameter sets of an IDR left an access unit without a picture
    while last > 0 and (units[last - 1][0] & 0x1F) in (6, 7, 8, 9):
        last -= 1
    with open(dst, "wb") as f:
        for u in units[:last]:
            f.write(b"\x00\x00\x00\x01" + u)


def mp4trim(src, dst):
    buf = open(src, "rb").read()
    pos = end = 0
    while pos + 8 <= len(buf):
        size = int.from_bytes(buf[pos:pos + 4], "big")
        if size < 8 or pos + size > len(buf):
            break
        pos += size
        if buf[pos - size + 4:pos - size + 8] != b"moof":
            end = pos  # a moof counts with the mdat after it
    open(dst, "wb").write(buf[:end])


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "strip-ps":
        strip_ps(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "trim":
        trim(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "mp4trim":
        mp4trim(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
