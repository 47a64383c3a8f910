#include "telos/store/sqlite_event_log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "sqlite/connection.h"
#include "sqlite/migrations.h"
#include "telos/base/assert.h"
#include "telos/bus/bus.h"

namespace telos::store {
namespace {

using sqlite::Connection;
using sqlite::Query;
using sqlite::Transaction;

// Rows a consumer reads per look at the log (events its filter skips are passed over in bulk).
constexpr int64_t kReadBatch = 64;
// How often the age bound is applied: a scan of the stream, so not on every publish.
constexpr int64_t kAgePruneEveryMs = 1'000;
// A consumer that cannot read the file (busy beyond the timeout, I/O trouble) looks again after
// this long.
constexpr auto kStoreRetry = std::chrono::milliseconds(200);

int64_t UnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

struct ConsumerPosition {
  int64_t answered_through = 0;
  int64_t head_sequence = 0;
  int64_t head_deliveries = 0;
};

}  // namespace

struct SqliteEventLog::Core {
  Core(std::unique_ptr<Connection> c, const Clock& clk) : conn(std::move(c)), clock(clk) {}

  std::mutex mu;  // everything below, and every use of the connection
  // Signalled on every publish and every consumer stop: waiting consumers look again.
  std::condition_variable changed;
  std::unique_ptr<Connection> conn;
  const Clock& clock;
  std::map<std::string, bus::StreamSpec> streams;
  std::set<std::pair<std::string, std::string>> running;  // (stream, durable)
  uint64_t publishes = 0;
  // Per stream: a single time shared by all would let a busy stream's prunes keep a quieter
  // one's from ever running, and its old events would stay past max_age_ms.
  std::map<std::string, int64_t> last_age_prune_ms;

  Status LoadStreams() {
    TELOS_SQL_QUERY(q, *conn,
                    "SELECT name, subjects, max_age_ms, max_messages, duplicate_window_ms "
                    "FROM event_streams");
    while (true) {
      auto row = q.Step("reading the event streams");
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      bus::StreamSpec spec;
      spec.name = q.Text(0);
      spec.subjects = q.Text(1);
      spec.max_age_ms = q.Int(2);
      spec.max_messages = q.Int(3);
      spec.duplicate_window_ms = q.Int(4);
      streams[spec.name] = spec;
    }
  }

  const bus::StreamSpec* StreamFor(std::string_view subject) const {
    for (const auto& [name, spec] : streams) {
      if (bus::SubjectMatches(spec.subjects, subject)) return &spec;
    }
    return nullptr;
  }

  Result<std::optional<uint64_t>> FindDuplicate(const bus::StreamSpec& spec,
                                                std::string_view msg_id, int64_t now_ms) {
    TELOS_SQL_QUERY(q, *conn,
                    "SELECT sequence FROM event_log WHERE stream = ?1 AND msg_id = ?2 "
                    "AND published_ms > ?3 ORDER BY sequence DESC LIMIT 1");
    auto row = q.Bind(1, spec.name)
                   .Bind(2, msg_id)
                   .Bind(3, now_ms - spec.duplicate_window_ms)
                   .Step("looking for a duplicate event");
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<uint64_t>();
    return std::optional<uint64_t>(static_cast<uint64_t>(q.Int(0)));
  }

