"""STREAM commands checked against Redis 7.0 behaviour: XADD (ids, trimming, NOMKSTREAM), XLEN,
XRANGE/XREVRANGE, XDEL, XTRIM, XSETID, consumer groups (XGROUP, XREADGROUP, XACK, XPENDING,
XCLAIM, XAUTOCLAIM), XINFO, XREAD, blocking reads woken from another worker, WRONGTYPE, expiry,
RESP3 maps, and (lavik only) streams and groups surviving a restart."""

import threading
import time

import pytest
import redis

from conftest import WRONGTYPE, err, spread_keys, waiters_across_workers

BAD_ID = "Invalid stream ID specified as stream command argument"


def x(r, *args):
    return r.execute_command(*args)


def errors(r, cases):
    for args, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == text, args


# --- XADD, XLEN, XRANGE, XREVRANGE ---

def test_xadd_ids_and_errors(r):
    assert x(r, "XADD", "s", "1-1", "a", "1") == "1-1"
    assert x(r, "XADD", "s", "2-*", "a", "2") == "2-0"
    assert x(r, "XADD", "s", "2-*", "a", "3") == "2-1"
    assert x(r, "XADD", "s", "5", "b", "4", "c", "5") == "5-0"
    auto = x(r, "XADD", "s", "*", "a", "6")
    ms, seq = map(int, auto.split("-"))
    assert ms > 5 and seq == 0
    assert r.xlen("s") == 5
    errors(r, [
        (("XADD", "s", "1-1", "a", "1"),
         "The ID specified in XADD is equal or smaller than the target stream top item"),
        (("XADD", "s", "3-*", "a", "1"),
         "The ID specified in XADD is equal or smaller than the target stream top item"),
        (("XADD", "s", "0-0", "a", "1"), "The ID specified in XADD must be greater than 0-0"),
        (("XADD", "s", "foo", "a", "1"), BAD_ID),
        (("XADD", "s", "-", "a", "1"), BAD_ID),
        (("XADD", "s", "1-x", "a", "1"), BAD_ID),
        (("XADD", "s", "*", "a"), "wrong number of arguments for 'xadd' command"),
        (("XADD", "s", "*", "a", "1", "b"), "wrong number of arguments for 'xadd' command"),
        (("XADD", "s", "MAXLEN", "-1", "*", "a", "1"), "The MAXLEN argument must be >= 0."),
        (("XADD", "s", "MAXLEN", "x", "*", "a", "1"), "value is not an integer or out of range"),
        (("XADD", "s", "LIMIT", "10", "*", "a", "1"),
         "syntax error, LIMIT cannot be used without specifying a trimming strategy"),
        (("XADD", "s", "MAXLEN", "10", "LIMIT", "10", "*", "a", "1"),
         "syntax error, LIMIT cannot be used without the special ~ option"),
        (("XADD", "s", "MAXLEN", "1", "MINID", "0", "*", "a", "1"),
         "syntax error, MAXLEN and MINID options at the same time are not compatible"),
        (("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "a", "1"),
         "The LIMIT argument must be >= 0."),
        (("XADD", "s", "MINID", "bad", "*", "a", "1"), BAD_ID),
    ])
    assert r.xlen("s") == 5
    # An empty stream keeps its last id: a smaller one is still refused.
    x(r, "XADD", "e", "10-0", "f", "v")
    x(r, "XDEL", "e", "10-0")
    assert r.exists("e") == 1 and r.xlen("e") == 0
    with pytest.raises(redis.ResponseError):
        x(r, "XADD", "e", "9-0", "f", "v")
    assert x(r, "XADD", "e", "10-*", "f", "v") == "10-1"


def test_xadd_nomkstream_and_max_id(r):
    assert x(r, "XADD", "nk", "NOMKSTREAM", "*", "a", "1") is None
    assert r.exists("nk") == 0
    x(r, "XADD", "nk", "1-1", "a", "1")
    assert x(r, "XADD", "nk", "NOMKSTREAM", "2-1", "a", "1") == "2-1"
    top = "18446744073709551615-18446744073709551615"
    assert x(r, "XADD", "m", top, "a", "1") == top
    errors(r, [(("XADD", "m", "*", "a", "1"),
                "The stream has exhausted the last possible ID, unable to add more items")])
    assert x(r, "XADD", "m2", "18446744073709551615-*", "a", "1") == "18446744073709551615-0"


def test_xadd_trimming(r):
    for i in range(1, 11):
        x(r, "XADD", "s", f"{i}-0", "f", str(i))
    assert x(r, "XADD", "s", "MAXLEN", "5", "11-0", "f", "11") == "11-0"
    assert [e[0] for e in r.xrange("s")] == [f"{i}-0" for i in range(7, 12)]
    assert x(r, "XADD", "s", "MAXLEN", "=", "3", "12-0", "f", "12") == "12-0"
    assert r.xlen("s") == 3
    assert x(r, "XADD", "s", "MINID", "12", "13-0", "f", "13") == "13-0"
    assert [e[0] for e in r.xrange("s")] == ["12-0", "13-0"]
    # "~" only removes whole nodes (100 entries in both servers): nothing goes here.
    assert x(r, "XADD", "s", "MAXLEN", "~", "1", "14-0", "f", "14") == "14-0"
    assert r.xlen("s") == 3
    assert x(r, "XADD", "s", "MAXLEN", "0", "15-0", "f", "15") == "15-0"
    assert r.xlen("s") == 0
    info = x(r, "XINFO", "STREAM", "s")
    assert info[info.index("entries-added") + 1] == 15


def test_xtrim(r):
    for i in range(1, 301):
        x(r, "XADD", "t", f"{i}-0", "f", "v")
    assert x(r, "XTRIM", "t", "MAXLEN", "~", "250") == 0
    # Whole nodes of 100 entries: the first goes, the second would leave fewer than 150.
    assert x(r, "XTRIM", "t", "MAXLEN", "~", "150") == 100
    assert x(r, "XTRIM", "t", "MAXLEN", "100") == 100
    assert r.xlen("t") == 100
    assert x(r, "XTRIM", "t", "MINID", "290") == 89
    assert r.xlen("t") == 11
    assert x(r, "XTRIM", "t", "MINID", "~", "295", "LIMIT", "1") == 0
    assert x(r, "XTRIM", "nokey", "MAXLEN", "0") == 0
    errors(r, [
        (("XTRIM", "t", "foo", "1"), "syntax error"),
        (("XTRIM", "t", "NOMKSTREAM", "1"), "syntax error"),
        (("XTRIM", "t", "MAXLEN"), "wrong number of arguments for 'xtrim' command"),
        (("XTRIM", "t", "MAXLEN", "-1"), "The MAXLEN argument must be >= 0."),
        (("XTRIM", "t", "MAXLEN", "1", "LIMIT", "1"),
         "syntax error, LIMIT cannot be used without the special ~ option"),
    ])
    assert r.xlen("t") == 11


def test_xrange_and_xrevrange(r):
    for i in range(1, 6):
        x(r, "XADD", "s", f"{i}-1", "f", str(i), "g", "x")
    x(r, "XADD", "s", "5-2", "other", "fields")
    assert r.xrange("s", "-", "+", count=2) == [("1-1", {"f": "1", "g": "x"}),
                                               ("2-1", {"f": "2", "g": "x"})]
    assert [e[0] for e in r.xrange("s", "2", "4")] == ["2-1", "3-1", "4-1"]
    assert [e[0] for e in r.xrange("s", "(2-1", "(4-1")] == ["3-1"]
    assert [e[0] for e in r.xrange("s", "5", "+")] == ["5-1", "5-2"]
    assert [e[0] for e in r.xrange("s", "5-2", "5-2")] == ["5-2"]
    assert r.xrange("s", "4", "2") == []
    assert [e[0] for e in r.xrevrange("s", "+", "-", count=3)] == ["5-2", "5-1", "4-1"]
    assert [e[0] for e in r.xrevrange("s", "(5-2", "(3-1")] == ["5-1", "4-1"]
    assert r.xrange("s", "5-2", "5-2")[0][1] == {"other": "fields"}
    assert x(r, "XRANGE", "s", "-", "+", "COUNT", "0") is None
    assert x(r, "XRANGE", "s", "-", "+", "COUNT", "-1") is None
    assert x(r, "XRANGE", "nokey", "-", "+") == []
    assert x(r, "XRANGE", "nokey", "-", "+", "COUNT", "0") == []
    errors(r, [
        (("XRANGE", "s", "(-", "+"), BAD_ID),
        (("XRANGE", "s", "x", "+"), BAD_ID),
        (("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"),
         "invalid start ID for the interval"),
        (("XRANGE", "s", "-", "(0-0"), "invalid end ID for the interval"),
        (("XRANGE", "s", "-", "+", "foo"), "syntax error"),
        (("XRANGE", "s", "-", "+", "COUNT"), "syntax error"),
        (("XRANGE", "s", "-", "+", "COUNT", "x"), "value is not an integer or out of range"),
        (("XREVRANGE", "s", "(0-0", "-"), "invalid end ID for the interval"),
    ])


def test_binary_fields_and_values(rb):
    rb.execute_command("XADD", "b", "1-0", b"f\x00\xff", b"v\r\n", b"", b"")
    assert rb.execute_command("XRANGE", "b", "-", "+") == [
        (b"1-0", {b"f\x00\xff": b"v\r\n", b"": b""})]


def test_xdel(r):
    for i in range(1, 6):
        x(r, "XADD", "s", f"{i}-0", "f", str(i))
    assert x(r, "XDEL", "s", "2-0", "4", "9-9", "2-0") == 2
    assert [e[0] for e in r.xrange("s")] == ["1-0", "3-0", "5-0"]
    assert x(r, "XDEL", "nokey", "bad") == 0
    errors(r, [(("XDEL", "s", "1-0", "bad"), BAD_ID)])
    assert r.xlen("s") == 3  # all or nothing
    info = x(r, "XINFO", "STREAM", "s")
    assert info[info.index("max-deleted-entry-id") + 1] == "4-0"


def test_xsetid(r):
    x(r, "XADD", "s", "5-0", "f", "v")
    assert x(r, "XSETID", "s", "10-0") == "OK"
    errors(r, [
        (("XADD", "s", "9-0", "f", "v"),
         "The ID specified in XADD is equal or smaller than the target stream top item"),
        (("XSETID", "s", "1-1"),
         "The ID specified in XSETID is smaller than the target stream top item"),
        (("XSETID", "s", "99-0", "ENTRIESADDED", "0"),
         "The entries_added specified in XSETID is smaller than the target stream length"),
        (("XSETID", "s", "99-0", "MAXDELETEDID", "100-0"),
         "The ID specified in XSETID is smaller than the provided max_deleted_entry_id"),
        (("XSETID", "s", "99-0", "ENTRIESADDED", "-1"), "entries_added must be positive"),
        (("XSETID", "s", "99-0", "FOO", "1"), "syntax error"),
        (("XSETID", "nokey", "1-1"), "no such key"),
    ])
    assert x(r, "XSETID", "s", "20-0", "ENTRIESADDED", "7", "MAXDELETEDID", "3-0") == "OK"
    info = x(r, "XINFO", "STREAM", "s")
    assert info[info.index("last-generated-id") + 1] == "20-0"
    assert info[info.index("entries-added") + 1] == 7
    assert info[info.index("max-deleted-entry-id") + 1] == "3-0"
    assert x(r, "XADD", "s", "*", "f", "v") != "20-0"


def test_wrongtype_expiry_and_type(r):
    r.set("str", "v")
    x(r, "XADD", "s", "1-0", "f", "v")
    assert r.type("s") == "stream"
    for args in [("XADD", "str", "*", "f", "v"), ("XLEN", "str"), ("XRANGE", "str", "-", "+"),
                 ("XDEL", "str", "1-0"), ("XTRIM", "str", "MAXLEN", "0"),
                 ("XREAD", "STREAMS", "str", "0"), ("XGROUP", "CREATE", "str", "g", "0"),
                 ("XINFO", "STREAM", "str"), ("XACK", "str", "g", "1-0"),
                 ("XPENDING", "str", "g"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
                 ("XAUTOCLAIM", "str", "g", "c", "0", "0"), ("XCLAIM", "str", "g", "c", "0", "1-0")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == WRONGTYPE, args
    for args in [("LPUSH", "s", "a"), ("GET", "s"), ("SADD", "s", "a"), ("HSET", "s", "a", "b")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == WRONGTYPE, args
    r.expire("s", 100)
    x(r, "XADD", "s", "2-0", "f", "v")
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    assert 0 < r.ttl("s") <= 100
    r.pexpire("s", 50)
    time.sleep(0.2)
    assert r.exists("s") == 0
    r.set("s", "plain")  # SET overwrites a stream
    assert r.get("s") == "plain"


# --- consumer groups ---

def test_xgroup_subcommands_and_errors(r):
    x(r, "XADD", "s", "1-1", "a", "1")
    x(r, "XADD", "s", "2-1", "a", "2")
    assert x(r, "XGROUP", "CREATE", "s", "g", "$") == "OK"
    assert x(r, "XINFO", "GROUPS", "s") == [["name", "g", "consumers", 0, "pending", 0,
                                             "last-delivered-id", "2-1", "entries-read", None,
                                             "lag", 0]]
    assert x(r, "XGROUP", "CREATE", "m", "g", "0", "MKSTREAM") == "OK"
    assert r.type("m") == "stream" and r.xlen("m") == 0
    assert x(r, "XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "1") == "OK"
    errors(r, [
        (("XGROUP", "CREATE", "s", "g", "$"), "BUSYGROUP Consumer Group name already exists"),
        (("XGROUP", "CREATE", "nokey", "g", "$"),
         "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
         "use the MKSTREAM option to create an empty stream automatically."),
        (("XGROUP", "SETID", "s", "nog", "$"), "NOGROUP No such consumer group 'nog' for key name 's'"),
        (("XGROUP", "DESTROY", "nokey", "g"),
         "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
         "use the MKSTREAM option to create an empty stream automatically."),
        (("XGROUP", "DELCONSUMER", "nokey", "g", "c"),
         "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
         "use the MKSTREAM option to create an empty stream automatically."),
        (("XGROUP", "CREATECONSUMER", "s", "nog", "c"),
         "NOGROUP No such consumer group 'nog' for key name 's'"),
        (("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "-2"),
         "value for ENTRIESREAD must be positive or -1"),
        (("XGROUP", "create", "s", "g3", "0", "foo"),
         "unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP."),
        (("XGROUP", "CREATE", "s", "g3", "bad"), BAD_ID),
        (("XGROUP", "foo", "s", "g"), "unknown subcommand 'foo'. Try XGROUP HELP."),
        (("XGROUP", "DESTROY", "s"), "wrong number of arguments for 'xgroup|destroy' command"),
        (("XGROUP",), "wrong number of arguments for 'xgroup' command"),
    ])
    assert x(r, "XGROUP", "CREATECONSUMER", "s", "g", "c9") == 1
    assert x(r, "XGROUP", "CREATECONSUMER", "s", "g", "c9") == 0
    assert x(r, "XGROUP", "DELCONSUMER", "s", "g", "zz") == 0
    assert x(r, "XGROUP", "SETID", "s", "g", "0") == "OK"
    x(r, "XREADGROUP", "GROUP", "g", "c9", "STREAMS", "s", ">")
    assert x(r, "XGROUP", "DELCONSUMER", "s", "g", "c9") == 2
    assert x(r, "XPENDING", "s", "g")["pending"] == 0
    assert x(r, "XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "2") == "OK"
    groups = x(r, "XINFO", "GROUPS", "s")
    assert [g[1] for g in groups] == ["g", "g2"]
    assert groups[0][groups[0].index("entries-read") + 1] == 2
    assert x(r, "XGROUP", "DESTROY", "s", "g") == 1
    assert x(r, "XGROUP", "DESTROY", "s", "g") == 0
    help_lines = x(r, "XGROUP", "HELP")
    assert help_lines[0].startswith("XGROUP <subcommand>") and len(help_lines) == 17


def test_readgroup_pending_ack_flow(r, raw):
    c = raw()
    for i in range(1, 6):
        x(r, "XADD", "s", f"{i}-0", "f", str(i))
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    assert x(r, "XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">") == [
        ["s", [("1-0", {"f": "1"}), ("2-0", {"f": "2"})]]]
    assert x(r, "XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") == [
        ["s", [("3-0", {"f": "3"}), ("4-0", {"f": "4"}), ("5-0", {"f": "5"})]]]
    assert c.cmd("XREADGROUP", "GROUP", "g", "bob", "BLOCK", "10", "STREAMS", "s", ">") is None
    # History: the consumer's own pending entries.
    assert x(r, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0") == [
        ["s", [("1-0", {"f": "1"}), ("2-0", {"f": "2"})]]]
    assert x(r, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "1-0") == [
        ["s", [("2-0", {"f": "2"})]]]
    summary = x(r, "XPENDING", "s", "g")
    assert summary == {"pending": 5, "min": "1-0", "max": "5-0",
                       "consumers": [{"name": "alice", "pending": 2},
                                     {"name": "bob", "pending": 3}]}
    assert x(r, "XACK", "s", "g", "1-0", "3-0", "9-0") == 2
    assert x(r, "XACK", "s", "nog", "bad") == 0
    errors(r, [(("XACK", "s", "g", "2-0", "bad"), BAD_ID)])
    assert x(r, "XPENDING", "s", "g")["pending"] == 3
    detail = r.xpending_range("s", "g", "-", "+", 10)
    assert [(d["message_id"], d["consumer"], d["times_delivered"]) for d in detail] == [
        ("2-0", "alice", 3), ("4-0", "bob", 1), ("5-0", "bob", 1)]
    assert [d["message_id"] for d in r.xpending_range("s", "g", "(2-0", "+", 1)] == ["4-0"]
    assert [d["message_id"] for d in r.xpending_range("s", "g", "-", "+", 10, "bob")] == [
        "4-0", "5-0"]
    assert r.xpending_range("s", "g", "-", "+", 10, "nobody") == []
    assert r.xpending_range("s", "g", "-", "+", 10, idle=100000) == []
    errors(r, [
        (("XPENDING", "s", "g", "-", "+"), "syntax error"),
        (("XPENDING", "s", "g", "IDLE", "1", "-", "+"), "syntax error"),
        (("XPENDING", "s", "g", "-", "+", "x"), "value is not an integer or out of range"),
        (("XPENDING", "s", "nog"), "NOGROUP No such key 's' or consumer group 'nog'"),
        (("XPENDING", "nokey", "g"), "NOGROUP No such key 'nokey' or consumer group 'g'"),
    ])
    # NOACK: delivered, not pending.
    x(r, "XADD", "s", "6-0", "f", "6")
    assert x(r, "XREADGROUP", "GROUP", "g", "carol", "NOACK", "STREAMS", "s", ">") == [
        ["s", [("6-0", {"f": "6"})]]]
    assert x(r, "XPENDING", "s", "g")["pending"] == 3
    consumers = x(r, "XINFO", "CONSUMERS", "s", "g")
    assert [(c[1], c[3]) for c in consumers] == [("alice", 1), ("bob", 2), ("carol", 0)]
    # A deleted pending entry comes back in the history as an id with a nil body.
    x(r, "XDEL", "s", "2-0")
    assert c.cmd("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0") == [
        [b"s", [[b"2-0", None]]]]


def test_xreadgroup_errors(r):
    x(r, "XADD", "s", "1-0", "f", "v")
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    errors(r, [
        (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
         "The $ ID is meaningless in the context of XREADGROUP: you want to read the history of "
         "this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID "
         "would just return an empty result set."),
        (("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", "0"),
         "NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option"),
        (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", "0"),
         "NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option"),
        (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"),
         "wrong number of arguments for 'xreadgroup' command"),
        (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "s", ">"),
         "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."),
        (("XREADGROUP", "COUNT", "1", "STREAMS", "s", "t", ">", ">"), "Missing GROUP option for XREADGROUP"),
        (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "bad"), BAD_ID),
        (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
         "timeout is negative"),
    ])


def test_xclaim(r, raw):
    c = raw()
    for i in range(1, 5):
        x(r, "XADD", "s", f"{i}-0", "f", str(i))
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    x(r, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    # Not idle enough: nothing claimed, and the claiming consumer is not created.
    assert x(r, "XCLAIM", "s", "g", "c2", "3600000", "1-0") == []
    assert [c[1] for c in x(r, "XINFO", "CONSUMERS", "s", "g")] == ["c1"]
    assert x(r, "XCLAIM", "s", "g", "c2", "0", "1-0", "9-0") == [("1-0", {"f": "1"})]
    assert c.cmd("XCLAIM", "s", "g", "c2", "0", "2-0", "JUSTID") == [b"2-0"]
    detail = {d["message_id"]: d for d in r.xpending_range("s", "g", "-", "+", 10)}
    assert detail["1-0"]["consumer"] == "c2" and detail["1-0"]["times_delivered"] == 2
    assert detail["2-0"]["times_delivered"] == 1  # JUSTID does not count a delivery
    assert c.cmd("XCLAIM", "s", "g", "c3", "0", "3-0", "RETRYCOUNT", "7", "IDLE", "5000",
                 "JUSTID") == [b"3-0"]
    d = r.xpending_range("s", "g", "3-0", "3-0", 1)[0]
    assert d["times_delivered"] == 7 and d["time_since_delivered"] >= 5000
    # FORCE creates a pending entry for an entry nobody was given.
    x(r, "XADD", "s", "5-0", "f", "5")
    assert c.cmd("XCLAIM", "s", "g", "c3", "0", "5-0", "JUSTID") == []
    assert c.cmd("XCLAIM", "s", "g", "c3", "0", "5-0", "FORCE", "JUSTID", "LASTID", "5-0") == [
        b"5-0"]
    assert x(r, "XINFO", "GROUPS", "s")[0][7] == "5-0"
    # A pending entry whose stream entry is gone is dropped, not claimed.
    x(r, "XDEL", "s", "4-0")
    assert x(r, "XCLAIM", "s", "g", "c3", "0", "4-0") == []
    assert "4-0" not in [d["message_id"] for d in r.xpending_range("s", "g", "-", "+", 10)]
    errors(r, [
        (("XCLAIM", "s", "g", "c", "x", "1-0"), "Invalid min-idle-time argument for XCLAIM"),
        (("XCLAIM", "nokey", "g", "c", "x", "1-0"), "NOGROUP No such key 'nokey' or consumer group 'g'"),
        (("XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "x"),
         "Invalid IDLE option argument for XCLAIM"),
        (("XCLAIM", "s", "g", "c", "0", "1-0", "TIME", "x"),
         "Invalid TIME option argument for XCLAIM"),
        (("XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "x"),
         "Invalid RETRYCOUNT option argument for XCLAIM"),
        (("XCLAIM", "s", "g", "c", "0", "1-0", "bad"), "Unrecognized XCLAIM option 'bad'"),
    ])


def test_xautoclaim(r, raw):
    c = raw()
    for i in range(1, 6):
        x(r, "XADD", "s", f"{i}-0", "f", str(i))
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    x(r, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    x(r, "XDEL", "s", "2-0")
    assert c.cmd("XAUTOCLAIM", "s", "g", "c2", "0", "0", "COUNT", "1") == [
        b"2-0", [[b"1-0", [b"f", b"1"]]], []]
    assert c.cmd("XAUTOCLAIM", "s", "g", "c2", "0", "2-0", "JUSTID") == [
        b"0-0", [b"3-0", b"4-0", b"5-0"], [b"2-0"]]
    assert c.cmd("XAUTOCLAIM", "s", "g", "c3", "3600000", "0") == [b"0-0", [], []]
    assert x(r, "XPENDING", "s", "g")["consumers"] == [{"name": "c2", "pending": 4}]
    assert c.cmd("XAUTOCLAIM", "s", "g", "c3", "0", "(3-0", "COUNT", "1", "JUSTID") == [
        b"5-0", [b"4-0"], []]
    errors(r, [
        (("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"), "COUNT must be > 0"),
        (("XAUTOCLAIM", "s", "g", "c", "x", "0"), "Invalid min-idle-time argument for XAUTOCLAIM"),
        (("XAUTOCLAIM", "s", "g", "c", "0", "0", "foo"), "syntax error"),
        (("XAUTOCLAIM", "s", "nog", "c", "0", "0"), "NOGROUP No such key 's' or consumer group 'nog'"),
        (("XAUTOCLAIM", "s", "g", "c", "0", "bad"), BAD_ID),
    ])


def test_lag_and_entries_read(r):
    for i in range(1, 6):
        x(r, "XADD", "s", f"{i}-0", "f", "v")
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    x(r, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">")
    x(r, "XDEL", "s", "4-0")
    g = x(r, "XINFO", "GROUPS", "s")[0]
    assert g[g.index("entries-read") + 1] == 2 and g[g.index("lag") + 1] is None
    x(r, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    g = x(r, "XINFO", "GROUPS", "s")[0]
    assert g[g.index("entries-read") + 1] == 5 and g[g.index("lag") + 1] == 0
    x(r, "XADD", "s", "6-0", "f", "v")
    g = x(r, "XINFO", "GROUPS", "s")[0]
    assert g[g.index("lag") + 1] == 1


# --- XINFO ---

def test_xinfo(r):
    errors(r, [
        (("XINFO", "STREAM", "nokey"), "no such key"),
        (("XINFO", "GROUPS", "nokey"), "no such key"),
        (("XINFO", "CONSUMERS", "nokey", "g"), "no such key"),
        (("XINFO", "foo"), "unknown subcommand 'foo'. Try XINFO HELP."),
        (("XINFO", "STREAM"), "wrong number of arguments for 'xinfo|stream' command"),
    ])
    x(r, "XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    info = x(r, "XINFO", "STREAM", "e")
    assert info[::2] == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                         "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                         "groups", "first-entry", "last-entry"]
    assert info[1] == 0 and info[-1] is None and info[-3] is None and info[15] == 1
    errors(r, [
        (("XINFO", "CONSUMERS", "e", "nog"), "NOGROUP No such consumer group 'nog' for key name 'e'"),
        (("XINFO", "stream", "e", "foo"),
         "unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP."),
        (("XINFO", "stream", "e", "FULL", "COUNT"),
         "unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP."),
        (("XINFO", "STREAM", "e", "FULL", "COUNT", "x"), "value is not an integer or out of range"),
    ])
    for i in range(1, 16):
        x(r, "XADD", "s", f"{i}-0", "f", str(i))
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    x(r, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">")
    info = x(r, "XINFO", "STREAM", "s")
    assert info[1] == 15 and info[info.index("first-entry") + 1] == ["1-0", ["f", "1"]]
    assert info[info.index("last-entry") + 1] == ["15-0", ["f", "15"]]
    full = x(r, "XINFO", "STREAM", "s", "FULL")
    assert full[::2] == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                         "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                         "entries", "groups"]
    assert len(full[15]) == 10
    group = full[17][0]
    assert group[::2] == ["name", "last-delivered-id", "entries-read", "lag", "pel-count",
                          "pending", "consumers"]
    assert group[1] == "g" and group[3] == "3-0" and group[5] == 3 and group[7] == 12
    assert [p[0] for p in group[11]] == ["1-0", "2-0", "3-0"] and group[11][0][1] == "c1"
    consumer = group[13][0]
    assert consumer[::2] == ["name", "seen-time", "pel-count", "pending"]
    assert consumer[5] == 3 and [p[0] for p in consumer[7]] == ["1-0", "2-0", "3-0"]
    assert len(x(r, "XINFO", "STREAM", "s", "FULL", "COUNT", "0")[15]) == 15
    assert len(x(r, "XINFO", "STREAM", "s", "FULL", "COUNT", "2")[15]) == 2
    consumers = x(r, "XINFO", "CONSUMERS", "s", "g")
    assert consumers[0][::2] == ["name", "pending", "idle"]
    assert x(r, "XINFO", "HELP")[0].startswith("XINFO <subcommand>")


def test_resp3_maps(server):
    c = server.raw()
    assert c.cmd("HELLO", "3")[b"proto"] == 3
    c.cmd("DEL", "s")
    c.cmd("XADD", "s", "1-0", "f", "v")
    assert c.cmd("XREAD", "STREAMS", "s", "0") == {b"s": [[b"1-0", [b"f", b"v"]]]}
    info = c.cmd("XINFO", "STREAM", "s")
    assert isinstance(info, dict) and info[b"length"] == 1
    c.cmd("XGROUP", "CREATE", "s", "g", "0")
    assert c.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == {
        b"s": [[b"1-0", [b"f", b"v"]]]}
    assert isinstance(c.cmd("XINFO", "GROUPS", "s")[0], dict)
    assert isinstance(c.cmd("XINFO", "CONSUMERS", "s", "g")[0], dict)
    assert c.cmd("XREAD", "STREAMS", "s", "1-0") is None
    c.close()


# --- XREAD ---

def test_xread(r, raw):
    c = raw()
    for i in range(1, 4):
        x(r, "XADD", "a", f"{i}-0", "f", str(i))
    x(r, "XADD", "b", "5-0", "g", "x")
    assert x(r, "XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0") == [
        ["a", [("1-0", {"f": "1"}), ("2-0", {"f": "2"})]], ["b", [("5-0", {"g": "x"})]]]
    assert x(r, "XREAD", "STREAMS", "a", "b", "2-0", "5-0") == [["a", [("3-0", {"f": "3"})]]]
    assert x(r, "XREAD", "COUNT", "0", "STREAMS", "a", "0")[0][1][2][0] == "3-0"
    assert c.cmd("XREAD", "STREAMS", "a", "$") is None
    assert c.cmd("XREAD", "STREAMS", "nokey", "0") is None
    assert c.cmd("XREAD", "BLOCK", "50", "STREAMS", "a", "$") is None
    errors(r, [
        (("XREAD", "STREAMS", "a", ">"),
         "The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
         "<consumer> option."),
        (("XREAD", "STREAMS", "a", "b", "0"),
         "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."),
        (("XREAD", "STREAMS", "a"), "wrong number of arguments for 'xread' command"),
        (("XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"),
         "The GROUP option is only supported by XREADGROUP. You called XREAD instead."),
        (("XREAD", "NOACK", "STREAMS", "a", "0"),
         "The NOACK option is only supported by XREADGROUP. You called XREAD instead."),
        (("XREAD", "BLOCK", "-1", "STREAMS", "a", "0"), "timeout is negative"),
        (("XREAD", "BLOCK", "x", "STREAMS", "a", "0"), "timeout is not an integer or out of range"),
        (("XREAD", "COUNT", "x", "STREAMS", "a", "0"), "value is not an integer or out of range"),
        (("XREAD", "FOO", "STREAMS", "a", "0"), "syntax error"),
        (("XREAD", "STREAMS", "a", "bad"), BAD_ID),
    ])


def test_blocking_inside_multi_does_not_block(raw):
    c = raw()
    c.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert c.cmd("MULTI") == "OK"
    c.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    c.cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    assert c.cmd("EXEC") == [None, None]


def test_xread_block_woken_by_xadd_on_another_worker(mserver):
    for key, writer, b in waiters_across_workers(mserver, "xs", n_writers=3):
        b.send_command("XREAD", "BLOCK", "5000", "STREAMS", "nothing", key, "$", "$")
        time.sleep(0.03)
        entry_id = writer.xadd(key, {"f": "v"})
        assert b.reply() == [[key.encode(), [[entry_id.encode(), [b"f", b"v"]]]]]


def test_every_blocked_reader_gets_the_entry(mserver):
    c = mserver.client()
    readers = [mserver.raw() for _ in range(4)]
    for b in readers:
        b.send_command("XREAD", "BLOCK", "0", "STREAMS", "fan", "$")
    time.sleep(0.1)
    entry_id = c.xadd("fan", {"n": "1"})
    for b in readers:
        assert b.reply() == [[b"fan", [[entry_id.encode(), [b"n", b"1"]]]]]


def test_xreadgroup_block_each_entry_to_one_consumer(mserver):
    c = mserver.client()
    key = spread_keys(2, "gq")[1]
    c.execute_command("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    readers = [mserver.raw() for _ in range(3)]
    for i, b in enumerate(readers):
        b.send_command("XREADGROUP", "GROUP", "g", f"c{i}", "BLOCK", "5000", "COUNT", "1",
                       "STREAMS", key, ">")
    time.sleep(0.1)
    ids = [c.xadd(key, {"n": str(i)}) for i in range(3)]
    got = []
    for b in readers:
        reply = b.reply()
        assert reply[0][0] == key.encode() and len(reply[0][1]) == 1
        got.append(reply[0][1][0][0].decode())
    assert sorted(got) == sorted(ids)
    assert c.execute_command("XPENDING", key, "g")["pending"] == 3


def test_block_timeout_and_disconnect(mserver):
    c = mserver.client()
    b = mserver.raw()
    start = time.time()
    assert b.cmd("XREAD", "BLOCK", "200", "STREAMS", "tk", "$") is None
    assert 0.15 < time.time() - start < 3
    gone = mserver.raw()
    gone.send_command("XREAD", "BLOCK", "0", "STREAMS", "dk", "$")
    time.sleep(0.05)
    assert c.info("clients")["blocked_clients"] == 1
    gone.close()
    time.sleep(0.5)
    assert c.info("clients")["blocked_clients"] == 0
    c.xadd("dk", {"f": "v"})


def test_concurrent_producers_and_group_consumers(mserver):
    key = "work"
    c = mserver.client()
    c.execute_command("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    n_items, got, lock = 200, [], threading.Lock()
    stop = threading.Event()

    def consume(name):
        cl = mserver.client()
        while not stop.is_set():
            reply = cl.execute_command("XREADGROUP", "GROUP", "g", name, "COUNT", "10", "BLOCK",
                                       "100", "STREAMS", key, ">")
            if not reply:
                continue
            for entry_id, fields in reply[0][1]:
                cl.execute_command("XACK", key, "g", entry_id)
                with lock:
                    got.append(fields["n"])

    threads = [threading.Thread(target=consume, args=(f"c{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    producers = [mserver.client() for _ in range(2)]
    for i in range(n_items):
        producers[i % 2].xadd(key, {"n": str(i)})
    deadline = time.time() + 10
    while time.time() < deadline and len(got) < n_items:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    assert sorted(got, key=int) == [str(i) for i in range(n_items)]
    assert c.execute_command("XPENDING", key, "g")["pending"] == 0


def test_large_stream(r):
    # One record per stream: every XADD rewrites it (doc/collections.md), so this builds a
    # stream of the size the layout handles comfortably and reads it back in pieces.
    n = 10000
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.execute_command("XADD", "big", f"{i + 1}-0", "field", f"value-{i}")
    p.execute()
    assert r.xlen("big") == n
    assert r.xrange("big", "7500", "7502") == [(f"{i}-0", {"field": f"value-{i - 1}"})
                                              for i in (7500, 7501, 7502)]
    assert r.xrevrange("big", "+", "-", count=1) == [(f"{n}-0", {"field": f"value-{n - 1}"})]
    assert x(r, "XTRIM", "big", "MAXLEN", "~", "1000") == 9000
    assert r.xlen("big") == 1000


@pytest.mark.lavik_only
@pytest.mark.parametrize("checkpoint", [False, True], ids=["replay", "checkpoint"])
def test_streams_and_groups_survive_restart(spawn_server, tmp_path, checkpoint):
    extra = ["--shutdown-checkpoint"] if checkpoint else []
    s = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c = s.client()
    for i in range(1, 101):
        c.xadd("s", {"f": str(i)}, id=f"{i}-0")
    c.execute_command("XDEL", "s", "50-0")
    c.execute_command("XGROUP", "CREATE", "s", "g", "0")
    c.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">")
    c.execute_command("XACK", "s", "g", "2-0")
    c.execute_command("XGROUP", "CREATE", "empty", "g2", "$", "MKSTREAM")
    c.expire("s", 1000)
    before = c.execute_command("XINFO", "STREAM", "s", "FULL")
    assert s.terminate() == 0
    s2 = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c2 = s2.client()
    assert c2.xlen("s") == 99
    assert c2.execute_command("XINFO", "STREAM", "s", "FULL") == before
    assert c2.execute_command("XPENDING", "s", "g")["pending"] == 2
    assert c2.type("empty") == "stream" and c2.xlen("empty") == 0
    assert 0 < c2.ttl("s") <= 1000


def test_acl_key_patterns_cover_xread_keys(server, raw):
    admin = raw()
    admin.cmd("XADD", "ok", "1-0", "f", "v")
    admin.cmd("XADD", "secret", "1-0", "f", "v")
    admin.cmd("XGROUP", "CREATE", "ok", "g", "0")
    assert admin.cmd("ACL", "SETUSER", "streamer", "on", ">pw", "+@all", "~ok*") == "OK"
    try:
        c = raw()
        assert c.cmd("AUTH", "streamer", "pw") == "OK"
        assert c.cmd("XREAD", "COUNT", "1", "STREAMS", "ok", "0") == [
            [b"ok", [[b"1-0", [b"f", b"v"]]]]]
        noperm = "NOPERM this user has no permissions to access one of the keys used as arguments"
        assert c.cmd("XREAD", "STREAMS", "ok", "secret", "0", "0").text == noperm
        assert c.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "secret", ">").text == noperm
        assert c.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ok", ">")[0][0] == b"ok"
    finally:
        admin.cmd("ACL", "DELUSER", "streamer")


def test_blocked_xreadgroup_fails_when_its_group_is_destroyed(mserver):
    c = mserver.client()
    key = spread_keys(2, "gd")[1]
    c.execute_command("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    b = mserver.raw()
    b.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", key, ">")
    time.sleep(0.1)
    assert c.execute_command("XGROUP", "DESTROY", key, "g") == 1
    assert b.reply().text == (
        "NOGROUP the consumer group this client was blocked on no longer exists")


def test_blocked_xreadgroup_fails_when_its_stream_is_deleted(mserver):
    c = mserver.client()
    key = spread_keys(2, "sd")[1]
    c.execute_command("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    b = mserver.raw()
    b.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", key, ">")
    reader = mserver.raw()
    reader.send_command("XREAD", "BLOCK", "0", "STREAMS", key, "$")
    time.sleep(0.1)
    assert c.delete(key) == 1
    assert b.reply().text == "UNBLOCKED the stream key no longer exists"
    # A plain XREAD keeps waiting, and gets the entry of the recreated stream.
    entry_id = c.xadd(key, {"f": "v"})
    assert reader.reply() == [[key.encode(), [[entry_id.encode(), [b"f", b"v"]]]]]
