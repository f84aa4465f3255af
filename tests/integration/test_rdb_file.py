"""dump.rdb files between Lavik and redis-server 7.0.15 (doc/rdb.md).

A reference redis-server (always Debian's, whatever the target) writes or reads the file; the
server under test reads or writes it. Under LAVIK_TEST_TARGET=redis both sides are redis-server,
which checks that every expectation here is Redis's own behaviour.
"""
import os
import shutil
import subprocess
import threading
import time

import pytest
import redis

from conftest import TARGET, RespError, err, wait_until

LIBRARY = "#!lua name=rdblib\nredis.register_function('rdbf', function(keys, args) return 7 end)"


def loaded(server):
    """Waits until the server has loaded its file (redis-server answers -LOADING until then)."""
    def done():
        try:
            return server.client().info("persistence")["loading"] == 0
        except redis.BusyLoadingError:
            return False
    assert wait_until(done, timeout=20)
    return server


def reference(spawn_server, directory, dbfilename="dump.rdb", extra=()):
    """A redis-server whose dir/dbfilename are `directory`/`dbfilename`."""
    return loaded(spawn_server(argv=["redis-server", "--port", "{port}", "--save", "", "--appendonly",
                              "no", "--bind", "127.0.0.1", "--dir", str(directory),
                              "--dbfilename", dbfilename, *extra]))


def under_test(spawn_server, directory, dbfilename="dump.rdb", extra=()):
    """The server under test with dir/dbfilename set (it loads that file if it exists)."""
    return loaded(spawn_server(extra_args=["--dir", str(directory), "--dbfilename", dbfilename,
                                           *extra]))


def populate(c):
    """Every type in every encoding Redis 7.0 writes; returns nothing (read back by snapshot)."""
    c.set("s:int", "12345")
    c.set("s:neg", "-7")
    c.set("s:raw", "hello world")
    c.set("s:lzf", "abcdefgh" * 500)  # compressible: redis writes it LZF-compressed
    c.set("s:bin", bytes(range(256)) * 3)
    c.set("s:ttl", "v", px=3_600_000)
    c.rpush("l:small", "a", "1", "b", "-2")
    c.rpush("l:large", *[f"item-{i}-" + "x" * (i % 50) for i in range(3000)])  # many nodes
    c.sadd("set:int", *range(0, 100, 3))  # intset
    c.sadd("set:str", "a", "b", "c")  # hashtable in 7.0
    c.sadd("set:big", *[f"m{i}" for i in range(600)])
    c.zadd("z:small", {"a": 1.5, "b": -2, "c": 3})
    c.zadd("z:large", {f"m{i}": i * 0.25 for i in range(300)})  # skiplist
    c.hset("h:small", mapping={"f1": "v1", "f2": "2"})
    c.hset("h:large", mapping={f"f{i}": "v" * (i % 70) for i in range(700)})  # hashtable
    c.hset("h:longval", mapping={"f": "y" * 100})  # value over 64 bytes: hashtable
    for i in range(250):  # several stream nodes (stream-node-max-entries 100)
        c.xadd("st", {"a": str(i), "b": "x" * (i % 10)}, id=f"{1000 + i}-{i % 3}")
    c.xgroup_create("st", "g1", id="0")
    c.xgroup_create("st", "g2", id="1100-0")
    c.xreadgroup("g1", "alice", {"st": ">"}, count=5)
    c.xreadgroup("g1", "bob", {"st": ">"}, count=3)
    c.xack("st", "g1", "1001-1")
    c.xadd("st:trimmed", {"k": "v"}, id="5-1")
    c.xadd("st:trimmed", {"k": "w"}, id="6-1")
    c.xdel("st:trimmed", "5-1")
    c.function_load(LIBRARY)


