#!/usr/bin/python3
"""MIGRATE throughput: keys/s moved by `MIGRATE host port "" 0 timeout KEYS k1..k100` batches of
1 KiB values, Lavik -> Lavik and redis-server -> redis-server, in the same run.

For each pair: start source and target on free 127.0.0.1 ports, fill the source with KEYS keys
(pipelined SETs), then move them all with one client issuing MIGRATE batches back to back, and
report keys/s, MB/s and the server CPU per key moved (utime+stime of source and target from
/proc/PID/stat over the window). Checks that the target holds every key afterwards and the source
none. Stops every server it started on every exit (by PID).

    bench/migrate.py                    # 200k keys, batches of 100
    KEYS=50000 BATCH=100 bench/migrate.py
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import redis

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LAVIK = os.environ.get("LAVIK_BIN", os.path.join(REPO, "build", "lavik"))
NKEYS = int(os.environ.get("KEYS", "200000"))
BATCH = int(os.environ.get("BATCH", "100"))
VALUE = 1024
THREADS = os.environ.get("LAVIK_THREADS", "1")
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Server:
    def __init__(self, kind, tmp):
        self.kind, self.port = kind, free_port()
        self.dir = tempfile.mkdtemp(prefix=f"mig-{kind}-", dir=tmp)
        if kind == "lavik":
            argv = [LAVIK, "--port", str(self.port), "--threads", THREADS, "--data-file",
                    os.path.join(self.dir, "data"), "--log-dir", self.dir]
        else:
            argv = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
                    "--bind", "127.0.0.1", "--dir", self.dir]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port, socket_timeout=60)
        deadline = time.monotonic() + 15
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{kind} did not start")
                time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def key(i):
    return f"key:{i:012d}"


def run_pair(kind, tmp):
    src, dst = Server(kind, tmp), Server(kind, tmp)
    try:
        value = b"v" * VALUE
        pipe = src.client.pipeline(transaction=False)
        for i in range(NKEYS):
            pipe.set(key(i), value)
            if i % 1000 == 999:
                pipe.execute()
        pipe.execute()
        assert src.client.dbsize() == NKEYS, "fill incomplete"
        c0 = cpu_seconds(src.proc.pid) + cpu_seconds(dst.proc.pid)
        t0 = time.monotonic()
        for first in range(0, NKEYS, BATCH):
            keys = [key(i) for i in range(first, min(NKEYS, first + BATCH))]
            reply = src.client.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 10000,
                                               "KEYS", *keys)
            assert reply in (b"OK", "OK"), reply
        elapsed = time.monotonic() - t0
        cpu = cpu_seconds(src.proc.pid) + cpu_seconds(dst.proc.pid) - c0
        assert dst.client.dbsize() == NKEYS and src.client.dbsize() == 0, "keys lost"
        assert dst.client.get(key(NKEYS - 1)) == value
        return NKEYS / elapsed, NKEYS * VALUE / elapsed / 1e6, cpu / NKEYS * 1e6
    finally:
        src.stop()
        dst.stop()


def main():
    if not os.path.exists(LAVIK):
        sys.exit(f"{LAVIK} not found: build lavik first")
    tmp = tempfile.mkdtemp(prefix="bench-migrate-", dir=os.path.join(REPO, "bench"))
    try:
        rows = []
        for kind in ("lavik", "redis"):
            rows.append((kind, *run_pair(kind, tmp)))
        print(f"MIGRATE KEYS, {NKEYS} keys x {VALUE} B, batches of {BATCH}, one client, "
              f"lavik --threads {THREADS}")
        print("| pair | keys/s | MB/s | server CPU µs/key (source+target) |")
        print("|---|---:|---:|---:|")
        for kind, kps, mbs, us in rows:
            print(f"| {kind} → {kind} | {kps:,.0f} | {mbs:.1f} | {us:.1f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
