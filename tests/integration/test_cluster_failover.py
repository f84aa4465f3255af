"""Redis Cluster replicas and failover (doc/cluster.md "Replicas and failover"): CLUSTER
REPLICATE and redis-cli --cluster create --cluster-replicas 1, a replica's role in NODES, SLOTS,
SHARDS, REPLICAS and INFO, READONLY reads, automatic failover after kill -9 of a master (and the
old master rejoining as a replica), CLUSTER FAILOVER [FORCE|TAKEOVER], and mixed clusters where
a redis-server 7.0 replica is elected by Lavik masters and a Lavik replica by redis-server ones.

This file's nodes use ports of 7300-7489 (conftest.cluster_ports: free with the bus port, port +
10000, and claimed against concurrent runs). Every wait is a poll with a deadline; the node
timeout is short so that each failover takes seconds."""
import subprocess
import threading
import time

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

from conftest import (LAVIK_BIN, TARGET, RawConn, RespError, ServerProcess, cluster_ports, err,
                      key_slot)
from test_cluster import info, redis_cli

BASE = 7300
TIMEOUT_MS = 2000


def ports(n):
    """n fresh ports of this file's range (conftest.cluster_ports)."""
    return cluster_ports(n, BASE)


def start_node(tmp, port, redis_server=False, extra=(), workdir=None):
    # A replica's diskless full sync starts at once (Redis's default waits 5 s for more replicas).
    args = ["--cluster-enabled", "yes", "--cluster-config-file", str(tmp / f"nodes-{port}.conf"),
            "--cluster-node-timeout", str(TIMEOUT_MS), "--repl-diskless-sync-delay", "0"]
    args += list(extra)
    if redis_server:
        argv = ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no",
                "--bind", "127.0.0.1"] + args
        return ServerProcess(argv=argv).start(port=port)
    return ServerProcess(threads=2, extra_args=args, workdir=workdir).start(port=port)


def wait_for(what, check, timeout=20.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except (redis.ConnectionError, redis.ResponseError, redis.TimeoutError) as e:
            last = e
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}: {last!r}")


def past_loading(call, timeout=20.0):
    """call()'s result; -LOADING (a replica loading its master's RDB) is waited out within
    `timeout`, any other error raised."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except redis.exceptions.BusyLoadingError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def nodes_table(c):
    """CLUSTER NODES as {id: (flags set, master id or '-', fields)}. CLUSTER NODES has no
    `loading` flag (nor in Redis 7.0): a replica loading its master's RDB is waited for."""
    text = past_loading(lambda: c.execute_command("CLUSTER", "NODES"))
    out = {}
    for line in text.strip().splitlines():
        f = line.split()
        out[f[0]] = (set(f[2].split(",")), f[3], f)
    return out


def replication(c):
    return c.info("replication")


def agreed(clients, n_nodes):
    """Every node knows n_nodes nodes, none failing, all see the same roles, state ok."""
    views = []
    for c in clients:
        if info(c)["cluster_state"] != "ok":
            return False
        t = nodes_table(c)
        if len(t) != n_nodes:
            return False
        if any({"fail", "fail?", "handshake"} & fl for fl, _, _ in t.values()):
            return False
        views.append(sorted((i, "master" in fl, m) for i, (fl, m, _) in t.items()))
    return all(v == views[0] for v in views)


def form(tmp, n_masters=3, replicas=1, redis_server=(), extra=()):
    """Nodes (indexes in redis_server are redis-server processes) made into a cluster by
    redis-cli --cluster create --cluster-replicas."""
    n = n_masters * (1 + replicas)
    ps = ports(n)
    nodes = []
    try:
        for i, p in enumerate(ps):
            nodes.append(start_node(tmp, p, redis_server=i in redis_server, extra=extra))
        out = redis_cli("--cluster", "create", *[f"127.0.0.1:{p}" for p in ps],
                        "--cluster-replicas", str(replicas), "--cluster-yes")
        assert out.returncode == 0, out.stdout + out.stderr
        clients = [x.client() for x in nodes]
        wait_for("the cluster to agree", lambda: agreed(clients, n))
        return nodes, clients, ps
    except BaseException:
        for x in nodes:
            x.cleanup()
        raise


def roles(clients):
    """{node id: master id or None} as the first client sees it."""
    return {i: (None if "master" in fl else m) for i, (fl, m, _) in nodes_table(clients[0]).items()}


def by_id(clients):
    return {c.execute_command("CLUSTER", "MYID"): c for c in clients}


def replica_linked(c):
    r = replication(c)
    return r["role"] == "slave" and r["master_link_status"] == "up"


@pytest.fixture
def six(tmp_path):
    nodes, clients, ps = form(tmp_path)
    try:
        yield nodes, clients, ps
    finally:
        for n in nodes:
            n.cleanup()


