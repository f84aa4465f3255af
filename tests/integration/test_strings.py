"""String commands: GET/SET and its options, the SET family, ranges, counters, big values.

Error texts are Redis 7.0's, verified against redis-server 7.0.15."""

import hashlib
import time

import pytest
import redis

from conftest import RespError

SYNTAX = "ERR syntax error"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
I64_MAX = 9223372036854775807
I64_MIN = -9223372036854775808


def bad_expire(cmd):
    return f"invalid expire time in '{cmd}' command"


def error_text(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return str(e.value)


# --------------------------------------------------------------------------- GET / SET


def test_get_missing_is_nil(r):
    assert r.get("nope") is None


def test_set_get_overwrite(r):
    assert r.set("k", "v1") is True
    assert r.get("k") == "v1"
    assert r.set("k", "v2") is True
    assert r.get("k") == "v2"


def test_set_get_binary_and_empty(rb):
    value = bytes(range(256)) * 4 + b"\r\n\x00end"
    rb.set(b"bin\x00key\r\n", value)
    assert rb.get(b"bin\x00key\r\n") == value
    rb.set(b"empty", b"")
    assert rb.get(b"empty") == b""
    assert rb.exists(b"empty") == 1


def test_set_ex_px(r):
    assert r.set("a", "1", ex=100) is True
    assert 98 <= r.ttl("a") <= 100
    assert r.set("b", "1", px=100000) is True
    assert 98000 <= r.pttl("b") <= 100000


def test_set_exat_pxat(r):
    now = int(time.time())
    assert r.set("a", "1", exat=now + 100) is True
    assert 98 <= r.ttl("a") <= 100
    assert r.expiretime("a") == now + 100
    now_ms = int(time.time() * 1000)
    assert r.set("b", "1", pxat=now_ms + 100000) is True
    assert r.pexpiretime("b") == now_ms + 100000


def test_set_exat_in_the_past_deletes(r):
    r.set("a", "1")
    assert r.set("a", "2", exat=int(time.time()) - 10) is True
    assert r.exists("a") == 0


def test_set_px_expires(r):
    r.set("a", "1", px=50)
    assert r.get("a") == "1"
    time.sleep(0.12)
    assert r.get("a") is None


def test_set_plain_clears_ttl(r):
    r.set("a", "1", ex=100)
    r.set("a", "2")
    assert r.ttl("a") == -1


def test_set_keepttl(r):
    r.set("a", "1", ex=100)
    assert r.set("a", "2", keepttl=True) is True
    assert r.get("a") == "2"
    assert 98 <= r.ttl("a") <= 100
    # KEEPTTL on a key without a TTL keeps "no TTL".
    r.set("b", "1")
    r.set("b", "2", keepttl=True)
    assert r.ttl("b") == -1


def test_set_nx(r):
    assert r.set("a", "1", nx=True) is True
    assert r.set("a", "2", nx=True) is None
    assert r.get("a") == "1"


def test_set_xx(r):
    assert r.set("a", "1", xx=True) is None
    assert r.exists("a") == 0
    r.set("a", "1")
    assert r.set("a", "2", xx=True) is True
    assert r.get("a") == "2"


def test_set_get_option(r):
    assert r.set("a", "1", get=True) is None
    assert r.get("a") == "1"
    assert r.set("a", "2", get=True) == "1"
    assert r.get("a") == "2"


def test_set_get_with_nx_and_xx(r):
    # Redis 7 allows GET together with NX: the old value comes back, nothing is written.
    r.set("a", "old")
    assert r.set("a", "new", nx=True, get=True) == "old"
    assert r.get("a") == "old"
    assert r.set("b", "new", nx=True, get=True) is None
    assert r.get("b") == "new"
    assert r.set("c", "x", xx=True, get=True) is None
    assert r.exists("c") == 0
    assert r.set("a", "newer", xx=True, get=True) == "old"
    assert r.get("a") == "newer"


def test_set_option_case_insensitive(raw):
    c = raw()
    assert c.cmd("SET", "a", "1", "ex", "100", "nx") == "OK"
    assert c.cmd("TTL", "a") in (99, 100)
    assert c.cmd("SET", "a", "2", "Xx", "gEt") == b"1"


@pytest.mark.parametrize("args,error", [
    (["NX", "XX"], SYNTAX),
    (["XX", "NX"], SYNTAX),
    (["EX", "10", "PX", "100"], SYNTAX),
    (["EX", "10", "EXAT", "100"], SYNTAX),
    (["PX", "10", "PXAT", "100"], SYNTAX),
    (["EX", "10", "KEEPTTL"], SYNTAX),
    (["KEEPTTL", "PX", "10"], SYNTAX),
    (["EX"], SYNTAX),
    (["FOO"], SYNTAX),
    (["EX", "0"], "ERR " + bad_expire("set")),
    (["EX", "-1"], "ERR " + bad_expire("set")),
    (["PX", "0"], "ERR " + bad_expire("set")),
    (["EXAT", "0"], "ERR " + bad_expire("set")),
    (["PXAT", "-5"], "ERR " + bad_expire("set")),
    (["EX", str(I64_MAX)], "ERR " + bad_expire("set")),
    (["EX", "abc"], NOT_INT),
    (["EX", "1.5"], NOT_INT),
    (["PX", "10x"], NOT_INT),
])
def test_set_option_errors(raw, args, error):
    c = raw()
    c.cmd("SET", "k", "orig")
    assert c.cmd("SET", "k", "new", *args) == RespError(error)
    assert c.cmd("GET", "k") == b"orig"


def test_set_arity(raw):
    c = raw()
    assert c.cmd("SET", "k") == RespError("ERR wrong number of arguments for 'set' command")


# --------------------------------------------------------------------------- SET family


def test_setnx(r):
    assert r.setnx("a", "1") is True
    assert r.setnx("a", "2") is False
    assert r.get("a") == "1"


def test_setex_psetex(r):
    assert r.setex("a", 100, "v") is True
    assert r.get("a") == "v"
    assert 98 <= r.ttl("a") <= 100
    assert r.psetex("b", 100000, "w") is True
    assert r.get("b") == "w"
    assert 98000 <= r.pttl("b") <= 100000


@pytest.mark.parametrize("cmd,ttl,error", [
    ("SETEX", "0", "ERR invalid expire time in 'setex' command"),
    ("SETEX", "-5", "ERR invalid expire time in 'setex' command"),
    ("PSETEX", "0", "ERR invalid expire time in 'psetex' command"),
    ("SETEX", "abc", NOT_INT),
])
def test_setex_errors(raw, cmd, ttl, error):
    c = raw()
    assert c.cmd(cmd, "a", ttl, "v") == RespError(error)
    assert c.cmd("EXISTS", "a") == 0


def test_getset(r):
    assert r.getset("a", "1") is None
    assert r.getset("a", "2") == "1"
    assert r.get("a") == "2"


def test_getset_clears_ttl(r):
    r.set("a", "1", ex=100)
    r.getset("a", "2")
    assert r.ttl("a") == -1


def test_getdel(r):
    r.set("a", "1")
    assert r.getdel("a") == "1"
    assert r.exists("a") == 0
    assert r.getdel("a") is None


def test_getex_without_options_is_get(r):
    r.set("a", "1", ex=100)
    assert r.getex("a") == "1"
    assert 98 <= r.ttl("a") <= 100
    assert r.getex("missing") is None


def test_getex_checks_the_time_only_once_the_key_is_a_string(r):
    """Redis 7.0's order: option syntax, then the key (missing: nil; not a string: WRONGTYPE),
    then the time's value."""
    r.delete("gx-missing", "gx-hash", "gx-str")
    assert r.execute_command("GETEX", "gx-missing", "EX", "abc") is None
    assert r.execute_command("GETEX", "gx-missing", "EX", "0") is None
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("GETEX", "gx-missing", "EX")
    r.hset("gx-hash", "f", "v")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.execute_command("GETEX", "gx-hash", "EX", "0")
    r.set("gx-str", "v")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("GETEX", "gx-str", "EX", "abc")
    with pytest.raises(redis.ResponseError, match="^invalid expire time in 'getex' command$"):
        r.execute_command("GETEX", "gx-str", "PXAT", "0")
    assert r.ttl("gx-str") == -1  # nothing changed by the refused ones


def test_getex_sets_ttl(r):
    r.set("a", "1")
    assert r.getex("a", ex=100) == "1"
    assert 98 <= r.ttl("a") <= 100
    assert r.getex("a", px=50000) == "1"
    assert 48000 <= r.pttl("a") <= 50000
    at = int(time.time()) + 200
    assert r.getex("a", exat=at) == "1"
    assert r.expiretime("a") == at
    at_ms = int(time.time() * 1000) + 300000
    assert r.getex("a", pxat=at_ms) == "1"
    assert r.pexpiretime("a") == at_ms


def test_getex_persist(r):
    r.set("a", "1", ex=100)
    assert r.getex("a", persist=True) == "1"
    assert r.ttl("a") == -1


def test_getex_missing_key_with_option(r):
    assert r.getex("missing", ex=10) is None
    assert r.exists("missing") == 0


def test_getex_past_time_deletes(r):
    r.set("a", "1")
    assert r.getex("a", exat=int(time.time()) - 5) == "1"
    assert r.exists("a") == 0


@pytest.mark.parametrize("args,error", [
    (["EX", "0"], "ERR invalid expire time in 'getex' command"),
    (["EX", "-1"], "ERR invalid expire time in 'getex' command"),
    (["EXAT", "0"], "ERR invalid expire time in 'getex' command"),
    (["EX", "abc"], NOT_INT),
    (["EX", "10", "PX", "10"], SYNTAX),
    (["PERSIST", "EX", "10"], SYNTAX),
    (["FOO"], SYNTAX),
])
def test_getex_errors(raw, args, error):
    c = raw()
    c.cmd("SET", "a", "v")
    assert c.cmd("GETEX", "a", *args) == RespError(error)
    assert c.cmd("TTL", "a") == -1


# --------------------------------------------------------------------------- MGET / MSET


def test_mget(r):
    r.set("a", "1")
    r.set("c", "3")
    assert r.mget("a", "b", "c", "a") == ["1", None, "3", "1"]


def test_mset(r):
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "b") == ["1", "2"]


