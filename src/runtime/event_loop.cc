#include "runtime/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lavik {

EventLoop::~EventLoop() {
  if (ready_) io_uring_queue_exit(&ring_);
  if (wake_fd_ >= 0) close(wake_fd_);
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
