#include "telos/gate/gate.h"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <optional>
#include <set>

#include "telos/account/names.h"
#include "telos/base/assert.h"
#include "telos/base/mutex.h"
#include "telos/net/text.h"
#include "telos/world/names.h"

namespace telos::gate {
namespace {

// Whether a RenewAssertion failure is about the session itself (its ticket or its assertion),
// so that asking again cannot help, rather than about the gate or the way to the service. By
// code alone (the account service's LoginExpired), so no rewording of a message can move it.
bool RefusedForTheSession(const Status& status) {
  return status.code() == StatusCode::kLoginExpired;
}

namespace asio = boost::asio;

constexpr std::string_view kPrompt = "> ";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int64_t WallUnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

std::string Trim(std::string_view s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(' ');
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

class SessionCore;

struct Gate::Shared {
  Shared(GateOptions opts, asio::io_context& io_in, BlockingRunner blocking_in,
         account::AccountDesk& accounts_in, WorldLink& link_in, const Clock& clock_in,
         Logger& log_in, Metrics& metrics)
      : options(std::move(opts)),
        io(io_in),
        blocking(std::move(blocking_in)),
        accounts(accounts_in),
        link(link_in),
        clock(clock_in),
        log(log_in),
        sessions_gauge(metrics.Gauge("gate_sessions", "Connected sessions, any state")),
        playing_gauge(metrics.Gauge("gate_players", "Sessions playing a character")),
        link_dead_gauge(
            metrics.Gauge("gate_link_dead", "Characters in the world without a connection")),
        commands_total(metrics.Counter("commands_total", "Lines relayed to the world")),
        errors_total(metrics.Counter("gate_errors_total", "Session steps that failed")),
        renewals_total(metrics.Counter("gate_assertion_renewals_total",
                                       "Login assertions renewed for sessions still playing")),
        renewal_failures_total(metrics.Counter("gate_assertion_renewal_failures_total",
                                               "Assertion renewals the account service refused "
                                               "or could not answer")),
        renew_timer(io_in) {}

  // Called on every login, quit and hang-up, so it must not walk the bindings.
  void UpdateGauges() REQUIRES(mu);
  // Counts `binding` link-dead, or no longer; each is a no-op when already so.
  void CountLinkDead(PlayerBinding& binding) REQUIRES(mu);
  void CountResumed(PlayerBinding& binding) REQUIRES(mu);
  // The character left the world (quit, or removed after its link-dead grace).
  void Departed(const std::string& name_key) EXCLUDES(mu);
  // Asks the account service for a fresh assertion for every character past half its
  // assertion's life, and hands each to the link (Gate::RenewDueAssertions). The renewals run
  // on the blocking pool and hold `shared` until they finish.
  static void RenewDueAssertions(const std::shared_ptr<Shared>& shared) EXCLUDES(shared->mu);
  // Runs RenewDueAssertions every options.assertion_renew_sweep_ms while the gate lives.
  static void ScheduleRenewSweep(const std::shared_ptr<Shared>& shared) EXCLUDES(shared->renew_mu);

  const GateOptions options;
  asio::io_context& io;
  const BlockingRunner blocking;
  account::AccountDesk& accounts;
  WorldLink& link;
  const Clock& clock;
  Logger& log;
  prometheus::Gauge& sessions_gauge;
  prometheus::Gauge& playing_gauge;
  prometheus::Gauge& link_dead_gauge;
  prometheus::Counter& commands_total;
  prometheus::Counter& errors_total;
  prometheus::Counter& renewals_total;
  prometheus::Counter& renewal_failures_total;
  // A tiny lock of its own, outside the gate's lock order: the sweep's timer, armed and
  // cancelled, with nothing else locked while it is held.
  Mutex renew_mu;
  asio::steady_timer renew_timer GUARDED_BY(renew_mu);
  bool renew_stopped GUARDED_BY(renew_mu) = false;

  // The roster lock, second in the gate's lock order (gate.h): taken with a session's lock held
  // or alone, and held while a binding's lock is taken, never the other way round.
  Mutex mu{lock_rank::kGateRoster};
  std::map<std::string, std::shared_ptr<PlayerBinding>> bindings GUARDED_BY(mu);  // by name key
  std::set<SessionCore*> sessions GUARDED_BY(mu);
  std::set<std::string> claiming GUARDED_BY(mu);  // name keys being claimed for play
  // The bindings counted link-dead: each one is also in `bindings`, which keeps it alive.
  std::set<const PlayerBinding*> link_dead GUARDED_BY(mu);
  bool shutting_down GUARDED_BY(mu) = false;
};

// A character in the world and the session (if any) showing it. Output for a link-dead
// character is dropped: the player sees the room afresh when they come back. Once the
// character is on its way out (quit, or the link-dead grace ran out) the binding is "retiring":
// nobody may attach to it, so a new login waits for the departure instead of resuming a ghost.
class PlayerBinding final : public world::PlayerSink {
 public:
  PlayerBinding(std::string name_key, std::string display_name, int64_t account_id,
                asio::io_context& io, std::function<void()> on_departed)
      : name_key_(std::move(name_key)),
        display_name_(std::move(display_name)),
        account_id_(account_id),
        on_departed_(std::move(on_departed)),
        link_dead_timer_(io) {}

  // The login ticket that claimed the character and the assertion the world holds now. The
  // binding outlives the connection, so a link-dead character's assertion stays fresh too: the
  // link presents it again whenever it routes the session afresh.
  struct Renewal {
    std::string ticket;
    std::string assertion;
    int64_t issued_unix_ms = 0;   // by the gate's clock, when the assertion arrived
    int64_t expires_unix_ms = 0;  // as signed
  };
  void SetRenewal(Renewal renewal) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    renewal_ = std::move(renewal);
  }
  // The renewal to ask for if the assertion is past half its life at `now_unix_ms` and none is
  // in flight (and the account service has not refused this session for good); marks one in
  // flight.
  std::optional<Renewal> TakeDueRenewal(int64_t now_unix_ms) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (renewing_ || renewal_refused_ || renewal_.ticket.empty() || retiring_) return std::nullopt;
    const int64_t half_life = (renewal_.expires_unix_ms - renewal_.issued_unix_ms) / 2;
    if (now_unix_ms < renewal_.issued_unix_ms + half_life) return std::nullopt;
    renewing_ = true;
    return renewal_;
  }
  // The renewal in flight ended: `renewed` is the fresh assertion, or null when it failed
  // (`for_good`: the ticket or the assertion was refused, so asking again cannot help).
  void FinishRenewal(std::optional<Renewal> renewed, bool for_good) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    renewing_ = false;
    if (renewed) renewal_ = std::move(*renewed);
    if (!renewed && for_good) renewal_refused_ = true;
  }

