"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

Every expected reply and error text is Redis 7.0.15's (checked against redis-server 7.0.15).
Bitmaps are plain strings, so GET/SETRANGE/APPEND see the same bytes."""


import pytest
import redis

from conftest import WRONGTYPE, err, spread_keys

SYNTAX = "syntax error"
NOT_INT = "value is not an integer or out of range"
BIT_OFFSET = "bit offset is not an integer or out of range"
BIT_VALUE = "bit is not an integer or out of range"
BF_TYPE = ("Invalid bitfield type. Use something like i16 u8. "
           "Note that u64 is not supported but i64 is.")
I64_MAX = 9223372036854775807
I64_MIN = -9223372036854775808


def error_of(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return err(e)


def bf(r, key, *args):
    return r.execute_command("BITFIELD", key, *args)


def bf_ro(r, key, *args):
    return r.execute_command("BITFIELD_RO", key, *args)


def cmd(r, *args):
    """The command as sent (redis-py's setbit/bitpos rewrite or reject some arguments)."""
    return r.execute_command(*args)


def bytes_client(client, socket_timeout=30):
    """A client of the same server whose replies stay bytes."""
    kwargs = client.connection_pool.connection_kwargs
    return redis.Redis(host=kwargs["host"], port=kwargs["port"], socket_timeout=socket_timeout)


# --------------------------------------------------------------------------- SETBIT / GETBIT


def test_setbit_getbit_grow_the_string_and_return_the_old_bit(rb):
    assert rb.setbit("k", 7, 1) == 0
    assert rb.get("k") == b"\x01"
    assert rb.setbit("k", 7, 1) == 1
    assert rb.setbit("k", 0, 1) == 0
    assert rb.get("k") == b"\x81"
    assert rb.setbit("k", 20, 1) == 0  # grows with zero bytes
    assert rb.get("k") == b"\x81\x00\x08"
    assert rb.setbit("k", 0, 0) == 1
    assert rb.get("k") == b"\x01\x00\x08"
    assert [rb.getbit("k", i) for i in (0, 7, 20, 21, 1000)] == [0, 1, 1, 0, 0]
    assert rb.getbit("missing", 5) == 0
    assert rb.setbit("k", 9, 0) == 0 and rb.get("k") == b"\x01\x00\x08"


def test_bits_are_string_bytes(rb):
    rb.set("k", "a")  # 0x61 = 01100001
    assert [rb.getbit("k", i) for i in range(8)] == [0, 1, 1, 0, 0, 0, 0, 1]
    rb.setbit("k", 6, 1)
    assert rb.get("k") == b"c"
    rb.setrange("k", 3, b"\xff")
    assert rb.getbit("k", 24) == 1 and rb.getbit("k", 23) == 0
    rb.append("k", b"\x80")
    assert rb.getbit("k", 32) == 1
    assert rb.strlen("k") == 5


def test_setbit_keeps_the_ttl(r):
    r.set("k", "x", ex=100)
    r.setbit("k", 100, 1)
    assert 0 < r.ttl("k") <= 100


def test_setbit_getbit_errors(r):
    r.rpush("list", "a")
    assert error_of(r.setbit, "list", 0, 1) == WRONGTYPE
    assert error_of(r.getbit, "list", 0) == WRONGTYPE
    for bad in (2, -1, "x", "01", "1.0"):
        assert error_of(cmd, r, "SETBIT", "k", 0, bad) == BIT_VALUE
    for bad in (-1, "x", "+1", "#1", 4294967296, I64_MAX):
        assert error_of(r.setbit, "k", bad, 1) == BIT_OFFSET
        assert error_of(r.getbit, "k", bad) == BIT_OFFSET
    # The offset is checked before the bit value, and both before the key's type.
    assert error_of(cmd, r, "SETBIT", "list", -1, 2) == BIT_OFFSET
    assert error_of(cmd, r, "SETBIT", "list", 0, 2) == BIT_VALUE
    assert error_of(r.getbit, "list", -1) == BIT_OFFSET
    assert r.exists("k") == 0
    assert error_of(r.execute_command, "SETBIT", "k", 1) == (
        "wrong number of arguments for 'setbit' command")


def test_setbit_at_the_last_offset_makes_a_512_mib_string(r):
    # Each command here moves 512 MiB: a client with room for a slow, busy machine.
    big = bytes_client(r, socket_timeout=300)
    assert big.setbit("big", 4294967295, 1) == 0
    # One read proves both the length (the last byte is byte 536870911) and the bit.
    assert big.bitpos("big", 1, -1) == 4294967295
    assert error_of(big.setbit, "big", 4294967296, 1) == BIT_OFFSET
    big.delete("big")
    big.close()


# --------------------------------------------------------------------------- BITCOUNT


def test_bitcount_ranges(r):
    r.set("s", "foobar")
    assert r.bitcount("s") == 26
    assert r.bitcount("s", 0, 0) == 4
    assert r.bitcount("s", 1, 1) == 6
    assert r.bitcount("s", 0, -1) == 26
    assert r.bitcount("s", -2, -1) == 7
    assert r.bitcount("s", 5, 1) == 0  # start > end
    assert r.bitcount("s", -1, -2) == 0
    assert r.bitcount("s", -100, -200) == 0  # both negative, wrong way round
    assert r.bitcount("s", -100, 100) == 26
    assert r.bitcount("s", 6, 100) == 0
    assert r.execute_command("BITCOUNT", "s", 1, 1, "BIT") == 1
    assert r.execute_command("BITCOUNT", "s", 5, 30, "bit") == 17
    assert r.execute_command("BITCOUNT", "s", 0, -1, "bit") == 26
    assert r.execute_command("BITCOUNT", "s", 1, 1, "BYTE") == 6
    assert r.execute_command("BITCOUNT", "s", I64_MIN, I64_MAX, "bit") == 26
    assert r.execute_command("BITCOUNT", "s", -1, -1, "bit") == 0


def test_bitcount_empty_and_missing_keys(r):
    assert r.bitcount("missing") == 0
    r.set("empty", "")
    assert r.bitcount("empty") == 0
    assert r.bitcount("empty", 0, -1) == 0


def test_bitcount_errors_come_after_the_key_lookup(r):
    r.set("s", "foobar")
    r.rpush("list", "a")
    # A missing key answers 0 whatever the arguments, as Redis 7.0 does.
    assert r.execute_command("BITCOUNT", "missing", 0) == 0
    assert r.execute_command("BITCOUNT", "missing", "a", "b") == 0
    assert error_of(r.execute_command, "BITCOUNT", "list", "a", "b") == WRONGTYPE
    assert error_of(r.execute_command, "BITCOUNT", "s", 0) == SYNTAX
    assert error_of(r.execute_command, "BITCOUNT", "s", 0, 1, 2, 3) == SYNTAX
    assert error_of(r.execute_command, "BITCOUNT", "s", "a", 0) == NOT_INT
    assert error_of(r.execute_command, "BITCOUNT", "s", 0, "a", "foo") == NOT_INT
    assert error_of(r.execute_command, "BITCOUNT", "s", 1, 1, "foo") == SYNTAX


# --------------------------------------------------------------------------- BITPOS


def test_bitpos_set_and_clear_bits(rb):
    rb.set("s", b"\x00\xff\x00")
    assert rb.bitpos("s", 1) == 8
    assert rb.bitpos("s", 0) == 0
    assert rb.bitpos("s", 1, 2) == -1
    assert rb.bitpos("s", 0, 1) == 16
    assert rb.bitpos("s", 1, -2, -1) == 8
    assert rb.bitpos("s", 1, 9, 100, "bit") == 9
    assert rb.bitpos("s", 0, 8, 100, "bit") == 16
    assert rb.bitpos("s", 0, 7, 16, "BIT") == 7
    assert rb.bitpos("s", 1, 3, 8, "bit") == 8
    assert rb.bitpos("s", 0, -5, -3, "bit") == 19
    assert rb.bitpos("s", 1, 1, 1, "byte") == 8
    # Wrong way round after counting from the end: empty.
    assert rb.bitpos("s", 1, -1, -2) == -1
    # Both clamp to byte 0 (BITPOS has no special case for two negatives).
    assert rb.bitpos("s", 1, -100, -200) == -1
    assert rb.bitpos("s", 0, -100, -200) == 0


def test_bitpos_clear_bit_past_the_end_only_without_an_explicit_end(rb):
    rb.set("f", b"\xff\xff\xff")
    assert rb.bitpos("f", 0) == 24  # the zero padding right after the string
    assert rb.bitpos("f", 0, 1) == 24
    assert rb.bitpos("f", 0, 1, -1) == -1  # an explicit end: no clear bit inside it
    assert rb.bitpos("f", 0, 0, 2) == -1
    assert rb.bitpos("f", 0, 30) == -1  # start past the end: empty range
    assert rb.bitpos("f", 0, 3, 100, "bit") == -1
    assert rb.bitpos("f", 1, 9223372036854775807) == -1
    assert rb.bitpos("f", 1, I64_MIN, I64_MAX, "bit") == 0
    rb.set("s", b"\x00\xff\x00")
    assert rb.bitpos("s", 0, 8, 15, "bit") == -1  # no set bit with an explicit end
    assert rb.bitpos("s", 1, 3, 3, "bit") == -1


def test_bitpos_missing_and_empty_keys(r):
    assert r.bitpos("missing", 1) == -1
    assert r.bitpos("missing", 0) == 0
    assert r.bitpos("missing", 0, 5, 10) == 0
    r.set("empty", "")
    assert r.bitpos("empty", 0) == -1
    assert r.bitpos("empty", 1) == -1
    assert r.bitpos("empty", 0, 0, 0) == -1


def test_bitpos_errors(r):
    r.set("s", "foobar")
    r.rpush("list", "a")
    must = "The bit argument must be 1 or 0."
    assert error_of(cmd, r, "BITPOS", "s", 2) == must
    assert error_of(cmd, r, "BITPOS", "missing", 2) == must
    assert error_of(cmd, r, "BITPOS", "list", 2) == must  # the bit is checked first
    assert error_of(cmd, r, "BITPOS", "s", "x") == NOT_INT
    assert error_of(cmd, r, "BITPOS", "list", 1) == WRONGTYPE
    # The key is looked up before the range is parsed.
    assert r.execute_command("BITPOS", "missing", 1, "a") == -1
    assert r.execute_command("BITPOS", "missing", 0, 0, 0, "foo") == 0
    assert error_of(r.execute_command, "BITPOS", "s", 1, "a") == NOT_INT
    assert error_of(r.execute_command, "BITPOS", "s", 1, 0, 0, "foo") == SYNTAX
    assert error_of(r.execute_command, "BITPOS", "s", 1, "a", 0, "foo") == NOT_INT
    assert error_of(r.execute_command, "BITPOS", "s", 1, 0, "a", "foo") == SYNTAX  # unit first
    assert error_of(r.execute_command, "BITPOS", "s", 1, 0, 0, "bit", "x") == SYNTAX


# --------------------------------------------------------------------------- BITOP


def test_bitop_and_or_xor_not(rb):
    rb.set("a", b"\xff\x0f\xf0")
    rb.set("b", b"\x3c")
    assert rb.bitop("AND", "d", "a", "b") == 3
    assert rb.get("d") == b"\x3c\x00\x00"
    assert rb.bitop("or", "d", "a", "b") == 3
    assert rb.get("d") == b"\xff\x0f\xf0"
    assert rb.bitop("Xor", "d", "a", "b") == 3
    assert rb.get("d") == b"\xc3\x0f\xf0"
    assert rb.bitop("NOT", "d", "a") == 3
    assert rb.get("d") == b"\x00\xf0\x0f"
    assert rb.bitop("xor", "d", "a", "a", "b") == 3
    assert rb.get("d") == b"\x3c\x00\x00"
    # The destination may be a source.
    assert rb.bitop("and", "a", "a", "b") == 3
    assert rb.get("a") == b"\x3c\x00\x00"


def test_bitop_missing_sources_are_zeros_and_an_empty_result_deletes(rb):
    rb.set("a", b"\xff\xff")
    assert rb.bitop("and", "d", "a", "missing") == 2
    assert rb.get("d") == b"\x00\x00"
    assert rb.bitop("or", "d", "missing", "a") == 2
    assert rb.get("d") == b"\xff\xff"
    rb.set("d", "old")
    assert rb.bitop("or", "d", "missing", "missing2") == 0
    assert rb.exists("d") == 0
    rb.set("empty", "")
    rb.set("d", "old")
    assert rb.bitop("not", "d", "empty") == 0
    assert rb.exists("d") == 0


def test_bitop_replaces_any_destination_type_and_its_ttl(rb):
    rb.set("a", b"\x01")
    rb.rpush("d", "x")
    assert rb.bitop("or", "d", "a") == 1
    assert rb.type("d") == b"string" and rb.get("d") == b"\x01"
    rb.set("d", "x", ex=100)
    rb.bitop("or", "d", "a")
    assert rb.ttl("d") == -1


def test_bitop_errors(r):
    r.set("s", "x")
    r.rpush("list", "a")
    assert error_of(r.execute_command, "BITOP", "foo", "d", "s") == SYNTAX
    assert error_of(r.execute_command, "BITOP", "NOT", "d", "s", "s") == (
        "BITOP NOT must be called with a single source key.")
    assert error_of(r.execute_command, "BITOP", "and", "d") == (
        "wrong number of arguments for 'bitop' command")
    r.set("d", "keep")
    assert error_of(r.bitop, "and", "d", "s", "list") == WRONGTYPE
    assert error_of(r.bitop, "or", "d", "missing", "list") == WRONGTYPE
    assert r.get("d") == "keep"  # untouched on error


def test_bitop_across_workers(mr):
    mr = bytes_client(mr)
    srcs = spread_keys(4, "bsrc")
    dst = spread_keys(5, "bdst")[-1]
    values = [b"\x0f\xff", b"\xf0", b"\x33\x33\x33", b"\x01"]
    for k, v in zip(srcs, values):
        mr.set(k, v)
    assert mr.bitop("or", dst, *srcs) == 3
    assert mr.get(dst) == b"\xff\xff\x33"
    assert mr.bitop("and", dst, *srcs) == 3
    assert mr.get(dst) == b"\x00\x00\x00"
    assert mr.bitop("and", dst, srcs[0], srcs[2]) == 3
    assert mr.get(dst) == b"\x03\x33\x00"
    assert mr.bitop("xor", dst, *srcs) == 3
    assert mr.get(dst) == b"\xcd\xcc\x33"
    assert mr.bitop("not", dst, srcs[2]) == 3
    assert mr.get(dst) == b"\xcc\xcc\xcc"
    missing = spread_keys(6, "bnone")[2:4]
    assert mr.bitop("or", dst, *missing) == 0
    assert mr.exists(dst) == 0
    mr.rpush(missing[0], "x")
    mr.set(dst, "keep")
    with pytest.raises(redis.ResponseError) as e:
        mr.bitop("or", dst, srcs[0], missing[0], srcs[1])
    assert err(e) == WRONGTYPE
    assert mr.get(dst) == b"keep"


def test_bitop_across_workers_in_multi(mr):
    mr = bytes_client(mr)
    a, b = spread_keys(2, "bm")
    dst = spread_keys(3, "bmd")[1]
    mr.set(a, b"\x0f")
    mr.set(b, b"\xf0\x01")
    p = mr.pipeline(transaction=True)
    p.bitop("or", dst, a, b)
    p.get(dst)
    assert p.execute() == [2, b"\xff\x01"]


# --------------------------------------------------------------------------- BITFIELD


def test_bitfield_get_set_incrby(rb):
    assert bf(rb, "k", "SET", "u8", 0, 255, "GET", "u8", 0, "GET", "i8", 0) == [0, 255, -1]
    assert rb.get("k") == b"\xff"
    assert bf(rb, "k", "set", "i5", 8, -3, "get", "u5", 8, "get", "i5", 8) == [0, 29, -3]
    assert rb.get("k") == b"\xff\xe8"
    assert bf(rb, "k", "incrby", "u2", 100, 1, "incrby", "u2", 100, 1) == [1, 2]
    assert rb.strlen("k") == 13
    # Fields straddling bytes, and GET past the end reads zeros.
    rb.set("s", b"\x12\x34\x56\x78\x9a\xbc\xde\xf0\x11")
    assert bf(rb, "s", "get", "u8", 4, "get", "i64", 0, "get", "u8", 68, "get", "i5", 1000) == [
        0x23, 0x123456789abcdef0, 0x10, 0]
    assert bf(rb, "s", "get", "i64", 7) == [0x1a2b3c4d5e6f7808]
    assert bf(rb, "missing", "get", "u8", 0, "get", "i64", 0) == [0, 0]
    assert rb.exists("missing") == 0
    assert bf(rb, "k") == []


def test_bitfield_hash_offsets_count_fields(rb):
    assert bf(rb, "k", "set", "u8", "#1", 200, "set", "i16", "#1", -2) == [0, 0]
    assert rb.get("k") == b"\x00\xc8\xff\xfe"
    assert bf(rb, "k", "get", "u8", "#1", "get", "i16", "#1", "get", "u8", "#0") == [200, -2, 0]


def test_bitfield_overflow_wrap(r):
    assert bf(r, "k", "set", "u8", 0, 250, "incrby", "u8", 0, 10) == [0, 4]
    assert bf(r, "k", "overflow", "wrap", "incrby", "u8", 0, -5) == [255]
    assert bf(r, "k", "set", "i8", 8, 120, "incrby", "i8", 8, 10) == [0, -126]
    assert bf(r, "k", "incrby", "i8", 8, -3) == [127]
    assert bf(r, "k", "set", "i8", 8, 200, "get", "i8", 8) == [127, -56]
    assert bf(r, "k", "set", "i64", 16, I64_MAX, "incrby", "i64", 16, 1) == [0, I64_MIN]
    assert bf(r, "k", "set", "u63", 16, -1, "get", "u63", 16) == [1 << 62, I64_MAX]


def test_bitfield_overflow_sat(r):
    assert bf(r, "k", "overflow", "sat", "set", "u8", 0, 300, "get", "u8", 0) == [0, 255]
    assert bf(r, "k", "OVERFLOW", "SAT", "incrby", "u8", 0, 10, "incrby", "u8", 0, -1000) == [
        255, 0]
    assert bf(r, "k", "overflow", "sat", "set", "u8", 0, -1, "get", "u8", 0) == [0, 255]
    assert bf(r, "k", "overflow", "sat", "incrby", "i8", 8, 200, "incrby", "i8", 8, -300) == [
        127, -128]
    assert bf(r, "k", "overflow", "sat", "incrby", "i64", 16, I64_MIN,
              "incrby", "i64", 16, -1) == [I64_MIN, I64_MIN]
    # Redis's overflow check wraps the room left for a SET far below an i33's minimum, so it
    # saturates up, not down.
    assert bf(r, "q", "overflow", "sat", "set", "i33", 0, I64_MIN, "get", "i33", 0) == [
        0, 4294967295]
    assert bf(r, "q", "overflow", "sat", "set", "i8", 0, I64_MIN + 128, "get", "i8", 0) == [
        127, -128]


def test_bitfield_overflow_fail(rb):
    assert bf(rb, "k", "overflow", "fail", "set", "u8", 0, 255, "incrby", "u8", 0, 1,
              "get", "u8", 0) == [0, None, 255]
    assert bf(rb, "k", "overflow", "fail", "set", "i4", 8, 8, "incrby", "i4", 8, 7,
              "incrby", "i4", 8, -16) == [None, 7, None]
    # The mode applies to the operations after it.
    assert bf(rb, "k", "incrby", "u8", 0, 1, "overflow", "fail", "incrby", "u8", 0, 300) == [
        0, None]
    # Even when every write fails, the key is created (zero padded), as Redis does.
    assert bf(rb, "new", "overflow", "fail", "incrby", "u8", 0, 300) == [None]
    assert rb.get("new") == b"\x00"


def test_bitfield_errors(r):
    r.rpush("list", "a")
    for t in ("u64", "i65", "i0", "x8", "U8", "u08", "u+8", "i"):
        assert error_of(bf, r, "k", "get", t, 0) == BF_TYPE
    for off in (-1, "#-1", "x", "#x", 4294967296, "#536870912"):
        assert error_of(bf, r, "k", "get", "u8", off) == BIT_OFFSET
    assert bf(r, "k", "get", "u8", 4294967295, "get", "u8", "#536870911") == [0, 0]
    assert error_of(bf, r, "k", "get", "i64", "#67108864") == BIT_OFFSET
    assert error_of(bf, r, "k", "get", "i8", "#1152921504606846976") == BIT_OFFSET
    assert error_of(bf, r, "k", "set", "u8", 0) == SYNTAX
    assert error_of(bf, r, "k", "get", "u8") == SYNTAX
    assert error_of(bf, r, "k", "foo") == SYNTAX
    assert error_of(bf, r, "k", "overflow") == SYNTAX
    assert error_of(bf, r, "k", "get", "u8", 0, "get") == SYNTAX
    assert error_of(bf, r, "k", "overflow", "foo") == "Invalid OVERFLOW type specified"
    assert error_of(bf, r, "k", "set", "u8", 0, "x") == NOT_INT
    assert error_of(bf, r, "k", "incrby", "u64", "#0", "x") == BF_TYPE
    assert error_of(bf, r, "k", "incrby", "u8", "#x", "x") == BIT_OFFSET
    assert error_of(bf, r, "list", "get", "u8", 0) == WRONGTYPE
    assert error_of(bf, r, "list", "set", "u8", 0, 1) == WRONGTYPE
    assert error_of(bf, r, "list", "overflow", "wrap") == WRONGTYPE
    assert error_of(bf, r, "list", "get", "x8", 0) == BF_TYPE  # parsed before the lookup
    assert r.exists("k") == 0


def test_bitfield_ro(r):
    r.set("k", "f")
    assert bf_ro(r, "k", "get", "u8", 0, "GET", "i4", 0) == [102, 6]
    assert bf_ro(r, "missing", "get", "u8", 0) == [0]
    ro_only = "BITFIELD_RO only supports the GET subcommand"
    assert error_of(bf_ro, r, "k", "set", "u8", 0, 1) == ro_only
    assert error_of(bf_ro, r, "missing", "incrby", "u8", 0, 1) == ro_only
    assert error_of(bf_ro, r, "k", "get", "u8", 0, "set", "u8", 0) == SYNTAX
    assert r.get("k") == "f"


def test_command_info_matches_redis(r):
    info = r.execute_command("COMMAND", "INFO", "setbit", "getbit", "bitcount", "bitpos",
                             "bitop", "bitfield", "bitfield_ro")
    got = {name: (v["arity"], sorted(v["flags"]), v["first_key_pos"], v["last_key_pos"],
                  v["step_count"]) for name, v in info.items()}
    assert got == {
        "setbit": (4, ["denyoom", "write"], 1, 1, 1),
        "getbit": (3, ["fast", "readonly"], 1, 1, 1),
        "bitcount": (-2, ["readonly"], 1, 1, 1),
        "bitpos": (-3, ["readonly"], 1, 1, 1),
        "bitop": (-4, ["denyoom", "write"], 2, -1, 1),
        "bitfield": (-2, ["denyoom", "write"], 1, 1, 1),
        "bitfield_ro": (-2, ["fast", "readonly"], 1, 1, 1),
    }


@pytest.mark.lavik_only
def test_bitmaps_read_from_the_device(spawn_server):
    # No DRAM cache, and values above the 2 MiB write buffer go straight to the data file: every
    # read below is an asynchronous device read.
    s = spawn_server(threads=2, extra_args=["--cache-mb", "0"])
    c = s.client(decode_responses=False)
    a, b = spread_keys(2, "dev")
    size = 3 << 20
    c.set(a, b"\x00" * (size - 1) + b"\x01")
    c.set(b, b"\x80" + b"\x00" * (size - 1))
    reads = int(c.info("storage")["device_reads"])
    assert c.getbit(a, size * 8 - 1) == 1
    assert c.bitcount(a) == 1
    assert c.bitpos(a, 1) == size * 8 - 1
    assert bf(c, b, "get", "u8", 0, "incrby", "u8", 0, 1) == [128, 129]
    assert c.setbit(a, 0, 1) == 0
    assert c.bitop("or", "dst", a, b) == size
    assert c.bitcount("dst") == 3
    assert c.getrange(a, 0, 0) == b"\x80"
    assert int(c.info("storage")["device_reads"]) >= reads + 8
    c.close()
