"""HASH commands through redis-py and raw RESP, checked against Redis 7.0 behaviour (replies,
error texts, RESP3 types, empty-hash deletion, WRONGTYPE both ways, expiry), plus restarts and
a 1M-field hash on lavik."""

import time

import pytest
import redis

from conftest import WRONGTYPE, err



def test_hset_hget_hlen_and_counts_new_fields_once(r):
    assert r.execute_command("HSET", "h", "a", "1", "b", "2", "a", "3") == 2
    assert r.hget("h", "a") == "3"
    assert r.hget("h", "b") == "2"
    assert r.hget("h", "zz") is None
    assert r.hget("nokey", "a") is None
    assert r.hlen("h") == 2
    assert r.hlen("nokey") == 0
    assert r.execute_command("HSET", "h", "a", "4", "c", "5") == 1
    assert r.hgetall("h") == {"a": "4", "b": "2", "c": "5"}
    assert r.type("h") == "hash"


def test_hset_arity(r):
    for args in (["h", "a"], ["h", "a", "1", "b"]):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("HSET", *args)
        assert err(e) == "wrong number of arguments for 'hset' command"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HMSET", "h", "a", "1", "b")
    assert err(e) == "wrong number of arguments for 'hmset' command"


def test_hmset_hsetnx_hmget(r):
    assert r.execute_command("HMSET", "h", "a", "1", "b", "2") in (True, "OK")
    assert r.hsetnx("h", "a", "9") == 0
    assert r.hsetnx("h", "c", "3") == 1
    assert r.hsetnx("new", "f", "v") == 1
    assert r.hmget("h", "a", "zz", "c") == ["1", None, "3"]
    assert r.hmget("nokey", "a", "b") == [None, None]


