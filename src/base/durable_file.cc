#include "base/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lavik {

namespace {

bool Fail(std::string* error, const char* what, const std::string& path) {
  *error = std::string(what) + " " + path + ": " + std::strerror(errno ? errno : EIO);
  return false;
}

bool Replace(const std::string& path, std::string_view data, bool sync, std::string* error) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(error, "Creating", tmp);
  bool ok = true;
  for (std::string_view rest = data; ok && !rest.empty();) {
    const ssize_t n = write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = Fail(error, "Writing", tmp);
    } else {
      rest.remove_prefix(static_cast<size_t>(n));
    }
  }
  if (ok && sync && fsync(fd) != 0) ok = Fail(error, "Syncing", tmp);
  close(fd);
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) ok = Fail(error, "Renaming", tmp);
  if (!ok) {
    unlink(tmp.c_str());
    return false;
  }
  if (!sync) return true;
  // The rename itself is durable only once the directory is synced.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Fail(error, "Opening directory", dir);
  ok = fsync(dfd) == 0 || Fail(error, "Syncing directory", dir);
  close(dfd);
  return ok;
}

}  // namespace

bool WriteFileDurably(const std::string& path, std::string_view data, std::string* error) {
  return Replace(path, data, true, error);
}

bool WriteFileInPlace(const std::string& path, std::string_view data, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(error, "Opening", path);
  const size_t content = data.size();
  struct stat st {};
  std::string padded;
  if (fstat(fd, &st) == 0 && size_t(st.st_size) > data.size()) {
    padded.assign(data);
    padded.resize(size_t(st.st_size), '\n');
    data = padded;
  }
  bool ok = true;
  for (size_t done = 0; ok && done < data.size();) {
    const ssize_t n = pwrite(fd, data.data() + done, data.size() - done, off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = Fail(error, "Writing", path);
    } else {
      done += size_t(n);
    }
  }
  // The padding is only blank lines to a reader: a failed truncate loses nothing.
  if (ok && !padded.empty()) (void)!ftruncate(fd, off_t(content));
  close(fd);
  return ok;
}

bool ReadWholeFile(const std::string& path, std::string* data, bool* exists, std::string* error) {
  data->clear();
  *exists = false;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || Fail(error, "Opening", path);
  *exists = true;
  char buf[64 << 10];
  bool ok = true;
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = Fail(error, "Reading", path);
    if (n <= 0) break;
    data->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return ok;
}

}  // namespace lavik
