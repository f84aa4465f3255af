// Mailbox: a lock-free multi-producer / single-consumer FIFO of intrusive items.
//
// Thread safety: Push() may be called from any thread; Pop() and Empty() only from the owning
// (consumer) thread. Items pushed by one producer are popped in the order that producer pushed
// them, which is what keeps a connection's commands to one shard in order.
// Algorithm: Dmitry Vyukov's intrusive MPSC node-based queue (one XCHG per push, no CAS loop).
#pragma once

#include <atomic>

namespace lavik {

struct MailboxItem {
  std::atomic<MailboxItem*> next{nullptr};
  // Runs the item on the consumer thread; the item owns its own lifetime from then on.
  void (*run)(MailboxItem* self) = nullptr;
  // Optional, on the consumer thread before `run` (Worker::DrainMailbox): starts loading into the
  // CPU's cache what `run` will touch, so a batch of items' cache misses overlap. Changes nothing.
  void (*prefetch)(MailboxItem* self) = nullptr;
};

class Mailbox {
 public:
  Mailbox() : head_(&stub_), tail_(&stub_) {}
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  void Push(MailboxItem* item) {
    item->next.store(nullptr, std::memory_order_relaxed);
    MailboxItem* prev = head_.exchange(item, std::memory_order_seq_cst);
    prev->next.store(item, std::memory_order_release);
  }

  // Returns the oldest item, or nullptr if none is fully published yet.
  MailboxItem* Pop() {
    MailboxItem* tail = tail_;
    MailboxItem* next = tail->next.load(std::memory_order_acquire);
    if (tail == &stub_) {
      if (next == nullptr) return nullptr;
      tail_ = next;
      tail = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    // A producer may be between its exchange and its store: report empty for now; Empty()
    // stays false so the consumer does not go to sleep on it.
    if (tail != head_.load(std::memory_order_acquire)) return nullptr;
    Push(&stub_);
    next = tail->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    return nullptr;
  }

  // True only when nothing is queued or being queued. Consumer thread only.
  bool Empty() const {
    return tail_ == &stub_ && stub_.next.load(std::memory_order_seq_cst) == nullptr &&
           head_.load(std::memory_order_seq_cst) == &stub_;
  }

 private:
  alignas(64) std::atomic<MailboxItem*> head_;
  alignas(64) MailboxItem* tail_;
  MailboxItem stub_;
};

}  // namespace lavik
