"""Redis Cluster: nodes formed by redis-cli --cluster create, redirects, CLUSTER subcommands,
nodes.conf across a restart, and a mixed cluster of redis-server and Lavik nodes (doc/cluster.md).

Every node runs on a port of this file's range (7100-7289; the bus is port + 10000), picked by
conftest.cluster_ports: free with its bus port, and claimed against concurrent runs. Waits are
polls with deadlines."""
import subprocess
import time

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

from conftest import LAVIK_BIN, TARGET, ServerProcess, cluster_ports, err, key_slot

BASE = 7100


def ports(n):
    """n fresh ports of this file's range (conftest.cluster_ports)."""
    return cluster_ports(n, BASE)


def cluster_args(tmp, port, timeout=3000):
    # A replica's diskless full sync starts at once (Redis's default waits 5 s for more replicas).
    return ["--cluster-enabled", "yes", "--cluster-config-file", str(tmp / f"nodes-{port}.conf"),
            "--cluster-node-timeout", str(timeout), "--repl-diskless-sync-delay", "0"]


def start_node(tmp, port, redis_server=False, threads=2):
    if redis_server:
        argv = ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no",
                "--bind", "127.0.0.1"] + cluster_args(tmp, port)
        s = ServerProcess(argv=argv)
    else:
        s = ServerProcess(threads=threads, extra_args=cluster_args(tmp, port))
    return s.start(port=port)


def info(c):
    text = c.execute_command("CLUSTER", "INFO")
    return dict(l.split(":", 1) for l in text.strip().splitlines())


def wait_ok(clients, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(info(c)["cluster_state"] == "ok" for c in clients):
            return
        time.sleep(0.1)
    raise AssertionError("cluster_state not ok: " + str([info(c) for c in clients]))


def wait_agree(clients, timeout=20.0):
    """Every node knows every node and sees the same slot owners (redis-cli's signature)."""
    def signature(c):
        sig = []
        for line in c.execute_command("CLUSTER", "NODES").strip().splitlines():
            f = line.split()
            if "master" in f[2] and len(f) > 8:
                sig.append(f[0] + ":" + ",".join(x for x in f[8:] if not x.startswith("[")))
        return sorted(sig)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sigs = [signature(c) for c in clients]
        known = [int(info(c)["cluster_known_nodes"]) for c in clients]
        if all(s == sigs[0] for s in sigs) and all(k == len(clients) for k in known):
            return
        time.sleep(0.1)
    raise AssertionError("nodes disagree: " + str([signature(c) for c in clients]))


def redis_cli(*args, timeout=60):
    return subprocess.run(["redis-cli", *args], capture_output=True, text=True, timeout=timeout)


def create(port_list):
    out = redis_cli("--cluster", "create", *[f"127.0.0.1:{p}" for p in port_list],
                    "--cluster-yes")
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def formed(nodes, ps):
    """redis-cli --cluster create over the nodes, then every node ok and agreeing."""
    create(ps)
    clients = [n.client() for n in nodes]
    wait_ok(clients)
    wait_agree(clients)
    return clients


@pytest.fixture
def trio(tmp_path):
    """Three nodes of the target made into a cluster by redis-cli --cluster create."""
    ps = ports(3)
    nodes = [start_node(tmp_path, p) for p in ps]
    try:
        yield nodes, formed(nodes, ps), ps
    finally:
        for n in nodes:
            n.cleanup()


def test_create_and_check(trio):
    nodes, clients, ps = trio
    out = redis_cli("--cluster", "check", f"127.0.0.1:{ps[0]}")
    assert out.returncode == 0, out.stdout
    assert "[OK] All nodes agree about slots configuration." in out.stdout
    assert "[OK] All 16384 slots covered." in out.stdout
    for c in clients:
        i = info(c)
        assert i["cluster_slots_assigned"] == "16384"
        assert i["cluster_slots_ok"] == "16384"
        assert i["cluster_known_nodes"] == "3"
        assert i["cluster_size"] == "3"
        assert i["cluster_current_epoch"] == "3"
        assert int(i["cluster_stats_messages_sent"]) > 0
        assert c.info("cluster")["cluster_enabled"] == 1


def test_cluster_client_reads_and_writes(trio):
    nodes, clients, ps = trio
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ps],
                      decode_responses=True, socket_timeout=30)
    n = 100_000  # issue #15's figure
    for start in range(0, n, 10_000):
        pipe = rc.pipeline()
        for i in range(start, start + 10_000):
            pipe.set(f"key:{i}", f"value:{i}")
        assert all(pipe.execute())
    for start in range(0, n, 10_000):
        pipe = rc.pipeline()
        for i in range(start, start + 10_000):
            pipe.get(f"key:{i}")
        assert pipe.execute() == [f"value:{i}" for i in range(start, start + 10_000)]
    # Every node holds only its own slots' keys, and they add up.
    total = sum(c.dbsize() for c in clients)
    assert total == n
    assert rc.mset_nonatomic({"{t}a": "1", "{t}b": "2"})
    assert rc.mget("{t}a", "{t}b") == ["1", "2"]
    rc.close()