  void Deliver(world::PlayerOutput output) override EXCLUDES(mu_);

  // Binds `session`. False when the character is leaving the world; otherwise `previous` gets
  // the session it displaced, if any.
  bool Attach(std::shared_ptr<SessionCore> session, std::shared_ptr<SessionCore>& previous)
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (retiring_) return false;
    link_dead_timer_.cancel();
    ++grace_;  // a wait that completed before the cancel runs anyway: it must find itself void
    previous = std::move(session_);
    session_ = std::move(session);
    return true;
  }
  // Unbinds `session` if it is the bound one; true if the character is now link-dead.
  bool Detach(const SessionCore* session) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (session_.get() != session) return false;
    session_.reset();
    return !retiring_;
  }
  // Runs `expired(grace)` after `delay`, `grace` naming this link-dead spell for
  // BeginRetiring. cancel() cannot stop a wait that has already completed (its handler queued
  // on `io`), so an attach also voids the grace, and so does the next one.
  void StartLinkDeadTimer(std::chrono::milliseconds delay,
                          std::function<void(uint64_t grace)> expired) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const uint64_t grace = ++grace_;
    link_dead_timer_.expires_after(delay);
    link_dead_timer_.async_wait(
        [grace, expired = std::move(expired)](boost::system::error_code ec) {
          if (!ec) expired(grace);
        });
  }
  // Marks the binding retiring if nobody is attached and `grace` is still the current spell;
  // false if someone is attached, the grace was voided, or the binding already retires.
  bool BeginRetiring(uint64_t grace) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (session_ || retiring_ || grace != grace_) return false;
    retiring_ = true;
    return true;
  }

  // Tells the gate the character left the world, once. A character whose link-dead grace ran
  // out as its "quit" went through is reported by the quit and again by the removal, and by
  // then a new visit may have entered under the same name: the second report must not take
  // that visit's binding with it.
  void Depart() {
    if (departed_.exchange(true)) return;
    on_departed_();
  }

  const std::string& name_key() const { return name_key_; }
  const std::string& display_name() const { return display_name_; }
  int64_t account_id() const { return account_id_; }

 private:
  const std::string name_key_;
  const std::string display_name_;
  const int64_t account_id_;
  const std::function<void()> on_departed_;  // Gate::Shared::Departed, through Depart()
  std::atomic<bool> departed_ = false;       // Depart() has told the gate
  // Last in the gate's lock order, and a leaf: nothing else is locked while it is held.
  mutable Mutex mu_ ACQUIRED_AFTER(Gate::Shared::mu){lock_rank::kGateBinding};
  std::shared_ptr<SessionCore> session_ GUARDED_BY(mu_);
  bool retiring_ GUARDED_BY(mu_) = false;
  asio::steady_timer link_dead_timer_ GUARDED_BY(mu_);
  uint64_t grace_ GUARDED_BY(mu_) = 0;  // the current link-dead spell; bumped by attach and timer
  Renewal renewal_ GUARDED_BY(mu_);
  bool renewing_ GUARDED_BY(mu_) = false;
  bool renewal_refused_ GUARDED_BY(mu_) = false;
};

