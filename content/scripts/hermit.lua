-- The hermit of the Greywood (forest:hermit): answers questions, and hands out glowcaps
-- from a small stock that regrows slowly. Bound to the mob; hooks: on_speech, on_heartbeat.
-- See attendant.lua for the on_speech argument forms accepted.

local STOCK_MAX = 3
local REGROW_TICKS = 2400   -- one mushroom back every ten minutes or so

local TOPICS = {
  { words = { "hello", "hi", "greetings" },
    reply = "Hah! A visitor. Sit, if you can find somewhere. Mind the jars. Ask me about mushrooms, wolves, Jack, the moor or the barrow." },
  { words = { "wolf", "wolves", "den" },
    reply = "The wolves keep to the deep wood, south and west of the charcoal burners. Their leader is old and clever. Leave him till you have a few more scars." },
  { words = { "jack", "magpie", "bandit", "bandits" },
    reply = "Magpie Jack! Stole my kettle. Then brought it back, polished, with a ribbon on. Then stole it again. His camp is past the fallen oak. He runs when he's losing, the coward." },
  { words = { "spider", "spiders", "webs" },
    reply = "West of the deep wood. No. Just no. Not before you've a proper blade and some armour on you." },
  { words = { "moor", "cairnmoor", "stones", "maidens" },
    reply = "Out past the bog, south-east of here. The Nine Maidens will talk to you if you ask them to REMEMBER. Say it among them. They like that word." },
  { words = { "barrow", "abbot", "abbey", "undercroft" },
    reply = "Aldmere. The abbot sold his silver for a promise that nobody under his roof would die. Ring a bell for a dead man and he'll answer. I don't go south of the stones any more." },
}

local function has_word(text, word)
  return (" " .. text .. " "):find("[^%a]" .. word .. "[^%a]") ~= nil
end

local function reply(self, actor, line)
  if self then
    telos.say(self, line)
  else
    telos.echo(actor.room, "The hermit of the Greywood says, '" .. line .. "'")
  end
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
  if has_word(lower, "mushroom") or has_word(lower, "mushrooms") or has_word(lower, "glowcap") then
    local stock = telos.flag("hermit_stock")
    if stock == nil then
      stock = STOCK_MAX
    end
    if stock + 0 > 0 then
      telos.set_flag("hermit_stock", stock - 1)
      reply(self, actor, "Glowcaps? Here, have one of mine. Might mend you, might make you run like a hare, might make you sick as a dog. That's the fun of them.")
      telos.give(actor, "glowcap")
      telos.send(actor, "The hermit presses a faintly glowing mushroom into your hand.")
    else
      reply(self, actor, "All gone, I'm afraid. Go and pick your own, in the fairy ring north of the mossy glade.")
    end
    return
  end
  for i_topic = 1, #TOPICS do
    local topic = TOPICS[i_topic]
    for i_w = 1, #topic.words do
      local w = topic.words[i_w]
      if has_word(lower, w) then
        reply(self, actor, topic.reply)
        return
      end
    end
  end
end

function on_heartbeat(self)
  local t = telos.flag("hermit_tick")
  t = (t == nil) and 1 or (t + 1)
  if t >= REGROW_TICKS then
    t = 0
    local stock = telos.flag("hermit_stock")
    if stock ~= nil and stock + 0 < STOCK_MAX then
      telos.set_flag("hermit_stock", stock + 1)
    end
  end
  telos.set_flag("hermit_tick", t)
end

-- Quest dialogue (content/game.toml "wolves_of_the_greywood"): the zone calls this after the
-- quest's own offer/complete line, with event "offer" or "complete".
function on_quest(actor, quest_id, event, self)
  if quest_id ~= "wolves_of_the_greywood" then return end
  if event == "offer" then
    telos.emote(self, "points a crooked finger south-west, towards the deep wood.")
  else
    telos.emote(self, "presses a sprig of something bitter into your hand, then takes it back.")
  end
end
