// LuaVm: sandbox, budget, memory cap and the `telos` API table.
//
// Lua reports errors with longjmp, which skips C++ destructors. So the C functions below read
// and check all their Lua arguments before creating any C++ object, and strings handed back to
// Lua are pushed from members (scratch_) rather than from locals.
#include "lua_vm.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <lua.hpp>

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::world {
namespace {

constexpr int kHookEveryInstructions = 1000;
constexpr int kCallDepthMax = 8;
// A charge is clamped to this, so subtracting it from the budget cannot overflow.
constexpr int64_t kChargeMax = int64_t{1} << 40;
constexpr const char* kBudgetReason = "instruction budget exhausted";
constexpr const char* kMemoryReason = "memory cap reached";
constexpr const char* kTimeReason = "time limit reached";
// A call is refused when less than this is left under the cap, so pushing its arguments (done
// outside a protected call) cannot run out of memory.
constexpr size_t kHeadroomBytes = 64 * 1024;

LuaVm* VmOf(lua_State* L) {
  return *static_cast<LuaVm**>(lua_getextraspace(L));
}

std::string ScriptKey(const std::string& script) {
  return "telos.script." + script;
}

// Replaces field `name` of the table on top of the stack with `guard`, which gets the original
// as its upvalue 1.
void Wrap(lua_State* L, const char* name, lua_CFunction guard) {
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, guard, 1);
  lua_setfield(L, -2, name);
}

int64_t BytesCost(size_t bytes) {
  return static_cast<int64_t>(
      std::min<size_t>(bytes / limits::kLuaBytesPerInstruction, static_cast<size_t>(kChargeMax)));
}

// How many elements the range i..j holds (0 when empty), without overflowing.
int64_t RangeCount(lua_Integer i, lua_Integer j) {
  if (j < i) return 0;
  lua_Unsigned span = static_cast<lua_Unsigned>(j) - static_cast<lua_Unsigned>(i);  // count - 1
  return span >= static_cast<lua_Unsigned>(kChargeMax) ? kChargeMax
                                                       : static_cast<int64_t>(span) + 1;
}

// Lua's rule for a string position: negative counts from the end.
lua_Integer StringPosition(lua_Integer pos, size_t length) {
  if (pos >= 0) return pos;
  if (static_cast<size_t>(-(pos + 1)) >= length) return 0;
  return static_cast<lua_Integer>(length) + pos + 1;
}

}  // namespace

struct LuaApi {
  // A stopped call makes no more host calls, not even from a C function run as a __close
  // handler while the stop unwinds.
  static ScriptHost& Host(lua_State* L) {
    LuaVm* vm = VmOf(L);
    if (vm->stop_ != LuaVm::Stop::kNone) vm->Raise(L);
    return vm->host_;
  }

  // A host call may run another script (an on_enter after a move); if that one was stopped,
  // this one must not carry on either, or a stopped call could hand on its loop.
  static int AfterHost(lua_State* L, int results) {
    LuaVm* vm = VmOf(L);
    if (vm->stop_ != LuaVm::Stop::kNone) return vm->Raise(L);
    return results;
  }

  static uint64_t HandleId(lua_State* L, int index) {
    luaL_checktype(L, index, LUA_TTABLE);
    lua_getfield(L, index, "id");
    lua_Integer id = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return static_cast<uint64_t>(id);
  }

  static std::string_view Text(lua_State* L, int index) {
    size_t length = 0;
    const char* text = luaL_checklstring(L, index, &length);
    return {text, length};
  }

