"""Introspection and server commands of issue #12: INFO's Cluster section, MEMORY, OBJECT
FREQ/IDLETIME, COMMAND GETKEYS/GETKEYSANDFLAGS/LIST FILTERBY, movablekeys, LOLWUT, LASTSAVE,
SAVE/BGSAVE, CONFIG RESETSTAT, lazyfree counters, CLIENT LIST qbuf. Every test encodes Redis
7.0.15's replies; where figures differ between servers, properties of them are asserted."""

import socket
import time

import pytest

from conftest import RespError, wait_until


def info_text(c, *section):
    text = c.cmd("INFO", *section)
    assert isinstance(text, bytes), text
    return text.decode()


def sections(text):
    return [line[2:] for line in text.splitlines() if line.startswith("# ")]


def info_fields(text):
    fields = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.partition(":")
            fields[k] = v
    return fields


# --------------------------------------------------------------------------- INFO Cluster


@pytest.mark.parametrize("args", [[], ["all"], ["everything"], ["default"]])
def test_info_has_cluster_section_before_keyspace(raw, args):
    names = sections(info_text(raw(), *args))
    assert "Cluster" in names
    assert names.index("Cluster") == names.index("Keyspace") - 1
    assert names.index("CPU") < names.index("Modules") < names.index("Errorstats")
    if args in ([], ["default"]):
        assert names.index("Errorstats") < names.index("Cluster")
    else:
        assert names.index("Latencystats") < names.index("Cluster")


def test_info_cluster_alone(raw):
    assert raw().cmd("INFO", "cluster") == b"# Cluster\r\ncluster_enabled:0\r\n"
    assert sections(info_text(raw(), "keyspace", "cluster")) == ["Cluster", "Keyspace"]
    assert raw().cmd("INFO", "modules") == b"# Modules\r\n"


# --------------------------------------------------------------------------- COMMAND GETKEYS


def keys_and_flags(c, *call):
    reply = c.cmd("COMMAND", "GETKEYSANDFLAGS", *call)
    if isinstance(reply, RespError):
        return reply
    return [(k.decode(), sorted(f)) for k, f in reply]


@pytest.mark.parametrize("call,expected", [
    (["get", "a"], [("a", ["RO", "access"])]),
    (["set", "a", "b"], [("a", ["OW", "update"])]),
    (["set", "a", "b", "get"], [("a", ["RW", "access", "update"])]),
    (["mset", "a", "1", "b", "2"], [("a", ["OW", "update"]), ("b", ["OW", "update"])]),
    (["del", "a", "b"], [("a", ["RM", "delete"]), ("b", ["RM", "delete"])]),
    (["incr", "a"], [("a", ["RW", "access", "update"])]),
    (["getdel", "a"], [("a", ["RW", "access", "delete"])]),
    (["lpush", "a", "1"], [("a", ["RW", "insert"])]),
    (["lmove", "a", "b", "left", "right"],
     [("a", ["RW", "access", "delete"]), ("b", ["RW", "insert"])]),
    (["rename", "a", "b"], [("a", ["RW", "access", "delete"]), ("b", ["OW", "update"])]),
    (["copy", "a", "b"], [("a", ["RO", "access"]), ("b", ["OW", "update"])]),
    (["sinterstore", "d", "a", "b"],
     [("d", ["RW", "update"]), ("a", ["RO", "access"]), ("b", ["RO", "access"])]),
    (["zunionstore", "d", "2", "a", "b", "weights", "1", "2"],
     [("d", ["OW", "update"]), ("a", ["RO", "access"]), ("b", ["RO", "access"])]),
    (["zrangestore", "d", "s", "0", "1"], [("d", ["OW", "update"]), ("s", ["RO", "access"])]),
    (["zunion", "2", "a", "b"], [("a", ["RO", "access"]), ("b", ["RO", "access"])]),
    (["sintercard", "2", "a", "b", "limit", "1"], [("a", ["RO", "access"]), ("b", ["RO", "access"])]),
    (["lmpop", "2", "a", "b", "left"],
     [("a", ["RW", "access", "delete"]), ("b", ["RW", "access", "delete"])]),
    (["blmpop", "0", "2", "a", "b", "left"],
     [("a", ["RW", "access", "delete"]), ("b", ["RW", "access", "delete"])]),
    (["xread", "count", "2", "streams", "s1", "s2", "0", "0"],
     [("s1", ["RO", "access"]), ("s2", ["RO", "access"])]),
    (["xreadgroup", "group", "g", "c", "streams", "a", "b", "0", "0"],
     [("a", ["RO", "access"]), ("b", ["RO", "access"])]),
    (["object", "encoding", "a"], [("a", ["RO"])]),
    (["xinfo", "stream", "a"], [("a", ["RO", "access"])]),
    (["xgroup", "create", "s", "g", "$"], [("s", ["RW", "insert"])]),
])
def test_command_getkeysandflags(raw, call, expected):
    c = raw()
    assert keys_and_flags(c, *call) == expected
    assert c.cmd("COMMAND", "GETKEYS", *call) == [k.encode() for k, _ in expected]


