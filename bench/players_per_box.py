"""Players-per-box sweep and the TinyMUX side-by-side, driven by `telos bots`.

players-per-box: for each bot count, start a fresh `telos serve` on free loopback ports, run
the swarm (default behaviour mix) and read its report: RTT percentiles, zone tick lag over the
steady window (from /metrics), server CPU and resident memory (from /proc). A step passes when
p99 tick lag <= 10 ms, p99 RTT <= 50 ms, and there were no errors or unexpected disconnects. The
sweep stops at the first failing step and reports the largest passing count.

vs-tinymux: the same bot counts against `telos serve` and against TinyMUX (Debian's
`tinymux`, installed into a temporary folder with `tinymux-install` and configured here: only
the port and the loopback address are changed), with the comparable workload of the issue:
connect, look, say, pose, page (mix look=2,say=2,tell=1,pose=1,idle=1; tell is `page` on
TinyMUX). Reports RTT and CPU per player for both, and their ratios.

Results go to an output folder (reports, series, a TSV, a PNG plot made with gnuplot) and,
with --append-docs, as a section appended to docs/benchmarks.md. Standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK_LAG_P99_MAX_MS = 10.0
RTT_P99_MAX_MS = 50.0
COMPARABLE_MIX = "look=2,say=2,tell=1,pose=1,idle=1"
TINYMUX_INSTALL = "/usr/games/tinymux-install"


def log(msg):
    print("[bench] " + msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


class TelosServer:
    """`telos serve` on loopback, kernel-chosen ports, a private data folder."""

    name = "telos"

    def __init__(self, binary, bots, extra_env=None):
        self.binary = binary
        self.bots = bots
        # Variables for `telos serve` on top of the ones set here (--server-env). Set in the
        # constructor so that every caller, not only run_step, gets a server that starts.
        self.extra_env = dict(extra_env or {})
        self.dir = tempfile.mkdtemp(prefix="telos-bench-")
        self.proc = None
        self.telnet_port = None
        self.http_port = None
        self.admin_port = None  # the admin listener: /metrics

    def start(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("TELOS_REDIS", "TELOS_DATABASE_URL", "TELOS_NATS")}  # embedded
        env.update({
            "TELOS_BIND": "127.0.0.1", "TELOS_TELNET_PORT": "0", "TELOS_HTTP_PORT": "0",
            "TELOS_ADMIN_PORT": "0",
            "TELOS_DATA_DIR": os.path.join(self.dir, "data"),
            "TELOS_CONTENT_DIR": os.path.join(REPO, "content"),
            "TELOS_WEB_DIR": os.path.join(REPO, "web"), "TELOS_SEED": "42",
            # Account creation is not what is measured: cheap hashing keeps the ramp short.
            "TELOS_PASSWORD_MEMORY_KIB": "64", "TELOS_PASSWORD_PASSES": "1",
            # Every bot makes its account from 127.0.0.1, its first name unknown: lift the creation
            # and per-address failure throttles.
            "TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX": "1000000",
            "TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX": "1000000",
            "TELOS_ACCOUNT_CREATIONS_MAX": "1000000", "TELOS_CREATION_HASH_WAITERS_MAX": "10000",
            "TELOS_CONNECTIONS_PER_ADDRESS_MAX": str(self.bots + 64),
        })
        env.update(self.extra_env)
        self.log_path = os.path.join(self.dir, "serve.log")
        self.log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen([self.binary, "serve"], env=env, stdout=self.log_file,
                                     stderr=subprocess.STDOUT)

        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError("telos serve exited: " + open(self.log_path).read()[-2000:])
            with open(self.log_path) as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if entry.get("msg") == "ready":
                        return entry
            return None

        entry = wait_for(ready, 30, "telos serve to be ready")
        self.telnet_port = entry["telnet_port"]
        self.http_port = entry["http_port"]
        # A binary from before the admin listener (2026-12-02) served /metrics on its HTTP port;
        # the A/B against such a baseline needs it.
        self.admin_port = entry.get("admin_port", self.http_port)
        return self

    def target(self):
        return "127.0.0.1:%d" % self.telnet_port

    def bots_args(self):
        return ["--metrics-url", "http://127.0.0.1:%d/metrics" % self.admin_port]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log_file.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class TinyMuxServer:
    """Debian's TinyMUX in a temporary folder: tinymux-install, then port and address set."""

    name = "tinymux"

    def __init__(self, binary, bots, extra_env=None):
        # extra_env (--server-env) holds TELOS_ variables: TinyMUX takes none of them.
        self.bots = bots
        self.dir = tempfile.mkdtemp(prefix="tinymux-bench-")
        self.game = os.path.join(self.dir, "tinymux", "game")
        self.port = free_port()
        self.proc = None

    def start(self):
        if not os.path.exists(TINYMUX_INSTALL):
            raise RuntimeError("TinyMUX is not installed (apt-get install tinymux)")
        subprocess.run([TINYMUX_INSTALL], cwd=self.dir, check=True, stdout=subprocess.DEVNULL)
        conf = os.path.join(self.game, "netmux.conf")
        with open(conf) as f:
            lines = [l for l in f.read().splitlines()
                     if not l.startswith(("port ", "ip_address", "pcreate_per_hour"))]
        # The whole configuration TinyMUX gets from us: its port, loopback only, and no hourly
        # cap on new players (its default of 100 would refuse most of the swarm's creates).
        lines += ["port %d" % self.port, "ip_address 127.0.0.1", "pcreate_per_hour 1000000"]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(self.game, "bin"))
        self.proc = subprocess.Popen(["bin/netmux", "-c", "netmux.conf", "-p", "netmux.pid",
                                      "-e", "."], cwd=self.game, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def listening():
            if self.proc.poll() is not None:
                raise RuntimeError("netmux exited with %s" % self.proc.returncode)
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for(listening, 30, "netmux to listen")
        return self

    def target(self):
        return "127.0.0.1:%d" % self.port

    def bots_args(self):
        return ["--dialect", "tinymux"]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def swarm_timeout_s(args, bots, spreading):
    """How long one swarm may take: the ramp, the spreading (a step every 0.5-1 s, so at most
    one second a step after the last login), the window, and a margin for quitting."""
    return bots / args.ramp_per_second + (args.spread_steps if spreading else 0) + \
        args.duration_s + 120


def run_step(args, server_class, bots, mix, out_dir):
    """One server, one swarm run; returns a result row."""
    server = server_class(args.binary, bots, dict(kv.split("=", 1) for kv in args.server_env))
    server = server.start()
    try:
        time.sleep(1)
        idle_rss = rss_bytes(server.proc.pid)
        tag = "%s-%05d" % (server.name, bots)
        report_path = os.path.join(out_dir, tag + ".json")
        csv_path = os.path.join(out_dir, tag + ".csv")
        cmd = [args.binary, "bots", "--target", server.target(), "--bots", str(bots),
               "--ramp-per-second", str(args.ramp_per_second), "--duration-s",
               str(args.duration_s), "--think-ms", str(args.think_ms), "--mix", mix,
               "--seed", "1", "--server-pid", str(server.proc.pid), "--report", report_path,
               "--csv", csv_path] + server.bots_args()
        spreading = bool(args.spread_steps) and server.name == "telos"
        if spreading:
            cmd += ["--spread-steps", str(args.spread_steps)]
        log("%s: %d bots: %s" % (server.name, bots, " ".join(cmd)))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        timeout = swarm_timeout_s(args, bots, spreading)
        subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.DEVNULL,
                       preexec_fn=lambda: os.nice(args.bots_nice))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(report_path) as f:
            report = json.load(f)
    finally:
        server.stop()
    proc = report["server_process"]
    playing = max(1, report["bots_playing_at_end"])
    lag = report["server"].get("tick_lag_p99_ms")
    row = {
        "server": server.name,
        "bots": bots,
        "playing": report["bots_playing_at_end"],
        "commands": report["commands_in_window"],
        "commands_per_s": report["commands_in_window"] / max(1e-9, report["steady_seconds"]),
        "rtt_p50_ms": report["rtt"]["p50_ms"],
        "rtt_p95_ms": report["rtt"]["p95_ms"],
        "rtt_p99_ms": report["rtt"]["p99_ms"],
        "rtt_max_ms": report["rtt"]["max_ms"],
        "tick_lag_p99_ms": lag,
        "tick_lag_p99_bound_ms": report["server"].get("tick_lag_p99_bound_ms"),
        "errors": report["errors"],
        "unexpected_disconnects": report["unexpected_disconnects"],
        "server_cpu_cores": proc["cpu_cores"],
        "cpu_per_player_pct": 100.0 * proc["cpu_cores"] / playing,
        "rss_mib": proc["rss_bytes"] / 2**20,
        "rss_per_player_kib": max(0.0, proc["rss_bytes"] - idle_rss) / 1024 / playing,
        "client_cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
    }
    row["pass"] = (row["rtt_p99_ms"] <= RTT_P99_MAX_MS and row["errors"] == 0
                   and row["unexpected_disconnects"] == 0 and row["playing"] == bots
                   and (server.name != "telos" or (lag is not None and lag <= TICK_LAG_P99_MAX_MS)))
    log("%s %d bots: rtt p99 %.2f ms, tick lag p99 %s ms, cpu %.3f cores, rss %.0f MiB, %s" % (
        server.name, bots, row["rtt_p99_ms"], "n/a" if lag is None else "%.2f" % lag,
        row["server_cpu_cores"], row["rss_mib"], "pass" if row["pass"] else "FAIL"))
    return row