  static int Send(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptSend(id, text);
    return AfterHost(L, 0);
  }
  static int Echo(lua_State* L) {
    std::string_view room = Text(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptEcho(room, text);
    return AfterHost(L, 0);
  }
  static int Say(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptSay(id, text);
    return AfterHost(L, 0);
  }
  static int Emote(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptEmote(id, text);
    return AfterHost(L, 0);
  }
  static int Move(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view room = Text(L, 2);
    bool ok = Host(L).ScriptMove(id, room);
    lua_pushboolean(L, ok);
    return AfterHost(L, 1);
  }
  static int Heal(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    lua_Integer amount = luaL_checkinteger(L, 2);
    Host(L).ScriptHeal(id, static_cast<int>(std::clamp<lua_Integer>(amount, 0, 1'000'000)));
    return AfterHost(L, 0);
  }
  static int Damage(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    lua_Integer amount = luaL_checkinteger(L, 2);
    Host(L).ScriptDamage(id, static_cast<int>(std::clamp<lua_Integer>(amount, 0, 1'000'000)));
    return AfterHost(L, 0);
  }
  static int Affect(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view name = Text(L, 2);
    lua_Integer seconds = luaL_checkinteger(L, 3);
    bool ok = Host(L).ScriptAffect(id, name, std::clamp<lua_Integer>(seconds, 0, 86'400));
    lua_pushboolean(L, ok);
    return AfterHost(L, 1);
  }
  static int Give(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view item = Text(L, 2);
    bool ok = Host(L).ScriptGive(id, item);
    lua_pushboolean(L, ok);
    return AfterHost(L, 1);
  }
  static int Random(lua_State* L) {
    lua_Integer lo = luaL_checkinteger(L, 1);
    lua_Integer hi = luaL_checkinteger(L, 2);
    if (lo > hi) return luaL_error(L, "telos.random: lo > hi");
    lua_pushinteger(L, Host(L).ScriptRandom(lo, hi));
    return 1;
  }
  // math.random with Lua's own signatures, backed by the zone's seeded Random.
  static int MathRandom(lua_State* L) {
    int args = lua_gettop(L);
    if (args == 0) {
      lua_pushnumber(L, Host(L).ScriptUnit());
      return 1;
    }
    lua_Integer lo = 1;
    lua_Integer hi = luaL_checkinteger(L, 1);
    if (args >= 2) {
      lo = hi;
      hi = luaL_checkinteger(L, 2);
    }
    if (lo > hi) return luaL_error(L, "math.random: interval is empty");
    lua_pushinteger(L, Host(L).ScriptRandom(lo, hi));
    return 1;
  }
  static int NoOp(lua_State*) { return 0; }

  // telos.after(ms, fn) and telos.every(ms, fn): the host owns the schedule; the function
  // stays in the registry until the host releases it.
  static int Timer(lua_State* L, bool repeat) {
    lua_Integer delay_ms = luaL_checkinteger(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    LuaVm* vm = VmOf(L);
    ScriptHost& host = Host(L);
    lua_settop(L, 2);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    static const std::string kNoScript = "?";
    const std::string& script = vm->running_script_ ? *vm->running_script_ : kNoScript;
    uint64_t id = host.ScriptAfter(script, ref, delay_ms, repeat);
    if (id == 0) {
      luaL_unref(L, LUA_REGISTRYINDEX, ref);
      lua_pushnil(L);
    } else {
      lua_pushinteger(L, static_cast<lua_Integer>(id));
    }
    return AfterHost(L, 1);
  }
  static int After(lua_State* L) { return Timer(L, false); }
  static int Every(lua_State* L) { return Timer(L, true); }
  static int Cancel(lua_State* L) {
    lua_Integer id = luaL_checkinteger(L, 1);
    bool ok = id > 0 && Host(L).ScriptCancel(static_cast<uint64_t>(id));
    lua_pushboolean(L, ok);
    return AfterHost(L, 1);
  }
  static int HasItem(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view item = Text(L, 2);
    int count = Host(L).ScriptHasItem(id, item);
    lua_pushinteger(L, count);
    return AfterHost(L, 1);
  }
  static int Flag(lua_State* L) {
    std::string_view key = Text(L, 1);
    const FlagValue* value = Host(L).ScriptFlag(key);
    if (value == nullptr) {
      lua_pushnil(L);
    } else if (const double* number = std::get_if<double>(value)) {
      lua_Number n = *number;
      if (n == static_cast<lua_Number>(static_cast<lua_Integer>(n))) {
        lua_pushinteger(L, static_cast<lua_Integer>(n));
      } else {
        lua_pushnumber(L, n);
      }
    } else {
      // The host keeps the string alive; pushing copies it into Lua.
      const std::string& text = std::get<std::string>(*value);
      lua_pushlstring(L, text.data(), text.size());
    }
    return 1;
  }
  static int SetFlag(lua_State* L) {
    std::string_view key = Text(L, 1);
    int type = lua_type(L, 2);
    if (type != LUA_TNUMBER && type != LUA_TSTRING && type != LUA_TNIL) {
      return luaL_error(L, "telos.set_flag: value must be a string, number or nil");
    }
    bool ok = false;
    if (type == LUA_TNUMBER) {
      ok = Host(L).ScriptSetFlag(key, FlagValue(static_cast<double>(lua_tonumber(L, 2))));
    } else if (type == LUA_TSTRING) {
      std::string_view text = Text(L, 2);
      ok = Host(L).ScriptSetFlag(key, FlagValue(std::string(text)));
    } else {
      ok = Host(L).ScriptSetFlag(key, FlagValue(std::string()));
    }
    lua_pushboolean(L, ok);
    return AfterHost(L, 1);
  }

  // --- The budget's guards. Each is installed in place of a library function (the original is
  // upvalue 1 where there is one).

  // Calls the original function with this call's arguments and returns all its results.
  static int CallOriginal(lua_State* L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }

  // What a function that scans its string arguments costs: one instruction per argument,
  // plus their bytes (work in C that the count hook never sees).
  static int64_t ArgumentCost(lua_State* L) {
    int args = lua_gettop(L);
    size_t bytes = 0;
    for (int i = 1; i <= args; ++i) {
      if (lua_type(L, i) == LUA_TSTRING) bytes += lua_rawlen(L, i);
    }
    return args + BytesCost(bytes);
  }

  // For functions that scan their string arguments (tonumber, rawequal, string.format, ...).
  static int ChargedPerByte(lua_State* L) {
    VmOf(L)->Charge(L, ArgumentCost(L));
    return CallOriginal(L);
  }
  // For functions that visit each argument once (select, math.max, string.char, ...).
  static int ChargedPerArgument(lua_State* L) {
    VmOf(L)->Charge(L, lua_gettop(L));
    return CallOriginal(L);
  }

  // string.rep loops once per copy even when the copies are empty, so the count is paid too.
  static int Rep(lua_State* L) {
    size_t length = 0;
    size_t separator = 0;
    luaL_checklstring(L, 1, &length);
    lua_Integer copies = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &separator);
    if (copies > 0) {
      auto n = static_cast<lua_Unsigned>(copies);
      lua_Unsigned limit = limits::kLuaBlockBytesMax;
      bool too_long = (length > 0 && n > limit / length) ||
                      (separator > 0 && n - 1 > limit / separator) ||
                      n * length + (n - 1) * separator > limit;
      if (too_long) {
        return luaL_error(L, "string.rep: the result would be longer than %d bytes",
                          static_cast<int>(limits::kLuaBlockBytesMax));
      }
      VmOf(L)->Charge(L, RangeCount(1, copies) / limits::kLuaCopiesPerInstruction +
                             BytesCost(static_cast<size_t>(n * length + (n - 1) * separator)));
    }
    return CallOriginal(L);
  }

  // string.byte pushes one value per byte of its range.
  static int Byte(lua_State* L) {
    size_t length = 0;
    luaL_checklstring(L, 1, &length);
    lua_Integer first = StringPosition(luaL_optinteger(L, 2, 1), length);
    lua_Integer last = StringPosition(luaL_optinteger(L, 3, first), length);
    first = std::max<lua_Integer>(first, 1);
    last = std::min<lua_Integer>(last, static_cast<lua_Integer>(length));
    VmOf(L)->Charge(L, lua_gettop(L) + RangeCount(first, last));
    return CallOriginal(L);
  }

  // #t as the table library reads it (a __len metamethod runs under the budget).
  static lua_Integer Length(lua_State* L, int index) {
    luaL_checkany(L, index);
    return luaL_len(L, index);
  }

  // table.concat(t, sep, i, j) and table.unpack(t, i, j) visit every index of the range.
  static int TableConcat(lua_State* L) {
    lua_Integer first = luaL_optinteger(L, 3, 1);
    lua_Integer last = lua_isnoneornil(L, 4) ? Length(L, 1) : luaL_checkinteger(L, 4);
    VmOf(L)->Charge(L, lua_gettop(L) + RangeCount(first, last));
    return CallOriginal(L);
  }
  static int TableUnpack(lua_State* L) {
    lua_Integer first = luaL_optinteger(L, 2, 1);
    lua_Integer last = lua_isnoneornil(L, 3) ? Length(L, 1) : luaL_checkinteger(L, 3);
    VmOf(L)->Charge(L, lua_gettop(L) + RangeCount(first, last));
    return CallOriginal(L);
  }
  // table.insert(t, pos, v) and table.remove(t, pos) shift every element after pos.
  static int TableInsert(lua_State* L) {
    int64_t shifted = 0;
    if (lua_gettop(L) >= 3) {
      // #t + 1 wraps as the table library's own arithmetic does.
      auto end = static_cast<lua_Integer>(static_cast<lua_Unsigned>(Length(L, 1)) + 1);
      shifted = RangeCount(luaL_checkinteger(L, 2), end);
    }
    VmOf(L)->Charge(L, lua_gettop(L) + shifted);
    return CallOriginal(L);
  }
  static int TableRemove(lua_State* L) {
    int64_t shifted = 0;
    if (lua_gettop(L) >= 2) shifted = RangeCount(luaL_checkinteger(L, 2), Length(L, 1));
    VmOf(L)->Charge(L, lua_gettop(L) + shifted);
    return CallOriginal(L);
  }
  // table.move(a1, f, e, t, a2) copies f..e.
  static int TableMove(lua_State* L) {
    int64_t moved = RangeCount(luaL_checkinteger(L, 2), luaL_checkinteger(L, 3));
    VmOf(L)->Charge(L, lua_gettop(L) + moved);
    return CallOriginal(L);
  }
  // table.sort compares about n log n times; without a comparator each comparison of two
  // strings scans them in C, so their bytes are paid for each time too.
  static int TableSort(lua_State* L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = Length(L, 1);
    int64_t rounds = 1;
    while (rounds < 62 && (lua_Integer{1} << rounds) < n) ++rounds;
    LuaVm* vm = VmOf(L);
    // The comparisons are paid first, so that the scan below is already paid for.
    vm->Charge(L, lua_gettop(L) + std::min(RangeCount(1, n) * rounds, kChargeMax));
    if (lua_isnoneornil(L, 2) && n > 1) {
      size_t bytes = 0;
      for (lua_Integer i = 1; i <= n; ++i) {
        if (lua_rawgeti(L, 1, i) == LUA_TSTRING) bytes += lua_rawlen(L, -1);
        lua_pop(L, 1);
      }
      vm->Charge(L, std::min(BytesCost(bytes) * rounds, kChargeMax));
    }
    return CallOriginal(L);
  }

  // setmetatable refuses __gc: Lua runs finalizers with hooks off (and again at lua_close), so a
  // finalizer would be code outside any budget. Lua 5.4 marks an object for finalization only
  // when setmetatable sees __gc, so a __gc added to the metatable later is never run.
  static int SetMetatable(lua_State* L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
      lua_pushliteral(L, "__gc");
      bool has_gc = lua_rawget(L, 2) != LUA_TNIL;
      lua_pop(L, 1);
      if (has_gc) return luaL_error(L, "setmetatable: __gc finalizers are not allowed in scripts");
    }
    return CallOriginal(L);
  }

  // pcall: an error of a stopped call (budget or memory) is raised again, so no script can catch
  // the end of its own budget and carry on. A memory error stops the call: the VM is at its cap,
  // and carrying on would only run the collector again and again on a full heap.
  static int PCall(lua_State* L) {
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    int rc = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
    LuaVm* vm = VmOf(L);
    if (rc == LUA_ERRMEM) vm->StopSoon(LuaVm::Stop::kMemory);
    if (vm->stop_ != LuaVm::Stop::kNone) return vm->Raise(L);
    if (rc == LUA_OK) return lua_gettop(L);
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }

  // xpcall(f, handler, ...): the handler runs after the error has unwound, as a plain call
  // under the budget. (Lua's own xpcall runs it where the error was raised, which for the
  // budget's error is inside the count hook, where hooks are off: an unbudgeted handler.) With
  // no debug library a handler cannot read the failed stack anyway.
  static int XPCall(lua_State* L) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int args = lua_gettop(L) - 2;
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);  // f, handler, true, f, args...
    int rc = lua_pcall(L, args, LUA_MULTRET, 0);
    LuaVm* vm = VmOf(L);
    if (rc == LUA_ERRMEM) vm->StopSoon(LuaVm::Stop::kMemory);
    if (vm->stop_ != LuaVm::Stop::kNone) return vm->Raise(L);
    if (rc == LUA_OK) return lua_gettop(L) - 2;
    lua_pushvalue(L, 2);
    lua_insert(L, -2);  // ..., handler, error
    rc = lua_pcall(L, 1, 1, 0);
    if (rc == LUA_ERRMEM) vm->StopSoon(LuaVm::Stop::kMemory);
    if (vm->stop_ != LuaVm::Stop::kNone) return vm->Raise(L);
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }

