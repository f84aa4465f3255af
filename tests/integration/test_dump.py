"""DUMP / RESTORE with Redis 7.0's payload format: round trips within the server under test for
every type (small values in their listpack/intset forms, large ones in their hashtable /
skiplist / quicklist forms and, on Lavik, chunked), and both ways with a redis-server 7.0.15
started here: DUMP on Redis -> RESTORE on the target, and DUMP on the target -> RESTORE on Redis.
Every value is read back through the client and compared; the first payload byte (the RDB type
Redis chose) must match what Redis writes for the same value. Then the error replies."""

import shutil
import time

import pytest
import redis

from conftest import TARGET, ServerProcess, err

# A value builder per kind: small values stay within the listpack / intset thresholds, "big"
# ones pass them (and Lavik's chunking thresholds: 8 192 entries).
BIG = 9000


def _pipe(c, cmds):
    p = c.pipeline(transaction=False)
    for args in cmds:
        p.execute_command(*args)
    p.execute()


def build(c, key, kind):
    if kind == "string":
        c.set(key, "hello world")
    elif kind == "string_int":
        c.set(key, "-12345")
    elif kind == "string_big":
        c.set(key, "".join(chr(97 + i % 26) for i in range(100_000)))
    elif kind == "list_small":
        c.rpush(key, "a", "1", "-7", "300000", "x" * 100, "12345678901234", "")
    elif kind == "list_big":
        _pipe(c, [("RPUSH", key, *[f"element-{i}" if i % 3 else str(i) for i in
                                   range(lo, lo + 1000)]) for lo in range(0, BIG, 1000)])
        c.rpush(key, "y" * 20000)  # a node of its own
    elif kind == "set_intset":
        c.sadd(key, 1, -2, 70000, 5_000_000_000, 0)
    elif kind == "set_small":
        c.sadd(key, "a", "b", "1", "hello")
    elif kind == "set_big_ints":
        c.sadd(key, *range(600))
    elif kind == "set_big":
        _pipe(c, [("SADD", key, *[f"m{i}" for i in range(lo, lo + 1000)])
                  for lo in range(0, BIG, 1000)])
    elif kind == "zset_small":
        c.zadd(key, {"a": 1, "b": 2.5, "c": -3, "d": 1e20, "e": float("inf"), "f": 0,
                     "g": -0.125, "h": 1})
    elif kind == "zset_long_member":
        c.zadd(key, {"m" * 100: 1, "n": 2})
    elif kind == "zset_big":
        _pipe(c, [("ZADD", key, *[x for i in range(lo, lo + 1000) for x in
                                  ((i * 7919) % 1003 / 4, f"z{i}")]) for lo in range(0, BIG, 1000)])
    elif kind == "hash_small":
        c.hset(key, mapping={"f1": "v1", "n": "42", "neg": "-1", "e": ""})
    elif kind == "hash_long_value":
        c.hset(key, mapping={"f": "v" * 100, "g": "1"})
    elif kind == "hash_big":
        _pipe(c, [("HSET", key, *[x for i in range(lo, lo + 1000) for x in (f"f{i}", f"v{i}")])
                  for lo in range(0, BIG, 1000)])
    elif kind == "stream_small":
        c.xadd(key, {"a": "1", "b": "two"}, id="1-1")
        c.xadd(key, {"a": "3", "b": "four"}, id="1-2")
        c.xadd(key, {"other": "x"}, id="5-0")
        c.xadd(key, {"a": "9", "b": "9"}, id="7-3")
        c.xdel(key, "1-2")
    elif kind == "stream_groups":
        for i in range(1, 31):
            c.xadd(key, {"k": str(i), "v": f"value{i}"} if i % 7 else {"z": "odd"}, id=f"{i}-0")
        c.xgroup_create(key, "g1", id="0")
        c.xreadgroup("g1", "alice", {key: ">"}, count=5)
        c.xreadgroup("g1", "bob", {key: ">"}, count=3)
        c.xack(key, "g1", "2-0")
        c.xgroup_create(key, "g2", id="$")
        c.xgroup_createconsumer(key, "g2", "carol")
        c.xgroup_create(key, "g3", id="10-0")
        c.xdel(key, "20-0")
    elif kind == "stream_empty":
        c.xgroup_create(key, "g", id="$", mkstream=True)
    elif kind == "stream_big":
        _pipe(c, [("XADD", key, f"{i + 1}-0", "f", str(i), "g", "x" * (i % 50))
                  for i in range(BIG)])
        c.xgroup_create(key, "grp", id="0")
        c.xreadgroup("grp", "c1", {key: ">"}, count=150)
    else:
        raise AssertionError(kind)


