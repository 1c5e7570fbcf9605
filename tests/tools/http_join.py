#!/usr/bin/env python3
"""Joins an HTTP stream several times and times each join.

  http_join.py PORT SECONDS [--wait-gop] OFFSET PATH OUT [OFFSET PATH OUT ...]
    With --wait-gop, first waits (up to 60 s) until /api/status shows a
    kept H.264 GOP (memory "gop" > 0) and prints "gop_bytes G". Then, at
    each OFFSET (seconds from then), GETs PATH on 127.0.0.1:PORT, reads the
    body for SECONDS from its request, writes it to OUT and prints
      OUT ttfb_ms T bytes B
    (T: milliseconds from sending the request to the first body byte, not
    counting the response headers; -1 when none came). One process for all
    joins: its start-up time (seconds in a TCG guest) is not in the offsets.
"""
import json
import socket
import sys
import threading
import time
import urllib.request


def join(port, path, secs, out, res):
    s = socket.create_connection(("127.0.0.1", port))
    t0 = time.monotonic()
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, port)).encode())
    s.settimeout(0.2)
    buf, body_at, first = b"", -1, -1.0
    while time.monotonic() - t0 < secs:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        if not b:
            break
        buf += b
        if body_at < 0:
            i = buf.find(b"\r\n\r\n")
            if i >= 0:
                body_at = i + 4
        if body_at >= 0 and first < 0 and len(buf) > body_at:
            first = time.monotonic() - t0
    s.close()
    body = buf[body_at:] if body_at >= 0 else b""
    with open(out, "wb") as f:
        f.write(body)
    res.append("%s ttfb_ms %d bytes %d" % (out, round(first * 1000) if first >= 0 else -1,
                                          len(body)))


def kept_gop(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/status" % port, timeout=5) as r:
            return json.load(r)["memory"].get("gop", 0)
    except (OSError, ValueError, KeyError):
        return 0


def main():
    port, secs, args = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    if args and args[0] == "--wait-gop":
        args = args[1:]
        end, g = time.monotonic() + 60, 0
        while time.monotonic() < end and not g:
            g = kept_gop(port)
            if not g:
                time.sleep(0.1)
        print("gop_bytes %d" % g, flush=True)
    t0, threads, res = time.monotonic(), [], []
    for k in range(0, len(args) - 2, 3):
        off, path, out = float(args[k]), args[k + 1], args[k + 2]
        time.sleep(max(0.0, t0 + off - time.monotonic()))
        t = threading.Thread(target=join, args=(port, path, secs, out, res))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    for r in sorted(res):
        print(r)


main()