def a_master_and_replica(clients):
    ids = by_id(clients)
    r = roles(clients)
    replica_id = sorted(i for i, m in r.items() if m is not None)[0]
    return ids[r[replica_id]], ids[replica_id], r[replica_id], replica_id


def checked(port):
    """redis-cli --cluster check through the node on `port`: consistent and covered."""
    out = redis_cli("--cluster", "check", f"127.0.0.1:{port}")
    for line in ("[OK] All nodes agree about slots configuration.",
                 "[OK] All 16384 slots covered."):
        assert out.returncode == 0 and line in out.stdout, out.stdout
    return out.stdout


def test_create_with_replicas_and_check(six):
    nodes, clients, ps = six
    report = checked(ps[0])
    assert report.count("1 additional replica(s)") == 3, report
    r = roles(clients)
    masters = [i for i, m in r.items() if m is None]
    assert len(masters) == 3
    assert sorted(m for m in r.values() if m is not None) == sorted(masters)
    ids = by_id(clients)
    for node_id, master_id in r.items():
        c = ids[node_id]
        i = info(c)
        assert i["cluster_size"] == "3" and i["cluster_known_nodes"] == "6"
        fl, m, f = nodes_table(c)[node_id]
        assert "myself" in fl
        if master_id is None:
            assert "master" in fl and m == "-" and len(f) > 8
            reps = c.execute_command("CLUSTER", "REPLICAS", node_id)
            assert len(reps) == 1 and reps[0].split()[3] == node_id
            assert c.execute_command("CLUSTER", "SLAVES", node_id) == reps
            assert replication(c)["connected_slaves"] == 1
        else:
            assert "slave" in fl and m == master_id and len(f) == 8
            # A replica's NODES line carries its master's config epoch.
            assert f[6] == nodes_table(c)[master_id][2][6]
            wait_for("the replica's link", lambda: replica_linked(c))
            with pytest.raises(redis.ResponseError) as e:
                c.execute_command("CLUSTER", "REPLICAS", node_id)
            assert err(e) == "The specified node is not a master"
    # SLOTS: every range names its master, then its replica once that has data (Redis lists a
    # replica whose replication offset is still 0 as unavailable); SHARDS: a master, a replica.
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ps],
                      decode_responses=True, socket_timeout=10)
    for i in range(100):
        rc.set(f"s:{i}", i)
    rc.close()
    for node_id, master_id in r.items():
        if master_id is None:
            assert ids[node_id].execute_command("WAIT", 1, 5000) == 1

    def slots_with_replicas():
        entries = clients[0].execute_command("CLUSTER", "SLOTS")
        return all(len(e) == 4 for e in entries) and entries
    for entry in wait_for("SLOTS to list the replicas", slots_with_replicas):
        assert r[entry[3][2]] == entry[2][2]
    shards = clients[0].execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 3
    for sh in shards:
        d = dict(zip(sh[::2], sh[1::2]))
        roles_in = sorted(dict(zip(n[::2], n[1::2]))["role"] for n in d["nodes"])
        assert roles_in == ["master", "replica"]


def test_replicate_errors(six):
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    other = [c for c in clients if c not in (master, replica)
             and replication(c)["role"] == "master"][0]
    cases = [
        (master, ("CLUSTER", "REPLICATE", "abc"), "Unknown node abc"),
        (master, ("CLUSTER", "REPLICATE", master_id), "Can't replicate myself"),
        (other, ("CLUSTER", "REPLICATE", replica_id),
         "I can only replicate a master, not a replica."),
        (other, ("CLUSTER", "REPLICATE", master_id),
         "To set a master the node must be empty and without assigned slots."),
        (replica, ("REPLICAOF", "127.0.0.1", str(ps[0])), "REPLICAOF not allowed in cluster mode."),
        (master, ("CLUSTER", "FAILOVER"), "You should send CLUSTER FAILOVER to a replica"),
        (replica, ("CLUSTER", "FAILOVER", "bogus"), "syntax error"),
    ]
    for client, args, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            client.execute_command(*args)
        assert err(e) == text, args


def test_replica_serves_readonly_and_redirects_writes(six):
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    key = key_of(clients[0], master_id)
    assert master.set(key, "v1")
    assert master.execute_command("WAIT", 1, 5000) == 1
    mport = master.connection_pool.connection_kwargs["port"]
    slot = key_slot(key)
    with pytest.raises(redis.ResponseError) as e:
        replica.get(key)
    assert err(e) == f"MOVED {slot} 127.0.0.1:{mport}"
    assert replica.execute_command("READONLY")
    assert replica.get(key) == "v1"
    with pytest.raises(redis.ResponseError) as e:
        replica.set(key, "v2")
    assert err(e) == f"MOVED {slot} 127.0.0.1:{mport}"
    assert replica.execute_command("READWRITE")
    with pytest.raises(redis.ResponseError) as e:
        replica.get(key)
    assert err(e).startswith("MOVED ")
    r = replication(replica)
    assert r["role"] == "slave" and r["master_port"] == mport
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ps],
                      decode_responses=True, socket_timeout=10)
    for i in range(300):
        rc.set(f"w:{i}", i)
    assert [rc.get(f"w:{i}") for i in range(300)] == [str(i) for i in range(300)]
    rc.close()
    # As Redis's clusterReset: CLUSTER RESET turns a replica into an empty master.
    assert replica.execute_command("READONLY")
    wait_for("the replica's copy", lambda: replica.dbsize() > 0)
    assert replica.execute_command("CLUSTER", "RESET") == "OK"
    assert replica.dbsize() == 0
    mine = [l for l in replica.execute_command("CLUSTER", "NODES").splitlines() if "myself" in l]
    assert "master" in mine[0].split()[2]
    assert replication(replica)["role"] == "master"


