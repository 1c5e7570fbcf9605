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
  h264_nals.py mp4frags FILE     follows a fragmented MP4's fragment sequence
                                 numbers (vcapd: the output's frame numbers);
                                 prints one line:
    frags N seq_gaps G not_idr_after_gap B first_idr 0|1
  (seq_gaps: fragments not numbered one after the previous, i.e. frames
  skipped before them; not_idr_after_gap: those without an IDR)
  h264_nals.py refs FILE GOP     follows frame_num through FILE's pictures;
                                 prints one line:
    pics N idr I broken B short_gops S first_idr 0|1
  (broken: non-IDR pictures whose frame_num is not the one after the
  previous picture's, i.e. sent although a picture they may reference was
  not; short_gops: IDRs that end a GOP of fewer than GOP pictures, i.e.
  where frames were skipped and the stream resumed; first_idr: the first
  picture is an IDR)
  h264_nals.py mp4rate FILE      a fragmented MP4's rate on its own decode
                                 times (the capture clock); prints one line:
    frames N span S mean M worst W covered C empty E gop_max G first_idr 0|1 idrs I
  (span: seconds from the first decode time to the last; mean: bit/s over
  the frames after the first second; worst: the most bits in any 2 s of
  decode time from 1 s on, as bit/s, windows starting at each frame and
  ending within the span; covered: the durations of the frames after the
  first (vcapd: each the time since the frame before) over the span, 1.00
  when the timeline has no holes; empty:
  samples of 0 bytes; gop_max: the longest time from one IDR to the next,
  seconds; idrs: IDR frames)
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


class Bits:
    """Reads an RBSP (emulation prevention bytes removed) bit by bit."""

    def __init__(self, nal):
        self.b = nal.replace(b"\x00\x00\x03", b"\x00\x00")
        self.pos = 8  # after the NAL header byte

    def u(self, n):
        v = 0
        for _ in range(n):
            v = (v << 1) | ((self.b[self.pos >> 3] >> (7 - (self.pos & 7))) & 1)
            self.pos += 1
        return v

    def ue(self):
        z = 0
        while self.u(1) == 0:
            z += 1
        return (1 << z) - 1 + self.u(z)


def sps_log2_max_frame_num(nal):
    r = Bits(nal)
    profile = r.u(8)
    r.u(16)  # constraint flags, level
    r.ue()  # seq_parameter_set_id
    if profile in (100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135):
        if r.ue() == 3:  # chroma_format_idc
            r.u(1)
        r.ue()
        r.ue()
        r.u(1)
        if r.u(1):
            sys.exit("refs: SPS scaling matrices are not read here")
    return r.ue() + 4


def refs(path, gop):
    log2 = None
    pics = idr = broken = short = 0
    first_idr = -1
    prev_fn = prev_ref = None
    in_gop = 0
    for u in nals(open(path, "rb").read()):
        t = u[0] & 0x1F
        if t == 7:
            log2 = sps_log2_max_frame_num(u)
            continue
        if t not in (1, 5) or log2 is None:
            continue
        r = Bits(u)
        if r.ue() != 0:  # not a picture's first slice
            continue
        r.ue()  # slice_type
        r.ue()  # pic_parameter_set_id
        fn = r.u(log2)
        ref = (u[0] >> 5) & 3 != 0
        pics += 1
        if first_idr < 0:
            first_idr = int(t == 5)
        if t == 5:
            idr += 1
            if 0 < in_gop < gop:
                short += 1
            in_gop = 1
        else:
            want = None if prev_fn is None else (prev_fn + int(prev_ref)) % (1 << log2)
            broken += fn != want
            in_gop += 1 if in_gop else 0
        prev_fn, prev_ref = fn, ref
    print("pics %d idr %d broken %d short_gops %d first_idr %d"
          % (pics, idr, broken, short, max(first_idr, 0)))


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


def boxes(buf, pos, end):
    """(type, payload start, box end) of the boxes in buf[pos:end]."""
    while pos + 8 <= end:
        size = int.from_bytes(buf[pos:pos + 4], "big")
        if size < 8 or pos + size > end:
            return
        yield buf[pos + 4:pos + 8], pos + 8, pos + size
        pos += size


def mp4frags(path):
    buf = open(path, "rb").read()
    seqs, idrs = [], []
    for t, p, e in boxes(buf, 0, len(buf)):
        if t == b"moof":
            for t2, p2, _ in boxes(buf, p, e):
                if t2 == b"mfhd":
                    seqs.append(int.from_bytes(buf[p2 + 4:p2 + 8], "big"))
        elif t == b"mdat" and len(idrs) < len(seqs):
            # 4-byte lengths before each NAL unit
            idr, q = False, p
            while q + 4 <= e:
                n = int.from_bytes(buf[q:q + 4], "big")
                idr |= n > 0 and q + 4 < e and buf[q + 4] & 0x1F == 5
                q += 4 + n
            idrs.append(idr)
    gaps = [i for i in range(1, len(idrs)) if seqs[i] != seqs[i - 1] + 1]
    bad = [i for i in gaps if not idrs[i]]
    print("frags %d seq_gaps %d not_idr_after_gap %d first_idr %d"
          % (len(idrs), len(gaps), len(bad), int(bool(idrs) and idrs[0])))


def mp4rate(path):
    buf = open(path, "rb").read()
    scale, fr = 90000, []  # fr: [decode time, duration, size, key]
    for t, p, e in boxes(buf, 0, len(buf)):
        if t == b"moov":
            stack = [(p, e)]
            while stack:
                a, b = stack.pop()
                for t2, p2, e2 in boxes(buf, a, b):
                    if t2 in (b"trak", b"mdia"):
                        stack.append((p2, e2))
                    elif t2 == b"mdhd":
                        v1 = buf[p2] == 1
                        scale = int.from_bytes(buf[p2 + (20 if v1 else 12):][:4], "big")
        if t != b"moof":
            continue
        for t2, p2, e2 in boxes(buf, p, e):
            if t2 != b"traf":
                continue
            dt = None
            for t3, p3, _ in boxes(buf, p2, e2):
                if t3 == b"tfdt":
                    v1 = buf[p3] == 1
                    dt = int.from_bytes(buf[p3 + 4:p3 + (12 if v1 else 8)], "big")
                elif t3 == b"trun" and dt is not None:
                    flags = int.from_bytes(buf[p3 + 1:p3 + 4], "big")
                    n = int.from_bytes(buf[p3 + 4:p3 + 8], "big")
                    q = p3 + 8 + (4 if flags & 1 else 0) + (4 if flags & 4 else 0)
                    for _ in range(n):
                        d = sz = fl = 0
                        if flags & 0x100:
                            d = int.from_bytes(buf[q:q + 4], "big"); q += 4
                        if flags & 0x200:
                            sz = int.from_bytes(buf[q:q + 4], "big"); q += 4
                        if flags & 0x400:
                            fl = int.from_bytes(buf[q:q + 4], "big"); q += 4
                        if flags & 0x800:
                            q += 4
                        fr.append([dt, d, sz, not fl & 0x10000])
                        dt += d
    if not fr:
        print("frames 0 span 0 mean 0 worst 0 covered 0 empty 0 gop_max 0 first_idr 0 idrs 0")
        return
    t0 = fr[0][0]
    ts = [(f[0] - t0) / scale for f in fr]
    span = ts[-1]
    covered = sum(f[1] for f in fr[1:]) / scale / span if span > 0 else 0
    after = [i for i in range(len(fr)) if ts[i] >= 1.0]
    mean = (sum(fr[i][2] for i in after) * 8 / (span - ts[after[0]])
            if len(after) > 1 and span > ts[after[0]] else 0)
    worst = 0
    for i in after:
        if ts[i] + 2.0 > span:
            break
        bits = sum(fr[k][2] for k in range(i, len(fr)) if ts[k] < ts[i] + 2.0) * 8
        worst = max(worst, bits / 2.0)
    keys = [ts[i] for i in range(len(fr)) if fr[i][3]]
    gop = max([b - a for a, b in zip(keys, keys[1:])] + [0])
    print("frames %d span %.2f mean %.0f worst %.0f covered %.2f empty %d gop_max %.2f first_idr %d"
          " idrs %d"
          % (len(fr), span, mean, worst, covered, sum(1 for f in fr if f[2] == 0), gop,
             int(fr[0][3]), len(keys)))


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
    elif len(sys.argv) == 3 and sys.argv[1] == "mp4rate":
        mp4rate(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "mp4frags":
        mp4frags(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "refs":
        refs(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
