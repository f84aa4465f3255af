"""Keyspace notifications (notify-keyspace-events), as Redis 7.0 sends them.

Each case runs commands with a psubscriber on __key*__:* and compares the exact (channel,
payload) sequence with what redis-server 7.0.15 sends. The keys of one case share a hash tag,
so on lavik they live on one worker and their events arrive in the order Redis sends them; the
cross-worker tests compare per-key sequences instead. Every wait is bounded: a missing message
fails the test, an extra one that follows within a short quiet period fails it too.
"""

import time

import pytest

from conftest import RespError, spread_keys, wait_until

QUIET_S = 0.05  # how long to listen for unexpected extra messages after the expected ones


class Events:
    """A psubscriber to every keyspace/keyevent channel of every database."""

    def __init__(self, client, pattern="__key*__:*"):
        self.p = client.pubsub()
        self.p.psubscribe(pattern)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = self.p.get_message(timeout=0.5)
            if m and m["type"] == "psubscribe":
                return
        raise AssertionError("no psubscribe confirmation")

    def take(self, n, timeout=3.0, quiet=QUIET_S):
        """The first n messages (fewer if they do not come in time), plus any that follow
        within `quiet` seconds."""
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            m = self.p.get_message(timeout=max(0.001, deadline - time.monotonic()))
            if m and m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
        end = time.monotonic() + quiet
        while time.monotonic() < end:
            m = self.p.get_message(timeout=max(0.001, end - time.monotonic()))
            if m and m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
        return got

    def close(self):
        self.p.close()


def msgs(pairs, db=0, space=True, event=True):
    """The messages Redis sends for (event, key) pairs: keyspace then keyevent for each."""
    out = []
    for ev, key in pairs:
        if space:
            out.append((f"__keyspace@{db}__:{key}", ev))
        if event:
            out.append((f"__keyevent@{db}__:{ev}", key))
    return out


@pytest.fixture
def kr(server):
    """A client of the shared server; notifications are switched off again afterwards."""
    c = server.client()
    c.config_set("notify-keyspace-events", "")
    c.flushall()
    yield c
    c.config_set("notify-keyspace-events", "")
    c.close()


def run_case(c, conn, flags, setup, cmds, expected):
    """setup (notifications off), then cmds under `flags`; asserts the messages sent."""
    c.config_set("notify-keyspace-events", "")
    c.flushall()
    for cmd in setup:
        reply = conn.cmd(*cmd)
        assert not isinstance(reply, RespError), (cmd, reply)
    c.config_set("notify-keyspace-events", flags)
    sub = Events(c)
    try:
        for cmd in cmds:
            conn.cmd(*cmd)
        got = sub.take(len(expected))
    finally:
        sub.close()
    assert got == expected, (cmds, got)


def events_of(c, flags, commands, n, timeout=3.0, quiet=QUIET_S):
    """The messages `commands()` makes under `flags` (n expected); notifications are off again
    afterwards."""
    c.config_set("notify-keyspace-events", flags)
    sub = Events(c)
    try:
        commands()
        return sub.take(n, timeout=timeout, quiet=quiet)
    finally:
        sub.close()
        c.config_set("notify-keyspace-events", "")