  static void PaySteps(lua_State* L, int64_t steps) {
    VmOf(L)->Charge(L, steps / limits::kLuaPatternStepsPerInstruction);
  }
};

namespace {

// --- Pattern matching that pays by the step.
//
// Lua's matcher backtracks, and its worst case is exponential in the pattern (15 lazy items on
// 30 characters take ~10^11 steps), all inside one C call the count hook never sees. So
// string.find, match, gmatch and gsub are implemented here with the semantics of Lua 5.4's
// patterns (manual section 6.4.1) by a matcher that counts its steps and charges them to the
// call's budget as it goes; an exhausted budget raises from inside the match.

void PaySteps(lua_State* L, int64_t steps) {
  LuaApi::PaySteps(L, steps);
}

constexpr int kPatternCapturesMax = 32;  // as Lua's own matcher (LUA_MAXCAPTURES)
constexpr ptrdiff_t kCaptureUnfinished = -1;
constexpr ptrdiff_t kCapturePosition = -2;
constexpr int64_t kStepsPerPayment = 256;  // steps are charged in batches of this many
constexpr const char* kPatternSpecials = "^$*+?.([%-";

unsigned char Byte(char c) {
  return static_cast<unsigned char>(c);
}

// Everything here is trivially destructible: a charge or an error may longjmp out of a match.
class Matcher {
 public:
  Matcher(lua_State* L, const char* subject, size_t subject_length, const char* pattern,
          size_t pattern_length)
      : L_(L),
        subject_(subject),
        subject_end_(subject + subject_length),
        pattern_end_(pattern + pattern_length) {}

  void Reset() {
    level_ = 0;
    depth_left_ = limits::kLuaPatternDepthMax;
  }

  // Where a match of pattern `p` starting at `s` ends, or nullptr.
  const char* Match(const char* s, const char* p) {
    if (depth_left_-- == 0) luaL_error(L_, "pattern too complex");
    for (;;) {
      Step(1);
      if (p == pattern_end_) break;
      if (*p == '(') {
        s = p[1] == ')' ? StartCapture(s, p + 2, kCapturePosition)
                        : StartCapture(s, p + 1, kCaptureUnfinished);
        break;
      }
      if (*p == ')') {
        s = EndCapture(s, p + 1);
        break;
      }
      if (*p == '$' && p + 1 == pattern_end_) {
        if (s != subject_end_) s = nullptr;
        break;
      }
      if (*p == '%' && p[1] == 'b') {
        s = MatchBalance(s, p + 2);
        if (s == nullptr) break;
        p += 4;
        continue;
      }
      if (*p == '%' && p[1] == 'f') {
        p += 2;
        if (*p != '[') luaL_error(L_, "missing '[' after '%%f' in pattern");
        const char* set_end = ClassEnd(p);
        unsigned char before = s == subject_ ? '\0' : Byte(s[-1]);
        unsigned char here = s == subject_end_ ? '\0' : Byte(*s);
        if (!MatchSet(before, p, set_end - 1) && MatchSet(here, p, set_end - 1)) {
          p = set_end;
          continue;
        }
        s = nullptr;
        break;
      }
      if (*p == '%' && std::isdigit(Byte(p[1])) != 0) {
        s = MatchCapture(s, Byte(p[1]));
        if (s == nullptr) break;
        p += 2;
        continue;
      }
      // A single character class, perhaps followed by a quantifier.
      const char* class_end = ClassEnd(p);
      char quantifier = class_end < pattern_end_ ? *class_end : '\0';
      if (!SingleMatch(s, p, class_end)) {
        if (quantifier == '*' || quantifier == '?' || quantifier == '-') {
          p = class_end + 1;
          continue;
        }
        s = nullptr;
        break;
      }
      if (quantifier == '?') {
        const char* result = Match(s + 1, class_end + 1);
        if (result != nullptr) {
          s = result;
          break;
        }
        p = class_end + 1;
        continue;
      }
      if (quantifier == '+') {
        s = MaxExpand(s + 1, p, class_end);
        break;
      }
      if (quantifier == '*') {
        s = MaxExpand(s, p, class_end);
        break;
      }
      if (quantifier == '-') {
        s = MinExpand(s, p, class_end);
        break;
      }
      ++s;
      p = class_end;
    }
    ++depth_left_;
    return s;
  }