def test_replica_role_survives_restart(tmp_path):
    nodes, clients, ps = form(tmp_path)
    try:
        master, replica, master_id, replica_id = a_master_and_replica(clients)
        idx = clients.index(replica)
        conf = (tmp_path / f"nodes-{ps[idx]}.conf").read_text()
        mine = [l for l in conf.splitlines() if "myself" in l][0].split()
        assert "slave" in mine[2] and mine[3] == master_id
        assert nodes[idx].terminate() == 0
        nodes[idx] = start_node(tmp_path, ps[idx])
        clients[idx] = c = nodes[idx].client()
        # A replica answers -LOADING (CLUSTER MYID has no `loading` flag) while it takes the
        # master's RDB, as Redis does, so the first reply may have to wait for the sync.
        assert past_loading(lambda: c.execute_command("CLUSTER", "MYID")) == replica_id
        wait_for("the restarted replica's link", lambda: replica_linked(c))
        assert nodes_table(c)[replica_id][1] == master_id
        wait_for("agreement", lambda: agreed(clients, 6))
    finally:
        for n in nodes:
            n.cleanup()


def test_replica_killed_continues_with_a_partial_resync(tmp_path, target):
    """kill -9 of a cluster replica: restarted on its nodes.conf, it follows its master again
    and continues the stream with a partial resync — redis-server from the RDB of its sync
    (hence a save point), Lavik from its data file's last consistency point — with every write
    applied once."""
    save = ["--save", "3600 1"]
    nodes, clients, ps = form(tmp_path, extra=save)
    try:
        master, replica, master_id, replica_id = a_master_and_replica(clients)
        idx = clients.index(replica)
        wait_for("the replica's link", lambda: replica_linked(replica))
        if target == "lavik":  # its first consistency point, as redis-server's RDB of the sync
            wait_for("a consistency point",
                     lambda: int(replica.info("storage")["replica_cut_offset"]) >= 0)
        tag = "{" + key_of(master, master_id) + "}"
        for i in range(100):
            master.set(f"{tag}:{i}", i)
            master.incr(f"{tag}:counter")
        full = master.info("stats")["sync_full"]
        partial = master.info("stats")["sync_partial_ok"]
        workdir = nodes[idx].workdir
        nodes[idx].kill()
        for i in range(100, 200):
            master.set(f"{tag}:{i}", i)
            master.incr(f"{tag}:counter")
            master.append(f"{tag}:log", f"{i},")
        nodes[idx] = start_node(tmp_path, ps[idx], extra=save, workdir=workdir)
        nodes[idx].owns_workdir = True
        clients[idx] = c = nodes[idx].client()
        wait_for("the restarted replica's link", lambda: replica_linked(c))
        wait_for("the replica to catch up",
                 lambda: replication(c)["slave_repl_offset"] ==
                 replication(master)["master_repl_offset"])
        stats = master.info("stats")
        assert stats["sync_full"] == full, "the restarted replica was sent a full sync"
        assert stats["sync_partial_ok"] == partial + 1, stats
        wait_for("agreement", lambda: agreed(clients, 6))  # CLUSTERDOWN for its first 2 s
        c.execute_command("READONLY")
        assert c.get(f"{tag}:counter") == "200"
        assert c.get(f"{tag}:log") == ",".join(str(i) for i in range(100, 200)) + ","
        assert [c.get(f"{tag}:{i}") for i in range(200)] == [str(i) for i in range(200)]
    finally:
        for n in nodes:
            n.cleanup()


def test_a_restarted_node_answers_keyed_commands_at_once(tmp_path):
    """Right after a restart a master keeps the cluster down for a moment (Redis's writable
    delay): keyed commands then get CLUSTERDOWN, and the node keeps serving."""
    save = ["--save", "3600 1"]  # redis-server keeps its data through the restart too
    nodes, clients, ps = form(tmp_path, extra=save)
    try:
        master, _, master_id, _ = a_master_and_replica(clients)
        idx = clients.index(master)
        key = key_of(master, master_id)
        master.set(key, "v")
        assert nodes[idx].terminate() == 0
        nodes[idx] = start_node(tmp_path, ps[idx], extra=save, workdir=nodes[idx].workdir)
        nodes[idx].owns_workdir = True
        with RawConn(ps[idx]) as c:
            reply = c.cmd("GET", key)
            assert reply in (RespError("CLUSTERDOWN The cluster is down"), b"v"), reply
        nodes[idx].check_alive()
        clients[idx] = nodes[idx].client()
        wait_for("agreement", lambda: agreed(clients, 6))
        assert clients[idx].get(key) == "v"
    finally:
        for n in nodes:
            n.cleanup()