# Every case: (setup, commands, [(event, key), ...] as Redis 7.0.15 sends them under KEA).
T = "{t}"  # the hash tag every key of a case shares
CASES = {
    "set": ([], [("set", T + "k", "v")], [("set", T + "k")]),
    "set_ex": ([("set", T + "k", "v")], [("set", T + "k", "w", "ex", "100")],
               [("set", T + "k"), ("expire", T + "k")]),
    "set_exat_past": ([("set", T + "k", "v")], [("set", T + "k", "w", "exat", "1")],
                      [("set", T + "k"), ("expire", T + "k"), ("expired", T + "k")]),
    "setex_psetex_setnx": (
        [], [("setex", T + "k", "100", "v"), ("psetex", T + "k2", "100000", "v"),
             ("setnx", T + "k3", "v"), ("setnx", T + "k3", "v")],
        [("set", T + "k"), ("expire", T + "k"), ("set", T + "k2"), ("expire", T + "k2"),
         ("set", T + "k3")]),
    "getset_get_keepttl": (
        [("set", T + "k", "v")],
        [("getset", T + "k", "w"), ("set", T + "k", "x", "get"),
         ("set", T + "k", "y", "keepttl"), ("set", T + "k", "z", "nx")],
        [("set", T + "k")] * 3),
    "getex": ([("set", T + "k", "v")],
              [("getex", T + "k", "ex", "100"), ("getex", T + "k", "persist"),
               ("getex", T + "k", "persist"), ("getex", T + "k"), ("getex", T + "k", "pxat", "1")],
              [("expire", T + "k"), ("persist", T + "k"), ("del", T + "k")]),
    "getdel": ([("set", T + "k", "v")], [("getdel", T + "k"), ("getdel", T + "k")],
               [("del", T + "k")]),
    "string_rmw": (
        [], [("setrange", T + "k", "2", "ab"), ("setrange", T + "k", "0", ""),
             ("incr", T + "n"), ("decrby", T + "n", "3"), ("incrbyfloat", T + "f", "1.5"),
             ("append", T + "k", "zz"), ("incr", T + "k")],
        [("setrange", T + "k"), ("incrby", T + "n"), ("incrby", T + "n"),
         ("incrbyfloat", T + "f"), ("append", T + "k")]),
    "mset_msetnx": (
        [], [("mset", T + "a", "1", T + "b", "2"), ("msetnx", T + "c", "1", T + "d", "2"),
             ("msetnx", T + "c", "1", T + "e", "1")],
        [("set", T + "a"), ("set", T + "b"), ("set", T + "c"), ("set", T + "d")]),
    "del_unlink": ([("set", T + "a", "1"), ("set", T + "b", "1")],
                   [("del", T + "a", T + "b", T + "c"), ("unlink", T + "x")],
                   [("del", T + "a"), ("del", T + "b")]),
    "rename": ([("set", T + "a", "1"), ("set", T + "b", "1")],
               [("rename", T + "a", T + "b"), ("renamenx", T + "b", T + "c"),
                ("renamenx", T + "c", T + "c"), ("rename", T + "c", T + "c")],
               [("rename_from", T + "a"), ("rename_to", T + "b"), ("rename_from", T + "b"),
                ("rename_to", T + "c")]),
    "copy": ([("set", T + "a", "1"), ("set", T + "b", "1")],
             [("copy", T + "a", T + "c"), ("copy", T + "a", T + "b", "replace"),
              ("copy", T + "a", T + "b")],
             [("copy_to", T + "c"), ("copy_to", T + "b")]),
    "expire_family": (
        [("set", T + "a", "1")],
        [("expire", T + "a", "100"), ("pexpire", T + "a", "100000"),
         ("expireat", T + "a", "99999999999"), ("pexpireat", T + "a", "99999999999000"),
         ("persist", T + "a"), ("persist", T + "a"), ("expire", T + "a", "100", "xx"),
         ("expire", T + "a", "-1")],
        [("expire", T + "a")] * 4 + [("persist", T + "a"), ("del", T + "a")]),
    "expire_in_past": ([("set", T + "a", "1"), ("set", T + "b", "1")],
                       [("pexpireat", T + "a", "1"), ("expireat", T + "b", "0")],
                       [("del", T + "a"), ("del", T + "b")]),
    "list_edits": (
        [], [("lpush", T + "l", "a", "b"), ("rpush", T + "l", "c"), ("lpushx", T + "l", "d"),
             ("rpushx", T + "l", "e"), ("lpushx", T + "nol", "a"),
             ("linsert", T + "l", "before", "a", "x"), ("linsert", T + "l", "before", "zz", "x"),
             ("lset", T + "l", "0", "q"), ("lrem", T + "l", "0", "x"), ("lrem", T + "l", "0", "zz"),
             ("ltrim", T + "l", "0", "1"), ("lpop", T + "l"), ("rpop", T + "l")],
        [("lpush", T + "l"), ("rpush", T + "l"), ("lpush", T + "l"), ("rpush", T + "l"),
         ("linsert", T + "l"), ("lset", T + "l"), ("lrem", T + "l"), ("ltrim", T + "l"),
         ("lpop", T + "l"), ("rpop", T + "l"), ("del", T + "l")]),
    "list_pop_counts": ([("rpush", T + "l", "a", "b", "c")],
                        [("lpop", T + "l", "0"), ("lpop", T + "l", "2"), ("rpop", T + "l", "5"),
                         ("lpop", T + "l")],
                        [("lpop", T + "l"), ("rpop", T + "l"), ("del", T + "l")]),
    "list_move": ([("rpush", T + "l", "a", "b")],
                  [("rpoplpush", T + "l", T + "m"), ("lmove", T + "l", T + "m", "left", "right"),
                   ("lmove", T + "m", T + "m", "left", "left")],
                  [("lpush", T + "m"), ("rpop", T + "l"), ("rpush", T + "m"), ("lpop", T + "l"),
                   ("del", T + "l"), ("lpush", T + "m"), ("lpop", T + "m")]),
    "list_trim_all_lrem_all": ([("rpush", T + "l", "a", "b"), ("rpush", T + "k", "a", "b")],
                               [("ltrim", T + "l", "5", "9"), ("lrem", T + "k", "0", "a"),
                                ("lrem", T + "k", "0", "b")],
                               [("ltrim", T + "l"), ("del", T + "l"), ("lrem", T + "k"),
                                ("lrem", T + "k"), ("del", T + "k")]),
    "list_mpop_and_blocking_served_at_once": (
        [("rpush", T + "l", "a", "b", "c"), ("rpush", T + "k", "a")],
        [("lmpop", "1", T + "l", "left", "count", "2"), ("blpop", T + "l", "0"),
         ("brpop", T + "k", "0"), ("blmove", T + "x", T + "l", "left", "right", "0.01")],
        [("lpop", T + "l"), ("lpop", T + "l"), ("del", T + "l"), ("rpop", T + "k"),
         ("del", T + "k")]),
    "set_edits": (
        [], [("sadd", T + "s", "a", "b", "c"), ("sadd", T + "s", "a"),
             ("srem", T + "s", "a", "zz"), ("srem", T + "s", "zz"),
             ("smove", T + "s", T + "t", "b"), ("smove", T + "s", T + "t", "c"),
             ("spop", T + "t"), ("spop", T + "t")],
        [("sadd", T + "s"), ("srem", T + "s"), ("srem", T + "s"), ("sadd", T + "t"),
         ("srem", T + "s"), ("del", T + "s"), ("sadd", T + "t"), ("spop", T + "t"),
         ("spop", T + "t"), ("del", T + "t")]),
    "smove_member_already_there": ([("sadd", T + "s", "a", "b"), ("sadd", T + "t", "a")],
                                   [("smove", T + "s", T + "t", "a"),
                                    ("smove", T + "t", T + "t", "a")],
                                   [("srem", T + "s")]),
    "spop_counts": ([("sadd", T + "s", "a", "b", "c")],
                    [("spop", T + "s", "0"), ("spop", T + "s", "2"), ("spop", T + "s", "5"),
                     ("spop", T + "s", "1")],
                    [("spop", T + "s"), ("spop", T + "s"), ("del", T + "s")]),
    "set_stores": (
        [("sadd", T + "s", "a", "b", "c"), ("sadd", T + "t", "c", "d")],
        [("sinterstore", T + "d", T + "s", T + "t"), ("sunionstore", T + "d", T + "s", T + "t"),
         ("sdiffstore", T + "d", T + "s", T + "t"), ("sinterstore", T + "d", T + "s", T + "x"),
         ("sinterstore", T + "d", T + "s", T + "x")],
        [("sinterstore", T + "d"), ("sunionstore", T + "d"), ("sdiffstore", T + "d"),
         ("del", T + "d")]),
    "zset_edits": (
        [], [("zadd", T + "z", "1", "a", "2", "b"), ("zadd", T + "z", "1", "a"),
             ("zadd", T + "z", "incr", "5", "a"), ("zincrby", T + "z", "1", "b"),
             ("zadd", T + "z", "nx", "incr", "5", "a"), ("zadd", T + "z", "incr", "0", "a"),
             ("zrem", T + "z", "a"), ("zrem", T + "z", "q")],
        [("zadd", T + "z"), ("zincr", T + "z"), ("zincr", T + "z"), ("zrem", T + "z")]),
    "zset_remove_ranges": (
        [("zadd", T + "z", "1", "a", "2", "b", "3", "c", "4", "d")],
        [("zremrangebyscore", T + "z", "1", "1"), ("zremrangebyrank", T + "z", "0", "0"),
         ("zremrangebylex", T + "z", "[zz", "+"), ("zremrangebylex", T + "z", "-", "+"),
         ("zremrangebyscore", T + "z", "1", "1")],
        [("zremrangebyscore", T + "z"), ("zremrangebyrank", T + "z"),
         ("zremrangebylex", T + "z"), ("del", T + "z")]),
    "zset_pops": ([("zadd", T + "z", "1", "a", "2", "b", "3", "c"), ("zadd", T + "y", "1", "a")],
                  [("zpopmin", T + "z"), ("zpopmax", T + "z", "5"), ("zpopmin", T + "z"),
                   ("bzpopmax", T + "y", "0")],
                  [("zpopmin", T + "z"), ("zpopmax", T + "z"), ("del", T + "z"),
                   ("zpopmax", T + "y"), ("del", T + "y")]),
    "zset_mpop": ([("zadd", T + "z", "1", "a", "2", "b")],
                  [("zmpop", "1", T + "z", "min"), ("bzmpop", "0", "1", T + "z", "max")],
                  [("zpopmin", T + "z"), ("zpopmax", T + "z"), ("del", T + "z")]),
    "zset_stores": (
        [("zadd", T + "z", "1", "a", "2", "b"), ("zadd", T + "y", "1", "a")],
        [("zunionstore", T + "d", "2", T + "z", T + "y"),
         ("zinterstore", T + "d", "2", T + "z", T + "y"),
         ("zdiffstore", T + "d", "2", T + "z", T + "y"),
         ("zrangestore", T + "d2", T + "z", "0", "-1"),
         ("zinterstore", T + "d", "2", T + "z", T + "nx"),
         ("zrangestore", T + "d2", T + "z", "5", "6"), ("zrangestore", T + "d2", T + "z", "5", "6")],
        [("zunionstore", T + "d"), ("zinterstore", T + "d"), ("zdiffstore", T + "d"),
         ("zrangestore", T + "d2"), ("del", T + "d"), ("del", T + "d2")]),
    "hash_edits": (
        [], [("hset", T + "h", "a", "1", "b", "2"), ("hset", T + "h", "a", "1"),
             ("hmset", T + "h", "c", "3"), ("hsetnx", T + "h", "c", "3"),
             ("hsetnx", T + "h", "d", "3"), ("hincrby", T + "h", "n", "1"),
             ("hincrbyfloat", T + "h", "f", "1.5"), ("hdel", T + "h", "zz"),
             ("hdel", T + "h", "a", "b", "c", "d", "n"), ("hdel", T + "h", "f")],
        [("hset", T + "h")] * 4 + [("hincrby", T + "h"), ("hincrbyfloat", T + "h"),
                                   ("hdel", T + "h"), ("hdel", T + "h"), ("del", T + "h")]),
    "bits": (
        [], [("setbit", T + "b", "7", "1"), ("setbit", T + "b", "7", "1"),
             ("bitfield", T + "b", "set", "u8", "0", "255"), ("bitfield", T + "b", "get", "u8", "0"),
             ("bitfield", T + "b", "set", "u8", "0", "255"),
             ("bitfield", T + "b", "overflow", "fail", "incrby", "u8", "0", "300"),
             ("bitfield", T + "b2", "set", "u8", "0", "0"), ("setbit", T + "b3", "100", "0")],
        [("setbit", T + "b")] * 2 + [("setbit", T + "b2"), ("setbit", T + "b3")]),
    "bitop": ([("set", T + "a", "x"), ("set", T + "b", "y")],
              [("bitop", "and", T + "d", T + "a", T + "b"),
               ("bitop", "and", T + "d", T + "nx1", T + "nx2"), ("bitop", "or", T + "d2", T + "nx1")],
              [("set", T + "d"), ("del", T + "d")]),
    "hyperloglog": (
        [], [("pfadd", T + "p", "a"), ("pfadd", T + "p", "a"), ("pfadd", T + "q"),
             ("pfadd", T + "q"), ("pfcount", T + "p", T + "q"),
             ("pfmerge", T + "m", T + "p", T + "q"), ("pfmerge", T + "m")],
        [("pfadd", T + "p"), ("pfadd", T + "q"), ("pfadd", T + "m"), ("pfadd", T + "m")]),
    "geo": (
        [], [("geoadd", T + "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
              "Catania"),
             ("geoadd", T + "g", "13.361389", "38.115556", "Palermo"),
             ("georadius", T + "g", "15", "37", "200", "km", "store", T + "gs"),
             ("georadius", T + "g", "15", "37", "200", "km", "storedist", T + "gs"),
             ("geosearchstore", T + "gd", T + "g", "fromlonlat", "15", "37", "byradius", "200",
              "km"),
             ("geosearchstore", T + "gd", T + "g", "fromlonlat", "100", "37", "byradius", "1",
              "km"),
             ("geosearchstore", T + "gd", T + "g", "fromlonlat", "100", "37", "byradius", "1",
              "km"),
             ("georadiusbymember", T + "g", "Palermo", "1", "km", "store", T + "gs")],
        [("zadd", T + "g"), ("georadiusstore", T + "gs"), ("georadiusstore", T + "gs"),
         ("geosearchstore", T + "gd"), ("del", T + "gd"), ("georadiusstore", T + "gs")]),
    "sort_store": ([("rpush", T + "l", "3", "1", "2")],
                   [("sort", T + "l", "store", T + "d"), ("sort", T + "nol", "store", T + "d"),
                    ("sort", T + "nol", "store", T + "d")],
                   [("sortstore", T + "d"), ("del", T + "d")]),
    "streams": (
        [], [("xadd", T + "x", "1-0", "f", "v"), ("xadd", T + "x", "maxlen", "1", "2-0", "f", "v"),
             ("xadd", T + "x", "maxlen", "5", "3-0", "f", "v"), ("xtrim", T + "x", "maxlen", "1"),
             ("xtrim", T + "x", "maxlen", "1"), ("xdel", T + "x", "3-0"), ("xdel", T + "x", "9-0"),
             ("xsetid", T + "x", "5-0"), ("xadd", T + "nx", "nomkstream", "*", "f", "v")],
        [("xadd", T + "x"), ("xadd", T + "x"), ("xtrim", T + "x"), ("xadd", T + "x"),
         ("xtrim", T + "x"), ("xdel", T + "x"), ("xsetid", T + "x")]),
    "stream_groups": (
        [("xadd", T + "x", "1-0", "f", "v")],
        [("xgroup", "create", T + "x", "g", "0"),
         ("xgroup", "create", T + "y", "g", "$", "mkstream"),
         ("xgroup", "create", T + "x", "g", "0"),
         ("xgroup", "setid", T + "x", "g", "0"),
         ("xgroup", "createconsumer", T + "x", "g", "c"),
         ("xgroup", "createconsumer", T + "x", "g", "c"),
         ("xgroup", "delconsumer", T + "x", "g", "c"),
         ("xgroup", "delconsumer", T + "x", "g", "c"),
         ("xgroup", "destroy", T + "x", "g"), ("xgroup", "destroy", T + "x", "g")],
        [("xgroup-create", T + "x"), ("xgroup-create", T + "y"), ("xgroup-setid", T + "x"),
         ("xgroup-createconsumer", T + "x"), ("xgroup-delconsumer", T + "x"),
         ("xgroup-destroy", T + "x")]),
    "stream_consumers_created_by_reads_and_claims": (
        [("xadd", T + "x", "1-0", "f", "v"), ("xgroup", "create", T + "x", "g", "0")],
        [("xreadgroup", "group", "g", "c2", "streams", T + "x", ">"),
         ("xclaim", T + "x", "g", "c3", "0", "1-0"), ("xclaim", T + "x", "g", "c3", "0", "1-0"),
         ("xautoclaim", T + "x", "g", "c4", "0", "0"), ("xack", T + "x", "g", "1-0"),
         ("xautoclaim", T + "x", "g", "c5", "0", "0")],
        [("xgroup-createconsumer", T + "x")] * 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_family_events(kr, raw, name):
    setup, cmds, pairs = CASES[name]
    run_case(kr, raw(), "KEA", setup, cmds, msgs(pairs))


def test_restore_events(kr, raw):
    rb_conn = raw()
    kr.set("src", "1")
    payload = rb_conn.cmd("dump", "src")
    run_case(kr, rb_conn, "KEA", [("set", T + "a", "1")],
             [("restore", T + "b", "0", payload),
              ("restore", T + "a", "0", payload, "replace"),
              ("restore", T + "b", "0", payload),
              ("restore", T + "a", "1", payload, "replace", "absttl")],
             msgs([("restore", T + "b"), ("restore", T + "a"), ("del", T + "a")]))


# ---- the flag classes ----


def test_only_keyspace_channel(kr, raw):
    run_case(kr, raw(), "Kg$", [], [("set", T + "a", "1"), ("del", T + "a")],
             msgs([("set", T + "a"), ("del", T + "a")], event=False))


def test_only_keyevent_channel(kr, raw):
    run_case(kr, raw(), "El", [], [("set", T + "a", "1"), ("rpush", T + "l", "x"),
                                   ("rpop", T + "l")],
             msgs([("rpush", T + "l"), ("rpop", T + "l")], space=False))


@pytest.mark.parametrize("flags,pairs", [
    ("KEg", [("del", T + "s"), ("expire", T + "a")]),
    ("KE$", [("set", T + "a")]),
    ("KEl", [("lpush", T + "l")]),
    ("KEs", [("srem", T + "s")]),
    ("KEh", [("hset", T + "h")]),
    ("KEz", [("zadd", T + "z")]),
    ("KEt", [("xadd", T + "x")]),
    ("KEs$l", [("set", T + "a"), ("lpush", T + "l"), ("srem", T + "s")]),
])
def test_each_class_alone(kr, raw, flags, pairs):
    order = {"set": 0, "lpush": 1, "hset": 2, "zadd": 3, "xadd": 4, "srem": 5, "del": 6,
             "expire": 7}
    run_case(kr, raw(), flags, [("sadd", T + "s", "m")],
             [("set", T + "a", "1"), ("lpush", T + "l", "x"), ("hset", T + "h", "f", "v"),
              ("zadd", T + "z", "1", "m"), ("xadd", T + "x", "1-1", "f", "v"),
              ("srem", T + "s", "m"), ("expire", T + "a", "100")],
             msgs(sorted(pairs, key=lambda p: order[p[0]])))


def test_no_channel_flag_sends_nothing(kr, raw):
    run_case(kr, raw(), "g$lshzxetd", [], [("set", T + "a", "1"), ("del", T + "a")], [])


def test_new_key_events(kr, raw):
    conn = raw()
    kr.set("src", "1")
    payload = conn.cmd("dump", "src")
    run_case(
        kr, conn, "KEn", [("set", T + "a", "1"), ("set", T + "b", "2"), ("sadd", T + "s", "x"),
                          ("rpush", T + "l", "1")],
        [("set", T + "n1", "1"), ("set", T + "n1", "2"), ("lpush", T + "l2", "x"),
         ("rename", T + "a", T + "c"), ("copy", T + "c", T + "d"),
         ("copy", T + "c", T + "b", "replace"), ("restore", T + "e", "0", payload),
         ("restore", T + "e", "0", payload, "replace"), ("sinterstore", T + "d2", T + "s"),
         ("sinterstore", T + "d2", T + "s"), ("incr", T + "n"), ("hset", T + "h", "a", "1"),
         ("zadd", T + "z", "1", "a"), ("xadd", T + "xs", "*", "a", "1"),
         ("pfadd", T + "p", "a"), ("setbit", T + "bb", "1", "1"),
         ("rpoplpush", T + "l", T + "l3"), ("sort", T + "l3", "store", T + "b"),
         ("rename", T + "b", T + "d")],
        msgs([("new", T + k) for k in ("n1", "l2", "c", "d", "b", "e", "e", "d2", "n", "h", "z",
                                        "xs", "p", "bb", "l3", "d")]))


def test_new_key_in_order_with_the_command(kr, raw):
    run_case(kr, raw(), "KEAn", [("sadd", T + "s", "a"), ("rpush", T + "l", "a"),
                                 ("set", T + "k", "1")],
             [("smove", T + "s", T + "t", "a"), ("rpoplpush", T + "l", T + "m"),
              ("rename", T + "k", T + "k2"), ("xgroup", "create", T + "x", "g", "$", "mkstream")],
             msgs([("srem", T + "s"), ("del", T + "s"), ("new", T + "t"), ("sadd", T + "t"),
                   ("new", T + "m"), ("lpush", T + "m"), ("rpop", T + "l"), ("del", T + "l"),
                   ("new", T + "k2"), ("rename_from", T + "k"), ("rename_to", T + "k2"),
                   ("new", T + "x"), ("xgroup-create", T + "x")]))


def test_new_under_all_is_kept_though_not_shown(kr, raw):
    conn = raw()
    kr.config_set("notify-keyspace-events", "KEAn")
    assert kr.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}
    run_case(kr, conn, "KEAn", [], [("set", T + "a", "1")], msgs([("new", T + "a"),
                                                                  ("set", T + "a")]))
    run_case(kr, conn, "KEA", [], [("set", T + "a", "1")], msgs([("set", T + "a")]))


def test_keymiss_events(kr, raw):
    run_case(kr, raw(), "KEm", [("set", T + "a", "1")],
             [("get", T + "a"), ("get", T + "nx"), ("exists", T + "nx"),
              ("mget", T + "nx", T + "a", T + "ny"), ("set", T + "nx2", "1"),
              ("incr", T + "nx3"), ("ttl", T + "nx4"), ("type", T + "nx5"),
              ("lrange", T + "nl", "0", "1"), ("hget", T + "nh", "a"), ("strlen", T + "nx6")],
             msgs([("keymiss", T + k) for k in ("nx", "nx", "nx", "ny", "nx4", "nx5", "nl", "nh",
                                                 "nx6")]))


def test_multi_exec_and_scripts(kr, raw):
    conn = raw()

    def commands():
        for cmd in [("multi",), ("set", T + "a", "1"), ("lpush", T + "l", "x"),
                    ("del", T + "a"), ("exec",)]:
            conn.cmd(*cmd)
        conn.cmd("eval", "redis.call('set', KEYS[1], 'v'); redis.call('incr', KEYS[2]);"
                 " return redis.call('del', KEYS[1])", "2", T + "s", T + "n")

    assert events_of(kr, "KEA", commands, 12) == msgs(
        [("set", T + "a"), ("lpush", T + "l"), ("del", T + "a"), ("set", T + "s"),
         ("incrby", T + "n"), ("del", T + "s")])


def test_blocked_pops_served_by_a_push(kr, raw):
    waiter, pusher = raw(), raw()

    def commands():
        waiter.send_command("blpop", T + "l", "5")
        time.sleep(0.1)
        pusher.cmd("rpush", T + "l", "x")
        assert waiter.reply() == [(T + "l").encode(), b"x"]
        waiter.send_command("blmove", T + "src", T + "dst", "right", "left", "5")
        time.sleep(0.1)
        pusher.cmd("lpush", T + "src", "y")
        assert waiter.reply() == b"y"
        waiter.send_command("bzpopmin", T + "z", "5")
        time.sleep(0.1)
        pusher.cmd("zadd", T + "z", "1", "m")
        assert waiter.reply()[1] == b"m"
        pusher.cmd("xgroup", "create", T + "x", "g", "$", "mkstream")
        waiter.send_command("xreadgroup", "group", "g", "c", "block", "5000", "streams", T + "x",
                            ">")
        time.sleep(0.1)
        pusher.cmd("xadd", T + "x", "1-1", "f", "v")
        assert waiter.reply()[0][0] == (T + "x").encode()

    assert events_of(kr, "KEA", commands, 30) == msgs(
        [("rpush", T + "l"), ("lpop", T + "l"), ("del", T + "l"), ("lpush", T + "src"),
         ("lpush", T + "dst"), ("rpop", T + "src"), ("del", T + "src"), ("zadd", T + "z"),
         ("zpopmin", T + "z"), ("del", T + "z"), ("xgroup-create", T + "x"), ("xadd", T + "x"),
         ("xgroup-createconsumer", T + "x")])


# ---- expiry ----


def test_lazy_expiry_on_access_then_the_write(kr, raw):
    conn = raw()

    def commands():
        conn.cmd("set", T + "k", "v", "px", "20")
        time.sleep(0.04)
        conn.cmd("set", T + "k", "w")  # expired first (by this access or the active cycle)

    assert events_of(kr, "KEA", commands, 8) == msgs(
        [("set", T + "k"), ("expire", T + "k"), ("expired", T + "k"), ("set", T + "k")])


def test_expired_once_when_read(kr, raw):
    conn = raw()

    def commands():
        conn.cmd("set", T + "k", "v", "px", "20")
        time.sleep(0.04)
        assert conn.cmd("get", T + "k") is None
        assert conn.cmd("get", T + "k") is None

    assert events_of(kr, "Ex", commands, 1, quiet=0.2) == [("__keyevent@0__:expired", T + "k")]


def test_active_expiry_on_every_worker(mr):
    keys = spread_keys(4, "exp")

    def commands():
        for k in keys:
            mr.set(k, "v", px=30)  # nobody touches them: the active cycle expires them

    got = events_of(mr, "KEx", commands, 2 * len(keys), timeout=5.0)
    assert sorted(got) == sorted(msgs([("expired", k) for k in keys]))
    assert mr.dbsize() == 0


def set_expired(c, keys):
    """Gives each key a 20 ms TTL and lets it pass (the keys may still be in the index)."""
    for k in keys:
        c.set(k, "v", px=20)
    time.sleep(0.04)


def test_expired_on_read_from_every_worker(mr):
    keys = spread_keys(4, "lazy")

    def commands():
        set_expired(mr, keys)
        assert [mr.get(k) for k in keys] == [None] * len(keys)  # expired here or just before
        assert mr.mget(keys) == [None] * len(keys)

    got = events_of(mr, "Ex", commands, len(keys), quiet=0.2)
    assert sorted(got) == sorted(("__keyevent@0__:expired", k) for k in keys)


def test_script_and_exec_on_keys_of_every_worker(mr):
    keys = spread_keys(4, "scr")

    def commands():
        set_expired(mr, keys)
        for k in keys:  # the script reads the expired key, then writes it
            assert mr.eval("redis.call('get', KEYS[1]); return redis.call('incr', KEYS[1])",
                           1, k) == 1
        with mr.pipeline(transaction=True) as p:
            for k in keys:
                p.delete(k)
            p.execute()

    got = events_of(mr, "Egx", commands, 3 * len(keys), quiet=0.1)
    for k in keys:  # each key's own events in Redis's order
        assert [m for m in got if m[1] == k] == [("__keyevent@0__:expire", k),
                                                 ("__keyevent@0__:expired", k),
                                                 ("__keyevent@0__:del", k)]
    assert len(got) == 3 * len(keys)


# ---- keys on other workers than the subscriber's ----


def test_events_from_every_worker(mr):
    keys = spread_keys(4, "cross")
    mr.config_set("notify-keyspace-events", "KEA")
    subs = [Events(mr) for _ in range(3)]  # connections land on different workers
    try:
        for k in keys:
            mr.set(k, "1")
            mr.incr(k)
            mr.delete(k)
        gots = [s.take(6 * len(keys)) for s in subs]
    finally:
        for s in subs:
            s.close()
        mr.config_set("notify-keyspace-events", "")
    for got in gots:
        for k in keys:
            mine = [m for m in got if m[0].endswith(":" + k) or m[1] == k]
            assert mine == msgs([("set", k), ("incrby", k), ("del", k)]), (k, got)
        assert len(got) == 6 * len(keys)


def test_subscribe_to_one_key_and_one_event(mr):
    keys = spread_keys(2, "one")
    mr.config_set("notify-keyspace-events", "KEA")
    p = mr.pubsub()
    try:
        p.subscribe(f"__keyspace@0__:{keys[0]}", "__keyevent@0__:lpush")
        assert wait_until(lambda: (p.get_message(timeout=0.2) or {}).get("type") == "subscribe")
        assert wait_until(lambda: (p.get_message(timeout=0.2) or {}).get("type") == "subscribe")
        mr.set(keys[0], "1")
        mr.set(keys[1], "1")
        mr.lpush("lst:" + keys[1], "x")
        got = []
        deadline = time.monotonic() + 3
        while len(got) < 2 and time.monotonic() < deadline:
            m = p.get_message(timeout=0.2)
            if m and m["type"] == "message":
                got.append((m["channel"], m["data"]))
    finally:
        p.close()
        mr.config_set("notify-keyspace-events", "")
    assert got == [(f"__keyspace@0__:{keys[0]}", "set"), ("__keyevent@0__:lpush", "lst:" + keys[1])]


# ---- the parameter ----


@pytest.mark.parametrize("given,shown", [
    ("KEA", "AKE"), ("A", "A"), ("Kg", "gK"), ("g$lshzxetd", "A"), ("g$lshzxetdn", "A"),
    ("AKEmn", "AKEm"), ("E", "E"), ("nm", "nm"), ("ztx$E", "$zxtE"), ("KEAn", "AKE"), ("", ""),
    ("KEAd", "AKE"), ("mKEeld", "ledKEm"), ("KEKEAA", "AKE"),
])
def test_config_get_normalises(kr, given, shown):
    kr.config_set("notify-keyspace-events", given)
    assert kr.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}


