"""GEO commands, checked byte for byte against Redis 7.0.15: scores (ZRANGE WITHSCORES of a geo
set), GEOPOS / GEOHASH / GEODIST text, every search form and option over a fixed data set (the
Redis docs' Palermo/Catania plus generated points; long query lists are compared through the
SHA-256 of their raw replies, taken from redis-server 7.0.15), error texts, STORE across
workers (1/2/4 threads) and a geo set large enough to be chunked (doc/collections.md)."""

import hashlib
import itertools
import random

import pytest
import redis

from conftest import RawConn, RespError, WRONGTYPE, spread_keys


def conn(r):
    kw = r.connection_pool.connection_kwargs
    return RawConn(kw["port"], host=kw["host"])


def replies(r, cmds, proto=2):
    """Raw reply bytes of each command, pipelined on one connection."""
    with conn(r) as c:
        if proto == 3:
            c.cmd("HELLO", "3")
        for q in cmds:
            c.send_command(*[str(a) for a in q])
        return [c.reply_bytes() for _ in cmds]


def cmd(r, *args):
    """The parsed reply (no redis-py reply callbacks: they expect redis-py's own geo calls)."""
    with conn(r) as c:
        return c.cmd(*[str(a) for a in args])


def one(r, *args, proto=2):
    return replies(r, [args], proto)[0]


def digest(r, cmds, proto=2):
    return hashlib.sha256(b"".join(replies(r, cmds, proto))).hexdigest()


def points(seed=7, n=300):
    rnd = random.Random(seed)
    pts = [("Palermo", "13.361389", "38.115556"), ("Catania", "15.087269", "37.502669")]
    for i in range(n):
        if i % 4 == 0:
            lon, lat = rnd.uniform(-180, 180), rnd.uniform(-85, 85)
        else:
            lon, lat = rnd.uniform(12, 16.5), rnd.uniform(36.5, 39)
        pts.append((f"p{i}", f"{lon:.6f}", f"{lat:.6f}"))
    return pts


def load(r, key="g", pts=None):
    pts = pts or points()
    args = list(itertools.chain.from_iterable((lo, la, m) for m, lo, la in pts))
    assert one(r, "GEOADD", key, *args) == b":%d\r\n" % len(pts)
    return [m for m, _, _ in pts]


def sicily(r):
    assert cmd(r, "GEOADD", "Sicily", "13.361389", "38.115556", "Palermo",
                             "15.087269", "37.502669", "Catania") == 2


# ---- the Redis docs' examples, literally ----

def test_docs_examples(r):
    sicily(r)
    assert one(r, "ZRANGE", "Sicily", 0, -1, "WITHSCORES") == (
        b"*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n")
    assert one(r, "GEODIST", "Sicily", "Palermo", "Catania") == b"$11\r\n166274.1516\r\n"
    assert one(r, "GEODIST", "Sicily", "Palermo", "Catania", "km") == b"$8\r\n166.2742\r\n"
    assert one(r, "GEODIST", "Sicily", "Palermo", "Catania", "MI") == b"$8\r\n103.3182\r\n"
    assert one(r, "GEODIST", "Sicily", "Palermo", "Catania", "ft") == b"$11\r\n545518.8700\r\n"
    assert one(r, "GEOHASH", "Sicily", "Palermo", "Catania", "nope") == (
        b"*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n")
    assert one(r, "GEOPOS", "Sicily", "Palermo", "nope") == (
        b"*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*-1\r\n")
    assert one(r, "GEOPOS", "Sicily", "Palermo", "nope", proto=3) == (
        b"*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n")
    assert one(r, "GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST") == (
        b"*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n")
    assert one(r, "GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST", "WITHCOORD",
               "WITHHASH", "ASC") == (
        b"*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n"
        b"$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n"
        b"*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n*2\r\n"
        b"$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n")
    assert one(r, "GEORADIUSBYMEMBER", "Sicily", "Palermo", 200, "km", "DESC") == (
        b"*2\r\n$7\r\nCatania\r\n$7\r\nPalermo\r\n")
    assert one(r, "GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km", "ASC",
               "WITHDIST") == (
        b"*2\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n")
    assert one(r, "GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 100, "km") == (
        b"*1\r\n$7\r\nPalermo\r\n")
    assert one(r, "GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m") == b"*0\r\n"


