"""Long streams (doc/collections.md, "Chunked streams"): a stream built one XADD at a time to
100 000 entries must write O(chunk) bytes per XADD, and every read of it must agree with a
Python model: XRANGE/XREVRANGE windows, XREAD, the consumer-group commands, trimming, XDEL.
DEL frees the chunks in the background, and a chunked stream survives restarts (also with
another --threads) and RENAME to another slot.

The command checks are Redis behaviour and run against redis-server too; what looks at the data
file (INFO storage, restarts) is marked lavik_only."""

import threading
import time

import pytest
import redis

from conftest import err, settle_written, storage, wait_swept

KIB = 1 << 10
BATCH = 1000


def build(c, key, n, start=0):
    """n single XADDs (pipelined in batches); returns [(id, {field: value})] in order."""
    model = []
    for lo in range(start, start + n, BATCH):
        p = c.pipeline(transaction=False)
        hi = min(start + n, lo + BATCH)
        for i in range(lo, hi):
            p.xadd(key, {"f": f"v{i}"} if i % 10 else {"f": f"v{i}", "extra": "x"})
        for i, eid in zip(range(lo, hi), p.execute()):
            model.append((eid, {"f": f"v{i}"} if i % 10 else {"f": f"v{i}", "extra": "x"}))
    return model


def id_key(eid):
    ms, seq = eid.split("-")
    return int(ms), int(seq)


def window(model, lo, hi):
    """Model entries with lo <= id <= hi (ids as strings)."""
    a, b = id_key(lo), id_key(hi)
    return [e for e in model if a <= id_key(e[0]) <= b]


def as_model(reply):
    return [(eid, fields) for eid, fields in reply]


# --- Redis behaviour on a 100 000-entry stream ---


def test_100k_single_xadds_read_back_like_the_model(r):
    n = 100_000
    model = build(r, "s", n)
    assert r.xlen("s") == n
    ids = [e[0] for e in model]
    assert as_model(r.xrange("s", count=10)) == model[:10]
    assert as_model(r.xrevrange("s", count=10)) == model[::-1][:10]
    # Windows around every 1024th entry (the chunk size) and a few others, both directions.
    for k in list(range(0, n, 1024))[:40] + [n - 1025, n - 1024, n - 1023, n - 2, n - 1]:
        a, b = max(0, k - 3), min(n - 1, k + 3)
        lo, hi = ids[a], ids[b]
        want = window(model, lo, hi)
        assert want == model[a:b + 1]
        assert as_model(r.xrange("s", lo, hi)) == want
        assert as_model(r.xrevrange("s", hi, lo)) == want[::-1]
        assert as_model(r.xrange("s", lo, "+", count=5)) == model[a:a + 5]
        assert as_model(r.xrevrange("s", hi, "-", count=4)) == model[max(0, b - 3):b + 1][::-1]
        assert as_model(r.xrange("s", "(" + lo, "(" + hi)) == want[1:-1]
    # A long range crossing many chunks.
    assert as_model(r.xrange("s", ids[5000], ids[15000])) == model[5000:15001]
    assert as_model(r.xrange("s", ids[5000], "+", count=3000)) == model[5000:8000]
    # XREAD from inside the stream, COUNT across chunk boundaries.
    got = r.xread({"s": ids[2040]}, count=20)
    assert as_model(got[0][1]) == model[2041:2061]
    assert r.xread({"s": ids[-1]}) == []
    assert as_model(r.xread({"s": "0-0"}, count=3)[0][1]) == model[:3]
    # XADD with an explicit id after the stream's last, then exact MAXLEN trimming via XADD.
    last_ms = id_key(ids[-1])[0]
    assert r.xadd("s", {"f": "top"}, id=f"{last_ms + 10}-0") == f"{last_ms + 10}-0"
    model.append((f"{last_ms + 10}-0", {"f": "top"}))
    with pytest.raises(redis.ResponseError) as e:
        r.xadd("s", {"f": "x"}, id=ids[10])
    assert "equal or smaller" in err(e)
    assert r.xadd("s", {"f": "y"}, id=f"{last_ms + 11}-0", maxlen=n, approximate=False)
    model = model[2:] + [(f"{last_ms + 11}-0", {"f": "y"})]
    assert r.xlen("s") == n
    assert as_model(r.xrange("s", count=3)) == model[:3]
    # XDEL in several chunks.
    gone = [model[i][0] for i in (0, 1023, 1024, 50_000, n - 1)]
    assert r.xdel("s", *gone, "1-1") == 5
    model = [e for e in model if e[0] not in gone]
    assert r.xlen("s") == len(model)
    assert as_model(r.xrange("s", model[1020][0], model[1026][0])) == model[1020:1027]
    assert as_model(r.xrevrange("s", count=2)) == model[::-1][:2]
    info = r.xinfo_stream("s")
    assert info["length"] == len(model)
    assert info["first-entry"] == model[0] and info["last-entry"] == model[-1]
    assert info["entries-added"] == n + 2
    assert info["max-deleted-entry-id"] == gone[-1]