def snapshot(server):
    """Every key's type, value and whether it has a TTL, read through a client."""
    c = server.client(encoding_errors="surrogateescape")
    out = {}
    for k in sorted(c.keys("*")):
        t = c.type(k)
        if t == "string":
            v = c.get(k)
        elif t == "list":
            v = c.lrange(k, 0, -1)
        elif t == "set":
            v = sorted(c.smembers(k))
        elif t == "zset":
            v = c.zrange(k, 0, -1, withscores=True)
        elif t == "hash":
            v = sorted(c.hgetall(k).items())
        elif t == "stream":
            info = c.xinfo_stream(k)
            groups = [(g["name"], g["pending"], g["last-delivered-id"])
                      for g in c.xinfo_groups(k)]
            pending = {g[0]: c.xpending_range(k, g[0], "-", "+", 100) for g in groups}
            pel = {g: [(p["message_id"], p["consumer"], p["times_delivered"]) for p in ps]
                   for g, ps in pending.items()}
            v = (c.xrange(k), info["last-generated-id"], info["length"], groups, pel)
        else:
            v = None
        out[k] = (t, v, c.pttl(k) > 0)
    return out


def libraries(c):
    return sorted(dict(zip(lib[::2], lib[1::2]))["library_name"] for lib in c.function_list())


