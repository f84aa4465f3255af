"""The server under test as a replica of Debian's redis-server 7.0.15 (doc/replication.md).

Each test spawns its own redis-server master on a free port (--save '', no sync delay) and its
own replica (lavik, or redis-server when LAVIK_TEST_TARGET=redis), so every expectation here is
what a redis-server replica does too, except the tests marked lavik_only. Every wait is bounded:
a replica that never syncs fails the test instead of hanging it.
"""

import glob
import os
import re
import socket
import threading
import time

import pytest
import redis

from conftest import RespError, err, wait_until
from test_rdb_file import snapshot as rdb_snapshot

SYNC_TIMEOUT_S = 15.0
ZERO_ID = "0" * 40


def spawn_master(spawn_server, diskless=True, extra=()):
    argv = ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no", "--bind",
            "127.0.0.1", "--repl-diskless-sync", "yes" if diskless else "no",
            "--repl-diskless-sync-delay", "0"] + list(extra)
    return spawn_server(argv=argv)


def client(server, db=0, decode=True):
    return redis.Redis(host="127.0.0.1", port=server.port, db=db, decode_responses=decode,
                       socket_timeout=10)


def info(c, field):
    return c.info("replication")[field]


def link_up(r):
    return r.info("replication").get("master_link_status") == "up"


def quiet(predicate):
    """predicate, false while the replica answers LOADING (a full sync is loading)."""
    def check():
        try:
            return predicate()
        except redis.exceptions.BusyLoadingError:
            return False
    return check


def follow(replica, master):
    c = client(replica)
    assert c.execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    assert wait_until(lambda: link_up(c), SYNC_TIMEOUT_S), "the replica did not sync"
    return c


def caught_up(m, r):
    """True once the replica processed every byte of the master's stream."""
    return info(r, "slave_repl_offset") == info(m, "master_repl_offset")


class _Db:
    """What test_rdb_file's snapshot reads through (.client()), for one database."""

    def __init__(self, c, db):
        self.kwargs = dict(c.connection_pool.connection_kwargs, db=db)

    def client(self, **kwargs):
        return redis.Redis(**dict(self.kwargs, decode_responses=True, **kwargs))


def snapshot(c, db):
    return rdb_snapshot(_Db(c, db))


def fill_every_type(m):
    m.set("str", "hello")
    m.set("int", 12345)
    m.set("big", "x" * 20000)
    m.rpush("list:small", "a", "b", "c")
    m.rpush("list:large", *[f"element-{i}-" + "y" * 50 for i in range(3000)])
    m.sadd("set:int", *range(100))
    m.sadd("set:str", *[f"member{i}" for i in range(300)])
    m.zadd("zset:small", {"a": 1, "b": 2.5, "c": -3})
    m.zadd("zset:large", {f"m{i}": i * 0.5 for i in range(500)})
    m.hset("hash:small", mapping={"f1": "v1", "f2": "2"})
    m.hset("hash:large", mapping={f"field{i}": "v" * 100 for i in range(600)})
    for i in range(50):
        m.xadd("stream", {"n": i, "k": "v"}, id=f"{1000 + i}-0")
    m.xgroup_create("stream", "g1", id="0")
    m.xgroup_create("stream", "g2", id="$")
    m.xreadgroup("g1", "alice", {"stream": ">"}, count=5)
    m.set("expiring", "soon", px=600000)
    m.hset("hash:expiring", "f", "v")
    m.pexpire("hash:expiring", 900000)
    for db in (3, 15):
        d = client_of(m, db)
        d.set(f"in-db-{db}", db)
        d.rpush(f"list-db-{db}", "p", "q")


def client_of(c, db):
    kw = c.connection_pool.connection_kwargs
    return redis.Redis(host=kw["host"], port=kw["port"], db=db, decode_responses=True,
                       socket_timeout=10)


def assert_same_data(m, r, dbs=(0, 3, 15)):
    for db in dbs:
        assert snapshot(r, db) == snapshot(m, db), f"db {db} differs"


@pytest.mark.parametrize("diskless", [True, False], ids=["eof-mark", "bulk-length"])
def test_full_sync_of_every_type(spawn_server, diskless):
    master = spawn_master(spawn_server, diskless=diskless)
    m = client(master)
    fill_every_type(m)
    replica = spawn_server()
    r = client(replica)
    r.set("old-key", "flushed by the full sync")
    client_of(r, 5).set("old-in-db-5", "gone too")
    follow(replica, master)
    assert r.get("old-key") is None
    assert client_of(r, 5).dbsize() == 0
    assert_same_data(m, r)
    assert r.pttl("expiring") > 500000
    assert client_of(r, 3).get("in-db-3") == "3"
    assert client(master).info("stats")["sync_full"] == 1


def ordered_writes(m, n):
    """Keys spread over the workers and databases 0 and 3; each value depends on the order the
    commands ran in."""
    m3 = client_of(m, 3)
    for i in range(n):
        m.append(f"log{i % 7}", f"{i},")
        m.incr(f"counter{i % 5}")
        m3.rpush(f"l{i % 3}", i)
        if i % 50 == 49:
            m.delete(f"log{i % 7}")


def following(spawn_server, threads, extra_args=()):
    """A redis-server master and a replica with `threads` workers following it: (m, r)."""
    master = spawn_master(spawn_server)
    replica = spawn_server(threads=threads, extra_args=extra_args)
    return client(master), follow(replica, master)


@pytest.mark.parametrize("threads", [1, 4])
def test_live_writes_apply_in_order_across_databases(spawn_server, threads):
    m, r = following(spawn_server, threads)
    ordered_writes(m, 200)
    m.set("tmp", "v", ex=1000)
    m.expire("counter0", 5000)
    with m.pipeline(transaction=True) as p:
        p.set("tx-a", 1)
        p.incrby("tx-a", 41)
        p.rename("tx-a", "tx-b")
        p.execute()
    m.xadd("events", {"a": 1}, id="1-0")
    m.xgroup_create("events", "grp", id="0")
    m.xreadgroup("grp", "bob", {"events": ">"})
    # Scripts and functions reach the replica as their effects (MULTI/EXEC around them).
    m.eval("redis.call('set', KEYS[1], 'a'); redis.call('rpush', KEYS[2], 'b'); "
           "redis.call('spop', KEYS[3])", 3, "script-a", "script-b", "script-c")
    m.sadd("pool", *range(20))
    m.spop("pool", 5)  # random on the master, replicated as SREM
    m.incrbyfloat("float", "1.25")
    m.getex("tmp", px=123456)
    m.zadd("z", {"x": 1})
    m.zincrby("z", 5, "x")
    client_of(m, 15).set("fifteen", "15")
    m.flushdb()  # db 0 only; db 3 and 15 stay
    m.set("after-flushdb", "yes")
    assert wait_until(lambda: caught_up(m, r), SYNC_TIMEOUT_S)
    assert_same_data(m, r)
    assert client_of(r, 3).lrange("l0", 0, 2) == ["0", "3", "6"]
    assert r.get("after-flushdb") == "yes"
    assert client_of(r, 15).get("fifteen") == "15"


