// StoreAuditPort: rows reach the store off the caller's thread, and the queue to the blocking
// pool is bounded (limits.h kAuditPendingMax): past it a row is shed and counted, and a slot
// comes back once its row is stored.
#include "telos/shard/store_audit_port.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"

namespace telos::shard {
namespace {

using ::testing::HasSubstr;

class CountingAuditStore final : public store::AuditStore {
 public:
  Result<int64_t> Append(const store::AuditRow& row) override {
    rows.push_back(row);
    return static_cast<int64_t>(rows.size());
  }
  Result<std::vector<store::AuditRow>> List(size_t, const std::string&,
                                            const std::string&) override {
    return rows;
  }
  std::vector<store::AuditRow> rows;
};

world::AuditRecord RecordOf(int i) {
  world::AuditRecord record;
  record.actor = "Ada";
  record.action = "mute";
  record.target = "bob" + std::to_string(i);
  record.world = "world-a";
  return record;
}

TEST(StoreAuditPortTest, PastItsBoundARowIsShedAndCountedAndASlotComesBackOnceStored) {
  CountingAuditStore store;
  Logger log("store_audit_port_test", LogLevel::kError);
  Metrics metrics;
  // A pool that never gets round to anything: the queue only fills.
  std::vector<std::function<void()>> queued;
  StoreAuditPort port(
      store, [&queued](std::function<void()> task) { queued.push_back(std::move(task)); }, log,
      metrics);
  for (size_t i = 0; i < limits::kAuditPendingMax; ++i) port.Record(RecordOf(static_cast<int>(i)));
  EXPECT_EQ(queued.size(), limits::kAuditPendingMax);
  EXPECT_THAT(metrics.RenderText(), HasSubstr("audit_rows_shed_total 0"));

  port.Record(RecordOf(-1));  // one too many: shed, never queued
  EXPECT_EQ(queued.size(), limits::kAuditPendingMax);
  EXPECT_THAT(metrics.RenderText(), HasSubstr("audit_rows_shed_total 1"));

  // One stored (its task run and gone): there is room for one more.
  std::function<void()> first = std::move(queued.front());
  queued.erase(queued.begin());
  first();
  first = nullptr;
  ASSERT_EQ(store.rows.size(), 1u);
  EXPECT_EQ(store.rows[0].target, "bob0");
  port.Record(RecordOf(-2));
  EXPECT_EQ(queued.size(), limits::kAuditPendingMax);
  EXPECT_THAT(metrics.RenderText(), HasSubstr("audit_rows_shed_total 1"));
  for (auto& task : queued) task();
  queued.clear();
  EXPECT_EQ(store.rows.size(), limits::kAuditPendingMax + 1);
}

}  // namespace
}  // namespace telos::shard
