"""Server commands: DBSIZE, FLUSHDB/FLUSHALL, TIME, INFO, COMMAND, CONFIG, unknown
commands and arity errors, SHUTDOWN and SIGTERM on dedicated servers."""

import fnmatch
import re
import time

import pytest

from conftest import RespError


def info_text(c, *section):
    text = c.cmd("INFO", *section)
    assert isinstance(text, bytes), text
    return text.decode()


def info_fields(text):
    fields = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, sep, v = line.partition(":")
            assert sep, f"INFO line without ':': {line!r}"
            fields[k] = v
    return fields


# --------------------------------------------------------------------------- DBSIZE / FLUSH


def test_dbsize(r):
    assert r.dbsize() == 0
    r.mset({f"k{i}": "v" for i in range(10)})
    assert r.dbsize() == 10
    r.delete("k0")
    assert r.dbsize() == 9


def test_flushdb(r):
    r.mset({"a": "1", "b": "2"})
    assert r.flushdb() is True
    assert r.dbsize() == 0
    assert r.get("a") is None


@pytest.mark.parametrize("args", [[], ["ASYNC"], ["SYNC"], ["async"]])
def test_flushall_options(raw, args):
    c = raw()
    c.cmd("MSET", "a", "1", "b", "2")
    c.cmd("SET", "c", "3", "EX", "100")
    assert c.cmd("FLUSHALL", *args) == "OK"
    assert c.cmd("DBSIZE") == 0
    assert c.cmd("EXISTS", "a", "b", "c") == 0
    # The database is usable right away, even after ASYNC.
    assert c.cmd("SET", "a", "new") == "OK"
    assert c.cmd("GET", "a") == b"new"


@pytest.mark.parametrize("cmd", ["FLUSHDB", "FLUSHALL"])
def test_flush_bad_option(raw, cmd):
    c = raw()
    c.cmd("SET", "a", "1")
    assert c.cmd(cmd, "bogus") == RespError("ERR syntax error")
    assert c.cmd("EXISTS", "a") == 1


def test_time(raw):
    c = raw()
    reply = c.cmd("TIME")
    assert isinstance(reply, list) and len(reply) == 2
    assert all(isinstance(x, bytes) for x in reply)
    secs, micros = int(reply[0]), int(reply[1])
    assert 0 <= micros < 1_000_000
    assert abs(secs + micros / 1e6 - time.time()) < 2.0


# --------------------------------------------------------------------------- INFO


def test_info_default_sections(raw):
    text = info_text(raw())
    for header in ("# Server", "# Clients", "# Memory", "# Stats", "# Keyspace"):
        assert f"{header}\r\n" in text, header


