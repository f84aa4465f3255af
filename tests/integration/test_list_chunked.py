"""Large lists (doc/collections.md, "Lists"): past a few thousand elements a list is a root plus
chunks in list order. Pushes and pops at either end must write O(chunk) bytes at a million
elements, every read and edit must agree with a Python model around chunk boundaries, DEL must
free the chunks in the background, and chunked lists must survive restarts (also with another
--threads), RENAME to another slot and the blocking pops.

Reply checks are Redis behaviour and run against redis-server too; what looks at the data file
(INFO storage, restarts) is marked lavik_only."""

import pytest

from conftest import settle_written, storage, wait_swept, written_by

CHUNK = 4096  # kListChunkEntries (list_chunks.h)
BATCH = 50_000


def rpush_batched(c, key, values):
    for lo in range(0, len(values), BATCH):
        c.rpush(key, *values[lo:lo + BATCH])


def boundaries(n):
    """Indices around every chunk edge of a list built in CHUNK-sized pieces, and the ends."""
    out = {0, 1, n - 1, n - 2}
    for edge in range(CHUNK, n, CHUNK):
        out.update({edge - 1, edge, edge + 1})
    return sorted(i for i in out if 0 <= i < n)


def check_equal(c, key, model):
    assert c.llen(key) == len(model)
    for lo in range(0, len(model), 20_000):
        assert c.lrange(key, lo, lo + 19_999) == model[lo:lo + 20_000]


# --- Redis behaviour around chunk boundaries (both targets) ---

