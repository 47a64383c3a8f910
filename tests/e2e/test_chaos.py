"""The chaos suite (ctest labels e2e and slow; needs the services: scripts/services start).

A fleet of three worlds and two gates carries a bot swarm (`telos bots`: a few hundred players
walking, looking, talking, telling and fighting) while each scenario breaks something:

  rolling restart   SIGTERM every world in turn, each replaced by a fresh process
  kill -9 a world   its zones serve again within lease TTL + 1 s
  SIGSTOP a world   past its TTL, then SIGCONT: it must not write after losing its leases
  kill -9 a gate    its players log in through the other gate and stand where they stood
  Redis             killed and restarted with an empty dataset
  PostgreSQL        every connection cut, then back (a restart as the worlds see it)
  NATS              killed and restarted

Redis and NATS are private servers of this suite (redis-server, nats-server on free loopback
ports), so they can be killed without touching the shared ones; PostgreSQL is the shared one
behind a TCP proxy (proxy.py). Every world records its durable writes (TELOS_RECORD_ZONE_WRITES)
and after each scenario the history checker (history.py) proves no two shards wrote one zone in
overlapping lease tenures. Each scenario prints one summary line — players, disconnects,
recovery seconds, writes checked — and fails on any disconnect, any violation, or a recovery
slower than its bound.

The swarm size is TELOS_CHAOS_BOTS (default 200). The binary is TELOS_CHAOS_BINARY if set (the
release build, when ctest runs it), else TELOS_BINARY."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from fleet import LEASE_TTL_MS, Fleet, follow, free_port  # noqa: E402
from history import check, grants_from_logs, read_writes  # noqa: E402
from proxy import TcpProxy  # noqa: E402
from test_fleet import POOL_0, POOL_1, ROOMS, START, TO_TOWN, FleetCase  # noqa: E402
from test_serve import REPO, log_in, new_player  # noqa: E402

BINARY = os.environ.get("TELOS_CHAOS_BINARY", "")
if not os.path.exists(BINARY):
    BINARY = os.environ.get("TELOS_BINARY", "build/dev/telos")
BOTS = int(os.environ.get("TELOS_CHAOS_BOTS", "200"))
RAMP_PER_S = 50
WORLDS = ("world-0", "world-1", "world-2")
POOLS = {"world-0": POOL_0, "world-1": POOL_1, "world-2": POOL_0 + POOL_1}
RECOVERY_BOUND_S = LEASE_TTL_MS / 1000 + 1
SEEN_S = 20


class PrivateServer:
    """A redis-server or nats-server of this suite's own, on a fixed free port."""

    def __init__(self, argv_for_port):
        self.port = free_port()
        self.argv = argv_for_port(self.port)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def wait_listening(self, timeout=15):
        deadline = time.time() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.time() > deadline:
                    raise AssertionError("%s did not listen on %d" % (self.argv[0], self.port))
                time.sleep(0.02)


class Swarm:
    """One `telos bots` run through both gates for `duration_s` seconds."""

    def __init__(self, fleet, prefix, duration_s, bots=BOTS):
        self.out = tempfile.mkdtemp(prefix="telos-chaos-")
        self.report_path = os.path.join(self.out, "report.json")
        self.bots = bots
        targets = []
        for gate in ("gate-0", "gate-1"):
            targets += ["--target", "127.0.0.1:%d" % fleet.procs[gate].telnet_port]
        cmd = [BINARY, "bots", *targets, "--bots", str(bots), "--ramp-per-second",
               str(RAMP_PER_S), "--duration-s", str(duration_s), "--think-ms", "1500",
               "--mix", "walk=4,look=2,say=1,tell=1,fight=1,idle=1", "--reply-timeout-ms",
               "15000", "--accounts-prefix", prefix, "--seed", "11", "--report",
               self.report_path]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.timeout = bots / RAMP_PER_S + duration_s + 120

    def report(self):
        try:
            _, err = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("the swarm did not finish")
        if self.proc.returncode != 0:
            raise AssertionError("telos bots failed: " + err[-2000:])
        with open(self.report_path) as f:
            return json.load(f)


