#!/usr/bin/env python3
"""Cross-shard handoff latency and the gate hop's added RTT, with players connected.

Starts a local fleet (scripts/fleet: account, two worlds with split zone pools, one gate) and
a bot swarm on the gate; meanwhile a probe player stands on the town/forest border — the two
zones live on different shards — and walks back and forth, timing each step from the command
to the first byte of the destination room's title. Then the same swarm runs against `telos
serve` (no gate hop, no shards) and the two bot-observed RTT distributions are compared.

  bench/run fleet-handoff [--players 1000] [--crossings 200] [--duration-s 120]

Prints one JSON object and writes it to <out>/handoff.json, beside the two swarm reports
(fleet-bots.json, serve-bots.json); docs/benchmarks.md records the figures and this command.
"""
import argparse
import collections
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
import players_per_box as ppb  # noqa: E402  (TelosServer, wait_for, log)

PASSWORD = "correct horse battery"
POOLS = "town,arena,casino;forest,moor,dungeon"
BORDER = ("town:west_gate", "west", "forest:forest_edge", "east")
RESTORE_MOVES_S = 26  # 80 movement points come back at 16 per 5 s while resting
STEP_PAUSE_S = 0.1    # the probe's pace: under the per-connection input limit set below
INPUT_LINES_PER_SECOND = "20"
CLOSED_WAY_TIMEOUT_S = 30  # for every world to learn who owns the zone over the border
SWARM_LOGIN_MARGIN_S = 30  # past the ramp, for the last logins before the probe goes anyway


def room_graph():
    """(zone:room) -> {direction: (zone:room)}, and room names, from the content pack."""
    exits, names = {}, {}
    for name in os.listdir(os.path.join(REPO, "content", "zones")):
        with open(os.path.join(REPO, "content", "zones", name), "rb") as f:
            data = tomllib.load(f)
        zone = data["zone"]["id"]
        for room in data.get("rooms", []):
            ref = zone + ":" + room["id"]
            names[ref] = room["name"]
            exits[ref] = {}
            for e in room.get("exits", []):
                to = e["to"] if ":" in e["to"] else zone + ":" + e["to"]
                exits[ref][e["dir"]] = to
    return exits, names


def path(exits, start, goal):
    seen, queue = {start: []}, collections.deque([start])
    while queue:
        here = queue.popleft()
        if here == goal:
            return seen[here]
        for d, to in exits.get(here, {}).items():
            if to not in seen:
                seen[to] = seen[here] + [d]
                queue.append(to)
    raise RuntimeError("no path from %s to %s" % (start, goal))


class Probe:
    """A bare telnet player that waits with select(), so timings are not rounded to a poll."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)
        self.text = ""

    def send(self, line):
        self.sock.setblocking(True)
        self.sock.sendall(line.encode() + b"\r\n")
        self.sock.setblocking(False)

    def expect(self, needle, start=0, timeout=15):
        """Waits for `needle` (or any of a tuple of needles); returns (time seen, needle)."""
        needles = needle if isinstance(needle, tuple) else (needle,)
        deadline = time.monotonic() + timeout
        while True:
            for n in needles:
                if self.text.find(n, start) >= 0:
                    return time.monotonic(), n
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("probe did not see %r; got %r" % (needles, self.text[-500:]))
            ready, _, _ = select.select([self.sock], [], [], left)
            if ready:
                data = self.sock.recv(65536)
                if not data:
                    raise RuntimeError("probe disconnected")
                self.text += bytes(b for b in data if b < 0xF0).decode("utf-8", "replace")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def run_probe(port, crossings):
    exits, names = room_graph()
    probe = Probe(port)
    probe.expect("account name")
    probe.send("new")
    probe.expect("Choose an account name")
    probe.send("probe%d" % os.getpid())
    probe.expect("Choose a password")
    probe.send(PASSWORD)
    probe.expect("Repeat")
    probe.send(PASSWORD)
    probe.expect("new <name>")
    probe.send("new Probe%s" % "".join(chr(ord("a") + int(c)) for c in str(os.getpid())))
    probe.expect("Exits")
    here, out, there, back = BORDER
    for d in path(exits, "lobby:atrium", here):
        mark = len(probe.text)
        probe.send(d)
        probe.expect("Exits", mark)
        time.sleep(STEP_PAUSE_S)
    samples = []
    closed_deadline = time.monotonic() + CLOSED_WAY_TIMEOUT_S
    while len(samples) < crossings:
        direction, target = (out, there) if len(samples) % 2 == 0 else (back, here)
        mark = len(probe.text)
        sent = time.monotonic()
        probe.send(direction)
        arrived, seen = probe.expect((names[target], "too exhausted", "closed for now"), mark)
        if seen == "closed for now":
            # The world has not yet learnt who owns the next zone (its route view refreshes on a
            # timer after the fleet is up): not a handoff, so not measured; try again shortly.
            if time.monotonic() > closed_deadline:
                raise RuntimeError("the way %s stayed closed for %d s" % (direction,
                                                                         CLOSED_WAY_TIMEOUT_S))
            time.sleep(STEP_PAUSE_S)
            continue
        if seen == "too exhausted":
            # Out of movement points: rest until they are back (not measured), then go on.
            probe.send("rest")
            time.sleep(RESTORE_MOVES_S)
            probe.send("stand")
            continue
        samples.append((arrived - sent) * 1000.0)
        probe.expect("Exits", mark)
        time.sleep(STEP_PAUSE_S)
    return samples


def get_json(url):
    """The JSON body at url, or None while the process does not answer."""
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return json.load(r)
    except (OSError, ValueError):
        return None


def bots_cmd(args, binary, target, report, extra):
    return [binary, "bots", "--target", target, "--bots", str(args.players), "--ramp-per-second",
            str(args.ramp_per_second), "--duration-s", str(args.duration_s), "--seed", "1",
            "--report", report] + extra


def wait_for_swarm(args, bots):
    """Returns once the gate routes every bot (its /api/health counts the players), so the probe
    walks with the whole swarm in. A bot that failed its login must not stop the benchmark: past
    the ramp and a margin the probe goes anyway, and the swarm's report counts who played."""
    gate_health = "http://127.0.0.1:%d/api/health" % (args.base_port + 400)
    deadline = time.monotonic() + args.players / args.ramp_per_second + SWARM_LOGIN_MARGIN_S
    playing = 0
    while time.monotonic() < deadline:
        if bots.poll() is not None:
            raise RuntimeError("the swarm exited with %s before it all played" % bots.returncode)
        playing = (get_json(gate_health) or {}).get("players", 0)
        if playing >= args.players:
            return
        time.sleep(0.05)
    ppb.log("fleet: %d of %d bots play after the ramp; the probe walks now" % (playing,
                                                                               args.players))


