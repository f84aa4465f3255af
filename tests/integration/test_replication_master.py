"""The server under test as a replication master (doc/replication.md, "Lavik as a master").

The master is the server under test (lavik, or redis-server with LAVIK_TEST_TARGET=redis); its
replicas are Debian's redis-server 7.0.15 or a second server under test. Everything checked here
is what a redis-server master does too, except the tests marked lavik_only. Every wait is
bounded: a replica that never syncs fails the test instead of hanging it.
"""

import threading
import time

import pytest
import redis

from conftest import RawConn, err, wait_until
from test_replication import (assert_same_data, caught_up, client, client_of, fill_every_type,
                              info, link_up, ordered_writes, quiet)
from test_replication import spawn_master as spawn_redis_master

SYNC_TIMEOUT_S = 20.0


def spawn_master(spawn_server, threads=None):
    master = spawn_server() if threads is None else spawn_server(threads=threads)
    m = client(master)
    # As fast as a disk-based sync: a redis-server master waits 5 s for more replicas otherwise.
    m.config_set("repl-diskless-sync-delay", 0)
    return master, m


def spawn_redis_replica(spawn_server, master):
    argv = ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no", "--bind",
            "127.0.0.1", "--replicaof", "127.0.0.1", str(master.port)]
    replica = spawn_server(argv=argv)
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "the replica did not sync"
    return replica, r


def follow(replica, master):
    r = client(replica)
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "the replica did not sync"
    return r


_token = [0]


def settled(m, r):
    """The replica applied everything the master did: a last write reached it (a replica counts
    a command's bytes when it starts, so matching offsets alone may leave the last one running),
    and the offsets match."""
    _token[0] += 1
    token = str(_token[0])
    m.set("settled-token", token)
    return (wait_until(quiet(lambda: r.get("settled-token") == token), SYNC_TIMEOUT_S)
            and wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S))


def live_writes(m):
    """Writes of every kind, in several databases; each result depends on their order."""
    ordered_writes(m, 150)
    m.mset({"a{x}": 1, "b{y}": 2, "c{z}": 3})  # keys on different workers
    m.set("tmp", "v", ex=1000)
    with m.pipeline(transaction=True) as p:  # one MULTI/EXEC on the replica
        p.expire("counter0", 5000)
        p.lpush("tx-list", "a", "b").ltrim("tx-list", 0, 0).rename("tx-list", "tx-moved")
        p.execute()
    m.xadd("events", {"a": 1})  # the ID the master made reaches the replica
    m.xgroup_create("events", "grp", id="0")
    m.sadd("pool", *range(20))
    m.spop("pool", 5)
    m.spop("pool")
    m.incrbyfloat("float", "1.25")
    m.hincrbyfloat("hf", "f", "2.5")
    m.getex("tmp", px=123456)
    m.zadd("z", {"x": 1, "y": 2, "w": 3})
    m.zincrby("z", 5, "x")
    m.zpopmin("z")
    m.rpush("bl", "one", "two")
    m.blpop(["bl"], timeout=1)
    m.lmpop(1, "bl", direction="RIGHT")
    client_of(m, 15).set("fifteen", "15")
    m.set("getdel", "x")
    m.getdel("getdel")
    m.set("big-live", "b" * 300000)
    m.flushdb()  # db 0 only
    m.set("after-flushdb", "yes")
    m.rpush("list-after", *range(10))


def test_redis_replica_full_sync_of_every_type_then_the_stream(spawn_server):
    master, m = spawn_master(spawn_server)
    fill_every_type(m)
    m.set("huge", "h" * (2 << 20))
    replica, r = spawn_redis_replica(spawn_server, master)
    assert settled(m, r)
    assert_same_data(m, r)
    assert r.strlen("huge") == 2 << 20
    assert info(m, "connected_slaves") == 1
    assert m.info("stats")["sync_full"] >= 1
    # Then the command stream, every kind of write.
    live_writes(m)
    assert settled(m, r)
    assert_same_data(m, r)
    assert client_of(r, 3).lrange("l0", 0, 2) == ["0", "3", "6"]
    assert r.get("after-flushdb") == "yes"
    assert r.lrange("list-after", 0, -1) == [str(i) for i in range(10)]


