"""FUNCTION DUMP and FUNCTION RESTORE [FLUSH|APPEND|REPLACE]: Redis 7.0's payload (0xf5 + each
library's code as an RDB string, then RDB version 10 and the CRC-64), its policies and its
error texts, and payloads exchanged both ways with a redis-server 7.0.15 of the test's own.

Every expected value is Redis 7.0.15's (run with LAVIK_TEST_TARGET=redis to check them).
"""
import pytest
import redis

from conftest import err
from test_dump import crc64, peer  # noqa: F401 (peer: a redis-server of the test's own)

LIB_A = ("#!lua name=liba\n"
         "redis.register_function('fa', function(keys, args) return 'a' end)")
LIB_B = ("#!lua name=libb\n"
         "redis.register_function{function_name='fb', callback=function(keys, args) "
         "return redis.call('incr', keys[1]) end, flags={'allow-oom'}, description='incr'}")
# The same function name as LIB_A's, in another library.
LIB_A_TWIN = ("#!lua name=twin\n"
              "redis.register_function('fa', function(keys, args) return 'twin' end)")
# FUNCTION DUMP of a redis-server 7.0.15 holding LIB_A and a longer library: the second code is
# LZF-compressed, as Redis writes strings over 20 bytes when compression pays.
REDIS_DUMP = (
    b"\xf5@J#!lua name=mylib\nredis.register_function('f1', function(k,a) return 1 end)\xf5"
    b"\xc3@|@\x86\x1f#!lua name=lib2\nredis.register_f\x07unction{\xc0\x08\x00_`*\x0e'f2', "
    b"callback=\xc0\x1c\x1f(k,a) return 2 end, flags={'no-w\x0frites'}, descrip@Y\x04='d'}\n"
    b"\x00!7s\x08m\xa1_\xd1")


def rdb_string(s):
    assert len(s) < 1 << 14
    return bytes([len(s)]) + s if len(s) < 64 else bytes([0x40 | len(s) >> 8, len(s) & 0xff]) + s


def payload(body, version=10):
    b = body + version.to_bytes(2, "little")
    return b + crc64(b).to_bytes(8, "little")


def library(code):
    return b"\xf5" + rdb_string(code.encode())


@pytest.fixture
def f(rb):
    rb.function_flush()
    yield rb
    rb.function_flush()


def names(c):
    return sorted(dict(zip(lib[::2], lib[1::2]))[b"library_name"].decode()
                  for lib in c.function_list())


def restore(c, data, *policy):
    return c.execute_command("FUNCTION", "RESTORE", data, *policy)


def restore_error(c, data, *policy):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("FUNCTION", "RESTORE", data, *policy)
    return err(e)


def test_dump_format(f):
    assert f.function_dump() == payload(b"")
    f.function_load(LIB_A)
    assert f.function_dump() == payload(library(LIB_A))


def test_round_trip(f):
    f.function_load(LIB_A)
    f.function_load(LIB_B)
    listed = f.function_list(withcode=True)
    dump = f.function_dump()
    f.function_flush()
    assert f.function_list() == []
    assert restore(f, dump) == b"OK"
    assert sorted(map(str, f.function_list(withcode=True))) == sorted(map(str, listed))
    assert f.fcall("fa", 0) == b"a"
    assert f.fcall("fb", 1, "k") == 1
    # An empty payload restores nothing (and FLUSH with it empties the set).
    assert restore(f, payload(b"")) == b"OK"
    assert names(f) == ["liba", "libb"]
    assert restore(f, payload(b""), "FLUSH") == b"OK"
    assert names(f) == []


def test_restore_policies(f):
    f.function_load(LIB_A)
    dump_a = f.function_dump()
    # APPEND (the default) refuses a library that exists: a text without quotes, unlike LOAD's.
    assert restore_error(f, dump_a) == "Library liba already exists"
    assert restore_error(f, dump_a, "APPEND") == "Library liba already exists"
    assert restore(f, dump_a, "REPLACE") == b"OK"
    f.function_load(LIB_B)
    assert restore(f, dump_a, "flush") == b"OK"  # the policy is case-insensitive
    assert names(f) == ["liba"]
    assert restore(f, payload(library(LIB_B))) == b"OK"
    assert names(f) == ["liba", "libb"]
    assert restore_error(f, dump_a, "MERGE") == (
        "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")


def test_restore_function_collisions_are_all_or_nothing(f):
    f.function_load(LIB_A)
    twin = payload(library(LIB_B) + library(LIB_A_TWIN))
    for policy in ((), ("APPEND",), ("REPLACE",)):
        assert restore_error(f, twin, *policy) == "Function fa already exists"
        assert names(f) == ["liba"]  # libb was not added either
    assert restore(f, twin, "FLUSH") == b"OK"
    assert names(f) == ["libb", "twin"]
    assert f.fcall("fa", 0) == b"twin"
    # Twice the same library in one payload: LOAD's text.
    dup = payload(library(LIB_A) + library(LIB_A))
    assert restore_error(f, dup, "FLUSH") == "Library 'liba' already exists"
    assert names(f) == ["libb", "twin"]


