"""End-to-end test of `telos ctl reload` on a fleet (ctest label e2e): two worlds on Redis,
PostgreSQL and NATS, each with its own copy of the pack. The reload rebuilds the changed zone on
both while a player stands in it; afterwards a world with the old pack is refused at boot; and
with NATS unreachable, or a bad pack, ctl refuses and nothing changes. Needs the services
(scripts/services start; eval "$(scripts/services env)")."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import Fleet, free_port  # noqa: E402
from test_fleet import POOL_0, POOL_1, FleetCase  # noqa: E402
from test_serve import BINARY, REPO, new_player  # noqa: E402

OLD = "Two squat towers of grey stone flank a gateway"
NEW = "Two freshly whitewashed towers flank a gateway"


class CtlReloadTest(FleetCase):
    @classmethod
    def setUpClass(cls):
        if not os.environ.get("TELOS_NATS"):
            raise unittest.SkipTest("TELOS_NATS unset: run scripts/services start")
        cls.fleet = Fleet(BINARY, REPO, "reload")
        cls.addClassCleanup(cls.fleet.cleanup)
        cls.packs = {}
        for shard in ("world-0", "world-1"):
            folder = tempfile.mkdtemp(prefix="telos-reload-%s-" % shard)
            cls.addClassCleanup(shutil.rmtree, folder, True)
            shutil.copytree(os.path.join(REPO, "content"), folder, dirs_exist_ok=True)
            cls.packs[shard] = folder
        cls.fleet.start_account()
        cls.fleet.start_world("world-0", POOL_0,
                              extra_env={"TELOS_CONTENT_DIR": cls.packs["world-0"]})
        cls.fleet.start_world("world-1", POOL_1,
                              extra_env={"TELOS_CONTENT_DIR": cls.packs["world-1"]})
        cls.fleet.start_gate("gate-0")

    def ctl_reload(self, content_dir, **env):
        full = dict(os.environ)
        full.update(self.fleet.base_env())
        full["TELOS_CONTENT_DIR"] = content_dir
        full.update(env)
        return subprocess.run([BINARY, "ctl", "reload"], env=full, capture_output=True,
                              text=True, timeout=120)

    def edit_town(self, folder, old, new):
        path = os.path.join(folder, "zones", "town.toml")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert text.count(old) == 1
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
        os.replace(path + ".tmp", path)

    def test_a_reload_reaches_every_world_and_then_the_old_pack_is_refused(self):
        client = self.fleet.connect("gate-0")
        new_player(client, "reloader", "Rhosyn")
        for step in ("south", "south", "south"):  # lobby:atrium -> town:north_gate (world-0)
            client.send(step)
        client.expect(OLD)

        # A bad pack is refused with its file:line before any world is asked.
        bad = tempfile.mkdtemp(prefix="telos-reload-bad-")
        self.addCleanup(shutil.rmtree, bad, True)
        shutil.copytree(self.packs["world-0"], bad, dirs_exist_ok=True)
        self.edit_town(bad, 'to = "rampart"', 'to = "no_such_room"')
        refused = self.ctl_reload(bad)
        self.assertEqual(refused.returncode, 2, refused.stderr)
        self.assertIn("zones/town.toml:", refused.stderr)

        # NATS unreachable: refused, nothing asked.
        no_nats = self.ctl_reload(self.packs["world-0"],
                                  TELOS_NATS="nats://127.0.0.1:%d" % free_port())
        self.assertEqual(no_nats.returncode, 1, no_nats.stderr)
        self.assertIn("the bus (NATS) is down", no_nats.stderr)

        for folder in self.packs.values():
            self.edit_town(folder, OLD, NEW)
        done = self.ctl_reload(self.packs["world-0"])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("world-0: now runs", done.stdout)
        self.assertIn("world-1: now runs", done.stdout)
        self.assertIn("rebuilt", done.stdout)
        self.assertIn("every world runs pack", done.stdout)

        client.mark()
        client.send("look")
        client.expect(NEW)
        self.assertFalse(client.closed)

        # A stray world with the old pack is refused now.
        stray = self.fleet.run("world", self.fleet.world_env(
            "world-9", [], {"TELOS_CONTENT_DIR": os.path.join(REPO, "content"),
                            "TELOS_ZONE_POOL": "forest"}))
        self.assertEqual(stray.returncode, 2, stray.stderr)
        self.assertIn("differs", stray.stderr)


if __name__ == "__main__":
    unittest.main()