def snapshot(c, key):
    """The value of `key` as the client sees it (bytes client)."""
    t = c.type(key)
    if t == b"string":
        return t, c.get(key)
    if t == b"list":
        return t, c.lrange(key, 0, -1)
    if t == b"set":
        return t, sorted(c.smembers(key))
    if t == b"zset":
        return t, c.zrange(key, 0, -1, withscores=True)
    if t == b"hash":
        return t, sorted(c.hgetall(key).items())
    if t == b"stream":
        info = c.xinfo_stream(key)
        meta = {k: info[k] for k in ("length", "last-generated-id", "max-deleted-entry-id",
                                     "entries-added", "recorded-first-entry-id")}
        groups = []
        for g in c.xinfo_groups(key):
            name = g["name"]
            pending = [(p["message_id"], p["consumer"], p["times_delivered"])
                       for p in c.xpending_range(key, name, "-", "+", 100000)]
            consumers = [(x["name"], x["pending"]) for x in c.xinfo_consumers(key, name)]
            groups.append((name, g["last-delivered-id"], g["entries-read"], g["lag"], g["pending"],
                           pending, consumers))
        return t, c.xrange(key), meta, groups
    raise AssertionError(t)


KINDS = ["string", "string_int", "string_big", "list_small", "list_big", "set_intset",
         "set_small", "set_big_ints", "set_big", "zset_small", "zset_long_member", "zset_big",
         "hash_small", "hash_long_value", "hash_big", "stream_small", "stream_groups",
         "stream_empty", "stream_big"]


@pytest.fixture(scope="module")
def peer():
    """A redis-server 7.0.15 of its own (bytes client)."""
    assert shutil.which("redis-server"), "redis-server is needed as the other side"
    s = ServerProcess(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                            "no", "--bind", "127.0.0.1"])
    s.start()
    try:
        yield s.client(decode_responses=False)
    finally:
        s.cleanup()


@pytest.fixture
def pc(peer):
    peer.flushall()
    return peer


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_within_server(rb, kind):
    build(rb, "src", kind)
    if TARGET == "lavik" and kind.endswith("_big") and kind not in ("string_big", "set_big_ints"):
        assert rb.info("storage")["chunk_records"] > 0  # DUMP reads a chunked value
    payload = rb.dump("src")
    assert payload[-10:-8] == b"\x0a\x00"
    assert rb.restore("dst", 0, payload) == b"OK"
    assert snapshot(rb, "dst") == snapshot(rb, "src")
    assert rb.ttl("dst") == -1
    assert rb.restore("dst", 100_000, payload, replace=True) == b"OK"
    assert 90_000 < rb.pttl("dst") <= 100_000
    assert snapshot(rb, "dst") == snapshot(rb, "src")
    # A DUMP of the restored value is a valid payload for the same value again.
    assert rb.restore("dst2", 0, rb.dump("dst")) == b"OK"
    assert snapshot(rb, "dst2") == snapshot(rb, "src")


@pytest.mark.parametrize("kind", KINDS)
def test_redis_dump_restores_on_server(rb, pc, kind):
    build(pc, "k", kind)
    payload = pc.dump("k")
    assert rb.restore("k", 0, payload) == b"OK"
    assert snapshot(rb, "k") == snapshot(pc, "k")


@pytest.mark.parametrize("kind", KINDS)
def test_server_dump_restores_on_redis(rb, pc, kind):
    build(rb, "k", kind)
    build(pc, "ref", kind)
    payload = rb.dump("k")
    # The RDB type Redis 7.0 picks for this value (listpack, intset, quicklist, hashtable...).
    assert payload[0] == pc.dump("ref")[0]
    assert pc.restore("k", 0, payload) == b"OK"
    assert snapshot(pc, "k") == snapshot(rb, "k")
    assert snapshot(pc, "k") == snapshot(pc, "ref")


def test_dump_missing_key_is_nil(rb):
    assert rb.dump("nokey") is None


def test_restore_keeps_ttl_absttl_and_expired_absttl(rb):
    rb.set("s", "v")
    payload = rb.dump("s")
    at = int(time.time() * 1000) + 60_000
    assert rb.restore("a", at, payload, absttl=True) == b"OK"
    assert 50_000 < rb.pttl("a") <= 60_000
    # An absolute TTL in the past: OK, and the key is not created ...
    assert rb.restore("gone", 1000, payload, absttl=True) == b"OK"
    assert rb.exists("gone") == 0
    # ... and with REPLACE the old value goes.
    rb.set("old", "x")
    assert rb.restore("old", 1000, payload, absttl=True, replace=True) == b"OK"
    assert rb.exists("old") == 0
    assert rb.restore("i", 0, payload, idletime=10) == b"OK"
    assert rb.restore("f", 0, payload, frequency=5) == b"OK"
    assert rb.get("i") == b"v" and rb.get("f") == b"v"


