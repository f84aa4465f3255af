"""Pub/Sub: SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE and their UNSUBSCRIBE forms, PUBLISH/SPUBLISH counts
across workers, PUBSUB introspection, the RESP2 subscribed context, RESP3 push messages,
disconnect cleanup and the pubsub output buffer limit. Every test also passes against
redis-server 7.0 (LAVIK_TEST_TARGET=redis).
"""

import socket
import time

import pytest

from conftest import RespError, RespPush, encode_command, wait_until, worker_of


def names_per_worker(workers, prefix="ch"):
    """One channel name owned by each worker."""
    out = {}
    i = 0
    while len(out) < workers:
        name = f"{prefix}{i}"
        out.setdefault(worker_of(name, workers), name)
        i += 1
    return [out[w] for w in range(workers)]


def sub(conn, *args):
    """Sends a (un)subscribe command; returns its len(args)-1 confirmations (at least one)."""
    conn.send_command(*args)
    return [conn.reply() for _ in range(max(1, len(args) - 1))]


# --------------------------------------------------------------------------- confirmations


def test_subscribe_confirmations_exact_bytes(raw):
    c = raw()
    c.send_command("SUBSCRIBE", "a", "b", "a")
    assert c.reply_bytes() == b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    assert c.reply_bytes() == b"*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n"
    assert c.reply_bytes() == b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n"
    # Patterns count together with channels; shard channels count alone.
    assert sub(c, "PSUBSCRIBE", "h?llo", "a*") == [[b"psubscribe", b"h?llo", 3],
                                                   [b"psubscribe", b"a*", 4]]
    assert sub(c, "SSUBSCRIBE", "x", "y", "x") == [[b"ssubscribe", b"x", 1],
                                                  [b"ssubscribe", b"y", 2],
                                                  [b"ssubscribe", b"x", 2]]
    assert sub(c, "UNSUBSCRIBE", "zz") == [[b"unsubscribe", b"zz", 4]]
    got = sub(c, "UNSUBSCRIBE", "a", "b")
    assert got == [[b"unsubscribe", b"a", 3], [b"unsubscribe", b"b", 2]]
    got = sub(c, "PUNSUBSCRIBE", "x", "x")
    assert got == [[b"punsubscribe", b"x", 2], [b"punsubscribe", b"x", 2]]
    assert sub(c, "SUNSUBSCRIBE", "x", "q") == [[b"sunsubscribe", b"x", 1],
                                               [b"sunsubscribe", b"q", 1]]


def test_unsubscribe_all_and_nothing(raw):
    c = raw()
    for cmd in ("UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"):
        c.send_command(cmd)
        name = cmd.lower().encode()
        assert c.reply_bytes() == b"*3\r\n$%d\r\n%s\r\n$-1\r\n:0\r\n" % (len(name), name)
    sub(c, "SUBSCRIBE", "a", "b", "c")
    sub(c, "PSUBSCRIBE", "p*")
    c.send_command("UNSUBSCRIBE")
    got = [c.reply() for _ in range(3)]
    assert sorted(g[1] for g in got) == [b"a", b"b", b"c"]
    assert [g[2] for g in got] == [3, 2, 1]  # the pattern still counts
    c.send_command("UNSUBSCRIBE")  # nothing left among channels: one reply with a null name
    assert c.reply() == [b"unsubscribe", None, 1]
    assert sub(c, "PUNSUBSCRIBE") == [[b"punsubscribe", b"p*", 0]]
    assert c.cmd("PING") == "PONG"  # out of the subscribed context again


def test_unsubscribe_nothing_resp3(raw):
    c = raw()
    c.cmd("HELLO", "3")
    c.send_command("UNSUBSCRIBE")
    assert c.reply_bytes() == b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"


# --------------------------------------------------------------------------- delivery


@pytest.mark.parametrize("threads", [2, 4])
def test_publish_reaches_subscribers_on_every_worker(server_factory, threads, target):
    srv = server_factory(threads)
    workers = threads if target == "lavik" else 1
    channels = names_per_worker(max(workers, 2))
    # Connections are dealt round-robin to the workers: 2*threads subscribers live everywhere.
    subs = [srv.raw() for _ in range(2 * threads)]
    pub = srv.raw()
    try:
        for s in subs:
            sub(s, "SUBSCRIBE", *channels)
        for ch in channels:
            assert pub.cmd("PUBLISH", ch, "hi-" + ch) == len(subs)
            for s in subs:
                assert s.reply() == [b"message", ch.encode(), b"hi-" + ch.encode()]
        assert pub.cmd("PUBLISH", "nobody-listens", "x") == 0
        # Messages from one publisher arrive in publish order.
        for i in range(50):
            pub.send_command("PUBLISH", channels[i % len(channels)], str(i))
        assert [pub.reply() for _ in range(50)] == [len(subs)] * 50
        for s in subs:
            assert [s.reply()[2] for _ in range(50)] == [str(i).encode() for i in range(50)]
    finally:
        for s in subs + [pub]:
            s.close()


