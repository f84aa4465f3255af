"""Replication over TLS (doc/replication.md, "TLS to the master", "TLS to our replicas").

The replica side (tls-replication yes): the master is Debian's redis-server 7.0.15 with a
tls-port; the replica is the server under test (redis-server too with LAVIK_TEST_TARGET=redis),
presenting the client certificate and verifying the master against the CA.

The master side: the server under test serves, on its tls-port, a redis-server replica with
tls-replication yes and a replica that is the server under test too (Lavik → Lavik, or redis →
redis with LAVIK_TEST_TARGET=redis). Every wait is bounded."""

import os
import signal
import time

import pytest
import redis

from conftest import free_port, wait_until
from test_replication import (assert_same_data, caught_up, client, fill_every_type, info, link_up,
                              quiet)
from test_replication_master import live_writes, resync_after_client_kill, settled
from test_tls import certs, start_tls, tls_args  # noqa: F401 - certs is a fixture

SYNC_TIMEOUT_S = 20.0


def tls_master(spawn_server, certs):  # noqa: F811
    tls_port = free_port()
    master = spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                                "no", "--bind", "127.0.0.1", "--repl-diskless-sync-delay", "0",
                                *tls_args(certs, tls_port)])
    master.tls_port = tls_port
    return master, client(master)


def tls_replica(spawn_server, certs, master, ca="ca"):  # noqa: F811
    args = tls_args(certs, free_port()) + [
        "--tls-replication", "yes", "--tls-client-cert-file", str(certs / "client.crt"),
        "--tls-client-key-file", str(certs / "client.key"),
        "--replicaof", f"127.0.0.1 {master.tls_port}"]
    if ca != "ca":
        args[args.index("--tls-ca-cert-file") + 1] = str(certs / f"{ca}.crt")
    replica = spawn_server(extra_args=args)
    return replica, client(replica)


def test_replica_syncs_and_follows_over_tls(spawn_server, certs):  # noqa: F811
    master, m = tls_master(spawn_server, certs)
    for i in range(200):
        m.set(f"k{i}", "v" * (i % 100))
    m.rpush("list", *range(100))
    replica, r = tls_replica(spawn_server, certs, master)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "the replica did not sync"
    m.set("live", "1")
    client(master, db=4).incr("counter")
    assert wait_until(quiet(lambda: r.get("live") == "1"), SYNC_TIMEOUT_S)
    assert wait_until(quiet(lambda: caught_up(m, r)), SYNC_TIMEOUT_S)
    assert r.dbsize() == m.dbsize()
    assert r.lrange("list", 0, -1) == m.lrange("list", 0, -1)
    assert client(replica, db=4).get("counter") == "1"
    assert m.info("replication")["connected_slaves"] == 1
    # The link cut: a partial resync over TLS.
    partial = m.info("stats")["sync_partial_ok"]
    assert r.client_kill_filter(_type="master") == 1
    m.set("after-cut", "x")
    assert wait_until(quiet(lambda: r.get("after-cut") == "x"), SYNC_TIMEOUT_S)
    assert m.info("stats")["sync_partial_ok"] == partial + 1
    assert info(r, "master_replid") == info(m, "master_replid")


def test_replica_refuses_a_master_its_ca_does_not_sign(spawn_server, certs):  # noqa: F811
    master, m = tls_master(spawn_server, certs)
    replica, r = tls_replica(spawn_server, certs, master, ca="rogue-ca")
    assert not wait_until(quiet(lambda: link_up(r)), 3)
    assert info(r, "master_link_status") == "down"
    assert m.info("stats")["sync_full"] == 0


# ---- The server under test as a TLS master ----


def tls_replica_args(certs, master):  # noqa: F811
    """A replica's TLS options: its link to the master's tls-port, with the client certificate."""
    return tls_args(certs, free_port()) + [
        "--tls-replication", "yes", "--tls-client-cert-file", str(certs / "client.crt"),
        "--tls-client-key-file", str(certs / "client.key"),
        "--replicaof", f"127.0.0.1 {master.tls_port}"]