  // Pushes capture `i` (or, when there are none and i == 0, the whole match s..e).
  void PushCapture(int i, const char* s, const char* e) {
    if (i >= level_) {
      if (i != 0) luaL_error(L_, "invalid capture index %%%d", i + 1);
      lua_pushlstring(L_, s, static_cast<size_t>(e - s));
      return;
    }
    ptrdiff_t length = captures_[i].length;
    if (length == kCaptureUnfinished) luaL_error(L_, "unfinished capture");
    if (length == kCapturePosition) {
      lua_pushinteger(L_, captures_[i].start - subject_ + 1);
    } else {
      lua_pushlstring(L_, captures_[i].start, static_cast<size_t>(length));
    }
  }

  // Pushes every capture, or the whole match s..e when the pattern has none and s is given.
  int PushCaptures(const char* s, const char* e) {
    int count = (level_ == 0 && s != nullptr) ? 1 : level_;
    luaL_checkstack(L_, count, "too many captures");
    for (int i = 0; i < count; ++i) PushCapture(i, s, e);
    return count;
  }

  int level() const { return level_; }
  const char* subject_end() const { return subject_end_; }

  // Charges for `steps` more steps.
  void Step(int64_t steps) {
    unpaid_ += steps;
    if (unpaid_ >= kStepsPerPayment) {
      PaySteps(L_, unpaid_);
      unpaid_ = 0;
    }
  }
  // Charges for scanning or comparing `bytes` bytes (memchr, memcmp: cheaper than steps).
  void Scan(size_t bytes) { Step(static_cast<int64_t>((bytes + 7) / 8)); }
  // Pays what is left, rounded up: many small matches must not each get their steps free.
  void PayRest() {
    if (unpaid_ > 0) PaySteps(L_, unpaid_ + limits::kLuaPatternStepsPerInstruction - 1);
    unpaid_ = 0;
  }

 private:
  struct Capture {
    const char* start;
    ptrdiff_t length;
  };

  // The end of the single character class starting at p.
  const char* ClassEnd(const char* p) {
    if (*p == '%') {
      if (p + 1 >= pattern_end_) luaL_error(L_, "malformed pattern (ends with '%%')");
      return p + 2;
    }
    if (*p == '[') {
      ++p;
      if (p < pattern_end_ && *p == '^') ++p;
      // The first character is part of the set even when it is ']'.
      do {
        if (p >= pattern_end_) luaL_error(L_, "malformed pattern (missing ']')");
        char c = *p++;
        if (c == '%' && p < pattern_end_) ++p;
      } while (p >= pattern_end_ || *p != ']');
      return p + 1;
    }
    return p + 1;
  }

  static bool ClassHas(unsigned char c, unsigned char class_letter) {
    bool in = false;
    switch (std::tolower(class_letter)) {
      case 'a': in = std::isalpha(c) != 0; break;
      case 'c': in = std::iscntrl(c) != 0; break;
      case 'd': in = std::isdigit(c) != 0; break;
      case 'g': in = std::isgraph(c) != 0; break;
      case 'l': in = std::islower(c) != 0; break;
      case 'p': in = std::ispunct(c) != 0; break;
      case 's': in = std::isspace(c) != 0; break;
      case 'u': in = std::isupper(c) != 0; break;
      case 'w': in = std::isalnum(c) != 0; break;
      case 'x': in = std::isxdigit(c) != 0; break;
      default: return class_letter == c;  // an escaped character stands for itself
    }
    return std::isupper(class_letter) != 0 ? !in : in;
  }

  // Whether c is in the set [ ... ] from p (at '[') to last (at ']').
  static bool MatchSet(unsigned char c, const char* p, const char* last) {
    bool want = true;
    if (p[1] == '^') {
      want = false;
      ++p;
    }
    while (++p < last) {
      if (*p == '%') {
        ++p;
        if (ClassHas(c, Byte(*p))) return want;
      } else if (p[1] == '-' && p + 2 < last) {
        if (Byte(*p) <= c && c <= Byte(p[2])) return want;
        p += 2;
      } else if (Byte(*p) == c) {
        return want;
      }
    }
    return !want;
  }

  bool SingleMatch(const char* s, const char* p, const char* class_end) const {
    if (s >= subject_end_) return false;
    unsigned char c = Byte(*s);
    switch (*p) {
      case '.': return true;
      case '%': return ClassHas(c, Byte(p[1]));
      case '[': return MatchSet(c, p, class_end - 1);
      default: return Byte(*p) == c;
    }
  }

  const char* MatchBalance(const char* s, const char* p) {
    if (p + 1 >= pattern_end_) luaL_error(L_, "malformed pattern (missing arguments to '%%b')");
    if (s >= subject_end_ || *s != *p) return nullptr;
    char open = p[0];
    char close = p[1];
    int depth = 1;
    while (++s < subject_end_) {
      Step(1);
      if (*s == close) {
        if (--depth == 0) return s + 1;
      } else if (*s == open) {
        ++depth;
      }
    }
    return nullptr;
  }

  const char* MaxExpand(const char* s, const char* p, const char* class_end) {
    ptrdiff_t count = 0;
    while (SingleMatch(s + count, p, class_end)) {
      Step(1);
      ++count;
    }
    for (; count >= 0; --count) {
      const char* result = Match(s + count, class_end + 1);
      if (result != nullptr) return result;
    }
    return nullptr;
  }

  const char* MinExpand(const char* s, const char* p, const char* class_end) {
    for (;;) {
      const char* result = Match(s, class_end + 1);
      if (result != nullptr) return result;
      if (!SingleMatch(s, p, class_end)) return nullptr;
      ++s;
    }
  }

