// The encoding of a Redis list held in one record (doc/collections.md, "Lists"): the elements in
// list order, with an offset table so LINDEX/LRANGE reach an element in O(1).
//
//   u8 version (1) | u8 kind ('L') | u16 zero | u32 count
//   u32 offset[count]   (of each element, from the start of the element area)
//   elements: varint length, bytes
//
// ListView reads an encoding in place (the bytes must outlive it); EncodeList builds one. A
// write decodes the elements as views, edits the vector and encodes it again: O(n) per write.
//
// Thread safety: pure functions and value types; a view is read-only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

class ListView {
 public:
  // Parses `encoded` (empty = an empty list) in O(1). False if the header or the bounds of the
  // element area are wrong; the view is then empty. element() never reads outside `encoded`.
  bool Parse(std::string_view encoded);

  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string_view element(uint32_t i) const;  // i < size()
  // Every element, in order (views into the parsed bytes).
  std::vector<std::string_view> Elements() const;

 private:
  const char* offsets_ = nullptr;
  std::string_view data_;  // the element area
  uint32_t count_ = 0;
};

// The encoding of `elements` in order; "" for none (the caller deletes the key).
std::string EncodeList(const std::vector<std::string_view>& elements);

}  // namespace lavik
