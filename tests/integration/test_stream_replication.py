"""Streams through replication (doc/replication.md, "Rewrites").

A "~" trim reaches replicas as the exact trim it made, as Redis 7.0's
streamRewriteApproxSpecifier and streamRewriteTrimArgument make it. A replica's own
stream-node-max-entries would otherwise trim other entries than its master's. Both directions:
the server under test as the master of a redis-server replica, and as the replica of a
redis-server master (which sends "=" with the LIMIT it was given, to be taken without the LIMIT,
as Redis's mustObeyClient).

Consumer groups reach replicas as the effects Redis 7.0 propagates (streamPropagateXCLAIM and
friends): XREADGROUP, XCLAIM and XAUTOCLAIM as "XCLAIM ... TIME ms RETRYCOUNT n FORCE JUSTID
LASTID id" per pending entry they changed, XGROUP SETID ... ENTRIESREAD and XGROUP
CREATECONSUMER; so a replica's PEL (owners, delivery times and counts), consumers and last
delivered ids are the master's. Every wait is bounded."""

import threading

import pytest
import redis

from conftest import wait_blocked, wait_until
from test_replication import client, quiet
from test_replication import spawn_master as spawn_redis_master
from test_replication_master import follow, settled, spawn_master, spawn_redis_replica

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


# ---- consumer groups ----

CLOSE_MS = 3000  # a replica sets a consumer's seen-time when it applies the command