def test_mset_last_duplicate_wins(raw):
    c = raw()
    assert c.cmd("MSET", "a", "1", "a", "2") == "OK"
    assert c.cmd("GET", "a") == b"2"


def test_mset_clears_ttl(r):
    r.set("a", "1", ex=100)
    r.mset({"a": "2"})
    assert r.ttl("a") == -1


def test_mset_odd_args(raw):
    c = raw()
    assert c.cmd("MSET", "a", "1", "b") == RespError(
        "ERR wrong number of arguments for 'mset' command")
    assert c.cmd("MSET", "a") == RespError("ERR wrong number of arguments for 'mset' command")
    assert c.cmd("EXISTS", "a") == 0


def test_msetnx(r):
    assert r.msetnx({"a": "1", "b": "2"}) is True
    assert r.msetnx({"b": "x", "c": "3"}) is False
    assert r.mget("a", "b", "c") == ["1", "2", None]


def test_msetnx_odd_args(raw):
    c = raw()
    assert c.cmd("MSETNX", "a", "1", "b") == RespError(
        "ERR wrong number of arguments for 'msetnx' command")


# ------------------------------------------------------------------------ APPEND / STRLEN / ranges


def test_append(r):
    assert r.append("a", "Hello") == 5
    assert r.append("a", " World") == 11
    assert r.get("a") == "Hello World"


