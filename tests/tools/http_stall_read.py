#!/usr/bin/env python3
"""A stream client that reads, stalls, and reads again.

  http_stall_read.py PORT PATH READ STALL READ2 OUT
    GETs PATH on 127.0.0.1:PORT with a 16 KiB receive buffer and a 536 byte
    MSS, reads the
    body for READ seconds, stops reading for STALL seconds (the socket
    buffers fill, the server cannot send), reads for READ2 seconds, then,
    still connected, asks /api/status for the stream client's counters.
    Writes the body to OUT and prints one line:
      before B after A frames F skipped S
    (B: body bytes read before the stall, A: after it; F, S: the server's
    counts of frames sent to this client and frames it skipped; -1 when
    /api/status lists no single stream client)
"""
import json
import socket
import sys
import time
import urllib.request


def read_for(s, secs):
    out, end = b"", time.monotonic() + secs
    while time.monotonic() < end:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        if not b:
            break
        out += b
    return out


def counters(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/api/status" % port, timeout=5) as r:
        st = json.load(r)
    found = []

    def walk(v):
        if isinstance(v, dict):
            if "skipped" in v and "frames" in v and "fps_limit" in v:
                found.append(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(st)
    return (found[0]["frames"], found[0]["skipped"]) if len(found) == 1 else (-1, -1)


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    read1, stall, read2, out = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    # a small MSS keeps the server's send buffer small too (the kernel sizes
    # it by segments): its backlog then stays well under what a stall holds
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    s.connect(("127.0.0.1", port))
    s.settimeout(0.1)
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, port)).encode())
    a = read_for(s, read1)
    time.sleep(stall)
    b = read_for(s, read2)
    frames, skipped = counters(port)
    s.close()
    i = a.find(b"\r\n\r\n")
    body = a[i + 4:] if i >= 0 else b""
    with open(out, "wb") as f:
        f.write(body + b)
    print("before %d after %d frames %d skipped %d" % (len(body), len(b), frames, skipped))


main()
