"""Client-side caching (CLIENT TRACKING, Redis 7.0): the RESP2 REDIRECT flow through a
__redis__:invalidate subscriber, RESP3 invalidation pushes, BCAST with prefixes, OPTIN/OPTOUT
with CLIENT CACHING, NOLOOP, FLUSHALL's null invalidation, invalidations crossing workers,
tracking-table-max-keys, CLIENT TRACKINGINFO / GETREDIR, RESET and the errors. Every test also
passes against redis-server 7.0 (LAVIK_TEST_TARGET=redis).
"""

import time
import uuid

import pytest

from conftest import RespError, RespPush, _NeedMore, parse_reply, spread_keys, wait_until

INV = b">2\r\n$10\r\ninvalidate\r\n"
MSG = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"


def resp3(server):
    """A raw RESP3 connection."""
    c = server.raw()
    assert isinstance(c.cmd("HELLO", "3"), dict)
    return c


def tracker(server, *options):
    """A raw RESP3 connection with CLIENT TRACKING on <options...>."""
    c = resp3(server)
    assert c.cmd("CLIENT", "TRACKING", "on", *options) == "OK"
    return c


def collect(conn, done, timeout=3.0):
    """The replies/pushes that arrive on conn until done(list) holds or timeout passes."""
    got = []
    deadline = time.monotonic() + timeout
    while True:
        while True:
            try:
                value, end = parse_reply(conn.buf, 0)
            except _NeedMore:
                break
            del conn.buf[:end]
            got.append(value)
        if done(got) or time.monotonic() > deadline:
            return got
        conn.drain(0.05)


def invalidated(pushes):
    """The keys the invalidation pushes name (None for a flush), in arrival order."""
    keys = []
    for p in pushes:
        assert isinstance(p, RespPush) and p[0] == b"invalidate", p
        keys.extend([None] if p[1] is None else p[1])
    return keys


def wait_keys(conn, want, timeout=3.0):
    """Reads pushes until every key of `want` was invalidated; the keys seen."""
    got = collect(conn, lambda g: set(want) <= set(invalidated(g)), timeout)
    return invalidated(got)


def quiet(conn, t=0.3):
    """What arrives on conn within t seconds (nothing expected)."""
    return collect(conn, lambda g: False, t)


def info_field(client, name):
    return client.info("everything")[name]


# --------------------------------------------------------------------------- RESP3 pushes


def test_resp3_push_after_another_clients_write(server, r):
    t = resp3(server)
    assert t.cmd("CLIENT", "TRACKING", "on") == "OK"
    assert t.cmd("GET", "k") is None
    r.set("k", "v")
    assert collect(t, lambda g: len(g) == 1)[0] == RespPush([b"invalidate", [b"k"]])
    # The entry is forgotten once sent: a second write sends nothing until the key is read again.
    r.set("k", "w")
    assert quiet(t) == []
    assert t.cmd("GET", "k") == b"w"
    r.delete("k")
    assert wait_keys(t, ["k"]) == ["k".encode()]


def test_resp3_exact_bytes_and_own_write_after_its_reply(server):
    t = resp3(server)
    t.cmd("CLIENT", "TRACKING", "on")
    t.cmd("GET", "own")
    t.send_command("SET", "own", "1")
    # Redis sends the invalidation of a key the client itself wrote after the command's reply.
    assert t.reply_bytes() == b"+OK\r\n"
    assert t.reply_bytes() == INV + b"*1\r\n$3\r\nown\r\n"


def test_read_commands_track_their_keys(server, r):
    r.hset("h", "f", "1")
    r.set("s", "1")
    t = tracker(server)
    t.cmd("HGET", "h", "f")
    t.cmd("MGET", "m1", "m2")
    t.cmd("EXISTS", "e")
    t.cmd("TYPE", "ty")
    t.cmd("GETRANGE", "s", 0, 1)
    t.cmd("SET", "written", "1")  # a write does not track
    r.mset({"m1": 1, "m2": 1, "e": 1, "ty": 1, "s": 2, "written": 2})
    r.hset("h", "f", "2")
    keys = wait_keys(t, ["h", "m1", "m2", "e", "ty", "s"])
    assert sorted(keys) == [b"e", b"h", b"m1", b"m2", b"s", b"ty"]
    assert quiet(t, 0.2) == []


# --------------------------------------------------------------------------- RESP2 REDIRECT


