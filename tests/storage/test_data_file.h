// Test helper: a fresh data file in a temporary directory, and in-memory-device stores over it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "storage/data_file.h"
#include "storage/store.h"

namespace lavik {

class TestDataFile {
 public:
  explicit TestDataFile(uint64_t max_size = 0) {
    dir_ = std::filesystem::temp_directory_path() /
           ("lavik-test-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    DataFile::Options o;
    o.path = (dir_ / "data").string();
    o.max_size = max_size;
    std::string error;
    file_ = DataFile::Open(o, &error);
    disk_ = std::make_shared<MemDisk>();
  }
  ~TestDataFile() {
    file_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  DataFile* file() { return file_.get(); }
  std::string path() const { return (dir_ / "data").string(); }

  // Stores whose device is the real file through a blocking fake (MemDevice over memory would
  // not see what DataFile wrote), one per shard.
  std::vector<std::unique_ptr<Store>> MakeStores(int n, StoreOptions options = {}) {
    std::vector<std::unique_ptr<Store>> stores;
    for (int i = 0; i < n; ++i) {
      stores.push_back(std::make_unique<Store>(static_cast<uint32_t>(i), file_.get(),
                                               std::make_unique<MemDevice>(disk_), options));
    }
    return stores;
  }
  std::shared_ptr<MemDisk> disk() { return disk_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::unique_ptr<DataFile> file_;
  std::shared_ptr<MemDisk> disk_;
};

}  // namespace lavik