def owner_of(clients, slot):
    """The port of the node that clients[0] says serves slot."""
    slots = clients[0].execute_command("CLUSTER", "SLOTS")
    for s in slots:
        if s[0] <= slot <= s[1]:
            port = s[2][1]
            return port
    raise AssertionError(f"no owner for slot {slot}")


def test_moved_crossslot_and_hash_tags(trio):
    nodes, clients, ps = trio
    by_port = dict(zip(ps, clients))
    slot = key_slot("foo")
    owner = owner_of(clients, slot)
    other = next(c for p, c in by_port.items() if p != owner)
    with pytest.raises(redis.ResponseError) as e:
        other.get("foo")
    assert err(e) == f"MOVED {slot} 127.0.0.1:{owner}"
    with pytest.raises(redis.ResponseError) as e:
        by_port[owner].mset({"foo": "1", "bar": "2"})
    # "foo" and "bar" are in different slots: CROSSSLOT wins over MOVED.
    assert err(e) == "CROSSSLOT Keys in request don't hash to the same slot"
    assert by_port[owner].mset({"{foo}a": "1", "{foo}b": "2"})
    assert by_port[owner].mget("{foo}a", "{foo}b") == ["1", "2"]
    # Keyless commands run anywhere; SELECT is refused.
    assert other.ping()
    with pytest.raises(redis.ResponseError) as e:
        other.execute_command("SELECT", "1")
    assert err(e) == "SELECT is not allowed in cluster mode"
    assert other.execute_command("SELECT", "0") in (True, "OK")
    # A transaction on another node's slot: the queued command is refused, EXEC aborts.
    p = other.pipeline(transaction=True)
    p.set("foo", "x")
    with pytest.raises((redis.ResponseError, redis.exceptions.ExecAbortError)):
        p.execute()


def slot_pair(clients, ps, key):
    """key's slot, its owner (port, client, id) and another node (port, client, id), flattened."""
    by_port = dict(zip(ps, clients))
    slot = key_slot(key)
    src_port = owner_of(clients, slot)
    dst_port = next(p for p in ps if p != src_port)
    src, dst = by_port[src_port], by_port[dst_port]
    src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
    return slot, src_port, dst_port, src, dst, src_id, dst_id


