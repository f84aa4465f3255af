"""Redis Sentinel (Debian's redis-sentinel 7.0.15) watching a redis-server master whose replicas
are the server under test (lavik, or redis-server when LAVIK_TEST_TARGET=redis), so every
expectation here is what Sentinel does with redis-server replicas too (doc/replication.md).

What Sentinel needs of a replica: INFO (run_id; role, master_host/port, master_link_status,
master_link_down_since_seconds, slave_priority, slave_repl_offset, replica_announced), PING,
CLIENT SETNAME, PUBLISH/SUBSCRIBE on __sentinel__:hello, and for a failover one transaction:
MULTI, REPLICAOF NO ONE (or host port for the other replicas), CONFIG REWRITE, CLIENT KILL TYPE
normal, CLIENT KILL TYPE pubsub, EXEC — under renamed names when `sentinel rename-command` says so.

Each test starts its own master, replicas (with a config file, so CONFIG REWRITE has a file to
rewrite) and sentinels on free ports, with a small down-after-milliseconds and failover-timeout;
every wait is bounded, so a failover that never happens fails the test instead of hanging it.
"""

import time

import pytest
import redis
from redis.sentinel import MasterNotFoundError, Sentinel

from conftest import LAVIK_BIN, TARGET, RawConn, RespError, wait_until

NAME = "mymaster"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 6000
SYNC_S = 20.0
DISCOVER_S = 30.0
FAILOVER_S = 45.0
HELLO = "__sentinel__:hello"


def start_master(spawn_server):
    return spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                              "no", "--bind", "127.0.0.1", "--repl-diskless-sync", "yes",
                              "--repl-diskless-sync-delay", "0"])


def start_replica(spawn_server, tmp_path, name, master, conf_text="", kind=TARGET):
    """A replica of `master` started from a config file (kind: 'lavik' or 'redis')."""
    d = tmp_path / name
    d.mkdir()
    conf = d / "server.conf"
    # Promoted, it serves the others at once (Redis's default waits 5 s for more replicas).
    conf.write_text(f"replicaof 127.0.0.1 {master.port}\nrepl-diskless-sync-delay 0\n" + conf_text)
    if kind == "lavik":
        argv = [LAVIK_BIN, conf, "--port", "{port}", "--threads", "2", "--data-file",
                d / "data.lavik", "--log-dir", d / "logs"]
    else:
        argv = ["redis-server", conf, "--port", "{port}", "--save", "", "--appendonly", "no",
                "--bind", "127.0.0.1", "--dir", d]
    s = spawn_server(argv=argv, workdir=d)
    s.conf = conf
    c = s.client()
    assert wait_until(lambda: link_up(c), SYNC_S), f"{name} did not sync"
    return s


def start_sentinels(spawn_server, tmp_path, master, n, quorum, conf_text=""):
    out = []
    for i in range(n):
        d = tmp_path / f"sentinel{i}"
        d.mkdir()
        conf = d / "sentinel.conf"
        conf.write_text(f"bind 127.0.0.1\ndir {d}\n"
                        f"sentinel monitor {NAME} 127.0.0.1 {master.port} {quorum}\n"
                        f"sentinel down-after-milliseconds {NAME} {DOWN_AFTER_MS}\n"
                        f"sentinel failover-timeout {NAME} {FAILOVER_TIMEOUT_MS}\n" + conf_text)
        out.append(spawn_server(argv=["redis-sentinel", conf, "--port", "{port}"], workdir=d))
    return out


def link_up(c):
    try:
        return c.info("replication").get("master_link_status") == "up"
    except redis.exceptions.BusyLoadingError:
        return False


def calm(predicate):
    """predicate, false while a reply is lost to the failover's CLIENT KILL (the client
    reconnects on its next call) or to a full sync's LOADING."""
    def check():
        try:
            return predicate()
        except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
            return False
    return check


def as_dict(flat):
    return dict(zip(flat[::2], flat[1::2]))


def sentinel_replicas(s):
    return [as_dict(x) for x in s.client().execute_command("SENTINEL", "REPLICAS", NAME)]


def master_addr(s):
    host, port = s.client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
    return host, int(port)


def replica_seen(sentinel, replica, priority):
    """Sentinel lists `replica` as a healthy replica, with what the replica's INFO says."""
    run_id = replica.client().info("server")["run_id"]
    for r in sentinel_replicas(sentinel):
        if int(r["port"]) != replica.port:
            continue
        return (r["flags"] == "slave" and r["master-link-status"] == "ok" and
                r.get("runid") == run_id and r["slave-priority"] == str(priority) and
                r["master-host"] == "127.0.0.1" and int(r["info-refresh"]) < 20000)
    return False


