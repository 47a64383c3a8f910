// LuaVm: sandbox, budget, memory cap and the `telos` API table.
//
// Lua reports errors with longjmp, which skips C++ destructors. So the C functions below read
// and check all their Lua arguments before creating any C++ object, and strings handed back to
// Lua are pushed from members (scratch_) rather than from locals.
#include "lua_vm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <lua.hpp>

#include "telos/base/assert.h"

namespace telos::world {
namespace {

constexpr int kHookEveryInstructions = 1000;
constexpr int kCallDepthMax = 8;
// A call is refused when less than this is left under the cap, so pushing its arguments (done
// outside a protected call) cannot run out of memory.
constexpr size_t kHeadroomBytes = 64 * 1024;

LuaVm* VmOf(lua_State* L) {
  return *static_cast<LuaVm**>(lua_getextraspace(L));
}

std::string ScriptKey(const std::string& script) {
  return "telos.script." + script;
}

}  // namespace

struct LuaApi {
  static ScriptHost& Host(lua_State* L) { return VmOf(L)->host_; }

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
    return 0;
  }
  static int Echo(lua_State* L) {
    std::string_view room = Text(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptEcho(room, text);
    return 0;
  }
  static int Say(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptSay(id, text);
    return 0;
  }
  static int Emote(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view text = Text(L, 2);
    Host(L).ScriptEmote(id, text);
    return 0;
  }
  static int Move(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view room = Text(L, 2);
    bool ok = Host(L).ScriptMove(id, room);
    lua_pushboolean(L, ok);
    return 1;
  }
  static int Heal(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    lua_Integer amount = luaL_checkinteger(L, 2);
    Host(L).ScriptHeal(id, static_cast<int>(std::clamp<lua_Integer>(amount, 0, 1'000'000)));
    return 0;
  }
  static int Damage(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    lua_Integer amount = luaL_checkinteger(L, 2);
    Host(L).ScriptDamage(id, static_cast<int>(std::clamp<lua_Integer>(amount, 0, 1'000'000)));
    return 0;
  }
  static int Affect(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view name = Text(L, 2);
    lua_Integer seconds = luaL_checkinteger(L, 3);
    bool ok = Host(L).ScriptAffect(id, name, std::clamp<lua_Integer>(seconds, 0, 86'400));
    lua_pushboolean(L, ok);
    return 1;
  }
  static int Give(lua_State* L) {
    uint64_t id = HandleId(L, 1);
    std::string_view item = Text(L, 2);
    bool ok = Host(L).ScriptGive(id, item);
    lua_pushboolean(L, ok);
    return 1;
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
    return 1;
  }
};

void* LuaVm::Allocate(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* vm = static_cast<LuaVm*>(ud);
  size_t old_bytes = ptr != nullptr ? old_size : 0;
  if (new_size == 0) {
    vm->used_bytes_ -= old_bytes;
    std::free(ptr);
    return nullptr;
  }
  if (new_size > old_bytes && vm->used_bytes_ + (new_size - old_bytes) > vm->cap_bytes_) {
    return nullptr;  // Lua turns this into a "not enough memory" error
  }
  void* block = std::realloc(ptr, new_size);
  if (block == nullptr) return nullptr;
  vm->used_bytes_ = vm->used_bytes_ - old_bytes + new_size;
  return block;
}

void LuaVm::CountHook(lua_State* L, lua_Debug*) {
  LuaVm* vm = VmOf(L);
  vm->instructions_left_ -= kHookEveryInstructions;
  if (vm->instructions_left_ < 0) {
    luaL_error(L, "instruction budget exceeded");
  }
}

LuaVm::LuaVm(std::string zone_id, Logger& logger, ScriptHost& host, size_t memory_cap_bytes,
             int64_t instruction_budget)
    : zone_id_(std::move(zone_id)),
      logger_(logger),
      host_(host),
      cap_bytes_(memory_cap_bytes),
      budget_(instruction_budget) {
  L_ = lua_newstate(&LuaVm::Allocate, this);
  RELEASE_ASSERT(L_ != nullptr, "cannot create a Lua state");
  *static_cast<LuaVm**>(lua_getextraspace(L_)) = this;
  lua_sethook(L_, &LuaVm::CountHook, LUA_MASKCOUNT, kHookEveryInstructions);
  instructions_left_ = budget_;
  InstallSandbox();
}

LuaVm::~LuaVm() {
  if (L_ != nullptr) lua_close(L_);
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
  // string.dump would hand out bytecode, which could be fed back to a loader elsewhere.
  lua_getfield(L, -1, "string");
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
  // Determinism: math.random draws from the zone's seeded Random; reseeding does nothing.
  lua_getfield(L, -1, "math");
  lua_pushcfunction(L, &LuaApi::MathRandom);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, &LuaApi::NoOp);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  static const luaL_Reg kTelos[] = {
      {"send", &LuaApi::Send},     {"echo", &LuaApi::Echo},     {"say", &LuaApi::Say},
      {"emote", &LuaApi::Emote},   {"move", &LuaApi::Move},     {"heal", &LuaApi::Heal},
      {"damage", &LuaApi::Damage}, {"affect", &LuaApi::Affect}, {"give", &LuaApi::Give},
      {"random", &LuaApi::Random}, {"flag", &LuaApi::Flag},     {"set_flag", &LuaApi::SetFlag},
      {nullptr, nullptr}};
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

bool LuaVm::Protected(const std::string& script, int nargs) {
  if (depth_ == 0) instructions_left_ = budget_;
  ++depth_;
  int rc = lua_pcall(L_, nargs, 0, 0);
  --depth_;
  if (rc != LUA_OK) {
    const char* text = lua_tostring(L_, -1);
    std::string message = text != nullptr ? text : "error object is not a string";
    lua_pop(L_, 1);
    LogError(script, message);
    return false;
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
    lua_createtable(L_, 0, 7);
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

bool LuaVm::Call(const std::string& script, const std::string& function,
                 const std::vector<LuaArg>& args) {
  if (depth_ >= kCallDepthMax) {
    LogError(script, function + ": scripts nested too deeply; call skipped");
    return false;
  }
  if (used_bytes_ + kHeadroomBytes > cap_bytes_) {
    // Give the collector a chance before refusing.
    lua_gc(L_, LUA_GCCOLLECT);
    if (used_bytes_ + kHeadroomBytes > cap_bytes_) {
      LogError(script, function + ": memory cap reached; call skipped");
      return false;
    }
  }
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
  return Protected(script, static_cast<int>(args.size()));
}

}  // namespace telos::world
