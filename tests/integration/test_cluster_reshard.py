"""redis-cli --cluster reshard moving slots between live nodes while a cluster client keeps
writing: MIGRATE carries the keys, clients follow MOVED/ASK, and every acknowledged write reads
back afterwards — on three Lavik nodes, and both ways between redis-server and Lavik nodes in a
mixed cluster (doc/cluster.md, doc/migrate.md). Nodes, ports and waits come from test_cluster."""
import threading
import time

from redis.cluster import ClusterNode, RedisCluster

from test_cluster import formed, ports, redis_cli, start_node, wait_agree



def slots_of(c):
    """Slots the node itself owns, from CLUSTER NODES' myself line."""
    n = 0
    for line in c.execute_command("CLUSTER", "NODES").splitlines():
        f = line.split()
        if "myself" in f[2]:
            for r in f[8:]:
                if r.startswith("["):
                    continue
                lo, _, hi = r.partition("-")
                n += int(hi or lo) - int(lo) + 1
    return n


def reshard(port, src, dst, count):
    out = redis_cli("--cluster", "reshard", f"127.0.0.1:{port}", "--cluster-from", src,
                    "--cluster-to", dst, "--cluster-slots", str(count), "--cluster-yes",
                    timeout=240)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def check(port):
    out = redis_cli("--cluster", "check", f"127.0.0.1:{port}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "All 16384 slots covered" in out.stdout
    assert "[OK] All nodes agree about slots configuration." in out.stdout


class Writer:
    """A cluster client writing fresh keys until stopped; remembers what was acknowledged."""

    def __init__(self, port, prefix):
        self.rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", port)],
                               decode_responses=True)
        self.prefix = prefix
        self.acked = {}
        self.errors = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        i = 0
        while not self.stop.is_set():
            k, v = f"{self.prefix}:{i}", f"v{i}"
            try:
                if self.rc.set(k, v):
                    self.acked[k] = v
            except Exception:  # a write that got no OK is not counted as acknowledged
                self.errors += 1
            i += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive()


def read_back(port, expected):
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", port)], decode_responses=True)
    keys = list(expected)
    for i in range(0, len(keys), 500):
        batch = keys[i:i + 500]
        got = [rc.get(k) for k in batch]
        missing = [(k, g) for k, g in zip(batch, got) if g != expected[k]]
        assert not missing, missing[:5]
    rc.close()


def seed(port, prefix, n):
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", port)], decode_responses=True)
    data = {f"{prefix}:{i}": f"seed{i}" * 4 for i in range(n)}
    for k, v in data.items():
        rc.set(k, v)
    rc.close()
    return data


def test_reshard_1000_slots_under_write_load(tmp_path):
    ps = ports(3)
    nodes = [start_node(tmp_path, p) for p in ps]
    try:
        clients = formed(nodes, ps)
        ids = [c.execute_command("CLUSTER", "MYID") for c in clients]
        before = [slots_of(c) for c in clients]
        data = seed(ps[0], "pre", 5000)
        with Writer(ps[1], "live") as w:
            time.sleep(0.3)
            reshard(ps[0], ids[0], ids[1], 1000)
            time.sleep(0.3)
        assert len(w.acked) > 100, (len(w.acked), w.errors)
        wait_agree(clients)
        check(ps[0])
        assert [slots_of(c) for c in clients] == [before[0] - 1000, before[1] + 1000, before[2]]
        data.update(w.acked)
        read_back(ps[2], data)
    finally:
        for n in nodes:
            n.cleanup()


def test_mixed_cluster_resharded_both_ways(tmp_path):
    """Two redis-server 7.0.15 nodes and one node of the target: slots go from a redis-server
    node to it and from it to the other redis-server node."""
    ps = ports(3)
    nodes = [start_node(tmp_path, ps[0], redis_server=True),
             start_node(tmp_path, ps[1], redis_server=True), start_node(tmp_path, ps[2])]
    try:
        clients = formed(nodes, ps)
        ids = [c.execute_command("CLUSTER", "MYID") for c in clients]
        data = seed(ps[0], "mix", 3000)
        with Writer(ps[0], "live1") as w1:
            reshard(ps[0], ids[0], ids[2], 500)   # redis-server -> target
        with Writer(ps[1], "live2") as w2:
            reshard(ps[2], ids[2], ids[1], 700)   # target -> redis-server
        wait_agree(clients)
        check(ps[1])
        data.update(w1.acked)
        data.update(w2.acked)
        read_back(ps[1], data)
        # The target node kept what it did not give away, and serves it.
        assert slots_of(clients[2]) > 0
        assert clients[2].dbsize() > 0
    finally:
        for n in nodes:
            n.cleanup()
