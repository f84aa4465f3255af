"""16 databases: SELECT, MOVE, SWAPDB, COPY ... DB, and every keyspace command per database
(DBSIZE, KEYS, SCAN, RANDOMKEY, FLUSHDB, INFO keyspace), across workers, in MULTI, in scripts,
for blocked clients and WATCH, and (lavik only) across restarts."""
import threading
import time

import pytest
import redis

from conftest import RespError, err, spread_keys


def db(server, n, **kwargs):
    return redis.Redis(host=server.host, port=server.port, db=n, decode_responses=True,
                       socket_timeout=10, **kwargs)


@pytest.fixture
def dbs(server):
    server.check_alive()
    clients = [db(server, n) for n in range(16)]
    clients[0].flushall()
    yield clients
    clients[0].flushall()
    for c in clients:
        c.close()


def test_select_range_and_isolation(dbs, raw):
    c = raw()
    for n in (0, 1, 15):
        assert c.cmd("SELECT", str(n)) == "OK"
    for bad in ("16", "-1"):
        assert c.cmd("SELECT", bad) == RespError("ERR DB index is out of range")
    for bad in ("x", "1.5"):
        assert c.cmd("SELECT", bad) == RespError("ERR value is not an integer or out of range")
    assert c.cmd("SELECT", "99999999999") == RespError(
        "ERR value is out of range, value must between -2147483648 and 2147483647")
    d0, d1, d15 = dbs[0], dbs[1], dbs[15]
    d0.set("k", "zero")
    d1.set("k", "one")
    d15.rpush("k", "a", "b")
    assert d0.get("k") == "zero" and d1.get("k") == "one"
    assert d15.type("k") == "list" and d15.lrange("k", 0, -1) == ["a", "b"]
    assert dbs[2].exists("k") == 0
    assert [d.dbsize() for d in dbs[:3]] == [1, 1, 0]
    assert dbs[15].dbsize() == 1
    d1.delete("k")
    assert d0.get("k") == "zero" and d1.get("k") is None


def test_keyspace_commands_per_db(dbs):
    d0, d3 = dbs[0], dbs[3]
    for i in range(50):
        d0.set(f"a{i}", i)
    for i in range(7):
        d3.set(f"b{i}", i)
    d3.expire("b0", 100)
    assert sorted(d3.keys("*")) == sorted(f"b{i}" for i in range(7))
    assert d3.keys("a*") == []
    assert sorted(d3.scan_iter(count=3)) == sorted(f"b{i}" for i in range(7))
    assert sorted(d0.scan_iter(match="a1*")) == sorted(
        f"a{i}" for i in range(50) if str(i).startswith("1"))
    for _ in range(20):
        assert d3.randomkey().startswith("b")
    assert dbs[4].randomkey() is None
    assert dbs[4].keys("*") == [] and list(dbs[4].scan_iter()) == []
    info = d0.info("keyspace")
    assert info["db0"]["keys"] == 50 and info["db0"]["expires"] == 0
    assert info["db3"]["keys"] == 7 and info["db3"]["expires"] == 1
    assert "db4" not in info
    # FLUSHDB empties only the selected database; FLUSHALL every one.
    assert d3.flushdb() is True
    assert d3.dbsize() == 0 and d0.dbsize() == 50
    assert d0.get("a7") == "7"
    d3.set("again", 1)
    assert d3.get("again") == "1"
    assert d0.flushdb() is True
    assert d0.dbsize() == 0 and d3.dbsize() == 1
    d0.set("x", 1)
    assert d0.flushall() is True
    assert d0.dbsize() == 0 and d3.dbsize() == 0


