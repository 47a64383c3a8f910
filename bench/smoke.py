#!/usr/bin/env python3
"""A tiny run of one `bench/run` mode, so a change to the harness cannot break a benchmark
unnoticed (ctest: bench_smoke_*, labels e2e and bench).

  python3 bench/smoke.py MODE      MODE: players-per-box, vs-tinymux, directory, fleet-handoff,
                                   fleet-drain or fleet-recovery

Runs `bench/run MODE` exactly as a person would, with flags that make it tiny (a handful of
bots, a window of seconds, one step) and its output folder in a temporary directory, never
bench/results in the checkout. Passes when the run exits 0 and every report it is meant to write
exists, parses, and carries the figures the docs quote; measured values are not judged (the
smoke run drives whatever binary ctest built, usually the ASan one). Fails with the run's output
otherwise; on failure the folder is kept for a look.

Settings: TELOS_BINARY (the `telos` to drive; default build/release/telos, else build/dev/telos),
TELOS_DIRECTORY_BENCH (the directory_bench binary; default beside it), TELOS_REDIS (the Redis
the directory benchmark uses; its port). The fleet modes need the services (scripts/services env).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_TIMEOUT_S = 240  # one tiny run; ctest's own TIMEOUT is the backstop
STOP_TIMEOUT_S = 60  # for the harness to stop what it started once interrupted
BOTS = 4
SMALL_SWARM = ["--duration-s", "2", "--ramp-per-second", "20", "--think-ms", "500"]
# The loopback ports a fleet from scripts/fleet listens on, as offsets from its base (the admin
# listeners at 2, 500 + i and 600 + i).
FLEET_PORT_OFFSETS = (0, 1, 2, 100, 101, 200, 201, 300, 400, 500, 501, 600)
# Bases tried for a fleet: below the kernel's ephemeral range (32768 and up), so ports chosen for
# other sockets do not land in the fleet's, and away from the benchmarks' defaults (23000, 24000)
# so a real run on the box is not disturbed.
FLEET_BASES = range(25000, 32000, 1000)  # a fleet spans base .. base + 699


class SmokeFailure(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise SmokeFailure(msg)


def default_binary():
    for p in ("build/release/telos", "build/dev/telos"):
        if os.access(os.path.join(REPO, p), os.X_OK):
            return os.path.join(REPO, p)
    return os.path.join(REPO, "build/release/telos")


def bindable(port):
    with socket.socket() as s:
        # As the servers bind (asio sets SO_REUSEADDR): a port left in TIME_WAIT by the last
        # fleet is free to them, so it is free here.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def fleet_base():
    """A base port whose fleet ports nobody holds right now."""
    for base in FLEET_BASES:
        if all(bindable(base + o) for o in FLEET_PORT_OFFSETS):
            return base
    raise SmokeFailure("no free base port for a fleet in %d..%d" % (FLEET_BASES[0],
                                                                   FLEET_BASES[-1]))


def load_json(path, what):
    need(os.path.isfile(path), "%s was not written: %s" % (what, path))
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        raise SmokeFailure("%s does not parse (%s): %s" % (what, e, path))


def swarm_report(out, name):
    report = load_json(os.path.join(out, name), "the swarm report " + name)
    for key in ("rtt", "bots_playing_at_end", "errors", "unexpected_disconnects"):
        need(key in report, "%s has no %r" % (name, key))
    need("p99_ms" in report["rtt"], "%s has no rtt.p99_ms" % name)
    return report


def check_sweep(out, servers):
    rows = load_json(os.path.join(out, "results.json"), "the sweep's results.json")
    need([r.get("server") for r in rows] == servers,
         "results.json rows are %r, want one step for %r" % (rows, servers))
    for r in rows:
        need("rtt_p99_ms" in r and "cpu_per_player_pct" in r, "a row lacks its figures: %r" % r)
        tag = "%s-%05d" % (r["server"], BOTS)
        swarm_report(out, tag + ".json")
        need(os.path.isfile(os.path.join(out, tag + ".csv")), "no %s.csv" % tag)
    if "telos" in servers:
        need(rows[0]["tick_lag_p99_ms"] is not None, "no tick lag from /metrics: %r" % rows[0])


def check_players_per_box(out, stdout):
    check_sweep(out, ["telos"])
    need("Largest passing count" in stdout, "no summary line on stdout")
    if shutil.which("gnuplot"):
        need(os.path.isfile(os.path.join(out, "sweep.png")), "gnuplot is here but no sweep.png")


def check_vs_tinymux(out, stdout):
    check_sweep(out, ["telos", "tinymux"])
    need("RTT p99 ratio" in stdout, "no comparison table on stdout")


def check_directory(out, stdout):
    report = load_json(os.path.join(out, "directory.json"), "the benchmark JSON")
    runs = report.get("benchmarks", [])
    need(runs, "the directory benchmark ran nothing")
    broken = [r["name"] for r in runs if r.get("error_occurred")]
    need(not broken, "benchmarks with errors (is Redis up?): %s" % broken)
    need(all(r.get("items_per_second", 0) > 0 for r in runs), "a benchmark without a rate")
    need("of raw EVALSHA" in stdout, "no ratios against raw EVALSHA on stdout")


def check_fleet_handoff(out, stdout):
    result = load_json(os.path.join(out, "handoff.json"), "handoff.json")
    need(result["handoff_ms"]["count"] == BOTS, "crossings timed: %r" % result["handoff_ms"])
    for key in ("fleet_rtt_ms", "serve_rtt_ms", "gate_hop_added_ms"):
        need(key in result, "handoff.json has no %r" % key)
    swarm_report(out, "fleet-bots.json")
    swarm_report(out, "serve-bots.json")


def check_fleet_drain(out, stdout):
    result = load_json(os.path.join(out, "result.json"), "result.json")
    need(result.get("drain", {}).get("msg") in ("drain complete", "graceful drain incomplete"),
         "no drain outcome: %r" % result)
    need("sigterm_to_exit_s" in result, "no sigterm_to_exit_s: %r" % result)
    swarm_report(out, "bots.json")


def check_fleet_recovery(out, stdout):
    result = load_json(os.path.join(out, "result.json"), "result.json")
    for key in ("kill_to_zones_served_s", "kill_to_all_players_back_s"):
        need(key in result, "result.json has no %r: %r" % (key, result))
    swarm_report(out, "bots.json")


def plan(mode, out, binary):
    """(flags for bench/run, extra environment, check) for one mode."""
    if mode in ("players-per-box", "vs-tinymux"):
        flags = ["--binary", binary, "--steps", str(BOTS)] + SMALL_SWARM + ["--out", out]
        return flags, {}, check_players_per_box if mode == "players-per-box" else check_vs_tinymux
    if mode == "directory":
        bench = os.environ.get("TELOS_DIRECTORY_BENCH") or os.path.join(
            os.path.dirname(binary), "bench", "directory_bench")
        port = urllib.parse.urlparse(os.environ.get("TELOS_REDIS", "")).port or 16379
        return [], {"DIRECTORY_BENCH": bench, "BENCH_MIN_TIME": "0.01",
                    "BENCH_RAW_REQUESTS": "2000", "TELOS_REDIS_PORT": str(port),
                    "BENCH_OUT": os.path.join(out, "directory.json")}, check_directory
    fleet = ["--binary", binary, "--players", str(BOTS), "--ramp-per-second", "20",
             "--base-port", str(fleet_base()), "--out", out]
    if mode == "fleet-handoff":
        # The probe crosses BOTS times; the swarm's window need not outlast it.
        return fleet + ["--crossings", str(BOTS), "--duration-s", "3"], {}, check_fleet_handoff
    # Drain and recovery break world-0 inside the swarm's window: the standby's start, the
    # settling pause, and (recovery) a 3 s lease lapsing must all fit in it.
    if mode == "fleet-drain":
        return fleet + ["--duration-s", "12", "--settle-s", "1"], {}, check_fleet_drain
    if mode == "fleet-recovery":
        return (fleet + ["--duration-s", "15", "--settle-s", "1", "--lease-ttl-ms", "3000"], {},
                check_fleet_recovery)
    raise SmokeFailure("unknown mode %r" % mode)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    mode = sys.argv[1]
    binary = os.path.abspath(os.environ.get("TELOS_BINARY") or default_binary())
    out = tempfile.mkdtemp(prefix="telos-bench-smoke-%s-" % mode)
    output = ""
    try:
        flags, extra_env, check = plan(mode, out, binary)
        cmd = [os.path.join(REPO, "bench", "run"), mode] + flags
        print("smoke: " + " ".join(cmd), file=sys.stderr, flush=True)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **extra_env)
        run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        try:
            output, _ = run.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            # SIGINT, not SIGKILL: the harness's `finally` then stops the fleet it started.
            run.send_signal(signal.SIGINT)
            try:
                output, _ = run.communicate(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                run.kill()
                output, _ = run.communicate()
            raise SmokeFailure("bench/run %s did not finish in %d s" % (mode, RUN_TIMEOUT_S))
        need(run.returncode == 0, "bench/run %s exited %d" % (mode, run.returncode))
        check(out, output)
    except SmokeFailure as e:
        sys.stderr.write("%s\nsmoke FAILED: %s (reports kept in %s)\n" % (output[-6000:], e, out))
        sys.exit(1)
    print(output[-3000:])
    print("smoke passed: bench/run %s wrote its reports" % mode)
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
