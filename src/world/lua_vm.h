// LuaVm: one sandboxed Lua 5.4 state per zone, running the zone's scripts.
//
// Each script file runs once at load in its own environment table (so two scripts may both
// define on_enter); its global functions are the hooks. Scripts see only the safe base
// functions, string, math (random goes to the zone's seeded Random), table and `telos`; not
// coroutine, utf8, load, collectgarbage or string.dump, and chunks load as text only.
//
// The budget contract: a call (Load's run of the chunk, or Call, with every call nested inside
// it through the host) ends within about its instruction budget's worth of work, whatever the
// script does, and the state never holds more than its memory cap.
// - Lua instructions are counted by a count hook. Work done in C is charged to the same
//   budget: every allocation by the byte (limits::kLuaBytesPerInstruction), and the library
//   functions whose work grows with an argument (string.rep's count, table.concat's range,
//   string scans, sorting, pattern matching by the step) before they start. No single
//   allocation exceeds limits::kLuaBlockBytesMax.
// - When the budget runs out or an allocation is refused, the call is stopped: from then on
//   the hook raises before every instruction, and pcall/xpcall (replaced here) raise the stop
//   again instead of catching it, so no handler, __close or loop of the script runs on. The
//   error object is made in advance, since the heap may be full. xpcall's handler runs after
//   unwinding as a plain budgeted call, never inside the hook (where Lua turns hooks off).
// - Finalizers would run with hooks off, so setmetatable refuses a metatable with __gc.
// - A backstop, not the budget: given a clock, a call that has run longer than
//   limits::kLuaCallTimeMsMax (read at each count hook) is stopped too. It is for work no
//   charge can see (one comparison of two long strings scans both in C); a call within its
//   budget takes a few milliseconds, so only a runaway script meets it, and under a
//   ManualClock it never fires, which keeps tests and simulations deterministic.
// - A stopped call returns false and is logged with zone, script, line and the reason
//   ("instruction budget exhausted", "memory cap reached" or "time limit reached"); the zone
//   carries on. A stopped script makes no further host calls, and its nested calls are skipped.
//
// Timers: telos.after(ms, fn) and telos.every(ms, fn) keep `fn` in the registry and hand its
// reference to the host (ScriptHost::ScriptAfter), which owns the schedule and calls it back
// through CallRef, each firing a call of its own under the budget, and gives the reference back
// with Release when the timer ends. A VM torn down drops every reference with its state.
//
// Thread safety: none; owned by a ZoneCore and used on its executor only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/log.h"

struct lua_State;
struct lua_Debug;

namespace telos::world {

struct ActorInfo {
  uint64_t id = 0;
  std::string name;
  bool is_player = false;
  int level = 1;
  int hp = 0;
  int max_hp = 0;
  std::string room;
  std::string race;  // players: race and class ids (empty without game.toml); mobs: empty
  std::string char_class;
};

using FlagValue = std::variant<std::string, double>;

// What scripts can do to the zone. ZoneCore implements it.
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  virtual std::optional<ActorInfo> DescribeActor(uint64_t id) = 0;
  virtual void ScriptSend(uint64_t actor, std::string_view text) = 0;
  virtual void ScriptEcho(std::string_view room, std::string_view text) = 0;
  virtual void ScriptSay(uint64_t actor, std::string_view text) = 0;
  virtual void ScriptEmote(uint64_t actor, std::string_view text) = 0;
  virtual bool ScriptMove(uint64_t actor, std::string_view room) = 0;
  virtual void ScriptHeal(uint64_t actor, int amount) = 0;
  virtual void ScriptDamage(uint64_t actor, int amount) = 0;
  virtual bool ScriptAffect(uint64_t actor, std::string_view name, int64_t seconds) = 0;
  virtual bool ScriptGive(uint64_t actor, std::string_view item) = 0;
  virtual int64_t ScriptRandom(int64_t lo, int64_t hi) = 0;
  virtual double ScriptUnit() = 0;
  virtual const FlagValue* ScriptFlag(std::string_view key) = 0;
  virtual bool ScriptSetFlag(std::string_view key, FlagValue value) = 0;
  // Schedules the function the VM holds as `ref` to be called (LuaVm::CallRef) after
  // `delay_ms`, and every `delay_ms` after that when `repeat`; `script` names it in logs.
  // Returns the timer's id (never 0), or 0 when refused; on 0 the VM keeps the reference.
  virtual uint64_t ScriptAfter(const std::string& script, int ref, int64_t delay_ms, bool repeat) {
    (void)script, (void)ref, (void)delay_ms, (void)repeat;
    return 0;
  }
  // Cancels a timer of this VM; false when there is none with that id (it already fired).
  virtual bool ScriptCancel(uint64_t timer) {
    (void)timer;
    return false;
  }
  // How many items `actor` carries (inventory and worn) made from `item` (a ref).
  virtual int ScriptHasItem(uint64_t actor, std::string_view item) {
    (void)actor, (void)item;
    return 0;
  }
};

