-- The Nine Maidens (moor:standing_stones). Bound to the room; hooks: on_enter, on_speech.
-- Say "remember" among the stones and they answer; the hurt may receive a gift (not the same
-- person twice running).

local WHISPERS = {
  "For a moment you are sure the stones have moved closer together.",
  "The wind drops as you step inside the ring. Outside it, the heather still tosses.",
  "Something like a voice passes from stone to stone, too low to make out.",
}

local function has_word(text, word)
  return (" " .. text .. " "):find("[^%a]" .. word .. "[^%a]") ~= nil
end

function on_enter(actor)
  if not actor or not actor.is_player then
    return
  end
  if telos.random(1, 3) == 1 then
    telos.send(actor, WHISPERS[telos.random(1, #WHISPERS)])
  end
end

function on_speech(actor, text)
  if not actor or not actor.is_player or text == nil then
    return
  end
  local lower = text:lower()
  if has_word(lower, "remember") then
    telos.echo(actor.room, "{c}The nine stones hum, one after another, around the ring, and the air "
      .. "fills with the memory of bells: a whole abbey of them, ringing for a service that "
      .. "never ended.{x}")
    local who = string.format("%s", actor.id)
    if actor.hp < actor.max_hp and telos.flag("stones_last") ~= who then
      telos.set_flag("stones_last", who)
      telos.affect(actor, "regeneration", 120)
      telos.send(actor, "A warmth rises from the short green grass into your feet. "
        .. "The stones remember you now.")
    end
  elseif has_word(lower, "aldmere") or has_word(lower, "abbot") then
    telos.echo(actor.room, "The stones say nothing, very loudly. The wind outside the ring "
      .. "carries, just once, the sound of a cracked bell from the south.")
  end
end
