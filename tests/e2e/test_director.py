"""End-to-end tests of drains and the director (ctest label e2e, issue 24): separate `telos`
processes over the development Redis and PostgreSQL, as test_fleet.py runs them.

Two worlds SIGTERMed at the same moment each mark themselves draining before they pick a target,
so neither hands a zone to the other (which would refuse it, stranding the lease until it
lapsed): every zone of both lands on the third world and every player keeps their connection."""

import os
import signal
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import Fleet, follow, load_rooms  # noqa: E402
from test_fleet import START, TO_TOWN, FleetCase  # noqa: E402
from test_serve import REPO, new_player  # noqa: E402

ROOMS = load_rooms(REPO)
POOL_0 = ["town", "arena", "casino"]
POOL_1 = ["forest", "moor", "dungeon"]
SPLIT = dict([(z, "world-0") for z in POOL_0] + [(z, "world-1") for z in POOL_1])
# lobby:atrium -> town:north_gate -> ... -> The West Gate -> forest:forest_edge
TO_FOREST = TO_TOWN + ["south", "south", "west", "west", "west"]
DRAIN_S = 60  # the 45 s outer drain deadline, and the time to exit after it


class ConcurrentDrainTest(FleetCase):
    """world-0 and world-1 own every zone, world-2 only its lobby; both owners stop at once."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("drain2")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        for name in ("world-0", "world-1"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT, via="world-0")
        # Started after the split is settled, so it claims nothing but its lobby.
        fleet.start_world("world-2", POOL_0 + POOL_1)
        fleet.start_gate("gate-0")

    def walk(self, client, directions):
        transcript = []
        path = follow(ROOMS, START, directions)
        for d, room in zip(directions, path):
            self.step(client, d, room, transcript)
        return path[-1]

    def test_two_worlds_stopped_at_once_never_drain_onto_each_other(self):
        fleet = self.fleet
        in_town = fleet.connect("gate-0")
        new_player(in_town, "townsfolk", "Townsfolk")
        town_room = self.walk(in_town, TO_TOWN)
        in_forest = fleet.connect("gate-0")
        new_player(in_forest, "woodsman", "Woodsman")
        forest_room = self.walk(in_forest, TO_FOREST)
        self.wait_placement("Townsfolk", lambda p: p.get("shard") == "world-0")
        self.wait_placement("Woodsman", lambda p: p.get("shard") == "world-1")

        fleet.send_signal("world-0", signal.SIGTERM)
        fleet.send_signal("world-1", signal.SIGTERM)
        codes = {name: fleet.proc(name).proc.wait(DRAIN_S) for name in ("world-0", "world-1")}
        self.assertEqual(codes, {"world-0": 0, "world-1": 0})

        for name, other in (("world-0", "world-1"), ("world-1", "world-0")):
            done = fleet.logs(name, "drain complete")
            self.assertEqual(len(done), 1, "%s did not complete its drain" % name)
            self.assertEqual(done[0]["reclaimed"], 0, name)
            moved = fleet.logs(name, "drain: zone moved")
            self.assertTrue(moved, name)
            self.assertEqual({m["to"] for m in moved}, {"world-2"},
                             "%s drained onto %s" % (name, other))
            self.assertEqual(
                fleet.logs(name, "drain: peer refused to adopt the zone; its players will be "
                           "routed again"), [], name)
        fleet.wait_owners({z: "world-2" for z in SPLIT}, timeout=5)

        for client, room, who in ((in_town, town_room, "Townsfolk"),
                                  (in_forest, forest_room, "Woodsman")):
            client.mark()
            client.send("look")
            client.expect(room.description, 15)
            self.assertFalse(client.closed, who)
            self.wait_placement(who, lambda p: p.get("shard") == "world-2")


if __name__ == "__main__":
    unittest.main()