def cluster_client(ps):
    return RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ps],
                        decode_responses=True, socket_timeout=5, cluster_error_retry_attempts=1)


def key_of(client, node_id):
    """A key whose slot the node owns (as `client` sees it)."""
    ranges = [(e[0], e[1]) for e in client.execute_command("CLUSTER", "SLOTS")
              if e[2][2] == node_id]
    return next(f"k{i}" for i in range(100000)
                if any(a <= key_slot(f"k{i}") <= b for a, b in ranges))


def write_until_ok(live_ports, key, value, timeout):
    """A fresh cluster client per attempt (through the live nodes) until its write succeeds."""
    def attempt():
        rc = None
        try:
            rc = cluster_client(live_ports)
            return rc.set(key, value)
        except (redis.RedisError, redis.exceptions.RedisClusterException):
            return False  # CLUSTERDOWN, a dead node, no slot owner yet: try again
        finally:
            if rc is not None:
                rc.close()
    return wait_for(f"a write of {key}", attempt, timeout=timeout)


# redis-py's ClusterNode.__del__ raises on a node it never connected to (a failed attempt).
unraisable_ok = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@unraisable_ok
def test_automatic_failover_and_old_master_rejoins(tmp_path):
    nodes, clients, ps = form(tmp_path)
    try:
        master, replica, master_id, replica_id = a_master_and_replica(clients)
        idx = clients.index(master)
        epochs = {i: int(f[6]) for i, (_, _, f) in nodes_table(clients[0]).items()}
        rc = cluster_client(ps)
        keys = [f"fo:{i}" for i in range(500)]
        for k in keys:
            rc.set(k, k)
        rc.close()
        assert master.execute_command("WAIT", 1, 5000) == 1
        dead_key = key_of(master, master_id)
        nodes[idx].kill()
        survivors = [c for c in clients if c is not master]
        # A cluster client's writes succeed again within the node timeout plus a few seconds
        # (a deadline, generous for a loaded machine): detection, election, promotion.
        live = [p for i, p in enumerate(ps) if i != idx]
        write_until_ok(live, dead_key, "1", timeout=TIMEOUT_MS / 1000 + 15)
        wait_for("the replica's promotion",
                 lambda: "master" in nodes_table(replica)[replica_id][0] and
                 all(info(c)["cluster_state"] == "ok" for c in survivors), timeout=20)
        mine = nodes_table(replica)[replica_id][2]
        assert int(mine[6]) > max(epochs.values())
        assert len(mine) > 8  # it took the slots
        assert replication(replica)["role"] == "master"
        for c in survivors:
            wait_for("the others to see the new master",
                     lambda: "master" in nodes_table(c)[replica_id][0] and
                     "fail" in nodes_table(c)[master_id][0])
        rc = cluster_client(ps)
        assert [rc.get(k) for k in keys] == keys
        rc.close()
        # The old master comes back with its nodes.conf and follows the new one.
        nodes[idx] = start_node(tmp_path, ps[idx])
        clients[idx] = old = nodes[idx].client()
        wait_for("the old master to become a replica",
                 lambda: nodes_table(old)[master_id][1] == replica_id and
                 "slave" in nodes_table(old)[master_id][0], timeout=20)
        wait_for("its replication link", lambda: replica_linked(old))
        wait_for("agreement", lambda: agreed(clients, 6))
        assert roles(clients)[master_id] == replica_id
        checked(ps[0])
        # It holds its new master's data: the keys of the shard, read after READONLY.
        ranges = [(e[0], e[1]) for e in old.execute_command("CLUSTER", "SLOTS")
                  if e[2][2] == replica_id]
        mine = [k for k in keys if any(a <= key_slot(k) <= b for a, b in ranges)]
        assert mine
        old.execute_command("READONLY")
        wait_for("the data on the old master", lambda: [old.get(k) for k in mine] == mine)
    finally:
        for n in nodes:
            n.cleanup()


