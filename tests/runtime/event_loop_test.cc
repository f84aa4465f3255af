#include "runtime/event_loop.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace lavik {
namespace {

struct SendOp : IoOp {
  int res = 0;
  bool done = false;
};

void OnSent(IoOp* op, int res, uint32_t) {
  auto* s = static_cast<SendOp*>(op);
  s->res = res;
  s->done = true;
}

// Sends `text` on ring-side descriptor `fd` (a slot when fixed) and turns the loop until done.
int SendThrough(EventLoop& loop, int fd, bool fixed, const std::string& text) {
  SendOp op;
  op.complete = &OnSent;
  io_uring_sqe* sqe = loop.Prepare(&op);
  io_uring_prep_send(sqe, fd, text.data(), text.size(), MSG_NOSIGNAL);
  if (fixed) sqe->flags |= IOSQE_FIXED_FILE;
  for (int i = 0; i < 100 && !op.done; ++i) loop.Turn(true, 100000);
  return op.done ? op.res : -ETIMEDOUT;
}

TEST(EventLoopFixedFiles, SendsThroughSlotAndReleasesItBeforeClose) {
  EventLoop loop;
  std::string error;
  ASSERT_TRUE(loop.Init(64, &error)) << error;
  if (!loop.has_file_table()) GTEST_SKIP() << "kernel without sparse file tables";
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  const int slot = loop.RegisterFile(sv[0]);
  ASSERT_GE(slot, 0);
  EXPECT_EQ(SendThrough(loop, slot, true, "hello"), 5);
  char buf[16];
  EXPECT_EQ(recv(sv[1], buf, sizeof(buf), 0), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");

  // The table holds its own reference: closing the fd alone would leave the socket open. Cleared
  // first, the close reaches the peer as end of stream.
  loop.UnregisterFile(slot);
  close(sv[0]);
  EXPECT_EQ(recv(sv[1], buf, sizeof(buf), 0), 0);
  close(sv[1]);

  // The slot is free again.
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  EXPECT_EQ(loop.RegisterFile(sv[0]), slot);
  loop.UnregisterFile(slot);
  close(sv[0]);
  close(sv[1]);
}

TEST(EventLoopFixedFiles, OffWithTheEnvironmentSwitch) {
  setenv("LAVIK_FIXED_FILES", "0", 1);
  EventLoop loop;
  std::string error;
  const bool ok = loop.Init(64, &error);
  unsetenv("LAVIK_FIXED_FILES");
  ASSERT_TRUE(ok) << error;
  EXPECT_FALSE(loop.has_file_table());
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  EXPECT_EQ(loop.RegisterFile(sv[0]), -1);
  EXPECT_EQ(SendThrough(loop, sv[0], false, "plain"), 5);  // the plain fd still works
  close(sv[0]);
  close(sv[1]);
}

}  // namespace
}  // namespace lavik