def test_resp2_redirect_to_invalidate_subscriber(server, r):
    name = "inv-" + uuid.uuid4().hex[:8]
    subscriber = server.client(client_name=name)
    p = subscriber.pubsub()
    p.subscribe("__redis__:invalidate")
    assert p.get_message(timeout=2)["type"] == "subscribe"
    sid = next(c["id"] for c in r.client_list() if c["name"] == name)
    t = server.client(single_connection_client=True)
    assert t.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", sid) == "OK"
    assert t.execute_command("CLIENT", "GETREDIR") == int(sid)
    assert t.get("rk") is None
    r.set("rk", "1")
    m = p.get_message(timeout=3)
    assert m["type"] == "message" and m["channel"] == "__redis__:invalidate"
    assert m["data"] == ["rk"]
    # FLUSHALL: a null payload in the tracking client's protocol (RESP2: $-1).
    r.flushall()
    m = p.get_message(timeout=3)
    assert m["channel"] == "__redis__:invalidate" and m["data"] is None
    assert t.execute_command("CLIENT", "TRACKING", "off") == "OK"
    assert t.execute_command("CLIENT", "GETREDIR") == -1
    p.close()
    t.close()
    subscriber.close()


def test_resp2_redirect_exact_bytes_and_broken_redirect(server, r):
    s = server.raw()
    sid = s.cmd("CLIENT", "ID")
    s.cmd("SUBSCRIBE", "__redis__:invalidate")
    t = server.raw()
    assert t.cmd("CLIENT", "TRACKING", "on", "REDIRECT", sid) == "OK"
    t3 = tracker(server, "REDIRECT", sid)
    t.cmd("GET", "bk")
    t3.cmd("GET", "bk3")
    r.set("bk", "1")
    assert s.reply_bytes() == MSG + b"*1\r\n$2\r\nbk\r\n"
    r.set("bk3", "1")  # a RESP3 tracking client redirecting to a RESP2 subscriber: a message too
    assert s.reply_bytes() == MSG + b"*1\r\n$3\r\nbk3\r\n"
    s.close()
    time.sleep(0.2)
    t3.cmd("GET", "bk3")
    r.set("bk3", "2")
    got = collect(t3, lambda g: len(g) == 1)
    assert got == [RespPush([b"tracking-redir-broken", sid])]
    info = t3.cmd("CLIENT", "TRACKINGINFO")
    assert info[b"flags"] == [b"on", b"broken_redirect"] and info[b"redirect"] == sid
    line = t3.cmd("CLIENT", "INFO").decode()
    assert " flags=tR " in line and f" redir={sid} " in line


def test_redirect_to_a_resp2_client_that_is_not_subscribed_gets_nothing(server, r):
    plain = server.raw()
    pid = plain.cmd("CLIENT", "ID")
    t = tracker(server, "REDIRECT", pid)
    t.cmd("GET", "nk")
    r.set("nk", "1")
    assert quiet(plain) == [] and quiet(t, 0.1) == []
    assert plain.cmd("PING") == "PONG"


# --------------------------------------------------------------------------- modes


def test_bcast_prefixes(server, r):
    t = tracker(server, "BCAST", "PREFIX", "a:", "PREFIX", "b:")
    assert info_field(r, "tracking_total_prefixes") >= 2
    for k in ["a:1", "c:1", "b:1", "a:2"]:
        r.set(k, "x")
    keys = wait_keys(t, [b"a:1", b"b:1", b"a:2"])
    assert sorted(keys) == [b"a:1", b"a:2", b"b:1"]
    assert quiet(t, 0.2) == []
    # Adding a prefix keeps the old ones; TRACKINGINFO lists them sorted.
    assert t.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "0:") == "OK"
    info = t.cmd("CLIENT", "TRACKINGINFO")
    assert info == {b"flags": [b"on", b"bcast"], b"redirect": 0,
                    b"prefixes": [b"0:", b"a:", b"b:"]}
    r.set("0:z", "1")
    assert wait_keys(t, [b"0:z"]) == [b"0:z"]


def test_bcast_without_prefix_gets_every_key_and_noloop(server, r):
    t = tracker(server, "BCAST", "NOLOOP")
    assert t.cmd("SET", "mine", "1") == "OK"  # NOLOOP: not about its own writes
    r.set("theirs", "1")
    keys = wait_keys(t, [b"theirs"])
    assert b"mine" not in keys and b"theirs" in keys


