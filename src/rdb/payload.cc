#include "rdb/payload.h"

#include "base/crc64.h"
#include "rdb/codec.h"
#include "rdb/source.h"

namespace lavik::rdb {
namespace {

uint64_t Little(std::string_view b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

}  // namespace

bool CreateDumpPayload(ValueType type, std::string_view record, const EncodeLimits& limits,
                       std::string* out) {
  out->clear();
  if (!EncodeObject(type, record, limits, out)) return false;
  AppendDumpFooter(out);
  return true;
}

void AppendDumpFooter(std::string* out) {
  out->push_back(static_cast<char>(kRdbVersion & 0xff));
  out->push_back(static_cast<char>(kRdbVersion >> 8));
  const uint64_t crc = Crc64(0, out->data(), out->size());
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}

bool DumpFooterOk(std::string_view payload) {
  if (payload.size() < kDumpFooterBytes) return false;
  const std::string_view footer = payload.substr(payload.size() - kDumpFooterBytes);
  if (Little(footer.substr(0, 2)) > kRdbVersion) return false;
  return Crc64(0, payload.data(), payload.size() - 8) == Little(footer.substr(2));
}

PayloadStatus DecodeDumpPayload(std::string_view payload, ValueType* type, std::string* record) {
  if (!DumpFooterOk(payload)) return PayloadStatus::kBadVersionOrChecksum;
  // As in Redis, the object is read from the whole payload: a value that ends inside the footer
  // is not rejected for that (its bytes were covered by the CRC).
  StringSource src(payload);
  if (!DecodeObject(src, type, record)) return PayloadStatus::kBadFormat;
  return PayloadStatus::kOk;
}

}  // namespace lavik::rdb