@pytest.mark.parametrize("threads", [1, 4])
def test_lavik_replica_of_the_master(spawn_server, threads):
    master, m = spawn_master(spawn_server, threads=threads)
    fill_every_type(m)
    replica = spawn_server(threads=threads)
    r = follow(replica, master)
    assert settled(m, r)
    assert_same_data(m, r)
    live_writes(m)
    assert settled(m, r)
    assert_same_data(m, r)


def test_expiry_reaches_the_replica_as_absolute_times(spawn_server):
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    m.set("ex", "v", ex=1000)
    m.set("px", "v", px=2000000)
    m.setex("setex", 3000, "v")
    m.psetex("psetex", 4000000, "v")
    m.set("e1", "v")
    m.expire("e1", 5000)
    m.set("e2", "v")
    m.pexpire("e2", 6000000)
    m.set("getex", "v")
    m.getex("getex", ex=7000)
    m.set("gone", "v")
    m.expire("gone", -1)  # a past time deletes: replicated as DEL
    time.sleep(1.1)  # a relative time applied later on the replica would differ now
    assert settled(m, r)
    for key in ("ex", "px", "setex", "psetex", "e1", "e2", "getex"):
        assert r.pexpiretime(key) == m.pexpiretime(key), key
    assert r.exists("gone") == 0


def test_keys_the_master_expires_reach_the_replica_as_del(spawn_server):
    """A redis-server replica never expires keys itself (it only hides them): they leave its
    memory when the master's DEL arrives, from the active cycle or from a read that found them
    expired. A key written again after it expired keeps its new value on the replica."""
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    for i in range(20):
        m.set(f"short:{i}", "v", px=2000)
    m3 = client(master, db=3)
    m3.set("short:db3", "v", px=2000)
    m.set("again", "old", px=2000)
    m.set("stays", "v")
    assert settled(m, r)
    assert r.dbsize() == 23  # 20 + again + stays + settled-token
    r3 = client(replica, db=3)
    assert r3.dbsize() == 1
    time.sleep(2.2)
    assert m.get("again") is None  # expired on access (or already by the active cycle)
    m.set("again", "new")
    # The master's active cycle finds the rest (Redis: 10 times a second).
    assert wait_until(lambda: r.dbsize() == 3 and r3.dbsize() == 0, SYNC_TIMEOUT_S), \
        (r.dbsize(), r3.dbsize())
    assert settled(m, r)
    assert r.get("again") == "new" and r.get("stays") == "v"
    assert r.info("stats")["expired_keys"] == 0  # the replica expired none itself


@pytest.mark.parametrize("lazy,command", [("no", "DEL"), ("yes", "UNLINK")])
def test_lazyfree_lazy_expire_sends_unlink(spawn_server, lazy, command):
    """As Redis's propagateDeletion: with lazyfree-lazy-expire yes an expired key reaches the
    replicas as UNLINK. The replica's MONITOR shows what its master sent."""
    master, m = spawn_master(spawn_server)
    assert m.config_set("lazyfree-lazy-expire", lazy)
    replica, r = spawn_redis_replica(spawn_server, master)
    with RawConn(replica.port) as mon:
        assert mon.cmd("MONITOR") == "OK"
        m.set("gone", "v", px=100)
        deadline = time.monotonic() + SYNC_TIMEOUT_S
        deleted = (b'"DEL" "gone"', b'"UNLINK" "gone"')
        while not any(d in mon.buf for d in deleted) and time.monotonic() < deadline:
            time.sleep(0.2)
            m.get("gone")  # expires it on access if the active cycle has not yet
            mon.drain(0.2)
        seen = bytes(mon.buf)
        assert f'"{command}" "gone"'.encode() in seen, seen
        other = "UNLINK" if command == "DEL" else "DEL"
        assert f'"{other}" "gone"'.encode() not in seen, seen


