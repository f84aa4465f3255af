"""dump.rdb's replication fields (doc/rdb.md, "Replication fields"; doc/replication.md).

Redis 7.0 writes aux `repl-stream-db`, `repl-id`, `repl-offset` into the RDB of a master that
has a backlog and of a replica following a history, and at start-up a replica continues that
history (PSYNC -> +CONTINUE) while a master keeps it as master_replid2, so its former replicas
continue. The server under test is checked against the same expectations as redis-server 7.0.15
(LAVIK_TEST_TARGET=redis); the peers are Debian's redis-server. Every wait is bounded.
"""
import shutil
import struct
import threading
import subprocess
import time

import pytest
import redis

from conftest import TARGET, wait_until
from test_replication import caught_up, client, info, link_up, quiet

SYNC_TIMEOUT_S = 20.0


# ---- a tiny reader of an RDB's AUX fields ----------------------------------------------------

def _length(buf, i):
    """(value, special, next index): an RDB length, or a special string encoding (special)."""
    b = buf[i]
    kind = b >> 6
    if kind == 0:
        return b & 0x3F, False, i + 1
    if kind == 1:
        return ((b & 0x3F) << 8) | buf[i + 1], False, i + 2
    if b == 0x80:
        return struct.unpack(">I", buf[i + 1:i + 5])[0], False, i + 5
    if b == 0x81:
        return struct.unpack(">Q", buf[i + 1:i + 9])[0], False, i + 9
    return b & 0x3F, True, i + 1


def _lzf(data, out_len):
    out = bytearray()
    i = 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
        else:
            n = ctrl >> 5
            if n == 7:
                n += data[i]
                i += 1
            ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
            i += 1
            for _ in range(n + 2):
                out.append(out[ref])
                ref += 1
    assert len(out) == out_len
    return bytes(out)


def _string(buf, i):
    n, special, i = _length(buf, i)
    if not special:
        return buf[i:i + n], i + n
    if n == 0:
        return str(struct.unpack("<b", buf[i:i + 1])[0]).encode(), i + 1
    if n == 1:
        return str(struct.unpack("<h", buf[i:i + 2])[0]).encode(), i + 2
    if n == 2:
        return str(struct.unpack("<i", buf[i:i + 4])[0]).encode(), i + 4
    assert n == 3, "unknown string encoding"
    clen, _, i = _length(buf, i)
    ulen, _, i = _length(buf, i)
    return _lzf(buf[i:i + clen], ulen), i + clen


def aux_fields(path):
    """The AUX fields at the head of the RDB file, in order, as (name, value) strings."""
    buf = open(path, "rb").read()
    assert buf[:5] == b"REDIS", buf[:9]
    i = 9
    fields = []
    while buf[i] == 0xFA:
        name, i = _string(buf, i + 1)
        value, i = _string(buf, i)
        fields.append((name.decode(), value.decode()))
    return fields


def repl_fields(path):
    return {k: v for k, v in aux_fields(path) if k.startswith("repl-")}


# ---- helpers -----------------------------------------------------------------------------------

def redis_replica(spawn_server, master):
    replica = spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                                 "no", "--bind", "127.0.0.1", "--replicaof", "127.0.0.1",
                                 str(master.port)])
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "the replica did not sync"
    return replica, r


def redis_master(spawn_server):
    master = spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                                "no", "--bind", "127.0.0.1", "--repl-diskless-sync-delay", "0",
                                "--repl-ping-replica-period", "3600"])
    return master, client(master)


def bgsave_done(c):
    before = c.info("persistence")["rdb_saves"]
    assert c.bgsave()
    assert wait_until(lambda: c.info("persistence")["rdb_saves"] > before
                      and c.info("persistence")["rdb_bgsave_in_progress"] == 0, 10)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"


def settle(m, r, token):
    m.set("settle-token", token)
    assert wait_until(quiet(lambda: r.get("settle-token") == token), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)


def restart(spawn_server, server, extra=(), fresh_data=False):
    """The server under test again, on the same directory and port. `fresh_data`: Lavik gets
    an empty data file, so it loads dir/dump.rdb at start-up as redis-server does."""
    if fresh_data and TARGET == "lavik":
        shutil.rmtree(server.workdir / "data", ignore_errors=True)
    return spawn_server(extra_args=list(extra), workdir=server.workdir, port=server.port)


def shutdown_save(c):
    try:
        c.shutdown(save=True)
    except redis.ConnectionError:
        pass