def test_manual_failover_loses_no_write(six):
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    acked = {}
    stop = threading.Event()
    errors = []

    def writer():
        rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ps],
                          decode_responses=True, socket_timeout=10)
        i = 0
        while not stop.is_set():
            k = f"mf:{i}"
            try:
                if rc.set(k, i):
                    acked[k] = str(i)
            except Exception as e:  # a failed write is not acknowledged: allowed
                errors.append(e)
            i += 1
        rc.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.5)
        assert replica.execute_command("CLUSTER", "FAILOVER") == "OK"
        wait_for("the manual failover",
                 lambda: "master" in nodes_table(replica)[replica_id][0] and
                 nodes_table(master)[master_id][1] == replica_id, timeout=15)
        time.sleep(0.5)
    finally:
        stop.set()
        t.join(timeout=30)
    assert not t.is_alive()
    assert len(acked) > 0
    wait_for("agreement", lambda: agreed(clients, 6))
    assert replication(replica)["role"] == "master"
    wait_for("the old master's link", lambda: replica_linked(master))
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ps],
                      decode_responses=True, socket_timeout=10)
    lost = [k for k, v in acked.items() if rc.get(k) != v]
    rc.close()
    assert lost == []


def test_failover_force_and_takeover(six):
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    assert replica.execute_command("CLUSTER", "FAILOVER", "FORCE") == "OK"
    wait_for("the forced failover",
             lambda: "master" in nodes_table(replica)[replica_id][0] and
             nodes_table(master)[master_id][1] == replica_id, timeout=15)
    wait_for("agreement", lambda: agreed(clients, 6))
    wait_for("the old master's link", lambda: replica_linked(master))
    epoch = int(nodes_table(master)[replica_id][2][6])
    assert master.execute_command("CLUSTER", "FAILOVER", "TAKEOVER") == "OK"
    wait_for("the takeover",
             lambda: "master" in nodes_table(master)[master_id][0] and
             nodes_table(replica)[replica_id][1] == master_id, timeout=15)
    wait_for("agreement", lambda: agreed(clients, 6))
    assert int(nodes_table(replica)[master_id][2][6]) > epoch
    checked(ps[0])


def mixed(tmp_path, nodes, replica_is_redis):
    """Three masters and one replica of the first, the replica of the other kind (redis-server
    among target masters, or the target among redis-server masters). Fills `nodes`."""
    ps = ports(4)
    for i, p in enumerate(ps):
        nodes.append(start_node(tmp_path, p, redis_server=(i == 3) == replica_is_redis))
    out = redis_cli("--cluster", "create", *[f"127.0.0.1:{p}" for p in ps[:3]], "--cluster-yes")
    assert out.returncode == 0, out.stdout + out.stderr
    clients = [x.client() for x in nodes]
    ids = [c.execute_command("CLUSTER", "MYID") for c in clients]
    assert clients[3].execute_command("CLUSTER", "MEET", "127.0.0.1", ps[0]) == "OK"
    wait_for("the fourth node to join", lambda: agreed(clients, 4))
    assert clients[3].execute_command("CLUSTER", "REPLICATE", ids[0]) == "OK"
    wait_for("the replica's link", lambda: replica_linked(clients[3]))
    wait_for("agreement", lambda: agreed(clients, 4) and roles(clients)[ids[3]] == ids[0])
    rc = cluster_client(ps[:3])
    for i in range(200):
        rc.set(f"x:{i}", i)
    rc.close()
    assert clients[0].execute_command("WAIT", 1, 5000) == 1
    return clients, ids, ps


@unraisable_ok
@pytest.mark.parametrize("replica_is_redis", [True, False])
def test_mixed_failover(tmp_path, replica_is_redis):
    """kill -9 of the replica's master: the replica wins the other kind's votes."""
    nodes = []
    try:
        clients, ids, ps = mixed(tmp_path, nodes, replica_is_redis)
        dead_key = key_of(clients[1], ids[0])
        nodes[0].kill()
        write_until_ok(ps[1:], dead_key, "1", timeout=TIMEOUT_MS / 1000 + 15)
        # Every live node must have heard of the promotion before the client asks one of them
        # for the slot map: a node that has not yet still routes the slots to the dead master.
        wait_for("the replica's promotion",
                 lambda: all("master" in nodes_table(c)[ids[3]][0] and
                             info(c)["cluster_state"] == "ok" for c in clients[1:]), timeout=20)
        rc = cluster_client(ps[1:])
        assert [rc.get(f"x:{i}") for i in range(200)] == [str(i) for i in range(200)]
        rc.close()
    finally:
        for n in nodes:
            n.cleanup()


@pytest.mark.parametrize("replica_is_redis", [True, False])
def test_mixed_manual_failover(tmp_path, replica_is_redis):
    """CLUSTER FAILOVER across kinds: the master pauses and hands over its offset."""
    nodes = []
    try:
        clients, ids, ps = mixed(tmp_path, nodes, replica_is_redis)
        assert clients[3].execute_command("CLUSTER", "FAILOVER") == "OK"
        wait_for("the manual failover",
                 lambda: "master" in nodes_table(clients[3])[ids[3]][0] and
                 nodes_table(clients[0])[ids[0]][1] == ids[3], timeout=15)
        wait_for("agreement", lambda: agreed(clients, 4))
        wait_for("the old master's link", lambda: replica_linked(clients[0]))
        rc = cluster_client(ps)
        assert [rc.get(f"x:{i}") for i in range(200)] == [str(i) for i in range(200)]
        assert rc.set("after", "1")
        rc.close()
    finally:
        for n in nodes:
            n.cleanup()


