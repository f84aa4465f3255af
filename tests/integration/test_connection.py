"""Connection-level commands: PING, ECHO, HELLO, AUTH, QUIT, SELECT, CLIENT, RESP3
reply shapes, requirepass, and the stock redis-cli / redis-benchmark tools."""

import re
import socket
import subprocess
import time

import pytest
import redis

from conftest import RespError, spread_keys

NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."


def hello_dict(reply):
    """HELLO's reply as {str: value}, from a RESP2 flat array or a RESP3 map."""
    if isinstance(reply, dict):
        items = list(reply.items())
    else:
        assert isinstance(reply, list) and len(reply) % 2 == 0, reply
        items = list(zip(reply[0::2], reply[1::2]))
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in items}


# --------------------------------------------------------------------------- PING / ECHO


def test_ping(r):
    assert r.ping() is True


def test_ping_with_message_echoes_it(raw):
    c = raw()
    assert c.cmd("PING", "hello world") == b"hello world"


def test_ping_arity(raw):
    assert raw().cmd("PING", "a", "b") == RespError(
        "ERR wrong number of arguments for 'ping' command")


def test_echo(rb):
    assert rb.echo(b"hi") == b"hi"
    assert rb.echo(b"") == b""
    binary = bytes(range(256))
    assert rb.echo(binary) == binary


def test_echo_arity(raw):
    c = raw()
    error = RespError("ERR wrong number of arguments for 'echo' command")
    assert c.cmd("ECHO") == error
    assert c.cmd("ECHO", "a", "b") == error


def test_raw_ping_reply_bytes(raw):
    c = raw()
    c.send(b"*1\r\n$4\r\nPING\r\n")
    assert c.reply_bytes() == b"+PONG\r\n"
    c.send_command("PING", "x y")
    assert c.reply_bytes() == b"$3\r\nx y\r\n"


# --------------------------------------------------------------------------- HELLO


def test_hello_2_fields(raw):
    c = raw()
    client_id = c.cmd("CLIENT", "ID")
    reply = c.cmd("HELLO", "2")
    assert isinstance(reply, list), reply  # RESP2: flat array, not a map
    h = hello_dict(reply)
    assert set(h) >= {"server", "version", "proto", "id", "mode", "role", "modules"}
    assert h["proto"] == 2
    assert h["id"] == client_id
    assert h["mode"] == b"standalone"
    assert h["role"] == b"master"
    assert isinstance(h["server"], bytes) and h["server"]
    assert re.fullmatch(rb"\d+\.\d+\.\d+", h["version"]), h["version"]
    assert h["modules"] == []


def test_hello_3_returns_map_and_switches_protocol(raw):
    c = raw()
    c.send_command("HELLO", "3")
    head = c.reply_bytes()
    assert head.startswith(b"%7\r\n"), head
    # From now on, RESP3 shapes: null is "_", a map is "%".
    c.send_command("GET", "missing-key")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("HELLO", "2")
    assert c.reply_bytes().startswith(b"*14\r\n")
    c.send_command("GET", "missing-key")
    assert c.reply_bytes() == b"$-1\r\n"


def test_hello_without_version_reports_current_protocol(raw):
    c = raw()
    h = hello_dict(c.cmd("HELLO"))
    assert h["proto"] == 2


def test_hello_setname(raw):
    c = raw()
    h = hello_dict(c.cmd("HELLO", "3", "SETNAME", "conn-a"))
    assert h["proto"] == 3
    assert c.cmd("CLIENT", "GETNAME") == b"conn-a"


def test_hello_auth_without_password_configured_accepts_default_user(raw):
    # The default user is "nopass" when no requirepass is set: any password works.
    c = raw()
    h = hello_dict(c.cmd("HELLO", "3", "AUTH", "default", "anything"))
    assert h["proto"] == 3


def test_hello_auth_unknown_user_is_wrongpass(raw):
    c = raw()
    assert c.cmd("HELLO", "2", "AUTH", "nouser", "x") == RespError(WRONGPASS)


def test_hello_auth_and_setname_together(raw):
    c = raw()
    h = hello_dict(c.cmd("HELLO", "2", "AUTH", "default", "pw", "SETNAME", "both"))
    assert h["proto"] == 2
    assert c.cmd("CLIENT", "GETNAME") == b"both"


