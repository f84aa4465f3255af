#include "replication/saved_history.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace lavik {
namespace {

constexpr const char* kMagic = "lavik-replication-history 1";

std::string Identity(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

bool SyncDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

bool IsHex40(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::string SavedHistoryPath(const std::string& data_file) { return data_file + ".repl"; }

bool SaveHistory(const std::string& data_file, const SavedHistory& h, std::string* error) {
  const std::string id = Identity(data_file);
  if (id.empty()) {
    *error = "can't stat '" + data_file + "': " + std::strerror(errno);
    return false;
  }
  const std::string path = SavedHistoryPath(data_file);
  const std::string tmp = path + ".tmp";
  const std::string text = std::string(kMagic) + "\nreplid " + h.replid + "\noffset " +
                           std::to_string(h.offset) + "\ndb " + std::to_string(h.db) + "\ndata " +
                           id + "\n";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "can't create '" + tmp + "': " + std::strerror(errno);
    return false;
  }
  const bool written =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  const int saved_errno = errno;
  close(fd);
  if (!written || rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "can't write '" + path + "': " + std::strerror(written ? errno : saved_errno);
    unlink(tmp.c_str());
    return false;
  }
  SyncDir(path);
  return true;
}

bool TakeSavedHistory(const std::string& data_file, SavedHistory* h, std::string* why) {
  why->clear();
  const std::string path = SavedHistoryPath(data_file);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text(4096, '\0');
  const ssize_t n = read(fd, text.data(), text.size());
  close(fd);
  // Gone before anything can change the data: it describes this moment only.
  unlink(path.c_str());
  SyncDir(path);
  if (n <= 0) {
    *why = "the saved replication history is empty";
    return false;
  }
  text.resize(static_cast<size_t>(n));
  std::istringstream in(text);
  std::string magic, k1, k2, k3, k4, data_id;
  std::getline(in, magic);
  in >> k1 >> h->replid >> k2 >> h->offset >> k3 >> h->db >> k4 >> data_id;
  if (magic != kMagic || k1 != "replid" || k2 != "offset" || k3 != "db" || k4 != "data" ||
      in.fail() || !IsHex40(h->replid) || h->offset < 0 || h->db < 0) {
    *why = "the saved replication history '" + path + "' is malformed";
    return false;
  }
  if (data_id != Identity(data_file)) {
    *why = "the data file changed since the replication history was saved";
    return false;
  }
  return true;
}

}  // namespace lavik
