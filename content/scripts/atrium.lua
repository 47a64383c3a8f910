-- Atrium of Arrivals (lobby:atrium): greets players as they come out of the font.
-- Bound to the room; hook: on_enter.

local RETURNS = {
  "The water of the font lets go of you, and the atrium steadies around you.",
  "You blink. The dome, the font, the brass letters: you are back in the Lantern House.",
  "Somewhere high above, the great lantern flares for a moment, as if it noticed you.",
  "The grey cat, if it is here, looks at you as though you are late.",
}

function on_enter(actor)
  if not actor or not actor.is_player then
    return
  end
  -- No per-character flags here: zone flags are a small shared store. A level 1 character
  -- gets the full welcome; everyone else a short line.
  if (actor.level or 1) <= 1 then
    telos.send(actor, "{y}Welcome to Telos, " .. string.format("%s", actor.name) .. ".{x}")
    telos.send(actor, "You have arrived in the Lantern House, above the town of Harrowgate. "
      .. "Type {w}help newbie{x} for first steps, or go {w}east{x} to the help desk and say "
      .. "hello to the attendant. The cloakroom to the {w}west{x} has a few things for a traveller "
      .. "with empty hands.")
    return
  end
  if actor.max_hp and actor.hp and actor.hp < actor.max_hp / 2 then
    telos.send(actor, "You come back to yourself in the font, cold and gasping. "
      .. "The Quiet Room, north of the cloakroom, is a good place to rest.")
    return
  end
  telos.send(actor, RETURNS[telos.random(1, #RETURNS)])
end
