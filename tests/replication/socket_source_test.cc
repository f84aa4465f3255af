// SocketSource: lines, exact reads across refills, the bytes left after the decoder, and
// bounded waits (a cancel or a timeout ends a read instead of blocking).
#include "replication/socket_source.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "base/clock.h"

namespace lavik {
namespace {

class SocketSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  void Send(const std::string& s) {
    ASSERT_EQ(write(fds_[1], s.data(), s.size()), (ssize_t)s.size());
  }
  int fds_[2] = {-1, -1};
};

TEST_F(SocketSourceTest, LinesThenExactBytesThenLeftover) {
  SocketSource src(fds_[0], nullptr, 2000);
  Send("+FULLRESYNC abc 7\r\n\n$5\r\nhelloSET-NEXT");
  std::string line;
  ASSERT_TRUE(src.ReadLine(&line));
  EXPECT_EQ(line, "+FULLRESYNC abc 7");
  ASSERT_TRUE(src.ReadLine(&line));
  EXPECT_EQ(line, "");  // a keep-alive newline
  ASSERT_TRUE(src.ReadLine(&line));
  EXPECT_EQ(line, "$5");
  char buf[5];
  ASSERT_TRUE(src.Read(buf, 5));
  EXPECT_EQ(std::string(buf, 5), "hello");
  EXPECT_EQ(src.consumed(), 29u);
  EXPECT_EQ(src.TakeBuffered(), "SET-NEXT");
}

TEST_F(SocketSourceTest, ReadAppendSpansManyRefills) {
  SocketSource src(fds_[0], nullptr, 2000);
  const std::string big(600 << 10, 'x');  // more than the 256 KiB buffer
  std::thread writer([&] { Send(big); });
  std::string out;
  ASSERT_TRUE(src.ReadAppend(big.size(), &out));
  writer.join();
  EXPECT_EQ(out, big);
}

TEST_F(SocketSourceTest, EndOfInputCancelAndTimeoutFailTheRead) {
  {
    SocketSource src(fds_[0], nullptr, 200);
    const int64_t start = NowMs();
    char c;
    EXPECT_FALSE(src.Read(&c, 1));
    EXPECT_EQ(src.error(), "timeout");
    EXPECT_LT(NowMs() - start, 2000);
  }
  {
    std::atomic<bool> cancel{true};
    SocketSource src(
        fds_[0], [&] { return cancel.load(); }, 60000);
    std::string line;
    EXPECT_FALSE(src.ReadLine(&line));
    EXPECT_EQ(src.error(), "cancelled");
  }
  close(fds_[1]);
  fds_[1] = -1;
  SocketSource src(fds_[0], nullptr, 2000);
  char c;
  EXPECT_FALSE(src.Read(&c, 1));
  EXPECT_EQ(src.error(), "connection closed by the master");
}

TEST(RespArrayTest, BulkStrings) {
  EXPECT_EQ(RespArray({"REPLCONF", "ACK", "0"}),
            "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n");
  EXPECT_EQ(RespArray({}), "*0\r\n");
}

}  // namespace
}  // namespace lavik
