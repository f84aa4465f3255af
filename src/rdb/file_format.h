// The dump.rdb file framing of Redis 7.0 (rdb.c rdbSaveRio / rdbLoadRioWithLoadingCtx), around
// the objects of object.h (doc/rdb.md has the layout):
//
//   "REDIS" + 4 ASCII digits (version)
//   { AUX 0xfa string string | FUNCTION2 0xf5 string (a library's code)
//   | SELECTDB 0xfe length | RESIZEDB 0xfb length length
//   | [EXPIRETIME_MS 0xfc u64 | EXPIRETIME 0xfd u32] [IDLE 0xf8 length] [FREQ 0xf9 u8]
//     type-byte key-string object }...
//   EOF 0xff | u64 CRC-64 (base/crc64.h) of every byte before it, little-endian (version >= 5;
//   0 means the writer computed none, which Redis accepts)
//
// The writer builds bytes in a buffer the caller drains (Take) to wherever the file goes; the
// reader pulls from any ByteSource, counts the offset and checks the CRC-64 at EOF. Neither
// holds more than one object in memory.
//
// Thread safety: one writer or reader per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rdb/object.h"
#include "rdb/source.h"
#include "storage/value_type.h"

namespace lavik::rdb {

inline constexpr uint8_t kOpFunction2 = 0xf5;
inline constexpr uint8_t kOpFunctionPreGa = 0xf6;
inline constexpr uint8_t kOpModuleAux = 0xf7;
inline constexpr uint8_t kOpIdle = 0xf8;
inline constexpr uint8_t kOpFreq = 0xf9;
inline constexpr uint8_t kOpAux = 0xfa;
inline constexpr uint8_t kOpResizeDb = 0xfb;
inline constexpr uint8_t kOpExpireTimeMs = 0xfc;
inline constexpr uint8_t kOpExpireTime = 0xfd;
inline constexpr uint8_t kOpSelectDb = 0xfe;
inline constexpr uint8_t kOpEof = 0xff;

// One key as the file holds it: [EXPIRETIME_MS ms] + `object` (EncodeObject's type byte and
// object, which EncodeKeyEntry splits around the key). Appended to *out.
void EncodeKeyEntry(std::string_view key, int64_t expire_ms, std::string_view object,
                    std::string* out);

class FileWriter {
 public:
  FileWriter();  // the header ("REDIS0010") is the first pending bytes
  void Aux(std::string_view name, std::string_view value);
  void Function(std::string_view code);
  void SelectDb(uint64_t db, uint64_t keys, uint64_t expires);  // SELECTDB + RESIZEDB
  // A key entry (EncodeKeyEntry); false (nothing appended) if `object` has no type byte.
  bool Key(std::string_view key, int64_t expire_ms, std::string_view object);
  // Bytes already framed by EncodeKeyEntry (a spilled database's entries).
  void Raw(std::string_view entries) { buf_.append(entries); }
  // EOF and the CRC-64 trailer; nothing may be added afterwards.
  void Finish();

  // The bytes not taken yet; Take hands them over and the buffer starts empty.
  size_t pending() const { return buf_.size(); }
  std::string Take();
  uint64_t crc() const { return crc_; }

 private:
  void Checksum();  // folds the buffer's unchecksummed tail into crc_
  std::string buf_;
  size_t crc_from_ = 0;  // buf_[0, crc_from_) is already in crc_
  uint64_t crc_ = 0;
};

// A ByteSource that counts what it hands out and keeps the CRC-64 of it.
class CountingSource : public ByteSource {
 public:
  explicit CountingSource(ByteSource& inner) : inner_(inner) {}
  bool Read(void* dst, size_t n) override;
  bool ReadAppend(size_t n, std::string* out) override;
  uint64_t offset() const { return offset_; }
  uint64_t crc() const { return crc_; }
  bool hit_end() const { return hit_end_; }  // a read failed: the input ended (or I/O error)

 private:
  ByteSource& inner_;
  bool hit_end_ = false;
  uint64_t offset_ = 0;
  uint64_t crc_ = 0;
};

class FileReader {
 public:
  // `max_db`: a SELECTDB at or above it is an error (Lavik's database count).
  FileReader(ByteSource& src, uint64_t max_db) : src_(src), max_db_(max_db) {}

  // Reads and checks "REDIS" + version (1..kRdbVersion). False with error() set.
  bool ReadHeader();
  int version() const { return version_; }

  enum class Item { kKey, kFunction, kEof, kError };
  struct Entry {
    uint64_t db = 0;  // the SELECTDB in force (0 before any)
    std::string key;
    int64_t expire_ms = 0;  // 0: none
    ValueType type = ValueType::kString;
    std::string record;  // Lavik's one-record encoding (object.h)
    std::string code;    // kFunction: the library's code
  };
  // The next key or function library (AUX fields, RESIZEDB, IDLE and FREQ are read and
  // dropped); kEof once the trailer checked out; kError with error().
  Item Next(Entry* e);

  // "<what> at offset N" (N: the file offset where the bad item starts or the input ended).
  const std::string& error() const { return error_; }
  uint64_t offset() const { return counted_.offset(); }
  uint64_t resize_hint() const { return resize_hint_; }
  // The AUX fields read so far (name, value), in file order.
  const std::vector<std::pair<std::string, std::string>>& aux() const { return aux_; }

 private:
  Item Fail(const std::string& what, uint64_t at);
  ByteSource& src_;
  CountingSource counted_{src_};
  const uint64_t max_db_;
  int version_ = 0;
  uint64_t db_ = 0;
  uint64_t resize_hint_ = 0;
  std::vector<std::pair<std::string, std::string>> aux_;
  std::string error_;
};

}  // namespace lavik::rdb