def sentinels_known(sentinels):
    """Every sentinel found the others (through __sentinel__:hello)."""
    want = len(sentinels) - 1
    return all(len(s.client().execute_command("SENTINEL", "SENTINELS", NAME)) == want
               for s in sentinels)


def conf_lines(server):
    return [line for line in server.conf.read_text().splitlines()
            if line and not line.startswith("#")]


def replicaof_lines(server):
    return [line for line in conf_lines(server) if line.split()[0] in ("replicaof", "slaveof")]


def discovered(sentinel, port):
    """redis-py's Sentinel finds the master at port (and not down)."""
    try:
        return sentinel.discover_master(NAME) == ("127.0.0.1", port)
    except MasterNotFoundError:
        return False


def points_at(c, port):
    i = c.info("replication")
    return i["role"] == "slave" and i["master_host"] == "127.0.0.1" and i["master_port"] == port


def test_sentinels_see_the_replica_and_talk_through_it(spawn_server, tmp_path):
    master = start_master(spawn_server)
    m = master.client()
    replica = start_replica(spawn_server, tmp_path, "replica", master, "replica-priority 42\n")
    r = replica.client()
    m.set("k", "v")
    # The replica has applied the write (offset > 0) before Sentinel first reads its INFO.
    assert wait_until(lambda: r.get("k") == "v", SYNC_S)
    sentinels = start_sentinels(spawn_server, tmp_path, master, 3, 2)
    assert wait_until(lambda: all(replica_seen(s, replica, 42) for s in sentinels), DISCOVER_S), \
        [sentinel_replicas(s) for s in sentinels]
    assert wait_until(lambda: sentinels_known(sentinels), DISCOVER_S)
    for s in sentinels:
        (info,) = [x for x in sentinel_replicas(s) if int(x["port"]) == replica.port]
        assert info["ip"] == "127.0.0.1"
        assert int(info["master-port"]) == master.port
        assert int(info["slave-repl-offset"]) > 0, info
        assert info["replica-announced"] == "1"

    # Each sentinel's connections to the replica: a command link and a pubsub link, named.
    names = [c["name"] for c in r.client_list()]
    assert sum(n.startswith("sentinel-") and n.endswith("-cmd") for n in names) == 3, names
    assert sum(n.startswith("sentinel-") and n.endswith("-pubsub") for n in names) == 3, names
    assert r.execute_command("PUBSUB", "NUMSUB", HELLO) == [HELLO, 3]

    # Every sentinel publishes its hello on the replica too: "ip,port,runid,epoch,master...".
    p = r.pubsub()
    p.subscribe(HELLO)
    senders = set()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and len(senders) < 3:
        msg = p.get_message(timeout=1.0)
        if msg is None or msg["type"] != "message":
            continue
        fields = msg["data"].split(",")
        assert len(fields) == 8
        assert fields[4:7] == [NAME, "127.0.0.1", str(master.port)]
        senders.add(int(fields[1]))
    p.close()
    assert senders == {s.port for s in sentinels}

    # A replica that says replica-priority changed is seen with the new value.
    assert r.config_set("replica-priority", "7") is True
    assert r.info("replication")["slave_priority"] == 7
    assert wait_until(lambda: all(replica_seen(s, replica, 7) for s in sentinels), DISCOVER_S)


