"""LCS against Redis 7.0 behaviour: the subsequence, LEN, IDX with MINMATCHLEN and
WITHMATCHLEN, RESP2 and RESP3 reply shapes, error texts and their order, and keys on different
worker threads."""

import pytest
import redis

from conftest import RespError, err, spread_keys


def lcs(r, *args):
    return r.execute_command("LCS", *args)


@pytest.fixture
def texts(r):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    return r


def test_subsequence_and_len(texts):
    r = texts
    assert lcs(r, "a", "b") == "mytext"
    assert lcs(r, "b", "a") == "mytext"
    assert lcs(r, "a", "b", "LEN") == 6
    assert lcs(r, "a", "a") == "ohmytext"
    r.set("c", "QQQ")
    assert lcs(r, "a", "c") == ""
    assert lcs(r, "a", "c", "len") == 0


def test_missing_keys_are_empty(texts):
    r = texts
    assert lcs(r, "a", "nokey") == ""
    assert lcs(r, "nokey", "nokey2", "LEN") == 0
    assert lcs(r, "nokey", "a", "IDX") == ["matches", [], "len", 0]


def test_idx_resp2(texts):
    r = texts
    assert lcs(r, "a", "b", "IDX") == ["matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]
    assert lcs(r, "a", "b", "IDX", "WITHMATCHLEN") == [
        "matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], "len", 6]
    assert lcs(r, "a", "b", "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN") == [
        "matches", [[[4, 7], [5, 8], 4]], "len", 6]
    assert lcs(r, "a", "b", "IDX", "MINMATCHLEN", "5") == ["matches", [], "len", 6]
    # A negative minimum is 0; MINMATCHLEN without IDX changes nothing.
    assert lcs(r, "a", "b", "IDX", "MINMATCHLEN", "-4") == lcs(r, "a", "b", "IDX")
    assert lcs(r, "a", "b", "MINMATCHLEN", "3") == "mytext"
    assert lcs(r, "a", "b", "WITHMATCHLEN") == "mytext"
    assert lcs(r, "a", "b", "LEN", "MINMATCHLEN", "2") == 6


def test_idx_ties(r):
    r.set("x", "abcabcabc")
    r.set("y", "cbacbacba")
    assert lcs(r, "x", "y") == "cbabc"
    assert lcs(r, "x", "y", "IDX", "WITHMATCHLEN") == [
        "matches",
        [[[8, 8], [6, 6], 1], [[7, 7], [4, 4], 1], [[6, 6], [2, 2], 1], [[4, 4], [1, 1], 1],
         [[2, 2], [0, 0], 1]],
        "len", 5]


def test_binary_values(rb):
    rb.set("a", b"\x00\xffab\x00")
    rb.set("b", b"a\x00b\xff\x00")
    assert rb.execute_command("LCS", "a", "b") == b"ab\x00"


def test_idx_resp3_bytes(raw):
    c = raw()
    c.cmd("SET", "a", "ohmytext")
    c.cmd("SET", "b", "mynewtext")
    assert isinstance(c.cmd("HELLO", "3"), dict)
    c.send_command("LCS", "a", "b", "IDX", "WITHMATCHLEN")
    assert c.reply_bytes() == (
        b"%2\r\n$7\r\nmatches\r\n*2\r\n"
        b"*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"
        b"*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n"
        b"$3\r\nlen\r\n:6\r\n")
    assert c.cmd("LCS", "a", "b", "IDX", "MINMATCHLEN", "3") == {
        b"matches": [[[4, 7], [5, 8]]], b"len": 6}
    assert c.cmd("LCS", "a", "nokey", "IDX") == {b"matches": [], b"len": 0}
    c.send_command("LCS", "a", "b")
    assert c.reply_bytes() == b"$6\r\nmytext\r\n"
    c.send_command("LCS", "a", "nokey")
    assert c.reply_bytes() == b"$0\r\n\r\n"
    c.send_command("LCS", "a", "b", "LEN")
    assert c.reply_bytes() == b":6\r\n"


def test_idx_resp2_bytes(raw):
    c = raw()
    c.cmd("SET", "a", "ohmytext")
    c.cmd("SET", "b", "mynewtext")
    c.send_command("LCS", "a", "b", "IDX", "MINMATCHLEN", "3")
    assert c.reply_bytes() == (
        b"*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n"
        b"$3\r\nlen\r\n:6\r\n")


@pytest.mark.parametrize("args, text", [
    (("LEN", "IDX"), "If you want both the length and indexes, please just use IDX."),
    (("IDX", "LEN"), "If you want both the length and indexes, please just use IDX."),
    (("FOO",), "syntax error"),
    (("MINMATCHLEN",), "syntax error"),
    (("MINMATCHLEN", "x"), "value is not an integer or out of range"),
    (("MINMATCHLEN", "1.5"), "value is not an integer or out of range"),
    (("IDX", "FOO", "LEN"), "syntax error"),
])
def test_option_errors(texts, args, text):
    with pytest.raises(redis.ResponseError) as e:
        lcs(texts, "a", "b", *args)
    assert err(e) == text


def test_wrong_type_comes_first(texts):
    r = texts
    r.rpush("l", "1")
    r.hset("h", "f", "v")
    for key_pair in (("a", "l"), ("l", "a"), ("h", "nokey")):
        with pytest.raises(redis.ResponseError) as e:
            lcs(r, *key_pair)
        assert err(e) == "The specified keys must contain string values"
    with pytest.raises(redis.ResponseError) as e:
        lcs(r, "l", "a", "LEN", "IDX", "FOO")
    assert err(e) == "The specified keys must contain string values"
    with pytest.raises(redis.ResponseError) as e:
        lcs(r, "a")
    assert err(e) == "wrong number of arguments for 'lcs' command"


def test_keys_on_different_workers(mr):
    k1, k2 = spread_keys(2, "lcs")
    mr.set(k1, "ohmytext")
    mr.set(k2, "mynewtext")
    assert lcs(mr, k1, k2) == "mytext"
    assert lcs(mr, k2, k1, "LEN") == 6
    assert lcs(mr, k1, k2, "IDX", "WITHMATCHLEN") == [
        "matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], "len", 6]
    mr.rpush("lcs:list", "x")
    with pytest.raises(redis.ResponseError) as e:
        lcs(mr, k1, "lcs:list")
    assert err(e) == "The specified keys must contain string values"


def test_table_limit(texts):
    # 12000 x 12000 bytes need a 576 MB table: over the 512 MB proto-max-bulk-len default.
    r = texts
    r.set("big1", "a" * 12000)
    r.set("big2", "b" * 12000)
    with pytest.raises(redis.ResponseError) as e:
        lcs(r, "big1", "big2", "LEN")
    assert err(e) == "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