// One connection's login-and-play conversation.
class SessionCore final : public std::enable_shared_from_this<SessionCore> {
 public:
  SessionCore(std::shared_ptr<Gate::Shared> gate, std::shared_ptr<net::Terminal> terminal)
      : gate_(std::move(gate)),
        terminal_(std::move(terminal)),
        address_(terminal_->Info().remote_address),
        login_timer_(gate_->io) {}

  void Start() EXCLUDES(mu_);
  void OnLine(std::string line, bool truncated) EXCLUDES(mu_);
  void OnClosed() EXCLUDES(mu_);
  // The bound character's output (called by PlayerBinding from a zone executor).
  void Show(world::PlayerOutput output);
  // The character quit: the world has saved it and let it go.
  void CharacterQuit() EXCLUDES(mu_);
  // Another connection took this character over.
  void Displaced() EXCLUDES(mu_);
  void Tell(const std::string& message) { terminal_->SendText(message + "\n"); }

 private:
  enum class Step {
    kAccountName,
    kPassword,
    kNewAccountName,
    kNewPassword,
    kConfirmPassword,
    kMenu,
    kPlaying,
    kClosed,
  };

  // Runs `work` on the blocking pool, then `then(result)` back under the session lock unless
  // the session closed meanwhile. Input that arrives in between is answered with a wait notice.
  // The analysis cannot see that `then` runs locked, so each one opens with mu_.AssertHeld().
  template <typename Work, typename Then>
  void RunBlocking(Work work, Then then) REQUIRES(mu_);

  void Prompt(std::string_view question) REQUIRES(mu_);
  void AskAccountName() REQUIRES(mu_);
  void ShowMenu() REQUIRES(mu_);
  void HandleLocked(std::string line) REQUIRES(mu_);
  void OnMenuChoice(const std::string& line) REQUIRES(mu_);
  void Play(const std::string& name) REQUIRES(mu_);
  void CreateCharacter(const std::string& name) REQUIRES(mu_);
  void EnterWorld(account::CharacterClaim claim) REQUIRES(mu_);
  bool ResumeIfOnline(const std::string& name_key) REQUIRES(mu_);
  bool ReserveClaim(const std::string& name_key) REQUIRES(mu_);
  void ReleaseClaim(const std::string& name_key) REQUIRES(mu_);
  void Fail(const Status& status) REQUIRES(mu_);
  // The account service no longer knows this login (its ticket lapsed): start again.
  bool LoginLapsed(const Status& status) REQUIRES(mu_);

  std::shared_ptr<Gate::Shared> gate_;
  std::shared_ptr<net::Terminal> terminal_;
  const std::string address_;

  // First in the gate's lock order: the roster's and a binding's locks are taken under it (the
  // binding's comes after the roster's, so the analysis orders it after this one too).
  Mutex mu_ ACQUIRED_BEFORE(gate_->mu){lock_rank::kGateSession};
  asio::steady_timer login_timer_ GUARDED_BY(mu_);
  Step step_ GUARDED_BY(mu_) = Step::kAccountName;
  bool busy_ GUARDED_BY(mu_) = false;
  std::string account_name_ GUARDED_BY(mu_);
  std::string new_password_ GUARDED_BY(mu_);
  int64_t account_id_ GUARDED_BY(mu_) = 0;
  // The account service's login ticket: the account's characters are asked for with it.
  std::string ticket_ GUARDED_BY(mu_);
  std::vector<account::CharacterSummary> characters_ GUARDED_BY(mu_);
  int failed_passwords_ GUARDED_BY(mu_) = 0;
  std::shared_ptr<PlayerBinding> binding_ GUARDED_BY(mu_);  // set while playing
};

void Gate::Shared::Departed(const std::string& name_key) {
  MutexLock lock(mu);
  if (auto it = bindings.find(name_key); it != bindings.end()) {
    CountResumed(*it->second);  // gone, so no longer link-dead either
    bindings.erase(it);
  }
  UpdateGauges();
}