def test_restore_errors(rb):
    rb.set("s", "hello")
    good = rb.dump("s")
    with pytest.raises(redis.ResponseError) as e:
        rb.restore("s", 0, good)
    assert err(e) == "BUSYKEY Target key name already exists."
    # BUSYKEY comes before the TTL and payload checks.
    with pytest.raises(redis.ResponseError) as e:
        rb.execute_command("RESTORE", "s", "-1", "junk")
    assert err(e) == "BUSYKEY Target key name already exists."
    cases = [
        (("-1", good), "Invalid TTL value, must be >= 0"),
        (("abc", good), "value is not an integer or out of range"),
        (("0", good, "IDLETIME", "-1"), "Invalid IDLETIME value, must be >= 0"),
        (("0", good, "IDLETIME", "x"), "value is not an integer or out of range"),
        (("0", good, "FREQ", "256"), "Invalid FREQ value, must be >= 0 and <= 255"),
        (("0", good, "FREQ", "-1"), "Invalid FREQ value, must be >= 0 and <= 255"),
        (("0", good, "IDLETIME", "1", "FREQ", "1"), "syntax error"),
        (("0", good, "FREQ", "1", "IDLETIME", "1"), "syntax error"),
        (("0", good, "IDLETIME"), "syntax error"),
        (("0", good, "bogus"), "syntax error"),
        (("0", b"x"), "DUMP payload version or checksum are wrong"),
        (("0", b""), "DUMP payload version or checksum are wrong"),
        (("0", good[:-1] + bytes([good[-1] ^ 1])), "DUMP payload version or checksum are wrong"),
        (("0", good[:1] + b"X" + good[2:]), "DUMP payload version or checksum are wrong"),
        (("0", good[:-10] + b"\x0b\x00" + good[-8:]), "DUMP payload version or checksum are wrong"),
        (("0", b"\x01" * 30), "DUMP payload version or checksum are wrong"),
    ]
    for args, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            rb.execute_command("RESTORE", "new", *args)
        assert err(e) == text, args
    assert rb.exists("new") == 0


def _with_footer(c, body):
    """`body` with a valid version (10) and CRC-64 footer."""
    payload = body + b"\x0a\x00"
    return payload + crc64(payload).to_bytes(8, "little")


def crc64(data):
    poly, crc = 0x95AC9329AC4BC9B5, 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def test_crc64_matches_redis(rb):
    rb.set("s", "v" * 30)
    payload = rb.dump("s")
    assert crc64(payload[:-8]).to_bytes(8, "little") == payload[-8:]
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def test_restore_bad_data_format(rb):
    for body in [b"\x00\x7fab",            # a string longer than the whole payload
                 b"\x02\x00",              # an empty set
                 b"\x63\x00",              # an unknown type
                 b"\x10\x05hello",         # a hash listpack that is no listpack
                 b"\x0b\x0c\x02\x00\x00\x00\x03\x00\x00\x00\x05\x00\x01\x00",  # intset count
                 b"\x0b\x08\x02\x00\x00\x00\x00\x00\x00\x00",  # an empty intset
                 b""]:
        with pytest.raises(redis.ResponseError) as e:
            rb.restore("k", 0, _with_footer(rb, body))
        assert err(e) == "Bad data format", body
    # Truncations of a real payload, footer fixed up.
    build(rb, "h", "hash_small")
    body = rb.dump("h")[:-10]
    for cut in (1, 2, 5, len(body) - 1):
        with pytest.raises(redis.ResponseError) as e:
            rb.restore("k", 0, _with_footer(rb, body[:cut]))
        assert err(e) == "Bad data format", cut
    assert rb.exists("k") == 0
    # The untruncated body restores.
    assert rb.restore("k", 0, _with_footer(rb, body)) == b"OK"
    # An older version number is accepted.
    assert rb.restore("k9", 0, _with_footer(rb, body)[:-10] + b"\x09\x00" +
                      crc64(body + b"\x09\x00").to_bytes(8, "little")) == b"OK"


def test_string_payloads_are_redis_bytes_with_and_without_rdbcompression(rb, pc):
    """rdbcompression yes (the default): a string longer than 20 bytes is LZF-compressed when that
    saves at least 4 bytes, as redis-server writes it; no: raw. The payloads are byte for byte
    the ones redis-server 7.0.15 produces for the same values."""
    values = {"short": b"abc", "int": b"12345", "ab": b"ab" * 40, "text": b"hello world " * 30,
              "random": bytes((i * 7919) % 251 for i in range(300)), "big": b"z" * 100000}
    try:
        for compression in ("yes", "no"):
            for c in (rb, pc):
                c.config_set("rdbcompression", compression)
                for k, v in values.items():
                    c.set(k, v)
            for k in values:
                assert rb.dump(k) == pc.dump(k), (compression, k)
            raw = rb.dump("ab")
            assert (len(raw) < len(values["ab"])) == (compression == "yes")
            # Either form restores, on either server.
            for k, v in values.items():
                rb.restore(k + ":back", 0, pc.dump(k))
                assert rb.get(k + ":back") == v
                rb.delete(k + ":back")
    finally:
        rb.config_set("rdbcompression", "yes")
