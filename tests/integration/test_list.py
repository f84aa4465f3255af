"""LIST commands through redis-py and raw RESP, checked against Redis 7.0 behaviour (replies,
error texts, RESP2/RESP3 nil rules, empty-list deletion, WRONGTYPE, expiry kept), LMOVE and LMPOP
across 1, 2 and 4 worker threads."""

import time

import pytest
import redis

from conftest import (WRONGTYPE, consume_while_producing, err, spread_keys,
                      waiter_after_a_disconnected_one, waiters_across_workers)



def test_push_pop_len_range(r):
    assert r.lpush("l", "a", "b", "c") == 3
    assert r.lrange("l", 0, -1) == ["c", "b", "a"]
    assert r.rpush("l", "x", "y") == 5
    assert r.lrange("l", 0, -1) == ["c", "b", "a", "x", "y"]
    assert r.llen("l") == 5
    assert r.llen("nokey") == 0
    assert r.lrange("l", 1, 2) == ["b", "a"]
    assert r.lrange("l", -2, 100) == ["x", "y"]
    assert r.lrange("l", -100, 0) == ["c"]
    assert r.lrange("l", 3, 1) == []
    assert r.lrange("l", 10, 20) == []
    assert r.lrange("nokey", 0, -1) == []
    assert r.lpop("l") == "c"
    assert r.rpop("l") == "y"
    assert r.lpop("l", 2) == ["b", "a"]
    assert r.rpop("l", 5) == ["x"]
    assert r.exists("l") == 0
    assert r.lpop("l") is None
    assert r.rpop("l", 2) is None
    assert r.lpushx("l", "a") == 0
    assert r.rpushx("l", "a") == 0
    assert r.exists("l") == 0
    r.rpush("l", "m")
    assert r.lpushx("l", "a", "b") == 3
    assert r.rpushx("l", "z") == 4
    assert r.lrange("l", 0, -1) == ["b", "a", "m", "z"]


def test_pop_count_rules_resp2_and_resp3(r, raw):
    r.rpush("l", "a", "b")
    c = raw()
    c.send_command("LPOP", "l", "0")
    assert c.reply_bytes() == b"*0\r\n"
    c.send_command("LPOP", "nokey", "0")
    assert c.reply_bytes() == b"*-1\r\n"
    c.send_command("LPOP", "nokey", "2")
    assert c.reply_bytes() == b"*-1\r\n"
    c.send_command("RPOP", "nokey")
    assert c.reply_bytes() == b"$-1\r\n"
    c.send_command("LPOP", "l", "-1")
    assert c.reply_bytes() == b"-ERR value is out of range, must be positive\r\n"
    c.send_command("LPOP", "l", "1", "2")
    assert c.reply_bytes() == b"-ERR wrong number of arguments for 'lpop' command\r\n"
    c.cmd("HELLO", "3")
    c.send_command("LPOP", "nokey", "2")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("LPOP", "nokey")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("RPOP", "l", "1")
    assert c.reply_bytes() == b"*1\r\n$1\r\nb\r\n"


def test_lindex_lset(r):
    r.rpush("l", "a", "b", "c")
    assert r.lindex("l", 0) == "a"
    assert r.lindex("l", -1) == "c"
    assert r.lindex("l", 3) is None
    assert r.lindex("l", -4) is None
    assert r.lindex("nokey", 0) is None
    with pytest.raises(redis.ResponseError) as e:
        r.lindex("l", "x")
    assert err(e) == "value is not an integer or out of range"
    assert r.lset("l", 1, "B") is True
    assert r.lset("l", -1, "C") is True
    assert r.lrange("l", 0, -1) == ["a", "B", "C"]
    with pytest.raises(redis.ResponseError) as e:
        r.lset("l", 3, "x")
    assert err(e) == "index out of range"
    with pytest.raises(redis.ResponseError) as e:
        r.lset("nokey", 0, "x")
    assert err(e) == "no such key"