def test_hdel_deletes_the_key_when_empty(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert r.hdel("h", "a", "a", "zz") == 1
    assert r.hdel("h", "zz") == 0
    assert r.hdel("nokey", "a") == 0
    assert r.hdel("h", "b", "c") == 2
    assert r.exists("h") == 0
    assert r.type("h") == "none"


def test_hstrlen_hexists_hkeys_hvals(r):
    r.hset("h", mapping={"a": "hello", "b": "", "c": "xy"})
    assert r.hstrlen("h", "a") == 5
    assert r.hstrlen("h", "b") == 0
    assert r.hstrlen("h", "zz") == 0
    assert r.hstrlen("nokey", "a") == 0
    assert r.hexists("h", "b") is True
    assert r.hexists("h", "zz") is False
    assert r.hexists("nokey", "a") is False
    assert sorted(r.hkeys("h")) == ["a", "b", "c"]
    assert sorted(r.hvals("h")) == ["", "hello", "xy"]
    assert r.hkeys("nokey") == []
    assert r.hvals("nokey") == []
    assert r.hgetall("nokey") == {}
    # keys and values come in the same order
    assert dict(zip(r.hkeys("h"), r.hvals("h"))) == r.hgetall("h")


def test_binary_fields_and_values(rb):
    field = b"\x00\r\n\xff"
    value = b"\x00" * 3 + b"\r\n"
    assert rb.hset(b"bin", field, value) == 1
    assert rb.hset(b"bin", b"", b"") == 1
    assert rb.hget(b"bin", field) == value
    assert rb.hget(b"bin", b"") == b""
    assert rb.hgetall(b"bin") == {field: value, b"": b""}


def test_hincrby(r):
    assert r.hincrby("h", "n", 5) == 5
    assert r.hincrby("h", "n", -7) == -2
    r.hset("h", "s", "abc")
    r.hset("h", "sp", " 1")
    r.hset("h", "big", str(2**63 - 1))
    for field in ("s", "sp"):
        with pytest.raises(redis.ResponseError) as e:
            r.hincrby("h", field, 1)
        assert err(e) == "hash value is not an integer"
    with pytest.raises(redis.ResponseError) as e:
        r.hincrby("h", "big", 1)
    assert err(e) == "increment or decrement would overflow"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HINCRBY", "h", "n", "x")
    assert err(e) == "value is not an integer or out of range"
    r.set("str", "1")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HINCRBY", "str", "n", "x")
    assert err(e) == "value is not an integer or out of range"  # the increment is parsed first
    assert r.hget("h", "big") == str(2**63 - 1)


def test_hincrbyfloat(r):
    # redis-py turns the reply into a float: the stored text is checked through HGET
    assert r.execute_command("HINCRBYFLOAT", "h", "f", "10.5") == 10.5
    assert r.hget("h", "f") == "10.5"
    r.execute_command("HINCRBYFLOAT", "h", "f", "0.1")
    assert r.hget("h", "f") == "10.6"
    r.execute_command("HINCRBYFLOAT", "h", "f", "-10.6")
    assert r.hget("h", "f") == "0"
    r.execute_command("HINCRBYFLOAT", "h", "g", "5e3")
    assert r.hget("h", "g") == "5000"
    r.hset("h", "s", "abc")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HINCRBYFLOAT", "h", "s", "1")
    assert err(e) == "hash value is not a float"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HINCRBYFLOAT", "h", "f", "x")
    assert err(e) == "value is not a valid float"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HINCRBYFLOAT", "h", "f", "inf")
    assert err(e) == "value is NaN or Infinity"
    r.hset("h", "huge", "1.1e4932")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HINCRBYFLOAT", "h", "huge", "1.1e4932")
    assert err(e) == "increment would produce NaN or Infinity"


def test_hrandfield(r):
    fields = {f"f{i}": str(i) for i in range(10)}
    r.hset("h", mapping=fields)
    assert r.hrandfield("h") in fields
    assert r.hrandfield("nokey") is None
    assert r.hrandfield("nokey", 3) == []
    assert r.hrandfield("h", 0) == []
    got = r.hrandfield("h", 5)
    assert len(got) == 5 and len(set(got)) == 5 and set(got) <= set(fields)
    assert sorted(r.hrandfield("h", 50)) == sorted(fields)
    got = r.hrandfield("h", -30)
    assert len(got) == 30 and set(got) <= set(fields)
    pairs = r.hrandfield("h", 4, withvalues=True)
    assert len(pairs) == 8
    for f, v in zip(pairs[::2], pairs[1::2]):
        assert fields[f] == v
    pairs = r.hrandfield("h", -12, withvalues=True)
    assert len(pairs) == 24
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HRANDFIELD", "h", "1", "x")
    assert err(e) == "syntax error"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HRANDFIELD", "h", "x")
    assert err(e) == "value is not an integer or out of range"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HRANDFIELD", "h", str(-2**63))
    assert err(e) == ("value is out of range, value must between -9223372036854775807 and "
                      "9223372036854775807")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("HRANDFIELD", "h", str(-2**63 + 1), "WITHVALUES")
    assert err(e) == "value is out of range"


def test_hrandfield_resp3_pairs(raw):
    c = raw()
    c.cmd("HELLO", "3")
    c.cmd("HSET", "h", "a", "1")
    assert c.cmd("HRANDFIELD", "h", "-2", "WITHVALUES") == [[b"a", b"1"], [b"a", b"1"]]
    assert c.cmd("HGETALL", "h") == {b"a": b"1"}
    c.send_command("HGETALL", "nokey")
    assert c.reply_bytes() == b"%0\r\n"
    c.send_command("HGETALL", "h")
    assert c.reply_bytes() == b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"


def test_hscan_walks_every_field(r):
    fields = {f"field:{i}": str(i) for i in range(500)}
    r.hset("h", mapping=fields)
    seen = {}
    cursor = 0
    while True:
        cursor, part = r.hscan("h", cursor, count=20)
        seen.update(part)
        if cursor == 0:
            break
    assert seen == fields
    cursor, part = r.hscan("nokey", 0)
    assert cursor == 0 and part == {}
    # MATCH filters what the walk visits
    seen = {}
    cursor = 0
    while True:
        cursor, part = r.hscan("h", cursor, match="field:1*", count=100)
        seen.update(part)
        if cursor == 0:
            break
    assert seen == {k: v for k, v in fields.items() if k.startswith("field:1")}


def test_hscan_errors(r):
    r.hset("h", "a", "1")
    for args, text in ((["x"], "invalid cursor"),
                       (["0", "COUNT", "0"], "syntax error"),
                       (["0", "COUNT", "x"], "value is not an integer or out of range"),
                       (["0", "FOO"], "syntax error"),
                       (["0", "MATCH"], "syntax error")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("HSCAN", "h", *args)
        assert err(e) == text


def test_hscan_never_skips_fields_that_stay(r):
    r.hset("h", mapping={f"keep{i}": "1" for i in range(300)})
    seen = set()
    cursor = 0
    i = 0
    while True:
        cursor, part = r.hscan("h", cursor, count=10)
        seen.update(part)
        # churn between calls: add and remove other fields
        r.hset("h", f"tmp{i}", "x")
        r.hdel("h", f"tmp{i - 3}")
        i += 1
        if cursor == 0:
            break
    assert {f"keep{j}" for j in range(300)} <= seen


def test_wrongtype_both_ways(r):
    r.set("str", "x")
    r.hset("h", "a", "1")
    r.sadd("s", "m")
    for cmd in (["HSET", "str", "a", "1"], ["HMSET", "str", "a", "1"], ["HSETNX", "str", "a", "1"],
                ["HGET", "str", "a"], ["HMGET", "str", "a"], ["HDEL", "str", "a"],
                ["HLEN", "str"], ["HSTRLEN", "str", "a"], ["HEXISTS", "str", "a"],
                ["HKEYS", "str"], ["HVALS", "str"], ["HGETALL", "str"],
                ["HINCRBY", "str", "a", "1"], ["HINCRBYFLOAT", "str", "a", "1"],
                ["HRANDFIELD", "str"], ["HRANDFIELD", "str", "2"], ["HSCAN", "str", "0"],
                ["HGET", "s", "a"]):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*cmd)
        assert err(e) == WRONGTYPE, cmd
    for cmd in (["GET", "h"], ["APPEND", "h", "x"], ["INCR", "h"], ["STRLEN", "h"],
                ["GETRANGE", "h", "0", "1"], ["SETRANGE", "h", "0", "x"], ["GETDEL", "h"],
                ["GETEX", "h"], ["INCRBYFLOAT", "h", "1"], ["DECRBY", "h", "1"],
                ["SET", "h", "v", "GET"], ["SADD", "h", "m"]):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*cmd)
        assert err(e) == WRONGTYPE, cmd
    assert r.mget("h", "str") == [None, "x"]
    assert r.hgetall("h") == {"a": "1"}
    # SET overwrites any type
    assert r.set("h", "now a string") is True
    assert r.type("h") == "string"
    assert r.get("h") == "now a string"


