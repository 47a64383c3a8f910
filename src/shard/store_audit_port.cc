#include "telos/shard/store_audit_port.h"

#include <utility>

#include "telos/base/limits.h"

namespace telos::shard {

StoreAuditPort::StoreAuditPort(store::AuditStore& store, BlockingRunner blocking, Logger& log,
                               Metrics& metrics)
    : store_(store),
      blocking_(std::move(blocking)),
      log_(log),
      shed_(metrics.Counter("audit_rows_shed_total",
                            "Staff audit rows not stored because too many were waiting (each "
                            "is still in the audit log line)")) {}

StoreAuditPort::~StoreAuditPort() {
  in_flight_->Close();
}

void StoreAuditPort::Record(world::AuditRecord record) {
  if (pending_->fetch_add(1) >= limits::kAuditPendingMax) {
    pending_->fetch_sub(1);
    shed_.Increment();
    log_.Error("audit row shed: too many waiting", {{"actor", record.actor},
                                                    {"action", record.action},
                                                    {"target", record.target},
                                                    {"detail", record.detail},
                                                    {"world", record.world},
                                                    {"at_unix_ms", record.at_unix_ms}});
    return;
  }
  // Counted down whether the task runs or the gate drops it (the wrapper's guard dies either
  // way), so a dropped task never holds a slot.
  struct Slot {
    std::shared_ptr<std::atomic<size_t>> pending;
    ~Slot() {
      if (pending) pending->fetch_sub(1);
    }
  };
  auto slot = std::make_shared<Slot>();
  slot->pending = pending_;
  blocking_(in_flight_->Wrap([this, slot, record = std::move(record)] {
    const store::AuditRow row{
        0,           record.at_unix_ms, record.actor, record.action, record.target, record.detail,
        record.world};
    auto appended = store_.Append(row);
    if (!appended.ok()) {
      log_.Error("audit row not stored", {{"actor", record.actor},
                                          {"action", record.action},
                                          {"target", record.target},
                                          {"at_unix_ms", record.at_unix_ms},
                                          {"error", appended.status().ToString()}});
    }
  }));
}

}  // namespace telos::shard
