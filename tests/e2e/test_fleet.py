"""End-to-end tests of a TelosMUD fleet (ctest label e2e): `telos account`, `telos world` and
`telos gate` as separate processes over the development Redis and PostgreSQL (start them with
scripts/services and eval "$(scripts/services env)"; without them these tests fail).

A player walks across shard boundaries and comes back through another gate, and what it does
then is saved; a standby takes over the zones of a frozen world while the frozen one must stop
hosting them when it wakes; a standby adopts the zones of a world that stops, and its players
keep their connections; a gate stops cleanly and another takes its players up; a duplicate
shard id, a missing setting and a wrong assertion key are refused. Each class runs one fleet
(fleet.py) in its own Redis namespace and PostgreSQL schema. Settings come from TELOS_BINARY and
TELOS_REPO, as in test_serve.py; TELOS_E2E_LOG_DIR, if set, keeps every process's log."""

import json
import os
import shutil
import signal
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import LEASE_TTL_MS, Fleet, follow, load_rooms  # noqa: E402
from test_serve import BINARY, PASSWORD, REPO, log_in, new_player  # noqa: E402

POOL_0 = ["town", "arena", "casino"]
POOL_1 = ["forest", "moor", "dungeon"]
SPLIT = dict([(z, "world-0") for z in POOL_0] + [(z, "world-1") for z in POOL_1])
ROOMS = load_rooms(REPO)

START = "lobby:atrium"
TO_TOWN = ["south", "south", "south"]  # lobby:atrium -> town:north_gate
# From town:north_gate with town on world-0 and forest and moor on world-1: to the West Gate,
# out to the Greywood and back; to the South Gate, out onto the moor and back, twice. Six
# crossings, ending in town.
ACROSS = (["south", "south", "west", "west"]        # Lantern Row ... The West Gate
          + ["west", "east"]                        # forest:forest_edge and back
          + ["east", "east", "south", "south"]      # Tanners' Walk ... The South Gate
          + ["south", "north", "south", "north"])   # moor:moor_road and back, twice
ROOM_SHOWN_S = 15   # how long a move may take to show the next room
ROUTES_KNOWN_S = 3  # how long an exit into a newly claimed zone may stay closed (1 s refresh)


class FleetCase(unittest.TestCase):
    """Prints the end of every process's log when a test of the class fails."""

    fleet = None

    def run(self, result=None):
        before = len(result.failures) + len(result.errors) if result else 0
        result = super().run(result)
        if result and len(result.failures) + len(result.errors) > before and self.fleet:
            print("\n===== fleet logs for %s\n%s" % (self.id(), self.fleet.tail(40)),
                  file=sys.stderr)
        return result

    @classmethod
    def make_fleet(cls, label):
        cls.fleet = Fleet(BINARY, REPO, label)
        cls.addClassCleanup(cls.fleet.cleanup)
        return cls.fleet

    # --- players

    def step(self, client, direction, room, transcript):
        """Sends one move and waits for the whole of `room` (name, description, exits) in the
        output that follows it, in that order.

        A world learns who owns the other zones by re-reading the directory every second
        (WorldShardOptions::route_refresh_ms), and until then an exit into a zone it has not
        seen claimed is "closed for now": the move is tried again then, for a few seconds."""
        transcript.append(client.mark())
        client.send(direction)
        closed = "The way %s is closed for now." % direction
        deadline = time.time() + ROUTES_KNOWN_S
        while client.expect_any(["[Exits:", closed], ROOM_SHOWN_S) == closed:
            self.assertLess(time.time(), deadline, "%s still closed towards %s" %
                            (direction, room.ref))
            transcript.append(client.mark())
            time.sleep(0.1)
            client.send(direction)
        client.expect(room.description, ROOM_SHOWN_S)
        text = client.text
        name_at = text.find(room.name)
        self.assertGreaterEqual(name_at, 0, "no %r after %s:\n%s" % (room.name, direction, text))
        self.assertLess(name_at, text.find(room.description, name_at),
                        "description before the name:\n" + text)
        self.assertGreater(text.find("[Exits:", name_at), name_at, text)
        self.assertFalse(client.closed, "disconnected on the way to " + room.ref)

    def wait_placement(self, character, predicate, timeout=10):
        deadline = time.time() + timeout
        while True:
            placement = self.fleet.placement(character)
            if placement and predicate(placement):
                return placement
            if time.time() > deadline:
                raise AssertionError("placement of %s stayed %r" % (character, placement))
            time.sleep(0.02)


