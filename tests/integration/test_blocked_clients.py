"""Blocked clients always end as Redis 7.0 ends them (issue #13).

CLIENT UNBLOCK (TIMEOUT and ERROR) for every blocking command, on every worker; CLIENT KILL
and hang-ups of blocked clients; a BLMOVE/BRPOPLPUSH whose destination holds the wrong type
handing the element on; XREADGROUP readers whose stream goes away (DEL, SET, FLUSHALL, EXEC);
XREAD not woken by a stream that became a list; BZMPOP with several clients; CLIENT REPLY OFF
with SUBSCRIBE; and a randomized run where every blocked client must end within a bound (a hang
fails on a socket timeout, it never stalls the suite).

Expected replies are redis-server 7.0.15's.
"""

import random
import socket
import threading
import time

import pytest

from conftest import WRONGTYPE, RespError, spread_keys, wait_blocked, wait_until

UNBLOCKED_ERR = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
STREAM_GONE = "UNBLOCKED the stream key no longer exists"
GROUP_GONE = "NOGROUP the consumer group this client was blocked on no longer exists"


def blocked_count(c):
    return c.info("clients")["blocked_clients"]


def block(srv, *cmd, timeout=5.0):
    """A raw connection blocked in cmd; returns (conn, its client id)."""
    conn = srv.raw(timeout=timeout)
    cid = conn.cmd("CLIENT", "ID")
    conn.send_command(*cmd)
    return conn, cid


# Every blocking command, blocked on key k (setup prepares what it needs first).
BLOCKING = {
    "blpop": lambda k: ("BLPOP", k, 0),
    "brpop": lambda k: ("BRPOP", k, 0),
    "blmove": lambda k: ("BLMOVE", k, k + ":dst", "LEFT", "RIGHT", 0),
    "brpoplpush": lambda k: ("BRPOPLPUSH", k, k + ":dst", 0),
    "blmpop": lambda k: ("BLMPOP", 0, 1, k, "LEFT"),
    "bzpopmin": lambda k: ("BZPOPMIN", k, 0),
    "bzpopmax": lambda k: ("BZPOPMAX", k, 0),
    "bzmpop": lambda k: ("BZMPOP", 0, 1, k, "MIN"),
    "xread": lambda k: ("XREAD", "BLOCK", 0, "STREAMS", k, "$"),
    "xreadgroup": lambda k: ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", k, ">"),
}


def setup_for(c, name, key):
    if name == "xreadgroup":
        c.xgroup_create(key, "g", "$", mkstream=True)


# --------------------------------------------------------------------------- CLIENT UNBLOCK


def test_client_unblock_arguments(r, raw):
    conn = raw()
    me = conn.cmd("CLIENT", "ID")
    assert conn.cmd("CLIENT", "UNBLOCK") == RespError(
        "ERR wrong number of arguments for 'client|unblock' command")
    assert conn.cmd("CLIENT", "UNBLOCK", "abc") == RespError(
        "ERR value is not an integer or out of range")
    # The reason is checked before the id.
    assert conn.cmd("CLIENT", "UNBLOCK", "abc", "later") == RespError(
        "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    assert conn.cmd("CLIENT", "UNBLOCK", me, "timeout", "x") == RespError(
        "ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.")
    # Not blocked (itself, an idle client, nobody): 0.
    assert conn.cmd("CLIENT", "UNBLOCK", me) == 0
    assert conn.cmd("CLIENT", "UNBLOCK", r.client_id()) == 0
    assert conn.cmd("CLIENT", "UNBLOCK", 987654321, "ERROR") == 0
    assert conn.cmd("PING") == "PONG"


def test_client_unblock_in_help_and_command_info(r, raw):
    assert "UNBLOCK <clientid> [TIMEOUT|ERROR]" in r.execute_command("CLIENT", "HELP")
    info = raw().cmd("COMMAND", "INFO", "client|unblock")[0]
    assert info[:2] == [b"client|unblock", -3]
    assert set(info[2]) == {"admin", "noscript", "loading", "stale"}
    assert info[3:6] == [0, 0, 0]
    assert set(info[6]) == {"@admin", "@slow", "@dangerous", "@connection"}