def fmt(v, digits=2):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return "%.*f" % (digits, v)
    return str(v)


def machine():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        mem_gib = int(f.readline().split()[1]) / 2**20
    distro = "Linux"
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    distro = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "%d-core %s, %.0f GiB, %s, kernel %s" % (os.cpu_count(), model, mem_gib, distro,
                                                   platform.release())


def plot(out_dir, rows, title):
    data = os.path.join(out_dir, "sweep.tsv")
    png = os.path.join(out_dir, "sweep.png")
    if not shutil.which("gnuplot"):
        log("gnuplot not found (apt-get install gnuplot-nox): no plot")
        return None
    if not rows:
        # Every step timed out: nothing to draw, and gnuplot fails on an empty file.
        log("no finished step: no plot")
        return None
    script = """
set terminal pngcairo size 900,540 noenhanced
set output '{png}'
set title '{title}'
set xlabel 'players (bots)'
set ylabel 'RTT (ms)'
set y2label 'zone tick lag p99 (ms)'
set ytics nomirror
set y2tics
set logscale x 2
set yrange [0:*]
set y2range [0:*]
set key top left
set grid
plot '{data}' using 1:2 with linespoints title 'RTT p50', \\
     '{data}' using 1:3 with linespoints title 'RTT p99', \\
     '{data}' using 1:4 axes x1y2 with linespoints title 'tick lag p99', \\
     {rtt_max} with lines dashtype 2 title 'RTT p99 limit (50 ms)', \\
     {lag_max} axes x1y2 with lines dashtype 3 title 'tick lag p99 limit (10 ms)'
""".format(png=png, data=data, title=title, rtt_max=RTT_P99_MAX_MS,
               lag_max=TICK_LAG_P99_MAX_MS)
    with open(data, "w") as f:
        f.write("# bots rtt_p50_ms rtt_p99_ms tick_lag_p99_ms\n")
        for r in rows:
            f.write("%d %f %f %s\n" % (r["bots"], r["rtt_p50_ms"], r["rtt_p99_ms"],
                                       "NaN" if r["tick_lag_p99_ms"] is None
                                       else r["tick_lag_p99_ms"]))
    result = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if result.returncode != 0:
        # pngcairo is missing from some builds; the plain png terminal always exists.
        script = script.replace("pngcairo size 900,540 noenhanced", "png size 900,540")
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def players_per_box(args, out_dir):
    rows = []
    for bots in args.steps:
        try:
            row = run_step(args, TelosServer, bots, args.mix, out_dir)
        except subprocess.TimeoutExpired as e:
            # A swarm that cannot finish is a failing step, not the end of the sweep's record.
            log("telos %d bots: the swarm did not finish within %.0f s: FAIL" % (bots, e.timeout))
            row = {"bots": bots, "pass": False, "timed_out_s": e.timeout}
        rows.append(row)
        if not row["pass"]:
            break
    passing = [r for r in rows if r["pass"]]
    best = passing[-1] if passing else None
    lines = ["| bots | RTT p50 | RTT p95 | RTT p99 | tick lag p99 | server CPU | CPU/player "
             "| RSS | RSS/player | cmds/s | errors | drops | verdict |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "timed_out_s" in r:
            lines.append("| %d | the swarm did not finish within %.0f s |%s **fail** |" % (
                r["bots"], r["timed_out_s"], " |" * 10))
            continue
        lines.append("| %d | %s | %s | %s | %s | %s cores | %s%% | %s MiB | %s KiB | %s | %d | %d | %s |" % (
            r["bots"], fmt(r["rtt_p50_ms"]), fmt(r["rtt_p95_ms"]), fmt(r["rtt_p99_ms"]),
            fmt(r["tick_lag_p99_ms"]), fmt(r["server_cpu_cores"], 3),
            fmt(r["cpu_per_player_pct"], 4), fmt(r["rss_mib"], 0),
            fmt(r["rss_per_player_kib"], 1), fmt(r["commands_per_s"], 0), r["errors"],
            r["unexpected_disconnects"], "pass" if r["pass"] else "**fail**"))
    summary = ("Largest passing count: **%s**" % (best["bots"] if best else "none")) + (
        " (p99 RTT %s ms, p99 tick lag %s ms, %s%% of a core and %s KiB per player)." % (
            fmt(best["rtt_p99_ms"]), fmt(best["tick_lag_p99_ms"]),
            fmt(best["cpu_per_player_pct"], 4), fmt(best["rss_per_player_kib"], 1))
        if best else ".")
    if passing and len(passing) == len(rows):
        summary += " Every step passed: the sweep stopped at its last step, not at a limit."
    png = plot(out_dir, [r for r in rows if "timed_out_s" not in r],
               "telos players per box: RTT and tick lag")
    return rows, lines, summary, png


def vs_tinymux(args, out_dir):
    rows = []
    lines = ["| bots | telos RTT p50 / p99 | TinyMUX RTT p50 / p99 | RTT p99 ratio "
             "| telos CPU/player | TinyMUX CPU/player | CPU ratio | telos tick lag p99 "
             "| errors (telos / mux) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for bots in args.steps:
        ours = run_step(args, TelosServer, bots, COMPARABLE_MIX, out_dir)
        peer = run_step(args, TinyMuxServer, bots, COMPARABLE_MIX, out_dir)
        rows += [ours, peer]
        rtt_ratio = ours["rtt_p99_ms"] / peer["rtt_p99_ms"] if peer["rtt_p99_ms"] else None
        cpu_ratio = (ours["cpu_per_player_pct"] / peer["cpu_per_player_pct"]
                     if peer["cpu_per_player_pct"] else None)
        lines.append("| %d | %s / %s ms | %s / %s ms | %s | %s%% | %s%% | %s | %s ms | %d / %d |" % (
            bots, fmt(ours["rtt_p50_ms"]), fmt(ours["rtt_p99_ms"]), fmt(peer["rtt_p50_ms"]),
            fmt(peer["rtt_p99_ms"]), fmt(rtt_ratio), fmt(ours["cpu_per_player_pct"], 4),
            fmt(peer["cpu_per_player_pct"], 4), fmt(cpu_ratio), fmt(ours["tick_lag_p99_ms"]),
            ours["errors"] + ours["unexpected_disconnects"],
            peer["errors"] + peer["unexpected_disconnects"]))
        if not ours["pass"] and not peer["pass"]:
            break
    summary = ("Ratios are telos / TinyMUX: below 1 means TelosMUD is faster or cheaper. "
               "Workload: mix %s, think time %d ms (+-50%%), every bot in the start room."
               % (COMPARABLE_MIX, args.think_ms))
    return rows, lines, summary, None


def append_docs(args, lines, summary, png, out_dir, started):
    command = "bench/run " + " ".join([args.what] + sys.argv[2:])
    title = {"players-per-box": "Players per box", "vs-tinymux": "TelosMUD vs TinyMUX"}[args.what]
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    text = ["", "### %s, %s: %s" % (started.strftime("%Y-%m-%d"), title, machine()), "",
            "Command: `%s` (release build; %s; load average %s when it started; bots and "
            "server share the box)." % (
                command, "ramp %s bots/s, %s s steady window, think %d ms, %d spreading steps, "
                "bots at nice %d" % (args.ramp_per_second, args.duration_s, args.think_ms,
                                     args.spread_steps, args.bots_nice),
                load), ""]
    text += lines + ["", summary]
    if png:
        rel = os.path.relpath(png, REPO)
        text += ["", "Plot: `%s` (not committed; regenerate with the command above)." % rel]
    with open(os.path.join(REPO, "docs", "benchmarks.md"), "a") as f:
        f.write("\n".join(text) + "\n")
    log("appended to docs/benchmarks.md")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["players-per-box", "vs-tinymux"])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "release", "telos"))
    parser.add_argument("--steps", default="100,200,400,800,1600,3200,6400,10000",
                        help="bot counts, ascending")
    parser.add_argument("--duration-s", type=float, default=30)
    parser.add_argument("--ramp-per-second", type=float, default=200)
    parser.add_argument("--think-ms", type=int, default=3000)
    parser.add_argument("--mix", default="walk=3,look=2,say=2,tell=1,fight=1,idle=1")
    parser.add_argument("--spread-steps", type=int, default=0,
                        help="the most steps each telos bot explores before the window; each "
                             "takes a random 0..N (0: all start in the start room)")
    parser.add_argument("--bots-nice", type=int, default=10,
                        help="the swarm's niceness (0-19). The bots share the box with the server "
                             "they measure, which a real server never does with its players; at "
                             "a lower priority they yield it the CPU, and their RTT then "
                             "includes their own wait for it (default 10; 0 to compete as equals)")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                        help="a variable for telos serve, e.g. TELOS_OUTPUT_PULSE_MS=250 "
                             "(repeatable; recorded in the command)")
    parser.add_argument("--out", default=None, help="output folder (default build/bench-out/<what>-<time>)")
    parser.add_argument("--append-docs", action="store_true",
                        help="append the results to docs/benchmarks.md")
    args = parser.parse_args()
    args.steps = [int(s) for s in args.steps.split(",") if s]
    if not 0 <= args.bots_nice <= 19:
        sys.exit("--bots-nice wants 0..19, got %d" % args.bots_nice)
    for kv in args.server_env:
        if "=" not in kv or not kv.split("=", 1)[0].startswith("TELOS_"):
            sys.exit("--server-env wants TELOS_NAME=VALUE, got %r" % kv)
    if not os.access(args.binary, os.X_OK):
        sys.exit("no %s: scripts/build release --target telos" % args.binary)
    started = datetime.datetime.now(datetime.timezone.utc)
    out_dir = args.out or os.path.join(REPO, "build", "bench-out",
                                       "%s-%s" % (args.what, started.strftime("%Y%m%dT%H%M%SZ")))
    os.makedirs(out_dir, exist_ok=True)
    run = players_per_box if args.what == "players-per-box" else vs_tinymux
    rows, lines, summary, png = run(args, out_dir)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(lines + ["", summary]))
    if png:
        print("plot: " + png)
    if args.append_docs:
        append_docs(args, lines, summary, png, out_dir, started)


if __name__ == "__main__":
    main()
