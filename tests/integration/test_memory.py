"""Memory admission: a server over its memory limit refuses denyoom commands with Redis's OOM
error while reads and deletes keep working, and accepts writes again once memory is freed.

The first test runs against redis-server too (its `maxmemory` with the default noeviction
policy); the others are about lavik's --max-memory flag and CONFIG parameter."""

import subprocess

import pytest
import redis

from conftest import LAVIK_BIN, RespError, free_port, wait_until

OOM = RespError("OOM command not allowed when used memory > 'maxmemory'.")
BATCH = 1000
MAX_KEYS = 2_000_000


def info_memory(c):
    return c.info("memory")


def fill_until_oom(raw_conn, prefix="k"):
    """Pipelines SETs of small values until one is refused; returns (keys written, the error)."""
    written = 0
    while written < MAX_KEYS:
        data = b"".join(
            b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$8\r\nvvvvvvvv\r\n" % (len(k), k)
            for k in (f"{prefix}:{written + i}".encode() for i in range(BATCH)))
        raw_conn.send(data)
        replies = [raw_conn.reply() for _ in range(BATCH)]
        for i, rep in enumerate(replies):
            if isinstance(rep, RespError):
                return written + i, rep
            assert rep == "OK", rep
        written += BATCH
    raise AssertionError(f"no OOM after {written} keys")


def set_works(c, key="after"):
    try:
        return c.set(key, "v") is True
    except Exception:  # noqa: BLE001 - the OOM error until the timer sees the freed memory
        return False


def check_oom_behaviour(raw_conn, c):
    """Fill → OOM; GET/DEL/DBSIZE still work; DELs and FLUSHALL make SET work again."""
    written, err = fill_until_oom(raw_conn)
    assert err == OOM
    assert written > 0
    # Every denyoom command is refused; reads and deletes are not.
    assert raw_conn.cmd("SET", "one-more", "x") == OOM
    assert raw_conn.cmd("APPEND", "k:0", "x") == OOM
    assert raw_conn.cmd("GET", "k:0") == b"vvvvvvvv"
    assert raw_conn.cmd("DBSIZE") == written
    assert raw_conn.cmd("EXISTS", "k:1") == 1
    assert raw_conn.cmd("DEL", "k:1") == 1
    assert raw_conn.cmd("PING") == "PONG"
    # Deleting every key frees the index: writes work again.
    for start in range(0, written, BATCH):
        keys = [f"k:{i}" for i in range(start, min(start + BATCH, written))]
        c.delete(*keys)
    assert wait_until(lambda: set_works(c)), info_memory(c)
    # Fill again, then FLUSHALL.
    c.delete("after")
    written, err = fill_until_oom(raw_conn)
    assert err == OOM
    assert c.flushall() is True
    assert wait_until(lambda: set_works(c)), info_memory(c)
    assert c.get("after") == "v"


def test_maxmemory_refuses_writes_until_memory_is_freed(spawn_server):
    s = spawn_server()
    c = s.client()
    used = int(c.info("memory")["used_memory"])
    # Redis: a limit just above what the empty server holds. Lavik counts it the same way (its
    # `maxmemory` is a second limit next to max-memory).
    assert c.config_set("maxmemory", str(used + 1024 * 1024)) is True
    with s.raw() as raw_conn:
        check_oom_behaviour(raw_conn, c)
    assert c.config_set("maxmemory", "0") is True
    assert c.set("free", "1") is True


def empty_server_usage(spawn_server):
    """The non-evictable memory of an empty lavik with the test's settings."""
    s = spawn_server()
    c = s.client()
    m = c.info("memory")
    return int(m["used_memory_not_evictable"]), s


@pytest.mark.lavik_only
def test_max_memory_flag(spawn_server):
    base, probe = empty_server_usage(spawn_server)
    probe.terminate()
    limit = base + 1024 * 1024
    s = spawn_server(extra_args=["--max-memory", str(limit)])
    c = s.client()
    assert c.config_get("max-memory") == {"max-memory": str(limit)}
    m = c.info("memory")
    assert int(m["maxmemory"]) == limit
    # The value cache gives way first: it is cut to what the rest leaves.
    assert wait_until(lambda: int(c.info("memory")["used_memory"]) <= limit)
    with s.raw() as raw_conn:
        check_oom_behaviour(raw_conn, c)


@pytest.mark.lavik_only
def test_max_memory_config_set_live(spawn_server):
    s = spawn_server()
    c = s.client()
    base = int(c.info("memory")["used_memory_not_evictable"])
    # A limit below what the empty server already holds: writes are refused (once the workers
    # have measured themselves, within ~100 ms of start-up; from then on at once).
    assert c.config_set("max-memory", str(base // 2)) is True
    assert c.config_get("max-memory") == {"max-memory": str(base // 2)}
    with s.raw() as raw_conn:
        assert wait_until(lambda: raw_conn.cmd("SET", "k", "v") == OOM)
        c.delete("k")
        assert raw_conn.cmd("GET", "k") is None
        assert int(c.info("memory")["maxmemory"]) == base // 2
        # maxmemory is a second limit: the smaller of the two applies.
        assert c.config_set("max-memory", "0", "maxmemory", "1gb") is True
        assert int(c.info("memory")["maxmemory"]) == 1 << 30
        assert raw_conn.cmd("SET", "k", "v") == "OK"
        assert c.config_set("maxmemory", str(base // 2)) is True
        assert raw_conn.cmd("SET", "k", "v") == OOM
        assert c.config_set("maxmemory", "0") is True
        assert raw_conn.cmd("SET", "k", "v") == "OK"
    with pytest.raises(Exception, match="argument must be a memory value"):
        c.config_set("max-memory", "lots")


@pytest.mark.lavik_only
def test_max_memory_flag_units(spawn_server):
    s = spawn_server(extra_args=["--max-memory", "3gb"])
    assert s.client().config_get("max-memory") == {"max-memory": str(3 << 30)}


@pytest.mark.lavik_only
def test_maxmemory_clients_is_refused_not_ignored(spawn_server, tmp_path):
    """Client eviction is not there: maxmemory-clients other than 0 stops the start with the
    reason and CONFIG SET refuses it (0, Redis's default, is accepted)."""
    out = subprocess.run([str(LAVIK_BIN), "--port", str(free_port()), "--maxmemory-clients",
                          "1mb", "--data-file", str(tmp_path / "d.data"), "--log-dir",
                          str(tmp_path / "logs")], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1
    assert "maxmemory-clients: Lavik does not evict clients" in out.stdout + out.stderr
    c = spawn_server().client()
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("maxmemory-clients", "10%")
    assert "Lavik does not evict clients" in str(e.value)
    assert c.config_set("maxmemory-clients", "0") is True