def test_optin(server, r):
    t = tracker(server, "OPTIN")
    t.cmd("GET", "o1")  # not tracked: no CLIENT CACHING yes before it
    assert t.cmd("CLIENT", "CACHING", "yes") == "OK"
    info = t.cmd("CLIENT", "TRACKINGINFO")
    assert info[b"flags"] == [b"on", b"optin", b"caching-yes"]
    t.cmd("GET", "o2")  # tracked
    t.cmd("GET", "o3")  # not: CACHING held for one command
    assert t.cmd("CLIENT", "TRACKINGINFO")[b"flags"] == [b"on", b"optin"]
    r.set("o1", "1")
    r.set("o3", "1")
    r.set("o2", "1")
    assert wait_keys(t, [b"o2"]) == [b"o2"]
    assert quiet(t, 0.2) == []


def test_optout(server, r):
    t = tracker(server, "OPTOUT")
    t.cmd("GET", "x1")  # tracked
    assert t.cmd("CLIENT", "CACHING", "no") == "OK"
    assert t.cmd("CLIENT", "TRACKINGINFO")[b"flags"] == [b"on", b"optout", b"caching-no"]
    t.cmd("GET", "x2")  # not tracked
    r.set("x2", "1")
    r.set("x1", "1")
    assert wait_keys(t, [b"x1"]) == [b"x1"]
    assert quiet(t, 0.2) == []


def test_noloop_default_mode(server, r):
    t = tracker(server, "NOLOOP")
    t.cmd("GET", "self")
    t.cmd("GET", "other")
    assert t.cmd("SET", "self", "1") == "OK"
    r.set("other", "1")
    assert wait_keys(t, [b"other"]) == [b"other"]
    assert quiet(t, 0.2) == []


def test_flushall_sends_null_to_every_tracking_client(server, r):
    a = resp3(server)
    a.cmd("CLIENT", "TRACKING", "on")
    b = tracker(server, "BCAST")
    r.flushall()
    assert a.reply_bytes() == INV + b"_\r\n"
    assert b.reply_bytes() == INV + b"_\r\n"
    # The table is empty afterwards: a write of a key read before sends nothing.
    a.cmd("CLIENT", "TRACKING", "off")
    b.cmd("CLIENT", "TRACKING", "off")


def test_reset_turns_tracking_off(server, r):
    t = tracker(server, "BCAST", "PREFIX", "rs:")
    assert t.cmd("RESET") == "RESET"
    assert t.cmd("CLIENT", "TRACKINGINFO") == [b"flags", [b"off"], b"redirect", -1,
                                               b"prefixes", []]
    r.set("rs:1", "1")
    assert quiet(t) == []


# --------------------------------------------------------------------------- across workers


@pytest.mark.parametrize("threads", [2, 4])
def test_invalidations_cross_workers(spawn_server, threads):
    srv = spawn_server(threads=threads)
    keys = spread_keys(threads, "xw")
    trackers = [tracker(srv) for _ in range(threads)]  # connections land on every worker
    writers = [srv.client() for _ in range(threads)]
    for t in trackers:
        for k in keys:
            t.cmd("GET", k)
    for i, k in enumerate(keys):
        writers[i % threads].set(k, "1")
    want = [k.encode() for k in keys]
    for t in trackers:
        assert sorted(wait_keys(t, want)) == sorted(want)
    # A multi-shard read (MGET over every worker) is tracked on each key's worker.
    for t in trackers:
        t.cmd("MGET", *keys)
    writers[0].mset({k: "2" for k in keys})
    for t in trackers:
        assert sorted(wait_keys(t, want)) == sorted(want)
    # RESP2 REDIRECT with the subscriber and the tracking clients on different workers:
    # connections are dealt round-robin, so tracking client i shares a worker with subscriber i
    # and redirects to subscriber i+1.
    subs, sub_ids = [], []
    for _ in range(threads):
        s = srv.raw()
        sub_ids.append(s.cmd("CLIENT", "ID"))
        s.cmd("SUBSCRIBE", "__redis__:invalidate")
        subs.append(s)
    redirected = []
    for i in range(threads):
        t = srv.raw()
        assert t.cmd("CLIENT", "TRACKING", "on", "REDIRECT", sub_ids[(i + 1) % threads]) == "OK"
        t.cmd("GET", keys[i])
        redirected.append(t)  # kept open: a closed client tracks nothing
    for i in range(threads):
        writers[(i + 1) % threads].set(keys[i], "3")
    for i in range(threads):
        k = keys[i].encode()
        assert subs[(i + 1) % threads].reply_bytes() == MSG + b"*1\r\n$%d\r\n%s\r\n" % (len(k), k)
    assert info_field(writers[0], "tracking_clients") == 2 * threads