def test_hello_errors(raw):
    c = raw()
    assert c.cmd("HELLO", "4") == RespError("NOPROTO unsupported protocol version")
    assert c.cmd("HELLO", "1") == RespError("NOPROTO unsupported protocol version")
    assert c.cmd("HELLO", "abc") == RespError(
        "ERR Protocol version is not an integer or out of range")
    assert c.cmd("HELLO", "3", "foo") == RespError("ERR Syntax error in HELLO option 'foo'")
    assert c.cmd("HELLO", "3", "SETNAME") == RespError(
        "ERR Syntax error in HELLO option 'SETNAME'")
    assert c.cmd("HELLO", "3", "AUTH", "default") == RespError(
        "ERR Syntax error in HELLO option 'AUTH'")
    assert c.cmd("HELLO", "3", "SETNAME", "a b") == RespError(
        "ERR Client names cannot contain spaces, newlines or special characters.")
    # A failed HELLO leaves the protocol where it was.
    c.send_command("GET", "missing-key")
    assert c.reply_bytes() == b"$-1\r\n"


# --------------------------------------------------------------------------- AUTH / QUIT / SELECT


def test_auth_without_password_configured(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("AUTH", "foo")
    assert str(e.value) == ("AUTH <password> called without any password configured for the "
                            "default user. Are you sure your configuration is correct?")


def test_auth_default_user_without_password_configured_is_ok(raw):
    c = raw()
    assert c.cmd("AUTH", "default", "whatever") == "OK"


def test_auth_syntax_error(r):
    with pytest.raises(redis.ResponseError, match=r"^syntax error$"):
        r.execute_command("AUTH", "a", "b", "c")


def test_quit_replies_ok_and_closes(raw):
    c = raw()
    c.send(b"*1\r\n$4\r\nQUIT\r\n")
    assert c.reply_bytes() == b"+OK\r\n"
    assert c.closed()


def test_commands_after_quit_in_same_batch_are_not_run(raw):
    c = raw()
    c.send(b"*1\r\n$4\r\nQUIT\r\n*3\r\n$3\r\nSET\r\n$7\r\nafter-q\r\n$1\r\n1\r\n")
    assert c.reply_bytes() == b"+OK\r\n"
    assert c.closed()
    check = raw()
    assert check.cmd("EXISTS", "after-q") == 0


def test_requests_sent_before_a_half_close_are_all_answered(raw):
    """The client writes a pipeline and shuts its side at once (the server reads the data and the
    end of file in one go): every request runs and is answered, then the server closes, as
    Redis does."""
    c = raw()
    pipeline = b"*2\r\n$4\r\nINCR\r\n$2\r\nhc\r\n" * 20
    c.sock.sendall(pipeline + b"*2\r\n$3\r\nGET\r\n$2\r\nhc\r\n")
    c.sock.shutdown(socket.SHUT_WR)
    want = b"".join(b":%d\r\n" % i for i in range(1, 21)) + b"$2\r\n20\r\n"
    got = b""
    c.sock.settimeout(10)
    while True:
        chunk = c.sock.recv(1 << 16)
        if not chunk:
            break
        got += chunk
    assert got == want


def test_many_connections_pipelining_at_once_keep_their_order(raw):
    """Requests of many connections read in one loop turn (and looked at together for their
    keys before they run) each get their own replies, in order."""
    conns = [raw() for _ in range(40)]
    for i, c in enumerate(conns):
        c.sock.sendall(b"".join(b"*3\r\n$6\r\nAPPEND\r\n$5\r\nmc:%02d\r\n$1\r\n%d\r\n"
                                % (i, j) for j in range(10)))
    for i, c in enumerate(conns):
        for j in range(10):
            assert c.reply() == j + 1
        assert c.cmd("GET", f"mc:{i:02d}") == b"0123456789"


# ------------------------------------------------------------- replies from another worker
#
# With two workers, a request for the other worker's key runs there; that worker may send the
# reply on the client's socket itself. Whatever the client does next must find its connection
# ready: the next request, a pipelined one, a close.


def test_one_request_at_a_time_across_workers(raw):
    keys = spread_keys(2, "lend:seq")
    conns = [raw() for _ in range(4)]
    for round_ in range(1, 51):
        for i, conn in enumerate(conns):
            for k in keys[i % 2:] + keys[:i % 2]:
                assert conn.cmd("INCR", f"{{{k}}}:{i}") == round_
                assert conn.cmd("GET", f"{{{k}}}:{i}") == str(round_).encode()
                assert conn.cmd("PING") == "PONG"


def test_a_reply_larger_than_the_socket_buffer_from_another_worker(raw):
    """The client reads nothing for a while, so a large reply does not fit in the socket: the
    rest leaves later, whole, and the request sent before reading is answered after it."""
    keys = spread_keys(2, "lend:big")
    values = {k: bytes([65 + i]) * (8 << 20) for i, k in enumerate(keys)}
    setter = raw(timeout=30)
    for k, v in values.items():
        assert setter.cmd("SET", k, v) == "OK"
    c = raw(timeout=30)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    # Off, the slow log wants no entries (Lavik writes those where the client's details are).
    old = setter.cmd("CONFIG", "GET", "slowlog-log-slower-than")[1]
    assert setter.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
    try:
        for k, v in values.items():
            c.send_command("GET", k)
            time.sleep(0.3)
            c.send_command("PING")
            assert c.reply() == v
            assert c.reply() == "PONG"
    finally:
        assert setter.cmd("CONFIG", "SET", "slowlog-log-slower-than", old) == "OK"


def test_clients_that_close_right_after_their_reply(raw, server):
    keys = spread_keys(2, "lend:close")
    watcher = raw()
    assert watcher.cmd("SET", keys[0], "x") == "OK"
    assert watcher.cmd("SET", keys[1], "y") == "OK"
    base = int(re.search(rb"connected_clients:(\d+)", watcher.cmd("INFO", "clients")).group(1))
    for i in range(100):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            k = keys[i % 2]
            s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k.encode()))
            want = b"$1\r\nx\r\n" if i % 2 == 0 else b"$1\r\ny\r\n"
            got = b""
            while len(got) < len(want) and (chunk := s.recv(64)):
                got += chunk
            assert got == want
    deadline = time.monotonic() + 10
    while True:
        now = int(re.search(rb"connected_clients:(\d+)",
                            watcher.cmd("INFO", "clients")).group(1))
        if now == base or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert now == base