def test_script_and_transaction_effects(spawn_server):
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    m.sadd("s", *range(30))
    m.eval("redis.call('set', KEYS[1], 'a'); redis.call('rpush', KEYS[2], 'b'); "
           "redis.call('spop', KEYS[3]); redis.call('incrbyfloat', KEYS[4], '0.5'); "
           "redis.call('select', 5); redis.call('set', 'in5', 'five')",
           4, "sa", "sb", "s", "sf")
    m.eval("return redis.call('get', KEYS[1])", 1, "sa")  # no write: nothing propagated
    with m.pipeline(transaction=True) as p:
        p.incr("t")
        p.spop("s", 3)
        p.expire("t", 100)
        p.execute()
    assert settled(m, r)
    assert_same_data(m, r, dbs=(0, 5))
    assert client_of(r, 5).get("in5") == "five"
    assert r.pexpiretime("t") == m.pexpiretime("t")


def test_info_and_role_of_a_master_with_a_replica(spawn_server):
    master, m = spawn_master(spawn_server)
    assert info(m, "repl_backlog_active") == 0
    replica, r = spawn_redis_replica(spawn_server, master)
    m.set("k", "v")
    assert settled(m, r)
    i = m.info("replication")
    assert i["role"] == "master"
    assert i["connected_slaves"] == 1
    s0 = i["slave0"]
    assert s0["ip"] == "127.0.0.1" and s0["port"] == replica.port
    assert s0["state"] == "online"
    assert 0 <= s0["lag"] <= 2
    assert len(i["master_replid"]) == 40
    assert i["repl_backlog_active"] == 1
    assert i["repl_backlog_size"] == 1048576
    assert i["repl_backlog_first_byte_offset"] >= 1
    assert i["repl_backlog_histlen"] == (i["master_repl_offset"]
                                         - i["repl_backlog_first_byte_offset"] + 1)
    # The replica's ACK (every second) reaches the master's offset field.
    assert wait_until(lambda: m.info("replication")["slave0"]["offset"] ==
                      m.info("replication")["master_repl_offset"], 5)
    role = m.execute_command("ROLE")
    assert role[0] == "master"
    assert role[1] == info(m, "master_repl_offset")
    assert role[2] == [["127.0.0.1", str(replica.port), str(role[2][0][2])]]
    assert r.info("replication")["master_replid"] == i["master_replid"]
    m.config_set("repl-backlog-size", 2 << 20)
    assert m.config_get("repl-backlog-size") == {"repl-backlog-size": str(2 << 20)}
    assert info(m, "repl_backlog_size") == 2 << 20


def test_wait_without_and_with_a_replica(spawn_server):
    master, m = spawn_master(spawn_server)
    assert m.execute_command("WAIT", 0, 0) == 0
    start = time.monotonic()
    m.set("k", "v")
    assert m.execute_command("WAIT", 1, 300) == 0
    assert 0.25 <= time.monotonic() - start < 5
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("WAIT", "x", 0)
    assert err(e) == "value is not an integer or out of range"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("WAIT", 0, -1)
    assert err(e) == "timeout is negative"
    replica, r = spawn_redis_replica(spawn_server, master)
    for i in range(20):
        m.set(f"w{i}", i)
    start = time.monotonic()
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert time.monotonic() - start < 4
    assert r.get("w19") == "19"
    assert m.execute_command("WAIT", 0, 0) == 1
    assert m.execute_command("WAIT", 2, 200) == 1  # only one replica: the timeout answers
    start = time.monotonic()
    with m.pipeline(transaction=True) as p:  # inside MULTI: answered at once (no timeout)
        p.get("w1")
        p.execute_command("WAIT", 5, 0)
        assert p.execute()[1] in (0, 1)
    assert time.monotonic() - start < 2
    # A replica refuses WAIT.
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("WAIT", 0, 0)
    assert err(e).startswith("WAIT cannot be used with replica instances.")