  const char* StartCapture(const char* s, const char* p, ptrdiff_t what) {
    if (level_ >= kPatternCapturesMax) luaL_error(L_, "too many captures");
    captures_[level_] = Capture{s, what};
    ++level_;
    const char* result = Match(s, p);
    if (result == nullptr) --level_;
    return result;
  }

  const char* EndCapture(const char* s, const char* p) {
    int open = -1;
    for (int i = level_ - 1; i >= 0; --i) {
      if (captures_[i].length == kCaptureUnfinished) {
        open = i;
        break;
      }
    }
    if (open < 0) luaL_error(L_, "invalid pattern capture");
    captures_[open].length = s - captures_[open].start;
    const char* result = Match(s, p);
    if (result == nullptr) captures_[open].length = kCaptureUnfinished;
    return result;
  }

  const char* MatchCapture(const char* s, unsigned char digit) {
    int i = digit - '1';
    if (i < 0 || i >= level_ || captures_[i].length == kCaptureUnfinished) {
      luaL_error(L_, "invalid capture index %%%d", i + 1);
    }
    auto length = static_cast<size_t>(captures_[i].length);
    if (captures_[i].length < 0) return nullptr;  // a position capture holds no text
    Scan(length);
    if (static_cast<size_t>(subject_end_ - s) >= length &&
        std::memcmp(captures_[i].start, s, length) == 0) {
      return s + length;
    }
    return nullptr;
  }

  lua_State* L_;
  const char* subject_;
  const char* subject_end_;
  const char* pattern_end_;
  int level_ = 0;
  int depth_left_ = limits::kLuaPatternDepthMax;
  int64_t unpaid_ = 0;
  Capture captures_[kPatternCapturesMax];
};

// Lua's rule for a start position (string.find's init).
size_t StartPosition(lua_Integer pos, size_t length) {
  if (pos > 0) return static_cast<size_t>(pos);
  if (pos == 0) return 1;
  if (pos < -static_cast<lua_Integer>(length)) return 1;
  return length + static_cast<size_t>(pos) + 1;
}

bool HasSpecials(const char* p, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (p[i] != '\0' && std::strchr(kPatternSpecials, p[i]) != nullptr) return true;
  }
  return false;
}

// The first occurrence of needle in haystack, each byte looked at paid through `counter`.
const char* PlainFind(Matcher& counter, const char* haystack, size_t haystack_length,
                      const char* needle, size_t needle_length) {
  if (needle_length == 0) return haystack;
  if (needle_length > haystack_length) return nullptr;
  const char* at = haystack;
  const char* last = haystack + (haystack_length - needle_length);  // the last possible start
  while (at <= last) {
    const auto* first = static_cast<const char*>(std::memchr(at, *needle, last - at + 1));
    counter.Scan(static_cast<size_t>((first != nullptr ? first : last) - at) + 1);
    if (first == nullptr) return nullptr;
    counter.Scan(needle_length);
    if (std::memcmp(first + 1, needle + 1, needle_length - 1) == 0) return first;
    at = first + 1;
  }
  return nullptr;
}

// string.find (find) and string.match (!find).
int FindOrMatch(lua_State* L, bool find) {
  size_t subject_length = 0;
  size_t pattern_length = 0;
  const char* subject = luaL_checklstring(L, 1, &subject_length);
  const char* pattern = luaL_checklstring(L, 2, &pattern_length);
  size_t init = StartPosition(luaL_optinteger(L, 3, 1), subject_length) - 1;
  if (init > subject_length) {
    luaL_pushfail(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || !HasSpecials(pattern, pattern_length))) {
    Matcher counter(L, subject, subject_length, pattern, pattern_length);
    const char* found =
        PlainFind(counter, subject + init, subject_length - init, pattern, pattern_length);
    counter.PayRest();
    if (found == nullptr) {
      luaL_pushfail(L);
      return 1;
    }
    lua_pushinteger(L, found - subject + 1);
    lua_pushinteger(L, static_cast<lua_Integer>(found - subject + pattern_length));
    return 2;
  }
  bool anchored = pattern_length > 0 && *pattern == '^';
  if (anchored) {
    ++pattern;
    --pattern_length;
  }
  Matcher matcher(L, subject, subject_length, pattern, pattern_length);
  const char* start = subject + init;
  do {
    matcher.Reset();
    const char* end = matcher.Match(start, pattern);
    if (end != nullptr) {
      matcher.PayRest();
      if (!find) return matcher.PushCaptures(start, end);
      lua_pushinteger(L, start - subject + 1);
      lua_pushinteger(L, end - subject);
      return matcher.PushCaptures(nullptr, nullptr) + 2;
    }
    matcher.Step(1);
  } while (start++ < matcher.subject_end() && !anchored);
  matcher.PayRest();
  luaL_pushfail(L);
  return 1;
}

int Find(lua_State* L) {
  return FindOrMatch(L, true);
}
int MatchFn(lua_State* L) {
  return FindOrMatch(L, false);
}

// The iterator string.gmatch returns. Upvalues: subject, pattern, next start and end of the
// last match (offsets; -1 for none).
int GmatchStep(lua_State* L) {
  size_t subject_length = 0;
  size_t pattern_length = 0;
  const char* subject = lua_tolstring(L, lua_upvalueindex(1), &subject_length);
  const char* pattern = lua_tolstring(L, lua_upvalueindex(2), &pattern_length);
  lua_Integer next = lua_tointeger(L, lua_upvalueindex(3));
  lua_Integer last_end = lua_tointeger(L, lua_upvalueindex(4));
  Matcher matcher(L, subject, subject_length, pattern, pattern_length);
  for (const char* start = subject + next; start <= matcher.subject_end(); ++start) {
    matcher.Reset();
    const char* end = matcher.Match(start, pattern);
    // An empty match right where the last one ended is skipped (Lua 5.4).
    if (end != nullptr && end - subject != last_end) {
      matcher.PayRest();
      lua_pushinteger(L, end - subject);
      lua_copy(L, -1, lua_upvalueindex(3));
      lua_replace(L, lua_upvalueindex(4));
      return matcher.PushCaptures(start, end);
    }
    matcher.Step(1);
  }
  matcher.PayRest();
  return 0;
}

int Gmatch(lua_State* L) {
  size_t subject_length = 0;
  luaL_checklstring(L, 1, &subject_length);
  luaL_checkstring(L, 2);
  size_t init = StartPosition(luaL_optinteger(L, 3, 1), subject_length) - 1;
  if (init > subject_length) init = subject_length + 1;  // no match at all
  lua_settop(L, 2);
  lua_pushinteger(L, static_cast<lua_Integer>(init));
  lua_pushinteger(L, -1);
  lua_pushcclosure(L, &GmatchStep, 4);
  return 1;
}

