// The Directory conformance suite: one set of rules, run against every backend.
//
// A backend test file defines a Backend type and instantiates the suite:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Memory, DirectoryConformance, MemoryBackend);
// A Backend provides:
//   Status Ready();                  the store is reachable (checked in SetUp; failing fails)
//   Directory* Client();             a client of the one shared store (the same one each call is
//                                    fine)
//   Directory* NewClient(const Clock* local_clock);
//                                    another client, with its own connection where the backend
//                                    has one; `local_clock` is the only clock that client holds
//                                    (nullptr: a correct one)
//   bool Eventually(F pred, int64_t within_ms);
//                                    polls pred until it holds, letting directory time pass
//                                    (a manual clock advances; real time elapses), false if it
//                                    never held within_ms of directory time
//   int64_t ShortTtlMs();            a TTL the test can wait out
//   int64_t LongTtlMs();             a TTL that does not run out during a test
//   int kConcurrencyThreads, kConcurrencyRounds
// Time-dependent rules are written as "holds now" plus "eventually holds", so the same test
// passes on a manual clock and on a real server without fixed sleeps.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "telos/base/clock.h"
#include "telos/directory/directory.h"

namespace telos::directory::testing {

// A clock that reads minutes ahead of the real one: a shard with a badly skewed clock.
class SkewedClock final : public Clock {
 public:
  explicit SkewedClock(Duration skew) : skew_(skew) {}
  Instant Now() const override { return std::chrono::steady_clock::now() + skew_; }
  WallTime WallNow() const override {
    return std::chrono::system_clock::now() + std::chrono::duration_cast<WallTime::duration>(skew_);
  }

 private:
  Duration skew_;
};

template <typename Backend>
class DirectoryConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    Status ready = backend_.Ready();
    ASSERT_TRUE(ready.ok()) << ready.ToString();
    dir_ = backend_.Client();
  }

  Directory& dir() { return *dir_; }
  int64_t short_ttl() { return backend_.ShortTtlMs(); }
  int64_t long_ttl() { return backend_.LongTtlMs(); }
  // Enough directory time for a short TTL to run out, with room for a slow machine.
  int64_t patience() { return backend_.ShortTtlMs() * 20; }

  Backend backend_;
  Directory* dir_ = nullptr;
};

TYPED_TEST_SUITE_P(DirectoryConformance);

#define EXPECT_CODE(expr, code_) EXPECT_EQ((expr).code(), ::telos::StatusCode::code_)

// ------------------------------------------------------------------ arguments

TYPED_TEST_P(DirectoryConformance, RejectsBadArguments) {
  Directory& d = this->dir();
  EXPECT_CODE(d.RegisterShard("", "ep", 1000), kInvalidArgument);
  EXPECT_CODE(d.RegisterShard("s1", "ep", 0), kInvalidArgument);
  EXPECT_CODE(d.ClaimZone(std::string(kIdBytesMax + 1, 'z'), "s1", 1000).status(),
              kInvalidArgument);
  EXPECT_CODE(d.ClaimZone("bad\nzone", "s1", 1000).status(), kInvalidArgument);
  EXPECT_CODE(d.RenewZone("z", "s1", 0, 1000).status(), kInvalidArgument);
  EXPECT_CODE(d.TransferZone("z", "s1", 1, "s1", 1000).status(), kInvalidArgument);
  EXPECT_CODE(d.HandoffPlacement("p", Placement{"", 1, "", "s1"}), kInvalidArgument);
  EXPECT_CODE(d.Reserve("s1", 0, 1000).status(), kInvalidArgument);
  EXPECT_CODE(d.ReportOccupancy("s1", {{"z", -1}}), kInvalidArgument);
}

// ------------------------------------------------------------------ shard registry

TYPED_TEST_P(DirectoryConformance, DuplicateLiveShardIdFromAnotherEndpointIsRefused) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("s1", "10.0.0.1:7000", this->long_ttl()).ok());
  // The same endpoint re-registering is a refresh.
  EXPECT_TRUE(d.RegisterShard("s1", "10.0.0.1:7000", this->long_ttl()).ok());
  // Another process claiming the same id is refused, and does not take over the record.
  EXPECT_CODE(d.RegisterShard("s1", "10.0.0.2:7000", this->long_ttl()), kAlreadyExists);
  EXPECT_CODE(d.HeartbeatShard("s1", "10.0.0.2:7000", this->long_ttl()), kAlreadyExists);
  auto shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_EQ((*shards)[0].endpoint, "10.0.0.1:7000");
  EXPECT_TRUE(d.HeartbeatShard("s1", "10.0.0.1:7000", this->long_ttl()).ok());
}

TYPED_TEST_P(DirectoryConformance, LapsedShardIdIsFreeAndHeartbeatSaysSo) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("s1", "old:1", this->short_ttl()).ok());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto shards = d.ListShards();
        return shards.ok() && shards->empty();
      },
      this->patience()));
  EXPECT_CODE(d.HeartbeatShard("s1", "old:1", this->long_ttl()), kFailedPrecondition);
  EXPECT_TRUE(d.RegisterShard("s1", "new:1", this->long_ttl()).ok());
  auto shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_EQ((*shards)[0].endpoint, "new:1");
}

TYPED_TEST_P(DirectoryConformance, ListAndDeregisterShards) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("s2", "b:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.RegisterShard("s1", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.ReportOccupancy("s1", {{"z", 3}}).ok());
  auto shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_EQ((*shards)[0].id, "s1");
  EXPECT_EQ((*shards)[1].id, "s2");
  EXPECT_GT((*shards)[0].ttl_ms, 0);
  EXPECT_LE((*shards)[0].ttl_ms, this->long_ttl());
  EXPECT_CODE(d.DeregisterShard("s1", "intruder:1"), kFailedPrecondition);
  EXPECT_TRUE(d.DeregisterShard("s1", "a:1").ok());
  EXPECT_TRUE(d.DeregisterShard("s1", "a:1").ok());  // already gone: fine
  shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_EQ((*shards)[0].id, "s2");
  auto occ = d.ListOccupancy();
  ASSERT_TRUE(occ.ok());
  EXPECT_TRUE(occ->empty());  // its occupancy report left with it
}