def test_select(raw):
    c = raw()
    assert c.cmd("SELECT", "0") == "OK"
    assert c.cmd("SELECT", "16") == RespError("ERR DB index is out of range")
    assert c.cmd("SELECT", "-1") == RespError("ERR DB index is out of range")
    assert c.cmd("SELECT", "abc") == RespError("ERR value is not an integer or out of range")
    assert c.cmd("SET", "still-db0", "1") == "OK"
    assert c.cmd("EXISTS", "still-db0") == 1


# --------------------------------------------------------------------------- CLIENT


def parse_client_line(line):
    fields = {}
    for part in line.strip().split(" "):
        k, _, v = part.partition("=")
        fields[k] = v
    return fields


CLIENT_FIELDS = {"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "multi",
                 "cmd", "user", "resp"}


def test_client_id_is_stable_and_unique(server):
    a, b = server.client(), server.client()
    ida = a.client_id()
    assert isinstance(ida, int) and ida > 0
    assert a.client_id() == ida
    assert b.client_id() != ida


def test_client_setname_getname(r):
    assert r.client_getname() is None
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == "worker-1"
    # An empty name clears it.
    assert r.execute_command("CLIENT", "SETNAME", "") == "OK"
    assert r.client_getname() is None


def test_client_setname_rejects_spaces(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "SETNAME", "a b")
    assert str(e.value) == "Client names cannot contain spaces, newlines or special characters."


def test_client_unknown_subcommand(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "no-such")
    assert str(e.value) == "unknown subcommand 'no-such'. Try CLIENT HELP."


def test_client_info_fields(raw, server):
    c = raw()
    assert c.cmd("CLIENT", "SETNAME", "infotest") == "OK"
    client_id = c.cmd("CLIENT", "ID")
    info = c.cmd("CLIENT", "INFO")
    assert isinstance(info, bytes) and info.endswith(b"\n")
    f = parse_client_line(info.decode())
    assert set(f) >= CLIENT_FIELDS, sorted(CLIENT_FIELDS - set(f))
    assert int(f["id"]) == client_id
    assert f["name"] == "infotest"
    assert f["cmd"] == "client|info"
    assert f["db"] == "0"
    assert f["resp"] == "2"
    assert f["user"] == "default"
    local_port = c.sock.getsockname()[1]
    assert f["addr"] == f"127.0.0.1:{local_port}"
    assert f["laddr"] == f"127.0.0.1:{server.port}"


def test_client_list_has_every_connection(raw, server):
    a, b = raw(), raw()
    ida = a.cmd("CLIENT", "ID")
    assert b.cmd("CLIENT", "SETNAME", "lister") == "OK"
    idb = b.cmd("CLIENT", "ID")
    listing = b.cmd("CLIENT", "LIST").decode()
    lines = [parse_client_line(line) for line in listing.strip().split("\n")]
    by_id = {int(f["id"]): f for f in lines}
    assert ida in by_id and idb in by_id
    for f in lines:
        assert set(f) >= CLIENT_FIELDS, sorted(CLIENT_FIELDS - set(f))
    assert by_id[idb]["name"] == "lister"
    assert by_id[idb]["cmd"] == "client|list"
    assert by_id[ida]["cmd"] == "client|id"


# --------------------------------------------------------------------------- RESP3 shapes


