-- The Sand (arena:arena_floor). Bound to the room; hook: on_enter.

local CROWD = {
  "The crowd roars as you step out onto the sand.",
  "A few people in the stands cheer. Someone else shouts something about your mother.",
  "A flower lands at your feet, followed closely by a cabbage.",
  "The noise of the crowd rises and falls like surf.",
}

function on_enter(actor)
  if not actor or not actor.is_player then
    return
  end
  telos.send(actor, "{y}" .. CROWD[telos.random(1, #CROWD)] .. "{x}")
end
