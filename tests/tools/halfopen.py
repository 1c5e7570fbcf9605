#!/usr/bin/env python3
"""Half-open connection flood, then a new viewer (issue 22 part 5).

  halfopen.py PORT N NADDR CLOSE_WAIT
    Opens N connections to 127.0.0.1:PORT, round robin from the source
    addresses 127.0.0.2 .. 127.0.0.(NADDR+1); each sends a request line and
    one header and never the blank line that ends the head. Then a new
    viewer from 127.0.0.1 asks for /stream and the time to its first whole
    JPEG part is taken. Prints:
      opened N_OK failed N_FAIL open_ms T        (connects that succeeded)
      held K                                    (still open before the viewer)
      viewer_first_part_ms T                    (-1: none within 10 s)
      closed_after_s S held K                   (after CLOSE_WAIT seconds)
"""
import errno
import select
import socket
import sys
import time


def still_open(socks):
    """The sockets the server has not closed (no EOF, no reset)."""
    alive = []
    for s in socks:
        try:
            p = select.poll()
            p.register(s, select.POLLIN)
            if p.poll(0) and not s.recv(4096, socket.MSG_PEEK):
                s.close()
                continue
        except OSError:
            s.close()
            continue
        alive.append(s)
    return alive


def viewer(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    t0 = time.monotonic()
    try:
        s.sendall(("GET /stream HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port).encode())
        buf = b""
        while time.monotonic() - t0 < 10:
            b = s.recv(65536)
            if not b:
                return -1
            buf += b
            i = buf.find(b"\r\n\r\n")
            if i >= 0 and buf.find(b"\xff\xd9", i) >= 0:
                return int((time.monotonic() - t0) * 1000)
    except OSError:
        return -1
    finally:
        s.close()
    return -1


def main():
    port, n, naddr, wait = (int(a) for a in sys.argv[1:5])
    socks, failed = [], 0
    t0 = time.monotonic()
    for i in range(n):
        s = socket.socket()
        try:
            s.bind(("127.0.0.%d" % (2 + i % naddr), 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(s)
        except OSError as e:
            if e.errno == errno.EMFILE:
                print("out of file descriptors at %d" % i, file=sys.stderr)
            failed += 1
            s.close()
    print("opened %d failed %d open_ms %d" % (len(socks), failed,
                                               (time.monotonic() - t0) * 1000))
    time.sleep(0.3)  # the server has taken or refused them
    socks = still_open(socks)
    print("held %d" % len(socks))
    sys.stdout.flush()
    print("viewer_first_part_ms %d" % viewer(port))
    sys.stdout.flush()
    while time.monotonic() - t0 < wait:
        time.sleep(0.1)
    socks = still_open(socks)
    print("closed_after_s %.1f held %d" % (time.monotonic() - t0, len(socks)))
    for s in socks:
        s.close()


main()
