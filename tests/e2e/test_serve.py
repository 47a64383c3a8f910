"""End-to-end tests of `telos serve` over real sockets (ctest label e2e).

Each test plays as a person would: it creates an account and a character, walks, talks,
fights and quits over telnet or WebSocket, and checks what the server says back. Settings come
from TELOS_BINARY (the built binary) and TELOS_REPO (the checkout, for content/ and web/)."""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DO, WILL, WONT, Server, Telnet, WebSocket  # noqa: E402

BINARY = os.environ.get("TELOS_BINARY", "build/dev/telos")
REPO = os.environ.get("TELOS_REPO", ".")
PASSWORD = "lantern house 7"

# From the default world: the way to the town and to the arena's training yard.
TO_TOWN = ["south", "south", "south"]                       # lobby:atrium -> town:north_gate
TO_YARD = ["south"] * 5 + ["east"] * 4 + ["north"]          # lobby:atrium -> arena:training_yard


def new_player(client, account, character):
    """Creates an account and a character over an open connection; ends in the world."""
    client.expect("account name")
    client.send("new")
    client.expect("Choose an account name")
    client.send(account)
    client.expect("Choose a password")
    client.send(PASSWORD)
    client.expect("Repeat the password")
    client.send(PASSWORD)
    client.expect("is ready")
    client.expect("new <name>")
    client.send("new " + character)
    client.expect("opens their eyes")
    client.expect("The Atrium of Arrivals")


def log_in(client, account, pick="1"):
    client.expect("account name")
    client.send(account)
    client.expect("Password:")
    client.send(PASSWORD)
    client.expect("Your characters:")
    client.send(pick)