def node_argv(tmp, port, conf=None, extra=()):
    """A cluster node's command line, the config file first (as both servers take it)."""
    args = ["--port", str(port), "--cluster-enabled", "yes", "--cluster-config-file",
            str(tmp / f"nodes-{port}.conf"), "--cluster-node-timeout", str(TIMEOUT_MS),
            "--repl-diskless-sync-delay", "0"]
    head = ["redis-server"] if TARGET == "redis" else [str(LAVIK_BIN)]
    if conf is not None:
        head.append(str(conf))
    if TARGET == "redis":
        args += ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1", "--dir", str(tmp)]
    else:
        args += ["--threads", "1", "--data-file", str(tmp / f"data-{port}.lavik"),
                 "--log-dir", str(tmp / f"logs-{port}")]
    return head + args + list(extra)


def test_replicaof_is_refused_in_cluster_mode_at_start(tmp_path):
    """As Redis's config check: a cluster node's master comes from nodes.conf, never from
    replicaof."""
    (p,) = ports(1)
    argv = node_argv(tmp_path, p, extra=["--replicaof", "127.0.0.1 6399"] if TARGET != "redis"
                     else ["--replicaof", "127.0.0.1", "6399"])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    assert out.returncode != 0
    assert "replicaof directive not allowed in cluster mode" in out.stdout + out.stderr


def test_config_rewrite_of_a_cluster_replica_writes_no_replicaof(tmp_path):
    pm, pr = ports(2)
    conf = tmp_path / "replica.conf"
    conf.write_text("# a cluster replica's settings\nmaxclients 500\n")
    master = ServerProcess(argv=node_argv(tmp_path, pm)).start(port=pm)
    replica = ServerProcess(argv=node_argv(tmp_path, pr, conf=conf)).start(port=pr)
    try:
        m, r = master.client(), replica.client()
        assert m.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == "OK"
        assert r.execute_command("CLUSTER", "MEET", "127.0.0.1", pm) == "OK"
        master_id = m.execute_command("CLUSTER", "MYID")
        wait_for("the replica to know the master",
                 lambda: master_id in r.execute_command("CLUSTER", "NODES"))
        assert r.execute_command("CLUSTER", "REPLICATE", master_id) == "OK"
        wait_for("the replica's link", lambda: replica_linked(r))
        assert r.config_set("maxclients", "600")
        assert r.execute_command("CONFIG", "REWRITE") == "OK"
        text = conf.read_text()
        assert "maxclients 600" in text
        assert not any(l.split()[:1] in (["replicaof"], ["slaveof"]) for l in text.splitlines())
    finally:
        replica.cleanup()
        master.cleanup()


def test_shard_channels_reach_the_shards_replicas(six):
    """SPUBLISH goes to the slot's master and its replicas, which serve SSUBSCRIBE for their
    master's slots without READONLY (Redis's getNodeByQuery, clusterPropagatePublishShard); the
    other shards' nodes get nothing."""
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    channel = key_of(clients[0], master_id)
    others = [c for c in clients if c is not master and c is not replica]
    port_of = {id(c): c.connection_pool.connection_kwargs["port"] for c in clients}
    subs = {}
    for c in [master, replica] + others[:1]:
        conn = RawConn(port_of[id(c)])
        reply = conn.cmd("SSUBSCRIBE", channel)
        subs[id(c)] = (conn, reply)
    try:
        ch = channel.encode()
        assert subs[id(master)][1] == [b"ssubscribe", ch, 1]
        assert subs[id(replica)][1] == [b"ssubscribe", ch, 1]
        moved = subs[id(others[0])][1]
        assert isinstance(moved, RespError) and moved.text.startswith("MOVED "), moved
        for sender, text in ((master, "from-master"), (replica, "from-replica")):
            assert sender.execute_command("SPUBLISH", channel, text) == 1  # this node's receiver
            for c in (master, replica):
                conn = subs[id(c)][0]
                conn.sock.settimeout(10)
                assert conn.reply() == [b"smessage", ch, text.encode()]
        other = next(f"x{i}" for i in range(1000) if key_slot(f"x{i}") != key_slot(channel))
        with RawConn(port_of[id(master)]) as conn:
            cross = conn.cmd("SSUBSCRIBE", channel, other)
            assert cross == RespError("CROSSSLOT Keys in request don't hash to the same slot")
    finally:
        for conn, _ in subs.values():
            conn.close()


