#!/usr/bin/env python3
"""Helpers for tests/integ/http_hls.sh (issue 24).

  hls_check.py playlist FILE     -> "seq N target T segs K disc D map M indep I durs d1,d2,.."
  hls_check.py tfdt FILE         -> the first moof's tfdt (90 kHz ticks) of an fMP4 segment
  hls_check.py parts STATUS.json -> memory "parts" bytes
  hls_check.py share STATUS.json -> "h264_outputs N kinds k1,k2 same S"  (S 1 when an
                                    hls and an mp4 client are on one output)
"""
import json
import struct
import sys


def boxes(b, off, end):
    while off + 8 <= end:
        size, typ = struct.unpack(">I4s", b[off:off + 8])
        hdr = 8
        if size == 1:
            size = struct.unpack(">Q", b[off + 8:off + 16])[0]
            hdr = 16
        if size < hdr or off + size > end:
            return
        yield typ.decode("latin1"), off + hdr, off + size
        off += size


def tfdt(path):
    b = open(path, "rb").read()
    for t, s, e in boxes(b, 0, len(b)):
        if t != "moof":
            continue
        for t2, s2, e2 in boxes(b, s, e):
            if t2 != "traf":
                continue
            for t3, s3, e3 in boxes(b, s2, e2):
                if t3 == "tfdt":
                    ver = b[s3]
                    if ver == 1:
                        return struct.unpack(">Q", b[s3 + 4:s3 + 12])[0]
                    return struct.unpack(">I", b[s3 + 4:s3 + 8])[0]
    return -1


def playlist(path):
    seq = target = disc = -1
    segs = maps = indep = 0
    durs = []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.strip()
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            seq = int(line.split(":")[1])
        elif line.startswith("#EXT-X-TARGETDURATION:"):
            target = int(line.split(":")[1])
        elif line.startswith("#EXT-X-DISCONTINUITY-SEQUENCE:"):
            disc = int(line.split(":")[1])
        elif line.startswith("#EXT-X-MAP:"):
            maps += 1
        elif line == "#EXT-X-INDEPENDENT-SEGMENTS":
            indep = 1
        elif line.startswith("#EXTINF:"):
            durs.append(line[8:].split(",")[0])
        elif line and not line.startswith("#"):
            segs += 1
    print("seq %d target %d segs %d disc %d map %d indep %d durs %s"
          % (seq, target, segs, disc, maps, indep, ",".join(durs) or "-"))


def share(path):
    d = json.load(open(path))
    c = d["cams"][0]
    outs = [o for o in c["outputs"] if o["plan"]["output"]["fourcc"] == "H264"]
    kinds = [k["kind"] for k in c["clients"]]
    same = 0
    if len(outs) == 1 and outs[0]["clients"] >= 2 and "hls" in kinds and "mp4" in kinds:
        same = 1
    print("h264_outputs %d kinds %s same %d" % (len(outs), ",".join(kinds) or "-", same))


if __name__ == "__main__":
    cmd, arg = sys.argv[1], sys.argv[2]
    if cmd == "playlist":
        playlist(arg)
    elif cmd == "tfdt":
        print(tfdt(arg))
    elif cmd == "parts":
        print(json.load(open(arg))["memory"]["parts"])
    elif cmd == "share":
        share(arg)