def test_tracking_table_max_keys_evicts_with_invalidations(spawn_server):
    srv = spawn_server()
    c = srv.client()
    assert c.config_get("tracking-table-max-keys") == {"tracking-table-max-keys": "1000000"}
    c.config_set("tracking-table-max-keys", 2)
    t = tracker(srv)
    keys = [f"mk{i}" for i in range(4)]
    for k in keys:
        t.send_command("GET", k)
    got = collect(t, lambda g: sum(1 for v in g if not isinstance(v, RespPush)) == 4)
    pushes = [v for v in got if isinstance(v, RespPush)]
    total = info_field(c, "tracking_total_keys")
    assert total <= 2
    # Every key read is either still in the table or was invalidated when evicted.
    pushes += collect(t, lambda g: len(invalidated(pushes + g)) >= 4 - total)
    evicted = invalidated(pushes)
    assert len(evicted) == 4 - total and set(evicted) <= {k.encode() for k in keys}


# --------------------------------------------------------------------------- introspection


def test_trackinginfo_and_getredir_replies(server):
    c = server.raw()
    c.send_command("CLIENT", "TRACKINGINFO")
    assert c.reply_bytes() == (b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n"
                               b"$8\r\nprefixes\r\n*0\r\n")
    assert c.cmd("CLIENT", "GETREDIR") == -1
    c.cmd("HELLO", "3")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a", "NOLOOP")
    c.send_command("CLIENT", "TRACKINGINFO")
    assert c.reply_bytes() == (b"%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$5\r\nbcast\r\n"
                               b"$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n"
                               b"*2\r\n$1\r\na\r\n$1\r\nb\r\n")
    assert c.cmd("CLIENT", "GETREDIR") == 0
    own = c.cmd("CLIENT", "ID")
    assert " flags=tB " in c.cmd("CLIENT", "INFO").decode()
    assert c.cmd("CLIENT", "TRACKING", "off") == "OK"
    assert c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", own) == "OK"  # itself: allowed
    assert c.cmd("CLIENT", "GETREDIR") == own


def test_info_fields(spawn_server):
    server = spawn_server()
    r = server.client()
    before = info_field(r, "tracking_clients")
    a = tracker(server)
    b = tracker(server, "BCAST", "PREFIX", "info-prefix-unique:")
    assert info_field(r, "tracking_clients") == before + 2
    assert info_field(r, "tracking_total_prefixes") >= 1
    keys_before = info_field(r, "tracking_total_keys")
    items_before = info_field(r, "tracking_total_items")
    a.cmd("GET", "info-k1")
    a.cmd("GET", "info-k2")
    assert info_field(r, "tracking_total_keys") == keys_before + 2
    assert info_field(r, "tracking_total_items") == items_before + 2
    r.mset({"info-k1": 1, "info-k2": 1})
    assert wait_keys(a, [b"info-k1", b"info-k2"])
    assert info_field(r, "tracking_total_keys") == keys_before
    a.close()
    b.close()
    assert wait_until(lambda: info_field(r, "tracking_clients") == before)
    assert info_field(r, "tracking_total_prefixes") == 0


def test_errors(server):
    c = server.raw()
    cid = c.cmd("CLIENT", "ID")

    def e(*args):
        reply = c.cmd(*args)
        assert isinstance(reply, RespError), (args, reply)
        return reply.text

    assert e("CLIENT", "TRACKING", "on", "PREFIX", "a") == \
        "ERR PREFIX option requires BCAST mode to be enabled"
    assert e("CLIENT", "TRACKING", "on", "BCAST", "OPTIN") == \
        "ERR OPTIN and OPTOUT are not compatible with BCAST"
    assert e("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT") == \
        "ERR You can't specify both OPTIN mode and OPTOUT mode"
    assert e("CLIENT", "TRACKING", "on", "REDIRECT", 987654321) == \
        "ERR The client ID you want redirect to does not exist"
    assert e("CLIENT", "TRACKING", "on", "REDIRECT", "abc") == \
        "ERR value is not an integer or out of range"
    assert e("CLIENT", "TRACKING", "on", "REDIRECT", cid, "REDIRECT", cid) == \
        "ERR A client can only redirect to a single other client"
    assert e("CLIENT", "TRACKING", "maybe") == "ERR syntax error"
    assert e("CLIENT", "TRACKING", "on", "foo") == "ERR syntax error"
    assert e("CLIENT", "TRACKING", "on", "REDIRECT") == "ERR syntax error"
    assert e("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab") == (
        "ERR Prefix 'a' overlaps with another provided prefix 'ab'. "
        "Prefixes for a single client must not overlap.")
    assert e("CLIENT", "TRACKING") == "ERR wrong number of arguments for 'client|tracking' command"
    assert e("CLIENT", "CACHING", "yes") == (
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
        "OPTOUT mode enabled")
    assert e("CLIENT", "CACHING") == "ERR wrong number of arguments for 'client|caching' command"
    assert e("CLIENT", "GETREDIR", "x") == \
        "ERR wrong number of arguments for 'client|getredir' command"
    assert c.cmd("CLIENT", "TRACKING", "on", "OPTIN") == "OK"
    assert e("CLIENT", "CACHING", "no") == \
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
    assert e("CLIENT", "CACHING", "maybe") == "ERR syntax error"
    assert e("CLIENT", "TRACKING", "on", "OPTOUT") == (
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
        "then re-enabling it with a different mode.")
    assert e("CLIENT", "TRACKING", "on", "BCAST") == (
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
        "then re-enabling it with a different mode.")
    assert c.cmd("CLIENT", "TRACKING", "off") == "OK"
    assert c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:") == "OK"
    assert e("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:a") == (
        "ERR Prefix 'p:a' overlaps with an existing prefix 'p:'. "
        "Prefixes for a single client must not overlap.")
    assert e("CLIENT", "CACHING", "yes") == \
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."


