"""Large hashes, sets and sorted sets (doc/collections.md, "Large collections"): built in batches
to a million members, then single-member writes must write O(chunk) bytes, every read must agree
with a Python model, DEL must free the chunks in the background, and chunked collections must
survive restarts (also with another --threads), RENAME, EXPIRE and multi-key commands.

The read/write checks are Redis behaviour and run against redis-server too; what looks at the
data file (INFO storage, restarts) is marked lavik_only."""

import threading
import time

import pytest

from conftest import storage, wait_swept, written_by

MIB = 1 << 20
BATCH = 50_000


def build_set(c, key, n, start=0):
    for lo in range(start, start + n, BATCH):
        c.sadd(key, *[f"m{i}" for i in range(lo, min(start + n, lo + BATCH))])


def build_hash(c, key, n):
    for lo in range(0, n, BATCH):
        c.hset(key, mapping={f"f{i}": f"v{i}" for i in range(lo, min(n, lo + BATCH))})


def zscore_of(i):
    return (i * 7919) % 1_000_003 / 4  # distinct enough, with some ties


def build_zset(c, key, n):
    for lo in range(0, n, BATCH):
        c.zadd(key, {f"z{i}": zscore_of(i) for i in range(lo, min(n, lo + BATCH))})


def scan_all(fn):
    cursor, seen = 0, []
    while True:
        cursor, part = fn(cursor)
        seen.extend(part)
        if cursor == 0:
            return seen


# --- Redis behaviour at a million members ---


def test_million_member_set_reads_and_writes(r):
    n = 1_000_000
    build_set(r, "big", n)
    assert r.scard("big") == n
    for i in (0, 1, 4095, 4096, 500_000, n - 1):
        assert r.sismember("big", f"m{i}")
    assert not r.sismember("big", f"m{n}")
    assert r.smismember("big", ["m7", "nope", f"m{n - 2}"]) == [1, 0, 1]
    assert r.sadd("big", "fresh") == 1
    assert r.sadd("big", "fresh", "m3") == 0
    assert r.srem("big", "fresh", "m3", "absent") == 2
    assert r.scard("big") == n - 1
    members = r.smembers("big")
    assert len(members) == n - 1 and "m3" not in members and "m4" in members
    seen = scan_all(lambda cur: r.sscan("big", cur, count=20_000))
    assert len(seen) == len(set(seen)) == n - 1
    assert r.type("big") == "set"
    assert r.dbsize() == 1
    assert r.keys("*") == ["big"]
    assert r.randomkey() == "big"
    cursor, keys = r.scan(0, count=1000)
    assert keys == ["big"] and cursor == 0
    assert r.delete("big") == 1
    assert r.exists("big") == 0 and r.dbsize() == 0


def test_million_member_hash(r):
    n = 1_000_000
    build_hash(r, "h", n)
    assert r.hlen("h") == n
    assert r.hget("h", "f123456") == "v123456"
    assert r.hmget("h", ["f1", "nope", "f999999"]) == ["v1", None, "v999999"]
    assert r.hexists("h", "f5") and not r.hexists("h", "g5")
    assert r.hstrlen("h", "f10") == 3
    assert r.hset("h", "f10", "ten") == 0 and r.hget("h", "f10") == "ten"
    assert r.hsetnx("h", "new", "1") == 1 and r.hsetnx("h", "new", "2") == 0
    assert r.hincrby("h", "new", 41) == 42
    assert float(r.hincrbyfloat("h", "new", 0.5)) == 42.5
    assert r.hdel("h", "new", "f11", "missing") == 2
    assert r.hlen("h") == n - 1
    seen = scan_all(lambda cur: r.hscan("h", cur, count=20_000))
    fields = [f for part in seen for f in part] if seen and isinstance(seen[0], tuple) else seen
    assert len(fields) == len(set(fields)) == n - 1
    everything = r.hgetall("h")
    assert len(everything) == n - 1 and everything["f10"] == "ten" and "f11" not in everything


def test_million_member_zset(r):
    n = 1_000_000
    build_zset(r, "z", n)
    model = sorted(((zscore_of(i), f"z{i}") for i in range(n)))
    assert r.zcard("z") == n
    assert r.zscore("z", "z777") == zscore_of(777)
    assert r.zmscore("z", ["z1", "nope"]) == [zscore_of(1), None]
    assert r.zrange("z", 0, 9, withscores=True) == [(m, s) for s, m in model[:10]]
    assert r.zrange("z", -5, -1) == [m for _, m in model[-5:]]
    lo, hi = 1000.0, 1010.0
    want = [m for s, m in model if lo <= s <= hi]
    assert r.zrangebyscore("z", lo, hi) == want
    assert r.zadd("z", {"zz": -1.0}) == 1
    assert r.zrange("z", 0, 0) == ["zz"]
    assert r.zincrby("z", 2.0, "zz") == 1.0
    assert r.zrem("z", "zz", "z0", "nope") == 2
    assert r.zcard("z") == n - 1
    seen = scan_all(lambda cur: r.zscan("z", cur, count=20_000))
    assert len(seen) == len({m for m, _ in seen}) == n - 1


