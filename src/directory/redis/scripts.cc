#include "redis/scripts.h"

#include <array>
#include <iterator>
#include <string>

#include "telos/base/assert.h"

namespace telos::directory::internal {

namespace {

// Shared by every script. `fmt` prints a number as a plain integer: Lua 5.1 would otherwise
// print large values in exponent form when concatenating.
constexpr std::string_view kPrelude = R"lua(
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function fmt(n)
  return string.format('%d', n)
end
-- Removes every member of a scored set whose expiry is at or before now, and the same fields
-- from each side hash.
local function prune(zset, hashes, now)
  local dead = redis.call('ZRANGEBYSCORE', zset, '-inf', fmt(now))
  for _, member in ipairs(dead) do
    for _, h in ipairs(hashes) do
      redis.call('HDEL', h, member)
    end
    redis.call('ZREM', zset, member)
  end
end
-- A lease row: owner ('' when released), expiry and the epoch that survives both.
local function read_lease(key)
  local row = redis.call('HMGET', key, 'owner', 'exp', 'epoch')
  return row[1] or '', tonumber(row[2] or '0'), tonumber(row[3] or '0')
end
)lua";

struct Entry {
  redis::LuaScript Scripts::*slot;  // where the script goes
  std::string_view name;
  std::string_view body;
};

// KEYS and ARGV are listed above each body.
constexpr Entry kEntries[] = {
    // KEYS: shards (zset id -> expiry), endpoints (hash), draining marks (zset id -> expiry).
    // ARGV: id, endpoint, ttl_ms, mode.
    {&Scripts::shard_register, "shard_register", R"lua(
local now = now_ms()
local id, endpoint, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local live = tonumber(redis.call('ZSCORE', KEYS[1], id) or '0') > now
local current = redis.call('HGET', KEYS[2], id) or ''
if live and current ~= endpoint then
  return {'exists', 'shard id ' .. id .. ' is live at ' .. current}
end
if ARGV[4] == 'heartbeat' and not live then
  return {'precondition', 'registration of ' .. id .. ' lapsed'}
end
if ARGV[4] ~= 'heartbeat' then
  -- a registration is a new incarnation (a heartbeat is the live one's): the mark, if any,
  -- belonged to the process before, even one that restarted on this endpoint within the TTL
  redis.call('ZREM', KEYS[3], id)
end
redis.call('ZADD', KEYS[1], fmt(now + ttl), id)
redis.call('HSET', KEYS[2], id, endpoint)
return {'ok'}
)lua"},
    // KEYS: shards, endpoints, occupancy, occupancy times, draining marks. ARGV: id, endpoint.
    {&Scripts::shard_deregister, "shard_deregister", R"lua(
local current = redis.call('HGET', KEYS[2], ARGV[1])
if current and current ~= ARGV[2] then
  return {'precondition', 'shard id ' .. ARGV[1] .. ' belongs to ' .. current}
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
for i = 2, 4 do
  redis.call('HDEL', KEYS[i], ARGV[1])
end
return {'ok'}
)lua"},
    // KEYS: shards, endpoints, draining marks. Answer: ok, then (id, endpoint, ttl_ms,
    // 1 if draining else 0) per live shard.
    {&Scripts::shard_list, "shard_list", R"lua(
local now = now_ms()
prune(KEYS[1], {KEYS[2]}, now)
prune(KEYS[3], {}, now)
local rows = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {'ok'}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = redis.call('HGET', KEYS[2], rows[i]) or ''
  out[#out + 1] = tonumber(rows[i + 1]) - now
  out[#out + 1] = redis.call('ZSCORE', KEYS[3], rows[i]) and 1 or 0
end
return out
)lua"},
    // KEYS: shards, endpoints, draining marks. ARGV: id, endpoint, ttl_ms.
    {&Scripts::shard_mark_draining, "shard_mark_draining", R"lua(
local now = now_ms()
local id, endpoint = ARGV[1], ARGV[2]
if tonumber(redis.call('ZSCORE', KEYS[1], id) or '0') <= now then
  return {'precondition', 'registration of ' .. id .. ' lapsed'}
end
local current = redis.call('HGET', KEYS[2], id) or ''
if current ~= endpoint then
  return {'exists', 'shard id ' .. id .. ' is live at ' .. current}
end
redis.call('ZADD', KEYS[3], fmt(now + tonumber(ARGV[3])), id)
return {'ok'}
)lua"},
    // KEYS: lease. ARGV: holder, ttl_ms, min_epoch (optional, 0: none). Answer: ok, epoch,
    // ttl_ms.
    {&Scripts::lease_claim, "lease_claim", R"lua(
local now = now_ms()
local owner, exp, epoch = read_lease(KEYS[1])
local live = owner ~= '' and exp > now
local min_epoch = tonumber(ARGV[3] or '0')
if live and owner ~= ARGV[1] then
  return {'conflict', 'held by ' .. owner .. ' for another ' .. fmt(exp - now) .. ' ms'}
end
if not live or epoch < min_epoch then
  epoch = math.max(epoch + 1, min_epoch)
end
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'exp', fmt(now + ttl), 'epoch', fmt(epoch))
return {'ok', epoch, ttl}
)lua"},
    // KEYS: lease. ARGV: holder, epoch, ttl_ms, refresh ('1' renews, '0' only confirms).
    // Answer: ok, epoch, ttl_ms left.
    {&Scripts::lease_renew, "lease_renew", R"lua(
local now = now_ms()
local owner, exp, epoch = read_lease(KEYS[1])
if owner == '' or exp <= now or owner ~= ARGV[1] or epoch ~= tonumber(ARGV[2]) then
  return {'precondition', 'lease not held by ' .. ARGV[1] .. ' at epoch ' .. ARGV[2]}
end
if ARGV[4] == '1' then
  exp = now + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'exp', fmt(exp))
end
return {'ok', epoch, exp - now}
)lua"},
    // KEYS: lease. ARGV: holder, epoch.
    {&Scripts::lease_release, "lease_release", R"lua(
local owner, exp, epoch = read_lease(KEYS[1])
if owner == '' or owner ~= ARGV[1] or epoch ~= tonumber(ARGV[2]) then
  return {'precondition', 'lease not held by ' .. ARGV[1] .. ' at epoch ' .. ARGV[2]}
end
redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0')
return {'ok'}
)lua"},
    // KEYS: lease. ARGV: from, from_epoch, to, ttl_ms. Answer: ok, new epoch, ttl_ms.
    {&Scripts::lease_transfer, "lease_transfer", R"lua(
local now = now_ms()
local owner, exp, epoch = read_lease(KEYS[1])
if owner == '' or exp <= now or owner ~= ARGV[1] or epoch ~= tonumber(ARGV[2]) then
  return {'precondition', ARGV[1] .. ' does not hold a live lease at epoch ' .. ARGV[2]}
end
epoch = epoch + 1
local ttl = tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'owner', ARGV[3], 'exp', fmt(now + ttl), 'epoch', fmt(epoch))
return {'ok', epoch, ttl}
)lua"},
    // KEYS: lease, shards, endpoints. Answer: ok (no live holder), or ok, holder, epoch,
    // ttl_ms left, endpoint ('' unless the holder is a live registered shard).
    {&Scripts::lease_get, "lease_get", R"lua(
local now = now_ms()
local owner, exp, epoch = read_lease(KEYS[1])
if owner == '' or exp <= now then
  return {'ok'}
end
local endpoint = ''
if tonumber(redis.call('ZSCORE', KEYS[2], owner) or '0') > now then
  endpoint = redis.call('HGET', KEYS[3], owner) or ''
end
return {'ok', owner, epoch, exp - now, endpoint}
)lua"},
    // KEYS: placement. ARGV: zone, epoch, nonce, shard. Strictly greater epoch only.
    {&Scripts::placement_handoff, "placement_handoff", R"lua(
local stored = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if stored >= tonumber(ARGV[2]) then
  return {'precondition', 'stored placement epoch ' .. fmt(stored) .. ' is not older than ' ..
          ARGV[2]}
end
redis.call('HSET', KEYS[1], 'zone', ARGV[1], 'epoch', ARGV[2], 'shard', ARGV[4])
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], 'nonce')
else
  redis.call('HSET', KEYS[1], 'nonce', ARGV[3])
end
return {'ok'}
)lua"},
    // KEYS: placement. ARGV: zone, epoch, nonce, shard. Equal or greater epoch.
    {&Scripts::placement_register, "placement_register", R"lua(
local stored = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if stored > tonumber(ARGV[2]) then
  return {'precondition', 'stored placement epoch ' .. fmt(stored) .. ' is newer than ' .. ARGV[2]}
end
redis.call('HSET', KEYS[1], 'zone', ARGV[1], 'epoch', ARGV[2], 'shard', ARGV[4])
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], 'nonce')
else
  redis.call('HSET', KEYS[1], 'nonce', ARGV[3])
