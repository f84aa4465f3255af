// ScriptCache: the scripts EVAL and SCRIPT LOAD have seen, by SHA1, shared by every worker (a
// script loaded through one connection is callable by EVALSHA on any other, as in Redis).
// Each worker's Lua state compiles a script lazily on its first run there and drops what it
// compiled when the cache's generation moves (SCRIPT FLUSH).
//
// Thread safety: every method may be called from any thread (one mutex; scripts are looked up
// once per EVALSHA, not per redis.call).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lavik {

// The 40 lowercase hex digits of SHA1(data).
std::string Sha1Hex(std::string_view data);
// `sha` in lowercase (SHA1s are looked up in any case).
std::string LowerSha(std::string_view sha);

class ScriptCache {
 public:
  static ScriptCache& Get();

  // Adds `body`; returns its SHA1.
  std::string Add(std::string_view body);
  // The body of a script by SHA1 (any case); false if unknown.
  bool Find(std::string_view sha, std::string* body) const;
  bool Exists(std::string_view sha) const;
  void Flush();
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t count() const;
  size_t body_bytes() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> scripts_;  // lowercase sha → body
  size_t body_bytes_ = 0;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace lavik
