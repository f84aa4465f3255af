"""Redis 7.0's read-only sandbox tables (the globals, `redis` and every library table: writes
raise "Attempt to modify a readonly table", the raw built-ins see through), in EVAL and in
functions, and SCRIPT DEBUG on a server without the Lua debugger.

Expected replies are Redis 7.0.15's (run with LAVIK_TEST_TARGET=redis to check them), except
SCRIPT DEBUG YES|SYNC, which Lavik refuses (it has no debugger): that test is lavik-only.
"""
import hashlib

import pytest
import redis

from conftest import err

RO = "Attempt to modify a readonly table"


def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()


def error_of(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return err(e)


def at_line(s, text, prefix="user_script:1: "):
    return f"{prefix}{text} script: {sha1(s)}, on @user_script:1."


# Assignments into a library table: the error carries the Lua position.
WRITES = [
    "string.foo = 1 return 1",
    "math.random = nil return 1",
    "string.len = nil return 1",
    "table.insert = nil return 1",
    "cjson.encode = nil return 1",
    "bit.band = nil return 1",
    "struct.pack = nil return 1",
    "cmsgpack.pack = nil return 1",
    "coroutine.create = nil return 1",
    "redis.call = nil return 1",
    "local s = string; s.x = 2; return s.x",
    "getmetatable('').__index.upper = nil return 1",
    "getmetatable('').x = 1 return 1",
    "local t = getmetatable(_G); t.x = 1; return 1",
    "_G.x = 1 return 1",
]


# Built-ins that bypass metatables: refused without a position (a C-level check in Redis).
RAW_WRITES = [
    "rawset(string, 'x', 1) return string.x",
    "setmetatable(string, {}) return 1",
    "setmetatable(_G, nil) return 1",
    "table.insert(string, 1) return 1",
]


@pytest.mark.parametrize("script,prefix", [(s, "user_script:1: ") for s in WRITES] +
                         [(s, "") for s in RAW_WRITES])
def test_library_tables_are_read_only(r, script, prefix):
    assert error_of(r.eval, script, 0) == at_line(script, RO, prefix=prefix)


READS = [
    ("return tostring(getmetatable('').__index == string)", "true"),
    ("return rawequal(string, getmetatable('').__index)", 1),
    ("return rawget(string, 'len') ~= nil", 1),
    ("return rawget(redis, 'call') ~= nil", 1),
    ("return rawget(_G, 'string') == string", 1),
    ("local n = 0 for k, v in pairs(math) do n = n + 1 end return n", 31),
    ("return type(next(string))", "string"),
    ("return type(getmetatable(_G))", "table"),
    ("return type(getmetatable(string))", "nil"),
    ("return type(getmetatable(redis))", "nil"),
    ("return type(getmetatable(''))", "table"),
    ("return getmetatable(setmetatable({}, {__metatable='x'}))", "x"),
    ("return ('abc'):upper() .. string.format('%d', 5) .. math.floor(2.5)", "ABC52"),
    ("local t = {3, 1, 2} table.sort(t) table.insert(t, 9) return t", [1, 2, 3, 9]),
    ("local t = {} rawset(t, 'a', 1) setmetatable(t, {}) return t.a", 1),
    ("KEYS[1] = 'x' return KEYS[1]", "x"),
    ("return cjson.encode({1, 2}) .. bit.band(7, 3)", "[1,2]3"),
]


@pytest.mark.parametrize("script,expected", READS)
def test_reads_and_own_tables_work(r, script, expected):
    assert r.eval(script, 0) == expected


def test_function_code_sees_read_only_libraries(r):
    r.function_flush()
    r.function_load("#!lua name=ro\n"
                    "redis.register_function('patch', function(k, a) string.rep = nil end)\n"
                    "redis.register_function('use', function(k, a) return string.rep('ab', 2) end)")
    try:
        assert error_of(r.fcall, "patch", 0) == \
            f"user_function:2: {RO} script: patch, on @user_function:2."
        assert r.fcall("use", 0) == "abab"
    finally:
        r.function_flush()


def test_script_debug_no_and_errors(r):
    debug = r.execute_command
    assert debug("SCRIPT", "DEBUG", "NO") == "OK"
    assert debug("SCRIPT", "DEBUG", "no") == "OK"
    assert error_of(debug, "SCRIPT", "DEBUG", "maybe") == "Use SCRIPT DEBUG YES/SYNC/NO"
    assert error_of(debug, "SCRIPT", "DEBUG") == \
        "wrong number of arguments for 'script|debug' command"
    p = r.pipeline(transaction=True)
    p.execute_command("SCRIPT", "DEBUG", "NO")
    assert "SCRIPT DEBUG must be called outside a pipeline" in error_of(p.execute)
    s = "return redis.call('script', 'debug', 'no')"
    assert error_of(r.eval, s, 0) == \
        at_line(s, "This Redis command is not allowed from script", prefix="")
    info = r.execute_command("COMMAND", "INFO", "script|debug")["script|debug"]
    assert (info["arity"], info["flags"], info["first_key_pos"]) == (3, ["noscript"], 0)


@pytest.mark.lavik_only
def test_script_debug_yes_and_sync_are_refused(r):
    # Redis would start its Lua debugger (LDB) here; Lavik has none and says so.
    for mode in ("YES", "sync"):
        assert error_of(r.execute_command, "SCRIPT", "DEBUG", mode) == \
            "SCRIPT DEBUG YES|SYNC is not supported: Lavik has no Lua debugger"
    assert r.eval("return 1", 0) == 1  # scripts still run normally