class FleetRoutingTest(FleetCase):
    """Two worlds with split pools, two gates: zones, crossings, a second gate, a duplicate id."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("routing")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        fleet.start_gate("gate-0", wait=False)
        fleet.start_gate("gate-1", wait=False)
        for name in ("world-0", "world-1", "gate-0", "gate-1"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT)

    def test_cluster_splits_the_zones_one_owner_each(self):
        for gate in ("gate-0", "gate-1"):
            view = self.fleet.cluster(gate)
            self.assertEqual(view["answered_by"], {"role": "gate", "id": gate})
            owners = Fleet.owners(view)
            self.assertEqual(owners, dict(SPLIT, lobby=None))  # every world hosts its own lobby
            listed = [z for shard in view["shards"] for z in shard["zones"]]
            for zone in SPLIT:
                self.assertEqual(listed.count(zone), 1, "%s listed %d times" %
                                 (zone, listed.count(zone)))
            self.assertNotIn("lobby", listed)
            self.assertEqual(sorted(s["id"] for s in view["shards"]), ["world-0", "world-1"])
            self.assertEqual(view["standbys"], [])
        for world in ("world-0", "world-1"):
            health = self.fleet.health(world)
            self.assertEqual(health["shard"], world)
            self.assertEqual(health["zones"], 4)  # three of the pool and the lobby
            self.assertFalse(health["standby"])

    def test_duplicate_shard_id_is_refused(self):
        before = Fleet.owners(self.fleet.cluster())
        env = self.fleet.world_env("world-0", POOL_0)  # a new port of its own, same id
        done = self.fleet.run("world", env, timeout=60)
        self.assertNotEqual(done.returncode, 0, done.stderr)
        self.assertIn("already registered", done.stderr)
        self.assertTrue(self.fleet.alive("world-0"))
        self.assertFalse(self.fleet.health("world-0")["standby"])
        self.assertEqual(Fleet.owners(self.fleet.cluster()), before)

    def test_progress_after_resuming_through_the_other_gate_is_saved(self):
        c = self.fleet.connect("gate-0")
        new_player(c, "keeper", "Keeper")
        path = follow(ROOMS, START, TO_TOWN + ["south"])  # ... The North Gate, Lantern Row
        transcript = []
        for d, room in zip(TO_TOWN, path):
            self.step(c, d, room, transcript)
        c.close()
        self.fleet.wait_msg("gate-0", "character link-dead", character="Keeper")
        d = self.fleet.connect("gate-1")
        log_in(d, "keeper")
        d.expect(path[2].name, ROOM_SHOWN_S)
        self.step(d, "south", path[3], transcript)
        d.send("quit")
        d.expect("Come back soon.")
        d.wait_closed()
        self.fleet.wait_healthy("world-0", predicate=lambda h: h["players"] == 0)

        e = self.fleet.connect("gate-0")
        log_in(e, "keeper")
        seen = e.expect_any([path[3].name, path[2].name, "The Atrium of Arrivals"],
                            ROOM_SHOWN_S)
        fenced = [l for l in self.fleet.logs("world-0") if "fenced" in l.get("msg", "")]
        self.assertEqual(seen, path[3].name, "the walk after resuming was not saved; world-0: %r"
                         % fenced)

    def test_a_walk_between_zones_of_one_shard_keeps_the_epoch(self):
        c = self.fleet.connect("gate-0")
        new_player(c, "homebody", "Homebody")
        directions = TO_TOWN + ["south", "south", "east", "east", "east"]  # ... arena:approach
        path = follow(ROOMS, START, directions)
        transcript = []
        for d, room in zip(directions[:len(TO_TOWN)], path[:len(TO_TOWN)]):
            self.step(c, d, room, transcript)
        placement = self.wait_placement("Homebody", lambda p: p["zone"] == "town")
        for d, room in zip(directions[len(TO_TOWN):], path[len(TO_TOWN):]):
            self.step(c, d, room, transcript)
        self.assertEqual(path[-1].zone, "arena")
        moved = self.wait_placement("Homebody", lambda p: p["zone"] == "arena")
        # Town and arena are both world-0's: the residency is registered, the epoch stays.
        self.assertEqual(moved["shard"], "world-0")
        self.assertEqual(moved["epoch"], placement["epoch"])
        self.assertEqual(moved["nonce"], placement["nonce"])
        c.send("quit")  # the other tests count world-0's players
        c.expect("Come back soon.")
        c.wait_closed()

    def test_walk_across_shards_then_resume_through_the_other_gate(self):
        c = self.fleet.connect("gate-0")
        new_player(c, "strider", "Strider")
        transcript = []
        path = follow(ROOMS, START, TO_TOWN + ACROSS)
        directions = TO_TOWN + ACROSS
        for d, room in zip(directions[:len(TO_TOWN)], path[:len(TO_TOWN)]):
            self.step(c, d, room, transcript)
        placement = self.wait_placement("Strider", lambda p: p["zone"] == "town")
        self.assertEqual(placement["shard"], "world-0")
        epoch = int(placement["epoch"])

        crossings = 0
        here = path[len(TO_TOWN) - 1]
        for d, room in zip(directions[len(TO_TOWN):], path[len(TO_TOWN):]):
            self.step(c, d, room, transcript)
            source, target = SPLIT[here.zone], SPLIT[room.zone]
            if source != target:
                crossings += 1
                # The destination moved the placement forward before it showed the room.
                placement = self.fleet.placement("Strider")
                self.assertEqual(placement.get("shard"), target, placement)
                self.assertEqual(placement.get("zone"), room.zone, placement)
                self.assertGreater(int(placement["epoch"]), epoch, "epoch did not rise")
                epoch = int(placement["epoch"])
                self.fleet.wait_msg(source, "handoff sent", character="Strider", zone=room.zone,
                                    to=target, epoch=epoch)
                self.fleet.wait_msg(target, "handoff arrived", character="Strider",
                                    zone=room.zone, epoch=epoch)
            here = room
        self.assertGreaterEqual(crossings, 4)
        transcript.append(c.mark())
        everything = "".join(transcript)
        # Every room, in the order walked, and nothing that says the session was lost.
        at = 0
        for room in path:
            at = everything.find(room.name, at)
            self.assertGreaterEqual(at, 0, "%s missing or out of order" % room.name)
            at += len(room.name)
        for bad in ("world shifts", "could not take you", "not being served"):
            self.assertNotIn(bad, everything)

        # Drop the connection without quitting; come back through the other gate.
        c.close()
        self.fleet.wait_msg("gate-0", "character link-dead", character="Strider")
        d = self.fleet.connect("gate-1")
        log_in(d, "strider")
        d.expect(here.name, ROOM_SHOWN_S)
        d.expect(here.description)
        self.assertIn("Strider", d.text)
        d.mark()
        d.send("look")
        d.expect(here.name)
        self.assertEqual(self.fleet.placement("Strider")["shard"], SPLIT[here.zone])


class ServeJoinsFleetTest(FleetCase):
    """`telos serve` with the fleet's variables is one more member: a shard, a gate, accounts."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("servejoins")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0)
        fleet.start_serve("serve-0", POOL_1)
        fleet.wait_owners(dict([(z, "world-0") for z in POOL_0] +
                               [(z, "serve-0") for z in POOL_1]))

    def test_a_player_of_serve_walks_through_the_fleet(self):
        health = self.fleet.health("serve-0")
        self.assertEqual((health["role"], health["mode"], health["shard"]),
                         ("serve", "fleet", "serve-0"))
        self.assertFalse(health["standby"])
        c = self.fleet.connect("serve-0")
        new_player(c, "joiner", "Joiner")
        # Lobby (either shard's), the town on world-0, the forest on serve-0, and back.
        directions = TO_TOWN + ["south", "south", "west", "west", "west", "east"]
        path = follow(ROOMS, START, directions)
        transcript = []
        for d, room in zip(directions, path):
            self.step(c, d, room, transcript)
            placement = self.wait_placement("Joiner", lambda p, z=room.zone: p["zone"] == z)
            expected = "serve-0" if room.zone in POOL_1 else "world-0"
            if room.zone != "lobby":
                self.assertEqual(placement["shard"], expected, placement)
        self.fleet.wait_msg("serve-0", "handoff arrived", character="Joiner", zone="forest")
        self.fleet.wait_msg("world-0", "handoff arrived", character="Joiner", zone="town")


