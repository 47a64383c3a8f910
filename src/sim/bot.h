// Bot: one scripted player of the swarm (private to src/sim).
//
// States: connect -> log in (or create the account and the character) -> play until told to
// stop -> quit. Two coroutines share the bot: ReadLoop() reads everything the server sends
// (so broadcasts never back up on the server) and stamps the round trip of the command in
// flight; Run() drives the state machine and sends. Every wait is on one timer, `wake_`, that
// ReadLoop() and Stop() cancel whenever something changes, and that expires at the wait's
// deadline.
//
// Thread safety: everything runs on the swarm's single thread. The BotContext outlives the bot.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "explorer.h"
#include "telos/base/clock.h"
#include "telos/base/random.h"
#include "telos/sim/swarm.h"
#include "transport.h"

namespace telos::sim {

// Latencies in microseconds: every sample while they fit under the bound, then a uniform
// reservoir of them (Vitter's algorithm R) so percentiles stay fair on long runs.
class LatencyRecorder {
 public:
  explicit LatencyRecorder(size_t max_samples) : max_samples_(max_samples) {}
  void Add(int64_t us, Random& random);
  const std::vector<int64_t>& samples() const { return samples_; }
  uint64_t seen() const { return seen_; }
  uint64_t dropped() const { return seen_ - samples_.size(); }

 private:
  size_t max_samples_;
  uint64_t seen_ = 0;
  std::vector<int64_t> samples_;
};

// What the swarm shares with its bots.
struct BotContext {
  BotContext(boost::asio::any_io_executor e, const SwarmOptions& o, const Clock& c, uint64_t seed)
      : executor(std::move(e)),
        options(o),
        clock(c),
        random(seed),
        rtt(kRttSamplesMax),
        login(kRttSamplesMax) {}

  boost::asio::any_io_executor executor;
  const SwarmOptions& options;
  const Clock& clock;
  Random random;  // for the reservoirs
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;
  std::vector<std::string> hosts;  // Host header per endpoint
  std::vector<std::string> character_names;
  // Room titles seen while spreading, numbered once for every bot's Explorer.
  std::unordered_map<std::string, int32_t> room_ids;
  int32_t RoomId(const std::string& title) {
    return room_ids.try_emplace(title, static_cast<int32_t>(room_ids.size())).first->second;
  }

  bool stopping = false;   // the swarm is ending: closes are expected from now on
  bool measuring = false;  // inside the steady window: replies are RTT samples
  int64_t bots_started = 0;
  int64_t bots_running = 0;  // Run() coroutines not yet finished
  int64_t connected_now = 0;
  int64_t playing_now = 0;
  int64_t connected_total = 0;
  int64_t playing_total = 0;
  int64_t spreading_now = 0;  // bots still taking their spreading steps
  int64_t commands_sent = 0;
  int64_t commands_in_window = 0;  // sent while measuring
  int64_t replies = 0;
  int64_t idles = 0;
  int64_t errors = 0;
  int64_t unexpected_disconnects = 0;
  std::map<std::string, int64_t> commands_by_behaviour;
  std::map<std::string, int64_t> errors_by_kind;
  LatencyRecorder rtt;
  LatencyRecorder login;
  std::vector<int64_t> rtt_this_second_us;  // emptied by the series once a second

  void Error(const std::string& kind) {
    ++errors;
    ++errors_by_kind[kind];
  }
};

class Bot {
 public:
  Bot(BotContext& context, int64_t index, uint64_t seed);
  Bot(const Bot&) = delete;
  Bot& operator=(const Bot&) = delete;

  // The bot's whole life; returns once it has quit or failed and its reader has finished.
  boost::asio::awaitable<void> Run();
  // Asks the bot to quit at its next step. Safe at any time, from the swarm's thread.
  void Stop();

 private:
  enum : int { kClosed = -1, kFailed = -2, kTimedOut = -3 };