def test_keyspace_commands_on_hashes(r):
    r.hset("h1", mapping={"a": "1", "b": "2"})
    r.hset("h2", "x", "y")
    r.set("s", "v")
    assert r.exists("h1", "h2", "s") == 3
    assert r.dbsize() == 3
    assert sorted(r.keys("h*")) == ["h1", "h2"]
    cursor, keys = r.scan(0, _type="hash", count=100)
    assert cursor == 0 and sorted(keys) == ["h1", "h2"]
    cursor, keys = r.scan(0, _type="string", count=100)
    assert keys == ["s"]
    assert r.rename("h1", "h3") is True
    assert r.hgetall("h3") == {"a": "1", "b": "2"}
    assert r.exists("h1") == 0
    assert r.randomkey() in ("h2", "h3", "s")
    assert r.delete("h2", "h3") == 2
    assert r.unlink("s") == 1
    assert r.dbsize() == 0


def test_expiry_of_a_hash(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.expire("h", 100) is True
    assert 99 <= r.ttl("h") <= 100
    r.hset("h", "c", "3")  # a write keeps the TTL
    r.hdel("h", "a")
    r.hincrby("h", "n", 1)
    assert 99 <= r.ttl("h") <= 100
    assert r.persist("h") is True
    assert r.ttl("h") == -1
    assert r.pexpire("h", 50) is True
    time.sleep(0.15)
    assert r.exists("h") == 0
    assert r.hgetall("h") == {}
    assert r.hlen("h") == 0


def test_rename_keeps_ttl_and_type(r):
    r.hset("h", "a", "1")
    r.expire("h", 100)
    r.rename("h", "g")
    assert r.type("g") == "hash"
    assert 99 <= r.ttl("g") <= 100


@pytest.mark.lavik_only
@pytest.mark.parametrize("checkpoint", [False, True])
def test_hashes_survive_restart(spawn_server, tmp_path, checkpoint):
    extra = ["--shutdown-checkpoint"] if checkpoint else []
    s = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c = s.client()
    expected = {}
    for k in range(50):
        fields = {f"f{i}": f"v{k}-{i}" for i in range(k + 1)}
        c.hset(f"h{k}", mapping=fields)
        expected[f"h{k}"] = fields
    c.hdel("h10", "f0")
    del expected["h10"]["f0"]
    c.hset("big", mapping={f"f{i}": "x" * 100 for i in range(20000)})  # ~2.5 MB record
    c.expire("h3", 1000)
    assert s.terminate() == 0
    s2 = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c2 = s2.client()
    for key, fields in expected.items():
        assert c2.hgetall(key) == fields
    assert c2.hlen("big") == 20000
    assert c2.type("h5") == "hash"
    assert 900 <= c2.ttl("h3") <= 1000


@pytest.mark.lavik_only
def test_one_million_field_hash(r):
    t0 = time.monotonic()
    batch = 50000
    for start in range(0, 1000000, batch):
        r.execute_command("HSET", "big",
                          *[x for i in range(start, start + batch) for x in (f"f{i}", str(i))])
    assert r.hlen("big") == 1000000
    assert r.hget("big", "f0") == "0"
    assert r.hget("big", "f999999") == "999999"
    assert r.hget("big", "f1000000") is None
    assert r.hincrby("big", "f5", 10) == 15
    assert r.hdel("big", "f7") == 1
    assert r.hlen("big") == 999999
    assert r.delete("big") == 1
    assert time.monotonic() - t0 < 60
