"""The wire protocol over raw sockets: inline commands, pipelining, partial reads,
protocol errors (which close the connection) and isolation between clients."""

import threading
import time

import pytest

from conftest import RespError, encode_command


def test_inline_ping(raw):
    c = raw()
    c.send(b"PING\r\n")
    assert c.reply_bytes() == b"+PONG\r\n"


def test_inline_with_bare_newline(raw):
    c = raw()
    c.send(b"PING\n")
    assert c.reply_bytes() == b"+PONG\r\n"


def test_inline_double_quotes(raw):
    c = raw()
    c.send(b'SET a "b c"\r\nGET a\r\n')
    assert c.reply_bytes() == b"+OK\r\n"
    assert c.reply_bytes() == b"$3\r\nb c\r\n"


def test_inline_single_quotes_and_escapes(raw):
    c = raw()
    c.send(b"SET a 'x y'\r\nGET a\r\n")
    assert c.reply() == "OK"
    assert c.reply() == b"x y"
    c.send(b'SET b "\\x41\\n\\t"\r\nGET b\r\n')
    assert c.reply() == "OK"
    assert c.reply() == b"A\n\t"


def test_inline_extra_spaces(raw):
    c = raw()
    c.send(b"  SET   k    v  \r\nGET k\r\n")
    assert c.reply() == "OK"
    assert c.reply() == b"v"


def test_empty_lines_ignored(raw):
    c = raw()
    c.send(b"\r\n\r\n\n   \r\nPING\r\n")
    assert c.reply_bytes() == b"+PONG\r\n"
    c.send(b"\r\n*1\r\n$4\r\nPING\r\n")
    assert c.reply_bytes() == b"+PONG\r\n"


def test_empty_multibulk_ignored(raw):
    c = raw()
    c.send(b"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n")
    assert c.reply_bytes() == b"+PONG\r\n"


def test_inline_and_multibulk_mixed(raw):
    c = raw()
    c.send(b"SET k 1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nk\r\nINCR k\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
    assert c.reply() == "OK"
    assert c.reply() == 2
    assert c.reply() == 3
    assert c.reply() == b"3"


def test_binary_safe_bulk(raw):
    c = raw()
    value = b"\r\n\x00*1\r\n$4\r\nPING\r\n\xff"
    assert c.cmd("SET", b"k\r\n", value) == "OK"
    assert c.cmd("GET", b"k\r\n") == value


def test_pipeline_10k_in_one_send(raw):
    c = raw(timeout=60)
    n = 10000
    parts = []
    expected = []
    for i in range(n // 2):
        parts.append(encode_command("SET", f"pipe:{i}", str(i)))
        expected.append("OK")
        parts.append(encode_command("GET", f"pipe:{i}"))
        expected.append(str(i).encode())
    payload = b"".join(parts)
    # One sendall; replies are read meanwhile so neither side's buffers can stall.
    sender = threading.Thread(target=c.send, args=(payload,))
    sender.start()
    got = [c.reply() for _ in range(n)]
    sender.join()
    assert got == expected
    assert c.cmd("DBSIZE") == n // 2


def test_pipeline_incr_order(raw):
    c = raw(timeout=60)
    c.send(b"INCR ctr\r\n" * 3000 + encode_command("GET", "ctr"))
    got = [c.reply() for _ in range(3000)]
    assert got == list(range(1, 3001))
    assert c.reply() == b"3000"


def test_request_split_into_single_bytes(raw):
    c = raw()
    payload = encode_command("SET", "slow", "hello world") + b"GET slow\r\n"
    for i in range(len(payload)):
        c.send(payload[i:i + 1])
        time.sleep(0.002)
    assert c.reply_bytes() == b"+OK\r\n"
    assert c.reply_bytes() == b"$11\r\nhello world\r\n"


def test_large_bulk_arrives_in_pieces(raw):
    c = raw()
    value = bytes(i & 0xFF for i in range(300000))
    payload = encode_command("SET", "piecewise", value)
    for off in range(0, len(payload), 65521):
        c.send(payload[off:off + 65521])
        time.sleep(0.005)
    assert c.reply() == "OK"
    assert c.cmd("GET", "piecewise") == value


PROTOCOL_ERRORS = [
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n+foo\r\n", b"-ERR Protocol error: expected '$', got '+'\r\n"),
    (b"*1\r\n:12\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    (b"*1\r\n$abc\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$-1\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$536870913\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b'SET a "b\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    (b"SET a 'b\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    (b'SET a "x"y\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
]


@pytest.mark.parametrize("request_bytes,error", PROTOCOL_ERRORS,
                         ids=[repr(p[0])[2:-1] for p in PROTOCOL_ERRORS])
def test_protocol_error_replies_and_closes(raw, request_bytes, error):
    c = raw()
    c.send(request_bytes)
    assert c.reply_bytes() == error
    assert c.closed()


def test_commands_before_protocol_error_are_answered(raw):
    c = raw()
    c.send(b"*1\r\n$4\r\nPING\r\nSET a 1\r\n*x\r\n*1\r\n$4\r\nPING\r\n")
    assert c.reply_bytes() == b"+PONG\r\n"
    assert c.reply_bytes() == b"+OK\r\n"
    assert c.reply_bytes() == b"-ERR Protocol error: invalid multibulk length\r\n"
    assert c.closed()


def test_bad_client_does_not_hurt_others(raw, server):
    good = raw()
    assert good.cmd("SET", "shared", "1") == "OK"
    for request_bytes, error in PROTOCOL_ERRORS[:4]:
        bad = raw()
        bad.send(request_bytes)
        assert bad.reply_bytes() == error
        assert bad.closed()
    assert good.cmd("INCR", "shared") == 2
    fresh = raw()
    assert fresh.cmd("GET", "shared") == b"2"
    assert server.client().ping() is True


def test_client_disconnect_mid_command_is_harmless(raw):
    half = raw()
    half.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$100\r\nonly-part")
    half.close()
    c = raw()
    assert c.cmd("PING") == "PONG"
    assert c.cmd("EXISTS", "half") == 0


def test_error_reply_keeps_connection_open(raw):
    c = raw()
    assert isinstance(c.cmd("NOSUCHCOMMAND"), RespError)
    assert isinstance(c.cmd("GET"), RespError)
    assert c.cmd("PING") == "PONG"


# A pipeline's requests are read under the limits the requests before them set, as Redis reads
# them: one at a time, each after the one before it ran (Lavik reads a pipeline ahead for its
# prefetch, and must not let that change what is refused).
def test_reset_mid_pipeline_limits_the_requests_after_it(raw, r):
    r.execute_command("ACL", "SETUSER", "default", ">pipepass")
    try:
        c = raw()
        assert c.cmd("AUTH", "pipepass") == "OK"
        c.send(encode_command("RESET") + encode_command("SET", "pipe:big", "v" * 20000) +
               encode_command("PING"))
        assert c.reply_bytes() == b"+RESET\r\n"
        assert c.reply_bytes() == b"-ERR Protocol error: unauthenticated bulk length\r\n"
        assert c.closed()
    finally:
        r.execute_command("ACL", "SETUSER", "default", "nopass")
    assert r.exists("pipe:big") == 0