// An argument to a hook.
struct LuaActor {
  uint64_t id;
};
struct LuaItem {
  uint64_t id;
  std::string name;
  std::string ref;
};
using LuaArg = std::variant<std::monostate, LuaActor, LuaItem, std::string>;

class LuaVm {
 public:
  // `clock` (may be null: no time backstop) must outlive the VM.
  LuaVm(std::string zone_id, Logger& logger, ScriptHost& host, size_t memory_cap_bytes,
        int64_t instruction_budget, const Clock* clock = nullptr);
  ~LuaVm();
  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;

  // Compiles and runs `source` once in a fresh environment named `script`. False on error
  // (logged).
  bool Load(const std::string& script, const std::string& source);
  bool Has(const std::string& script, const std::string& function);
  // Calls script.function(args...). False when it failed (logged) or does not exist. When it
  // returned and `truthy` is given, *truthy says whether its first result was neither nil nor
  // false (an on_command that handled the verb, a quest predicate that holds).
  bool Call(const std::string& script, const std::string& function, const std::vector<LuaArg>& args,
            bool* truthy = nullptr);
  // Calls the function held as `ref` (a timer's callback) as a call of `script`.
  bool CallRef(const std::string& script, int ref, const std::vector<LuaArg>& args);
  // Lets go of a reference handed to ScriptHost::ScriptAfter. Safe while a call runs.
  void Release(int ref);

  size_t memory_bytes() const { return used_bytes_; }
  int64_t errors() const { return errors_; }
  // How many VMs exist in this process right now: a zone torn down must give its VM back
  // (WorldHost::LiveLuaVms exposes it to the fleet tests).
  static int64_t LiveCount();
  // The last error message (tests).
  const std::string& last_error() const { return last_error_; }

 private:
  // Why the running call was stopped.
  enum class Stop { kNone, kBudget, kMemory, kTime };

  static void* Allocate(void* ud, void* ptr, size_t old_size, size_t new_size);
  static void CountHook(lua_State* L, lua_Debug* ar);
  // Stops the running call at its next instruction. Safe anywhere, the allocator included.
  void StopSoon(Stop why);
  // Raises the stop's error in L. REQUIRES: a stop; L is running a call (a hook or a C
  // function), with no C++ object alive in the frames it unwinds.
  int Raise(lua_State* L);
  // Takes `instructions` from the budget; raises when it is exhausted. Same REQUIRES as Raise.
  void Charge(lua_State* L, int64_t instructions);
  // Remembers the script and line the stop happened at (the first Lua frame up from L's top).
  void NoteWhere(lua_State* L);
  void InstallSandbox();
  void PushArg(const LuaArg& arg);
  // Whether a call of `script` may start now (not inside a stopped call, not too deep, memory
  // left); logs why not. `what` names the call in the log.
  bool MayCall(const std::string& script, const std::string& what);
  bool Protected(const std::string& script, int nargs, bool* truthy = nullptr);
  void LogError(const std::string& script, const std::string& message);

  friend struct LuaApi;

  std::string zone_id_;
  Logger& logger_;
  ScriptHost& host_;
  size_t cap_bytes_;
  size_t used_bytes_ = 0;
  int64_t budget_;
  int64_t instructions_left_ = 0;
  size_t charged_bytes_ = 0;  // allocated bytes not yet a whole instruction
  Stop stop_ = Stop::kNone;
  std::string stop_where_;  // "scripts/x.lua:12"
  int budget_message_ = 0;  // registry references of the prepared error messages
  int memory_message_ = 0;
  int time_message_ = 0;
  const Clock* clock_;
  Instant call_deadline_{};  // when the running call meets the time backstop (with a clock)
  int depth_ = 0;
  const std::string* running_script_ = nullptr;  // the script of the innermost running call
  int64_t errors_ = 0;
  std::string last_error_;
  std::string scratch_;  // strings handed to Lua outlive a possible longjmp here
  lua_State* L_ = nullptr;
};

}  // namespace telos::world