def test_failover_promotes_the_replica(spawn_server, tmp_path):
    master = start_master(spawn_server)
    m = master.client()
    # The lower replica-priority wins the election.
    a = start_replica(spawn_server, tmp_path, "a", master, "replica-priority 10\n")
    b = start_replica(spawn_server, tmp_path, "b", master, "replica-priority 50\n")
    ca, cb = a.client(), b.client()
    m.set("before", "1")
    for c in (ca, cb):
        assert wait_until(lambda: c.get("before") == "1", SYNC_S)
    sentinels = start_sentinels(spawn_server, tmp_path, master, 3, 2)
    assert wait_until(lambda: all(replica_seen(s, a, 10) and replica_seen(s, b, 50)
                                  for s in sentinels), DISCOVER_S)
    assert wait_until(lambda: sentinels_known(sentinels), DISCOVER_S)

    # Clients of the replica before the failover: CLIENT KILL TYPE normal / pubsub drops them.
    normal = RawConn(a.port)
    assert normal.cmd("PING") == "PONG"
    sub = RawConn(a.port)
    sub.cmd("SUBSCRIBE", "news")

    master.kill()
    assert wait_until(lambda: all(master_addr(s) == ("127.0.0.1", a.port) for s in sentinels),
                      FAILOVER_S), [master_addr(s) for s in sentinels]
    # The transaction killed the clients of the replicas: new ones from here on.
    ca, cb = a.client(), b.client()

    assert wait_until(calm(lambda: ca.info("replication")["role"] == "master"), 10)
    assert ca.execute_command("ROLE")[0] == "master"
    assert ca.get("before") == "1"
    assert normal.closed(10), "CLIENT KILL TYPE normal did not close the client"
    assert sub.closed(10), "CLIENT KILL TYPE pubsub did not close the subscriber"
    normal.close()
    sub.close()
    # CONFIG REWRITE in the same transaction: the promoted replica's file follows no master.
    assert wait_until(lambda: replicaof_lines(a) == [], 10), conf_lines(a)
    assert ca.config_get("replicaof") == {"replicaof": ""}

    # The other replica is told to follow the new master, and its file says so.
    assert wait_until(calm(lambda: points_at(cb, a.port)), FAILOVER_S), cb.info("replication")
    assert wait_until(lambda: replicaof_lines(b) == [f"replicaof 127.0.0.1 {a.port}"],
                      FAILOVER_S), conf_lines(b)
    assert cb.config_get("replicaof") == {"replicaof": f"127.0.0.1 {a.port}"}
    assert cb.execute_command("ROLE")[1:3] == ["127.0.0.1", a.port]

    # A client that asks Sentinel for the master finds the promoted replica and writes to it.
    sentinel = Sentinel([("127.0.0.1", s.port) for s in sentinels], socket_timeout=5)
    assert wait_until(lambda: discovered(sentinel, a.port), DISCOVER_S)
    w = sentinel.master_for(NAME, socket_timeout=5, decode_responses=True)
    assert w.set("after", "2") is True
    assert w.get("before") == "1"
    assert ca.get("after") == "2"


def test_replica_follows_the_promoted_redis_replica(spawn_server, tmp_path):
    """A redis-server replica (priority 1) is promoted; the replica under test is told
    REPLICAOF the new master by Sentinel, continues its history there (PSYNC2: +CONTINUE, no
    full sync) and applies the writes a Sentinel client makes to the new master."""
    master = start_master(spawn_server)
    m = master.client()
    promoted = start_replica(spawn_server, tmp_path, "redis", master, "replica-priority 1\n",
                             kind="redis")
    follower = start_replica(spawn_server, tmp_path, "follower", master, "replica-priority 100\n")
    cp, cf = promoted.client(), follower.client()
    for i in range(100):
        m.set(f"k{i}", i)
    assert wait_until(lambda: cf.get("k99") == "99" and cp.get("k99") == "99", SYNC_S)
    (sentinel,) = start_sentinels(spawn_server, tmp_path, master, 1, 1)
    assert wait_until(lambda: replica_seen(sentinel, promoted, 1) and
                      replica_seen(sentinel, follower, 100), DISCOVER_S)

    master.kill()
    assert wait_until(lambda: master_addr(sentinel) == ("127.0.0.1", promoted.port), FAILOVER_S)
    # The transaction killed the clients of the replicas: new ones from here on.
    cp, cf = promoted.client(), follower.client()
    assert wait_until(calm(lambda: points_at(cf, promoted.port) and link_up(cf)), FAILOVER_S), \
        cf.info("replication")
    stats = cp.info("stats")
    assert stats["sync_partial_ok"] == 1 and stats["sync_full"] == 0, stats
    assert replicaof_lines(follower) == [f"replicaof 127.0.0.1 {promoted.port}"]

    client = Sentinel([("127.0.0.1", sentinel.port)], socket_timeout=5)
    assert wait_until(lambda: discovered(client, promoted.port), DISCOVER_S)
    w = client.master_for(NAME, socket_timeout=5, decode_responses=True)
    w.set("after", "failover")
    w.incr("k5")
    assert wait_until(calm(lambda: cf.get("after") == "failover" and cf.get("k5") == "6"), SYNC_S)
    assert cf.dbsize() == 101
    # Sentinel keeps seeing it, now as a replica of the new master.
    assert wait_until(lambda: replica_seen(sentinel, follower, 100), DISCOVER_S)


