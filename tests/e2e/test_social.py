"""End-to-end tests of the social layer on a fleet (ctest label e2e): two `telos world`
processes with split pools, one gate, the development Redis, PostgreSQL and NATS (scripts/services
env). Two players stand in zones owned by different worlds and form a party: the invitation, the
acceptance, party chat both ways and a leave each cross the bus between the worlds. Two others
found and join a guild (kept in PostgreSQL) and its chat reaches the member on the other world;
a friends list shows the friend online; a locale is validated and kept. Settings come from
TELOS_BINARY and TELOS_REPO, as in test_serve.py."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import follow, load_rooms  # noqa: E402
from test_fleet import POOL_0, POOL_1, SPLIT, START, TO_TOWN, FleetCase  # noqa: E402
from test_serve import REPO, new_player  # noqa: E402

ROOMS = load_rooms(REPO)
# town:north_gate -> Lantern Row ... The West Gate -> forest:forest_edge (world-1).
TO_FOREST = TO_TOWN + ["south", "south", "west", "west", "west"]
SAID_S = 10  # how long a line may take to cross the bus and show


class PartyAcrossWorldsTest(FleetCase):
    """A party whose two members stand on different worlds."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("social")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        fleet.start_gate("gate-0", wait=False)
        for name in ("world-0", "world-1", "gate-0"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT)

    def walk_to(self, client, character, directions, zone):
        path = follow(ROOMS, START, directions)
        transcript = []
        for d, room in zip(directions, path):
            self.step(client, d, room, transcript)
        return self.wait_placement(character, lambda p: p["zone"] == zone)

    def test_two_players_on_different_worlds_form_a_party_and_chat(self):
        anna = self.fleet.connect("gate-0")
        new_player(anna, "anna", "Anna")
        boris = self.fleet.connect("gate-0")
        new_player(boris, "boris", "Boris")
        where_anna = self.walk_to(anna, "Anna", TO_TOWN, "town")
        where_boris = self.walk_to(boris, "Boris", TO_FOREST, "forest")
        self.assertEqual(where_anna["shard"], "world-0")
        self.assertEqual(where_boris["shard"], "world-1")

        anna.mark()
        boris.mark()
        anna.send("group invite boris")
        anna.expect("You invite boris to join your party.", SAID_S)
        boris.expect("Anna invites you to join their party.", SAID_S)
        boris.send("group accept")
        boris.expect("You join Anna's party.", SAID_S)
        anna.expect("Boris joins your party.", SAID_S)

        boris.mark()
        anna.send("gtell meet me at the west gate")
        boris.expect("[party] Anna: meet me at the west gate", SAID_S)
        anna.mark()
        boris.send("gtell on my way")
        anna.expect("[party] Boris: on my way", SAID_S)

        boris.mark()
        boris.send("group")
        boris.expect("Anna's party (2 of 6):", SAID_S)
        boris.expect("Boris (you)", SAID_S)

        # Bad input gets a clear answer, across the fleet too.
        boris.mark()
        boris.send("group invite nobodyhere")
        boris.expect("Only the party leader (Anna) can invite.", SAID_S)
        anna.mark()
        anna.send("group invite nobodyhere")
        anna.expect("There is no player called 'nobodyhere'.", SAID_S)

        anna.mark()
        boris.send("group leave")
        boris.expect("You leave Anna's party.", SAID_S)
        anna.expect("Boris leaves your party.", SAID_S)
        for client in (anna, boris):
            self.assertFalse(client.closed)
            client.send("quit")

    def test_a_guild_member_on_another_world_hears_guild_chat(self):
        cora = self.fleet.connect("gate-0")
        new_player(cora, "cora", "Cora")
        dmitri = self.fleet.connect("gate-0")
        new_player(dmitri, "dmitri", "Dmitri")
        self.assertEqual(self.walk_to(cora, "Cora", TO_TOWN, "town")["shard"], "world-0")
        self.assertEqual(self.walk_to(dmitri, "Dmitri", TO_FOREST, "forest")["shard"], "world-1")

        cora.mark()
        cora.send("guild create Way-farers")
        cora.expect("You found the guild Way-farers.", SAID_S)
        cora.send("guild create Second Guild")
        cora.expect("is already in the guild 'Way-farers'.", SAID_S)
        dmitri.mark()
        dmitri.send("guild join way-farers")
        dmitri.expect("'Dmitri' has not been invited to 'Way-farers'.", SAID_S)
        cora.send("guild invite dmitri")
        cora.expect("You invite dmitri into Way-farers.", SAID_S)
        dmitri.expect("Cora invites you into the guild Way-farers", SAID_S)
        dmitri.send("guild join Way-farers")
        dmitri.expect("You join the guild Way-farers.", SAID_S)

        dmitri.mark()
        cora.send("gchat the forest road is clear")
        dmitri.expect("[Way-farers] Cora: the forest road is clear", SAID_S)
        cora.mark()
        dmitri.send("gchat thanks")
        cora.expect("[Way-farers] Dmitri: thanks", SAID_S)
        cora.mark()
        cora.send("guild")
        cora.expect("Dmitri (member) - online", SAID_S)

        cora.mark()
        cora.send("friend add dmitri")
        cora.expect("You add dmitri to your friends.", SAID_S)
        cora.send("friend add nosuchperson")
        cora.expect("nosuchperson", SAID_S)
        cora.mark()
        cora.send("friend")
        cora.expect("Dmitri - online", SAID_S)

        cora.mark()
        cora.send("config locale en-gb")
        cora.expect("Your locale is now en-GB.", SAID_S)
        cora.send("config locale english")
        cora.expect("is not a language and a region", SAID_S)
        cora.mark()
        cora.send("config locale")
        cora.expect("Your locale is en-GB.", SAID_S)
        for client in (cora, dmitri):
            self.assertFalse(client.closed)
            client.send("quit")


if __name__ == "__main__":
    unittest.main()