void Gate::Shared::RenewDueAssertions(const std::shared_ptr<Shared>& shared) {
  std::vector<std::shared_ptr<PlayerBinding>> all;
  {
    MutexLock lock(shared->mu);
    all.reserve(shared->bindings.size());
    for (const auto& [key, binding] : shared->bindings) all.push_back(binding);
  }
  const int64_t now_unix_ms = WallUnixMs(shared->clock);
  for (auto& binding : all) {
    auto due = binding->TakeDueRenewal(now_unix_ms);
    if (!due) continue;
    shared->blocking([self = shared, binding, due = std::move(*due)]() mutable {
      auto renewed = self->accounts.RenewAssertion(due.ticket, due.assertion);
      if (!renewed.ok()) {
        self->renewal_failures_total.Increment();
        // Refused for the session: the ticket or the assertion is gone (the account service
        // restarted, or the assertion lapsed while it could not be reached). The session plays
        // on; it needs a fresh login only if its world stream must be opened again. Any other
        // failure, a refusal of the gate's own caller token included, is asked again.
        const bool for_good = RefusedForTheSession(renewed.status());
        self->log.Warn("assertion renewal failed", {{"character", binding->display_name()},
                                                    {"error", renewed.status().ToString()},
                                                    {"retry", !for_good}});
        binding->FinishRenewal(std::nullopt, for_good);
        return;
      }
      self->renewals_total.Increment();
      self->link.UpdateAssertion(binding->name_key(), renewed->assertion);
      binding->FinishRenewal(
          PlayerBinding::Renewal{std::move(due.ticket), std::move(renewed->assertion),
                                 WallUnixMs(self->clock), renewed->assertion_expires_unix_ms},
          false);
    });
  }
}

void Gate::Shared::ScheduleRenewSweep(const std::shared_ptr<Shared>& shared) {
  if (shared->options.assertion_renew_sweep_ms <= 0) return;
  MutexLock lock(shared->renew_mu);
  if (shared->renew_stopped) return;
  shared->renew_timer.expires_after(
      std::chrono::milliseconds(shared->options.assertion_renew_sweep_ms));
  shared->renew_timer.async_wait(
      [weak = std::weak_ptr<Shared>(shared)](boost::system::error_code ec) {
        auto self = weak.lock();
        if (ec || !self) return;
        RenewDueAssertions(self);
        ScheduleRenewSweep(self);
      });
}

void Gate::Shared::CountLinkDead(PlayerBinding& binding) {
  link_dead.insert(&binding);
}

void Gate::Shared::CountResumed(PlayerBinding& binding) {
  link_dead.erase(&binding);
}

void Gate::Shared::UpdateGauges() {
  ASSERT(link_dead.size() <= bindings.size(), "a link-dead count past the bindings");
  sessions_gauge.Set(static_cast<double>(sessions.size()));
  playing_gauge.Set(static_cast<double>(bindings.size() - link_dead.size()));
  link_dead_gauge.Set(static_cast<double>(link_dead.size()));
}

void PlayerBinding::Deliver(world::PlayerOutput output) {
  const bool quit = output.disconnect;
  std::shared_ptr<SessionCore> session;
  {
    MutexLock lock(mu_);
    session = session_;
    if (quit) {
      // The world has saved the character and let it go, whether or not anyone is watching.
      retiring_ = true;
      session_.reset();
      link_dead_timer_.cancel();
    }
  }
  if (session) session->Show(std::move(output));
  if (!quit) return;
  Depart();
  if (session) session->CharacterQuit();
}

template <typename Work, typename Then>
void SessionCore::RunBlocking(Work work, Then then) {
  busy_ = true;
  gate_->blocking(
      [self = shared_from_this(), work = std::move(work), then = std::move(then)]() mutable {
        auto result = work();
        MutexLock lock(self->mu_);
        self->busy_ = false;
        if (self->step_ == Step::kClosed) return;
        then(std::move(result));
      });
}

void SessionCore::Start() {
  {
    MutexLock lock(gate_->mu);
    gate_->sessions.insert(this);
    gate_->UpdateGauges();
  }
  MutexLock lock(mu_);
  const size_t online = gate_->link.online_count();
  terminal_->SendText(net::RenderColour("\n{C}" + gate_->options.world_name + "{x}\n", true));
  terminal_->SendText("A world of lanterns, barrows and brass. " + std::to_string(online) +
                      (online == 1 ? " soul is" : " souls are") + " abroad.\n\n");
  AskAccountName();
  login_timer_.expires_after(std::chrono::milliseconds(gate_->options.login_timeout_ms));
  login_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    MutexLock session_lock(self->mu_);
    if (self->step_ != Step::kPlaying && self->step_ != Step::kClosed) {
      self->terminal_->Close("You took too long to log in. Goodbye.");
    }
  });
}

