"""Client administration: CLIENT LIST/INFO fields, KILL, PAUSE/UNPAUSE, NO-EVICT, REPLY, MONITOR,
and the per-client limits (timeout, query and output buffer limits, proto-max-bulk-len,
protected mode). Everything but MAXAGE (Redis 7.4) also passes against redis-server 7.0.
"""

import os
import socket
import stat
import subprocess
import time

import pytest
import redis

from conftest import RespError, encode_command, wait_until

REDIS_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub",
                "ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl",
                "oll", "omem", "tot-mem", "events", "cmd", "user", "redir", "resp"]


def fields(line):
    if isinstance(line, bytes):
        line = line.decode()
    out = {}
    for part in line.strip().split(" "):
        k, _, v = part.partition("=")
        out[k] = v
    return out


def listing(conn, *args):
    text = conn.cmd("CLIENT", "LIST", *args)
    return [fields(l) for l in text.decode().split("\n") if l]


def by_id(conn):
    return {int(f["id"]): f for f in listing(conn)}


def silent(conn, t=0.3):
    """True if nothing arrives on conn within t seconds (the command is held)."""
    if conn.buf:
        return False
    conn.sock.settimeout(t)
    try:
        data = conn.sock.recv(1 << 16)
    except socket.timeout:
        return True
    finally:
        conn.sock.settimeout(10)
    conn.buf += data
    return False


def drain(conn, t=0.3):
    """Everything that arrives within t seconds."""
    conn.drain(t)
    out = bytes(conn.buf)
    conn.buf.clear()
    return out


# --------------------------------------------------------------------------- LIST / INFO


def test_client_list_has_every_redis_field_in_order(raw):
    c = raw()
    c.cmd("CLIENT", "SETNAME", "lister")
    line = c.cmd("CLIENT", "INFO").decode()
    assert line.endswith("\n")
    keys = [p.partition("=")[0] for p in line.strip().split(" ")]
    assert keys == REDIS_FIELDS
    f = fields(line)
    assert f["name"] == "lister" and f["flags"] == "N" and f["cmd"] == "client|info"
    assert f["events"] == "r" and f["user"] == "default" and f["resp"] == "2"
    assert int(f["argv-mem"]) == len("CLIENT") + len("INFO")
    assert int(f["qbuf"]) > 0  # the request being answered is still in the buffer


def test_client_list_type_and_id_filters(raw):
    a, b = raw(), raw()
    ida, idb = a.cmd("CLIENT", "ID"), b.cmd("CLIENT", "ID")
    normal = {int(f["id"]) for f in listing(a, "TYPE", "normal")}
    assert {ida, idb} <= normal
    assert listing(a, "TYPE", "pubsub") == []
    assert listing(a, "TYPE", "replica") == [] and listing(a, "TYPE", "master") == []
    only = listing(a, "ID", str(idb), "999999")
    assert [int(f["id"]) for f in only] == [idb]
    assert listing(a, "ID", "0") == []
    assert a.cmd("CLIENT", "LIST", "ID", "x") == RespError("ERR Invalid client ID")
    assert a.cmd("CLIENT", "LIST", "TYPE", "foo") == RespError("ERR Unknown client type 'foo'")
    assert a.cmd("CLIENT", "LIST", "TYPE", "normal", "ID", "1") == RespError("ERR syntax error")
    assert a.cmd("CLIENT", "LIST", "ID") == RespError("ERR syntax error")


# --------------------------------------------------------------------------- KILL


def test_client_kill_old_form(raw):
    a, b = raw(), raw()
    b.cmd("PING")
    idb = b.cmd("CLIENT", "ID")
    addr = by_id(a)[idb]["addr"]
    assert a.cmd("CLIENT", "KILL", addr) == "OK"
    assert b.closed()
    assert a.cmd("CLIENT", "KILL", addr) == RespError("ERR No such client")
    assert a.cmd("CLIENT", "KILL", "1.2.3.4:5") == RespError("ERR No such client")


def test_client_kill_old_form_kills_the_caller_after_its_reply(raw):
    a = raw()
    me = fields(a.cmd("CLIENT", "INFO"))["addr"]
    assert a.cmd("CLIENT", "KILL", me) == "OK"
    assert a.closed()


