-- Glowcap mushroom (forest:glowcap): eating one is a gamble. Hook: on_use.

function on_use(actor, item)
  if not actor then
    return
  end
  local roll = telos.random(1, 6)
  if roll <= 3 then
    telos.heal(actor, 15)
    telos.send(actor, "{g}The glowcap tastes of cold earth and moonlight. A gentle warmth spreads through you.{x}")
  elseif roll == 4 then
    telos.affect(actor, "regeneration", 90)
    telos.send(actor, "{g}Your skin tingles, and little hurts begin to close by themselves.{x}")
  elseif roll == 5 then
    telos.affect(actor, "haste", 30)
    telos.send(actor, "{c}The world slows down. Or you speed up. Hard to say which, and no time to wonder.{x}")
  else
    telos.affect(actor, "poison", 30)
    telos.damage(actor, 3)
    telos.send(actor, "{r}Your stomach turns over. That one was not a good one.{x}")
  end
end
