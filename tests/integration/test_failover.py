"""FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] (doc/replication.md, "FAILOVER").

A coordinated failover between a master and one of its replicas, as Redis 7.0 runs it: the master
pauses writes, waits until the target acknowledged its whole stream, follows it with
`PSYNC <replid> <offset+1> FAILOVER`, and the target promotes itself and answers +CONTINUE.
Three pairs: a redis-server master with the server under test as its replica, the server under
test as master of a redis-server replica, and two servers under test. With
LAVIK_TEST_TARGET=redis every "server under test" is redis-server, and each test passes too.
Every wait is bounded.
"""

import os
import signal
import threading

import pytest
import redis

from conftest import err, wait_until
from test_replication import client, info, link_up, quiet
from test_replication import spawn_master as spawn_redis_master
from test_replication_master import spawn_master, spawn_redis_replica

TIMEOUT_S = 20.0


def role(c):
    return c.execute_command("ROLE")


def state(c):
    return info(c, "master_failover_state")


def follow(replica, master):
    r = client(replica)
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    assert wait_until(quiet(lambda: link_up(r)), TIMEOUT_S), "the replica did not sync"
    return r


def synced(m, r):
    """The replica acknowledged the master's whole stream (what FAILOVER waits for)."""
    def check():
        off = info(m, "master_repl_offset")
        slaves = [v for k, v in m.info("replication").items() if k.startswith("slave")
                  and isinstance(v, dict)]
        return info(r, "slave_repl_offset") == off and any(s["offset"] == off for s in slaves)
    return wait_until(quiet(check), TIMEOUT_S)


def write_keys(c, prefix, n=200):
    with c.pipeline(transaction=False) as p:
        for i in range(n):
            p.set(f"{prefix}:{i}", f"v{i}")
        p.rpush(f"{prefix}:list", *range(20))
        p.hset(f"{prefix}:hash", mapping={"a": 1, "b": 2})
        p.incrby(f"{prefix}:counter", 7)
        p.execute()


def assert_keys(c, prefix, n=200):
    values = c.mget([f"{prefix}:{i}" for i in range(n)])
    assert values == [f"v{i}" for i in range(n)]
    assert c.lrange(f"{prefix}:list", 0, -1) == [str(i) for i in range(20)]
    assert c.hgetall(f"{prefix}:hash") == {"a": "1", "b": "2"}
    assert c.get(f"{prefix}:counter") == "7"


def assert_swapped(old, new, new_port):
    """`new` is a master that `old` follows with its link up, and the two have the same data."""
    assert wait_until(quiet(lambda: role(new)[0] == "master"), TIMEOUT_S), role(new)
    assert wait_until(quiet(lambda: link_up(old) and state(old) == "no-failover"), TIMEOUT_S), \
        old.info("replication")
    r = role(old)
    assert r[0] == "slave" and r[1] == "127.0.0.1" and int(r[2]) == new_port, r
    assert info(old, "master_port") == new_port
    assert state(new) == "no-failover"
    # The old master continued the history without a full sync.
    assert wait_until(quiet(lambda: new.info("stats")["sync_partial_ok"] >= 1), TIMEOUT_S)
    assert info(new, "master_replid2") != "0" * 40
    # Writes now go to the new master and reach the old one; the old one refuses them.
    with pytest.raises(redis.exceptions.ReadOnlyError):
        old.set("refused", "1")
    new.set("after-failover", "yes")
    assert wait_until(quiet(lambda: old.get("after-failover") == "yes"), TIMEOUT_S)


def test_redis_master_fails_over_to_the_replica(spawn_server):
    """redis-server master, the server under test as the replica that takes over."""
    master = spawn_redis_master(spawn_server)
    m = client(master)
    replica = spawn_server()
    r = follow(replica, master)
    write_keys(m, "before")
    assert synced(m, r)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port) == "OK"
    assert_swapped(m, r, replica.port)
    assert_keys(r, "before")
    assert_keys(m, "before")
    assert r.info("replication")["connected_slaves"] == 1


def test_master_fails_over_to_a_redis_replica(spawn_server):
    """The server under test as master, redis-server as the replica (FAILOVER without TO)."""
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    write_keys(m, "before")
    assert synced(m, r)
    assert state(m) == "no-failover"
    assert m.execute_command("FAILOVER") == "OK"
    assert_swapped(m, r, replica.port)
    assert_keys(r, "before")
    assert_keys(m, "before")


