-- Celestine the croupier (casino:croupier). Bound to the mob; hook: on_speech.
-- See attendant.lua for the on_speech argument forms accepted.

local TOPICS = {
  { words = { "game", "games", "play", "bet", "wager", "table", "tables" },
    reply = "The new tables are being made ready: games of chance with rounds you can watch from anywhere in the house. Until then, the house offers its hospitality. The bar is through the dice hall." },
  { words = { "rule", "rules" },
    reply = "No fighting, no credit, and no touching the wheel. The rest is between you and the planets." },
  { words = { "luck", "lucky", "fortune" },
    reply = "Luck is the word losers use for arithmetic. Quillon at the bar sells fortune cookies, if you'd like a second opinion." },
  { words = { "house", "orrery", "dome" },
    reply = "The dome turns once a day. The house has never lost a day yet." },
  { words = { "hello", "hi", "evening", "greetings" },
    reply = "Welcome to the Gilded Orrery. Ask me about the games, the rules, or your luck." },
}

local function has_word(text, word)
  return (" " .. text .. " "):find("[^%a]" .. word .. "[^%a]") ~= nil
end

function on_speech(a, b, c)
  -- Documented form: on_speech(actor, text); the engine may add the mob itself after them.
  -- Also accept (self, actor, text), in case the mob is ever passed first.
  local actor, text, self = a, b, c
  if type(b) ~= "string" then
    self, actor, text = a, b, c
  end
  if not actor or not actor.is_player or text == nil then
    return
  end
  local lower = text:lower()
  for i_topic = 1, #TOPICS do
    local topic = TOPICS[i_topic]
    for i_w = 1, #topic.words do
      local w = topic.words[i_w]
      if has_word(lower, w) then
        if self then
          telos.say(self, topic.reply)
        else
          telos.echo(actor.room, "Celestine the croupier says, '" .. topic.reply .. "'")
        end
        return
      end
    end
  end
end
