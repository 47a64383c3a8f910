// Bus: the transient message bus between the processes of a fleet (NATS core), or between the
// components of one process when embedded.
//
// Delivery is at-most-once and fire-and-forget: nothing is stored, a message published while a
// subscriber is away (or while the bus is down) is simply lost. Anything that must survive goes
// through the directory or the stores; the bus carries notices, chat, tells and requests whose
// loss the caller can tolerate or retry.
//
// Two backends implement it with the same observable rules, checked by one conformance suite
// (bus_conformance.h):
//   - InProcessBus (in_process_bus.h): the embedded default. Several InProcessBus clients may
//     share one Hub, the in-process stand-in for a server.
//   - NatsBus (nats_bus.h): a fleet, on NATS core.
//
// Subjects are dot-separated tokens ("world.town.say"). A subscription may use NATS wildcards as
// whole tokens: '*' matches exactly one token, '>' (last token only) matches one or more
// trailing tokens. Text from players (names, zone ids) must go through SubjectToken() before it
// becomes part of a subject, so it can never add tokens or wildcards.
//
// Threads. Every method may be called from any thread, including from a handler or a
// completion. Handlers, completions and connection callbacks run on the bus's own delivery
// threads, never inside the Bus call that caused them, so a caller may hold its own locks while
// it publishes. They must not block: a slow handler delays every other delivery of its bus.
// Messages from one publisher to one subscription arrive in the order they were published.
//
// Errors, shared by every method:
//   kInvalidArgument    a malformed subject (see ValidSubject), a payload over
//                       kMessageBytesMax, a Reply to a message that is not a request.
//   kUnavailable        the bus is down right now (connected() is false); nothing was sent.
//   kNotFound           (Request) nobody subscribes to the subject: "no responders".
//   kDeadlineExceeded   (Request) nobody answered within the timeout.
//   kResourceExhausted  (Request) too many requests are waiting for an answer.
//   kCancelled          (Request) the bus was destroyed before an answer came.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::bus {

// --- Bounds. Units are in the names.
// A subject, wildcards and all. Subjects built from SubjectToken() grow up to three bytes per
// input byte, so keep the text that goes into them short.
inline constexpr size_t kSubjectBytesMax = limits::kBusSubjectBytesMax;
// One payload; NATS servers refuse more than their max_payload (1 MiB by default).
inline constexpr size_t kMessageBytesMax = limits::kBusMessageBytesMax;
// Requests of one bus still waiting for their answer.
inline constexpr size_t kPendingRequestsMax = limits::kBusPendingRequestsMax;
// A request's timeout is clamped to [0, kRequestTimeoutMsMax].
inline constexpr int64_t kRequestTimeoutMsMax = limits::kBusRequestTimeoutMsMax;

// One delivered message. `reply_to` is empty unless the message is a request; answer it with
// Bus::Reply.
struct Message {
  std::string subject;
  std::string data;
  std::string reply_to;
};

// A live subscription. Destroying it unsubscribes: once the destructor returns, its handler is
// not running and is never called again. The destructor waits for a handler call in flight on
// another thread, so do not destroy a Subscription while holding a lock its handler takes. It
// may be destroyed from inside its own handler, and it may outlive its Bus (it then does
// nothing).
class Subscription {
 public:
  virtual ~Subscription() = default;
};

class Bus {
 public:
  virtual ~Bus() = default;

  // Sends `data` to every current subscriber of `subject` (no wildcards), at most once.
  virtual Status Publish(std::string_view subject, std::string_view data) = 0;

  // Sends a request and calls `done` exactly once, on a bus thread (never inside Request
  // itself), with the data of the first reply, or: kNotFound when no subscription matches the
  // subject, kDeadlineExceeded when nobody answers within `timeout`, kUnavailable when the bus
  // is down (or goes down before the answer comes), kInvalidArgument, kResourceExhausted, or
  // kCancelled (see above). Later replies are dropped.
  virtual void Request(std::string subject, std::string data, std::chrono::milliseconds timeout,
                       std::function<void(Result<std::string>)> done) = 0;

  // Answers a request: publishes `data` to request.reply_to. Same errors as Publish, plus
  // kInvalidArgument when reply_to is empty.
  virtual Status Reply(const Message& request, std::string_view data) = 0;

  // Calls `handler` for every message published to a subject that `subject` matches (wildcards
  // allowed). Works while the bus is down: the subscription takes effect when it reconnects.
  // On a connected bus it is in effect when Subscribe returns.
  virtual Result<std::unique_ptr<Subscription>> Subscribe(
      std::string subject, std::function<void(const Message&)> handler) = 0;

  // Whether messages can flow right now.
  virtual bool connected() const = 0;

  // `callback` is called, on a bus thread, each time connected() changes, with the new value.
  // REQUIRES: called at most once, before the bus is shared with other threads.
  virtual void OnConnectionChange(std::function<void(bool connected)> callback) = 0;
};

// --- Subjects

// Whether `s` is a well-formed subject: at most kSubjectBytesMax bytes of non-empty tokens
// separated by '.', with no whitespace or control characters. With `allow_wildcards`, a token
// may be exactly "*", or exactly ">" if it is the last one; without, '*' and '>' are refused
// anywhere.
bool ValidSubject(std::string_view s, bool allow_wildcards);

// Whether `pattern` (a valid subject, wildcards allowed) matches `subject` (a valid subject
// without wildcards), by the rules above.
bool SubjectMatches(std::string_view pattern, std::string_view subject);

// Makes any text (a player name, a zone id) safe as exactly one subject token. Lowercase ASCII
// letters and digits are kept; every other byte (upper case, '.', '*', '>', '_', spaces, UTF-8)
// becomes '_' and two lowercase hex digits, so distinct texts give distinct tokens ("A" is
// "_41", "a" is "a"). The empty text gives "_".
std::string SubjectToken(std::string_view text);

}  // namespace telos::bus