@pytest.mark.parametrize("call,error", [
    (["nosuch", "a"], "ERR Invalid command specified"),
    (["ping", "x"], "ERR The command has no key arguments"),
    (["config", "get", "a"], "ERR The command has no key arguments"),
    (["get", "a", "b"], "ERR Invalid number of arguments specified for command"),
    (["xread", "streams", "a"], "ERR Invalid number of arguments specified for command"),
    (["zunionstore", "d", "0", "a"], "ERR Invalid arguments specified for command"),
    (["zunionstore", "d", "x", "a"], "ERR Invalid arguments specified for command"),
    (["sintercard", "0", "a"], "ERR Invalid arguments specified for command"),
    (["zunion", "3", "a"], "ERR Invalid arguments specified for command"),
])
def test_command_getkeys_errors(raw, call, error):
    c = raw()
    assert c.cmd("COMMAND", "GETKEYS", *call) == RespError(error)
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", *call) == RespError(error)


def test_command_getkeys_arity(raw):
    c = raw()
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        assert c.cmd("COMMAND", sub, "get") == RespError(
            f"ERR wrong number of arguments for 'command|{sub.lower()}' command")


def test_command_getkeysandflags_resp3_sets(raw):
    c = raw()
    c.cmd("HELLO", "3")
    c.send_command("COMMAND", "GETKEYSANDFLAGS", "lmove", "a", "b", "left", "right")
    assert c.reply_bytes() == (b"*2\r\n*2\r\n$1\r\na\r\n~3\r\n+RW\r\n+access\r\n+delete\r\n"
                               b"*2\r\n$1\r\nb\r\n~2\r\n+RW\r\n+insert\r\n")


def test_movablekeys_flags(r):
    info = r.command()
    for name in ("zunionstore", "zinterstore", "zdiffstore", "zunion", "zinter", "zdiff",
                 "zintercard", "sintercard", "lmpop", "blmpop", "zmpop", "bzmpop", "xread",
                 "xreadgroup"):
        assert "movablekeys" in info[name]["flags"], name
    for name in ("get", "mset", "lmove", "sinterstore", "del"):
        assert "movablekeys" not in info[name]["flags"], name


def test_command_list_includes_subcommands(raw):
    c = raw()
    names = c.cmd("COMMAND", "LIST")
    assert b"get" in names and b"config|get" in names and b"command|getkeys" in names
    assert len(names) > c.cmd("COMMAND", "COUNT")
    assert len(names) == len(set(names))


def test_command_list_filterby(raw):
    c = raw()
    assert c.cmd("COMMAND", "LIST", "FILTERBY", "MODULE", "foo") == []
    assert c.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat") == []
    got = sorted(c.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "xr*"))
    assert got == [b"xrange", b"xread", b"xreadgroup", b"xrevrange"]
    assert sorted(c.cmd("COMMAND", "LIST", "FILTERBY", "pattern", "CONFIG|G*")) == [b"config|get"]
    stream = c.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "STREAM")
    assert b"xadd" in stream and b"xgroup|create" in stream and b"get" not in stream
    for bad in (["FILTERBY", "foo", "x"], ["FILTERBY", "pattern"], ["x"],
                ["FILTERBY", "pattern", "x", "y"]):
        assert c.cmd("COMMAND", "LIST", *bad) == RespError("ERR syntax error"), bad


def test_command_help_lists_getkeys(raw):
    lines = raw().cmd("COMMAND", "HELP")
    assert "GETKEYS <full-command>" in lines and "GETKEYSANDFLAGS <full-command>" in lines
    assert lines[-1] == "    Prints this help."


