// Gate: the player-facing front door. It turns each Terminal (telnet or WebSocket) into a
// session that logs in (accounts and characters through AccountService), then plays by
// relaying lines to the world through a WorldLink and the world's output back to the terminal.
//
// A character in play is bound to its connection by a PlayerBinding that outlives the socket:
// when the connection drops, the character stays in the world link-dead for
// `link_dead_ms`; logging in again within that time re-attaches the new connection to the
// same character where it stands. Logging in while the character is attached elsewhere moves it
// to the new connection and closes the old one.
//
// Blocking work (password hashing, stores) runs through `blocking`, a function that runs a task
// on a blocking pool; timers run on `io`. Session state is guarded per session by a small
// mutex because its events arrive from the transport strand, the pool and timers.
//
// The login dialogue keeps the account service's login ticket (the account is never named by
// id), and each character in play keeps the ticket that claimed it and its current assertion:
// assertions are short-lived, so the gate renews them while the character is in the world.
//
// Lock order. Three mutexes nest, always in this order and never the other way round:
//   1. a session's lock (its login dialogue and what it plays), held while the session
//      consults the roster or binds a character;
//   2. the roster lock (Gate::Shared::mu: bindings, sessions, claims, link-dead counts);
//   3. a binding's lock (which session shows a character, its link-dead timer, its
//      assertion's renewal): a leaf, nothing is locked under it.
// A binding hands the world's output to its session, and reports a departure to the roster,
// only after letting go of its own lock; a session is told it was displaced from `io`, not
// from under another session's lock. The world link, the terminals and the blocking runner
// come after all three: the gate calls them with a session's lock held, so they must answer
// later, never from inside the call, and never with a lock of their own held (FleetWorldLink
// calls a sink only with its lock released; a terminal queues; the runner hands the task to a
// pool). Clang checks the gate's side in the dev preset (-Wthread-safety with the beta order
// check): every guarded member is GUARDED_BY its mutex, every step that needs one REQUIRES it,
// and the order is ACQUIRED_BEFORE/ACQUIRED_AFTER, checked wherever two of them nest. Debug
// builds also check it at run time across calls, links included (telos::lock_rank).
// The renewal sweep's timer has a lock of its own that nests with none of them.
//
// Lifecycle: construct, hand TerminalFactory() to the transports, ... BeginShutdown() tells
// every player and refuses new logins; the owner then stops the world and the transports.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "telos/account/account_desk.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/gate/world_link.h"
#include "telos/net/terminal.h"
#include "telos/world/content.h"

namespace boost::asio {
class io_context;
}

namespace telos::gate {

struct GateOptions {
  std::string world_name = "Telos";
  world::Ref start_room;  // where new characters begin
  int64_t login_timeout_ms = limits::kLoginTimeoutMs;
  int64_t link_dead_ms = limits::kLinkDeadMs;
  int login_attempts_per_connection = 3;
  // How often the gate renews the login assertions past half their life (0: never by itself;
  // tests call RenewDueAssertions).
  int64_t assertion_renew_sweep_ms = limits::kAssertionRenewSweepMs;
};

class PlayerBinding;
class GateSession;

class Gate {
 public:
  // `accounts` must hand out assertions (LocalAccountDesk, RemoteAccountDesk): the world
  // behind `link` admits a character only on one, and claims and persists it itself. Claims
  // name `link.gate_id()`, the gate id the link says hello with, because a world admits an
  // assertion only from the gate it was issued for.
  Gate(GateOptions options, boost::asio::io_context& io, BlockingRunner blocking,
       account::AccountDesk& accounts, WorldLink& link, const Clock& clock, Logger& log,
       Metrics& metrics);
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  net::TerminalHandlerFactory TerminalFactory();

  // Tells every connected player `message` and refuses logins from now on.
  void BeginShutdown(const std::string& message);

  size_t sessions() const;
  size_t link_dead() const;

  // Renews, through the account service, the assertion of every character in the world (link-
  // dead ones too) past half its life, and hands each fresh one to the link, which presents it
  // whenever it routes the session afresh. The sweep timer calls it every
  // assertion_renew_sweep_ms; a failed renewal is tried again on the next sweep, unless the
  // account service refused it (the session then plays on with the assertion it has).
  void RenewDueAssertions();

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace telos::gate