def test_min_replicas_to_write(spawn_server):
    master, m = spawn_master(spawn_server)
    m.config_set("min-replicas-to-write", 1)
    time.sleep(1.2)  # the count of good replicas is refreshed every second
    with pytest.raises(redis.ResponseError) as e:
        m.set("k", "v")
    assert err(e) == "NOREPLICAS Not enough good replicas to write."
    assert m.get("k") is None  # reads are served
    replica, r = spawn_redis_replica(spawn_server, master)
    assert wait_until(lambda: _writes(m), 5)
    m.config_set("min-replicas-to-write", 0)


def _writes(m):
    try:
        return m.set("k", "v")
    except redis.ResponseError:
        return False


def resync_after_client_kill(m, r):
    """CLIENT KILL TYPE replica on the master, writes meanwhile: the replica continues with a
    partial resync (sync_partial_ok + 1, no full sync) and gets them."""
    full = m.info("stats")["sync_full"]
    partial = m.info("stats")["sync_partial_ok"]
    assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    for i in range(100):
        m.rpush("during", i)
    assert wait_until(lambda: m.info("stats")["sync_partial_ok"] == partial + 1, SYNC_TIMEOUT_S)
    assert settled(m, r)
    assert m.info("stats")["sync_full"] == full
    assert r.lrange("during", 0, -1) == [str(i) for i in range(100)]


def test_partial_resync_after_client_kill_type_replica(spawn_server):
    master, m = spawn_master(spawn_server)
    replica = spawn_server()
    m.set("before", "1")
    r = follow(replica, master)
    assert settled(m, r)
    resync_after_client_kill(m, r)
    assert r.get("before") == "1"


def test_replica_killed_under_write_load_resyncs(spawn_server, target):
    """kill -9 of a replica under write load: restarted with replicaof configured, it continues
    with a partial resync (redis-server from the RDB of its sync, Lavik from its data file's last
    consistency point) and ends with the master's data."""
    master, m = spawn_master(spawn_server)
    m.config_set("repl-backlog-size", 64 << 20)
    args = ["--replicaof", f"127.0.0.1 {master.port}"]
    args += ["--save", "3600 1"] if target == "redis" else []
    replica = spawn_server(extra_args=args)
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "the replica did not sync"
    if target == "lavik":  # its first consistency point, as redis-server's RDB of the sync
        assert wait_until(lambda: int(r.info("storage")["replica_cut_offset"]) >= 0,
                          SYNC_TIMEOUT_S)
    full = m.info("stats")["sync_full"]
    stop = threading.Event()
    written = [0]

    def load():
        c = client(master)
        while not stop.is_set():
            n = written[0]
            c.set(f"key:{n % 500}", n)
            c.hset("h", f"f{n % 300}", n)
            written[0] += 1

    t = threading.Thread(target=load)
    t.start()
    try:
        time.sleep(0.5)
        replica.kill()  # SIGKILL
        time.sleep(0.3)
        replica.start(port=replica.port)
        r = client(replica)
        assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "no resync"
        time.sleep(0.5)
    finally:
        stop.set()
        t.join(10)
    assert settled(m, r)
    assert_same_data(m, r, dbs=(0,))
    assert written[0] > 100
    stats = m.info("stats")
    assert stats["sync_full"] == full, "the restarted replica was sent a full sync"
    assert stats["sync_partial_ok"] == 1


def during_load(step, warmup, start):
    """Runs n = step(n) in a loop on a thread (n: the writes made so far); once `warmup` writes
    are made, calls start() (a replica's sync), then lets `warmup` more land and stops the
    thread. Returns start()'s result and the writes made; fails on the thread's error."""
    stop = threading.Event()
    errors = []
    ops = [0]

    def load():
        try:
            while not stop.is_set():
                ops[0] = step(ops[0])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=load)
    t.start()
    try:
        assert wait_until(lambda: ops[0] >= warmup, SYNC_TIMEOUT_S)
        started = start()
        synced_at = ops[0]
        assert wait_until(lambda: ops[0] >= synced_at + warmup, SYNC_TIMEOUT_S)
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive() and not errors
    return started, ops[0]