def pipelined_stream(m, rounds):
    """A pipelined stream whose result depends on its order: keys on every worker, commands of
    one key and of several (across workers, and MSET/DEL spanning them), databases 0 and 3,
    transactions and a script between them."""
    m3 = client_of(m, 3)
    for round_ in range(rounds):
        with m.pipeline(transaction=False) as p:
            for i in range(400):
                n = round_ * 400 + i
                p.append(f"log{n % 11}", f"{n},")
                p.incr(f"counter{n % 13}")
                p.rpush(f"list{n % 5}", n)
                p.hincrby(f"hash{n % 3}", f"f{n % 4}", n)
                p.zincrby("rank", 1, f"m{n % 17}")
                p.setrange(f"bytes{n % 7}", n % 20, chr(97 + n % 26))
                if n % 97 == 0:
                    p.delete(*[f"log{j}" for j in range(11)])
                if n % 89 == 0:
                    p.mset({f"counter{j}": n for j in range(0, 13, 3)})
                if n % 53 == 0:
                    p.expire(f"list{n % 5}", 10000 + n)
            p.execute()
        with m3.pipeline(transaction=False) as p:
            for i in range(100):
                p.lpush(f"db3-list{i % 4}", f"{round_}:{i}")
                p.incrbyfloat(f"db3-float{i % 3}", "0.5")
            p.execute()
        with m.pipeline(transaction=True) as p:
            p.incr("counter0")
            p.rpush("list1", f"tx{round_}")
            p.append("log3", f"tx{round_},")
            p.execute()
        m.eval("redis.call('append', KEYS[1], ARGV[1]); redis.call('rpush', KEYS[2], ARGV[1])",
               2, "log5", "list4", f"script{round_}")


@pytest.mark.parametrize("threads", [2, 4])
def test_pipelined_writes_apply_in_order_over_the_workers(spawn_server, threads):
    m, r = following(spawn_server, threads)
    pipelined_stream(m, 6)
    # WAIT's count comes from the replica's ACK: once it says 1, every write before it is
    # readable there — no wait.
    assert m.execute_command("WAIT", 1, 10000) == 1
    assert_same_data(m, r, dbs=(0, 3))
    assert r.get("counter0") == m.get("counter0")
    assert wait_until(lambda: caught_up(m, r), SYNC_TIMEOUT_S)
    assert r.info("stats")["total_commands_processed"] > 6 * 400 * 6


@pytest.mark.lavik_only  # replica-apply-window is Lavik's own parameter
def test_replica_apply_window_zero_applies_one_command_at_a_time(spawn_server):
    m, r = following(spawn_server, 2, ("--replica-apply-window", "0"))
    assert r.config_get("replica-apply-window") == {"replica-apply-window": "0"}
    pipelined_stream(m, 2)
    assert m.execute_command("WAIT", 1, 10000) == 1
    assert_same_data(m, r, dbs=(0, 3))
    assert r.config_set("replica-apply-window", 64)
    pipelined_stream(m, 2)
    assert m.execute_command("WAIT", 1, 10000) == 1
    assert_same_data(m, r, dbs=(0, 3))
    with pytest.raises(redis.ResponseError):
        r.config_set("replica-apply-window", -1)


def synced_pair(spawn_server):
    """A master holding k=v and a replica caught up with it: (master, replica, m, r)."""
    master = spawn_master(spawn_server)
    replica = spawn_server()
    m = client(master)
    m.set("k", "v")
    r = follow(replica, master)
    assert wait_until(lambda: caught_up(m, r), SYNC_TIMEOUT_S)
    return master, replica, m, r


def test_role_and_info_of_a_replica(spawn_server):
    master, replica, m, r = synced_pair(spawn_server)
    role = r.execute_command("ROLE")
    assert role[:4] == ["slave", "127.0.0.1", master.port, "connected"]
    assert role[4] == info(m, "master_repl_offset")
    i = r.info("replication")
    assert i["role"] == "slave"
    assert i["master_host"] == "127.0.0.1"
    assert i["master_port"] == master.port
    assert i["master_link_status"] == "up"
    assert 0 <= i["master_last_io_seconds_ago"] <= 11
    assert i["master_sync_in_progress"] == 0
    assert i["slave_read_repl_offset"] == i["slave_repl_offset"] == i["master_repl_offset"]
    assert i["slave_priority"] == 100
    assert i["slave_read_only"] == 1
    assert i["replica_announced"] == 1
    assert i["connected_slaves"] == 0
    assert i["master_replid"] == info(m, "master_replid")
    assert str(i["master_replid2"]) in ("0", ZERO_ID)  # redis-py reads it as 0
    assert i["second_repl_offset"] == -1
    # The master sees the replica online, with the offset it acknowledged.
    def acked():
        i = m.info("replication")
        s = i.get("slave0", {})
        return s.get("state") == "online" and s.get("offset") == i["master_repl_offset"]
    assert wait_until(acked, 5)
    assert m.info("replication")["slave0"]["port"] == replica.port
    hello = r.execute_command("HELLO")
    hello = hello if isinstance(hello, dict) else dict(zip(hello[::2], hello[1::2]))
    assert hello["role"] == "replica"
    # The master's client shows with flag M.
    assert any(c["flags"] == "M" for c in r.client_list())


def test_info_and_role_of_a_master_without_replicas(spawn_server):
    s = spawn_server()
    c = client(s)
    i = c.info("replication")
    assert i["role"] == "master"
    assert i["connected_slaves"] == 0
    assert re.fullmatch(r"[0-9a-f]{40}", str(i["master_replid"]))
    assert str(i["master_replid2"]) in ("0", ZERO_ID)  # redis-py reads it as 0
    assert i["master_repl_offset"] == 0
    assert i["second_repl_offset"] == -1
    assert i["repl_backlog_active"] == 0
    assert c.execute_command("ROLE") == ["master", 0, []]
    other = spawn_server()
    assert client(other).info("replication")["master_replid"] != i["master_replid"]


def test_replicaof_in_the_configuration_at_start(spawn_server):
    master = spawn_master(spawn_server)
    m = client(master)
    m.set("k", "v")
    replica = spawn_server(extra_args=["--replicaof", f"127.0.0.1 {master.port}"])
    r = client(replica)
    assert wait_until(lambda: link_up(r), SYNC_TIMEOUT_S)
    assert r.get("k") == "v"
    assert r.execute_command("ROLE")[:3] == ["slave", "127.0.0.1", master.port]