def test_append_empty_creates_key(r):
    assert r.append("a", "") == 0
    assert r.exists("a") == 1
    assert r.get("a") == ""


def test_append_keeps_ttl(r):
    r.set("a", "x", ex=100)
    r.append("a", "y")
    assert 98 <= r.ttl("a") <= 100


def test_strlen(rb):
    assert rb.strlen("missing") == 0
    rb.set("a", "héllo")
    assert rb.strlen("a") == len("héllo".encode())
    rb.set("b", b"")
    assert rb.strlen("b") == 0


@pytest.mark.parametrize("start,end,expected", [
    (0, -1, "Hello World"),
    (0, 4, "Hello"),
    (-5, -1, "World"),
    (-100, 2, "Hel"),
    (5, 2, ""),
    (-1, -5, ""),
    (100, 200, ""),
    (0, 100, "Hello World"),
    (10, 10, "d"),
    (-1, -1, "d"),
    (6, -1, "World"),
])
def test_getrange(r, start, end, expected):
    r.set("s", "Hello World")
    assert r.getrange("s", start, end) == expected


def test_getrange_missing_and_errors(raw):
    c = raw()
    assert c.cmd("GETRANGE", "missing", "0", "-1") == b""
    c.cmd("SET", "s", "abc")
    assert c.cmd("GETRANGE", "s", "a", "b") == RespError(NOT_INT)
    assert c.cmd("SUBSTR", "s", "0", "1") == b"ab"