end
return {'ok'}
)lua"},
    // KEYS: placement. ARGV: shard, epoch, nonce, zone. Answer: ok, 1 if applied else 0.
    {&Scripts::placement_tombstone, "placement_tombstone", R"lua(
local row = redis.call('HMGET', KEYS[1], 'shard', 'epoch', 'nonce')
if not row[2] then
  return {'ok', 0}
end
if row[1] ~= ARGV[1] or tonumber(row[2]) ~= tonumber(ARGV[2]) then
  return {'ok', 0}
end
if row[3] and row[3] ~= '' and row[3] ~= ARGV[3] then
  return {'ok', 0}
end
redis.call('HDEL', KEYS[1], 'shard')
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'zone', ARGV[4])
end
return {'ok', 1}
)lua"},
    // KEYS: presence (zset player -> expiry), gates (hash), shards (hash).
    // ARGV: player, gate, shard, ttl_ms.
    {&Scripts::presence_set, "presence_set", R"lua(
local now = now_ms()
redis.call('ZADD', KEYS[1], fmt(now + tonumber(ARGV[4])), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return {'ok'}
)lua"},
    // KEYS: presence, gates, shards. ARGV: player, gate.
    {&Scripts::presence_clear, "presence_clear", R"lua(
local now = now_ms()
local gate = redis.call('HGET', KEYS[2], ARGV[1])
if not gate then
  return {'ok'}
end
local live = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0') > now
if live and gate ~= ARGV[2] then
  return {'precondition', ARGV[1] .. ' is connected through ' .. gate}
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return {'ok'}
)lua"},
    // KEYS: presence, gates, shards. ARGV: player. Answer: ok, or ok, player, gate, shard, ttl.
    {&Scripts::presence_get, "presence_get", R"lua(
local now = now_ms()
local exp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
if exp <= now then
  return {'ok'}
end
return {'ok', ARGV[1], redis.call('HGET', KEYS[2], ARGV[1]) or '',
        redis.call('HGET', KEYS[3], ARGV[1]) or '', exp - now}
)lua"},
    // KEYS: presence, gates, shards. Answer: ok, then (player, gate, shard, ttl) per entry.
    {&Scripts::presence_list, "presence_list", R"lua(
local now = now_ms()
prune(KEYS[1], {KEYS[2], KEYS[3]}, now)
local rows = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {'ok'}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = redis.call('HGET', KEYS[2], rows[i]) or ''
  out[#out + 1] = redis.call('HGET', KEYS[3], rows[i]) or ''
  out[#out + 1] = tonumber(rows[i + 1]) - now
end
return out
)lua"},
    // KEYS: occupancy (hash shard -> JSON [zone, count, ...]), times (hash shard -> ms).
    // ARGV: shard, then zone, count pairs.
    {&Scripts::occupancy_report, "occupancy_report", R"lua(
local now = now_ms()
local flat = {}
for i = 2, #ARGV do
  flat[#flat + 1] = ARGV[i]
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(flat))
redis.call('HSET', KEYS[2], ARGV[1], fmt(now))
return {'ok'}
)lua"},
    // KEYS: occupancy, times. Answer: ok, now, then per shard: shard, reported_at, n, and n
    // values (zone, count alternating).
    {&Scripts::occupancy_list, "occupancy_list", R"lua(
local now = now_ms()
local times = redis.call('HGETALL', KEYS[2])
local out = {'ok', now}
for i = 1, #times, 2 do
  local flat = cjson.decode(redis.call('HGET', KEYS[1], times[i]) or '[]')
  out[#out + 1] = times[i]
  out[#out + 1] = tonumber(times[i + 1])
  out[#out + 1] = #flat
  for j = 1, #flat do
    out[#out + 1] = flat[j]
  end
end
return out
)lua"},
    // KEYS: reservations (zset "target\31id" -> expiry), amounts (hash), sequence (counter),
    // holders (hash, only for holds a drain took with a holder). ARGV: target, amount, ttl_ms.
    // Answer: ok, id, ttl_ms.
    {&Scripts::reserve, "reserve", R"lua(
local now = now_ms()
prune(KEYS[1], {KEYS[2], KEYS[4]}, now)
local id = redis.call('INCR', KEYS[3])
local member = ARGV[1] .. '\31' .. fmt(id)
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], fmt(now + ttl), member)
redis.call('HSET', KEYS[2], member, ARGV[2])
return {'ok', fmt(id), ttl}
)lua"},
    // KEYS: reservations, amounts, holders. ARGV: target, id.
    {&Scripts::reservation_release, "reservation_release", R"lua(
local member = ARGV[1] .. '\31' .. ARGV[2]
redis.call('ZREM', KEYS[1], member)
redis.call('HDEL', KEYS[2], member)
redis.call('HDEL', KEYS[3], member)
return {'ok'}
)lua"},
    // KEYS: reservations, amounts, holders. ARGV: target. Answer: ok, sum of unexpired amounts.
    {&Scripts::reserved_sum, "reserved_sum", R"lua(
local now = now_ms()
prune(KEYS[1], {KEYS[2], KEYS[3]}, now)
local want = ARGV[1] .. '\31'
local sum = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(member, 1, #want) == want then
    sum = sum + tonumber(redis.call('HGET', KEYS[2], member) or '0')
  end
end
return {'ok', sum}
)lua"},
    // KEYS: shards, occupancy, reservations, amounts, sequence, holders, draining marks.
    // ARGV: amount, ttl_ms, ceiling, holder ('' for none), the most one hold may reach
    // (kReservationAmountMax), then excluded shard ids.
    // Answer: ok, target, reservation id, ttl_ms, load before, 1 if over the ceiling else 0,
    // the hold's amount.
    {&Scripts::select_drain_target, "select_drain_target", R"lua(
local now = now_ms()
prune(KEYS[3], {KEYS[4], KEYS[6]}, now)
local amount, ttl, ceiling = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local holder = ARGV[4]
local amount_max = tonumber(ARGV[5])
local excluded = {}
for i = 6, #ARGV do
  excluded[ARGV[i]] = true
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '(' .. fmt(now), '+inf')) do
  excluded[id] = true  -- a draining shard is never a target
end
local reserved = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  local sep = string.find(member, '\31', 1, true)
  if sep then
    local target = string.sub(member, 1, sep - 1)
    reserved[target] = (reserved[target] or 0) + tonumber(redis.call('HGET', KEYS[4], member) or '0')
  end
end
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. fmt(now), '+inf')
table.sort(live)
local best, best_load, fit, fit_load
for _, id in ipairs(live) do
  if not excluded[id] then
    local load = reserved[id] or 0
    local report = redis.call('HGET', KEYS[2], id)
    if report then
      local flat = cjson.decode(report)
      for j = 2, #flat, 2 do
        load = load + tonumber(flat[j])
      end
    end
    if best == nil or load < best_load then
      best, best_load = id, load
    end
    if load + amount <= ceiling and (fit == nil or load < fit_load) then
      fit, fit_load = id, load
    end
  end
end
if best == nil then
  return {'notfound', 'no live drain target'}
end
local chosen, load, over = fit, fit_load, 0
if fit == nil then
  chosen, load, over = best, best_load, 1
end
if holder ~= '' then
  -- rebase this holder's own live hold on the target, if it has one; nobody else's changes
  local want = chosen .. '\31'
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    if string.sub(member, 1, #want) == want and redis.call('HGET', KEYS[6], member) == holder then
      local exp = math.max(tonumber(redis.call('ZSCORE', KEYS[3], member)), now + ttl)
      redis.call('ZADD', KEYS[3], fmt(exp), member)
      -- a hold covers every zone of this drain sent here, and stays within the one bound
      local total = math.min(tonumber(redis.call('HGET', KEYS[4], member) or '0') + amount,
                             amount_max)
      redis.call('HSET', KEYS[4], member, fmt(total))
      return {'ok', chosen, string.sub(member, #want + 1), exp - now, load, over, total}
    end
  end
end
local rid = redis.call('INCR', KEYS[5])
local member = chosen .. '\31' .. fmt(rid)
redis.call('ZADD', KEYS[3], fmt(now + ttl), member)
redis.call('HSET', KEYS[4], member, ARGV[1])
if holder ~= '' then
  redis.call('HSET', KEYS[6], member, holder)
end
return {'ok', chosen, fmt(rid), ttl, load, over, amount}
)lua"},
    // KEYS: directives (zset zone -> expiry), from, to, scope, epoch (hashes zone -> value),
    // the issuing scope's leader lease. ARGV: zone, from, to, ttl, scope, epoch.
    {&Scripts::directive_issue, "directive_issue", R"lua(
local now = now_ms()
local owner, exp, term = read_lease(KEYS[6])
if owner == '' or exp <= now or term ~= tonumber(ARGV[6]) then
  return {'precondition', 'not the leader of scope ' .. ARGV[5] .. ' at epoch ' .. ARGV[6]}
end
prune(KEYS[1], {KEYS[2], KEYS[3], KEYS[4], KEYS[5]}, now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return {'exists', 'zone ' .. ARGV[1] .. ' already has a live directive'}
end
redis.call('ZADD', KEYS[1], fmt(now + tonumber(ARGV[4])), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[6])
return {'ok'}
)lua"},
    // KEYS: directives, from, to, scope, epoch. ARGV: from. Answer: ok, then (zone, from, to,
    // ttl, scope, epoch) each.
    {&Scripts::directive_list, "directive_list", R"lua(
local now = now_ms()
prune(KEYS[1], {KEYS[2], KEYS[3], KEYS[4], KEYS[5]}, now)
local rows = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {'ok'}
for i = 1, #rows, 2 do
  if redis.call('HGET', KEYS[2], rows[i]) == ARGV[1] then
    out[#out + 1] = rows[i]
    out[#out + 1] = ARGV[1]
    out[#out + 1] = redis.call('HGET', KEYS[3], rows[i]) or ''
    out[#out + 1] = tonumber(rows[i + 1]) - now
    out[#out + 1] = redis.call('HGET', KEYS[4], rows[i]) or ''
    out[#out + 1] = redis.call('HGET', KEYS[5], rows[i]) or '0'
  end
end
return out
)lua"},
    // KEYS: directives, from, to, scope, epoch. ARGV: zone, from.
    {&Scripts::directive_complete, "directive_complete", R"lua(
local now = now_ms()
prune(KEYS[1], {KEYS[2], KEYS[3], KEYS[4], KEYS[5]}, now)
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then
  return {'notfound', 'no live directive for ' .. ARGV[1] .. ' from ' .. ARGV[2]}
end
redis.call('ZREM', KEYS[1], ARGV[1])
for i = 2, 5 do
  redis.call('HDEL', KEYS[i], ARGV[1])
end
return {'ok'}
)lua"},
    // KEYS: cooldowns (zset zone -> expiry). ARGV: zone, ttl_ms.
    {&Scripts::cooldown_start, "cooldown_start", R"lua(
local now = now_ms()
redis.call('ZADD', KEYS[1], fmt(now + tonumber(ARGV[2])), ARGV[1])
return {'ok'}
)lua"},
    // KEYS: cooldowns. ARGV: zone. Answer: ok, ms left (0 when none).
    {&Scripts::cooldown_remaining, "cooldown_remaining", R"lua(
local now = now_ms()
local exp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
if exp <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {'ok', 0}
end
return {'ok', exp - now}
)lua"},
    // ---- content pack version
    // KEYS: pack version (hash: hash, previous). Answer: ok, hash, previous ("" when unset).
    {&Scripts::pack_version_get, "pack_version_get", R"lua(
return {'ok', redis.call('HGET', KEYS[1], 'hash') or '',
        redis.call('HGET', KEYS[1], 'previous') or ''}
)lua"},
    // KEYS: pack version. ARGV: expected hash ("" for none), hash, previous.
    {&Scripts::pack_version_swap, "pack_version_swap", R"lua(
local current = redis.call('HGET', KEYS[1], 'hash') or ''
if current ~= ARGV[1] then
  return {'precondition', "the fleet's pack version is '" .. current .. "', not '" .. ARGV[1] .. "'"}
end
redis.call('HSET', KEYS[1], 'hash', ARGV[2], 'previous', ARGV[3])
return {'ok'}
)lua"},
};

// Every Scripts member is filled by exactly one entry: as many entries as members, no slot twice.
static_assert(std::size(kEntries) * sizeof(redis::LuaScript) == sizeof(Scripts),
              "one entry per script");

}  // namespace

const Scripts& GetScripts() {
  // Prelude + body for every script, built once; both live as long as the program.
  static const std::array<std::string, std::size(kEntries)> sources = [] {
    std::array<std::string, std::size(kEntries)> out;
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = std::string(kPrelude) + std::string(kEntries[i].body);
    }
    return out;
  }();
  static const Scripts scripts = [] {
    Scripts out;
    for (size_t i = 0; i < sources.size(); ++i) {
      redis::LuaScript& slot = out.*kEntries[i].slot;
      RELEASE_ASSERT(slot.name.empty(), "a script slot is filled twice");
      slot = redis::LuaScript{.name = kEntries[i].name, .source = sources[i]};
    }
    return out;
  }();
  return scripts;
}

}  // namespace telos::directory::internal