def test_ask_during_migration(trio):
    nodes, clients, ps = trio
    slot, src_port, dst_port, src, dst, src_id, dst_id = slot_pair(clients, ps, "mig")
    src.set("{mig}present", "here")
    assert dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) == "OK"
    assert src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) == "OK"
    nodes_line = [l for l in src.execute_command("CLUSTER", "NODES").splitlines() if "myself" in l][0]
    assert f"[{slot}->-{dst_id}]" in nodes_line
    assert f"[{slot}-<-{src_id}]" in [l for l in dst.execute_command("CLUSTER", "NODES").splitlines()
                                        if "myself" in l][0]
    # A key still here is served here; a missing one is sent to the target with ASK.
    assert src.get("{mig}present") == "here"
    with pytest.raises(redis.ResponseError) as e:
        src.get("{mig}absent")
    assert err(e) == f"ASK {slot} 127.0.0.1:{dst_port}"
    with pytest.raises(redis.ResponseError) as e:
        src.mget("{mig}present", "{mig}absent")
    assert err(e) == "TRYAGAIN Multiple keys request during rehashing of slot"
    # The target refuses without ASKING and serves the slot after it (once).
    with pytest.raises(redis.ResponseError) as e:
        dst.get("{mig}absent")
    assert err(e) == f"MOVED {slot} 127.0.0.1:{src_port}"
    raw = dst.connection_pool.get_connection("_")
    raw.send_command("ASKING")
    assert raw.read_response() in (b"OK", "OK")
    raw.send_command("SET", "{mig}absent", "new")
    assert raw.read_response() in (b"OK", "OK")
    raw.send_command("GET", "{mig}absent")
    with pytest.raises(redis.ResponseError):
        raw.read_response()
    dst.connection_pool.release(raw)
    # Finish by hand (the key moved by SET on the target; the old one is deleted here).
    src.delete("{mig}present")
    assert dst.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id) == "OK"
    assert src.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id) == "OK"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(owner_of([c], slot) == dst_port for c in clients):
            break
        time.sleep(0.1)
    assert all(owner_of([c], slot) == dst_port for c in clients)
    assert dst.get("{mig}absent") == "new"
    with pytest.raises(redis.ResponseError) as e:
        src.get("{mig}absent")
    assert err(e) == f"MOVED {slot} 127.0.0.1:{dst_port}"
    wait_agree(clients)
    assert redis_cli("--cluster", "check", f"127.0.0.1:{ps[0]}").returncode == 0


