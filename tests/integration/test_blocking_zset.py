"""BZPOPMIN, BZPOPMAX and BZMPOP checked against Redis 7.0 behaviour: replies in RESP2 and RESP3,
argument errors and their order, WRONGTYPE, timeouts, no blocking inside MULTI, and wake-ups by
every kind of write that leaves a sorted set at the key (ZADD, ZINCRBY, ZUNIONSTORE, RENAME,
a transaction), first blocked first served, across 1, 2 and 4 worker threads."""

import time

import pytest
import redis

from conftest import (WRONGTYPE, consume_while_producing, err, spread_keys,
                      waiter_after_a_disconnected_one, waiters_across_workers)




def test_served_at_once_resp2(raw):
    c = raw()
    c.cmd("ZADD", "z", "1", "a", "2", "b", "3", "c", "4.5", "d")
    c.send_command("BZPOPMIN", "nokey", "z", "0")
    assert c.reply_bytes() == b"*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n"
    c.send_command("BZPOPMAX", "z", "0")
    assert c.reply_bytes() == b"*3\r\n$1\r\nz\r\n$1\r\nd\r\n$3\r\n4.5\r\n"
    c.send_command("BZMPOP", "0", "2", "nokey", "z", "MAX", "COUNT", "5")
    assert c.reply_bytes() == (b"*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"
                               b"*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
    assert c.cmd("EXISTS", "z") == 0


def test_served_at_once_resp3(raw):
    c = raw()
    c.cmd("HELLO", "3")
    c.cmd("ZADD", "z", "1", "a", "2", "b", "3", "c")
    c.send_command("BZPOPMIN", "z", "0")
    assert c.reply_bytes() == b"*3\r\n$1\r\nz\r\n$1\r\na\r\n,1\r\n"
    c.send_command("BZMPOP", "0", "1", "z", "MIN", "COUNT", "1")
    assert c.reply_bytes() == b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    c.send_command("BZPOPMAX", "z", "0.05")
    assert c.reply_bytes() == b"*3\r\n$1\r\nz\r\n$1\r\nc\r\n,3\r\n"
    c.send_command("BZPOPMAX", "z", "0.05")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("BZMPOP", "0.05", "1", "z", "MIN")
    assert c.reply_bytes() == b"_\r\n"


def test_timeouts_resp2(raw):
    c = raw()
    for cmd in (("BZPOPMIN", "nokey", "0.05"), ("BZPOPMAX", "n1", "n2", "0.05"),
                ("BZMPOP", "0.05", "2", "n1", "n2", "MIN", "COUNT", "3")):
        start = time.monotonic()
        c.send_command(*cmd)
        assert c.reply_bytes() == b"*-1\r\n", cmd
        assert time.monotonic() - start >= 0.04


def test_argument_errors(r):
    for args, text in [
            (("BZPOPMIN", "k", "-1"), "timeout is negative"),
            (("BZPOPMIN", "k", "abc"), "timeout is not a float or out of range"),
            (("BZPOPMAX", "k", "nan"), "timeout is not a float or out of range"),
            (("BZPOPMAX", "k", "inf"), "timeout is negative"),
            (("BZPOPMIN", "k", "1e400"), "timeout is negative"),
            (("BZMPOP", "0", "0", "k", "MIN"), "numkeys should be greater than 0"),
            (("BZMPOP", "0", "-1", "k", "MIN"), "numkeys should be greater than 0"),
            (("BZMPOP", "0", "3", "k", "MIN"), "syntax error"),
            (("BZMPOP", "0", "1", "k", "UP"), "syntax error"),
            (("BZMPOP", "0", "1", "k", "MIN", "COUNT", "0"), "count should be greater than 0"),
            (("BZMPOP", "0", "1", "k", "MIN", "COUNT", "1", "COUNT", "1"), "syntax error"),
            (("BZMPOP", "0", "1", "k", "MAX", "COUNT", "2", "extra"), "syntax error"),
            # The other arguments are checked before the timeout, as Redis does.
            (("BZMPOP", "x", "0", "k", "MIN"), "numkeys should be greater than 0"),
            (("BZMPOP", "x", "1", "k", "foo"), "syntax error"),
            (("BZMPOP", "-1", "1", "k", "MIN", "COUNT", "0"), "count should be greater than 0"),
            (("BZMPOP", "x", "1", "k", "MIN"), "timeout is not a float or out of range"),
            (("BZMPOP", "0"), "wrong number of arguments for 'bzmpop' command"),
            (("BZPOPMIN", "k"), "wrong number of arguments for 'bzpopmin' command")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == text, args
    r.set("s", "x")
    for args in (("BZPOPMIN", "nokey", "s", "0"), ("BZMPOP", "0", "2", "nokey", "s", "MIN")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == WRONGTYPE


def test_inside_multi_does_not_block(raw):
    c = raw()
    c.cmd("MULTI")
    c.cmd("BZPOPMIN", "nokey", "0")
    c.cmd("BZMPOP", "0", "1", "nokey", "MIN")
    c.cmd("ZADD", "k", "7", "v")
    c.cmd("BZPOPMAX", "k", "0")
    c.send_command("EXEC")
    assert c.reply_bytes() == (b"*4\r\n*-1\r\n*-1\r\n:1\r\n"
                               b"*3\r\n$1\r\nk\r\n$1\r\nv\r\n$1\r\n7\r\n")


def test_woken_by_zadd_on_another_worker(mserver):
    for key, pusher, b in waiters_across_workers(mserver, "zk"):
        b.send_command("BZPOPMIN", "nothing", key, "5")
        time.sleep(0.02)
        pusher.zadd(key, {"m": 2.5})
        assert b.reply() == [key.encode(), b"m", b"2.5"]
        assert pusher.exists(key) == 0


def test_woken_by_other_writes(mserver):
    a, b_key, dst = spread_keys(3, "zw")
    c = mserver.client()
    w = mserver.raw()
    # ZINCRBY creates the set.
    w.send_command("BZPOPMAX", dst, "0")
    time.sleep(0.05)
    c.zincrby(dst, 3, "x")
    assert w.reply() == [dst.encode(), b"x", b"3"]
    # ZUNIONSTORE into the waited key.
    c.zadd(a, {"p": 1, "q": 2})
    c.zadd(b_key, {"q": 10})
    w.send_command("BZMPOP", "0", "1", dst, "MAX", "COUNT", "10")
    time.sleep(0.05)
    assert c.zunionstore(dst, [a, b_key]) == 2
    assert w.reply() == [dst.encode(), [[b"q", b"12"], [b"p", b"1"]]]
    # RENAME of a sorted set onto the waited key (same worker: a hash tag).
    c.zadd("{t}src", {"r": 5})
    w.send_command("BZPOPMIN", "{t}dst", "0")
    time.sleep(0.05)
    c.rename("{t}src", "{t}dst")
    assert w.reply() == [b"{t}dst", b"r", b"5"]
    # A ZADD inside a transaction serves the waiter after EXEC.
    w.send_command("BZPOPMIN", "tx", "0")
    time.sleep(0.05)
    p = c.pipeline(transaction=True)
    p.zadd("tx", {"one": 1, "two": 2})
    p.zcard("tx")
    assert p.execute() == [2, 2]
    assert w.reply() == [b"tx", b"one", b"1"]
    assert c.zrange("tx", 0, -1) == ["two"]


def test_a_list_does_not_serve_a_zset_waiter(mserver):
    c = mserver.client()
    w = mserver.raw()
    w.send_command("BZPOPMIN", "mixed", "0.3")
    time.sleep(0.05)
    c.rpush("mixed", "x")
    start = time.monotonic()
    assert w.reply() == None  # noqa: E711 (a nil array)
    assert time.monotonic() - start > 0.1
    assert c.lrange("mixed", 0, -1) == ["x"]


def test_fifo_and_count(mserver):
    c = mserver.client()
    first, second, third = mserver.raw(), mserver.raw(), mserver.raw()
    first.send_command("BZPOPMIN", "fz", "0")
    time.sleep(0.05)
    second.send_command("BZMPOP", "0", "2", "other", "fz", "MAX", "COUNT", "2")
    time.sleep(0.05)
    third.send_command("BZPOPMAX", "fz", "0")
    time.sleep(0.05)
    c.zadd("fz", {"a": 1, "b": 2, "c": 3, "d": 4})
    assert first.reply() == [b"fz", b"a", b"1"]
    assert second.reply() == [b"fz", [[b"d", b"4"], [b"c", b"3"]]]
    assert third.reply() == [b"fz", b"b", b"2"]
    assert c.exists("fz") == 0


def test_disconnected_waiter_loses_nothing(mserver):
    c = mserver.client()
    live = waiter_after_a_disconnected_one(mserver, "BZPOPMIN", "dz", "0")
    c.zadd("dz", {"v": 1})
    assert live.reply() == [b"dz", b"v", b"1"]
    assert c.exists("dz") == 0


def test_handed_off_before_a_later_pop(mserver):
    """The ZADD's client pipelines a ZPOPMIN right after it: the blocked client, waiting
    first, gets the member, as in Redis."""
    c = mserver.raw()
    w = mserver.raw()
    w.send_command("BZPOPMIN", "hz", "0")
    time.sleep(0.05)
    c.send_command("ZADD", "hz", "1", "only")
    c.send_command("ZPOPMIN", "hz")
    assert c.reply() == 1
    assert c.reply() == []
    assert w.reply() == [b"hz", b"only", b"1"]


def test_acl_checks_every_key(r, server):
    r.execute_command("ACL", "SETUSER", "zlister", "on", "nopass", "~open*", "+@all")
    try:
        c = server.client()
        c.execute_command("AUTH", "zlister", "x")
        r.zadd("open1", {"v": 1})
        for cmd in (("BZMPOP", 0, 2, "open1", "secret", "MIN"),
                    ("BZPOPMIN", "open1", "secret", 0)):
            with pytest.raises(redis.exceptions.NoPermissionError) as e:
                c.execute_command(*cmd)
            assert "no permissions to access one of the keys" in err(e)
        assert c.execute_command("BZMPOP", 0, 1, "open1", "MIN") == ["open1", [["v", "1"]]]
        c.close()
    finally:
        r.execute_command("ACL", "DELUSER", "zlister")


def test_concurrent_consumers_lose_and_duplicate_nothing(mserver):
    keys = spread_keys(4, "zq")
    n_items = 200

    def take(c, i):
        if i % 2:
            r = c.bzpopmin(keys, 0.2)
            return [r[1]] if r else []
        r = c.execute_command("BZMPOP", 0.2, len(keys), *keys, "MAX", "COUNT", 3)
        return [m for m, _ in r[1]] if r else []

    def produce(c, j):
        for n in range(n_items):
            c.zadd(keys[n % len(keys)], {f"{j}:{n}": n})

    got = consume_while_producing(mserver, take, produce)
    assert sorted(got) == sorted(f"{j}:{n}" for j in range(3) for n in range(n_items))
