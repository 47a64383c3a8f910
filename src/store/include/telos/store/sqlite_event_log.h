// SqliteEventLog: the embedded backend of bus::DurableStreams (telos/bus/durable.h), in a SQLite
// file, so `telos serve` keeps its durable events across a restart. It may share the file with
// SqliteStore (the tables come from the same migrations, schema/sql/sqlite/0005_event_log.sql).
//
// One process owns the file's streams: consumers learn of new events from publishes made
// through this object, not from other processes writing the same file.
//
// Each consumer runs on a thread of its own: it reads the next event after its position, writes
// the delivery count, calls the handler without any lock held, and writes the answer. A
// handler's answer is therefore durable once the next event reaches it. Streams are pruned by
// their bounds on publish (max_messages) and at most once a second of the clock (max_age_ms).
//
// Ownership: the Clock must outlive the log; consumers must be destroyed before the log.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"
#include "telos/bus/durable.h"

namespace telos::store {

struct SqliteEventLogOptions {
  std::string path;  // a file (created if missing) or ":memory:"
  int64_t busy_timeout_ms = limits::kSqliteBusyTimeoutMs;
  // FULL: a published event survives power loss (an fsync per publish); NORMAL: a process crash.
  bool synchronous_full = true;
};

class SqliteEventLog final : public bus::DurableStreams {
 public:
  // Opens and migrates the file. Unavailable when it cannot be opened; FailedPrecondition when
  // its schema is newer than this binary's.
  static Result<std::unique_ptr<SqliteEventLog>> Open(const SqliteEventLogOptions& options,
                                                      const Clock& clock);
  ~SqliteEventLog() override;

  Status EnsureStream(const bus::StreamSpec& spec) override;
  Result<bus::PublishAck> Publish(std::string_view subject, std::string_view data,
                                  std::string_view msg_id) override;
  Result<std::unique_ptr<bus::DurableConsumer>> Consume(
      const bus::ConsumerSpec& spec,
      std::function<bus::Disposition(const bus::DurableEvent&)> handler) override;

  struct Core;  // the connection, the stream cache and the consumers' wake-ups (the .cc)

 private:
  explicit SqliteEventLog(std::shared_ptr<Core> core);
  std::shared_ptr<Core> core_;
};

}  // namespace telos::store