def test_replica_no_failover_is_live(six):
    """CONFIG SET cluster-replica-no-failover takes effect at once (Redis's
    clusterUpdateMyselfFlags): the `nofailover` flag reaches the other nodes, the replica of a
    failed master stays a replica, and setting it back to no lets it fail over."""
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    others = [c for c in clients if c is not master and c is not replica]
    # A replica that never synced has no data recent enough to be a candidate.
    wait_for("the replica's link", lambda: replica_linked(replica))
    assert replica.config_set("cluster-replica-no-failover", "yes")
    wait_for("the nofailover flag at the others",
             lambda: all("nofailover" in nodes_table(c)[replica_id][0] for c in others),
             timeout=10)
    nodes[clients.index(master)].kill()
    wait_for("its master's FAIL", lambda: "fail" in nodes_table(replica)[master_id][0],
             timeout=15)
    time.sleep(3)  # an election (rank 0: within 1 s of FAIL) would have been won by now
    assert "slave" in nodes_table(replica)[replica_id][0]
    assert info(replica)["cluster_state"] == "fail"
    assert replica.config_set("cluster-replica-no-failover", "no")
    wait_for("the promotion", lambda: "master" in nodes_table(replica)[replica_id][0] and
             all(info(c)["cluster_state"] == "ok" for c in others + [replica]), timeout=20)
    assert "nofailover" not in nodes_table(replica)[replica_id][0]


def test_manual_failover_keeps_a_clients_pause(six):
    """The master's pause during CLUSTER FAILOVER is its own (Redis's PAUSE_DURING_FAILOVER):
    when the failover ends, a CLIENT PAUSE WRITE a user set before it is still in force. A
    PUBLISH (no keys, so no MOVED; paused with writes) on the old master shows it."""
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    wait_for("the replica's link", lambda: replica_linked(replica))
    started = time.monotonic()
    assert master.execute_command("CLIENT", "PAUSE", 30000, "WRITE") == "OK"
    assert replica.execute_command("CLUSTER", "FAILOVER") == "OK"
    wait_for("the manual failover",
             lambda: "master" in nodes_table(replica)[replica_id][0] and
             nodes_table(master)[master_id][1] == replica_id, timeout=15)
    done = {}

    def publish():
        with RawConn(master.connection_pool.connection_kwargs["port"], timeout=40) as c:
            c.send_command("PUBLISH", "ch", "m")
            done["reply"] = c.reply()
            done["at"] = time.monotonic()

    t = threading.Thread(target=publish)
    t.start()
    try:
        t.join(timeout=2)
        assert "reply" not in done  # still paused by the user's CLIENT PAUSE
        assert time.monotonic() - started < 25  # ... well before it would have run out
        unpaused = time.monotonic()
        assert master.execute_command("CLIENT", "UNPAUSE") == "OK"
        t.join(timeout=10)
        assert done.get("reply") == 0 and done["at"] >= unpaused
    finally:
        master.execute_command("CLIENT", "UNPAUSE")
        t.join(timeout=40)


@pytest.mark.parametrize("extra_is_redis", [False, True])
def test_replica_migrates_to_an_orphaned_master(six, tmp_path, extra_is_redis):
    """Replica migration (Redis's clusterHandleSlaveMigration): a master with two working
    replicas (more than cluster-migration-barrier 1) gives one to a master whose only replica
    failed — the one with the smaller node id, once the orphan has been seen for 5 s. A
    migration barrier of 2, set live, keeps both at home first. extra_is_redis: the second
    replica is a redis-server (both replicas must agree which of them moves)."""
    nodes, clients, ps = six
    r = roles(clients)
    ids = by_id(clients)
    masters = sorted(i for i, m in r.items() if m is None)
    rich, poor = masters[0], masters[1]
    (poor_replica,) = [i for i, m in r.items() if m == poor]
    (first,) = [i for i, m in r.items() if m == rich]
    (port,) = ports(1)
    nodes.append(start_node(tmp_path, port, redis_server=extra_is_redis))
    extra = nodes[-1].client()
    clients.append(extra)
    assert extra.execute_command("CLUSTER", "MEET", "127.0.0.1", ps[0]) in ("OK", True)
    wait_for("the new node to know the cluster", lambda: agreed([extra], 7) or None)
    assert extra.execute_command("CLUSTER", "REPLICATE", rich) in ("OK", True)
    second = extra.execute_command("CLUSTER", "MYID")
    ids[second] = extra
    wait_for("agreement", lambda: agreed(clients, 7))
    for i in (first, second):
        wait_for("the rich master's replicas' links", lambda: replica_linked(ids[i]))
    mover, stayer = sorted((first, second))
    for i in (first, second):
        assert ids[i].config_set("cluster-migration-barrier", 2)
    started = time.monotonic()
    victim = clients.index(ids[poor_replica])
    nodes[victim].kill()
    others = [c for i, c in enumerate(clients) if i != victim]
    wait_for("the poor master's replica's FAIL",
             lambda: all("fail" in nodes_table(c)[poor_replica][0] for c in others), timeout=15)
    time.sleep(max(0.0, started + 8.0 - time.monotonic()))  # past the 5 s orphan delay
    assert nodes_table(ids[mover])[mover][1] == rich  # the barrier held it
    for i in (first, second):
        assert ids[i].config_set("cluster-migration-barrier", 1)
    wait_for("the migration",
             lambda: nodes_table(ids[mover])[mover][1] == poor and
             replication(ids[mover])["master_port"] == ids[poor].connection_pool
             .connection_kwargs["port"] and replica_linked(ids[mover]), timeout=15)
    wait_for("the others to see it",
             lambda: all(nodes_table(c)[mover][1] == poor for c in others), timeout=10)
    assert nodes_table(ids[stayer])[stayer][1] == rich
    assert time.monotonic() - started < 30