def test_linsert_lrem_ltrim(r):
    r.rpush("l", "a", "b", "a", "c", "a")
    assert r.linsert("l", "before", "b", "X") == 6
    assert r.linsert("l", "AFTER", "c", "Y") == 7
    assert r.lrange("l", 0, -1) == ["a", "X", "b", "a", "c", "Y", "a"]
    assert r.linsert("l", "before", "zz", "Q") == -1
    assert r.linsert("nokey", "before", "a", "Q") == 0
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("LINSERT", "l", "middle", "a", "b")
    assert err(e) == "syntax error"
    assert r.lrem("l", -1, "a") == 1
    assert r.lrange("l", 0, -1) == ["a", "X", "b", "a", "c", "Y"]
    assert r.lrem("l", 1, "a") == 1
    assert r.lrange("l", 0, -1) == ["X", "b", "a", "c", "Y"]
    r.rpush("l", "a", "a")
    assert r.lrem("l", 0, "a") == 3
    assert r.lrem("l", 0, "nothing") == 0
    assert r.lrem("nokey", 0, "a") == 0
    assert r.ltrim("l", 1, -2) is True
    assert r.lrange("l", 0, -1) == ["b", "c"]
    assert r.ltrim("l", 5, 10) is True
    assert r.exists("l") == 0
    assert r.ltrim("nokey", 0, 1) is True
    with pytest.raises(redis.ResponseError) as e:
        r.ltrim("l", "a", 1)
    assert err(e) == "value is not an integer or out of range"
    r.rpush("l", "x")
    assert r.lrem("l", 1, "x") == 1
    assert r.exists("l") == 0


