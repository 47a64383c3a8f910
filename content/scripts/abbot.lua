-- The Hollow Abbot (dungeon:hollow_abbot), boss of the Undercroft.
-- Bound to the mob; hooks: on_heartbeat, on_death.
-- Once per life, when badly hurt, he draws strength from the bells.

-- Zone flags hold strings or numbers; read them back as a number (nil if unset).
local function num(v)
  if v == nil then
    return nil
  end
  return v + 0
end

local IDLE = {
  "lifts his crozier, and the bell inside his ribs swings without a sound.",
  "murmurs the hours in a voice like dust sliding off a shelf.",
  "turns his empty face slowly from one candle to the next.",
}

function on_heartbeat(self)
  telos.set_flag("abbot_dead", 0)
  if self.hp and self.max_hp and self.hp < self.max_hp * 0.35
      and num(telos.flag("abbot_rallied")) ~= 1 then
    telos.set_flag("abbot_rallied", 1)
    telos.heal(self, self.max_hp // 4)
    telos.echo(self.room, "{r}The Hollow Abbot raises his crozier and, far below, every broken "
      .. "bell in the Undercroft rings at once. The sound pours into him, and his wounds close "
      .. "like mouths.{x}")
    telos.say(self, "None shall die in my house. Not even I.")
    return
  end
  if self.hp == self.max_hp and telos.random(1, 480) == 1 then
    telos.emote(self, IDLE[telos.random(1, #IDLE)])
  end
end

function on_death(self, killer)
  telos.set_flag("abbot_rallied", 0)
  telos.set_flag("abbot_dead", 1)
  telos.echo(self.room, "{y}The Hollow Abbot staggers back against his throne. The little bronze bell "
    .. "inside his ribs finally strikes, once, a clear sweet note, and he falls apart into "
    .. "cloth-of-gold and dust. All through the Undercroft the candles gutter, and for a "
    .. "moment it is very, very quiet.{x}")
  if killer and killer.is_player then
    telos.send(killer, "You have broken the abbot's promise. Somewhere, four hundred and "
      .. "twelve ropes go slack.")
  end
end