TYPED_TEST_P(DirectoryConformance, DrainingMarkIsListedAndLapses) {
  Directory& d = this->dir();
  EXPECT_CODE(d.MarkShardDraining("", "a:1", 1000), kInvalidArgument);
  EXPECT_CODE(d.MarkShardDraining("s1", "a:1", 0), kInvalidArgument);
  EXPECT_CODE(d.MarkShardDraining("s1", "a:1", 1000), kFailedPrecondition);  // not registered
  ASSERT_TRUE(d.RegisterShard("s1", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.RegisterShard("s2", "b:1", this->long_ttl()).ok());
  auto shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_FALSE((*shards)[0].draining);
  EXPECT_FALSE((*shards)[1].draining);
  EXPECT_CODE(d.MarkShardDraining("s1", "intruder:1", 1000), kAlreadyExists);
  ASSERT_TRUE(d.MarkShardDraining("s1", "a:1", this->short_ttl()).ok());
  shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_TRUE((*shards)[0].draining);
  EXPECT_FALSE((*shards)[1].draining);
  // A heartbeat keeps the mark; the mark's own TTL is what ends it (a crashed drainer).
  ASSERT_TRUE(d.HeartbeatShard("s1", "a:1", this->long_ttl()).ok());
  shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  EXPECT_TRUE((*shards)[0].draining);
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto s = d.ListShards();
        return s.ok() && s->size() == 2 && !(*s)[0].draining;
      },
      this->patience()));
  // Deregistering drops the mark: the id registered again starts unmarked.
  ASSERT_TRUE(d.MarkShardDraining("s2", "b:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.DeregisterShard("s2", "b:1").ok());
  ASSERT_TRUE(d.RegisterShard("s2", "b:1", this->long_ttl()).ok());
  shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_FALSE((*shards)[1].draining);
}

TYPED_TEST_P(DirectoryConformance, FreshRegistrationAfterALapseIsNotDraining) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("s1", "a:1", this->short_ttl()).ok());
  ASSERT_TRUE(d.MarkShardDraining("s1", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto s = d.ListShards();
        return s.ok() && s->empty();
      },
      this->patience()));
  // The old process is gone; a new one under the same id is a candidate target again.
  ASSERT_TRUE(d.RegisterShard("s1", "a:2", this->long_ttl()).ok());
  auto shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_FALSE((*shards)[0].draining);
}

// A drainer that restarts on the same endpoint before its registration lapses registers again:
// the new process is not leaving, so it must be a candidate target at once.
TYPED_TEST_P(DirectoryConformance, RestartOnTheSameEndpointIsNotDraining) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("s1", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.RegisterShard("s2", "b:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.MarkShardDraining("s1", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.HeartbeatShard("s1", "a:1", this->long_ttl()).ok());
  auto shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_TRUE((*shards)[0].draining);  // the live process heartbeats: still leaving
  ASSERT_TRUE(d.RegisterShard("s1", "a:1", this->long_ttl()).ok());  // restarted in place
  shards = d.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_FALSE((*shards)[0].draining);
  DrainTargetRequest req;
  req.exclude = {"s2"};
  req.amount = 1;
  auto target = d.SelectDrainTarget(req);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(target->reservation.target, "s1");
}

// ------------------------------------------------------------------ zone leases

TYPED_TEST_P(DirectoryConformance, ClaimGrantsFreeZoneAndKeepsEpochForSameOwner) {
  Directory& d = this->dir();
  auto a = d.ClaimZone("z", "s1", this->long_ttl());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->epoch, 1u);
  EXPECT_EQ(a->ttl_ms, this->long_ttl());
  auto again = d.ClaimZone("z", "s1", this->long_ttl());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->epoch, 1u);  // already ours: a refresh, not a new tenure
  auto other = d.ClaimZone("z", "s2", this->long_ttl());
  EXPECT_CODE(other.status(), kConflict);
  auto owner = d.OwnerOfZone("z");
  ASSERT_TRUE(owner.ok());
  ASSERT_TRUE(owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "s1");
  EXPECT_EQ((*owner)->epoch, 1u);
  auto none = d.OwnerOfZone("unclaimed");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// A floor on the epoch (a durable fence found above the directory's epoch, e.g. after the
// directory lost its data) starts a new tenure at the floor, for a free zone and for the
// current holder alike, and never lowers an epoch.
TYPED_TEST_P(DirectoryConformance, ClaimWithAnEpochFloorStartsATenureAtIt) {
  Directory& d = this->dir();
  ASSERT_EQ(d.ClaimZone("z", "A", this->long_ttl())->epoch, 1u);
  auto raised = d.ClaimZone("z", "A", this->long_ttl(), 7);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(raised->epoch, 7u);
  EXPECT_CODE(d.RenewZone("z", "A", 1, this->long_ttl()).status(), kFailedPrecondition);
  EXPECT_TRUE(d.RenewZone("z", "A", 7, this->long_ttl()).ok());
  EXPECT_CODE(d.ClaimZone("z", "B", this->long_ttl(), 50).status(), kConflict);
  EXPECT_EQ(d.ClaimZone("z", "A", this->long_ttl(), 3)->epoch, 7u) << "a floor below: a refresh";
  ASSERT_TRUE(d.ReleaseZone("z", "A", 7).ok());
  EXPECT_EQ(d.ClaimZone("z", "B", this->long_ttl(), 4)->epoch, 8u) << "never lowered";
  EXPECT_EQ(d.ClaimZone("fresh", "B", this->long_ttl(), 12)->epoch, 12u);
}

TYPED_TEST_P(DirectoryConformance, SkewedShardClockCannotStealLiveLease) {
  // Shard A holds the zone. Shard B's own clock runs ten minutes ahead, so by B's reckoning A's
  // lease is long gone. The directory must not care: it judges by its own clock only, and B has
  // no way to pass it a time.
  SkewedClock ahead(std::chrono::minutes(10));
  Directory* a = this->backend_.NewClient(nullptr);
  Directory* b = this->backend_.NewClient(&ahead);
  auto grant = a->ClaimZone("z", "A", this->long_ttl());
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  EXPECT_CODE(b->ClaimZone("z", "B", 1).status(), kConflict);
  EXPECT_CODE(b->ClaimZone("z", "B", this->long_ttl()).status(), kConflict);
  EXPECT_CODE(b->RenewZone("z", "B", grant->epoch, this->long_ttl()).status(), kFailedPrecondition);
  EXPECT_CODE(b->TransferZone("z", "B", grant->epoch, "C", this->long_ttl()).status(),
              kFailedPrecondition);
  auto owner = b->OwnerOfZone("z");
  ASSERT_TRUE(owner.ok());
  ASSERT_TRUE(owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "A");
  EXPECT_EQ((*owner)->epoch, grant->epoch);
  EXPECT_TRUE(a->RenewZone("z", "A", grant->epoch, this->long_ttl()).ok());
}