// Appends the replacement for the match s..e to `buffer`; false when it kept the match as is.
bool AddReplacement(lua_State* L, Matcher& matcher, luaL_Buffer& buffer, const char* s,
                    const char* e, int repl_type) {
  if (repl_type == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    int count = matcher.PushCaptures(s, e);
    lua_call(L, count, 1);
  } else if (repl_type == LUA_TTABLE) {
    matcher.PushCapture(0, s, e);
    lua_gettable(L, 3);
  } else {
    size_t length = 0;
    const char* text = lua_tolstring(L, 3, &length);
    matcher.Scan(length);
    const char* end = text + length;
    while (text < end) {
      const char* escape = static_cast<const char*>(std::memchr(text, '%', end - text));
      if (escape == nullptr) {
        luaL_addlstring(&buffer, text, end - text);
        break;
      }
      luaL_addlstring(&buffer, text, escape - text);
      char code = escape + 1 < end ? escape[1] : '\0';
      if (code == '%') {
        luaL_addchar(&buffer, '%');
      } else if (code == '0') {
        luaL_addlstring(&buffer, s, e - s);
      } else if (std::isdigit(Byte(code)) != 0) {
        matcher.PushCapture(code - '1', s, e);
        luaL_tolstring(L, -1, nullptr);
        lua_remove(L, -2);
        luaL_addvalue(&buffer);
      } else {
        luaL_error(L, "invalid use of '%%' in replacement string");
      }
      text = escape + 2;
    }
    return true;
  }
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    luaL_addlstring(&buffer, s, e - s);  // nil or false keeps the original text
    return false;
  }
  if (lua_isstring(L, -1) == 0) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(&buffer);
  return true;
}

int Gsub(lua_State* L) {
  size_t subject_length = 0;
  size_t pattern_length = 0;
  const char* subject = luaL_checklstring(L, 1, &subject_length);
  const char* pattern = luaL_checklstring(L, 2, &pattern_length);
  int repl_type = lua_type(L, 3);
  lua_Integer max_replacements =
      luaL_optinteger(L, 4, static_cast<lua_Integer>(subject_length) + 1);
  luaL_argexpected(L,
                   repl_type == LUA_TNUMBER || repl_type == LUA_TSTRING ||
                       repl_type == LUA_TFUNCTION || repl_type == LUA_TTABLE,
                   3, "string/function/table");
  bool anchored = pattern_length > 0 && *pattern == '^';
  if (anchored) {
    ++pattern;
    --pattern_length;
  }
  luaL_Buffer buffer;
  luaL_buffinit(L, &buffer);
  Matcher matcher(L, subject, subject_length, pattern, pattern_length);
  const char* at = subject;
  const char* last_end = nullptr;
  lua_Integer replaced = 0;
  bool changed = false;
  while (replaced < max_replacements) {
    matcher.Reset();
    const char* end = matcher.Match(at, pattern);
    if (end != nullptr && end != last_end) {
      ++replaced;
      changed = AddReplacement(L, matcher, buffer, at, end, repl_type) || changed;
      at = last_end = end;
    } else if (at < matcher.subject_end()) {
      luaL_addchar(&buffer, *at++);
      matcher.Step(1);
    } else {
      break;
    }
    if (anchored) break;
  }
  matcher.PayRest();
  if (!changed) {
    lua_pushvalue(L, 1);
  } else {
    luaL_addlstring(&buffer, at, matcher.subject_end() - at);
    luaL_pushresult(&buffer);
  }
  lua_pushinteger(L, replaced);
  return 2;
}

}  // namespace

void* LuaVm::Allocate(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* vm = static_cast<LuaVm*>(ud);
  size_t old_bytes = ptr != nullptr ? old_size : 0;
  if (new_size == 0) {
    vm->used_bytes_ -= old_bytes;
    std::free(ptr);
    return nullptr;
  }
  if (new_size > old_bytes) {
    if (new_size > limits::kLuaBlockBytesMax ||
        vm->used_bytes_ + (new_size - old_bytes) > vm->cap_bytes_) {
      // Lua turns this into a "not enough memory" error, or (growing its string table) runs a
      // full collection and carries on; either way a call that reached the cap is over.
      if (vm->depth_ > 0) vm->StopSoon(Stop::kMemory);
      return nullptr;
    }
    if (vm->depth_ > 0) {
      // Building and copying (a concatenation, a table growing) is paid by the byte.
      vm->charged_bytes_ += new_size;
      if (vm->charged_bytes_ >= limits::kLuaBytesPerInstruction) {
        vm->instructions_left_ -= BytesCost(vm->charged_bytes_);
        vm->charged_bytes_ %= limits::kLuaBytesPerInstruction;
        if (vm->instructions_left_ < 0) vm->StopSoon(Stop::kBudget);
      }
    }
  }
  void* block = std::realloc(ptr, new_size);
  if (block == nullptr) return nullptr;
  vm->used_bytes_ = vm->used_bytes_ - old_bytes + new_size;
  return block;
}

void LuaVm::CountHook(lua_State* L, lua_Debug*) {
  LuaVm* vm = VmOf(L);
  if (vm->stop_ == Stop::kNone) {
    vm->instructions_left_ -= kHookEveryInstructions;
    bool late = vm->clock_ != nullptr && vm->clock_->Now() >= vm->call_deadline_;
    if (vm->instructions_left_ >= 0 && !late) return;
    vm->stop_ = vm->instructions_left_ < 0 ? Stop::kBudget : Stop::kTime;
  }
  vm->NoteWhere(L);
  vm->Raise(L);
}

void LuaVm::StopSoon(Stop why) {
  if (stop_ != Stop::kNone) return;
  stop_ = why;
  // Only one thread ever runs (no coroutines), so the next instruction of the call raises. It is
  // safe to set a hook from anywhere, even from inside the allocator (Lua allows it in signals).
  lua_sethook(L_, &LuaVm::CountHook, LUA_MASKCOUNT, 1);
}

int LuaVm::Raise(lua_State* L) {
  ASSERT(stop_ != Stop::kNone);
  // From now on the hook runs before every instruction and raises again, so whatever catches
  // this (a __close handler runs during unwinding) gets no instruction further. The message is
  // made in advance: raising must not allocate on a heap that may be full.
  lua_sethook(L, &LuaVm::CountHook, LUA_MASKCOUNT, 1);
  int message = stop_ == Stop::kMemory ? memory_message_
                : stop_ == Stop::kTime ? time_message_
                                       : budget_message_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, message);
  return lua_error(L);
}

void LuaVm::Charge(lua_State* L, int64_t instructions) {
  if (stop_ == Stop::kNone) {
    instructions_left_ -= std::clamp<int64_t>(instructions, 0, kChargeMax);
    if (instructions_left_ >= 0) return;
    stop_ = Stop::kBudget;
  }
  NoteWhere(L);
  Raise(L);
}

