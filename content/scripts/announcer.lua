-- Bellamy the arena master (arena:arena_master). Bound to the mob; hook: on_heartbeat.
-- Now and then he announces something; he does not need a reason.

local CALLS = {
  "Step up, step up! The training yard is open to all, and the dummies never hold a grudge!",
  "Tonight on the Sand: anyone who dares, against anyone who'll have them!",
  "Vessa the Unbowed has held the title six years running. Six! Who will be the one?",
  "Bandages and tonics from Hesk in the infirmary. Buy them before you need them, friends!",
  "A reminder that Grumble is not to be fed. Grumble feeds himself.",
}

function on_heartbeat(self)
  if telos.random(1, 480) == 1 then
    telos.say(self, CALLS[telos.random(1, #CALLS)])
  end
end