# ---- tests -------------------------------------------------------------------------------------

def test_a_master_without_a_backlog_writes_no_replication_fields(spawn_server):
    master = spawn_server()
    m = client(master)
    m.set("k", "v")
    bgsave_done(m)
    fields = aux_fields(master.workdir / "dump.rdb")
    assert [k for k, _ in fields if k.startswith("repl-")] == [], fields


def test_bgsave_of_a_master_with_a_replica_has_its_replid_and_offset(spawn_server):
    master = spawn_server()
    m = client(master)
    m.config_set("repl-ping-replica-period", 3600)  # no PING moves the offset meanwhile
    replica, r = redis_replica(spawn_server, master)
    for i in range(50):
        m.set(f"k{i}", i)
    c3 = client(master, db=3)
    c3.rpush("list", *range(10))
    settle(c3, client(replica, db=3), "1")  # the last write is in db 3
    before = m.info("replication")
    bgsave_done(m)
    after = m.info("replication")
    assert before["master_repl_offset"] == after["master_repl_offset"]
    path = master.workdir / "dump.rdb"
    names = [k for k, _ in aux_fields(path)]
    # Redis's order: between used-mem and aof-base.
    assert names[names.index("used-mem") + 1:names.index("aof-base")] == [
        "repl-stream-db", "repl-id", "repl-offset"], names
    assert repl_fields(path) == {"repl-stream-db": "3", "repl-id": after["master_replid"],
                                 "repl-offset": str(after["master_repl_offset"])}
    check = subprocess.run(["redis-check-rdb", str(path)], capture_output=True, text=True,
                           timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr


def master_with_a_replica(spawn_server):
    """The server under test with a redis-server replica in sync, keys in db 0 and db 2, and no
    PING moving the offset."""
    master = spawn_server()
    m = client(master)
    m.config_set("repl-ping-replica-period", 3600)
    replica, r = redis_replica(spawn_server, master)
    for i in range(100):
        m.set(f"before:{i}", i)
    client(master, db=2).set("in-db-2", "x")
    settle(m, r, "1")
    return master, m, replica, r


def test_restarted_master_continues_its_replicas_from_dump_rdb(spawn_server):
    master, m, replica, r = master_with_a_replica(spawn_server)
    old = m.info("replication")
    shutdown_save(m)
    master.wait()
    fields = repl_fields(master.workdir / "dump.rdb")
    assert fields["repl-id"] == old["master_replid"]
    # redis-server's SHUTDOWN sends REPLCONF GETACK to its replicas first (37 bytes more).
    saved_at = int(fields["repl-offset"])
    assert saved_at >= old["master_repl_offset"]
    master = restart(spawn_server, master, fresh_data=True)
    m = client(master)
    now = m.info("replication")
    assert now["master_replid"] != old["master_replid"]
    assert now["master_replid2"] == old["master_replid"]
    assert now["second_repl_offset"] == saved_at + 1
    assert now["master_repl_offset"] == saved_at
    assert now["repl_backlog_active"] == 1
    m.set("after", "restart")  # before the replica is back: it must still get it
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: r.get("after") == "restart"), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_partial_ok"] == 1, stats
    assert stats["sync_full"] == 0, "the replica was sent a full sync"
    assert info(r, "master_replid") == now["master_replid"]
    assert r.dbsize() == m.dbsize()
    assert client(replica, db=2).get("in-db-2") == "x"
    settle(m, r, "2")


def restarted_master_continues(spawn_server, stop):
    """A master with a replica, stopped by `stop(client)` and restarted on its own data (Lavik's
    data file; redis-server's dump.rdb): it keeps its history as replid2 and its replica
    continues it (+CONTINUE), writes made before the replica is back included."""
    master, m, replica, r = master_with_a_replica(spawn_server)
    old = m.info("replication")
    stop(m)
    master.wait()
    master = restart(spawn_server, master)
    m = client(master)
    now = m.info("replication")
    assert now["master_replid"] != old["master_replid"]
    assert now["master_replid2"] == old["master_replid"]
    # SHUTDOWN may have sent REPLCONF GETACK first (37 bytes more).
    assert now["master_repl_offset"] >= old["master_repl_offset"]
    assert now["second_repl_offset"] == now["master_repl_offset"] + 1
    assert now["repl_backlog_active"] == 1
    m.set("after", "restart")
    client(master, db=2).set("after-in-db-2", "y")
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: r.get("after") == "restart"), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_partial_ok"] == 1, stats
    assert stats["sync_full"] == 0, "the replica was sent a full sync"
    assert r.dbsize() == m.dbsize()
    assert wait_until(quiet(lambda: client(replica, db=2).get("after-in-db-2") == "y"),
                      SYNC_TIMEOUT_S)
    settle(m, r, "2")


