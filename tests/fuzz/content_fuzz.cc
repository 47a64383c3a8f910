// libFuzzer target for content pack zone files (docs/content.md): toml++ parsing, then the
// loader's checks of every table and field, then the cross-reference pass. LoadPack reads a
// folder, so the target makes one temp folder per process holding a fixed pack.toml and a small
// valid lobby zone, and writes each input as zones/fuzz.toml beside it: the fuzzed zone can link
// to the lobby and be linked to, as real zones are.
//
// Speed: the folder lives on tmpfs (/dev/shm) when there is one. On the ext4 /tmp, rewriting the
// zone file in place made ext4 flush and truncate it on every input (its replace-by-truncate
// safeguard): a fifth of the run was in the kernel. The input is written with one write(2) into
// the file opened O_TRUNC; what LoadPack reads is the same. What is left is the loader itself
// under ASan and libFuzzer's own bookkeeping of the loader's many edges (about a third of the
// run), so this target stays near a thousand inputs a second on a 2-core box: the price of
// loading a real pack folder, which is what the servers do.
//
// An input whose first line is exactly "# game.toml" is written as the pack's game.toml (races,
// classes, skills) instead, beside a fixed zone holding a trainer and a caster that name skills,
// so the fuzzer explores that file and its cross-references too (seeds: corpus/content/game_*).
//
// Besides "never crashes": a pack either loads with no problems or fails with at least one, and
// every exit of a loaded pack leads to a room that exists (the zones rely on it).
//
// Run locally:  build/dev/tests/fuzz/content_fuzz tests/fuzz/corpus/content \
//                 -dict=tests/fuzz/dict/content.dict -max_total_time=600
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_checks.h"
#include "telos/world/content.h"

namespace {

namespace fs = std::filesystem;
using telos::fuzz::Check;

void WriteFile(const fs::path& path, const char* data, size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  Check(fd >= 0);
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    Check(n > 0);
    done += static_cast<size_t>(n);
  }
  Check(::close(fd) == 0);
}

// tmpfs when the box has one (see the top of the file), else the usual temporary folder.
fs::path TempRoot() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return fs::temp_directory_path();
}

// The pack folder, made on first use and removed when the process exits.
class PackDir {
 public:
  PackDir() {
    std::string name = (TempRoot() / "telos_content_fuzz_XXXXXX").string();
    Check(mkdtemp(name.data()) != nullptr);
    dir_ = name;
    fs::create_directories(dir_ / "zones");
    const std::string pack =
        "name = \"fuzz\"\nversion = \"0.1.0\"\nstart_room = \"lobby:atrium\"\n";
    WriteFile(dir_ / "pack.toml", pack.data(), pack.size());
    const std::string lobby = R"([zone]
id = "lobby"
name = "The Lobby"
kind = "lobby"
reset_minutes = 5

[[rooms]]
id = "atrium"
name = "Bright Atrium"
description = "Sunlight falls through a glass roof."
flags = ["safe"]

  [[rooms.exits]]
  dir = "north"
  to = "fuzz:start"
)";
    WriteFile(dir_ / "zones" / "lobby.toml", lobby.data(), lobby.size());
  }
  ~PackDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

}  // namespace

// The zone beside a fuzzed game.toml: a trainer and a mob casting skills the game file may or
// may not define.
constexpr std::string_view kGameZone = R"([zone]
id = "fuzz"
name = "Fuzz"
kind = "town"
reset_minutes = 5

[[rooms]]
id = "start"
name = "Start"
description = "A room."

[[mobs]]
id = "trainer"
name = "a trainer"
keywords = ["trainer"]
ground = "A trainer waits."
level = 10
hp = 50
flags = ["sentinel", "trainer"]

[[mobs]]
id = "caster"
name = "a caster"
keywords = ["caster"]
ground = "A caster waits."
level = 3
hp = 20
spells = ["magic_missile", "kick"]
)";

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const PackDir dir;
  constexpr std::string_view kGameMarker = "# game.toml\n";
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::error_code ec;
  if (input.starts_with(kGameMarker)) {
    WriteFile(dir.path() / "game.toml", input.data(), input.size());
    WriteFile(dir.path() / "zones" / "fuzz.toml", kGameZone.data(), kGameZone.size());
  } else {
    fs::remove(dir.path() / "game.toml", ec);
    WriteFile(dir.path() / "zones" / "fuzz.toml", reinterpret_cast<const char*>(data), size);
  }
  std::vector<telos::world::Problem> problems;
  auto pack = telos::world::LoadPack(dir.path(), &problems);
  Check(pack.ok() == problems.empty());
  for (const auto& problem : problems) (void)problem.ToString();
  if (!pack.ok()) return 0;
  Check(pack->FindRoom(pack->start_room) != nullptr);
  for (const auto& zone : pack->zones) {
    for (const auto& room : zone.rooms) {
      for (const auto& exit : room.exits) Check(pack->FindRoom(exit.to) != nullptr);
    }
    for (const auto& mob : zone.mobs) {
      for (const auto& spell : mob.spells) Check(pack->game.FindSkill(spell) != nullptr);
    }
  }
  // A loaded game.toml resolves: every class skill exists, every teleport and summon target.
  const auto& game = pack->game;
  for (const auto& cls : game.classes) {
    for (const auto& entry : cls.skills) Check(game.FindSkill(entry.skill) != nullptr);
  }
  for (const auto& skill : game.skills) {
    if (skill.effect == telos::world::SkillEffect::kTeleport)
      Check(pack->FindRoom(skill.to) != nullptr);
    if (skill.effect == telos::world::SkillEffect::kSummon)
      Check(pack->FindMob(skill.mob) != nullptr);
  }
  if (!game.empty()) {
    Check(game.FindRace(game.default_race) != nullptr);
    Check(game.FindClass(game.default_class) != nullptr);
  }
  return 0;
}
