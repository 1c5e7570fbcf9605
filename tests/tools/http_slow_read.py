#!/usr/bin/env python3
"""A stream client that reads steadily at a low rate until killed.

  http_slow_read.py PORT PATH RATE OUT
    GETs PATH on 127.0.0.1:PORT and reads the response at RATE bytes a
    second, in small reads every 20 ms, appending what it reads to OUT
    (flushed after each read, so OUT's size is what it has received).

curl --limit-rate is not this: it paces over 3 s periods, so it reads in
bursts with pauses of about 3 s between them, each as long as a typical
client timeout. A viewer on a slow link reads as its link delivers, evenly.
"""
import socket
import sys
import time


def main():
    port, path, rate, out = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
    tick = 0.02
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, port)).encode())
    start, got = time.monotonic(), 0
    with open(out, "wb", buffering=0) as f:
        while True:
            # what the rate allows by now, in reads of at most 64 KiB
            allowed = int((time.monotonic() - start) * rate) - got
            if allowed <= 0:
                time.sleep(tick)
                continue
            b = s.recv(min(allowed, 65536))
            if not b:
                return
            f.write(b)
            got += len(b)


main()
