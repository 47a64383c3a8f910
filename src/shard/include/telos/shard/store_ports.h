// The world engine's ports (telos/world/ports.h) implemented on the stores, for a process that
// hosts zones: character saves through the write-behind CharacterSaver with both fences, mail
// through the MailStore, password changes through the AccountService.
//
// StorePersistence learns each character's fences (account, state_version, owner_epoch) when the
// character is claimed (Register) and stamps them on every save the world requests; the
// saver's reports move the expected version forward. It owns the saver: Start() before the
// world runs, Stop() after every zone has stopped (it writes what is still queued).
//
// Thread safety: every method may be called from any thread. RequestSave and the mail and
// password calls never block (the latter run on the BlockingRunner); AwaitSaved blocks and
// belongs on the blocking pool.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "telos/account/account_desk.h"
#include "telos/base/blocking.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/gate/gate.h"
#include "telos/shard/checkpoint_writer.h"
#include "telos/store/character_saver.h"
#include "telos/store/checkpoint_store.h"
#include "telos/store/mail_store.h"
#include "telos/world/ports.h"

namespace telos::shard {

class StorePersistence final : public world::CharacterPersistence, public gate::CharacterRegistrar {
 public:
  StorePersistence(store::CharacterStore& store, Metrics& metrics, Logger& log,
                   store::CharacterSaver::Options options = {});
  ~StorePersistence() override;

  // The durability ladder (spec 001): from now on a periodic save request becomes a checkpoint
  // in `checkpoints` and the row is written at most every `row_flush_interval_ms` per
  // character; quit, freeze (leaving the shard), level and death still write the row at once.
  // REQUIRES: before Start(); `checkpoints` and `clock` outlive this object.
  void EnableCheckpoints(store::CheckpointStore& checkpoints, const Clock& clock,
                         int64_t row_flush_interval_ms, Metrics& metrics);

  void Start();
  void Stop();

  // world::CharacterPersistence
  void RequestSave(world::CharacterSnapshot snapshot) override;

  // gate::CharacterRegistrar
  void Register(const std::string& name_key, const std::string& display_name, int64_t account_id,
                int64_t state_version, int64_t owner_epoch) override;
  void Unregister(const std::string& name_key) override;
  void AwaitSaved(const std::string& name_key) override;

  // Blocks until everything queued is written (shutdown). DeadlineExceeded after `timeout`.
  Status FlushAll(std::chrono::milliseconds timeout);
  // Blocks until every queued checkpoint is written (true; also without checkpoints) or the
  // timeout passes (false).
  bool FlushCheckpoints(std::chrono::milliseconds timeout);

 private:
  struct Fences {
    std::string display_name;
    int64_t account_id = 0;
    int64_t state_version = 0;
    int64_t owner_epoch = 0;
    Instant last_row_request{};  // when a row write was last asked for (or the claim)
  };
  void OnReport(const store::SaveReport& report);
  // True when this periodic request should only checkpoint; fills `checkpoint`.
  bool CheckpointOnly(const world::CharacterSnapshot& snapshot, const world::CharacterState& state,
                      store::Checkpoint& checkpoint);

  store::CharacterStore& store_;
  Logger& log_;
  std::mutex mu_;
  std::map<std::string, Fences> fences_;  // guarded by mu_; by name key
  const Clock* clock_ = nullptr;          // set with the checkpoints
  int64_t row_flush_interval_ms_ = 0;
  std::unique_ptr<CheckpointWriter> checkpoints_;
  store::CharacterSaver saver_;  // last: its worker calls OnReport
};

class StoreMail final : public world::MailPort {
 public:
  StoreMail(store::MailStore& mail, BlockingRunner blocking);
  void Send(std::string from, std::string to, std::string subject, std::string body,
            std::function<void(Status)> done) override;
  void List(std::string owner,
            std::function<void(Result<std::vector<world::MailHeader>>)> done) override;
  void Read(std::string owner, int64_t id,
            std::function<void(Result<world::MailMessage>)> done) override;

 private:
  store::MailStore& mail_;
  BlockingRunner blocking_;
};

class AccountPasswords final : public world::PasswordPort {
 public:
  AccountPasswords(account::AccountDesk& accounts, BlockingRunner blocking);
  void Change(std::string name_key, std::string old_password, std::string new_password,
              std::function<void(Status)> done) override;

 private:
  account::AccountDesk& accounts_;
  BlockingRunner blocking_;
};

}  // namespace telos::shard
