// HashAdmission: how many argon2id hashes may run at once, and who waits for a slot.
//
// Each hash costs tens of milliseconds of a core and ~19 MiB. Unbounded, a flood of account
// creations would fill the blocking pool with hashing and queue every login behind it. So a
// caller takes a Ticket before hashing and holds it until done:
//   - at most `hashes_in_flight_max` tickets exist at once;
//   - creations (new accounts) hold at most `creation_hashes_in_flight_max` of them: the rest
//     are kept for logins and password changes of existing accounts, which creations can
//     therefore never starve;
//   - when no slot is free the caller waits, but only `creation_waiters_max` creations and
//     `login_waiters_max` logins may wait; one more is answered ResourceExhausted ("The server
//     is busy; please try again in a moment.") at once, without waiting.
// A freed slot goes to the oldest waiting login first, then to the oldest waiting creation if
// creations are below their share; newcomers never overtake a waiter of their kind. A wait is
// therefore bounded: at most (waiters ahead + 1) hashes, spread over the free slots.
//
// Since a waiter blocks its thread, the blocking pool should have more threads than
// creation_hashes_in_flight_max + creation_waiters_max, so that creations alone never hold
// every pool thread.
//
// Thread safety: any thread. A Ticket may be released (destroyed) on any thread, and must not
// outlive its HashAdmission.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string_view>

#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::account {

enum class HashWork { kCreation, kLogin };

struct HashAdmissionLimits {
  size_t hashes_in_flight_max = limits::kPasswordHashesInFlightMax;
  size_t creation_hashes_in_flight_max = limits::kCreationHashesInFlightMax;
  size_t creation_waiters_max = limits::kCreationHashWaitersMax;
  size_t login_waiters_max = limits::kLoginHashWaitersMax;
};

inline constexpr std::string_view kServerBusy = "The server is busy; please try again in a moment.";

class HashAdmission {
 public:
  // A slot held; released when destroyed. Movable, not copyable.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : owner_(other.owner_), work_(other.work_) {
      other.owner_ = nullptr;
    }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket();

   private:
    friend class HashAdmission;
    Ticket(HashAdmission* owner, HashWork work) : owner_(owner), work_(work) {}
    HashAdmission* owner_;
    HashWork work_;
  };

  // REQUIRES: hashes_in_flight_max >= 1, creation_hashes_in_flight_max >= 1 and below
  // hashes_in_flight_max (logins keep at least one slot).
  explicit HashAdmission(HashAdmissionLimits limits = {});
  HashAdmission(const HashAdmission&) = delete;
  HashAdmission& operator=(const HashAdmission&) = delete;

  // A ticket, now or after a bounded wait; ResourceExhausted (kServerBusy) at once when the
  // wait queue for `work` is full.
  Result<Ticket> Admit(HashWork work);

  // For tests and gauges.
  size_t in_flight() const;
  size_t waiting(HashWork work) const;

 private:
  struct Waiter {
    bool granted = false;
  };
  bool CanStartLocked(HashWork work) const;
  void StartLocked(HashWork work);
  void Release(HashWork work);

  const HashAdmissionLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable granted_cv_;
  size_t in_flight_ = 0;                  // guarded by mu_
  size_t creations_in_flight_ = 0;        // guarded by mu_
  std::deque<Waiter*> login_waiters_;     // guarded by mu_; oldest first
  std::deque<Waiter*> creation_waiters_;  // guarded by mu_; oldest first
};

}  // namespace telos::account
