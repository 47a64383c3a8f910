-- Straw training dummy (arena:training_dummy). Bound to the mob; hook: on_death.

function on_death(self, killer)
  telos.echo(self.room, "The dummy bursts at the seams and collapses in a heap of straw. "
    .. "An apprentice sighs, and goes to fetch a needle.")
  if killer and killer.is_player then
    if (killer.level or 1) <= 2 then
      telos.send(killer, "{g}A kill at the Brass Ring. It was made of straw, but "
        .. "everyone starts somewhere. Try a sparring partner next, east of here.{x}")
    end
  end
end
