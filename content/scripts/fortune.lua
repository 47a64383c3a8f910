-- Gilded fortune cookie (casino:fortune_cookie). Hook: on_use.

local FORTUNES = {
  "A stranger will ask you for directions. You will be wrong.",
  "The thing you are looking for is in the last place you look. Obviously.",
  "Saturn favours the bold, and is indifferent to everyone else.",
  "Do not trust a goose.",
  "You will come back. Everyone comes back.",
  "Fortune smiles on you today. It is not a nice smile.",
  "The abbot keeps his promises. Keep yours.",
  "Your next coin will land on its edge. Bet accordingly.",
  "A bear named Grumble thinks about you more than you think.",
  "Bank your winnings. The dead carry nothing home.",
}

function on_use(actor, item)
  if not actor then
    return
  end
  telos.send(actor, "You crack open the cookie. The slip of paper inside reads:")
  telos.send(actor, "{y}" .. FORTUNES[telos.random(1, #FORTUNES)] .. "{x}")
end