def test_subcommand_replies(trio):
    nodes, clients, ps = trio
    c = clients[0]
    myid = c.execute_command("CLUSTER", "MYID")
    assert len(myid) == 40 and all(ch in "0123456789abcdef" for ch in myid)
    assert c.execute_command("CLUSTER", "KEYSLOT", "foo") == 12182
    assert c.execute_command("CLUSTER", "KEYSLOT", "{user1000}.following") == key_slot("user1000")
    slot = key_slot("k")  # the hash tag of the keys below
    owner = next(cl for p, cl in zip(ps, clients) if p == owner_of(clients, slot))
    owner.mset({"{k}x": "1", "{k}y": "2", "{k}z": "3"})
    assert owner.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 3
    assert sorted(owner.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10)) == [
        "{k}x", "{k}y", "{k}z"]
    assert len(owner.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 2)) == 2
    slots = c.execute_command("CLUSTER", "SLOTS")
    assert sorted((s[0], s[1]) for s in slots) == [(0, 5460), (5461, 10922), (10923, 16383)]
    for s in slots:
        assert s[2][0] == "127.0.0.1" and s[2][1] in ps and len(s[2][2]) == 40
    shards = c.execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 3
    lines = c.execute_command("CLUSTER", "NODES").strip().splitlines()
    assert len(lines) == 3
    mine = [l for l in lines if "myself" in l][0].split()
    assert mine[0] == myid and mine[1] == f"127.0.0.1:{ps[0]}@{ps[0] + 10000}"
    assert mine[2] == "myself,master" and mine[3] == "-" and mine[7] == "connected"
    assert mine[8] == "0-5460"
    links = c.execute_command("CLUSTER", "LINKS")
    assert len(links) >= 2
    assert c.execute_command("CLUSTER", "COUNT-FAILURE-REPORTS", mine[0]) == 0
    assert c.execute_command("CLUSTER", "BUMPEPOCH").startswith(("BUMPED", "STILL"))
    assert c.execute_command("CLUSTER", "SAVECONFIG") == "OK"
    errors = [
        (("CLUSTER", "COUNTKEYSINSLOT", "99999"), "Invalid slot"),
        (("CLUSTER", "COUNTKEYSINSLOT", "x"), "value is not an integer or out of range"),
        (("CLUSTER", "GETKEYSINSLOT", "1", "-1"), "Invalid slot or number of keys"),
        (("CLUSTER", "ADDSLOTS", "1"), "Slot 1 is already busy"),
        (("CLUSTER", "ADDSLOTS", "99999"), "Invalid or out of range slot"),
        (("CLUSTER", "ADDSLOTSRANGE", "5", "3"), "start slot number 5 is greater than end slot number 3"),
        (("CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"), "wrong number of arguments for 'cluster|addslotsrange' command"),
        (("CLUSTER", "DELSLOTS", "0", "0"), "Slot 0 specified multiple times"),
        (("CLUSTER", "SETSLOT", "1", "foo"), "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"),
        (("CLUSTER", "SETSLOT", "1", "NODE", "abc"), "Unknown node abc"),
        (("CLUSTER", "SETSLOT", "1", "MIGRATING", "abc"), "I don't know about node abc"),
        (("CLUSTER", "SETSLOT", "6000", "MIGRATING", "abc"), "I'm not the owner of hash slot 6000"),
        (("CLUSTER", "SETSLOT", "1", "IMPORTING", "abc"), "I'm already the owner of hash slot 1"),
        (("CLUSTER", "MEET", "1.2.3.4", "x"), "Invalid TCP base port specified: x"),
        (("CLUSTER", "MEET", "nohost", "1"), "Invalid node address specified: nohost:1"),
        (("CLUSTER", "MEET", "127.0.0.1", "1", "x"), "Invalid TCP bus port specified: x"),
        (("CLUSTER", "FORGET", "abc"), "Unknown node abc"),
        (("CLUSTER", "FORGET", myid), "I tried hard but I can't forget myself..."),
        (("CLUSTER", "COUNT-FAILURE-REPORTS", "abc"), "Unknown node abc"),
        (("CLUSTER", "SET-CONFIG-EPOCH", "5"), "The user can assign a config epoch only when the node does not know any other node."),
        (("CLUSTER", "SET-CONFIG-EPOCH", "-1"), "Invalid config epoch specified: -1"),
        (("CLUSTER", "RESET", "foo"), "syntax error"),
        (("CLUSTER", "REPLICATE", "abc"), "Unknown node abc"),
        (("CLUSTER", "REPLICATE", mine[0]), "Can't replicate myself"),
        (("CLUSTER", "FOO"), "unknown subcommand 'FOO'. Try CLUSTER HELP."),
        (("CLUSTER", "MYSHARDID"), "unknown subcommand 'MYSHARDID'. Try CLUSTER HELP."),
        (("CLUSTER", "INFO", "x"), "wrong number of arguments for 'cluster|info' command"),
        (("CLUSTER", "FLUSHSLOTS"), None),
        (("CLUSTER", "RESET"), "CLUSTER RESET can't be called with master nodes containing keys"),
    ]
    for args, text in errors:
        if text is None:
            continue
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command(*args) if args[1] != "RESET" else owner.execute_command(*args)
        assert err(e) == text, args
    assert c.execute_command("CLUSTER", "HELP")[0].startswith("CLUSTER <subcommand>")
    assert c.execute_command("READONLY") in (True, "OK")
    assert c.execute_command("READWRITE") in (True, "OK")


