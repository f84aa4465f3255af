"""BGSAVE is a point-in-time snapshot (doc/rdb.md "Consistency").

One client writes in a tight loop (INCR, APPEND, DEL, SET, chunked HSET/LPUSH/SADD/ZINCRBY/XADD,
EXPIRE, DEL of whole chunked hashes) while another sends BGSAVE. The writer is sequential: op i is
sent only once op i-1 was answered. With `done` = ops answered before BGSAVE was sent and `sent` =
ops sent before its reply came back, the file must hold exactly the data after the first k ops,
for one k in [done, sent] — whatever the walk met while it ran. The file is read back through a
reference redis-server (Debian's), for both targets.
"""
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from conftest import wait_until
from test_rdb_file import info, reference, under_test

N_FIXED = 50_000
N_BIG = 9_000  # past the one-record limits: chunked hash, set, zset (8 192), list (4 096)
N_STREAM = 2_500  # chunked stream (2 048)
N_DOOMED = 4  # chunked hashes the writer deletes whole


def initial_state():
    st = {}
    for i in range(N_FIXED):
        st[f"fixed:{i}"] = ("string", f"v{i}-" + "x" * (i % 40), False)
    for j in range(500):
        st[f"cnt:{j}"] = ("string", str(j), False)
        st[f"ap:{j}"] = ("string", "a", False)
    st["hbig"] = ("hash", {f"f{i}": str(i) for i in range(N_BIG)}, False)
    st["sbig"] = ("set", {f"m{i}" for i in range(N_BIG)}, False)
    st["zbig"] = ("zset", {f"m{i}": float(i) for i in range(N_BIG)}, False)
    st["lbig"] = ("list", [str(i) for i in range(N_BIG)], False)
    st["xbig"] = ("stream", N_STREAM, False)
    for j in range(N_DOOMED):
        st[f"hdel:{j}"] = ("hash", {f"g{i}": "y" for i in range(N_BIG)}, False)
    return st


def populate(c, st):
    pipe = c.pipeline(transaction=False)
    n = 0
    for k, (t, v, _) in st.items():
        if t == "string":
            pipe.set(k, v)
        elif t == "hash":
            items = list(v.items())
            for i in range(0, len(items), 1000):
                pipe.hset(k, mapping=dict(items[i:i + 1000]))
        elif t == "set":
            items = sorted(v)
            for i in range(0, len(items), 1000):
                pipe.sadd(k, *items[i:i + 1000])
        elif t == "zset":
            items = list(v.items())
            for i in range(0, len(items), 1000):
                pipe.zadd(k, dict(items[i:i + 1000]))
        elif t == "list":
            for i in range(0, len(v), 1000):
                pipe.rpush(k, *v[i:i + 1000])
        elif t == "stream":
            for i in range(v):
                pipe.xadd(k, {"f": str(i)})
        n += 1
        if n % 2000 == 0:
            pipe.execute()
    pipe.execute()


def op(n):
    """The writer's op number n: (the key it changes, the call on a client, its effect on the
    model {key: (type, value, has_ttl)})."""
    kind = n % 12
    if kind == 0:
        k = f"cnt:{n % 500}"
        return k, (lambda c: c.incr(k)), lambda st: st.__setitem__(
            k, ("string", str(int(st[k][1]) + 1), st[k][2]))
    if kind == 1:
        k = f"ap:{n % 500}"
        return k, (lambda c: c.append(k, "b")), lambda st: st.__setitem__(
            k, ("string", st[k][1] + "b", st[k][2]))
    if kind == 2:
        k = f"fixed:{(n * 7) % N_FIXED}"
        return k, (lambda c: c.delete(k)), lambda st: st.pop(k, None)
    if kind == 3:
        k = f"new:{n}"
        return k, (lambda c: c.set(k, n)), lambda st: st.__setitem__(k, ("string", str(n), False))
    if kind == 4:
        return "hbig", (lambda c: c.hset("hbig", f"f{n}", "new")), \
            lambda st: st["hbig"][1].__setitem__(f"f{n}", "new")
    if kind == 5:
        return "lbig", (lambda c: c.lpush("lbig", n)), lambda st: st["lbig"][1].insert(0, str(n))
    if kind == 6:
        m = f"m{n % N_BIG}"
        return "sbig", (lambda c: c.srem("sbig", m)), lambda st: st["sbig"][1].discard(m)
    if kind == 7:
        m = f"m{n % 100}"
        return "zbig", (lambda c: c.zincrby("zbig", 1, m)), \
            lambda st: st["zbig"][1].__setitem__(m, st["zbig"][1][m] + 1)
    if kind == 8:
        return "xbig", (lambda c: c.xadd("xbig", {"f": "w"})), \
            lambda st: st.__setitem__("xbig", ("stream", st["xbig"][1] + 1, False))
    if kind == 9 and n // 12 < N_DOOMED:
        k = f"hdel:{n // 12}"
        return k, (lambda c: c.delete(k)), lambda st: st.pop(k, None)
    if kind == 10:
        k = f"fixed:{(n * 13 + 1) % N_FIXED}"
        return k, (lambda c: c.set(k, f"w{n}")), \
            lambda st: st.__setitem__(k, ("string", f"w{n}", False))
    k = f"fixed:{(n * 17 + 3) % N_FIXED}"

    def ttl(st):
        if k in st:
            st[k] = (st[k][0], st[k][1], True)
    return k, (lambda c: c.expire(k, 100_000)), ttl