class ZoneMovedWhileAwayTest(FleetCase):
    """A player who left from a zone that then moved to another shard comes back to it there:
    routing follows the zone, not the shard the player last played on."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("movedaway")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0)
        fleet.start_gate("gate-0")
        fleet.wait_owners({z: "world-0" for z in POOL_0})
        fleet.start_world("world-1", POOL_0)  # a standby for the same pool

    def test_returning_player_finds_the_zone_on_its_new_owner(self):
        fleet = self.fleet
        c = fleet.connect("gate-0")
        new_player(c, "wanderer", "Wanderer")
        path = follow(ROOMS, START, TO_TOWN + ["south"])  # ... Lantern Row
        transcript = []
        for d, room in zip(TO_TOWN + ["south"], path):
            self.step(c, d, room, transcript)
        c.send("quit")
        c.expect("Come back soon.")
        c.wait_closed()
        gone = self.wait_placement("Wanderer", lambda p: not p.get("shard"))  # tombstoned
        self.assertEqual(gone["zone"], "town")

        self.assertEqual(fleet.stop("world-0"), 0)
        fleet.wait_owners({z: "world-1" for z in POOL_0}, timeout=10)
        d = fleet.connect("gate-0")
        log_in(d, "wanderer")
        d.expect(path[-1].name, ROOM_SHOWN_S)
        d.expect(path[-1].description)
        back = self.wait_placement("Wanderer", lambda p: p.get("shard") == "world-1")
        self.assertEqual(back["zone"], "town")


class OwnerlessZoneTest(FleetCase):
    """kill -9 of the only world that may host a zone: its players keep their connections, are
    told the world is shifting, and once no owner has come for TELOS_ROUTE_WAIT_MS they wake in
    a lobby (any shard's) instead of being dropped."""

    ROUTE_WAIT_MS = 2000

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("ownerless")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0)
        fleet.start_world("world-1", POOL_1)
        fleet.start_gate("gate-0", extra_env={"TELOS_ROUTE_WAIT_MS": str(cls.ROUTE_WAIT_MS)})
        fleet.wait_owners(SPLIT)

    def test_players_of_a_killed_world_wake_in_a_lobby(self):
        fleet = self.fleet
        c = fleet.connect("gate-0")
        new_player(c, "orphan", "Orphan")
        path = follow(ROOMS, START, TO_TOWN)
        transcript = []
        for d, room in zip(TO_TOWN, path):
            self.step(c, d, room, transcript)
        self.wait_placement("Orphan", lambda p: p["zone"] == "town" and p["shard"] == "world-0")
        c.mark()
        fleet.kill("world-0")
        c.expect("The world shifts around you", 10)
        c.expect("back in the lobby", 3 * self.ROUTE_WAIT_MS / 1000 + 10)
        c.expect("[Exits:")
        self.assertFalse(c.closed)
        c.mark()
        c.send("say still connected")
        c.expect("You say, 'still connected'")
        fleet.wait_msg("world-1", "character placed in the lobby: its zone has no owner",
                       character="orphan")


