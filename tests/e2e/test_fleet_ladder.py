"""End-to-end tests of comms across shards and the degradation ladder (ctest label e2e; needs
the services: scripts/services start, eval "$(scripts/services env)").

Two worlds with split pools and one gate. The worlds (and the gate, for Redis) reach Redis,
PostgreSQL and NATS through TCP proxies the tests cut and restore (proxy.py), so a service goes
away for the fleet while it keeps running for everything else. Players stand in town (world-0) and in the Greywood
(world-1): tells, replies, channels and mail cross the shard boundary over NATS; a tell to a
name nobody has is refused, one to a character who is offline too. Cutting NATS turns comms
across shards off with a message and back on when it returns; cutting PostgreSQL keeps
everyone playing (a login meanwhile plays an ephemeral copy), and what they did is saved once it
is back; cutting Redis is single-shard mode: zones play on writing nothing, exits to other
worlds are sealed, logins still work, and the held saves are written when it returns. No
process exits."""

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import follow  # noqa: E402
from proxy import TcpProxy  # noqa: E402
from test_fleet import POOL_0, POOL_1, ROOMS, SPLIT, START, TO_TOWN, FleetCase  # noqa: E402
from test_serve import log_in, new_player  # noqa: E402

TO_FOREST = TO_TOWN + ["south", "south", "west", "west", "west"]  # lobby -> forest:forest_edge
SEEN_S = 15  # how long a line may take to reach another player