TYPED_TEST_P(DirectoryConformance, LapsedLeaseGoesToNewOwnerUnderNextEpoch) {
  Directory& d = this->dir();
  auto a = d.ClaimZone("z", "A", this->short_ttl());
  ASSERT_TRUE(a.ok());
  EXPECT_CODE(d.ClaimZone("z", "B", this->long_ttl()).status(), kConflict);
  Result<LeaseGrant> b = Status::Unavailable("not yet");
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        b = d.ClaimZone("z", "B", this->long_ttl());
        return b.ok();
      },
      this->patience()));
  EXPECT_EQ(b->epoch, a->epoch + 1);
  // A finds out on its next renewal and must stop writing; it cannot claw the zone back.
  EXPECT_CODE(d.RenewZone("z", "A", a->epoch, this->long_ttl()).status(), kFailedPrecondition);
  EXPECT_CODE(d.ClaimZone("z", "A", this->long_ttl()).status(), kConflict);
}

TYPED_TEST_P(DirectoryConformance, LapsedLeaseOfSameShardIsANewTenure) {
  Directory& d = this->dir();
  auto first = d.ClaimZone("z", "A", this->short_ttl());
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto owner = d.OwnerOfZone("z");
        return owner.ok() && !owner->has_value();
      },
      this->patience()));
  EXPECT_CODE(d.RenewZone("z", "A", first->epoch, this->long_ttl()).status(), kFailedPrecondition);
  auto second = d.ClaimZone("z", "A", this->long_ttl());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->epoch, first->epoch + 1);
}

TYPED_TEST_P(DirectoryConformance, RenewOnlyByOwnerAtItsEpoch) {
  Directory& d = this->dir();
  auto a = d.ClaimZone("z", "A", this->long_ttl());
  ASSERT_TRUE(a.ok());
  auto renewed = d.RenewZone("z", "A", a->epoch, this->long_ttl());
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed->epoch, a->epoch);
  EXPECT_EQ(renewed->ttl_ms, this->long_ttl());
  EXPECT_CODE(d.RenewZone("z", "B", a->epoch, this->long_ttl()).status(), kFailedPrecondition);
  EXPECT_CODE(d.RenewZone("z", "A", a->epoch + 1, this->long_ttl()).status(), kFailedPrecondition);
  EXPECT_CODE(d.RenewZone("never-claimed", "A", 1, this->long_ttl()).status(), kFailedPrecondition);
}

TYPED_TEST_P(DirectoryConformance, ReleaseFreesZoneButEpochKeepsGrowing) {
  Directory& d = this->dir();
  auto a = d.ClaimZone("z", "A", this->long_ttl());
  ASSERT_TRUE(a.ok());
  EXPECT_CODE(d.ReleaseZone("z", "B", a->epoch), kFailedPrecondition);
  EXPECT_CODE(d.ReleaseZone("z", "A", a->epoch + 1), kFailedPrecondition);
  ASSERT_TRUE(d.ReleaseZone("z", "A", a->epoch).ok());
  EXPECT_CODE(d.ReleaseZone("z", "A", a->epoch), kFailedPrecondition);
  EXPECT_CODE(d.RenewZone("z", "A", a->epoch, this->long_ttl()).status(), kFailedPrecondition);
  auto owner = d.OwnerOfZone("z");
  ASSERT_TRUE(owner.ok());
  EXPECT_FALSE(owner->has_value());
  auto b = d.ClaimZone("z", "B", this->long_ttl());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->epoch, a->epoch + 1);
}

TYPED_TEST_P(DirectoryConformance, TransferNeedsSourceToHoldLiveLease) {
  Directory& d = this->dir();
  EXPECT_CODE(d.TransferZone("z", "A", 1, "B", this->long_ttl()).status(), kFailedPrecondition);
  auto a = d.ClaimZone("z", "A", this->short_ttl());
  ASSERT_TRUE(a.ok());
  EXPECT_CODE(d.TransferZone("z", "C", a->epoch, "B", this->long_ttl()).status(),
              kFailedPrecondition);
  EXPECT_CODE(d.TransferZone("z", "A", a->epoch + 1, "B", this->long_ttl()).status(),
              kFailedPrecondition);
  // Once A's lease has lapsed, A cannot hand the zone on either.
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto owner = d.OwnerOfZone("z");
        return owner.ok() && !owner->has_value();
      },
      this->patience()));
  EXPECT_CODE(d.TransferZone("z", "A", a->epoch, "B", this->long_ttl()).status(),
              kFailedPrecondition);
}

TYPED_TEST_P(DirectoryConformance, TransferAToBToAThenRenewalByASucceeds) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("A", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.RegisterShard("B", "b:1", this->long_ttl()).ok());
  auto a1 = d.ClaimZone("z", "A", this->long_ttl());
  ASSERT_TRUE(a1.ok());
  auto b = d.TransferZone("z", "A", a1->epoch, "B", this->long_ttl());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->epoch, a1->epoch + 1);
  // There was never an ownerless moment, and A's old epoch is now dead.
  auto owner = d.OwnerOfZone("z");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "B");
  EXPECT_EQ((*owner)->endpoint, "b:1");
  EXPECT_CODE(d.RenewZone("z", "A", a1->epoch, this->long_ttl()).status(), kFailedPrecondition);
  auto a2 = d.TransferZone("z", "B", b->epoch, "A", this->long_ttl());
  ASSERT_TRUE(a2.ok());
  EXPECT_EQ(a2->epoch, b->epoch + 1);
  // Re-adopted: A renews under the new epoch, and the stale one stays refused.
  auto renewed = d.RenewZone("z", "A", a2->epoch, this->long_ttl());
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(renewed->epoch, a2->epoch);
  EXPECT_CODE(d.RenewZone("z", "A", a1->epoch, this->long_ttl()).status(), kFailedPrecondition);
  EXPECT_CODE(d.RenewZone("z", "B", b->epoch, this->long_ttl()).status(), kFailedPrecondition);
  owner = d.OwnerOfZone("z");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "A");
  EXPECT_EQ((*owner)->endpoint, "a:1");
  EXPECT_EQ((*owner)->epoch, a2->epoch);
}

TYPED_TEST_P(DirectoryConformance, OwnerEndpointIsEmptyWhenShardRegistrationLapsed) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("A", "a:1", this->short_ttl()).ok());
  ASSERT_TRUE(d.ClaimZone("z", "A", this->long_ttl()).ok());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto owner = d.OwnerOfZone("z");
        return owner.ok() && owner->has_value() && (*owner)->endpoint.empty();
      },
      this->patience()));
}

// ------------------------------------------------------------------ leader leases

