-- Spells with a Lua effect (content/game.toml): called as fn(caster, target).

function identify(caster, item)
  telos.send(caster, "{c}You study " .. item.name .. ".{x} It is " .. item.ref .. ".")
end

function insight(caster, target)
  local share = math.floor(target.hp * 100 / math.max(1, target.max_hp))
  telos.send(caster, "{c}" .. target.name .. " is level " .. target.level .. " and at " ..
    share .. "% of full health.{x}")
end