  Result<uint64_t> Append(const bus::StreamSpec& spec, std::string_view subject,
                          std::string_view data, std::string_view msg_id, int64_t now_ms) {
    int64_t sequence = 0;
    {
      TELOS_SQL_QUERY(q, *conn,
                      "UPDATE event_streams SET last_sequence = last_sequence + 1 "
                      "WHERE name = ?1 RETURNING last_sequence");
      auto row = q.Bind(1, spec.name).Step("numbering an event");
      if (!row.ok()) return row.status();
      if (!*row) return Status::NotFound("stream " + spec.name + " is gone");
      sequence = q.Int(0);
    }
    TELOS_SQL_QUERY(q, *conn,
                    "INSERT INTO event_log (stream, sequence, subject, data, msg_id, "
                    "published_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    Status s = q.Bind(1, spec.name)
                   .Bind(2, sequence)
                   .Bind(3, subject)
                   .BindBlob(4, data)
                   .Bind(5, msg_id)
                   .Bind(6, now_ms)
                   .Run("storing an event");
    if (!s.ok()) return s;
    return static_cast<uint64_t>(sequence);
  }

  Status Prune(const bus::StreamSpec& spec, uint64_t last_sequence, int64_t now_ms) {
    if (spec.max_messages > 0 && last_sequence > static_cast<uint64_t>(spec.max_messages)) {
      TELOS_SQL_QUERY(q, *conn, "DELETE FROM event_log WHERE stream = ?1 AND sequence <= ?2");
      Status s = q.Bind(1, spec.name)
                     .Bind(2, static_cast<int64_t>(last_sequence) - spec.max_messages)
                     .Run("pruning a stream to its size");
      if (!s.ok()) return s;
    }
    int64_t& last_pruned_ms = last_age_prune_ms[spec.name];
    if (spec.max_age_ms > 0 && now_ms - last_pruned_ms >= kAgePruneEveryMs) {
      TELOS_SQL_QUERY(q, *conn, "DELETE FROM event_log WHERE stream = ?1 AND published_ms < ?2");
      Status s =
          q.Bind(1, spec.name).Bind(2, now_ms - spec.max_age_ms).Run("pruning a stream to its age");
      if (!s.ok()) return s;
      last_pruned_ms = now_ms;
    }
    return Status::Ok();
  }

  Status WritePosition(const bus::ConsumerSpec& spec, const ConsumerPosition& at) {
    TELOS_SQL_QUERY(q, *conn,
                    "UPDATE event_consumers SET answered_through = ?3, head_sequence = ?4, "
                    "head_deliveries = ?5 WHERE stream = ?1 AND durable = ?2");
    return q.Bind(1, spec.stream)
        .Bind(2, spec.durable)
        .Bind(3, at.answered_through)
        .Bind(4, at.head_sequence)
        .Bind(5, at.head_deliveries)
        .Run("recording a consumer's position");
  }

  Result<ConsumerPosition> OpenPosition(const bus::ConsumerSpec& spec) {
    {
      TELOS_SQL_QUERY(q, *conn,
                      "INSERT INTO event_consumers (stream, durable) VALUES (?1, ?2) "
                      "ON CONFLICT (stream, durable) DO NOTHING");
      Status s = q.Bind(1, spec.stream).Bind(2, spec.durable).Run("registering a consumer");
      if (!s.ok()) return s;
    }
    TELOS_SQL_QUERY(q, *conn,
                    "SELECT answered_through, head_sequence, head_deliveries FROM "
                    "event_consumers WHERE stream = ?1 AND durable = ?2");
    auto row = q.Bind(1, spec.stream).Bind(2, spec.durable).Step("reading a consumer");
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("consumer " + spec.durable + " vanished");
    return ConsumerPosition{q.Int(0), q.Int(1), q.Int(2)};
  }
};

namespace {

class SqliteConsumer final : public bus::DurableConsumer {
 public:
  using Handler = std::function<bus::Disposition(const bus::DurableEvent&)>;

  SqliteConsumer(std::shared_ptr<SqliteEventLog::Core> core, bus::ConsumerSpec spec,
                 ConsumerPosition at, Handler handler)
      : core_(std::move(core)), spec_(std::move(spec)), at_(at), handler_(std::move(handler)) {
    thread_ = std::thread([this] { Run(); });
  }

  ~SqliteConsumer() override {
    {
      std::lock_guard lock(core_->mu);
      stop_ = true;
    }
    core_->changed.notify_all();
    thread_.join();
    std::lock_guard lock(core_->mu);
    core_->running.erase({spec_.stream, spec_.durable});
  }

  bus::ConsumerCounts counts() const override {
    return {acked_.load(), rejected_.load(), parked_.load(), redelivered_.load()};
  }