def test_multi_key_set_algebra_over_chunked_sets(r):
    check_set_algebra(r)


def test_multi_key_set_algebra_with_four_workers(spawn_server):
    s = spawn_server(threads=4)
    c = s.client()
    check_set_algebra(c)
    # Keys on different workers: ZUNIONSTORE reading a chunked set and a chunked sorted set.
    build_zset(c, "{d}z", 20_000)
    assert c.zunionstore("{e}out", ["{a}s1", "{d}z"]) == 219_999
    assert c.zscore("{e}out", "z5") == zscore_of(5) and c.zscore("{e}out", "m7") == 1.0


def check_set_algebra(r):
    build_set(r, "{a}s1", 200_000)
    build_set(r, "{b}s2", 200_000, start=150_000)
    assert r.sintercard(2, ["{a}s1", "{b}s2"]) == 50_000
    assert r.sunionstore("{c}u", "{a}s1", "{b}s2") == 350_000
    assert r.scard("{c}u") == 350_000
    assert r.sdiffstore("{c}d", "{a}s1", "{b}s2") == 150_000
    assert r.smove("{a}s1", "{b}s2", "m0") == 1
    assert not r.sismember("{a}s1", "m0") and r.sismember("{b}s2", "m0")
    assert r.scard("{a}s1") == 199_999 and r.scard("{b}s2") == 200_001
    assert r.sadd("{c}u", "extra") == 1 and r.scard("{c}u") == 350_001


def test_rename_expire_persist_on_a_chunked_set(r):
    build_set(r, "{t}src", 100_000)
    r.rename("{t}src", "{t}dst")  # same slot: only the root moves
    assert r.scard("{t}dst") == 100_000 and r.exists("{t}src") == 0
    r.rename("{t}dst", "elsewhere")  # another slot: the entries move along
    assert r.scard("elsewhere") == 100_000 and r.sismember("elsewhere", "m99999")
    assert r.sadd("elsewhere", "x") == 1 and r.scard("elsewhere") == 100_001
    assert r.expire("elsewhere", 100)
    assert 0 < r.ttl("elsewhere") <= 100
    assert r.sadd("elsewhere", "y") == 1
    assert 0 < r.ttl("elsewhere") <= 100  # writes keep the TTL
    assert r.persist("elsewhere") and r.ttl("elsewhere") == -1
    assert r.type("elsewhere") == "set"
    r.set("elsewhere", "now a string")  # overwrite frees the chunks
    assert r.get("elsewhere") == "now a string"
    build_set(r, "short", 50_000)
    r.pexpire("short", 50)
    time.sleep(0.2)
    assert r.exists("short") == 0
    assert r.dbsize() == 1


def test_concurrent_writers_of_one_chunked_key_lose_nothing(server, r):
    """Several connections write one big (chunked) set, hash and list at once: writers of one key
    on one worker read the same root while they wait for chunk reads, and every change must land
    (each chunk written under a distinct number)."""
    base = [f"b{i}" for i in range(20000)]
    for i in range(0, len(base), 5000):
        r.sadd("cw:set", *base[i:i + 5000])
        r.hset("cw:hash", mapping={m: "0" for m in base[i:i + 5000]})
        r.rpush("cw:list", *base[i:i + 5000])
    writers, per_writer = 4, 600
    failures = []

    def write(w):
        c = server.client()
        try:
            p = c.pipeline(transaction=False)
            for i in range(per_writer):
                p.sadd("cw:set", f"w{w}:{i}")
                p.srem("cw:set", f"b{w * per_writer + i}")
                p.hincrby("cw:hash", f"b{i}", 1)
                p.rpush("cw:list", f"w{w}:{i}")
                if len(p) >= 200:
                    p.execute()
            p.execute()
        except Exception as e:  # reported below: a thread cannot fail the test itself
            failures.append(repr(e))
        finally:
            c.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert r.scard("cw:set") == len(base)  # as many added as removed
    added = {f"w{w}:{i}" for w in range(writers) for i in range(per_writer)}
    removed = {f"b{i}" for i in range(writers * per_writer)}
    members = r.smembers("cw:set")
    assert added <= members and not (removed & members)
    assert all(int(v) == writers for v in r.hmget("cw:hash", [f"b{i}" for i in range(per_writer)]))
    assert r.llen("cw:list") == len(base) + writers * per_writer
    tail = r.lrange("cw:list", len(base), -1)
    assert sorted(tail) == sorted(added)
    for w in range(writers):  # one connection's pushes keep their order
        mine = [x for x in tail if x.startswith(f"w{w}:")]
        assert mine == [f"w{w}:{i}" for i in range(per_writer)]


def test_shrinking_collection_and_emptying(r):
    build_set(r, "s", 30_000)
    for lo in range(0, 29_000, 1000):
        assert r.srem("s", *[f"m{i}" for i in range(lo, lo + 1000)]) == 1000
    assert r.scard("s") == 1000
    assert sorted(r.smembers("s")) == sorted(f"m{i}" for i in range(29_000, 30_000))
    assert r.srem("s", *[f"m{i}" for i in range(29_000, 30_000)]) == 1000
    assert r.exists("s") == 0


