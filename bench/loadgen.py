#!/usr/bin/python3
"""Data set generator and checker shared by bench/index-memory.sh and bench/capacity.sh.

Key i is "key:%012d" % i: the names redis-benchmark -r generates for key:__rand_int__, so
benchmark GETs hit the loaded keys. Its value is the key followed by ";" repeated and cut to the
value size, so a value read back can be checked against the key it was stored under.

  loadgen.py resp N SIZE            RESP "SET key value" commands for keys 0..N-1 on stdout,
                                    written in ~4 MiB chunks (for redis-cli --pipe)
  loadgen.py verify PORT N SIZE K   STRLEN and GET of K random keys (plus the first and last)
                                    against 127.0.0.1:PORT; prints "ok K" or the first mismatch
                                    and exits 1
"""

import random
import sys


def key(i):
    return b"key:%012d" % i


def value(k, size):
    unit = k + b";"
    return (unit * (size // len(unit) + 1))[:size]


def resp(n, size):
    out = sys.stdout.buffer
    # Every key has the same length, so the RESP frame is the same around key and value.
    head = b"*3\r\n$3\r\nSET\r\n$16\r\n"
    mid = b"\r\n$%d\r\n" % size
    reps = size // 17 + 1
    batch = 4096 if size >= 256 else 65536
    for start in range(0, n, batch):
        parts = []
        for i in range(start, min(start + batch, n)):
            k = b"key:%012d" % i
            parts.append(head + k + mid + ((k + b";") * reps)[:size] + b"\r\n")
        out.write(b"".join(parts))
    out.flush()


def verify(port, n, size, samples):
    import redis  # Debian's python3-redis

    r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
    rng = random.Random()
    idx = [0, n - 1] + [rng.randrange(n) for _ in range(samples)]
    for i in idx:
        k = key(i)
        length = r.strlen(k)
        if length != size:
            print("STRLEN %s = %r, want %d" % (k.decode(), length, size))
            return 1
        got = r.get(k)
        if got != value(k, size):
            shown = got if got is None else got[:40]
            print("GET %s returned %r..., want %r..." % (k.decode(), shown, value(k, size)[:40]))
            return 1
    print("ok %d" % len(idx))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "resp":
        n, size = int(argv[2]), int(argv[3])
        if n < 1 or size < 1:
            raise SystemExit("N and SIZE must be positive")
        try:
            resp(n, size)
        except BrokenPipeError:
            # The reader (redis-cli) went away; it reports why.
            sys.stderr.write("loadgen.py: output pipe closed after a partial write\n")
            return 1
        return 0
    if len(argv) == 6 and argv[1] == "verify":
        return verify(int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
