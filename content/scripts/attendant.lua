-- Marisol the attendant (lobby:attendant): answers questions said aloud at the help desk.
-- Bound to the mob; hook: on_speech.
--
-- docs/content.md gives the hook as on_speech(actor, text). The engine may add the mob itself
-- as a third argument, and the code below also copes with the mob being passed first.

local ANSWERS = {
  { words = { "hello", "hi", "greetings", "morning", "evening" },
    reply = "Hello, and welcome! Ask me about help, the town, shops, the bank, zones, combat or death. I've heard every question there is." },
  { words = { "help", "lost", "confused" },
    reply = "Type HELP for the list of topics, or HELP NEWBIE to start. The reading room, just north of here, is full of the same advice in pamphlet form." },
  { words = { "town", "harrowgate" },
    reply = "Harrowgate is at the bottom of the stair: south through the atrium, out the portico and down the hill. The market square is the middle of everything." },
  { words = { "shop", "shops", "buy", "sword", "armour", "armor", "weapon" },
    reply = "Brannoc Ash the smith on Tanners' Walk sells weapons and armour. Widow Pell, across the street, sells food, drink and light. Ysolde at the Green Bottle does potions. Say LIST in a shop to see the prices." },
  { words = { "bank", "money", "coin", "gold" },
    reply = "The Counting House, just east of the market square on Coopers' Lane. Money in the bank stays there when you die. Money in your purse does not." },
  { words = { "zone", "zones", "map", "where", "world" },
    reply = "The Hall of Maps, north of the atrium, shows it all: the Greywood to the west of town, the Cairnmoor to the south, the arena east, the casino on Gilt Lane. Type HELP ZONES too." },
  { words = { "fight", "combat", "kill", "train", "training" },
    reply = "Start with the rats in the Crooked Ladle's cellar, or the straw dummies at the arena. Type CONSIDER before you pick a fight. Really. Everyone says they will." },
  { words = { "death", "die", "dead", "died", "corpse" },
    reply = "If you die you come back in the font, right here in the atrium. Your things stay in your corpse where you fell, so go and fetch them quickly." },
  { words = { "thanks", "thank", "cheers" },
    reply = "You're welcome. Come back any time. Most people do, one way or another." },
  { words = { "abbot", "barrow", "undercroft" },
    reply = "The great barrow on the moor? Don't. Or if you must, not alone, not before level ten, and not without potions. And somebody tell me how it goes." },
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
  for i_entry = 1, #ANSWERS do
    local entry = ANSWERS[i_entry]
    for i_w = 1, #entry.words do
      local w = entry.words[i_w]
      if has_word(lower, w) then
        if self then
          telos.say(self, entry.reply)
        else
          telos.echo(actor.room, "Marisol the attendant says, '" .. entry.reply .. "'")
        end
        return
      end
    end
  end
end