def test_random_members_of_chunked_collections(r):
    build_set(r, "s", 30_000)
    build_hash(r, "h", 30_000)
    build_zset(r, "z", 30_000)
    picks = {r.srandmember("s") for _ in range(200)}
    assert len(picks) > 150 and all(p.startswith("m") and int(p[1:]) < 30_000 for p in picks)
    assert all(r.hget("h", f) is not None for f in {r.hrandfield("h") for _ in range(50)})
    assert all(r.zscore("z", m) is not None for m in {r.zrandmember("z") for _ in range(50)})
    popped = [r.spop("s") for _ in range(100)]
    assert len(set(popped)) == 100
    assert r.scard("s") == 29_900
    assert not any(r.smismember("s", popped))
    assert len(r.spop("s", 900)) == 900 and r.scard("s") == 29_000


# --- Storage: bytes written, background free, restarts ---


@pytest.mark.lavik_only
def test_single_member_writes_write_a_chunk_then_del_frees_in_the_background(r):
    build_set(r, "big", 1_000_000)
    build_hash(r, "h", 200_000)
    build_zset(r, "z", 200_000)
    assert storage(r)["chunk_records"] > 200
    for fn in (lambda: r.sadd("big", "one-more"), lambda: r.srem("big", "m5"),
               lambda: r.hset("h", "f5", "new"), lambda: r.zadd("z", {"z5": 3.5}),
               lambda: r.zrem("z", "z6")):
        # One record per collection wrote the whole of it: 18 MB for the set, 3+ MB for the others.
        assert written_by(r, fn) < MIB
    r.delete("h", "z")
    deadline = time.time() + 30
    while r.info("memory")["lazyfree_pending_objects"] > 0 and time.time() < deadline:
        time.sleep(0.1)
    assert r.info("memory")["lazyfree_pending_objects"] == 0
    live = storage(r)["bytes_live"]
    t0 = time.time()
    assert r.delete("big") == 1
    assert time.time() - t0 < 0.5  # the chunks are freed later, in slices
    assert r.dbsize() == 0 and r.exists("big") == 0
    assert wait_swept(r)
    assert storage(r)["bytes_live"] < live // 10


@pytest.mark.lavik_only
@pytest.mark.parametrize("threads_after", [2, 3])
def test_restart_keeps_chunked_collections(spawn_server, tmp_path, threads_after):
    s = spawn_server(threads=2, workdir=tmp_path)
    c = s.client(decode_responses=True)
    build_set(c, "s", 100_000)
    build_hash(c, "h", 60_000)
    build_zset(c, "z", 60_000)
    c.sadd("s", "late")
    c.rename("s", "{x}s")  # another slot, before the restart
    chunks = storage(c)["chunk_records"]
    assert chunks > 20
    assert s.terminate() == 0
    s2 = spawn_server(threads=threads_after, workdir=tmp_path)
    c2 = s2.client(decode_responses=True)
    assert c2.dbsize() == 3
    assert c2.scard("{x}s") == 100_001 and c2.sismember("{x}s", "late")
    assert c2.hlen("h") == 60_000 and c2.hget("h", "f59999") == "v59999"
    assert c2.zcard("z") == 60_000 and c2.zscore("z", "z12") == zscore_of(12)
    seen = scan_all(lambda cur: c2.sscan("{x}s", cur, count=5000))
    assert len(seen) == len(set(seen)) == 100_001
    assert c2.sadd("{x}s", "after") == 1
    assert c2.delete("h", "z", "{x}s") == 3
    assert wait_swept(c2)


@pytest.mark.lavik_only
def test_after_a_checkpoint_start_unread_chunked_keys_still_free_their_chunks(spawn_server,
                                                                             tmp_path):
    s = spawn_server(threads=2, workdir=tmp_path, extra_args=["--shutdown-checkpoint"])
    c = s.client()
    build_set(c, "kept", 40_000)
    kept_chunks = storage(c)["chunk_records"]
    assert kept_chunks > 4
    build_set(c, "deleted", 40_000)
    build_hash(c, "overwritten", 40_000)
    build_zset(c, "expiring", 40_000)
    c.pexpire("expiring", 3000)
    assert s.terminate() == 0
    s2 = spawn_server(threads=2, workdir=tmp_path, extra_args=["--shutdown-checkpoint"])
    c2 = s2.client()
    assert int(storage(c2)["recovery_from_checkpoint"]) == 1
    # No command reads these before they die: the registry learns them on the way out (DEL and
    # SET read the old record first; an expired one is read back from its deletion marker).
    assert c2.delete("deleted") == 1
    c2.set("overwritten", "a string now")
    deadline = time.time() + 20
    while c2.dbsize() > 2 and time.time() < deadline:  # active expiry, no access
        time.sleep(0.2)
    assert c2.dbsize() == 2
    assert wait_swept(c2, chunks_left=kept_chunks)
    assert c2.scard("kept") == 40_000