def test_reads_and_edits_match_a_model_at_chunk_boundaries(r):
    n = 5 * CHUNK + 123
    model = [f"v{i}" for i in range(n)]
    rpush_batched(r, "l", model)
    for i in range(300):  # single pushes at both ends, across a chunk edge
        r.lpush("l", f"h{i}")
        model.insert(0, f"h{i}")
        r.rpush("l", f"t{i}")
        model.append(f"t{i}")
    n = len(model)
    check_equal(r, "l", model)
    for i in boundaries(n) + [n // 2]:
        assert r.lindex("l", i) == model[i]
        assert r.lindex("l", i - n) == model[i]
    assert r.lindex("l", n) is None
    assert r.lindex("l", -n - 1) is None
    for lo, hi in [(CHUNK - 3, CHUNK + 3), (0, 9), (-10, -1), (CHUNK - 1, 3 * CHUNK + 1),
                   (-CHUNK - 5, -CHUNK + 5), (n - 2, n + 50), (5, 2), (-n - 10, 3)]:
        expect = model[lo if lo >= 0 else max(n + lo, 0):(hi + 1 if hi >= 0 else n + hi + 1)]
        assert r.lrange("l", lo, hi) == expect, (lo, hi)
    # LSET at every boundary, and out of range.
    for i in boundaries(n):
        r.lset("l", i, f"s{i}")
        model[i] = f"s{i}"
    with pytest.raises(Exception, match="index out of range"):
        r.lset("l", n, "x")
    # LINSERT before/after elements sitting at chunk edges; a missing pivot.
    for i in (CHUNK - 1, CHUNK, 2 * CHUNK + 1):
        pivot = model[i]
        assert r.linsert("l", "BEFORE", pivot, f"b{i}") == len(model) + 1
        model.insert(i, f"b{i}")
        assert r.linsert("l", "AFTER", pivot, f"a{i}") == len(model) + 1
        model.insert(i + 2, f"a{i}")
    assert r.linsert("l", "BEFORE", "nope", "x") == -1
    # LREM of repeated values spread over several chunks.
    for i in range(0, len(model), 997):
        r.lset("l", i, "dup")
        model[i] = "dup"
    assert r.lrem("l", 3, "dup") == 3
    for _ in range(3):
        model.remove("dup")
    assert r.lrem("l", -2, "dup") == 2
    for _ in range(2):
        j = len(model) - 1 - model[::-1].index("dup")
        del model[j]
    check_equal(r, "l", model)
    # LPOS with RANK, COUNT and MAXLEN over chunks.
    dups = [i for i, v in enumerate(model) if v == "dup"]
    assert r.lpos("l", "dup") == dups[0]
    assert r.lpos("l", "dup", rank=2) == dups[1]
    assert r.lpos("l", "dup", rank=-1) == dups[-1]
    assert r.lpos("l", "dup", count=0) == dups
    assert r.lpos("l", "dup", count=3, rank=-2) == [dups[-2], dups[-3], dups[-4]]
    assert r.lpos("l", "dup", count=0, maxlen=CHUNK + 10) == [d for d in dups if d < CHUNK + 10]
    assert r.lpos("l", model[3 * CHUNK + 7]) == 3 * CHUNK + 7
    assert r.lrem("l", 0, "dup") == len(dups)
    model = [v for v in model if v != "dup"]
    # LTRIM cutting inside two chunks, then to a single chunk, then to nothing.
    assert r.ltrim("l", CHUNK - 7, -CHUNK + 9)
    model = model[CHUNK - 7:len(model) - CHUNK + 10]
    check_equal(r, "l", model)
    assert r.ltrim("l", 10, CHUNK + 10)
    model = model[10:CHUNK + 11]
    check_equal(r, "l", model)
    assert r.ltrim("l", 5, 1)
    assert r.exists("l") == 0


def test_pops_with_count_span_chunks_and_empty_the_list(r):
    model = [f"e{i}" for i in range(3 * CHUNK)]
    rpush_batched(r, "l", model)
    assert r.lpop("l", CHUNK + 5) == model[:CHUNK + 5]
    model = model[CHUNK + 5:]
    assert r.rpop("l", CHUNK + 5) == model[::-1][:CHUNK + 5]
    model = model[:-(CHUNK + 5)]
    check_equal(r, "l", model)
    assert r.lmpop(1, "l", direction="LEFT", count=7) == ["l", model[:7]]
    model = model[7:]
    assert r.rpop("l", 10 * CHUNK) == model[::-1]
    assert r.exists("l") == 0
    assert r.lpushx("l", "x") == 0


def test_benchmark_like_single_lpush_then_lpop(r):
    n = 100_000
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.lpush("mylist", f"x{i}")
        if i % 10_000 == 9_999:
            assert pipe.execute()[-1] == i + 1
    assert r.llen("mylist") == n
    assert r.lrange("mylist", 0, 2) == [f"x{n - 1}", f"x{n - 2}", f"x{n - 3}"]
    for i in range(n):
        pipe.lpop("mylist")
        if i % 10_000 == 9_999:
            got = pipe.execute()
            assert got[0] == f"x{n - 1 - (i - 9_999)}" and got[-1] == f"x{n - 1 - i}"
    assert r.exists("mylist") == 0


def test_moves_and_blocking_pops_on_chunked_lists(r):
    src = [f"s{i}" for i in range(2 * CHUNK + 3)]
    rpush_batched(r, "{t}src", src)
    rpush_batched(r, "{t}dst", [f"d{i}" for i in range(CHUNK + 1)])
    assert r.lmove("{t}src", "{t}dst", "RIGHT", "LEFT") == src[-1]
    assert r.lindex("{t}dst", 0) == src[-1]
    assert r.llen("{t}dst") == CHUNK + 2
    assert r.rpoplpush("{t}src", "{t}src") == src[-2]  # rotation of one chunked list
    assert r.lindex("{t}src", 0) == src[-2]
    assert r.lrange("{t}src", 1, 2) == src[:2]
    assert r.llen("{t}src") == len(src) - 1
    assert r.blpop(["{t}src"], timeout=1) == ("{t}src", src[-2])
    assert r.brpop(["{t}src"], timeout=1) == ("{t}src", src[-3])
    assert r.blmove("{t}src", "{t}dst", 1, "LEFT", "RIGHT") == src[0]
    assert r.lindex("{t}dst", -1) == src[0]
    assert r.blmpop(1, 1, "{t}dst", direction="RIGHT", count=2) == ["{t}dst", [src[0], f"d{CHUNK}"]]


def test_rename_chunked_list_to_another_slot(r):
    model = [f"v{i}" for i in range(2 * CHUNK + 50)]
    rpush_batched(r, "a", model)
    # "a" and "b" hash to different slots (and workers when there are several).
    assert r.rename("a", "b")
    check_equal(r, "b", model)
    r.rpush("b", "z")
    r.lpush("b", "y")
    assert r.lindex("b", 0) == "y" and r.lindex("b", -1) == "z"
    assert r.llen("b") == len(model) + 2
    r.expire("b", 1000)
    r.rpush("b", "w")
    assert 900 < r.ttl("b") <= 1000


# --- the data file (lavik only) ---

@pytest.mark.lavik_only
def test_million_list_single_pushes_and_pops_write_o_chunk_bytes(spawn_server, tmp_path):
    s = spawn_server(threads=1, workdir=tmp_path)
    c = s.client()
    n = 1_000_000
    model = [f"el{i}" for i in range(n)]
    rpush_batched(c, "big", model)
    assert c.llen("big") == n
    whole = settle_written(c)
    assert whole > 8 * n  # the list itself is on the file
    limit = 256 * 1024  # a chunk (<= 64 KiB), the root (~6 KiB) and record overheads
    ops = [lambda: c.lpush("big", "head"), lambda: c.rpush("big", "tail"),
           lambda: c.lpop("big"), lambda: c.rpop("big"), lambda: c.lset("big", n // 2, "mid"),
           lambda: c.lpushx("big", "hx"), lambda: c.rpushx("big", "tx")]
    for op in ops:
        w = written_by(c, op)
        assert 0 < w < limit, w
    model[n // 2] = "mid"
    model = ["hx"] + model + ["tx"]
    assert c.llen("big") == len(model)
    for i in boundaries(len(model))[:40] + [n // 2 + 1, len(model) - 1]:
        assert c.lindex("big", i) == model[i]
    assert c.lrange("big", 0, 9) == model[:10]
    assert storage(c)["chunk_records"] >= n // 4096


@pytest.mark.lavik_only
def test_del_of_a_million_list_frees_chunks_in_background(spawn_server, tmp_path):
    s = spawn_server(threads=2, workdir=tmp_path)
    c = s.client()
    rpush_batched(c, "big", [f"el{i}" for i in range(1_000_000)])
    assert storage(c)["chunk_records"] >= 1_000_000 // 4096
    assert c.delete("big") == 1
    assert c.exists("big") == 0
    assert wait_swept(c)
    assert c.dbsize() == 0


@pytest.mark.lavik_only
@pytest.mark.parametrize("threads_before,threads_after,checkpoint",
                         [(1, 1, False), (2, 3, False), (3, 1, True)])
def test_restart_keeps_chunked_lists(spawn_server, tmp_path, threads_before, threads_after,
                                     checkpoint):
    extra = ["--shutdown-checkpoint"] if checkpoint else []
    s = spawn_server(threads=threads_before, workdir=tmp_path, extra_args=extra)
    c = s.client()
    models = {}
    for k in ("la", "lb", "lc"):
        models[k] = [f"{k}{i}" for i in range(3 * CHUNK + 17)]
        rpush_batched(c, k, models[k])
        c.lpush(k, "front")
        models[k].insert(0, "front")
    c.delete("lc")
    del models["lc"]
    c.ltrim("lb", 100, -100)
    models["lb"] = models["lb"][100:-99]
    assert s.terminate() == 0
    s2 = spawn_server(threads=threads_after, workdir=tmp_path, extra_args=extra)
    c2 = s2.client()
    assert c2.dbsize() == 2
    for k, model in models.items():
        check_equal(c2, k, model)
        c2.rpush(k, "after")
        assert c2.lindex(k, -1) == "after"
    assert c2.delete("la", "lb") == 2
    assert wait_swept(c2)