@pytest.mark.parametrize("threads", [2, 4])
def test_each_publishers_messages_arrive_in_order_across_channels(server_factory, threads, target):
    """Several publishers (on different workers) pipeline messages round-robin over channels of
    every worker; every subscriber sees each publisher's messages complete and in order, through
    channels and patterns alike."""
    srv = server_factory(threads)
    channels = names_per_worker(max(threads if target == "lavik" else 1, 2), prefix="ord")
    subs = [srv.raw() for _ in range(threads)]
    psubs = [srv.raw() for _ in range(threads)]
    pubs = [srv.raw() for _ in range(threads)]
    n = 60
    try:
        for s in subs:
            sub(s, "SUBSCRIBE", *channels)
        for s in psubs:
            sub(s, "PSUBSCRIBE", "ord*")
        for k, p in enumerate(pubs):
            for i in range(n):
                p.send_command("PUBLISH", channels[(i + k) % len(channels)], f"{k}:{i}")
        for p in pubs:
            assert [p.reply() for _ in range(n)] == [len(subs) + len(psubs)] * n
        for s in subs + psubs:
            got = {}
            for _ in range(n * len(pubs)):
                k, i = s.reply()[-1].decode().split(":")
                got.setdefault(int(k), []).append(int(i))
            assert got == {k: list(range(n)) for k in range(len(pubs))}
    finally:
        for c in subs + psubs + pubs:
            c.close()


@pytest.mark.parametrize("threads", [2, 4])
def test_patterns_across_workers_and_counts(server_factory, threads):
    srv = server_factory(threads)
    a, b, pub = srv.raw(), srv.raw(), srv.raw()
    try:
        sub(a, "PSUBSCRIBE", "h?llo", "h*")
        sub(b, "PSUBSCRIBE", "h[ae]llo", "h\\*x")
        sub(b, "SUBSCRIBE", "hello")
        # a matches twice (two patterns), b once by pattern and once by channel.
        assert pub.cmd("PUBLISH", "hello", "m") == 4
        got_a = sorted(tuple(a.reply()) for _ in range(2))
        assert got_a == [(b"pmessage", b"h*", b"hello", b"m"),
                         (b"pmessage", b"h?llo", b"hello", b"m")]
        got_b = [b.reply() for _ in range(2)]
        assert got_b[0] == [b"message", b"hello", b"m"]  # the channel first, as Redis
        assert got_b[1] == [b"pmessage", b"h[ae]llo", b"hello", b"m"]
        assert pub.cmd("PUBLISH", "h*x", "lit") == 2  # h\*x matches only a literal '*'
        assert pub.cmd("PUBLISH", "hax", "no") == 1
        assert pub.cmd("PUBLISH", "hillo", "i") == 2
        assert pub.cmd("PUBLISH", "", "empty") == 0  # an empty channel matches no pattern
        assert pub.cmd("PUBSUB", "NUMPAT") == 4
        # a still holds the pmessages of the PUBLISHes above: skip them to the confirmation, or
        # the next PUBLISH can race the unsubscribe.
        a.send_command("PUNSUBSCRIBE", "h*")
        while a.reply()[0] != b"punsubscribe":
            pass
        assert pub.cmd("PUBLISH", "hallo", "x") == 2
    finally:
        for c in (a, b, pub):
            c.close()


def test_shard_channels_are_their_own_namespace(raw):
    s, pub = raw(), raw()
    sub(s, "SSUBSCRIBE", "x", "y")
    sub(s, "SUBSCRIBE", "z")
    assert pub.cmd("SPUBLISH", "x", "m3") == 1
    assert s.reply() == [b"smessage", b"x", b"m3"]
    assert pub.cmd("PUBLISH", "x", "no") == 0
    assert pub.cmd("SPUBLISH", "z", "no") == 0
    assert sorted(pub.cmd("PUBSUB", "SHARDCHANNELS")) == [b"x", b"y"]
    assert pub.cmd("PUBSUB", "SHARDNUMSUB", "x", "q") == [b"x", 1, b"q", 0]
    assert pub.cmd("PUBSUB", "NUMSUB", "x") == [b"x", 0]
    assert sub(s, "SUNSUBSCRIBE") != []
    assert wait_until(lambda: pub.cmd("PUBSUB", "SHARDCHANNELS") == [])