@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_client_unblock_every_command(mserver, name):
    c = mserver.client()
    keys = spread_keys(4, "ub:" + name)
    reasons = ((None, None), ("TIMEOUT", None), ("error", RespError(UNBLOCKED_ERR)),
               ("ERROR", RespError(UNBLOCKED_ERR)))
    # A key of every worker (and connections spread over the workers), each way once.
    for key, (reason, expected) in zip(keys, reasons):
        setup_for(c, name, key)
        conn, cid = block(mserver, *BLOCKING[name](key))
        wait_blocked(c, 1)
        args = ("CLIENT", "UNBLOCK", cid) + ((reason,) if reason else ())
        assert c.execute_command(*args) == 1
        assert conn.reply() == expected
        assert c.execute_command(*args) == 0  # no longer blocked
        wait_blocked(c, 0)
        assert conn.cmd("PING") == "PONG"  # the client goes on
        conn.close()


# --------------------------------------------------------------------------- KILL, hang-up, timeout


def test_client_kill_of_a_blocked_client(mserver):
    c = mserver.client()
    for name in ("blpop", "bzpopmin", "xread", "blmove"):
        for key in spread_keys(2, "kill:" + name):
            setup_for(c, name, key)
            conn, cid = block(mserver, *BLOCKING[name](key))
            wait_blocked(c, 1)
            assert c.client_kill_filter(_id=cid) == 1
            t0 = time.monotonic()
            assert conn.closed(timeout=2)  # closed at once, with no reply first
            assert time.monotonic() - t0 < 1.5
            wait_blocked(c, 0)
            conn.close()


@pytest.mark.parametrize("how", ["unblock", "kill", "hangup"])
def test_a_wait_ended_leaves_the_value_to_the_next_client(mserver, how):
    c = mserver.client()
    for key in spread_keys(4, "next:" + how):
        first, first_id = block(mserver, "BLPOP", key, 0)
        wait_blocked(c, 1)
        second, _ = block(mserver, "BLPOP", key, 0)
        wait_blocked(c, 2)
        if how == "unblock":
            assert c.execute_command("CLIENT", "UNBLOCK", first_id) == 1
            assert first.reply() is None
        elif how == "kill":
            assert c.client_kill_filter(_id=first_id) == 1
        else:
            first.close()
        wait_blocked(c, 1)
        c.rpush(key, "v")
        assert second.reply() == [key.encode(), b"v"]  # the first took nothing
        assert c.exists(key) == 0
        first.close()
        second.close()


def test_timeouts_reply_nil(mserver):
    c = mserver.client()
    key = "to"
    setup_for(c, "xreadgroup", key + "g")
    cmds = [("BLPOP", key, "0.1"), ("BLMOVE", key, "d", "LEFT", "LEFT", "0.1"),
            ("BRPOPLPUSH", key, "d", "0.1"), ("BLMPOP", "0.1", 1, key, "RIGHT"),
            ("BZPOPMAX", key, "0.1"), ("BZMPOP", "0.1", 1, key, "MAX"),
            ("XREAD", "BLOCK", 100, "STREAMS", key, "$"),
            ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 100, "STREAMS", key + "g", ">")]
    conns = [block(mserver, *cmd)[0] for cmd in cmds]
    for conn, cmd in zip(conns, cmds):
        assert conn.reply_bytes() == b"*-1\r\n", cmd
        conn.close()
    wait_blocked(c, 0)


# --------------------------------------------------------------------------- wrong-type destination


