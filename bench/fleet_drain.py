#!/usr/bin/env python3
"""Losing a world with players connected: a graceful drain, or a crash.

Starts a local fleet (scripts/fleet: the account service, world-0 holding every zone, world-1
as a standby for the same pool, one gate), connects a bot swarm through the gate, and once every
bot plays breaks world-0:

  drain (SIGTERM): world-0 moves each zone's lease to world-1 and hands its players over in
    place; its "drain complete" log line gives the drain time and the counts.
  kill (SIGKILL, --kill): nothing is handed over. world-1 adopts each zone once its lease
    lapses; the gate keeps every socket and routes each session to the new owner, which loads
    the character from its freshest checkpoint. Measured: seconds from the kill until every
    zone has a live owner again (target: lease TTL + 1 s), and until every player plays again.

The swarm's report gives the disconnects and errors the players saw.

  bench/run fleet-drain [--players 1000] [--duration-s 40]
  bench/run fleet-recovery [--players 1000] [--duration-s 40] [--lease-ttl-ms 3000]

Prints one JSON object and writes it to <out>/result.json, beside the swarm's report (bots.json);
docs/benchmarks.md records the figures and this command.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
import players_per_box as ppb  # noqa: E402  (log, wait_for)


def log_lines(path):
    with open(path, errors="replace") as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "release", "telos"))
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--duration-s", type=int, default=40)
    parser.add_argument("--ramp-per-second", type=int, default=200)
    parser.add_argument("--base-port", type=int, default=24000)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results", "fleet-drain"))
    parser.add_argument("--kill", action="store_true", help="SIGKILL world-0 instead of a drain")
    parser.add_argument("--lease-ttl-ms", type=int, default=15000)
    parser.add_argument("--settle-s", type=float, default=5,
                        help="how long the swarm walks with the standby up before world-0 is "
                             "broken (a pause for a steady walk, not a wait for a condition)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    fleet_dir = tempfile.mkdtemp(prefix="telos-drain-bench-")
    tag = "drain%d" % os.getpid()
    env = dict(os.environ)
    env.update({
        "TELOS_FLEET_DIR": fleet_dir, "TELOS_FLEET_WORLDS": "1", "TELOS_FLEET_GATES": "1",
        "TELOS_FLEET_BASE_PORT": str(args.base_port), "TELOS_BIN": args.binary,
        "TELOS_REDIS_NAMESPACE": tag, "TELOS_DATABASE_SCHEMA": tag,
        "TELOS_PASSWORD_MEMORY_KIB": "64", "TELOS_PASSWORD_PASSES": "1",
        # Every bot makes its account from 127.0.0.1, its first name unknown: lift the creation
        # and per-address failure throttles.
        "TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX": "1000000",
        "TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX": "1000000",
        "TELOS_ACCOUNT_CREATIONS_MAX": "1000000", "TELOS_CREATION_HASH_WAITERS_MAX": "10000",
        "TELOS_CONNECTIONS_PER_ADDRESS_MAX": str(args.players + 64), "TELOS_LOG_LEVEL": "info",
        "TELOS_LEASE_TTL_MS": str(args.lease_ttl_ms),
    })
    fleet = os.path.join(REPO, "scripts", "fleet")
    # world-0 alone takes every zone and every player; world-1 joins as a standby for the same
    # pool just before the drain.
    subprocess.run([fleet, "start"], env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        report = os.path.join(args.out, "bots.json")
        cmd = [args.binary, "bots", "--target", "127.0.0.1:%d" % (args.base_port + 300),
               "--bots", str(args.players), "--ramp-per-second", str(args.ramp_per_second),
               "--duration-s", str(args.duration_s), "--seed", "1", "--report", report]
        ppb.log("drain: " + " ".join(cmd))
        bots = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)

        def playing():
            with open(os.path.join(fleet_dir, "logs", "world-0.log")) as f:
                entered = sum(1 for line in f if '"msg":"character entered"' in line)
            return entered >= args.players
        ppb.wait_for(playing, args.players / args.ramp_per_second + 120, "every bot in world-0")
        subprocess.run([fleet, "start", "--only", "world"], env=dict(env, TELOS_FLEET_WORLDS="2"),
                       check=True, stdout=subprocess.DEVNULL)
        world1 = os.path.join(fleet_dir, "logs", "world-1.log")
        ppb.wait_for(lambda: any(e.get("msg") == "won no zones: STANDBY" for e in log_lines(world1)),
                     30, "world-1 as a standby")
        time.sleep(args.settle_s)  # let the swarm settle into its steady walk before the drain
        with open(os.path.join(fleet_dir, "pids", "world-0.pid")) as f:
            pid = int(f.read().strip())
        outcome = (kill_and_recover if args.kill else drain_and_exit)(args, fleet_dir, pid)
        bots.wait(timeout=args.duration_s + args.players / args.ramp_per_second + 120)
        with open(report) as f:
            swarm = json.load(f)
    finally:
        subprocess.run([fleet, "stop"], env=dict(env, TELOS_FLEET_WORLDS="2"), check=False,
                   stdout=subprocess.DEVNULL)
        subprocess.run(["psql", env.get("TELOS_DATABASE_URL", ""), "-q", "-c",
                        "DROP SCHEMA IF EXISTS %s CASCADE" % tag], check=False,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(fleet_dir, ignore_errors=True)
    result = dict(outcome, **{
        "players": args.players,
        "lease_ttl_ms": args.lease_ttl_ms,
        "bots_playing_at_end": swarm["bots_playing_at_end"],
        "unexpected_disconnects": swarm["unexpected_disconnects"],
        "errors": swarm["errors"],
        "rtt_ms": swarm["rtt"],
    })
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


def drain_and_exit(args, fleet_dir, pid):
    sent = time.time()
    os.kill(pid, signal.SIGTERM)
    world0 = os.path.join(fleet_dir, "logs", "world-0.log")

    def drained():
        for entry in log_lines(world0):
            if entry.get("msg") in ("drain complete", "graceful drain incomplete"):
                return entry
        return None
    drain = ppb.wait_for(drained, 120, "world-0's drain")
    ppb.wait_for(lambda: not os.path.exists("/proc/%d" % pid) or None, 60, "world-0 to exit")
    return {"drain": {k: drain.get(k) for k in ("msg", "redirected", "reclaimed", "took_ms")},
            "sigterm_to_exit_s": round(time.time() - sent, 2)}


def kill_and_recover(args, fleet_dir, pid):
    cluster = "http://127.0.0.1:%d/api/cluster" % (args.base_port + 600)  # gate-0's admin port
    health = "http://127.0.0.1:%d/api/health" % (args.base_port + 201)

    def get(url):
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return json.load(r)
        except (OSError, ValueError):
            return None

    killed = time.time()
    os.kill(pid, signal.SIGKILL)

    def zones_back():
        view = get(cluster)
        if not view:
            return None
        owned = [z for z in view["zones"] if z["zone"] != "lobby"]
        return all((z["owner"] or {}).get("shard") == "world-1" for z in owned) or None
    ppb.wait_for(zones_back, 120, "world-1 to own every zone")
    zones_s = time.time() - killed
    ppb.wait_for(lambda: (get(health) or {}).get("players", 0) >= args.players or None, 180,
                 "every player playing on world-1")
    return {"kill_to_zones_served_s": round(zones_s, 2),
            "kill_to_all_players_back_s": round(time.time() - killed, 2)}


if __name__ == "__main__":
    main()
