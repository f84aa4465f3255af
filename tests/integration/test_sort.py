"""SORT and SORT_RO against Redis 7.0 behaviour: numeric and ALPHA order, ASC/DESC, LIMIT
clamping, BY/GET patterns (`*`, `->field`, `#`, constants), BY nosort on lists, sets and sorted
sets, STORE (replacing any type, deleting on an empty result), error texts, and pattern keys
spread over 1, 2 and 4 worker threads."""

import pytest
import redis

from conftest import WRONGTYPE, err, spread_keys

SCORE_ERR = "One or more scores can't be converted into double"


def sort(r, *args):
    return r.execute_command("SORT", *args)


def test_numeric_asc_desc_and_ties(r):
    r.rpush("l", "3", "10", "1.5", "-2", "1.0", "1", "", "inf", " 7", "0x10")
    # "" is 0, " 7" and "0x10" parse as C strtod does; equal scores fall back to bytes.
    assert sort(r, "l") == ["-2", "", "1", "1.0", "1.5", "3", " 7", "10", "0x10", "inf"]
    assert sort(r, "l", "DESC") == ["inf", "0x10", "10", " 7", "3", "1.5", "1.0", "1", "", "-2"]
    assert sort(r, "l", "desc", "asc") == sort(r, "l")  # the last order option wins
    assert r.execute_command("SORT_RO", "l", "DESC") == sort(r, "l", "DESC")


def test_alpha(r):
    r.rpush("l", "b", "B", "a", "A", "_", "10", "9", "ab")
    assert sort(r, "l", "ALPHA") == ["10", "9", "A", "B", "_", "a", "ab", "b"]
    assert sort(r, "l", "alpha", "desc") == ["b", "ab", "a", "_", "B", "A", "9", "10"]


def test_scores_that_do_not_convert(r):
    r.rpush("l", "1", "2x")
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "l")
    assert err(e) == SCORE_ERR
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "l", "LIMIT", "0", "1")  # every element is weighed, not only the window
    assert err(e) == SCORE_ERR
    r.rpush("big", "1e400")
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "big")
    assert err(e) == SCORE_ERR
    r.rpush("nan", "nan")
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "nan")
    assert err(e) == SCORE_ERR
    assert sort(r, "l", "ALPHA") == ["1", "2x"]
    assert sort(r, "l", "BY", "nosort") == ["1", "2x"]
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "l", "STORE", "dst")
    assert err(e) == SCORE_ERR
    assert r.exists("dst") == 0


@pytest.mark.parametrize("limit, expected", [
    (("0", "3"), ["1", "2", "3"]),
    (("2", "2"), ["3", "4"]),
    (("-5", "2"), ["1", "2"]),       # a negative offset is 0
    (("1", "-1"), ["2", "3", "4", "5"]),  # a negative count is "to the end"
    (("3", "100"), ["4", "5"]),
    (("5", "1"), []),
    (("100", "2"), []),
    (("1", "0"), []),
    (("0", "9223372036854775807"), ["1", "2", "3", "4", "5"]),
])
def test_limit(r, limit, expected):
    r.rpush("l", "5", "3", "1", "4", "2")
    assert sort(r, "l", "LIMIT", *limit) == expected
    assert sort(r, "l", "LIMIT", *limit, "DESC") == sort(r, "l", "DESC", "LIMIT", *limit)


def test_limit_desc_window(r):
    r.rpush("l", "5", "3", "1", "4", "2")
    assert sort(r, "l", "DESC", "LIMIT", "1", "2") == ["4", "3"]
    assert sort(r, "l", "LIMIT", "-1", "-1", "DESC") == ["5", "4", "3", "2", "1"]


