#include "runtime/event_loop.h"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace lavik {

EventLoop::~EventLoop() {
  if (ready_) io_uring_queue_exit(&ring_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (recv_ring_ != nullptr) munmap(recv_ring_, kRecvBuffers * sizeof(io_uring_buf));
  if (recv_bufs_ != nullptr) munmap(recv_bufs_, size_t{kRecvBuffers} * kRecvBufferSize);
}

void EventLoop::InitRecvBuffers() {
  const size_t ring_bytes = kRecvBuffers * sizeof(io_uring_buf);
  const size_t buf_bytes = size_t{kRecvBuffers} * kRecvBufferSize;
  void* ring =
      mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) return;
  void* bufs = mmap(nullptr, buf_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (bufs == MAP_FAILED) {
    munmap(ring, ring_bytes);
    return;
  }
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(ring);
  reg.ring_entries = kRecvBuffers;
  reg.bgid = kRecvGroup;
  if (io_uring_register_buf_ring(&ring_, &reg, 0) != 0) {
    // An older kernel: connections fall back to one recv per read.
    munmap(ring, ring_bytes);
    munmap(bufs, buf_bytes);
    return;
  }
  recv_ring_ = static_cast<io_uring_buf_ring*>(ring);
  recv_bufs_ = static_cast<char*>(bufs);
  io_uring_buf_ring_init(recv_ring_);
  const int mask = io_uring_buf_ring_mask(kRecvBuffers);
  for (unsigned i = 0; i < kRecvBuffers; ++i) {
    io_uring_buf_ring_add(recv_ring_, recv_bufs_ + size_t{i} * kRecvBufferSize, kRecvBufferSize,
                          static_cast<unsigned short>(i), mask, static_cast<int>(i));
  }
  io_uring_buf_ring_advance(recv_ring_, kRecvBuffers);
}

void EventLoop::RecycleRecvBuffer(uint16_t bid) {
  io_uring_buf_ring_add(recv_ring_, recv_bufs_ + size_t{bid} * kRecvBufferSize, kRecvBufferSize,
                        bid, io_uring_buf_ring_mask(kRecvBuffers), 0);
  io_uring_buf_ring_advance(recv_ring_, 1);
}

void EventLoop::InitFileTable() {
  // The kernel refuses a table larger than RLIMIT_NOFILE; past the table's size a connection
  // keeps its plain fd. 16,384 slots cost 128 KiB of kernel memory per ring.
  rlimit rl{};
  rlim_t slots = 16384;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < slots) slots = rl.rlim_cur;
  if (slots < 16) return;
  if (io_uring_register_files_sparse(&ring_, static_cast<unsigned>(slots)) != 0) return;
  file_slots_ = static_cast<unsigned>(slots);
  free_file_slots_.reserve(file_slots_);
  for (unsigned i = file_slots_; i > 0; --i) free_file_slots_.push_back(static_cast<int>(i - 1));
}

int EventLoop::RegisterFile(int fd) {
  if (free_file_slots_.empty() || fd < 0) return -1;
  const int slot = free_file_slots_.back();
  if (io_uring_register_files_update(&ring_, static_cast<unsigned>(slot), &fd, 1) != 1) return -1;
  free_file_slots_.pop_back();
  return slot;
}

void EventLoop::UnregisterFile(int slot) {
  if (slot < 0) return;
  int none = -1;
  // Drops the table's reference; requests still in flight on the slot keep theirs.
  if (io_uring_register_files_update(&ring_, static_cast<unsigned>(slot), &none, 1) == 1) {
    free_file_slots_.push_back(slot);
  }
}

bool EventLoop::Init(unsigned entries, std::string* error) {
  io_uring_params params{};
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  int rc = io_uring_queue_init_params(entries, &ring_, &params);
  if (rc < 0) {
    // Older kernels lack DEFER_TASKRUN; fall back to a plain ring rather than refusing to run.
    params = io_uring_params{};
    rc = io_uring_queue_init_params(entries, &ring_, &params);
  }
  if (rc < 0) {
    *error = std::string("io_uring_queue_init: ") + std::strerror(-rc);
    return false;
  }
  ready_ = true;
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  // LAVIK_LEGACY_IO (set, any value): the I/O paths as they were before issue #17 — one recv
  // per read, eventfd wake-ups — to measure the difference (doc/threading.md).
  const bool legacy = std::getenv("LAVIK_LEGACY_IO") != nullptr;
  if (!legacy) InitRecvBuffers();
  if (io_uring_probe* probe = io_uring_get_probe_ring(&ring_)) {
    msg_ring_ = !legacy && io_uring_opcode_supported(probe, IORING_OP_MSG_RING);
    io_uring_free_probe(probe);
  }
  // Saves the file-table lookup of the ring on every io_uring_enter (best effort).
  if (!legacy) io_uring_register_ring_fd(&ring_);
  // LAVIK_FIXED_FILES=0: no registered descriptors (sockets and data file use plain fds), to
  // measure that lever alone; LAVIK_LEGACY_IO turns it off too.
  const char* fixed = std::getenv("LAVIK_FIXED_FILES");
  if (!legacy && !(fixed != nullptr && std::strcmp(fixed, "0") == 0)) InitFileTable();
  msg_fail_op_.complete = [](IoOp* op, int res, uint32_t) {
    if (res < 0) static_cast<WakeOp*>(op)->loop->Wake();
  };
  msg_fail_op_.loop = this;
  wake_op_.complete = &EventLoop::OnWakeRead;
  wake_op_.loop = this;
  ArmWakeRead();
  return true;
}

io_uring_sqe* EventLoop::Prepare(IoOp* op) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  io_uring_sqe_set_data(sqe, op);
  return sqe;
}

void EventLoop::ArmWakeRead() {
  io_uring_sqe* sqe = Prepare(&wake_op_);
  io_uring_prep_read(sqe, wake_fd_, &wake_buf_, sizeof(wake_buf_), 0);
}

void EventLoop::OnWakeRead(IoOp* op, int, uint32_t) {
  static_cast<WakeOp*>(op)->loop->ArmWakeRead();
}

void EventLoop::Wake() {
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;  // EAGAIN means a wake-up is already pending, which is all we need.
}

bool EventLoop::WakeThrough(EventLoop* target) {
  if (!msg_ring_ || !target->ready_) return false;
  // user_data 0 on the target: a completion that dispatches nothing, it only ends the wait. Our
  // own completion is skipped on success; on failure it wakes the target the usual way.
  io_uring_sqe* sqe = Prepare(&target->msg_fail_op_);
  io_uring_prep_msg_ring(sqe, target->ring_.ring_fd, 0, 0, 0);
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  return true;
}

void EventLoop::Turn(bool may_block, int64_t timeout_us) {
  ++turns_;
  bool block = may_block && !(before_sleep && before_sleep());
  if (!block) {
    io_uring_submit_and_get_events(&ring_);
  } else if (timeout_us >= 0) {
    __kernel_timespec ts{};
    ts.tv_sec = timeout_us / 1000000;
    ts.tv_nsec = (timeout_us % 1000000) * 1000;
    io_uring_cqe* cqe = nullptr;
    io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
  } else {
    io_uring_submit_and_wait(&ring_, 1);
  }
  io_uring_cqe* cqe;
  unsigned head;
  unsigned seen = 0;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    ++seen;
    auto* op = static_cast<IoOp*>(io_uring_cqe_get_data(cqe));
    if (op != nullptr && op->complete != nullptr) op->complete(op, cqe->res, cqe->flags);
  }
  io_uring_cq_advance(&ring_, seen);
}

}  // namespace lavik
