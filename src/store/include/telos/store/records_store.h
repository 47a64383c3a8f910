// RecordsStore: the fleet-wide tallies and records that durable game events feed (a boss
// killed, a first kill), each event applied exactly once.
//
// Game events reach their consumer at least once (telos/bus/durable.h): a redelivery, a
// publish repeated after a lost answer, or a replay after a broker restart may bring an event
// again. Each event names its source (the world that published it) and that source's
// sequence, which only grows. Apply stores the effect and the source's watermark (the last
// sequence applied) in one transaction, and applies nothing for a sequence at or below the
// watermark, so the effect of an event happens once however often it arrives. Watermarks are
// kept per consumer: two consumers of the same events keep separate positions.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on I/O: call
// them from the blocking pool or a consumer's own thread, never from a zone executor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::store {

struct GameEvent {
  std::string source;    // the publishing world's shard id
  int64_t sequence = 0;  // >= 1, increasing per source
  std::string kind;      // what happened: "boss_kill"
  std::string subject;   // what it happened to: "dungeon:lich"
  std::string actor;     // who did it (a display name; may be empty)
  int64_t at_ms = 0;     // when, Unix milliseconds
};

// How often one kind of event happened to one subject, and the first and latest time.
struct Tally {
  std::string kind;
  std::string subject;
  int64_t count = 0;
  std::string first_actor;
  int64_t first_at_ms = 0;
  std::string last_actor;
  int64_t last_at_ms = 0;

  bool operator==(const Tally&) const = default;
};

enum class Applied { kApplied, kDuplicate };

class RecordsStore {
 public:
  virtual ~RecordsStore() = default;

  // Applies `event` for `consumer` once: kDuplicate (and nothing changes) when its sequence is
  // at or below the consumer's watermark for its source. REQUIRES: non-empty consumer, source,
  // kind and subject, each at most kRecordFieldBytesMax bytes (also actor), and sequence >= 1
  // (else InvalidArgument).
  virtual Result<Applied> Apply(std::string_view consumer, const GameEvent& event) = 0;

  // Every tally, ordered by kind then subject.
  virtual Result<std::vector<Tally>> Tallies() = 0;

  // The consumer's watermark for the source: 0 before anything was applied.
  virtual Result<int64_t> Watermark(std::string_view consumer, std::string_view source) = 0;

  // The publisher's side: reserves and returns the next sequence of `source`'s events (1 the
  // first time, then one more each call), stored before it returns, so a publisher that
  // restarts goes on past every sequence it ever used. REQUIRES: non-empty source of at most
  // kRecordFieldBytesMax bytes (else InvalidArgument).
  virtual Result<int64_t> ReserveSequence(std::string_view source) = 0;
};

}  // namespace telos::store