BAD_PAYLOADS = [
    (b"", "DUMP payload version or checksum are wrong"),
    (b"abc", "DUMP payload version or checksum are wrong"),
    (payload(library(LIB_A))[:-1] + b"x", "DUMP payload version or checksum are wrong"),
    (payload(library(LIB_A), version=11), "DUMP payload version or checksum are wrong"),
    (payload(b"\x00" + rdb_string(b"abc")), "given type is not a function"),
    (payload(library(LIB_A) + b"\x00"), "given type is not a function"),
    (payload(b"\xf5"), "Failed loading library payload"),
    (payload(b"\xf5\x20abc"), "Failed loading library payload"),
    (payload(b"\xf6"), "Failed loading library name"),
    (payload(b"\xf6" + rdb_string(b"abc")), "Failed loading engine name"),
    (payload(b"\xf6\x01q\x03lua\x01"), "Failed loading library description"),
    (payload(b"\xf6\x01q\x03lua\x00"), "Failed loading library blob"),
    (payload(library("return 1")), "Missing library metadata"),
    (payload(library("#!lua name=x\nlocal a = 1")), "No functions registered"),
    (payload(library("#!lua name=x\nfoo(")),
     "Error compiling function: user_function:2: unexpected symbol near '<eof>'"),
    (payload(b"\xf5\xc0\x05"), "Missing library metadata"),  # an int-encoded string
]


@pytest.mark.parametrize("data,text", BAD_PAYLOADS)
def test_restore_errors(f, data, text):
    f.function_load(LIB_B)
    assert restore_error(f, data) == text
    assert names(f) == ["libb"]


def test_restore_older_version_and_pre_ga_format(f):
    assert restore(f, payload(library(LIB_A), version=9)) == b"OK"
    # Redis 7.0 rc1/rc2's record: name, engine, description flag (+ description), code.
    body = b"redis.register_function('pg', function(k, a) return 'pre' end)"
    pre_ga = payload(b"\xf6" + rdb_string(b"plib") + rdb_string(b"LUA") + b"\x01" +
                     rdb_string(b"a description") + rdb_string(body))
    assert restore(f, pre_ga) == b"OK"
    assert f.fcall("pg", 0) == b"pre"
    (lib,) = f.function_list(library="plib", withcode=True)
    assert dict(zip(lib[::2], lib[1::2]))[b"library_code"] == b"#!LUA name=plib\n" + body


SYNTAX_ERRORS = [
    (("DUMP", "x"), "wrong number of arguments for 'function|dump' command"),
    (("RESTORE",), "wrong number of arguments for 'function|restore' command"),
    (("RESTORE", "a", "FLUSH", "x"),
     "unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION HELP."),
    (("FLUSH", "a", "b"),
     "unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP."),
]


@pytest.mark.parametrize("args,text", SYNTAX_ERRORS)
def test_arity_and_syntax(f, args, text):
    with pytest.raises(redis.ResponseError) as e:
        f.execute_command("FUNCTION", *args)
    assert err(e) == text


def test_command_info(f):
    info = f.execute_command("COMMAND", "INFO", "function|dump", "function|restore")
    shape = {name: (i["arity"], i["flags"], i["first_key_pos"], i["last_key_pos"],
                    i["step_count"]) for name, i in info.items()}
    assert shape == {"function|dump": (2, ["noscript"], 0, 0, 0),
                     "function|restore": (-3, ["write", "denyoom", "noscript"], 0, 0, 0)}


def test_redis_dump_restores_here(f):
    assert restore(f, REDIS_DUMP) == b"OK"
    assert names(f) == ["lib2", "mylib"]
    assert f.fcall("f1", 0) == 1
    assert f.fcall_ro("f2", 0) == 2


def test_exchange_with_redis_both_ways(f, peer):
    peer.function_flush()
    peer.function_load(LIB_A)
    peer.function_load(LIB_B + "\n-- " + "padding " * 40)  # long enough for Redis to compress
    assert restore(f, peer.function_dump()) == b"OK"
    assert names(f) == ["liba", "libb"]
    assert f.fcall("fb", 1, "k") == 1
    f.function_delete("liba")
    f.function_load(LIB_A_TWIN)
    assert restore(peer, f.function_dump(), "FLUSH") == b"OK"
    assert peer.fcall("fa", 0) == b"twin"
    assert sorted(map(str, peer.function_list(withcode=True))) == \
        sorted(map(str, f.function_list(withcode=True)))
    # Uncompressed libraries: the very same bytes.
    peer.function_flush()
    f.function_flush()
    peer.function_load(LIB_A)
    f.function_load(LIB_A)
    assert f.function_dump() == peer.function_dump()
    peer.function_flush()