def test_info_server(raw, server):
    c = raw()
    f = info_fields(info_text(c, "server"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", f["redis_version"]), f["redis_version"]
    assert int(f["tcp_port"]) == server.port
    assert int(f["process_id"]) == server.proc.pid
    assert int(f["uptime_in_seconds"]) >= 0
    assert "connected_clients" not in f  # only the asked-for section


def test_info_section_name_is_case_insensitive(raw, server):
    f = info_fields(info_text(raw(), "SERVER"))
    assert int(f["tcp_port"]) == server.port


def test_info_clients(raw):
    c = raw()

    def connected():
        return int(info_fields(info_text(c, "clients"))["connected_clients"])

    # Connections closed by earlier tests may still be on their way out: take the
    # count once it holds still, and retry if one of them lands mid-measurement.
    for _ in range(5):
        before = connected()
        time.sleep(0.05)
        if connected() != before:
            continue
        assert before >= 1
        others = [raw() for _ in range(3)]
        for o in others:
            assert o.cmd("PING") == "PONG"
        after = connected()
        for o in others:
            o.close()
        if after == before + 3:
            break
    assert after == before + 3


def test_info_memory(raw):
    f = info_fields(info_text(raw(), "memory"))
    assert int(f["used_memory"]) > 0


def test_info_stats_counters(raw):
    c = raw()
    c.cmd("SET", "hit", "1")
    s0 = info_fields(info_text(c, "stats"))
    assert c.cmd("GET", "hit") == b"1"
    assert c.cmd("GET", "miss1") is None
    assert c.cmd("MGET", "hit", "miss2", "miss3") == [b"1", None, None]
    s1 = info_fields(info_text(c, "stats"))
    assert int(s1["keyspace_hits"]) - int(s0["keyspace_hits"]) == 2
    assert int(s1["keyspace_misses"]) - int(s0["keyspace_misses"]) == 3
    # INFO itself, GET, GET, MGET at least.
    assert int(s1["total_commands_processed"]) - int(s0["total_commands_processed"]) >= 4


def test_info_keyspace(raw):
    c = raw()
    text = info_text(c, "keyspace")
    assert text.startswith("# Keyspace\r\n")
    assert "db0:" not in text  # an empty database is not listed
    c.cmd("MSET", "a", "1", "b", "2", "c", "3")
    c.cmd("EXPIRE", "a", "100")
    text = info_text(c, "keyspace")
    assert re.search(r"^db0:keys=3,expires=1,avg_ttl=\d+\r$", text, re.M), text


def test_info_via_redis_py(r):
    info = r.info()
    assert info["tcp_port"] > 0
    assert "used_memory" in info and "keyspace_hits" in info


# --------------------------------------------------------------------------- COMMAND


def test_command_count(raw):
    c = raw()
    n = c.cmd("COMMAND", "COUNT")
    assert isinstance(n, int) and n > 0
    everything = c.cmd("COMMAND")
    assert isinstance(everything, list) and len(everything) == n


def test_command_info_get(raw):
    c = raw()
    reply = c.cmd("COMMAND", "INFO", "get")
    assert isinstance(reply, list) and len(reply) == 1
    entry = reply[0]
    assert entry[0] == b"get"
    assert entry[1] == 2  # arity: GET key
    flags = set(entry[2])
    assert {"readonly", "fast"} <= flags
    assert entry[3:6] == [1, 1, 1]  # first key, last key, step


@pytest.mark.parametrize("name,arity,positions", [
    ("spublish", 3, [1, 1, 1]),
    ("ssubscribe", -2, [1, -1, 1]),
    ("sunsubscribe", -1, [1, -1, 1]),
])
def test_command_info_shard_channel_positions(raw, name, arity, positions):
    """A shard channel sits where a key would (Redis's legacy range covers it), though it is no
    key: COMMAND GETKEYS finds none."""
    c = raw()
    entry = c.cmd("COMMAND", "INFO", name)[0]
    assert entry[1] == arity and entry[3:6] == positions
    assert c.cmd("COMMAND", "GETKEYS", name, "ch", "msg") == RespError(
        "ERR The command has no key arguments")


def test_command_info_set_and_missing(raw):
    c = raw()
    reply = c.cmd("COMMAND", "INFO", "set", "no-such-command")
    assert len(reply) == 2
    assert reply[0][0] == b"set"
    assert reply[0][1] == -3
    assert "write" in set(reply[0][2])
    assert reply[1] is None


def test_command_docs_get(raw):
    c = raw()
    reply = c.cmd("COMMAND", "DOCS", "get")
    assert isinstance(reply, list) and len(reply) == 2  # RESP2: name, then its doc map
    assert reply[0] == b"get"
    doc = reply[1]
    assert isinstance(doc, list) and b"summary" in doc[0::2]


# --------------------------------------------------------------------------- CONFIG


def test_config_get_maxclients(r):
    reply = r.config_get("maxclients")
    assert list(reply) == ["maxclients"]
    assert int(reply["maxclients"]) > 0


def test_config_set_maxmemory_policy(r):
    old = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        assert r.config_set("maxmemory-policy", "allkeys-lru") is True
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
    finally:
        r.config_set("maxmemory-policy", old)
    assert r.config_get("maxmemory-policy") == {"maxmemory-policy": old}


def test_config_set_bad_value(raw):
    c = raw()
    reply = c.cmd("CONFIG", "SET", "maxmemory-policy", "bogus")
    assert isinstance(reply, RespError)
    assert reply.text.startswith(
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy')"), reply.text


def test_config_set_unknown_option(raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "nosuch", "1") == RespError(
        "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")


def test_config_get_pattern(r):
    reply = r.config_get("maxmemory*")
    assert {"maxmemory", "maxmemory-policy"} <= set(reply)
    assert all(fnmatch.fnmatchcase(k, "maxmemory*") for k in reply)
    assert r.config_get("no-such-parameter-*") == {}


def test_config_get_several(raw):
    c = raw()
    reply = c.cmd("CONFIG", "GET", "maxclients", "maxmemory-policy")
    assert sorted(reply[0::2]) == [b"maxclients", b"maxmemory-policy"]


def test_config_get_arity(raw):
    assert raw().cmd("CONFIG", "GET") == RespError(
        "ERR wrong number of arguments for 'config|get' command")


# --------------------------------------------------------------------------- errors


def test_unknown_command(raw):
    c = raw()
    assert c.cmd("foo", "a", "b") == RespError(
        "ERR unknown command 'foo', with args beginning with: 'a' 'b' ")
    assert c.cmd("foo") == RespError("ERR unknown command 'foo', with args beginning with: ")
    # The connection is still usable.
    assert c.cmd("PING") == "PONG"


def test_wrong_arity(raw):
    c = raw()
    assert c.cmd("get") == RespError("ERR wrong number of arguments for 'get' command")
    assert c.cmd("GET", "a", "b") == RespError("ERR wrong number of arguments for 'get' command")
    assert c.cmd("DBSIZE", "x") == RespError(
        "ERR wrong number of arguments for 'dbsize' command")


def test_command_names_are_case_insensitive(raw):
    c = raw()
    assert c.cmd("sEt", "a", "1") == "OK"
    assert c.cmd("get", "a") == b"1"


# --------------------------------------------------------------------------- SHUTDOWN / SIGTERM


@pytest.mark.parametrize("args", [[], ["NOSAVE"]])
def test_shutdown(spawn_server, args):
    s = spawn_server(threads=2)
    with s.raw() as c:
        assert c.cmd("SET", "a", "1") == "OK"
        assert c.cmd("SHUTDOWN", "BOGUS") == RespError("ERR syntax error")
        assert c.cmd("PING") == "PONG"
        c.send_command("SHUTDOWN", *args)
        assert c.closed(timeout=10)
    assert s.wait(timeout=10) == 0


def test_sigterm_exits_zero(spawn_server):
    s = spawn_server(threads=2)
    with s.raw() as c:
        assert c.cmd("SET", "a", "1") == "OK"
    s.proc.terminate()
    assert s.wait(timeout=10) == 0