def test_restart_keeps_nodes_conf(tmp_path):
    ps = ports(3)
    nodes = [start_node(tmp_path, p) for p in ps]
    try:
        clients = formed(nodes, ps)
        before_id = clients[1].execute_command("CLUSTER", "MYID")
        before_slots = sorted((s[0], s[1], s[2][1]) for s in clients[1].execute_command("CLUSTER", "SLOTS"))
        epoch = info(clients[1])["cluster_my_epoch"]
        conf = (tmp_path / f"nodes-{ps[1]}.conf").read_text()
        assert conf.rstrip().splitlines()[-1].startswith("vars currentEpoch ")
        assert sum(1 for l in conf.splitlines() if "myself" in l) == 1
        assert nodes[1].terminate() == 0
        nodes[1] = start_node(tmp_path, ps[1])
        clients[1] = nodes[1].client()
        assert clients[1].execute_command("CLUSTER", "MYID") == before_id
        assert info(clients[1])["cluster_my_epoch"] == epoch
        assert sorted((s[0], s[1], s[2][1]) for s in clients[1].execute_command("CLUSTER", "SLOTS")) == before_slots
        wait_ok(clients)
        wait_agree(clients)
        assert redis_cli("--cluster", "check", f"127.0.0.1:{ps[0]}").returncode == 0
    finally:
        for n in nodes:
            n.cleanup()


def test_mixed_cluster_with_redis_server(tmp_path):
    """Two redis-server 7.0 nodes and one node of the target: created, checked, used."""
    ps = ports(3)
    nodes = [start_node(tmp_path, ps[0], redis_server=True),
             start_node(tmp_path, ps[1], redis_server=True),
             start_node(tmp_path, ps[2])]
    try:
        clients = formed(nodes, ps)
        out = redis_cli("--cluster", "check", f"127.0.0.1:{ps[2]}")
        assert out.returncode == 0 and "[OK] All 16384 slots covered." in out.stdout, out.stdout
        rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", ps[2])], decode_responses=True)
        for i in range(2000):
            rc.set(f"m:{i}", i)
        assert [rc.get(f"m:{i}") for i in range(0, 2000, 97)] == [str(i) for i in range(0, 2000, 97)]
        assert all(c.dbsize() > 0 for c in clients)
        rc.close()
        # MEET the other way: a fresh target node joins through a redis-server node.
        extra_port = ports(1)[0]
        extra = start_node(tmp_path, extra_port)
        nodes.append(extra)
        assert clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", extra_port) == "OK"
        clients.append(extra.client())
        wait_agree(clients)
        wait_ok(clients)
    finally:
        for n in nodes:
            n.cleanup()


def test_pfail_and_fail_detection(tmp_path):
    ps = ports(3)
    nodes = [start_node(tmp_path, p) for p in ps]
    try:
        clients = formed(nodes, ps)
        dead_id = clients[2].execute_command("CLUSTER", "MYID")
        nodes[2].kill()
        deadline = time.monotonic() + 20
        flags = ""
        while time.monotonic() < deadline:
            line = [l for l in clients[0].execute_command("CLUSTER", "NODES").splitlines()
                    if l.startswith(dead_id)][0]
            flags = line.split()[2]
            if "fail" in flags.split(","):
                break
            time.sleep(0.1)
        assert "fail" in flags.split(","), flags
        assert info(clients[0])["cluster_state"] == "fail"
        with pytest.raises(redis.ResponseError) as e:
            clients[0].get("foo")
        assert err(e) == "CLUSTERDOWN The cluster is down"
    finally:
        for n in nodes:
            n.cleanup()


@pytest.mark.usefixtures("server")
def test_disabled_by_default(server):
    c = server.client()
    for args in (("CLUSTER", "INFO"), ("CLUSTER", "NODES"), ("ASKING",), ("READONLY",)):
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command(*args)
        assert err(e) == "This instance has cluster support disabled"
    assert c.info("cluster")["cluster_enabled"] == 0


def same_node_other_slot(clients, key):
    """A key served by the same node as `key`, in another slot."""
    owner = owner_of(clients, key_slot(key))
    for i in range(10000):
        k = f"k{i}"
        if key_slot(k) != key_slot(key) and owner_of(clients, key_slot(k)) == owner:
            return k
    raise AssertionError("no key found")


