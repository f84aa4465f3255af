// lavik-cache-bench: the ValueCache's cost per operation on the device-GET path (a miss, the
// read value put in, an entry evicted) and on the cached path (a hit), with Google Benchmark.
// bench/README.md ("lavik-cache-bench") says how to run it; figures are CPU ns per operation.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "storage/value_cache.h"

namespace lavik {
namespace {

constexpr size_t kValueBytes = 1024;
constexpr size_t kCacheBytes = 64 << 20;

uint64_t Fingerprint(uint64_t i) { return (i + 1) * 0x9e3779b97f4a7c15ULL | 1; }

// The keyspace is `ratio` times what the cache holds; keys are drawn uniformly, so about
// 1 - 1/ratio of the lookups miss and each miss puts a value and evicts one.
void DeviceGet(benchmark::State& state) {
  const size_t ratio = static_cast<size_t>(state.range(0));
  const size_t fits = kCacheBytes / (kValueBytes + ValueCache::kEntryOverhead);
  const size_t keys = fits * ratio;
  ValueCache cache(kCacheBytes);
  const std::string value(kValueBytes, 'v');
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < fits * 2; ++i) {  // warm up: full, with a ghost
    const uint64_t fp = Fingerprint(rng() % keys);
    if (cache.Get(fp, fp) == nullptr) cache.Put(fp, fp, value);
  }
  std::vector<uint64_t> order(1 << 22);
  for (uint64_t& k : order) k = Fingerprint(rng() % keys);
  size_t i = 0;
  for (auto _ : state) {
    const uint64_t fp = order[i++ & (order.size() - 1)];
    const std::string* v = cache.Get(fp, fp);
    if (v == nullptr) cache.Put(fp, fp, value);
    benchmark::DoNotOptimize(v);
  }
  state.counters["miss_ratio"] =
      static_cast<double>(cache.misses()) / static_cast<double>(cache.hits() + cache.misses());
}
BENCHMARK(DeviceGet)->Arg(1)->Arg(10)->Arg(100);

// The cached GET of pipelined requests: random hits over a cache far larger than the CPU's
// caches (1M values of 1 KiB), each value copied out as a reply is; with range(0) = 1 the
// lookups come in batches of 16 that are prefetched first (Store::Prefetch's three steps).
void HitBatch(benchmark::State& state) {
  const bool prefetch = state.range(0) != 0;
  constexpr size_t kKeys = 1 << 20;
  ValueCache cache(size_t{4} << 30);
  const std::string value(kValueBytes, 'v');
  for (size_t i = 0; i < kKeys; ++i) cache.Put(Fingerprint(i), Fingerprint(i), value);
  std::mt19937_64 rng(2);
  std::vector<uint64_t> order(1 << 22);
  for (uint64_t& k : order) k = Fingerprint(rng() % kKeys);
  std::string out(kValueBytes * 16, '\0');
  size_t i = 0;
  for (auto _ : state) {
    const uint64_t* batch = &order[(i += 16) & (order.size() - 1)];
    if (prefetch) {
      for (int j = 0; j < 16; ++j) cache.PrefetchSlot(batch[j]);
      cache.PrefetchBatch(batch, 16);
    }
    for (int j = 0; j < 16; ++j) {
      const std::string* v = cache.Get(batch[j], batch[j]);
      std::memcpy(out.data() + j * kValueBytes, v->data(), v->size());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 16);
}
BENCHMARK(HitBatch)->Arg(0)->Arg(1);

}  // namespace
}  // namespace lavik

BENCHMARK_MAIN();