def test_command_info_of_the_subcommands(raw):
    info = raw().cmd("COMMAND", "INFO", "client|tracking", "client|caching", "client|getredir",
                     "client|trackinginfo")
    assert [i[0] for i in info] == [b"client|tracking", b"client|caching", b"client|getredir",
                                    b"client|trackinginfo"]
    assert [i[1] for i in info] == [-3, 3, 2, 2]
    for i in info:
        assert sorted(i[2]) == ["loading", "noscript", "stale"]
        assert i[3:6] == [0, 0, 0]
        assert sorted(i[6]) == ["@connection", "@slow"]


def test_reads_inside_exec_and_scripts_are_tracked(server, r):
    t = tracker(server)
    assert t.cmd("MULTI") == "OK"
    assert t.cmd("GET", "in-exec") == "QUEUED"
    assert t.cmd("EXEC") == [None]
    assert t.cmd("EVAL", "return redis.call('get', KEYS[1])", 1, "in-script") is None
    r.set("in-exec", "1")
    r.set("in-script", "1")
    assert sorted(wait_keys(t, [b"in-exec", b"in-script"])) == [b"in-exec", b"in-script"]


def test_optin_caching_holds_through_multi(server, r):
    t = tracker(server, "OPTIN")
    assert t.cmd("CLIENT", "CACHING", "yes") == "OK"
    assert t.cmd("MULTI") == "OK"
    t.cmd("GET", "oa")
    t.cmd("GET", "ob")
    assert t.cmd("EXEC") == [None, None]
    t.cmd("GET", "oc")  # CACHING ended with EXEC
    r.mset({"oc": 1, "oa": 1, "ob": 1})
    assert sorted(wait_keys(t, [b"oa", b"ob"])) == [b"oa", b"ob"]
    assert quiet(t, 0.2) == []


def test_expired_key_is_invalidated(server, r):
    r.set("exp", "v", px=100)
    t = tracker(server)
    assert t.cmd("GET", "exp") == b"v"
    time.sleep(0.15)
    assert r.get("exp") is None  # expires it now (active expiry may have been first)
    assert wait_keys(t, [b"exp"]) == [b"exp"]


@pytest.mark.parametrize("threads", [2, 4])
def test_own_multi_worker_write_gets_its_reply_first(spawn_server, threads):
    srv = spawn_server(threads=threads)
    keys = spread_keys(threads, "own")
    for _ in range(threads):  # the tracking client on each worker in turn
        t = tracker(srv)
        for k in keys:
            t.cmd("GET", k)
        t.send_command("MSET", *[x for k in keys for x in (k, "1")])
        assert t.reply_bytes() == b"+OK\r\n"
        assert sorted(wait_keys(t, [k.encode() for k in keys])) == sorted(k.encode() for k in keys)
        t.send_command("FLUSHALL")
        assert t.reply_bytes() == b"+OK\r\n"
        assert t.reply_bytes() == INV + b"_\r\n"
        t.close()


def test_read_of_an_expired_key_keeps_it_tracked(server, r):
    r.set("lazy", "v", px=50)
    time.sleep(0.1)
    t = tracker(server)
    assert t.cmd("GET", "lazy") is None  # it may expire now, during this read
    r.set("lazy", "new")  # the nil the client cached is invalidated
    assert wait_keys(t, [b"lazy"]) == [b"lazy"]
