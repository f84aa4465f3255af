"""Diskless full syncs from the server under test as a master (doc/replication.md, "Diskless
sync"): with repl-diskless-sync yes (Redis 7.0's default) and a replica that said `capa eof`,
the RDB goes to the replica's socket as `$EOF:<mark>` ... <mark> while it is being made; with
`no`, as `$<len>` after it was written to disk. The replicas are Debian's redis-server, whose
log says which form it received. Every wait is bounded.
"""
import os
import socket
import time

from conftest import wait_until
from test_replication import assert_same_data, client, fill_every_type, link_up, quiet
from test_replication_master import settled, spawn_master

SYNC_TIMEOUT_S = 20.0
EOF_FORM = "receiving streamed RDB from master with EOF"


def start_replica(spawn_server, master):
    """A redis-server replica of `master`; returns (server, client), before it has synced."""
    argv = ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no", "--bind",
            "127.0.0.1", "--replicaof", "127.0.0.1", str(master.port)]
    replica = spawn_server(argv=argv)
    return replica, client(replica)


def synced(r):
    return wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S)


def test_diskless_sync_streams_the_rdb_then_the_command_stream(spawn_server):
    master, m = spawn_master(spawn_server)
    assert m.config_get("repl-diskless-sync") == {"repl-diskless-sync": "yes"}
    fill_every_type(m)
    # More than the stream's buffer (32 MiB): the walk waits for the replica to take it.
    for i in range(48):
        m.set(f"blob{i}", chr(65 + i % 26) * (1 << 20))
    replica, r = start_replica(spawn_server, master)
    assert synced(r), "the replica did not sync"
    assert EOF_FORM in replica.stdout_text()
    # Writes made while and after it loaded reach it: the stream follows the payload.
    for i in range(100):
        m.incr("after-sync")
    assert settled(m, r)
    assert_same_data(m, r)
    assert r.get("blob47") == chr(65 + 47 % 26) * (1 << 20)
    assert r.get("after-sync") == "100"


def test_repl_diskless_sync_no_sends_the_rdb_from_disk(spawn_server):
    master, m = spawn_master(spawn_server)
    assert m.config_set("repl-diskless-sync", "no") is True
    fill_every_type(m)
    replica, r = start_replica(spawn_server, master)
    assert synced(r), "the replica did not sync"
    log = replica.stdout_text()
    assert EOF_FORM not in log and "bytes from master to disk" in log
    assert settled(m, r)
    assert_same_data(m, r)


def test_a_disk_sync_leaves_its_rdb_as_dbfilename(spawn_server):
    """As Redis's BGSAVE for SYNC: the RDB written for a disk-based sync becomes dir/dbfilename
    (LASTSAVE and rdb_changes_since_last_save follow), no temp file stays; with
    rdb-del-sync-files yes and no save point (this master has none) it is removed instead."""
    master, m = spawn_master(spawn_server)
    assert m.config_set("repl-diskless-sync", "no") is True
    rdb_dir = m.config_get("dir")["dir"]
    path = os.path.join(rdb_dir, m.config_get("dbfilename")["dbfilename"])
    assert not os.path.exists(path)
    for i in range(100):
        m.set(f"k{i}", i)
    assert int(m.info("persistence")["rdb_changes_since_last_save"]) >= 100
    saved_before = m.lastsave()
    time.sleep(1.1)  # LASTSAVE counts seconds
    replica, r = start_replica(spawn_server, master)
    assert synced(r), "the replica did not sync"
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0010"
    assert m.lastsave() > saved_before
    assert int(m.info("persistence")["rdb_changes_since_last_save"]) == 0
    assert m.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert not [f for f in os.listdir(rdb_dir) if f.startswith("temp-")]
    assert r.get("k99") == "99"

    assert m.config_set("rdb-del-sync-files", "yes") is True
    second, r2 = start_replica(spawn_server, master)
    assert synced(r2), "the second replica did not sync"
    assert r2.get("k99") == "99"
    assert wait_until(lambda: not os.path.exists(path), SYNC_TIMEOUT_S)
    assert not [f for f in os.listdir(rdb_dir) if f.startswith("temp-")]


def test_the_delay_waits_for_more_replicas_and_max_replicas_ends_it(spawn_server):
    master, m = spawn_master(spawn_server)
    m.set("k", "v")
    assert m.config_set("repl-diskless-sync-delay", 3) is True
    replica, r = start_replica(spawn_server, master)
    time.sleep(1.5)
    assert not link_up(r)  # still waiting for other replicas to share the sync
    assert synced(r), "the replica did not sync after the delay"
    # With max-replicas 1 a single waiting replica starts the sync without the (long) delay.
    assert m.config_set("repl-diskless-sync-delay", 3600) is True
    assert m.config_set("repl-diskless-sync-max-replicas", 1) is True
    second, r2 = start_replica(spawn_server, master)
    assert synced(r2), "max-replicas 1 did not start the sync"
    assert r2.get("k") == "v"


def test_a_replica_leaving_a_diskless_sync_does_not_wedge_the_next(spawn_server):
    master, m = spawn_master(spawn_server)
    for i in range(64):  # larger than the socket and the stream's buffer hold; incompressible
        m.set(f"blob{i}", os.urandom(1 << 20))
    gone = socket.create_connection(("127.0.0.1", master.port), timeout=10)
    gone.sendall(b"REPLCONF capa eof capa psync2\r\n")
    assert gone.recv(5) == b"+OK\r\n"
    gone.sendall(b"PSYNC ? -1\r\n")
    got = b""
    while b"$EOF:" not in got or len(got) < 1 << 20:  # the payload has begun
        chunk = gone.recv(1 << 16)
        assert chunk, "the master closed the sync"
        got += chunk
    gone.close()  # mid-payload: the master gives that sync up
    assert wait_until(lambda: m.info("replication")["connected_slaves"] == 0, SYNC_TIMEOUT_S)
    replica, r = start_replica(spawn_server, master)
    assert synced(r), "the next replica did not sync"
    assert settled(m, r)
    assert r.dbsize() == m.dbsize()