TYPED_TEST_P(DirectoryConformance, LeaderCampaignRenewResign) {
  Directory& d = this->dir();
  auto one = d.Campaign("director", "d1", this->long_ttl());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->epoch, 1u);
  EXPECT_CODE(d.Campaign("director", "d2", this->long_ttl()).status(), kConflict);
  EXPECT_TRUE(d.Campaign("arcade:dice", "d2", this->long_ttl()).ok());  // scopes are separate
  auto leader = d.LeaderOf("director");
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->holder, "d1");
  EXPECT_EQ((*leader)->term, 1u);
  EXPECT_TRUE(d.RenewLeadership("director", "d1", one->epoch, this->long_ttl()).ok());
  auto confirmed = d.ConfirmLeadership("director", "d1", one->epoch);
  ASSERT_TRUE(confirmed.ok());
  EXPECT_GT(confirmed->ttl_ms, 0);
  EXPECT_CODE(d.Resign("director", "d2", one->epoch), kFailedPrecondition);
  ASSERT_TRUE(d.Resign("director", "d1", one->epoch).ok());
  auto none = d.LeaderOf("director");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto two = d.Campaign("director", "d2", this->long_ttl());
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->epoch, 2u);
}

TYPED_TEST_P(DirectoryConformance, LeaderThatLostItsLeaseLearnsOnConfirm) {
  Directory& d = this->dir();
  auto old_term = d.Campaign("director", "d1", this->short_ttl());
  ASSERT_TRUE(old_term.ok());
  ASSERT_TRUE(d.ConfirmLeadership("director", "d1", old_term->epoch).ok());
  // d1 stalls (a long pause) and its lease lapses; d2 takes over.
  Result<LeaseGrant> new_term = Status::Unavailable("not yet");
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        new_term = d.Campaign("director", "d2", this->long_ttl());
        return new_term.ok();
      },
      this->patience()));
  EXPECT_GT(new_term->epoch, old_term->epoch);
  EXPECT_CODE(d.ConfirmLeadership("director", "d1", old_term->epoch).status(), kFailedPrecondition);
  EXPECT_CODE(d.RenewLeadership("director", "d1", old_term->epoch, this->long_ttl()).status(),
              kFailedPrecondition);
  EXPECT_TRUE(d.ConfirmLeadership("director", "d2", new_term->epoch).ok());
}

// ------------------------------------------------------------------ placement records

TYPED_TEST_P(DirectoryConformance, HandoffCasNeedsStrictlyGreaterEpoch) {
  Directory& d = this->dir();
  const Placement first{"market", 5, "n1", "s1"};
  ASSERT_TRUE(d.HandoffPlacement("alice", first).ok());  // no record yet: applies
  EXPECT_CODE(d.HandoffPlacement("alice", Placement{"dock", 5, "n2", "s2"}), kFailedPrecondition);
  EXPECT_CODE(d.HandoffPlacement("alice", Placement{"dock", 4, "n2", "s2"}), kFailedPrecondition);
  auto rec = d.LookupPlacement("alice");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(**rec, first);
  const Placement next{"dock", 6, "", "s2"};  // a handoff without a nonce
  ASSERT_TRUE(d.HandoffPlacement("alice", next).ok());
  rec = d.LookupPlacement("alice");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(**rec, next);
}

TYPED_TEST_P(DirectoryConformance, RegisterPlacementAcceptsEqualRefusesStale) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterPlacement("bob", Placement{"inn", 3, "n1", "s1"}).ok());
  // An intra-shard zone walk at the same epoch rewrites the zone.
  ASSERT_TRUE(d.RegisterPlacement("bob", Placement{"road", 3, "n1", "s1"}).ok());
  auto rec = d.LookupPlacement("bob");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->zone, "road");
  EXPECT_EQ((*rec)->epoch, 3u);
  // A stale registration is refused and changes nothing.
  EXPECT_CODE(d.RegisterPlacement("bob", Placement{"inn", 2, "n0", "s0"}), kFailedPrecondition);
  rec = d.LookupPlacement("bob");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(**rec, (Placement{"road", 3, "n1", "s1"}));
  // A newer one is accepted and the stored epoch is its maximum.
  ASSERT_TRUE(d.RegisterPlacement("bob", Placement{"hall", 4, "n2", "s2"}).ok());
  rec = d.LookupPlacement("bob");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->epoch, 4u);
  // The handoff CAS still refuses the same epoch that registration accepted.
  EXPECT_CODE(d.HandoffPlacement("bob", Placement{"hall", 4, "n3", "s3"}), kFailedPrecondition);
}

TYPED_TEST_P(DirectoryConformance, TombstoneIsFencedOnShardEpochAndNonce) {
  Directory& d = this->dir();
  const Placement live{"tower", 7, "session-2", "s1"};
  ASSERT_TRUE(d.RegisterPlacement("carol", live).ok());
  // A late clear from the previous session on the same shard (a fast relog): stale nonce.
  auto applied = d.TombstonePlacement("carol", "s1", 7, "session-1", "tower");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  // A clear from before a handoff: stale epoch.
  applied = d.TombstonePlacement("carol", "s1", 6, "session-2", "tower");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  // A clear from another shard.
  applied = d.TombstonePlacement("carol", "s9", 7, "session-2", "tower");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  auto rec = d.LookupPlacement("carol");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(**rec, live);
  // The matching clear drops the shard, records the quitting zone, keeps epoch and nonce.
  applied = d.TombstonePlacement("carol", "s1", 7, "session-2", "garden");
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(*applied);
  rec = d.LookupPlacement("carol");
  ASSERT_TRUE(rec.ok() && rec->has_value());  // still exists: routing and the tell oracle
  EXPECT_EQ(**rec, (Placement{"garden", 7, "session-2", ""}));
  // Repeating it is a no-op.
  applied = d.TombstonePlacement("carol", "s1", 7, "session-2", "garden");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  // No record at all: a no-op too.
  applied = d.TombstonePlacement("nobody", "s1", 1, "x", "z");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
}

TYPED_TEST_P(DirectoryConformance, TombstoneWithoutStoredNonceUsesShardAndEpoch) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.HandoffPlacement("dave", Placement{"pier", 2, "", "s1"}).ok());
  auto applied = d.TombstonePlacement("dave", "s1", 2, "whatever", "");
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(*applied);
  auto rec = d.LookupPlacement("dave");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(**rec, (Placement{"pier", 2, "", ""}));  // empty zone argument keeps the zone
  // A later login re-registers at the same epoch.
  ASSERT_TRUE(d.RegisterPlacement("dave", Placement{"pier", 2, "n5", "s1"}).ok());
}

TYPED_TEST_P(DirectoryConformance, DeletePlacementRemovesTheCharacter) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterPlacement("erin", Placement{"moor", 1, "n", "s1"}).ok());
  ASSERT_TRUE(d.DeletePlacement("erin").ok());
  auto rec = d.LookupPlacement("erin");
  ASSERT_TRUE(rec.ok());
  EXPECT_FALSE(rec->has_value());
  EXPECT_TRUE(d.DeletePlacement("erin").ok());
  // A re-created character starts from any epoch.
  EXPECT_TRUE(d.HandoffPlacement("erin", Placement{"moor", 1, "", "s1"}).ok());
}

