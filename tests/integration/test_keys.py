"""Keyspace commands: DEL/UNLINK/EXISTS/TYPE, the EXPIRE family and its options, TTLs,
RENAME, KEYS, SCAN, RANDOMKEY, TOUCH, lazy and active expiry."""

import time

import pytest

from conftest import RespError

NOT_INT = "ERR value is not an integer or out of range"


# -------------------------------------------------------------------- DEL / UNLINK / EXISTS / TYPE


def test_del(r):
    r.mset({"a": "1", "b": "2", "c": "3"})
    assert r.delete("a", "b", "missing") == 2
    assert r.exists("a", "b", "c") == 1
    assert r.delete("a") == 0


def test_del_duplicate_key_counts_once(r):
    r.set("a", "1")
    assert r.delete("a", "a") == 1


def test_unlink(r):
    r.mset({"a": "1", "b": "2"})
    assert r.unlink("a", "b", "c") == 2
    assert r.exists("a", "b") == 0


def test_exists_counts_duplicates(r):
    r.set("a", "1")
    assert r.exists("a") == 1
    assert r.exists("a", "a", "a") == 3
    assert r.exists("a", "missing", "a") == 2
    assert r.exists("missing") == 0


def test_arity_errors(raw):
    c = raw()
    for cmd in ("DEL", "UNLINK", "EXISTS", "TOUCH"):
        assert c.cmd(cmd) == RespError(
            f"ERR wrong number of arguments for '{cmd.lower()}' command")


def test_type(r):
    assert r.type("missing") == "none"
    r.set("a", "1")
    assert r.type("a") == "string"


# --------------------------------------------------------------------------- EXPIRE family


def test_expire_and_ttl(r):
    r.set("a", "1")
    assert r.ttl("a") == -1
    assert r.pttl("a") == -1
    assert r.expire("a", 100) is True
    assert 98 <= r.ttl("a") <= 100
    assert 98000 <= r.pttl("a") <= 100000
    assert r.ttl("missing") == -2
    assert r.pttl("missing") == -2
    assert r.expire("missing", 100) is False


def test_pexpire(r):
    r.set("a", "1")
    assert r.pexpire("a", 100000) is True
    assert 98000 <= r.pttl("a") <= 100000
    assert 98 <= r.ttl("a") <= 100


def test_expireat_pexpireat(r):
    r.set("a", "1")
    at = int(time.time()) + 100
    assert r.expireat("a", at) is True
    assert r.expiretime("a") == at
    assert 98 <= r.ttl("a") <= 100
    at_ms = int(time.time() * 1000) + 200000
    assert r.pexpireat("a", at_ms) is True
    assert r.pexpiretime("a") == at_ms
    # EXPIRETIME rounds to the nearest second, as TTL does.
    assert r.expiretime("a") == (at_ms + 500) // 1000


def test_expiretime_special_values(r):
    assert r.expiretime("missing") == -2
    assert r.pexpiretime("missing") == -2
    r.set("a", "1")
    assert r.expiretime("a") == -1
    assert r.pexpiretime("a") == -1


def test_ttl_rounds_to_nearest_second(r):
    r.set("a", "1", px=1900)
    assert r.ttl("a") == 2
    r.set("b", "1", px=1200)
    assert r.ttl("b") == 1
    assert 900 <= r.pttl("b") <= 1200  # milliseconds, with room for a loaded machine
    r.set("c", "1", px=100000)
    r.pexpireat("c", int(time.time() * 1000) + 100700)
    assert r.ttl("c") == 101


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE"])
def test_negative_or_zero_expire_deletes(raw, cmd):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd(cmd, "a", "-1") == 1
    assert c.cmd("EXISTS", "a") == 0
    c.cmd("SET", "b", "1")
    assert c.cmd(cmd, "b", "0") == 1
    assert c.cmd("GET", "b") is None


@pytest.mark.parametrize("cmd,scale", [("EXPIREAT", 1), ("PEXPIREAT", 1000)])
def test_past_expireat_deletes(raw, cmd, scale):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd(cmd, "a", str(int(time.time() - 100) * scale)) == 1
    assert c.cmd("EXISTS", "a") == 0
    c.cmd("SET", "b", "1")
    assert c.cmd(cmd, "b", "1") == 1
    assert c.cmd("EXISTS", "b") == 0


def test_expire_nx(raw):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd("EXPIRE", "a", "100", "NX") == 1
    assert c.cmd("EXPIRE", "a", "200", "NX") == 0
    assert c.cmd("TTL", "a") in (99, 100)


def test_expire_xx(raw):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd("EXPIRE", "a", "100", "XX") == 0
    assert c.cmd("TTL", "a") == -1
    c.cmd("EXPIRE", "a", "100")
    assert c.cmd("EXPIRE", "a", "50", "XX") == 1
    assert c.cmd("TTL", "a") in (49, 50)


