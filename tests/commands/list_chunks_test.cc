#include "commands/list_chunks.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/slot.h"
#include "commands/list_ops.h"
#include "storage/store.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using Elements = std::vector<std::string_view>;
using storage_test::Del;
using storage_test::TestWorker;

std::vector<std::string> Numbered(size_t from, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("e" + std::to_string(from + i));
  return out;
}

Elements Views(const std::vector<std::string>& s) { return Elements(s.begin(), s.end()); }

TEST(ListChunksTest, SplitRespectsEntryAndByteLimits) {
  std::vector<std::string> small = Numbered(0, 2 * kListChunkEntries + 5);
  Elements v = Views(small);
  std::vector<size_t> ends = SplitListElements(v);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[0], kListChunkEntries);
  EXPECT_EQ(ends[1], 2 * kListChunkEntries);
  EXPECT_EQ(ends[2], v.size());
  // Large elements: the byte limit cuts first; an element bigger than a chunk is alone.
  const std::string big(kListChunkBytes / 3, 'x'), huge(2 * kListChunkBytes, 'y');
  Elements b = {big, big, big, huge, big};
  ends = SplitListElements(b);
  EXPECT_EQ(ends, (std::vector<size_t>{2, 3, 4, 5}));
  EXPECT_TRUE(SplitListElements(Elements{}).empty());
  EXPECT_TRUE(ListNeedsChunks(v));
  EXPECT_FALSE(ListNeedsChunks(Elements(v.begin(), v.begin() + kListChunkEntries)));
}

TEST(ListChunksTest, PlanKeepsUnchangedChunksAndMergesAPushIntoTheEdge) {
  std::vector<std::string> a = Numbered(0, 10), b = Numbered(100, kListChunkEntries);
  std::vector<Elements> old = {Views(a), Views(b)};
  std::vector<ChunkRef> refs = {{0, 7, 10}, {10, 8, kListChunkEntries}};
  // LPUSH x: the small head chunk takes it; the full one stays.
  Elements e = {"x"};
  e.insert(e.end(), old[0].begin(), old[0].end());
  e.insert(e.end(), old[1].begin(), old[1].end());
  std::vector<WindowPiece> p = PlanListWindow(refs, old, e);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_FALSE(p[0].keep);
  EXPECT_EQ(p[0].end - p[0].begin, 11u);
  EXPECT_TRUE(p[1].keep);
  EXPECT_EQ(p[1].number, 8u);
  // RPUSH y onto the full tail chunk alone: it stays, y starts a chunk.
  std::vector<Elements> tail = {old[1]};
  std::vector<ChunkRef> tail_refs = {refs[1]};
  Elements t = old[1];
  t.push_back("y");
  p = PlanListWindow(tail_refs, tail, t);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].keep);
  EXPECT_FALSE(p[1].keep);
  EXPECT_EQ(p[1].begin, kListChunkEntries);
  EXPECT_EQ(p[1].end, kListChunkEntries + 1u);
  // Unchanged: everything kept. Emptied: nothing.
  p = PlanListWindow(refs, old, Elements(e.begin() + 1, e.end()));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].keep && p[1].keep);
  EXPECT_TRUE(PlanListWindow(refs, old, Elements{}).empty());
}

// Regression: redis-benchmark's LPUSH pushes the same "xxx" every time. Matched from the front,
// the full head chunk looked unchanged and every push started a one-element chunk behind it (the
// root grew by a chunk per push: quadratic again). A change at the head matches from the back.
TEST(ListChunksTest, PushOfARepeatedElementAtTheHeadStartsTheNewChunkAtTheHead) {
  std::vector<std::string> same(kListChunkEntries, "xxx");
  std::vector<Elements> old = {Views(same)};
  std::vector<ChunkRef> refs = {{0, 9, kListChunkEntries}};
  Elements e = Views(same);
  e.insert(e.begin(), "xxx");
  std::vector<WindowPiece> p = PlanListWindow(refs, old, e, /*head_first=*/true);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_FALSE(p[0].keep);
  EXPECT_EQ(p[0].begin, 0u);
  EXPECT_EQ(p[0].end, 1u);
  EXPECT_TRUE(p[1].keep);
  EXPECT_EQ(p[1].number, 9u);
  // The next push reads only that small head chunk and grows it.
  std::vector<std::string> one = {"xxx"};
  std::vector<Elements> head = {Views(one)};
  std::vector<ChunkRef> head_refs = {{0, 10, 1}};
  p = PlanListWindow(head_refs, head, Elements{"xxx", "xxx"}, /*head_first=*/true);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_FALSE(p[0].keep);
  EXPECT_EQ(p[0].end - p[0].begin, 2u);
}

