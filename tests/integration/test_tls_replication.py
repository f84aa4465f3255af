"""tls-replication yes: the replica's link to its master over TLS (doc/replication.md, "TLS").

The master is Debian's redis-server 7.0.15 with a tls-port; the replica is the server under test
(redis-server too with LAVIK_TEST_TARGET=redis), presenting the client certificate and verifying
the master against the CA. Every wait is bounded."""

import redis

from conftest import free_port, wait_until
from test_replication import caught_up, client, info, link_up, quiet
from test_tls import certs, tls_args  # noqa: F401 - certs is a fixture

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