void SessionCore::Prompt(std::string_view question) {
  terminal_->SendText(std::string(question) + "\n");
  terminal_->SendPrompt(std::string(kPrompt));
}

void SessionCore::AskAccountName() {
  step_ = Step::kAccountName;
  Prompt("Enter your account name, or \"new\" to make one:");
}

bool SessionCore::LoginLapsed(const Status& status) {
  if (status.code() != StatusCode::kLoginExpired) return false;
  ticket_.clear();
  terminal_->SendText(status.message() + "\n");
  AskAccountName();
  return true;
}

void SessionCore::Fail(const Status& status) {
  gate_->errors_total.Increment();
  if (status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kInternal) {
    gate_->log.Error("session step failed", {{"error", status.ToString()}});
    terminal_->SendText("Something went wrong on our side; please try again in a moment.\n");
  } else {
    terminal_->SendText(status.message() + "\n");
  }
}

void SessionCore::OnLine(std::string line, bool truncated) {
  MutexLock lock(mu_);
  if (step_ == Step::kClosed) return;
  if (truncated) {
    terminal_->SendText("That line was too long; only its beginning was kept.\n");
  }
  if (busy_) {
    terminal_->SendText("One moment, please.\n");
    return;
  }
  HandleLocked(std::move(line));
}

void SessionCore::HandleLocked(std::string line) {
  switch (step_) {
    case Step::kAccountName: {
      const std::string name = Trim(line);
      if (name.empty()) return Prompt("Your account name?");
      if (Lower(name) == "new") {
        step_ = Step::kNewAccountName;
        return Prompt("Choose an account name (3 to 20 letters, digits or _):");
      }
      if (Lower(name) == "quit") return terminal_->Close("Farewell.");
      account_name_ = name;
      RunBlocking([g = gate_, name,
                   address = address_] { return g->accounts.AccountExists(name, address); },
                  [this](Result<bool> exists) {
                    mu_.AssertHeld();
                    if (!exists.ok()) {
                      Fail(exists.status());
                      return AskAccountName();
                    }
                    if (!*exists) {
                      terminal_->SendText(
                          "There is no account by that name. Type \"new\" to "
                          "make one.\n");
                      return AskAccountName();
                    }
                    step_ = Step::kPassword;
                    terminal_->SetEcho(false);
                    Prompt("Password:");
                  });
      return;
    }
    case Step::kPassword: {
      terminal_->SetEcho(true);
      terminal_->SendText("\n");
      RunBlocking(
          [g = gate_, name = account_name_, password = std::move(line), address = address_] {
            return g->accounts.Authenticate(name, password, address);
          },
          [this](Result<account::AccountRef> account) {
            mu_.AssertHeld();
            if (!account.ok()) {
              Fail(account.status());
              if (++failed_passwords_ >= gate_->options.login_attempts_per_connection) {
                return terminal_->Close("Too many attempts. Goodbye.");
              }
              return AskAccountName();
            }
            account_id_ = account->id;
            account_name_ = account->name;
            ticket_ = std::move(account->ticket);
            gate_->log.Info("login", {{"account", account_name_}, {"address", address_}});
            ShowMenu();
          });
      return;
    }
    case Step::kNewAccountName: {
      const std::string name = Trim(line);
      if (Status s = account::ValidateAccountName(name); !s.ok()) {
        terminal_->SendText(s.message() + "\n");
        return Prompt("Choose an account name:");
      }
      account_name_ = name;
      step_ = Step::kNewPassword;
      terminal_->SetEcho(false);
      return Prompt("Choose a password (at least 8 characters):");
    }
    case Step::kNewPassword: {
      terminal_->SendText("\n");
      if (Status s = account::ValidateNewPassword(line, account_name_); !s.ok()) {
        terminal_->SendText(s.message() + "\n");
        return Prompt("Choose a password:");
      }
      new_password_ = std::move(line);
      step_ = Step::kConfirmPassword;
      return Prompt("Repeat the password:");
    }
    case Step::kConfirmPassword: {
      terminal_->SetEcho(true);
      terminal_->SendText("\n");
      if (line != new_password_) {
        new_password_.clear();
        terminal_->SendText("The passwords differ; let us start again.\n");
        return AskAccountName();
      }
      RunBlocking(
          [g = gate_, name = account_name_, password = std::move(new_password_),
           address = address_] { return g->accounts.CreateAccount(name, password, address); },
          [this](Result<account::AccountRef> account) {
            mu_.AssertHeld();
            new_password_.clear();
            if (!account.ok()) {
              Fail(account.status());
              return AskAccountName();
            }
            account_id_ = account->id;
            account_name_ = account->name;
            ticket_ = std::move(account->ticket);
            terminal_->SendText("Your account \"" + account_name_ + "\" is ready.\n");
            ShowMenu();
          });
      return;
    }
    case Step::kMenu: return OnMenuChoice(Trim(line));
    case Step::kPlaying:
      if (binding_) {
        gate_->commands_total.Increment();
        const Status s = gate_->link.Input(binding_->name_key(), std::move(line));
        if (!s.ok() && s.code() != StatusCode::kResourceExhausted) Fail(s);
        if (s.code() == StatusCode::kResourceExhausted) {
          terminal_->SendText("The world is busy; that command was dropped.\n");
        }
      }
      return;
    case Step::kClosed: return;
  }
}