def pairs(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def group_state(c, key):
    """XINFO STREAM key FULL's groups: per group its fields, PEL and consumers."""
    info = pairs(c.execute_command("XINFO", "STREAM", key, "FULL"))
    groups = {}
    for raw in info["groups"]:
        g = pairs(raw)
        consumers = {}
        for rc in g["consumers"]:
            cons = pairs(rc)
            consumers[cons["name"]] = {"seen-time": int(cons["seen-time"]),
                                       "pel-count": cons["pel-count"],
                                       "pending": [tuple(p) for p in cons["pending"]]}
        groups[g["name"]] = {"last-delivered-id": g["last-delivered-id"],
                             "entries-read": g["entries-read"], "lag": g["lag"],
                             "pel-count": g["pel-count"],
                             "pending": [tuple(p) for p in g["pending"]],
                             "consumers": consumers}
    return groups


def assert_same_groups(m, r, key, entries_read):
    """The replica's groups of `key` are the master's: PEL entries with their owner, delivery
    time and count, consumers, last delivered ids (and, with entries_read, entries-read and lag);
    consumers' seen and idle times within CLOSE_MS. XPENDING and XINFO CONSUMERS agree too."""
    want, got = group_state(m, key), group_state(r, key)
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        g = got[name]
        for field in ("last-delivered-id", "pel-count", "pending"):
            assert g[field] == w[field], (name, field)
        if entries_read:
            assert (g["entries-read"], g["lag"]) == (w["entries-read"], w["lag"]), name
        assert sorted(g["consumers"]) == sorted(w["consumers"]), name
        for cname, wc in w["consumers"].items():
            gc = g["consumers"][cname]
            assert (gc["pel-count"], gc["pending"]) == (wc["pel-count"], wc["pending"]), cname
            assert abs(gc["seen-time"] - wc["seen-time"]) < CLOSE_MS, cname
        assert r.xpending(key, name) == m.xpending(key, name), name
        wp = m.xpending_range(key, name, "-", "+", 1000)
        gp = r.xpending_range(key, name, "-", "+", 1000)

        def fixed(p):
            return p["message_id"], p["consumer"], p["times_delivered"]
        assert [fixed(p) for p in gp] == [fixed(p) for p in wp], name
        assert all(abs(a["time_since_delivered"] - b["time_since_delivered"]) < CLOSE_MS
                   for a, b in zip(gp, wp)), name
        wc = {c["name"]: c for c in m.xinfo_consumers(key, name)}
        gc = {c["name"]: c for c in r.xinfo_consumers(key, name)}
        assert sorted(gc) == sorted(wc), name
        for cname in wc:
            assert gc[cname]["pending"] == wc[cname]["pending"], cname
            assert abs(gc[cname]["idle"] - wc[cname]["idle"]) < CLOSE_MS, cname


def blocked_read(server, group, consumer, key, noack=False):
    """A thread blocked in XREADGROUP ... BLOCK on `key`; its reply in .result."""
    c = client(server)
    out = {}

    def run():
        out["reply"] = c.xreadgroup(group, consumer, {key: ">"}, block=10000, noack=noack)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.result = out
    return t


def group_workload(m, server):
    """What consumers do, in the forms Redis 7.0 propagates as it is: several consumers with
    COUNT and NOACK, blocked readers served by a later XADD (with and without NOACK), XCLAIM with
    IDLE/RETRYCOUNT/JUSTID/FORCE/LASTID, of an entry deleted meanwhile, XAUTOCLAIM (over a
    deleted entry too), XACK, and XREADGROUP/XCLAIM inside MULTI."""
    ids = [m.xadd("jobs", {"n": i}) for i in range(12)]
    m.xgroup_create("jobs", "workers", id="0")
    m.xgroup_create("jobs", "audit", id="0")
    m.xgroup_create("jobs", "late", id="$")
    m.xgroup_create("jobs", "late-noack", id="$")
    assert len(m.xreadgroup("workers", "alice", {"jobs": ">"}, count=3)[0][1]) == 3
    assert len(m.xreadgroup("workers", "bob", {"jobs": ">"}, count=2)[0][1]) == 2
    assert len(m.xreadgroup("audit", "carol", {"jobs": ">"}, count=4, noack=True)[0][1]) == 4
    assert len(m.xreadgroup("audit", "alice", {"jobs": ">"}, count=2)[0][1]) == 2
    assert m.xreadgroup("workers", "alice", {"jobs": ">"}, count=1)  # alice again
    # Blocked readers, served by the next XADD.
    t1 = blocked_read(server, "late", "dan", "jobs")
    t2 = blocked_read(server, "late-noack", "eve", "jobs", noack=True)
    wait_blocked(m, 2)
    ids.append(m.xadd("jobs", {"n": "late"}))
    for t in (t1, t2):
        t.join(10)
        assert not t.is_alive(), "a blocked XREADGROUP was not served"
        assert t.result["reply"][0][1][0][0] == ids[-1]
    # XCLAIM: idle time and retry count given, JUSTID, FORCE of an entry nobody holds in the
    # group, one deleted meanwhile (the claim drops its pending entry), LASTID past the group's.
    assert m.xclaim("jobs", "workers", "frank", 0, [ids[0], ids[1]], idle=5000,
                    retrycount=4) != []
    assert m.xclaim("jobs", "workers", "frank", 0, [ids[3]], justid=True) == [ids[3]]
    assert m.xclaim("jobs", "workers", "gus", 3600000, [ids[2]]) == []  # not idle enough
    assert m.xclaim("jobs", "audit", "gus", 0, [ids[0]], force=True, justid=True) == [ids[0]]
    assert m.xclaim("jobs", "audit", "gus", 0, [ids[1]], force=True) != []
    assert m.xdel("jobs", ids[2]) == 1
    assert m.xclaim("jobs", "workers", "frank", 0, [ids[2], ids[4]]) != []
    assert m.execute_command("XCLAIM", "jobs", "audit", "gus", 0, ids[9], "LASTID",
                             ids[8]) == []
    # XAUTOCLAIM, once over an entry deleted since it was delivered.
    assert m.xdel("jobs", ids[5]) == 1
    cursor, claimed, deleted = m.xautoclaim("jobs", "workers", "hank", 0, "0-0", count=3)
    assert deleted == [] and len(claimed) == 3
    cursor, claimed, deleted = m.execute_command("XAUTOCLAIM", "jobs", "workers", "hank", 0,
                                                 cursor, "COUNT", 10, "JUSTID")
    assert ids[5] in deleted
    assert m.xack("jobs", "workers", ids[0], ids[3]) == 2
    with m.pipeline(transaction=True) as p:
        p.xreadgroup("workers", "ivy", {"jobs": ">"}, count=2)
        p.xclaim("jobs", "audit", "ivy", 0, [ids[6]], force=True)
        p.execute()


def test_consumer_groups_reach_replicas_as_their_effects(spawn_server, target):
    master, m = spawn_master(spawn_server)
    _, r = spawn_redis_replica(spawn_server, master)
    r2 = follow(spawn_server(), master)  # a second replica of the kind under test
    group_workload(m, master)
    for replica in (r, r2):
        assert settled(m, replica)
        # Redis 7.0.15 leaves a replica's entries-read behind after XREADGROUP without NOACK
        # (its replicas' XCLAIM LASTID does not count it); Lavik sends the group's SETID.
        assert_same_groups(m, replica, "jobs", entries_read=target == "lavik")
        assert replica.xrange("jobs") == m.xrange("jobs")


def test_consumer_groups_from_a_redis_master(spawn_server):
    """A redis-server master's stream of group changes, applied by the server under test as a
    redis-server replica applies it: same PELs, consumers, ids and entries-read."""
    master = spawn_redis_master(spawn_server)
    m = client(master)
    _, ref = spawn_redis_replica(spawn_server, master)
    r = follow(spawn_server(), master)
    group_workload(m, master)
    assert settled(m, r) and settled(m, ref)
    assert_same_groups(m, r, "jobs", entries_read=False)
    assert group_state(r, "jobs").keys() == group_state(ref, "jobs").keys()
    for name, g in group_state(ref, "jobs").items():
        assert (group_state(r, "jobs")[name]["entries-read"], group_state(r, "jobs")[name]["lag"]) \
            == (g["entries-read"], g["lag"]), name
    assert r.xrange("jobs") == m.xrange("jobs")


@pytest.mark.lavik_only
def test_history_reads_and_entries_read_reach_lavik_replicas(spawn_server):
    """What Redis 7.0.15 does not propagate and Lavik does, so that its replicas match (hence
    lavik_only): a read of a consumer's history (delivery counts and times), the consumer such a
    read creates, and the entries-read of a group read without NOACK."""
    master, m = spawn_master(spawn_server)
    _, r = spawn_redis_replica(spawn_server, master)
    r2 = follow(spawn_server(), master)
    for i in range(6):
        m.xadd("hist", {"n": i})
    m.xgroup_create("hist", "g", id="0")
    m.xreadgroup("g", "alice", {"hist": ">"}, count=4)
    m.xreadgroup("g", "alice", {"hist": "0"})  # history: every delivery count is 2 now
    m.xreadgroup("g", "alice", {"hist": "0"}, count=2)  # and 3 for the first two
    m.xreadgroup("g", "newcomer", {"hist": "0"})  # creates newcomer, with nothing pending
    for replica in (r, r2):
        assert settled(m, replica)
        assert_same_groups(m, replica, "hist", entries_read=True)
    counts = [p["times_delivered"] for p in r.xpending_range("hist", "g", "-", "+", 10)]
    assert counts == [3, 3, 2, 2]
    assert "newcomer" in [c["name"] for c in r.xinfo_consumers("hist", "g")]