def non_loopback_address():
    """One IPv4 address of this host that is not loopback, or None. A UDP connect sends
    nothing; it only makes the kernel pick the source address of its default route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def walk(client, directions):
    for d in directions:
        client.send(d)


class ServeTest(unittest.TestCase):
    def start_server(self, **env):
        server = Server(BINARY, REPO, extra_env={k: str(v) for k, v in env.items()})
        self.addCleanup(server.cleanup)
        return server.start()

    def test_telnet_journey_and_return(self):
        server = self.start_server()
        c = Telnet(server.telnet_port)
        self.addCleanup(c.close)
        c.expect("account name")
        # The server offers GMCP, MSSP and MCCP2 and asks for NAWS and TTYPE.
        self.assertIn((WILL, 201), c.negotiations)
        self.assertIn((DO, 31), c.negotiations)
        new_player(c, "journey", "Wanderer")
        walk(c, TO_TOWN[:-1])
        c.expect("The Lantern Stair")
        if not c.mark().endswith("> "):  # the stair's own prompt is still on its way
            c.expect("> ")
            c.mark()
        # Crossing into the next zone shows the new room first: no bare prompt from the zone
        # left behind, and the prompt after the room.
        walk(c, TO_TOWN[-1:])
        seen = c.expect("[Exits: north south up]")
        self.assertTrue(seen.startswith("\x1b[36mThe North Gate"), seen[:200])
        c.send("say Fair morning, gatekeepers.")
        c.expect("You say, 'Fair morning, gatekeepers.'")
        walk(c, ["north"] * 3)
        c.expect("The Atrium of Arrivals")
        walk(c, TO_YARD)
        c.expect("The Training Yard")
        c.send("kill dummy")
        c.expect("experience.", timeout=120)
        c.send("score")
        c.expect("Experience:")
        c.send("quit")
        c.expect("Come back soon.")
        c.wait_closed()

        again = Telnet(server.telnet_port)
        self.addCleanup(again.close)
        log_in(again, "journey")
        again.expect("The Training Yard")
        self.assertIn("1. Wanderer (arena)", again.text)

    def test_websocket_journey_with_gmcp(self):
        server = self.start_server()
        ws = WebSocket(server.http_port)
        self.addCleanup(ws.close)
        ws.send_json({"type": "gmcp", "package": "Core.Hello", "data": {"client": "e2e"}})
        new_player(ws, "webfolk", "Browser")
        vitals = ws.expect_gmcp("Char.Vitals")
        self.assertEqual(vitals["hp"], vitals["maxhp"])
        room = ws.expect_gmcp("Room.Info")
        self.assertEqual(room["zone"], "lobby")
        self.assertTrue(any(f.get("type") == "echo" and f.get("on") is False for f in ws.frames))
        walk(ws, TO_TOWN)
        ws.expect("The North Gate")
        ws.send("say Hello from the browser")
        ws.expect("You say, 'Hello from the browser'")
        ws.send("quit")
        ws.expect("Come back soon.")
        self.assertEqual(ws.expect_close(), 1000)

        back = WebSocket(server.http_port)
        self.addCleanup(back.close)
        log_in(back, "webfolk")
        back.expect("The North Gate")

    def test_dropped_connection_resumes_where_it_stood(self):
        server = self.start_server(TELOS_LINK_DEAD_MS=60000)
        c = Telnet(server.telnet_port)
        new_player(c, "linkdead", "Ghostly")
        walk(c, TO_TOWN)
        c.expect("The North Gate")
        server.wait_metric("telos_gate_players", lambda v: v == 1)
        c.close()  # no quit: the character stays in the world, link-dead
        server.wait_log(lambda e: e.get("msg") == "character link-dead")
        status, body = server.http_get("/api/who")
        self.assertEqual(status, 200)
        self.assertIn('"name":"Ghostly"', body)
        server.wait_metric("telos_gate_link_dead", lambda v: v == 1)
        self.assertEqual(server.metric("telos_gate_players"), 0)

        c2 = Telnet(server.telnet_port)
        self.addCleanup(c2.close)
        log_in(c2, "linkdead")
        c2.expect("You take hold of Ghostly again.")
        c2.expect("The North Gate")
        server.wait_metric("telos_gate_players", lambda v: v == 1)
        self.assertEqual(server.metric("telos_gate_link_dead"), 0)

    def test_quit_then_hang_up_leaves_no_ghost(self):
        # The client sends quit and closes at once, before the world has answered: the
        # character must still leave cleanly and be playable again right away.
        server = self.start_server(TELOS_LINK_DEAD_MS=60000)
        c = Telnet(server.telnet_port)
        new_player(c, "hangup", "Abrupt")
        walk(c, TO_TOWN)
        c.expect("The North Gate")
        c.send("quit")
        c.close()  # whichever the server notices first, quit or hang-up, must end the same
        again = Telnet(server.telnet_port)
        self.addCleanup(again.close)
        deadline = time.time() + 15
        while True:
            log_in(again, "hangup")
            seen = again.expect_any(["The North Gate", "just leaving the world"])
            if seen == "The North Gate":
                break
            self.assertLess(time.time(), deadline)
            again.mark()
            again.send("quit")  # back at the menu; try again from the account prompt
            again.wait_closed()
            again = Telnet(server.telnet_port)
            self.addCleanup(again.close)
        self.assertNotIn("You take hold of", again.text)
        # The hang-up may have counted the character link-dead before its quit went through.
        server.wait_metric("telos_gate_players", lambda v: v == 1)
        self.assertEqual(server.metric("telos_gate_link_dead"), 0)

    def test_link_dead_character_leaves_after_the_grace(self):
        server = self.start_server(TELOS_LINK_DEAD_MS=300)
        c = Telnet(server.telnet_port)
        new_player(c, "brief", "Fleeting")
        c.close()
        server.wait_log(lambda e: e.get("msg") == "link-dead character removed")
        deadline = time.time() + 10
        while '"count":0' not in server.http_get("/api/who")[1]:
            self.assertLess(time.time(), deadline)
            time.sleep(0.05)
        server.wait_metric("telos_gate_link_dead", lambda v: v == 0)
        self.assertEqual(server.metric("telos_gate_players"), 0)

    def test_password_changes_on_hidden_prompts_and_never_reaches_the_logs(self):
        # Debug logging: the most the server ever writes about a session.
        server = self.start_server(TELOS_LOG_LEVEL="debug")
        fresh = "brass door 42"
        c = Telnet(server.telnet_port)
        self.addCleanup(c.close)
        new_player(c, "secretive", "Hushed")
        # The one-line form is refused: the prompts are the way.
        c.send("password %s %s" % (PASSWORD, fresh))
        c.expect("Type 'password' on its own")
        c.mark()
        before = len(c.negotiations)
        c.send("password")
        c.expect("Old password:")
        # The server echoes from here on (IAC WILL ECHO), so the client shows nothing typed.
        echo = lambda: [n for n in c.negotiations[before:] if n[1] == 1]  # noqa: E731
        self.assertEqual(echo(), [(WILL, 1)])
        c.send(PASSWORD)
        c.expect("New password:")
        c.send(fresh)
        c.expect("Again:")
        c.send(fresh)
        c.expect("Password changed.")
        # ... and gives the echo back (IAC WONT ECHO) once the last answer is in.
        self.assertEqual(echo(), [(WILL, 1), (WONT, 1)])
        shown = c.mark()
        self.assertNotIn(PASSWORD, shown)
        self.assertNotIn(fresh, shown)
        c.send("quit")
        c.expect("Come back soon.")
        c.wait_closed()

        # The web client is told the same: echo off for the prompts, on again when it ends.
        ws = WebSocket(server.http_port)
        self.addCleanup(ws.close)
        new_player(ws, "webhush", "Murmur")
        ws.send("password")
        ws.expect("Old password:")
        echoes = [f["on"] for f in ws.frames if f.get("type") == "echo"]
        self.assertEqual(echoes[-1], False)
        ws.send("")  # an empty answer cancels
        ws.expect("Your password is unchanged.")
        echoes = [f["on"] for f in ws.frames if f.get("type") == "echo"]
        self.assertEqual(echoes[-1], True)

        # The old password is refused now and the new one lets the player in.
        again = Telnet(server.telnet_port)
        self.addCleanup(again.close)
        again.expect("account name")
        again.send("secretive")
        again.expect("Password:")
        again.send(PASSWORD)
        again.expect("Wrong account name or password.\nEnter your account name")
        again.send("secretive")
        again.expect("Password:")
        again.send(fresh)
        again.expect("Your characters:")
        again.send("1")
        again.expect("The Atrium of Arrivals")
        again.send("quit")
        again.expect("Come back soon.")

        # Everything the server wrote, stdout and stderr, to its last line: no password in it.
        self.assertEqual(server.stop(signal.SIGTERM), 0)
        deadline = time.time() + 15
        while not any(e.get("msg") == "stopped" for e in server.log_entries()):
            self.assertLess(time.time(), deadline, "no 'stopped' line")
            time.sleep(0.05)
        written = "\n".join(server.lines)
        self.assertIn("character entered", written)  # the log was captured at all
        for secret in (PASSWORD, fresh):
            self.assertNotIn(secret, written)

    def test_http_api_and_web_client(self):
        server = self.start_server()
        c = Telnet(server.telnet_port)
        self.addCleanup(c.close)
        new_player(c, "apiuser", "Watcher")
        status, body = server.http_get("/api/health")
        self.assertEqual(status, 200)
        self.assertIn('"status":"ok"', body)
        self.assertIn('"players":1', body)
        status, body = server.http_get("/api/who")
        self.assertIn('"name":"Watcher"', body)
        self.assertIn('"zone":"lobby"', body)
        status, metrics = server.admin_get("/metrics")
        self.assertEqual(status, 200)
        for name in ("telos_telnet_connections", "telos_zone_tick_lag_ms_bucket",
                     "telos_zone_occupancy", "telos_logins_total", "telos_commands_total",
                     "telos_gate_errors_total"):
            self.assertIn(name, metrics)
        status, page = server.http_get("/")
        self.assertEqual(status, 200)
        self.assertIn("<html", page)
        status, _ = server.http_get("/js/main.js")
        self.assertEqual(status, 200)
        status, body = server.http_get("/nothing-here")
        self.assertEqual(status, 404)
        self.assertIn('"error":"not_found"', body)

    def test_operator_endpoints_are_on_the_admin_listener_only(self):
        """/metrics and /api/cluster (every shard's endpoint) are not on the players' port;
        /api/health is on both, so a load balancer in front of the players' port can use it."""
        server = self.start_server()
        self.assertNotEqual(server.admin_port, server.http_port)
        for path in ("/metrics", "/api/cluster"):
            status, body = server.http_get(path)
            self.assertEqual(status, 404, "%s on the players' port: %s" % (path, body[:200]))
            status, body = server.admin_get(path)
            self.assertEqual(status, 200, "%s on the admin port: %s" % (path, body[:200]))
        self.assertIn("telos_logins_total", server.admin_get("/metrics")[1])
        for get in (server.http_get, server.admin_get):
            status, body = get("/api/health")
            self.assertEqual(status, 200, body)
            self.assertEqual(json.loads(body)["status"], "ok")
        # The web client and /api/who stay where players are, and not on the admin port.
        self.assertEqual(server.http_get("/api/who")[0], 200)
        self.assertEqual(server.http_get("/")[0], 200)
        self.assertEqual(server.admin_get("/")[0], 404)
        self.assertEqual(server.admin_get("/api/who")[0], 404)

    def test_admin_listener_binds_loopback_by_default(self):
        """Players' listeners on every address (TELOS_BIND=0.0.0.0), TELOS_ADMIN_BIND unset: the
        admin listener is on 127.0.0.1 only."""
        server = self.start_server(TELOS_BIND="0.0.0.0")
        self.assertEqual(server.ready["admin_address"], "127.0.0.1")
        self.assertEqual(server.admin_get("/metrics")[0], 200)
        address = non_loopback_address()
        if address is None:
            self.skipTest("this host has no non-loopback IPv4 address to try the ports on")
        with socket.create_connection((address, server.http_port), timeout=5):
            pass  # the players' port answers on it
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection((address, server.admin_port), timeout=5).close()

    def test_graceful_stop_saves_and_tells_everyone(self):
        server = self.start_server()
        a = Telnet(server.telnet_port)
        b = WebSocket(server.http_port)
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        new_player(a, "stopper", "Steadfast")
        new_player(b, "stopweb", "Patient")
        walk(a, TO_TOWN)
        a.expect("The North Gate")
        self.assertEqual(server.stop(signal.SIGTERM), 0)
        a.expect("pausing for maintenance")
        a.wait_closed()
        b.expect("pausing for maintenance")
        server.wait_log(lambda e: e.get("msg") == "stopped" and e.get("players_saved") == 2)

        again = Server(BINARY, REPO, data_dir=server.data_dir).start()
        self.addCleanup(again.cleanup)
        c = Telnet(again.telnet_port)
        self.addCleanup(c.close)
        log_in(c, "stopper")
        c.expect("The North Gate")

    def test_serve_runs_the_fleet_world_on_embedded_backends(self):
        """One shard leases every zone from the in-memory directory and writes through the zone
        fence and the checkpoint ladder into SQLite, as a fleet world does on Redis and
        PostgreSQL."""
        server = self.start_server(TELOS_CHECKPOINT_INTERVAL_MS=200)
        c = Telnet(server.telnet_port)
        self.addCleanup(c.close)
        new_player(c, "embedded", "Ledger")
        walk(c, TO_TOWN)
        c.expect("The North Gate")

        status, body = server.admin_get("/api/cluster")
        self.assertEqual(status, 200, body)
        cluster = json.loads(body)
        shards = {s["id"]: s for s in cluster["shards"]}
        self.assertEqual(list(shards), ["serve"])
        self.assertEqual(shards["serve"]["endpoint"], "inproc:serve")
        owners = {z["zone"]: z["owner"] for z in cluster["zones"]}
        self.assertIn("town", owners)
        for zone, owner in owners.items():
            if zone == "lobby":
                continue  # every shard runs its own lobby, unleased
            self.assertIsNotNone(owner, zone)
            self.assertEqual(owner["shard"], "serve", zone)
            self.assertGreaterEqual(owner["epoch"], 1, zone)

        db = os.path.join(server.data_dir, "telos.db")

        def rows(query):
            con = sqlite3.connect("file:" + db + "?mode=ro", uri=True, timeout=5)
            try:
                return con.execute(query).fetchall()
            finally:
                con.close()

        # Each leased zone's tenure raised its fence in the store before the zone ran.
        fences = dict(rows("SELECT zone_id, lease_epoch FROM zone_fences"))
        self.assertEqual(fences.get("town"), owners["town"]["epoch"])
        # The character playing in town is checkpointed (the durability ladder), stamped with
        # the zone it stands in.
        deadline = time.monotonic() + 20
        while not rows("SELECT 1 FROM checkpoints WHERE name_key = 'ledger' AND zone_id = 'town'"):
            self.assertLess(time.monotonic(), deadline, "no checkpoint of a playing character")
            time.sleep(0.1)

    def test_kill9_loses_at_most_one_save_interval(self):
        server = self.start_server(TELOS_SAVE_INTERVAL_MS=500)
        c = Telnet(server.telnet_port)
        self.addCleanup(c.close)
        new_player(c, "crashy", "Unlucky")
        walk(c, TO_TOWN)
        c.expect("The North Gate")
        # Two more periodic saves after arriving: the state on disk has caught up.
        saved = server.metric("telos_saves_total")
        server.wait_metric("telos_saves_total", lambda v: v >= saved + 2)
        server.stop(signal.SIGKILL)
        again = Server(BINARY, REPO, data_dir=server.data_dir).start()
        self.addCleanup(again.cleanup)
        d = Telnet(again.telnet_port)
        self.addCleanup(d.close)
        log_in(d, "crashy")
        d.expect("The North Gate")


class BadSettingsTest(unittest.TestCase):
    """A bad value refuses to start, naming the variable, with exit code 2."""

    def run_serve(self, **env):
        full = dict(os.environ, TELOS_BIND="127.0.0.1", TELOS_TELNET_PORT="0",
                    TELOS_HTTP_PORT="0", TELOS_ADMIN_PORT="0",
                    TELOS_DATA_DIR=tempfile.mkdtemp(prefix="telos-bad-"),
                    TELOS_CONTENT_DIR=os.path.join(REPO, "content"),
                    TELOS_WEB_DIR=os.path.join(REPO, "web"))
        for name in ("TELOS_REDIS", "TELOS_DATABASE_URL", "TELOS_NATS"):
            full.pop(name, None)
        full.update(env)
        return subprocess.run([BINARY, "serve"], env=full, capture_output=True, text=True,
                              timeout=30)

    def test_output_pulse_and_zone_threads_out_of_range(self):
        for name, value in (("TELOS_OUTPUT_PULSE_MS", "5000"), ("TELOS_OUTPUT_PULSE_MS", "-1"),
                            ("TELOS_ZONE_THREADS", "0"), ("TELOS_ZONE_THREADS", "many")):
            with self.subTest(name=name, value=value):
                proc = self.run_serve(**{name: value})
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(name, proc.stderr + proc.stdout)

    def test_bad_admin_listener_settings(self):
        for env, name in (({"TELOS_ADMIN_BIND": "localhost"}, "TELOS_ADMIN_BIND"),
                          ({"TELOS_ADMIN_BIND": "127.0.0.1:9080"}, "TELOS_ADMIN_BIND"),
                          ({"TELOS_ADMIN_BIND": ""}, "TELOS_ADMIN_BIND"),
                          ({"TELOS_ADMIN_PORT": "99999"}, "TELOS_ADMIN_PORT"),
                          ({"TELOS_HTTP_PORT": "18080", "TELOS_ADMIN_PORT": "18080"},
                           "TELOS_ADMIN_PORT")):
            with self.subTest(env=env):
                proc = self.run_serve(**env)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(name, proc.stderr)


class BadInputTest(unittest.TestCase):
    """Every hostile input is answered clearly and nobody else notices."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server(BINARY, REPO, extra_env={
            "TELOS_CONNECTIONS_PER_ADDRESS_MAX": "6",
            "TELOS_LOGIN_TIMEOUT_MS": "1500",
        }).start()
        cls.bystander = Telnet(cls.server.telnet_port)
        new_player(cls.bystander, "bystander", "Calm")

    @classmethod
    def tearDownClass(cls):
        cls.bystander.close()
        cls.server.cleanup()

    def assert_bystander_fine(self):
        self.bystander.mark()
        self.bystander.send("say still here")
        self.bystander.expect("You say, 'still here'")

    def player(self, account, character):
        c = Telnet(self.server.telnet_port)
        self.addCleanup(c.close)
        new_player(c, account, character)
        return c

    def test_oversized_line_is_cut_with_a_message(self):
        c = self.player("longline", "Verbose")
        c.send("say " + "x" * 100000)
        c.expect("too long")
        c.expect("You say, 'xxxx")
        self.assert_bystander_fine()

    def test_invalid_utf8_and_control_bytes_are_cleaned(self):
        c = self.player("badbytes", "Garbled")
        # (0xFF is telnet IAC, so the invalid bytes here are others.)
        c.send_raw(b"say caf\xc3\xa9 \xc3\x28 \xfe bell\x07 nul\x00 esc\x1b[31m end\r\n")
        c.expect("You say, 'caf\u00e9 \ufffd( \ufffd bell nul esc[31m end'")
        self.assert_bystander_fine()

    def test_flooding_is_rate_limited(self):
        c = self.player("flooder", "Hasty")
        c.send_raw(b"look\r\n" * 200)
        c.expect("faster than the world can listen")
        self.assert_bystander_fine()

    def test_random_bytes_do_not_hurt_the_server(self):
        import random
        rng = random.Random(7)
        for _ in range(10):
            with socket.create_connection(("127.0.0.1", self.server.telnet_port)) as s:
                s.sendall(bytes(rng.randrange(256) for _ in range(4000)))
        self.assert_bystander_fine()

    def test_connections_per_address_are_capped(self):
        opened = []
        try:
            outcome = None
            for _ in range(8):
                t = Telnet(self.server.telnet_port)
                opened.append(t)
                outcome = t.expect_any(["account name", "Too many connections"])
                if outcome == "Too many connections":
                    break
            self.assertEqual(outcome, "Too many connections")
            t.wait_closed()
            self.assertLessEqual(len(opened), 6)  # the bystander holds one of the six
        finally:
            for t in opened:
                t.close()
        self.assert_bystander_fine()
        # The server notices the closes asynchronously: the next tests of this class need a
        # free slot, so wait until one is given again.
        deadline = time.time() + 15
        while True:
            t = Telnet(self.server.telnet_port)
            outcome = t.expect_any(["account name", "Too many connections"])
            t.close()
            if outcome == "account name":
                break
            self.assertLess(time.time(), deadline, "the capped connections were never released")
            time.sleep(0.05)

    def test_slow_login_is_timed_out(self):
        c = Telnet(self.server.telnet_port)
        self.addCleanup(c.close)
        c.expect("account name")
        c.expect("took too long to log in", timeout=10)
        c.wait_closed()

    def test_oversized_websocket_frame_is_closed_with_a_reason(self):
        ws = WebSocket(self.server.http_port)
        self.addCleanup(ws.close)
        ws.expect("account name")
        ws.send_frame(b"x" * 100000)
        self.assertEqual(ws.expect_close(), 1009)
        self.assert_bystander_fine()

    def test_wrong_passwords_are_refused_then_the_connection_closed(self):
        c = Telnet(self.server.telnet_port)
        self.addCleanup(c.close)
        for _ in range(3):
            c.expect("account name")
            c.send("bystander")
            c.expect("Password:")
            c.send("not the password")
            c.expect("Wrong account name or password.")
        c.wait_closed()
        self.assert_bystander_fine()


if __name__ == "__main__":
    unittest.main()
