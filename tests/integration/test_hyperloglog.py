"""PFADD, PFCOUNT, PFMERGE: Redis 7.0's HyperLogLog, byte for byte.

The byte strings and SHA-1 digests below were read from redis-server 7.0.15 after the same
commands; running this file with LAVIK_TEST_TARGET=redis checks them against it again."""

import hashlib
import time

import pytest
import redis

from conftest import WRONGTYPE, err, spread_keys

NOT_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPT = "INVALIDOBJ Corrupted HLL object detected"

HEADER_STALE = b"HYLL\x01" + b"\x00" * 10 + b"\x80"
EMPTY = HEADER_STALE + b"\x7f\xff"  # PFADD k with no elements
ABC = HEADER_STALE + b"`\xf3\x80P\xb1\x84K\xfb\x80BZ"  # PFADD k a b c


def sha1(b):
    return hashlib.sha1(b).hexdigest()


def bytes_client(c):
    """A client of the same server as c whose replies stay bytes (HLLs are not UTF-8)."""
    return redis.Redis(**{**c.connection_pool.connection_kwargs, "decode_responses": False})


def add_range(c, key, lo, hi):
    items = [str(i) for i in range(lo, hi)]
    for i in range(0, len(items), 1000):
        c.pfadd(key, *items[i:i + 1000])


def test_pfadd_bytes_and_cached_count(rb):
    assert rb.pfadd("k", "a", "b", "c") == 1
    assert rb.get("k") == ABC
    assert rb.pfadd("k", "a", "c") == 0
    assert rb.pfcount("k") == 3
    # PFCOUNT wrote the cardinality into the header, cache bit clear.
    assert rb.get("k") == b"HYLL\x01\x00\x00\x00\x03" + b"\x00" * 7 + ABC[16:]
    assert rb.pfcount("k") == 3


def test_pfadd_without_elements(rb):
    assert rb.execute_command("PFADD", "e") == 1
    assert rb.execute_command("PFADD", "e") == 0
    assert rb.get("e") == EMPTY
    assert rb.pfcount("e") == 0
    assert rb.get("e") == b"HYLL\x01" + b"\x00" * 11 + b"\x7f\xff"


def test_pfcount_missing_keys(rb):
    assert rb.pfcount("nokey") == 0
    assert rb.pfcount("nokey", "other") == 0
    assert rb.exists("nokey", "other") == 0


def test_sparse_and_dense_match_redis(rb):
    add_range(rb, "A", 0, 500)
    add_range(rb, "C", 5000, 21000)
    a, c = rb.get("A"), rb.get("C")
    assert (a[4], len(a), sha1(a)) == (1, 1061, "2fe4a760c9d79ee10ea72e5ae0dee1ab55cd4cdb")
    assert (c[4], len(c), sha1(c)) == (0, 12304, "1fa663a10b70037f49b68dada4e28ad0115af021")
    assert rb.pfcount("A") == 503
    assert rb.pfcount("C") == 16040
    assert sha1(rb.get("A")) == "8ce5bfb1fbd98ecc98476231c30a1ec9b8bfb4be"
    assert sha1(rb.get("C")) == "c18ffb4c6fd465be710c8cd242d888af7bd6eeaa"


def test_bytes_from_redis_work(rb):
    assert rb.set("x", ABC)
    assert rb.pfcount("x") == 3
    assert rb.pfadd("x", "d", "e") == 1
    # The header keeps the old count (3) with the stale bit set.
    header = b"HYLL\x01\x00\x00\x00\x03" + b"\x00" * 6 + b"\x80"
    assert rb.get("x") == header + b"\\{\x80Dv\x80P\xb1\x84I\x8c\x80Bm\x80BZ"
    assert rb.pfcount("x") == 5