 private:
  // The next event to hand over (its delivery count already raised), or nothing for now.
  // REQUIRES: core_->mu held.
  Result<std::optional<bus::DurableEvent>> NextLocked() {
    while (true) {
      TELOS_SQL_QUERY(q, *core_->conn,
                      "SELECT sequence, subject, data, published_ms FROM event_log "
                      "WHERE stream = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3");
      q.Bind(1, spec_.stream).Bind(2, at_.answered_through).Bind(3, kReadBatch);
      int64_t last_seen = 0;
      while (true) {
        auto row = q.Step("reading events");
        if (!row.ok()) return row.status();
        if (!*row) break;
        last_seen = q.Int(0);
        std::string subject = q.Text(1);
        if (!spec_.filter_subject.empty() && !bus::SubjectMatches(spec_.filter_subject, subject)) {
          continue;
        }
        bus::DurableEvent event;
        event.stream_sequence = static_cast<uint64_t>(last_seen);
        event.subject = std::move(subject);
        event.data = q.Blob(2);
        event.published_unix_ms = q.Int(3);
        const int64_t before = at_.head_sequence == last_seen ? at_.head_deliveries : 0;
        if (before >= static_cast<int64_t>(spec_.max_deliveries)) {
          // Handed over as often as allowed (the process died inside the handler): parked.
          at_ = {last_seen, 0, 0};
          ++parked_;
          break;  // the statement restarts from the new position
        }
        at_.head_sequence = last_seen;
        at_.head_deliveries = before + 1;
        event.deliveries = static_cast<uint32_t>(at_.head_deliveries);
        return std::optional<bus::DurableEvent>(std::move(event));
      }
      if (last_seen == 0) return std::optional<bus::DurableEvent>();
      // Every row read was filtered out (or one was parked): move past them and read on.
      at_.answered_through = std::max(at_.answered_through, last_seen);
      if (at_.head_sequence <= at_.answered_through) at_.head_sequence = at_.head_deliveries = 0;
      Status s = core_->WritePosition(spec_, at_);
      if (!s.ok()) return s;
    }
  }

  void Run() {
    std::unique_lock lock(core_->mu);
    while (!stop_) {
      const uint64_t seen = core_->publishes;
      auto next = NextLocked();
      if (!next.ok()) {
        core_->changed.wait_for(lock, kStoreRetry, [&] { return stop_; });
        continue;
      }
      if (!next->has_value()) {
        core_->changed.wait(lock, [&] { return stop_ || core_->publishes != seen; });
        continue;
      }
      bus::DurableEvent event = std::move(**next);
      // The delivery counts before the handler runs, so a crash inside it counts too.
      if (!core_->WritePosition(spec_, at_).ok()) {
        at_.head_deliveries -= 1;
        core_->changed.wait_for(lock, kStoreRetry, [&] { return stop_; });
        continue;
      }
      if (event.deliveries > 1) ++redelivered_;
      lock.unlock();
      const bus::Disposition answer = handler_(event);
      lock.lock();
      if (answer == bus::Disposition::kRetry && event.deliveries < spec_.max_deliveries) {
        core_->changed.wait_for(lock, std::chrono::milliseconds(spec_.retry_delay_ms),
                                [&] { return stop_; });
        continue;
      }
      ConsumerPosition answered{static_cast<int64_t>(event.stream_sequence), 0, 0};
      // Written before the next event is read; if the write fails the event is handed over
      // again (at least once), which the consumer's watermark absorbs.
      while (!core_->WritePosition(spec_, answered).ok()) {
        if (core_->changed.wait_for(lock, kStoreRetry, [&] { return stop_; })) break;
      }
      at_ = answered;
      switch (answer) {
        case bus::Disposition::kAck: ++acked_; break;
        case bus::Disposition::kReject: ++rejected_; break;
        case bus::Disposition::kRetry: ++parked_; break;
      }
    }
  }