TEST(ListChunksTest, RootInvariantsAreChecked) {
  ChunkRoot r;
  r.id = 5;
  r.chunks = {{0, 1, 3}, {0, 2, 4}};
  RenumberListRoot(&r);
  EXPECT_EQ(r.total, 7u);
  EXPECT_EQ(r.chunks[1].first, 3u);
  ChunkRoot p;
  EXPECT_TRUE(ParseListRoot(EncodeChunkRoot(r), &p));
  EXPECT_EQ(p.ChunkOf(2), 0u);
  EXPECT_EQ(p.ChunkOf(3), 1u);
  r.chunks[1].first = 4;  // not the running count
  EXPECT_FALSE(ParseListRoot(EncodeChunkRoot(r), &p));
}

// The list access layer against a model, on a real Store: pushes, pops, LSET, LTRIM, LINSERT
// and LREM across the chunking threshold and back, comparing the whole list after each step.
class ListChunkStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(file_.ok()) << file_.error();
    store_ = std::move(file_.MakeStores(1)[0]);
  }

  // Runs one rewrite of `scope` on the worker.
  template <typename Modify>
  void Edit(ListScope scope, Modify modify) {
    std::string error;
    bool ok = false;
    ASSERT_TRUE(worker_.RunServing(
        store_.get(), [&]() -> Task { return RewriteTask(scope, modify, &ok, &error); }));
    ASSERT_TRUE(ok) << error;
  }
  template <typename Modify>
  Task RewriteTask(ListScope scope, Modify& modify, bool* ok, std::string* error) {
    *ok = co_await RewriteList(*store_, "list", 0, scope, modify, error);
  }

  std::vector<std::string> ReadAll(ListScope scope, uint64_t* size, uint64_t* base, bool* chunked) {
    std::vector<std::string> out;
    std::string error;
    EXPECT_TRUE(worker_.RunServing(
        store_.get(), [&]() -> Task { return ReadTask(scope, &out, size, base, chunked); }));
    return out;
  }
  Task ReadTask(ListScope scope, std::vector<std::string>* out, uint64_t* size, uint64_t* base,
                bool* chunked) {
    ListRead l;
    std::string error;
    const bool ok = co_await ReadList(*store_, "list", 0, false, false, &l, &error, scope);
    EXPECT_TRUE(ok) << error;
    *size = l.size;
    *base = l.base;
    *chunked = l.chunked;
    for (uint32_t i = 0; i < l.view.size(); ++i) out->emplace_back(l.view.element(i));
  }

  void Check(const std::vector<std::string>& model) {
    uint64_t size = 0, base = 0;
    bool chunked = false;
    std::vector<std::string> all = ReadAll(ListScope::All(), &size, &base, &chunked);
    ASSERT_EQ(size, model.size());
    ASSERT_EQ(all, model);
    if (model.empty()) {
      EXPECT_FALSE(store_->Lookup("list", 0).exists);
      return;
    }
    // A point read finds the element through the root.
    const int64_t mid = static_cast<int64_t>(model.size() / 2);
    std::vector<std::string> one = ReadAll(ListScope::Index(mid), &size, &base, &chunked);
    ASSERT_LE(base, static_cast<uint64_t>(mid));
    ASSERT_LT(mid - base, one.size());
    EXPECT_EQ(one[mid - base], model[mid]);
  }

  Task FindTask(std::string_view element, int64_t rank, int64_t count, int64_t maxlen,
                std::vector<int64_t>* out, bool* ok, std::string* error) {
    *ok = co_await FindListPositions(*store_, "list", 0, element, rank, count, maxlen, out, error);
  }

  Task RootTask(ChunkRoot* root) {
    ListRead l;
    std::string error;
    const bool ok =
        co_await ReadList(*store_, "list", 0, false, false, &l, &error, ListScope::Count());
    EXPECT_TRUE(ok && l.chunked) << error;
    *root = l.root;
  }
  Task ReadErrorTask(ListScope scope, bool* ok, std::string* error) {
    ListRead l;
    *ok = co_await ReadList(*store_, "list", 0, false, false, &l, error, scope);
  }

  bool Chunked() {
    uint64_t size, base;
    bool chunked = false;
    ReadAll(ListScope::Count(), &size, &base, &chunked);
    return chunked;
  }

  TestDataFile file_;
  std::unique_ptr<Store> store_;
  TestWorker worker_;
};

