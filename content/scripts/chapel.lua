-- Chapel of the Returning Light (town:chapel).
-- Bound to Mother Orla (town:priest) for on_heartbeat, and to the zone command `pray`.
-- The heartbeat keeps a tick counter in zone flags; pray uses it as a cooldown clock. The
-- cooldown is one shared flag (zone flags are a small store, not one per character).

-- Zone flags hold strings or numbers; read them back as a number (nil if unset).
local function num(v)
  if v == nil then
    return nil
  end
  return v + 0
end

local COOLDOWN_TICKS = 120   -- about thirty seconds at a 250 ms heartbeat, shared by everyone

local MUTTERINGS = {
  "threads a needle on the third try and looks pleased with herself.",
  "trims the wick of a candle that does not need it.",
  "murmurs a blessing over the little brass lamp on the altar.",
  "hums an old hymn, losing the tune halfway and finding a better one.",
}

local function short_room(ref)
  local s = string.format("%s", ref or "")
  return s:match("([%w_]+)$") or s
end

function on_heartbeat(self)
  local t = (num(telos.flag("chapel_tick")) or 0) + 1
  telos.set_flag("chapel_tick", t)
  if telos.random(1, 600) == 1 then
    telos.emote(self, MUTTERINGS[telos.random(1, #MUTTERINGS)])
  end
end

function pray(actor, args)
  if not actor then
    return
  end
  if short_room(actor.room) ~= "chapel" then
    telos.send(actor, "You bow your head and murmur a prayer. The wind takes it. "
      .. "Perhaps it would carry further from the chapel on Lantern Row.")
    return
  end
  telos.send(actor, "You kneel on the worn stones before the altar and pray.")
  local now = num(telos.flag("chapel_tick")) or 0
  local key = "chapel_answered"
  local last = num(telos.flag(key))
  if last ~= nil and now - last < COOLDOWN_TICKS then
    telos.send(actor, "A quiet settles over you, but the flame does not stir. "
      .. "It answered someone only a moment ago; give it a little while.")
    return
  end
  if actor.hp and actor.max_hp and actor.hp < actor.max_hp then
    local amount = math.max(10, actor.max_hp // 4)
    telos.set_flag(key, now)
    telos.heal(actor, amount)
    telos.send(actor, "{y}The little flame on the altar leans towards you, and warmth runs "
      .. "through your aches like water through dry ground.{x}")
  else
    telos.send(actor, "The flame burns steady and untroubled. You are whole; "
      .. "it seems content simply to have been asked.")
  end
end