def test_redis_file_loads_into_server(spawn_server, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    ref = reference(spawn_server, src)
    rc = ref.client(decode_responses=False)
    populate(redis.Redis(port=ref.port, decode_responses=True))
    rc.set(b"big:1", os.urandom(3 << 20))  # larger than the small cache below
    rc.set(b"big:2", os.urandom(3 << 20))
    assert rc.save() is True
    expected = snapshot(ref)
    expected_big = (rc.get(b"big:1"), rc.get(b"big:2"))
    dst = tmp_path / "dst"
    dst.mkdir()
    shutil.copy(src / "dump.rdb", dst / "dump.rdb")
    extra = ["--cache-mb", "2"] if TARGET == "lavik" else []
    s = under_test(spawn_server, dst, extra=extra)
    c = s.client()
    assert snapshot(s) == expected
    assert libraries(c) == ["rdblib"]
    assert c.fcall("rdbf", 0) == 7
    sb = s.client(decode_responses=False)
    assert (sb.get(b"big:1"), sb.get(b"big:2")) == expected_big


def test_server_file_loads_into_redis(spawn_server, tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    s = under_test(spawn_server, d)
    c = s.client()
    populate(c)
    c.set("big", "z" * (1 << 20))
    expected = snapshot(s)
    assert c.save() is True
    assert (d / "dump.rdb").exists()
    assert not [n for n in os.listdir(d) if n.startswith("temp-")]
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    shutil.copy(d / "dump.rdb", ref_dir / "dump.rdb")
    ref = reference(spawn_server, ref_dir)
    rc = ref.client()
    assert snapshot(ref) == expected
    assert libraries(rc) == ["rdblib"]
    # ...and back: redis-server's file of that data loads into the server under test again.
    assert rc.save() is True
    back = tmp_path / "back"
    back.mkdir()
    shutil.copy(ref_dir / "dump.rdb", back / "dump.rdb")
    assert snapshot(under_test(spawn_server, back)) == expected


def fresh_reference(spawn_server, tmp_path, extra=()):
    """A redis-server in a new directory tmp_path/src; (server, that directory)."""
    src = tmp_path / "src"
    src.mkdir()
    return reference(spawn_server, src, extra=extra), src


def test_databases_follow_selectdb(spawn_server, tmp_path):
    ref, src = fresh_reference(spawn_server, tmp_path)
    rc = ref.client()
    rc.set("zero", "0")
    r3 = redis.Redis(port=ref.port, db=3, decode_responses=True)
    r3.set("three", "3")
    r3.hset("h3", "f", "v")
    r15 = redis.Redis(port=ref.port, db=15, decode_responses=True)
    r15.set("fifteen", "15", px=3_600_000)
    assert rc.save() is True
    mid = tmp_path / "mid"
    mid.mkdir()
    shutil.copy(src / "dump.rdb", mid / "dump.rdb")
    s = under_test(spawn_server, mid)
    c = s.client()
    assert c.get("zero") == "0"
    assert c.dbsize() == 1
    c3 = redis.Redis(port=s.port, db=3, decode_responses=True)
    assert c3.get("three") == "3" and c3.hgetall("h3") == {"f": "v"} and c3.dbsize() == 2
    assert redis.Redis(port=s.port, db=15, decode_responses=True).pttl("fifteen") > 0
    assert c.save() is True
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(mid / "dump.rdb", out / "dump.rdb")
    ref2 = reference(spawn_server, out)
    assert ref2.client().get("zero") == "0"
    assert redis.Redis(port=ref2.port, db=3, decode_responses=True).get("three") == "3"
    assert redis.Redis(port=ref2.port, db=3, decode_responses=True).hgetall("h3") == {"f": "v"}
    r15b = redis.Redis(port=ref2.port, db=15, decode_responses=True)
    assert r15b.get("fifteen") == "15" and r15b.pttl("fifteen") > 0
    assert ref2.client().keys("*") == ["zero"]


def test_expired_keys_are_not_loaded(spawn_server, tmp_path):
    ref, src = fresh_reference(spawn_server, tmp_path)
    rc = ref.client()
    rc.set("gone", "x", px=200)
    rc.set("stays", "y", px=3_600_000)
    assert rc.save() is True
    time.sleep(0.3)
    dst = tmp_path / "dst"
    dst.mkdir()
    shutil.copy(src / "dump.rdb", dst / "dump.rdb")
    c = under_test(spawn_server, dst).client()
    assert c.keys("*") == ["stays"]
    assert 0 < c.pttl("stays") <= 3_600_000


def refuses_to_start(spawn_server, directory, dbfilename="dump.rdb", extra=()):
    with pytest.raises(RuntimeError) as e:
        under_test(spawn_server, directory, dbfilename, extra)
    return err(e)


def saved_file(spawn_server, tmp_path):
    ref, src = fresh_reference(spawn_server, tmp_path)
    c = ref.client()
    c.set("a", "1")
    c.rpush("l", *range(100))
    c.hset("h", mapping={f"f{i}": i for i in range(20)})
    assert c.save() is True
    return (src / "dump.rdb").read_bytes()


def test_truncated_or_corrupt_file_refuses_to_start(spawn_server, tmp_path):
    data = saved_file(spawn_server, tmp_path)
    for name, bad in [("truncated", data[: len(data) // 2]),
                      ("flipped", data[:40] + bytes([data[40] ^ 0x01]) + data[41:])]:
        d = tmp_path / name
        d.mkdir()
        (d / "dump.rdb").write_bytes(bad)
        text = refuses_to_start(spawn_server, d)
        if TARGET == "lavik":
            assert "at offset" in text, text
            assert "was not loaded" in text, text


def test_database_out_of_range_refuses_to_start(spawn_server, tmp_path):
    ref, src = fresh_reference(spawn_server, tmp_path, extra=["--databases", "20"])
    redis.Redis(port=ref.port, db=17).set("k", "v")
    assert ref.client().save() is True
    text = refuses_to_start(spawn_server, src)
    if TARGET == "lavik":
        assert "selects database 17" in text, text


@pytest.mark.lavik_only
def test_load_rdb_flag_and_data_kept_on_a_bad_file(spawn_server, tmp_path):
    data = saved_file(spawn_server, tmp_path)
    good = tmp_path / "good.rdb"
    good.write_bytes(data)
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(data[:-3])
    work = tmp_path / "work"
    work.mkdir()
    s = spawn_server(workdir=work, extra_args=["--load-rdb", str(good)])
    c = s.client()
    assert c.get("a") == "1" and c.llen("l") == 100
    c.set("mine", "kept")
    c.set("a", "changed")
    s.terminate()
    # The data file is not new: dir/dbfilename is not looked at; --load-rdb of a bad file fails.
    with pytest.raises(RuntimeError) as e:
        spawn_server(workdir=work, extra_args=["--load-rdb", str(bad)])
    assert "Unexpected EOF" in err(e) and "at offset" in err(e)
    c = spawn_server(workdir=work).client()
    assert c.get("mine") == "kept" and c.get("a") == "changed" and c.llen("l") == 100


def info(c):
    return c.info("persistence")


def test_save_failure_and_persistence_fields(spawn_server, tmp_path):
    d = tmp_path / "gone"
    d.mkdir()
    c = under_test(spawn_server, d).client()
    before = c.lastsave()
    saves = info(c)["rdb_saves"]
    c.set("k", "v")
    assert info(c)["rdb_changes_since_last_save"] >= 1
    time.sleep(1.05)
    assert c.save() is True
    i = info(c)
    assert i["rdb_changes_since_last_save"] == 0
    assert i["rdb_saves"] == saves + 1
    assert i["rdb_last_bgsave_status"] == "ok"
    assert c.lastsave() > before
    (d / "dump.rdb").unlink()
    assert c.bgsave() is True
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0)
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    assert info(c)["rdb_saves"] == saves + 2
    assert (d / "dump.rdb").exists()
    last = c.lastsave()
    shutil.rmtree(d)  # the temp file cannot be created any more
    with pytest.raises(redis.ResponseError) as e:
        c.save()
    assert err(e) == ""  # the reply is a bare "-ERR"
    assert info(c)["rdb_last_bgsave_status"] == "ok"  # SAVE does not set it
    assert c.bgsave() is True
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0)
    assert info(c)["rdb_last_bgsave_status"] == "err"
    assert info(c)["rdb_saves"] == saves + 4  # every attempt counts
    assert c.lastsave() == last


MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
           "persist to disk. Commands that may modify the data set are disabled, because this "
           "instance is configured to report errors during writes if RDB snapshotting fails "
           "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
           "the RDB error.")


def test_stop_writes_on_bgsave_error(spawn_server, tmp_path):
    """stop-writes-on-bgsave-error (yes by default): with save points set, after a failed
    BGSAVE writes and PING get -MISCONF, reads go on, until a save succeeds or it is off."""
    d = tmp_path / "gone"
    d.mkdir()
    c = under_test(spawn_server, d, extra=["--enable-protected-configs", "yes"]).client()
    assert c.config_get("stop-writes-on-bgsave-error") == {"stop-writes-on-bgsave-error": "yes"}
    c.set("k", "v1")
    shutil.rmtree(d)  # the temp file cannot be created any more
    assert c.bgsave() is True
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0)
    assert info(c)["rdb_last_bgsave_status"] == "err"
    assert c.set("k", "v2") is True  # no save point: nothing is denied
    assert c.config_set("save", "3600 1") is True
    for write in (lambda: c.set("k", "v3"), lambda: c.incr("n"), c.ping):
        with pytest.raises(redis.ResponseError) as e:
            write()
        assert err(e) == MISCONF
    assert c.get("k") == "v2" and c.dbsize() == 1
    assert c.config_set("stop-writes-on-bgsave-error", "no") is True
    assert c.set("k", "v4") is True
    assert c.config_set("stop-writes-on-bgsave-error", "yes") is True
    with pytest.raises(redis.ResponseError):
        c.set("k", "v5")
    (tmp_path / "again").mkdir()
    assert c.config_set("dir", str(tmp_path / "again")) is True
    assert c.bgsave() is True
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0
                      and info(c)["rdb_last_bgsave_status"] == "ok")
    assert c.set("k", "v6") is True and c.ping() is True