def test_full_sync_under_incr_load_is_exact(spawn_server):
    """The full sync's RDB is a snapshot at the offset its stream starts from: an INCR, APPEND,
    LPUSH or HINCRBY that lands while the RDB is written is applied once on the replica — in the
    RDB or in the stream after it, never both (doc/replication.md)."""
    master, m = spawn_master(spawn_server)
    pipe = m.pipeline(transaction=False)
    for i in range(50_000):
        pipe.set(f"fill:{i}", "x" * (i % 50))
        if i % 5000 == 4999:
            pipe.execute()
    for j in range(500):
        pipe.set(f"cnt:{j}", 0)
    pipe.rpush("lbig", *range(6000))  # chunked list
    pipe.hset("hbig", mapping={f"f{i}": i for i in range(9000)})  # chunked hash
    pipe.execute()
    c = client(master)

    def step(n):
        c.incr(f"cnt:{n % 500}")
        c.append(f"ap:{n % 200}", "x")
        c.lpush("lbig", n)
        c.hincrby("hbig", f"f{(n * 7) % 9000}", 1)
        return n + 1

    (replica, r), ops = during_load(step, 200, lambda: spawn_redis_replica(spawn_server, master))
    assert settled(m, r)
    keys = [f"cnt:{j}" for j in range(500)] + [f"ap:{j}" for j in range(200)]
    assert r.mget(keys) == m.mget(keys)
    assert r.llen("lbig") == m.llen("lbig") == 6000 + ops
    assert r.lrange("lbig", 0, 99) == m.lrange("lbig", 0, 99)
    assert r.hgetall("hbig") == m.hgetall("hbig")
    assert r.dbsize() == m.dbsize()


def fill_with_counters(c, fills, counters):
    """`fills` short strings fill:<i> and `counters` counters cnt:<j> at 0, pipelined."""
    pipe = c.pipeline(transaction=False)
    for i in range(fills):
        pipe.set(f"fill:{i}", "x" * (i % 50))
    for j in range(counters):
        pipe.set(f"cnt:{j}", 0)
    pipe.execute()


def test_full_sync_under_fsync_always_writes_is_exact(spawn_server):
    """With appendfsync always a write waits for the device after its record is placed, so a
    full sync asked for meanwhile most often finds one waiting: the snapshot opens once it has
    finished, so it is in the snapshot or in the stream after it, never both."""
    master, m = spawn_master(spawn_server)
    m.config_set("appendfsync", "always")
    fill_with_counters(m, 20_000, 100)
    c = client(master)

    def step(n):
        c.incr(f"cnt:{n % 100}")
        c.append(f"ap:{n % 50}", "x")
        return n + 1

    (replica, r), ops = during_load(step, 100, lambda: spawn_redis_replica(spawn_server, master))
    assert settled(m, r)
    keys = [f"cnt:{j}" for j in range(100)] + [f"ap:{j}" for j in range(50)]
    assert r.mget(keys) == m.mget(keys)
    assert sum(int(v) for v in m.mget(keys[:100])) == ops
    assert r.dbsize() == m.dbsize()


