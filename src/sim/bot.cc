#include "bot.h"

#include <algorithm>
#include <array>

#include <boost/asio.hpp>

#include "telos/base/limits.h"

namespace telos::sim {
namespace {

namespace asio = boost::asio;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kTextBytesMax = limits::kBotTextBytesMax;
constexpr int64_t kQuitWaitMs = 10'000;
constexpr int64_t kSpreadStepMs = 1000;  // a spreading step every 0.5-1 s: a player running
constexpr int kQuitAttemptsMax = limits::kBotQuitAttemptsMax;
constexpr int64_t kFleePauseMs = 250;
constexpr std::string_view kRefusedWhileFighting = "You are fighting!";
constexpr std::string_view kPrompt = "> ";

constexpr std::array<std::string_view, 6> kPhrases = {
    "Fair morning to you.",       "Has anyone seen the lamplighter?", "The brass bell rang twice.",
    "I am only passing through.", "Mind the barrow wights.",          "Lanterns lit, all is well."};
constexpr std::array<std::string_view, 4> kDirections = {"north", "south", "east", "west"};

// What the bots wait for. Needle lists live here rather than as braced lists inside the
// coroutines: GCC 12 miscompiles initializer lists of string literals in a coroutine frame.
using Needles = std::vector<std::string_view>;
const Needles kAccountPrompt = {"account name"};
const Needles kPasswordOrUnknown = {"Password:", "There is no account"};
const Needles kCharacterList = {"Your characters:", "You have no characters yet"};
const Needles kChooseAccount = {"Choose an account name"};
// A second "Choose an account name:" means the name was refused (taken in a race).
const Needles kChoosePassword = {"Choose a password", "Choose an account name:"};
const Needles kRepeatPassword = {"Repeat the password"};
const Needles kAccountReady = {"is ready"};
const Needles kCharacterMenu = {"new <name>"};
const Needles kExitsStart = {"[Exits: "};
const Needles kExitsEnd = {"]"};
// What the reply to a spreading step can say, in the order of Bot's kStep* values.
const Needles kStepOutcomes = {"[Exits: ",
                               "You are fighting!",
                               "too exhausted",
                               "You cannot go that way.",
                               "is closed for now.",
                               "You need to stand up",
                               "You cannot do that now.",
                               "You panic, but cannot get away!",
                               "You are not fighting anyone.",
                               "that command was dropped."};
const Needles kLoginFailures = {
    "Something went wrong", "Too many attempts",   "That character is already in the world",
    "That name is taken",   "to try another name", "Goodbye."};
const Needles kMuxWelcome = {"create <name> <password>"};
const Needles kMuxConnected = {"MAIL:", "does not exist"};
const Needles kMuxCreated = {"MAIL:"};
const Needles kMuxSuffixSeen = {"--swarm-done--"};
const Needles kMuxFailures = {"That name is not allowed", "is not a valid name",
                              "creation not allowed", "The limit of new players"};

// TinyMUX prints this after each command's output once the bot has set OUTPUTSUFFIX.
constexpr std::string_view kMuxSuffix = "--swarm-done--";

bool EndsWith(const std::string& text, std::string_view end) {
  return text.size() >= end.size() &&
         std::string_view(text).substr(text.size() - end.size()) == end;
}

Duration Ms(int64_t ms) {
  return std::chrono::milliseconds(ms);
}

}  // namespace

void LatencyRecorder::Add(int64_t us, Random& random) {
  ++seen_;
  if (samples_.size() < max_samples_) {
    samples_.push_back(us);
    return;
  }
  const auto slot = static_cast<uint64_t>(random.Uniform(0, static_cast<int64_t>(seen_ - 1)));
  if (slot < max_samples_) samples_[slot] = us;
}

std::vector<std::string> ParseExits(std::string_view text) {
  constexpr std::string_view kMarker = "[Exits: ";
  const size_t start = text.rfind(kMarker);
  if (start == std::string_view::npos) return {};
  std::string_view list = text.substr(start + kMarker.size());
  list = list.substr(0, list.find(']'));
  // Directions are words separated by spaces (or commas); "(...)" annotates the one before it.
  std::vector<std::string> exits;
  std::string word;
  int depth = 0;
  auto flush = [&] {
    if (!word.empty() && word != "none") exits.push_back(word);
    word.clear();
  };
  for (char c : list) {
    if (c == '(') {
      flush();
      ++depth;
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else if (depth == 0 && c >= 'a' && c <= 'z') {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return exits;
}

Bot::Bot(BotContext& context, int64_t index, uint64_t seed)
    : context_(context),
      index_(index),
      random_(seed),
      wake_(context.executor),
      reader_wake_(context.executor) {
  // Counted from the start, so the measured window waits for bots still logging in too.
  if (WillSpread(context_.options)) {
    owes_spread_ = true;
    ++context_.spreading_now;
  }
}

bool Bot::WillSpread(const SwarmOptions& options) {
  return options.spread_steps > 0 && options.dialect == Dialect::kTelos;
}

void Bot::DoneSpreading() {
  if (!owes_spread_) return;
  owes_spread_ = false;
  --context_.spreading_now;
}

void Bot::Stop() {
  stop_ = true;
  Wake();
  WakeReader();
}

asio::awaitable<void> Bot::Wait(Instant deadline) {
  wake_.expires_after(std::max(Duration(0), deadline - context_.clock.Now()));
  (void)co_await wake_.async_wait(kTuple);
}

asio::awaitable<void> Bot::Sleep(Instant deadline) {
  sleeping_ = true;
  reader_rests_ = transport_->can_rest();
  if (reader_rests_) transport_->Rest();
  while (!stop_ && !closed_ && context_.clock.Now() < deadline) co_await Wait(deadline);
  if (reader_rests_ && !closed_) {
    // Dropped before the next command goes out, so none of it passes for that command's reply.
    // Rest() ended the reader's pending read, so it has parked by now (a sleep lasts half a
    // second at least); if it has not, what arrived is left to its read.
    if (!transport_->EndRest(reader_parked_).ok()) {
      closed_ = true;
      transport_->Close();  // the reader's read (if any) ends and counts the disconnect
    }
  }
  reader_rests_ = false;
  WakeReader();
  sleeping_ = false;
  text_.clear();
}

asio::awaitable<bool> Bot::Send(std::string_view line) {
  line_ = std::string(line);
  const Status status = co_await transport_->SendLine(line_);
  if (!status.ok() && !closed_ && !stop_) context_.Error("send");
  co_return status.ok();
}

asio::awaitable<int> Bot::Expect(const std::vector<std::string_view>& wanted,
                                 const std::vector<std::string_view>& failures, Instant deadline) {
  while (true) {
    size_t best = std::string::npos;
    int found = kTimedOut;
    for (size_t i = 0; i < wanted.size(); ++i) {
      const size_t at = text_.find(wanted[i]);
      if (at < best) {
        best = at;
        found = static_cast<int>(i);
      }
    }
    for (std::string_view failure : failures) {
      const size_t at = text_.find(failure);
      if (at < best) {
        best = at;
        found = kFailed;
      }
    }
    if (found >= 0) {
      const size_t end = best + wanted[static_cast<size_t>(found)].size();
      consumed_ = text_.substr(0, end);
      text_.erase(0, end);
      co_return found;
    }
    if (found == kFailed) co_return kFailed;
    if (closed_ || (stop_ && !quitting_)) co_return kClosed;
    if (context_.clock.Now() >= deadline) co_return kTimedOut;
    co_await Wait(deadline);
  }
}

asio::awaitable<void> Bot::ReadLoop() {
  while (true) {
    while (reader_rests_ && !stop_ && !context_.stopping) {
      reader_wake_.expires_at(asio::steady_timer::time_point::max());
      reader_parked_ = true;
      (void)co_await reader_wake_.async_wait(kTuple);
      reader_parked_ = false;
    }
    Result<std::string> text = co_await transport_->Read();
    if (!text.ok()) break;
    if (text->empty()) continue;
    if (awaiting_reply_ && !replied_) {
      replied_ = true;
      if (counted_) {
        ++context_.replies;
        const auto us =
            std::chrono::duration_cast<std::chrono::microseconds>(context_.clock.Now() - sent_at_)
                .count();
        if (context_.measuring) context_.rtt.Add(us, context_.random);
        context_.rtt_this_second_us.push_back(us);
      }
    }
    // What others say while the bot thinks is not needed, nor worth a wake-up (with thousands
    // of bots, the client would spend its time waking up for chatter).
    if (sleeping_) continue;
    text_ += *text;
    if (text_.size() > kTextBytesMax) text_.erase(0, text_.size() - kTextBytesMax / 2);
    Wake();
  }
  closed_ = true;
  if (!quitting_ && !stop_ && !context_.stopping) ++context_.unexpected_disconnects;
  Wake();
}

asio::awaitable<bool> Bot::LogIn() {
  const SwarmOptions& o = context_.options;
  const std::string account = BotAccountName(o.accounts_prefix, index_);
  const std::string password = BotPassword(o.accounts_prefix);
  const std::string character = BotCharacterName(o.accounts_prefix, index_);
  const Instant deadline = context_.clock.Now() + Ms(o.login_timeout_ms);

  int r = co_await Expect(kAccountPrompt, kLoginFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  if (const bool sent = co_await Send(account); !sent) co_return false;
  r = co_await Expect(kPasswordOrUnknown, kLoginFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  bool has_character = false;
  if (r == 0) {
    if (const bool sent = co_await Send(password); !sent) co_return false;
    r = co_await Expect(kCharacterList, kLoginFailures, deadline);
    if (r < 0) {
      LoginFailed(r);
      co_return false;
    }
    has_character = r == 0;
  } else {
    r = co_await Expect(kAccountPrompt, kLoginFailures, deadline);
    if (r < 0) {
      LoginFailed(r);
      co_return false;
    }
    if (const bool sent = co_await Send("new"); !sent) co_return false;
    r = co_await Expect(kChooseAccount, kLoginFailures, deadline);
    if (r < 0) {
      LoginFailed(r);
      co_return false;
    }
    if (const bool sent = co_await Send(account); !sent) co_return false;
    r = co_await Expect(kChoosePassword, kLoginFailures, deadline);
    if (r != 0) {
      LoginFailed(r == 1 ? kFailed : r);
      co_return false;
    }
    if (const bool sent = co_await Send(password); !sent) co_return false;
    r = co_await Expect(kRepeatPassword, kLoginFailures, deadline);
    if (r < 0) {
      LoginFailed(r);
      co_return false;
    }
    if (const bool sent = co_await Send(password); !sent) co_return false;
    r = co_await Expect(kAccountReady, kLoginFailures, deadline);
    if (r < 0) {
      LoginFailed(r);
      co_return false;
    }
  }
  r = co_await Expect(kCharacterMenu, kLoginFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  {
    const std::string line = has_character ? character : "new " + character;
    if (const bool sent = co_await Send(line); !sent) co_return false;
  }
  r = co_await Expect(kExitsStart, kLoginFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  r = co_await Expect(kExitsEnd, kLoginFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  exits_ = ParseExits("[Exits: " + consumed_);
  co_return true;
}

bool Bot::ReplyComplete() const {
  // Broadcasts carry no suffix, so any suffix since the command was sent ends its reply.
  if (context_.options.dialect == Dialect::kTinyMux) {
    return text_.find(kMuxSuffix) != std::string::npos;
  }
  return EndsWith(text_, kPrompt);
}

void Bot::LoginFailed(int result) {
  // A login still under way when the window ends is a shortfall too (a ramp the server could
  // not keep up with), not a quiet non-event.
  if (result == kClosed && (stop_ || context_.stopping)) {
    context_.Error("login_unfinished");
    return;
  }
  context_.Error(result == kTimedOut ? "login_timeout"
                 : result == kFailed ? "login_refused"
                                     : "login_closed");
}

asio::awaitable<bool> Bot::LogInTinyMux() {
  const SwarmOptions& o = context_.options;
  const std::string password = BotPassword(o.accounts_prefix);
  const std::string character = BotCharacterName(o.accounts_prefix, index_);
  const Instant deadline = context_.clock.Now() + Ms(o.login_timeout_ms);
  int r = co_await Expect(kMuxWelcome, kMuxFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  text_.clear();
  {
    const std::string line = "connect " + character + " " + password;
    if (const bool sent = co_await Send(line); !sent) co_return false;
  }
  r = co_await Expect(kMuxConnected, kMuxFailures, deadline);
  if (r == 1) {
    {
      const std::string line = "create " + character + " " + password;
      if (const bool sent = co_await Send(line); !sent) co_return false;
    }
    r = co_await Expect(kMuxCreated, kMuxFailures, deadline);
  }
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  {
    const std::string line = "OUTPUTSUFFIX " + std::string(kMuxSuffix);
    if (const bool sent = co_await Send(line); !sent) co_return false;
  }
  r = co_await Expect(kMuxSuffixSeen, kMuxFailures, deadline);
  if (r < 0) {
    LoginFailed(r);
    co_return false;
  }
  text_.clear();
  co_return true;
}

std::string Bot::Command(Behaviour behaviour) {
  auto pick = [this](const auto& list) {
    return std::string(list[static_cast<size_t>(random_.Uniform(0, std::ssize(list) - 1))]);
  };
  if (context_.options.dialect == Dialect::kTinyMux) {
    switch (behaviour) {
      case Behaviour::kSay: return "say " + pick(kPhrases) + " (" + std::to_string(++says_) + ")";
      case Behaviour::kTell: return "page " + pick(context_.character_names) + "=" + pick(kPhrases);
      case Behaviour::kPose:
      case Behaviour::kFight: return "pose " + pick(kPhrases);
      default: return "look";
    }
  }
  switch (behaviour) {
    case Behaviour::kWalk: return exits_.empty() ? pick(kDirections) : pick(exits_);
    case Behaviour::kLook: return "look";
    case Behaviour::kSay: return "say " + pick(kPhrases) + " (" + std::to_string(++says_) + ")";
    case Behaviour::kTell: return "tell " + pick(context_.character_names) + " " + pick(kPhrases);
    case Behaviour::kFight: return "kill " + context_.options.fight_target;
    case Behaviour::kPose: return "emote " + pick(kPhrases);
    case Behaviour::kIdle: break;
  }
  return "look";
}

asio::awaitable<bool> Bot::Exchange(std::string_view line, bool look_for_exits, bool counted) {
  text_.clear();
  replied_ = false;
  counted_ = counted;
  awaiting_reply_ = true;
  sent_at_ = context_.clock.Now();
  if (const bool sent = co_await Send(line); !sent) co_return false;
  // The reply is complete when the prompt (or TinyMUX's suffix) that follows it has come.
  const Instant deadline = context_.clock.Now() + Ms(context_.options.reply_timeout_ms);
  while (!closed_ && !stop_ && !(replied_ && ReplyComplete()) && context_.clock.Now() < deadline) {
    co_await Wait(deadline);
  }
  awaiting_reply_ = false;
  if (closed_ || stop_) co_return false;
  if (!replied_) {
    context_.Error("reply_timeout");
  } else if (!ReplyComplete()) {
    context_.Error("prompt_timeout");
  }
  if (look_for_exits) {
    auto exits = ParseExits(text_);
    if (!exits.empty()) exits_ = std::move(exits);
  }
  co_return true;
}

asio::awaitable<void> Bot::Spread() {
  if (!WillSpread(context_.options)) co_return;
  // Each bot stops after a random number of steps, so the swarm settles at every depth.
  const int64_t steps = random_.Uniform(0, context_.options.spread_steps);
  Explorer explorer;
  int32_t room = Explorer::kUnknownRoom;
  std::string line = "look";
  int outcome = co_await Step(line);
  for (int64_t i = 0; outcome >= 0; ++i) {
    int back_exit = -1;
    if (outcome == kStepArrived) {
      room = room_title_.empty() ? Explorer::kUnknownRoom : context_.RoomId(room_title_);
      back_exit = BackExit(exits_, line);
    } else if (outcome != kStepRefused && outcome != kStepClosed) {
      explorer.Displaced();  // a fight, say: the exit may still lead somewhere new
    }
    // A refused or closed exit is learned as leading back here, so it is not tried again.
    explorer.Arrived(room, exits_.size(), back_exit);
    if (outcome == kStepExhausted || i >= steps) break;
    co_await Sleep(context_.clock.Now() + Ms(random_.Uniform(kSpreadStepMs / 2, kSpreadStepMs)));
    if (stop_ || closed_) break;
    // Something attacked on arrival: flee, as a player would, wherever that leads.
    const int exit = outcome == kStepFighting ? -1 : explorer.Next(random_);
    line = exit >= 0 ? exits_[static_cast<size_t>(exit)]
                     : std::string(outcome == kStepFighting ? "flee" : "look");
    outcome = co_await Step(line);
  }
  DoneSpreading();
}

asio::awaitable<int> Bot::Step(std::string_view line) {
  text_.clear();
  if (const bool sent = co_await Send(line); !sent) co_return kClosed;
  // The reply is told by what it says, not by the first prompt: in a crowded room what others
  // said can arrive, with its own prompt, before it.
  const Instant deadline = context_.clock.Now() + Ms(context_.options.reply_timeout_ms);
  int outcome = co_await Expect(kStepOutcomes, {}, deadline);
  if (outcome == kStepArrived) {
    const std::string shown = consumed_;  // through "[Exits: "
    if (const int end = co_await Expect(kExitsEnd, {}, deadline); end < 0) {
      outcome = end;
    } else {
      exits_ = ParseExits("[Exits: " + consumed_);
      room_title_ = RoomTitle(shown);
    }
  }
  if (outcome == kTimedOut) context_.Error("spread_reply_timeout");
  co_return outcome;
}

int BackExit(const std::vector<std::string>& exits, std::string_view step) {
  for (size_t i = 0; i < exits.size(); ++i) {
    // "out" undoes "enter" or "in", whichever the room calls it.
    if (exits[i] == ReverseDirection(step) || (step == "out" && exits[i] == "in")) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string_view ReverseDirection(std::string_view direction) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kOpposites = {{
      {"north", "south"},
      {"east", "west"},
      {"up", "down"},
      {"northeast", "southwest"},
      {"northwest", "southeast"},
      {"enter", "out"},  // before in/out: the world's huts are entered and left this way
      {"in", "out"},
  }};
  for (const auto& [a, b] : kOpposites) {
    if (direction == a) return b;
    if (direction == b) return a;
  }
  return {};
}

std::string RoomTitle(std::string_view text) {
  // The world shows a room as its title in cyan, description lines, then "[Exits: ...]". A
  // channel line is cyan too but starts with "[channel]".
  constexpr std::string_view kCyan = "\x1b[36m";
  size_t end = text.rfind("[Exits: ");
  if (end == std::string_view::npos) return {};
  while (end > 0) {
    const size_t start = text.rfind('\n', end - 1);
    const size_t line_start = start == std::string_view::npos ? 0 : start + 1;
    std::string_view line = text.substr(line_start, end - line_start);
    // The prompt has no newline of its own: what follows it starts on its line.
    while (line.starts_with("> ")) line.remove_prefix(2);
    if (line.starts_with(kCyan) && !line.substr(kCyan.size()).starts_with("[")) {
      line.remove_prefix(kCyan.size());
      line = line.substr(0, line.find('\x1b'));
      while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
      return std::string(line);
    }
    if (start == std::string_view::npos) break;
    end = start;
  }
  return {};
}

asio::awaitable<void> Bot::Play() {
  const SwarmOptions& o = context_.options;
  while (!stop_ && !closed_) {
    const int64_t think_ms = o.think_ms / 2 + random_.Uniform(0, o.think_ms);
    co_await Sleep(context_.clock.Now() + Ms(think_ms));
    if (stop_ || closed_) break;
    const Behaviour behaviour = o.mix.Pick(random_);
    if (behaviour == Behaviour::kIdle) {
      ++context_.idles;
      continue;
    }
    ++context_.commands_sent;
    if (context_.measuring) ++context_.commands_in_window;
    ++context_.commands_by_behaviour[std::string(BehaviourName(behaviour))];
    const bool walked_or_looked = behaviour == Behaviour::kWalk || behaviour == Behaviour::kLook;
    const std::string line = Command(behaviour);
    if (const bool done = co_await Exchange(line, walked_or_looked, true); !done) break;
  }
}

asio::awaitable<void> Bot::Quit() {
  quitting_ = true;
  const bool mux = context_.options.dialect == Dialect::kTinyMux;
  const Instant deadline = context_.clock.Now() + Ms(kQuitWaitMs);
  const auto refused = [&] {
    return !mux && text_.find(kRefusedWhileFighting) != std::string::npos;
  };
  for (int attempt = 0; attempt < kQuitAttemptsMax && !closed_; ++attempt) {
    text_.clear();
    const std::string line = mux ? "QUIT" : "quit";
    if (const bool sent = co_await Send(line); !sent) co_return;
    while (!closed_ && !refused() && context_.clock.Now() < deadline) co_await Wait(deadline);
    if (closed_ || context_.clock.Now() >= deadline) break;
    // The world does not let a fighter quit: flee first, as a player would, then try again
    // (a flee can fail, so this may take a few rounds).
    const std::string flee = "flee";
    if (const bool sent = co_await Send(flee); !sent) co_return;
    const Instant pause = std::min(deadline, context_.clock.Now() + Ms(kFleePauseMs));
    while (!closed_ && context_.clock.Now() < pause) co_await Wait(pause);
  }
  if (!closed_) context_.Error("quit_timeout");
}

asio::awaitable<void> Bot::Run() {
  const size_t slot = static_cast<size_t>(index_) % context_.endpoints.size();
  if (context_.options.transport == TransportKind::kTelnet) {
    transport_ = MakeTelnetTransport(context_.executor);
  } else {
    transport_ = MakeWebSocketTransport(context_.executor, context_.hosts[slot]);
  }
  const Instant began = context_.clock.Now();
  const Status connected = co_await transport_->Connect(context_.endpoints[slot]);
  if (!connected.ok()) {
    if (!stop_) context_.Error("connect");
    DoneSpreading();
    transport_->Close();
    co_return;
  }
  connected_ = true;
  ++context_.connected_now;
  ++context_.connected_total;
  reader_done_ = false;
  asio::co_spawn(context_.executor, ReadLoop(), [this](std::exception_ptr) {
    reader_done_ = true;
    Wake();
  });
  // No co_await inside ?: (GCC 12 destroys the temporaries twice).
  bool logged_in = false;
  if (context_.options.dialect == Dialect::kTinyMux) {
    logged_in = co_await LogInTinyMux();
  } else {
    logged_in = co_await LogIn();
  }
  if (logged_in) {
    context_.login.Add(
        std::chrono::duration_cast<std::chrono::microseconds>(context_.clock.Now() - began).count(),
        context_.random);
    playing_ = true;
    ++context_.playing_now;
    ++context_.playing_total;
    co_await Spread();
    co_await Play();
    if (stop_ && !closed_) co_await Quit();
    --context_.playing_now;
  }
  DoneSpreading();  // if it never got to
  transport_->Close();
  // The socket is closed, so the reader's pending read ends now; it must end before the bot
  // may be destroyed.
  while (!reader_done_) co_await Wait(context_.clock.Now() + Ms(kQuitWaitMs));
  --context_.connected_now;
}

}  // namespace telos::sim