def test_publisher_subscribed_to_its_own_channel_resp3(raw):
    c = raw()
    c.cmd("HELLO", "3")
    assert c.cmd("SUBSCRIBE", "self") == [b"subscribe", b"self", 1]
    c.send_command("PUBLISH", "self", "me")
    # The push precedes the reply to PUBLISH, as in Redis.
    assert c.reply() == RespPush([b"message", b"self", b"me"])
    assert c.reply() == 1


def test_redis_py_pubsub_object(r):
    p = r.pubsub()
    p.subscribe("news")
    p.psubscribe("sport.*")
    assert p.get_message(timeout=2)["type"] == "subscribe"
    assert p.get_message(timeout=2)["type"] == "psubscribe"
    assert r.publish("news", "hi") == 1
    assert r.publish("sport.ski", "snow") == 1
    m = p.get_message(timeout=2)
    assert m == {"type": "message", "pattern": None, "channel": "news", "data": "hi"}
    m = p.get_message(timeout=2)
    assert m == {"type": "pmessage", "pattern": "sport.*", "channel": "sport.ski",
                 "data": "snow"}
    assert r.pubsub_numsub("news", "other") == [("news", 1), ("other", 0)]
    assert r.pubsub_numpat() == 1
    p.unsubscribe()
    p.punsubscribe()
    assert p.get_message(timeout=2)["type"] == "unsubscribe"
    assert p.get_message(timeout=2)["type"] == "punsubscribe"
    p.close()


# --------------------------------------------------------------------------- PUBSUB


@pytest.mark.parametrize("threads", [2, 4])
def test_pubsub_introspection(server_factory, threads):
    srv = server_factory(threads)
    chans = names_per_worker(4, prefix="intro")
    a, b, q = srv.raw(), srv.raw(), srv.raw()
    try:
        sub(a, "SUBSCRIBE", *chans)
        sub(b, "SUBSCRIBE", chans[0], chans[1])
        sub(b, "PSUBSCRIBE", "intro*", "x?")
        sub(a, "PSUBSCRIBE", "intro*")
        assert sorted(q.cmd("PUBSUB", "CHANNELS")) == sorted(c.encode() for c in chans)
        assert sorted(q.cmd("PUBSUB", "CHANNELS", "intro*")) == sorted(c.encode() for c in chans)
        assert q.cmd("PUBSUB", "CHANNELS", chans[2]) == [chans[2].encode()]
        assert q.cmd("PUBSUB", "CHANNELS", "nomatch*") == []
        want = [chans[0].encode(), 2, chans[1].encode(), 2, chans[2].encode(), 1, b"zz", 0]
        assert q.cmd("PUBSUB", "NUMSUB", chans[0], chans[1], chans[2], "zz") == want
        assert q.cmd("PUBSUB", "NUMSUB") == []
        assert q.cmd("PUBSUB", "NUMPAT") == 2  # distinct patterns
        assert q.cmd("PUBLISH", chans[0], "x") == 4
    finally:
        for c in (a, b, q):
            c.close()


def test_pubsub_errors_and_help(raw):
    c = raw()
    assert c.cmd("PUBSUB") == RespError("ERR wrong number of arguments for 'pubsub' command")
    assert c.cmd("PUBSUB", "FOO") == RespError("ERR unknown subcommand 'FOO'. Try PUBSUB HELP.")
    assert c.cmd("PUBSUB", "NUMPAT", "x") == RespError(
        "ERR wrong number of arguments for 'pubsub|numpat' command")
    assert c.cmd("PUBSUB", "CHANNELS", "a", "b") == RespError(
        "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.")
    assert c.cmd("PUBSUB", "SHARDCHANNELS", "a", "b") == RespError(
        "ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. "
        "Try PUBSUB HELP.")
    assert c.cmd("SUBSCRIBE") == RespError("ERR wrong number of arguments for 'subscribe' command")
    assert c.cmd("PUBLISH", "a") == RespError("ERR wrong number of arguments for 'publish' command")
    help_lines = c.cmd("PUBSUB", "HELP")
    assert len(help_lines) == 14
    assert help_lines[0] == "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_lines[-1] == "    Prints this help."


# --------------------------------------------------------------------------- contexts


