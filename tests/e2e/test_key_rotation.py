"""A key rotation under load drops nobody (ctest label e2e; issue 23 item 3).

A fleet (account service, two worlds, one gate) with players in zones of both worlds rotates
both of its keys with `telos keygen --rotate`, rolling them out in the order keygen prints:

  1. each world in turn restarts with the new and the previous key in its rings, still
     signing handoffs with the previous handoff key (verifiers first);
  2. the account service restarts signing assertions with the new key;
  3. each world in turn restarts signing handoffs with the new key.

A world's restart is a drain, so every step hands the players between the two worlds under
whatever mix of keys is running at that moment. Throughout, no player's connection closes,
every player keeps answering, a new player logs in after every step, and no world refuses an
assertion or a snapshot. Needs the development services, like test_fleet.py."""

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import follow  # noqa: E402
from test_fleet import (ROOM_SHOWN_S, ROOMS, SPLIT, START, TO_TOWN, POOL_0, POOL_1,  # noqa: E402
                        FleetCase)
from test_serve import BINARY, new_player  # noqa: E402

TO_FOREST = TO_TOWN + ["south", "south", "west", "west", "west"]  # ... forest:forest_edge
REFUSALS = ("security: assertion refused", "security: handoff snapshot refused")


class KeyRotationTest(FleetCase):

    @classmethod
    def setUpClass(cls):
        fleet = cls.make_fleet("keyroll")
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        fleet.start_gate("gate-0", wait=False)
        for name in ("world-0", "world-1", "gate-0"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT)

    def rotate(self, name):
        """`telos keygen --rotate` of the fleet's pair `name`: {"new": id, "previous": id}."""
        out = subprocess.run([BINARY, "keygen", "--rotate", "--dir", self.fleet.keys_dir,
                              "--name", name], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        ids = dict(re.findall(r"^(new|previous) key id ([0-9a-f]{16}):", out.stdout, re.M))
        self.assertEqual(set(ids), {"new", "previous"}, out.stdout)
        # The printed roll-out names the variables this test sets, verifiers first.
        self.assertLess(out.stdout.index("TELOS_ASSERTION_PREVIOUS_VERIFY_KEY_FILE"),
                        out.stdout.index("TELOS_SIGNING_KEY_FILE"))
        return ids

    def world_keys(self, handoff_signing):
        k = self.fleet.key
        return {
            "TELOS_ASSERTION_VERIFY_KEY_FILE": k("account.pub"),
            "TELOS_ASSERTION_PREVIOUS_VERIFY_KEY_FILE": k("account.previous.pub"),
            "TELOS_HANDOFF_KEY_FILE": k(handoff_signing),
            "TELOS_HANDOFF_VERIFY_KEY_FILE": k("handoff.pub"),
            "TELOS_HANDOFF_PREVIOUS_VERIFY_KEY_FILE": k("handoff.previous.pub"),
        }

    def restart(self, name, retired, start):
        """Stops `name` (a world drains to its peer), keeps its Server in `retired` for the log
        checks, and starts it again with `start()`."""
        proc = self.fleet.proc(name)
        retired.append(proc)
        self.addCleanup(proc.cleanup)  # the fleet's cleanup knows only the running one
        self.assertEqual(self.fleet.stop(name), 0, name)
        return start()

    def assert_everyone_answers(self, players, step):
        for i, c in enumerate(players):
            self.assertFalse(c.closed, "player %d disconnected at step %s" % (i, step))
            said = "%s %d" % (step, i)
            c.send("say " + said)
            c.expect("You say, '%s'" % said, ROOM_SHOWN_S)

    def test_a_rotation_under_load_drops_nobody(self):
        fleet = self.fleet
        players = []
        for i, path in enumerate([TO_TOWN + ["south"], TO_FOREST]):
            c = fleet.connect("gate-0")
            new_player(c, "roller" + "ab"[i], "Roller" + "ab"[i])
            transcript = []
            for d, room in zip(path, follow(ROOMS, START, path)):
                self.step(c, d, room, transcript)
            players.append(c)
        newcomers = [0]

        def new_login(step):
            newcomers[0] += 1
            c = fleet.connect("gate-0")
            letter = "abcdefgh"[newcomers[0]]
            new_player(c, "late" + letter, "Late" + letter)
            players.append(c)  # and it stays connected for the rest of the roll
            self.assert_everyone_answers(players, step)

        account = self.rotate("account")
        handoff = self.rotate("handoff")
        retired = []
        account_listen = fleet.account

        # 1. Verifiers first: both worlds accept new and previous keys, and still sign handoffs
        # with the previous one, which every world not yet restarted accepts.
        for name, pool in (("world-0", POOL_0), ("world-1", POOL_1)):
            self.restart(name, retired, lambda: fleet.start_world(
                name, pool, extra_env=self.world_keys("handoff.previous.key")))
            self.assert_everyone_answers(players, "verifiers-" + name)
            new_login("verifiers-" + name)

        # 2. The signer: assertions under the new key from now on, on the same address.
        self.restart("account", retired, lambda: fleet.start_account(
            extra_env={"TELOS_ACCOUNT_LISTEN": account_listen}))
        self.assertEqual(fleet.account, account_listen)
        loaded = fleet.wait_msg("account", "signing key loaded")
        self.assertEqual(loaded["key_id"], account["new"])
        self.assert_everyone_answers(players, "signer")
        new_login("signer")

        # 3. Handoff signers: each world signs with the new handoff key; the other accepts it.
        for name, pool in (("world-0", POOL_0), ("world-1", POOL_1)):
            self.restart(name, retired, lambda: fleet.start_world(
                name, pool, extra_env=self.world_keys("handoff.key")))
            self.assert_everyone_answers(players, "handoff-" + name)
            new_login("handoff-" + name)

        for name in ("world-0", "world-1"):
            keys = fleet.wait_msg(name, "keys loaded")
            self.assertEqual(keys["assertion_verify"], "%s, %s" % (account["new"],
                                                                   account["previous"]))
            self.assertEqual(keys["handoff_signing"], handoff["new"])
            self.assertEqual(keys["handoff_verify"], "%s, %s" % (handoff["new"],
                                                                 handoff["previous"]))
        # Every handoff of the roll went through: no process refused a document, and every
        # world that restarted held players (each drain hands them all to the other world) and
        # handed them over rather than reclaiming them.
        for proc in retired + [fleet.proc(n) for n in ("world-0", "world-1", "account")]:
            refused = [e for e in proc.log_entries() if e.get("msg") in REFUSALS]
            self.assertEqual(refused, [], "refusals in a %s log" % proc.role)
        for proc in retired:
            if proc.role != "world":
                continue
            drained = [e for e in proc.log_entries() if e.get("msg") == "drain complete"]
            self.assertEqual(len(drained), 1, "a world's restart is one drain")
            self.assertGreaterEqual(drained[0].get("redirected", 0), 1, drained[0])
            self.assertEqual(drained[0].get("reclaimed"), 0, drained[0])
        self.assert_everyone_answers(players, "done")


if __name__ == "__main__":
    unittest.main()
