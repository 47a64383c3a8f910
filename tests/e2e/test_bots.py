"""End-to-end test of `telos bots` against `telos serve` (ctest label e2e).

Starts the server on kernel-chosen loopback ports, runs the swarm at a small scale and checks
that every bot logged in and played without an error or an unexpected disconnect, and that the
report and the series are well formed. Settings come from TELOS_BINARY and TELOS_REPO, as in
test_serve.py."""

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Server  # noqa: E402

BINARY = os.environ.get("TELOS_BINARY", "build/dev/telos")
REPO = os.environ.get("TELOS_REPO", ".")

LATENCY_KEYS = ["count", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"]
REPORT_KEYS = ["targets", "transport", "bots_requested", "ramp_per_second", "duration_s", "mix",
               "started_at", "ramp_seconds", "steady_seconds", "bots_connected", "bots_playing",
               "bots_playing_at_end", "commands_sent", "commands_in_window", "replies", "idles",
               "commands_by_behaviour", "rtt", "login", "errors", "errors_by_kind",
               "unexpected_disconnects", "server", "server_process"]
CSV_HEADER = ["t_s", "bots_connected", "bots_playing", "commands", "replies", "rtt_p50_ms",
              "rtt_p99_ms", "rtt_max_ms", "errors_total", "unexpected_disconnects_total"]


class BotsTest(unittest.TestCase):
    def start_server(self):
        server = Server(BINARY, REPO, extra_env={"TELOS_CONNECTIONS_PER_ADDRESS_MAX": "1000"})
        self.addCleanup(server.cleanup)
        return server.start()

    def run_bots(self, server, transport, bots, duration_s, prefix):
        out = tempfile.mkdtemp(prefix="telos-bots-")
        report_path = os.path.join(out, "report.json")
        csv_path = os.path.join(out, "series.csv")
        port = server.telnet_port if transport == "telnet" else server.http_port
        cmd = [BINARY, "bots", "--target", "127.0.0.1:%d" % port, "--transport", transport,
               "--bots", str(bots), "--ramp-per-second", "10", "--duration-s", str(duration_s),
               "--think-ms", "2000", "--accounts-prefix", prefix, "--seed", "7",
               "--metrics-url", "http://127.0.0.1:%d/metrics" % server.admin_port,
               "--server-pid", str(server.proc.pid), "--report", report_path, "--csv", csv_path]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=bots / 10 + duration_s + 90)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(report_path) as f:
            report = json.load(f)
        with open(csv_path) as f:
            rows = list(csv.reader(f))
        return report, rows, proc.stderr

    def check_report(self, report, rows, bots, stderr):
        for key in REPORT_KEYS:
            self.assertIn(key, report)
        self.assertEqual(report["errors"], 0, (report["errors_by_kind"], stderr))
        self.assertEqual(report["unexpected_disconnects"], 0, stderr)
        self.assertEqual(report["bots_connected"], bots)
        self.assertEqual(report["bots_playing"], bots)
        self.assertEqual(report["bots_playing_at_end"], bots)
        self.assertGreater(report["commands_sent"], 0)
        self.assertGreater(report["commands_in_window"], 0)
        self.assertLessEqual(report["commands_in_window"], report["commands_sent"])
        # A bot stopped by the end of the window may have one command still unanswered.
        self.assertLessEqual(report["replies"], report["commands_sent"])
        self.assertGreaterEqual(report["replies"], report["commands_sent"] - bots)
        rtt = report["rtt"]
        for key in LATENCY_KEYS:
            self.assertIn(key, rtt)
        # RTT samples are the replies inside the measured window; the counters cover the run.
        self.assertGreater(rtt["count"], 0)
        self.assertLessEqual(rtt["count"], report["replies"])
        self.assertGreater(rtt["p50_ms"], 0)
        self.assertLessEqual(rtt["p50_ms"], rtt["p95_ms"])
        self.assertLessEqual(rtt["p95_ms"], rtt["p99_ms"])
        self.assertLessEqual(rtt["p99_ms"], rtt["max_ms"])
        server = report["server"]
        self.assertTrue(server["scraped"], server["error"])
        self.assertGreater(server["tick_samples"], 0)
        self.assertIsNotNone(server["tick_lag_p99_ms"])
        # A player walking between zones at the moment of the scrape is in neither zone.
        self.assertLessEqual(server["occupancy"], bots)
        self.assertGreaterEqual(server["occupancy"], bots - 2)
        self.assertEqual(sum(server["occupancy_by_zone"].values()), server["occupancy"])
        self.assertTrue(report["server_process"]["sampled"])
        self.assertGreater(report["server_process"]["rss_bytes"], 0)
        self.assertEqual(rows[0], CSV_HEADER)
        self.assertGreaterEqual(len(rows) - 1, int(report["steady_seconds"]))
        for row in rows[1:]:
            self.assertEqual(len(row), len(CSV_HEADER))
        self.assertEqual(sum(int(r[3]) for r in rows[1:]) <= report["commands_sent"], True)

    def test_fifty_telnet_bots_for_twenty_seconds(self):
        server = self.start_server()
        report, rows, stderr = self.run_bots(server, "telnet", 50, 20, "ci")
        self.check_report(report, rows, 50, stderr)
        # Every bot quit at the end, so the world is empty again.
        server.wait_metric("telos_gate_players", lambda v: v == 0)
        self.assertFalse([e for e in server.log_entries() if e.get("level") == "error"])

    @staticmethod
    def a_bot_leaves_the_lobby(server, proc, timeout=60):
        """Polls the server's zone occupancy until some zone other than the lobby has a player;
        False if the bots end or the deadline passes first."""
        deadline = time.time() + timeout
        while proc.poll() is None and time.time() < deadline:
            _, body = server.admin_get("/metrics")
            for line in body.splitlines():
                if (line.startswith("telos_zone_occupancy{") and 'zone="lobby"' not in line
                        and float(line.split()[-1]) > 0):
                    return True
            time.sleep(0.2)  # the poll interval
        return False

    def test_walking_bots_leave_the_start_zone(self):
        server = self.start_server()
        cmd = [BINARY, "bots", "--target", "127.0.0.1:%d" % server.telnet_port, "--bots", "10",
               "--ramp-per-second", "10", "--duration-s", "20", "--think-ms", "300",
               "--mix", "walk=1", "--accounts-prefix", "walker", "--seed", "3"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(proc.kill)
        self.assertTrue(self.a_bot_leaves_the_lobby(server, proc),
                        "no bot walked out of the lobby zone")
        proc.wait(60)
        self.assertEqual(proc.returncode, 0, proc.stderr.read())

    def test_spreading_bots_leave_the_start_zone_and_the_window_waits_for_them(self):
        server = self.start_server()
        out = tempfile.mkdtemp(prefix="telos-bots-")
        report_path = os.path.join(out, "report.json")
        # The mix only idles: a bot outside the lobby zone got there while spreading.
        cmd = [BINARY, "bots", "--target", "127.0.0.1:%d" % server.telnet_port, "--bots", "10",
               "--ramp-per-second", "10", "--duration-s", "5", "--mix", "idle=1",
               "--spread-steps", "15", "--accounts-prefix", "spread", "--seed", "5",
               "--report", report_path]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(proc.kill)
        self.assertTrue(self.a_bot_leaves_the_lobby(server, proc),
                        "no bot spread out of the lobby zone")
        proc.wait(90)
        self.assertEqual(proc.returncode, 0, proc.stderr.read())
        with open(report_path) as f:
            report = json.load(f)
        self.assertEqual(report["errors"], 0, report["errors_by_kind"])
        self.assertEqual(report["bots_playing_at_end"], 10)
        # The window opened only once every bot had taken its 15 steps (each 200-400 ms apart).
        self.assertGreaterEqual(report["ramp_seconds"], 15 * 0.2)
        # Spreading commands are not the mix's: none is counted, and the window had no samples.
        self.assertEqual(report["commands_sent"], 0)
        self.assertEqual(report["rtt"]["count"], 0)

    def test_websocket_bots_reuse_their_accounts(self):
        server = self.start_server()
        first, rows, stderr = self.run_bots(server, "websocket", 10, 4, "web")
        self.check_report(first, rows, 10, stderr)
        again, rows, stderr = self.run_bots(server, "websocket", 10, 4, "web")
        self.check_report(again, rows, 10, stderr)


if __name__ == "__main__":
    unittest.main()
