"""A real MUD client against `telos serve`: TinTin++ (Debian `tintin++`) plays a scripted
session — creates an account and a character, looks, talks and quits — and its output is
checked. Run by ctest with the e2e label."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Server  # noqa: E402

BINARY = os.environ.get("TELOS_BINARY", "build/dev/telos")
REPO = os.environ.get("TELOS_REPO", ".")
TINTIN = "/usr/games/tt++"

SCRIPT = """
#config {COLOR MODE} {OFF}
#event {SESSION DISCONNECTED} {#end}
#action {Enter your account name} {#send new}
#action {Choose an account name} {#send tintinfan}
#action {Choose a password} {#send {brass lantern 9}}
#action {Repeat the password} {#send {brass lantern 9}}
#action {to create a character} {#send {new Tinker}}
#action {opens their eyes} {#send {look};#send {say hello from tintin}}
#action {You say, 'hello from tintin'} {#send {quit}}
#delay {60} {#end}
#session telos 127.0.0.1 %d
"""


class TinTinTest(unittest.TestCase):
    def test_scripted_session(self):
        server = Server(BINARY, REPO).start()
        self.addCleanup(server.cleanup)
        with tempfile.NamedTemporaryFile("w", suffix=".tin", delete=False) as f:
            f.write((SCRIPT % server.telnet_port).lstrip())  # tt++ refuses a leading newline
            script = f.name
        self.addCleanup(os.unlink, script)
        # -H: no terminal needed (stdin and stdout are not a tty here).
        run = subprocess.run([TINTIN, "-G", "-H", script], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=90)
        out = run.stdout.decode("utf-8", "replace")
        for expected in ("Your account \"tintinfan\" is ready.",
                         "Tinker opens their eyes for the first time.",
                         "The Atrium of Arrivals",
                         "You say, 'hello from tintin'",
                         "Come back soon."):
            self.assertIn(expected, out)
        # TinTin++ negotiated TTYPE with us: the server knows which client it is.
        entered = server.wait_log(lambda e: e.get("msg") == "character entered")
        self.assertIn("TINTIN", entered.get("client", "").upper())


if __name__ == "__main__":
    unittest.main()
