"""Streams through replication: a "~" trim reaches replicas as the exact trim it made
(doc/replication.md, "Rewrites"), as Redis 7.0's streamRewriteApproxSpecifier and
streamRewriteTrimArgument make it. A replica's own stream-node-max-entries would otherwise trim
other entries than its master's. Both directions: the server under test as the master of a
redis-server replica, and as the replica of a redis-server master (which sends "=" with the
LIMIT it was given, to be taken without the LIMIT, as Redis's mustObeyClient)."""

import redis

from conftest import wait_until
from test_replication import client, quiet
from test_replication import spawn_master as spawn_redis_master
from test_replication_master import settled, spawn_master, spawn_redis_replica

SYNC_TIMEOUT_S = 20.0


def approximate_trims(m):
    """XADD/XTRIM with "~" (and LIMIT) in nodes of 4 entries, at top level and inside MULTI."""
    m.config_set("stream-node-max-entries", 4)
    for i in range(60):
        m.xadd("capped", {"n": i}, maxlen=10, approximate=True)
    for i in range(40):
        m.xadd("limited", {"n": i}, maxlen=5, approximate=True, limit=8)
    for i in range(1, 41):
        m.xadd("byid", {"n": i}, id=f"{i}-1")
    m.xtrim("byid", minid="25-0", approximate=True)
    m.xtrim("byid", maxlen=3, approximate=True, limit=4)
    with m.pipeline(transaction=True) as p:
        for i in range(30):
            p.xadd("in-multi", {"n": i}, maxlen=6, approximate=True)
        p.execute()
    m.xadd("small", {"n": 0}, maxlen=1000, approximate=True)  # nothing trimmed: "=" 1


def assert_same_streams(m, r):
    for key in ("capped", "limited", "byid", "in-multi", "small"):
        want = m.xrange(key)
        assert want, key
        assert r.xrange(key) == want, key
        assert r.xlen(key) == m.xlen(key), key


def test_approximate_trim_reaches_a_replica_as_the_exact_trim(spawn_server):
    master, m = spawn_master(spawn_server)
    _, r = spawn_redis_replica(spawn_server, master)  # its stream-node-max-entries stays 100
    approximate_trims(m)
    assert m.xlen("capped") < 60 and m.xlen("capped") >= 10  # whole nodes of 4 went
    assert settled(m, r)
    assert_same_streams(m, r)


def test_exact_trim_with_limit_from_a_redis_master_is_applied(spawn_server):
    master = spawn_redis_master(spawn_server)
    m = client(master)
    r = client(spawn_server())
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    assert wait_until(quiet(lambda: r.info("replication")["master_link_status"] == "up"),
                      SYNC_TIMEOUT_S), "the replica did not sync"
    approximate_trims(m)
    assert settled(m, r)
    assert_same_streams(m, r)
    assert r.info("replication")["master_link_status"] == "up"
    assert r.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    try:  # a client's "=" with LIMIT is still refused
        r.execute_command("XADD", "x", "MAXLEN", "=", "5", "LIMIT", "3", "*", "a", "1")
        assert False, "XADD MAXLEN = LIMIT accepted from a client"
    except redis.ResponseError as e:
        assert str(e) == "syntax error, LIMIT cannot be used without the special ~ option"