def read_back(rc, keys):
    """{key: (type, value, has_ttl)} of `keys` as the reference server holds them."""
    out = {}
    keys = list(keys)
    pipe = rc.pipeline(transaction=False)
    for k in keys:
        pipe.type(k)
        pipe.ttl(k)
    res = pipe.execute()
    typed = []
    for i, k in enumerate(keys):
        t, ttl = res[2 * i], res[2 * i + 1]
        if t != "none":
            typed.append((k, t, ttl > 0))
    pipe = rc.pipeline(transaction=False)
    for k, t, _ in typed:
        {"string": lambda: pipe.get(k), "hash": lambda: pipe.hgetall(k),
         "set": lambda: pipe.smembers(k), "zset": lambda: pipe.zrange(k, 0, -1, withscores=True),
         "list": lambda: pipe.lrange(k, 0, -1), "stream": lambda: pipe.xlen(k)}[t]()
    vals = pipe.execute()
    for (k, t, has_ttl), v in zip(typed, vals):
        if t == "zset":
            v = dict(v)
        out[k] = (t, v, has_ttl)
    return out


def test_bgsave_is_point_in_time_under_writes(spawn_server, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    s = under_test(spawn_server, d)
    c = s.client()
    model = initial_state()
    populate(c, model)
    assert c.dbsize() == len(model)

    counts = {"done": 0, "sent": 0}
    stop = threading.Event()

    def writer():  # its exceptions come back through future.result()
        w = s.client()
        n = 0
        while not stop.is_set() and n < 200_000:
            call = op(n)[1]
            counts["sent"] = n + 1
            call(w)
            counts["done"] = n + 1
            n += 1

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(writer)
        try:
            assert wait_until(lambda: counts["done"] >= 2000, timeout=20)
            done = counts["done"]
            assert c.bgsave() is True
            sent = counts["sent"]
            assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0, timeout=60)
        finally:
            stop.set()
        future.result(timeout=30)
    assert info(c)["rdb_last_bgsave_status"] == "ok"

    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    shutil.copy(d / "dump.rdb", ref_dir / "dump.rdb")
    rc = reference(spawn_server, ref_dir).client()

    # The model after `done` ops; `late`: the keys the ops in [done, sent) change.
    for n in range(done):
        op(n)[2](model)
    late = {op(n)[0] for n in range(done, sent)}
    file_keys = set(rc.keys("*"))
    # Every other key is as the model after `done` ops says (values, TTLs, whole collections).
    stable = [k for k in model if k not in late]
    got = read_back(rc, stable)
    wrong = [k for k in stable if got.get(k) != model[k]]
    assert not wrong, f"{len(wrong)} keys differ, e.g. {wrong[:3]}: {[got.get(k) for k in wrong[:3]]}"
    extra = file_keys - set(model) - late
    assert not extra, f"keys that did not exist at the start: {sorted(extra)[:5]}"
    # The late keys: the file is the model after exactly k ops, for one k in [done, sent].
    late_got = read_back(rc, late)
    k = done
    while not all(late_got.get(key) == model.get(key) for key in late):
        assert k < sent, ("the file holds no state between the writes answered before BGSAVE "
                          f"({done}) and those sent before its reply ({sent})")
        op(k)[2](model)
        k += 1