TEST_F(ListChunkStoreTest, EditsMatchAModelAcrossTheThreshold) {
  std::vector<std::string> model;
  std::vector<std::string> pool;  // keeps pushed strings alive for the views
  pool.reserve(1 << 16);
  // Grow past the threshold with single pushes on both ends.
  for (int i = 0; i < static_cast<int>(kListChunkEntries) + 600; ++i) {
    pool.push_back("v" + std::to_string(i));
    const std::string_view one[] = {pool.back()};
    const bool left = i % 3 == 0;
    Edit(left ? ListScope::Head(1) : ListScope::Tail(1), [&](const ListWindow&, bool, Elements* e) {
      PushElements(e, one, left);
      return Rewrite::kWrite;
    });
    if (left) {
      model.insert(model.begin(), pool.back());
    } else {
      model.push_back(pool.back());
    }
  }
  Check(model);
  EXPECT_TRUE(Chunked());
  const size_t records_after_growth = store_->internal_records();
  EXPECT_GE(records_after_growth, 2u);
  EXPECT_LE(records_after_growth, 3u);

  std::mt19937 rng(7);
  for (int step = 0; step < 300; ++step) {
    const int op = static_cast<int>(rng() % 6);
    const int64_t n = static_cast<int64_t>(model.size());
    if (n == 0) break;
    if (op == 0) {  // pop a few from either end
      const bool left = rng() % 2;
      const int64_t count = 1 + static_cast<int64_t>(rng() % 40);
      Edit(left ? ListScope::Head(count) : ListScope::Tail(count),
           [&](const ListWindow&, bool, Elements* e) {
             std::vector<std::string> popped;
             PopElements(e, static_cast<uint64_t>(count), left, &popped);
             return Rewrite::kWrite;
           });
      const auto c = static_cast<size_t>(std::min<int64_t>(count, n));
      if (left) {
        model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(c));
      } else {
        model.resize(model.size() - c);
      }
    } else if (op == 1) {  // LSET
      const int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      pool.push_back("set" + std::to_string(step));
      Edit(ListScope::Index(i), [&](const ListWindow& w, bool, Elements* e) {
        (*e)[i - w.base] = pool.back();
        return Rewrite::kWrite;
      });
      model[i] = pool.back();
    } else if (op == 2) {  // LINSERT before a random element (whole-list form)
      const size_t at = rng() % static_cast<size_t>(n);
      pool.push_back("ins" + std::to_string(step));
      Edit(ListScope::All(), [&](const ListWindow&, bool, Elements* e) {
        e->insert(e->begin() + static_cast<std::ptrdiff_t>(at), pool.back());
        return Rewrite::kWrite;
      });
      model.insert(model.begin() + static_cast<std::ptrdiff_t>(at), pool.back());
    } else if (op == 3) {  // LREM of a random element's value
      const std::string victim = model[rng() % static_cast<size_t>(n)];
      Edit(ListScope::All(), [&](const ListWindow&, bool, Elements* e) {
        RemoveElements(e, victim, 0);
        return Rewrite::kWrite;
      });
      std::erase(model, victim);
    } else if (op == 4) {  // a batch push
      const bool left = rng() % 2;
      std::vector<std::string> batch = Numbered(100000 + step * 1000, rng() % 3000);
      for (std::string& s : batch) pool.push_back(s);
      Elements add(pool.end() - static_cast<std::ptrdiff_t>(batch.size()), pool.end());
      Edit(left ? ListScope::Head(1) : ListScope::Tail(1),
           [&](const ListWindow&, bool, Elements* e) {
             PushElements(e, add, left);
             return Rewrite::kWrite;
           });
      if (left) {
        model.insert(model.begin(), batch.rbegin(), batch.rend());
      } else {
        model.insert(model.end(), batch.begin(), batch.end());
      }
    } else if (step % 10 == 0) {  // LTRIM, now and then
      const int64_t from = static_cast<int64_t>(rng() % 50);
      const int64_t to = n - 1 - static_cast<int64_t>(rng() % 50);
      Edit(ListScope::Trim(from, to), [&](const ListWindow& w, bool, Elements* e) {
        uint32_t f, t;
        if (!ClampRange(static_cast<uint32_t>(w.size), from, to, &f, &t)) {
          e->clear();
        } else {
          e->erase(e->begin() + (t - w.base) + 1, e->end());
          e->erase(e->begin(), e->begin() + (f - w.base));
        }
        return Rewrite::kWrite;
      });
      if (from > to || from >= n) {
        model.clear();
      } else {
        model.erase(model.begin() + to + 1, model.end());
        model.erase(model.begin(), model.begin() + from);
      }
    }
    Check(model);
  }
  // Drain from the head: the list goes back to one record, then away.
  while (!model.empty()) {
    Edit(ListScope::Head(700), [&](const ListWindow&, bool, Elements* e) {
      std::vector<std::string> popped;
      PopElements(e, 700, true, &popped);
      return Rewrite::kWrite;
    });
    model.erase(model.begin(), model.begin() + std::min<size_t>(700, model.size()));
    Check(model);
  }
  EXPECT_FALSE(store_->Lookup("list", 0).exists);
}