def test_lpos(r):
    r.rpush("l", "a", "b", "c", "1", "2", "3", "c", "c")
    assert r.lpos("l", "c") == 2
    assert r.lpos("l", "c", rank=2) == 6
    assert r.lpos("l", "c", rank=-1) == 7
    assert r.lpos("l", "c", rank=-2) == 6
    assert r.lpos("l", "c", count=2) == [2, 6]
    assert r.lpos("l", "c", count=0) == [2, 6, 7]
    assert r.lpos("l", "c", rank=-1, count=2) == [7, 6]
    assert r.lpos("l", "c", count=0, maxlen=7) == [2, 6]
    assert r.lpos("l", "c", rank=-1, count=0, maxlen=1) == [7]
    assert r.lpos("l", "zz") is None
    assert r.lpos("l", "zz", count=1) == []
    assert r.lpos("nokey", "a") is None
    assert r.lpos("nokey", "a", count=0) == []
    for args, text in [
            (("RANK", "0"), "RANK can't be zero: use 1 to start from the first match, 2 from "
             "the second ... or use negative to start from the end of the list"),
            (("COUNT", "-1"), "COUNT can't be negative"),
            (("MAXLEN", "-1"), "MAXLEN can't be negative"),
            (("RANK",), "syntax error"),
            (("FOO", "1"), "syntax error"),
            (("RANK", "x"), "value is not an integer or out of range")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("LPOS", "l", "a", *args)
        assert err(e) == text


def test_lmove_rpoplpush(r):
    r.rpush("src", "a", "b", "c")
    assert r.lmove("src", "dst", "LEFT", "RIGHT") == "a"
    assert r.lmove("src", "dst", "RIGHT", "LEFT") == "c"
    assert r.lrange("dst", 0, -1) == ["c", "a"]
    assert r.rpoplpush("src", "dst") == "b"
    assert r.exists("src") == 0
    assert r.lrange("dst", 0, -1) == ["b", "c", "a"]
    assert r.lmove("src", "dst", "LEFT", "LEFT") is None
    assert r.rpoplpush("nokey", "dst") is None
    assert r.lmove("dst", "dst", "LEFT", "RIGHT") == "b"
    assert r.lrange("dst", 0, -1) == ["c", "a", "b"]
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("LMOVE", "dst", "x", "UP", "LEFT")
    assert err(e) == "syntax error"
    r.set("str", "v")
    with pytest.raises(redis.ResponseError) as e:
        r.lmove("dst", "str", "LEFT", "LEFT")
    assert err(e) == WRONGTYPE
    assert r.lrange("dst", 0, -1) == ["c", "a", "b"]
    with pytest.raises(redis.ResponseError) as e:
        r.rpoplpush("str", "dst")
    assert err(e) == WRONGTYPE
    assert r.rpoplpush("nokey", "str") is None  # a missing source answers before any type check


def test_lmpop(r, raw):
    r.rpush("b", "1", "2", "3")
    assert r.execute_command("LMPOP", 2, "a", "b", "LEFT") == ["b", ["1"]]
    assert r.execute_command("LMPOP", 2, "a", "b", "RIGHT", "COUNT", 5) == ["b", ["3", "2"]]
    assert r.exists("b") == 0
    assert r.execute_command("LMPOP", 2, "a", "b", "LEFT") is None
    for args, text in [
            ((0, "a", "LEFT"), "numkeys should be greater than 0"),
            (("x", "a", "LEFT"), "numkeys should be greater than 0"),
            ((2, "a", "LEFT"), "syntax error"),
            ((1, "a", "MIDDLE"), "syntax error"),
            ((1, "a", "LEFT", "COUNT", 0), "count should be greater than 0"),
            ((1, "a", "LEFT", "COUNT", 1, "COUNT", 2), "syntax error"),
            ((1, "a", "LEFT", "FOO"), "syntax error")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("LMPOP", *args)
        assert err(e) == text
    r.set("s", "x")
    r.rpush("c", "v")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("LMPOP", 3, "a", "s", "c", "LEFT")
    assert err(e) == WRONGTYPE
    assert r.execute_command("LMPOP", 3, "a", "c", "s", "LEFT") == ["c", ["v"]]
    c = raw()
    c.send_command("LMPOP", "1", "a", "LEFT")
    assert c.reply_bytes() == b"*-1\r\n"
    c.cmd("HELLO", "3")
    c.send_command("LMPOP", "1", "a", "LEFT")
    assert c.reply_bytes() == b"_\r\n"


def test_wrongtype_and_ttl_kept(r):
    r.set("s", "x")
    for cmd in (("LPUSH", "s", "a"), ("RPUSH", "s", "a"), ("LPUSHX", "s", "a"), ("LPOP", "s"),
                ("RPOP", "s", "1"), ("LLEN", "s"), ("LRANGE", "s", 0, 1), ("LINDEX", "s", 0),
                ("LSET", "s", 0, "a"), ("LINSERT", "s", "BEFORE", "a", "b"),
                ("LREM", "s", 0, "a"), ("LTRIM", "s", 0, 1), ("LPOS", "s", "a")):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*cmd)
        assert err(e) == WRONGTYPE, cmd
    r.rpush("l", "a", "b")
    with pytest.raises(redis.ResponseError) as e:
        r.get("l")
    assert err(e) == WRONGTYPE
    assert r.type("l") == "list"
    r.expire("l", 100)
    r.rpush("l", "c")
    r.lset("l", 0, "A")
    assert 0 < r.ttl("l") <= 100
    assert r.lrange("l", 0, -1) == ["A", "b", "c"]


def test_binary_and_large_elements(rb):
    big = bytes(range(256)) * 400
    rb.rpush("l", b"", big, b"\r\n\x00")
    assert rb.lrange("l", 0, -1) == [b"", big, b"\r\n\x00"]
    rb.rpush("many", *[str(i).encode() for i in range(5000)])
    assert rb.llen("many") == 5000
    assert rb.lindex("many", 4321) == b"4321"
    assert rb.lrange("many", -3, -1) == [b"4997", b"4998", b"4999"]


def test_lmove_and_lmpop_across_workers(mr):
    a, b, c, d = spread_keys(4, "lk")
    mr.rpush(a, *[str(i) for i in range(100)])
    for i in range(100):
        assert mr.lmove(a, b if i % 2 else c, "LEFT", "RIGHT") == str(i)
    assert mr.exists(a) == 0
    assert mr.lrange(b, 0, -1) == [str(i) for i in range(1, 100, 2)]
    assert mr.lrange(c, 0, -1) == [str(i) for i in range(0, 100, 2)]
    assert mr.rpoplpush(b, d) == "99"
    assert mr.execute_command("LMPOP", 3, a, d, b, "LEFT", "COUNT", 2) == [d, ["99"]]
    assert mr.execute_command("LMPOP", 2, a, b, "RIGHT", "COUNT", 2) == [b, ["97", "95"]]
    mr.set(d, "x")
    with pytest.raises(redis.ResponseError) as e:
        mr.lmove(c, d, "LEFT", "LEFT")
    assert err(e) == WRONGTYPE
    assert mr.llen(c) == 50


# --- Blocking commands ---

def test_blocking_argument_errors(r, raw):
    for args, text in [
            (("BLPOP", "k", "-1"), "timeout is negative"),
            (("BLPOP", "k", "abc"), "timeout is not a float or out of range"),
            (("BLPOP", "k", "nan"), "timeout is not a float or out of range"),
            (("BRPOP", "k", "1e300"), "timeout is negative"),
            (("BLMOVE", "a", "b", "UP", "LEFT", "0"), "syntax error"),
            (("BLMPOP", "0", "0", "k", "LEFT"), "numkeys should be greater than 0"),
            (("BLMPOP", "-1", "1", "k", "LEFT"), "timeout is negative"),
            (("BLMPOP", "0.01", "2", "k", "LEFT"), "syntax error")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert err(e) == text, args
    r.set("s", "x")
    with pytest.raises(redis.ResponseError) as e:
        r.blpop(["nokey", "s"], 0)
    assert err(e) == WRONGTYPE


def test_blocking_served_at_once(r):
    r.rpush("b", "1", "2")
    assert r.blpop(["a", "b"], 0) == ("b", "1")
    assert r.brpop(["a", "b"], 0) == ("b", "2")
    assert r.exists("b") == 0
    r.rpush("b", "x", "y")
    assert r.blmove("b", "c", 0, "RIGHT", "LEFT") == "y"
    assert r.brpoplpush("b", "c", 0) == "x"
    assert r.lrange("c", 0, -1) == ["x", "y"]
    assert r.execute_command("BLMPOP", 0, 2, "a", "c", "LEFT", "COUNT", 5) == ["c", ["x", "y"]]


def test_blocking_timeout_replies(raw):
    c = raw()
    for cmd in (("BLPOP", "nokey", "0.05"), ("BRPOP", "n1", "n2", "0.05"),
                ("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0.05"),
                ("BRPOPLPUSH", "nokey", "d", "0.05"), ("BLMPOP", "0.05", "1", "nokey", "LEFT")):
        c.send_command(*cmd)
        assert c.reply_bytes() == b"*-1\r\n", cmd
    c.cmd("HELLO", "3")
    c.send_command("BLPOP", "nokey", "0.05")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0.05")
    assert c.reply_bytes() == b"_\r\n"


def test_blocking_inside_multi_does_not_block(raw):
    c = raw()
    c.cmd("MULTI")
    c.cmd("BLPOP", "nokey", "0")
    c.cmd("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0")
    c.cmd("BLMPOP", "0", "1", "nokey", "LEFT")
    c.cmd("RPUSH", "k", "v")
    c.cmd("BRPOP", "k", "0")
    c.send_command("EXEC")
    assert c.reply_bytes() == (b"*5\r\n*-1\r\n$-1\r\n*-1\r\n:1\r\n"
                               b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n")


def test_blpop_woken_by_push_on_another_worker(mserver):
    # Connections are spread over the workers, and the keys too: every pairing is covered.
    for key, pusher, b in waiters_across_workers(mserver, "bk"):
        b.send_command("BLPOP", "nothing", key, "5")
        time.sleep(0.02)
        pusher.rpush(key, "v")
        assert b.reply() == [key.encode(), b"v"]
        assert pusher.exists(key) == 0


def test_blmove_across_workers_wakes(mserver):
    src, dst = spread_keys(2, "bm")
    c = mserver.client()
    b = mserver.raw()
    b.send_command("BLMOVE", src, dst, "LEFT", "RIGHT", "0")
    time.sleep(0.05)
    c.rpush(src, "x", "y")
    assert b.reply() == b"x"
    assert c.lrange(src, 0, -1) == ["y"]
    assert c.lrange(dst, 0, -1) == ["x"]
    # A BLMOVE whose destination is another blocked client's key wakes that client.
    waiter = mserver.raw()
    waiter.send_command("BRPOP", "z" + dst, "0")
    b.send_command("BRPOPLPUSH", "q" + src, "z" + dst, "0")
    time.sleep(0.05)
    c.rpush("q" + src, "m")
    assert b.reply() == b"m"
    assert waiter.reply() == [b"z" + dst.encode(), b"m"]
    assert c.exists("z" + dst) == 0


def test_fifo_fairness(mserver):
    c = mserver.client()
    first, second = mserver.raw(), mserver.raw()
    first.send_command("BLPOP", "fk", "0")
    time.sleep(0.05)
    second.send_command("BLPOP", "fk", "other", "0")
    time.sleep(0.05)
    c.rpush("fk", "a")
    assert first.reply() == [b"fk", b"a"]
    c.rpush("fk", "b", "c")
    assert second.reply() == [b"fk", b"b"]
    assert c.lrange("fk", 0, -1) == ["c"]
    # Two waiters, one push of two elements: both are served, in order.
    first.send_command("BRPOP", "gk", "0")
    time.sleep(0.05)
    second.send_command("BLMPOP", "0", "1", "gk", "LEFT", "COUNT", "5")
    time.sleep(0.05)
    c.rpush("gk", "1", "2", "3")
    assert first.reply() == [b"gk", b"3"]
    assert second.reply() == [b"gk", [b"1", b"2"]]


def test_disconnect_while_blocked(mserver):
    c = mserver.client()
    live = waiter_after_a_disconnected_one(mserver, "BLPOP", "dk", "0")
    c.rpush("dk", "v")
    assert live.reply() == [b"dk", b"v"]
    assert c.exists("dk") == 0


def test_acl_checks_every_numkeys_key(r, server):
    r.execute_command("ACL", "SETUSER", "lister", "on", "nopass", "~open*", "+@all")
    try:
        c = server.client()
        c.execute_command("AUTH", "lister", "x")
        r.rpush("open1", "v")
        for cmd in (("LMPOP", 2, "open1", "secret", "LEFT"),
                    ("BLMPOP", 0, 2, "open1", "secret", "LEFT"),
                    ("BLPOP", "open1", "secret", 0)):
            with pytest.raises(redis.exceptions.NoPermissionError) as e:
                c.execute_command(*cmd)
            assert "no permissions to access one of the keys" in err(e)
        assert c.execute_command("BLMPOP", 0, 1, "open1", "LEFT") == ["open1", ["v"]]
        c.close()
    finally:
        r.execute_command("ACL", "DELUSER", "lister")


def test_blocked_client_shows_in_info_and_client_list(r, raw):
    b = raw()
    b.cmd("CLIENT", "SETNAME", "waiter")
    b.send_command("BLPOP", "ik", "0")
    time.sleep(0.1)
    assert r.info("clients")["blocked_clients"] == 1
    mine = [c for c in r.client_list() if c["name"] == "waiter"]
    assert "b" in mine[0]["flags"]
    r.rpush("ik", "v")
    assert b.reply() == [b"ik", b"v"]
    assert r.info("clients")["blocked_clients"] == 0


@pytest.mark.lavik_only
@pytest.mark.parametrize("checkpoint", [False, True], ids=["replay", "checkpoint"])
def test_lists_survive_restart(spawn_server, tmp_path, checkpoint):
    extra = ["--shutdown-checkpoint"] if checkpoint else []
    s = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c = s.client()
    for k in range(30):
        c.rpush(f"l{k}", *[f"e{i}" for i in range(k + 1)])
    c.lpop("l10")
    c.delete("l11")
    c.rpush("big", *[f"element-{i}" for i in range(50000)])
    c.expire("l3", 1000)
    assert s.terminate() == 0
    s2 = spawn_server(threads=2, workdir=tmp_path, extra_args=extra)
    c2 = s2.client()
    for k in range(30):
        if k == 11:
            assert c2.exists("l11") == 0
        elif k == 10:
            assert c2.lrange("l10", 0, -1) == [f"e{i}" for i in range(1, 11)]
        else:
            assert c2.lrange(f"l{k}", 0, -1) == [f"e{i}" for i in range(k + 1)]
    assert c2.llen("big") == 50000
    assert c2.lindex("big", 31337) == "element-31337"
    assert 0 < c2.ttl("l3") <= 1000


def test_concurrent_blocking_consumers_lose_and_duplicate_nothing(mserver):
    keys = spread_keys(4, "cq")
    n_items = 300

    def take(c, i):
        if i % 2:
            r = c.blpop(keys, 0.2)
            return [r[1]] if r else []
        r = c.execute_command("BLMPOP", 0.2, len(keys), *keys, "RIGHT", "COUNT", 3)
        return r[1] if r else []

    def produce(c, j):
        for n in range(n_items):
            c.rpush(keys[n % len(keys)], f"{j}:{n}")

    got = consume_while_producing(mserver, take, produce)
    assert len(got) == 3 * n_items
    assert len(set(got)) == 3 * n_items