def test_resp2_subscribed_context(raw):
    c = raw()
    sub(c, "SUBSCRIBE", "a")
    msg = ("ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
           "RESET are allowed in this context")
    assert c.cmd("GET", "a") == RespError(msg.format("get"))
    assert c.cmd("CLIENT", "LIST") == RespError(msg.format("client|list"))
    assert c.cmd("PUBLISH", "a", "b") == RespError(msg.format("publish"))
    assert c.cmd("FOO") == RespError("ERR unknown command 'FOO', with args beginning with: ")
    c.send_command("PING")
    assert c.reply_bytes() == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    assert c.cmd("PING", "hi") == [b"pong", b"hi"]
    sub(c, "UNSUBSCRIBE")
    assert c.cmd("GET", "a") is None
    assert c.cmd("PING") == "PONG"


def test_resp3_subscribed_client_runs_anything(raw):
    c, pub = raw(), raw()
    c.cmd("HELLO", "3")
    c.send_command("SUBSCRIBE", "a")
    assert c.reply_bytes() == b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    assert c.cmd("GET", "a") is None
    assert c.cmd("PING") == "PONG"
    assert pub.cmd("PUBLISH", "a", "z") == 1
    c.drain(0.2)
    assert c.reply_bytes() == b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nz\r\n"
    c.send_command("PSUBSCRIBE", "q*")
    assert c.reply_bytes() == b">3\r\n$10\r\npsubscribe\r\n$2\r\nq*\r\n:2\r\n"
    assert pub.cmd("PUBLISH", "qq", "zz") == 1
    c.drain(0.2)
    assert c.reply_bytes() == b">4\r\n$8\r\npmessage\r\n$2\r\nq*\r\n$2\r\nqq\r\n$2\r\nzz\r\n"


def test_client_list_shows_subscriptions(raw):
    c, q = raw(), raw()
    sub(c, "SUBSCRIBE", "a", "b")
    sub(c, "PSUBSCRIBE", "p*")
    sub(c, "SSUBSCRIBE", "s")
    cid = None
    for line in q.cmd("CLIENT", "LIST", "TYPE", "pubsub").decode().splitlines():
        f = dict(p.partition("=")[::2] for p in line.split(" "))
        cid = f["id"]
        assert (f["flags"], f["sub"], f["psub"], f["ssub"]) == ("P", "2", "1", "1")
    assert cid is not None
    normal = q.cmd("CLIENT", "LIST", "TYPE", "normal").decode()
    assert f"id={cid} " not in normal
    assert q.cmd("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert c.closed()


# --------------------------------------------------------------------------- cleanup / limits


@pytest.mark.parametrize("threads", [2, 4])
def test_disconnect_drops_subscriptions(server_factory, threads):
    srv = server_factory(threads)
    chans = names_per_worker(4, prefix="gone")
    q = srv.raw()
    subs = [srv.raw() for _ in range(threads)]
    try:
        for s in subs:
            sub(s, "SUBSCRIBE", *chans)
            sub(s, "PSUBSCRIBE", "gone-pattern*")
            sub(s, "SSUBSCRIBE", chans[0])
        assert q.cmd("PUBSUB", "NUMSUB", chans[3]) == [chans[3].encode(), threads]
        for s in subs:
            s.close()
        assert wait_until(lambda: q.cmd("PUBSUB", "NUMSUB", *chans)[1::2] == [0] * 4)
        assert wait_until(lambda: q.cmd("PUBSUB", "NUMPAT") == 0)
        assert wait_until(lambda: q.cmd("PUBSUB", "SHARDNUMSUB", chans[0])[1] == 0)
        assert q.cmd("PUBSUB", "CHANNELS", "gone*") == []
        assert q.cmd("PUBLISH", chans[1], "x") == 0
    finally:
        q.close()


def test_slow_subscriber_is_disconnected(server):
    admin = server.client()
    old = admin.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    admin.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 1")
    slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect(("127.0.0.1", server.port))
    other = server.raw()
    pub = server.client()
    try:
        slow.sendall(encode_command("SUBSCRIBE", "firehose"))
        time.sleep(0.2)  # the slow client never reads again
        assert pub.pubsub_numsub("firehose") == [("firehose", 1)]
        payload = "x" * 65536
        gone = False
        for i in range(4000):  # at most ~256 MB if the limit did nothing
            pub.publish("firehose", payload)
            if i % 20 == 19 and pub.pubsub_numsub("firehose") == [("firehose", 0)]:
                gone = True
                break
        assert gone, "the subscriber that does not read was never disconnected"
        assert other.cmd("PING") == "PONG"  # everybody else keeps working
        assert pub.publish("firehose", "after") == 0
        assert other.cmd("SET", "k", "v") == "OK"
    finally:
        admin.config_set("client-output-buffer-limit", old)
        slow.close()
        other.close()
        pub.close()
        admin.close()