  std::shared_ptr<SqliteEventLog::Core> core_;
  const bus::ConsumerSpec spec_;
  ConsumerPosition at_;  // guarded by core_->mu (only this consumer's thread uses it)
  Handler handler_;
  bool stop_ = false;  // guarded by core_->mu
  std::atomic<uint64_t> acked_{0}, rejected_{0}, parked_{0}, redelivered_{0};
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<SqliteEventLog>> SqliteEventLog::Open(const SqliteEventLogOptions& options,
                                                             const Clock& clock) {
  if (options.path.empty()) return Status::InvalidArgument("the event log's SQLite path is empty");
  auto conn = Connection::Open(options.path, options.busy_timeout_ms, options.synchronous_full);
  if (!conn.ok()) return conn.status();
  auto version = sqlite::ApplyMigrations(**conn, sqlite::EmbeddedMigrations(), UnixMs(clock));
  if (!version.ok()) {
    return Status(version.status().code(), options.path + ": " + version.status().message());
  }
  auto core = std::make_shared<Core>(std::move(conn).value(), clock);
  std::lock_guard lock(core->mu);
  Status s = core->LoadStreams();
  if (!s.ok()) return s;
  return std::unique_ptr<SqliteEventLog>(new SqliteEventLog(core));
}

SqliteEventLog::SqliteEventLog(std::shared_ptr<Core> core) : core_(std::move(core)) {}

SqliteEventLog::~SqliteEventLog() {
  std::lock_guard lock(core_->mu);
  RELEASE_ASSERT(core_->running.empty(), "SqliteEventLog destroyed before its consumers");
}

Status SqliteEventLog::EnsureStream(const bus::StreamSpec& spec) {
  Status check = bus::CheckStreamSpec(spec);
  if (!check.ok()) return check;
  std::lock_guard lock(core_->mu);
  if (auto it = core_->streams.find(spec.name);
      it != core_->streams.end() && it->second.subjects != spec.subjects) {
    return Status::AlreadyExists("stream " + spec.name + " already captures " +
                                 it->second.subjects);
  }
  TELOS_SQL_QUERY(q, *core_->conn,
                  "INSERT INTO event_streams (name, subjects, max_age_ms, max_messages, "
                  "duplicate_window_ms) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO UPDATE "
                  "SET max_age_ms = excluded.max_age_ms, max_messages = excluded.max_messages, "
                  "duplicate_window_ms = excluded.duplicate_window_ms");
  Status s = q.Bind(1, spec.name)
                 .Bind(2, spec.subjects)
                 .Bind(3, spec.max_age_ms)
                 .Bind(4, spec.max_messages)
                 .Bind(5, spec.duplicate_window_ms)
                 .Run("creating a stream");
  if (!s.ok()) return s;
  core_->streams[spec.name] = spec;
  return Status::Ok();
}

Result<bus::PublishAck> SqliteEventLog::Publish(std::string_view subject, std::string_view data,
                                                std::string_view msg_id) {
  if (!bus::ValidSubject(subject, /*allow_wildcards=*/false)) {
    return Status::InvalidArgument("malformed subject for an event: " + std::string(subject));
  }
  if (data.size() > bus::kMessageBytesMax) {
    return Status::InvalidArgument("event of " + std::to_string(data.size()) +
                                   " bytes is over the limit");
  }
  if (msg_id.size() > limits::kDurableMsgIdBytesMax) {
    return Status::InvalidArgument("msg_id over " + std::to_string(limits::kDurableMsgIdBytesMax) +
                                   " bytes");
  }
  std::unique_lock lock(core_->mu);
  const bus::StreamSpec* stream = core_->StreamFor(subject);
  if (stream == nullptr) {
    return Status::NotFound("no stream captures " + std::string(subject));
  }
  const bus::StreamSpec spec = *stream;
  const int64_t now_ms = UnixMs(core_->clock);
  Transaction tx(*core_->conn);
  Status s = tx.Begin();
  if (!s.ok()) return s;
  if (!msg_id.empty()) {
    auto dup = core_->FindDuplicate(spec, msg_id, now_ms);
    if (!dup.ok()) return dup.status();
    if (dup->has_value()) return bus::PublishAck{**dup, /*duplicate=*/true};
  }
  auto sequence = core_->Append(spec, subject, data, msg_id, now_ms);
  if (!sequence.ok()) return sequence.status();
  s = core_->Prune(spec, *sequence, now_ms);
  if (!s.ok()) return s;
  s = tx.Commit();
  if (!s.ok()) return s;
  ++core_->publishes;
  lock.unlock();
  core_->changed.notify_all();
  return bus::PublishAck{*sequence, /*duplicate=*/false};
}

Result<std::unique_ptr<bus::DurableConsumer>> SqliteEventLog::Consume(
    const bus::ConsumerSpec& spec,
    std::function<bus::Disposition(const bus::DurableEvent&)> handler) {
  Status check = bus::CheckConsumerSpec(spec);
  if (!check.ok()) return check;
  if (!handler) return Status::InvalidArgument("a consumer needs a handler");
  ConsumerPosition at;
  {
    std::lock_guard lock(core_->mu);
    if (core_->streams.count(spec.stream) == 0) {
      return Status::NotFound("no stream named " + spec.stream);
    }
    if (core_->running.count({spec.stream, spec.durable}) != 0) {
      return Status::AlreadyExists("consumer " + spec.durable + " already runs in this process");
    }
    auto position = core_->OpenPosition(spec);
    if (!position.ok()) return position.status();
    at = *position;
    core_->running.insert({spec.stream, spec.durable});
  }
  return std::unique_ptr<bus::DurableConsumer>(
      new SqliteConsumer(core_, spec, at, std::move(handler)));
}

}  // namespace telos::store