// ------------------------------------------------------------------ presence

TYPED_TEST_P(DirectoryConformance, PresenceRosterWithTtl) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.SetPresence("zed", "gate-1", "s1", this->long_ttl()).ok());
  ASSERT_TRUE(d.SetPresence("amy", "gate-2", "s2", this->short_ttl()).ok());
  auto all = d.ListPresence();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].player, "amy");
  EXPECT_EQ((*all)[1].gate, "gate-1");
  EXPECT_EQ((*all)[1].shard, "s1");
  auto one = d.GetPresence("zed");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->gate, "gate-1");
  // amy's entry is not refreshed and drops out.
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto got = d.GetPresence("amy");
        return got.ok() && !got->has_value();
      },
      this->patience()));
  all = d.ListPresence();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  // zed reconnects through gate-2; the old gate's late clear must not remove him.
  ASSERT_TRUE(d.SetPresence("zed", "gate-2", "s1", this->long_ttl()).ok());
  EXPECT_CODE(d.ClearPresence("zed", "gate-1"), kFailedPrecondition);
  ASSERT_TRUE(d.ClearPresence("zed", "gate-2").ok());
  EXPECT_TRUE(d.ClearPresence("zed", "gate-2").ok());
  one = d.GetPresence("zed");
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->has_value());
}

// ------------------------------------------------------------------ occupancy

TYPED_TEST_P(DirectoryConformance, OccupancyCarriesDirectoryTime) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.ReportOccupancy("s2", {{"town", 40}, {"wild", 2}}).ok());
  ASSERT_TRUE(d.ReportOccupancy("s1", {}).ok());
  auto occ = d.ListOccupancy();
  ASSERT_TRUE(occ.ok());
  ASSERT_EQ(occ->size(), 2u);
  EXPECT_EQ((*occ)[0].shard, "s1");
  EXPECT_TRUE((*occ)[0].zones.empty());
  EXPECT_EQ((*occ)[1].zones, (std::vector<ZoneCount>{{"town", 40}, {"wild", 2}}));
  EXPECT_EQ((*occ)[1].Total(), 42);
  EXPECT_GT((*occ)[1].reported_at_ms, 0);
  EXPECT_GE((*occ)[1].age_ms, 0);
  const int64_t first_report = (*occ)[1].reported_at_ms;
  // Age grows on the directory's clock; a new report replaces the old one and its time.
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto again = d.ListOccupancy();
        return again.ok() && again->size() == 2 && (*again)[1].age_ms >= 20;
      },
      this->patience()));
  ASSERT_TRUE(d.ReportOccupancy("s2", {{"town", 1}}).ok());
  occ = d.ListOccupancy();
  ASSERT_TRUE(occ.ok() && occ->size() == 2);
  EXPECT_EQ((*occ)[1].zones, (std::vector<ZoneCount>{{"town", 1}}));
  EXPECT_GE((*occ)[1].reported_at_ms, first_report + 20);
}

// ------------------------------------------------------------------ reservations

TYPED_TEST_P(DirectoryConformance, ReservationsExpireIndividuallyAndArePruned) {
  Directory& d = this->dir();
  auto short_hold = d.Reserve("t1", 30, this->short_ttl());
  ASSERT_TRUE(short_hold.ok());
  EXPECT_EQ(short_hold->target, "t1");
  EXPECT_EQ(short_hold->ttl_ms, this->short_ttl());
  ASSERT_TRUE(d.Reserve("t2", 7, this->long_ttl()).ok());
  auto sum = d.ReservedSum("t1");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 30);
  // A later reserve on the same target does not extend the first one.
  auto long_hold = d.Reserve("t1", 5, this->long_ttl());
  ASSERT_TRUE(long_hold.ok());
  EXPECT_NE(long_hold->id, short_hold->id);
  sum = d.ReservedSum("t1");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 35);
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto s = d.ReservedSum("t1");
        return s.ok() && *s == 5;
      },
      this->patience()));
  sum = d.ReservedSum("t2");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 7);
  // Releasing the pruned one is harmless.
  EXPECT_TRUE(d.ReleaseReservation("t1", short_hold->id).ok());
  sum = d.ReservedSum("t1");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 5);
}

TYPED_TEST_P(DirectoryConformance, ReleaseRetiresOneReservationEarly) {
  Directory& d = this->dir();
  auto a = d.Reserve("t", 10, this->long_ttl());
  auto b = d.Reserve("t", 20, this->long_ttl());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(d.ReleaseReservation("t", a->id).ok());
  auto sum = d.ReservedSum("t");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 20);
  ASSERT_TRUE(d.ReleaseReservation("t", b->id).ok());
  sum = d.ReservedSum("t");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 0);
}

TYPED_TEST_P(DirectoryConformance, SelectorPicksLeastLoadedLiveTargetUnderCeiling) {
  Directory& d = this->dir();
  for (const char* s : {"src", "p1", "p2", "p3", "drain"}) {
    ASSERT_TRUE(d.RegisterShard(s, std::string(s) + ":1", this->long_ttl()).ok());
  }
  ASSERT_TRUE(d.ReportOccupancy("p1", {{"a", 100}, {"b", 50}}).ok());  // 150
  ASSERT_TRUE(d.ReportOccupancy("p2", {{"c", 90}}).ok());              // 90 + 80 reserved
  ASSERT_TRUE(d.ReportOccupancy("p3", {{"d", 95}}).ok());              // 95
  ASSERT_TRUE(d.ReportOccupancy("drain", {}).ok());                    // empty but excluded
  ASSERT_TRUE(d.Reserve("p2", 80, this->long_ttl()).ok());
  DrainTargetRequest req;
  req.exclude = {"src", "drain"};
  req.amount = 20;
  req.ttl_ms = this->long_ttl();
  req.ceiling = 1500;
  auto pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok()) << pick.status().ToString();
  EXPECT_EQ(pick->reservation.target, "p3");
  EXPECT_EQ(pick->load, 95);
  EXPECT_FALSE(pick->over_ceiling);
  // The pick reserved atomically: p3 now counts 115, still the lightest (p1 150, p2 170).
  auto sum = d.ReservedSum("p3");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 20);
  req.amount = 60;
  pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->reservation.target, "p3");
  EXPECT_EQ(pick->load, 115);
  pick = d.SelectDrainTarget(req);  // p3 now 175: p1 (150) is least loaded
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->reservation.target, "p1");
  // Now p1 210, p2 170, p3 175. With a ceiling of 240 and 60 more players only shards at or
  // below 180 fit, and of those p2 is the lightest.
  req.ceiling = 240;
  pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->reservation.target, "p2");
  EXPECT_EQ(pick->load, 170);
  EXPECT_FALSE(pick->over_ceiling);
  // Releasing the reservation gives the headroom back.
  ASSERT_TRUE(d.ReleaseReservation("p2", pick->reservation.id).ok());
  sum = d.ReservedSum("p2");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 80);
}

