"""Lua scripting: EVAL / EVALSHA / EVAL_RO / EVALSHA_RO / SCRIPT, as Redis 7.0.15 has them.

Reply bytes and error texts are Redis's (run with LAVIK_TEST_TARGET=redis to check them).
"""
import hashlib
import threading
import time

import pytest
import redis

from conftest import TARGET, err, spread_keys, wait_until


def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()


def eval_bytes(conn, script, *args):
    conn.send_command("EVAL", script, *args)
    return conn.reply_bytes()


# --- conversions ---

# script -> the exact reply (RESP2 client, RESP2 script)
CONVERSIONS = [
    ("return 1", b":1\r\n"),
    ("return 3.99", b":3\r\n"),
    ("return -2.5", b":-2\r\n"),
    ("return 'x'", b"$1\r\nx\r\n"),
    ("return true", b":1\r\n"),
    ("return false", b"$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return {1,2,nil,3}", b"*2\r\n:1\r\n:2\r\n"),
    ("return {1,{2,'a'},{}}", b"*3\r\n:1\r\n*2\r\n:2\r\n$1\r\na\r\n*0\r\n"),
    ("return {ok='fine'}", b"+fine\r\n"),
    ("return {err='MY bad'}", b"-MY bad\r\n"),
    ("return {err=5}", b"*0\r\n"),
    ("return redis.status_reply('hi')", b"+hi\r\n"),
    ("return redis.error_reply('My Error')", b"-My Error\r\n"),
    ("return redis.error_reply('-CODE text')", b"-CODE text\r\n"),
    ("return {double=1.5}", b"$3\r\n1.5\r\n"),
    ("return {1,2,{ok='x'},{err='y'}}", b"*4\r\n:1\r\n:2\r\n+x\r\n-y\r\n"),
    ("return type(redis.call('get','nokey'))", b"$7\r\nboolean\r\n"),
    ("return redis.call('ping')", b"+PONG\r\n"),
    ("return type(redis.call('ping'))", b"$5\r\ntable\r\n"),
    ("return redis.pcall('nosuch').err",
     b"$44\r\nERR Unknown Redis command called from script\r\n"),
    ("return {pcall(function() error({err='x'}) end)}", b"*2\r\n$-1\r\n$1\r\nx\r\n"),
    ("return redis.sha1hex('')", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return redis.REDIS_VERSION_NUM", b":458767\r\n"),
    ("return redis.call('get', 1.5)", b"$-1\r\n"),
    ("return bit.band(7, 3) .. cjson.encode({1, 2})", b"$6\r\n3[1,2]\r\n"),
    ("return cjson.decode('{\"a\":[1,2]}').a[2]", b":2\r\n"),
    ("return bit.tohex(bit.lshift(1, 31))", b"$8\r\n80000000\r\n"),
    # struct, as Redis bundles it
    ("return struct.pack('>I2', 258)", b"$2\r\n\x01\x02\r\n"),
    ("return struct.pack('<i', -2)", b"$4\r\n\xfe\xff\xff\xff\r\n"),
    ("return {struct.unpack('>I2', struct.pack('>I2', 258))}", b"*2\r\n:258\r\n:3\r\n"),
    ("return struct.size('!4 b i d')", b":16\r\n"),
    ("return struct.pack('!4 b i', 1, 2)", b"$8\r\n\x01\x00\x00\x00\x02\x00\x00\x00\r\n"),
    ("return {struct.unpack('b c0', struct.pack('b c0', 3, 'abc'))}",
     b"*2\r\n$3\r\nabc\r\n:5\r\n"),
    ("return {struct.unpack('s s', struct.pack('s s', 'ab', 'cd'))}",
     b"*3\r\n$2\r\nab\r\n$2\r\ncd\r\n:7\r\n"),
    ("return struct.pack('>d', 1.5)", b"$8\r\n?\xf8\x00\x00\x00\x00\x00\x00\r\n"),
    ("return {struct.unpack('>h', '\\255\\254')}", b"*2\r\n:-2\r\n:3\r\n"),
    ("return {struct.unpack('B', 'abc', 2)}", b"*2\r\n:98\r\n:3\r\n"),
    ("return struct.pack('>l', -1)", b"$8\r\n" + b"\xff" * 8 + b"\r\n"),
    ("return struct.size('T L H')", b":18\r\n"),
    ("return select(2, pcall(struct.pack, 'q', 1))",
     b"$50\r\nbad argument #1 to '?' (invalid format option 'q')\r\n"),
    # cmsgpack, as Redis bundles it
    ("return cmsgpack.pack(1, -1, 200, -200, 70000, 5000000000, 1.5, 0.1, true, false, nil)",
     b"$38\r\n\x01\xff\xcc\xc8\xd1\xff8\xce\x00\x01\x11p\xcf\x00\x00\x00\x01*\x05\xf2\x00"
     b"\xca?\xc0\x00\x00\xcb?\xb9\x99\x99\x99\x99\x99\x9a\xc3\xc2\xc0\r\n"),
    ("return cmsgpack.pack({1, 2}, {a=1}, {}, string.rep('x', 40))",
     b"$50\r\n\x92\x01\x02\x81\xa1a\x01\x90\xd9(" + b"x" * 40 + b"\r\n"),
    ("return cjson.encode({cmsgpack.unpack(cmsgpack.pack({a={b=1}}, -3, 2.25, 'x'))})",
     b"$27\r\n[{\"a\":{\"b\":1}},-3,2.25,\"x\"]\r\n"),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2))}", b"*2\r\n:1\r\n:1\r\n"),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 1)}", b"*2\r\n:-1\r\n:2\r\n"),
    ("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
     b"*3\r\n:2\r\n:1\r\n:2\r\n"),
    ("return select(2, pcall(cmsgpack.unpack, '\\205'))",
     b"$23\r\nMissing bytes in input.\r\n"),
    ("return select(2, pcall(cmsgpack.unpack, '\\193'))",
     b"$25\r\nBad data format in input.\r\n"),
    ("return select(2, pcall(struct.size, 's'))",
     b"$53\r\nbad argument #1 to '?' (option 's' has no fixed size)\r\n"),
]