class CrashLossTest(FleetCase):
    """The durability ladder: characters checkpoint to Redis often and write their row rarely;
    after kill -9 of their world, the standby that adopts the zone loads the fresher of the two,
    so a player loses at most one checkpoint interval, not one row interval."""

    LADDER = {"TELOS_CHECKPOINT_INTERVAL_MS": "500", "TELOS_SAVE_INTERVAL_MS": "600000"}

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("crashloss")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, extra_env=cls.LADDER)
        fleet.start_gate("gate-0")
        fleet.wait_owners({z: "world-0" for z in POOL_0})
        fleet.start_world("world-1", POOL_0, extra_env=cls.LADDER)  # a standby
        fleet.wait_msg("world-1", "won no zones: STANDBY")

    def test_kill9_loses_at_most_one_checkpoint_interval(self):
        fleet = self.fleet
        c = fleet.connect("gate-0")
        new_player(c, "survivor", "Survivor")
        directions = TO_TOWN + ["south", "south"]  # ... Lantern Row, Tanners' Walk
        path = follow(ROOMS, START, directions)
        transcript = []
        for d, room in zip(directions, path):
            self.step(c, d, room, transcript)
        here = path[-1]
        # A checkpoint holds the last step; the row (written only on arrival) does not.
        deadline = time.time() + 10
        while fleet.checkpoint("Survivor").get("room_id") != here.ref.split(":")[1]:
            self.assertLess(time.time(), deadline, fleet.checkpoint("Survivor"))
            time.sleep(0.05)

        fleet.kill("world-0")
        fleet.wait_owners({z: "world-1" for z in POOL_0}, timeout=LEASE_TTL_MS / 1000 + 5)
        deadline = time.time() + 20
        while True:
            c.mark()
            c.send("look")
            try:
                c.expect("[Exits:", timeout=1)
            except AssertionError:
                self.assertFalse(c.closed, "dropped: " + c.text[-2000:])
                self.assertLess(time.time(), deadline, "no room again: " + c.text[-2000:])
                continue
            break
        self.assertIn(here.name, c.text)
        fleet.wait_msg("world-1", "loaded from checkpoint", character="Survivor")