def test_misconf_in_transactions_and_scripts(spawn_server, tmp_path):
    """While saves fail (stop-writes-on-bgsave-error), a write queued in MULTI gets -MISCONF and
    EXEC aborts; a script's first write fails in redis.call (with the script's place) and
    redis.pcall; a script or function that may write (shebang without no-writes, FUNCTION LOAD)
    is refused before it runs; read-only transactions and scripts go on."""
    d = tmp_path / "gone"
    d.mkdir()
    c = under_test(spawn_server, d, extra=["--enable-protected-configs", "yes"]).client()
    c.set("k", "v1")
    c.function_load("#!lua name=lib\n"
                    "redis.register_function('w', function() return redis.call('set','k','w') end)\n"
                    "redis.register_function{function_name='r', flags={'no-writes'},\n"
                    "  callback=function() return redis.call('get','k') end}")
    shutil.rmtree(d)
    assert c.config_set("save", "3600 1") is True
    assert c.bgsave() is True
    assert wait_until(lambda: info(c)["rdb_last_bgsave_status"] == "err")
    with c.pipeline(transaction=True) as p:
        p.get("k").set("k", "v2")
        with pytest.raises(redis.ResponseError) as e:  # redis-py names the queued one
            p.execute()
        assert err(e) == "Command # 2 (SET k v2) of pipeline caused error: " + MISCONF
    with c.pipeline(transaction=True) as p:
        assert p.get("k").execute() == ["v1"]
    with pytest.raises(redis.ResponseError) as e:
        c.eval("redis.call('get', 'k') return redis.call('set', 'k', 'v3')", 0)
    assert err(e).startswith(MISCONF + " script: ")
    assert err(e).endswith(", on @user_script:1.")
    with pytest.raises(redis.ResponseError) as e:
        c.eval("return redis.pcall('set', 'k', 'v4')", 0)
    assert err(e) == MISCONF
    assert c.eval("return redis.call('get', 'k')", 0) == "v1"
    assert c.eval("return redis.call('ping')", 0) == "PONG"
    assert c.eval_ro("return redis.call('get', 'k')", 0) == "v1"
    with pytest.raises(redis.ResponseError) as e:
        c.eval("#!lua\nreturn redis.call('get', 'k')", 0)
    assert err(e) == MISCONF
    assert c.eval("#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0) == "v1"
    with pytest.raises(redis.ResponseError) as e:
        c.fcall("w", 0)
    assert err(e) == MISCONF
    assert c.fcall("r", 0) == "v1" and c.fcall_ro("r", 0) == "v1"
    with pytest.raises(redis.ResponseError) as e:
        c.function_load("#!lua name=lib2\nredis.register_function('x', function() end)")
    assert err(e) == MISCONF
    assert c.get("k") == "v1"
    assert c.config_set("stop-writes-on-bgsave-error", "no") is True
    assert c.eval("return redis.call('set', 'k', 'v5')", 0) == "OK"
    assert c.fcall("w", 0) == "OK" and c.get("k") == "w"
    assert c.config_set("save", "") is True  # the shutdown does not try to save either


def test_bgsave_while_clients_write(spawn_server, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    s = under_test(spawn_server, d)
    c = s.client()
    pipe = c.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"fixed:{i}", "v" * (i % 100))
    pipe.rpush("list", *range(5000))
    pipe.execute()
    stop = threading.Event()
    errors = []

    def writer():
        w = s.client()
        n = 0
        try:
            while not stop.is_set():
                w.set(f"moving:{n % 3000}", n)
                w.incr("counter")
                n += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=writer)
    t.start()
    try:
        assert c.bgsave() is True
        assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0, timeout=20)
    finally:
        stop.set()
        t.join()
    assert not errors
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    shutil.copy(d / "dump.rdb", ref_dir / "dump.rdb")
    rc = reference(spawn_server, ref_dir).client()
    assert all(rc.exists(f"fixed:{i}") for i in (0, 1, 9999, 19999))
    assert rc.dbsize() >= 20001
    assert rc.llen("list") == 5000


