#!/usr/bin/env python3
"""sync_dip.py: how a master serves its clients while a replica takes a full sync of a data set
larger than its value cache (doc/replication.md, "The master during a full sync").

For lavik (with --cache-mb CACHE_MB, so the data set is many times its value cache) and
redis-server in the same run, one master at a time: load KEYS keys of VALUE bytes
(bench/loadgen.py through redis-cli --pipe), start a client load on the master (redis-benchmark
TESTS (GET) of random loaded keys, CLIENTS connections, pipeline 1, on CLIENT_CPUS), and sample
the master's total_commands_processed every SAMPLE_MS: BEFORE_S seconds alone, then a
redis-server replica (the same replica for both masters, on REPLICA_CPUS) runs REPLICAOF and
the sync runs until the replica's link is up and it holds every key, then AFTER_S seconds more.
Reports, per master: ops/s before, during the sync (mean and the worst sample) and after, the
dip (during / before), the sync's duration and the master's CPU per request in each phase.

Environment: LAVIK_BIN [build/lavik], LAVIK_THREADS [1], KEYS [2000000], VALUE [1024],
CACHE_MB [256], TESTS [get], CLIENTS [50], BEFORE_S [4], AFTER_S [4], SAMPLE_MS [250],
MASTER_CPUS [1], CLIENT_CPUS [0], REPLICA_CPUS [0], PORT_BASE [7700], RESULTS_DIR
[bench/results]. Output: a Markdown table on stdout and in RESULTS_DIR/sync-dip-<stamp>.md.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAVIK_BIN = os.environ.get("LAVIK_BIN", os.path.join(ROOT, "build", "lavik"))
THREADS = os.environ.get("LAVIK_THREADS", "1")
KEYS = int(os.environ.get("KEYS", "2000000"))
VALUE = int(os.environ.get("VALUE", "1024"))
CACHE_MB = os.environ.get("CACHE_MB", "256")
TESTS = os.environ.get("TESTS", "get")
CLIENTS = os.environ.get("CLIENTS", "50")
BEFORE_S = float(os.environ.get("BEFORE_S", "4"))
AFTER_S = float(os.environ.get("AFTER_S", "4"))
SAMPLE_MS = int(os.environ.get("SAMPLE_MS", "250"))
MASTER_CPUS = os.environ.get("MASTER_CPUS", "1")
CLIENT_CPUS = os.environ.get("CLIENT_CPUS", "0")
REPLICA_CPUS = os.environ.get("REPLICA_CPUS", "0")
PORT = int(os.environ.get("PORT_BASE", "7700"))
RESULTS_DIR = os.environ.get("RESULTS_DIR", os.path.join(ROOT, "bench", "results"))
TICK = os.sysconf("SC_CLK_TCK")
PY = "/usr/bin/python3"


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if pred():
                return
        except redis.exceptions.RedisError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def start(argv, cpus, cwd):
    return subprocess.Popen(["taskset", "-c", cpus] + argv, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def load(port):
    gen = subprocess.Popen([PY, os.path.join(ROOT, "bench", "loadgen.py"), "resp", str(KEYS),
                            str(VALUE)], stdout=subprocess.PIPE)
    cli = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=gen.stdout,
                         capture_output=True, text=True)
    gen.wait()
    if cli.returncode != 0 or f"replies: {KEYS}" not in cli.stdout:
        raise RuntimeError(f"loading {port} failed: {cli.stdout[-300:]} {cli.stderr[-300:]}")


def run_master(kind, tmp):
    port, rport = PORT + (0 if kind == "lavik" else 10), PORT + 1 + (0 if kind == "lavik" else 10)
    d = os.path.join(tmp, kind)
    os.makedirs(d)
    if kind == "lavik":
        argv = [LAVIK_BIN, "--port", str(port), "--threads", THREADS, "--cache-mb", CACHE_MB,
                "--data-file", os.path.join(d, "data"), "--log-dir", d,
                "--repl-diskless-sync-delay", "0"]
    else:
        argv = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                "--dir", d, "--repl-diskless-sync-delay", "0"]
    master = start(argv, MASTER_CPUS, d)
    replica = load_proc = None
    try:
        m = redis.Redis(port=port, socket_timeout=30)
        wait_for(m.ping, 30, f"{kind} master")
        t0 = time.time()
        load(port)
        load_s = time.time() - t0
        assert m.dbsize() == KEYS
        rdir = os.path.join(d, "replica")
        os.makedirs(rdir)
        replica = start(["redis-server", "--port", str(rport), "--save", "", "--appendonly", "no",
                         "--dir", rdir], REPLICA_CPUS, rdir)
        r = redis.Redis(port=rport, socket_timeout=30)
        wait_for(r.ping, 30, "replica")
        # The client load: random loaded keys, until stopped.
        load_proc = subprocess.Popen(
            ["taskset", "-c", CLIENT_CPUS, "redis-benchmark", "-p", str(port), "-t", TESTS,
             "-r", str(KEYS), "-d", str(VALUE), "-c", CLIENTS, "-n", "2000000000", "-l", "-q"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples = []  # (time, commands, cpu, phase)
        phase = ["before"]

        def sample():
            samples.append((time.time(), int(m.info("stats")["total_commands_processed"]),
                            cpu_s(master.pid), phase[0]))

        time.sleep(1.0)  # the load ramps up
        sample()
        end = time.time() + BEFORE_S
        while time.time() < end:
            time.sleep(SAMPLE_MS / 1000)
            sample()
        phase[0] = "sync"
        sync_start = time.time()
        r.execute_command("REPLICAOF", "127.0.0.1", str(port))
        while True:
            time.sleep(SAMPLE_MS / 1000)
            sample()
            rep = r.info("replication")
            if rep.get("master_link_status") == "up" and r.dbsize() >= KEYS:
                break
            if time.time() - sync_start > 1800:
                raise RuntimeError("the full sync did not finish in 30 min")
        sync_s = time.time() - sync_start
        phase[0] = "after"
        end = time.time() + AFTER_S
        while time.time() < end:
            time.sleep(SAMPLE_MS / 1000)
            sample()
        return {"load_s": load_s, "sync_s": sync_s, "samples": samples}
    finally:
        if load_proc is not None:
            load_proc.terminate()
            load_proc.wait()
        stop(replica)
        stop(master)


def phase_stats(samples, phase):
    rates, cpus = [], []
    total_cmds = total_cpu = total_t = 0.0
    for (t0, c0, u0, _), (t1, c1, u1, p) in zip(samples, samples[1:]):
        if p != phase or t1 <= t0:
            continue
        rates.append((c1 - c0) / (t1 - t0))
        total_cmds += c1 - c0
        total_cpu += u1 - u0
        total_t += t1 - t0
    if not rates:
        return None
    return {"mean": total_cmds / total_t, "min": min(rates),
            "cpu_us": total_cpu * 1e6 / total_cmds if total_cmds else 0.0}


def main():
    for tool in ("redis-server", "redis-cli", "redis-benchmark", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"sync_dip.py: {tool} not found")
    if not os.access(LAVIK_BIN, os.X_OK):
        sys.exit(f"sync_dip.py: no {LAVIK_BIN}: build first")
    tmp = tempfile.mkdtemp(prefix="lavik-sync-dip-")
    try:
        results = {k: run_master(k, tmp) for k in ("lavik", "redis")}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    lines = [f"# A master during a full sync, {time.strftime('%Y-%m-%d %H:%M:%S')}", "",
             f"- {KEYS} keys x {VALUE} B; lavik --threads {THREADS} --cache-mb {CACHE_MB} "
             f"(the data set is {KEYS * VALUE / (int(CACHE_MB) << 20):.1f}x its value cache)",
             f"- client: redis-benchmark -t {TESTS} -r {KEYS} -c {CLIENTS} -P 1 on CPUs "
             f"{CLIENT_CPUS}; master on CPUs {MASTER_CPUS}; a redis-server replica on CPUs "
             f"{REPLICA_CPUS}; samples every {SAMPLE_MS} ms",
             f"- load average at the end: {os.getloadavg()[0]:.2f}", "",
             "| master | phase | ops/s (mean) | ops/s (worst sample) | CPU us/request | "
             "vs before |", "|---|---|---|---|---|---|"]
    for kind, res in results.items():
        before = phase_stats(res["samples"], "before")
        for phase in ("before", "sync", "after"):
            st = phase_stats(res["samples"], phase)
            if st is None:
                continue
            lines.append(f"| {kind} | {phase} | {st['mean']:.0f} | {st['min']:.0f} | "
                         f"{st['cpu_us']:.1f} | {st['mean'] / before['mean']:.2f} |")
    lines.append("")
    for kind, res in results.items():
        lines.append(f"- {kind}: load {res['load_s']:.1f} s, full sync {res['sync_s']:.1f} s "
                     f"({KEYS / res['sync_s']:.0f} keys/s)")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(RESULTS_DIR, exist_ok=True)
    with open(os.path.join(RESULTS_DIR, f"sync-dip-{stamp}.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