def test_setrange(rb):
    rb.set("a", "Hello World")
    assert rb.setrange("a", 6, "Redis") == 11
    assert rb.get("a") == b"Hello Redis"
    assert rb.setrange("a", 9, "xyz") == 12
    assert rb.get("a") == b"Hello Redxyz"


def test_setrange_pads_with_zero_bytes(rb):
    assert rb.setrange("a", 5, "ab") == 7
    assert rb.get("a") == b"\x00\x00\x00\x00\x00ab"
    rb.set("b", "xy")
    assert rb.setrange("b", 4, "z") == 5
    assert rb.get("b") == b"xy\x00\x00z"


def test_setrange_empty_value(rb):
    assert rb.setrange("missing", 5, "") == 0
    assert rb.exists("missing") == 0
    rb.set("a", "abc")
    assert rb.setrange("a", 10, "") == 3
    assert rb.get("a") == b"abc"


def test_setrange_errors(raw):
    c = raw()
    assert c.cmd("SETRANGE", "a", "-1", "x") == RespError("ERR offset is out of range")
    # 512 MB is proto-max-bulk-len: a string may end exactly there, not past it.
    assert c.cmd("SETRANGE", "a", str(512 * 1024 * 1024), "x") == RespError(
        "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    assert c.cmd("SETRANGE", "a", "abc", "x") == RespError(NOT_INT)
    assert c.cmd("EXISTS", "a") == 0
    # Writing nothing past the limit on a missing key is a no-op, not an error.
    assert c.cmd("SETRANGE", "a", str(512 * 1024 * 1024), "") == 0


def test_string_limits_follow_proto_max_bulk_len(raw):
    # SETRANGE, APPEND and SETBIT obey the configured proto-max-bulk-len, not its default.
    c = raw()
    try:
        assert c.cmd("CONFIG", "SET", "proto-max-bulk-len", "1mb") == "OK"
        assert c.cmd("SETRANGE", "lim", str(1024 * 1024), "x") == RespError(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        assert c.cmd("SETRANGE", "lim", str(1024 * 1024 - 1), "x") == 1024 * 1024
        assert c.cmd("APPEND", "lim", "y") == RespError(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        assert c.cmd("SETBIT", "bits", str(8 * 1024 * 1024), "1") == RespError(
            "ERR bit offset is not an integer or out of range")
        assert c.cmd("SETBIT", "bits", str(8 * 1024 * 1024 - 1), "1") == 0
        assert c.cmd("STRLEN", "bits") == 1024 * 1024
        assert c.cmd("CONFIG", "SET", "proto-max-bulk-len", "2mb") == "OK"
        assert c.cmd("APPEND", "lim", "y") == 1024 * 1024 + 1
    finally:
        c.cmd("CONFIG", "SET", "proto-max-bulk-len", "536870912")
        c.cmd("DEL", "lim", "bits")


# --------------------------------------------------------------------------- counters


def test_incr_decr(r):
    assert r.incr("n") == 1
    assert r.incr("n") == 2
    assert r.decr("n") == 1
    assert r.incrby("n", 10) == 11
    assert r.decrby("n", 20) == -9
    assert r.incrby("n", -1) == -10
    assert r.get("n") == "-10"
    assert r.decr("fresh") == -1


def test_incr_keeps_ttl(r):
    r.set("n", "5", ex=100)
    assert r.incr("n") == 6
    assert 98 <= r.ttl("n") <= 100


def test_incr_extremes(r):
    r.set("n", str(I64_MAX - 1))
    assert r.incr("n") == I64_MAX
    r.set("m", str(I64_MIN + 1))
    assert r.decr("m") == I64_MIN
    assert r.incrby("x", I64_MIN) == I64_MIN
    assert r.decrby("y", -I64_MAX) == I64_MAX


def test_incr_overflow(raw):
    c = raw()
    c.cmd("SET", "n", str(I64_MAX))
    assert c.cmd("INCR", "n") == RespError(OVERFLOW)
    assert c.cmd("INCRBY", "n", "1") == RespError(OVERFLOW)
    assert c.cmd("GET", "n") == str(I64_MAX).encode()
    c.cmd("SET", "m", str(I64_MIN))
    assert c.cmd("DECR", "m") == RespError(OVERFLOW)
    assert c.cmd("INCRBY", "m", "-1") == RespError(OVERFLOW)
    # DECRBY of INT64_MIN cannot be negated: Redis says so with its own text.
    assert c.cmd("DECRBY", "z", str(I64_MIN)) == RespError("ERR decrement would overflow")


@pytest.mark.parametrize("value", ["abc", " 1", "1 ", "1.5", "", "+1", "007", "-0",
                                   "123456789012345678901", "1e3"])
def test_incr_non_integer_value(raw, value):
    c = raw()
    c.cmd("SET", "n", value)
    assert c.cmd("INCR", "n") == RespError(NOT_INT)
    assert c.cmd("GET", "n") == value.encode()


@pytest.mark.parametrize("increment", ["abc", " 1", "1.5", "+5", "007", "9223372036854775808"])
def test_incrby_non_integer_increment(raw, increment):
    c = raw()
    assert c.cmd("INCRBY", "n", increment) == RespError(NOT_INT)
    assert c.cmd("EXISTS", "n") == 0


def test_incr_arity(raw):
    c = raw()
    assert c.cmd("INCR") == RespError("ERR wrong number of arguments for 'incr' command")
    assert c.cmd("INCRBY", "n") == RespError("ERR wrong number of arguments for 'incrby' command")


@pytest.mark.parametrize("start,incr,expected", [
    ("10.5", "0.1", "10.6"),
    ("5.0e3", "2.0e2", "5200"),
    ("0.1", "0.2", "0.3"),
    (None, "1.5e3", "1500"),
    (None, "-1.25", "-1.25"),
    ("1.0", "0", "1"),
    ("3", "1.5e-3", "3.0015"),
    ("5.0e3", "0", "5000"),
    (None, "1e20", "100000000000000000000"),
    ("10", "-10", "0"),
])
def test_incrbyfloat_formatting(raw, start, incr, expected):
    c = raw()
    if start is not None:
        c.cmd("SET", "f", start)
    assert c.cmd("INCRBYFLOAT", "f", incr) == expected.encode()
    assert c.cmd("GET", "f") == expected.encode()


def test_incrbyfloat_errors(raw):
    c = raw()
    c.cmd("SET", "f", "1")
    assert c.cmd("INCRBYFLOAT", "f", "inf") == RespError(
        "ERR increment would produce NaN or Infinity")
    assert c.cmd("INCRBYFLOAT", "f", "-inf") == RespError(
        "ERR increment would produce NaN or Infinity")
    assert c.cmd("INCRBYFLOAT", "f", "nan") == RespError(NOT_FLOAT)
    assert c.cmd("INCRBYFLOAT", "f", "abc") == RespError(NOT_FLOAT)
    assert c.cmd("INCRBYFLOAT", "f", " 1") == RespError(NOT_FLOAT)
    assert c.cmd("INCRBYFLOAT", "f", "1 ") == RespError(NOT_FLOAT)
    assert c.cmd("GET", "f") == b"1"
    c.cmd("SET", "w", "abc")
    assert c.cmd("INCRBYFLOAT", "w", "1") == RespError(NOT_FLOAT)


def test_incrbyfloat_keeps_ttl(r):
    r.set("f", "1", ex=100)
    assert r.incrbyfloat("f", 0.5) == 1.5
    assert 98 <= r.ttl("f") <= 100


# --------------------------------------------------------------------------- big values


def test_1mb_value(rb):
    value = hashlib.sha256(b"seed").digest() * (1024 * 1024 // 32)
    assert len(value) == 1024 * 1024
    assert rb.set("big1", value) is True
    assert rb.get("big1") == value
    assert rb.strlen("big1") == len(value)
    assert rb.getrange("big1", 1024 * 1024 - 32, -1) == value[-32:]


def test_100mb_value(rb):
    block = bytes((i * 7 + 3) & 0xFF for i in range(4096))
    n = 100 * 1024 * 1024
    value = block * (n // len(block))
    assert len(value) == n
    want = hashlib.sha256(value).hexdigest()
    assert rb.set("big100", value) is True
    del value
    got = rb.get("big100")
    assert len(got) == n
    assert hashlib.sha256(got).hexdigest() == want
    del got
    assert rb.strlen("big100") == n
    assert rb.delete("big100") == 1