def test_trimming_a_chunked_stream(r):
    n = 30_000
    model = build(r, "t", n)
    # Exact MINID: everything before the given id goes.
    assert r.xtrim("t", minid=model[5000][0], approximate=False) == 5000
    model = model[5000:]
    assert r.xlen("t") == len(model)
    assert as_model(r.xrange("t", count=5)) == model[:5]
    # MAXLEN ~ removes whole nodes of 100 entries, at most LIMIT (default 100 nodes) of them.
    removed = r.execute_command("XTRIM", "t", "MAXLEN", "~", "12345")
    assert removed == 10_000
    model = model[removed:]
    removed = r.execute_command("XTRIM", "t", "MAXLEN", "~", "12345", "LIMIT", "0")
    assert removed == (len(model) - 12345) // 100 * 100
    model = model[removed:]
    assert r.xlen("t") == len(model)
    assert as_model(r.xrange("t", count=3)) == model[:3]
    assert as_model(r.xrevrange("t", count=3)) == model[::-1][:3]
    # MINID ~ and exact MAXLEN through XADD.
    r.xadd("t", {"f": "new"}, minid=model[3000][0], approximate=False)
    assert r.xlen("t") == len(model) - 3000 + 1
    length = r.xlen("t")
    assert r.xtrim("t", maxlen=10, approximate=False) == length - 10
    assert r.xlen("t") == 10
    assert as_model(r.xrange("t"))[:9] == model[-9:]
    assert r.xrange("t")[-1][1] == {"f": "new"}
    # Trimmed to nothing, the stream stays, with its last id.
    assert r.xtrim("t", maxlen=0, approximate=False) == 10
    assert r.xlen("t") == 0 and r.exists("t") == 1
    assert r.xrange("t") == []


def test_groups_on_a_chunked_stream(r):
    n = 20_000
    model = build(r, "g", n)
    ids = [e[0] for e in model]
    assert r.xgroup_create("g", "grp", id="0") is True
    got = r.xreadgroup("grp", "alice", {"g": ">"}, count=5000)
    assert as_model(got[0][1]) == model[:5000]
    got = r.xreadgroup("grp", "bob", {"g": ">"}, count=3000)
    assert as_model(got[0][1]) == model[5000:8000]
    summary = r.xpending("g", "grp")
    assert summary["pending"] == 8000
    assert summary["min"] == ids[0] and summary["max"] == ids[7999]
    assert sorted((c["name"], c["pending"]) for c in summary["consumers"]) == [
        ("alice", 5000), ("bob", 3000)]
    rng = r.xpending_range("g", "grp", min=ids[4990], max="+", count=20)
    assert [p["message_id"] for p in rng] == ids[4990:5010]
    assert [p["consumer"] for p in rng] == ["alice"] * 10 + ["bob"] * 10
    # Replaying alice's history reads entries from several chunks.
    hist = r.xreadgroup("grp", "alice", {"g": ids[1020]}, count=10)
    assert as_model(hist[0][1]) == model[1021:1031]
    assert r.xack("g", "grp", *ids[:1000]) == 1000
    claimed = r.xclaim("g", "grp", "carol", 0, ids[4000:4005])
    assert as_model(claimed) == model[4000:4005]
    nxt, entries, deleted = r.xautoclaim("g", "grp", "dave", 0, start_id=ids[6000], count=7)
    assert as_model(entries) == model[6000:6007] and nxt == ids[6007] and deleted == []
    full = r.xinfo_stream("g", full=True)
    assert full["length"] == n
    assert list(full["entries"].items()) == model[:10]
    grp = full["groups"][0]
    assert grp["name"] == "grp" and grp["pel-count"] == 7000
    assert grp["last-delivered-id"] == ids[7999]
    groups = r.xinfo_groups("g")
    assert groups[0]["pending"] == 7000 and groups[0]["lag"] == n - 8000
    # New entries reach the group; deleting the stream's last chunk's entries keeps the PEL.
    model += build(r, "g", 10, start=n)
    got = r.xreadgroup("grp", "erin", {"g": ">"})
    assert as_model(got[0][1]) == model[8000:]
    assert r.xinfo_groups("g")[0]["lag"] == 0


