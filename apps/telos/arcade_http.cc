#include "arcade_http.h"

#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "telos/arcade/digest.h"
#include "telos/base/limits.h"
#include "telos/world/names.h"

namespace telos::app {
namespace {

namespace json = boost::json;
constexpr std::string_view kRoundsPrefix = "/api/arcade/rounds/";

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kUnknownResult: return 504;
    default: return 503;
  }
}

std::string CodeName(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kPermissionDenied: return "permission_denied";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kAlreadyExists: return "already_exists";
    case StatusCode::kFailedPrecondition: return "failed_precondition";
    case StatusCode::kResourceExhausted: return "resource_exhausted";
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kUnknownResult: return "result_unknown";
    default: return "unavailable";
  }
}

net::HttpResponse Refuse(const Status& s) {
  return net::HttpResponse::Error(HttpStatusOf(s), CodeName(s), s.message());
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    const int v = Base64Value(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// The request body's object, or a 400 saying why not.
Result<json::object> BodyObject(const net::HttpRequest& req) {
  boost::system::error_code ec;
  json::value parsed = json::parse(req.body, ec);
  if (ec || !parsed.is_object()) {
    return Status::InvalidArgument("the body must be a JSON object");
  }
  return parsed.as_object();
}

Result<std::string> StringField(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr || !v->is_string() || v->as_string().empty()) {
    return Status::InvalidArgument("\"" + std::string(name) + "\" must be a non-empty string");
  }
  return std::string(v->as_string());
}

Result<int64_t> IntField(const json::object& o, std::string_view name, bool required) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr && !required) return 0;
  if (v == nullptr || !v->is_int64()) {
    return Status::InvalidArgument("\"" + std::string(name) + "\" must be an integer");
  }
  return v->as_int64();
}

// Which characters a name and password proved, remembered for kArcadeHttpCredentialTtlMs so
// that a client betting over HTTP pays one password hash a minute, not one per request. Keyed
// by an HMAC under a per-process random key: the passwords themselves are never kept.
class CredentialCache {
 public:
  CredentialCache() {
    std::random_device device;
    for (uint8_t& b : key_) b = static_cast<uint8_t>(device());
  }

  std::optional<std::vector<std::string>> Find(std::string_view name, std::string_view password) {
    const arcade::Hash digest = Digest(name, password);
    std::lock_guard lock(mu_);
    auto it = entries_.find(digest);
    if (it == entries_.end()) return std::nullopt;
    if (it->second.expires <= Clock::now()) {
      entries_.erase(it);
      return std::nullopt;
    }
    return it->second.character_keys;
  }

  void Remember(std::string_view name, std::string_view password,
                std::vector<std::string> character_keys) {
    const arcade::Hash digest = Digest(name, password);
    const auto now = Clock::now();
    std::lock_guard lock(mu_);
    if (entries_.size() >= limits::kArcadeHttpCredentialsMax) {
      std::erase_if(entries_, [now](const auto& entry) { return entry.second.expires <= now; });
    }
    // Still full of live entries: start again rather than grow (each costs one more hash).
    if (entries_.size() >= limits::kArcadeHttpCredentialsMax) entries_.clear();
    entries_[digest] = {std::move(character_keys),
                        now + std::chrono::milliseconds(limits::kArcadeHttpCredentialTtlMs)};
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::vector<std::string> character_keys;
    Clock::time_point expires;
  };
  arcade::Hash Digest(std::string_view name, std::string_view password) const {
    std::string message(name);
    message.push_back('\0');  // names hold no NUL, so name/password pairs cannot collide
    message.append(password);
    return arcade::HmacSha256(key_, message);
  }

  arcade::Hash key_{};
  std::mutex mu_;
  std::map<arcade::Hash, Entry> entries_;
};

// The character the caller may act for: the Basic credentials' account must own it. A refusal
// that is not about the credentials (the account service busy or down, a throttled address)
// comes back as itself, so the client is told to wait rather than that its password is wrong.
Result<std::string> Caller(const net::HttpRequest& req, const json::object& body,
                           account::AccountDesk& desk, CredentialCache& credentials_seen) {
  auto credentials = ParseBasicAuth(req.Header("authorization"));
  if (!credentials.ok()) return credentials.status();
  auto character = StringField(body, "character");
  if (!character.ok()) return character.status();
  std::optional<std::vector<std::string>> keys =
      credentials_seen.Find(credentials->first, credentials->second);
  if (!keys) {
    auto account = desk.Authenticate(credentials->first, credentials->second, req.remote_address);
    if (!account.ok()) {
      const StatusCode code = account.status().code();
      if (code == StatusCode::kUnavailable || code == StatusCode::kResourceExhausted) {
        return account.status();
      }
      return Status::PermissionDenied("the account name or password is wrong");
    }
    auto characters = desk.Characters(account->ticket);
    if (!characters.ok()) return characters.status();
    keys.emplace();
    for (const account::CharacterSummary& c : *characters) keys->push_back(world::NameKey(c.name));
    credentials_seen.Remember(credentials->first, credentials->second, *keys);
  }
  const std::string key = world::NameKey(*character);
  for (const std::string& owned : *keys) {
    if (owned == key) return key;
  }
  return Status::PermissionDenied("the account has no character called '" + *character + "'");
}

