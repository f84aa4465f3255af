"""SORTED SET commands through redis-py and raw RESP, checked against Redis 7.0 behaviour
(replies, score formatting, error texts, RESP3 shapes, empty-set deletion, WRONGTYPE, expiry),
and the multi-key commands across 1, 2 and 4 worker threads."""

import math
import threading
import time

import pytest
import redis

from conftest import RawConn, RespError, WRONGTYPE, err, spread_keys



def _decode(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v


def raw(r, *args):
    """The reply as sent (RESP2, no redis-py reply callbacks), bytes decoded; errors raise
    redis.ResponseError with redis-py's text (without a leading "ERR ")."""
    kw = r.connection_pool.connection_kwargs
    with RawConn(kw["port"], host=kw["host"]) as c:
        if kw.get("username"):
            c.cmd("AUTH", kw["username"], kw["password"])
        reply = c.cmd(*[str(a) for a in args])
    if isinstance(reply, RespError):
        text = reply.text
        raise redis.ResponseError(text[4:] if text.startswith("ERR ") else text)
    return _decode(reply)


def test_zadd_basic_and_scores(r):
    assert r.zadd("z", {"a": 1, "b": 2, "c": 1.5}) == 3
    assert r.zadd("z", {"a": 1, "d": 4}) == 1
    assert r.zcard("z") == 4
    assert r.zcard("nokey") == 0
    assert raw(r, "ZSCORE", "z", "c") == "1.5"
    assert raw(r, "ZSCORE", "z", "a") == "1"
    assert raw(r, "ZSCORE", "z", "nope") is None
    assert raw(r, "ZSCORE", "nokey", "a") is None
    assert raw(r, "ZADD", "z", "1.1", "e") == 1
    assert raw(r, "ZSCORE", "z", "e") == "1.1000000000000001"
    assert raw(r, "ZADD", "z", "inf", "f", "-inf", "g") == 2
    assert raw(r, "ZMSCORE", "z", "f", "g", "nope", "b") == ["inf", "-inf", None, "2"]
    assert raw(r, "ZMSCORE", "nokey", "a") == [None]
    assert r.type("z") == "zset"


def test_zadd_flags(r):
    r.zadd("z", {"a": 1, "b": 2})
    assert raw(r, "ZADD", "z", "NX", "5", "a", "3", "c") == 1
    assert raw(r, "ZSCORE", "z", "a") == "1"
    assert raw(r, "ZADD", "z", "XX", "5", "a", "4", "d") == 0
    assert raw(r, "ZSCORE", "z", "a") == "5"
    assert raw(r, "ZSCORE", "z", "d") is None
    assert raw(r, "ZADD", "z", "XX", "CH", "6", "a", "2", "b") == 1
    assert raw(r, "ZADD", "z", "CH", "7", "a", "1", "x") == 2
    assert raw(r, "ZADD", "z", "GT", "CH", "1", "a", "9", "b") == 1
    assert raw(r, "ZMSCORE", "z", "a", "b") == ["7", "9"]
    assert raw(r, "ZADD", "z", "LT", "CH", "1", "a", "10", "b", "0", "new") == 2
    assert raw(r, "ZMSCORE", "z", "a", "b", "new") == ["1", "9", "0"]
    assert raw(r, "ZADD", "nokey", "XX", "1", "a") == 0
    assert r.exists("nokey") == 0
    assert raw(r, "ZADD", "z", "1", "dup", "2", "dup") == 1
    assert raw(r, "ZSCORE", "z", "dup") == "2"


def test_zadd_incr_and_zincrby(r):
    assert raw(r, "ZADD", "z", "INCR", "2", "a") == "2"
    assert raw(r, "ZADD", "z", "INCR", "1.5", "a") == "3.5"
    assert raw(r, "ZADD", "z", "NX", "INCR", "1", "a") is None
    assert raw(r, "ZADD", "z", "XX", "INCR", "1", "b") is None
    assert raw(r, "ZADD", "z", "GT", "INCR", "-1", "a") is None
    assert raw(r, "ZADD", "z", "LT", "INCR", "-1", "a") == "2.5"
    assert raw(r, "ZINCRBY", "z", "10", "a") == "12.5"
    assert raw(r, "ZINCRBY", "z", "1", "new") == "1"
    assert raw(r, "ZINCRBY", "z", "inf", "a") == "inf"
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZINCRBY", "z", "-inf", "a")
    assert err(e) == "resulting score is not a number (NaN)"
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZINCRBY", "z", "abc", "a")
    assert err(e) == "value is not a valid float"


@pytest.mark.parametrize("args,msg", [
    (("XX", "NX", "1", "a"), "XX and NX options at the same time are not compatible"),
    (("GT", "LT", "1", "a"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("GT", "NX", "1", "a"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("INCR", "1", "a", "2", "b"), "INCR option supports a single increment-element pair"),
    (("1", "a", "2"), "syntax error"),
    (("NX", "1"), "syntax error"),
    (("nan", "a"), "value is not a valid float"),
    (("x", "a"), "value is not a valid float"),
])
def test_zadd_errors(r, args, msg):
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZADD", "z", *args)
    assert err(e) == msg
    assert r.exists("z") == 0


def test_zrem_deletes_when_empty_and_keeps_ttl(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    r.expire("z", 100)
    assert r.zrem("z", "a", "a", "nope") == 1
    assert r.ttl("z") > 0
    assert r.zrem("nokey", "a") == 0
    assert r.zrem("z", "b", "c") == 2
    assert r.exists("z") == 0


def test_expiry(r):
    r.zadd("z", {"a": 1})
    r.pexpire("z", 50)
    time.sleep(0.2)
    assert r.zcard("z") == 0
    assert r.exists("z") == 0
    assert raw(r, "ZADD", "z", "1", "b") == 1
    assert r.ttl("z") == -1


def test_wrongtype(r):
    r.set("s", "x")
    r.zadd("z", {"a": 1})
    for cmd in [("ZADD", "s", "1", "a"), ("ZSCORE", "s", "a"), ("ZCARD", "s"), ("ZREM", "s", "a"),
                ("ZRANGE", "s", "0", "-1"), ("ZRANK", "s", "a"), ("ZCOUNT", "s", "0", "1"),
                ("ZPOPMIN", "s"), ("ZINCRBY", "s", "1", "a"), ("ZMSCORE", "s", "a"),
                ("ZRANDMEMBER", "s"), ("ZSCAN", "s", "0"), ("ZLEXCOUNT", "s", "-", "+"),
                ("ZREMRANGEBYRANK", "s", "0", "1"), ("ZUNION", "2", "z", "s"),
                ("ZINTERSTORE", "d", "2", "z", "s"), ("ZRANGESTORE", "d", "s", "0", "1"),
                ("ZINTERCARD", "1", "s")]:
        with pytest.raises(redis.ResponseError) as e:
            raw(r, *cmd)
        assert err(e) == WRONGTYPE, cmd
    with pytest.raises(redis.ResponseError) as e:
        r.sadd("z", "a")
    assert err(e) == WRONGTYPE
    # SET overwrites any type.
    r.set("z", "v")
    assert r.get("z") == "v"


def test_rank_count_lexcount(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 2, "d": 3})
    assert r.zrank("z", "a") == 0
    assert r.zrank("z", "c") == 2
    assert r.zrevrank("z", "a") == 3
    assert r.zrank("z", "nope") is None
    assert r.zrank("nokey", "a") is None
    assert r.zcount("z", 2, 3) == 3
    assert r.zcount("z", "(2", "+inf") == 1
    assert r.zcount("z", "-inf", "(2") == 1
    assert r.zcount("nokey", 0, 1) == 0
    # Score bounds are strtod's: "(" and "" are 0, leading space and overflow pass.
    assert raw(r, "ZCOUNT", "z", "(", "1e400") == 4
    assert raw(r, "ZCOUNT", "z", "", " 1") == 1
    with pytest.raises(redis.ResponseError) as e:
        r.zcount("z", "x", 1)
    assert err(e) == "min or max is not a float"
    r.zadd("l", {"a": 0, "b": 0, "c": 0, "d": 0})
    assert r.zlexcount("l", "-", "+") == 4
    assert r.zlexcount("l", "[b", "(d") == 2
    assert r.zlexcount("l", "(a", "[c") == 2
    assert r.zlexcount("l", "+", "-") == 0
    with pytest.raises(redis.ResponseError) as e:
        r.zlexcount("l", "b", "+")
    assert err(e) == "min or max not valid string range item"


def test_zrange_forms(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    assert r.zrange("z", 0, -1) == ["a", "b", "c", "d", "e"]
    assert r.zrange("z", 1, 2, withscores=True) == [("b", 2.0), ("c", 3.0)]
    assert raw(r, "ZRANGE", "z", "-2", "100") == ["d", "e"]
    assert raw(r, "ZRANGE", "z", "3", "1") == []
    assert raw(r, "ZRANGE", "z", "0", "1", "REV") == ["e", "d"]
    assert raw(r, "ZREVRANGE", "z", "0", "1", "WITHSCORES") == ["e", "5", "d", "4"]
    assert raw(r, "ZRANGE", "z", "(1", "3", "BYSCORE") == ["b", "c"]
    assert raw(r, "ZRANGE", "z", "+inf", "(3", "BYSCORE", "REV") == ["e", "d"]
    assert raw(r, "ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2") == ["b", "c"]
    assert raw(r, "ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1") == [
        "b", "c", "d", "e"]
    assert raw(r, "ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2") == []
    assert raw(r, "ZRANGEBYSCORE", "z", "2", "4", "WITHSCORES", "LIMIT", "0", "1") == ["b", "2"]
    assert raw(r, "ZREVRANGEBYSCORE", "z", "4", "2") == ["d", "c", "b"]
    assert raw(r, "ZRANGE", "nokey", "0", "-1") == []
    r.zadd("l", {m: 0 for m in "abcdef"})
    assert raw(r, "ZRANGE", "l", "[b", "(e", "BYLEX") == ["b", "c", "d"]
    assert raw(r, "ZRANGE", "l", "+", "[d", "BYLEX", "REV", "LIMIT", "1", "2") == ["e", "d"]
    assert raw(r, "ZRANGEBYLEX", "l", "-", "(c") == ["a", "b"]
    assert raw(r, "ZREVRANGEBYLEX", "l", "[c", "-") == ["c", "b", "a"]
    assert raw(r, "ZRANGEBYLEX", "l", "-", "+", "LIMIT", "4", "10") == ["e", "f"]


@pytest.mark.parametrize("args,msg", [
    (("0", "1", "LIMIT", "0", "1"),
     "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"),
    (("a", "b", "BYLEX", "WITHSCORES"),
     "syntax error, WITHSCORES not supported in combination with BYLEX"),
    (("0", "1", "BYSCORE", "BYLEX"), "syntax error"),
    (("0", "1", "FOO"), "syntax error"),
    (("x", "1"), "value is not an integer or out of range"),
    (("0", "x", "BYSCORE"), "min or max is not a float"),
    (("0", "[a", "BYLEX"), "min or max not valid string range item"),
    (("0", "1", "BYSCORE", "LIMIT", "0", "x"), "value is not an integer or out of range"),
])
def test_zrange_errors(r, args, msg):
    r.zadd("z", {"a": 1})
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZRANGE", "z", *args)
    assert err(e) == msg


def test_zpop(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4})
    assert raw(r, "ZPOPMIN", "z") == ["a", "1"]
    assert raw(r, "ZPOPMAX", "z", "2") == ["d", "4", "c", "3"]
    assert raw(r, "ZPOPMIN", "z", "0") == []
    assert raw(r, "ZPOPMIN", "nokey") == []
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZPOPMIN", "z", "-1")
    assert err(e) == "value is out of range, must be positive"
    assert raw(r, "ZPOPMAX", "z", "10") == ["b", "2"]
    assert r.exists("z") == 0


def test_zremrange(r):
    r.zadd("z", {m: i for i, m in enumerate("abcdef")})
    assert r.zremrangebyrank("z", 0, 1) == 2
    assert r.zremrangebyscore("z", "(2", 4) == 2
    assert r.zrange("z", 0, -1) == ["c", "f"]
    r.zadd("l", {m: 0 for m in "abcd"})
    assert r.zremrangebylex("l", "[b", "[c") == 2
    assert r.zremrangebylex("l", "-", "+") == 2
    assert r.exists("l") == 0
    assert r.zremrangebyrank("nokey", 0, -1) == 0
    with pytest.raises(redis.ResponseError) as e:
        r.zremrangebyscore("z", "a", 1)
    assert err(e) == "min or max is not a float"


def test_zrandmember(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert raw(r, "ZRANDMEMBER", "z") in {"a", "b", "c"}
    assert raw(r, "ZRANDMEMBER", "nokey") is None
    assert sorted(raw(r, "ZRANDMEMBER", "z", "5")) == ["a", "b", "c"]
    assert len(raw(r, "ZRANDMEMBER", "z", "-5")) == 5
    got = raw(r, "ZRANDMEMBER", "z", "2", "WITHSCORES")
    assert len(got) == 4 and {got[0]: got[1], got[2]: got[3]}.items() <= {
        "a": "1", "b": "2", "c": "3"}.items()
    assert raw(r, "ZRANDMEMBER", "nokey", "3") == []
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZRANDMEMBER", "z", "1", "FOO")
    assert err(e) == "syntax error"
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES")
    assert err(e) == "value is out of range"


def test_zscan(r):
    members = {f"m{i}": i for i in range(50)}
    r.zadd("z", members)
    seen = {}
    cursor = 0
    for _ in range(100):
        cursor, page = r.zscan("z", cursor, count=7)
        seen.update(page)
        if cursor == 0:
            break
    assert cursor == 0
    assert seen == {m: float(s) for m, s in members.items()}
    assert r.zscan("z", 0, match="m1", count=100) == (0, [("m1", 1.0)])
    assert r.zscan("nokey", 0) == (0, [])


def test_resp3_shapes(server):
    with RawConn(server.port) as c:
        c.cmd("HELLO", "3")
        c.cmd("DEL", "z")
        c.cmd("ZADD", "z", "1", "a", "2.5", "b", "3", "c")
        assert c.cmd("ZSCORE", "z", "b") == 2.5
        assert c.cmd("ZRANGE", "z", "0", "1", "WITHSCORES") == [[b"a", 1.0], [b"b", 2.5]]
        assert c.cmd("ZPOPMIN", "z") == [b"a", 1.0]
        assert c.cmd("ZPOPMAX", "z", "1") == [[b"c", 3.0]]
        assert c.cmd("ZINCRBY", "z", "1", "b") == 3.5
        assert c.cmd("ZMSCORE", "z", "b", "x") == [3.5, None]
        assert c.cmd("ZUNION", "1", "z", "WITHSCORES") == [[b"b", 3.5]]
        c.cmd("DEL", "z")


def test_union_inter_diff(r):
    r.zadd("a", {"x": 1, "y": 2, "z": 3})
    r.zadd("b", {"y": 10, "z": 20, "w": 30})
    r.sadd("s", "z", "v")
    assert raw(r, "ZUNION", "2", "a", "b", "WITHSCORES") == [
        "x", "1", "y", "12", "z", "23", "w", "30"]
    assert raw(r, "ZINTER", "2", "a", "b", "WEIGHTS", "2", "1", "AGGREGATE", "MAX",
               "WITHSCORES") == ["y", "10", "z", "20"]
    assert raw(r, "ZINTER", "2", "a", "b", "AGGREGATE", "MIN") == ["y", "z"]
    assert raw(r, "ZDIFF", "2", "a", "b", "WITHSCORES") == ["x", "1"]
    assert raw(r, "ZUNION", "2", "a", "s", "WITHSCORES") == ["v", "1", "x", "1", "y", "2", "z", "4"]
    assert raw(r, "ZINTER", "2", "a", "nokey") == []
    assert raw(r, "ZUNIONSTORE", "d", "2", "a", "b") == 4
    assert raw(r, "ZRANGE", "d", "0", "-1", "WITHSCORES") == [
        "x", "1", "y", "12", "z", "23", "w", "30"]
    r.expire("d", 100)
    assert raw(r, "ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "0", "1") == 2
    assert r.ttl("d") == -1
    assert raw(r, "ZDIFFSTORE", "d", "2", "a", "a") == 0
    assert r.exists("d") == 0
    assert raw(r, "ZINTERCARD", "2", "a", "b") == 2
    assert raw(r, "ZINTERCARD", "2", "a", "b", "LIMIT", "1") == 1
    r.zadd("inf", {"x": math.inf})
    assert raw(r, "ZUNION", "2", "inf", "inf", "WEIGHTS", "1", "-1", "WITHSCORES") == ["x", "0"]


@pytest.mark.parametrize("args,msg", [
    (("ZUNION", "0", "a"), "at least 1 input key is needed for 'zunion' command"),
    (("ZINTERCARD", "0", "a"), "at least 1 input key is needed for 'zintercard' command"),
    (("ZUNION", "3", "a"), "syntax error"),
    (("ZUNION", "x", "a"), "value is not an integer or out of range"),
    (("ZUNION", "1", "a", "WEIGHTS", "x"), "weight value is not a float"),
    (("ZUNION", "1", "a", "AGGREGATE", "foo"), "syntax error"),
    (("ZDIFF", "1", "a", "WEIGHTS", "1"), "syntax error"),
    (("ZUNIONSTORE", "d", "1", "a", "WITHSCORES"), "syntax error"),
    (("ZINTERCARD", "1", "a", "LIMIT", "-1"), "LIMIT can't be negative"),
    (("ZRANGESTORE", "d", "a", "0", "-1", "WITHSCORES"), "syntax error"),
])
def test_multi_errors(r, args, msg):
    r.zadd("a", {"x": 1})
    with pytest.raises(redis.ResponseError) as e:
        raw(r, *args)
    assert err(e) == msg


def test_zrangestore(r):
    r.zadd("src", {m: i for i, m in enumerate("abcde")})
    assert raw(r, "ZRANGESTORE", "dst", "src", "1", "3") == 3
    assert r.zrange("dst", 0, -1, withscores=True) == [("b", 1.0), ("c", 2.0), ("d", 3.0)]
    assert raw(r, "ZRANGESTORE", "dst", "src", "+inf", "(2", "BYSCORE", "REV", "LIMIT", "0",
               "1") == 1
    assert r.zrange("dst", 0, -1) == ["e"]
    assert raw(r, "ZRANGESTORE", "dst", "nokey", "0", "-1") == 0
    assert r.exists("dst") == 0


def test_multi_key_across_workers(mr):
    keys = spread_keys(4, "zk")
    for n, k in enumerate(keys):
        mr.zadd(k, {str(i): i * (n + 1) for i in range(n, n + 10)})
    expect = {}
    for n in range(len(keys)):
        for i in range(n, n + 10):
            expect[str(i)] = expect.get(str(i), 0) + i * (n + 1)
    dst = spread_keys(5, "zdst")[-1]
    assert raw(mr, "ZUNIONSTORE", dst, len(keys), *keys) == len(expect)
    assert dict(mr.zrange(dst, 0, -1, withscores=True)) == {k: float(v) for k, v in expect.items()}
    assert raw(mr, "ZINTERSTORE", dst, len(keys), *keys) == 7
    assert len(raw(mr, "ZUNION", len(keys), *keys)) == len(expect)
    assert raw(mr, "ZINTERCARD", len(keys), *keys) == 7
    assert raw(mr, "ZRANGESTORE", dst, keys[0], "0", "2") == 3
    assert mr.zrange(dst, 0, -1) == ["0", "1", "2"]
    assert raw(mr, "ZDIFFSTORE", dst, 2, keys[0], keys[1]) == 1
    assert mr.zrange(dst, 0, -1) == ["0"]


def test_zmpop(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    r.set("str", "x")
    assert raw(r, "ZMPOP", "2", "nokey", "z", "MIN") == ["z", [["a", "1"]]]
    assert raw(r, "ZMPOP", "2", "z", "str", "MAX", "COUNT", "5") == ["z", [["c", "3"], ["b", "2"]]]
    assert r.exists("z") == 0
    assert raw(r, "ZMPOP", "1", "z", "MIN") is None
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZMPOP", "2", "nokey", "str", "MIN")
    assert err(e) == WRONGTYPE


@pytest.mark.parametrize("args,msg", [
    (("0", "z", "MIN"), "numkeys should be greater than 0"),
    (("x", "z", "MIN"), "numkeys should be greater than 0"),
    (("3", "z", "MIN"), "syntax error"),
    (("1", "z", "FOO"), "syntax error"),
    (("1", "z", "MIN", "COUNT"), "syntax error"),
    (("1", "z", "MIN", "COUNT", "0"), "count should be greater than 0"),
    (("1", "z", "MIN", "COUNT", "1", "COUNT", "2"), "syntax error"),
])
def test_zmpop_errors(r, args, msg):
    with pytest.raises(redis.ResponseError) as e:
        raw(r, "ZMPOP", *args)
    assert err(e) == msg


def test_zmpop_across_workers(mr):
    keys = spread_keys(4, "zp")
    mr.zadd(keys[2], {"a": 1, "b": 2})
    mr.zadd(keys[3], {"c": 3})
    assert raw(mr, "ZMPOP", 4, *keys, "MAX") == [keys[2], [["b", "2"]]]
    assert raw(mr, "ZMPOP", 4, *keys, "MIN", "COUNT", 9) == [keys[2], [["a", "1"]]]
    assert raw(mr, "ZMPOP", 4, *keys, "MIN") == [keys[3], [["c", "3"]]]
    assert raw(mr, "ZMPOP", 4, *keys, "MIN") is None


def test_acl_checks_every_source_key(server, r):
    r.execute_command("ACL", "SETUSER", "zacl", "on", ">pw", "+@all", "~a*")
    try:
        r.zadd("a1", {"x": 1})
        r.zadd("b1", {"x": 2})
        c = server.client(username="zacl", password="pw")
        assert raw(c, "ZUNIONSTORE", "a2", "1", "a1") == 1
        for cmd in [("ZUNIONSTORE", "a2", "2", "a1", "b1"), ("ZINTERSTORE", "a2", "2", "a1", "b1"),
                    ("ZDIFFSTORE", "a2", "2", "a1", "b1"), ("ZUNION", "2", "a1", "b1"),
                    ("ZINTERCARD", "2", "a1", "b1"), ("ZMPOP", "2", "a1", "b1", "MIN"),
                    ("ZRANGESTORE", "a2", "b1", "0", "-1")]:
            with pytest.raises(redis.exceptions.NoPermissionError):
                c.execute_command(*cmd)
        c.close()
    finally:
        r.execute_command("ACL", "DELUSER", "zacl")


def test_multi_exec(r):
    p = r.pipeline(transaction=True)
    p.zadd("z", {"a": 1, "b": 2})
    p.zincrby("z", 5, "a")
    p.zunionstore("d", ["z", "nokey"])
    p.zrange("d", 0, -1, withscores=True)
    assert p.execute() == [2, 6.0, 2, [("b", 2.0), ("a", 6.0)]]


@pytest.mark.lavik_only
def test_zsets_survive_restart(spawn_server, tmp_path):
    s = spawn_server(threads=2, workdir=tmp_path)
    c = s.client()
    for k in range(20):
        c.zadd(f"z{k}", {f"m{i}": i / 2 for i in range(k + 1)})
    c.zadd("big", {f"member-{i}": i for i in range(20000)})
    c.expire("z3", 1000)
    assert s.terminate() == 0
    s2 = spawn_server(threads=2, workdir=tmp_path)
    c2 = s2.client()
    for k in range(20):
        assert c2.zrange(f"z{k}", 0, -1, withscores=True) == [
            (f"m{i}", i / 2) for i in range(k + 1)]
    assert c2.zcard("big") == 20000
    assert c2.zscore("big", "member-19999") == 19999
    assert c2.zrank("big", "member-10") == 10
    assert 900 <= c2.ttl("z3") <= 1000
    assert c2.type("big") == "zset"


def test_concurrent_writers_and_pops(mr):
    port = mr.connection_pool.connection_kwargs["port"]
    keys = spread_keys(4, "zc")
    for k in keys:
        mr.zadd(k, {f"{k}:{i}": i for i in range(100)})
    popped = []
    lock = threading.Lock()

    def incr():
        c = redis.Redis(port=port, decode_responses=True)
        for _ in range(100):
            c.zincrby("counter", 1, "m")

    def pop():
        c = redis.Redis(port=port, decode_responses=True)
        while True:
            got = c.execute_command("ZMPOP", len(keys), *keys, "MIN", "COUNT", 7)
            if got is None:
                return
            with lock:
                popped.extend(m for m, _ in got[1])

    workers = [threading.Thread(target=incr) for _ in range(3)]
    workers += [threading.Thread(target=pop) for _ in range(3)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert mr.zscore("counter", "m") == 300
    assert sorted(popped) == sorted(f"{k}:{i}" for k in keys for i in range(100))
    assert mr.exists(*keys) == 0
