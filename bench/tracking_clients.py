#!/usr/bin/python3
"""Tracking clients for bench/tracking.sh.

  tracking_clients.py PORT CLIENTS KEYS READS [REREAD]

Opens CLIENTS RESP3 connections to 127.0.0.1:PORT, turns CLIENT TRACKING on in each and has
each GET READS random keys of "key:%012d" % i for i < KEYS (redis-benchmark -r KEYS's names),
prints "ready" once every reply arrived, then keeps reading: every invalidation push is
counted and, unless REREAD is 0, its keys are read again (a cache refilling itself, so the
server keeps tracking).
On SIGTERM it prints "invalidations=N rereads=N" and exits.
"""

import random
import selectors
import signal
import socket
import sys


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def key(i):
    return b"key:%012d" % i


class Conn:
    """A connection and a minimal RESP3 reader for the replies and pushes this bench sees."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pending = 0  # replies still expected

    def parse(self, pos):
        """One value from buf[pos:]: (value, next) or None if incomplete."""
        end = self.buf.find(b"\r\n", pos)
        if end < 0:
            return None
        kind, body = self.buf[pos:pos + 1], self.buf[pos + 1:end]
        pos = end + 2
        if kind in (b"$", b"="):
            n = int(body)
            if n < 0:
                return None, pos
            if len(self.buf) < pos + n + 2:
                return None
            return self.buf[pos:pos + n], pos + n + 2
        if kind in (b"*", b">", b"~", b"%"):
            n = int(body) * (2 if kind == b"%" else 1)
            items = []
            for _ in range(max(n, 0)):
                r = self.parse(pos)
                if r is None:
                    return None
                items.append(r[0])
                pos = r[1]
            return (("push", items) if kind == b">" else items), pos
        return body, pos

    def values(self):
        pos = 0
        out = []
        while pos < len(self.buf):
            r = self.parse(pos)
            if r is None:
                break
            out.append(r[0])
            pos = r[1]
        self.buf = self.buf[pos:]
        return out


def main():
    port, clients, keys, reads = (int(a) for a in sys.argv[1:5])
    reread = len(sys.argv) < 6 or sys.argv[5] != "0"
    rng = random.Random(1)
    conns = [Conn(port) for _ in range(clients)]
    for c in conns:
        batch = [command("HELLO", 3), command("CLIENT", "TRACKING", "on")]
        batch += [command("GET", key(rng.randrange(keys))) for _ in range(reads)]
        c.sock.sendall(b"".join(batch))
        c.pending = len(batch)
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c.sock, selectors.EVENT_READ, c)
    stats = {"invalidations": 0, "rereads": 0}
    ready = False
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        for ev, _ in sel.select(timeout=0.2):
            c = ev.data
            try:
                data = c.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                sel.unregister(c.sock)
                continue
            c.buf += data
            again = []
            for v in c.values():
                if isinstance(v, tuple) and v[1] and v[1][0] == b"invalidate":
                    stats["invalidations"] += 1
                    if reread and isinstance(v[1][1], list):
                        again += v[1][1]
                else:
                    c.pending -= 1
            if again:
                c.sock.sendall(b"".join(command("GET", k) for k in again))
                c.pending += len(again)
                stats["rereads"] += len(again)
        if not ready and all(c.pending == 0 for c in conns):
            ready = True
            print("ready", flush=True)
    print(f"invalidations={stats['invalidations']} rereads={stats['rereads']}", flush=True)


if __name__ == "__main__":
    main()
