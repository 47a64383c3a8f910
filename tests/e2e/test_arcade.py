"""End-to-end test of the arcade in `telos serve` (issue 27): a telnet player walks into the
casino, buys chips with coins, bets on the dice, sees the round settle and their chips change by
exactly what the roll says, and /api/arcade/rounds/<id> proves the round against the next
round's hash; the HTTP wager API refuses bad input and strangers clearly; a restart of serve
continues the hash chain (no round number, and so no hash, is played twice)."""

import base64
import hashlib
import hmac
import json
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Server, Telnet, http_request  # noqa: E402
from test_serve import BINARY, REPO, new_player, walk  # noqa: E402

# lobby:atrium -> casino:dice_hall
TO_DICE_HALL = ["south"] * 5 + ["east", "south", "east", "east", "north"]
SEED = "telosmud arcade public seed 1"  # serve's default TELOS_ARCADE_SEED


def wait_regex(client, pattern, timeout=40):
    """Waits for `pattern` in what the client received since its last mark(); the match."""
    deadline = time.time() + timeout
    while True:
        match = re.search(pattern, client.text)
        if match:
            return match
        if time.time() > deadline or client.closed:
            raise AssertionError("did not see /%s/; got:\n%s" % (pattern, client.text[-3000:]))
        if not client._pump():
            time.sleep(0.01)


def http(port, method, path, body=None, headers=None):
    """One request on the public HTTP port; (status, parsed JSON body)."""
    status, text = http_request(port, method, path, body if body is not None else "", headers)
    return status, json.loads(text or "null")


def dice_roll(round_hash_hex):
    """The published formula (outcomes.h): HMAC-SHA256(key = round hash, message = seed), its
    first 52 bits r, roll = floor(r * 10000 / 2^52)."""
    outcome = hmac.new(bytes.fromhex(round_hash_hex), SEED.encode(), hashlib.sha256).digest()
    r = int.from_bytes(outcome[:7], "big") >> 4
    return r * 10000 // (1 << 52)


class ArcadeTest(unittest.TestCase):
    def start_server(self, data_dir=None):
        server = Server(BINARY, REPO, data_dir=data_dir)
        self.addCleanup(server.cleanup)
        return server.start()

    def test_a_dice_bet_settles_and_its_round_verifies(self):
        server = self.start_server()
        client = Telnet(server.telnet_port)
        self.addCleanup(client.close)
        new_player(client, "gambler", "Fortuna")
        walk(client, TO_DICE_HALL)
        client.expect("The Dice Hall")
        client.send("buy 20")
        client.expect("You buy 20 chips for 20 coins and hold 20 chips.")

        # The next betting window: bet 10 chips that the roll is under 5000.
        client.mark()
        opened = wait_regex(client, r"\[dice #(\d+)\] Bets are open")
        round_no = int(opened.group(1))
        client.send("bet dice 10 5000")
        client.expect("Your bet of 10 chips is in dice round #%d" % round_no)
        settled = wait_regex(client, r"\[dice #%d\] The roll is (\d+)\." % round_no)
        roll = int(settled.group(1))
        expected = 20 - 10 + (10 * 9900 // 5000 if roll < 5000 else 0)
        client.send("chips")
        client.expect("You hold %d chips." % expected)

        # The round is public once settled, and verifies against the next round's hash.
        status, proof = http(server.http_port, "GET", "/api/arcade/rounds/dice-%d" % round_no)
        self.assertEqual(status, 200, proof)
        self.assertEqual(proof["roll"], roll)
        self.assertEqual(dice_roll(proof["hash"]), roll, "anyone recomputes the roll")
        wait_regex(client, r"\[dice #%d\] The roll is" % (round_no + 1))
        status, proof = http(server.http_port, "GET", "/api/arcade/rounds/dice-%d" % round_no)
        self.assertEqual(status, 200, proof)
        self.assertTrue(proof["verified"], proof)
        self.assertEqual(hashlib.sha256(bytes.fromhex(proof["next_hash"])).hexdigest(),
                         proof["hash"])
        # A round not yet revealed, and nonsense, are refused clearly.
        status, body = http(server.http_port, "GET", "/api/arcade/rounds/dice-%d" % (round_no + 99))
        self.assertEqual(status, 404, body)
        status, body = http(server.http_port, "GET", "/api/arcade/rounds/nonsense")
        self.assertEqual(status, 400, body)

        # The HTTP wager API: a stranger is refused, bad input is a 400, the owner's bet with a
        # key is answered and its retry answers the same.
        auth = "Basic " + base64.b64encode(b"gambler:lantern house 7").decode()
        bet = {"character": "Fortuna", "game": "dice", "stake": 1, "target": 5000, "key": "web-1"}
        status, body = http(server.http_port, "POST", "/api/arcade/bet", json.dumps(bet))
        self.assertEqual(status, 403, body)
        status, body = http(server.http_port, "POST", "/api/arcade/bet", "{not json",
                            {"Authorization": auth})
        self.assertEqual(status, 400, body)
        status, body = http(server.http_port, "POST", "/api/arcade/bet",
                            json.dumps(dict(bet, stake="ten")), {"Authorization": auth})
        self.assertEqual(status, 400, body)
        self.assertIn("stake", body["message"])
        client.mark()
        wait_regex(client, r"\[dice #\d+\] Bets are open")
        status, first = http(server.http_port, "POST", "/api/arcade/bet", json.dumps(bet),
                             {"Authorization": auth})
        self.assertEqual(status, 200, first)
        self.assertFalse(first["replayed"])
        status, again = http(server.http_port, "POST", "/api/arcade/bet", json.dumps(bet),
                             {"Authorization": auth})
        self.assertEqual(status, 200, again)
        self.assertTrue(again["replayed"])
        self.assertEqual(again["round"], first["round"])
        client.send("chips")
        client.expect("You hold %d chips." % (expected - 1))

    def test_a_restart_continues_the_chain(self):
        server = self.start_server()
        data_dir = server.data_dir
        client = Telnet(server.telnet_port)
        new_player(client, "watcher", "Vigil")
        walk(client, TO_DICE_HALL)
        client.mark()
        before = int(wait_regex(client, r"\[dice #(\d+)\] The roll is").group(1))
        client.close()
        self.assertEqual(server.stop(), 0)
        # Whoever reads the house secret can compute every future round: owner-only.
        secret = os.path.join(data_dir, "arcade-house.secret")
        self.assertEqual(os.stat(secret).st_mode & 0o777, 0o600)

        again = Server(BINARY, REPO, data_dir=data_dir)
        self.addCleanup(again.cleanup)
        again.start()
        client = Telnet(again.telnet_port)
        self.addCleanup(client.close)
        client.expect("account name")
        client.send("watcher")
        client.expect("Password:")
        client.send("lantern house 7")
        client.expect("Your characters:")
        client.send("1")
        client.expect("The Dice Hall")
        client.mark()
        after = int(wait_regex(client, r"\[dice #(\d+)\] Bets are open").group(1))
        self.assertGreater(after, before, "no round played twice across a restart")
        status, proof = http(again.http_port, "GET", "/api/arcade/rounds/dice-%d" % before)
        self.assertEqual(status, 200, proof)


if __name__ == "__main__":
    unittest.main()
