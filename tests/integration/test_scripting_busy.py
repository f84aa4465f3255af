"""Commands sent while a long script runs get -BUSY once it passes busy-reply-threshold, also
those that arrived before that, while the script already held their keys' shard (Lavik queues
them behind the script's shard locks; Redis leaves them unread in the socket until its script
hook looks at the clients). SCRIPT KILL and FUNCTION KILL still stop the script.

Expected replies are Redis 7.0.15's (run with LAVIK_TEST_TARGET=redis), at 1, 2 and 4 threads.
"""
import hashlib
import threading
import time

import redis

from conftest import spread_keys

BUSY_EVAL = ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             "SHUTDOWN NOSAVE.")
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")
LOOP = "local i = 0 while true do i = i + 1 end"
THRESHOLD_MS = 800


def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()


def in_thread(fn):
    box = []

    def run():
        try:
            box.append(fn())
        except redis.RedisError as e:
            box.append(str(e))

    t = threading.Thread(target=run)
    t.start()
    return t, box


def rejected_gets(c):
    stats = c.info("commandstats").get("cmdstat_get", {})
    return int(stats.get("rejected_calls", 0))


def stop_script(admin, kill, script):
    """A failed test must not leave its endless script running."""
    if script is not None and script.is_alive():
        try:
            kill(admin)
        except redis.ResponseError:
            pass
        script.join(5)


def queued_commands_get_busy(srv, start_script, busy_text, kill, killed_text):
    admin = srv.client()
    admin.config_set("busy-reply-threshold", THRESHOLD_MS)
    clients = [srv.client() for _ in range(8)]
    scripters = [srv.client() for _ in range(3)]
    script = None
    try:
        for c in clients + scripters:
            c.ping()  # connected before the script starts
        before = rejected_gets(admin)
        script, script_box = in_thread(start_script)
        time.sleep(0.2)  # the script runs, well before the threshold
        keys = spread_keys(4, "busyq") * 2
        started = time.monotonic()
        gets = [in_thread(lambda c=c, k=k: c.get(k)) for c, k in zip(clients, keys)]
        # Other scripts too (Lavik: waiting for the running script's shard locks).
        gets += [in_thread(lambda c=c: c.eval("return redis.call('get', KEYS[1])", 1, "k"))
                 for c in scripters]
        for t, _ in gets:
            t.join(THRESHOLD_MS / 1000 + 5)
        waited = time.monotonic() - started
        # Each was answered while the script still ran (not when it ended).
        assert script.is_alive()
        assert [box for _, box in gets] == [[busy_text]] * len(gets)
        assert waited < THRESHOLD_MS / 1000 + 4
        assert kill(admin) in (True, "OK")  # redis-py: True for SCRIPT KILL, "OK" for FUNCTION
        script.join(5)
        assert not script.is_alive()
        assert script_box == [killed_text]
        assert rejected_gets(admin) - before == len(keys)  # INFO itself would get -BUSY before
        assert [c.get(k) for c, k in zip(clients, keys)] == [None] * len(keys)
    finally:
        stop_script(admin, kill, script)
        admin.config_set("busy-reply-threshold", 5000)
        for c in clients + scripters:
            c.close()
        admin.close()


def test_queued_commands_get_busy_from_eval(mserver):
    runner = mserver.client()
    queued_commands_get_busy(
        mserver, lambda: runner.eval(LOOP, 0), BUSY_EVAL, lambda c: c.script_kill(),
        f"Script killed by user with SCRIPT KILL... script: {sha1(LOOP)}, on @user_script:1.")
    runner.close()


def test_queued_commands_get_busy_from_fcall(mserver):
    runner = mserver.client()
    runner.function_load("#!lua name=spin\nredis.register_function{function_name='spin', "
                         f"callback=function(k, a) {LOOP} end, flags={{'no-writes'}}}}",
                         replace=True)
    try:
        queued_commands_get_busy(
            mserver, lambda: runner.fcall("spin", 0), BUSY_FUNCTION, lambda c: c.function_kill(),
            "Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.")
    finally:
        runner.function_delete("spin")
        runner.close()


def test_writes_queued_behind_a_busy_script_are_not_applied(mserver):
    admin = mserver.client()
    admin.config_set("busy-reply-threshold", THRESHOLD_MS)
    writer = mserver.client()
    writer.ping()
    runner = mserver.client()
    script = None
    try:
        script, _ = in_thread(lambda: runner.eval(LOOP, 0))
        time.sleep(0.2)
        t, box = in_thread(lambda: writer.set("busyw", "1"))
        t.join(THRESHOLD_MS / 1000 + 5)
        assert box == [BUSY_EVAL]
        assert admin.script_kill() is True
        script.join(5)
        assert admin.get("busyw") is None
    finally:
        stop_script(admin, lambda c: c.script_kill(), script)
        runner.close()
        admin.config_set("busy-reply-threshold", 5000)
        writer.close()
        admin.close()
