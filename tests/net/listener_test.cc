// OpenListeningSocket on a port that is still held: it fails at once by default, and with a
// wait it binds as soon as the holder lets go (a restart right after kill -9, whose io_uring
// accept keeps the old socket listening for a moment).
#include "net/listener.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace lavik {
namespace {

TEST(ListenerTest, PortInUseFailsAtOnceWithoutAWait) {
  std::string error;
  int port = 0;
  const int holder = OpenListeningSocket("127.0.0.1", 0, 16, &port, &error);
  ASSERT_GE(holder, 0) << error;
  int again = 0;
  EXPECT_EQ(OpenListeningSocket("127.0.0.1", port, 16, &again, &error), -1);
  EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
  close(holder);
}

TEST(ListenerTest, WaitsForAPortItsHolderReleases) {
  std::string error;
  int port = 0;
  const int holder = OpenListeningSocket("127.0.0.1", 0, 16, &port, &error);
  ASSERT_GE(holder, 0) << error;
  std::thread release([holder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    close(holder);
  });
  int bound = 0;
  const int fd = OpenListeningSocket("127.0.0.1", port, 16, &bound, &error, 5000);
  release.join();
  ASSERT_GE(fd, 0) << error;
  EXPECT_EQ(bound, port);
  close(fd);
}

TEST(ListenerTest, GivesUpAfterTheWait) {
  std::string error;
  int port = 0;
  const int holder = OpenListeningSocket("127.0.0.1", 0, 16, &port, &error);
  ASSERT_GE(holder, 0) << error;
  int again = 0;
  EXPECT_EQ(OpenListeningSocket("127.0.0.1", port, 16, &again, &error, 200), -1);
  EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
  close(holder);
}

}  // namespace
}  // namespace lavik
