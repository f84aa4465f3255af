#include "storage/list_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lavik {
namespace {

TEST(ListRecordTest, RoundTripKeepsOrder) {
  std::string big(300, 'x');
  std::vector<std::string_view> in = {"b", "", "a", big, "b"};
  std::string enc = EncodeList(in);
  ListView v;
  ASSERT_TRUE(v.Parse(enc));
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v.Elements(), in);
  EXPECT_EQ(v.element(3), big);
}

TEST(ListRecordTest, EmptyListEncodesToNothing) {
  EXPECT_EQ(EncodeList({}), "");
  ListView v;
  ASSERT_TRUE(v.Parse(""));
  EXPECT_TRUE(v.empty());
}

TEST(ListRecordTest, RejectsDamagedEncodings) {
  std::string enc = EncodeList({"one", "two"});
  ListView v;
  EXPECT_FALSE(v.Parse(enc.substr(0, enc.size() - 1)));  // last element cut short
  EXPECT_FALSE(v.Parse(enc + "x"));                      // trailing bytes
  std::string bad = enc;
  bad[1] = 'S';  // not a list
  EXPECT_FALSE(v.Parse(bad));
  bad = enc;
  bad[4] = 100;  // count past the offset table
  EXPECT_FALSE(v.Parse(bad));
  EXPECT_TRUE(v.empty());
  // A damaged middle offset never reads outside the bytes.
  bad = EncodeList({"a", "b", "c"});
  bad[12] = 0x7f;
  if (v.Parse(bad)) {
    EXPECT_EQ(v.element(1), "");
  }
}

}  // namespace
}  // namespace lavik
