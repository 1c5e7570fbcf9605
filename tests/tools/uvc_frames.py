#!/usr/bin/env python3
"""Judges what vcapd served from the uvcvideo camera of tests/vm/boot_uvc.sh
(uvcdev, ../shared/vm/uvcdev.c). Each command prints one line.

  uvc_frames.py formats LIST CAMS   v4l2-ctl --list-formats-ext's output
      against /api/cams' native formats of the first camera: the same
      fourccs, sizes and rates in the same order:
    same 0|1 v4l2 N api M first_diff TEXT
  uvc_frames.py parts STREAM        a multipart /stream: its parts, those
      with X-Placeholder, the live ones after the last placeholder, their
      rate on the capture clock (X-Timestamp) as received and as captured
      (X-Frame-Seq over the same span), live JPEGs without a DHT:
    parts N placeholder P live_after L fps F cam_fps C no_dht D cam_fps_3s B
  uvc_frames.py dht STREAM REF      MJPEG passthrough: every live part must
      carry the standard Huffman tables (one DHT, 420 bytes, right before
      the SOS) and, without that DHT, be byte for byte the frame uvcdev sent
      with the same counter (REF: v4l2-ctl --stream-to of the same mode;
      the COM segment, which holds the send time, is left out):
    parts N ref R ref_dht H with_dht D matched M identical I
  uvc_frames.py quirks STREAM TRUNC CORRUPT   a /stream from uvcdev with
      tests/vm/uvcdev_quirks.patch (frames k-1, 2k-1... of each period bad):
      served parts that are bad frames (by their counter), parts that do not
      end at their EOI (padding sent), the longest gap between parts and the
      rate on the capture clock, the bad frames uvcdev sent in the span:
    parts N bad_sent B padded P max_gap G fps F expected_bad E
  uvc_frames.py whole STREAM OUT    the JPEGs of a multipart stream's whole
      parts, back to back, into OUT (the one the client's end cut is left
      out: a decoder would rightly complain of it):
    parts N
  uvc_frames.py caps CAMS FOURCC     /api/cams' native sizes of FOURCC of
      the first camera, with their intervals in seconds:
    WxH@NUM/DEN[,NUM/DEN...] ...  (or "none")
  uvc_frames.py sizes STREAM          the picture sizes of a multipart
      stream's parts (their SOF), most frequent first, and the parts' rate
      on the capture clock (X-Timestamp):
    parts N sizes WxH:K[,WxH:K...] fps F
  uvc_frames.py yuyv RAW W H        raw YUYV frames back to back: uvcdev's
      counter in each frame's first 4 bytes must grow:
    frames N whole 0|1 increasing 0|1 first A last B
"""
import json
import re
import struct
import sys


def parts(data):
    """[(headers dict, body)] of a vcapd multipart stream; a part cut by the
    client's timeout is left out."""
    out = []
    pos = 0
    while True:
        b = data.find(b"--vcapdframe", pos)
        if b < 0:
            break
        he = data.find(b"\r\n\r\n", b)
        if he < 0:
            break
        hdr = {}
        for line in data[b:he].split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            hdr[k.strip().lower().decode()] = v.strip().decode(errors="replace")
        n = int(hdr.get("content-length", "-1"))
        if n < 0 or he + 4 + n > len(data):
            break
        out.append((hdr, data[he + 4:he + 4 + n]))
        pos = he + 4 + n
    return out


def segments(jpg):
    """[(marker, start, end)] of the segments before the entropy-coded data,
    the SOS included; None when the JPEG does not parse."""
    if jpg[:2] != b"\xff\xd8":
        return None
    segs = []
    p = 2
    while p + 4 <= len(jpg):
        if jpg[p] != 0xFF:
            return None
        m = jpg[p + 1]
        n = struct.unpack(">H", jpg[p + 2:p + 4])[0]
        segs.append((m, p, p + 2 + n))
        if m == 0xDA:
            return segs
        p += 2 + n
    return None


def counter(jpg, segs):
    for m, s, e in segs:
        if m == 0xFE:
            r = re.match(rb"uvcdev frame=(\d+)", jpg[s + 4:e])
            if r:
                return int(r.group(1))
    return None