void LuaVm::NoteWhere(lua_State* L) {
  if (!stop_where_.empty()) return;
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "Sl", &ar) != 0 && ar.currentline > 0) {
      stop_where_ = std::string(ar.short_src) + ":" + std::to_string(ar.currentline);
      return;
    }
  }
}

namespace {
std::atomic<int64_t> live_vms{0};  // LuaVm::LiveCount
}  // namespace

int64_t LuaVm::LiveCount() {
  return live_vms.load(std::memory_order_relaxed);
}

LuaVm::LuaVm(std::string zone_id, Logger& logger, ScriptHost& host, size_t memory_cap_bytes,
             int64_t instruction_budget, const Clock* clock)
    : zone_id_(std::move(zone_id)),
      logger_(logger),
      host_(host),
      cap_bytes_(memory_cap_bytes),
      budget_(instruction_budget),
      clock_(clock) {
  L_ = lua_newstate(&LuaVm::Allocate, this);
  RELEASE_ASSERT(L_ != nullptr, "cannot create a Lua state");
  live_vms.fetch_add(1, std::memory_order_relaxed);
  *static_cast<LuaVm**>(lua_getextraspace(L_)) = this;
  lua_sethook(L_, &LuaVm::CountHook, LUA_MASKCOUNT, kHookEveryInstructions);
  instructions_left_ = budget_;
  lua_pushstring(L_, kBudgetReason);
  budget_message_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_pushstring(L_, kMemoryReason);
  memory_message_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_pushstring(L_, kTimeReason);
  time_message_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  InstallSandbox();
}

LuaVm::~LuaVm() {
  if (L_ != nullptr) lua_close(L_);
  live_vms.fetch_sub(1, std::memory_order_relaxed);
}