def test_move(dbs):
    d0, d1 = dbs[0], dbs[1]
    d0.set("s", "v", ex=100)
    assert d0.move("s", 1) is True
    assert d0.exists("s") == 0 and d1.get("s") == "v" and 0 < d1.ttl("s") <= 100
    assert d0.move("missing", 1) is False
    d0.set("s", "other")
    assert d0.move("s", 1) is False  # the destination has the key: nothing moves
    assert d0.get("s") == "other" and d1.get("s") == "v"
    d0.hset("h", mapping={"f": "1", "g": "2"})
    d0.rpush("l", *range(300))
    d0.sadd("st", *range(100))
    d0.zadd("z", {"m": 1.5, "n": 2})
    d0.xadd("x", {"f": "v"}, id="1-1")
    for k in ("h", "l", "st", "z", "x"):
        assert d0.move(k, 5) is True
    d5 = dbs[5]
    assert d5.hgetall("h") == {"f": "1", "g": "2"}
    assert d5.lrange("l", 0, -1) == [str(i) for i in range(300)]
    assert d5.scard("st") == 100
    assert d5.zrange("z", 0, -1, withscores=True) == [("m", 1.5), ("n", 2.0)]
    assert d5.xrange("x") == [("1-1", {"f": "v"})]
    assert d0.dbsize() == 1
    for args, text in [(("MOVE", "s", "0"), "source and destination objects are the same"),
                       (("MOVE", "s", "16"), "DB index is out of range"),
                       (("MOVE", "s", "-1"), "DB index is out of range"),
                       (("MOVE", "s", "x"), "value is not an integer or out of range"),
                       (("MOVE", "s", "99999999999"),
                        "value is out of range, value must between -2147483648 and 2147483647"),
                       (("COPY", "s", "t", "DB", "99999999999"),
                        "value is out of range, value must between -2147483648 and 2147483647"),
                       (("MOVE", "s"), "wrong number of arguments for 'move' command")]:
        with pytest.raises(redis.ResponseError) as e:
            d0.execute_command(*args)
        assert err(e) == text, args


def test_move_across_workers(mr):
    mr.flushall()
    keys = spread_keys(4, "mv")
    for k in keys:
        mr.set(k, k)
        assert mr.move(k, 2) == 1
    c2 = redis.Redis(host=mr.connection_pool.connection_kwargs["host"],
                     port=mr.connection_pool.connection_kwargs["port"], db=2,
                     decode_responses=True)
    assert sorted(c2.keys("*")) == sorted(keys)
    assert mr.dbsize() == 0
    c2.flushall()
    c2.close()


def test_copy_to_db(dbs):
    d0, d7 = dbs[0], dbs[7]
    d0.set("a", "1")
    assert d0.execute_command("COPY", "a", "a", "DB", "7") == 1
    assert d7.get("a") == "1" and d0.get("a") == "1"
    d0.set("a", "2")
    assert d0.execute_command("COPY", "a", "a", "DB", "7") == 0
    assert d0.execute_command("COPY", "a", "a", "DB", "7", "REPLACE") == 1
    assert d7.get("a") == "2"
    assert d0.execute_command("COPY", "a", "b", "DB", "0") == 1 and d0.get("b") == "2"


def test_swapdb(dbs):
    d0, d1, d2 = dbs[0], dbs[1], dbs[2]
    d0.set("k", "zero")
    d0.set("only0", "1")
    d1.set("k", "one")
    assert d0.swapdb(0, 1) is True
    assert d0.get("k") == "one" and d1.get("k") == "zero"
    assert d1.get("only0") == "1" and d0.exists("only0") == 0
    assert d0.dbsize() == 1 and d1.dbsize() == 2
    info = d0.info("keyspace")
    assert info["db0"]["keys"] == 1 and info["db1"]["keys"] == 2
    assert d0.swapdb(1, 2) is True
    assert d2.get("only0") == "1" and d1.dbsize() == 0
    assert d0.swapdb(3, 3) is True
    # Writes land where the map says: db 2 now holds what db 0 had first.
    d2.set("new", "x")
    assert d2.dbsize() == 3
    d2.flushdb()
    assert d2.dbsize() == 0 and d0.get("k") == "one"
    for args, text in [(("SWAPDB", "x", "1"), "invalid first DB index"),
                       (("SWAPDB", "1", "y"), "invalid second DB index"),
                       (("SWAPDB", "1", "99999999999"), "invalid second DB index"),
                       (("SWAPDB", "0", "16"), "DB index is out of range"),
                       (("SWAPDB", "-1", "0"), "DB index is out of range")]:
        with pytest.raises(redis.ResponseError) as e:
            d0.execute_command(*args)
        assert err(e) == text, args
    d0.swapdb(0, 2)  # back to a tidy map is not needed; FLUSHALL empties every database
    d0.flushall()
    assert all(d.dbsize() == 0 for d in dbs)