@pytest.mark.parametrize("form", ["brpoplpush", "blmove"])
def test_wrong_type_destination_hands_the_element_on(mserver, form):
    c = mserver.client()
    src, bad, good = spread_keys(3, "wt:" + form)
    for dst_bad, dst_good in ((bad, good), (src + ":same", good), (bad, src + ":same2")):
        c.delete(src, dst_bad, dst_good)
        c.set(dst_bad, "x")

        def cmd(dst):
            if form == "brpoplpush":
                return ("BRPOPLPUSH", src, dst, 0)
            return ("BLMOVE", src, dst, "RIGHT", "LEFT", 0)

        first, _ = block(mserver, *cmd(dst_bad))
        wait_blocked(c, 1)
        second, _ = block(mserver, *cmd(dst_good))
        wait_blocked(c, 2)
        c.rpush(src, "e1")
        assert first.reply() == RespError(WRONGTYPE)
        assert second.reply() == b"e1"
        assert c.lrange(dst_good, 0, -1) == ["e1"]
        assert c.exists(src) == 0
        assert c.get(dst_bad) == "x"
        wait_blocked(c, 0)
        first.close()
        second.close()


# --------------------------------------------------------------------------- streams going away


def _group_reader(srv, c, key):
    c.delete(key)
    c.xgroup_create(key, "g", "$", mkstream=True)
    conn, _ = block(srv, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", key, ">")
    wait_blocked(c, 1)
    return conn


def _multi(c, *cmds):
    p = c.pipeline(transaction=True)
    for cmd in cmds:
        p.execute_command(*cmd)
    return p.execute()


@pytest.mark.parametrize("how,expected", [
    ("del", STREAM_GONE),
    ("unlink", STREAM_GONE),
    ("set", STREAM_GONE),
    ("rename", STREAM_GONE),
    ("rename_over", STREAM_GONE),
    ("expire", STREAM_GONE),
    ("flushall", STREAM_GONE),
    ("multi_del_set", STREAM_GONE),
    ("multi_del_lpush", STREAM_GONE),
    ("multi_del_xadd", GROUP_GONE),
    ("xgroup_destroy", GROUP_GONE),
])
def test_xreadgroup_reader_fails_when_its_stream_goes(mserver, how, expected):
    c = mserver.client()
    for key in spread_keys(2, "xg:" + how):
        conn = _group_reader(mserver, c, key)
        if how in ("del", "unlink"):
            c.execute_command(how.upper(), key)
        elif how == "set":
            c.set(key, "v")
        elif how == "rename":
            c.rename(key, key + ":new")
        elif how == "rename_over":
            c.set("{%s}x" % key, "1")  # same slot, so RENAME is allowed everywhere
            c.rename("{%s}x" % key, key)
        elif how == "expire":
            c.pexpire(key, 30)
            time.sleep(0.06)
            c.exists(key)  # expires it now if the active cycle has not yet
        elif how == "flushall":
            c.flushall()
        elif how == "multi_del_set":
            _multi(c, ("DEL", key), ("SET", key, "v"))
        elif how == "multi_del_lpush":
            _multi(c, ("DEL", key), ("LPUSH", key, "v"))
        elif how == "multi_del_xadd":
            _multi(c, ("DEL", key), ("XADD", key, "*", "f", "v"))
        elif how == "xgroup_destroy":
            c.xgroup_destroy(key, "g")
        assert conn.reply() == RespError(expected)
        wait_blocked(c, 0)
        conn.close()


def _xread_readers(srv, c, keys, ms):
    conns = []
    for i, key in enumerate(keys):
        conns.append(block(srv, "XREAD", "BLOCK", ms, "STREAMS", key, "$")[0])
        wait_blocked(c, i + 1)
    return conns


def _all_time_out(conns, t0, ms):
    for conn in conns:
        assert conn.reply() is None  # its timeout, not an error nor an early wake-up
        conn.close()
    assert time.monotonic() - t0 > ms / 1000 * 0.6


def test_xread_not_woken_by_xadd_del_lpush_in_one_exec(mserver):
    c = mserver.client()
    keys = spread_keys(2, "xr:multi")
    conns = _xread_readers(mserver, c, keys, 300)
    t0 = time.monotonic()
    for key in keys:
        assert _multi(c, ("XADD", key, "*", "f", "v"), ("DEL", key), ("LPUSH", key, "x"))[0]
    _all_time_out(conns, t0, 300)


@pytest.mark.parametrize("how", ["del", "set"])
def test_xread_reader_waits_on_when_its_stream_goes(mserver, how):
    c = mserver.client()
    keys = spread_keys(2, "xr:" + how)
    for key in keys:
        c.xadd(key, {"f": "v"})
    conns = _xread_readers(mserver, c, keys, 300)
    t0 = time.monotonic()
    for key in keys:
        if how == "del":
            c.delete(key)
        else:
            c.set(key, "v")
    _all_time_out(conns, t0, 300)


def test_xread_woken_after_its_stream_was_recreated(mserver):
    c = mserver.client()
    for key in spread_keys(2, "xr:again"):
        c.delete(key)
        c.xadd(key, {"f": "v"}, id="5-1")
        conn, _ = block(mserver, "XREAD", "BLOCK", 0, "STREAMS", key, "$")
        wait_blocked(c, 1)
        c.set(key, "v")
        c.delete(key)
        c.xadd(key, {"g": "w"}, id="7-1")
        assert conn.reply() == [[key.encode(), [[b"7-1", [b"g", b"w"]]]]]
        conn.close()


# --------------------------------------------------------------------------- BZMPOP


def test_bzmpop_serves_several_clients_in_order(mserver):
    c = mserver.client()
    for key in spread_keys(2, "bzm"):
        conns = []
        for i in range(3):
            conns.append(block(mserver, "BZMPOP", 0, 1, key, "MIN", "COUNT", 2)[0])
            wait_blocked(c, i + 1)
        c.zadd(key, {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
        k = key.encode()
        assert conns[0].reply() == [k, [[b"a", b"1"], [b"b", b"2"]]]
        assert conns[1].reply() == [k, [[b"c", b"3"], [b"d", b"4"]]]
        assert conns[2].reply() == [k, [[b"e", b"5"]]]
        assert c.exists(key) == 0
        for conn in conns:
            conn.close()


def test_bzmpop_does_not_block_on_its_other_arguments(mserver):
    c = mserver.client()
    conn, _ = block(mserver, "BZMPOP", "0.4", 1, "zkey", "MIN", "COUNT", "1")
    wait_blocked(c, 1)
    t0 = time.monotonic()
    for other in ("0.4", "1", "MIN", "COUNT", "min"):
        c.zadd(other, {"m": 1})
    assert conn.reply() is None  # timed out: none of those is its key
    assert time.monotonic() - t0 > 0.2
    assert c.zcard("MIN") == 1
    conn.close()


BAD_ARGS = [
    (("BZMPOP", 0, 1, "z", "MIN", "COUNT", 0), "ERR count should be greater than 0"),
    (("BZMPOP", 0, 1, "z", "MIN", "COUNT", "abc"), "ERR count should be greater than 0"),
    (("BZMPOP", 0, 1, "z", "MIN", "COUNT"), "ERR syntax error"),
    (("BZMPOP", 0, 1, "z", "MIN", "COUNT", 1, "COUNT", 2), "ERR syntax error"),
    (("BZMPOP", 0, 1, "z", "foo"), "ERR syntax error"),
    (("BZMPOP", 0, 2, "z", "MIN"), "ERR syntax error"),
    (("BZMPOP", 0, 3, "a", "b", "MIN"), "ERR syntax error"),
    (("BZMPOP", 0, 1, "z", "MIN", "extra"), "ERR syntax error"),
    (("BZMPOP", 0, 0, "z", "MIN"), "ERR numkeys should be greater than 0"),
    (("BZMPOP", 0, "x", "z", "MIN"), "ERR numkeys should be greater than 0"),
    (("BZMPOP", -1, 1, "z", "MIN"), "ERR timeout is negative"),
    (("BZMPOP", "abc", 1, "z", "MIN"), "ERR timeout is not a float or out of range"),
    (("BLMPOP", 0, 1, "l", "LEFT", "COUNT", 0), "ERR count should be greater than 0"),
    (("BLMPOP", 0, 2, "l", "LEFT"), "ERR syntax error"),
    (("BLMPOP", 0, 1, "l", "up"), "ERR syntax error"),
    (("BZPOPMIN", "z", "-1"), "ERR timeout is negative"),
    (("BLMOVE", "a", "b", "up", "LEFT", 0), "ERR syntax error"),
    (("XREAD", "BLOCK", -1, "STREAMS", "s", "$"), "ERR timeout is negative"),
    (("XREAD", "BLOCK", 0, "COUNT", "x", "STREAMS", "s", "$"),
     "ERR value is not an integer or out of range"),
    (("XREAD", "BLOCK", 0, "STREAMS", "s", "bad-id"),
     "ERR Invalid stream ID specified as stream command argument"),
    (("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">"),
     "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"),
]


def test_bad_arguments_answer_at_once_without_blocking(r, raw):
    conn = raw(timeout=2)  # a command that blocked instead would fail on this timeout
    for cmd, error in BAD_ARGS:
        assert conn.cmd(*cmd) == RespError(error), cmd
    assert blocked_count(r) == 0


# --------------------------------------------------------------------------- CLIENT REPLY OFF


@pytest.mark.parametrize("mode", ["OFF", "SKIP"])
def test_subscribe_with_replies_off_still_gets_confirmations_and_messages(r, raw, mode):
    sub = raw()
    sub.send_command("CLIENT", "REPLY", mode)
    sub.send_command("SUBSCRIBE", "ch")
    assert sub.reply() == [b"subscribe", b"ch", 1]
    assert wait_until(lambda: r.publish("ch", "hello") == 1)
    assert sub.reply() == [b"message", b"ch", b"hello"]
    sub.send_command("PSUBSCRIBE", "c*")
    assert sub.reply() == [b"psubscribe", b"c*", 2]
    assert r.publish("ch", "two") == 2
    assert sub.reply() == [b"message", b"ch", b"two"]
    assert sub.reply() == [b"pmessage", b"c*", b"ch", b"two"]
    sub.send_command("UNSUBSCRIBE", "ch")
    assert sub.reply() == [b"unsubscribe", b"ch", 1]
    if mode == "OFF":
        sub.send_command("PING")  # a plain reply: still silenced
        sub.send_command("PUNSUBSCRIBE")
        assert sub.reply() == [b"punsubscribe", b"c*", 0]


# --------------------------------------------------------------------------- randomized


def _random_blocking(rng, keys, timeout_s):
    k = rng.choice(keys)
    t = "0" if timeout_s == 0 else str(timeout_s)
    ms = str(int(timeout_s * 1000))
    kind = rng.randrange(10)
    if kind == 0:
        return ("BLPOP", k, rng.choice(keys), t)
    if kind == 1:
        return ("BRPOP", k, t)
    if kind == 2:
        return ("BLMOVE", k, rng.choice(keys), "LEFT", "RIGHT", t)
    if kind == 3:
        return ("BRPOPLPUSH", k, rng.choice(keys), t)
    if kind == 4:
        return ("BLMPOP", t, 2, k, rng.choice(keys), "LEFT", "COUNT", 2)
    if kind == 5:
        return ("BZPOPMIN", k, t)
    if kind == 6:
        return ("BZMPOP", t, 1, k, "MAX", "COUNT", 3)
    if kind == 7:
        return ("BZPOPMAX", k, rng.choice(keys), t)
    if kind == 8:
        return ("XREAD", "BLOCK", ms, "STREAMS", k, "$")
    return ("XREADGROUP", "GROUP", "g", "c", "BLOCK", ms, "STREAMS", k, ">")


ALLOWED_ERRORS = (WRONGTYPE, UNBLOCKED_ERR, STREAM_GONE, GROUP_GONE, "NOGROUP No such key")


@pytest.mark.parametrize("threads", [2, 4])
def test_random_mix_every_blocked_client_ends(server_factory, threads):
    srv = server_factory(threads)
    ctl = srv.client(socket_timeout=5)
    ctl.flushall()
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    keys = spread_keys(4, "rnd")
    n_clients = 12
    bound = 3.0  # a command ends within its timeout plus this
    stop = threading.Event()
    failures, ids, busy, ended = [], {}, {}, [0]
    lock = threading.Lock()

    def client(i):
        crng = random.Random(seed + i + 1)
        conn = None
        while not stop.is_set():
            try:
                if conn is None:
                    conn = srv.raw(timeout=5)
                    with lock:
                        ids[i] = conn.cmd("CLIENT", "ID")
                timeout_s = crng.choice([0, 0, 0.2, 0.5, 1])
                cmd = _random_blocking(crng, keys, timeout_s)
                conn.sock.settimeout((timeout_s or 2.5) + bound)
                with lock:
                    busy[i] = cmd
                conn.send_command(*cmd)
                reply = conn.reply()
                with lock:
                    busy.pop(i, None)
                    ended[0] += 1
                if isinstance(reply, RespError) and not reply.text.startswith(ALLOWED_ERRORS):
                    failures.append(f"{cmd}: unexpected error {reply.text}")
            except socket.timeout:
                failures.append(f"seed {seed}: client {i} hung in {busy.get(i)}")
                return
            except (ConnectionError, OSError):  # killed: reconnect and go on
                with lock:
                    busy.pop(i, None)
                    ended[0] += 1
                    ids.pop(i, None)
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    workers = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n_clients)]
    for t in workers:
        t.start()
    end = time.monotonic() + 2.0
    while time.monotonic() < end and not failures:
        op = rng.randrange(12)
        k = rng.choice(keys)
        try:
            if op <= 2:
                ctl.rpush(k, *[f"e{j}" for j in range(rng.randint(1, 3))])
            elif op == 3:
                ctl.zadd(k, {f"m{j}": j for j in range(rng.randint(1, 3))})
            elif op == 4:
                ctl.xadd(k, {"f": "v"})
            elif op == 5:
                ctl.xgroup_create(k, "g", "$", mkstream=True)
            elif op == 6:
                ctl.delete(k)
            elif op == 7:
                ctl.set(k, "string")  # a type change under the waiters
            elif op == 8 and rng.random() < 0.2:
                ctl.flushall()
            elif op in (9, 10):
                with lock:
                    target = rng.choice(list(ids.values())) if ids else None
                if target is not None:
                    reason = rng.choice([(), ("TIMEOUT",), ("ERROR",)])
                    ctl.execute_command("CLIENT", "UNBLOCK", target, *reason)
            elif op == 11 and rng.random() < 0.3:
                with lock:
                    target = rng.choice(list(ids.values())) if ids else None
                if target is not None:
                    ctl.client_kill_filter(_id=target)
        except Exception as e:  # WRONGTYPE, BUSYGROUP...: part of the mix
            if "WRONGTYPE" not in str(e) and "BUSYGROUP" not in str(e):
                raise
        time.sleep(rng.random() * 0.01)
    stop.set()
    # The clients still blocked with no timeout end only by CLIENT UNBLOCK now; one the server
    # lost track of hangs, and fails on its socket timeout.
    deadline = time.monotonic() + 2 * bound + 2.5
    while any(t.is_alive() for t in workers) and time.monotonic() < deadline:
        with lock:
            targets = list(ids.values())
        for target in targets:
            ctl.execute_command("CLIENT", "UNBLOCK", target)
        time.sleep(0.05)
    for t in workers:
        t.join(timeout=0.1)
    assert not [t for t in workers if t.is_alive()], f"seed {seed}: clients still blocked"
    assert not failures, failures
    assert ended[0] > n_clients
    wait_blocked(ctl, 0)
    assert ctl.ping()


# --------------------------------------------------------------------------- approximate trimming


class NodeModel:
    """Redis's stream nodes for a stream grown by XADD: a node takes `size` appended entries
    (stream-node-max-entries, small entries so stream-node-max-bytes never closes one early);
    "~" trims whole nodes from the head, never past LIMIT (default 100 nodes' worth)."""

    def __init__(self, size):
        self.size, self.added, self.ids = size, 0, []

    def add(self, i):
        self.added += 1
        self.ids.append(i)

    def nodes(self):
        out, i = [], self.added - len(self.ids)
        while i < self.added:
            end = min((i // self.size + 1) * self.size, self.added)
            out.append(end - i)
            i = end
        return out

    def trim(self, maxlen=None, minid=None, approx=True, limit=None):
        if not approx:
            limit = 0
        elif limit is None:
            limit = 100 * self.size
        gone = 0
        for c in self.nodes():
            left = len(self.ids) - gone
            if maxlen is not None and left <= maxlen:
                break
            if limit and gone + c > limit:
                break
            if (maxlen is not None and left - c >= maxlen) or (
                    minid is not None and self.ids[gone + c - 1] < minid):
                gone += c
                continue
            if not approx:  # exact: into the node, one entry at a time
                while len(self.ids) - gone > (maxlen if maxlen is not None else 0) and (
                        maxlen is not None or self.ids[gone] < minid):
                    gone += 1
            break
        del self.ids[:gone]
        return gone


@pytest.fixture
def node_size(r):
    sizes = []

    def set_size(n):
        sizes.append(n)
        r.config_set("stream-node-max-entries", n)

    yield set_size
    r.config_set("stream-node-max-entries", 100)


@pytest.mark.parametrize("size", [7, 10, 100])
def test_xtrim_approx_removes_whole_nodes(r, node_size, size):
    node_size(size)
    for count in (25, 250):
        for maxlen in (0, 15, 130):
            for limit in (None, 0, 5, 25):
                r.delete("s")
                p = r.pipeline(transaction=False)
                for i in range(1, count + 1):
                    p.xadd("s", {"f": "v"}, id=f"{i}-1")
                p.execute()
                model = NodeModel(size)
                for i in range(1, count + 1):
                    model.add(i)
                args = ["XTRIM", "s", "MAXLEN", "~", maxlen]
                args += [] if limit is None else ["LIMIT", limit]
                case = (count, maxlen, limit)
                assert r.execute_command(*args) == model.trim(maxlen=maxlen, limit=limit), case
                assert r.xlen("s") == len(model.ids), case
        # MINID ~ after exact trims (which cut into the first node)
        r.delete("s")
        model = NodeModel(size)
        for i in range(1, 60):
            r.xadd("s", {"f": "v"}, id=f"{i}-1")
            model.add(i)
        assert r.xtrim("s", maxlen=53, approximate=False) == model.trim(maxlen=53, approx=False)
        for minid in (5, 11, 12, 30, 45):
            assert r.execute_command("XTRIM", "s", "MINID", "~", minid) == model.trim(minid=minid)
        assert r.execute_command("XTRIM", "s", "MINID", "~", 59, "LIMIT", 8) == model.trim(
            minid=59, limit=8)
        assert r.xlen("s") == len(model.ids)


@pytest.mark.parametrize("size", [7, 10])
def test_xadd_maxlen_approx_lengths_follow_the_nodes(r, node_size, size):
    node_size(size)
    model = NodeModel(size)
    lengths, expected = [], []
    for i in range(1, 61):
        r.execute_command("XADD", "s", "MAXLEN", "~", 20, f"{i}-1", "f", "v")
        model.add(i)
        model.trim(maxlen=20)
        lengths.append(r.xlen("s"))
        expected.append(len(model.ids))
    for i in range(61, 91):
        limit = 3 if i % 2 else 20
        r.execute_command("XADD", "s", "MAXLEN", "~", 5, "LIMIT", limit, f"{i}-1", "f", "v")
        model.add(i)
        model.trim(maxlen=5, limit=limit)
        lengths.append(r.xlen("s"))
        expected.append(len(model.ids))
    assert lengths == expected
    assert max(lengths[:60]) == 20 + size - 1  # grows by a node, then drops one
