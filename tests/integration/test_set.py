"""SET commands through redis-py and raw RESP, checked against Redis 7.0 behaviour (replies,
error texts, RESP3 set types, empty-set deletion, WRONGTYPE both ways, expiry), multi-key set
commands across 1, 2 and 4 worker threads, restarts and a 1M-member set on lavik."""

import threading
import time

import pytest
import redis

from conftest import WRONGTYPE, err, spread_keys

RANGE_LONG = ("value is out of range, value must between -9223372036854775807 and "
              "9223372036854775807")


def test_sadd_srem_scard_sismember(r):
    assert r.sadd("s", "a", "b", "a", "c") == 3
    assert r.sadd("s", "c", "d") == 1
    assert r.sadd("s", "a") == 0
    assert r.scard("s") == 4
    assert r.scard("nokey") == 0
    assert r.sismember("s", "a") is True or r.sismember("s", "a") == 1
    assert r.execute_command("SISMEMBER", "s", "zz") == 0
    assert r.execute_command("SISMEMBER", "nokey", "a") == 0
    assert r.execute_command("SMISMEMBER", "s", "a", "zz", "d") == [1, 0, 1]
    assert r.execute_command("SMISMEMBER", "nokey", "a") == [0]
    assert r.srem("s", "a", "a", "zz") == 1
    assert r.srem("nokey", "a") == 0
    assert r.smembers("s") == {"b", "c", "d"}
    assert r.type("s") == "set"


def test_srem_and_spop_delete_the_key_when_empty(r):
    r.sadd("s", "a", "b")
    assert r.srem("s", "a", "b") == 2
    assert r.exists("s") == 0
    r.sadd("s", "a", "b", "c")
    assert sorted(r.spop("s", 10)) == ["a", "b", "c"]
    assert r.exists("s") == 0
    r.sadd("s", "x")
    assert r.spop("s") == "x"
    assert r.exists("s") == 0


def test_binary_members(rb):
    members = [b"", b"\x00", b"\r\n", b"\xff\xfe", b"a\x00b"]
    assert rb.sadd(b"bin", *members) == 5
    assert rb.smembers(b"bin") == set(members)
    for m in members:
        assert rb.sismember(b"bin", m)
    assert not rb.sismember(b"bin", b"a")


def test_smembers_empty_and_resp3_set_type(r, raw):
    assert r.smembers("nokey") == set()
    c = raw()
    c.cmd("HELLO", "3")
    c.cmd("SADD", "s", "a")
    c.send_command("SMEMBERS", "s")
    assert c.reply_bytes() == b"~1\r\n$1\r\na\r\n"
    c.send_command("SMEMBERS", "nokey")
    assert c.reply_bytes() == b"~0\r\n"
    c.send_command("SPOP", "s", "0")
    assert c.reply_bytes() == b"~0\r\n"
    c.send_command("SPOP", "nokey", "3")
    assert c.reply_bytes() == b"~0\r\n"
    c.send_command("SINTER", "s")
    assert c.reply_bytes() == b"~1\r\n$1\r\na\r\n"
    c.send_command("SRANDMEMBER", "s", "2")
    assert c.reply_bytes() == b"*1\r\n$1\r\na\r\n"
    c.send_command("SPOP", "s", "1")
    assert c.reply_bytes() == b"~1\r\n$1\r\na\r\n"