def test_config_set_rejects_unknown_letters(kr):
    kr.config_set("notify-keyspace-events", "Kg")
    for bad in ("Kb", "a", "KE A", "X"):
        with pytest.raises(Exception) as e:
            kr.config_set("notify-keyspace-events", bad)
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument "
                                "'notify-keyspace-events') - Invalid event class character. "
                                "Use 'Ag$lshzxeKEtmdn'.")
    assert kr.config_get("notify-keyspace-events") == {"notify-keyspace-events": "gK"}


def test_config_off_again_stops_events(kr, raw):
    conn = raw()
    kr.config_set("notify-keyspace-events", "KEA")
    sub = Events(kr)
    try:
        conn.cmd("set", T + "a", "1")
        assert sub.take(2) == msgs([("set", T + "a")])
        kr.config_set("notify-keyspace-events", "")
        conn.cmd("set", T + "a", "2")
        assert sub.take(0, quiet=0.2) == []
    finally:
        sub.close()


def test_from_the_command_line(spawn_server):
    s = spawn_server(extra_args=["--notify-keyspace-events", "KEx"])
    c = s.client()
    assert c.config_get("notify-keyspace-events") == {"notify-keyspace-events": "xKE"}
    sub = Events(c)
    try:
        c.set("k", "v", px=10)
        got = sub.take(2, timeout=5.0)
    finally:
        sub.close()
        c.close()
    assert got == msgs([("expired", "k")])
