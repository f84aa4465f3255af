#include "rdb/file_format.h"

#include <cstdio>

#include "base/crc64.h"
#include "rdb/codec.h"

namespace lavik::rdb {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void EncodeKeyEntry(std::string_view key, int64_t expire_ms, std::string_view object,
                    std::string* out) {
  if (expire_ms != 0) {
    out->push_back(static_cast<char>(kOpExpireTimeMs));
    PutMillis(expire_ms, out);
  }
  out->push_back(object[0]);
  PutString(key, out);
  out->append(object.substr(1));
}

FileWriter::FileWriter() {
  char magic[16];
  std::snprintf(magic, sizeof(magic), "REDIS%04d", static_cast<int>(kRdbVersion));
  buf_.append(magic);
}

void FileWriter::Aux(std::string_view name, std::string_view value) {
  buf_.push_back(static_cast<char>(kOpAux));
  PutString(name, &buf_);
  PutString(value, &buf_);
}

void FileWriter::Function(std::string_view code) {
  buf_.push_back(static_cast<char>(kOpFunction2));
  PutString(code, &buf_);
}

void FileWriter::SelectDb(uint64_t db, uint64_t keys, uint64_t expires) {
  buf_.push_back(static_cast<char>(kOpSelectDb));
  PutLength(db, &buf_);
  buf_.push_back(static_cast<char>(kOpResizeDb));
  PutLength(keys, &buf_);
  PutLength(expires, &buf_);
}

bool FileWriter::Key(std::string_view key, int64_t expire_ms, std::string_view object) {
  if (object.empty()) return false;
  EncodeKeyEntry(key, expire_ms, object, &buf_);
  return true;
}

void FileWriter::Finish() {
  buf_.push_back(static_cast<char>(kOpEof));
  Checksum();
  PutMillis(static_cast<int64_t>(crc_), &buf_);  // 8 bytes little-endian
  crc_from_ = buf_.size();
}

void FileWriter::Checksum() {
  crc_ = Crc64(crc_, buf_.data() + crc_from_, buf_.size() - crc_from_);
  crc_from_ = buf_.size();
}

std::string FileWriter::Take() {
  Checksum();
  std::string out;
  out.swap(buf_);
  crc_from_ = 0;
  return out;
}

bool CountingSource::Read(void* dst, size_t n) {
  if (!inner_.Read(dst, n)) return !(hit_end_ = true);
  crc_ = Crc64(crc_, dst, n);
  offset_ += n;
  return true;
}

bool CountingSource::ReadAppend(size_t n, std::string* out) {
  const size_t at = out->size();
  if (!inner_.ReadAppend(n, out)) return !(hit_end_ = true);
  crc_ = Crc64(crc_, out->data() + at, n);
  offset_ += n;
  return true;
}

FileReader::Item FileReader::Fail(const std::string& what, uint64_t at) {
  error_ = what + " at offset " + std::to_string(at);
  return Item::kError;
}

bool FileReader::ReadHeader() {
  char magic[9];
  if (!counted_.Read(magic, sizeof(magic))) {
    Fail("Unexpected EOF reading the RDB header", counted_.offset());
    return false;
  }
  if (std::string_view(magic, 5) != "REDIS") {
    Fail("Wrong signature trying to load DB from file (not an RDB file)", 0);
    return false;
  }
  int v = 0;
  for (int i = 5; i < 9; ++i) {
    if (magic[i] < '0' || magic[i] > '9') {
      Fail("Bad RDB version field", 5);
      return false;
    }
    v = v * 10 + (magic[i] - '0');
  }
  if (v < 1 || v > kRdbVersion) {
    Fail("Can't handle RDB format version " + std::to_string(v), 5);
    return false;
  }
  version_ = v;
  return true;
}

FileReader::Item FileReader::Next(Entry* e) {
  e->expire_ms = 0;
  for (;;) {
    const uint64_t at = counted_.offset();
    uint8_t op;
    if (!GetByte(counted_, &op)) return Fail("Unexpected EOF reading RDB file", at);
    uint64_t a, b;
    std::string s1, s2;
    switch (op) {
      case kOpAux:
        if (!GetString(counted_, &s1) || !GetString(counted_, &s2)) {
          return Fail("Bad AUX field", at);
        }
        if (aux_.size() < 64) aux_.emplace_back(std::move(s1), std::move(s2));
        continue;
      case kOpResizeDb:
        if (!GetLength(counted_, &a) || !GetLength(counted_, &b)) {
          return Fail("Bad RESIZEDB", at);
        }
        resize_hint_ = a;
        continue;
      case kOpSelectDb:
        if (!GetLength(counted_, &a)) return Fail("Bad SELECTDB", at);
        if (a >= max_db_) {
          return Fail("The RDB selects database " + std::to_string(a) + ", Lavik has " +
                          std::to_string(max_db_) + " databases (0-" + std::to_string(max_db_ - 1) +
                          ")",
                      at);
        }
        db_ = a;
        continue;
      case kOpExpireTimeMs: {
        int64_t ms;
        if (!GetMillis(counted_, &ms)) return Fail("Unexpected EOF reading an expire time", at);
        e->expire_ms = ms;
        continue;
      }
      case kOpExpireTime: {
        unsigned char t[4];
        if (!counted_.Read(t, 4)) return Fail("Unexpected EOF reading an expire time", at);
        const int64_t secs = static_cast<int32_t>(t[0] | (t[1] << 8) | (t[2] << 16) |
                                                  (static_cast<uint32_t>(t[3]) << 24));
        e->expire_ms = secs * 1000;
        continue;
      }
      case kOpIdle:
        if (!GetLength(counted_, &a)) return Fail("Bad IDLE", at);
        continue;
      case kOpFreq:
        if (!GetByte(counted_, &op)) return Fail("Bad FREQ", at);
        continue;
      case kOpFunction2:
        if (!GetString(counted_, &e->code)) return Fail("Bad function library", at);
        return Item::kFunction;
      case kOpFunctionPreGa:
        return Fail("The RDB holds functions in the pre-GA format (Redis 7.0 RC), not supported",
                    at);
      case kOpModuleAux:
        return Fail("The RDB holds module data (MODULE_AUX), Lavik loads no modules", at);
      case kOpEof: {
        if (version_ < 5) return Item::kEof;
        const uint64_t expected = counted_.crc();
        unsigned char t[8];
        if (!counted_.Read(t, 8)) {
          return Fail("Unexpected EOF reading the RDB checksum", counted_.offset());
        }
        uint64_t got = 0;
        for (int i = 7; i >= 0; --i) got = (got << 8) | t[i];
        if (got != 0 && got != expected) {
          return Fail(
              "Wrong RDB checksum expected: (" + Hex(got) + ") got: (" + Hex(expected) + ")",
              at + 1);
        }
        return Item::kEof;
      }
      default:
        break;
    }
    // A key: the type byte, the key, the object.
    if (op == 6 || op == 7) return Fail("The RDB holds a module value, Lavik loads no modules", at);
    e->db = db_;
    if (!GetString(counted_, &e->key)) return Fail("Unexpected EOF reading a key", at);
    // DecodeObject starts at the type byte: hand it back through a one-byte prefix.
    class Prefixed : public ByteSource {
     public:
      Prefixed(uint8_t first, ByteSource& rest) : first_(first), rest_(rest) {}
      bool Read(void* dst, size_t n) override {
        if (n == 0) return true;
        auto* d = static_cast<unsigned char*>(dst);
        if (!used_) {
          used_ = true;
          d[0] = first_;
          return rest_.Read(d + 1, n - 1);
        }
        return rest_.Read(d, n);
      }
      bool ReadAppend(size_t n, std::string* out) override {
        if (n == 0) return true;
        if (!used_) {
          used_ = true;
          out->push_back(static_cast<char>(first_));
          --n;
        }
        return rest_.ReadAppend(n, out);
      }

     private:
      uint8_t first_;
      bool used_ = false;
      ByteSource& rest_;
    } src(op, counted_);
    if (!DecodeObject(src, &e->type, &e->record)) {
      if (counted_.hit_end()) {
        return Fail("Unexpected EOF reading RDB file (the value of key '" + e->key + "')",
                    counted_.offset());
      }
      return Fail("Bad value (type " + std::to_string(op) + ") of key '" + e->key + "'", at);
    }
    return Item::kKey;
  }
}

}  // namespace lavik::rdb
