"""MULTI / EXEC / DISCARD / WATCH / UNWATCH, as Redis 7.0 behaves, with keys on several workers.

Replies and error texts are checked byte for byte on raw connections; the cross-worker tests run
against servers with 2 and 4 worker threads and use {hash tags} that land on different workers.
"""

import threading
import time

import pytest
import redis

from conftest import RespError, crc16

EXECABORT = RespError("EXECABORT Transaction discarded because of previous errors.")


def tag_for_shard(shard, shards, prefix="t"):
    """A {hash tag} whose slot lands on `shard` of `shards` contiguous slot ranges."""
    i = 0
    while True:
        tag = f"{prefix}{i}"
        if (crc16(tag.encode()) % 16384) * shards // 16384 == shard:
            return "{" + tag + "}"
        i += 1


def keys_on_different_shards(shards, name="k"):
    """One key per shard (every shard of a `shards`-worker server)."""
    return [tag_for_shard(s, shards) + name for s in range(shards)]


def exec_bytes(c):
    """The exact bytes of EXEC's reply on a raw connection."""
    c.send_command("EXEC")
    return c.reply_bytes()


# --------------------------------------------------------------------------- replies and errors


def test_multi_exec_replies(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("INCR", "a") == "QUEUED"
    assert c.cmd("GET", "a") == "QUEUED"
    assert exec_bytes(c) == b"*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n"


def test_empty_transaction(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert exec_bytes(c) == b"*0\r\n"


def test_nested_multi_is_an_error_but_keeps_the_transaction(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("MULTI") == RespError("ERR MULTI calls can not be nested")
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]


def test_watch_inside_multi_is_an_error_but_keeps_the_transaction(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("WATCH", "a") == RespError("ERR WATCH inside MULTI is not allowed")
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == ["PONG"]


def test_exec_and_discard_without_multi(raw):
    c = raw()
    assert c.cmd("EXEC") == RespError("ERR EXEC without MULTI")
    assert c.cmd("DISCARD") == RespError("ERR DISCARD without MULTI")


def test_unknown_command_aborts_exec(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("NOSUCHCMD", "x") == RespError(
        "ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' ")
    assert c.cmd("EXEC") == EXECABORT
    assert c.cmd("EXISTS", "a") == 0
    assert c.cmd("EXEC") == RespError("ERR EXEC without MULTI")


def test_arity_error_aborts_exec(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("GET") == RespError("ERR wrong number of arguments for 'get' command")
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("EXEC") == EXECABORT
    assert c.cmd("EXISTS", "a") == 0


def test_subcommand_errors_abort_exec(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("CLIENT") == RespError("ERR wrong number of arguments for 'client' command")
    assert c.cmd("CONFIG", "FOO") == RespError(
        "ERR unknown subcommand 'FOO'. Try CONFIG HELP.")
    assert c.cmd("EXEC") == EXECABORT


def test_runtime_errors_stay_inside_the_array(raw):
    c = raw()
    assert c.cmd("SET", "s", "notanumber") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("INCR", "s") == "QUEUED"
    assert c.cmd("SET", "b", "1") == "QUEUED"
    assert c.cmd("INCRBY", "b", "x") == "QUEUED"
    assert c.cmd("INCR", "b") == "QUEUED"
    assert c.cmd("EXEC") == [
        RespError("ERR value is not an integer or out of range"), "OK",
        RespError("ERR value is not an integer or out of range"), 2]


def test_discard_drops_the_queue(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("DISCARD") == "OK"
    assert c.cmd("EXISTS", "a") == 0
    assert c.cmd("EXEC") == RespError("ERR EXEC without MULTI")


def test_discard_clears_an_abort_flag(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    c.cmd("NOSUCHCMD")
    assert c.cmd("DISCARD") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == ["PONG"]


def test_monitor_inside_exec_is_refused(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("MONITOR") == "QUEUED"
    assert c.cmd("EXEC") == [RespError("ERR MONITOR isn't allowed for DENY BLOCKING client")]
    assert c.cmd("PING") == "PONG"


def test_no_multi_command_is_refused_and_aborts(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SHUTDOWN") == RespError("ERR Command not allowed inside a transaction")
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == EXECABORT
    assert c.cmd("PING") == "PONG"


def test_subscribe_inside_exec(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SUBSCRIBE", "txch") == "QUEUED"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == [[b"subscribe", b"txch", 1], [b"pong", b""]]
    assert c.cmd("PING") == [b"pong", b""]


def test_quit_inside_multi_closes(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("QUIT") == "OK"
    assert c.closed()
    d = raw()
    assert d.cmd("EXISTS", "a") == 0


def test_resp3_replies(raw):
    c = raw()
    c.cmd("HELLO", "3")
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("GET", "a") == "QUEUED"
    assert exec_bytes(c) == b"*2\r\n+OK\r\n$1\r\n1\r\n"
    assert c.cmd("WATCH", "a") == "OK"
    assert c.cmd("SET", "a", "2") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("GET", "a") == "QUEUED"
    assert exec_bytes(c) == b"_\r\n"


# --------------------------------------------------------------------------- WATCH


def test_watch_no_change_runs(raw):
    c = raw()
    assert c.cmd("SET", "w", "1") == "OK"
    assert c.cmd("WATCH", "w", "other") == "OK"
    assert c.cmd("GET", "w") == b"1"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "w", "2") == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]
    assert c.cmd("GET", "w") == b"2"


def test_watch_change_by_self_before_multi(raw):
    c = raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert c.cmd("SET", "w", "mine") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "w", "tx") == "QUEUED"
    assert exec_bytes(c) == b"*-1\r\n"
    assert c.cmd("GET", "w") == b"mine"


def test_watch_change_by_other_client(raw):
    c, d = raw(), raw()
    assert c.cmd("SET", "w", "1") == "OK"
    assert c.cmd("WATCH", "w") == "OK"
    assert d.cmd("INCR", "w") == 2
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "w", "tx") == "QUEUED"
    assert c.cmd("EXEC") is None
    assert c.cmd("GET", "w") == b"2"


def test_watch_change_after_multi(raw):
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "w", "tx") == "QUEUED"
    assert d.cmd("SET", "w", "other") == "OK"
    assert c.cmd("EXEC") is None
    assert d.cmd("GET", "w") == b"other"


@pytest.mark.parametrize("change", [
    ["DEL", "w"], ["UNLINK", "w"], ["EXPIRE", "w", "100"], ["PERSIST", "w"], ["APPEND", "w", "x"],
    ["RENAME", "src", "w"], ["RENAME", "w", "dst"], ["FLUSHALL"], ["FLUSHDB"], ["SET", "w", "v"],
    ["MSET", "z", "1", "w", "2"], ["GETDEL", "w"], ["SETRANGE", "w", "0", "x"],
])
def test_watch_changes_that_break_it(raw, change):
    c, d = raw(), raw()
    assert c.cmd("SET", "w", "1", "EX", "1000") == "OK"
    assert c.cmd("SET", "src", "s") == "OK"
    assert c.cmd("WATCH", "w") == "OK"
    d.cmd(*change)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") is None


@pytest.mark.parametrize("change", [
    ["DEL", "w"], ["FLUSHALL"], ["EXPIRE", "w", "10"], ["GET", "w"], ["EXISTS", "w"],
    ["SET", "other", "1"], ["RENAME", "nosuch", "w"],
])
def test_watch_things_that_do_not_break_it(raw, change):
    """A watched key that does not exist is not touched by DEL, EXPIRE or FLUSHALL."""
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    d.cmd(*change)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == ["PONG"]


def test_watch_expiry_breaks_it(raw):
    c = raw()
    assert c.cmd("SET", "w", "1", "PX", "100") == "OK"
    assert c.cmd("WATCH", "w") == "OK"
    time.sleep(0.25)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") is None


def test_watch_already_expired_key(raw):
    c = raw()
    assert c.cmd("SET", "w", "1", "PX", "1") == "OK"
    time.sleep(0.05)
    assert c.cmd("WATCH", "w") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == ["PONG"]


def test_unwatch(raw):
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert d.cmd("SET", "w", "x") == "OK"
    assert c.cmd("UNWATCH") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("GET", "w") == "QUEUED"
    assert c.cmd("EXEC") == [b"x"]
    assert c.cmd("UNWATCH") == "OK"


def test_exec_clears_the_watches(raw):
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert d.cmd("SET", "w", "x") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("EXEC") is None
    # The failed EXEC unwatched everything: a new transaction runs.
    assert d.cmd("SET", "w", "y") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("GET", "w") == "QUEUED"
    assert c.cmd("EXEC") == [b"y"]


def test_discard_clears_the_watches(raw):
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("DISCARD") == "OK"
    assert d.cmd("SET", "w", "x") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("EXEC") == ["PONG"]


def test_unwatch_inside_multi_is_queued(raw):
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("UNWATCH") == "QUEUED"
    assert d.cmd("SET", "w", "x") == "OK"
    assert c.cmd("EXEC") is None


def test_watch_same_key_twice_and_many_keys(raw):
    c, d = raw(), raw()
    keys = [f"wk{i}" for i in range(200)]
    assert c.cmd("WATCH", *keys) == "OK"
    assert c.cmd("WATCH", *keys[:10]) == "OK"
    assert d.cmd("SET", keys[150], "x") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("EXEC") is None


def test_closed_watcher_is_forgotten(raw):
    for _ in range(20):
        c = raw()
        assert c.cmd("WATCH", "w", "w2") == "OK"
        c.close()
    d = raw()
    assert d.cmd("SET", "w", "1") == "OK"
    assert d.cmd("WATCH", "w") == "OK"
    assert d.cmd("MULTI") == "OK"
    assert d.cmd("GET", "w") == "QUEUED"
    assert d.cmd("EXEC") == [b"1"]


def test_watcher_flag_does_not_leak_to_other_clients(raw):
    c, d = raw(), raw()
    assert c.cmd("WATCH", "w") == "OK"
    assert d.cmd("WATCH", "x") == "OK"
    assert c.cmd("SET", "w", "1") == "OK"
    assert d.cmd("MULTI") == "OK"
    assert d.cmd("PING") == "QUEUED"
    assert d.cmd("EXEC") == ["PONG"]


# --------------------------------------------------------------------------- redis-py helpers


def test_redis_py_pipeline_transaction(r):
    with r.pipeline(transaction=True) as p:
        p.set("a", 1).incr("a").incrby("a", 5).get("a").mget("a", "nosuch")
        assert p.execute() == [True, 2, 7, "7", ["7", None]]


def test_redis_py_pipeline_runtime_error(r):
    r.set("s", "x")
    with r.pipeline(transaction=True) as p:
        p.incr("s").set("t", "1")
        res = p.execute(raise_on_error=False)
    assert isinstance(res[0], redis.ResponseError)
    assert res[1] is True


def test_redis_py_transaction_helper_retries(r, server):
    r.set("counter", 0)
    other = server.client()
    calls = []

    def incr(pipe):
        value = int(pipe.get("counter"))
        if not calls:
            other.incr("counter")  # the first attempt's watch breaks
        calls.append(value)
        pipe.multi()
        pipe.set("counter", value + 10)

    r.transaction(incr, "counter")
    other.close()
    assert calls == [0, 1]
    assert r.get("counter") == "11"


def test_redis_py_watch_error(r, server):
    other = server.client()
    with r.pipeline() as p:
        p.watch("k")
        other.set("k", "1")
        p.multi()
        p.set("k", "2")
        with pytest.raises(redis.WatchError):
            p.execute()
    other.close()
    assert r.get("k") == "1"


def test_thousand_command_transaction(r):
    with r.pipeline(transaction=True) as p:
        for i in range(1000):
            p.set(f"big:{i}", i)
        assert p.execute() == [True] * 1000
    with r.pipeline(transaction=True) as p:
        for i in range(1000):
            p.incr(f"big:{i}")
        assert p.execute() == [i + 1 for i in range(1000)]


# --------------------------------------------------------------------------- across workers


@pytest.fixture(params=[2, 4], ids=lambda t: f"threads{t}")
def multi_server(request, server_factory):
    s = server_factory(request.param)
    c = s.client()
    c.flushall()
    c.close()
    return s, request.param


def test_transaction_across_workers(multi_server):
    s, n = multi_server
    keys = keys_on_different_shards(n)
    c = s.client()
    with c.pipeline(transaction=True) as p:
        for i, k in enumerate(keys):
            p.set(k, i)
        p.mset({k + ":m": "v" for k in keys})
        p.mget([k + ":m" for k in keys])
        p.dbsize()
        p.rename(keys[0], keys[-1] + "renamed")
        p.delete(*keys)
        p.exists(*(k + ":m" for k in keys))
        res = p.execute()
    assert res == [True] * n + [True, ["v"] * n, 2 * n, True, n - 1, n]
    assert c.get(keys[-1] + "renamed") == "0"
    c.close()


def test_watch_across_workers(multi_server):
    s, n = multi_server
    keys = keys_on_different_shards(n, "w")
    c, d = s.client(), s.client()
    for i, k in enumerate(keys):
        with c.pipeline() as p:
            p.watch(*keys)
            d.set(k, "changed")
            p.multi()
            p.set(keys[0], "tx")
            with pytest.raises(redis.WatchError):
                p.execute()
    with c.pipeline() as p:
        p.watch(*keys)
        p.multi()
        for k in keys:
            p.set(k, "tx")
        assert p.execute() == [True] * n
    c.close()
    d.close()


def test_transaction_is_atomic_across_workers(multi_server):
    """A reader hammering MGET of two keys a transaction INCRs together never sees them differ."""
    s, n = multi_server
    a, b = keys_on_different_shards(n, "atom")[:2]
    setup = s.client()
    setup.mset({a: 0, b: 0})
    stop = threading.Event()
    seen = []
    errors = []

    def reader():
        cl = s.client()
        try:
            while not stop.is_set():
                x, y = cl.mget(a, b)
                if x != y:
                    seen.append((x, y))
                x = cl.get(a)  # single-key reads queue behind the lock as well
                y = cl.get(b)
                if int(y) < int(x):
                    seen.append(("get", x, y))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            cl.close()

    def writer():
        cl = s.client()
        try:
            for _ in range(300):
                with cl.pipeline(transaction=True) as p:
                    p.incr(a).incr(b)
                    x, y = p.execute()
                    if x != y:
                        seen.append(("exec", x, y))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            cl.close()

    readers = [threading.Thread(target=reader) for _ in range(3)]
    writers = [threading.Thread(target=writer) for _ in range(2)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(120)
    stop.set()
    for t in readers:
        t.join(30)
    assert not errors
    assert not seen
    assert setup.mget(a, b) == ["600", "600"]
    setup.close()


def test_transactions_and_multikey_commands_do_not_deadlock(multi_server):
    s, n = multi_server
    keys = keys_on_different_shards(n, "dl")
    errors = []

    def tx_worker(order):
        cl = s.client()
        try:
            for i in range(100):
                with cl.pipeline(transaction=True) as p:
                    for k in order:
                        p.incr(k)
                    p.mget(order)
                    p.execute()
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            cl.close()

    def mset_worker():
        cl = s.client()
        try:
            for i in range(100):
                cl.mset({k + ":m": i for k in reversed(keys)})
                cl.delete(*(k + ":m" for k in keys))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            cl.close()

    threads = [threading.Thread(target=tx_worker, args=(keys,)),
               threading.Thread(target=tx_worker, args=(list(reversed(keys)),)),
               threading.Thread(target=mset_worker)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive(), "deadlock"
    assert not errors
    c = s.client()
    assert c.mget(keys) == ["200"] * n
    c.close()


def test_keyspace_commands_inside_exec_across_workers(multi_server):
    s, n = multi_server
    keys = keys_on_different_shards(n, "ks")
    c = s.client()
    with c.pipeline(transaction=True) as p:
        for k in keys:
            p.set(k, "v")
        p.dbsize()
        p.keys("*ks")
        p.flushall()
        p.dbsize()
        p.ping()
        res = p.execute()
    assert res[:n + 1] == [True] * n + [n]
    assert sorted(res[n + 1]) == sorted(keys)
    assert res[n + 2:] == [True, 0, True]
    c.close()