TYPED_TEST_P(DirectoryConformance, SelectorGoesOverCeilingWhenNothingFits) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("p1", "p1:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.RegisterShard("p2", "p2:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.ReportOccupancy("p1", {{"a", 1490}}).ok());
  ASSERT_TRUE(d.ReportOccupancy("p2", {{"b", 1480}}).ok());
  DrainTargetRequest req;
  req.amount = 50;
  req.ttl_ms = this->long_ttl();
  auto pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->reservation.target, "p2");
  EXPECT_EQ(pick->load, 1480);
  EXPECT_TRUE(pick->over_ceiling);
  auto sum = d.ReservedSum("p2");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 50);  // it still reserved
}

TYPED_TEST_P(DirectoryConformance, SelectorSkipsLapsedShardsAndNeedsACandidate) {
  Directory& d = this->dir();
  DrainTargetRequest req;
  req.exclude = {"src"};
  req.amount = 1;
  req.ttl_ms = this->long_ttl();
  EXPECT_CODE(d.SelectDrainTarget(req).status(), kNotFound);
  ASSERT_TRUE(d.RegisterShard("src", "src:1", this->long_ttl()).ok());
  EXPECT_CODE(d.SelectDrainTarget(req).status(), kNotFound);
  ASSERT_TRUE(d.RegisterShard("gone", "gone:1", this->short_ttl()).ok());
  ASSERT_TRUE(d.RegisterShard("busy", "busy:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.ReportOccupancy("busy", {{"z", 1400}}).ok());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto shards = d.ListShards();
        return shards.ok() && shards->size() == 2;
      },
      this->patience()));
  auto pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->reservation.target, "busy");  // "gone" was lighter but is not live
}

// Two shards of a rolling restart drain at once: each marks itself, so neither picks the other.
TYPED_TEST_P(DirectoryConformance, SelectorNeverPicksADrainingShard) {
  Directory& d = this->dir();
  for (const char* s : {"a", "b", "c"}) {
    ASSERT_TRUE(d.RegisterShard(s, std::string(s) + ":1", this->long_ttl()).ok());
  }
  ASSERT_TRUE(d.ReportOccupancy("a", {{"za", 10}}).ok());
  ASSERT_TRUE(d.ReportOccupancy("b", {{"zb", 20}}).ok());
  ASSERT_TRUE(d.ReportOccupancy("c", {{"zc", 900}}).ok());  // the busiest, and the only choice
  ASSERT_TRUE(d.MarkShardDraining("a", "a:1", this->long_ttl()).ok());
  ASSERT_TRUE(d.MarkShardDraining("b", "b:1", this->long_ttl()).ok());
  DrainTargetRequest req;
  req.amount = 10;
  req.ttl_ms = this->long_ttl();
  req.exclude = {"a"};
  auto pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok()) << pick.status().ToString();
  EXPECT_EQ(pick->reservation.target, "c");  // b is lighter but draining
  req.exclude = {"b"};
  req.amount = 20;
  pick = d.SelectDrainTarget(req);
  ASSERT_TRUE(pick.ok()) << pick.status().ToString();
  EXPECT_EQ(pick->reservation.target, "c");
  // With c gone there is no candidate at all: a draining peer is never the fallback.
  ASSERT_TRUE(d.DeregisterShard("c", "c:1").ok());
  EXPECT_CODE(d.SelectDrainTarget(req).status(), kNotFound);
}

// One drain moving several zones onto one target keeps one hold there, rebased by each further
// pick; a hold of another drainer is never extended by it.
TYPED_TEST_P(DirectoryConformance, SelectorRebasesOnlyTheHoldersOwnHold) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("t", "t:1", this->long_ttl()).ok());
  DrainTargetRequest req;
  req.exclude = {"src"};
  req.holder = "crashed";
  req.amount = 7;
  req.ttl_ms = this->short_ttl();
  auto stale = d.SelectDrainTarget(req);  // a drainer that then crashed
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  req.holder = "src";
  req.amount = 10;
  auto first = d.SelectDrainTarget(req);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->reservation.target, "t");
  EXPECT_EQ(first->reservation.amount, 10);
  EXPECT_NE(first->reservation.id, stale->reservation.id);
  req.amount = 5;
  req.ttl_ms = this->long_ttl();
  auto second = d.SelectDrainTarget(req);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->reservation.id, first->reservation.id);  // rebased, not added
  EXPECT_EQ(second->reservation.amount, 15);
  EXPECT_GT(second->reservation.ttl_ms, this->short_ttl());
  EXPECT_EQ(second->load, 17);  // both holds before this pick
  auto sum = d.ReservedSum("t");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 22);
  // The crashed drainer's hold runs out on its own time; the rebased one outlives its first TTL.
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto s = d.ReservedSum("t");
        return s.ok() && *s == 15;
      },
      this->patience()));
  // A clean handover retires the one hold early.
  ASSERT_TRUE(d.ReleaseReservation("t", second->reservation.id).ok());
  sum = d.ReservedSum("t");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 0);
}

// A hold rebased by further picks covers several zones, and still never exceeds the bound one
// reservation has.
TYPED_TEST_P(DirectoryConformance, RebasedHoldStaysWithinTheAmountBound) {
  Directory& d = this->dir();
  ASSERT_TRUE(d.RegisterShard("t", "t:1", this->long_ttl()).ok());
  DrainTargetRequest req;
  req.exclude = {"src"};
  req.holder = "src";
  req.amount = kReservationAmountMax - 1;
  req.ttl_ms = this->long_ttl();
  req.ceiling = 0;
  auto first = d.SelectDrainTarget(req);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  for (int zone = 0; zone < 3; ++zone) {
    req.amount = kReservationAmountMax;
    auto again = d.SelectDrainTarget(req);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->reservation.id, first->reservation.id);
    EXPECT_EQ(again->reservation.amount, kReservationAmountMax);
  }
  auto sum = d.ReservedSum("t");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, kReservationAmountMax);
}

// ------------------------------------------------------------------ directives and cooldowns