def test_srandmember(r):
    members = {f"m{i}" for i in range(20)}
    r.sadd("s", *members)
    assert r.srandmember("s") in members
    assert r.srandmember("nokey") is None
    assert r.srandmember("nokey", 5) == []
    assert r.srandmember("s", 0) == []
    got = r.srandmember("s", 7)
    assert len(got) == 7 and len(set(got)) == 7 and set(got) <= members
    assert sorted(r.srandmember("s", 100)) == sorted(members)
    got = r.srandmember("s", -50)
    assert len(got) == 50 and set(got) <= members
    assert r.scard("s") == 20
    for args, text in ((["x"], "value is not an integer or out of range"),
                       ([str(-2**63)], RANGE_LONG),
                       (["1", "2"], "syntax error")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("SRANDMEMBER", "s", *args)
        assert err(e) == text


def test_spop(r):
    members = {f"m{i}" for i in range(20)}
    r.sadd("s", *members)
    one = r.spop("s")
    assert one in members
    got = r.spop("s", 5)
    assert len(got) == 5 and len(set(got)) == 5 and one not in got
    assert r.scard("s") == 14
    assert r.spop("s", 0) == [] or r.spop("s", 0) == set()
    assert r.spop("nokey") is None
    assert r.spop("nokey", 2) in ([], set())
    for args, text in ((["-1"], "value is out of range, must be positive"),
                       (["x"], "value is out of range, must be positive"),
                       (["1", "2"], "syntax error")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("SPOP", "s", *args)
        assert err(e) == text


def test_smove(r):
    r.sadd("src", "a", "b")
    r.sadd("dst", "c")
    assert r.smove("src", "dst", "a") is True
    assert r.smembers("src") == {"b"}
    assert r.smembers("dst") == {"a", "c"}
    assert r.smove("src", "dst", "zz") is False
    assert r.smove("nokey", "dst", "a") is False
    assert r.smove("src", "dst", "b") is True
    assert r.exists("src") == 0  # emptied: deleted
    assert r.smove("dst", "fresh", "c") is True
    assert r.smembers("fresh") == {"c"}
    assert r.smove("dst", "dst", "a") is True
    assert r.smove("dst", "dst", "zz") is False
    r.set("str", "x")
    assert r.smove("nokey", "str", "a") is False  # a missing source answers before type checks
    for args in (["str", "dst", "a"], ["dst", "str", "a"], ["dst", "str", "zz"]):
        with pytest.raises(redis.ResponseError) as e:
            r.smove(*args)
        assert err(e) == WRONGTYPE
    assert r.smembers("dst") == {"a", "b"}


def test_sinter_sunion_sdiff(r):
    r.sadd("a", "1", "2", "3", "4")
    r.sadd("b", "2", "3", "5")
    r.sadd("c", "3", "4", "5", "6")
    assert r.sinter("a", "b") == {"2", "3"}
    assert r.sinter("a", "b", "c") == {"3"}
    assert r.sinter("a", "nokey") == set()
    assert r.sinter("a") == {"1", "2", "3", "4"}
    assert r.sunion("a", "b") == {"1", "2", "3", "4", "5"}
    assert r.sunion("nokey", "b") == {"2", "3", "5"}
    assert r.sdiff("a", "b") == {"1", "4"}
    assert r.sdiff("a", "b", "c") == {"1"}
    assert r.sdiff("nokey", "a") == set()
    assert r.sdiff("a", "nokey") == {"1", "2", "3", "4"}


def test_store_forms(r):
    r.sadd("a", "1", "2", "3")
    r.sadd("b", "2", "3", "4")
    assert r.sinterstore("d", "a", "b") == 2
    assert r.smembers("d") == {"2", "3"}
    assert r.sunionstore("d", "a", "b") == 4
    assert r.smembers("d") == {"1", "2", "3", "4"}
    assert r.sdiffstore("d", "a", "b") == 1
    assert r.smembers("d") == {"1"}
    # the destination may be a source
    assert r.sunionstore("a", "a", "b") == 4
    assert r.smembers("a") == {"1", "2", "3", "4"}
    # an empty result deletes the destination; any type is overwritten, the TTL goes
    r.set("d", "string")
    r.expire("d", 100)
    assert r.sinterstore("d", "a", "b") == 3
    assert r.type("d") == "set" and r.ttl("d") == -1
    assert r.sinterstore("d", "a", "nokey") == 0
    assert r.exists("d") == 0
    r.sadd("d", "x")
    assert r.sdiffstore("d", "b", "a") == 0
    assert r.exists("d") == 0


def test_sintercard(r):
    r.sadd("a", "1", "2", "3", "4")
    r.sadd("b", "2", "3", "4", "5")
    assert r.execute_command("SINTERCARD", "2", "a", "b") == 3
    assert r.execute_command("SINTERCARD", "2", "a", "b", "LIMIT", "2") == 2
    assert r.execute_command("SINTERCARD", "2", "a", "b", "LIMIT", "0") == 3
    assert r.execute_command("SINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "5") == 3
    assert r.execute_command("SINTERCARD", "1", "a") == 4
    assert r.execute_command("SINTERCARD", "2", "a", "nokey") == 0
    for args, text in ((["0", "a"], "numkeys should be greater than 0"),
                       (["x", "a"], "numkeys should be greater than 0"),
                       (["-1", "a"], "numkeys should be greater than 0"),
                       (["3", "a", "b"], "Number of keys can't be greater than number of args"),
                       (["1", "a", "LIMIT", "-1"], "LIMIT can't be negative"),
                       (["1", "a", "LIMIT", "x"], "LIMIT can't be negative"),
                       (["1", "a", "LIMIT"], "syntax error"),
                       (["1", "a", "FOO"], "syntax error")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("SINTERCARD", *args)
        assert err(e) == text, args


def test_multi_key_wrongtype_checks_every_key(r):
    r.sadd("s", "a")
    r.set("str", "x")
    for cmd in (["SINTER", "nokey", "str"], ["SINTER", "s", "str"], ["SUNION", "str", "s"],
                ["SDIFF", "nokey", "str"], ["SDIFF", "s", "str"], ["SINTERSTORE", "d", "str"],
                ["SUNIONSTORE", "d", "s", "str"], ["SDIFFSTORE", "d", "s", "str"],
                ["SINTERCARD", "2", "s", "str"], ["SINTERCARD", "3", "s", "nokey", "str"]):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*cmd)
        assert err(e) == WRONGTYPE, cmd
    assert r.exists("d") == 0


def test_sscan(r):
    members = {f"member:{i}" for i in range(400)}
    r.sadd("s", *members)
    seen = set()
    cursor = 0
    while True:
        cursor, part = r.sscan("s", cursor, count=25)
        seen.update(part)
        if cursor == 0:
            break
    assert seen == members
    seen = set()
    cursor = 0
    while True:
        cursor, part = r.sscan("s", cursor, match="member:3*", count=50)
        seen.update(part)
        if cursor == 0:
            break
    assert seen == {m for m in members if m.startswith("member:3")}
    assert r.sscan("nokey", 0) == (0, [])
    for args, text in ((["x"], "invalid cursor"), (["0", "COUNT", "0"], "syntax error"),
                       (["0", "COUNT", "x"], "value is not an integer or out of range"),
                       (["0", "FOO"], "syntax error")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("SSCAN", "s", *args)
        assert err(e) == text


def test_wrongtype_both_ways(r):
    r.set("str", "x")
    r.sadd("s", "m")
    for cmd in (["SADD", "str", "a"], ["SREM", "str", "a"], ["SISMEMBER", "str", "a"],
                ["SMISMEMBER", "str", "a"], ["SCARD", "str"], ["SMEMBERS", "str"],
                ["SRANDMEMBER", "str"], ["SRANDMEMBER", "str", "2"], ["SPOP", "str"],
                ["SPOP", "str", "2"], ["SSCAN", "str", "0"], ["HGET", "s", "a"],
                ["GET", "s"], ["INCR", "s"], ["APPEND", "s", "x"], ["STRLEN", "s"]):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*cmd)
        assert err(e) == WRONGTYPE, cmd
    assert r.set("s", "v") is True
    assert r.type("s") == "string"


def test_keyspace_commands_on_sets(r):
    r.sadd("s1", "a", "b")
    r.sadd("s2", "c")
    r.hset("h", "f", "v")
    assert r.dbsize() == 3
    cursor, keys = r.scan(0, _type="set", count=100)
    assert cursor == 0 and sorted(keys) == ["s1", "s2"]
    assert sorted(r.keys("*")) == ["h", "s1", "s2"]
    assert r.renamenx("s1", "s3") is True
    assert r.smembers("s3") == {"a", "b"}
    assert r.exists("s1", "s3") == 1
    assert r.delete("s2", "s3", "h") == 3
    assert r.dbsize() == 0


def test_expiry_of_a_set(r):
    r.sadd("s", "a", "b")
    assert r.expire("s", 100) is True
    r.sadd("s", "c")
    r.srem("s", "a")
    assert 99 <= r.ttl("s") <= 100
    assert r.pexpire("s", 50) is True
    time.sleep(0.15)
    assert r.exists("s") == 0
    assert r.scard("s") == 0
    assert r.sadd("s", "x") == 1
    assert r.ttl("s") == -1


def test_multi_key_set_commands_across_workers(mr):
    keys = spread_keys(8, "sk")
    for n, k in enumerate(keys):
        mr.sadd(k, *[str(i) for i in range(n, n + 20)])
    expect = [set(str(i) for i in range(n, n + 20)) for n in range(len(keys))]
    assert mr.sinter(*keys) == set.intersection(*expect)
    assert mr.sunion(*keys) == set.union(*expect)
    assert mr.sdiff(*keys) == expect[0] - set.union(*expect[1:])
    assert mr.execute_command("SINTERCARD", len(keys), *keys) == len(set.intersection(*expect))
    dst = spread_keys(9, "dst")[-1]
    assert mr.sunionstore(dst, *keys) == len(set.union(*expect))
    assert mr.smembers(dst) == set.union(*expect)
    assert mr.sinterstore(dst, keys[0], spread_keys(9, "none")[3]) == 0
    assert mr.exists(dst) == 0
    assert mr.sdiffstore(dst, keys[-1], keys[0]) == len(expect[-1] - expect[0])
    # SMOVE between keys on different workers
    assert mr.smove(keys[0], keys[-1], "0") is True
    assert not mr.sismember(keys[0], "0") and mr.sismember(keys[-1], "0")


def test_smove_across_workers_is_atomic(mr):
    """Members move back and forth between two sets on different workers while a reader checks
    that every member is always in exactly one of them."""
    a, b = spread_keys(2, "mv")
    members = [f"m{i}" for i in range(20)]
    mr.sadd(a, *members)
    stop = threading.Event()
    errors = []

    def mover(client, seed):
        i = seed
        while not stop.is_set():
            m = members[i % len(members)]
            client.smove(a, b, m) or client.smove(b, a, m)
            i += 7

    port = mr.connection_pool.connection_kwargs["port"]
    threads = [threading.Thread(target=mover, args=(redis.Redis(port=port), s)) for s in (0, 3)]
    for t in threads:
        t.start()
    try:
        for _ in range(200):
            union = mr.sunion(a, b)
            total = mr.execute_command("SINTERCARD", 2, a, b)
            if union != set(members) or total != 0:
                errors.append((union, total))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert mr.scard(a) + mr.scard(b) == len(members)


@pytest.mark.lavik_only
@pytest.mark.parametrize("checkpoint", [False, True])
def test_sets_survive_restart(spawn_server, tmp_path, checkpoint):
    extra = ["--shutdown-checkpoint"] if checkpoint else []
    s = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c = s.client()
    for k in range(50):
        c.sadd(f"s{k}", *[f"m{i}" for i in range(k + 1)])
    c.srem("s10", "m0")
    c.delete("s11")
    c.sadd("big", *[f"member-{i}" for i in range(50000)])
    c.expire("s3", 1000)
    assert s.terminate() == 0
    s2 = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c2 = s2.client()
    for k in range(50):
        if k == 11:
            assert c2.exists("s11") == 0
            continue
        want = {f"m{i}" for i in range(k + 1)} - ({"m0"} if k == 10 else set())
        assert c2.smembers(f"s{k}") == want
    assert c2.scard("big") == 50000
    assert c2.sismember("big", "member-49999")
    assert 900 <= c2.ttl("s3") <= 1000
    assert c2.dbsize() == 50


@pytest.mark.lavik_only
def test_one_million_member_set(r):
    t0 = time.monotonic()
    batch = 50000
    pipe = r.pipeline(transaction=False)
    for start in range(0, 1000000, batch):
        pipe.sadd("big", *[f"m{i}" for i in range(start, start + batch)])
    assert sum(pipe.execute()) == 1000000
    assert r.scard("big") == 1000000
    assert r.sismember("big", "m0")
    assert r.sismember("big", "m999999")
    assert not r.sismember("big", "m1000000")
    assert r.execute_command("SMISMEMBER", "big", "m5", "x", "m77") == [1, 0, 1]
    assert r.srem("big", "m5") == 1
    assert r.scard("big") == 999999
    assert len(r.srandmember("big", 10)) == 10
    assert r.delete("big") == 1
    assert time.monotonic() - t0 < 60


def test_acl_key_patterns_cover_sintercard_keys(r, server):
    """SINTERCARD names its keys through numkeys: ACL key patterns must still see them."""
    r.sadd("a1", "x")
    r.sadd("b1", "x")
    r.execute_command("ACL", "SETUSER", "setuser1", "on", ">pw", "+@all", "~a*")
    try:
        c = server.client(username="setuser1", password="pw")
        assert c.execute_command("SINTERCARD", 1, "a1") == 1
        assert c.execute_command("SINTERCARD", 1, "a1", "LIMIT", "0") == 1
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("SINTERCARD", 2, "a1", "b1")
        assert err(e) == "this user has no permissions to access one of the keys used as arguments"
        with pytest.raises(redis.ResponseError) as e:
            c.sinter("a1", "b1")
        assert err(e) == "this user has no permissions to access one of the keys used as arguments"
        c.close()
    finally:
        r.execute_command("ACL", "DELUSER", "setuser1")
