-- The Abbot's Sanctum (dungeon:sanctum). Bound to the room; hook: on_enter.

-- Zone flags hold strings or numbers; read them back as a number (nil if unset).
local function num(v)
  if v == nil then
    return nil
  end
  return v + 0
end

function on_enter(actor)
  if not actor or not actor.is_player then
    return
  end
  if num(telos.flag("abbot_dead")) == 1 then
    telos.send(actor, "The grey candles burn low and quiet. The throne stands empty, for now.")
  else
    telos.send(actor, "{r}Every candle in the sanctum leans towards you at once. On the silver "
      .. "throne, something that was a man turns its head.{x}")
  end
end
