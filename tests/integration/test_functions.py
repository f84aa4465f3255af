"""Redis 7.0 functions: FUNCTION LOAD/LIST/DELETE/FLUSH/STATS/KILL/HELP, FCALL, FCALL_RO.

Error texts are Redis 7.0.15's (run with LAVIK_TEST_TARGET=redis to check them).
"""
import threading

import pytest
import redis

from conftest import err, spread_keys, wait_until

LIB = ("#!lua name=mylib\n"
       "redis.register_function('incr1', function(keys, args) "
       "return redis.call('incr', keys[1]) end)\n"
       "redis.register_function{function_name='echo1', callback=function(keys, args) "
       "return args[1] end, flags={'no-writes'}, description='echoes'}")


@pytest.fixture
def f(r):
    r.function_flush()
    yield r
    r.function_flush()


def load_error(r, code, replace=False):
    with pytest.raises(redis.ResponseError) as e:
        r.function_load(code, replace=replace)
    return err(e)


def test_load_and_call(f):
    assert f.function_load(LIB) == "mylib"
    assert f.fcall("incr1", 1, "k") == 1
    assert f.fcall("incr1", 1, "k") == 2
    assert f.fcall("echo1", 0, "hello") == "hello"
    assert f.fcall_ro("echo1", 0, "hello") == "hello"
    with pytest.raises(redis.ResponseError) as e:
        f.fcall_ro("incr1", 1, "k")
    assert err(e) == "Can not execute a script with write flag using *_ro command."
    assert load_error(f, LIB) == "Library 'mylib' already exists"
    assert f.function_load(LIB, replace=True) == "mylib"
    assert f.fcall("incr1", 1, "k") == 3


def test_fcall_errors(f):
    f.function_load(
        "#!lua name=e\n"
        "redis.register_function('fe', function(k, a) error('boom') end)\n"
        "redis.register_function('fe2', function(k, a) return redis.call('nosuch') end)\n"
        "redis.register_function('fe3', function(k, a) return KEYS end)")
    for name, text in (
            ("fe", "user_function:2: boom script: fe, on @user_function:2."),
            ("fe2", "Unknown Redis command called from script script: fe2, on @user_function:3."),
            ("fe3", "user_function:4: Script attempted to access nonexistent global variable "
                    "'KEYS' script: fe3, on @user_function:4.")):
        with pytest.raises(redis.ResponseError) as e:
            f.fcall(name, 0)
        assert err(e) == text
    for args, text in ((("nosuch", 0), "Function not found"),
                       (("nosuch", 5, "k"), "Function not found"),
                       (("fe", 5, "k"), "Number of keys can't be greater than number of args"),
                       (("fe", -1), "Number of keys can't be negative")):
        with pytest.raises(redis.ResponseError) as e:
            f.fcall(*args)
        assert err(e) == text


LOAD_ERRORS = [
    ("return 1", "Missing library metadata"),
    ("#!lua\nreturn 1", "Library name was not given"),
    ("#!lua name=x\nreturn 1", "No functions registered"),
    ("#!lua name=x foo=bar\nreturn 1", "Invalid metadata value given: foo=bar"),
    ("#!lua name=z name=y\nredis.register_function('zz', function() end)",
     "Invalid metadata value, name argument was given multiple times"),
    ("#!js name=up\nredis.register_function('up1', function() return 1 end)",
     "Engine 'js' not found"),
    ("#!lua name=b-ad\nredis.register_function('g', function() return 1 end)",
     "Library names can only contain letters, numbers, or underscores(_) and must be at least "
     "one character long"),
    ("#!lua name=x\nlocal a = +",
     "Error compiling function: user_function:2: unexpected symbol near '+'"),
    ("#!lua name=x\nredis.register_function('f-1', function() return 1 end)",
     "Error registering functions: ERR Library names can only contain letters, numbers, or "
     "underscores(_) and must be at least one character long"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() return 1 "
     "end, flags={'bogus'}}", "Error registering functions: ERR unknown flag given"),
    ("#!lua name=x\nredis.register_function('g')",
     "Error registering functions: ERR calling redis.register_function with a single argument "
     "is only applicable to Lua table (representing named arguments)."),
    ("#!lua name=x\nredis.register_function('a', 'b', 'c')",
     "Error registering functions: ERR wrong number of arguments to redis.register_function"),
    ("#!lua name=x\nredis.register_function({}, function() end)",
     "Error registering functions: ERR first argument to redis.register_function must be a "
     "string"),
    ("#!lua name=x\nredis.register_function('zz', 5)",
     "Error registering functions: ERR second argument to redis.register_function must be a "
     "function"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() end, bogus=1}",
     "Error registering functions: ERR unknown argument given to redis.register_function"),
    ("#!lua name=x\nredis.register_function{callback=function() return 1 end}",
     "Error registering functions: ERR redis.register_function must get a function name "
     "argument"),
    ("#!lua name=x\nredis.register_function{function_name='zz'}",
     "Error registering functions: ERR redis.register_function must get a callback argument"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() end, "
     "flags='no-writes'}",
     "Error registering functions: ERR flags argument to redis.register_function must be a "
     "table representing function flags"),
    ("#!lua name=x\nredis.register_function('g', function() end) "
     "redis.register_function('g', function() end)",
     "Error registering functions: ERR Function already exists in the library"),
    ("#!lua name=x\nredis.call('ping')",
     "Error registering functions: ERR user_function:2: Script attempted to access nonexistent "
     "global variable 'call'"),
    ("#!lua name=x\nerror('boom')",
     "Error registering functions: ERR user_function:2: Script attempted to access nonexistent "
     "global variable 'error'"),
    ("#!lua name=x\nx = 5 redis.register_function('g', function() return 1 end)",
     "Error registering functions: ERR user_function:2: Attempt to modify a readonly table"),
]