def test_client_kill_filters(raw):
    a, b, c = raw(), raw(), raw()
    ida, idb, idc = (x.cmd("CLIENT", "ID") for x in (a, b, c))
    me = fields(a.cmd("CLIENT", "INFO"))
    assert a.cmd("CLIENT", "KILL", "ID", "999999999") == 0
    assert a.cmd("CLIENT", "KILL", "ID", str(idb)) == 1
    assert b.closed()
    # SKIPME yes is the default: the caller's own address matches but is spared.
    assert a.cmd("CLIENT", "KILL", "ADDR", me["addr"]) == 0
    assert a.cmd("CLIENT", "KILL", "LADDR", "127.0.0.1:1") == 0
    assert a.cmd("CLIENT", "KILL", "ID", str(idc), "LADDR", me["laddr"], "USER", "default",
                 "TYPE", "normal") == 1
    assert c.closed()
    assert a.cmd("CLIENT", "KILL", "TYPE", "pubsub") == 0
    assert a.cmd("CLIENT", "KILL", "USER", "nobody") == RespError("ERR No such user 'nobody'")
    assert a.cmd("PING") == "PONG"
    assert ida not in (idb, idc)


def test_client_kill_errors(raw):
    a = raw()
    err = RespError("ERR client-id should be greater than 0")
    assert a.cmd("CLIENT", "KILL", "ID", "abc") == err
    assert a.cmd("CLIENT", "KILL", "ID", "0") == err
    assert a.cmd("CLIENT", "KILL", "TYPE", "foo") == RespError("ERR Unknown client type 'foo'")
    assert a.cmd("CLIENT", "KILL", "SKIPME", "maybe") == RespError("ERR syntax error")
    assert a.cmd("CLIENT", "KILL", "FOO", "bar") == RespError("ERR syntax error")
    assert a.cmd("CLIENT", "KILL", "ID", "5", "TYPE") == RespError("ERR syntax error")
    assert a.cmd("CLIENT", "KILL") == RespError(
        "ERR wrong number of arguments for 'client|kill' command")


def test_client_kill_skipme_no_kills_the_caller_after_the_reply(raw):
    a = raw()
    ida = a.cmd("CLIENT", "ID")
    assert a.cmd("CLIENT", "KILL", "ID", str(ida), "SKIPME", "no") == 1
    assert a.closed()


def test_client_kill_type_normal_spares_the_caller(raw):
    a, b, c = raw(), raw(), raw()
    b.cmd("PING")
    c.cmd("PING")
    assert a.cmd("CLIENT", "KILL", "TYPE", "normal") >= 2
    assert b.closed() and c.closed()
    assert a.cmd("PING") == "PONG"


@pytest.mark.parametrize("threads", [2, 4])
def test_client_kill_reaches_clients_on_every_worker(server_factory, threads):
    srv = server_factory(threads)
    killer = srv.raw()
    victims = [srv.raw() for _ in range(2 * threads)]
    try:
        ids = [v.cmd("CLIENT", "ID") for v in victims]
        for i in ids:
            assert killer.cmd("CLIENT", "KILL", "ID", str(i)) == 1
        for v in victims:
            assert v.closed()
        assert killer.cmd("PING") == "PONG"
    finally:
        killer.close()
        for v in victims:
            v.close()


@pytest.mark.lavik_only
def test_client_kill_maxage(spawn_server):
    srv = spawn_server()
    a, b = srv.raw(), srv.raw()
    b.cmd("PING")
    assert a.cmd("CLIENT", "KILL", "MAXAGE", "1000") == 0
    time.sleep(2.1)
    c = srv.raw()
    c.cmd("PING")
    # a and b are older than a second, c is not; SKIPME spares a.
    assert a.cmd("CLIENT", "KILL", "MAXAGE", "1") == 1
    assert b.closed()
    assert c.cmd("PING") == "PONG"


# --------------------------------------------------------------------------- PAUSE