def test_replicaof_replies(spawn_server):
    master = spawn_master(spawn_server)
    replica = spawn_server()
    r = client(replica)
    assert r.execute_command("REPLICAOF", "NO", "ONE") == "OK"  # already a master
    for bad in ("99999", "abc", "-1"):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("REPLICAOF", "127.0.0.1", bad)
        assert err(e) == "Invalid master port"
    follow(replica, master)
    assert (r.execute_command("REPLICAOF", "127.0.0.1", master.port) ==
            "OK Already connected to specified master")
    r.response_callbacks.pop("SLAVEOF", None)  # redis-py turns its reply into a bool
    assert (r.execute_command("SLAVEOF", "127.0.0.1", master.port) ==
            "OK Already connected to specified master")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("REPLICAOF", "127.0.0.1")
    assert err(e) == "wrong number of arguments for 'replicaof' command"


def test_replica_is_read_only_and_serves_reads(spawn_server):
    master = spawn_master(spawn_server)
    replica = spawn_server()
    m = client(master)
    m.set("k", "v")
    m.rpush("l", 1, 2)
    r = follow(replica, master)
    assert wait_until(lambda: r.get("k") == "v", SYNC_TIMEOUT_S)
    for cmd in (("SET", "k", "x"), ("DEL", "k"), ("LPUSH", "l", "0"), ("FLUSHALL",),
                ("INCR", "n"), ("EXPIRE", "k", "10")):
        with pytest.raises(redis.exceptions.ReadOnlyError) as e:
            r.execute_command(*cmd)
        assert err(e) == "You can't write against a read only replica."
    assert r.get("k") == "v"
    assert r.lrange("l", 0, -1) == ["1", "2"]
    assert r.dbsize() == 2
    # In MULTI the refused write aborts the transaction.
    with pytest.raises(redis.exceptions.ReadOnlyError):
        with r.pipeline(transaction=True) as p:
            p.get("k")
            p.set("k", "y")
            p.execute()
    assert r.get("k") == "v"
    # Scripts: a write by redis.call fails; a script with a shebang and no no-writes flag is
    # refused before it runs; reads are fine.
    with pytest.raises(redis.exceptions.ReadOnlyError) as e:
        r.eval("return redis.call('set', 'k', 'x')", 0)
    assert err(e).startswith("You can't write against a read only replica. script: ")
    assert (r.eval("return redis.pcall('set', 'k', 'x')['err']", 0) ==
            "READONLY You can't write against a read only replica.")
    with pytest.raises(redis.exceptions.ReadOnlyError) as e:
        r.eval("#!lua\nreturn redis.call('get', 'k')", 0)
    assert err(e) == "You can't write against a read only replica."
    assert r.eval("#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0) == "v"
    assert r.eval("return redis.call('get', 'k')", 0) == "v"
    assert r.get("k") == "v"
    # replica-read-only no: the replica takes writes (the master's stream may overwrite them).
    assert r.config_set("replica-read-only", "no")
    assert info(r, "slave_read_only") == 0
    assert r.set("local", "1")
    assert r.get("local") == "1"
    assert r.config_set("replica-read-only", "yes")
    with pytest.raises(redis.exceptions.ReadOnlyError):
        r.set("local", "2")


def test_getack_and_wait_count_the_replica(spawn_server):
    master = spawn_master(spawn_server)
    replica = spawn_server()
    m = client(master)
    r = follow(replica, master)
    for i in range(100):
        m.set(f"k{i}", i)
    # WAIT sends REPLCONF GETACK *; the replica's ACK must carry the exact offset.
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert r.get("k99") == "99"
    m.execute_command("PING")  # PINGs are part of the stream and counted
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert wait_until(lambda: caught_up(m, r), 5)


def kill_master_link_and_wait(m, r, kill):
    before = m.info("stats")["sync_partial_ok"]
    kill()
    assert wait_until(lambda: m.info("stats")["sync_partial_ok"] == before + 1, SYNC_TIMEOUT_S)
    assert wait_until(lambda: info(r, "master_link_status") == "up", SYNC_TIMEOUT_S)


def test_partial_resync_after_the_link_is_cut(spawn_server):
    master = spawn_master(spawn_server)
    replica = spawn_server()
    m = client(master)
    m.set("before", 1)
    r = follow(replica, master)
    assert wait_until(lambda: caught_up(m, r), SYNC_TIMEOUT_S)
    # Cut from the replica's side, then write while it reconnects.
    kill_master_link_and_wait(m, r, lambda: r.client_kill_filter(_type="master"))
    m.set("between", 2)
    # Cut from the master's side.
    kill_master_link_and_wait(m, r, lambda: m.client_kill_filter(_type="slave"))
    m.set("after", 3)
    assert wait_until(lambda: caught_up(m, r), SYNC_TIMEOUT_S)
    assert [r.get(k) for k in ("before", "between", "after")] == ["1", "2", "3"]
    assert m.info("stats")["sync_full"] == 1
    assert info(r, "master_replid") == info(m, "master_replid")


def test_continue_with_a_new_replid_after_the_master_is_promoted(spawn_server):
    # top -> middle (redis-server) -> the replica under test; then middle is promoted.
    top = spawn_master(spawn_server)
    middle = spawn_master(spawn_server)
    t, mid = client(top), client(middle)
    t.set("k", "v")
    follow(middle, top)
    replica = spawn_server()
    r = follow(replica, middle)
    assert wait_until(lambda: caught_up(mid, r) and r.get("k") == "v", SYNC_TIMEOUT_S)
    old_id = info(mid, "master_replid")
    assert info(r, "master_replid") == old_id
    partial_before = mid.info("stats")["sync_partial_ok"]
    assert mid.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    new_id = info(mid, "master_replid")
    assert new_id != old_id
    # The replica reconnects with the old id; the promoted master continues it under the new one.
    assert wait_until(lambda: info(r, "master_replid") == new_id and link_up(r), SYNC_TIMEOUT_S)
    assert mid.info("stats")["sync_partial_ok"] == partial_before + 1
    assert info(r, "master_replid2") == old_id
    assert info(r, "second_repl_offset") == info(mid, "second_repl_offset")
    mid.set("after-promotion", "1")
    assert wait_until(lambda: r.get("after-promotion") == "1", SYNC_TIMEOUT_S)
    assert r.get("k") == "v"


def test_replicaof_no_one_promotes_and_keeps_the_data(spawn_server):
    master, replica, m, r = synced_pair(spawn_server)
    old_id = info(r, "master_replid")
    offset = info(r, "master_repl_offset")
    assert r.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    i = r.info("replication")
    assert i["role"] == "master"
    assert i["master_replid2"] == old_id
    assert i["master_replid"] != old_id
    assert i["second_repl_offset"] == offset + 1
    assert i["master_repl_offset"] == offset
    assert r.get("k") == "v"
    assert r.set("k", "mine")
    assert r.get("k") == "mine"
    assert r.execute_command("ROLE")[0] == "master"
    m.set("k", "master-again")  # no longer followed
    time.sleep(0.2)
    assert r.get("k") == "mine"


# --------------------------------------------------------------------------- broken syncs


class FakeMaster:
    """A socket server that speaks the master side of the handshake and answers each PSYNC with
    "+FULLRESYNC <id> 0" and the next of `payloads`. After any payload but the last it closes the
    connection; after the last it keeps the link open (a synced replica)."""

    def __init__(self, payloads):
        self.payloads = list(payloads)
        self.psyncs = []
        self.paused = threading.Event()  # set while a payload's sending waits for resume
        self.resume = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = False
        self.conns = []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            conn.settimeout(0.2)
            try:
                self.serve(conn)
            except OSError:
                pass
            conn.close()

    def serve(self, conn):
        buf = b""
        while not self.stop:
            parsed = self.parse(buf)
            if parsed is None:
                try:
                    data = conn.recv(4096)
                except socket.timeout:
                    continue
                if not data:
                    return
                buf += data
                continue
            cmd, buf = parsed
            name = cmd[0].upper()
            if name == b"PING":
                conn.sendall(b"+PONG\r\n")
            elif name == b"REPLCONF" and cmd[1].lower() != b"ack":
                conn.sendall(b"+OK\r\n")
            elif name in (b"PSYNC", b"SYNC"):
                self.psyncs.append(cmd)
                payload = self.payloads.pop(0) if self.payloads else b""
                conn.sendall(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n")
                # A list of parts is sent with a pause after each part but the last.
                parts = payload if isinstance(payload, list) else [payload]
                for i, part in enumerate(parts):
                    conn.sendall(part)
                    if i + 1 < len(parts):
                        self.paused.set()
                        self.resume.wait(10)
                if self.payloads:
                    return  # not the last: cut the link

    @staticmethod
    def parse(buf):
        """(args, rest) of the first whole RESP array in buf, or None. Blank lines before it
        (a replica's keep-alive newlines) are skipped."""
        buf = buf.lstrip(b"\r\n")
        if b"\r\n" not in buf:
            return None
        pos = buf.index(b"\r\n")
        n = int(buf[1:pos])
        pos += 2
        args = []
        for _ in range(n):
            end = buf.find(b"\r\n", pos)
            if end < 0:
                return None
            ln = int(buf[pos + 1:end])
            if len(buf) < end + 2 + ln + 2:
                return None
            args.append(buf[end + 2:end + 2 + ln])
            pos = end + 2 + ln + 2
        return args, buf[pos:]

    def close(self):
        self.stop = True
        self.resume.set()
        self.thread.join(timeout=5)
        for c in self.conns:
            c.close()
        self.sock.close()


def saved_rdb(spawn_server, tmp_path):
    """A real dump.rdb of redis-server 7.0 holding a few keys."""
    src = spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--dir",
                             str(tmp_path), "--dbfilename", "seed.rdb", "--bind", "127.0.0.1"])
    c = client(src)
    c.set("seed", "value")
    c.rpush("seed-list", *range(100))
    c.save()
    return (tmp_path / "seed.rdb").read_bytes()