# --------------------------------------------------------------------------- MEMORY


def test_memory_usage_grows_with_the_value(r):
    r.set("small", "x")
    r.set("big", "x" * 100_000)
    small = r.memory_usage("small")
    big = r.memory_usage("big")
    assert isinstance(small, int) and small > 0
    assert big > small + 90_000
    assert r.memory_usage("nokey") is None
    assert r.execute_command("MEMORY", "USAGE", "big", "SAMPLES", "0") == big


def test_memory_usage_collections_grow(r):
    r.rpush("l", *[f"element-{i}" for i in range(10)])
    before = r.memory_usage("l")
    r.rpush("l", *[f"element-{i}-" + "y" * 50 for i in range(5000)])
    assert r.memory_usage("l") > before + 5000 * 50
    r.hset("h", mapping={f"f{i}": "v" * 20 for i in range(20000)})
    assert r.execute_command("MEMORY", "USAGE", "h", "SAMPLES", "0") > 20000 * 20


def test_memory_usage_errors(raw):
    c = raw()
    c.cmd("SET", "foo", "bar")
    syntax = RespError("ERR syntax error")
    assert c.cmd("MEMORY", "USAGE", "foo", "SAMPLES") == syntax
    assert c.cmd("MEMORY", "USAGE", "foo", "SAMPLES", "-1") == syntax
    assert c.cmd("MEMORY", "USAGE", "foo", "BLA", "1") == syntax
    assert c.cmd("MEMORY", "USAGE", "foo", "SAMPLES", "x") == RespError(
        "ERR value is not an integer or out of range")
    assert c.cmd("MEMORY", "USAGE") == RespError(
        "ERR wrong number of arguments for 'memory|usage' command")
    assert c.cmd("MEMORY", "STATS", "x") == RespError(
        "ERR wrong number of arguments for 'memory|stats' command")
    assert c.cmd("MEMORY", "FOO") == RespError("ERR unknown subcommand 'FOO'. Try MEMORY HELP.")


STATS_FIELDS = [
    "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
    "clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches",
    "functions.caches", "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes",
    "dataset.percentage", "peak.percentage", "allocator.allocated", "allocator.active",
    "allocator.resident", "allocator-fragmentation.ratio", "allocator-fragmentation.bytes",
    "allocator-rss.ratio", "allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes",
    "fragmentation", "fragmentation.bytes"]


def test_memory_stats_shape(raw):
    c = raw()
    c.cmd("FLUSHALL")
    flat = c.cmd("MEMORY", "STATS")
    names = [k.decode() for k in flat[0::2]]
    assert names == STATS_FIELDS
    c.cmd("SET", "a", "1")
    c.cmd("SET", "b", "2", "EX", "100")
    c.cmd("HELLO", "3")
    stats = {k.decode(): v for k, v in c.cmd("MEMORY", "STATS").items()}
    assert list(stats) == STATS_FIELDS[:10] + ["db.0"] + STATS_FIELDS[10:]
    assert list(stats["db.0"]) == [b"overhead.hashtable.main", b"overhead.hashtable.expires",
                                   b"overhead.hashtable.slot-to-keys"]
    assert stats["keys.count"] == 2
    assert stats["total.allocated"] > 0 and stats["overhead.total"] > 0
    assert isinstance(stats["dataset.percentage"], float)
    assert isinstance(stats["fragmentation"], float)


def test_memory_doctor_purge_malloc_stats_help(raw):
    c = raw()
    doctor = c.cmd("MEMORY", "DOCTOR").decode()
    assert doctor in (
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
        "occurs on this base.\n",
        "Hi Sam, this instance is empty or is using very little memory, my issues detector "
        "can't be used in these conditions. Please, leave for your mission on Earth and fill it "
        "with some data. The new Sam and I will be back to our programming as soon as I "
        "finished rebooting.\n") or doctor.startswith("Sam, I detected a few issues")
    assert c.cmd("MEMORY", "PURGE") == "OK"
    stats = c.cmd("MEMORY", "MALLOC-STATS")
    assert isinstance(stats, bytes) and len(stats) > 0
    help_lines = c.cmd("MEMORY", "HELP")
    assert help_lines[0] == "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "USAGE <key> [SAMPLES <count>]" in help_lines
    assert help_lines[-1] == "    Prints this help."
    c.cmd("HELLO", "3")
    c.send_command("MEMORY", "DOCTOR")
    assert c.reply_bytes().startswith(b"=")