def test_promotion_at_hll_sparse_max_bytes(rb):
    assert rb.config_set("hll-sparse-max-bytes", 200)
    try:
        i = 0
        while True:
            before = rb.get("p")
            rb.pfadd("p", str(i))
            if rb.get("p")[4] == 0:
                break
            i += 1
            assert i < 1000
        assert (i, len(before)) == (65, 200)
        assert sha1(rb.get("p")) == "8eb32774a2260464f0a4a9e6a9c9bdade91feea1"
        assert rb.pfcount("p") == 66
    finally:
        rb.config_set("hll-sparse-max-bytes", 3000)


def test_dense_input_makes_merge_dense(rb):
    # Register 0 at 33, more than a sparse VAL can hold.
    dense = b"HYLL\x00" + b"\x00" * 11 + b"\x21" + b"\x00" * 12287
    rb.set("d", dense)
    assert rb.pfmerge("m", "d") is True
    m = rb.get("m")
    assert (m[4], len(m), m[16]) == (0, 12304, 0x21)
    assert rb.pfcount("m") == 1


def test_pfcount_union_leaves_keys_alone(mr):
    a, b, c = spread_keys(3, "hll")
    add_range(mr, a, 0, 500)
    add_range(mr, b, 300, 1000)
    add_range(mr, c, 5000, 21000)
    rb = bytes_client(mr)
    before = [rb.get(k) for k in (a, b, c)]
    assert [sha1(v) for v in before] == ["2fe4a760c9d79ee10ea72e5ae0dee1ab55cd4cdb",
                                         "2879a8a29d00559ae268fdea47b1d86041a9b185",
                                         "1fa663a10b70037f49b68dada4e28ad0115af021"]
    assert mr.pfcount(a, b) == 1001
    assert mr.pfcount(a, b, c) == 17064
    assert mr.pfcount(a, "nokey") == 503
    assert [rb.get(k) for k in (a, b, c)] == before  # the cached counts stay stale
    rb.close()


def test_pfmerge_across_workers(mr):
    a, b, c, d = spread_keys(4, "hllm")
    add_range(mr, a, 0, 500)
    add_range(mr, b, 300, 1000)
    add_range(mr, c, 5000, 21000)
    rb = bytes_client(mr)
    assert mr.pfmerge(d, a, b) is True
    assert sha1(rb.get(d)) == "4b303e06b0d6db03a3a76f2ec573cd3e169405e7"
    assert mr.pfcount(d) == 1001
    assert mr.pfmerge(d, c) is True  # d is one of the inputs: the union of all three
    assert rb.get(d)[4] == 0
    assert mr.pfcount(d) == mr.pfcount(a, b, c) == 17064
    rb.close()


def test_pfmerge_bytes(rb):
    add_range(rb, "A", 0, 500)
    add_range(rb, "B", 300, 1000)
    add_range(rb, "C", 5000, 21000)
    assert rb.pfmerge("D", "A", "B") is True
    d = rb.get("D")
    assert (d[4], len(d), sha1(d)) == (1, 1923, "4b303e06b0d6db03a3a76f2ec573cd3e169405e7")
    assert rb.pfcount("D") == 1001
    assert rb.pfmerge("E", "A", "C") is True  # a dense input makes the result dense
    e = rb.get("E")
    assert (e[4], len(e), sha1(e)) == (0, 12304, "19ebeaaa3dfe68a8f55d1a2be6596d8dfcb3b322")
    assert rb.pfcount("E") == 16559
    assert rb.pfmerge("F") is True  # no sources: an empty HLL
    assert rb.get("F") == EMPTY


def test_pfmerge_keeps_destination_ttl(rb):
    add_range(rb, "A", 0, 500)
    add_range(rb, "B", 300, 1000)
    assert rb.pfcount("A") == 503  # caches 503 in A's header, which F copies
    rb.set("F", rb.get("A"))
    rb.pexpire("F", 100000)
    assert rb.pfmerge("F", "B") is True
    assert sha1(rb.get("F")) == "d40642111b40e5fb9e34baa84c080d89d376dcd3"
    assert rb.pttl("F") > 0
    assert rb.pfcount("F") == 1001
    assert rb.pttl("F") > 0


