#include "rdb/function_payload.h"

#include "rdb/codec.h"
#include "rdb/payload.h"
#include "rdb/source.h"

namespace lavik::rdb {

namespace {

// The pre-GA record after its opcode: name, engine, description flag (+ description), code.
bool GetPreGaLibrary(ByteSource& src, std::string* code, std::string* error) {
  std::string name, engine, description, blob;
  uint64_t has_description = 0;
  if (!GetString(src, &name)) {
    *error = "ERR Failed loading library name";
  } else if (!GetString(src, &engine)) {
    *error = "ERR Failed loading engine name";
  } else if (!GetLength(src, &has_description)) {
    *error = "ERR Failed loading library description indicator";
  } else if (has_description != 0 && !GetString(src, &description)) {
    *error = "ERR Failed loading library description";
  } else if (!GetString(src, &blob)) {
    *error = "ERR Failed loading library blob";
  } else {
    *code = "#!" + engine + " name=" + name + "\n" + blob;
    return true;
  }
  return false;
}

}  // namespace

void PutFunctionLibrary(std::string_view code, std::string* out) {
  out->push_back(static_cast<char>(kOpcodeFunction2));
  PutString(code, out);
}

std::string EncodeFunctionsPayload(const std::vector<std::string>& codes) {
  std::string out;
  for (const std::string& code : codes) PutFunctionLibrary(code, &out);
  AppendDumpFooter(&out);
  return out;
}

bool DecodeFunctionsPayload(std::string_view payload, std::vector<std::string>* codes,
                            std::string* error) {
  codes->clear();
  if (!DumpFooterOk(payload)) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return false;
  }
  // As Redis: records are read while more than the footer is left; the last one may run into
  // the footer's bytes (they are covered by the CRC).
  StringSource src(payload);
  while (src.remaining() > kDumpFooterBytes) {
    uint8_t type = 0;
    GetByte(src, &type);
    std::string code;
    if (type == kOpcodeFunction2) {
      if (!GetString(src, &code)) {
        *error = "ERR Failed loading library payload";
        return false;
      }
    } else if (type == kOpcodeFunctionPreGa) {
      if (!GetPreGaLibrary(src, &code, error)) return false;
    } else {
      *error = "ERR given type is not a function";
      return false;
    }
    codes->push_back(std::move(code));
  }
  return true;
}

}  // namespace lavik::rdb