@pytest.mark.parametrize("threads", [1, 2])
def test_master_fails_over_to_its_own_kind(spawn_server, threads):
    """Two servers under test; the keys are spread over the workers."""
    master, m = spawn_master(spawn_server, threads=threads)
    replica = spawn_server(threads=threads)
    r = follow(replica, master)
    write_keys(m, "before")
    assert synced(m, r)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port, "TIMEOUT", 10000) == "OK"
    assert_swapped(m, r, replica.port)
    assert_keys(r, "before")
    assert_keys(m, "before")
    # And back again: the new master fails over to the old one.
    write_keys(r, "second")
    assert synced(r, m)
    assert r.execute_command("FAILOVER") == "OK"
    assert_swapped(r, m, master.port)
    assert_keys(m, "second")
    assert_keys(r, "before")


def test_errors(spawn_server):
    master, m = spawn_master(spawn_server)
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("FAILOVER")
    assert err(e) == "FAILOVER requires connected replicas."
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("FAILOVER", "ABORT")
    assert err(e) == "No failover in progress."
    for args, text in [
        (("ABORT", "TIMEOUT", 10), "syntax error"),
        (("TIMEOUT",), "syntax error"),
        (("TO", "127.0.0.1"), "syntax error"),
        (("FORCE", "FORCE"), "syntax error"),
        (("TIMEOUT", 10, "TIMEOUT", 20), "syntax error"),
        (("BOGUS",), "syntax error"),
        (("TIMEOUT", "x"), "value is not an integer or out of range"),
        (("TIMEOUT", 0), "FAILOVER timeout must be greater than 0"),
        (("TIMEOUT", -5), "FAILOVER timeout must be greater than 0"),
        (("TO", "127.0.0.1", "port"), "value is not an integer or out of range"),
    ]:
        with pytest.raises(redis.ResponseError) as e:
            m.execute_command("FAILOVER", *args)
        assert err(e) == text, args
    replica, r = spawn_redis_replica(spawn_server, master)
    assert wait_until(quiet(lambda: role(m)[2] != []), TIMEOUT_S)
    for args, text in [
        (("TO", "127.0.0.1", 1), "FAILOVER target HOST and PORT is not a replica."),
        (("TO", "10.1.2.3", replica.port), "FAILOVER target HOST and PORT is not a replica."),
        (("FORCE",), "FAILOVER with force option requires both a timeout and target HOST and IP."),
        (("TO", "127.0.0.1", replica.port, "FORCE"),
         "FAILOVER with force option requires both a timeout and target HOST and IP."),
        (("FORCE", "TIMEOUT", 100),
         "FAILOVER with force option requires both a timeout and target HOST and IP."),
    ]:
        with pytest.raises(redis.ResponseError) as e:
            m.execute_command("FAILOVER", *args)
        assert err(e) == text, args
    assert state(m) == "no-failover"
    # On a replica (the server under test following a redis-server master).
    rmaster = spawn_redis_master(spawn_server)
    mine = spawn_server()
    s = follow(mine, rmaster)
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("FAILOVER")
    assert err(e) == "FAILOVER is not valid when server is a replica."
    # PSYNC ... FAILOVER: only a replica takes it, with its own replid.
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("PSYNC", "0" * 40, 1, "FAILOVER")
    assert err(e) == "PSYNC FAILOVER replid must match my replid."
    assert role(s)[0] == "slave"
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("PSYNC", info(m, "master_replid"), 1, "FAILOVER")
    assert err(e) == "PSYNC FAILOVER can't be sent to a master."


class PausedWrite:
    """A SET from its own client, in a thread: it stays unanswered while writes are paused."""

    def __init__(self, server, key):
        self.c = client(server)
        self.result = None
        self.t = threading.Thread(target=self._run, args=(key,), daemon=True)
        self.t.start()

    def _run(self, key):
        try:
            self.result = self.c.set(key, "1")
        except redis.RedisError as e:
            self.result = e

    def held(self):
        self.t.join(0.5)
        return self.t.is_alive()

    def done(self):
        self.t.join(TIMEOUT_S)
        return not self.t.is_alive()


