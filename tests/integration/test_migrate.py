"""MIGRATE (and RESTORE-ASKING) between servers: the server under test to itself, to Debian's
redis-server, and redis-server's MIGRATE into the server under test (doc/migrate.md).

Every test spawns its own source and target (with LAVIK_TEST_TARGET=redis the server under test
is redis-server too, so each expectation is what Redis 7.0 does). Every wait is bounded: MIGRATE
timeouts are short and the clients have socket timeouts.
"""

import socket
import threading
import time

import pytest
import redis

from conftest import err, spread_keys
from test_rdb_file import snapshot as rdb_snapshot

ROUTES = ["same", "to_redis", "from_redis"]
BUSY = "Target instance replied with error: BUSYKEY Target key name already exists."


def redis_argv(*extra):
    return ["redis-server", "--port", "{port}", "--save", "", "--appendonly", "no", "--bind",
            "127.0.0.1"] + list(extra)


def client(server, db=0):
    return redis.Redis(host="127.0.0.1", port=server.port, db=db, decode_responses=True,
                       socket_timeout=20)


@pytest.fixture(params=ROUTES)
def pair(request, spawn_server):
    """(source, target) servers for one route."""
    if request.param == "same":
        return spawn_server(), spawn_server()
    if request.param == "to_redis":
        return spawn_server(), spawn_server(argv=redis_argv())
    return spawn_server(argv=redis_argv()), spawn_server()


def fill_every_type(c, prefix=""):
    c.set(prefix + "str", "hello")
    c.set(prefix + "int", 12345)
    c.set(prefix + "ttl", "soon", px=60_000)
    c.rpush(prefix + "list", *[f"e{i}" for i in range(20)])
    c.rpush(prefix + "biglist", *[f"element-{i}" * 3 for i in range(3000)])
    c.sadd(prefix + "set", *[f"m{i}" for i in range(10)])
    c.sadd(prefix + "intset", *range(50))
    c.zadd(prefix + "zset", {f"z{i}": i * 1.5 for i in range(15)})
    c.hset(prefix + "hash", mapping={f"f{i}": f"v{i}" for i in range(12)})
    c.hset(prefix + "bighash", mapping={f"field{i}": "x" * 40 for i in range(2000)})
    for i in range(5):
        c.xadd(prefix + "stream", {"n": str(i)}, id=f"{i + 1}-0")
    c.xgroup_create(prefix + "stream", "g", id="0")
    c.xreadgroup("g", "alice", {prefix + "stream": ">"}, count=2)


KEYS = ["str", "int", "ttl", "list", "biglist", "set", "intset", "zset", "hash", "bighash",
        "stream"]


def test_every_type_moves_with_its_ttl(pair):
    src, dst = pair
    s, d = client(src), client(dst)
    fill_every_type(s)
    before = rdb_snapshot(src)  # every key: type, value (streams with groups), has a TTL
    assert sorted(before) == sorted(KEYS)
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS",
                             *KEYS) == "OK"
    assert s.exists(*KEYS) == 0
    assert rdb_snapshot(dst) == before
    assert 55_000 < d.pttl("ttl") <= 60_000
    assert d.pttl("str") == -1


def test_single_key_form_copy_and_replace(pair):
    src, dst = pair
    s, d = client(src), client(dst)
    s.set("k", "v1")
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000, "COPY") == "OK"
    assert s.get("k") == "v1" and d.get("k") == "v1"
    # Without REPLACE the target refuses an existing key, and the source keeps it.
    s.set("k", "v2")
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000)
    assert err(e) == BUSY
    assert s.get("k") == "v2" and d.get("k") == "v1"
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000, "REPLACE") == "OK"
    assert s.exists("k") == 0 and d.get("k") == "v2"


def test_keys_partly_busy_moves_the_others(pair):
    src, dst = pair
    s, d = client(src), client(dst)
    s.mset({"a": "1", "b": "2", "c": "3"})
    d.set("b", "theirs")
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", "a", "b", "c")
    assert err(e) == BUSY
    # The acknowledged keys left the source; the refused one stayed.
    assert s.exists("a") == 0 and s.get("b") == "2" and s.exists("c") == 0
    assert d.get("a") == "1" and d.get("b") == "theirs" and d.get("c") == "3"