@pytest.mark.parametrize("sub_kind", ["redis", "same"])
def test_a_chained_full_sync_under_incr_load_is_exact(spawn_server, sub_kind):
    """A replica serving a replica of its own (chained, its stream its master's): the
    sub-replica's RDB is a snapshot at the offset its stream starts from, in the database that
    stream is in — so INCR and APPEND landing meanwhile, in db 3, are applied once."""
    top = spawn_redis_master(spawn_server)
    t = client(top, db=3)
    middle = spawn_server()
    mc = follow(middle, top)
    mc.config_set("repl-diskless-sync-delay", 0)
    fill_with_counters(t, 30_000, 300)
    p = client(top, db=3).pipeline(transaction=False)

    def step(n):
        for _ in range(20):  # pipelined: many writes land between request and snapshot
            p.incr(f"cnt:{n % 300}")
            p.append(f"ap:{n % 100}", "x")
            n += 1
        p.execute()
        return n

    def start():
        if sub_kind == "redis":
            return spawn_redis_replica(spawn_server, middle)
        sub = spawn_server()
        return sub, follow(sub, middle)

    (sub, s), _ = during_load(step, 2000, start)
    assert settled(client(top), s)
    keys = [f"cnt:{j}" for j in range(300)] + [f"ap:{j}" for j in range(100)]
    s3 = client(sub, db=3)
    assert s3.mget(keys) == t.mget(keys)
    assert s3.dbsize() == t.dbsize()
    assert s.dbsize() == client(top).dbsize()


def test_partial_resync_under_write_load(spawn_server):
    master, m = spawn_master(spawn_server)
    replica = spawn_server()
    r = follow(replica, master)
    partial = m.info("stats")["sync_partial_ok"]
    stop = threading.Event()
    written = [0]

    def load():
        c = client(master)
        while not stop.is_set():
            c.incr("counter")
            written[0] += 1

    t = threading.Thread(target=load)
    t.start()
    try:
        for _ in range(3):
            time.sleep(0.3)
            m.execute_command("CLIENT", "KILL", "TYPE", "replica")
            assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    finally:
        stop.set()
        t.join(10)
    assert settled(m, r)
    assert r.get("counter") == m.get("counter")
    assert int(m.get("counter")) >= written[0]
    assert m.info("stats")["sync_partial_ok"] >= partial + 1


def test_a_replica_of_a_promoted_replica_continues(spawn_server):
    """PSYNC2: B and C follow A; B is promoted; C follows B with a partial resync."""
    a, ma = spawn_master(spawn_server)
    b = spawn_server()
    c = spawn_server()
    ma.set("k", "v")
    rb = follow(b, a)
    rc = follow(c, a)
    for i in range(10):
        ma.rpush("l", i)
    assert settled(ma, rb) and settled(ma, rc)
    rb.config_set("repl-diskless-sync-delay", 0)
    assert rb.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    partial = rb.info("stats")["sync_partial_ok"]
    assert rc.execute_command("REPLICAOF", "127.0.0.1", b.port) == "OK"
    assert wait_until(quiet(lambda: link_up(rc)), SYNC_TIMEOUT_S)
    assert wait_until(lambda: rb.info("stats")["sync_partial_ok"] == partial + 1, 5)
    rb.rpush("l", "after")
    assert settled(rb, rc)
    assert rc.lrange("l", 0, -1) == [str(i) for i in range(10)] + ["after"]
    assert rc.info("replication")["master_replid2"] == ma.info("replication")["master_replid"]


def test_replication_commands_from_a_client(spawn_server):
    master, m = spawn_master(spawn_server)
    assert m.execute_command("REPLCONF", "listening-port", 1234) == "OK"
    assert m.execute_command("REPLCONF", "capa", "eof", "capa", "psync2") == "OK"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("REPLCONF", "listening-port")
    assert err(e) == "syntax error"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("REPLCONF", "nosuch", "1")
    assert err(e) == "Unrecognized REPLCONF option: nosuch"
    assert m.execute_command("REPLCONF", "rdb-only", 0) == "OK"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("REPLCONF", "rdb-only", 2)
    assert err(e) == "value is out of range, value must between 0 and 1"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("REPLCONF", "rdb-only", "yes")
    assert err(e) == "value is not an integer or out of range"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("PSYNC", "?")
    assert "wrong number of arguments for 'psync' command" in err(e)
    infos = m.execute_command("COMMAND", "INFO", "psync", "replconf", "wait", "sync")
    assert [infos[n]["arity"] for n in ("psync", "replconf", "wait", "sync")] == [-3, -1, 3, 1]