def test_memory_command_info(r):
    raw_info = r.execute_command("COMMAND", "INFO", "memory|usage")
    assert raw_info["memory|usage"]["arity"] == -3
    assert raw_info["memory|usage"]["first_key_pos"] == 2
    assert "readonly" in raw_info["memory|usage"]["flags"]


# --------------------------------------------------------------------------- SAVE / LASTSAVE


def persistence(c):
    return info_fields(info_text(c, "persistence"))


def test_lastsave_and_save(raw):
    c = raw()
    before = c.cmd("LASTSAVE")
    assert isinstance(before, int) and abs(before - time.time()) < 3600 * 24 * 365
    c.cmd("SET", "k", "v")
    f = persistence(c)
    assert int(f["rdb_changes_since_last_save"]) >= 1
    assert int(f["rdb_last_save_time"]) == before
    time.sleep(1.05)
    assert c.cmd("SAVE") == "OK"
    after = c.cmd("LASTSAVE")
    assert after > before
    f = persistence(c)
    assert int(f["rdb_changes_since_last_save"]) == 0
    assert int(f["rdb_last_save_time"]) == after
    assert f["rdb_last_bgsave_status"] == "ok"
    assert f["rdb_bgsave_in_progress"] == "0"
    assert int(f["rdb_saves"]) >= 1
    c.cmd("SET", "k", "v2")
    assert int(persistence(c)["rdb_changes_since_last_save"]) == 1


def test_bgsave(raw):
    c = raw()
    c.cmd("SET", "k", "v")
    saves = int(persistence(c)["rdb_saves"])
    assert c.cmd("BGSAVE") == "Background saving started"
    assert wait_until(lambda: persistence(c)["rdb_bgsave_in_progress"] == "0")
    f = persistence(c)
    assert int(f["rdb_saves"]) == saves + 1
    assert f["rdb_last_bgsave_status"] == "ok"
    assert int(f["rdb_last_bgsave_time_sec"]) >= 0
    assert int(f["rdb_current_bgsave_time_sec"]) == -1
    assert int(f["rdb_changes_since_last_save"]) == 0
    # SCHEDULE waits only for an AOF rewrite: with none running the save starts now.
    assert c.cmd("BGSAVE", "SCHEDULE") == "Background saving started"
    assert wait_until(lambda: persistence(c)["rdb_bgsave_in_progress"] == "0")
    assert c.cmd("BGSAVE", "x") == RespError("ERR syntax error")
    assert c.cmd("BGSAVE", "SCHEDULE", "x") == RespError("ERR syntax error")
    assert c.cmd("SAVE", "x") == RespError("ERR wrong number of arguments for 'save' command")
    assert c.cmd("LASTSAVE", "x") == RespError(
        "ERR wrong number of arguments for 'lastsave' command")


def test_save_refused_in_multi(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SAVE") == RespError("ERR Command not allowed inside a transaction")
    c.cmd("DISCARD")


# --------------------------------------------------------------------------- CONFIG RESETSTAT


def test_config_resetstat_resets_what_redis_resets(raw):
    c = raw()
    c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0")
    try:
        c.cmd("SET", "a", "1")
        c.cmd("GET", "a")
        c.cmd("GET", "nokey")
        c.cmd("LPUSH", "a", "x")  # WRONGTYPE
        c.cmd("SAVE")
        c.cmd("SET", "a", "2")
        slowlog = c.cmd("SLOWLOG", "LEN")
        assert slowlog > 0
        assert c.cmd("CONFIG", "RESETSTAT") == "OK"
        text = info_text(c, "everything")
        f = info_fields(text)
        assert f["keyspace_hits"] == "0" and f["keyspace_misses"] == "0"
        assert f["expired_keys"] == "0" and f["rejected_connections"] == "0"
        assert f["total_error_replies"] == "0"
        assert f["rdb_saves"] == "0"
        assert f["lazyfreed_objects"] == "0"
        assert int(f["total_commands_processed"]) <= 2
        assert int(f["rdb_changes_since_last_save"]) == 1  # not a statistic: kept
        assert "errorstat_WRONGTYPE" not in text
        assert "cmdstat_get:" not in text and "cmdstat_lpush:" not in text
        assert "latency_percentiles_usec_get:" not in text
        assert c.cmd("SLOWLOG", "LEN") >= slowlog  # RESETSTAT leaves the slow log alone
    finally:
        c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "10000")