def test_save_points_and_shutdown_save(spawn_server, tmp_path):
    d = tmp_path / "points"
    d.mkdir()
    s = under_test(spawn_server, d, extra=["--save", "1 1"])
    c = s.client()
    c.set("a", "1")
    # "save 1 1": one change and more than a second since the last save start a BGSAVE.
    assert wait_until(lambda: (d / "dump.rdb").exists(), timeout=15)
    assert wait_until(lambda: info(c)["rdb_changes_since_last_save"] == 0, timeout=15)
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0, timeout=15)
    c.config_set("save", "")
    c.set("b", "2")
    (d / "dump.rdb").unlink()
    c.shutdown(nosave=True)
    assert s.wait() == 0
    assert not (d / "dump.rdb").exists()
    # SHUTDOWN SAVE writes the file even without save points; redis-server loads it.
    e = tmp_path / "shutdown"
    e.mkdir()
    s2 = under_test(spawn_server, e)
    c2 = s2.client()
    c2.set("k", "v")
    c2.rpush("l", "x", "y")
    c2.shutdown(save=True)
    assert s2.wait() == 0
    ref = reference(spawn_server, e)
    rc = ref.client()
    assert rc.get("k") == "v" and rc.lrange("l", 0, -1) == ["x", "y"]


def test_sigterm_with_save_points_writes_the_file(spawn_server, tmp_path):
    d = tmp_path / "term"
    d.mkdir()
    s = under_test(spawn_server, d, extra=["--save", "3600 1"])
    c = s.client()
    c.set("k", "at-exit")
    c.hset("h", "f", "v")
    assert not (d / "dump.rdb").exists()
    assert s.terminate() == 0
    ref = reference(spawn_server, d)
    rc = ref.client()
    assert rc.get("k") == "at-exit" and rc.hgetall("h") == {"f": "v"}