@pytest.mark.parametrize("code,text", LOAD_ERRORS, ids=[t for _, t in LOAD_ERRORS])
def test_load_errors(f, code, text):
    assert load_error(f, code) == text
    assert libraries(f) == []


def test_function_name_collision_across_libraries(f):
    f.function_load(LIB)
    assert load_error(f, "#!lua name=other\nredis.register_function('incr1', function() end)") \
        == "Function incr1 already exists"


def as_dict(flat):
    """A RESP2 map (flat key/value list) as a dict."""
    return dict(zip(flat[::2], flat[1::2]))


def libraries(r, *args):
    """FUNCTION LIST as dicts, functions included."""
    libs = [as_dict(lib) for lib in r.execute_command("FUNCTION", "LIST", *args)]
    for lib in libs:
        lib["functions"] = [as_dict(fn) for fn in lib["functions"]]
    return libs


def test_list_delete_stats_flush(f):
    f.function_load(LIB)
    f.function_load("#!lua name=other\nredis.register_function('o1', function() return 1 end)")
    libs = libraries(f)
    assert sorted(lib["library_name"] for lib in libs) == ["mylib", "other"]
    mylib = [lib for lib in libs if lib["library_name"] == "mylib"][0]
    assert mylib["engine"] == "LUA"
    fns = sorted(mylib["functions"], key=lambda fn: fn["name"])
    assert fns == [{"name": "echo1", "description": "echoes", "flags": ["no-writes"]},
                   {"name": "incr1", "description": None, "flags": []}]
    assert "library_code" not in mylib
    coded = libraries(f, "WITHCODE", "LIBRARYNAME", "my*")
    assert [lib["library_name"] for lib in coded] == ["mylib"]
    assert coded[0]["library_code"] == LIB
    with pytest.raises(redis.ResponseError) as e:
        f.execute_command("FUNCTION", "LIST", "bogus")
    assert err(e) == "Unknown argument bogus"
    stats = f.execute_command("FUNCTION", "STATS")
    assert stats[0:2] == ["running_script", None]
    assert stats[2] == "engines"
    assert stats[3] == ["LUA", ["libraries_count", 2, "functions_count", 3]]
    with pytest.raises(redis.ResponseError) as e:
        f.function_delete("nosuch")
    assert err(e) == "Library not found"
    assert f.execute_command("FUNCTION", "DELETE", "other") == "OK"
    with pytest.raises(redis.ResponseError) as e:
        f.fcall("o1", 0)
    assert err(e) == "Function not found"
    with pytest.raises(redis.ResponseError) as e:
        f.execute_command("FUNCTION", "FLUSH", "bogus")
    assert err(e) == "FUNCTION FLUSH only supports SYNC|ASYNC option"
    assert f.execute_command("FUNCTION", "FLUSH", "ASYNC") == "OK"
    assert libraries(f) == []
    with pytest.raises(redis.ResponseError) as e:
        f.function_kill()
    assert err(e) == "NOTBUSY No scripts in execution right now."
    help_lines = f.execute_command("FUNCTION", "HELP")
    assert help_lines[0] == "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_lines[-1] == "    Prints this help."


def test_functions_run_on_every_worker(mr):
    mr.function_flush()
    mr.function_load(
        "#!lua name=multi\n"
        "redis.register_function('setall', function(keys, args) "
        "for i, k in ipairs(keys) do redis.call('set', k, args[1]) end "
        "return redis.call('mget', unpack(keys)) end)")
    keys = spread_keys(4, "fn")
    # From several connections (different workers), the library is loaded where it runs.
    for _ in range(4):
        c = redis.Redis(**mr.connection_pool.connection_kwargs)
        assert c.fcall("setall", len(keys), *keys, "v") == ["v"] * 4
        c.close()
    mr.function_flush()


def test_function_kill(f):
    f.config_set("busy-reply-threshold", 100)
    try:
        f.function_load("#!lua name=slow\n"
                        "redis.register_function('spin', function() "
                        "local i = 0 while true do i = i + 1 end end)")
        box = []

        def run():
            c = redis.Redis(**f.connection_pool.connection_kwargs)
            try:
                box.append(c.fcall("spin", 0))
            except redis.ResponseError as e:
                box.append(str(e))
            c.close()

        t = threading.Thread(target=run)
        t.start()
        other = redis.Redis(**f.connection_pool.connection_kwargs)

        def busy():
            try:
                other.ping()
                return False
            except redis.ResponseError as e:
                return str(e).startswith("BUSY")

        assert wait_until(busy, timeout=5)
        with pytest.raises(redis.ResponseError) as e:
            other.get("x")
        assert err(e) == ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                          "SHUTDOWN NOSAVE.")
        stats = other.execute_command("FUNCTION", "STATS")
        assert stats[1][0:4] == ["name", "spin", "command", ["FCALL", "spin", "0"]]
        assert stats[1][4] == "duration_ms" and stats[1][5] >= 0
        assert other.function_kill() == "OK"
        t.join(5)
        assert not t.is_alive()
        assert box == ["Script killed by user with SCRIPT KILL... script: spin, "
                       "on @user_function:2."]
        other.close()
    finally:
        f.config_set("busy-reply-threshold", 5000)
