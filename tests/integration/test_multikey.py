"""Multi-key commands across shards, run against servers with 1, 2 and 4 worker threads.

Keys are picked so their Redis Cluster hash slots spread over the whole slot range,
which makes it all but certain that any key-to-shard mapping splits them."""

import threading

import redis

from conftest import key_slot, spread_keys

THREADS = [1, 2, 4]


KEYS = spread_keys(100, "mk")


def test_keys_cover_the_slot_range():
    slots = sorted(key_slot(k) for k in KEYS)
    assert len(set(slots)) == 100
    assert slots[0] < 164 and slots[-1] >= 16384 - 164


def test_mset_mget_100_keys(mr):
    values = {k: f"v-{k}" for k in KEYS}
    assert mr.mset(values) is True
    assert mr.mget(KEYS) == [values[k] for k in KEYS]
    for k in KEYS[::10]:
        assert mr.get(k) == values[k]
    assert mr.dbsize() == 100


def test_mget_mixed_present_and_missing(mr):
    present = KEYS[::2]
    mr.mset({k: k for k in present})
    assert mr.mget(KEYS) == [k if i % 2 == 0 else None for i, k in enumerate(KEYS)]


def test_mget_same_key_repeated(mr):
    mr.set(KEYS[0], "x")
    assert mr.mget([KEYS[0], KEYS[50], KEYS[0]]) == ["x", None, "x"]


def test_msetnx_100_keys(mr):
    assert mr.msetnx({k: "1" for k in KEYS}) is True
    assert mr.mget(KEYS) == ["1"] * 100


def test_msetnx_is_all_or_nothing(mr):
    mr.set(KEYS[73], "existing")
    assert mr.msetnx({k: "new" for k in KEYS}) is False
    got = mr.mget(KEYS)
    assert got[73] == "existing"
    assert got.count(None) == 99
    assert mr.dbsize() == 1


def test_del_100_keys(mr):
    mr.mset({k: "1" for k in KEYS[:60]})
    assert mr.delete(*KEYS) == 60
    assert mr.dbsize() == 0
    assert mr.delete(*KEYS) == 0


def test_unlink_100_keys(mr):
    mr.mset({k: "1" for k in KEYS})
    assert mr.unlink(*KEYS[:30], "missing-key") == 30
    assert mr.dbsize() == 70
    assert mr.exists(*KEYS[:30]) == 0


def test_exists_100_keys_with_duplicates(mr):
    mr.mset({k: "1" for k in KEYS[:40]})
    assert mr.exists(*KEYS) == 40
    assert mr.exists(*(KEYS + KEYS[:10])) == 50


def test_touch_100_keys(mr):
    mr.mset({k: "1" for k in KEYS[::4]})
    assert mr.touch(*KEYS) == 25


def cross_slot_pairs(count=6):
    """Pairs of keys whose slots are far apart."""
    return [(KEYS[i], KEYS[(i + 50) % 100]) for i in range(0, 100, 100 // count)][:count]


def test_rename_across_slots(mr):
    for src, dst in cross_slot_pairs():
        assert key_slot(src) != key_slot(dst)
        mr.set(src, f"value-of-{src}")
        assert mr.rename(src, dst) is True
        assert mr.exists(src) == 0
        assert mr.get(dst) == f"value-of-{src}"
        assert mr.ttl(dst) == -1
        # And back again.
        assert mr.rename(dst, src) is True
        assert mr.get(src) == f"value-of-{src}"
        assert mr.exists(dst) == 0


def test_rename_across_slots_carries_ttl(mr):
    for src, dst in cross_slot_pairs():
        mr.set(src, "v", ex=1000)
        mr.set(dst, "old")  # overwritten, and its lack of TTL with it
        assert mr.rename(src, dst) is True
        assert 990 <= mr.ttl(dst) <= 1000
        assert mr.get(dst) == "v"
        assert mr.exists(src) == 0


def test_rename_across_slots_drops_destination_ttl(mr):
    src, dst = cross_slot_pairs()[0]
    mr.set(src, "v")
    mr.set(dst, "old", ex=1000)
    mr.rename(src, dst)
    assert mr.ttl(dst) == -1


def test_renamenx_across_slots(mr):
    for src, dst in cross_slot_pairs():
        mr.set(src, "s")
        mr.set(dst, "d")
        assert mr.renamenx(src, dst) is False
        assert mr.mget(src, dst) == ["s", "d"]
        mr.delete(dst)
        mr.expire(src, 500)
        assert mr.renamenx(src, dst) is True
        assert mr.exists(src) == 0
        assert mr.get(dst) == "s"
        assert 490 <= mr.ttl(dst) <= 500


def test_mset_mget_atomic_across_workers(mr):
    """Two writers MSET the same value into a group of keys; a reader's MGET must
    never see the group half-written."""
    group = KEYS[::13]  # 8 keys from all over the slot range
    assert len(group) == 8
    port = mr.connection_pool.connection_kwargs["port"]
    mr.mset({k: "init" for k in group})
    errors = []
    stop = threading.Event()
    reads = [0]
    distinct = set()

    def writer(tag):
        try:
            c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
            for i in range(2000):
                c.mset({k: f"{tag}-{i}" for k in group})
            c.close()
        except Exception as e:  # reported by the main thread
            errors.append(e)

    def reader():
        try:
            c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
            while not stop.is_set():
                values = c.mget(group)
                reads[0] += 1
                distinct.add(values[0])
                if len(set(values)) != 1:
                    errors.append(AssertionError(f"torn MGET: {values}"))
                    return
            c.close()
        except Exception as e:
            errors.append(e)

    writers = [threading.Thread(target=writer, args=(t,)) for t in ("w1", "w2")]
    rd = threading.Thread(target=reader)
    rd.start()
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
    stop.set()
    rd.join(timeout=30)
    assert not errors, errors[0]
    assert reads[0] > 10
    assert len(distinct) > 2  # the reader really saw the writers' progress
    final = mr.mget(group)
    assert len(set(final)) == 1 and final[0] in ("w1-1999", "w2-1999")