def test_script_calls_checked_against_the_slot(trio):
    """redis.call inside a script: Redis 7.0's scriptVerifyClusterState texts."""
    import hashlib
    nodes, clients, ps = trio
    by_port = dict(zip(ps, clients))
    home = by_port[owner_of(clients, key_slot("a"))]
    far = next(k for k in ("b", "c", "d", "e", "f")
               if owner_of(clients, key_slot(k)) != owner_of(clients, key_slot("a")))
    near = same_node_other_slot(clients, "a")
    home.set("a", "1")
    home.set(near, "2")

    def script_error(body, *keys_and_args, numkeys=0):
        with pytest.raises(redis.ResponseError) as e:
            home.eval(body, numkeys, *keys_and_args)
        return err(e)

    def sha(body):
        return hashlib.sha1(body.encode()).hexdigest()

    # A key another node serves: refused, whatever the flags.
    body = f"return redis.call('get', '{far}')"
    assert script_error(body) == ("Script attempted to access a non local key in a cluster node "
                                  f"script: {sha(body)}, on @user_script:1.")
    body = "#!lua flags=allow-cross-slot-keys\nreturn redis.call('mget', 'a', '" + near + "')"
    assert script_error(body) == ("Script attempted to access a non local key in a cluster node "
                                  f"script: {sha(body)}, on @user_script:2.")
    # Two local slots: fine without a shebang (eval compatibility) or with allow-cross-slot-keys,
    # refused for a script with flags.
    assert home.eval(f"return {{redis.call('get','a'), redis.call('get','{near}')}}", 0) == ["1", "2"]
    body = f"#!lua flags=allow-cross-slot-keys\nreturn {{redis.call('get','a'), redis.call('get','{near}')}}"
    assert home.eval(body, 1, "a") == ["1", "2"]
    body = f"#!lua\nreturn {{redis.call('get','a'), redis.call('get','{near}')}}"
    same = f"Script attempted to access keys that do not hash to the same slot script: {sha(body)}, on @user_script:2."
    assert script_error(body) == same
    assert script_error(body, "a", numkeys=1) == same
    body2 = f"#!lua\nreturn redis.call('get','{near}')"
    assert script_error(body2, "a", numkeys=1) == (
        f"Script attempted to access keys that do not hash to the same slot script: {sha(body2)}, "
        "on @user_script:2.")
    assert home.eval("#!lua\nreturn redis.call('get', '{a}x')", 1, "a") is None
    # no-cluster scripts and functions are refused; functions keep their flags.
    with pytest.raises(redis.ResponseError) as e:
        home.eval("#!lua flags=no-cluster\nreturn 1", 0)
    assert err(e) == "Can not run script on cluster, 'no-cluster' flag is set."
    home.execute_command("FUNCTION", "LOAD", "REPLACE", "#!lua name=cl\n"
                         "redis.register_function('f', function(k, a) return redis.call('get', a[1]) end)\n"
                         "redis.register_function{function_name='g', callback=function(k, a) "
                         "return redis.call('get', a[1]) end, flags={'allow-cross-slot-keys'}}\n"
                         "redis.register_function{function_name='h', callback=function() return 1 end, "
                         "flags={'no-cluster'}}")
    with pytest.raises(redis.ResponseError) as e:
        home.execute_command("FCALL", "f", 1, "a", near)
    assert err(e) == ("Script attempted to access keys that do not hash to the same slot script: f, "
                      "on @user_function:2.")
    assert home.execute_command("FCALL", "g", 1, "a", near) == "2"
    with pytest.raises(redis.ResponseError) as e:
        home.execute_command("FCALL", "h", 0)
    assert err(e) == "Can not run script on cluster, 'no-cluster' flag is set."
    home.execute_command("FUNCTION", "DELETE", "cl")