class LadderTest(FleetCase):
    @classmethod
    def setUpClass(cls):
        if not os.environ.get("TELOS_NATS"):
            raise AssertionError("TELOS_NATS is not set: eval \"$(scripts/services env)\"")
        cls.proxies = {
            "redis": TcpProxy.for_url(os.environ.get("TELOS_REDIS", "")),
            "postgres": TcpProxy.for_url(os.environ.get("TELOS_DATABASE_URL", "")),
            "nats": TcpProxy.for_url(os.environ["TELOS_NATS"]),
        }
        for proxy in cls.proxies.values():
            cls.addClassCleanup(proxy.close)  # after the fleet's cleanup (cleanups run LIFO)
        fleet = cls.make_fleet("ladder")
        # First of all cleanups: a test that failed mid-outage must not slow the fleet's stop.
        cls.addClassCleanup(lambda: [p.restore() for p in cls.proxies.values()])
        world_env = {
            "TELOS_REDIS": cls.proxies["redis"].url(fleet.redis_url),
            "TELOS_DATABASE_URL": cls.proxies["postgres"].url(fleet.database_url),
            "TELOS_NATS": cls.proxies["nats"].url(os.environ["TELOS_NATS"]),
            # Rows at once, so a save shows in PostgreSQL without waiting a minute.
            "TELOS_SAVE_INTERVAL_MS": "1000",
            "TELOS_CHECKPOINT_INTERVAL_MS": "500",
        }
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, extra_env=world_env, wait=False)
        fleet.start_world("world-1", POOL_1, extra_env=world_env, wait=False)
        fleet.start_gate("gate-0", extra_env={"TELOS_REDIS": world_env["TELOS_REDIS"]},
                         wait=False)
        for name in ("world-0", "world-1", "gate-0"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT)

    def setUp(self):
        for proxy in self.proxies.values():
            proxy.restore()

    # --- helpers

    def player(self, name, directions):
        """A new character walked from the Atrium along `directions`."""
        c = self.fleet.connect("gate-0")
        new_player(c, name.lower(), name)
        path = follow(ROOMS, START, directions)
        transcript = []
        for d, room in zip(directions, path):
            self.step(c, d, room, transcript)
        c.mark()
        return c

    def dependency(self, world, name):
        return self.fleet.health(world).get("dependencies", {}).get(name)

    def wait_dependency(self, name, state, timeout=20):
        for world in ("world-0", "world-1"):
            self.fleet.wait_healthy(
                world, timeout,
                predicate=lambda h: h.get("dependencies", {}).get(name) == state)

    def wait_row_room(self, character, ref, timeout=30):
        """Waits until the character's PostgreSQL row stands in room `ref` ("zone:room")."""
        deadline = time.time() + timeout
        while True:
            row = subprocess.run(
                ["psql", self.fleet.database_url, "-tAq", "-c",
                 "SELECT zone_id || ':' || room_id FROM %s.characters WHERE name_key = '%s'" %
                 (self.fleet.schema, character)],
                capture_output=True, text=True, timeout=30).stdout.strip()
            if row == ref:
                return
            self.assertLess(time.time(), deadline, "%s's row is in %r, not %s" %
                            (character, row, ref))
            time.sleep(0.2)

    def assert_all_alive(self):
        for name in ("account", "world-0", "world-1", "gate-0"):
            self.assertTrue(self.fleet.alive(name), name + " exited")

    # --- comms across shards

    def test_tells_channels_and_mail_cross_shards(self):
        alice = self.player("Alida", TO_TOWN)
        bob = self.player("Bodo", TO_FOREST)
        self.assertEqual(self.fleet.placement("alida").get("shard"), "world-0")
        self.assertEqual(self.fleet.placement("bodo").get("shard"), "world-1")

        alice.send("tell bodo the bridge is out")
        bob.expect("Alida tells you, 'the bridge is out'", SEEN_S)
        alice.expect("You tell Bodo, 'the bridge is out'", SEEN_S)
        bob.send("reply then we go round")
        alice.expect("Bodo tells you, 'then we go round'", SEEN_S)

        alice.send("ooc anyone for the arena?")
        bob.expect("[ooc] Alida: anyone for the arena?", SEEN_S)
        alice.expect("[ooc] Alida: anyone for the arena?", SEEN_S)

        alice.send("mail send bodo meet me at the west gate")
        alice.expect("Your letter to bodo is on its way.", SEEN_S)
        bob.expect("You have new mail from Alida.", SEEN_S)
        bob.send("mail")
        bob.expect("from Alida: meet me at the west gate", SEEN_S)

    def test_tell_to_unknown_and_offline_names_is_refused(self):
        alice = self.player("Alwin", TO_TOWN)
        alice.send("tell nobodyhere hello")
        alice.expect("There is no player called 'nobodyhere'.", SEEN_S)

        carol = self.player("Carola", [])
        carol.send("quit")
        carol.wait_closed()
        deadline = time.time() + SEEN_S
        while self.fleet.placement("carola").get("shard"):
            self.assertLess(time.time(), deadline, "Carola's placement was not tombstoned")
            time.sleep(0.05)
        alice.send("tell carola are you there?")
        alice.expect("carola is not online.", SEEN_S)

    def test_mail_to_an_offline_player_is_announced_at_login(self):
        alice = self.player("Alma", TO_TOWN)
        dora = self.player("Dorte", [])
        dora.send("quit")
        dora.wait_closed()
        alice.send("mail send dorte the tavern is open")
        alice.expect("Your letter to dorte is on its way.", SEEN_S)
        again = self.fleet.connect("gate-0")
        log_in(again, "dorte")
        again.expect("You have 1 unread letter.", SEEN_S)

    # --- the ladder

    def test_nats_outage_turns_comms_across_shards_off_and_back_on(self):
        alice = self.player("Aldo", TO_TOWN)
        bob = self.player("Bertl", TO_FOREST)
        alice.send("tell bertl before")
        bob.expect("Aldo tells you, 'before'", SEEN_S)

        self.proxies["nats"].cut()
        self.wait_dependency("nats", "down")
        self.fleet.wait_msg("world-0", "nats unavailable; tells, channels and mail pings across "
                            "shards disabled")
        self.assertIn("tells, channels and mail pings across shards disabled",
                      self.fleet.health("world-0")["degraded"])
        alice.mark()
        alice.send("tell bertl during")
        alice.expect("cannot reach the rest of the world right now", SEEN_S)
        alice.send("ooc only us?")
        alice.expect("[ooc] Aldo: only us?", SEEN_S)
        alice.expect("Only players on this shard heard that", SEEN_S)
        alice.send("look")  # the shard itself plays on
        alice.expect("[Exits:", SEEN_S)
        self.assert_all_alive()

        self.proxies["nats"].restore()
        self.wait_dependency("nats", "up", timeout=30)
        self.fleet.wait_msg("world-0", "nats ready")
        # Subscriptions come back with the connection; a tell may race the resubscription.
        deadline = time.time() + SEEN_S
        while True:
            alice.mark()
            alice.send("tell bertl after")
            if alice.expect_any(["You tell Bertl, 'after'", "cannot hear you",
                                 "is not online", "cannot reach"], SEEN_S).startswith("You"):
                break
            self.assertLess(time.time(), deadline, "tells did not come back after NATS did")
            time.sleep(0.2)
        bob.expect("Aldo tells you, 'after'", SEEN_S)

    def test_postgres_outage_keeps_players_playing_and_saves_resume(self):
        alice = self.player("Alrun", TO_TOWN)
        elke = self.player("Elke", TO_TOWN)
        elke.send("quit")
        elke.wait_closed()
        self.proxies["postgres"].cut()
        self.wait_dependency("postgres", "down")
        self.fleet.wait_msg("world-0", "postgres unavailable; new characters are ephemeral; "
                            "saves wait")
        path = follow(ROOMS, "town:north_gate", ["south"])
        self.step(alice, "south", path[0], [])
        alice.send("say still here")
        alice.expect("You say, 'still here'", SEEN_S)
        # A login now plays an ephemeral copy, and is told so.
        elke = self.fleet.connect("gate-0")
        log_in(elke, "elke")
        elke.expect("you are playing an ephemeral copy of Elke", SEEN_S)
        elke.send("say nothing of this is kept")
        elke.expect("You say, 'nothing of this is kept'", SEEN_S)
        elke.send("quit")
        elke.wait_closed()
        self.assert_all_alive()

        self.proxies["postgres"].restore()
        self.wait_dependency("postgres", "up", timeout=30)
        self.fleet.wait_msg("world-0", "postgres ready")
        again = self.fleet.connect("gate-0")
        log_in(again, "elke")
        again.expect("[Exits:", SEEN_S)
        self.assertNotIn("ephemeral", again.mark())
        alice.send("quit")
        alice.wait_closed()
        self.wait_row_room("alrun", path[0].ref)  # the move made during the outage

    def test_redis_outage_is_single_shard_mode_and_recovers(self):
        alice = self.player("Alke", TO_TOWN)
        bob = self.player("Bruno", TO_FOREST)
        gerda = self.player("Gerda", [])
        gerda.send("quit")
        gerda.wait_closed()
        to_west_gate = ["south", "south", "west", "west"]  # inside town
        path = follow(ROOMS, "town:north_gate", to_west_gate + ["west"])
        epochs_before = {z: e for z, e in self.fleet.epochs(self.fleet.cluster()).items()}

        self.proxies["redis"].cut()
        self.wait_dependency("redis", "down")
        self.fleet.wait_msg("world-0", "redis unavailable; single-shard mode")
        # At the lease fence each zone goes on in single-shard mode rather than stopping.
        for world, zone in (("world-0", "town"), ("world-1", "forest")):
            self.fleet.wait_msg(
                world, "lease fence: directory unreachable, zone continues in single-shard mode",
                zone=zone)
        self.assertEqual(self.fleet.health("world-0")["zones"], 4)
        transcript = []
        for d, room in zip(to_west_gate, path):
            self.step(alice, d, room, transcript)  # play goes on inside the shard
        alice.mark()
        alice.send("west")  # forest is on world-1: no handoff can move a placement now
        alice.expect("The way there is sealed", SEEN_S)
        alice.expect(path[3].name, SEEN_S)  # still at the West Gate
        # Her periodic save is kept back, not written.
        self.fleet.wait_msg("world-0", "saves held: zone in single-shard mode", zone="town")
        alice.send("tell bruno the gate is sealed")  # NATS still carries tells
        bob.expect("Alke tells you, 'the gate is sealed'", SEEN_S)
        # The gate cannot read Redis either: a login is routed by what it last knew.
        again = self.fleet.connect("gate-0")
        log_in(again, "gerda")
        again.expect("The Atrium of Arrivals", SEEN_S)
        again.send("say made it")
        again.expect("You say, 'made it'", SEEN_S)
        self.assert_all_alive()

        self.proxies["redis"].restore()
        self.wait_dependency("redis", "up", timeout=30)
        self.fleet.wait_msg("world-0", "redis ready")
        self.fleet.wait_msg("world-0", "lease confirmed again: zone leaves single-shard mode",
                            zone="town", timeout=30)
        # What Alke did while town wrote nothing is written now.
        self.fleet.wait_msg("world-0", "writing saves held in single-shard mode", zone="town")
        self.wait_row_room("alke", path[3].ref)
        self.fleet.wait_owners(SPLIT, timeout=30)
        self.step(alice, "west", path[4], transcript)  # across to world-1 again
        self.assertEqual(self.fleet.placement("alke").get("shard"), "world-1")
        after = self.fleet.epochs(self.fleet.cluster())
        for zone in SPLIT:
            self.assertGreaterEqual(after[zone], epochs_before[zone], zone)


if __name__ == "__main__":
    unittest.main()
