#!/usr/bin/env python3
"""Many slow stream readers from several source addresses, and the memory
the daemon holds for them.

  http_slow_many.py PORT PATH N EVERY RATE SECONDS PID ADDR...
    Opens N connections GETting PATH on 127.0.0.1:PORT, one every EVERY
    seconds, from the source addresses ADDR... in turn (127.0.0.2 etc.: all
    of 127/8 is loopback), each read evenly at RATE bytes a second (as
    http_slow_read.py) until SECONDS after the start. Every 0.25 s it samples
    daemon PID: VmRSS plus the bytes of the memfds it has open (its stream
    parts: their pages are not in RSS). Prints, one per line:
      peak_kib K      RSS + memfd bytes at the highest sample, KiB
      peak_rss_kib K  RSS at that sample
      peak_memfd_kib K
      opened N        connections made
      bytes N         bytes read over all connections
(A reader sees the daemon drop it only after it read what was queued
before the reset: minutes at 2 KB/s. Ask the daemon instead.)
"""
import os
import socket
import sys
import time


def sample(pid):
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    memfd = 0
    d = "/proc/%d/fd" % pid
    for n in os.listdir(d):
        try:
            if os.readlink(os.path.join(d, n)).startswith("/memfd:"):
                memfd += os.stat(os.path.join(d, n)).st_blocks * 512
        except OSError:
            pass  # closed meanwhile
    return rss, memfd


def main():
    port, path, n, every, rate, secs, pid = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                             float(sys.argv[4]), float(sys.argv[5]),
                                             float(sys.argv[6]), int(sys.argv[7]))
    addrs = sys.argv[8:] or ["127.0.0.1"]
    req = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, port)).encode()
    conns = []  # [socket, start, got, open]
    start = time.monotonic()
    next_sample = start
    peak = (0, 0, 0)
    opened = total = 0
    while True:
        now = time.monotonic()
        if now - start >= secs:
            break
        if opened < n and now - start >= opened * every:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((addrs[opened % len(addrs)], 0))
                s.connect(("127.0.0.1", port))
                s.sendall(req)
                s.setblocking(False)
                conns.append([s, now, 0, True])
            except OSError:
                s.close()
            opened += 1
        for c in conns:
            if not c[3]:
                continue
            allowed = int((now - c[1]) * rate) - c[2]
            if allowed <= 0:
                continue
            try:
                b = c[0].recv(min(allowed, 65536))
            except BlockingIOError:
                continue
            except OSError:
                b = b""
            if not b:
                c[3] = False
                c[0].close()
                continue
            c[2] += len(b)
            total += len(b)
        if now >= next_sample:
            next_sample = now + 0.25
            try:
                rss, memfd = sample(pid)
            except OSError:
                break  # the daemon is gone
            if rss + memfd > peak[0]:
                peak = (rss + memfd, rss, memfd)
        time.sleep(0.02)
    for c in conns:
        if c[3]:
            c[0].close()
    print("peak_kib %d" % (peak[0] // 1024))
    print("peak_rss_kib %d" % (peak[1] // 1024))
    print("peak_memfd_kib %d" % (peak[2] // 1024))
    print("opened %d" % opened)
    print("bytes %d" % total)


main()