def test_geoadd_options(r):
    sicily(r)
    assert cmd(r, "GEOADD", "Sicily", "NX", 13.5, 38.1, "Palermo", 1, 2, "x") == 1
    assert r.geopos("Sicily", "Palermo")[0][0] == pytest.approx(13.3613893)
    assert cmd(r, "GEOADD", "Sicily", "XX", 13.5, 38.1, "Palermo", 1, 2, "y") == 0
    assert r.geopos("Sicily", "y") == [None]
    assert cmd(r, "GEOADD", "Sicily", "XX", "CH", 13.6, 38.1, "Palermo") == 1
    assert cmd(r, "GEOADD", "Sicily", "CH", 13.6, 38.1, "Palermo", 3, 4, "z") == 1
    assert cmd(r, "GEOADD", "Sicily", "CH", 13.7, 38.1, "z", 13.8, 38.1, "z") == 2
    assert cmd(r, "GEOADD", "t", 13.8, 38.1, "z") == 1
    assert r.zscore("Sicily", "z") == r.zscore("t", "z")
    assert cmd(r, "GEOADD", "Sicily", 13.361389, 38.115556, "Palermo") == 0
    assert r.zcard("Sicily") == 4


ERRORS = [
    (("GEOADD", "k", 200, 100, "x"), "ERR invalid longitude,latitude pair 200.000000,100.000000"),
    (("GEOADD", "k", 1, 2, "a", -181.5, 0, "b"),
     "ERR invalid longitude,latitude pair -181.500000,0.000000"),
    (("GEOADD", "k", 1, 85.06, "x"), "ERR invalid longitude,latitude pair 1.000000,85.060000"),
    (("GEOADD", "k", "abc", 1, "x"), "ERR value is not a valid float"),
    (("GEOADD", "k", "NX", "XX", 1, 2, "x"), "ERR syntax error"),
    (("GEOADD", "k", "CH", 1, 2, "x", "y"), "ERR syntax error"),
    (("GEOADD", "k", "ch", "nx", "ch"), "ERR syntax error"),
    (("GEODIST", "Sicily", "Palermo", "Catania", "yd"),
     "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (("GEODIST", "Sicily", "Palermo", "Catania", "km", "x"), "ERR syntax error"),
    (("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "ASC", "ASC", "ASC"),
     "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH"),
    (("GEOSEARCH", "Sicily", "BYRADIUS", 10, "km", "ASC", "ASC"),
     "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"),
    (("geosearch", "nokey", "frommember", "x", "asc", "asc", "asc"),
     "ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch"),
    (("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km"),
     "ERR syntax error"),
    (("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km", "BYBOX", 1, 1, "km"),
     "ERR syntax error"),
    (("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km", "STORE", "x"),
     "ERR syntax error"),
    (("GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", 1, "km"),
     "ERR could not decode requested zset member"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", "abc", "km"),
     "ERR need numeric radius"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", -1, "km"),
     "ERR radius cannot be negative"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", "w", 1, "km"), "ERR need numeric width"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 1, "h", "km"),
     "ERR need numeric height"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", -1, 1, "km"),
     "ERR height or width cannot be negative"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 1, 1, "yd"),
     "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "COUNT", 0),
     "ERR COUNT must be > 0"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "COUNT", "x"),
     "ERR value is not an integer or out of range"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "ANY"),
     "ERR the ANY argument requires COUNT argument"),
    (("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "WITHDIST", "foo"),
     "ERR syntax error"),
    (("GEOSEARCHSTORE", "d", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 10, "km", "WITHDIST"),
     "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
    (("GEORADIUS", "Sicily", 15, 37, 200, "km", "STORE", "d", "WITHHASH"),
     "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
     "options"),
    (("GEORADIUS_RO", "Sicily", 15, 37, 200, "km", "STORE", "d"), "ERR syntax error"),
    (("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", 200, "km", "STOREDIST", "d"),
     "ERR syntax error"),
    (("GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", -3), "ERR COUNT must be > 0"),
    (("GEORADIUS", "Sicily", 190, 37, 200, "km", "bad"),
     "ERR invalid longitude,latitude pair 190.000000,37.000000"),
    (("GEORADIUS", "Sicily", 15, 37, 200, "parsec"),
     "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (("GEORADIUSBYMEMBER", "Sicily", "nope", 200, "km"),
     "ERR could not decode requested zset member"),
    (("GEORADIUSBYMEMBER", "Sicily", "Palermo", "x", "km"), "ERR need numeric radius"),
    (("GEORADIUS", "str", 15, 37, 200, "km"), WRONGTYPE),
    (("GEOSEARCH", "str", "bad"), "ERR wrong number of arguments for 'geosearch' command"),
    (("GEOSEARCH", "str", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km"), WRONGTYPE),
    (("GEOADD", "str", 1, 2, "x"), WRONGTYPE),
    (("GEOPOS", "str", "x"), WRONGTYPE),
    (("GEODIST", "str", "x", "y"), WRONGTYPE),
]


@pytest.mark.parametrize("args,msg", ERRORS, ids=[" ".join(map(str, a))[:60] for a, _ in ERRORS])
def test_errors(r, args, msg):
    sicily(r)
    r.set("str", "v")
    assert one(r, *args) == b"-" + msg.encode() + b"\r\n"


def test_missing_keys_and_members(r):
    sicily(r)
    assert one(r, "GEODIST", "Sicily", "Palermo", "nope") == b"$-1\r\n"
    assert one(r, "GEODIST", "nokey", "a", "b") == b"$-1\r\n"
    assert one(r, "GEODIST", "nokey", "a", "b", proto=3) == b"_\r\n"
    assert one(r, "GEOPOS", "nokey", "a", "b") == b"*2\r\n*-1\r\n*-1\r\n"
    assert one(r, "GEOHASH", "nokey", "a") == b"*1\r\n$-1\r\n"
    assert one(r, "GEORADIUS", "nokey", 15, 37, 200, "km") == b"*0\r\n"
    # A missing source parses the options but not the member and its radius.
    assert one(r, "GEORADIUSBYMEMBER", "nokey", "x", "bad", "km", "WITHDIST") == b"*0\r\n"
    assert one(r, "GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == b"*0\r\n"
    r.zadd("dst", {"a": 1})
    assert one(r, "GEOSEARCHSTORE", "dst", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == (
        b":0\r\n")
    assert r.exists("dst") == 0
    r.zadd("dst", {"a": 1})
    assert one(r, "GEORADIUS", "Sicily", 0, 0, 1, "km", "STORE", "dst") == b":0\r\n"
    assert r.exists("dst") == 0


def test_edges_of_the_map(r):
    assert cmd(r, "GEOADD", "e", 180, 85.05112878, "ne", -180, -85.05112878, "sw",
                             0, 0, "o") == 3
    assert one(r, "ZRANGE", "e", 0, -1, "WITHSCORES") == (
        b"*6\r\n$2\r\nsw\r\n$1\r\n0\r\n$1\r\no\r\n$16\r\n3377699720527872\r\n"
        b"$2\r\nne\r\n$17\r\n13510798882111488\r\n")
    assert one(r, "GEOPOS", "e", "ne", "sw") == (
        b"*2\r\n*2\r\n$3\r\n180\r\n$19\r\n85.0511287799999991\r\n"
        b"*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n")
    assert one(r, "GEOHASH", "e", "ne", "sw") == b"*2\r\n$11\r\nbp05b5048p0\r\n$11\r\n00bh0hbj200\r\n"


# ---- a fixed data set, every search form and option combination ----

def query_list(seed):
    rnd = random.Random(seed)
    units = ["m", "km", "ft", "mi", "KM"]
    opts = [[], ["WITHDIST"], ["WITHCOORD"], ["WITHHASH"], ["WITHDIST", "WITHHASH", "WITHCOORD"],
            ["ASC"], ["DESC"], ["COUNT", "5"], ["COUNT", "5", "DESC"], ["COUNT", "3", "ANY"],
            ["WITHDIST", "COUNT", "7", "ASC"], ["COUNT", "1000"], ["COUNT", "2", "ANY", "DESC"]]
    search, store = [], []
    for k in range(60):
        o = opts[k % len(opts)]
        u = rnd.choice(units)
        scale = {"m": 1000, "km": 1, "KM": 1, "ft": 3280.84, "mi": 0.621371}[u]
        rad = f"{rnd.choice([0, 1, 10, 50, 100, 200, 500, 5000, 20000]) * scale:.3f}"
        lon, lat = f"{rnd.uniform(11, 17):.5f}", f"{rnd.uniform(36, 40):.5f}"
        if k % 7 == 0:
            lon, lat = f"{rnd.uniform(-180, 180):.5f}", f"{rnd.uniform(-85, 85):.5f}"
        m = rnd.choice(["Palermo", "Catania", "p1", "p2", "p3", "p8"])
        w, h = f"{rnd.uniform(0, 400) * scale:.2f}", f"{rnd.uniform(0, 400) * scale:.2f}"
        search += [["GEORADIUS", "g", lon, lat, rad, u, *o],
                   ["GEORADIUS_RO", "g", lon, lat, rad, u, *o],
                   ["GEORADIUSBYMEMBER", "g", m, rad, u, *o],
                   ["GEORADIUSBYMEMBER_RO", "g", m, rad, u, *o],
                   ["GEOSEARCH", "g", "FROMLONLAT", lon, lat, "BYRADIUS", rad, u, *o],
                   ["GEOSEARCH", "g", "FROMMEMBER", m, "BYBOX", w, h, u, *o],
                   ["GEOSEARCH", "g", "FROMLONLAT", lon, lat, "BYBOX", w, h, u, *o]]
        so = [x for x in o if not x.startswith("WITH")]
        store += [["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", lon, lat, "BYBOX", w, h, u, *so,
                   "STOREDIST"],
                  ["ZRANGE", "d", 0, -1, "WITHSCORES"],
                  ["GEOSEARCHSTORE", "d", "g", "FROMMEMBER", m, "BYRADIUS", rad, u, *so],
                  ["ZRANGE", "d", 0, -1, "WITHSCORES"],
                  ["GEORADIUS", "g", lon, lat, rad, u, *so, "STORE", "d"],
                  ["ZRANGE", "d", 0, -1, "WITHSCORES"],
                  ["GEORADIUSBYMEMBER", "g", m, rad, u, *so, "STOREDIST", "d"],
                  ["ZRANGE", "d", 0, -1, "WITHSCORES"]]
    return search, store


def test_data_set_scores_positions_hashes_distances(r):
    names = load(r)
    rnd = random.Random(3)
    dists = [["GEODIST", "g", rnd.choice(names), rnd.choice(names),
              rnd.choice(["m", "km", "ft", "mi"])] for _ in range(100)]
    assert digest(r, [["ZRANGE", "g", 0, -1, "WITHSCORES"]]) == DIGESTS["zrange"]
    assert digest(r, [["GEOPOS", "g", *names, "nope"]]) == DIGESTS["geopos"]
    assert digest(r, [["GEOPOS", "g", *names, "nope"]], proto=3) == DIGESTS["geopos3"]
    assert digest(r, [["GEOHASH", "g", *names, "nope"]]) == DIGESTS["geohash"]
    assert digest(r, dists) == DIGESTS["geodist"]


def test_data_set_searches(r):
    load(r)
    search, _ = query_list(11)
    assert digest(r, search) == DIGESTS["search"]
    assert digest(r, search[:70], proto=3) == DIGESTS["search3"]


def test_data_set_stores(r):
    load(r)
    _, store = query_list(11)
    assert digest(r, store) == DIGESTS["store"]


def test_store_replaces_destination_and_drops_ttl(r):
    sicily(r)
    r.set("d", "a string", ex=100)
    assert cmd(r, "GEORADIUS", "Sicily", 15, 37, 200, "km", "STOREDIST", "d") == 2
    assert r.ttl("d") == -1
    assert one(r, "ZRANGE", "d", 0, -1, "WITHSCORES") == (
        b"*4\r\n$7\r\nCatania\r\n$18\r\n56.441257870158204\r\n"
        b"$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n")
    assert cmd(r, "GEOSEARCHSTORE", "Sicily", "Sicily", "FROMMEMBER", "Palermo",
                             "BYRADIUS", 10, "km") == 1
    assert r.zrange("Sicily", 0, -1) == ["Palermo"]


def test_store_across_workers(mr):
    src, dst = spread_keys(2, "geo")
    load(mr, src)
    mr.zadd(dst, {"old": 1})
    n = cmd(mr, "GEOSEARCHSTORE", dst, src, "FROMMEMBER", "Palermo", "BYRADIUS", 150,
                           "km", "ASC", "STOREDIST")
    got = mr.zrange(dst, 0, -1, withscores=True)
    assert n == len(got) and n > 20
    assert "old" not in dict(got) and got[0] == ("Palermo", 0.0)
    assert [s for _, s in got] == sorted(s for _, s in got)
    assert cmd(mr, "GEORADIUS", src, 15, 37, 200, "km", "COUNT", 10, "STORE",
                              dst) == 10
    assert cmd(mr, "GEORADIUSBYMEMBER", src, "Catania", 50, "km", "STORE", dst) == (
        mr.zcard(dst))
    for m, s in mr.zrange(dst, 0, -1, withscores=True):
        assert mr.zscore(src, m) == s
    assert one(mr, "ZRANGE", dst, 0, 2, "WITHSCORES") == CATANIA_50KM_FIRST3
    assert cmd(mr, "GEOSEARCHSTORE", dst, src, "FROMLONLAT", 0, 0, "BYRADIUS", 1,
                              "m") == 0
    assert mr.exists(dst) == 0


def test_chunked_geo_set(r):
    # 9 000 points: past the 8 192-entry threshold of one collection record.
    rnd = random.Random(99)
    pts = [(f"c{i}", f"{rnd.uniform(12, 16.5):.6f}", f"{rnd.uniform(36.5, 39):.6f}")
           for i in range(9000)]
    for k in range(0, len(pts), 3000):
        load(r, "big", pts[k:k + 3000])
    assert r.zcard("big") == 9000
    cmds = [["GEOSEARCH", "big", "FROMLONLAT", 14, 37.5, "BYRADIUS", 5, "km", "ASC", "WITHDIST"],
            ["GEOSEARCH", "big", "FROMMEMBER", "c17", "BYBOX", 8, 6, "km", "DESC", "WITHCOORD"],
            ["GEORADIUS", "big", 13.5, 38, 20, "km", "COUNT", 25, "WITHHASH"],
            ["GEOPOS", "big", "c1", "c8999", "nope"],
            ["GEODIST", "big", "c1", "c8999", "km"]]
    assert digest(r, cmds) == DIGESTS["chunked"]
    assert len(cmd(r, "GEOSEARCH", "big", "FROMLONLAT", 14, 37.5, "BYRADIUS", 5,
                                 "km")) == CHUNKED_5KM

# SHA-256 of the raw replies of redis-server 7.0.15 to the same command lists.
DIGESTS = {
    "zrange": "6bb3520b36e1ff4f44aff1912d7c0b2bad03fcf359f79d8f7916af1e5b14ca55",
    "geopos": "7d35fa2bdddccb2c43f600974ab2df9d069f99c692b40b3c562396d90ffb8ba5",
    "geopos3": "6ac9ca51a216fb0542c8dcc7e3df8b7b9dded8fb2f000b81f19a2bb235dcc1f6",
    "geohash": "81ba7bf4d1c639e98c3e5cd4c79b03542a96df774d99044b1ded957415634adf",
    "geodist": "4bc16ff66094237c09f304c9962b7dd8f7715f0c64e543217e8ade77310bea35",
    "search": "85132b317c755fd97e2d9d18a72d927d8e9a733331e84d0ad50ef90461a9cb0e",
    "search3": "2cc1f47c26c0cb28c57e7283fd2b8b7e6ff5ca02527e60054b82ed7156ac40d8",
    "store": "0b3b0518b75bbdd5bd8b516d2282f793d446b6402af7c04bd5ef19dac59e1046",
    "chunked": "21b5e3399519444707c0501be492f028ea00b262b31f5366bdc9d01bd65e849b",
}
CHUNKED_5KM = 7
CATANIA_50KM_FIRST3 = b'*6\r\n$4\r\np241\r\n$16\r\n3476517289029185\r\n$2\r\np9\r\n$16\r\n3479420738607546\r\n$4\r\np138\r\n$16\r\n3479437757870158\r\n'