def test_expire_gt(raw):
    c = raw()
    c.cmd("SET", "a", "1")
    # No TTL counts as infinite: nothing is greater.
    assert c.cmd("EXPIRE", "a", "100", "GT") == 0
    assert c.cmd("TTL", "a") == -1
    c.cmd("EXPIRE", "a", "50")
    assert c.cmd("EXPIRE", "a", "200", "GT") == 1
    assert c.cmd("EXPIRE", "a", "10", "GT") == 0
    assert c.cmd("TTL", "a") in (199, 200)


def test_expire_lt(raw):
    c = raw()
    c.cmd("SET", "a", "1")
    # No TTL counts as infinite: any TTL is less.
    assert c.cmd("EXPIRE", "a", "100", "LT") == 1
    assert c.cmd("EXPIRE", "a", "200", "LT") == 0
    assert c.cmd("EXPIRE", "a", "50", "LT") == 1
    assert c.cmd("TTL", "a") in (49, 50)


def test_expire_options_combined(raw):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd("EXPIRE", "a", "100", "XX", "GT") == 0
    c.cmd("EXPIRE", "a", "100")
    assert c.cmd("EXPIRE", "a", "200", "XX", "GT") == 1
    assert c.cmd("EXPIRE", "a", "50", "XX", "LT") == 1
    assert c.cmd("PEXPIRE", "a", "10000", "lt") == 1
    assert c.cmd("PTTL", "a") <= 10000


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
@pytest.mark.parametrize("opts,error", [
    (["NX", "XX"], "ERR NX and XX, GT or LT options at the same time are not compatible"),
    (["NX", "GT"], "ERR NX and XX, GT or LT options at the same time are not compatible"),
    (["LT", "NX"], "ERR NX and XX, GT or LT options at the same time are not compatible"),
    (["GT", "LT"], "ERR GT and LT options at the same time are not compatible"),
    (["FOO"], "ERR Unsupported option FOO"),
])
def test_expire_option_errors(raw, cmd, opts, error):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd(cmd, "a", str(int(time.time()) + 1000), *opts) == RespError(error)
    assert c.cmd("TTL", "a") == -1


@pytest.mark.parametrize("cmd,value,error", [
    ("EXPIRE", "abc", NOT_INT),
    ("EXPIRE", "1.5", NOT_INT),
    ("PEXPIRE", "", NOT_INT),
    ("EXPIRE", "9223372036854775807", "ERR invalid expire time in 'expire' command"),
    ("EXPIRE", "100000000000000000", "ERR invalid expire time in 'expire' command"),
    ("PEXPIRE", "9223372036854775807", "ERR invalid expire time in 'pexpire' command"),
    ("EXPIREAT", "9223372036854775807", "ERR invalid expire time in 'expireat' command"),
])
def test_expire_value_errors(raw, cmd, value, error):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd(cmd, "a", value) == RespError(error)
    assert c.cmd("TTL", "a") == -1


def test_expire_arity(raw):
    c = raw()
    assert c.cmd("EXPIRE", "a") == RespError("ERR wrong number of arguments for 'expire' command")


def test_persist(r):
    r.set("a", "1", ex=100)
    assert r.persist("a") is True
    assert r.ttl("a") == -1
    assert r.persist("a") is False
    assert r.persist("missing") is False


# --------------------------------------------------------------------------- RENAME


def test_rename(r):
    r.set("a", "1")
    assert r.rename("a", "b") is True
    assert r.exists("a") == 0
    assert r.get("b") == "1"


def test_rename_overwrites_destination_and_its_ttl(r):
    r.set("src", "new")
    r.set("dst", "old", ex=100)
    r.rename("src", "dst")
    assert r.get("dst") == "new"
    assert r.ttl("dst") == -1


def test_rename_carries_ttl(r):
    r.set("a", "1", ex=100)
    r.rename("a", "b")
    assert 98 <= r.ttl("b") <= 100


def test_rename_missing_key(raw):
    c = raw()
    assert c.cmd("RENAME", "nokey", "b") == RespError("ERR no such key")
    assert c.cmd("RENAME", "nokey", "nokey") == RespError("ERR no such key")
    assert c.cmd("RENAMENX", "nokey", "b") == RespError("ERR no such key")


def test_rename_to_same_key(raw):
    c = raw()
    c.cmd("SET", "a", "1")
    c.cmd("EXPIRE", "a", "100")
    assert c.cmd("RENAME", "a", "a") == "OK"
    assert c.cmd("GET", "a") == b"1"
    assert c.cmd("TTL", "a") in (99, 100)
    assert c.cmd("RENAMENX", "a", "a") == 0