def test_client_pause_write_lets_reads_through_and_holds_writes(raw):
    a, b, c = raw(), raw(), raw()
    b.cmd("SET", "pk", "old")
    try:
        assert a.cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        assert b.cmd("GET", "pk") == b"old"
        b.send(encode_command("SET", "pk", "new") + encode_command("GET", "pk"))
        assert silent(b)
        # The held client shows as blocked, with the held command.
        rows = listing(c)
        blocked = [f for f in rows if "b" in f["flags"]]
        assert len(blocked) == 1 and blocked[0]["cmd"] == "set"
        assert c.cmd("GET", "pk") == b"old"  # reads on other connections still run
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        # The held SET runs first, then the GET pipelined behind it.
        assert b.reply() == "OK"
        assert b.reply() == b"new"
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def test_a_held_write_whose_client_hangs_up_never_runs(raw):
    a, b, c = raw(), raw(), raw()
    c.cmd("DEL", "gone-key")
    try:
        assert a.cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        b.send(encode_command("SET", "gone-key", "1"))
        assert silent(b)
        b.close()  # as Redis frees a client that closed while paused: the SET is dropped
        assert wait_until(lambda: not [f for f in listing(c) if "b" in f["flags"]], 5)
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        assert c.cmd("SET", "probe", "1") == "OK"  # writes run again
        assert c.cmd("EXISTS", "gone-key") == 0
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def test_client_pause_write_holds_publish(raw):
    a, b = raw(), raw()
    try:
        assert a.cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        b.send_command("PUBLISH", "pch", "m")
        assert silent(b)
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        assert b.reply() == 0
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def test_client_pause_write_holds_an_exec_with_writes_only(raw):
    a, b, c = raw(), raw(), raw()
    try:
        # Queued before the pause (a write is held at queuing time too, as in Redis).
        assert b.cmd("MULTI") == "OK"
        assert b.cmd("SET", "px", "1") == "QUEUED"
        assert c.cmd("MULTI") == "OK"
        assert c.cmd("GET", "px") == "QUEUED"
        assert a.cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        assert c.cmd("EXEC") == [None]  # read-only transaction: runs
        b.send_command("EXEC")
        assert silent(b)
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        assert b.reply() == ["OK"]
        assert c.cmd("GET", "px") == b"1"
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def test_client_pause_all_ends_by_timeout(raw):
    a, b = raw(), raw()
    try:
        start = time.monotonic()
        assert a.cmd("CLIENT", "PAUSE", "700", "ALL") == "OK"
        b.send_command("PING")
        assert silent(b, 0.3)
        assert b.reply() == "PONG"
        assert time.monotonic() - start >= 0.6
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def test_client_pause_all_holds_even_unpause_and_a_shorter_pause_does_not_shorten(raw):
    a, b = raw(), raw()
    try:
        assert a.cmd("CLIENT", "PAUSE", "1500", "WRITE") == "OK"
        assert a.cmd("CLIENT", "PAUSE", "100", "WRITE") == "OK"
        time.sleep(0.3)
        b.send_command("SET", "pk2", "1")
        assert silent(b)
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        assert b.reply() == "OK"
        assert a.cmd("CLIENT", "PAUSE", "800", "ALL") == "OK"
        b.send_command("CLIENT", "UNPAUSE")
        assert silent(b, 0.3)
        assert b.reply() == "OK"
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def expired_keys(conn):
    info = conn.cmd("INFO", "stats").decode()
    return int(info.split("expired_keys:")[1].split("\r\n")[0])


def test_client_pause_stops_active_expiry(raw):
    a = raw()
    try:
        for i in range(20):
            a.cmd("SET", f"px{i}", "v", "PX", "100")
        before = expired_keys(a)
        assert a.cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        time.sleep(0.6)
        assert expired_keys(a) == before
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        deadline = time.monotonic() + 5
        while expired_keys(a) < before + 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert expired_keys(a) >= before + 20
    finally:
        a.cmd("CLIENT", "UNPAUSE")


def test_client_pause_holds_commands_on_every_worker(server_factory):
    srv = server_factory(4)
    conns = [srv.raw() for _ in range(8)]
    try:
        assert conns[0].cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        for i, c in enumerate(conns[1:]):
            c.send_command("SET", f"pw{i}", "v")
        for c in conns[1:]:
            assert silent(c, 0.1)
        assert conns[0].cmd("CLIENT", "UNPAUSE") == "OK"
        for c in conns[1:]:
            assert c.reply() == "OK"
    finally:
        conns[0].cmd("CLIENT", "UNPAUSE")
        for c in conns:
            c.close()


def test_client_pause_errors(raw):
    a = raw()
    assert a.cmd("CLIENT", "PAUSE", "abc") == RespError(
        "ERR timeout is not an integer or out of range")
    assert a.cmd("CLIENT", "PAUSE", "1.5") == RespError(
        "ERR timeout is not an integer or out of range")
    assert a.cmd("CLIENT", "PAUSE", "-1") == RespError("ERR timeout is negative")
    assert a.cmd("CLIENT", "PAUSE", "10", "foo") == RespError(
        "ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert a.cmd("CLIENT", "PAUSE", "abc", "foo") == RespError(
        "ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert a.cmd("CLIENT", "PAUSE", "10", "write", "x") == RespError(
        "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.")
    assert a.cmd("CLIENT", "PAUSE") == RespError(
        "ERR wrong number of arguments for 'client|pause' command")
    assert a.cmd("CLIENT", "UNPAUSE", "x") == RespError(
        "ERR wrong number of arguments for 'client|unpause' command")
    assert a.cmd("CLIENT", "UNPAUSE") == "OK"