  boost::asio::awaitable<void> ReadLoop();
  boost::asio::awaitable<bool> LogIn();
  boost::asio::awaitable<bool> LogInTinyMux();
  void LoginFailed(int result);
  // The reply to the command in flight has ended (the prompt, or TinyMUX's OUTPUTSUFFIX).
  bool ReplyComplete() const;
  boost::asio::awaitable<void> Spread();
  // One spreading step (a direction, "look" or "flee"): sends it and waits for what it led to.
  // Returns a kStep* value for the outcomes named, or kClosed / kTimedOut (an error).
  // REQUIRES: `line` outlives the wait (callers pass a named local).
  enum : int {
    kStepArrived = 0,
    kStepFighting = 1,
    kStepExhausted = 2,
    kStepRefused = 3,  // no such exit
    kStepClosed = 4,   // its zone is not running
  };
  boost::asio::awaitable<int> Step(std::string_view line);
  static bool WillSpread(const SwarmOptions& options);
  void DoneSpreading();  // once per bot that WillSpread, whether or not it got to
  boost::asio::awaitable<void> Play();
  // Sends `line` and waits for its whole reply; false if the bot closed or was stopped.
  // Counts a reply or prompt timeout as an error. Remembers the exits the reply shows. Only a
  // `counted` exchange (the mix's, not spreading steps) adds to the replies and RTT samples.
  // REQUIRES: `line` outlives the wait (callers pass a named local).
  boost::asio::awaitable<bool> Exchange(std::string_view line, bool look_for_exits, bool counted);
  boost::asio::awaitable<void> Quit();
  // The index of the first of `wanted` seen in the text, consumed through the match; kFailed
  // if one of `failures` shows up first, kClosed on close or Stop(), kTimedOut at the deadline.
  // REQUIRES: both lists outlive the wait (they are namespace constants).
  boost::asio::awaitable<int> Expect(const std::vector<std::string_view>& wanted,
                                     const std::vector<std::string_view>& failures,
                                     Instant deadline);
  // Sleeps until the deadline, Stop() or a close; data arriving meanwhile is dropped. Where the
  // transport can skip ahead, the reader rests too and what arrived is dropped in one go at the
  // end: thousands of bots waking for every line of chatter would cost the client more than the
  // server spends sending it.
  boost::asio::awaitable<void> Sleep(Instant deadline);
  boost::asio::awaitable<void> Wait(Instant deadline);  // one wake-up at most
  // Sends `line` (copied first into line_: no by-value string crosses a coroutine boundary).
  boost::asio::awaitable<bool> Send(std::string_view line);
  std::string Command(Behaviour behaviour);
  void Wake() { wake_.cancel(); }
  void WakeReader() { reader_wake_.cancel(); }

  BotContext& context_;
  const int64_t index_;
  Random random_;
  std::unique_ptr<Transport> transport_;
  boost::asio::steady_timer wake_;
  boost::asio::steady_timer reader_wake_;  // the reader resting through a Sleep()
  std::string text_;                       // received and not yet consumed
  std::string line_;                       // the line being sent
  std::vector<std::string> exits_;
  std::string room_title_;  // of the room the last step showed
  bool connected_ = false;
  bool playing_ = false;
  bool closed_ = false;
  bool stop_ = false;
  bool quitting_ = false;
  bool reader_done_ = true;
  bool awaiting_reply_ = false;
  bool sleeping_ = false;       // in Sleep(): text arriving is dropped without waking the bot
  bool reader_rests_ = false;   // in Sleep() over a transport that can Rest()
  bool reader_parked_ = false;  // the reader waits out the rest with no read pending
  std::string consumed_;        // what the last successful Expect() consumed
  bool replied_ = false;
  bool counted_ = false;      // the exchange in flight is the mix's
  bool owes_spread_ = false;  // counted in spreading_now until DoneSpreading()
  Instant sent_at_{};
  int64_t says_ = 0;
};

// The opposite of a compass, vertical or in/out direction ("north" -> "south", "out" -> "enter");
// empty if it has none.
std::string_view ReverseDirection(std::string_view direction);

// The position in `exits` of the way back after taking `step` ("south" after "north"); -1 if
// there is none.
int BackExit(const std::vector<std::string>& exits, std::string_view step);

// The title of the last room shown in `text` (the cyan line above its "[Exits: ...]"), without
// colour codes; empty if none is shown.
std::string RoomTitle(std::string_view text);

// The exits named in the last "[Exits: a, b]" line of `text`; empty if none.
std::vector<std::string> ParseExits(std::string_view text);

}  // namespace telos::sim