def test_by_and_get_patterns(r):
    r.rpush("l", "1", "2", "3", "4")
    r.mset({"w_1": "10", "w_2": "5", "w_3": "1", "o_1": "one", "o_2": "two", "o_3": "three"})
    r.hset("h_1", "f", "30")
    r.hset("h_2", "f", "20")
    r.hset("h_3", "f", "40")
    r.hset("h_4", "g", "x")
    # w_4 is missing: its weight is 0.
    assert sort(r, "l", "BY", "w_*") == ["4", "3", "2", "1"]
    assert sort(r, "l", "BY", "w_*", "GET", "o_*", "GET", "#") == [
        None, "4", "three", "3", "two", "2", "one", "1"]
    assert sort(r, "l", "BY", "h_*->f", "DESC", "GET", "h_*->f", "GET", "h_*->g") == [
        "40", None, "30", None, "20", None, None, "x"]
    # A GET pattern without '*' names no key; a hash pattern over a string is not found.
    r.set("const", "c")
    assert sort(r, "l", "GET", "const", "GET", "w_*->f", "LIMIT", "0", "1") == [None, None]
    # A string pattern over a hash is not found either.
    assert sort(r, "l", "GET", "h_*") == [None, None, None, None]
    # "->" with nothing after it is part of the key name.
    r.set("h_1->", "arrow")
    assert sort(r, "l", "GET", "h_*->", "LIMIT", "0", "2") == ["arrow", None]
    # The pattern's '*' may sit anywhere; only the first one is replaced.
    r.set("x1y", "a")
    r.set("x1y*", "b")
    assert sort(r, "l", "GET", "x*y", "GET", "x*y*", "LIMIT", "0", "1") == ["a", "b"]


def test_by_alpha(r):
    r.rpush("l", "1", "2", "3", "4")
    r.mset({"o_1": "one", "o_2": "two", "o_3": "three"})
    # Elements with no weight key come first (ALPHA), or sort as 0 (numeric).
    assert sort(r, "l", "BY", "o_*", "ALPHA") == ["4", "1", "3", "2"]
    assert sort(r, "l", "BY", "o_*", "ALPHA", "DESC") == ["2", "3", "1", "4"]
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "l", "BY", "o_*")
    assert err(e) == SCORE_ERR


def test_by_nosort_list(r):
    r.rpush("l", "c", "a", "b", "d")
    assert sort(r, "l", "BY", "nosort") == ["c", "a", "b", "d"]
    assert sort(r, "l", "BY", "nosort", "DESC") == ["d", "b", "a", "c"]
    assert sort(r, "l", "BY", "nosort", "LIMIT", "1", "2") == ["a", "b"]
    assert sort(r, "l", "BY", "nosort", "DESC", "LIMIT", "1", "2") == ["b", "a"]
    assert sort(r, "l", "BY", "#", "GET", "#") == ["c", "a", "b", "d"]  # no '*': no sorting
    # Once a BY without '*' is given, a later BY pattern does not sort either.
    r.mset({"w_a": "3", "w_b": "2", "w_c": "1", "w_d": "0"})
    assert sort(r, "l", "BY", "w_*") == ["d", "c", "b", "a"]
    assert sort(r, "l", "BY", "nosort", "BY", "w_*") == ["c", "a", "b", "d"]
    assert sort(r, "l", "BY", "w_*", "BY", "nosort") == ["c", "a", "b", "d"]


def test_by_nosort_zset_keeps_score_order(r):
    r.zadd("z", {"a": 3, "b": 1, "c": 2, "d": 1})
    assert sort(r, "z", "BY", "nosort") == ["b", "d", "c", "a"]
    assert sort(r, "z", "BY", "nosort", "DESC") == ["a", "c", "d", "b"]
    assert sort(r, "z", "BY", "nosort", "LIMIT", "1", "2") == ["d", "c"]
    assert sort(r, "z", "BY", "nosort", "DESC", "LIMIT", "1", "5") == ["c", "d", "b"]


def test_zset_without_by_sorts_members(r):
    r.zadd("z", {"10": 1, "9": 2, "100": 3})
    assert sort(r, "z") == ["9", "10", "100"]
    assert sort(r, "z", "ALPHA") == ["10", "100", "9"]
    r.zadd("zz", {"a": 1})
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "zz")
    assert err(e) == SCORE_ERR


