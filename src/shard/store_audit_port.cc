#include "telos/shard/store_audit_port.h"

#include <utility>

namespace telos::shard {

StoreAuditPort::StoreAuditPort(store::AuditStore& store, BlockingRunner blocking, Logger& log)
    : store_(store), blocking_(std::move(blocking)), log_(log) {}

StoreAuditPort::~StoreAuditPort() {
  in_flight_->Close();
}

void StoreAuditPort::Record(world::AuditRecord record) {
  blocking_(in_flight_->Wrap([this, record = std::move(record)] {
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