def test_select_in_multi_and_client_list(dbs, server):
    c = db(server, 0)
    p = c.pipeline(transaction=True)
    p.select(4) if hasattr(p, "select") else p.execute_command("SELECT", "4")
    p.set("m", "in4")
    p.execute()
    assert dbs[4].get("m") == "in4" and dbs[0].exists("m") == 0
    # The SELECT inside MULTI stays with the connection after EXEC.
    conn = c.connection_pool.get_connection("GET")
    try:
        conn.send_command("MULTI")
        assert conn.read_response() in (b"OK", "OK")
        for cmd in (("SELECT", "6"), ("SET", "n", "in6")):
            conn.send_command(*cmd)
            assert conn.read_response() in (b"QUEUED", "QUEUED")
        conn.send_command("EXEC")
        assert conn.read_response() is not None
        conn.send_command("GET", "n")
        assert conn.read_response() in (b"in6", "in6")
        conn.send_command("CLIENT", "INFO")
        info = conn.read_response()
        info = info.decode() if isinstance(info, bytes) else info
        assert " db=6 " in info
        conn.send_command("RESET")
        conn.read_response()
        conn.send_command("CLIENT", "INFO")
        info = conn.read_response()
        info = info.decode() if isinstance(info, bytes) else info
        assert " db=0 " in info
    finally:
        c.connection_pool.release(conn)
    assert dbs[6].get("n") == "in6"
    c.close()


def test_select_in_script(dbs):
    d0 = dbs[0]
    script = "redis.call('SELECT', ARGV[1]); redis.call('SET', KEYS[1], 'x'); " \
             "return redis.call('DBSIZE')"
    assert d0.eval(script, 1, "sk", "9") == 1
    assert dbs[9].get("sk") == "x"
    assert d0.exists("sk") == 0
    # The script's SELECT does not change the caller's database (Redis 7.0).
    d0.set("after", "1")
    assert d0.get("after") == "1" and dbs[9].exists("after") == 0
    assert d0.eval("return redis.call('GET', KEYS[1])", 1, "after") == "1"
    assert dbs[9].eval("return KEYS[1]", 1, "name") == "name"


def test_blocking_and_replies_name_client_keys(dbs, server):
    d0, d1 = dbs[0], dbs[1]
    got = []
    blocker = db(server, 1)

    def run():
        got.append(blocker.blpop("q", timeout=5))

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    d0.rpush("q", "wrong-db")  # another database's q does not wake it
    time.sleep(0.3)
    assert t.is_alive()
    d1.rpush("q", "right")
    t.join(6)
    assert got == [("q", "right")]
    assert d0.lrange("q", 0, -1) == ["wrong-db"]
    d1.rpush("l2", "a")
    assert d1.lmpop(1, "l2", direction="LEFT") == ["l2", ["a"]]
    d1.zadd("z", {"m": 1})
    assert d1.bzpopmin("z", timeout=1) == ("z", "m", 1.0)
    d1.xadd("s", {"f": "v"}, id="1-1")
    assert d1.xread({"s": "0"}) == [["s", [("1-1", {"f": "v"})]]]
    blocker.close()


def test_watch_is_per_db(dbs, server):
    c = db(server, 1)
    with c.pipeline() as p:
        p.watch("w")
        dbs[0].set("w", "db0 write")  # not the watched key
        p.multi()
        p.set("w", "mine")
        assert p.execute() == [True]
    with c.pipeline() as p:
        p.watch("w")
        dbs[1].set("w", "db1 write")
        p.multi()
        p.set("w", "lost")
        with pytest.raises(redis.WatchError):
            p.execute()
    assert dbs[1].get("w") == "db1 write"
    c.close()


def test_sort_patterns_use_the_db(dbs):
    d2 = dbs[2]
    d2.rpush("ids", 3, 1, 2)
    d2.mset({"w_1": 30, "w_2": 20, "w_3": 10, "n_1": "one", "n_2": "two", "n_3": "three"})
    dbs[0].mset({"w_1": 1, "w_2": 2, "w_3": 3})
    assert d2.sort("ids", by="w_*", get="n_*") == ["three", "two", "one"]
    assert d2.sort("ids", by="w_*", store="out") == 3
    assert d2.lrange("out", 0, -1) == ["3", "2", "1"] and dbs[0].exists("out") == 0