void SessionCore::ShowMenu() {
  step_ = Step::kMenu;
  RunBlocking([g = gate_, ticket = ticket_] { return g->accounts.Characters(ticket); },
              [this](Result<std::vector<account::CharacterSummary>> list) {
                mu_.AssertHeld();
                if (LoginLapsed(list.status())) return;
                if (!list.ok()) {
                  Fail(list.status());
                  characters_.clear();
                } else {
                  characters_ = std::move(*list);
                }
                std::string text = "\n";
                if (characters_.empty()) {
                  text += "You have no characters yet.\n";
                } else {
                  text += "Your characters:\n";
                  for (size_t i = 0; i < characters_.size(); ++i) {
                    text += "  " + std::to_string(i + 1) + ". " + characters_[i].name + " (" +
                            characters_[i].zone_id + ")\n";
                  }
                }
                text +=
                    "Type a number or a name to play, \"new <name>\" to create a character, or "
                    "\"quit\".";
                Prompt(text);
              });
}

void SessionCore::OnMenuChoice(const std::string& line) {
  const std::string lower = Lower(line);
  if (lower.empty()) return ShowMenu();
  if (lower == "quit") return terminal_->Close("Farewell.");
  if (lower.rfind("new", 0) == 0) {
    const std::string name = Trim(line.substr(3));
    if (name.empty()) return Prompt("Name your new character: new <name>");
    return CreateCharacter(name);
  }
  std::string name = line;
  char* end = nullptr;
  const long index = std::strtol(line.c_str(), &end, 10);
  if (end != nullptr && *end == '\0') {
    if (index < 1 || static_cast<size_t>(index) > characters_.size()) {
      return Prompt("There is no character with that number.");
    }
    name = characters_[static_cast<size_t>(index - 1)].name;
  }
  Play(name);
}

bool SessionCore::ResumeIfOnline(const std::string& name_key) {
  std::shared_ptr<PlayerBinding> binding;
  {
    MutexLock lock(gate_->mu);
    auto it = gate_->bindings.find(name_key);
    if (it == gate_->bindings.end()) return false;
    binding = it->second;
  }
  if (binding->account_id() != account_id_) {
    terminal_->SendText("That character belongs to another account.\n");
    ShowMenu();
    return true;
  }
  std::shared_ptr<SessionCore> previous;
  if (!binding->Attach(shared_from_this(), previous)) {
    terminal_->SendText(binding->display_name() +
                        " is just leaving the world; try again in a moment.\n");
    ShowMenu();
    return true;
  }
  if (previous && previous.get() != this) {
    // Told from the io thread: that session may be waiting for our lock right now.
    asio::post(gate_->io, [previous] { previous->Displaced(); });
  }
  binding_ = binding;
  step_ = Step::kPlaying;
  login_timer_.cancel();
  {
    MutexLock lock(gate_->mu);
    gate_->CountResumed(*binding);
    gate_->UpdateGauges();
  }
  terminal_->SendText("You take hold of " + binding->display_name() + " again.\n");
  gate_->log.Info("character resumed", {{"character", binding->display_name()}});
  (void)gate_->link.Input(name_key, "look");
  return true;
}

bool SessionCore::ReserveClaim(const std::string& key) {
  MutexLock lock(gate_->mu);
  if (gate_->bindings.count(key) != 0 || !gate_->claiming.insert(key).second) {
    terminal_->SendText("That character is being entered from another connection.\n");
    return false;
  }
  return true;
}

void SessionCore::ReleaseClaim(const std::string& key) {
  MutexLock lock(gate_->mu);
  gate_->claiming.erase(key);
}

