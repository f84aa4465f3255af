#include "runtime/mailbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace lavik {
namespace {

struct TestItem : MailboxItem {
  int producer = 0;
  int seq = 0;
};

TestItem* Next(Mailbox& box) { return static_cast<TestItem*>(box.Pop()); }

TEST(MailboxTest, NewMailboxIsEmpty) {
  Mailbox box;
  EXPECT_TRUE(box.Empty());
  EXPECT_EQ(box.Pop(), nullptr);
  EXPECT_TRUE(box.Empty());
}

TEST(MailboxTest, SingleThreadFifo) {
  Mailbox box;
  std::vector<TestItem> items(100);
  for (int i = 0; i < 100; ++i) {
    items[i].seq = i;
    box.Push(&items[i]);
    EXPECT_FALSE(box.Empty());
  }
  for (int i = 0; i < 100; ++i) {
    TestItem* item = Next(box);
    ASSERT_NE(item, nullptr) << i;
    EXPECT_EQ(item->seq, i);
  }
  EXPECT_EQ(box.Pop(), nullptr);
  EXPECT_TRUE(box.Empty());
}

TEST(MailboxTest, EmptyAfterEachSingleItemRoundTrip) {
  // One item at a time exercises the path that re-inserts the stub node.
  Mailbox box;
  TestItem a;
  for (int i = 0; i < 10; ++i) {
    box.Push(&a);
    EXPECT_FALSE(box.Empty());
    EXPECT_EQ(box.Pop(), &a);
    EXPECT_TRUE(box.Empty()) << i;
    EXPECT_EQ(box.Pop(), nullptr);
  }
}

TEST(MailboxTest, InterleavedPushPopKeepsOrder) {
  Mailbox box;
  std::vector<TestItem> items(8);
  for (int i = 0; i < 8; ++i) items[i].seq = i;
  box.Push(&items[0]);
  box.Push(&items[1]);
  EXPECT_EQ(Next(box)->seq, 0);
  box.Push(&items[2]);
  EXPECT_EQ(Next(box)->seq, 1);
  EXPECT_FALSE(box.Empty());
  EXPECT_EQ(Next(box)->seq, 2);
  EXPECT_TRUE(box.Empty());
  box.Push(&items[3]);
  box.Push(&items[4]);
  EXPECT_EQ(Next(box)->seq, 3);
  EXPECT_EQ(Next(box)->seq, 4);
  EXPECT_EQ(box.Pop(), nullptr);
  EXPECT_TRUE(box.Empty());
}

TEST(MailboxTest, ItemCanBeRepushedAfterPop) {
  // ShardHop and ShardLockAwaiter push the same item again once it was popped.
  Mailbox box;
  TestItem a;
  TestItem b;
  box.Push(&a);
  box.Push(&b);
  EXPECT_EQ(box.Pop(), &a);
  box.Push(&a);
  EXPECT_EQ(box.Pop(), &b);
  EXPECT_EQ(box.Pop(), &a);
  EXPECT_EQ(box.Pop(), nullptr);
  EXPECT_TRUE(box.Empty());
}

TEST(MailboxTest, ManyProducersOneConsumer) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 100000;
  constexpr int kTotal = kProducers * kPerProducer;
  Mailbox box;
  std::vector<TestItem> items(kTotal);
  std::atomic<int> published{0};
  std::atomic<bool> go{false};

  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p]() {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < kPerProducer; ++i) {
        TestItem& item = items[p * kPerProducer + i];
        item.producer = p;
        item.seq = i;
        box.Push(&item);
        published.fetch_add(1, std::memory_order_seq_cst);
      }
    });
  }
  go.store(true, std::memory_order_release);

  std::vector<int> next_seq(kProducers, 0);
  std::vector<bool> seen(kTotal, false);
  int popped = 0;
  int order_errors = 0;
  int empty_with_items_queued = 0;
  while (popped < kTotal) {
    // Read how many pushes completed *before* asking Empty(): those items were linked in before
    // the check, so an "empty" answer would mean the consumer may sleep on queued work.
    int done_before = published.load(std::memory_order_seq_cst);
    if (box.Empty() && popped < done_before) ++empty_with_items_queued;
    TestItem* item = Next(box);
    if (item == nullptr) {
      std::this_thread::yield();
      continue;
    }
    const int index = static_cast<int>(item - items.data());
    ASSERT_GE(index, 0);
    ASSERT_LT(index, kTotal);
    ASSERT_FALSE(seen[index]) << "popped twice: " << index;
    seen[index] = true;
    if (item->seq != next_seq[item->producer]) ++order_errors;
    next_seq[item->producer] = item->seq + 1;
    ++popped;
  }
  for (std::thread& t : producers) t.join();

  EXPECT_EQ(order_errors, 0);
  EXPECT_EQ(empty_with_items_queued, 0);
  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(next_seq[p], kPerProducer);
  EXPECT_EQ(box.Pop(), nullptr);
  EXPECT_TRUE(box.Empty());
}

}  // namespace
}  // namespace lavik