def test_nokey_and_missing_keys(pair):
    src, dst = pair
    s, d = client(src), client(dst)
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "nope", 0, 1000) == "NOKEY"
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 1000, "KEYS", "x",
                             "y") == "NOKEY"
    s.set("y", "1")
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 1000, "KEYS", "x",
                             "y") == "OK"
    assert d.get("y") == "1" and d.exists("x") == 0


def test_destination_db_and_source_db(pair):
    src, dst = pair
    s3 = client(src, db=3)
    s3.set("k", "in three")
    assert s3.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 5, 5000) == "OK"
    assert s3.exists("k") == 0
    assert client(dst, db=5).get("k") == "in three"
    assert client(dst, db=0).exists("k") == 0
    # The cached connection has SELECTed 5; a MIGRATE to db 0 must select again.
    s3.set("k2", "zero")
    assert s3.execute_command("MIGRATE", "127.0.0.1", dst.port, "k2", 0, 5000) == "OK"
    assert client(dst, db=0).get("k2") == "zero"


def test_argument_errors(spawn_server):
    src = spawn_server()
    s = client(src)
    s.set("k", "v")
    cases = [
        (("127.0.0.1", 1, "k", 0, 1000, "bogus"), "syntax error"),
        (("127.0.0.1", 1, "k", 0, 1000, "AUTH"), "syntax error"),
        (("127.0.0.1", 1, "k", 0, 1000, "AUTH2", "u"), "syntax error"),
        (("127.0.0.1", 1, "k", 0, 1000, "KEYS", "k"),
         "When using MIGRATE KEYS option, the key argument must be set to the empty string"),
        (("127.0.0.1", 1, "k", 0, "soon"), "value is not an integer or out of range"),
        (("127.0.0.1", 1, "k", "zero", 1000), "value is not an integer or out of range"),
    ]
    for args, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            s.execute_command("MIGRATE", *args)
        assert err(e) == text, args
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "127.0.0.1", 1, "k", 0)
    assert "wrong number of arguments" in err(e)
    assert s.get("k") == "v"


@pytest.mark.parametrize("route", ROUTES)
def test_auth(route, spawn_server):
    if route == "from_redis":
        src, dst = spawn_server(argv=redis_argv()), spawn_server(extra_args=["--requirepass", "pw"])
    elif route == "to_redis":
        src, dst = spawn_server(), spawn_server(argv=redis_argv("--requirepass", "pw"))
    else:
        src, dst = spawn_server(), spawn_server(extra_args=["--requirepass", "pw"])
    s = client(src)
    d = redis.Redis(host="127.0.0.1", port=dst.port, password="pw", decode_responses=True,
                    socket_timeout=20)
    s.set("k", "v")
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000)
    assert err(e) == ("Target instance replied with error: NOAUTH Authentication required.")
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000, "AUTH", "wrong")
    assert err(e) == ("Target instance replied with error: WRONGPASS invalid username-password "
                      "pair or user is disabled.")
    assert s.get("k") == "v" and d.exists("k") == 0
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000, "AUTH",
                             "pw") == "OK"
    assert s.exists("k") == 0 and d.get("k") == "v"
    s.set("k2", "v2")
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "k2", 0, 5000, "AUTH2",
                             "default", "pw") == "OK"
    assert d.get("k2") == "v2"


def test_target_down_is_ioerr(spawn_server):
    """Redis 7.0's blocking connect reports success even when the connection is refused or times
    out; the write that follows fails, so a target that is down is a write error."""
    src = spawn_server()
    s = client(src)
    s.set("k", "v")
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    t0 = time.monotonic()
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "127.0.0.1", port, "k", 0, 1000)
    assert err(e) == "IOERR error or timeout writing to target instance"
    assert time.monotonic() - t0 < 2.0
    assert s.get("k") == "v"
    # A host that does not resolve: nothing to connect to.
    with pytest.raises(redis.ResponseError) as e:
        s.execute_command("MIGRATE", "no-such-host.invalid", 6379, "k", 0, 1000)
    assert err(e) == "IOERR error or timeout connecting to the client"
    assert s.get("k") == "v"


