// Stored key bytes of a database (base/db_key.h): DbKeyInto gives DbKey's bytes without
// allocating.
#include "base/db_key.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace lavik {
namespace {

TEST(DbKeyTest, DbKeyIntoGivesDbKeysBytes) {
  std::array<char, 16> buf{};
  const std::string prefixed = std::string(kDbKeyPrefix) + "k";
  for (const auto& [db, key] :
       {std::pair<int, std::string>{0, "plain"}, {3, "k3"}, {0, prefixed}, {15, ""}}) {
    EXPECT_EQ(DbKeyInto(db, key, buf.data(), buf.size()), DbKey(db, key)) << db << " " << key;
    EXPECT_EQ(SplitDbKey(DbKeyInto(db, key, buf.data(), buf.size())).db, db);
  }
  // A database-0 key needing no prefix is its own bytes, whatever the buffer.
  const std::string plain = "plain";
  EXPECT_EQ(DbKeyInto(0, plain, buf.data(), 0).data(), plain.data());
  // Too long for the buffer: empty.
  EXPECT_TRUE(DbKeyInto(2, std::string(14, 'x'), buf.data(), buf.size()).empty());
  EXPECT_EQ(DbKeyInto(2, std::string(13, 'x'), buf.data(), buf.size()).size(), 16u);
}

}  // namespace
}  // namespace lavik
