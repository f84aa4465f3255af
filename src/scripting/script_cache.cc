#include "scripting/script_cache.h"

#include <openssl/sha.h>

#include <cctype>

namespace lavik {

std::string Sha1Hex(std::string_view data) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * SHA_DIGEST_LENGTH, '0');
  for (int i = 0; i < SHA_DIGEST_LENGTH; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

ScriptCache& ScriptCache::Get() {
  static ScriptCache cache;
  return cache;
}

std::string LowerSha(std::string_view sha) {
  std::string s(sha);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string ScriptCache::Add(std::string_view body) {
  std::string sha = Sha1Hex(body);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = scripts_.try_emplace(sha, body);
  if (added) body_bytes_ += body.size() + sha.size();
  return sha;
}

bool ScriptCache::Find(std::string_view sha, std::string* body) const {
  if (sha.size() != 40) return false;
  const std::string key = LowerSha(sha);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scripts_.find(key);
  if (it == scripts_.end()) return false;
  *body = it->second;
  return true;
}

bool ScriptCache::Exists(std::string_view sha) const {
  if (sha.size() != 40) return false;
  const std::string key = LowerSha(sha);
  std::lock_guard<std::mutex> lock(mu_);
  return scripts_.count(key) != 0;
}

void ScriptCache::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  scripts_.clear();
  body_bytes_ = 0;
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

size_t ScriptCache::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scripts_.size();
}

size_t ScriptCache::body_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return body_bytes_;
}

}  // namespace lavik
