"""Blocked list clients are served by the write that makes their key ready, before any later
command sees the key (Redis's handleClientsBlockedOnKeys): a pop pipelined right after the push,
or sent by a third client once the push has answered, finds the element gone to the client that
blocked first. Any write that leaves a list at the key wakes its waiters (RENAME, LMOVE, a push
inside MULTI/EXEC); across 1, 2 and 4 worker threads."""

from conftest import spread_keys, wait_blocked


def test_push_then_pipelined_pop_goes_to_the_blocked_client(mserver):
    ctl = mserver.client()
    for key in spread_keys(4, "hp"):
        w = mserver.raw()
        c = mserver.raw()
        w.send_command("BLPOP", key, "0")
        wait_blocked(ctl, 1)
        c.send(b"".join(
            [b"*3\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(key), key.encode()),
             b"*2\r\n$4\r\nLPOP\r\n$%d\r\n%s\r\n" % (len(key), key.encode())]))
        assert c.reply() == 1
        assert c.reply() is None
        assert w.reply() == [key.encode(), b"v"]
        w.close()
        c.close()


def test_third_client_pop_after_the_push_finds_nothing(mserver):
    pusher, popper = mserver.client(), mserver.client()
    for key in spread_keys(4, "ht"):
        first, second = mserver.raw(), mserver.raw()
        first.send_command("BRPOP", key, "0")
        wait_blocked(pusher, 1)
        second.send_command("BLMPOP", "0", "1", key, "LEFT", "COUNT", "2")
        wait_blocked(pusher, 2)
        assert pusher.rpush(key, "a", "b", "c", "d") == 4
        # Both blocked clients were served before RPUSH answered: one element is left.
        assert popper.lpop(key, 5) == ["c"]
        assert first.reply() == [key.encode(), b"d"]
        assert second.reply() == [key.encode(), [b"a", b"b"]]
        first.close()
        second.close()


def test_many_pushes_and_interleaved_pops_serve_waiters_in_order(mserver):
    c = mserver.client()
    waiters = []
    for i in range(5):
        w = mserver.raw()
        w.send_command("BLPOP", "order", "0")
        wait_blocked(c, i + 1)
        waiters.append(w)
    for i in range(5):
        c.rpush("order", f"e{i}")
        assert c.lpop("order") is None
    for i, w in enumerate(waiters):
        assert w.reply() == [b"order", f"e{i}".encode()]
        w.close()


def test_rename_and_lmove_wake_list_waiters(mserver):
    c = mserver.client()
    w = mserver.raw()
    c.rpush("{r}src", "x")
    w.send_command("BLPOP", "{r}dst", "0")
    wait_blocked(c, 1)
    c.rename("{r}src", "{r}dst")
    assert w.reply() == [b"{r}dst", b"x"]
    assert c.exists("{r}dst") == 0
    src, dst = spread_keys(2, "lm")
    c.rpush(src, "y")
    w.send_command("BRPOP", dst, "0")
    wait_blocked(c, 1)
    assert c.lmove(src, dst, "LEFT", "RIGHT") == "y"
    assert c.exists(dst) == 0
    assert w.reply() == [dst.encode(), b"y"]


def test_transaction_push_serves_after_exec(mserver):
    c = mserver.client()
    w = mserver.raw()
    w.send_command("BLPOP", "txk", "0")
    wait_blocked(c, 1)
    # The transaction's own LPOP sees its push; the blocked client keeps waiting.
    p = c.pipeline(transaction=True)
    p.rpush("txk", "a")
    p.lpop("txk")
    assert p.execute() == [1, "a"]
    p = c.pipeline(transaction=True)
    p.rpush("txk", "b", "c")
    p.llen("txk")
    assert p.execute() == [2, 2]
    assert w.reply() == [b"txk", b"b"]
    assert c.lrange("txk", 0, -1) == ["c"]