@pytest.mark.parametrize("script,expected", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_lua_to_resp_conversions(raw, script, expected):
    assert eval_bytes(raw(), script, "0") == expected


def test_resp3_conversions(raw):
    c = raw()
    c.cmd("HELLO", "3")
    assert eval_bytes(c, "return {double=1.5}", "0") == b",1.5\r\n"
    assert eval_bytes(c, "return {map={a=1}}", "0") == b"%1\r\n$1\r\na\r\n:1\r\n"
    assert eval_bytes(c, "return {set={a=true}}", "0") == b"~1\r\n$1\r\na\r\n"
    assert eval_bytes(c, "return {big_number='123'}", "0") == b"(123\r\n"
    assert eval_bytes(c, "return false", "0") == b"_\r\n"
    assert eval_bytes(c, "redis.setresp(3); return false", "0") == b"#f\r\n"
    assert eval_bytes(c, "redis.setresp(3); return true", "0") == b"#t\r\n"
    c.cmd("HSET", "h", "f", "v")
    script = "redis.setresp(3); local m = redis.call('hgetall', KEYS[1]); return m.map.f"
    assert eval_bytes(c, script, "1", "h") == b"$1\r\nv\r\n"
    script = "redis.setresp(3); return type(redis.call('get', 'nokey'))"
    assert eval_bytes(c, script, "0") == b"$3\r\nnil\r\n"


def test_keys_and_argv(r):
    assert r.eval("return {#KEYS, #ARGV, KEYS[1], ARGV[2]}", 1, "a", "", "c") == \
        [1, 2, "a", "c"]
    assert r.eval("return redis.call('set', KEYS[1], ARGV[1])", 1, "k", "v") == "OK"
    assert r.get("k") == "v"


# --- errors ---

def script_error(r, script, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.eval(script, *args)
    return err(e)


def test_error_texts(r):
    s = "return x"
    assert script_error(r, s, 0) == (
        "user_script:1: Script attempted to access nonexistent global variable 'x' "
        f"script: {sha1(s)}, on @user_script:1.")
    s = "x = 1"
    assert script_error(r, s, 0) == (
        f"user_script:1: Attempt to modify a readonly table script: {sha1(s)}, on @user_script:1.")
    s = "redis.call = nil"
    assert "Attempt to modify a readonly table" in script_error(r, s, 0)
    s = "return redis.call('nosuch')"
    assert script_error(r, s, 0) == (
        f"Unknown Redis command called from script script: {sha1(s)}, on @user_script:1.")
    s = "return redis.call('get')"
    assert script_error(r, s, 0) == (
        f"Wrong number of args calling Redis command from script script: {sha1(s)}, "
        "on @user_script:1.")
    s = "\nreturn redis.call('get', {})"
    assert script_error(r, s, 0) == (
        f"Lua redis lib command arguments must be strings or integers script: {sha1(s)}, "
        "on @user_script:2.")
    s = "return redis.call()"
    assert script_error(r, s, 0).startswith(
        "Please specify at least one argument for this redis lib call script:")
    s = "error('boom')"
    assert script_error(r, s, 0) == f"user_script:1: boom script: {sha1(s)}, on @user_script:1."
    s = "error({err='MINE boom2'})"
    assert script_error(r, s, 0) == f"MINE boom2 script: {sha1(s)}, on @user_script:1."
    assert script_error(r, "syntax error here", 0) == (
        "Error compiling script (new function): user_script:1: '=' expected near 'error'")
    r.set("s", "foo")
    s = "return redis.call('incr', 's')"
    assert script_error(r, s, 0) == (
        f"value is not an integer or out of range script: {sha1(s)}, on @user_script:1.")


def test_sandbox(r):
    for name in ("os", "io", "print", "debug", "loadfile", "dofile", "require", "getfenv"):
        assert "nonexistent global variable '%s'" % name in script_error(r, f"return {name}", 0)
    assert r.eval("return type(loadstring)", 0) == "function"
    s = "rawset(_G, 'zz', 1) return zz"
    assert script_error(r, s, 0) == (
        f"Attempt to modify a readonly table script: {sha1(s)}, on @user_script:1.")
    names = r.eval("local t = {} for k in pairs(_G) do t[#t + 1] = k end return t", 0)
    assert {"redis", "cjson", "bit", "struct", "math", "KEYS", "ARGV"} <= set(names)
    # Globals do not leak from one script to the next.
    assert "nonexistent global variable 'leak'" in script_error(r, "return leak", 0)


def test_argument_errors(r):
    assert script_error(r, "return 1", 2, "a") == \
        "Number of keys can't be greater than number of args"
    assert script_error(r, "return 1", -1) == "Number of keys can't be negative"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("EVAL", "return 1", "abc")
    assert err(e) == "value is not an integer or out of range"
    with pytest.raises(redis.exceptions.NoScriptError) as e:
        r.evalsha("ffffffffffffffffffffffffffffffffffffffff", 0)
    assert err(e) == "No matching script. Please use EVAL."


def test_commands_not_allowed_from_scripts(r):
    for call in ("'subscribe', 'a'", "'multi'", "'blpop', 'a', '0'"):
        s = f"return redis.call({call})"
        assert script_error(r, s, 0) == (
            f"This Redis command is not allowed from script script: {sha1(s)}, "
            "on @user_script:1.")


def test_read_only_scripts(r):
    s = "return redis.call('set', 'a', 1)"
    with pytest.raises(redis.ResponseError) as e:
        r.eval_ro(s, 1, "a")
    assert err(e) == (
        f"Write commands are not allowed from read-only scripts. script: {sha1(s)}, "
        "on @user_script:1.")
    r.set("a", "1")
    assert r.eval_ro("return redis.call('get', KEYS[1])", 1, "a") == "1"
    sha = r.script_load("return redis.call('get', KEYS[1])")
    assert r.evalsha_ro(sha, 1, "a") == "1"


def test_shebang(r):
    s = "#!lua flags=no-writes\nreturn redis.call('set','a',1)"
    assert script_error(r, s, 0) == (
        f"Write commands are not allowed from read-only scripts. script: {sha1(s)}, "
        "on @user_script:2.")
    assert r.eval("#!lua\nreturn redis.call('set','a',1)", 0) == "OK"
    assert r.eval("#!lua flags=allow-oom,no-writes\nreturn 1", 0) == 1
    assert r.eval("#!lua flags=\nreturn 1", 0) == 1
    assert script_error(r, "#!lua flags=bogus\nreturn 1", 0) == \
        "Unexpected flag in script shebang: bogus"
    assert script_error(r, "#!notlua\nreturn 1", 0) == \
        "Unexpected engine in script shebang: #!notlua"
    assert script_error(r, "#!lua name=x\nreturn 1", 0) == "Unknown lua shebang option: name=x"
    assert script_error(r, "#!lua flags=no-writes", 0) == "Invalid script shebang"
    assert script_error(r, "#!lua\nreturn +", 0) == \
        "Error compiling script (new function): user_script:2: unexpected symbol near '+'"


# --- SCRIPT ---

def test_script_load_exists_flush(r):
    body = "return redis.call('incr', KEYS[1])"
    sha = r.script_load(body)
    assert sha == sha1(body)
    assert r.script_exists(sha, sha.upper(), "nope") == [True, True, False]
    assert r.evalsha(sha, 1, "c") == 1
    assert r.evalsha(sha.upper(), 1, "c") == 2
    # EVAL caches what it runs.
    r.eval("return 7", 0)
    assert r.script_exists(sha1("return 7")) == [True]
    assert r.script_flush() is True
    assert r.script_exists(sha) == [False]
    assert r.execute_command("SCRIPT", "FLUSH", "ASYNC") == "OK"
    assert r.execute_command("SCRIPT", "FLUSH", "SYNC") == "OK"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("SCRIPT", "FLUSH", "bogus")
    assert err(e) == "SCRIPT FLUSH only support SYNC|ASYNC option"
    with pytest.raises(redis.ResponseError) as e:
        r.script_load("return +")
    assert err(e) == \
        "Error compiling script (new function): user_script:1: unexpected symbol near '+'"
    with pytest.raises(redis.ResponseError) as e:
        r.script_kill()
    assert err(e) == "NOTBUSY No scripts in execution right now."
    help_lines = r.execute_command("SCRIPT", "HELP")
    assert help_lines[0] == "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_lines[-1] == "    Prints this help."


def test_command_info(r):
    info = r.execute_command("COMMAND", "INFO", "eval", "eval_ro", "script")
    assert info["eval"]["flags"] == \
        ["noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"]
    assert info["eval_ro"]["flags"][0] == "readonly"
    assert info["eval"]["arity"] == -3
    assert info["script"]["arity"] == -2


# --- clients: redis-py helpers, pipelines, MULTI ---

def test_redis_py_lock_and_register_script(r):
    lock = r.lock("job", timeout=5)
    assert lock.acquire(blocking=False)
    assert not r.lock("job", timeout=5).acquire(blocking=False)
    lock.release()
    assert r.get("job") is None
    inc = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert inc(keys=["c"], args=[5]) == 5
    assert inc(keys=["c"], args=[5]) == 10
    r.script_flush()
    assert inc(keys=["c"], args=[1]) == 11  # EVALSHA → NOSCRIPT → EVAL, by redis-py


def test_scripts_in_pipelines_and_multi(r):
    inc = r.register_script("return redis.call('incr', KEYS[1])")
    p = r.pipeline(transaction=False)
    for _ in range(5):
        inc(keys=["c"], client=p)
    assert p.execute() == [1, 2, 3, 4, 5]
    p = r.pipeline(transaction=True)
    p.set("a", 1)
    p.eval("return redis.call('incr', 'a')", 0)
    p.get("a")
    assert p.execute() == [True, 2, "2"]


# --- atomicity across workers ---

def test_keys_on_several_workers(mr):
    keys = spread_keys(4, "lua")
    script = ("for i, k in ipairs(KEYS) do redis.call('set', k, ARGV[1]) end "
              "return redis.call('mget', unpack(KEYS))")
    assert mr.eval(script, len(keys), *keys, "v") == ["v"] * 4
    # Keys it did not declare work too (standalone Redis allows them).
    undeclared = ("for i = 1, 20 do redis.call('incr', 'u' .. i) end "
                  "return redis.call('get', 'u7')")
    assert mr.eval(undeclared, 0) == "1"
    assert mr.mget([f"u{i}" for i in range(1, 21)]) == ["1"] * 20


def test_scripts_are_atomic_across_workers(mr, server_factory):
    keys = spread_keys(4, "atom")
    mr.mset({k: 0 for k in keys})
    # Each run moves one unit from key to key; MGET from another client must always see a
    # total of zero plus the one in flight... never a half-done transfer.
    script = ("for i, k in ipairs(KEYS) do redis.call('incr', k) end "
              "for i, k in ipairs(KEYS) do redis.call('decr', k) end return 1")
    stop = threading.Event()
    bad = []

    def reader():
        c = redis.Redis(host=mr.connection_pool.connection_kwargs["host"],
                        port=mr.connection_pool.connection_kwargs["port"])
        while not stop.is_set():
            vals = [int(v) for v in c.mget(keys)]
            if any(vals):
                bad.append(vals)
        c.close()

    t = threading.Thread(target=reader)
    t.start()
    try:
        sha = mr.script_load(script)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            mr.evalsha(sha, len(keys), *keys)
    finally:
        stop.set()
        t.join(5)
    assert bad == []


# --- long scripts: BUSY and SCRIPT KILL ---

def run_in_thread(r, script, box):
    def run():
        c = redis.Redis(**r.connection_pool.connection_kwargs)
        try:
            box.append(c.eval(script, 0))
        except redis.ResponseError as e:
            box.append(str(e))
        c.close()

    t = threading.Thread(target=run)
    t.start()
    return t


def test_busy_and_script_kill(r):
    r.config_set("busy-reply-threshold", 100)
    try:
        box = []
        s = "local i = 0 while true do i = i + 1 end"
        t = run_in_thread(r, s, box)
        other = redis.Redis(**r.connection_pool.connection_kwargs)

        def busy():
            try:
                other.ping()
                return False
            except redis.exceptions.BusyLoadingError:
                return False
            except redis.ResponseError as e:
                return str(e).startswith("BUSY Redis is busy running a script.")

        assert wait_until(busy, timeout=5)
        with pytest.raises(redis.ResponseError) as e:
            other.get("x")
        assert err(e) == \
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
        assert other.script_kill() is True
        t.join(5)
        assert not t.is_alive()
        assert box == [
            f"Script killed by user with SCRIPT KILL... script: {sha1(s)}, on @user_script:1."]
        assert other.ping() is True

        box = []
        s = "redis.call('set', 'w', 1) local t = redis.call('time')[1] + 0 " \
            "while redis.call('time')[1] - t < 2 do end return 1"
        t = run_in_thread(r, s, box)
        assert wait_until(busy, timeout=5)
        with pytest.raises(redis.ResponseError) as e:
            other.script_kill()
        assert err(e) == (
            "UNKILLABLE Sorry the script already executed write commands against the dataset. "
            "You can either wait the script termination or kill the server in a hard way using "
            "the SHUTDOWN NOSAVE command.")
        t.join(10)
        assert box == [1]
        assert other.get("w") == "1"
        other.close()
    finally:
        r.config_set("busy-reply-threshold", 5000)


# --- values on the device ---

def test_script_over_values_on_the_device(spawn_server, tmp_path):
    extra = ["--cache-mb", "0"] if TARGET == "lavik" else []
    s = spawn_server(threads=2, extra_args=extra, workdir=tmp_path)
    c = s.client()
    value = "x" * 1000
    p = c.pipeline(transaction=False)
    for i in range(5000):
        p.set(f"d{i}", value)
    p.execute()
    if TARGET == "lavik":
        wait_until(lambda: int(c.info("storage")["device_bytes_written"]) >= 5000 * 1000, 15)
    keys = [f"d{i}" for i in range(0, 5000, 97)]
    script = ("local n = 0 for i, k in ipairs(KEYS) do n = n + #redis.call('get', k) end "
              "redis.call('set', 'total', n) return n")
    assert c.eval(script, len(keys), *keys) == 1000 * len(keys)
    assert c.get("total") == str(1000 * len(keys))
    undeclared = "local n = 0 for i = 0, 4999, 101 do n = n + #redis.call('get', 'd' .. i) end " \
                 "return n"
    assert c.eval(undeclared, 0) == 1000 * len(range(0, 5000, 101))
    if TARGET == "lavik":
        assert int(c.info("storage")["device_reads"]) > 0


# --- CLIENT PAUSE WRITE holds scripts that may write ---

def test_client_pause_write_holds_writing_scripts(r):
    other = redis.Redis(**r.connection_pool.connection_kwargs)
    for script, held in (("return 1", True), ("#!lua flags=no-writes\nreturn 1", False)):
        r.execute_command("CLIENT", "PAUSE", "300", "WRITE")
        start = time.monotonic()
        assert other.eval(script, 0) == 1
        assert (time.monotonic() - start >= 0.2) == held
        r.execute_command("CLIENT", "UNPAUSE")
    r.execute_command("CLIENT", "PAUSE", "300", "WRITE")
    start = time.monotonic()
    assert other.eval_ro("return 1", 0) == 1
    assert time.monotonic() - start < 0.2
    r.execute_command("CLIENT", "UNPAUSE")
    other.close()