def test_other_databases_refused(trio):
    nodes, clients, ps = trio
    home = dict(zip(ps, clients))[owner_of(clients, key_slot("a"))]
    home.set("a", "1")
    for args, text in ((("SWAPDB", 0, 1), "SWAPDB is not allowed in cluster mode"),
                       (("MOVE", "a", 1), "MOVE is not allowed in cluster mode"),
                       (("COPY", "a", "{a}b", "DB", 1),
                        "Copying to another database is not allowed in cluster mode")):
        with pytest.raises(redis.ResponseError) as e:
            home.execute_command(*args)
        assert err(e) == text
    assert home.execute_command("COPY", "a", "{a}b", "DB", 0) == 1
    assert home.get("{a}b") == "1"


def test_keys_of_a_lost_slot_are_deleted(tmp_path):
    """A slot claimed by a node with a higher config epoch: the old owner deletes its keys."""
    ps = ports(2)
    nodes = [start_node(tmp_path, p) for p in ps]
    try:
        a, b = [n.client() for n in nodes]
        assert a.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == "OK"
        assert a.execute_command("CLUSTER", "MEET", "127.0.0.1", ps[1]) == "OK"
        wait_agree([a, b])
        wait_ok([a, b])
        slot = key_slot("lost")
        for i in range(50):
            a.set(f"{{lost}}{i}", i)
        a.set("kept", "yes")
        assert key_slot("kept") != slot
        assert a.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 50
        b_id = b.execute_command("CLUSTER", "MYID")
        assert b.execute_command("CLUSTER", "SETSLOT", slot, "NODE", b_id) == "OK"
        # b's config epoch becomes the greatest (it may be already, after the epoch collision
        # of two fresh masters at 0): its claim on the slot wins over a's.
        assert b.execute_command("CLUSTER", "BUMPEPOCH").split()[0] in ("BUMPED", "STILL")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if (owner_of([a], slot) == ps[1]
                    and a.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0):
                break
            time.sleep(0.1)
        assert owner_of([a], slot) == ps[1]
        assert a.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
        assert a.dbsize() == 1 and a.get("kept") == "yes"
        with pytest.raises(redis.ResponseError) as e:
            a.get("{lost}1")
        assert err(e) == f"MOVED {slot} 127.0.0.1:{ps[1]}"
    finally:
        for n in nodes:
            n.cleanup()


def wait_message(pubsub, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = pubsub.get_message(timeout=0.2)
        if m is not None and m["type"] in ("message", "pmessage"):
            return m
    raise AssertionError("no message")


def check_publish_between(publisher, subscriber):
    ps = subscriber.pubsub()
    ps.subscribe("news")
    ps.psubscribe("ne*")
    assert wait_subscribed(ps, 2)
    # The reply counts the publisher's own receivers only (none here).
    assert publisher.publish("news", "hello \x00 world") == 0
    got = sorted([(m["type"], m["data"]) for m in (wait_message(ps), wait_message(ps))])
    assert got == [("message", "hello \x00 world"), ("pmessage", "hello \x00 world")]
    # Unsubscribed before the next check publishes from this node: a bare close is seen by the
    # server a moment later, and until then the subscriptions still count as receivers.
    ps.unsubscribe("news")
    ps.punsubscribe("ne*")
    assert wait_subscribed(ps, 2, kinds=("unsubscribe", "punsubscribe"))
    ps.close()


def wait_subscribed(ps, n, timeout=5.0, kinds=("subscribe", "psubscribe")):
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline and seen < n:
        m = ps.get_message(timeout=0.2)
        if m is not None and m["type"] in kinds:
            seen += 1
    return seen == n


def test_publish_reaches_every_node(trio):
    nodes, clients, ps = trio
    check_publish_between(clients[0], clients[1])
    check_publish_between(clients[2], clients[0])


def test_publish_between_lavik_and_redis_server(tmp_path):
    """PUBLISH over the bus both ways between a redis-server 7.0 node and a target node."""
    ps = ports(2)
    nodes = [start_node(tmp_path, ps[0], redis_server=True), start_node(tmp_path, ps[1])]
    try:
        r, l = [n.client() for n in nodes]
        assert r.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191) == "OK"
        assert l.execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383) == "OK"
        assert l.execute_command("CLUSTER", "MEET", "127.0.0.1", ps[0]) == "OK"
        wait_agree([r, l])
        check_publish_between(r, l)
        check_publish_between(l, r)
    finally:
        for n in nodes:
            n.cleanup()