def assert_errors(c, commands, text):
    for cmd in commands:
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command(*cmd)
        assert err(e) == text, cmd


@pytest.mark.parametrize("value", [b"hello", b"123", b"HYLL", b"HYLX" + EMPTY[4:],
                                   b"HYLL\x02" + EMPTY[5:], b"HYLL\x00" + EMPTY[5:]])
def test_not_an_hll(rb, value):
    rb.set("s", value)
    rb.pfadd("good", "x")
    assert_errors(rb, [("PFADD", "s", "x"), ("PFCOUNT", "s"), ("PFCOUNT", "good", "s"),
                       ("PFMERGE", "d", "s"), ("PFMERGE", "s", "good")], NOT_HLL)
    assert rb.get("s") == value
    assert rb.exists("d") == 0


def test_wrong_type(rb):
    rb.lpush("l", "x")
    assert_errors(rb, [("PFADD", "l", "x"), ("PFCOUNT", "l"), ("PFCOUNT", "nokey", "l"),
                       ("PFMERGE", "d", "l"), ("PFMERGE", "l")], WRONGTYPE)


CORRUPT_PAYLOADS = [
    HEADER_STALE,                          # no opcodes
    HEADER_STALE + b"\x7f",                # XZERO cut short
    HEADER_STALE + b"\x7f\xfe",            # 16383 registers
    HEADER_STALE + b"\x7f\xff\x00",        # 16385 registers
    HEADER_STALE + b"\x7f\xfe\x83",        # a VAL run past the end
    HEADER_STALE + b"\x3f" * 300,          # 19200 zero registers
    ABC[:-1],                              # the last XZERO truncated
]


@pytest.mark.parametrize("value", CORRUPT_PAYLOADS)
def test_corrupt_sparse_payload(rb, value):
    rb.set("bad", value)
    rb.pfadd("good", "x")
    assert_errors(rb, [("PFCOUNT", "bad"), ("PFCOUNT", "good", "bad"), ("PFMERGE", "d", "bad"),
                       ("PFMERGE", "bad", "good")], CORRUPT)
    assert rb.get("bad") == value
    assert rb.exists("d") == 0


def test_pfadd_on_corrupt_payload(rb):
    # The runs cover register 0 only: "a" maps to another register, which no opcode covers.
    rb.set("bad", HEADER_STALE + b"\x40\x00")
    assert_errors(rb, [("PFADD", "bad", "a")], CORRUPT)
    assert rb.get("bad") == HEADER_STALE + b"\x40\x00"
    # A valid cached cardinality is returned as is, even over a corrupt payload.
    rb.set("cached", b"HYLL\x01\x00\x00\x00\x07" + b"\x00" * 7 + b"\x7f\xfe")
    assert rb.pfcount("cached") == 7


def test_command_info(raw):
    c = raw()
    info = c.cmd("COMMAND", "INFO", "pfadd", "pfcount", "pfmerge")
    got = [(i[0], i[1], sorted(i[2]), i[3], i[4], i[5], sorted(i[6])) for i in info]
    assert got == [
        (b"pfadd", -2, ["denyoom", "fast", "write"], 1, 1, 1,
         ["@fast", "@hyperloglog", "@write"]),
        (b"pfcount", -2, ["readonly"], 1, -1, 1, ["@hyperloglog", "@read", "@slow"]),
        (b"pfmerge", -2, ["denyoom", "write"], 1, -1, 1, ["@hyperloglog", "@slow", "@write"]),
    ]


def test_client_pause_write_holds_pfcount(server, r):
    # PFCOUNT may write its cached count, so Redis pauses it with the writes.
    r.pfadd("k", "a")
    other = server.client()
    assert r.client_pause(400, all=False)
    try:
        start = time.monotonic()
        assert other.pfcount("k") == 1
        assert time.monotonic() - start >= 0.2
    finally:
        r.client_unpause()
        other.close()