void SessionCore::Play(const std::string& name) {
  const std::string key = world::NameKey(name);
  if (ResumeIfOnline(key)) return;
  // Two connections of one account must not both claim: the later claim would fence every
  // save of the earlier one.
  if (!ReserveClaim(key)) return ShowMenu();
  RunBlocking([g = gate_, ticket = ticket_,
               name] { return g->accounts.ClaimCharacter(ticket, name, g->link.gate_id()); },
              [this, key](Result<account::CharacterClaim> record) {
                mu_.AssertHeld();
                if (!record.ok()) {
                  ReleaseClaim(key);
                  if (LoginLapsed(record.status())) return;
                  if (record.status().code() == StatusCode::kNotFound) {
                    terminal_->SendText("You have no character by that name.\n");
                  } else {
                    Fail(record.status());
                  }
                  return ShowMenu();
                }
                EnterWorld(std::move(*record));
              });
}

void SessionCore::CreateCharacter(const std::string& name) {
  if (Status s = account::ValidateCharacterName(name); !s.ok()) {
    terminal_->SendText(s.message() + "\n");
    return Prompt("Type \"new <name>\" to try another name.");
  }
  const std::string display = account::DisplayCharacterName(name);
  const world::Ref start = gate_->options.start_room;
  if (!ReserveClaim(world::NameKey(display))) {
    return Prompt("Type \"new <name>\" to try another name.");
  }
  RunBlocking(
      [g = gate_, ticket = ticket_, display, start]() -> Result<account::CharacterClaim> {
        // The account service makes the character's first state: a gate is not trusted with it.
        Status created = g->accounts.CreateCharacter(ticket, display, start.zone, start.id);
        if (!created.ok()) return created;
        return g->accounts.ClaimCharacter(ticket, display, g->link.gate_id());
      },
      [this, key = world::NameKey(display)](Result<account::CharacterClaim> record) {
        mu_.AssertHeld();
        if (!record.ok()) {
          ReleaseClaim(key);
          if (LoginLapsed(record.status())) return;
          if (record.status().code() == StatusCode::kAlreadyExists) {
            terminal_->SendText("That name is taken; please choose another.\n");
          } else {
            Fail(record.status());
          }
          return Prompt("Type \"new <name>\" to try another name.");
        }
        terminal_->SendText("\n" + record->name + " opens their eyes for the first time.\n");
        EnterWorld(std::move(*record));
      });
}

void SessionCore::EnterWorld(account::CharacterClaim claim) {
  const std::string key = world::NameKey(claim.name);
  EnterRequest request;
  request.name_key = key;
  request.display_name = claim.name;
  // The world claims and loads the character on this assertion (the link refuses an empty one).
  request.assertion = claim.assertion;
  std::weak_ptr<Gate::Shared> weak_gate = gate_;
  auto binding = std::make_shared<PlayerBinding>(key, claim.name, claim.account_id, gate_->io,
                                                 [weak_gate, key] {
                                                   if (auto gate = weak_gate.lock())
                                                     gate->Departed(key);
                                                 });
  {
    MutexLock lock(gate_->mu);
    gate_->claiming.erase(key);
    if (gate_->shutting_down) {
      terminal_->Close("The world is closing; please come back soon.");
      return;
    }
    if (gate_->bindings.count(key) != 0) {  // entered from elsewhere meanwhile
      terminal_->SendText("That character is already in the world.\n");
      return ShowMenu();
    }
    gate_->bindings[key] = binding;
  }
  binding->SetRenewal({ticket_, std::move(claim.assertion), WallUnixMs(gate_->clock),
                       claim.assertion_expires_unix_ms});
  std::shared_ptr<SessionCore> none;
  binding->Attach(shared_from_this(), none);
  const Status entered = gate_->link.Enter(std::move(request), binding);
  if (!entered.ok()) {
    {
      MutexLock lock(gate_->mu);
      gate_->bindings.erase(key);
    }
    Fail(entered);
    return ShowMenu();
  }
  binding_ = binding;
  step_ = Step::kPlaying;
  login_timer_.cancel();
  {
    MutexLock lock(gate_->mu);
    gate_->UpdateGauges();
  }
  const net::TerminalInfo info = terminal_->Info();
  gate_->log.Info("character entered", {{"character", claim.name},
                                        {"owner_epoch", claim.record.owner_epoch},
                                        {"transport", info.transport},
                                        {"client", info.client}});
}