// Every directive is issued by the live leader of the "director" scope.
TYPED_TEST_P(DirectoryConformance, DirectivesAreListedByActingShardAndExpire) {
  Directory& d = this->dir();
  auto lead = d.Campaign("director", "d1", this->long_ttl());
  ASSERT_TRUE(lead.ok());
  const uint64_t term = lead->epoch;
  ASSERT_TRUE(d.IssueDirective("director", term, "town", "s1", "s2", this->short_ttl()).ok());
  ASSERT_TRUE(d.IssueDirective("director", term, "farm", "s1", "s3", this->long_ttl()).ok());
  ASSERT_TRUE(d.IssueDirective("director", term, "mine", "s2", "s1", this->long_ttl()).ok());
  EXPECT_CODE(d.IssueDirective("director", term, "town", "s1", "s3", this->long_ttl()),
              kAlreadyExists);
  auto mine = d.ListDirectives("s1");
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ((*mine)[0].zone, "farm");
  EXPECT_EQ((*mine)[0].to, "s3");
  EXPECT_EQ((*mine)[1].zone, "town");
  EXPECT_EQ((*mine)[1].from, "s1");
  EXPECT_GT((*mine)[1].ttl_ms, 0);
  EXPECT_LE((*mine)[1].ttl_ms, this->short_ttl());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto l = d.ListDirectives("s1");
        return l.ok() && l->size() == 1;
      },
      this->patience()));
  // The expired directive no longer blocks a new one for its zone.
  EXPECT_TRUE(d.IssueDirective("director", term, "town", "s1", "s3", this->long_ttl()).ok());
  auto theirs = d.ListDirectives("s2");
  ASSERT_TRUE(theirs.ok());
  ASSERT_EQ(theirs->size(), 1u);
  EXPECT_EQ((*theirs)[0].zone, "mine");
}

TYPED_TEST_P(DirectoryConformance, CompletingADirectiveRetiresIt) {
  Directory& d = this->dir();
  auto lead = d.Campaign("director", "d1", this->long_ttl());
  ASSERT_TRUE(lead.ok());
  ASSERT_TRUE(d.IssueDirective("director", lead->epoch, "town", "s1", "s2", this->long_ttl()).ok());
  EXPECT_CODE(d.CompleteDirective("town", "s2"), kNotFound);
  ASSERT_TRUE(d.CompleteDirective("town", "s1").ok());
  EXPECT_CODE(d.CompleteDirective("town", "s1"), kNotFound);
  auto l = d.ListDirectives("s1");
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->empty());
  EXPECT_TRUE(d.IssueDirective("director", lead->epoch, "town", "s2", "s1", this->long_ttl()).ok());
}

// The leader fence on directives: only the scope's live leader, at its current term, writes.
TYPED_TEST_P(DirectoryConformance, LiveLeadersDirectiveIsAcceptedAndRecordsItsTerm) {
  Directory& d = this->dir();
  auto lead = d.Campaign("director", "d1", this->long_ttl());
  ASSERT_TRUE(lead.ok());
  ASSERT_TRUE(d.IssueDirective("director", lead->epoch, "town", "s1", "s2", this->long_ttl()).ok());
  auto listed = d.ListDirectives("s1");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].scope, "director");
  EXPECT_EQ((*listed)[0].epoch, lead->epoch);
  // A term the scope never reached, and a scope nobody leads, are no fence at all.
  EXPECT_CODE(d.IssueDirective("director", lead->epoch + 1, "farm", "s1", "s2", this->long_ttl()),
              kFailedPrecondition);
  EXPECT_CODE(d.IssueDirective("arcade:dice", lead->epoch, "farm", "s1", "s2", this->long_ttl()),
              kFailedPrecondition);
  EXPECT_CODE(d.IssueDirective("director", 0, "farm", "s1", "s2", this->long_ttl()),
              kInvalidArgument);
  listed = d.ListDirectives("s1");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
}

TYPED_TEST_P(DirectoryConformance, DeposedLeadersDirectiveIsRefusedAndNotStored) {
  Directory& d = this->dir();
  auto old_term = d.Campaign("director", "d1", this->short_ttl());
  ASSERT_TRUE(old_term.ok());
  Result<LeaseGrant> new_term = Status::Unavailable("not yet");
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        new_term = d.Campaign("director", "d2", this->long_ttl());
        return new_term.ok();
      },
      this->patience()));
  ASSERT_GT(new_term->epoch, old_term->epoch);
  Status deposed =
      d.IssueDirective("director", old_term->epoch, "town", "s1", "s2", this->long_ttl());
  EXPECT_CODE(deposed, kFailedPrecondition);
  EXPECT_NE(deposed.message().find("not the leader of scope director at epoch " +
                                   std::to_string(old_term->epoch)),
            std::string::npos)
      << deposed.ToString();
  auto listed = d.ListDirectives("s1");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  // The refused write did not take the zone either: the new leader's directive goes in.
  ASSERT_TRUE(
      d.IssueDirective("director", new_term->epoch, "town", "s1", "s3", this->long_ttl()).ok());
  listed = d.ListDirectives("s1");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].to, "s3");
  EXPECT_EQ((*listed)[0].epoch, new_term->epoch);
}

TYPED_TEST_P(DirectoryConformance, DirectiveAfterTheLeaseLapsedIsRefused) {
  Directory& d = this->dir();
  auto lead = d.Campaign("director", "d1", this->short_ttl());
  ASSERT_TRUE(lead.ok());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto leader = d.LeaderOf("director");
        return leader.ok() && !leader->has_value();
      },
      this->patience()));
  // Nobody took over, yet the lapsed term no longer writes.
  EXPECT_CODE(d.IssueDirective("director", lead->epoch, "town", "s1", "s2", this->long_ttl()),
              kFailedPrecondition);
  auto listed = d.ListDirectives("s1");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  // A resigned leader is refused the same way.
  auto again = d.Campaign("director", "d1", this->long_ttl());
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(d.Resign("director", "d1", again->epoch).ok());
  EXPECT_CODE(d.IssueDirective("director", again->epoch, "town", "s1", "s2", this->long_ttl()),
              kFailedPrecondition);
}

TYPED_TEST_P(DirectoryConformance, ZoneCooldownRunsOut) {
  Directory& d = this->dir();
  auto left = d.CooldownRemainingMs("town");
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, 0);
  ASSERT_TRUE(d.StartCooldown("town", this->short_ttl()).ok());
  left = d.CooldownRemainingMs("town");
  ASSERT_TRUE(left.ok());
  EXPECT_GT(*left, 0);
  EXPECT_LE(*left, this->short_ttl());
  ASSERT_TRUE(this->backend_.Eventually(
      [&] {
        auto l = d.CooldownRemainingMs("town");
        return l.ok() && *l == 0;
      },
      this->patience()));
  ASSERT_TRUE(d.StartCooldown("town", kZoneCooldownMsDefault).ok());
  left = d.CooldownRemainingMs("town");
  ASSERT_TRUE(left.ok());
  EXPECT_GT(*left, kZoneCooldownMsDefault - 60'000);
}

// ------------------------------------------------------------------ concurrency

