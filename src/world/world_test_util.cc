#include "world_test_util.h"

#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"

namespace telos::world::testing {

TempDir::TempDir() {
  std::random_device device;
  path_ = std::filesystem::temp_directory_path() /
          ("telos_world_" + std::to_string(device()) + std::to_string(device()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::Write(const std::string& rel, const std::string& text) const {
  std::filesystem::path file = path_ / rel;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

void WriteSmallPack(const TempDir& dir) {
  dir.Write("pack.toml", R"(name = "test"
version = "0.1.0"
start_room = "lobby:atrium"
)");
  dir.Write("zones/lobby.toml", R"([zone]
id = "lobby"
name = "The Lobby"
kind = "lobby"
reset_minutes = 5

[[rooms]]
id = "atrium"
name = "Bright Atrium"
description = """
Sunlight falls through a glass roof.
A fountain murmurs here."""
flags = ["safe"]

  [[rooms.exits]]
  dir = "north"
  to = "hall"
  description = "A quiet hall lies north."

  [[rooms.exits]]
  dir = "east"
  to = "town:square"

  [[rooms.extras]]
  keywords = ["fountain"]
  text = "Coins glint at the bottom of the fountain."

[[rooms]]
id = "hall"
name = "Quiet Hall"
description = "Portraits line the walls."
flags = ["safe", "indoors"]

  [[rooms.exits]]
  dir = "south"
  to = "atrium"

  [[rooms.exits]]
  dir = "portal"
  to = "town:den"

[[items]]
id = "bread"
name = "a loaf of bread"
keywords = ["bread", "loaf"]
ground = "A loaf of bread sits here."
type = "food"
value = 2
use_heal = 5

[[items]]
id = "haste_potion"
name = "a fizzing potion"
keywords = ["potion", "fizzing"]
ground = "A fizzing potion stands here."
type = "potion"
value = 20
use_affect = "haste"
use_seconds = 2

[[items]]
id = "poison_potion"
name = "a murky potion"
keywords = ["murky", "potion"]
ground = "A murky potion stands here."
type = "potion"
value = 1
use_affect = "poison"
use_seconds = 10

[[help]]
keywords = ["rules"]
text = "Be kind."
)");
  dir.Write("zones/town.toml", R"([zone]
id = "town"
name = "Harrowgate"
kind = "town"
reset_minutes = 1

[[rooms]]
id = "square"
name = "Market Square"
description = "Stalls crowd the square."
flags = ["bank"]

  [[rooms.exits]]
  dir = "west"
  to = "lobby:atrium"

  [[rooms.exits]]
  dir = "north"
  to = "smithy"

  [[rooms.exits]]
  dir = "south"
  to = "alley"

[[rooms]]
id = "smithy"
name = "The Smithy"
description = "Heat rolls off the forge."
flags = ["safe", "indoors"]

  [[rooms.exits]]
  dir = "south"
  to = "square"

  [[rooms.exits]]
  dir = "enter"
  to = "store_room"

[[rooms]]
id = "store_room"
name = "The Store Room"
description = "Sacks of charcoal are stacked to the beams."
flags = ["safe", "indoors"]

  [[rooms.exits]]
  dir = "out"
  to = "smithy"

[[rooms]]
id = "alley"
name = "Dark Alley"
description = "Rubbish and shadows."

  [[rooms.exits]]
  dir = "north"
  to = "square"

[[rooms]]
id = "den"
name = "Wolf Den"
description = "Bones crunch underfoot."

  [[rooms.exits]]
  dir = "out"
  to = "alley"

[[items]]
id = "short_sword"
name = "a short sword"
keywords = ["sword", "short"]
ground = "A short sword lies in the dust."
description = "A plain, well-kept blade."
type = "weapon"
slot = "wield"
value = 30
weight = 3
damage = "1d6+1"

[[items]]
id = "leather_cap"
name = "a leather cap"
keywords = ["cap", "leather"]
ground = "A leather cap lies here."
type = "armor"
slot = "head"
value = 10
armor = 2

[[mobs]]
id = "smith"
name = "the smith"
keywords = ["smith"]
ground = "The smith hammers at a glowing blade."
level = 10
hp = 100
flags = ["shopkeeper", "sentinel"]

[[mobs]]
id = "rat"
name = "a sewer rat"
keywords = ["rat"]
ground = "A sewer rat sniffs along the wall."
description = "Mangy, bold, and far too large."
level = 1
hp = 8
damage = "1d3"
exp = 150
gold = 7
flags = ["sentinel"]

[[mobs]]
id = "wolf"
name = "a grey wolf"
keywords = ["wolf", "grey"]
ground = "A grey wolf bares its teeth."
level = 3
hp = 20
damage = "1d4"
exp = 40
flags = ["aggressive", "sentinel"]

[[shops]]
keeper = "smith"
sells = ["short_sword", "leather_cap"]
buy_percent = 100
sell_percent = 50

[[resets]]
mob = "smith"
room = "smithy"

[[resets]]
mob = "rat"
room = "alley"

[[resets]]
mob = "wolf"
room = "den"

[[resets]]
item = "leather_cap"
room = "square"
)");
}

void FakeSink::Deliver(PlayerOutput output) {
  ++deliveries;
  std::string_view text = output.text;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines_.emplace_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  for (OutputEvent& event : output.events) events.push_back(std::move(event));
  if (output.disconnect) disconnected = true;
  if (output.echo != PlayerOutput::Echo::kUnchanged) {
    echo_on = output.echo == PlayerOutput::Echo::kOn;
    ++echo_changes;
  }
}

std::string FakeSink::Take() {
  std::string out;
  for (const std::string& line : lines_) out += line + "\n";
  lines_.clear();
  return out;
}

void FakeMail::Send(std::string from, std::string to, std::string subject, std::string body,
                    std::function<void(Status)> done) {
  auto box = boxes.find(NameKey(to));
  if (box == boxes.end()) {
    done(Status::NotFound("no such character"));
    return;
  }
  // PostgreSQL's text columns refuse invalid UTF-8; so does this fake.
  if (!IsValidUtf8(subject) || !IsValidUtf8(body)) {
    done(Status::InvalidArgument("invalid UTF-8"));
    return;
  }
  MailMessage message;
  message.header = {next_id++, from, subject, 0, false};
  message.body = body;
  box->second.insert(box->second.begin(), message);
  done(Status::Ok());
}

void FakeMail::List(std::string owner, std::function<void(Result<std::vector<MailHeader>>)> done) {
  std::vector<MailHeader> headers;
  for (const MailMessage& m : boxes[owner]) headers.push_back(m.header);
  done(headers);
}

void FakeMail::Read(std::string owner, int64_t id, std::function<void(Result<MailMessage>)> done) {
  for (MailMessage& m : boxes[owner]) {
    if (m.header.id == id) {
      m.header.read = true;
      done(m);
      return;
    }
  }
  done(Status::NotFound("no such letter"));
}

void FakePasswords::Change(std::string name_key, std::string old_password, std::string new_password,
                           std::function<void(Status)> done) {
  if (passwords[name_key] != old_password) {
    done(Status::PermissionDenied("wrong password"));
    return;
  }
  passwords[name_key] = new_password;
  done(Status::Ok());
}

TestWorld::TestWorld(const std::filesystem::path& pack_dir, uint64_t seed, int64_t output_pulse_ms,
                     size_t crowd_players, SocialPort* social, ArcadePort* arcade) {
  std::vector<Problem> problems;
  Result<Pack> loaded = LoadPack(pack_dir, &problems);
  for (const Problem& p : problems) ADD_FAILURE() << p.ToString();
  RELEASE_ASSERT(loaded.ok(), loaded.status().ToString());
  pack = std::make_shared<const Pack>(std::move(loaded).value());
  logger = std::make_unique<Logger>("world", LogLevel::kInfo,
                                    std::make_shared<spdlog::sinks::ostream_sink_mt>(log_stream_));
  ZoneDeps deps;
  deps.clock = &clock;
  deps.logger = logger.get();
  deps.metrics = &metrics;
  deps.persistence = &persistence;
  deps.mail = &mail;
  deps.passwords = &passwords;
  deps.game_events = &game_events;
  deps.records = &records;
  deps.social = social;
  deps.arcade = arcade;
  deps.output_pulse_ms = output_pulse_ms;
  deps.output_pulse_crowd_players = crowd_players;
  host = std::make_unique<WorldHost>(
      pack, deps,
      [this](const std::string&) {
        return std::shared_ptr<Executor>(std::shared_ptr<Executor>(), &executor);
      },
      seed);
  Status status = host->StartAllZones();
  RELEASE_ASSERT(status.ok(), status.ToString());
  executor.RunDue();
}

TestWorld::~TestWorld() {
  for (const std::string& zone : host->RunningZones()) {
    (void)host->StopZone(zone, [](std::vector<PlayerTransfer>) {});
  }
  executor.RunReady();
  logger->Flush();
}

std::shared_ptr<FakeSink> TestWorld::Login(const std::string& name, const std::string& room) {
  CharacterState state = NewCharacter(name, pack->start_room);
  if (!room.empty()) state.room = *ParseRef(room, "");
  return LoginState(std::move(state));
}

std::shared_ptr<FakeSink> TestWorld::LoginState(CharacterState state) {
  auto sink = std::make_shared<FakeSink>();
  std::string name = state.name;
  mail.boxes[NameKey(name)];
  Status status = host->Login(std::move(state), sink);
  RELEASE_ASSERT(status.ok(), status.ToString());
  executor.RunReady();
  sinks_[name] = sink;
  return sink;
}

std::string TestWorld::Do(const std::string& name, const std::string& line) {
  Status status = host->Submit(name, line);
  RELEASE_ASSERT(status.ok(), status.ToString());
  executor.RunReady();
  return sinks_.at(name)->Take();
}

void TestWorld::Beat(int count) {
  for (int i = 0; i < count; ++i) {
    clock.Advance(Millis(limits::kZoneHeartbeatMs));
    executor.RunDue();
  }
}

}  // namespace telos::world::testing
