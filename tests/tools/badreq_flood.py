#!/usr/bin/env python3
"""Sends one request again and again for a while (log flood tests).

  badreq_flood.py PORT SECONDS PATH HOST
    4 threads, each a new connection per request (GET PATH with the Host
    header HOST) for SECONDS. Prints "requests N codes C1:n1,C2:n2".
"""
import socket
import sys
import threading
import time
from collections import Counter

codes = Counter()
lock = threading.Lock()


def run(port, secs, path, host):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        code = "err"
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=3)
            s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                       % (path, host)).encode())
            b = s.recv(64)
            if b.startswith(b"HTTP/1.1 "):
                code = b[9:12].decode()
            s.close()
        except OSError:
            pass
        with lock:
            codes[code] += 1


def main():
    port, secs, path, host = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
    ts = [threading.Thread(target=run, args=(port, secs, path, host)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("requests %d codes %s" % (sum(codes.values()),
                                     ",".join("%s:%d" % kv for kv in sorted(codes.items()))))


main()