// Many clients race to claim a few zones; owners sometimes release or hand over. Every grant
// any client saw is logged as (zone, epoch) -> shard: each epoch must name exactly one shard,
// and no two clients may ever both believe they hold the same zone at the same epoch.
TYPED_TEST_P(DirectoryConformance, RacingClaimsGiveOneOwnerPerZonePerEpoch) {
  const int threads = TypeParam::kConcurrencyThreads;
  const int rounds = TypeParam::kConcurrencyRounds;
  const std::vector<std::string> zones = {"z0", "z1", "z2"};
  std::vector<Directory*> clients;
  for (int t = 0; t < threads; ++t) clients.push_back(this->backend_.NewClient(nullptr));

  std::mutex mu;
  std::map<std::pair<std::string, uint64_t>, std::set<std::string>> owners;  // guarded by mu
  std::atomic<int> failures{0};
  std::atomic<int> grants{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Directory& d = *clients[t];
      const std::string me = "shard-" + std::to_string(t);
      // The drain peer this shard hands zones to; the same thread then acts for it.
      const std::string peer = me + "-peer";
      for (int r = 0; r < rounds; ++r) {
        const std::string& zone = zones[static_cast<size_t>(r + t) % zones.size()];
        auto got = d.ClaimZone(zone, me, 60'000);
        if (!got.ok()) {
          if (got.status().code() != StatusCode::kConflict) failures++;
          continue;
        }
        grants++;
        {
          std::lock_guard lock(mu);
          owners[{zone, got->epoch}].insert(me);
        }
        // Give the zone up again so that others get their turn: release it, or hand it to a
        // peer in one step and let the peer release it.
        if (r % 2 == 0) {
          if (!d.ReleaseZone(zone, me, got->epoch).ok()) failures++;
          continue;
        }
        auto moved = d.TransferZone(zone, me, got->epoch, peer, 60'000);
        if (!moved.ok()) {
          failures++;
          continue;
        }
        {
          std::lock_guard lock(mu);
          owners[{zone, moved->epoch}].insert(peer);
        }
        if (!d.ReleaseZone(zone, peer, moved->epoch).ok()) failures++;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(grants.load(), rounds / 2);
  for (const auto& [key, who] : owners) {
    EXPECT_EQ(who.size(), 1u) << key.first << " epoch " << key.second << " had " << who.size()
                              << " owners";
  }
  // Epochs per zone are dense: every new tenure took the next number.
  for (const std::string& zone : zones) {
    uint64_t expect = 1;
    for (const auto& [key, who] : owners) {
      if (key.first != zone) continue;
      EXPECT_EQ(key.second, expect) << zone;
      expect = key.second + 1;
    }
  }
}

// ------------------------------------------------------------------ content pack version

TYPED_TEST_P(DirectoryConformance, PackVersionIsSwappedOnlyFromTheExpectedHash) {
  Directory& d = this->dir();
  auto none = d.ReadPackVersion();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  EXPECT_CODE(d.SwapPackVersion("", PackVersion{"", ""}), kInvalidArgument);
  EXPECT_CODE(d.SwapPackVersion("", PackVersion{"bad\nhash", ""}), kInvalidArgument);
  // The first write expects no record; a second "first" write is refused.
  ASSERT_TRUE(d.SwapPackVersion("", PackVersion{"aaa", ""}).ok());
  EXPECT_CODE(d.SwapPackVersion("", PackVersion{"bbb", ""}), kFailedPrecondition);
  // A reload: both packs named while it runs, then the new one alone.
  EXPECT_CODE(d.SwapPackVersion("zzz", PackVersion{"bbb", "aaa"}), kFailedPrecondition);
  ASSERT_TRUE(d.SwapPackVersion("aaa", PackVersion{"bbb", "aaa"}).ok());
  auto mid = d.ReadPackVersion();
  ASSERT_TRUE(mid.ok() && mid->has_value());
  EXPECT_EQ(**mid, (PackVersion{"bbb", "aaa"}));
  EXPECT_TRUE((*mid)->reloading());
  ASSERT_TRUE(d.SwapPackVersion("bbb", PackVersion{"bbb", ""}).ok());
  auto after = d.ReadPackVersion();
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ(**after, (PackVersion{"bbb", ""}));
  EXPECT_FALSE((*after)->reloading());
}

REGISTER_TYPED_TEST_SUITE_P(
    DirectoryConformance, RejectsBadArguments, DuplicateLiveShardIdFromAnotherEndpointIsRefused,
    LapsedShardIdIsFreeAndHeartbeatSaysSo, ListAndDeregisterShards, DrainingMarkIsListedAndLapses,
    FreshRegistrationAfterALapseIsNotDraining, RestartOnTheSameEndpointIsNotDraining,
    SelectorNeverPicksADrainingShard, SelectorRebasesOnlyTheHoldersOwnHold,
    RebasedHoldStaysWithinTheAmountBound, ClaimGrantsFreeZoneAndKeepsEpochForSameOwner,
    ClaimWithAnEpochFloorStartsATenureAtIt, SkewedShardClockCannotStealLiveLease,
    LapsedLeaseGoesToNewOwnerUnderNextEpoch, LapsedLeaseOfSameShardIsANewTenure,
    RenewOnlyByOwnerAtItsEpoch, ReleaseFreesZoneButEpochKeepsGrowing,
    TransferNeedsSourceToHoldLiveLease, TransferAToBToAThenRenewalByASucceeds,
    OwnerEndpointIsEmptyWhenShardRegistrationLapsed, LeaderCampaignRenewResign,
    LeaderThatLostItsLeaseLearnsOnConfirm, HandoffCasNeedsStrictlyGreaterEpoch,
    RegisterPlacementAcceptsEqualRefusesStale, TombstoneIsFencedOnShardEpochAndNonce,
    TombstoneWithoutStoredNonceUsesShardAndEpoch, DeletePlacementRemovesTheCharacter,
    PresenceRosterWithTtl, OccupancyCarriesDirectoryTime,
    ReservationsExpireIndividuallyAndArePruned, ReleaseRetiresOneReservationEarly,
    SelectorPicksLeastLoadedLiveTargetUnderCeiling, SelectorGoesOverCeilingWhenNothingFits,
    SelectorSkipsLapsedShardsAndNeedsACandidate, DirectivesAreListedByActingShardAndExpire,
    CompletingADirectiveRetiresIt, LiveLeadersDirectiveIsAcceptedAndRecordsItsTerm,
    DeposedLeadersDirectiveIsRefusedAndNotStored, DirectiveAfterTheLeaseLapsedIsRefused,
    ZoneCooldownRunsOut, RacingClaimsGiveOneOwnerPerZonePerEpoch,
    PackVersionIsSwappedOnlyFromTheExpectedHash);

}  // namespace telos::directory::testing