def test_replica_validity_factor_is_live(six):
    """CONFIG SET cluster-replica-validity-factor and repl-ping-replica-period reach the
    election at once: with 1 and 1 s, a replica whose master died 8 s ago (data older than
    1 s + node timeout × 1 past the node timeout) is no candidate; with factor 0 (always a
    candidate) it fails over."""
    nodes, clients, ps = six
    master, replica, master_id, replica_id = a_master_and_replica(clients)
    wait_for("the replica's link", lambda: replica_linked(replica))
    assert replica.config_set("cluster-replica-no-failover", "yes")
    killed = time.monotonic()
    nodes[clients.index(master)].kill()
    wait_for("its master's FAIL", lambda: "fail" in nodes_table(replica)[master_id][0],
             timeout=15)
    assert replica.config_set("cluster-replica-validity-factor", 1)
    assert replica.config_set("repl-ping-replica-period", 1)
    time.sleep(max(0.0, killed + 8.0 - time.monotonic()))
    assert replica.config_set("cluster-replica-no-failover", "no")
    time.sleep(3)  # a candidate would have won by now
    assert "slave" in nodes_table(replica)[replica_id][0]
    assert replica.config_set("cluster-replica-validity-factor", 0)
    wait_for("the promotion", lambda: "master" in nodes_table(replica)[replica_id][0],
             timeout=20)


def test_slots_and_shards_list_replicas_in_the_order_they_joined(six, tmp_path):
    """CLUSTER SLOTS, SHARDS and REPLICAS list a master's replicas in the order the node learned them
    (Redis's master->slaves array), not by node id: a second replica whose id sorts before the
    first one's still comes after it, on every node."""
    nodes, clients, ps = six
    r = roles(clients)
    ids = by_id(clients)
    (port,) = ports(1)
    nodes.append(start_node(tmp_path, port))
    extra = nodes[-1].client()
    for _ in range(50):  # an id below some existing replica's: sorting by id would put it first
        second = extra.execute_command("CLUSTER", "MYID")
        firsts = sorted(i for i, m in r.items() if m is not None and i > second)
        if firsts:
            break
        extra.execute_command("CLUSTER", "RESET", "HARD")
    assert firsts, "no replica id above the new node's after 50 resets"
    first = firsts[0]
    rich = r[first]
    clients.append(extra)
    ids[second] = extra
    assert extra.execute_command("CLUSTER", "MEET", "127.0.0.1", ps[0]) in ("OK", True)
    wait_for("the new node to know the cluster", lambda: agreed([extra], 7) or None)
    assert extra.execute_command("CLUSTER", "REPLICATE", rich) in ("OK", True)
    wait_for("agreement", lambda: agreed(clients, 7))
    wait_for("the new replica's link", lambda: replica_linked(extra))
    master = ids[rich]
    slots = owned_slots(master, rich)
    key = next(f"k{i}" for i in range(100000)
               if master.execute_command("CLUSTER", "KEYSLOT", f"k{i}") in slots)
    master.set(key, "v")  # data on both replicas: SLOTS lists only replicas with an offset
    assert master.execute_command("WAIT", 2, 5000) == 2

    def rich_ranges(c):
        return [e for e in c.execute_command("CLUSTER", "SLOTS") if e[2][2] == rich]

    def replica_ids_in_slots(c):
        ranges = rich_ranges(c)
        return ranges and all([n[2] for n in e[3:]] == [first, second] for e in ranges)

    for c in clients:
        wait_for("SLOTS with both replicas, in joining order", lambda: replica_ids_in_slots(c))
        shards = c.execute_command("CLUSTER", "SHARDS")
        (shard,) = [s for s in shards if dict(zip(s[::2], s[1::2]))["nodes"][0][1] == rich]
        members = dict(zip(shard[::2], shard[1::2]))["nodes"]
        assert [dict(zip(n[::2], n[1::2]))["id"] for n in members] == [rich, first, second]
        replicas = c.execute_command("CLUSTER", "REPLICAS", rich)
        assert [line.split()[0] for line in replicas] == [first, second]


def owned_slots(c, node_id):
    """The slots `node_id` serves, per CLUSTER SLOTS through c."""
    out = set()
    for e in c.execute_command("CLUSTER", "SLOTS"):
        if e[2][2] == node_id:
            out.update(range(e[0], e[1] + 1))
    return out
