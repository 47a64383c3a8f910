// StoreAuditPort: the world's AuditPort (telos/world/staff.h) on a store::AuditStore. A zone
// hands it a record and goes on; the row is appended on the blocking pool. A row the store
// refuses or cannot take (PostgreSQL down) is logged with the whole record, so the trail still
// has it in the log even when the table does not. At most kAuditPendingMax rows wait for the
// pool at once; past it a row is shed (logged, counted in audit_rows_shed_total) rather than
// queued, so a slow PostgreSQL cannot grow the queue without bound.
//
// Lifecycle: destroying it waits for appends in flight and drops the ones that had not started
// (each was already written as the host's "audit" log line).
//
// Thread safety: Record may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "telos/base/blocking.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/store/audit_store.h"
#include "telos/world/staff.h"

namespace telos::shard {

class StoreAuditPort final : public world::AuditPort {
 public:
  // `store`, `log` and `metrics` must outlive the port.
  StoreAuditPort(store::AuditStore& store, BlockingRunner blocking, Logger& log, Metrics& metrics);
  ~StoreAuditPort() override;
  void Record(world::AuditRecord record) override;

 private:
  store::AuditStore& store_;
  const BlockingRunner blocking_;
  Logger& log_;
  prometheus::Counter& shed_;
  // Rows handed to the pool and not yet appended (shared with the tasks, which may outlive
  // nothing: the gate drops those not started).
  const std::shared_ptr<std::atomic<size_t>> pending_ = std::make_shared<std::atomic<size_t>>(0);
  const std::shared_ptr<InFlightGate> in_flight_ = InFlightGate::Make();
};

}  // namespace telos::shard
