"""RESET (Redis 7.0): back to a new connection's state, +RESET in RESP2."""

import time

import pytest
import redis


def test_reset_discards_multi_and_watch(raw, r):
    c = raw()
    c.cmd("WATCH", "wk")
    c.cmd("MULTI")
    assert c.cmd("SET", "wk", "queued") == "QUEUED"
    c.send_command("RESET")
    assert c.reply_bytes() == b"+RESET\r\n"
    c.send_command("EXEC")
    assert c.reply_bytes() == b"-ERR EXEC without MULTI\r\n"
    assert r.get("wk") is None
    # The watch is gone too: a change to the key does not abort a later transaction.
    c.cmd("MULTI")
    r.set("wk", "changed")
    c.cmd("SET", "wk", "mine")
    assert c.cmd("EXEC") == ["OK"]
    assert r.get("wk") == "mine"


def test_reset_back_to_resp2_name_and_reply_on(raw):
    c = raw()
    c.cmd("HELLO", "3")
    c.cmd("CLIENT", "SETNAME", "someone")
    c.cmd("CLIENT", "NO-EVICT", "on")
    c.send_command("CLIENT", "REPLY", "OFF")
    c.send_command("RESET")
    assert c.reply_bytes() == b"+RESET\r\n"
    c.send_command("CLIENT", "GETNAME")
    assert c.reply_bytes() == b"$-1\r\n"  # RESP2 null: the name and RESP3 are gone
    info = c.cmd("CLIENT", "INFO").decode()
    # Redis 7.0 keeps CLIENT NO-EVICT across RESET (7.2 clears it).
    assert " flags=e " in info and " db=0 " in info and " resp=2" in info
    # Under HELLO 3 the reply is the same simple string.
    c.cmd("HELLO", "3")
    c.send_command("RESET")
    assert c.reply_bytes() == b"+RESET\r\n"


def test_reset_unsubscribes_everything_quietly(raw, r):
    c = raw()
    c.cmd("SUBSCRIBE", "ch1", "ch2")
    c.reply()
    c.send_command("PSUBSCRIBE", "p*")
    c.reply()
    c.send_command("RESET")
    assert c.reply_bytes() == b"+RESET\r\n"
    assert r.publish("ch1", "x") == 0
    assert r.publish("pq", "x") == 0
    assert c.cmd("PING") == "PONG"  # no longer in the subscribed context
    assert r.pubsub_numpat() == 0


def test_reset_leaves_monitor(raw, r):
    c = raw()
    assert c.cmd("MONITOR") == "OK"
    c.send_command("RESET")
    assert c.reply_bytes() == b"+RESET\r\n"
    r.set("after-reset", "1")
    time.sleep(0.05)
    assert c.cmd("GET", "after-reset") == b"1"  # a keyspace command works again: no monitor


def test_reset_back_to_the_default_user(raw, r):
    r.execute_command("ACL", "SETUSER", "resetter", "on", ">pw", "+@all", "~*")
    try:
        c = raw()
        assert c.cmd("AUTH", "resetter", "pw") == "OK"
        assert c.cmd("ACL", "WHOAMI") == b"resetter"
        c.send_command("RESET")
        assert c.reply_bytes() == b"+RESET\r\n"
        assert c.cmd("ACL", "WHOAMI") == b"default"
        # With a password on the default user, RESET leaves the connection unauthenticated.
        r.execute_command("ACL", "SETUSER", "default", ">resetpass")
        try:
            c2 = raw()
            assert c2.cmd("AUTH", "resetpass") == "OK"
            c2.send_command("RESET")
            assert c2.reply_bytes() == b"+RESET\r\n"
            c2.send_command("GET", "x")
            assert c2.reply_bytes().startswith(b"-NOAUTH ")
        finally:
            r.execute_command("ACL", "SETUSER", "default", "nopass")
    finally:
        r.execute_command("ACL", "DELUSER", "resetter")


def test_reset_arity(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("RESET", "x")
    assert str(e.value) == "wrong number of arguments for 'reset' command"