def test_set(r):
    r.sadd("s", "5", "3", "9", "1")
    assert sort(r, "s") == ["1", "3", "5", "9"]
    assert sort(r, "s", "DESC", "LIMIT", "0", "2") == ["9", "5"]
    # BY a constant: the set's own order (unspecified), every member once.
    assert sorted(sort(r, "s", "BY", "nosort")) == ["1", "3", "5", "9"]
    # Stored, a set is sorted ALPHA even BY a constant.
    r.sadd("t", "b", "10", "a", "9")
    assert sort(r, "t", "BY", "nosort", "STORE", "dst") == 4
    assert r.lrange("dst", 0, -1) == ["10", "9", "a", "b"]


def test_store(r):
    r.rpush("l", "3", "1", "2")
    r.mset({"o_1": "one", "o_3": "three"})
    assert sort(r, "l", "STORE", "dst") == 3
    assert r.type("dst") == "list"
    assert r.lrange("dst", 0, -1) == ["1", "2", "3"]
    # GET values not found are stored as empty strings; the count is values, not elements.
    assert sort(r, "l", "GET", "#", "GET", "o_*", "STORE", "dst") == 6
    assert r.lrange("dst", 0, -1) == ["1", "one", "2", "", "3", "three"]
    # Over a key of another type, with a TTL: replaced, TTL gone.
    r.hset("h", "a", "b")
    r.expire("h", 100)
    assert sort(r, "l", "DESC", "STORE", "h") == 3
    assert r.type("h") == "list"
    assert r.ttl("h") == -1
    assert r.lrange("h", 0, -1) == ["3", "2", "1"]
    # The source itself as destination.
    assert sort(r, "l", "STORE", "l") == 3
    assert r.lrange("l", 0, -1) == ["1", "2", "3"]


def test_store_empty_result_deletes(r):
    r.set("dst", "x")
    assert sort(r, "nokey", "STORE", "dst") == 0
    assert r.exists("dst") == 0
    r.rpush("l", "1", "2")
    r.set("dst", "x")
    assert sort(r, "l", "LIMIT", "5", "1", "STORE", "dst") == 0
    assert r.exists("dst") == 0


def test_store_large_list(r):
    values = [str(i) for i in range(6000)]
    r.rpush("l", *values)
    assert sort(r, "l", "DESC", "STORE", "dst") == 6000
    assert r.llen("dst") == 6000
    assert r.lrange("dst", 0, 2) == ["5999", "5998", "5997"]
    assert r.lindex("dst", 4500) == "1499"
    assert r.lrange("dst", -2, -1) == ["1", "0"]


def test_sort_ro(r):
    r.rpush("l", "2", "1")
    assert r.execute_command("SORT_RO", "l") == ["1", "2"]
    assert r.execute_command("SORT_RO", "l", "BY", "nosort", "GET", "#") == ["2", "1"]
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("SORT_RO", "l", "STORE", "dst")
    assert err(e) == "syntax error"
    assert r.exists("dst") == 0


def test_missing_and_wrong_type(r):
    assert sort(r, "nokey") == []
    assert sort(r, "nokey", "BY", "w_*", "GET", "#") == []
    r.set("str", "x")
    r.hset("h", "a", "1")
    for key in ("str", "h"):
        with pytest.raises(redis.ResponseError) as e:
            sort(r, key)
        assert err(e) == WRONGTYPE
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("SORT_RO", key)
        assert err(e) == WRONGTYPE
    # Syntax errors come before the type check.
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "str", "foo")
    assert err(e) == "syntax error"


@pytest.mark.parametrize("args", [
    ("foo",), ("LIMIT", "0"), ("GET",), ("BY",), ("STORE",), ("ASC", "bar"),
])
def test_syntax_errors(r, args):
    r.rpush("l", "1")
    with pytest.raises(redis.ResponseError) as e:
        sort(r, "l", *args)
    assert err(e) == "syntax error"