class DrainTest(FleetCase):
    """SIGTERM drains a world: each of its zones moves to a live peer in one fenced step and its
    players are handed over in place, same zone and room, their sockets never closing."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("drain")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0)
        fleet.start_world("world-1", POOL_1)
        fleet.start_gate("gate-0")
        fleet.wait_owners(SPLIT)

    def test_sigterm_hands_zones_and_players_to_a_peer(self):
        fleet = self.fleet
        c = fleet.connect("gate-0")
        new_player(c, "mover", "Mover")
        path = follow(ROOMS, START, TO_TOWN + ["south"])  # ... Lantern Row
        transcript = []
        for d, room in zip(TO_TOWN + ["south"], path):
            self.step(c, d, room, transcript)
        here = path[-1]
        before = Fleet.epochs(fleet.cluster())
        placement = self.wait_placement("Mover", lambda p: p.get("shard") == "world-0")

        c.mark()
        self.assertEqual(fleet.stop("world-0"), 0)
        drained = fleet.wait_msg("world-0", "drain complete")
        self.assertGreaterEqual(drained["redirected"], 1)
        self.assertEqual(drained["reclaimed"], 0)
        view = fleet.wait_owners({z: "world-1" for z in SPLIT}, timeout=5)
        for zone in POOL_0:
            self.assertGreater(Fleet.epochs(view)[zone], before[zone], zone)

        # Same room, same connection, and no sign that anything happened.
        c.send("look")
        c.expect(here.description, ROOM_SHOWN_S)
        self.assertFalse(c.closed)
        self.assertNotIn("shifts", c.text)
        moved = self.wait_placement("Mover", lambda p: p.get("shard") == "world-1")
        self.assertEqual(moved["zone"], "town")
        self.assertGreater(int(moved["epoch"]), int(placement["epoch"]))
        c.send("say still here")
        c.expect("You say, 'still here'")


class OperatorEndpointsTest(FleetCase):
    """Each role keeps /metrics and /api/cluster on its loopback admin listener, off the port
    players (or a load balancer) reach, where /api/health stays; a draining world's health says
    503 so a load balancer can take it out."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("admin")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        fleet.start_gate("gate-0", wait=False)
        for name in ("world-0", "world-1", "gate-0"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT)

    def test_operator_routes_only_on_the_admin_listener(self):
        fleet = self.fleet
        for name, paths in (("account", ["/metrics"]),
                            ("world-0", ["/metrics", "/api/cluster"]),
                            ("gate-0", ["/metrics", "/api/cluster"])):
            proc = fleet.proc(name)
            self.assertEqual(proc.ready["admin_address"], "127.0.0.1", name)
            for path in paths:
                status, body = proc.http_get(path)
                self.assertEqual(status, 404, "%s %s on the public port: %s" % (name, path, body))
                status, body = proc.admin_get(path)
                self.assertEqual(status, 200, "%s %s on the admin port: %s" % (name, path, body))
            for get in (proc.http_get, proc.admin_get):
                status, body = get("/api/health")
                self.assertEqual(status, 200, "%s: %s" % (name, body))
        view = fleet.cluster("world-0")
        self.assertEqual(Fleet.owners(view)["town"], "world-0")

    def test_when_draining_a_world_answers_503(self):
        """world-1 frozen keeps world-0's drain waiting on it (Adopt), long enough to look."""
        fleet = self.fleet
        world = fleet.proc("world-0")
        fleet.sigstop("world-1")
        try:
            fleet.send_signal("world-0", signal.SIGTERM)
            deadline = time.time() + 10
            seen = None
            while time.time() < deadline:
                try:
                    status, body = world.http_get("/api/health")
                except OSError as e:  # the listener closed: the drain was missed
                    seen = e
                    break
                seen = (status, body)
                if status == 503:
                    break
                time.sleep(0.01)
        finally:
            fleet.sigcont("world-1")
        self.assertIsInstance(seen, tuple, "no health answer during the drain: %r" % (seen,))
        status, body = seen
        self.assertEqual(status, 503, body)
        health = json.loads(body)
        self.assertEqual(health["status"], "unavailable")
        self.assertEqual(health["reason"], "draining")
        self.assertEqual(health["shard"], "world-0")
        self.assertEqual(fleet.procs["world-0"].proc.wait(60), 0)