# --------------------------------------------------------------------------- NO-EVICT, REPLY


def test_client_no_evict(raw):
    a = raw()
    assert a.cmd("CLIENT", "NO-EVICT", "on") == "OK"
    assert fields(a.cmd("CLIENT", "INFO"))["flags"] == "e"
    assert a.cmd("CLIENT", "NO-EVICT", "OFF") == "OK"
    assert fields(a.cmd("CLIENT", "INFO"))["flags"] == "N"
    assert a.cmd("CLIENT", "NO-EVICT", "maybe") == RespError("ERR syntax error")
    assert a.cmd("CLIENT", "NO-EVICT") == RespError(
        "ERR wrong number of arguments for 'client|no-evict' command")


def test_client_reply_off_on(raw):
    a = raw()
    a.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("SET", "rk", "1") +
           encode_command("NOSUCH") + encode_command("GET", "rk"))
    assert silent(a)
    assert a.cmd("CLIENT", "REPLY", "ON") == "OK"
    assert a.cmd("GET", "rk") == b"1"


def test_client_reply_skip(raw):
    a = raw()
    a.send(encode_command("CLIENT", "REPLY", "SKIP") + encode_command("NOSUCH") +
           encode_command("PING", "x"))
    assert a.reply() == b"x"
    a.send(encode_command("CLIENT", "REPLY", "SKIP") + encode_command("CLIENT", "REPLY", "SKIP") +
           encode_command("PING", "1") + encode_command("PING", "2"))
    assert a.reply() == b"2"
    # SKIP under OFF does nothing; ON always answers.
    a.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("CLIENT", "REPLY", "SKIP") +
           encode_command("PING", "3") + encode_command("CLIENT", "REPLY", "ON"))
    assert a.reply() == "OK"
    a.send(encode_command("CLIENT", "REPLY", "SKIP") + encode_command("CLIENT", "REPLY", "ON"))
    assert a.reply() == "OK"
    assert a.cmd("CLIENT", "REPLY", "maybe") == RespError("ERR syntax error")
    assert a.cmd("CLIENT", "REPLY") == RespError(
        "ERR wrong number of arguments for 'client|reply' command")


def test_client_reply_off_with_keys_on_other_workers(server_factory):
    srv = server_factory(4)
    a = srv.raw()
    try:
        batch = encode_command("CLIENT", "REPLY", "OFF")
        for i in range(50):
            batch += encode_command("SET", f"roff{i}", str(i))
        batch += encode_command("CLIENT", "REPLY", "ON")
        a.send(batch)
        assert a.reply() == "OK"
        assert a.cmd("GET", "roff49") == b"49"
    finally:
        a.close()


# --------------------------------------------------------------------------- MONITOR


def test_monitor_streams_commands_in_redis_format(raw):
    m, a = raw(), raw()
    assert m.cmd("MONITOR") == "OK"
    a.cmd("SET", "mk", 'v\n"x\\\x01é')
    a.cmd("AUTH", "foo", "bar")
    a.cmd("HELLO", "2", "AUTH", "default", "pw")
    a.cmd("CONFIG", "GET", "maxclients")   # admin: not shown
    a.cmd("CLIENT", "LIST")                # admin: not shown
    a.cmd("CLIENT", "SETNAME", "x")
    a.cmd("NOSUCH")                        # rejected before running: not shown
    a.cmd("GET")                           # arity error: not shown
    a.cmd("PING")
    time.sleep(0.2)
    out = drain(m).decode("utf8", "replace")
    addr = fields(a.cmd("CLIENT", "INFO"))["addr"]
    lines = out.split("\r\n")
    assert lines[-1] == ""
    bodies = []
    for line in lines[:-1]:
        assert line.startswith("+")
        stamp, rest = line[1:].split(" ", 1)
        sec, usec = stamp.split(".")
        assert abs(int(sec) - time.time()) < 60 and len(usec) == 6
        assert rest.startswith(f"[0 {addr}] ")
        bodies.append(rest[len(f"[0 {addr}] "):])
    assert bodies == [
        '"SET" "mk" "v\\n\\"x\\\\\\x01\\xc3\\xa9"',
        '"AUTH" "(redacted)" "(redacted)"',
        '"HELLO" "2" "AUTH" "(redacted)" "(redacted)"',
        '"CLIENT" "SETNAME" "x"',
        '"PING"',
    ]


