#include "base/crc64.h"

#include <gtest/gtest.h>

#include <string>

namespace lavik {
namespace {

TEST(Crc64, RedisTestVector) {
  EXPECT_EQ(Crc64(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64(0, "", 0), 0u);
}

TEST(Crc64, ChainsAcrossPieces) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 131 + 7));
  const uint64_t whole = Crc64(0, data.data(), data.size());
  for (size_t cut : {0u, 1u, 7u, 8u, 9u, 500u, 999u}) {
    EXPECT_EQ(Crc64(Crc64(0, data.data(), cut), data.data() + cut, data.size() - cut), whole);
  }
}

}  // namespace
}  // namespace lavik