@pytest.mark.parametrize("threads", [1, 4])
def test_blocked_pops_reach_the_replica_as_their_non_blocking_form(spawn_server, threads):
    master, m = spawn_master(spawn_server, threads=threads)
    replica, r = spawn_redis_replica(spawn_server, master)
    calls = [("blpop", "a"), ("brpop", "c"), ("bzpopmin", None), ("blmove", "a")]
    for i, (cmd, want) in enumerate(calls):
        key = f"q{i}"
        got = []

        def block():
            c = client(master)
            if cmd == "bzpopmin":
                got.append(c.bzpopmin([key], timeout=5))
            elif cmd == "blmove":
                got.append(c.blmove(key, f"dst{i}", 5, "LEFT", "RIGHT"))
            else:
                got.append(getattr(c, cmd)([key], timeout=5))

        t = threading.Thread(target=block)
        t.start()
        assert wait_until(lambda: m.info("clients")["blocked_clients"] == 1, 5)
        if cmd == "bzpopmin":
            m.zadd(key, {"x": 1, "y": 2})
        else:
            m.rpush(key, "a", "b", "c")
        t.join(10)
        assert got and got[0] is not None
        if cmd == "bzpopmin":  # once the pop is done: after it in the stream too
            m.zadd(key, {"after": 3})
        else:
            m.rpush(key, "after")
    assert settled(m, r)
    assert_same_data(m, r, dbs=(0,))


@pytest.mark.parametrize("threads", [1, 4])
def test_a_served_pop_keeps_its_place_between_pipelined_pushes(spawn_server, threads):
    """The pop that serves a blocked BLPOP comes after the push that fed it and before the
    pushes that follow it on the key."""
    master, m = spawn_master(spawn_server, threads=threads)
    replica, r = spawn_redis_replica(spawn_server, master)
    for round_ in range(5):
        key = f"q{round_}"
        got = []
        t = threading.Thread(target=lambda: got.append(client(master).blpop([key], timeout=5)))
        t.start()
        assert wait_until(lambda: m.info("clients")["blocked_clients"] == 1, 5)
        with m.pipeline(transaction=False) as p:
            p.lpush(key, "a").lpush(key, "b").rpush(key, "c")
            p.execute()
        t.join(10)
        assert got == [(key, "a")]
    assert settled(m, r)
    assert_same_data(m, r, dbs=(0,))


@pytest.mark.parametrize("fsync", ["everysec", "always"])
def test_a_write_overtaking_a_large_value_keeps_its_order(spawn_server, fsync):
    """A value above the write buffer goes to the device on its own and takes a while; writes
    to the same key from another client meanwhile (a SET, an APPEND) land after it on the master,
    and reach the replica in that same order."""
    master, m = spawn_master(spawn_server, threads=1)
    m.config_set("appendfsync", fsync)
    replica, r = spawn_redis_replica(spawn_server, master)
    big = RawConn(master.port)
    small = client(master)
    keys = []
    for round_ in range(40):
        key = f"big{round_}"
        keys.append(key)
        big.send_command("SET", key, str(round_ % 10) * (3 << 20))
        time.sleep((round_ % 8) * 0.0005)  # the small writes land at varied points of its flight
        if round_ % 2:
            small.append(key, "-tail")
        else:
            small.set(key, "small")
        assert big.reply() == "OK"
    assert settled(m, r)
    for round_, key in enumerate(keys):
        # One of the two orders, on the master too: an APPEND never lands on the value the SET
        # replaced and is then lost under it.
        allowed = {3 << 20, (3 << 20) + 5} if round_ % 2 else {3 << 20, 5}
        assert m.strlen(key) in allowed, key
        assert r.strlen(key) == m.strlen(key), key
        assert r.getrange(key, -8, -1) == m.getrange(key, -8, -1), key
