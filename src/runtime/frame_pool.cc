#include "runtime/frame_pool.h"

#include <cstdlib>
#include <new>

namespace lavik {
namespace {

constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = 32;  // frames up to 2 KiB are pooled
constexpr std::size_t kMaxCached = 4096;

struct FreeBlock {
  FreeBlock* next;
};

struct Pool {
  FreeBlock* heads[kClasses] = {};
  std::size_t counts[kClasses] = {};
  ~Pool() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (heads[c] != nullptr) {
        FreeBlock* b = heads[c];
        heads[c] = b->next;
        std::free(b);
      }
    }
  }
};

thread_local Pool pool;

std::size_t ClassOf(std::size_t size) { return (size + kGranule - 1) / kGranule - 1; }

}  // namespace

void* FramePool::Allocate(std::size_t size) {
  std::size_t c = ClassOf(size);
  if (c < kClasses && pool.heads[c] != nullptr) {
    FreeBlock* b = pool.heads[c];
    pool.heads[c] = b->next;
    --pool.counts[c];
    return b;
  }
  std::size_t rounded = c < kClasses ? (c + 1) * kGranule : size;
  void* p = std::malloc(rounded);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void FramePool::Free(void* p, std::size_t size) {
  std::size_t c = ClassOf(size);
  if (c < kClasses && pool.counts[c] < kMaxCached) {
    auto* b = static_cast<FreeBlock*>(p);
    b->next = pool.heads[c];
    pool.heads[c] = b;
    ++pool.counts[c];
    return;
  }
  std::free(p);
}

}  // namespace lavik