def test_renamenx(r):
    r.set("a", "1")
    r.set("b", "2")
    assert r.renamenx("a", "b") is False
    assert r.mget("a", "b") == ["1", "2"]
    assert r.renamenx("a", "c") is True
    assert r.exists("a") == 0
    assert r.get("c") == "1"


# ----------------------------------------------------------------- KEYS / SCAN / RANDOMKEY / TOUCH


KEYS_FIXTURE = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "other"]


@pytest.mark.parametrize("pattern,expected", [
    ("*", KEYS_FIXTURE),
    ("h?llo", ["hello", "hallo", "hxllo", "h*llo"]),
    ("h*llo", ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo"]),
    ("h[ae]llo", ["hello", "hallo"]),
    ("h[^e]llo", ["hallo", "hxllo", "h*llo"]),
    ("h[a-b]llo", ["hallo"]),
    ("h\\*llo", ["h*llo"]),
    ("hello", ["hello"]),
    ("nomatch*", []),
    ("*llo", ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo"]),
])
def test_keys_patterns(r, pattern, expected):
    r.mset({k: "1" for k in KEYS_FIXTURE})
    assert sorted(r.keys(pattern)) == sorted(expected)


def test_keys_skips_expired(r):
    r.set("live", "1")
    r.set("dying", "1", px=20)
    time.sleep(0.06)
    assert r.keys("*") == ["live"]


def scan_all(r, **kwargs):
    cursor, seen, rounds = 0, [], 0
    while True:
        cursor, keys = r.scan(cursor, **kwargs)
        seen.extend(keys)
        rounds += 1
        assert rounds < 100000, "SCAN did not terminate"
        if cursor == 0:
            return seen, rounds


def test_scan_returns_every_key(r):
    keys = {f"scan:{i}" for i in range(1000)}
    r.mset({k: "v" for k in keys})
    seen, rounds = scan_all(r, count=10)
    assert set(seen) == keys  # every key at least once, nothing else
    assert rounds > 1


def test_scan_match(r):
    r.mset({f"user:{i}": "1" for i in range(200)})
    r.mset({f"other:{i}": "1" for i in range(200)})
    seen, _ = scan_all(r, match="user:*", count=50)
    assert set(seen) == {f"user:{i}" for i in range(200)}


def test_scan_type(r):
    r.mset({f"s:{i}": "1" for i in range(50)})
    seen, _ = scan_all(r, _type="string", count=20)
    assert set(seen) == {f"s:{i}" for i in range(50)}
    seen, _ = scan_all(r, _type="list", count=20)
    assert seen == []


def test_scan_empty_db(r):
    assert r.scan(0) == (0, [])


def test_scan_errors(raw):
    c = raw()
    assert c.cmd("SCAN", "abc") == RespError("ERR invalid cursor")
    assert c.cmd("SCAN", "0", "FOO") == RespError("ERR syntax error")
    assert c.cmd("SCAN", "0", "COUNT", "0") == RespError("ERR syntax error")
    assert c.cmd("SCAN", "0", "COUNT", "abc") == RespError(NOT_INT)
    assert c.cmd("SCAN", "0", "MATCH") == RespError("ERR syntax error")


def test_scan_reply_shape(raw):
    c = raw()
    c.cmd("SET", "k", "v")
    reply = c.cmd("SCAN", "0", "COUNT", "100")
    assert reply == [b"0", [b"k"]]


def test_randomkey(r):
    assert r.randomkey() is None
    r.set("only", "1")
    assert r.randomkey() == "only"
    r.mset({f"k{i}": "1" for i in range(20)})
    keys = set(r.keys("*"))
    for _ in range(20):
        assert r.randomkey() in keys


def test_touch(r):
    r.mset({"a": "1", "b": "2"})
    assert r.touch("a", "b", "missing") == 2
    assert r.touch("a", "a") == 2
    assert r.touch("missing") == 0


# --------------------------------------------------------------------------- expiry


def test_lazy_expiry(r):
    r.set("a", "1", px=50)
    r.set("b", "1", px=50)
    assert r.exists("a") == 1
    time.sleep(0.1)
    assert r.exists("a") == 0
    assert r.get("b") is None
    assert r.ttl("a") == -2


def test_expired_key_can_be_set_again(r):
    r.set("a", "1", px=30)
    time.sleep(0.06)
    assert r.set("a", "2", nx=True) is True
    assert r.get("a") == "2"
    assert r.ttl("a") == -1


def test_active_expiry(r):
    pipe = r.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"exp:{i}", "v", px=50)
    pipe.execute()
    r.set("survivor", "1")
    # DBSIZE counts keys without looking at them, so only the active expiry cycle
    # can bring it down: no command here reads an expiring key.
    deadline = time.monotonic() + 3.0
    size = r.dbsize()
    while size != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
        size = r.dbsize()
    assert size == 1
    assert r.get("survivor") == "1"