def without(jpg, segs, markers):
    """jpg with the segments whose marker is in markers cut out."""
    out = bytearray()
    p = 0
    for m, s, e in segs:
        if m in markers:
            out += jpg[p:s]
            p = e
    return bytes(out + jpg[p:])


def split_ref(data):
    """The frames of a v4l2-ctl --stream-to file (uvcdev starts each with
    SOI + COM; 0xFF 0xD8 cannot occur in entropy-coded data)."""
    starts = [m.start() for m in re.finditer(b"\xff\xd8\xff\xfe", data)]
    return [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def cmd_formats(list_txt, cams_json):
    v4l2 = []
    fcc = size = None
    for line in open(list_txt, errors="replace"):
        m = re.search(r"\[\d+\]: '(....)'", line)
        if m:
            fcc = m.group(1)
            continue
        m = re.search(r"Size: Discrete (\d+)x(\d+)", line)
        if m:
            size = m.group(1) + "x" + m.group(2)
            continue
        m = re.search(r"Interval: Discrete [0-9.]+s \(([0-9.]+) fps\)", line)
        if m and fcc and size:
            v4l2.append("%s %s %.3f" % (fcc, size, float(m.group(1))))
    api = []
    cams = json.load(open(cams_json))["cams"]
    for f in cams[0].get("formats", []) if cams else []:
        if f.get("emulated"):
            continue
        for s in f["sizes"]:
            for num, den in s["intervals"]:
                api.append("%s %dx%d %.3f" % (f["fourcc"].strip(), s["width"], s["height"],
                                              den / num if num else 0))
    diff = next((f"v4l2 '{a}' api '{b}'" for a, b in zip(v4l2, api) if a != b), "")
    if not diff and len(v4l2) != len(api):
        diff = "lengths differ"
    print("same %d v4l2 %d api %d first_diff %s" % (int(not diff and bool(v4l2)), len(v4l2),
                                                   len(api), diff or "-"))


def cmd_parts(stream):
    ps = parts(open(stream, "rb").read())
    ph = [i for i, (h, _) in enumerate(ps) if "x-placeholder" in h]
    live = ps[ph[-1] + 1:] if ph else ps
    ts = [(float(h["x-timestamp"]), int(h.get("x-frame-seq", "0"))) for h, _ in live
          if "x-timestamp" in h]
    span = ts[-1][0] - ts[0][0] if len(ts) > 2 else 0
    fps = (len(ts) - 1) / span if span > 0 else 0
    # the camera's rate: frames captured (sequence numbers) over the same
    # capture-clock span, whatever this client skipped
    cam_fps = (ts[-1][1] - ts[0][1]) / span if span > 0 else 0
    # and its best 3 s window: a TCG guest on a busy host stalls now and
    # then (uvcdev skips the frames it could not send in time), a camera
    # at the wrong rate is slow in every window
    best = 0
    j = 0
    for i in range(len(ts)):
        while j + 1 < len(ts) and ts[j + 1][0] - ts[i][0] <= 3.0:
            j += 1
        if ts[j][0] - ts[i][0] >= 2.5:
            best = max(best, (ts[j][1] - ts[i][1]) / (ts[j][0] - ts[i][0]))
    no_dht = 0
    for _, body in live:
        segs = segments(body)
        if not segs or not any(m == 0xC4 for m, _, _ in segs):
            no_dht += 1
    print("parts %d placeholder %d live_after %d fps %.2f cam_fps %.2f no_dht %d cam_fps_3s %.2f" %
          (len(ps), len(ph), len(live), fps, cam_fps, no_dht, best))


def cmd_dht(stream, ref):
    refs = {}
    ref_dht = 0
    frames = split_ref(open(ref, "rb").read())
    for jpg in frames:
        segs = segments(jpg)
        if not segs:
            continue
        ref_dht += any(m == 0xC4 for m, _, _ in segs)
        n = counter(jpg, segs)
        if n is not None:
            refs[n] = without(jpg, segs, (0xFE,))
    live = [b for h, b in parts(open(stream, "rb").read()) if "x-placeholder" not in h]
    with_dht = matched = same = 0
    for body in live:
        segs = segments(body)
        if not segs:
            continue
        dht = [(s, e) for m, s, e in segs if m == 0xC4]
        # one DHT with the four standard tables, the segment right before SOS
        if len(dht) == 1 and dht[0][1] - dht[0][0] == 420 and segs[-2][0] == 0xC4:
            with_dht += 1
        n = counter(body, segs)
        if n in refs:
            matched += 1
            same += without(body, segs, (0xFE, 0xC4)) == refs[n]
    print("parts %d ref %d ref_dht %d with_dht %d matched %d identical %d" %
          (len(live), len(frames), ref_dht, with_dht, matched, same))


def cmd_quirks(stream, trunc, corrupt):
    trunc, corrupt = int(trunc), int(corrupt)

    def bad(n):
        return (trunc and n % trunc == trunc - 1) or (corrupt and n % corrupt == corrupt - 1)
    live = [(h, b) for h, b in parts(open(stream, "rb").read()) if "x-placeholder" not in h]
    seqs = []
    bad_sent = padded = 0
    for _, body in live:
        segs = segments(body)
        n = counter(body, segs) if segs else None
        if n is None or bad(n):
            bad_sent += 1
        else:
            seqs.append(n)
        padded += not body.endswith(b"\xff\xd9")
    ts = [float(h["x-timestamp"]) for h, _ in live if "x-timestamp" in h]
    gap = max((b - a for a, b in zip(ts, ts[1:])), default=0)
    span = ts[-1] - ts[0] if len(ts) > 2 else 0
    exp = sum(1 for n in range(min(seqs), max(seqs) + 1) if bad(n)) if seqs else 0
    print("parts %d bad_sent %d padded %d max_gap %.3f fps %.2f expected_bad %d" %
          (len(live), bad_sent, padded, gap, (len(ts) - 1) / span if span > 0 else 0, exp))


def cmd_caps(cams_json, fourcc):
    out = []
    cams = json.load(open(cams_json))["cams"]
    for f in cams[0].get("formats", []) if cams else []:
        if f.get("emulated") or f["fourcc"].strip() != fourcc:
            continue
        for s in f["sizes"]:
            out.append("%dx%d@%s" % (s["width"], s["height"],
                                     ",".join("%d/%d" % tuple(iv) for iv in s["intervals"])))
    print(" ".join(out) or "none")


def sof_size(jpg):
    """'WxH' of a JPEG's frame header, '?' when it has none."""
    for m, a, _ in segments(jpg) or []:
        if m in (0xC0, 0xC1, 0xC2) and a + 9 <= len(jpg):
            h, w = struct.unpack(">HH", jpg[a + 5:a + 9])
            return "%dx%d" % (w, h)
    return "?"


def cmd_sizes(stream):
    ps = parts(open(stream, "rb").read())
    count = {}
    for _, body in ps:
        k = sof_size(body)
        count[k] = count.get(k, 0) + 1
    ts = [float(h["x-timestamp"]) for h, _ in ps if "x-timestamp" in h]
    fps = (len(ts) - 1) / (ts[-1] - ts[0]) if len(ts) > 2 and ts[-1] > ts[0] else 0
    sizes = ",".join("%s:%d" % kv for kv in sorted(count.items(), key=lambda kv: -kv[1]))
    print("parts %d sizes %s fps %.2f" % (len(ps), sizes or "-", fps))


def cmd_whole(stream, out):
    ps = parts(open(stream, "rb").read())
    with open(out, "wb") as f:
        for _, body in ps:
            f.write(body)
    print("parts %d" % len(ps))


def cmd_yuyv(raw, w, h):
    data = open(raw, "rb").read()
    size = int(w) * int(h) * 2
    n = len(data) // size
    cs = [struct.unpack("<I", data[i * size:i * size + 4])[0] for i in range(n)]
    inc = n >= 2 and all(b > a for a, b in zip(cs, cs[1:]))
    print("frames %d whole %d increasing %d first %s last %s" %
          (n, int(len(data) == n * size), int(inc), cs[0] if cs else "-", cs[-1] if cs else "-"))


if __name__ == "__main__":
    cmds = {"formats": cmd_formats, "parts": cmd_parts, "dht": cmd_dht, "quirks": cmd_quirks,
            "yuyv": cmd_yuyv, "whole": cmd_whole, "sizes": cmd_sizes,
            "caps": cmd_caps}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
