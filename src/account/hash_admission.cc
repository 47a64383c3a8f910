#include "telos/account/hash_admission.h"

#include <string>

#include "telos/base/assert.h"

namespace telos::account {

HashAdmission::Ticket::~Ticket() {
  if (owner_ != nullptr) owner_->Release(work_);
}

HashAdmission::HashAdmission(HashAdmissionLimits limits) : limits_(limits) {
  RELEASE_ASSERT(limits_.hashes_in_flight_max >= 1, "HashAdmission needs a slot");
  RELEASE_ASSERT(limits_.creation_hashes_in_flight_max >= 1 &&
                     limits_.creation_hashes_in_flight_max < limits_.hashes_in_flight_max,
                 "creations need a slot, and logins at least one creations cannot take");
}

bool HashAdmission::CanStartLocked(HashWork work) const {
  if (in_flight_ >= limits_.hashes_in_flight_max) return false;
  return work == HashWork::kLogin || creations_in_flight_ < limits_.creation_hashes_in_flight_max;
}

void HashAdmission::StartLocked(HashWork work) {
  ++in_flight_;
  if (work == HashWork::kCreation) ++creations_in_flight_;
}

Result<HashAdmission::Ticket> HashAdmission::Admit(HashWork work) {
  std::unique_lock lock(mu_);
  const bool creation = work == HashWork::kCreation;
  std::deque<Waiter*>& queue = creation ? creation_waiters_ : login_waiters_;
  // A newcomer takes a free slot only if nobody with a prior claim waits: its own kind, or, for
  // a creation, a login (logins are served first).
  const bool someone_ahead = !queue.empty() || (creation && !login_waiters_.empty());
  if (!someone_ahead && CanStartLocked(work)) {
    StartLocked(work);
    return Ticket(this, work);
  }
  const size_t waiters_max = creation ? limits_.creation_waiters_max : limits_.login_waiters_max;
  if (queue.size() >= waiters_max) return Status::ResourceExhausted(std::string(kServerBusy));
  Waiter me;
  queue.push_back(&me);
  // Release() starts the slot on our behalf and pops us before setting `granted`.
  granted_cv_.wait(lock, [&me] { return me.granted; });
  return Ticket(this, work);
}

void HashAdmission::Release(HashWork work) {
  {
    std::lock_guard lock(mu_);
    --in_flight_;
    if (work == HashWork::kCreation) --creations_in_flight_;
    bool granted_any = false;
    while (!login_waiters_.empty() && CanStartLocked(HashWork::kLogin)) {
      StartLocked(HashWork::kLogin);
      login_waiters_.front()->granted = true;
      login_waiters_.pop_front();
      granted_any = true;
    }
    while (login_waiters_.empty() && !creation_waiters_.empty() &&
           CanStartLocked(HashWork::kCreation)) {
      StartLocked(HashWork::kCreation);
      creation_waiters_.front()->granted = true;
      creation_waiters_.pop_front();
      granted_any = true;
    }
    if (!granted_any) return;
  }
  // Waiters are few (bounded above), so waking them all to find the granted ones is cheap.
  granted_cv_.notify_all();
}

size_t HashAdmission::in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

size_t HashAdmission::waiting(HashWork work) const {
  std::lock_guard lock(mu_);
  return work == HashWork::kCreation ? creation_waiters_.size() : login_waiters_.size();
}

}  // namespace telos::account