TEST_F(ListChunkStoreTest, PositionsSearchChunkByChunkInBothDirections) {
  std::vector<std::string> model;
  for (size_t i = 0; i < 3 * kListChunkEntries + 11; ++i) {
    model.push_back(i % 1000 == 7 ? "hit" : "e" + std::to_string(i));
  }
  Elements all = Views(model);
  Edit(ListScope::Tail(1), [&](const ListWindow&, bool, Elements* e) {
    *e = all;
    return Rewrite::kWrite;
  });
  ASSERT_TRUE(Chunked());
  std::string encoded = EncodeList(all);
  ListView whole;
  ASSERT_TRUE(whole.Parse(encoded));
  for (int64_t rank : {1, 2, 5, -1, -3, 20, -20}) {
    for (int64_t count : {0, 1, 2}) {
      for (int64_t maxlen : {0, 5000, 100}) {
        std::vector<int64_t> got;
        std::string error;
        bool ok = false;
        ASSERT_TRUE(worker_.RunServing(store_.get(), [&]() -> Task {
          return FindTask("hit", rank, count, maxlen, &got, &ok, &error);
        }));
        ASSERT_TRUE(ok) << error;
        EXPECT_EQ(got, FindPositions(whole, "hit", rank, count, maxlen))
            << rank << " " << count << " " << maxlen;
      }
    }
  }
}

TEST_F(ListChunkStoreTest, AMissingChunkUnderAnUnchangedRootIsReportedNotLooped) {
  std::vector<std::string> model = Numbered(0, 2 * kListChunkEntries + 1);
  Elements all = Views(model);
  Edit(ListScope::Tail(1), [&](const ListWindow&, bool, Elements* e) {
    *e = all;
    return Rewrite::kWrite;
  });
  ChunkRoot root;
  ASSERT_TRUE(worker_.RunServing(store_.get(), [&]() -> Task { return RootTask(&root); }));
  ASSERT_EQ(root.chunks.size(), 3u);
  ASSERT_TRUE(Del(*store_, ChunkKey(root.slot, root.id, root.chunks[1].number)).ok());
  std::string error;
  bool ok = true;
  ASSERT_TRUE(worker_.RunServing(store_.get(), [&]() -> Task {
    return ReadErrorTask(ListScope::Index(kListChunkEntries + 5), &ok, &error);
  }));
  EXPECT_FALSE(ok);
  EXPECT_EQ(error, kErrListCorrupt);
  // The chunks that are there still answer.
  uint64_t size, base;
  bool chunked;
  EXPECT_EQ(ReadAll(ListScope::Index(3), &size, &base, &chunked)[3], model[3]);
}

}  // namespace
}  // namespace lavik