def test_concurrent_xadds_from_several_clients(server):
    """Pipelined XADDs from four connections interleave on the key's worker: none may be lost
    (each must commit its own chunk, not another writer's)."""
    clients = [server.client(decode_responses=True) for _ in range(4)]
    clients[0].delete("c")
    per = 6000

    def run(k):
        c = clients[k]
        for lo in range(0, per, 500):
            p = c.pipeline(transaction=False)
            for i in range(lo, lo + 500):
                p.xadd("c", {"w": str(k), "i": str(i)})
            p.execute()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c = clients[0]
    assert c.xlen("c") == 4 * per
    seen = sorted((int(f["w"]), int(f["i"])) for _, f in c.xrange("c"))
    assert seen == [(k, i) for k in range(4) for i in range(per)]
    ids = [eid for eid, _ in c.xrange("c")]
    assert ids == sorted(ids, key=id_key) and len(set(ids)) == len(ids)
    c.delete("c")


# --- Storage: bytes written, background free, restarts ---


@pytest.mark.lavik_only
def test_each_xadd_writes_a_chunk_not_the_stream(r):
    before = settle_written(r)
    build(r, "s", 100_000)
    total = settle_written(r) - before
    # One record per stream wrote the whole stream per XADD: ~80 GB for 100k entries.
    assert total < 2_000 * 1024 * KIB, total
    for _ in range(3):
        before = settle_written(r)
        for i in range(100):
            r.xadd("s", {"f": f"w{i}"})
        per_xadd = (settle_written(r) - before) / 100
        assert per_xadd < 64 * KIB, per_xadd
    assert storage(r)["chunk_records"] > 50
    assert r.xlen("s") == 100_300
    t0 = time.time()
    assert r.delete("s") == 1
    assert time.time() - t0 < 0.5
    assert r.exists("s") == 0
    assert wait_swept(r)


@pytest.mark.lavik_only
def test_small_again_becomes_one_record(r):
    build(r, "s", 5000)
    assert storage(r)["chunk_records"] > 2
    r.xtrim("s", maxlen=10, approximate=False)
    assert r.xlen("s") == 10
    assert wait_swept(r)


@pytest.mark.lavik_only
@pytest.mark.parametrize("threads_after", [2, 3])
def test_restart_keeps_chunked_streams(spawn_server, tmp_path, threads_after):
    s = spawn_server(threads=2, workdir=tmp_path)
    c = s.client(decode_responses=True)
    model = build(c, "s", 30_000)
    other = build(c, "moved", 10_000)
    c.xgroup_create("s", "grp", id="0")
    c.xreadgroup("grp", "alice", {"s": ">"}, count=100)
    c.rename("moved", "{x}moved")  # another slot: the entries move along
    assert storage(c)["chunk_records"] > 20
    assert s.terminate() == 0
    s2 = spawn_server(threads=threads_after, workdir=tmp_path)
    c2 = s2.client(decode_responses=True)
    assert c2.dbsize() == 2
    assert c2.xlen("s") == 30_000 and c2.xlen("{x}moved") == 10_000
    assert as_model(c2.xrange("s", model[2047][0], model[2049][0])) == model[2047:2050]
    assert as_model(c2.xrevrange("{x}moved", count=3)) == other[::-1][:3]
    assert c2.xpending("s", "grp")["pending"] == 100
    eid = c2.xadd("s", {"f": "after"})
    assert c2.xrevrange("s", count=1) == [(eid, {"f": "after"})]
    assert c2.delete("s", "{x}moved") == 2
    assert wait_swept(c2)