def test_resp3_reply_shapes(raw):
    c = raw()
    c.cmd("HELLO", "3")
    c.send_command("GET", "nope")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("SET", "k", "v")
    assert c.reply_bytes() == b"+OK\r\n"
    c.send_command("GET", "k")
    assert c.reply_bytes() == b"$1\r\nv\r\n"
    c.send_command("MGET", "k", "nope")
    assert c.reply_bytes() == b"*2\r\n$1\r\nv\r\n_\r\n"
    c.send_command("EXISTS", "k")
    assert c.reply_bytes() == b":1\r\n"
    c.send_command("CONFIG", "GET", "maxclients")
    reply = c.reply_bytes()
    assert reply.startswith(b"%1\r\n$10\r\nmaxclients\r\n$"), reply
    c.send_command("SET", "k", "v", "XX", "GET")
    assert c.reply_bytes() == b"$1\r\nv\r\n"
    c.send_command("SET", "k2", "v", "NX", "GET")
    assert c.reply_bytes() == b"_\r\n"
    c.send_command("NOSUCHCMD")
    assert c.reply_bytes().startswith(b"-ERR unknown command 'NOSUCHCMD'")


def test_resp2_config_get_is_flat_array(raw):
    c = raw()
    c.send_command("CONFIG", "GET", "maxclients")
    reply = c.reply_bytes()
    assert reply.startswith(b"*2\r\n$10\r\nmaxclients\r\n$"), reply


# --------------------------------------------------------------------------- requirepass


@pytest.fixture
def auth_server(spawn_server):
    return spawn_server(threads=1, extra_args=["--requirepass", "secret"])


def test_requirepass_noauth_before_auth(auth_server):
    with auth_server.raw() as c:
        assert c.cmd("PING") == RespError(NOAUTH)
        assert c.cmd("GET", "x") == RespError(NOAUTH)
        assert c.cmd("SET", "x", "1") == RespError(NOAUTH)
        assert c.cmd("CLIENT", "ID") == RespError(NOAUTH)
        assert c.cmd("AUTH", "secret") == "OK"
        assert c.cmd("GET", "x") is None  # the SET above was refused


def test_requirepass_wrongpass(auth_server):
    with auth_server.raw() as c:
        assert c.cmd("AUTH", "wrong") == RespError(WRONGPASS)
        assert c.cmd("AUTH", "default", "wrong") == RespError(WRONGPASS)
        assert c.cmd("AUTH", "someone", "secret") == RespError(WRONGPASS)
        assert c.cmd("PING") == RespError(NOAUTH)
        assert c.cmd("AUTH", "default", "secret") == "OK"
        assert c.cmd("PING") == "PONG"


def test_requirepass_hello(auth_server):
    with auth_server.raw() as c:
        assert c.cmd("HELLO", "3") == RespError(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
            "the RESP protocol version at the same time")
        assert c.cmd("HELLO", "3", "AUTH", "default", "wrong") == RespError(WRONGPASS)
        h = hello_dict(c.cmd("HELLO", "3", "AUTH", "default", "secret"))
        assert h["proto"] == 3
        c.send_command("GET", "missing")
        assert c.reply_bytes() == b"_\r\n"


def test_requirepass_quit_allowed_before_auth(auth_server):
    with auth_server.raw() as c:
        c.send_command("QUIT")
        assert c.reply_bytes() == b"+OK\r\n"
        assert c.closed()


def test_requirepass_redis_py_client(auth_server):
    with pytest.raises(redis.AuthenticationError):
        auth_server.client().ping()
    good = auth_server.client(password="secret")
    assert good.set("a", "1") is True
    assert good.get("a") == "1"


# --------------------------------------------------------------------------- stock tools


def run_tool(args, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_redis_cli_ping(server):
    res = run_tool(["redis-cli", "-h", "127.0.0.1", "-p", str(server.port), "PING"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == "PONG\n"


def test_redis_cli_raw_set_get(r, server):
    base = ["redis-cli", "-h", "127.0.0.1", "-p", str(server.port), "--raw"]
    res = run_tool(base + ["SET", "cli-key", "value with spaces"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == "OK\n"
    res = run_tool(base + ["GET", "cli-key"])
    assert res.stdout == "value with spaces\n"
    assert r.get("cli-key") == "value with spaces"


def test_redis_benchmark_smoke(r, server):
    res = run_tool(["redis-benchmark", "-h", "127.0.0.1", "-p", str(server.port), "-n", "2000",
                    "-c", "10", "-t", "set,get", "-q"], timeout=120)
    assert res.returncode == 0, res.stderr
    out = res.stdout.replace("\r", "\n")
    assert re.search(r"^SET: [\d.]+ requests per second", out, re.M), out
    assert re.search(r"^GET: [\d.]+ requests per second", out, re.M), out
    # The benchmark writes key:__rand_int__ (the key is literally that without -r).
    assert r.exists("key:__rand_int__") == 1