def test_failover_with_renamed_commands(spawn_server, tmp_path):
    """rename-command on the replica, `sentinel rename-command` on the sentinel: the failover's
    transaction uses the new names (SLAVEOF and CONFIG here) and works as before."""
    renames = "rename-command SLAVEOF sl4v3of\nrename-command CONFIG c0nfig\n"
    master = start_master(spawn_server)
    replica = start_replica(spawn_server, tmp_path, "replica", master, renames)
    r = replica.client()
    with pytest.raises(redis.ResponseError) as e:
        r.config_get("replicaof")
    assert str(e.value).startswith("unknown command 'CONFIG'")
    assert r.execute_command("c0nfig", "GET", "replicaof") == ["replicaof",
                                                              f"127.0.0.1 {master.port}"]
    (sentinel,) = start_sentinels(
        spawn_server, tmp_path, master, 1, 1,
        f"sentinel rename-command {NAME} SLAVEOF sl4v3of\n"
        f"sentinel rename-command {NAME} CONFIG c0nfig\n")
    assert wait_until(lambda: replica_seen(sentinel, replica, 100), DISCOVER_S)
    master.kill()
    assert wait_until(lambda: master_addr(sentinel) == ("127.0.0.1", replica.port), FAILOVER_S)
    r = replica.client()
    assert wait_until(calm(lambda: r.info("replication")["role"] == "master"), 10)
    # c0nfig REWRITE ran: no replicaof line, the rename-command lines kept.
    assert wait_until(lambda: replicaof_lines(replica) == [], 10), conf_lines(replica)
    assert "rename-command SLAVEOF sl4v3of" in conf_lines(replica)
    assert r.set("after", "1") is True


def test_rename_command_in_the_config_file(spawn_server, tmp_path):
    master = start_master(spawn_server)
    with RawConn(spawn_server().port) as c:  # the same server without rename-command
        plain = c.cmd("COMMAND", "COUNT")
    s = start_replica(spawn_server, tmp_path, "renamed", master,
                      'rename-command CONFIG c0nfig\nrename-command FLUSHALL ""\n')
    raw = RawConn(s.port)
    assert raw.cmd("CONFIG", "GET", "port") == RespError(
        "ERR unknown command 'CONFIG', with args beginning with: 'GET' 'port' ")
    assert raw.cmd("FLUSHALL") == RespError(
        "ERR unknown command 'FLUSHALL', with args beginning with: ")
    assert raw.cmd("c0nfig", "GET", "replica-priority") == [b"replica-priority", b"100"]
    # COMMAND shows the command under its own name, finds it by the new one, drops the disabled.
    assert raw.cmd("COMMAND", "INFO", "config", "flushall")[:2] == [None, None]
    assert raw.cmd("COMMAND", "INFO", "c0nfig")[0][0] == b"config"
    assert raw.cmd("COMMAND", "COUNT") == plain - 1
    raw.close()


def test_failover_when_the_master_is_the_server_under_test(spawn_server, tmp_path):
    """Master and replicas are all the server under test: Sentinel discovers the replicas from
    the master's INFO, promotes the one with the lower priority when the master is killed, and
    the other follows it and syncs from it (a Lavik master serving a Lavik replica)."""
    master = spawn_server(extra_args=["--repl-diskless-sync-delay", "0"])
    m = master.client()
    a = start_replica(spawn_server, tmp_path, "a", master, "replica-priority 10\n")
    b = start_replica(spawn_server, tmp_path, "b", master, "replica-priority 50\n")
    ca, cb = a.client(), b.client()
    for i in range(50):
        m.set(f"k{i}", i)
    assert wait_until(lambda: ca.get("k49") == "49" and cb.get("k49") == "49", SYNC_S)
    (sentinel,) = start_sentinels(spawn_server, tmp_path, master, 1, 1)
    assert wait_until(lambda: replica_seen(sentinel, a, 10) and replica_seen(sentinel, b, 50),
                      DISCOVER_S), sentinel_replicas(sentinel)

    master.kill()
    assert wait_until(lambda: master_addr(sentinel) == ("127.0.0.1", a.port), FAILOVER_S)
    ca, cb = a.client(), b.client()  # the failover's CLIENT KILL dropped the old ones
    assert wait_until(calm(lambda: points_at(cb, a.port) and link_up(cb)), FAILOVER_S), \
        cb.info("replication")
    client = Sentinel([("127.0.0.1", sentinel.port)], socket_timeout=5)
    assert wait_until(lambda: discovered(client, a.port), DISCOVER_S)
    w = client.master_for(NAME, socket_timeout=5, decode_responses=True)
    w.set("after", "failover")
    w.incr("k5")
    assert wait_until(calm(lambda: cb.get("after") == "failover" and cb.get("k5") == "6"), SYNC_S)
    assert cb.dbsize() == 51
    assert wait_until(lambda: ca.info("replication")["connected_slaves"] == 1, SYNC_S)
