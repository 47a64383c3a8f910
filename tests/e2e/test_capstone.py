"""The capstone of issue 25 (ctest label e2e): a boss killed exactly three times counts 3 fleet-wide
while everything between the kills breaks.

A fleet of two worlds, a gate and two `telos director` processes over a PRIVATE nats-server with
JetStream and its own store (the test kills it; other tests use the shared one), and the
development Redis and PostgreSQL under a fresh namespace and schema. The content pack is a copy
of content/ with a weak boss (hp 1) reset three times into the North Gate, three rooms from the
start. A player kills it three times; between the kills:
  1. the leading director is SIGKILLed (the standby must take the tally over),
  2. the world that hosts the boss restarts (its per-world sequence must survive, or the
     watermark would drop its later kills as duplicates),
  3. nats-server is SIGKILLed and restarted on its store (a hard kill may lose the latest acks:
     events already applied come again).
Also, straight to NATS: the last kill published again under its own Nats-Msg-Id (JetStream keeps
one copy), again under a new id (stored twice: the watermark must drop it), and the tally's
durable consumer deleted so the leader recreates it and is handed every event again, as after a
lost ack. The tally must read exactly 3 at the end, through /api/records on a world.

The unit-level twins: src/director/game_event_tally_test.cc EachKillCountsOnceWhateverArrivesTwice
(a same-id publish and a later re-publish) and ANewLeaderResumesWithoutCountingAgain."""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import Fleet, follow, free_port, load_rooms  # noqa: E402
from test_fleet import START, TO_TOWN, FleetCase  # noqa: E402
from test_serve import BINARY, REPO, log_in, new_player  # noqa: E402

ROOMS = load_rooms(REPO)
POOL_0 = ["town", "arena", "casino"]
POOL_1 = ["forest", "moor", "dungeon"]
SPLIT = dict([(z, "world-0") for z in POOL_0] + [(z, "world-1") for z in POOL_1])
BOSS = "town:e2e_gatewarden"
STREAM = "GAME_EVENTS"
DURABLE = "director-tally"
# GameEventSubject("boss_kill", "world-0"): each token escaped ("_" is "_5f", "-" is "_2d"), the
# source last, which the shipped NATS permissions bind to that world's user.
SUBJECT = "game.event.boss_5fkill.world_2d0"
OTHER_SUBJECT = "game.event.boss_5fkill.world_2d1"  # world-1's own subject
DIRECTOR_TTL_MS = 1500
DEADLINE_S = 60  # a recovery (lease lapse, reconnects, redelivery) well inside this

BOSS_TOML = """

[[mobs]]
id = "e2e_gatewarden"
name = "the Gatewarden"
keywords = ["gatewarden", "warden"]
ground = "The Gatewarden leans on a broken spear here, swaying."
description = "A boss in name only: one blow will fell it."
level = 1
hp = 1
damage = "1d1"
armor = 0
hitroll = 0
exp = 1
gold = 0
flags = ["sentinel", "boss"]

[[resets]]
mob = "e2e_gatewarden"
room = "north_gate"
max = 3
"""


class Nats:
    """A private nats-server with JetStream and a store the test keeps across its restarts."""

    def __init__(self):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="telos-capstone-nats-")
        self.proc = None

    @property
    def url(self):
        return "nats://127.0.0.1:%d" % self.port

    def start(self):
        self.proc = subprocess.Popen(
            ["nats-server", "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", self.dir,
             "-l", os.path.join(self.dir, "server.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while True:
            try:
                with NatsClient(self.port) as c:
                    c.ping()
                return
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise AssertionError("private nats-server did not start") from None
                time.sleep(0.05)

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def cleanup(self):
        if self.proc and self.proc.poll() is None:
            self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class NatsClient:
    """Just enough of the NATS protocol for requests (with headers) to JetStream."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self._line()  # INFO
        self.sock.sendall(b'CONNECT {"verbose":false,"headers":true,"no_responders":true}\r\n')
        self.sock.sendall(b"SUB _INBOX.capstone.* 1\r\n")
        self.next = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("nats closed the connection")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("nats closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def ping(self):
        self.sock.sendall(b"PING\r\n")
        while self._line() != b"PONG":
            pass

    def request(self, subject, payload=b"", headers=None):
        """Publishes with a reply inbox and returns the reply's body (bytes)."""
        self.next += 1
        inbox = "_INBOX.capstone.%d" % self.next
        if headers:
            head = ("NATS/1.0\r\n" + "".join("%s: %s\r\n" % kv for kv in headers.items())
                    + "\r\n").encode()
            self.sock.sendall(b"HPUB %s %s %d %d\r\n%s%s\r\n" % (
                subject.encode(), inbox.encode(), len(head), len(head) + len(payload), head,
                payload))
        else:
            self.sock.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), inbox.encode(),
                                                           len(payload), payload))
        while True:
            line = self._line()
            if line == b"PING":
                self.sock.sendall(b"PONG\r\n")
                continue
            parts = line.split(b" ")
            if parts[0] == b"MSG" and parts[1] == inbox.encode():
                return self._exact(int(parts[-1]))
            if parts[0] == b"HMSG" and parts[1] == inbox.encode():
                total = self._exact(int(parts[-1]))
                head = total[:int(parts[-2])]
                if b" 503" in head.split(b"\r\n")[0]:
                    raise OSError("no responders on " + subject)
                return total[int(parts[-2]):]
            if parts[0] in (b"MSG", b"HMSG"):
                self._exact(int(parts[-1]))  # an older request's late answer

    def js(self, subject, body=None, headers=None):
        payload = json.dumps(body).encode() if body is not None else b""
        return json.loads(self.request(subject, payload, headers))