def test_keys_that_look_like_the_prefix(server):
    c = redis.Redis(host=server.host, port=server.port, db=0)
    c1 = redis.Redis(host=server.host, port=server.port, db=1)
    c.flushall()
    odd = b"\xff\xfd\x01abc"
    c.set(odd, b"db0")
    c1.set(b"abc", b"db1")
    assert c.get(odd) == b"db0" and c1.get(b"abc") == b"db1"
    assert c.keys(b"*") == [odd] and c1.keys(b"*") == [b"abc"]
    assert c.exists(b"abc") == 0 and c1.exists(odd) == 0
    c.flushall()
    c.close()
    c1.close()


@pytest.mark.lavik_only
@pytest.mark.parametrize("how", ["sigterm", "kill9"])
def test_databases_survive_restart(spawn_server, tmp_path, how):
    workdir = tmp_path / "w"
    workdir.mkdir()
    s = spawn_server(threads=2, workdir=workdir, extra_args=["--appendfsync", "always"])
    c = [redis.Redis(host=s.host, port=s.port, db=n, decode_responses=True) for n in range(4)]
    for n in range(4):
        for i in range(20):
            c[n].set(f"k{i}", f"{n}:{i}")
    c[2].flushdb()
    c[2].set("late", "after-flushdb")
    c[0].swapdb(0, 3)  # db 0 now holds db 3's keys and the other way round
    c[1].move("k5", 2)
    expect = {n: {k: c[n].get(k) for k in c[n].keys("*")} for n in range(4)}
    assert len(expect[2]) == 2 and expect[0]["k1"] == "3:1" and expect[3]["k1"] == "0:1"
    if how == "kill9":
        s.kill()
    else:
        s.terminate()
    s2 = spawn_server(threads=2, workdir=workdir, port=s.port,
                      extra_args=["--appendfsync", "always"])
    c = [redis.Redis(host=s2.host, port=s2.port, db=n, decode_responses=True) for n in range(4)]
    got = {n: {k: c[n].get(k) for k in c[n].keys("*")} for n in range(4)}
    assert got == expect
    info = c[0].info("keyspace")
    assert {k: v["keys"] for k, v in info.items()} == {f"db{n}": len(expect[n]) for n in range(4)}


def test_keyspace_events_name_the_db(dbs, server):
    sub = db(server, 0)
    old = sub.config_get("notify-keyspace-events")["notify-keyspace-events"]
    sub.config_set("notify-keyspace-events", "KEg$")
    try:
        p = sub.pubsub()
        p.psubscribe("__key*__:*")
        assert p.get_message(timeout=5)["type"] == "psubscribe"
        dbs[5].set("k", "v")
        dbs[5].move("k", 6)
        seen = []
        deadline = time.monotonic() + 5
        while len(seen) < 6 and time.monotonic() < deadline:
            m = p.get_message(timeout=1)
            if m is not None and m["type"] == "pmessage":
                seen.append((m["channel"], m["data"]))
        assert seen == [("__keyspace@5__:k", "set"), ("__keyevent@5__:set", "k"),
                        ("__keyspace@5__:k", "move_from"), ("__keyevent@5__:move_from", "k"),
                        ("__keyspace@6__:k", "move_to"), ("__keyevent@6__:move_to", "k")]
        p.close()
    finally:
        sub.config_set("notify-keyspace-events", old)
        sub.close()


def test_tracking_in_another_db(server):
    c = db(server, 3)
    c.flushall()
    c.set("t", "0")
    inv = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    p = inv.pubsub()
    p.subscribe("__redis__:invalidate")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    cid = next(cl["id"] for cl in inv.client_list() if cl["sub"] == "1")
    tracker = db(server, 3)
    tracker.execute_command("CLIENT", "TRACKING", "ON", "REDIRECT", cid)
    assert tracker.get("t") == "0"
    c.set("t", "1")
    m = None
    deadline = time.monotonic() + 5
    while m is None and time.monotonic() < deadline:
        m = p.get_message(timeout=1)
    assert m is not None and m["data"] == ["t"]  # the client's key, not its stored form
    p.close()
    for x in (c, inv, tracker):
        x.close()