def bulk(rdb):
    return b"$%d\r\n" % len(rdb) + rdb


def resync_after(spawn_server, bad_payload, rdb):
    """A replica of a fake master whose first sync sends bad_payload and the second a good
    one: the replica must sync again and load the second. Returns the replica."""
    fake = FakeMaster([bad_payload, bulk(rdb)])
    try:
        replica = spawn_server()
        r = client(replica)
        assert r.execute_command("REPLICAOF", "127.0.0.1", fake.port) == "OK"
        assert wait_until(lambda: len(fake.psyncs) >= 2 and link_up(r), SYNC_TIMEOUT_S)
        assert r.get("seed") == "value"
        assert r.llen("seed-list") == 100
        r.execute_command("REPLICAOF", "NO", "ONE")
        return replica
    finally:
        fake.close()


def test_truncated_full_sync_is_retried(spawn_server, tmp_path):
    rdb = saved_rdb(spawn_server, tmp_path)
    resync_after(spawn_server, b"$%d\r\n" % len(rdb) + rdb[: len(rdb) // 2], rdb)


@pytest.mark.lavik_only  # redis-server exits on a corrupt RDB from its master
@pytest.mark.parametrize("where", ["crc", "object"])
def test_corrupt_full_sync_is_refused_and_retried(spawn_server, tmp_path, where):
    rdb = saved_rdb(spawn_server, tmp_path)
    bad = bytearray(rdb)
    if where == "crc":
        bad[-3] ^= 0xFF  # the CRC-64 trailer no longer matches
    else:
        at = bytes(bad).index(b"seed-list") + len("seed-list")
        bad[at] = 0xEE  # the list's encoding header
    replica = resync_after(spawn_server, bulk(bytes(bad)), rdb)
    # The refused payload left no file behind; the good one stays as dir/dbfilename.
    assert not list(replica.workdir.glob("temp-*.rdb"))
    assert (replica.workdir / "dump.rdb").read_bytes() == rdb
    log = (replica.workdir / "logs" / "lavik.log").read_text()
    assert re.search(r"Failed trying to load the MASTER synchronization DB from disk: "
                     r".* at offset \d+",
                     log), log


def paused_at(rdb, at, eof_mark=None):
    """A fake master whose one sync sends `rdb` as $<len> (or, with eof_mark, as
    $EOF:<mark> ... <mark>), pausing after byte `at`."""
    if eof_mark is None:
        return FakeMaster([[b"$%d\r\n" % len(rdb) + rdb[:at], rdb[at:]]])
    return FakeMaster([[b"$EOF:" + eof_mark + b"\r\n" + rdb[:at], rdb[at:] + eof_mark]])


@pytest.mark.parametrize("form", ["bulk", "eof"])
def test_a_full_sync_is_received_on_disk_while_the_old_data_are_served(spawn_server, tmp_path,
                                                                       form):
    """repl-diskless-load disabled (the default): the payload goes to a file first, INFO shows
    its progress, the old data answer until it is whole (no `loading`), and it stays as
    dir/dbfilename. The $EOF form has no size: Redis shows 0 bytes in all, and so a negative
    number left."""
    rdb = saved_rdb(spawn_server, tmp_path)
    half = len(rdb) // 2
    fake = paused_at(rdb, half, eof_mark=b"m" * 40 if form == "eof" else None)
    try:
        r = client(spawn_server())
        assert r.config_get("repl-diskless-load") == {"repl-diskless-load": "disabled"}
        r.set("old", "data")
        assert r.execute_command("REPLICAOF", "127.0.0.1", fake.port) == "OK"
        assert fake.paused.wait(SYNC_TIMEOUT_S)
        assert wait_until(lambda: r.info("replication").get("master_sync_read_bytes") == half, 5)
        i = r.info("replication")
        total = len(rdb) if form == "bulk" else 0
        assert i["master_sync_in_progress"] == 1
        assert i["master_sync_total_bytes"] == total
        assert i["master_sync_left_bytes"] == total - half
        assert i["master_sync_perc"] == pytest.approx(half * 100 / total if total else 0, abs=0.006)
        assert r.info("persistence")["loading"] == 0
        assert r.get("old") == "data"
        fake.resume.set()
        assert wait_until(lambda: r.info("replication")["master_link_status"] == "up",
                          SYNC_TIMEOUT_S)
        assert r.get("seed") == "value"
        assert r.get("old") is None
        saved = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
        with open(saved, "rb") as f:
            assert f.read() == rdb
    finally:
        fake.close()


# redis-server parses the socket inside its event loop: while the payload pauses it answers
# nothing at all (a -LOADING comes only between pieces of progress).
@pytest.mark.lavik_only
def test_on_empty_db_loads_an_empty_replica_from_the_socket(spawn_server, tmp_path):
    """repl-diskless-load on-empty-db with no key: the RDB is parsed as it arrives, and commands
    without the `loading` flag get -LOADING meanwhile."""
    rdb = saved_rdb(spawn_server, tmp_path)
    half = len(rdb) // 2
    fake = paused_at(rdb, half)
    try:
        r = client(spawn_server())
        assert r.config_set("repl-diskless-load", "on-empty-db")
        assert r.execute_command("REPLICAOF", "127.0.0.1", fake.port) == "OK"
        assert fake.paused.wait(SYNC_TIMEOUT_S)
        assert wait_until(lambda: r.info("replication")["master_sync_in_progress"] == 1, 5)
        assert wait_until(lambda: not quiet(lambda: r.get("seed") or True)(), 5)
        with pytest.raises(redis.exceptions.BusyLoadingError) as e:
            r.get("seed")
        assert err(e) == "Redis is loading the dataset in memory"
        assert r.info("replication")["role"] == "slave"  # a command with the `loading` flag
        with pytest.raises(redis.exceptions.BusyLoadingError):
            r.ping()  # as Redis 7.0: PING has no `loading` flag
        p = r.info("persistence")
        assert p["loading"] == 1
        assert p["loading_total_bytes"] == len(rdb)
        assert 0 <= p["loading_loaded_bytes"] <= half  # what the keys decoded so far hold
        assert p["loading_loaded_perc"] == pytest.approx(
            p["loading_loaded_bytes"] * 100 / len(rdb), abs=0.006)
        assert p["loading_start_time"] <= time.time() + 1
        assert p["loading_eta_seconds"] >= 0
        fake.resume.set()
        assert wait_until(lambda: r.info("replication")["master_link_status"] == "up",
                          SYNC_TIMEOUT_S)
        assert r.info("persistence")["loading"] == 0
        assert "loading_total_bytes" not in r.info("persistence")
        assert r.get("seed") == "value"
        assert r.llen("seed-list") == 100
    finally:
        fake.close()


@pytest.mark.parametrize("mode", ["disabled", "on-empty-db", "swapdb"])
def test_a_failed_transfer_leaves_the_old_data(spawn_server, tmp_path, mode):
    """The first sync's payload is cut half-way; until the next sync's payload comes, the
    replica still holds what it had (on-empty-db: a replica with keys goes through disk;
    swapdb: Redis restores its backup, Lavik never dropped the data)."""
    rdb = saved_rdb(spawn_server, tmp_path)
    fake = FakeMaster([bulk(rdb)[:len(rdb) // 2], [b"", bulk(rdb)]])
    try:
        replica = spawn_server()
        r = client(replica)
        assert r.config_set("repl-diskless-load", mode)
        r.set("old", "data")
        assert r.execute_command("REPLICAOF", "127.0.0.1", fake.port) == "OK"
        assert fake.paused.wait(SYNC_TIMEOUT_S)  # the second sync's +FULLRESYNC is out
        assert len(fake.psyncs) == 2
        assert wait_until(quiet(lambda: r.get("old") == "data"), 5)
        assert r.get("seed") is None
        fake.resume.set()
        assert wait_until(lambda: link_up(r), SYNC_TIMEOUT_S)
        assert r.get("seed") == "value"
        assert r.get("old") is None
        # The cut transfer's temp file is gone.
        assert not glob.glob(os.path.join(r.config_get("dir")["dir"], "temp-*.rdb"))
    finally:
        fake.close()


def test_replicaof_another_master_syncs_from_scratch(spawn_server):
    master, replica, m, r = synced_pair(spawn_server)
    other = spawn_master(spawn_server)
    o = client(other)
    o.set("other-key", "x")
    assert r.execute_command("REPLICAOF", "127.0.0.1", other.port) == "OK"
    assert wait_until(quiet(lambda: r.get("other-key") == "x"), SYNC_TIMEOUT_S)
    assert r.get("k") is None  # the first master's data went with the full sync
    assert wait_until(lambda: caught_up(o, r), SYNC_TIMEOUT_S)
    assert info(r, "master_replid") == info(o, "master_replid")
    assert info(r, "master_port") == other.port
    m.set("k", "ignored now")
    o.set("k", "from other")
    assert wait_until(lambda: r.get("k") == "from other", SYNC_TIMEOUT_S)


@pytest.mark.lavik_only  # --cache-mb is lavik's
def test_dataset_larger_than_the_value_cache(spawn_server):
    master = spawn_master(spawn_server)
    m = client(master)
    value = "v" * 4000
    with m.pipeline(transaction=False) as p:
        for i in range(2500):  # ~10 MB of values against a 2 MB cache
            p.set(f"key:{i}", f"{i}:{value}")
        p.rpush("biglist", *[value] * 300)
        p.execute()
    replica = spawn_server(extra_args=["--cache-mb", "2"])
    r = follow(replica, master)
    assert r.dbsize() == 2501
    for i in (0, 777, 2499):
        assert r.get(f"key:{i}") == f"{i}:{value}"
    assert r.llen("biglist") == 300
    assert r.lindex("biglist", 299) == value
    m.set("key:5", "changed")
    assert wait_until(lambda: r.get("key:5") == "changed", SYNC_TIMEOUT_S)


# --------------------------------------------------------------------------- replica settings


def test_masterauth_for_a_master_with_requirepass(spawn_server):
    master = spawn_master(spawn_server, extra=["--requirepass", "s3cret"])
    m = redis.Redis(host="127.0.0.1", port=master.port, password="s3cret", decode_responses=True)
    m.set("k", "v")
    replica = spawn_server()
    r = client(replica)
    # Without the password the master refuses PSYNC: the link stays down and is retried.
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    time.sleep(1.5)
    assert info(r, "master_link_status") == "down"
    assert r.config_set("masterauth", "s3cret") is True
    assert r.config_get("masterauth") == {"masterauth": "s3cret"}
    assert wait_until(lambda: link_up(r), SYNC_TIMEOUT_S)
    assert r.get("k") == "v"
    m.set("k", "v2")
    assert wait_until(lambda: r.get("k") == "v2", SYNC_TIMEOUT_S)


def test_masteruser_authenticates_as_an_acl_user(spawn_server):
    master = spawn_master(spawn_server, extra=["--requirepass", "admin"])
    m = redis.Redis(host="127.0.0.1", port=master.port, password="admin", decode_responses=True)
    m.acl_setuser("repl", enabled=True, passwords=["+replpw"],
                  commands=["+psync", "+replconf", "+ping"])
    m.set("k", "v")
    replica = spawn_server()
    r = client(replica)
    assert r.config_set("masteruser", "repl") is True
    assert r.config_set("masterauth", "wrong") is True
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    time.sleep(1.5)
    assert info(r, "master_link_status") == "down"
    assert any(e["reason"] == "auth" and e["username"] == "repl" for e in m.acl_log())
    assert r.config_set("masterauth", "replpw") is True
    assert r.config_get("masteruser") == {"masteruser": "repl"}
    assert wait_until(lambda: link_up(r), SYNC_TIMEOUT_S)
    assert r.get("k") == "v"
    (line,) = [c for c in m.client_list() if "S" in c["flags"]]
    assert line["user"] == "repl"


def test_replica_announce_ip_and_port(spawn_server):
    master = spawn_master(spawn_server)
    m = client(master)
    replica = spawn_server()
    r = client(replica)
    assert r.config_set("replica-announce-ip", "10.1.2.3") is True
    assert r.config_set("replica-announce-port", "4567") is True
    follow(replica, master)
    slave0 = m.info("replication")["slave0"]
    assert (slave0["ip"], slave0["port"]) == ("10.1.2.3", 4567)
    assert r.config_get("replica-announce-*") == {"replica-announce-ip": "10.1.2.3",
                                                  "replica-announce-port": "4567"}


def test_replica_priority_in_info(spawn_server):
    master = spawn_master(spawn_server)
    replica = spawn_server(extra_args=["--replica-priority", "17"])
    r = follow(replica, master)
    assert info(r, "slave_priority") == 17
    assert r.config_set("slave-priority", "0") is True
    assert info(r, "slave_priority") == 0
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("replica-priority", "-1")
    assert err(e) == ("CONFIG SET failed (possibly related to argument 'replica-priority') - "
                      "argument must be between 0 and 2147483647 inclusive")


MASTERDOWN = RespError("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set "
                       "to 'no'.")


def test_replica_serve_stale_data_no(spawn_server):
    master = spawn_master(spawn_server)
    m = client(master)
    m.set("k", "v")
    replica = spawn_server()
    r = follow(replica, master)
    assert r.config_get("replica-serve-stale-data") == {"replica-serve-stale-data": "yes"}
    assert r.config_set("replica-serve-stale-data", "no") is True
    assert r.get("k") == "v"  # the link is up: served
    master.kill()
    assert wait_until(lambda: info(r, "master_link_status") == "down", SYNC_TIMEOUT_S)
    raw = replica.raw()
    for cmd in (("GET", "k"), ("PING",), ("DBSIZE",)):
        assert raw.cmd(*cmd) == MASTERDOWN, cmd
    # The read-only check comes first.
    assert raw.cmd("SET", "k", "x") == RespError("READONLY You can't write against a read only "
                                                 "replica.")
    # Commands flagged `stale` still run: INFO, CONFIG, REPLICAOF, ROLE...
    assert raw.cmd("ROLE")[0] == b"slave"
    assert raw.cmd("MULTI") == "OK"
    assert raw.cmd("GET", "k") == MASTERDOWN
    assert raw.cmd("EXEC") == RespError(
        "EXECABORT Transaction discarded because of previous errors.")
    # Stale data served again once allowed.
    assert raw.cmd("CONFIG", "SET", "replica-serve-stale-data", "yes") == "OK"
    assert raw.cmd("GET", "k") == b"v"
    assert raw.cmd("CONFIG", "SET", "slave-serve-stale-data", "no") == "OK"
    assert raw.cmd("GET", "k") == MASTERDOWN
    # A master serves everything whatever the setting says.
    assert raw.cmd("REPLICAOF", "NO", "ONE") == "OK"
    assert raw.cmd("GET", "k") == b"v"
    raw.close()


def test_config_get_replicaof_follows_the_master(spawn_server):
    master = spawn_master(spawn_server)
    replica = spawn_server()
    r = client(replica)
    assert r.config_get("replicaof") == {"replicaof": ""}
    follow(replica, master)
    assert r.config_get("replicaof") == {"replicaof": f"127.0.0.1 {master.port}"}
    assert r.config_get("slaveof") == {"slaveof": f"127.0.0.1 {master.port}"}
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("replicaof", f"127.0.0.1 {master.port}")
    assert err(e) == ("CONFIG SET failed (possibly related to argument 'replicaof') - "
                      "can't set immutable config")
    assert r.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    assert r.config_get("replicaof") == {"replicaof": ""}


@pytest.mark.parametrize("name", ["dir", "dbfilename"])
def test_dir_and_dbfilename_are_protected_configs(spawn_server, tmp_path, name):
    """As redis-server 7.0 with enable-protected-configs no (its default)."""
    s = spawn_server()
    c = client(s)
    before = c.config_get(name)[name]
    with pytest.raises(redis.ResponseError) as e:
        c.config_set(name, str(tmp_path) if name == "dir" else "other.rdb")
    assert err(e) == (f"CONFIG SET failed (possibly related to argument '{name}') - "
                      "can't set protected config")
    assert c.config_get(name)[name] == before


def test_dir_and_dbfilename_with_protected_configs_enabled(spawn_server, tmp_path):
    s = spawn_server(extra_args=["--enable-protected-configs", "yes"])
    c = client(s)
    sub = tmp_path / "sub"
    sub.mkdir()
    assert c.config_set("dir", f"{sub}/../sub") is True
    assert c.config_get("dir")["dir"] == os.path.realpath(sub)
    (tmp_path / "file").write_text("x")
    for bad, why in ((tmp_path / "missing", "No such file or directory"),
                     (tmp_path / "file", "Not a directory")):
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("dir", str(bad))
        assert err(e) == f"CONFIG SET failed (possibly related to argument 'dir') - {why}"
    assert c.config_get("dir")["dir"] == os.path.realpath(sub)
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("dbfilename", "a/b.rdb")
    assert err(e) == ("CONFIG SET failed (possibly related to argument 'dbfilename') - "
                      "dbfilename can't be a path, just a filename")
    assert c.config_set("dbfilename", "other.rdb") is True
    c.set("k", "v")
    assert c.save() is True
    assert (sub / "other.rdb").exists()


def start_restartable_replica(spawn_server, master, target, workdir=None):
    """A replica configured with replicaof (Redis 7.0 restores repl-id/offset only on one),
    started (again, on `workdir`) and linked. redis-server keeps them in the RDB it saves at
    shutdown, so it needs a save point; Lavik keeps them next to its data file."""
    args = ["--replicaof", f"127.0.0.1 {master.port}"]
    args += ["--save", "3600 1"] if target == "redis" else []
    replica = spawn_server(extra_args=args, workdir=workdir)
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    if target == "lavik":  # as redis-server's RDB of the sync: a first consistency point
        assert wait_until(lambda: int(r.info("storage")["replica_cut_offset"]) >= 0,
                          SYNC_TIMEOUT_S)
    return replica, r


def synced_restartable_pair(spawn_server, target, keys):
    """A redis-server master with `keys` keys, and a restartable replica that caught up."""
    master = spawn_master(spawn_server)
    m = client(master)
    for i in range(keys):
        m.set(f"before:{i}", i)
    replica, r = start_restartable_replica(spawn_server, master, target)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    return master, m, replica, r


def test_restarted_replica_continues_with_a_partial_resync(spawn_server, target):
    master, m, replica, r = synced_restartable_pair(spawn_server, target, 200)
    full = m.info("stats")["sync_full"]
    partial = m.info("stats")["sync_partial_ok"]
    # A light write load in db 5 only, through the restart: the stream's SELECT 5 came before
    # the restart, so the restarted replica must continue in db 5 without one.
    stop = threading.Event()
    writes = [0]

    def writer():
        c = client(master, db=5)
        while not stop.is_set():
            c.set(f"w:{writes[0]}", writes[0])
            c.incr("counter")
            writes[0] += 1
            time.sleep(0.003)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        assert wait_until(lambda: writes[0] > 50, SYNC_TIMEOUT_S)
        replica.terminate()  # SIGTERM: a clean shutdown
        time.sleep(0.3)  # the master keeps writing meanwhile (into its backlog)
        replica, r = start_restartable_replica(spawn_server, master, target, replica.workdir)
        time.sleep(0.3)
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_partial_ok"] == partial + 1, stats
    assert stats["sync_full"] == full, "the restarted replica was sent a full sync"
    assert info(r, "master_replid") == info(m, "master_replid")
    assert snapshot(r, 0) == snapshot(m, 0)
    assert snapshot(r, 5) == snapshot(m, 5)
    assert client(replica, db=5).get("counter") == str(writes[0])


def mixed_writes(master, stop, writes, errors):
    """A write load until `stop` is set, in databases 0 and 5 (the stream's SELECT moves between
    them); nearly every write depends on what came before it, so one applied twice or lost shows
    in the data. writes[0] counts the rounds made."""
    try:
        c0, c5 = client(master), client(master, db=5)
        while not stop.is_set():
            n = writes[0]
            p = (c5 if n % 3 == 0 else c0).pipeline(transaction=False)
            p.incr("counter").append("log", f"{n},").rpush("list", n)
            p.hincrby("h", f"f{n % 40}", n).zincrby("z", 1, f"m{n % 30}")
            p.set(f"w:{n % 700}", n)
            if n % 50 == 0:
                p.delete(f"w:{(n * 7) % 700}")
            p.execute()
            writes[0] = n + 1
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors.append(e)


def test_replica_killed_under_write_load_continues_with_a_partial_resync(spawn_server, target):
    """kill -9 of a replica while its master writes: restarted (replicaof configured) it continues
    the master's stream with a partial resync and applies every write exactly once. A
    redis-server replica continues from the RDB of its last sync; Lavik from the last consistency
    point its data file recorded (doc/replication.md "A replica killed -9 continues")."""
    master = spawn_master(spawn_server, extra=["--repl-backlog-size", "64mb"])
    m = client(master)
    for i in range(200):
        m.set(f"before:{i}", i)
    replica, r = start_restartable_replica(spawn_server, master, target)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    full = m.info("stats")["sync_full"]
    partial = m.info("stats")["sync_partial_ok"]
    stop, writes, errors = threading.Event(), [0], []
    t = threading.Thread(target=mixed_writes, args=(master, stop, writes, errors), daemon=True)
    t.start()
    try:
        assert wait_until(lambda: writes[0] >= 150, SYNC_TIMEOUT_S)
        replica.kill()  # SIGKILL, in the middle of the load
        killed_at = writes[0]
        assert wait_until(lambda: writes[0] >= killed_at + 100, SYNC_TIMEOUT_S)
        replica, r = start_restartable_replica(spawn_server, master, target, replica.workdir)
        restarted_at = writes[0]
        assert wait_until(lambda: writes[0] >= restarted_at + 150, SYNC_TIMEOUT_S)
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive() and not errors, errors
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_full"] == full, "the restarted replica was sent a full sync"
    assert stats["sync_partial_ok"] == partial + 1, stats
    assert snapshot(r, 0) == snapshot(m, 0)
    assert snapshot(r, 5) == snapshot(m, 5)
    assert int(r.get("counter")) + int(client(replica, db=5).get("counter")) == writes[0]


def cut_reached(m, r):
    """Lavik: the replica's data file recorded a consistency point at the master's offset."""
    at = info(m, "master_repl_offset")
    return wait_until(quiet(lambda: int(r.info("storage")["replica_cut_offset"]) >= at),
                      SYNC_TIMEOUT_S)


@pytest.mark.lavik_only  # the data file's consistency point (redis-server reloads its RDB)
def test_replica_killed_twice_and_after_a_flushall_still_continues(spawn_server, target):
    """Killed again right after it came back, and after a FLUSHALL and SWAPDB in the stream
    (which void the consistency point until the next one), the replica still continues with
    a partial resync and the same data."""
    master = spawn_master(spawn_server, extra=["--repl-backlog-size", "64mb"])
    m = client(master)
    replica, r = start_restartable_replica(spawn_server, master, target)
    for i in range(300):
        m.incr("counter")
        m.rpush("list", i)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    assert cut_reached(m, r)
    replica.kill()
    m.incr("counter")
    replica, r = start_restartable_replica(spawn_server, master, target, replica.workdir)
    replica.kill()  # at once: maybe before a new consistency point, maybe after
    m.incr("counter")
    replica, r = start_restartable_replica(spawn_server, master, target, replica.workdir)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    assert r.get("counter") == "302" and r.llen("list") == 300
    m.flushall()
    m.set("after-flush", 1)
    client(master, db=1).set("in-one", 1)
    m.swapdb(0, 1)
    m.incr("counter")
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    assert cut_reached(m, r)  # the FLUSHALL and SWAPDB voided the one before
    replica.kill()
    m.incr("counter")
    replica, r = start_restartable_replica(spawn_server, master, target, replica.workdir)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_full"] == 1, "a restarted replica was sent a full sync"
    assert stats["sync_partial_ok"] == 3
    for db in (0, 1):
        assert snapshot(r, db) == snapshot(m, db)
    assert r.get("counter") == "2" and r.get("in-one") == "1"


def test_partial_resync_continues_in_the_streams_database(spawn_server):
    """A master sends no SELECT after +CONTINUE: the new link applies in the database the
    stream had selected before the cut."""
    master = spawn_master(spawn_server)
    replica = spawn_server()
    m5 = client(master, db=5)
    m5.set("before", 1)
    r = follow(replica, master)
    m5.set("mid", 3)  # the stream's SELECT 5 (a full sync resets the master's selected db)
    assert wait_until(lambda: caught_up(client(master), r), SYNC_TIMEOUT_S)
    kill_master_link_and_wait(client(master), r, lambda: r.client_kill_filter(_type="master"))
    m5.set("after", 2)
    assert wait_until(lambda: caught_up(client(master), r), SYNC_TIMEOUT_S)
    assert client(replica, db=5).mget("before", "mid", "after") == ["1", "3", "2"]
    assert client(replica, db=0).get("after") is None


def test_a_replica_over_maxmemory_applies_every_write_of_its_master(spawn_server):
    """replica-ignore-maxmemory yes (the default): a replica over its maxmemory still applies
    everything its master sends (a refused write would be lost on it for good)."""
    master = spawn_master(spawn_server)
    m = client(master)
    replica = spawn_server(extra_args=["--maxmemory", "1mb"])
    r = follow(replica, master)
    pipe = m.pipeline(transaction=False)
    for i in range(3000):
        pipe.set(f"big:{i}", "x" * 1024)
    pipe.execute()
    m.set("last", "1")
    assert wait_until(quiet(lambda: r.get("last") == "1"), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    assert r.dbsize() == m.dbsize() == 3001


def test_a_busy_script_on_the_replica_delays_the_stream_and_loses_nothing(spawn_server):
    """A script past busy-reply-threshold on the replica: clients get -BUSY, but the master's
    stream is held until the script ends (as Redis holds its master's input), never refused."""
    master = spawn_master(spawn_server)
    m = client(master)
    replica = spawn_server()
    r = follow(replica, master)
    assert r.config_set("busy-reply-threshold", 100) is True
    busy = "local s = tonumber(redis.call('TIME')[1]) " \
           "while tonumber(redis.call('TIME')[1]) - s < 2 do end return 1"
    done = []
    t = threading.Thread(target=lambda: done.append(client(replica).eval(busy, 0)))
    t.start()
    try:
        assert wait_until(lambda: busy_now(replica), 5)
        for i in range(100):
            m.set(f"during:{i}", i)
    finally:
        t.join(10)
    assert done == [1]
    m.set("last", "1")
    assert wait_until(quiet(lambda: r.get("last") == "1"), SYNC_TIMEOUT_S)
    assert [r.get(f"during:{i}") for i in range(100)] == [str(i) for i in range(100)]


def busy_now(server):
    try:
        client(server).ping()
        return False
    except redis.exceptions.BusyLoadingError:
        return False
    except redis.ResponseError as e:
        return str(e).startswith("BUSY")


def test_acl_rules_on_the_replica_never_refuse_its_masters_stream(spawn_server):
    """The master's link answers to no ACL user (as Redis's master client): the replica's
    default user losing SET, INCR and EVAL does not stop those writes from applying."""
    master = spawn_master(spawn_server)
    m = client(master)
    replica = spawn_server()
    r = follow(replica, master)
    assert r.execute_command("ACL", "SETUSER", "default", "-set", "-incr", "-eval") == "OK"
    with pytest.raises(redis.exceptions.NoPermissionError):
        r.set("mine", 1)
    m.set("k", "v")
    m.incr("n")
    m.eval("redis.call('SET', 'from-script', 'yes')", 0)
    m.set("last", "1")
    assert wait_until(quiet(lambda: r.get("last") == "1"), SYNC_TIMEOUT_S)
    assert (r.get("k"), r.get("n"), r.get("from-script")) == ("v", "1", "yes")


def test_timeout_never_closes_the_link_to_the_master(spawn_server):
    """timeout on the replica idle-closes clients, never its link to its master (quiet between
    the master's pings), as Redis: the master keeps the same replica connection."""
    master = spawn_master(spawn_server, extra=["--repl-ping-replica-period", "10"])
    m = client(master)
    replica = spawn_server()
    r = follow(replica, master)
    assert r.config_set("timeout", 1) is True
    (before,) = m.client_list(_type="replica")
    time.sleep(3.5)
    (after,) = m.client_list(_type="replica")
    assert after["id"] == before["id"]
    assert link_up(r)
    m.set("after-idle", 1)
    assert wait_until(quiet(lambda: r.get("after-idle") == "1"), SYNC_TIMEOUT_S)


def test_maxclients_does_not_count_against_the_link_to_the_master(spawn_server):
    """maxclients bounds accepted clients: a replica whose one allowed client is in use still
    opens its link to the master (Redis checks maxclients when it accepts)."""
    master = spawn_master(spawn_server)
    m = client(master)
    m.set("k", "v")
    replica = spawn_server(extra_args=["--maxclients", "1"])
    r = follow(replica, master)  # r is the replica's one client
    m.set("after", "1")
    assert wait_until(quiet(lambda: r.get("after") == "1"), SYNC_TIMEOUT_S)
    assert r.get("k") == "v"