def test_monitor_client_restrictions(raw):
    m = raw()
    assert m.cmd("MONITOR") == "OK"
    assert m.cmd("GET", "k") == RespError("ERR Replica can't interact with the keyspace")
    assert m.cmd("SET", "k", "v") == RespError("ERR Replica can't interact with the keyspace")
    m.send_command("PING")
    assert m.reply() == "PONG"
    assert m.reply().endswith('"PING"')  # its own command, after its reply
    assert "O" in fields(m.cmd("CLIENT", "INFO"))["flags"]
    assert m.reply().endswith('"CLIENT" "INFO"')
    m.send_command("MONITOR")  # a second MONITOR is ignored: no reply at all
    assert silent(m)
    assert m.cmd("MONITOR", "x") == RespError(
        "ERR wrong number of arguments for 'monitor' command")


def test_monitor_sees_clients_on_every_worker(server_factory):
    srv = server_factory(4)
    m = srv.raw()
    others = [srv.raw() for _ in range(6)]
    try:
        assert m.cmd("MONITOR") == "OK"
        for i, c in enumerate(others):
            c.cmd("SET", f"mon{i}", str(i))
        time.sleep(0.3)
        out = drain(m).decode()
        for i in range(len(others)):
            assert f'"SET" "mon{i}" "{i}"' in out
        # After the monitor leaves, commands are not fed anywhere (and nothing breaks).
        m.close()
        assert others[0].cmd("SET", "after", "1") == "OK"
    finally:
        for c in others:
            c.close()