void LuaVm::InstallSandbox() {
  lua_State* L = L_;
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  lua_settop(L, 0);

  lua_pushglobaltable(L);
  for (const char* name : {"dofile", "loadfile", "load", "loadstring", "require", "collectgarbage",
                           "print", "warn", "module"}) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
  }
  // The budget's guards (LuaApi): pcall and xpcall that cannot catch a stopped call,
  // setmetatable without __gc, and library functions that pay for the work they do in C.
  lua_pushcfunction(L, &LuaApi::PCall);
  lua_setfield(L, -2, "pcall");
  lua_pushcfunction(L, &LuaApi::XPCall);
  lua_setfield(L, -2, "xpcall");
  Wrap(L, "setmetatable", &LuaApi::SetMetatable);
  Wrap(L, "select", &LuaApi::ChargedPerArgument);
  for (const char* name : {"tonumber", "rawequal"}) Wrap(L, name, &LuaApi::ChargedPerByte);
  // string.dump would hand out bytecode, which could be fed back to a loader elsewhere.
  lua_getfield(L, -1, "string");
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  // (len, sub, lower, upper and reverse do work in proportion to the string they allocate,
  // which the allocator charges.)
  Wrap(L, "char", &LuaApi::ChargedPerArgument);
  for (const char* name : {"format", "pack", "packsize", "unpack"}) {
    Wrap(L, name, &LuaApi::ChargedPerByte);
  }
  // The pattern functions are our own (see Matcher).
  lua_pushcfunction(L, &Find);
  lua_setfield(L, -2, "find");
  lua_pushcfunction(L, &MatchFn);
  lua_setfield(L, -2, "match");
  lua_pushcfunction(L, &Gmatch);
  lua_setfield(L, -2, "gmatch");
  lua_pushcfunction(L, &Gsub);
  lua_setfield(L, -2, "gsub");
  Wrap(L, "rep", &LuaApi::Rep);
  Wrap(L, "byte", &LuaApi::Byte);
  lua_pop(L, 1);
  lua_getfield(L, -1, "table");
  Wrap(L, "concat", &LuaApi::TableConcat);
  Wrap(L, "unpack", &LuaApi::TableUnpack);
  Wrap(L, "insert", &LuaApi::TableInsert);
  Wrap(L, "remove", &LuaApi::TableRemove);
  Wrap(L, "move", &LuaApi::TableMove);
  Wrap(L, "sort", &LuaApi::TableSort);
  Wrap(L, "pack", &LuaApi::ChargedPerArgument);
  lua_pop(L, 1);
  // Determinism: math.random draws from the zone's seeded Random; reseeding does nothing.
  lua_getfield(L, -1, "math");
  Wrap(L, "max", &LuaApi::ChargedPerArgument);
  Wrap(L, "min", &LuaApi::ChargedPerArgument);
  lua_pushcfunction(L, &LuaApi::MathRandom);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, &LuaApi::NoOp);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  static const luaL_Reg kTelos[] = {
      {"send", &LuaApi::Send},        {"echo", &LuaApi::Echo},     {"say", &LuaApi::Say},
      {"emote", &LuaApi::Emote},      {"move", &LuaApi::Move},     {"heal", &LuaApi::Heal},
      {"damage", &LuaApi::Damage},    {"affect", &LuaApi::Affect}, {"give", &LuaApi::Give},
      {"random", &LuaApi::Random},    {"flag", &LuaApi::Flag},     {"set_flag", &LuaApi::SetFlag},
      {"after", &LuaApi::After},      {"every", &LuaApi::Every},   {"cancel", &LuaApi::Cancel},
      {"has_item", &LuaApi::HasItem}, {nullptr, nullptr}};
  luaL_newlib(L, kTelos);
  lua_setfield(L, -2, "telos");
  lua_pop(L, 1);

  // Strings share one metatable; hide it so scripts cannot reach or change it.
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1)) {
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void LuaVm::LogError(const std::string& script, const std::string& message) {
  ++errors_;
  last_error_ = message;
  int64_t line = 0;
  std::string prefix = "scripts/" + script + ":";
  size_t at = message.find(prefix);
  if (at != std::string::npos) line = std::atoll(message.c_str() + at + prefix.size());
  logger_.Error("lua script error",
                {{"zone", zone_id_}, {"script", script}, {"line", line}, {"error", message}});
}

bool LuaVm::Protected(const std::string& script, int nargs, bool* truthy) {
  if (depth_ == 0) {
    instructions_left_ = budget_;
    charged_bytes_ = 0;
    stop_ = Stop::kNone;
    stop_where_.clear();
    if (clock_ != nullptr) call_deadline_ = clock_->Now() + Millis(limits::kLuaCallTimeMsMax);
    lua_sethook(L_, &LuaVm::CountHook, LUA_MASKCOUNT, kHookEveryInstructions);
  }
  ++depth_;
  const std::string* outer_script = running_script_;
  running_script_ = &script;
  int rc = lua_pcall(L_, nargs, truthy != nullptr ? 1 : 0, 0);
  running_script_ = outer_script;
  --depth_;
  // A nested call that ran out of memory stops its caller too (see LuaApi::AfterHost).
  if (rc == LUA_ERRMEM && stop_ == Stop::kNone) stop_ = Stop::kMemory;
  if (rc != LUA_OK) {
    std::string message;
    if (stop_ != Stop::kNone) {
      const char* reason = stop_ == Stop::kMemory ? kMemoryReason
                           : stop_ == Stop::kTime ? kTimeReason
                                                  : kBudgetReason;
      message = stop_where_.empty() ? reason : stop_where_ + ": " + reason;
    } else {
      const char* text = lua_tostring(L_, -1);
      message = text != nullptr ? text : "error object is not a string";
    }
    lua_pop(L_, 1);
    LogError(script, message);
    return false;
  }
  if (truthy != nullptr) {
    *truthy = lua_toboolean(L_, -1) != 0;
    lua_pop(L_, 1);
  }
  return true;
}

bool LuaVm::Load(const std::string& script, const std::string& source) {
  if (used_bytes_ + kHeadroomBytes > cap_bytes_) {
    LogError(script, "memory cap reached; script not loaded");
    return false;
  }
  std::string chunk_name = "@scripts/" + script;
  int rc = luaL_loadbufferx(L_, source.data(), source.size(), chunk_name.c_str(), "t");
  if (rc != LUA_OK) {
    const char* text = lua_tostring(L_, -1);
    std::string message = text != nullptr ? text : "load error";
    lua_pop(L_, 1);
    LogError(script, message);
    return false;
  }
  // The script's own environment: reads fall through to the sandbox globals.
  lua_newtable(L_);
  lua_newtable(L_);
  lua_pushglobaltable(L_);
  lua_setfield(L_, -2, "__index");
  lua_setmetatable(L_, -2);
  lua_pushvalue(L_, -1);
  lua_setfield(L_, LUA_REGISTRYINDEX, ScriptKey(script).c_str());
  const char* upvalue = lua_setupvalue(L_, -2, 1);  // the chunk's _ENV
  ASSERT(upvalue != nullptr);
  (void)upvalue;
  return Protected(script, 0);
}

bool LuaVm::Has(const std::string& script, const std::string& function) {
  lua_getfield(L_, LUA_REGISTRYINDEX, ScriptKey(script).c_str());
  if (!lua_istable(L_, -1)) {
    lua_pop(L_, 1);
    return false;
  }
  lua_pushlstring(L_, function.data(), function.size());
  lua_rawget(L_, -2);
  bool found = lua_isfunction(L_, -1);
  lua_pop(L_, 2);
  return found;
}

void LuaVm::PushArg(const LuaArg& arg) {
  if (const auto* actor = std::get_if<LuaActor>(&arg)) {
    std::optional<ActorInfo> info = host_.DescribeActor(actor->id);
    if (!info) {
      lua_pushnil(L_);
      return;
    }
    lua_createtable(L_, 0, 9);
    lua_pushinteger(L_, static_cast<lua_Integer>(info->id));
    lua_setfield(L_, -2, "id");
    lua_pushlstring(L_, info->name.data(), info->name.size());
    lua_setfield(L_, -2, "name");
    lua_pushboolean(L_, info->is_player);
    lua_setfield(L_, -2, "is_player");
    lua_pushinteger(L_, info->level);
    lua_setfield(L_, -2, "level");
    lua_pushinteger(L_, info->hp);
    lua_setfield(L_, -2, "hp");
    lua_pushinteger(L_, info->max_hp);
    lua_setfield(L_, -2, "max_hp");
    lua_pushlstring(L_, info->room.data(), info->room.size());
    lua_setfield(L_, -2, "room");
    lua_pushlstring(L_, info->race.data(), info->race.size());
    lua_setfield(L_, -2, "race");
    lua_pushlstring(L_, info->char_class.data(), info->char_class.size());
    lua_setfield(L_, -2, "class");
  } else if (const auto* item = std::get_if<LuaItem>(&arg)) {
    lua_createtable(L_, 0, 3);
    lua_pushinteger(L_, static_cast<lua_Integer>(item->id));
    lua_setfield(L_, -2, "id");
    lua_pushlstring(L_, item->name.data(), item->name.size());
    lua_setfield(L_, -2, "name");
    lua_pushlstring(L_, item->ref.data(), item->ref.size());
    lua_setfield(L_, -2, "ref");
  } else if (const auto* text = std::get_if<std::string>(&arg)) {
    lua_pushlstring(L_, text->data(), text->size());
  } else {
    lua_pushnil(L_);
  }
}

bool LuaVm::MayCall(const std::string& script, const std::string& what) {
  if (depth_ > 0 && stop_ != Stop::kNone) {
    LogError(script, what + ": the calling script was stopped; call skipped");
    return false;
  }
  if (depth_ >= kCallDepthMax) {
    LogError(script, what + ": scripts nested too deeply; call skipped");
    return false;
  }
  if (used_bytes_ + kHeadroomBytes > cap_bytes_) {
    // Give the collector a chance before refusing.
    lua_gc(L_, LUA_GCCOLLECT);
    if (used_bytes_ + kHeadroomBytes > cap_bytes_) {
      LogError(script, what + ": memory cap reached; call skipped");
      return false;
    }
  }
  return true;
}

bool LuaVm::Call(const std::string& script, const std::string& function,
                 const std::vector<LuaArg>& args, bool* truthy) {
  if (!MayCall(script, function)) return false;
  if (!lua_checkstack(L_, static_cast<int>(args.size()) + 4)) return false;
  lua_getfield(L_, LUA_REGISTRYINDEX, ScriptKey(script).c_str());
  if (!lua_istable(L_, -1)) {
    lua_pop(L_, 1);
    return false;
  }
  lua_pushlstring(L_, function.data(), function.size());
  lua_rawget(L_, -2);
  if (!lua_isfunction(L_, -1)) {
    lua_pop(L_, 2);
    return false;
  }
  lua_remove(L_, -2);  // the environment table
  for (const LuaArg& arg : args) PushArg(arg);
  return Protected(script, static_cast<int>(args.size()), truthy);
}

bool LuaVm::CallRef(const std::string& script, int ref, const std::vector<LuaArg>& args) {
  if (!MayCall(script, "timer")) return false;
  if (!lua_checkstack(L_, static_cast<int>(args.size()) + 4)) return false;
  if (lua_rawgeti(L_, LUA_REGISTRYINDEX, ref) != LUA_TFUNCTION) {
    lua_pop(L_, 1);
    return false;
  }
  for (const LuaArg& arg : args) PushArg(arg);
  return Protected(script, static_cast<int>(args.size()));
}

void LuaVm::Release(int ref) {
  luaL_unref(L_, LUA_REGISTRYINDEX, ref);
}

}  // namespace telos::world