void SessionCore::Show(world::PlayerOutput output) {
  net::TerminalOutput shown;
  shown.text = std::move(output.text);
  shown.data.reserve(output.events.size());
  for (auto& event : output.events) {
    shown.data.emplace_back(std::move(event.name), std::move(event.json));
  }
  // A prompt answers text. Output of data alone (vitals ticking up, the zone a player is leaving
  // as they cross to the next) would otherwise print a bare "> " before, or between, real text.
  if (!output.disconnect && !shown.text.empty()) shown.prompt = kPrompt;
  // Before the text: the prompt that asks for a secret is already the hidden kind, as at login.
  if (output.echo != world::PlayerOutput::Echo::kUnchanged) {
    terminal_->SetEcho(output.echo == world::PlayerOutput::Echo::kOn);
  }
  terminal_->SendOutput(std::move(shown));
}

void SessionCore::CharacterQuit() {
  {
    MutexLock lock(mu_);
    binding_.reset();
    step_ = Step::kClosed;
  }
  terminal_->Close("Come back soon.");
}

void SessionCore::Displaced() {
  MutexLock lock(mu_);
  binding_.reset();
  step_ = Step::kClosed;
  terminal_->Close("Your character was taken up by a new connection.");
}

void SessionCore::OnClosed() {
  std::shared_ptr<PlayerBinding> binding;
  {
    MutexLock lock(mu_);
    step_ = Step::kClosed;
    binding = std::move(binding_);
    login_timer_.cancel();
  }
  MutexLock lock(gate_->mu);
  gate_->sessions.erase(this);
  if (binding && binding->Detach(this)) {
    // The character stays in the world, link-dead, until the timer takes it out.
    gate_->CountLinkDead(*binding);
    gate_->log.Info("character link-dead", {{"character", binding->display_name()}});
    binding->StartLinkDeadTimer(
        std::chrono::milliseconds(gate_->options.link_dead_ms),
        [gate = gate_, binding](uint64_t grace) {
          if (!binding->BeginRetiring(grace)) return;  // resumed meanwhile, or already leaving
          gate->log.Info("link-dead character removed", {{"character", binding->display_name()}});
          gate->link.Remove(binding->name_key(), [binding] { binding->Depart(); });
        });
  }
  gate_->UpdateGauges();
}

// The TerminalHandler the transports own; it forwards to the shared session core.
class GateSession final : public net::TerminalHandler {
 public:
  explicit GateSession(std::shared_ptr<SessionCore> core) : core_(std::move(core)) {}
  // `core` is null for a connection refused during shutdown.
  void OnLine(std::string line, bool truncated) override {
    if (core_) core_->OnLine(std::move(line), truncated);
  }
  void OnData(std::string, std::string) override {}  // Core.Hello and friends: nothing yet
  void OnResize(uint16_t, uint16_t) override {}
  void OnClosed(std::string) override {
    if (core_) core_->OnClosed();
  }

 private:
  std::shared_ptr<SessionCore> core_;
};

Gate::Gate(GateOptions options, boost::asio::io_context& io, BlockingRunner blocking,
           account::AccountDesk& accounts, WorldLink& link, const Clock& clock, Logger& log,
           Metrics& metrics)
    : shared_(std::make_shared<Shared>(std::move(options), io, std::move(blocking), accounts, link,
                                       clock, log, metrics)) {
  Shared::ScheduleRenewSweep(shared_);
}

Gate::~Gate() {
  // The sweep holds the gate weakly, but its timer must not wait on `io` past the gate.
  MutexLock lock(shared_->renew_mu);
  shared_->renew_stopped = true;
  shared_->renew_timer.cancel();
}

void Gate::RenewDueAssertions() {
  Shared::RenewDueAssertions(shared_);
}

net::TerminalHandlerFactory Gate::TerminalFactory() {
  return [shared = shared_](
             std::shared_ptr<net::Terminal> terminal) -> std::unique_ptr<net::TerminalHandler> {
    {
      MutexLock lock(shared->mu);
      if (shared->shutting_down) {
        terminal->Close("The world is closing; please come back soon.");
        return std::make_unique<GateSession>(nullptr);
      }
    }
    auto core = std::make_shared<SessionCore>(shared, std::move(terminal));
    core->Start();
    return std::make_unique<GateSession>(std::move(core));
  };
}

void Gate::BeginShutdown(const std::string& message) {
  MutexLock lock(shared_->mu);
  shared_->shutting_down = true;
  for (SessionCore* s : shared_->sessions) s->Tell(message);
}

size_t Gate::sessions() const {
  MutexLock lock(shared_->mu);
  return shared_->sessions.size();
}

size_t Gate::link_dead() const {
  MutexLock lock(shared_->mu);
  return shared_->link_dead.size();
}

}  // namespace telos::gate
