-- Ottilie the singer (casino:singer). Bound to the mob; hook: on_heartbeat.

local SONGS = {
  "sings a slow song about a shepherd who lost her dog to the moor.",
  "sings something bright and silly about a goose who held a pond against an army.",
  "plays a few bars on the harpsichord, skipping the missing keys without a pause.",
  "sings, very softly, about bells ringing under the ground.",
  "sings the one about the highwayman and the miller's daughter, and the room joins in the chorus.",
}

function on_heartbeat(self)
  if telos.random(1, 360) == 1 then
    telos.emote(self, SONGS[telos.random(1, #SONGS)])
  end
end