class FailoverTest(FleetCase):
    """A standby with world-0's pool takes its zones when world-0 freezes; world-0, thawed,
    stops them instead of writing them too."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("failover")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        fleet.start_gate("gate-0", wait=False)
        for name in ("world-0", "world-1", "gate-0"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT)

    def test_frozen_owner_loses_its_zones_to_the_standby(self):
        fleet = self.fleet
        before = fleet.cluster()
        fleet.start_world("world-2", POOL_0)
        fleet.wait_msg("world-2", "won no zones: STANDBY", shard="world-2")
        health = fleet.wait_healthy("world-2")
        self.assertTrue(health["standby"])
        self.assertEqual(health["zones"], 1)  # the lobby only
        view = fleet.wait_cluster(lambda v: "world-2" in v["standbys"])
        self.assertEqual(Fleet.owners(view), Fleet.owners(before))
        self.assertEqual(Fleet.epochs(view), Fleet.epochs(before))
        self.assertEqual(fleet.logs("world-2", "claimed zone"), [])

        fleet.sigstop("world-0")
        frozen_at = time.time()
        limit_s = LEASE_TTL_MS / 1000 + 2
        view = fleet.wait_owners({z: "world-2" for z in POOL_0}, timeout=limit_s)
        self.assertLessEqual(time.time() - frozen_at, limit_s)
        for zone in POOL_0:
            self.assertGreater(Fleet.epochs(view)[zone], Fleet.epochs(before)[zone], zone)
        for zone in POOL_1:
            self.assertEqual(Fleet.owners(view)[zone], "world-1")
        taken = Fleet.epochs(view)

        fleet.sigcont("world-0")
        stops = ("lease lost: stopping zone", "lease fence: stopping without drain")
        for zone in POOL_0:
            fleet.wait_log("world-0", lambda e, z=zone: e.get("msg") in stops and
                           e.get("zone") == z, timeout=5)
        fleet.wait_healthy("world-0", timeout=5, predicate=lambda h: h["zones"] == 1)
        # Two keeper passes later the zones are still world-2's, at the same epochs.
        until = time.time() + 2 * LEASE_TTL_MS / 3000 + 0.5
        while time.time() < until:
            view = fleet.cluster()
            for zone in POOL_0:
                self.assertEqual(Fleet.owners(view)[zone], "world-2", zone)
                self.assertEqual(Fleet.epochs(view)[zone], taken[zone], zone)
            time.sleep(0.1)
        self.assertEqual(fleet.health("world-0")["zones"], 1)
        self.assertEqual(fleet.health("world-2")["zones"], 4)


class StandbyTakeoverTest(FleetCase):
    """A standby holds nothing until the owner stops; then it adopts the zones and the players
    in them carry on over the same connection."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("takeover")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_gate("gate-0", wait=False)
        fleet.wait_ready("world-0")
        fleet.wait_ready("gate-0")
        fleet.wait_owners({z: "world-0" for z in POOL_0})
        fleet.start_world("standby", POOL_0)

    def test_standby_adopts_the_zones_of_a_stopped_world(self):
        fleet = self.fleet
        fleet.wait_msg("standby", "won no zones: STANDBY")
        health = fleet.health("standby")
        self.assertTrue(health["standby"])
        self.assertEqual(health["zones"], 1)
        before = Fleet.epochs(fleet.cluster())

        c = fleet.connect("gate-0")
        new_player(c, "steadfast", "Steadfast")
        transcript = []
        path = follow(ROOMS, START, TO_TOWN)
        for d, room in zip(TO_TOWN, path):
            self.step(c, d, room, transcript)
        self.assertEqual(fleet.health("standby")["zones"], 1)  # still nothing of its pool
        here = path[-1]

        self.assertEqual(fleet.stop("world-0"), 0)
        view = fleet.wait_owners({z: "standby" for z in POOL_0}, timeout=10)
        for zone in POOL_0:
            self.assertGreater(Fleet.epochs(view)[zone], before[zone], zone)
        fleet.wait_healthy("standby", predicate=lambda h: h["zones"] == 4 and not h["standby"])

        # The player may have been told to hold on, and nothing worse; then `look` works again.
        deadline = time.time() + 20
        while True:
            seen = c.mark()
            transcript.append(seen)
            if here.name in seen:
                break
            for bad in ("could not take you", "not being served", "closing"):
                self.assertNotIn(bad, seen)
            self.assertFalse(c.closed, "the gate dropped the player: " + "".join(transcript))
            self.assertLess(time.time(), deadline, "no room again: " + "".join(transcript))
            c.send("look")
            try:
                c.expect(here.name, timeout=1)
            except AssertionError:
                pass
            else:
                break
        self.assertFalse(c.closed)
        everything = "".join(transcript) + c.text
        for bad in ("could not take you", "not being served"):
            self.assertNotIn(bad, everything)
        c.mark()
        c.send("say still here")
        c.expect("You say, 'still here'")
        self.assertEqual(fleet.placement("Steadfast").get("shard"), "standby")


