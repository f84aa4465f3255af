#include "rdb/source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace lavik::rdb {
namespace {

// Hands out `data` in refills of at most `piece` bytes, as a socket or a file would.
class PiecewiseSource : public BufferedSource {
 public:
  PiecewiseSource(std::string data, size_t piece) : data_(std::move(data)), piece_(piece) {}

 private:
  bool Refill() override {
    if (at_ >= data_.size()) return false;
    const size_t n = std::min(piece_, data_.size() - at_);
    buf_.assign(data_, at_, n);
    at_ += n;
    pos_ = 0;
    end_ = n;
    return true;
  }
  std::string data_;
  size_t piece_;
  size_t at_ = 0;
};

TEST(RdbSource, ReadSomeReturnsWhatIsBufferedUpToTheLimit) {
  PiecewiseSource src("abcdefghij", 4);
  char two[2];
  ASSERT_TRUE(src.Read(two, 2));  // "ab": "cd" stays buffered
  EXPECT_EQ(src.ReadSome(100), "cd");
  EXPECT_EQ(src.ReadSome(3), "efg");  // a refill, cut at the limit
  EXPECT_EQ(src.ReadSome(3), "h");
  EXPECT_EQ(src.ReadSome(0), "");
  EXPECT_EQ(src.ReadSome(10), "ij");
  EXPECT_EQ(src.consumed(), 10u);
  EXPECT_EQ(src.ReadSome(10), "");  // the end
}

}  // namespace
}  // namespace lavik::rdb