def test_swapdb_and_flushdb_during_bgsave_do_not_reach_the_file(spawn_server, tmp_path):
    """The file numbers the databases as they were at BGSAVE's reply (SWAPDB after it is not in
    it) and holds a database FLUSHDB empties after the reply (lavik's FLUSHDB waits for the
    walk; redis-server's child has its copy)."""
    d = tmp_path / "d"
    d.mkdir()
    s = under_test(spawn_server, d)
    c = s.client()
    pipe = c.pipeline(transaction=False)
    for i in range(40_000):
        pipe.set(f"zero:{i}", i)
    pipe.execute()
    one, two = s.client(db=1), s.client(db=2)
    one.mset({f"one:{i}": i for i in range(2000)})
    two.mset({f"two:{i}": i for i in range(1000)})
    assert c.bgsave() is True
    assert c.swapdb(1, 2) is True
    assert one.flushdb() is True  # the data that was in database 2
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0, timeout=60)
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    assert one.dbsize() == 0 and two.dbsize() == 2000
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    shutil.copy(d / "dump.rdb", ref_dir / "dump.rdb")
    ref = reference(spawn_server, ref_dir)
    assert ref.client().dbsize() == 40_000
    assert sorted(ref.client(db=1).keys("*")) == sorted(f"one:{i}" for i in range(2000))
    assert sorted(ref.client(db=2).keys("*")) == sorted(f"two:{i}" for i in range(1000))


@pytest.mark.lavik_only
def test_bgsave_reads_a_file_larger_than_the_cache_reopened_with_more_workers(spawn_server,
                                                                              tmp_path):
    """The walk reads the log's segments whole (doc/rdb.md "Walk speed"). A data file written by
    one worker and reopened by two has segments holding both shards' records; older versions of
    overwritten and deleted keys are in them too; some keys are in other databases, large records
    or a collection. The file holds each key once (redis-server refuses a duplicate) as it was."""
    work = tmp_path / "work"
    work.mkdir()
    d = tmp_path / "d"
    d.mkdir()
    args = ["--cache-mb", "4", "--dir", str(d)]
    s = spawn_server(threads=1, workdir=work, extra_args=args)
    c = s.client(decode_responses=False)
    want = {0: {}, 3: {}}  # db -> {key: (value, has_ttl)}
    pipe = c.pipeline(transaction=False)
    for i in range(20_000):
        k, v = b"s:%d" % i, b"%d-" % i + b"x" * 400
        pipe.set(k, v, ex=100_000 if i % 7 == 0 else None)
        want[0][k] = (v, i % 7 == 0)
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    for i in range(0, 20_000, 3):  # older versions stay in the log
        k, v = b"s:%d" % i, b"new-%d" % i
        c.set(k, v)
        want[0][k] = (v, False)
    c.delete(*[b"s:%d" % i for i in range(1, 20_000, 10)])
    for i in range(1, 20_000, 10):
        del want[0][b"s:%d" % i]
    big = [os.urandom(3 << 20) for _ in range(2)]  # past one record: large records
    for i, v in enumerate(big):
        c.set(b"big:%d" % i, v)
        want[0][b"big:%d" % i] = (v, False)
    c.hset(b"h", mapping={b"f%d" % i: b"%d" % i for i in range(300)})
    three = s.client(db=3, decode_responses=False)
    for i in range(2_000):
        three.set(b"t:%d" % i, b"three-%d" % i)
        want[3][b"t:%d" % i] = (b"three-%d" % i, False)
    assert s.terminate() == 0

    s = spawn_server(threads=2, workdir=work, extra_args=args)
    c = s.client(decode_responses=False)
    assert c.dbsize() == len(want[0]) + 1
    assert c.bgsave() is True
    assert wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == 0, timeout=60)
    assert info(c)["rdb_last_bgsave_status"] == "ok"

    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    shutil.copy(d / "dump.rdb", ref_dir / "dump.rdb")
    ref = reference(spawn_server, ref_dir)
    for db, keys in want.items():
        rc = ref.client(db=db, decode_responses=False)
        assert rc.dbsize() == len(keys) + (1 if db == 0 else 0)
        pipe = rc.pipeline(transaction=False)
        for k in keys:
            pipe.get(k)
            pipe.ttl(k)
        got = pipe.execute()
        wrong = [k for n, (k, (v, ttl)) in enumerate(keys.items())
                 if got[2 * n] != v or (got[2 * n + 1] > 0) != ttl]
        assert not wrong, f"{len(wrong)} keys differ in db {db}, e.g. {wrong[:3]}"
    hash_ = ref.client(decode_responses=False).hgetall(b"h")
    assert hash_ == {b"f%d" % i: b"%d" % i for i in range(300)}
