"""ioredis (npm) Cluster against 3 nodes made a cluster by redis-cli --cluster create: 1,000 keys
written and read back, and a MOVED redirect followed (doc/cluster.md). ioredis is installed on
demand into tests/integration/node/node_modules from its package.json (npm's registry)."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from test_cluster import trio  # noqa: F401  (the fixture: 3 nodes, a formed cluster)

NODE_DIR = Path(__file__).parent / "node"


def ioredis_ready():
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise AssertionError("node and npm are needed (Debian: nodejs, npm)")
    if not (NODE_DIR / "node_modules" / "ioredis").is_dir():
        out = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                             cwd=NODE_DIR, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr


def test_ioredis_cluster_reads_writes_and_follows_moved(trio):  # noqa: F811
    nodes, clients, ps = trio
    ioredis_ready()
    out = subprocess.run(["node", "cluster_rw.js", str(ps[0]), "1000"], cwd=NODE_DIR,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["wrong"] == 0
    assert r["reply"] == "OK" and r["there"] == "moved-here" and r["viaCluster"] == "moved-here"
    assert f"MOVED {r['slot']} 127.0.0.1:{r['otherPort']}" in r["redirects"]
    assert sum(c.dbsize() for c in clients) == 1001