def test_silent_target_times_out(spawn_server):
    """A target that accepts and never answers: IOERR within the timeout, key kept."""
    src = spawn_server()
    s = client(src)
    s.set("k", "v")
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    port = lsock.getsockname()[1]
    held = []
    stop = threading.Event()

    def accept():
        lsock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(lsock.accept()[0])
            except OSError:
                pass

    th = threading.Thread(target=accept, daemon=True)
    th.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(redis.ResponseError) as e:
            s.execute_command("MIGRATE", "127.0.0.1", port, "k", 0, 700)
        elapsed = time.monotonic() - t0
        assert err(e) == "IOERR error or timeout reading to target instance"
        assert 0.6 < elapsed < 3.0
        assert s.get("k") == "v"
    finally:
        stop.set()
        th.join(timeout=5)
        for c in held:
            c.close()
        lsock.close()


@pytest.mark.lavik_only
def test_other_clients_served_while_migrate_waits(spawn_server):
    """Redis blocks every client while MIGRATE waits for its target. Lavik's worker keeps
    serving: the wait is an io_uring completion. Only the migrated keys' shard waits (its lock
    is held from the read to the deletion); keyless commands and other shards' keys go on."""
    src = spawn_server(threads=2)
    s = client(src)
    moved, other = spread_keys(2, "mig")
    s.set(moved, "v")
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    port = lsock.getsockname()[1]
    result = {}

    def run():
        try:
            client(src).execute_command("MIGRATE", "127.0.0.1", port, moved, 0, 1500)
        except redis.ResponseError as e:
            result["err"] = str(e)

    th = threading.Thread(target=run)
    th.start()
    try:
        time.sleep(0.3)
        t0 = time.monotonic()
        assert s.ping()
        assert s.incr(other) == 1
        assert time.monotonic() - t0 < 0.5
        assert th.is_alive()  # the MIGRATE was still waiting meanwhile
    finally:
        th.join(timeout=10)
        lsock.close()
    assert result.get("err") == "IOERR error or timeout reading to target instance"
    assert s.get(moved) == "v"


def test_cached_connection_survives_target_restart(spawn_server):
    src = spawn_server()
    dst = spawn_server()
    s = client(src)
    s.set("a", "1")
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "a", 0, 2000) == "OK"
    port = dst.port
    dst.terminate()
    dst2 = spawn_server(port=port)
    s.set("b", "2")
    # The cached socket is dead: MIGRATE notices, reconnects once and succeeds.
    assert s.execute_command("MIGRATE", "127.0.0.1", port, "b", 0, 2000) == "OK"
    assert client(dst2).get("b") == "2"


def test_restore_asking_is_restore(spawn_server):
    srv = spawn_server()
    c = client(srv)
    c.set("k", "v")
    payload = redis.Redis(host="127.0.0.1", port=srv.port).dump("k")
    raw = redis.Redis(host="127.0.0.1", port=srv.port)
    assert raw.execute_command("RESTORE-ASKING", "k2", 0, payload) == b"OK"
    assert c.get("k2") == "v"
    with pytest.raises(redis.ResponseError) as e:
        raw.execute_command("RESTORE-ASKING", "k2", 0, payload)
    assert err(e) == "BUSYKEY Target key name already exists."
    assert raw.execute_command("RESTORE-ASKING", "k2", 5000, payload, "REPLACE") == b"OK"
    assert 0 < c.pttl("k2") <= 5000
    with srv.raw() as conn:
        info = conn.cmd("COMMAND", "INFO", "restore-asking")[0]
    # [name, arity, flags, first, last, step, ...]: Redis's flags and arity.
    assert [info[1], sorted(str(f) for f in info[2]), info[3:6]] == \
        [-4, ["asking", "denyoom", "write"], [1, 1, 1]]