class CapstoneFleet(Fleet):
    """A Fleet over the private NATS and the test's content pack."""

    def __init__(self, label, nats_url, content_dir):
        super().__init__(BINARY, REPO, label, nats_url=nats_url)
        self.content_dir = content_dir

    def base_env(self):
        env = super().base_env()
        env["TELOS_CONTENT_DIR"] = self.content_dir
        return env

    def start_director(self, director_id):
        env = self.base_env()
        env.update({"TELOS_DIRECTOR_ID": director_id,
                    "TELOS_DIRECTOR_LEASE_TTL_MS": str(DIRECTOR_TTL_MS)})
        # A director has no public HTTP port: its `ready` line is the whole wait.
        return self._launch(director_id, "director", env, False, 60).wait_ready(60)


class CapstoneTest(FleetCase):

    @classmethod
    def setUpClass(cls):
        cls.nats = Nats()
        cls.addClassCleanup(cls.nats.cleanup)
        cls.nats.start()
        cls.content = tempfile.mkdtemp(prefix="telos-capstone-content-")
        cls.addClassCleanup(shutil.rmtree, cls.content, True)
        shutil.copytree(os.path.join(REPO, "content"), cls.content, dirs_exist_ok=True)
        with open(os.path.join(cls.content, "zones", "town.toml"), "a") as f:
            f.write(BOSS_TOML)
        cls.fleet = CapstoneFleet("capstone", cls.nats.url, cls.content)
        cls.addClassCleanup(cls.fleet.cleanup)
        fleet = cls.fleet
        fleet.start_account()
        fleet.start_world("world-0", POOL_0, wait=False)
        fleet.start_world("world-1", POOL_1, wait=False)
        for name in ("world-0", "world-1"):
            fleet.wait_ready(name)
        fleet.wait_owners(SPLIT, via="world-0")
        fleet.start_gate("gate-0")
        fleet.start_director("director-a")
        cls.wait_leader("director-a")
        fleet.start_director("director-b")

    # --- helpers

    @classmethod
    def director_health(cls, name):
        status, body = cls.fleet.proc(name).admin_get("/api/health")
        return json.loads(body) if status in (200, 503) else {}

    @classmethod
    def wait_leader(cls, name):
        deadline = time.time() + DEADLINE_S
        while True:
            try:
                if cls.director_health(name).get("leading"):
                    return
            except (OSError, ValueError):
                pass
            if time.time() > deadline:
                raise AssertionError("%s never led:\n%s" % (name, cls.fleet.tail()))
            time.sleep(0.05)

    def kills(self, world):
        """The boss's fleet-wide tally as /api/records on `world` reports it (0 if none)."""
        records = self.fleet.get_json(world, "/api/records")
        for r in records["records"]:
            if r["kind"] == "boss_kill" and r["subject"] == BOSS:
                return r["count"]
        return 0

    def wait_kills(self, n, world="world-1"):
        deadline = time.time() + DEADLINE_S
        last = None
        while True:
            try:
                last = self.kills(world)
                if last == n:
                    return
                self.assertLess(last, n, "the tally overshot")
            except (OSError, ValueError, AssertionError) as e:
                if isinstance(e, AssertionError) and "overshot" in str(e):
                    raise
                last = e
            if time.time() > deadline:
                raise AssertionError("tally stayed %r, want %d\n%s" % (last, n, self.fleet.tail()))
            time.sleep(0.05)

    def consumed_through(self, stream_sequence):
        """Waits until the tally's consumer has answered every event up to `stream_sequence`."""
        deadline = time.time() + DEADLINE_S
        info = None
        while True:
            try:
                with NatsClient(self.nats.port) as c:
                    info = c.js("$JS.API.CONSUMER.INFO.%s.%s" % (STREAM, DURABLE))
                if info.get("ack_floor", {}).get("stream_seq", 0) >= stream_sequence:
                    return
            except (OSError, ValueError) as e:
                info = e
            if time.time() > deadline:
                raise AssertionError("consumer stayed %r" % (info,))
            time.sleep(0.05)

    def restart_world(self, name, pool):
        """Starts `name` again once its dead predecessor's registration has lapsed."""
        deadline = time.time() + DEADLINE_S
        while True:
            try:
                return self.fleet.start_world(name, pool)
            except AssertionError as e:
                if "already registered" not in str(e) or time.time() > deadline:
                    raise
            time.sleep(0.1)

    def enter(self, client):
        """Walks from the start to the North Gate."""
        path = follow(ROOMS, START, TO_TOWN)
        transcript = []
        for d, room in zip(TO_TOWN, path):
            self.step(client, d, room, transcript)

    def kill_boss(self, client):
        client.mark()
        client.send("kill gatewarden")
        client.expect("is DEAD!", 30)

    # --- the test

    def test_a_boss_killed_three_times_through_every_failure_counts_three(self):
        fleet = self.fleet
        client = fleet.connect("gate-0")
        new_player(client, "slayer", "Slayer")
        self.enter(client)

        # Kill 1, applied by director-a.
        self.kill_boss(client)
        self.wait_kills(1)

        # The same event again, straight to the stream: under its own id (the broker keeps one
        # copy) and under a new one (stored twice; only the watermark stands in the way).
        with NatsClient(self.nats.port) as c:
            last = c.js("$JS.API.STREAM.MSG.GET." + STREAM, {"last_by_subj": SUBJECT})
            self.assertIn("message", last, last)
            data = base64.b64decode(last["message"]["data"])
            event = json.loads(data)
            self.assertEqual((event["source"], event["subject"]), ("world-0", BOSS))
            msg_id = "%s:%d" % (event["source"], event["sequence"])
            same = json.loads(c.request(SUBJECT, data, {"Nats-Msg-Id": msg_id}))
            self.assertTrue(same.get("duplicate"), same)
            again = json.loads(c.request(SUBJECT, data, {"Nats-Msg-Id": msg_id + ":again"}))
            self.assertFalse(again.get("duplicate"), again)
            # world-1's subject carrying world-0's next sequence (what a world could send if
            # the broker let it): the director refuses it, so world-0's genuine kill 2 (that
            # sequence) is not taken for a duplicate below.
            forged = dict(event, sequence=event["sequence"] + 1)
            forged_ack = json.loads(
                c.request(OTHER_SUBJECT, json.dumps(forged).encode(), {"Nats-Msg-Id": "forged"})
            )
            self.assertFalse(forged_ack.get("duplicate"), forged_ack)
        self.consumed_through(forged_ack["seq"])
        self.assertEqual(self.kills("world-1"), 1, "a re-published or forged kill counted")

        # The leader dies hard; the standby takes the tally over. Kill 2.
        fleet.kill("director-a")
        self.wait_leader("director-b")
        self.kill_boss(client)
        self.wait_kills(2)

        # The boss's world restarts; the player comes back to it. Kill 3 must not reuse a
        # sequence number of kill 1 or 2.
        client.close()
        fleet.stop("world-0", signal.SIGKILL)
        self.restart_world("world-0", POOL_0)
        fleet.wait_owners(SPLIT, via="world-0", timeout=DEADLINE_S)

        # NATS dies hard and comes back on its store (director-a back too, as a standby).
        self.nats.kill()
        self.nats.start()
        fleet.start_director("director-a")

        client = fleet.connect("gate-0")
        log_in(client, "slayer")
        # Back where the checkpoint left the player: at the gate, or at the start.
        if client.expect_any(["The North Gate", "The Atrium of Arrivals"], 30) != "The North Gate":
            self.enter(client)
        self.kill_boss(client)
        self.wait_kills(3)

        # Every event handed over again, as after lost acks: the leader recreates its consumer
        # from the start of the stream and must count none of them a second time.
        with NatsClient(self.nats.port) as c:
            deleted = c.js("$JS.API.CONSUMER.DELETE.%s.%s" % (STREAM, DURABLE))
            self.assertTrue(deleted.get("success"), deleted)
            info = c.js("$JS.API.STREAM.INFO." + STREAM)
        self.consumed_through(info["state"]["last_seq"])
        self.assertEqual(self.kills("world-1"), 3)
        self.assertEqual(self.kills("world-0"), 3)


if __name__ == "__main__":
    unittest.main()
