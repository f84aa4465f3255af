// EventLoop: one io_uring ring per worker thread, for sockets now and device reads later.
//
// Every submission carries an IoOp* as user_data; the completion calls op->complete(op, res,
// flags) on the loop's thread. The ring is set up with SINGLE_ISSUER | DEFER_TASKRUN (measured:
// 8-9 us of server CPU per request vs 18-25 us without), so completions are only reaped inside
// Run(), once per loop turn, together with one submit-and-wait.
//
// Thread safety: everything here runs on the owning thread, except Wake(), which any thread may
// call to end a wait early.
#pragma once

#include <liburing.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lavik {

struct IoOp {
  void (*complete)(IoOp* op, int res, uint32_t cqe_flags) = nullptr;
};

class EventLoop {
 public:
  EventLoop() = default;
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Sets up the ring on the calling thread (SINGLE_ISSUER binds the ring to it). Returns false and
  // fills *error if io_uring is unavailable.
  bool Init(unsigned entries, std::string* error);

  // Returns a submission entry tagged with op; flushes the queue to the kernel if it is full.
  io_uring_sqe* Prepare(IoOp* op);

  // One loop turn: submits what was prepared, waits for at least one completion unless
  // `may_block` is false (or timeout_us elapses; < 0 = no timeout) and dispatches all completions.
  void Turn(bool may_block, int64_t timeout_us);

  // Called before the loop sleeps: returns true if the caller should not sleep after all.
  // Set by the owner (Worker) to implement the wake-up handshake.
  std::function<bool()> before_sleep;

  // Any thread: makes a sleeping Turn() return.
  void Wake();
  // Owner thread: hands what was prepared to the kernel now (a loop that stops turning).
  void Submit() { io_uring_submit(&ring_); }
  // Owner thread: makes `target`'s sleeping Turn() return with a message sent through this ring
  // (IORING_OP_MSG_RING), submitted with this turn's other submissions: no system call of its
  // own, where Wake() costs an eventfd write here and an eventfd read there. False when the
  // kernel lacks MSG_RING (the caller then uses target->Wake()).
  bool WakeThrough(EventLoop* target);

  // Provided buffers for multishot receives (buffer group kRecvGroup, a ring the kernel takes
  // buffers from as data arrives). Set up by Init when the kernel has buffer rings; a consumer
  // copies a buffer's bytes out in its completion and hands the buffer back at once.
  static constexpr uint16_t kRecvGroup = 0;
  static constexpr unsigned kRecvBuffers = 1024;
  static constexpr unsigned kRecvBufferSize = 8 * 1024;
  bool has_recv_buffers() const { return recv_ring_ != nullptr; }
  const char* recv_buffer(uint16_t bid) const { return recv_bufs_ + size_t{bid} * kRecvBufferSize; }
  void RecycleRecvBuffer(uint16_t bid);

  // Registered (direct) descriptors: a sparse file table of the ring. A descriptor installed in
  // it is used with IOSQE_FIXED_FILE and its slot number in place of the fd, which spares the
  // kernel the file-table lookup and reference count (fget/fput) of every request on it. The
  // table holds its own reference to the file: the owner must UnregisterFile before it closes
  // the fd for the file to go away. -1 when the table is full or absent (LAVIK_LEGACY_IO,
  // LAVIK_FIXED_FILES=0, an old kernel): the caller then keeps using the plain fd.
  int RegisterFile(int fd);
  void UnregisterFile(int slot);
  bool has_file_table() const { return file_slots_ > 0; }

  uint64_t turns() const { return turns_; }
  io_uring* ring() { return &ring_; }  // owner thread: e.g. to register buffers

 private:
  static void OnWakeRead(IoOp* op, int res, uint32_t flags);
  void ArmWakeRead();
  void InitRecvBuffers();
  void InitFileTable();

  io_uring ring_{};
  bool ready_ = false;
  int wake_fd_ = -1;
  uint64_t wake_buf_ = 0;
  struct WakeOp : IoOp {
    EventLoop* loop = nullptr;
  };
  WakeOp wake_op_;
  // Completes a failed MSG_RING aimed at this loop (sent by another loop): falls back to Wake().
  WakeOp msg_fail_op_;
  bool msg_ring_ = false;  // the kernel has IORING_OP_MSG_RING
  uint64_t turns_ = 0;
  io_uring_buf_ring* recv_ring_ = nullptr;  // kRecvBuffers entries (mmap)
  char* recv_bufs_ = nullptr;               // kRecvBuffers x kRecvBufferSize (mmap)
  unsigned file_slots_ = 0;                 // size of the sparse file table (0: none)
  std::vector<int> free_file_slots_;        // unused slots, lowest last
};

}  // namespace lavik