def test_timeout_abort_and_force(spawn_server):
    """A replica that cannot acknowledge (SIGSTOP): FAILOVER waits with writes paused, TIMEOUT
    without FORCE gives up, ABORT ends it, TIMEOUT with FORCE fails over anyway."""
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    write_keys(m, "before")
    assert synced(m, r)
    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        m.set("unacked", "1")  # the stopped replica never acknowledges this
        # TIMEOUT without FORCE: the failover is abandoned, writes resume, still a master.
        assert m.execute_command("FAILOVER", "TIMEOUT", 3000) == "OK"
        assert state(m) == "waiting-for-sync"
        w = PausedWrite(master, "paused-1")
        assert w.held(), "a write ran while FAILOVER paused writes"
        assert m.get("before:1") == "v1"  # reads are served
        assert wait_until(lambda: state(m) == "no-failover", TIMEOUT_S)
        assert w.done() and w.result is True
        assert role(m)[0] == "master"
        # ABORT.
        assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port) == "OK"
        with pytest.raises(redis.ResponseError) as e:
            m.execute_command("FAILOVER")
        assert err(e) == "FAILOVER already in progress."
        with pytest.raises(redis.ResponseError) as e:
            m.execute_command("REPLICAOF", "127.0.0.1", replica.port)
        assert err(e) == "REPLICAOF not allowed while failing over."
        w = PausedWrite(master, "paused-2")
        assert w.held()
        # CLIENT UNPAUSE ends a CLIENT PAUSE, not FAILOVER's.
        assert m.execute_command("CLIENT", "UNPAUSE") == "OK"
        assert w.held()
        assert m.execute_command("FAILOVER", "ABORT") == "OK"
        assert state(m) == "no-failover"
        assert w.done() and w.result is True
        assert role(m)[0] == "master"
        # FORCE with TIMEOUT: fails over to the target once the time is up, synced or not.
        assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port, "FORCE",
                                 "TIMEOUT", 500) == "OK"
        assert wait_until(lambda: state(m) == "failover-in-progress", TIMEOUT_S)
        assert role(m)[0] == "slave"
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    assert wait_until(quiet(lambda: role(r)[0] == "master"), TIMEOUT_S)
    assert wait_until(quiet(lambda: link_up(m) and state(m) == "no-failover"), TIMEOUT_S)
    assert int(role(m)[2]) == replica.port
    assert_keys(r, "before")
    r.set("after-force", "1")
    assert wait_until(quiet(lambda: m.get("after-force") == "1"), TIMEOUT_S)


def test_abort_while_in_progress_makes_a_master_again(spawn_server):
    """FAILOVER ABORT once the master already follows the target (the target does not answer
    the PSYNC): it is a master again, with a new replid."""
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    assert synced(m, r)
    old_id = info(m, "master_replid")
    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        m.set("unacked", "1")
        assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port, "FORCE",
                                 "TIMEOUT", 300) == "OK"
        assert wait_until(lambda: state(m) == "failover-in-progress", TIMEOUT_S)
        assert m.execute_command("FAILOVER", "ABORT") == "OK"
        assert state(m) == "no-failover"
        assert role(m)[0] == "master"
        assert info(m, "master_replid") != old_id
        assert info(m, "master_replid2") == old_id
        m.set("writable", "again")
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    assert wait_until(quiet(lambda: r.get("writable") == "again"), TIMEOUT_S)


def test_other_replicas_follow_through_the_old_master(spawn_server):
    """Three servers under test: FAILOVER TO one replica; the other stays a replica of the old
    master, which reconnects it (the history's name changed) and it continues under the new
    replid, receiving the new master's writes through the old one."""
    master, m = spawn_master(spawn_server)
    a, b = spawn_server(), spawn_server()
    ra, rb = follow(a, master), follow(b, master)
    write_keys(m, "before")
    assert synced(m, ra) and synced(m, rb)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", a.port) == "OK"
    assert_swapped(m, ra, a.port)
    new_id = info(ra, "master_replid")
    assert wait_until(quiet(lambda: info(rb, "master_replid") == new_id and link_up(rb)),
                      TIMEOUT_S), rb.info("replication")
    assert info(rb, "master_port") == master.port
    assert m.info("stats")["sync_partial_ok"] >= 1  # b continued from the old master
    assert_keys(rb, "before")
    assert wait_until(quiet(lambda: rb.get("after-failover") == "yes"), TIMEOUT_S)
