#!/usr/bin/env python3
"""replication_master.py: the cost of being a replication master (doc/replication.md, "Cost").

For lavik and redis-server in the same run: SET throughput (redis-benchmark, pipeline PIPE,
random keys) and the master's CPU time per request (utime+stime from /proc/PID/stat over the
run) with 0 replicas and with 1 replica (a redis-server replica on the same machine). Reports
each figure and the ratios with/without a replica, and lavik/redis.

Environment: LAVIK_BIN [build/lavik], REQUESTS [200000], PIPE [16], CLIENTS [50], VALUE [64],
ROUNDS [2] (the best of ROUNDS runs is kept), LAVIK_THREADS [1], PORT_BASE [7600].
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAVIK_BIN = os.environ.get("LAVIK_BIN", os.path.join(ROOT, "build", "lavik"))
REQUESTS = int(os.environ.get("REQUESTS", "200000"))
PIPE = int(os.environ.get("PIPE", "16"))
CLIENTS = int(os.environ.get("CLIENTS", "50"))
VALUE = int(os.environ.get("VALUE", "64"))
ROUNDS = int(os.environ.get("ROUNDS", "2"))
THREADS = os.environ.get("LAVIK_THREADS", "1")
PORT = int(os.environ.get("PORT_BASE", "7600"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wait_ping(port, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if redis.Redis(port=port).ping():
                return
        except redis.exceptions.RedisError:
            time.sleep(0.05)
    raise RuntimeError(f"no server on {port}")


def start(kind, port, tmp):
    if kind == "lavik":
        d = os.path.join(tmp, f"lavik-{port}")
        os.makedirs(d, exist_ok=True)
        argv = [LAVIK_BIN, "--port", str(port), "--threads", THREADS, "--data-file",
                os.path.join(d, "data"), "--log-dir", d]
    else:
        argv = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                "--dir", tmp, "--repl-diskless-sync-delay", "0"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
    wait_ping(port)
    return p


def bench(port, pid):
    best = None
    for _ in range(ROUNDS):
        before = cpu_s(pid)
        t0 = time.time()
        out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "set", "-n", str(REQUESTS),
                              "-P", str(PIPE), "-c", str(CLIENTS), "-r", "100000", "-d", str(VALUE),
                              "-q"], capture_output=True, text=True).stdout
        elapsed = time.time() - t0
        used = cpu_s(pid) - before
        m = re.search(r"([\d.]+) requests per second", out.replace("\r", "\n"))
        ops = float(m.group(1)) if m else REQUESTS / elapsed
        r = (ops, used * 1e6 / REQUESTS)
        if best is None or r[0] > best[0]:
            best = r
    return best


def main():
    tmp = tempfile.mkdtemp(prefix="lavik-repl-bench-")
    procs = []
    results = {}
    try:
        for i, kind in enumerate(("lavik", "redis")):
            port = PORT + 10 * i
            master = start(kind, port, tmp)
            procs.append(master)
            c = redis.Redis(port=port)
            c.config_set("repl-diskless-sync-delay", 0)
            results[(kind, 0)] = bench(port, master.pid)
            rep = start("redis", port + 1, tmp)
            procs.append(rep)
            rc = redis.Redis(port=port + 1)
            rc.replicaof("127.0.0.1", port)
            deadline = time.time() + 60
            while rc.info("replication").get("master_link_status") != "up":
                if time.time() > deadline:
                    raise RuntimeError("replica did not sync")
                time.sleep(0.1)
            results[(kind, 1)] = bench(port, master.pid)
            # The replica must have received everything.
            deadline = time.time() + 60
            while (rc.info("replication")["slave_repl_offset"] !=
                   c.info("replication")["master_repl_offset"]):
                if time.time() > deadline:
                    raise RuntimeError("replica did not catch up")
                time.sleep(0.1)
            assert rc.dbsize() == c.dbsize()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"SET, {REQUESTS} requests, -P {PIPE}, -c {CLIENTS}, {VALUE}-byte values, "
          f"lavik --threads {THREADS}")
    print("| server | replicas | SET ops/s | master CPU µs/request |")
    print("|---|---|---|---|")
    for kind in ("lavik", "redis"):
        for n in (0, 1):
            ops, us = results[(kind, n)]
            print(f"| {kind} | {n} | {ops:,.0f} | {us:.2f} |")
    for kind in ("lavik", "redis"):
        (o0, u0), (o1, u1) = results[(kind, 0)], results[(kind, 1)]
        print(f"{kind}: 1 replica / 0 replicas: ops {o1 / o0:.2f}x, CPU per request {u1 / u0:.2f}x")
    for n in (0, 1):
        (ol, ul), (orr, ur) = results[("lavik", n)], results[("redis", n)]
        print(f"{n} replica(s): lavik / redis: ops {ol / orr:.2f}x, CPU per request {ul / ur:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