def test_monitor_shows_commands_held_by_pause_when_they_run(raw):
    m, a, b = raw(), raw(), raw()
    try:
        assert m.cmd("MONITOR") == "OK"
        assert a.cmd("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        b.send_command("SET", "held", "1")
        assert silent(b)
        assert '"held"' not in drain(m, 0.1).decode()
        assert a.cmd("CLIENT", "UNPAUSE") == "OK"
        assert b.reply() == "OK"
        time.sleep(0.1)
        assert '"SET" "held" "1"' in drain(m).decode()
    finally:
        a.cmd("CLIENT", "UNPAUSE")


# --------------------------------------------------------------------------- limits


def test_timeout_closes_idle_clients_but_not_active_ones(spawn_server):
    srv = spawn_server()
    admin = srv.raw()
    assert admin.cmd("CONFIG", "SET", "timeout", "1") == "OK"
    idle, active = srv.raw(), srv.raw()
    idle.cmd("PING")
    deadline = time.monotonic() + 3.5
    while time.monotonic() < deadline:
        assert active.cmd("PING") == "PONG"
        time.sleep(0.25)
    assert idle.closed(timeout=2)
    assert active.cmd("PING") == "PONG"
    assert admin.closed(timeout=2)  # idle as well since its CONFIG SET


def keepalive_timers(port, client_port):
    """The kernel's timer on the server's end of the connection from client_port: "keepalive"
    with its time left, or "" (ss -o, iproute2)."""
    out = subprocess.run(["ss", "-tnoH", "state", "established",
                          f"( sport = :{port} and dport = :{client_port} )"],
                         capture_output=True, text=True, check=True).stdout
    return out


def test_tcp_keepalive_probes_new_clients_idle_connections(spawn_server):
    """tcp-keepalive (300 s by default) turns on TCP keep-alive for every accepted client, as
    Redis's anetKeepAlive; CONFIG SET applies to the clients accepted after it, 0 turns it off."""
    srv = spawn_server()
    admin = srv.raw()
    assert admin.cmd("CONFIG", "GET", "tcp-keepalive") == [b"tcp-keepalive", b"300"]

    def timer_of_a_new_client():
        c = srv.raw()
        assert c.cmd("PING") == "PONG"
        return keepalive_timers(srv.port, c.sock.getsockname()[1])

    t = timer_of_a_new_client()
    assert "keepalive" in t and "min" in t, t  # minutes left: 300 s
    assert admin.cmd("CONFIG", "SET", "tcp-keepalive", "20") == "OK"
    t = timer_of_a_new_client()
    assert "keepalive" in t and "min" not in t, t  # at most 20 s left
    assert admin.cmd("CONFIG", "SET", "tcp-keepalive", "0") == "OK"
    assert "keepalive" not in timer_of_a_new_client()


def test_tcp_backlog_is_the_listening_sockets_backlog(spawn_server):
    """tcp-backlog (511 by default) is the listen() backlog: ss shows it as the listening
    socket's Send-Q."""
    srv = spawn_server(extra_args=["--tcp-backlog", "100"])
    out = subprocess.run(["ss", "-ltnH", f"( sport = :{srv.port} )"], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[2] == "100", out  # State Recv-Q Send-Q Local Peer


def test_unixsocket_serves_clients_with_its_permissions(spawn_server, tmp_path):
    """unixsocket/unixsocketperm: the server also listens on a unix socket (mode from the
    octal perm), redis-py and redis-cli talk to it, CLIENT LIST shows its path as addr and laddr
    with flag U, and the socket file is removed at shutdown."""
    path = str(tmp_path / "lavik.sock")
    srv = spawn_server(extra_args=["--unixsocket", path, "--unixsocketperm", "700"])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    c = redis.Redis(unix_socket_path=path, decode_responses=True, socket_timeout=10)
    assert c.ping() is True
    assert c.set("over-unix", "yes") is True
    assert srv.client().get("over-unix") == "yes"  # the same data as over TCP
    line = c.execute_command("CLIENT", "INFO")
    f = fields(line)
    assert f["addr"] == f"{path}:0" and f["laddr"] == f"{path}:0" and f["flags"] == "U", line
    out = subprocess.run(["redis-cli", "-s", path, "GET", "over-unix"], capture_output=True,
                         text=True, timeout=10)
    assert out.stdout.strip() == "yes"
    c.close()
    assert srv.terminate() == 0
    assert not os.path.exists(path)


def test_query_buffer_limit_closes_only_that_client(spawn_server):
    srv = spawn_server()
    other = srv.raw()
    assert other.cmd("CONFIG", "SET", "client-query-buffer-limit", "1mb") == "OK"
    big = srv.raw()
    big.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n")
    try:
        for _ in range(12):
            big.send(b"x" * (128 * 1024))
    except OSError:
        pass  # the server may already have closed it
    assert big.closed(timeout=5) if not big.buf else True
    assert other.cmd("PING") == "PONG"
    assert other.cmd("SET", "small", "1") == "OK"


def test_output_buffer_limit_closes_only_the_slow_reader(spawn_server):
    srv = spawn_server()
    fast = srv.raw()
    assert fast.cmd("CONFIG", "SET", "client-output-buffer-limit", "normal 4mb 0 0") == "OK"
    assert fast.cmd("SET", "bigval", "x" * (1 << 20)) == "OK"
    slow = srv.raw()
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.send(encode_command("GET", "bigval") * 40)
    time.sleep(0.5)
    assert fast.cmd("PING") == "PONG"
    assert len(fast.cmd("GET", "bigval")) == 1 << 20
    # The slow client was cut off: reading ends well before 40 MB arrive.
    slow.sock.settimeout(5)
    got = 0
    try:
        while True:
            data = slow.sock.recv(1 << 20)
            if not data:
                break
            got += len(data)
    except (ConnectionResetError, socket.timeout):
        pass
    assert got < 40 * (1 << 20)
    info = fast.cmd("CONFIG", "GET", "client-output-buffer-limit")
    assert info[1].startswith(b"normal 4194304 0 0")


def test_proto_max_bulk_len_applies_live(raw, server):
    a = raw()
    try:
        assert a.cmd("CONFIG", "SET", "proto-max-bulk-len", "1mb") == "OK"
        for c in (a, raw()):
            c.send(b"*2\r\n$3\r\nGET\r\n$2000000\r\n")
            assert c.reply() == RespError("ERR Protocol error: invalid bulk length")
            assert c.closed()
        b = raw()
        assert b.cmd("SET", "pm", "x" * 1000) == "OK"
    finally:
        r = server.client()
        r.config_set("proto-max-bulk-len", "536870912")
        r.close()


def test_protected_mode_allows_loopback_clients(raw):
    a = raw()
    assert a.cmd("CONFIG", "GET", "protected-mode") == [b"protected-mode", b"yes"]
    assert a.cmd("PING") == "PONG"
    assert a.cmd("CONFIG", "SET", "protected-mode", "no") == "OK"
    assert a.cmd("CONFIG", "SET", "protected-mode", "yes") == "OK"