def replica_of_tls_master(spawn_server, certs, master, kind):  # noqa: F811
    """A replica of master's tls-port: Debian's redis-server, or the server under test."""
    args = tls_replica_args(certs, master)
    if kind == "redis-server":
        argv = ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no",
                "--bind", "127.0.0.1", *args[:-2], "--replicaof", "127.0.0.1",
                str(master.tls_port)]
        replica = spawn_server(argv=argv)
    else:
        replica = spawn_server(extra_args=args)
    r = client(replica)
    assert wait_until(quiet(lambda: link_up(r)), SYNC_TIMEOUT_S), "the replica did not sync"
    return replica, r


def tls_master_under_test(spawn_server, certs):  # noqa: F811
    master = start_tls(spawn_server, certs)
    m = client(master)  # its plain port: the test's own writes
    m.config_set("repl-diskless-sync-delay", 0)  # a redis-server master waits 5 s otherwise
    return master, m


def replica_id(m):
    """The id of the master's one replica connection (CLIENT LIST TYPE replica)."""
    clients = m.client_list(_type="replica")
    assert len(clients) == 1, clients
    return clients[0]["id"]


@pytest.mark.parametrize("kind", ["redis-server", "same-as-target"])
def test_replica_of_a_tls_master(spawn_server, certs, kind):  # noqa: F811
    master, m = tls_master_under_test(spawn_server, certs)
    fill_every_type(m)
    for i in range(40):  # a few MB: the sync meets a full socket, sealed a chunk at a time
        m.set(f"blob{i}", chr(65 + i % 26) * 100000)
    replica, r = replica_of_tls_master(spawn_server, certs, master, kind)
    assert settled(m, r)
    assert_same_data(m, r)
    assert r.get("blob39") == chr(65 + 39 % 26) * 100000
    # The command stream, every kind of write.
    live_writes(m)
    assert settled(m, r)
    assert_same_data(m, r)
    # The replica's REPLCONF ACKs reach the master: WAIT, INFO's offset.
    m.set("waited", "1")
    assert m.execute_command("WAIT", 1, 5000) == 1
    repl = m.info("replication")
    assert repl["connected_slaves"] == 1
    assert repl["slave0"]["state"] == "online"
    assert wait_until(lambda: m.info("replication")["slave0"]["offset"] ==
                      m.info("replication")["master_repl_offset"], SYNC_TIMEOUT_S)
    assert m.role()[0] == "master" and len(m.role()[2]) == 1
    # A replica is never idle-closed (timeout), though its connection reads nothing itself.
    conn = replica_id(m)
    m.config_set("timeout", 1)
    time.sleep(2.5)
    m.set("after-timeout", "t")
    assert wait_until(quiet(lambda: r.get("after-timeout") == "t"), SYNC_TIMEOUT_S)
    assert replica_id(m) == conn
    # ...nor idle in CLIENT LIST: its REPLCONF ACKs, every second, are its interaction.
    assert wait_until(lambda: int(m.client_list(_type="replica")[0]["idle"]) <= 1, 3)
    assert m.execute_command("WAIT", 1, 5000) == 1


@pytest.mark.parametrize("kind", ["redis-server", "same-as-target"])
def test_partial_resync_from_a_tls_master_after_client_kill(spawn_server, certs, kind):  # noqa
    master, m = tls_master_under_test(spawn_server, certs)
    m.set("before", "1")
    replica, r = replica_of_tls_master(spawn_server, certs, master, kind)
    assert settled(m, r)
    conn = replica_id(m)
    resync_after_client_kill(m, r)
    assert replica_id(m) != conn
    assert r.get("before") == "1"
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert info(r, "master_replid") == info(m, "master_replid")


def test_a_stopped_tls_replica_holds_up_no_client(spawn_server, certs):  # noqa: F811
    """A replica that reads nothing (SIGSTOP) while 16 MB of writes stream past what the sockets
    buffer: the master answers every command meanwhile (no worker waits on the replica), and the
    replica catches up once it runs again."""
    master, m = tls_master_under_test(spawn_server, certs)
    replica, r = replica_of_tls_master(spawn_server, certs, master, "redis-server")
    assert settled(m, r)
    value = "s" * 100000
    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        for i in range(160):
            m.set(f"stopped{i}", value)
        assert m.get("stopped0") == value
        assert time.monotonic() - start < 10
        repl = m.info("replication")
        assert repl["slave0"]["offset"] < repl["master_repl_offset"]
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    assert settled(m, r)
    assert r.get("stopped159") == value
    assert m.execute_command("WAIT", 1, 5000) == 1
