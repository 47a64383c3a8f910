// Test helpers for src/store: a temporary directory and a fault-injecting CharacterStore.
//
// FaultInjectingCharacterStore wraps a real store. Tests can make the next N saves fail with a
// chosen status (without touching the row), or hold every save at a gate until released, and
// wait, without sleeping, until a given number of saves are parked at the gate.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>

#include "telos/base/assert.h"
#include "telos/store/character_store.h"

namespace telos::store {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "telos-store-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    RELEASE_ASSERT(made != nullptr, "mkdtemp failed");
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

class FaultInjectingCharacterStore final : public CharacterStore {
 public:
  explicit FaultInjectingCharacterStore(CharacterStore& inner) : inner_(inner) {}

  // The next `count` saves return `status` and leave the row alone.
  void FailNextSaves(int count, Status status) {
    std::lock_guard lock(mu_);
    failures_left_ = count;
    failure_ = std::move(status);
  }

  // While held, every save waits at a gate before reaching the inner store.
  void HoldSaves() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void ReleaseSaves() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    cv_.notify_all();
  }
  // True once `count` saves are parked at the gate, false after `timeout`.
  bool WaitForParkedSaves(int count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return parked_ >= count; });
  }

  int save_calls() const {
    std::lock_guard lock(mu_);
    return save_calls_;
  }

  Result<CharacterRecord> Create(const CharacterRecord& record) override {
    return inner_.Create(record);
  }
  Result<CharacterRecord> Load(std::string_view name) override { return inner_.Load(name); }
  Result<std::vector<CharacterRecord>> ListByAccount(int64_t account_id) override {
    return inner_.ListByAccount(account_id);
  }
  Status Delete(std::string_view name) override { return inner_.Delete(name); }
  Result<CharacterRecord> ClaimOwnership(std::string_view name, int64_t directory_epoch) override {
    return inner_.ClaimOwnership(name, directory_epoch);
  }

  Result<int64_t> Save(const CharacterRecord& record, int64_t expected_state_version,
                       int64_t writer_owner_epoch) override {
    {
      std::unique_lock lock(mu_);
      ++save_calls_;
      ++parked_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !held_; });
      --parked_;
      if (failures_left_ > 0) {
        --failures_left_;
        return failure_;
      }
    }
    return inner_.Save(record, expected_state_version, writer_owner_epoch);
  }

  Result<int64_t> RaiseZoneFence(std::string_view zone, int64_t lease_epoch,
                                 std::string_view shard) override {
    return inner_.RaiseZoneFence(zone, lease_epoch, shard);
  }
  Result<std::vector<ZoneWrite>> ListZoneWrites(int64_t after_id, size_t limit) override {
    return inner_.ListZoneWrites(after_id, limit);
  }

 private:
  CharacterStore& inner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int failures_left_ = 0;
  Status failure_;
  bool held_ = false;
  int parked_ = 0;
  int save_calls_ = 0;
};

}  // namespace telos::store