def test_redis_cli_rdb_fetches_a_snapshot_and_leaves(spawn_server, tmp_path):
    """`redis-cli --rdb` (REPLCONF rdb-only 1, then SYNC): the server sends an RDB of its data
    and closes the connection; the client is never kept as a replica."""
    s = under_test(spawn_server, tmp_path)
    c = s.client()
    c.config_set("repl-diskless-sync-delay", 0)  # redis-server waits 5 s for more replicas
    populate(c)
    expected = snapshot(s)
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    out = subprocess.run(["redis-cli", "-p", str(s.port), "--rdb", str(ref_dir / "dump.rdb")],
                         capture_output=True, text=True, timeout=30)
    said = out.stdout + out.stderr
    assert out.returncode == 0, said
    assert "Transfer finished with success" in said
    assert "error" not in said.lower(), said
    assert wait_until(lambda: c.info("replication")["connected_slaves"] == 0, timeout=10)
    assert c.set("after", "1") is True  # still a plain master that takes writes
    assert snapshot(reference(spawn_server, ref_dir)) == expected


def test_bgsave_in_multi_is_scheduled_and_a_running_save_refuses_another(spawn_server, tmp_path):
    s = under_test(spawn_server, tmp_path)
    c = s.client()
    with c.pipeline(transaction=False) as p:
        for i in range(20000):
            p.set(f"key:{i}", "v" * 100)
        p.execute()
    saves = info(c)["rdb_saves"]
    conn = s.raw()
    # Pipelined: the second BGSAVE, SCHEDULE or not, comes while the first one's save runs.
    conn.send(b"BGSAVE\r\nBGSAVE SCHEDULE\r\nBGSAVE\r\n")
    assert conn.reply() == "Background saving started"
    assert conn.reply() == RespError("ERR Background save already in progress")
    assert conn.reply() == RespError("ERR Background save already in progress")
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0, timeout=20)
    # Inside EXEC: scheduled, and it runs once the transaction is over, with all its writes.
    conn.send(b"MULTI\r\nSET in-tx before\r\nBGSAVE\r\nSET in-tx after\r\nEXEC\r\n")
    assert [conn.reply() for _ in range(5)][-1] == ["OK", "Background saving scheduled", "OK"]
    assert wait_until(lambda: info(c)["rdb_saves"] == saves + 2
                      and info(c)["rdb_bgsave_in_progress"] == 0, timeout=20)
    assert reference(spawn_server, tmp_path).client().get("in-tx") == "after"


@pytest.mark.parametrize("flags,shown,saved", [("now nosave", "nosave now", False),
                                               ("save", "save", True)])
def test_shutdown_on_sigterm_flags(spawn_server, tmp_path, flags, shown, saved):
    """shutdown-on-sigterm takes Redis's flag set; "nosave" wins over the save points, "save"
    writes the file without any."""
    extra = ["--save", "3600 1"] if not saved else []
    s = under_test(spawn_server, tmp_path, extra=extra)
    c = s.client()
    c.set("k", "at-exit")
    c.config_set("shutdown-on-sigterm", flags)
    assert c.config_get("shutdown-on-sigterm") == {"shutdown-on-sigterm": shown}
    assert s.terminate() == 0
    assert (tmp_path / "dump.rdb").exists() == saved


def test_shutdown_on_signal_values(spawn_server):
    c = spawn_server().client()
    for name in ("shutdown-on-sigterm", "shutdown-on-sigint"):
        for value, shown in (("force save now", "save now force"), ("default now", "now"),
                             ("NOW", "now"), ("default", "default")):
            assert c.config_set(name, value) is True
            assert c.config_get(name) == {name: shown}
        for value, why in (("save nosave", "shutdown options SAVE and NOSAVE can't be used "
                                           "simultaneously"),
                           ("bogus", "argument(s) must be one of the following: default, save, "
                                     "nosave, now, force"),
                           ("", "argument(s) must be one of the following: default, save, "
                                "nosave, now, force")):
            with pytest.raises(redis.ResponseError) as e:
                c.config_set(name, value)
            assert str(e.value) == (f"CONFIG SET failed (possibly related to argument '{name}') "
                                    f"- {why}")
            assert c.config_get(name) == {name: "default"}
