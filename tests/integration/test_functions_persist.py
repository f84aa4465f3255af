"""Function libraries survive restarts: Redis keeps them in its RDB/AOF; Lavik keeps them in a
file next to its data file, written and synced before FUNCTION LOAD / DELETE / FLUSH / RESTORE
reply (doc/scripting.md, "Functions survive restarts").

Every test here restarts or kills the server process and reads Lavik's files, so they are
lavik-only (a redis-server started by the suite runs with --save '' --appendonly no, and keeps
nothing). What the restarted server answers is checked with Redis 7.0's replies.
"""
import signal

import pytest
import redis

from conftest import err

pytestmark = pytest.mark.lavik_only

LIB = ("#!lua name=keep\n"
       "redis.register_function('kincr', function(keys, args) "
       "return redis.call('incr', keys[1]) end)\n"
       "redis.register_function{function_name='kecho', callback=function(keys, args) "
       "return args[1] end, flags={'no-writes'}, description='echo'}")
OTHER = "#!lua name=other\nredis.register_function('oone', function() return 1 end)"


def start(spawn_server, tmp_path, threads=2, extra=()):
    return spawn_server(threads=threads, workdir=tmp_path, extra_args=list(extra))


def library_names(c):
    return sorted(dict(zip(lib[::2], lib[1::2]))["library_name"] for lib in c.function_list())


@pytest.mark.parametrize("threads", [1, 2])
def test_libraries_survive_a_restart(spawn_server, tmp_path, threads):
    s = start(spawn_server, tmp_path, threads)
    c = s.client()
    assert c.function_load(LIB) == "keep"
    assert c.function_load(OTHER) == "other"
    assert c.fcall("kincr", 1, "n") == 1
    listed = c.function_list(withcode=True)
    assert s.terminate() == 0

    s2 = start(spawn_server, tmp_path, threads)
    c2 = s2.client()
    assert c2.function_list(withcode=True) == listed
    assert c2.fcall("kincr", 1, "n") == 2  # the key came back from the data file too
    assert c2.fcall_ro("kecho", 0, "hi") == "hi"
    assert c2.function_stats()[2:] == [
        "engines", ["LUA", ["libraries_count", 2, "functions_count", 3]]]


def test_kill_9_after_the_reply_keeps_every_change(spawn_server, tmp_path):
    s = start(spawn_server, tmp_path)
    c = s.client()
    c.function_load(LIB)
    c.function_load(OTHER)
    assert c.function_delete("other") is True
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()

    s2 = start(spawn_server, tmp_path)
    c2 = s2.client()
    assert library_names(c2) == ["keep"]
    assert c2.fcall_ro("kecho", 0, "x") == "x"
    with pytest.raises(redis.ResponseError) as e:
        c2.fcall("oone", 0)
    assert err(e) == "Function not found"
    dump = c2.function_dump()
    assert c2.function_flush() is True
    s2.proc.send_signal(signal.SIGKILL)
    s2.proc.wait()

    s3 = start(spawn_server, tmp_path)
    c3 = s3.client()
    assert c3.function_list() == []
    assert c3.execute_command("FUNCTION", "RESTORE", dump) == "OK"
    s3.proc.send_signal(signal.SIGKILL)
    s3.proc.wait()

    s4 = start(spawn_server, tmp_path)
    assert library_names(s4.client()) == ["keep"]


def test_load_replace_and_flushall_keep_libraries(spawn_server, tmp_path):
    s = start(spawn_server, tmp_path, extra=["--appendfsync", "always"])
    c = s.client()
    c.function_load(LIB)
    c.function_load(LIB.replace("return args[1]", "return 'v2'"), replace=True)
    c.set("k", "v")
    assert c.flushall() is True  # FLUSHALL drops keys, not libraries (as in Redis)
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s2 = start(spawn_server, tmp_path, extra=["--appendfsync", "always"])
    c2 = s2.client()
    assert c2.dbsize() == 0
    assert c2.fcall_ro("kecho", 0, "x") == "v2"


def test_a_damaged_library_file_stops_the_start(spawn_server, tmp_path):
    s = start(spawn_server, tmp_path)
    s.client().function_load(LIB)
    assert s.terminate() == 0
    path = tmp_path / "data" / "lavik.data.functions"
    data = bytearray(path.read_bytes())
    data[5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(RuntimeError) as e:
        start(spawn_server, tmp_path)
    assert "DUMP payload version or checksum are wrong" in str(e.value)


def test_a_new_data_file_starts_without_the_old_libraries(spawn_server, tmp_path):
    s = start(spawn_server, tmp_path)
    s.client().function_load(LIB)
    assert s.terminate() == 0
    (tmp_path / "data" / "lavik.data").unlink()
    s2 = start(spawn_server, tmp_path)
    assert s2.client().function_list() == []
    assert s2.terminate() == 0
    s3 = start(spawn_server, tmp_path)
    assert s3.client().function_list() == []
