#include "storage/value_cache.h"

#include <algorithm>

namespace lavik {

namespace {
constexpr uint8_t kMaxFreq = 3;  // the paper's 2-bit counter
}  // namespace

ValueCache::ValueCache(size_t capacity_bytes) {
  // kEntryOverhead assumes a 72-byte Node (glibc rounds the 80-byte chunk); keep them in step.
  static_assert(sizeof(Node) <= 72);
  SetCapacity(capacity_bytes);
}

ValueCache::~ValueCache() { Clear(); }

void ValueCache::PushHead(Queue& q, Node* n) {
  n->prev = nullptr;
  n->next = q.head;
  if (q.head != nullptr) {
    q.head->prev = n;
  } else {
    q.tail = n;
  }
  q.head = n;
  q.bytes += Charge(n->value.size());
  ++q.entries;
}

void ValueCache::Unlink(Queue& q, Node* n) {
  if (n->prev != nullptr) {
    n->prev->next = n->next;
  } else {
    q.head = n->next;
  }
  if (n->next != nullptr) {
    n->next->prev = n->prev;
  } else {
    q.tail = n->prev;
  }
  n->prev = n->next = nullptr;
  q.bytes -= Charge(n->value.size());
  --q.entries;
}

ValueCache::Node* ValueCache::NewNode(uint64_t fp, uint64_t loc, std::string_view value,
                                      bool in_main) {
  if (spare_ == nullptr) return new Node{nullptr, nullptr, fp, loc, std::string(value), 0, in_main};
  Node* n = spare_;
  spare_ = n->next;
  --spare_count_;
  n->prev = n->next = nullptr;
  n->fp = fp;
  n->loc = loc;
  n->freq = 0;
  n->in_main = in_main;
  n->value.assign(value);  // into the spare's buffer: no allocation when it is large enough
  if (n->value.capacity() > 2 * n->value.size() + 64) n->value.shrink_to_fit();
  return n;
}

void ValueCache::FreeNode(Node* n) {
  if (spare_count_ >= kSpareNodes || n->value.capacity() > kSpareValueBytes) {
    delete n;
    return;
  }
  n->next = spare_;
  spare_ = n;
  ++spare_count_;
}

void ValueCache::Remove(Node* n) {
  Unlink(QueueOf(n), n);
  index_.Erase(n->fp);
  FreeNode(n);
  // kEntryOverhead charges each entry for one ghost slot, so the ghost may not outgrow the
  // entries (Erase, stale drops and shrinking shed entries without pushing to the ghost).
  while (ghost_size_ > entries()) PopGhost();
}

const std::string* ValueCache::Get(uint64_t fp, uint64_t loc) {
  Node** found = index_.Find(fp);
  if (found == nullptr) {
    ++misses_;
    return nullptr;
  }
  Node* n = *found;
  if (n->loc != loc) {
    // An older version of the key: it can never be served again, so free the memory now.
    Remove(n);
    ++misses_;
    return nullptr;
  }
  if (n->freq < kMaxFreq) ++n->freq;
  ++hits_;
  return &n->value;
}

const std::string* ValueCache::Peek(uint64_t fp, uint64_t loc) const {
  Node* const* found = index_.Find(fp);
  return found != nullptr && (*found)->loc == loc ? &(*found)->value : nullptr;
}

size_t ValueCache::ChargeOf(uint64_t fp, uint64_t loc) const {
  Node* const* found = index_.Find(fp);
  return found != nullptr && (*found)->loc == loc ? Charge((*found)->value.size()) : 0;
}

void ValueCache::Put(uint64_t fp, uint64_t loc, std::string_view value) {
  if (capacity_ == 0) return;
  Node** found = index_.Find(fp);
  // Admission: one value may take at most an eighth of the cache, so a few large values cannot
  // flush the whole working set. The second test matters only for tiny capacities, where the
  // fixed overhead alone would not fit.
  if (value.size() > capacity_ / 8 || Charge(value.size()) > capacity_) {
    if (found != nullptr) Remove(*found);
    return;
  }
  if (found != nullptr) {
    // A new version of a cached key: rewrite in place, keeping its position and counter.
    Node* n = *found;
    Queue& q = QueueOf(n);
    q.bytes -= Charge(n->value.size());
    n->value.assign(value);
    // assign() keeps a larger buffer; do not let a shrunken value pin it (bytes() counts size).
    if (n->value.capacity() > 2 * n->value.size() + 64) n->value.shrink_to_fit();
    q.bytes += Charge(n->value.size());
    n->loc = loc;
  } else {
    Node* n = NewNode(fp, loc, value, TakeGhost(fp));
    PushHead(QueueOf(n), n);
    index_.Put(fp, n);
  }
  EvictToCapacity();
}

void ValueCache::Move(uint64_t fp, uint64_t old_loc, uint64_t new_loc) {
  Node** found = index_.Find(fp);
  if (found == nullptr) return;
  Node* n = *found;
  if (n->loc == old_loc) {
    n->loc = new_loc;
  } else if (n->loc != new_loc) {
    Remove(n);  // cached from neither the old nor the new home: an older version
  }
}

void ValueCache::Erase(uint64_t fp) {
  Node** found = index_.Find(fp);
  if (found != nullptr) Remove(*found);
  // A deleted key that comes back is a new key; it should not inherit a promotion to main.
  ghost_index_.Erase(fp);
}

void ValueCache::Clear() {
  for (Queue* q : {&small_, &main_}) {
    for (Node* n = q->head; n != nullptr;) {
      Node* next = n->next;
      delete n;
      n = next;
    }
    *q = Queue{};
  }
  while (spare_ != nullptr) {
    Node* next = spare_->next;
    delete spare_;
    spare_ = next;
  }
  spare_count_ = 0;
  index_.Clear();
  ghost_ring_.clear();
  ghost_ring_.shrink_to_fit();
  ghost_head_ = ghost_size_ = 0;
  ghost_index_.Clear();
  ghost_front_seq_ = 0;
}

void ValueCache::SetCapacity(size_t capacity_bytes) {
  capacity_ = capacity_bytes;
  small_target_ = capacity_bytes / 10;
  if (capacity_ == 0) {
    Clear();
  } else {
    EvictToCapacity();
  }
}

void ValueCache::EvictToCapacity() {
  // Terminates: each step either drops an entry, moves one from small to main (at most
  // entries() times), or decrements a main entry's counter (at most 3 per entry).
  while (bytes() > capacity_) {
    // Evict small while it is over its share. Never evict its only entry while main has
    // something: that entry is the one just inserted (a value may exceed the 10% share), and
    // dropping it at once would make it uncacheable.
    bool from_small =
        small_.head != nullptr &&
        (main_.head == nullptr || (small_.bytes > small_target_ && small_.entries > 1));
    if (from_small) {
      EvictSmallTail();
    } else {
      EvictMainTail();
    }
  }
}

void ValueCache::EvictSmallTail() {
  Node* n = small_.tail;
  if (n->freq > 0) {
    // Read again while in small: worth keeping. It must re-earn its counter in main.
    Unlink(small_, n);
    n->freq = 0;
    n->in_main = true;
    PushHead(main_, n);
    return;
  }
  PushGhost(n->fp);
  Remove(n);
  ++evictions_;
}

void ValueCache::EvictMainTail() {
  Node* n = main_.tail;
  if (n->freq > 0) {
    --n->freq;
    Unlink(main_, n);
    PushHead(main_, n);
    return;
  }
  Remove(n);
  ++evictions_;
}

void ValueCache::PushGhost(uint64_t fp) {
  // The paper sizes the ghost like main in entries. Main may be far from full (all the cold
  // entries sit in small during a scan), so estimate what main could hold at the current
  // average entry size, and never remember more fingerprints than there are entries.
  size_t avg_charge = bytes() / entries();  // entries() > 0: fp is still cached
  size_t limit = std::min(entries(), (capacity_ - small_target_) / avg_charge);
  if (limit == 0) return;
  if (ghost_size_ == ghost_ring_.size()) {
    // Grow the ring, keeping the FIFO's order from index 0.
    std::vector<uint64_t> ring(std::max<size_t>(64, ghost_ring_.size() * 2));
    for (size_t i = 0; i < ghost_size_; ++i) {
      ring[i] = ghost_ring_[(ghost_head_ + i) & (ghost_ring_.size() - 1)];
    }
    ghost_ring_.swap(ring);
    ghost_head_ = 0;
  }
  ghost_index_.Put(fp, ghost_front_seq_ + ghost_size_);
  ghost_ring_[(ghost_head_ + ghost_size_) & (ghost_ring_.size() - 1)] = fp;
  ++ghost_size_;
  while (ghost_size_ > limit) PopGhost();
}

void ValueCache::PopGhost() {
  const uint64_t fp = ghost_ring_[ghost_head_];
  const uint64_t* seq = ghost_index_.Find(fp);
  if (seq != nullptr && *seq == ghost_front_seq_) ghost_index_.Erase(fp);
  ghost_head_ = (ghost_head_ + 1) & (ghost_ring_.size() - 1);
  --ghost_size_;
  ++ghost_front_seq_;
}

bool ValueCache::TakeGhost(uint64_t fp) {
  // The slot stays in the FIFO and is skipped as stale when it reaches the front.
  return ghost_index_.Erase(fp);
}

}  // namespace lavik