class GateStopTest(FleetCase):
    """A gate stopped with SIGTERM tells its players, exits 0, and their characters wait in the
    world for another gate."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("gatestop")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0 + POOL_1, wait=False)
        fleet.start_gate("gate-0", wait=False)
        fleet.start_gate("gate-1", wait=False)
        for name in ("world-0", "gate-0", "gate-1"):
            fleet.wait_ready(name)
        fleet.wait_owners({"town": "world-0"})

    def test_gate_stops_cleanly_and_another_gate_takes_over(self):
        c = self.fleet.connect("gate-0")
        new_player(c, "leaver", "Leaver")
        transcript = []
        path = follow(ROOMS, START, TO_TOWN)
        for d, room in zip(TO_TOWN, path):
            self.step(c, d, room, transcript)
        code = self.fleet.stop("gate-0")
        c.expect("This gateway is closing")
        c.wait_closed()
        d = self.fleet.connect("gate-1")
        log_in(d, "leaver")
        d.expect(path[-1].name, ROOM_SHOWN_S)
        self.assertEqual(code, 0, "gate-0 on SIGTERM:\n" +
                         "\n".join(self.fleet.proc("gate-0").lines[-30:]))


class FailClosedBootTest(FleetCase):
    """A role missing a security setting refuses to start, naming it (exit code 2)."""

    @classmethod
    def setUpClass(cls):
        cls.make_fleet("boot")

    def assert_refused(self, role, env, variable):
        done = self.fleet.run(role, env, timeout=60)
        self.assertEqual(done.returncode, 2, "stdout:\n%s\nstderr:\n%s" % (done.stdout,
                                                                           done.stderr))
        self.assertIn(variable, done.stderr)

    def test_world_without_the_assertion_key(self):
        env = self.fleet.world_env("world-x", POOL_0)
        env["TELOS_ASSERTION_VERIFY_KEY_FILE"] = None
        self.assert_refused("world", env, "TELOS_ASSERTION_VERIFY_KEY_FILE")

    def test_world_claiming_the_directors_name(self):
        # The director announces on the bus as origin "director"; a world of that name would
        # skip the director's announcements as its own.
        env = self.fleet.world_env("director", POOL_0)
        self.assert_refused("world", env, "TELOS_SHARD_ID")

    def test_gate_without_the_account_service(self):
        env = self.fleet.gate_env("gate-x")
        env["TELOS_ACCOUNT"] = None
        self.assert_refused("gate", env, "TELOS_ACCOUNT")

    def test_account_without_the_caller_token(self):
        env = self.fleet.account_env()
        env["TELOS_CALLER_TOKEN"] = None
        env["TELOS_ALLOW_INSECURE"] = None
        self.assert_refused("account", env, "TELOS_CALLER_TOKEN")

    def test_world_without_the_handoff_key(self):
        env = self.fleet.world_env("world-x", POOL_0)
        env["TELOS_HANDOFF_KEY_FILE"] = None
        env["TELOS_ALLOW_INSECURE"] = None
        self.assert_refused("world", env, "TELOS_HANDOFF_KEY_FILE")

    def test_gate_without_the_caller_token(self):
        env = self.fleet.gate_env("gate-x")
        env["TELOS_CALLER_TOKEN"] = None
        env["TELOS_ALLOW_INSECURE"] = None
        self.assert_refused("gate", env, "TELOS_CALLER_TOKEN")

    def test_world_without_the_gate_token(self):
        env = self.fleet.world_env("world-x", POOL_0)
        env["TELOS_GATE_TOKEN"] = None
        env["TELOS_ALLOW_INSECURE"] = None
        self.assert_refused("world", env, "TELOS_GATE_TOKEN")

    def test_world_without_the_world_token(self):
        env = self.fleet.world_env("world-x", POOL_0)
        env["TELOS_WORLD_TOKEN"] = None
        env["TELOS_ALLOW_INSECURE"] = None
        self.assert_refused("world", env, "TELOS_WORLD_TOKEN")

    def test_world_whose_two_tokens_are_one(self):
        env = self.fleet.world_env("world-x", POOL_0)
        env["TELOS_WORLD_TOKEN"] = env["TELOS_GATE_TOKEN"]
        self.assert_refused("world", env, "TELOS_WORLD_TOKEN")

    def test_gate_without_the_gate_token(self):
        env = self.fleet.gate_env("gate-x")
        env["TELOS_GATE_TOKEN"] = None
        env["TELOS_ALLOW_INSECURE"] = None
        self.assert_refused("gate", env, "TELOS_GATE_TOKEN")

    def test_allow_insecure_starts_and_names_each_insecure_choice(self):
        fleet = self.fleet
        fleet.start_account(extra_env={"TELOS_CALLER_TOKEN": "", "TELOS_ALLOW_INSECURE": "1"},
                            name="account-open")
        fleet.wait_msg("account-open", "insecure: TELOS_CALLER_TOKEN unset, any caller is accepted")
        fleet.start_world("world-open", POOL_0, extra_env={"TELOS_HANDOFF_KEY_FILE": "",
                                                          "TELOS_ALLOW_INSECURE": "1"})
        fleet.wait_log("world-open", lambda e: e.get("msg", "").startswith(
            "insecure: TELOS_HANDOFF_KEY_FILE unset"))
        fleet.start_gate("gate-open", extra_env={"TELOS_CALLER_TOKEN": "",
                                                 "TELOS_ALLOW_INSECURE": "1"})
        fleet.wait_log("gate-open", lambda e: e.get("msg", "").startswith(
            "insecure: TELOS_CALLER_TOKEN unset"))


class PackDivergenceTest(FleetCase):
    """Every world of a fleet runs the same content pack: a world whose pack differs from a live
    peer's refuses to start, unless TELOS_ALLOW_INSECURE=1, which starts it with a warning."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("packs")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0)
        cls.other = tempfile.mkdtemp(prefix="telos-pack-")
        cls.addClassCleanup(shutil.rmtree, cls.other, True)
        shutil.copytree(os.path.join(REPO, "content"), cls.other, dirs_exist_ok=True)
        town = os.path.join(cls.other, "zones", "town.toml")
        with open(town, encoding="utf-8") as f:
            text = f.read()
        with open(town, "w", encoding="utf-8") as f:
            f.write(text.replace("A cobbled street", "A freshly cobbled street", 1))

    def test_a_world_with_another_pack_is_refused(self):
        env = self.fleet.world_env("world-9", POOL_1, {"TELOS_CONTENT_DIR": self.other})
        done = self.fleet.run("world", env)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("differs", done.stderr)
        self.assertIn("shard world-0", done.stderr)

    def test_allow_insecure_starts_it_with_a_warning(self):
        self.fleet.start_world("world-8", POOL_1, extra_env={"TELOS_CONTENT_DIR": self.other,
                                                             "TELOS_ALLOW_INSECURE": "1"})
        self.fleet.wait_msg("world-8",
                            "insecure: content pack differs from the fleet's (TELOS_ALLOW_INSECURE)")
        self.assertEqual(self.fleet.stop("world-8"), 0)


class WrongAssertionKeyTest(FleetCase):
    """A world that trusts another key takes nobody in: the gate says so, the world logs it."""

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("wrongkey")
        _, stranger = fleet.keygen("stranger")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0 + POOL_1,
                          extra_env={"TELOS_ASSERTION_VERIFY_KEY_FILE": stranger})
        fleet.start_gate("gate-0")

    def test_login_is_refused(self):
        c = self.fleet.connect("gate-0")
        c.expect("account name")
        c.send("new")
        c.expect("Choose an account name")
        c.send("mistrusted")
        c.expect("Choose a password")
        c.send(PASSWORD)
        c.expect("Repeat the password")
        c.send(PASSWORD)
        c.expect("is ready")
        c.expect("new <name>")
        c.send("new Outsider")
        c.expect("The world could not take you in")
        self.assertNotIn("The Atrium of Arrivals", c.text)
        self.fleet.wait_msg("world-0", "security: assertion refused", gate="gate-0")
        self.assertEqual(self.fleet.health("world-0")["players"], 0)


if __name__ == "__main__":
    unittest.main()