def fleet_run(args, out_dir):
    fleet_dir = tempfile.mkdtemp(prefix="telos-fleet-bench-")
    tag = "bench%d" % os.getpid()
    env = dict(os.environ)
    env.update({
        "TELOS_FLEET_DIR": fleet_dir, "TELOS_FLEET_WORLDS": "2", "TELOS_FLEET_GATES": "1",
        "TELOS_FLEET_BASE_PORT": str(args.base_port), "TELOS_FLEET_POOLS": POOLS,
        "TELOS_BIN": args.binary, "TELOS_REDIS_NAMESPACE": tag, "TELOS_DATABASE_SCHEMA": tag,
        "TELOS_PASSWORD_MEMORY_KIB": "64", "TELOS_PASSWORD_PASSES": "1",
        # Every bot makes its account from 127.0.0.1, its first name unknown: lift the creation
        # and per-address failure throttles.
        "TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX": "1000000",
        "TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX": "1000000",
        "TELOS_ACCOUNT_CREATIONS_MAX": "1000000", "TELOS_CREATION_HASH_WAITERS_MAX": "10000",
        "TELOS_CONNECTIONS_PER_ADDRESS_MAX": str(args.players + 64),
        "TELOS_INPUT_LINES_PER_SECOND": INPUT_LINES_PER_SECOND,
        "TELOS_LOG_LEVEL": "warn",
    })
    fleet = os.path.join(REPO, "scripts", "fleet")
    subprocess.run([fleet, "start"], env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        telnet = args.base_port + 300
        report = os.path.join(out_dir, "fleet-bots.json")
        cmd = bots_cmd(args, args.binary, "127.0.0.1:%d" % telnet, report,
                       # world-0's admin listener (scripts/fleet: base + 500 + i)
                       ["--metrics-url", "http://127.0.0.1:%d/metrics" % (args.base_port + 500)])
        ppb.log("fleet: " + " ".join(cmd))
        bots = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        wait_for_swarm(args, bots)
        samples = run_probe(telnet, args.crossings)
        bots.wait(timeout=args.duration_s + args.players / args.ramp_per_second + 120)
        with open(report) as f:
            swarm = json.load(f)
    finally:
        subprocess.run([fleet, "stop"], env=env, check=False, stdout=subprocess.DEVNULL)
        subprocess.run(["psql", env.get("TELOS_DATABASE_URL", ""), "-q", "-c",
                        "DROP SCHEMA IF EXISTS %s CASCADE" % tag], check=False,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(fleet_dir, ignore_errors=True)
    return samples, swarm


def serve_run(args, out_dir):
    server = ppb.TelosServer(args.binary, args.players).start()
    try:
        report = os.path.join(out_dir, "serve-bots.json")
        cmd = bots_cmd(args, args.binary, server.target(), report, server.bots_args())
        ppb.log("serve: " + " ".join(cmd))
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                       timeout=args.duration_s + args.players / args.ramp_per_second + 120)
        with open(report) as f:
            return json.load(f)
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "release", "telos"))
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--crossings", type=int, default=200)
    parser.add_argument("--duration-s", type=int, default=120,
                        help="the swarm's measured window; the probe walks inside it")
    parser.add_argument("--ramp-per-second", type=int, default=200)
    parser.add_argument("--base-port", type=int, default=23000)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results", "fleet-handoff"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    samples, fleet_swarm = fleet_run(args, args.out)
    serve_swarm = serve_run(args, args.out)
    result = {
        "players": args.players,
        "handoff_ms": {"count": len(samples), "p50": percentile(samples, 50),
                       "p99": percentile(samples, 99), "max": max(samples)},
        "fleet_rtt_ms": fleet_swarm["rtt"], "serve_rtt_ms": serve_swarm["rtt"],
        "gate_hop_added_ms": {
            "p50": fleet_swarm["rtt"]["p50_ms"] - serve_swarm["rtt"]["p50_ms"],
            "p99": fleet_swarm["rtt"]["p99_ms"] - serve_swarm["rtt"]["p99_ms"]},
        "fleet_bots_playing": fleet_swarm["bots_playing_at_end"],
        "fleet_errors": fleet_swarm["errors"],
        "fleet_disconnects": fleet_swarm["unexpected_disconnects"],
    }
    with open(os.path.join(args.out, "handoff.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
