"""End-to-end test of content hot reload on `telos serve` (ctest label e2e).

200 bots play while the pack on disk changes and SIGHUP asks the server to reload: first a pack
with an error (refused with its file:line, nothing changes), then one where a room description,
a mob and a script changed and a room was removed. Three players watch: one sees the new room
text where they stand, one stood in the removed room and is moved with a message, one sees the
changed mob and the changed script. No bot and no player is disconnected. Settings come from
TELOS_BINARY and TELOS_REPO, as in test_serve.py."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Server, Telnet  # noqa: E402
from test_serve import TO_TOWN, new_player  # noqa: E402

BINARY = os.environ.get("TELOS_BINARY", "build/dev/telos")
REPO = os.environ.get("TELOS_REPO", ".")
BOTS = 200

OLD_GATE = "Two squat towers of grey stone flank a gateway"
NEW_GATE = "Two freshly whitewashed towers flank a gateway"
OLD_MARISOL = "Marisol the attendant leans on the counter, pen behind one ear."
NEW_MARISOL = "Marisol the attendant drums her fingers on the counter."
OLD_WELCOME = "Welcome to Telos, "
NEW_WELCOME = "Welcome home to Telos, "
RAMPART_UP_EXIT = """  [[rooms.exits]]
  dir = "up"
  to = "rampart"
  description = "Narrow steps cut into the inside of the wall lead up to the rampart."
"""


def replace_once(text, old, new):
    assert text.count(old) == 1, "expected exactly one %r" % old
    return text.replace(old, new)


def without_rampart(town):
    """town.toml without the rampart room and the north gate's stair up to it."""
    town = replace_once(town, RAMPART_UP_EXIT, "")
    start = town.index('[[rooms]]\nid = "rampart"')
    end = town.index("[[rooms]]", start + 1)
    return town[:start] + town[end:]


class ReloadTest(unittest.TestCase):
    def setUp(self):
        self.content = tempfile.mkdtemp(prefix="telos-reload-content-")
        self.addCleanup(shutil.rmtree, self.content, True)
        shutil.copytree(os.path.join(REPO, "content"), self.content, dirs_exist_ok=True)
        self.server = Server(BINARY, REPO, extra_env={
            "TELOS_CONTENT_DIR": self.content, "TELOS_CONNECTIONS_PER_ADDRESS_MAX": "1000"})
        self.addCleanup(self.server.cleanup)
        self.server.start()

    def path(self, rel):
        return os.path.join(self.content, rel)

    def read(self, rel):
        with open(self.path(rel)) as f:
            return f.read()

    def write(self, rel, text):
        # Written whole under another name, then renamed: a reload never reads half a file.
        tmp = self.path(rel) + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path(rel))

    def player(self, account, character, steps):
        client = Telnet(self.server.telnet_port)
        self.addCleanup(client.close)
        new_player(client, account, character)
        for step in steps:
            client.send(step)
        return client

    def reload(self, expect_msg, timeout=90):
        """SIGHUP, then the verdict log line that follows it."""
        seen = len([e for e in self.server.log_entries() if e.get("msg") in (
            "reload applied", "reload refused")])
        self.server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + timeout
        while time.time() < deadline:
            verdicts = [e for e in self.server.log_entries()
                        if e.get("msg") in ("reload applied", "reload refused")]
            if len(verdicts) > seen:
                self.assertEqual(verdicts[-1]["msg"], expect_msg, verdicts[-1])
                return verdicts[-1]
            self.assertIsNone(self.server.proc.poll(), "the server exited")
            time.sleep(0.05)
        self.fail("no reload verdict in %ss" % timeout)

    def test_two_hundred_bots_play_through_a_bad_and_a_good_reload(self):
        out = tempfile.mkdtemp(prefix="telos-reload-bots-")
        self.addCleanup(shutil.rmtree, out, True)
        report_path = os.path.join(out, "report.json")
        bots = subprocess.Popen(
            [BINARY, "bots", "--target", "127.0.0.1:%d" % self.server.telnet_port,
             "--bots", str(BOTS), "--ramp-per-second", "25", "--duration-s", "45",
             "--think-ms", "1500", "--accounts-prefix", "reload", "--seed", "11",
             "--report", report_path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(bots.kill)

        watcher = self.player("watcher", "Wanda", TO_TOWN)           # town:north_gate
        watcher.expect(OLD_GATE.split(" flank")[0], timeout=30)
        climber = self.player("climber", "Corin", TO_TOWN + ["up"])  # town:rampart
        climber.expect("The Rampart Walk", timeout=30)
        visitor = self.player("visitor", "Vesna", ["east"])          # the help desk
        visitor.expect(OLD_MARISOL, timeout=30)
        # The reloads start once every bot is playing.
        deadline = time.time() + 60
        while time.time() < deadline and self.server.metric("telos_gate_players") < BOTS + 3:
            time.sleep(0.2)  # the poll interval
        self.assertGreaterEqual(self.server.metric("telos_gate_players"), BOTS + 3)

        # 1. A pack with an error: refused with its file:line, and nothing changes.
        town = self.read("zones/town.toml")
        self.write("zones/town.toml", replace_once(
            town, 'to = "rampart"', 'to = "no_such_room"'))
        refused = self.reload("reload refused")
        self.assertIn("zones/town.toml:", refused.get("details", ""), refused)
        self.assertIn("invalid", refused.get("error", ""), refused)
        watcher.mark()
        watcher.send("look")
        watcher.expect(OLD_GATE)

        # 2. A good pack: a room description, a mob and a script changed, a room removed.
        new_town = replace_once(without_rampart(town), OLD_GATE, NEW_GATE)
        self.write("zones/town.toml", new_town)
        self.write("zones/lobby.toml",
                   replace_once(self.read("zones/lobby.toml"), OLD_MARISOL, NEW_MARISOL))
        self.write("scripts/atrium.lua",
                   replace_once(self.read("scripts/atrium.lua"), OLD_WELCOME, NEW_WELCOME))
        climber.mark()
        applied = self.reload("reload applied")
        self.assertIn("rebuilt", applied.get("worlds", ""), applied)

        # The player in the removed room lands in the town's first room, told why.
        climber.expect("the place where you stood is gone")
        self.assertIn("The North Gate", climber.text)
        watcher.mark()
        watcher.send("look")
        watcher.expect(NEW_GATE)
        visitor.mark()
        visitor.send("look")
        visitor.expect(NEW_MARISOL)
        visitor.send("west")
        visitor.expect(NEW_WELCOME)
        self.assertNotIn(OLD_WELCOME, visitor.text)

        # Nobody was disconnected: the three players still answer, and every bot played on.
        for client in (watcher, climber, visitor):
            client.mark()
            client.send("score")
            client.expect(", level ")
            self.assertFalse(client.closed)
        bots.wait(180)
        self.assertEqual(bots.returncode, 0, bots.stderr.read())
        with open(report_path) as f:
            report = json.load(f)
        self.assertEqual(report["unexpected_disconnects"], 0, report)
        self.assertEqual(report["bots_playing_at_end"], BOTS, report)
        self.assertFalse([e for e in self.server.log_entries() if e.get("level") == "error"
                          and e.get("msg") != "reload refused"])


if __name__ == "__main__":
    unittest.main()