def test_restarted_master_continues_its_replicas_from_its_own_data(spawn_server):
    """SHUTDOWN SAVE, restart on the same data: redis-server from its dump.rdb, Lavik from its
    data file and <data-file>.repl (the dump.rdb is not loaded into a data file with keys)."""
    restarted_master_continues(spawn_server, shutdown_save)


@pytest.mark.lavik_only
def test_restarted_master_continues_after_shutdown_nosave(spawn_server):
    """Lavik's data outlive the process without an RDB, and so does its history: a master
    stopped with SHUTDOWN NOSAVE (or SIGTERM without save points) continues its replicas.
    redis-server has nothing to restart from then (lavik_only)."""
    def nosave(c):
        try:
            c.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
    restarted_master_continues(spawn_server, nosave)


def test_restarted_replica_continues_from_dump_rdb(spawn_server):
    master, m = redis_master(spawn_server)
    for i in range(100):
        m.set(f"before:{i}", i)
    replica = spawn_server(extra_args=["--replicaof", f"127.0.0.1 {master.port}"])
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    m5 = client(master, db=5)
    m5.set("five", "5")  # the stream's database is 5 when the replica stops
    settle(m5, client(replica, db=5), "1")
    partial = m.info("stats")["sync_partial_ok"]
    full = m.info("stats")["sync_full"]
    shutdown_save(r)
    replica.wait()
    fields = repl_fields(replica.workdir / "dump.rdb")
    assert fields["repl-id"] == info(m, "master_replid")
    assert fields["repl-stream-db"] == "5"
    stopped_at = int(fields["repl-offset"])
    assert stopped_at == info(m, "master_repl_offset")
    m5.incr("counter")  # in db 5, with no SELECT before it on the continued stream
    replica = restart(spawn_server, replica, ["--replicaof", f"127.0.0.1 {master.port}"],
                      fresh_data=True)
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: client(replica, db=5).get("counter") == "1"), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_partial_ok"] == partial + 1, stats
    assert stats["sync_full"] == full, "the restarted replica was sent a full sync"
    assert r.dbsize() == m.dbsize()
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)


def test_replica_dump_under_load_continues_exactly(spawn_server, tmp_path):
    """The dump of a replica (two workers) taken while its master's stream flows: a fresh
    redis-server started from it continues the master's stream from repl-offset, and every
    INCR counter ends equal to the master's, so the offset matches the data exactly."""
    master, m = redis_master(spawn_server)
    m.config_set("repl-backlog-size", 256 << 20)  # the fresh replica's bytes are still there
    replica = spawn_server(threads=2, extra_args=["--replicaof", f"127.0.0.1 {master.port}"])
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)
    stop = threading.Event()
    errors = []

    def writer():
        try:
            c = client(master)
            while not stop.is_set():
                p = c.pipeline(transaction=False)
                for i in range(10):
                    p.incr(f"counter:{i}")
                p.execute()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        time.sleep(0.3)
        for _ in range(3):  # several dumps, each under load
            bgsave_done(r)
        shutil.copy(replica.workdir / "dump.rdb", tmp_path / "dump.rdb")
        time.sleep(0.2)
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive() and not errors, errors
    fields = repl_fields(tmp_path / "dump.rdb")
    assert fields["repl-id"] == info(m, "master_replid")
    partial = m.info("stats")["sync_partial_ok"]
    full = m.info("stats")["sync_full"]
    fresh = spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                               "no", "--bind", "127.0.0.1", "--dir", str(tmp_path),
                               "--replicaof", "127.0.0.1", str(master.port)])
    f = client(fresh)
    assert wait_until(quiet(lambda: link_up(f)), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: caught_up(m, f)), SYNC_TIMEOUT_S)
    stats = m.info("stats")
    assert stats["sync_partial_ok"] == partial + 1, stats
    assert stats["sync_full"] == full
    want = {k: m.get(k) for k in m.keys("counter:*")}
    assert len(want) == 10
    assert {k: f.get(k) for k in want} == want
