// The CheckpointStore conformance suite: what every backend must do, written once and run
// against each (SQLite in store_test, Redis in store_redis_test).
//
// A backend joins by providing a CheckpointBackendFactory and instantiating the suite:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, CheckpointConformanceTest,
//                            ::testing::Values(SqliteCheckpointFactory()), CheckpointBackendName);
// Each test gets a fresh, empty backend from the factory and a ManualClock it must use for
// written_at_ms.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "telos/base/clock.h"
#include "telos/store/checkpoint_store.h"

namespace telos::store {

// One fresh backend; owns whatever it needs (a temp dir, a connection, a key namespace).
class CheckpointBackend {
 public:
  virtual ~CheckpointBackend() = default;
  virtual CheckpointStore& checkpoints() = 0;
};

struct CheckpointBackendFactory {
  std::string name;  // a test-name suffix: letters and digits only
  std::function<std::unique_ptr<CheckpointBackend>(const Clock& clock)> make;
};

// Prints the factory as its name (stable gtest and ctest names).
inline void PrintTo(const CheckpointBackendFactory& factory, std::ostream* os) {
  *os << factory.name;
}

inline std::string CheckpointBackendName(
    const ::testing::TestParamInfo<CheckpointBackendFactory>& info) {
  return info.param.name;
}

class CheckpointConformanceTest : public ::testing::TestWithParam<CheckpointBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam().make(clock_);
    ASSERT_NE(backend_, nullptr);
  }

  CheckpointStore& checkpoints() { return backend_->checkpoints(); }

  // A checkpoint that is not stored yet.
  static Checkpoint Draft(std::string name, int64_t owner_epoch, int64_t state_version) {
    Checkpoint c;
    c.name = std::move(name);
    c.account_id = 7;
    c.owner_epoch = owner_epoch;
    c.state_version = state_version;
    c.zone_id = "town";
    c.room_id = "town.square";
    c.state_json = R"({"hp":20,"gold":5})";
    return c;
  }

  ManualClock clock_;
  std::unique_ptr<CheckpointBackend> backend_;
};

}  // namespace telos::store
