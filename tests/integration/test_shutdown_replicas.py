"""SHUTDOWN (and SIGTERM) wait for lagging replicas, as Redis 7.0 does (doc/replication.md,
"SHUTDOWN and lagging replicas"): unless NOW, or shutdown-timeout is 0, the master holds writes,
sends REPLCONF GETACK * and waits up to shutdown-timeout seconds for every replica to
acknowledge the whole stream; INFO server shows shutdown_in_milliseconds meanwhile; SHUTDOWN
ABORT from another client ends the wait and the server goes on. A replica is made to lag by
stopping its process (SIGSTOP). Every wait is bounded."""

import os
import signal
import threading
import time

import pytest
import redis

from conftest import wait_until
from test_replication import client
from test_replication_master import settled, spawn_master, spawn_redis_replica

ERR_SHUTDOWN = "Errors trying to SHUTDOWN. Check logs."


class Stopped:
    """The replica's process stopped (it reads nothing, acknowledges nothing) for the block."""

    def __init__(self, server):
        self.pid = server.proc.pid

    def __enter__(self):
        os.kill(self.pid, signal.SIGSTOP)
        return self

    def resume(self):
        os.kill(self.pid, signal.SIGCONT)

    def __exit__(self, *exc):
        self.resume()


def shutdown_in_thread(server, *args):
    """SHUTDOWN from its own connection in a thread; .result holds its reply or error text,
    or "closed" if the server closed the connection (it exited)."""
    c = redis.Redis(host="127.0.0.1", port=server.port, decode_responses=True,
                    socket_timeout=30)
    out = {}

    def run():
        try:
            out["reply"] = c.execute_command("SHUTDOWN", *args)
        except redis.ResponseError as e:
            out["reply"] = str(e)
        except redis.ConnectionError:
            out["reply"] = "closed"

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.result = out
    return t


def waiting(m):
    """INFO server's shutdown_in_milliseconds, or None when no shutdown is in progress."""
    return m.info("server").get("shutdown_in_milliseconds")


def lagging_pair(spawn_server):
    master, m = spawn_master(spawn_server)
    replica, r = spawn_redis_replica(spawn_server, master)
    m.set("before", "1")
    assert settled(m, r)
    return master, m, replica, r


def test_shutdown_waits_for_a_lagging_replica_and_abort_resumes(spawn_server):
    master, m, replica, r = lagging_pair(spawn_server)
    with Stopped(replica):
        m.set("k", "v")
        t = shutdown_in_thread(master)
        assert wait_until(lambda: waiting(m) is not None, 5), "no shutdown in progress"
        assert 0 < waiting(m) <= 10000
        time.sleep(0.5)
        assert m.ping() and m.get("k") == "v"  # reads go on
        # Writes are held (CLIENT UNPAUSE does not release them), until the abort.
        held = redis.Redis(host="127.0.0.1", port=master.port, decode_responses=True,
                           socket_timeout=1)
        with pytest.raises(redis.TimeoutError):
            held.set("held", "1")
        assert m.execute_command("CLIENT", "UNPAUSE") == "OK"
        with pytest.raises(redis.TimeoutError):
            held.set("held", "2")
        second = shutdown_in_thread(master, "NOSAVE")  # joins the wait
        time.sleep(0.3)
        assert t.is_alive() and second.is_alive()
        assert m.execute_command("SHUTDOWN", "ABORT") is True  # redis-py: +OK
        for th in (t, second):
            th.join(5)
            assert not th.is_alive(), "SHUTDOWN was not answered after ABORT"
            assert th.result["reply"] == ERR_SHUTDOWN
        assert waiting(m) is None
        assert m.set("after", "1")
    assert master.proc.poll() is None
    assert settled(m, r) and r.get("after") == "1" and r.get("k") == "v"


def test_shutdown_ends_once_the_replica_has_caught_up(spawn_server):
    master, m, replica, r = lagging_pair(spawn_server)
    with Stopped(replica) as stopped:
        m.set("k", "v")
        t = shutdown_in_thread(master, "NOSAVE")
        assert wait_until(lambda: waiting(m) is not None, 5)
        time.sleep(1)
        assert master.proc.poll() is None and m.ping()  # still waiting for it
        stopped.resume()
        master.proc.wait(timeout=8)  # well before shutdown-timeout's 10 s
    t.join(5)
    assert t.result["reply"] == "closed"
    assert r.get("k") == "v"


def test_shutdown_timeout_gives_up_on_a_replica_that_stays_behind(spawn_server):
    master, m, replica, r = lagging_pair(spawn_server)
    m.config_set("shutdown-timeout", 1)
    with Stopped(replica):
        m.set("k", "v")
        started = time.monotonic()
        t = shutdown_in_thread(master, "NOSAVE")
        master.proc.wait(timeout=8)
        assert time.monotonic() - started >= 0.9  # it did wait its second
    t.join(5)
    assert t.result["reply"] == "closed"


@pytest.mark.parametrize("how", ["NOW", "timeout 0"])
def test_shutdown_now_or_timeout_0_does_not_wait(spawn_server, how):
    master, m, replica, r = lagging_pair(spawn_server)
    args = ["NOSAVE"]
    if how == "NOW":
        args.append("NOW")
    else:
        m.config_set("shutdown-timeout", 0)
    with Stopped(replica):
        m.set("k", "v")
        t = shutdown_in_thread(master, *args)
        master.proc.wait(timeout=5)  # shutdown-timeout is 10 s otherwise
    t.join(5)
    assert t.result["reply"] == "closed"


def test_sigterm_waits_too_and_abort_keeps_the_server(spawn_server):
    master, m, replica, r = lagging_pair(spawn_server)
    with Stopped(replica):
        m.set("k", "v")
        master.proc.send_signal(signal.SIGTERM)
        assert wait_until(lambda: waiting(m) is not None, 5), "SIGTERM did not wait"
        assert m.execute_command("SHUTDOWN", "ABORT") is True  # redis-py: +OK
        assert waiting(m) is None and m.set("after", "1")
        time.sleep(0.5)
        assert master.proc.poll() is None
        # shutdown-on-sigterm now: no wait.
        m.config_set("shutdown-on-sigterm", "now")
        master.proc.send_signal(signal.SIGTERM)
        master.proc.wait(timeout=5)


def test_shutdown_arguments(spawn_server):
    master = spawn_server()
    m = client(master)
    for args in (["ABORT", "NOW"], ["NOSAVE", "SAVE"], ["ABORT", "NOSAVE"], ["LATER"]):
        with pytest.raises(redis.ResponseError) as e:
            m.execute_command("SHUTDOWN", *args)
        assert str(e.value) == "syntax error", args
    with pytest.raises(redis.ResponseError) as e:
        m.execute_command("SHUTDOWN", "ABORT")
    assert str(e.value) == "No shutdown in progress."
    assert m.config_get("shutdown-timeout") == {"shutdown-timeout": "10"}
    assert m.ping()
