"""Scripts over `maxmemory` (Redis 7.0 script.c / server.c): a script that declares its flags
and may write without allow-oom is refused before it runs; an EVAL without a shebang runs, but
its first denyoom command before any write fails with the OOM error; allow-oom and no-writes
scripts and functions run. Expected replies are Redis 7.0.15's (LAVIK_TEST_TARGET=redis).
"""
import hashlib

import pytest
import redis

from conftest import ServerProcess, err, wait_until

OOM = "OOM command not allowed when used memory > 'maxmemory'."
LIB = ("#!lua name=oomlib\n"
       "redis.register_function('plain', function(k, a) return 1 end)\n"
       "redis.register_function{function_name='grow', callback=function(k, a) "
       "return redis.call('set', k[1], 'v') end, flags={'allow-oom'}}\n"
       "redis.register_function{function_name='look', callback=function(k, a) "
       "return redis.call('get', k[1]) end, flags={'no-writes'}}")
SHEBANG_GET = "#!lua\nreturn redis.call('get', KEYS[1])"
ALLOW_OOM_SET = "#!lua flags=allow-oom\nreturn redis.call('set', KEYS[1], 'b')"
NO_WRITES_GET = "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])"
COMPAT_SET = "return redis.call('set', KEYS[1], 'b')"


def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()


@pytest.fixture(scope="module")
def oom_server(request):
    """A server of its own, over maxmemory once the test starts (functions loaded before)."""
    s = ServerProcess(threads=2).start()
    request.addfinalizer(s.cleanup)
    c = s.client()
    c.set("a", "before")
    c.function_load(LIB)
    for script in (SHEBANG_GET, ALLOW_OOM_SET, NO_WRITES_GET, COMPAT_SET):
        c.eval(script, 1, "warm")  # compiled on a worker: EVALSHA takes its fast path
    c.config_set("maxmemory", "1")

    def refused():
        try:
            c.set("probe", "x")
            return False
        except redis.ResponseError as e:
            return str(e) == OOM
    assert wait_until(refused, timeout=10)
    return c


def error_of(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return err(e)


def test_eval_without_shebang_fails_at_its_first_denyoom_command(oom_server):
    c = oom_server
    assert error_of(c.eval, COMPAT_SET, 1, "a") == \
        f"{OOM} script: {sha1(COMPAT_SET)}, on @user_script:1."
    assert error_of(c.evalsha, sha1(COMPAT_SET), 1, "a") == \
        f"{OOM} script: {sha1(COMPAT_SET)}, on @user_script:1."
    assert c.eval("return redis.call('get', KEYS[1])", 1, "a") == "before"
    assert c.eval_ro("return redis.call('get', KEYS[1])", 1, "a") == "before"
    # redis.pcall hands the error to the script, which returns it as its reply.
    assert error_of(c.eval, "return redis.pcall('set', KEYS[1], 'b')", 1, "a") == OOM
    # After a first write the script is past the point where it could be stopped cleanly.
    assert c.eval("redis.call('del', 'nokey') return redis.call('set', KEYS[1], 'c')",
                  1, "a") == "OK"
    assert c.get("a") == "c"


def test_scripts_with_flags_are_checked_before_they_run(oom_server):
    c = oom_server
    assert error_of(c.eval, SHEBANG_GET, 1, "a") == OOM
    assert error_of(c.evalsha, sha1(SHEBANG_GET), 1, "a") == OOM
    assert c.eval(ALLOW_OOM_SET, 1, "b") == "OK"
    assert c.evalsha(sha1(ALLOW_OOM_SET), 1, "b") == "OK"
    assert c.eval(NO_WRITES_GET, 1, "a") == "c"
    assert c.evalsha(sha1(NO_WRITES_GET), 1, "a") == "c"


def test_functions_over_maxmemory(oom_server):
    c = oom_server
    assert error_of(c.fcall, "plain", 0) == OOM
    assert c.fcall("grow", 1, "g") == "OK"
    assert c.fcall("look", 1, "g") == "v"
    assert c.fcall_ro("look", 1, "g") == "v"
    assert error_of(c.function_load, "#!lua name=more\n"
                    "redis.register_function('m', function() return 1 end)") == OOM
    assert error_of(c.execute_command, "FUNCTION", "RESTORE", c.function_dump(), "REPLACE") == OOM
    assert c.function_delete("oomlib") is True  # not denyoom: it frees memory
    assert error_of(c.fcall, "plain", 0) == "Function not found"