# --------------------------------------------------------------------------- lazyfree


def test_lazyfree_counters(r):
    r.hset("big", mapping={f"field-{i}": "v" * 30 for i in range(20000)})
    before = int(r.info("memory")["lazyfreed_objects"])
    assert r.unlink("big") == 1
    assert wait_until(lambda: int(r.info("memory")["lazyfreed_objects"]) > before)
    assert wait_until(lambda: int(r.info("memory")["lazyfree_pending_objects"]) == 0)


# --------------------------------------------------------------------------- OBJECT FREQ / IDLETIME

NO_LFU = ("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
          "that when switching between policies at runtime LRU and LFU data will take some time "
          "to adjust.")
LFU_NO_IDLE = ("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
               "when switching between policies at runtime LRU and LFU data will take some time "
               "to adjust.")


def test_object_freq_idletime(raw):
    c = raw()
    c.cmd("SET", "foo", "bar")
    assert c.cmd("OBJECT", "FREQ", "nokey") is None
    assert c.cmd("OBJECT", "IDLETIME", "nokey") is None
    assert c.cmd("OBJECT", "FREQ", "foo") == RespError(NO_LFU)
    assert c.cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu") == "OK"
    try:
        assert c.cmd("OBJECT", "IDLETIME", "foo") == RespError(LFU_NO_IDLE)
        assert c.cmd("OBJECT", "IDLETIME", "nokey") is None
    finally:
        c.cmd("CONFIG", "SET", "maxmemory-policy", "noeviction")
    assert c.cmd("OBJECT", "IDLETIME") == RespError(
        "ERR wrong number of arguments for 'object|idletime' command")
    lines = c.cmd("OBJECT", "HELP")
    assert "IDLETIME <key>" in lines and "FREQ <key>" in lines


# --------------------------------------------------------------------------- LOLWUT


def test_lolwut_version_line(raw):
    c = raw()
    for args in ([], ["VERSION", "7"], ["version", "1"], ["foo"], ["VERSION"]):
        assert c.cmd("LOLWUT", *args) == b"Redis ver. 7.0.15\n", args
    five = c.cmd("LOLWUT", "VERSION", "5", "20", "4", "4").decode()
    assert five.endswith("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15\n")
    assert any(0x2800 <= ord(ch) <= 0x28FF for ch in five)
    six = c.cmd("LOLWUT", "VERSION", "6", "10", "3").decode()
    assert six.endswith("\nDedicated to the 8 bit game developers of past and present.\n"
                        "Original 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15\n")
    assert "\x1b[" in six
    integer = RespError("ERR value is not an integer or out of range")
    assert c.cmd("LOLWUT", "VERSION", "x") == integer
    assert c.cmd("LOLWUT", "VERSION", "5", "x") == integer
    assert c.cmd("LOLWUT", "VERSION", "6", "1", "x") == integer
    c.cmd("HELLO", "3")
    c.send_command("LOLWUT")
    assert c.reply_bytes() == b"=22\r\ntxt:Redis ver. 7.0.15\n\r\n"


# --------------------------------------------------------------------------- CLIENT qbuf


def client_fields(line):
    return dict(kv.split("=", 1) for kv in line.strip().split(" "))


def test_client_qbuf_is_the_query_buffer(server):
    def enc(*args):
        return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)

    info, ping = enc(b"CLIENT", b"INFO"), enc(b"PING")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        def ask(payload):
            s.sendall(payload)
            data = b""
            while b"resp=" not in data or data.count(b"+PONG") < payload.count(b"PING"):
                data += s.recv(65536)
            return client_fields(data[data.index(b"id="):].split(b"\n")[0].decode())

        f = ask(info)
        assert int(f["qbuf"]) == len(info)
        assert int(f["qbuf-free"]) > 0
        # Pipelined: the whole batch is still in the buffer, the requests answered before too.
        f = ask(ping + info + ping)
        assert int(f["qbuf"]) == len(ping) * 2 + len(info)