class ChaosTest(FleetCase):
    @classmethod
    def setUpClass(cls):
        cls.redis = PrivateServer(lambda port: [
            "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--loglevel", "warning"])
        cls.nats = PrivateServer(lambda port: ["nats-server", "-a", "127.0.0.1", "-p", str(port)])
        for server in (cls.redis, cls.nats):
            server.start()
            cls.addClassCleanup(server.kill)
            server.wait_listening()
        database = os.environ.get("TELOS_DATABASE_URL", "")
        cls.postgres = TcpProxy.for_url(database)
        cls.addClassCleanup(cls.postgres.close)
        fleet = cls.fleet = Fleet(BINARY, REPO, "chaos",
                                  redis_url="redis://127.0.0.1:%d" % cls.redis.port,
                                  nats_url="nats://127.0.0.1:%d" % cls.nats.port)
        cls.addClassCleanup(fleet.cleanup)
        cls.addClassCleanup(cls.postgres.restore)  # first: a failed test must not slow cleanup
        cls.world_env = {
            "TELOS_DATABASE_URL": cls.postgres.url(database),
            "TELOS_RECORD_ZONE_WRITES": "1",
            "TELOS_CHECKPOINT_INTERVAL_MS": "1000",
            "TELOS_SAVE_INTERVAL_MS": "2000",
            "TELOS_CONNECTIONS_PER_ADDRESS_MAX": str(BOTS + 100),
        }
        cls.logs = {}  # shard -> log entries of every process that ran under that id
        fleet.start_account()
        for world in WORLDS[:2]:
            cls.start_world(world)
        fleet.wait_owners(dict([(z, "world-0") for z in POOL_0] + [(z, "world-1") for z in POOL_1]),
                          timeout=30, via="world-0")
        cls.start_world("world-2")  # a standby for every zone
        for gate in ("gate-0", "gate-1"):
            fleet.start_gate(gate, extra_env={
                "TELOS_CONNECTIONS_PER_ADDRESS_MAX": str(BOTS + 100)})

    @classmethod
    def start_world(cls, world, wait=True):
        if world in cls.fleet.procs:
            cls.logs.setdefault(world, []).extend(cls.fleet.procs[world].log_entries())
        return cls.fleet.start_world(world, POOLS[world], extra_env=cls.world_env, wait=wait)

    # --- measuring

    def players(self):
        total = 0
        for world in WORLDS:
            if self.fleet.alive(world):
                try:
                    total += self.fleet.health(world).get("players", 0)
                except (OSError, ValueError, AssertionError):
                    pass
        return total

    def wait_players(self, count, timeout):
        deadline = time.time() + timeout
        while self.players() < count:
            self.assertLess(time.time(), deadline, "only %d of %d bots are playing" %
                            (self.players(), count))
            time.sleep(0.1)

    def wait_all_zones_served(self, victim, timeout):
        """Seconds until every leasable zone has a live owner other than `victim` (polled via a
        gate)."""
        started = time.time()
        zones = set(POOL_0 + POOL_1)
        while True:
            try:
                view = self.fleet.cluster("gate-0")
                live = {s["id"] for s in view["shards"]} - {victim}
                owners = Fleet.owners(view)
                if all(owners.get(z) in live for z in zones):
                    return time.time() - started
            except (OSError, ValueError, AssertionError):
                pass
            self.assertLess(time.time() - started, timeout, "zones not served again")
            time.sleep(0.05)

    def writes_checked(self):
        logs = dict(self.logs)
        for world in WORLDS:
            logs.setdefault(world, [])
            logs[world] = logs[world] + self.fleet.procs[world].log_entries()
        writes = read_writes(self.fleet.database_url, self.fleet.schema)
        violations = check(writes, grants_from_logs(logs))
        self.assertEqual(violations, [], "the write history has overlapping tenures")
        return len(writes)

    def summary(self, scenario, report, recovery_s=None, bound_s=RECOVERY_BOUND_S):
        line = {"scenario": scenario, "players": report["bots_connected"],
                "disconnects": report["unexpected_disconnects"],
                "recovery_s": None if recovery_s is None else round(recovery_s, 2),
                "writes_checked": self.writes_checked(), "bot_errors": report["errors"]}
        print("\nchaos: " + json.dumps(line), file=sys.stderr)
        self.assertEqual(report["bots_connected"], BOTS, line)
        self.assertEqual(report["unexpected_disconnects"], 0, line)
        if recovery_s is not None and bound_s is not None:
            self.assertLessEqual(recovery_s, bound_s, line)
        return line

    def swarm(self, prefix, duration_s):
        swarm = Swarm(self.fleet, prefix, duration_s)
        self.wait_players(BOTS, BOTS / RAMP_PER_S + 60)
        return swarm

    # --- scenarios (run in this order)

    def test_1_rolling_restart_drops_nobody(self):
        swarm = self.swarm("roll", 60)
        for world in WORLDS:
            code = self.fleet.stop(world, timeout=60)  # SIGTERM: drains to the live peers
            self.assertEqual(code, 0, "%s exited %s on SIGTERM" % (world, code))
            self.start_world(world)
        self.summary("rolling restart", swarm.report())

    def test_2_kill9_world_zones_back_within_ttl(self):
        # A scripted player besides the swarm: where they stood at the last checkpoint is
        # where they stand after the crash (at most one checkpoint interval is lost).
        path = follow(ROOMS, START, TO_TOWN)
        kilroy = self.fleet.connect("gate-0")
        new_player(kilroy, "kilroy", "Kilroy")
        transcript = []
        for d, room in zip(TO_TOWN, path):
            self.step(kilroy, d, room, transcript)
        deadline = time.time() + 15
        while self.fleet.checkpoint("kilroy").get("room_id") != path[-1].ref.split(":")[1]:
            self.assertLess(time.time(), deadline, "Kilroy's position was never checkpointed")
            time.sleep(0.05)
        swarm = self.swarm("kill", 30)
        victim = self.owner_of("town")
        self.fleet.kill(victim)
        recovery = self.wait_all_zones_served(victim, 30)
        kilroy.mark()
        kilroy.send("look")
        kilroy.expect(path[-1].name, SEEN_S)  # same socket, same room, no new login
        report = swarm.report()
        self.start_world(victim)
        self.summary("kill -9 " + victim, report, recovery)

    def test_3_sigstop_world_writes_nothing_after_losing_its_leases(self):
        swarm = self.swarm("stop", 30)
        victim = self.owner_of("forest")
        self.fleet.sigstop(victim)
        # A peer can only have claimed its zones once their leases lapsed: it is past its TTL.
        recovery = self.wait_all_zones_served(victim, 30)
        self.fleet.sigcont(victim)
        self.fleet.wait_log(victim, lambda e: e.get("msg") in (
            "lease lost: stopping zone", "lease fence: stopping without drain"), timeout=30)
        report = swarm.report()
        self.summary("SIGSTOP " + victim, report, recovery)

    def test_4_kill9_gate_players_come_back_through_the_other(self):
        path = follow(ROOMS, START, TO_TOWN)
        players = []
        for i in range(3):
            c = self.fleet.connect("gate-1")
            name = "Gadd%s" % "abc"[i]
            new_player(c, name.lower(), name)
            for d in TO_TOWN:
                c.send(d)
            c.expect(path[-1].name, SEEN_S)
            players.append((name, c))
        self.fleet.kill("gate-1")
        for name, c in players:
            c.wait_closed()
            again = self.fleet.connect("gate-0")
            log_in(again, name.lower())
            again.expect(path[-1].name, SEEN_S)
        self.fleet.start_gate("gate-1", extra_env={
            "TELOS_CONNECTIONS_PER_ADDRESS_MAX": str(BOTS + 100)})
        print("\nchaos: " + json.dumps({"scenario": "kill -9 gate-1", "players": len(players),
                                         "disconnects": 0, "recovery_s": None,
                                         "writes_checked": self.writes_checked()}),
              file=sys.stderr)

    def test_5_redis_restarts_empty_and_the_fleet_recovers(self):
        swarm = self.swarm("redis", 40)
        self.redis.kill()
        self.redis.start()  # no persistence: an empty dataset
        self.redis.wait_listening()
        recovery = self.wait_all_zones_served(None, 60)
        # Every lease and placement is gone: zones are stopped, claimed anew above the store's
        # zone fences and their players routed again. No bound but the swarm's own.
        self.summary("Redis restarted empty", swarm.report(), recovery, bound_s=None)

    def test_6_postgres_restart_and_the_fleet_recovers(self):
        swarm = self.swarm("pg", 30)
        self.postgres.cut()
        for world in WORLDS:
            self.fleet.wait_healthy(world, 20, predicate=lambda h: h.get(
                "dependencies", {}).get("postgres") == "down")
        self.postgres.restore()
        for world in WORLDS:
            self.fleet.wait_healthy(world, 30, predicate=lambda h: h.get(
                "dependencies", {}).get("postgres") == "up")
        self.summary("PostgreSQL restart", swarm.report())

    def test_7_nats_restarts_and_comms_come_back(self):
        swarm = self.swarm("nats", 30)
        self.nats.kill()
        for world in WORLDS:
            self.fleet.wait_healthy(world, 20, predicate=lambda h: h.get(
                "dependencies", {}).get("nats") == "down")
        self.nats.start()
        for world in WORLDS:
            self.fleet.wait_healthy(world, 30, predicate=lambda h: h.get(
                "dependencies", {}).get("nats") == "up")
        self.summary("NATS restart", swarm.report())

    def owner_of(self, zone):
        return Fleet.owners(self.fleet.cluster("gate-0"))[zone]


if __name__ == "__main__":
    unittest.main()
