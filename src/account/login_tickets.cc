#include "telos/account/login_tickets.h"

#include "telos/auth/documents.h"

namespace telos::account {
namespace {

Status Refused() {
  return Status::LoginExpired(std::string(kTicketRefusedMessage));
}

}  // namespace

LoginTickets::LoginTickets(const Clock& clock, int64_t idle_ms, size_t tickets_max)
    : clock_(clock), idle_ms_(idle_ms), tickets_max_(tickets_max == 0 ? 1 : tickets_max) {}

void LoginTickets::PurgeExpired(Instant now) {
  while (!order_.empty() && order_.begin()->first <= now) {
    tickets_.erase(order_.begin()->second);
    order_.erase(order_.begin());
  }
}

LoginTickets::Table::iterator LoginTickets::Touch(std::string_view ticket, Instant now) {
  PurgeExpired(now);
  auto it = tickets_.find(ticket);
  if (it == tickets_.end()) return it;
  order_.erase({it->second.expires, it->first});
  it->second.expires = now + std::chrono::milliseconds(idle_ms_);
  order_.insert({it->second.expires, it->first});
  return it;
}

std::string LoginTickets::Issue(int64_t account_id) {
  std::string ticket = auth::RandomToken(limits::kLoginTicketRandomBytes);
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  PurgeExpired(now);
  while (tickets_.size() >= tickets_max_ && !order_.empty()) {
    // Full of live tickets: the one unused longest goes.
    tickets_.erase(order_.begin()->second);
    order_.erase(order_.begin());
  }
  Entry entry;
  entry.account_id = account_id;
  entry.expires = now + std::chrono::milliseconds(idle_ms_);
  order_.insert({entry.expires, ticket});
  tickets_.emplace(ticket, std::move(entry));
  return ticket;
}

Result<int64_t> LoginTickets::Redeem(std::string_view ticket) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  auto it = Touch(ticket, now);
  if (it == tickets_.end()) return Refused();
  return it->second.account_id;
}

void LoginTickets::BindSession(std::string_view ticket, std::string nonce) {
  std::lock_guard lock(mu_);
  if (auto it = tickets_.find(ticket); it != tickets_.end()) it->second.nonce = std::move(nonce);
}

Result<int64_t> LoginTickets::RedeemForSession(std::string_view ticket, std::string_view nonce) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  PurgeExpired(now);
  auto found = tickets_.find(ticket);
  if (found == tickets_.end() || nonce.empty() || found->second.nonce != nonce) return Refused();
  return Touch(ticket, now)->second.account_id;
}

size_t LoginTickets::RevokeAccount(int64_t account_id) {
  std::lock_guard lock(mu_);
  size_t dropped = 0;
  for (auto it = tickets_.begin(); it != tickets_.end();) {
    if (it->second.account_id != account_id) {
      ++it;
      continue;
    }
    order_.erase({it->second.expires, it->first});
    it = tickets_.erase(it);
    ++dropped;
  }
  return dropped;
}

size_t LoginTickets::size() const {
  std::lock_guard lock(mu_);
  return tickets_.size();
}

}  // namespace telos::account