def test_shards_replication_offset(trio):
    nodes, clients, ps = trio
    for c in clients:
        me = c.execute_command("CLUSTER", "MYID")
        entries = [n for s in c.execute_command("CLUSTER", "SHARDS") for n in s[3]]
        mine = next(n for n in entries if n[1] == me)
        details = dict(zip(mine[::2], mine[1::2]))
        assert details["replication-offset"] == c.info("replication")["master_repl_offset"]


def test_exec_in_a_migrating_slot(trio):
    """EXEC checks its queued commands' keys in an open slot: a key gone since it was queued
    gives ASK (several keys: TRYAGAIN) and the transaction is discarded."""
    nodes, clients, ps = trio
    slot, src_port, dst_port, src, dst, src_id, dst_id = slot_pair(clients, ps, "mx")
    for k in ("{mx}a", "{mx}b", "{mx}c"):
        src.set(k, "v")
    assert dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) == "OK"
    assert src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) == "OK"
    tx = redis.Redis(port=src_port, decode_responses=True, single_connection_client=True)
    # Every key present: EXEC runs here.
    assert tx.execute_command("MULTI") == "OK"
    assert tx.execute_command("GET", "{mx}a") == "QUEUED"
    assert tx.execute_command("EXEC") == ["v"]
    # A key deleted after it was queued: ASK, and the transaction is gone.
    assert tx.execute_command("MULTI") == "OK"
    assert tx.execute_command("GET", "{mx}b") == "QUEUED"
    assert src.delete("{mx}b") == 1
    with pytest.raises(redis.ResponseError) as e:
        tx.execute_command("EXEC")
    assert err(e) == f"ASK {slot} 127.0.0.1:{dst_port}"
    with pytest.raises(redis.ResponseError) as e:
        tx.execute_command("EXEC")
    assert err(e) == "EXEC without MULTI"
    # Two keys, one gone: TRYAGAIN.
    assert tx.execute_command("MULTI") == "OK"
    assert tx.execute_command("MGET", "{mx}a", "{mx}c") == "QUEUED"
    assert src.delete("{mx}c") == 1
    with pytest.raises(redis.ResponseError) as e:
        tx.execute_command("EXEC")
    assert err(e) == "TRYAGAIN Multiple keys request during rehashing of slot"
    assert tx.get("{mx}a") == "v"
    tx.close()


@pytest.mark.lavik_only
def test_tls_cluster_is_refused_not_ignored(tmp_path):
    """Lavik's bus has no TLS: tls-cluster yes in cluster mode stops the start with the reason,
    and CONFIG SET refuses it (Redis would encrypt the bus; silently not doing so is worse)."""
    (port,) = ports(1)
    argv = [str(LAVIK_BIN), "--port", str(port), "--data-file", str(tmp_path / "d.data"),
            "--log-dir", str(tmp_path / "logs"), "--tls-cluster", "yes"] + cluster_args(tmp_path,
                                                                                        port)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "tls-cluster yes: Lavik's cluster bus has no TLS" in out.stdout + out.stderr
    node = start_node(tmp_path, port)
    try:
        c = node.client()
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("tls-cluster", "yes")
        assert "Lavik's cluster bus has no TLS" in err(e)
        assert c.config_set("tls-cluster", "no") is True
    finally:
        node.cleanup()
