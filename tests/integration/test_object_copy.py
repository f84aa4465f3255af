"""OBJECT ENCODING / FREQ / REFCOUNT / HELP and COPY, checked against Redis 7.0 behaviour for
values built the way Redis keeps their encoding (fresh keys, no shrinking), across 1, 2 and 4
worker threads for COPY."""

import time

import pytest
import redis

from conftest import err, spread_keys


LFU_ERR = ("An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
           "that when switching between policies at runtime LRU and LFU data will take some time "
           "to adjust.")


def test_object_encoding_strings(r):
    for value, enc in [("12345", "int"), ("-9223372036854775808", "int"), ("0", "int"),
                       ("007", "embstr"), ("+5", "embstr"), ("-0", "embstr"),
                       ("99999999999999999999", "embstr"), ("x" * 44, "embstr"),
                       ("x" * 45, "raw"), ("1.5", "embstr")]:
        r.set("s", value)
        assert r.object("encoding", "s") == enc, value
    assert r.object("encoding", "nokey") is None


def test_object_encoding_collections(r):
    r.rpush("l", "a", "b")
    assert r.object("encoding", "l") == "quicklist"
    r.hset("h", mapping={"f": "v"})
    assert r.object("encoding", "h") == "listpack"
    r.hset("hbig", mapping={f"f{i}": "v" for i in range(600)})
    assert r.object("encoding", "hbig") == "hashtable"
    r.hset("hlong", "f", "v" * 65)
    assert r.object("encoding", "hlong") == "hashtable"
    r.sadd("si", 1, 2, 3)
    assert r.object("encoding", "si") == "intset"
    r.sadd("ss", "a", "b")
    assert r.object("encoding", "ss") == "hashtable"
    r.sadd("sibig", *range(600))
    assert r.object("encoding", "sibig") == "hashtable"
    r.zadd("z", {"a": 1})
    assert r.object("encoding", "z") == "listpack"
    r.zadd("zbig", {f"m{i}": i for i in range(200)})
    assert r.object("encoding", "zbig") == "skiplist"
    r.zadd("zlong", {"m" * 65: 1})
    assert r.object("encoding", "zlong") == "skiplist"


def test_object_refcount_freq_help(r, raw):
    r.set("k", "hello")
    assert r.object("refcount", "k") == 1
    assert r.object("refcount", "nokey") is None
    assert r.object("freq", "nokey") is None
    with pytest.raises(redis.ResponseError) as e:
        r.object("freq", "k")
    assert err(e) == LFU_ERR
    help_lines = raw().cmd("OBJECT", "HELP")
    assert help_lines[0] == "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "ENCODING <key>" in help_lines and "HELP" in help_lines
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("OBJECT", "FOO", "k")
    assert err(e) == "unknown subcommand 'FOO'. Try OBJECT HELP."
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("OBJECT", "ENCODING")
    assert err(e) == "wrong number of arguments for 'object|encoding' command"


def test_copy_rules(r):
    r.set("a", "1")
    r.expire("a", 100)
    assert r.copy("a", "b") is True
    assert 0 < r.ttl("b") <= 100
    assert r.copy("a", "b") is False
    r.set("a", "2")
    assert r.copy("a", "b", replace=True) is True
    assert r.get("b") == "2" and r.ttl("b") == -1  # the TTL is the source's (none now)
    assert r.copy("nokey", "b") is False
    assert r.execute_command("COPY", "a", "c", "DB", "0", "REPLACE", "DB", "0") == 1
    for args, text in [(("COPY", "a", "a"), "source and destination objects are the same"),
                       (("COPY", "a", "b", "DB", "x"), "value is not an integer or out of range"),
                       (("COPY", "a", "b", "DB"), "syntax error"),
                       (("COPY", "a", "b", "foo"), "syntax error"),
                       (("COPY", "a", "c", "DB", "20"), "DB index is out of range"),
                       (("COPY", "a", "c", "DB", "-1"), "DB index is out of range"),
                       (("COPY", "a"), "wrong number of arguments for 'copy' command")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == text, args


def test_copy_every_type_across_workers(mr):
    src, dst = spread_keys(2, "cp")
    mr.set(src, "v" * 5000)
    assert mr.copy(src, dst) is True
    assert mr.get(dst) == "v" * 5000
    kinds = [
        (lambda k: mr.rpush(k, *range(100)), lambda k: mr.lrange(k, 0, -1)),
        (lambda k: mr.hset(k, mapping={f"f{i}": i for i in range(100)}), mr.hgetall),
        (lambda k: mr.sadd(k, *range(100)), mr.smembers),
        (lambda k: mr.zadd(k, {f"m{i}": i / 3 for i in range(100)}),
         lambda k: mr.zrange(k, 0, -1, withscores=True)),
    ]
    for make, read in kinds:
        mr.delete(src)
        make(src)
        assert mr.copy(src, dst) is False  # dst exists
        assert mr.copy(src, dst, replace=True) is True
        assert mr.type(dst) == mr.type(src)
        assert read(dst) == read(src)
        # The copy is independent of its source.
        mr.delete(src)
        assert mr.exists(dst) == 1
        make(src)


def test_copy_of_a_list_wakes_a_blocked_client(server_factory):
    srv = server_factory(2)
    c = srv.client()
    c.flushall()
    c.rpush("{c}src", "x")
    w = srv.raw()
    w.send_command("BLPOP", "{c}dst", "0")
    time.sleep(0.05)
    assert c.copy("{c}src", "{c}dst") is True
    assert w.reply() == [b"{c}dst", b"x"]
    assert c.lrange("{c}src", 0, -1) == ["x"]
    assert c.exists("{c}dst") == 0


def test_copy_of_large_collections_is_independent_of_its_source(r):
    """Large enough to be chunked in lavik (doc/collections.md): the copy must hold the entries,
    not share the source's chunks, so later writes to either side leave the other intact."""
    n = 20000
    members = [f"m{i}" for i in range(n)]
    for i in range(0, n, 5000):
        r.sadd("big:set", *members[i:i + 5000])
        r.rpush("big:list", *members[i:i + 5000])
        r.hset("big:hash", mapping={m: m for m in members[i:i + 5000]})
        r.zadd("big:zset", {m: j for j, m in enumerate(members[i:i + 5000], i)})
    for key in ("big:set", "big:list", "big:hash", "big:zset"):
        assert r.copy(key, key + ":copy") is True
    r.srem("big:set", *members[:100])
    r.sadd("big:set:copy", "extra")
    r.lpop("big:list", 100)
    r.rpush("big:list:copy", "extra")
    r.hdel("big:hash", *members[:100])
    r.zrem("big:zset", *members[:100])
    assert r.scard("big:set") == n - 100
    assert r.scard("big:set:copy") == n + 1
    assert r.sismember("big:set:copy", "m0") and not r.sismember("big:set", "extra")
    assert r.llen("big:list") == n - 100 and r.lindex("big:list", 0) == "m100"
    assert r.llen("big:list:copy") == n + 1 and r.lrange("big:list:copy", 0, 1) == ["m0", "m1"]
    assert r.hlen("big:hash:copy") == n and r.hget("big:hash:copy", "m5") == "m5"
    assert r.zcard("big:zset:copy") == n and r.zscore("big:zset:copy", "m7") == 7
    r.delete("big:set", "big:list", "big:hash", "big:zset")
    assert sorted(r.smembers("big:set:copy")) == sorted(members + ["extra"])
    assert r.lrange("big:list:copy", -2, -1) == [members[-1], "extra"]