def test_limit_not_integer(r):
    r.rpush("l", "1")
    for limit in (("a", "1"), ("0", "1.5")):
        with pytest.raises(redis.ResponseError) as e:
            sort(r, "l", "LIMIT", *limit)
        assert err(e) == "value is not an integer or out of range"
    with pytest.raises(redis.ResponseError) as e:
        sort(r)
    assert err(e) == "wrong number of arguments for 'sort' command"


def test_patterns_across_workers(mr):
    # Weight, GET and hash keys, the source and the destination on different workers.
    weights = spread_keys(4, "sw")
    ids = [k.split(":")[1] for k in weights]
    src, dst = spread_keys(2, "sortsrc")
    mr.rpush(src, *ids)
    for rank, key in enumerate(weights):
        mr.set(key, str(100 - rank))  # the first id weighs most
        mr.set("sv:" + key.split(":")[1], "v" + str(rank))
        mr.hset("sh:" + key.split(":")[1], "f", str(rank))
    by_weight = list(reversed(ids))
    assert sort(mr, src, "BY", "sw:*") == by_weight
    assert sort(mr, src, "BY", "sw:*", "GET", "sv:*", "GET", "sh:*->f", "GET", "#") == [
        x for i in reversed(range(4)) for x in ("v" + str(i), str(i), ids[i])]
    assert sort(mr, src, "BY", "sh:*->f", "DESC", "GET", "sw:*") == ["97", "98", "99", "100"]
    assert sort(mr, src, "BY", "sw:*", "GET", "sv:*", "STORE", dst) == 4
    assert mr.lrange(dst, 0, -1) == ["v3", "v2", "v1", "v0"]
    assert mr.execute_command("SORT_RO", src, "BY", "nosort", "GET", "sw:*") == [
        "100", "99", "98", "97"]
    # In a transaction too.
    with mr.pipeline(transaction=True) as p:
        p.execute_command("SORT", src, "BY", "sw:*", "LIMIT", "0", "1")
        p.execute_command("SORT", src, "BY", "nosort", "GET", "sh:*->f", "STORE", dst)
        assert p.execute() == [[by_weight[0]], 4]
    assert mr.lrange(dst, 0, -1) == ["0", "1", "2", "3"]


def test_store_across_workers_replaces_other_type(mr):
    src, dst = spread_keys(2, "sortdst")
    mr.sadd(src, "3", "1", "2")
    mr.zadd(dst, {"m": 1})
    assert sort(mr, src, "DESC", "STORE", dst) == 3
    assert mr.lrange(dst, 0, -1) == ["3", "2", "1"]
    assert sort(mr, "nokey", "STORE", dst) == 0
    assert mr.exists(dst) == 0


def test_large_sources_and_weight_hash(r):
    # Past 4096 entries Lavik keeps sets, sorted sets and hashes in chunks.
    n = 5000
    r.sadd("s", *range(n))
    r.zadd("z", {str(i): n - i for i in range(n)})
    assert sort(r, "s", "LIMIT", "0", "3") == ["0", "1", "2"]
    assert sort(r, "s", "DESC", "LIMIT", "0", "2") == [str(n - 1), str(n - 2)]
    assert sort(r, "z", "BY", "nosort", "LIMIT", "0", "2") == [str(n - 1), str(n - 2)]
    # Weights and GET values read from fields of big hashes: the elements name the hashes.
    for h, w in (("hA", "30"), ("hB", "10"), ("hC", "20")):
        r.hset(h, mapping={**{f"x{i}": "v" for i in range(n)}, "w": w, "g": h.lower()})
    r.rpush("names", "hA", "hB", "hC")
    assert sort(r, "names", "BY", "*->w", "GET", "*->g", "GET", "*->x4999") == [
        "hb", "v", "hc", "v", "ha", "v"]
    assert sort(r, "s", "BY", "nosort", "STORE", "dst") == n
    assert r.lrange("dst", 0, 2) == ["0", "1", "10"]