// Sends a wager to the casino and waits for its answer (the handler runs on the blocking pool).
Result<arcade::WagerAnswer> Await(const std::function<void(arcade::Casino::Done)>& request) {
  auto promise = std::make_shared<std::promise<Result<arcade::WagerAnswer>>>();
  std::future<Result<arcade::WagerAnswer>> answer = promise->get_future();
  request([promise](Result<arcade::WagerAnswer> a) { promise->set_value(std::move(a)); });
  if (answer.wait_for(std::chrono::milliseconds(limits::kArcadeHttpWaitMs)) !=
      std::future_status::ready) {
    return Status::UnknownResult("the arcade did not answer in time; retry with the same key");
  }
  return answer.get();
}

json::object AnswerJson(const arcade::WagerAnswer& a) {
  return json::object{{"game", a.game},        {"round", a.position},       {"stake", a.stake},
                      {"target", a.target},    {"cashout", a.cashout_x100}, {"payout", a.payout},
                      {"replayed", a.replayed}};
}

}  // namespace

Result<std::pair<std::string, int64_t>> ParseRoundId(std::string_view id) {
  const size_t dash = id.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == id.size()) {
    return Status::InvalidArgument("a round id is <game>-<round>, e.g. dice-17");
  }
  int64_t position = 0;
  const std::string_view digits = id.substr(dash + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), position);
  if (ec != std::errc() || end != digits.data() + digits.size() || position < 0) {
    return Status::InvalidArgument("a round id is <game>-<round>, e.g. dice-17");
  }
  return std::pair<std::string, int64_t>{std::string(id.substr(0, dash)), position};
}

Result<std::pair<std::string, std::string>> ParseBasicAuth(std::string_view header) {
  constexpr std::string_view kBasic = "Basic ";
  const Status refused =
      Status::PermissionDenied("log in with HTTP Basic: the account's name and password");
  if (!header.starts_with(kBasic)) return refused;
  std::optional<std::string> decoded = Base64Decode(header.substr(kBasic.size()));
  if (!decoded) return refused;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos || colon == 0) return refused;
  return std::pair<std::string, std::string>{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

void AddArcadeRoutes(net::HttpServer& http, arcade::Casino& casino, account::AccountDesk& desk,
                     BlockingRunner blocking) {
  auto credentials_seen = std::make_shared<CredentialCache>();
  http.HandlePrefix(std::string(kRoundsPrefix), [&casino](const net::HttpRequest& req) {
    auto id = ParseRoundId(std::string_view(req.path).substr(kRoundsPrefix.size()));
    if (!id.ok()) return Refuse(id.status());
    auto proof = casino.Round(id->first, id->second);
    if (!proof.ok()) return Refuse(proof.status());
    json::object body{{"id", id->first + "-" + std::to_string(id->second)},
                      {"game", proof->game},
                      {"round", proof->position},
                      {"chain", proof->chain},
                      {"commitment", proof->commitment},
                      {"public_seed", proof->public_seed},
                      {"hash", proof->hash},
                      {"next_hash", proof->next_hash},
                      {"verified", proof->verified}};
    if (proof->crash_x100 > 0) body.emplace("crash", proof->crash_x100);
    if (proof->roll >= 0) body.emplace("roll", proof->roll);
    return net::HttpResponse::Json(200, json::serialize(body));
  });
  http.HandleBlocking("/api/arcade/bet",
                      [&casino, &desk, credentials_seen](const net::HttpRequest& req) {
                        auto body = BodyObject(req);
                        if (!body.ok()) return Refuse(body.status());
                        auto game = StringField(*body, "game");
                        auto key = StringField(*body, "key");
                        auto stake = IntField(*body, "stake", true);
                        auto target = IntField(*body, "target", false);
                        if (!game.ok()) return Refuse(game.status());
                        if (!key.ok()) return Refuse(key.status());
                        if (!stake.ok()) return Refuse(stake.status());
                        if (!target.ok()) return Refuse(target.status());
                        auto player = Caller(req, *body, desk, *credentials_seen);
                        if (!player.ok()) return Refuse(player.status());
                        auto answer = Await([&](arcade::Casino::Done done) {
                          casino.Bet(*game, *player, *stake, *target, *key, std::move(done));
                        });
                        if (!answer.ok()) return Refuse(answer.status());
                        return net::HttpResponse::Json(200, json::serialize(AnswerJson(*answer)));
                      },
                      blocking, {"POST"});
  http.HandleBlocking("/api/arcade/cashout",
                      [&casino, &desk, credentials_seen](const net::HttpRequest& req) {
                        auto body = BodyObject(req);
                        if (!body.ok()) return Refuse(body.status());
                        auto key = StringField(*body, "key");
                        if (!key.ok()) return Refuse(key.status());
                        auto player = Caller(req, *body, desk, *credentials_seen);
                        if (!player.ok()) return Refuse(player.status());
                        auto answer = Await([&](arcade::Casino::Done done) {
                          casino.CashOut("crash", *player, *key, std::move(done));
                        });
                        if (!answer.ok()) return Refuse(answer.status());
                        return net::HttpResponse::Json(200, json::serialize(AnswerJson(*answer)));
                      },
                      std::move(blocking), {"POST"});
}

}  // namespace telos::app
