"""End-to-end tests of the OpenTelemetry export (ctest label e2e): each role, given the
standard OTEL_* variables, pushes its metrics over OTLP/HTTP to a receiver of the test's own
(otlp_sink.py: no collector is packaged), under the names and labels of the operating spec,
while /metrics keeps serving the same values; a bad OTEL_* value stops a role with exit code 2.

The fleet test needs the services (TELOS_REDIS, TELOS_DATABASE_URL: scripts/services env)."""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Server, Telnet  # noqa: E402
from otlp_sink import OtlpSink, attributes  # noqa: E402
from test_serve import BINARY, REPO, new_player  # noqa: E402


def by_label(points, label):
    """{label value: point} of data points carrying `label`."""
    return {attributes(p.get("attributes")).get(label): p for p in points}


def value(point):
    return float(point.get("asDouble", point.get("asInt", 0)))


class ServeTelemetryTest(unittest.TestCase):
    def setUp(self):
        self.sink = OtlpSink()
        self.addCleanup(self.sink.close)

    def test_serve_exports_the_spec_metrics_over_otlp(self):
        server = Server(BINARY, REPO, extra_env=self.sink.env(interval_ms=200))
        self.addCleanup(server.cleanup)
        server.start()
        on = server.wait_log(lambda e: e.get("msg") == "otlp metrics export on")
        self.assertEqual(on["endpoint"], self.sink.url + "/v1/metrics")
        c = Telnet(server.telnet_port)
        self.addCleanup(c.close)
        new_player(c, "metered", "Gauger")

        # One player in the lobby: the zone's occupancy says so, labelled by zone.
        self.sink.wait_points(
            "telos-serve", "telos.zone.occupancy",
            lambda ps: "lobby" in by_label(ps, "zone") and value(by_label(ps, "zone")["lobby"]) == 1)
        # OTLP JSON leaves zero values out (proto3), so a count may be absent until a tick is late.
        self.sink.wait_points(
            "telos-serve", "telos.zone.tick_lag_ms",
            lambda ps: int(by_label(ps, "zone").get("lobby", {}).get("count", 0)) > 0)
        got = self.sink.latest("telos-serve")
        metrics = got["metrics"]
        self.assertEqual(got["resource"]["service.namespace"], "telos")
        self.assertEqual(got["resource"]["telos.role"], "serve")
        self.assertEqual(got["resource"]["process.pid"], str(server.proc.pid))
        # The headline signal: a cumulative histogram per zone, in milliseconds.
        lag = metrics["telos.zone.tick_lag_ms"]
        self.assertEqual(lag["unit"], "ms")
        self.assertEqual(lag["histogram"]["aggregationTemporality"], 2)  # cumulative
        lag_zones = by_label(lag["histogram"]["dataPoints"], "zone")
        self.assertIn("lobby", lag_zones)
        self.assertGreater(int(lag_zones["lobby"].get("count", 0)), 0)
        bounds = lag_zones["lobby"]["explicitBounds"]
        self.assertEqual(len(lag_zones["lobby"]["bucketCounts"]), len(bounds) + 1)
        # Counters are monotonic sums; the live telnet connection is a gauge.
        self.assertTrue(metrics["telos.shard.drain_redirected_total"]["sum"]["isMonotonic"])
        self.sink.wait_points("telos-serve", "telos.telnet.connections",
                              lambda ps: ps and value(ps[0]) == 1)
        # /metrics is unchanged and agrees.
        self.assertEqual(server.metric("telos_telnet_connections"), 1)

        # Every process exports once more as it stops: the count of telnet connections falls.
        c.send("quit")
        c.expect("Come back soon.")
        c.wait_closed()
        self.sink.wait_points("telos-serve", "telos.telnet.connections",
                              lambda ps: ps and value(ps[0]) == 0)

    def test_standard_variables_name_the_service(self):
        env = self.sink.env(interval_ms=200)
        env.update({"OTEL_SERVICE_NAME": "serve-eu-1",
                    "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=e2e,service.name=x"})
        server = Server(BINARY, REPO, extra_env=env)
        self.addCleanup(server.cleanup)
        server.start()
        self.sink.wait_points("serve-eu-1", "telos.zone.occupancy", lambda ps: len(ps) > 0)
        self.assertEqual(self.sink.latest("serve-eu-1")["resource"]["deployment.environment"],
                         "e2e")
        self.assertNotIn("x", self.sink.services())

    def test_no_endpoint_no_export(self):
        server = Server(BINARY, REPO)
        self.addCleanup(server.cleanup)
        server.start()
        self.assertFalse(any(e.get("msg") == "otlp metrics export on"
                             for e in server.log_entries()))
        self.assertGreaterEqual(server.metric("telos_shard_zones_held"), 1)
        self.assertEqual(self.sink.requests, [])

    def test_a_bad_otel_value_is_a_config_error(self):
        for variable, bad in (("OTEL_METRIC_EXPORT_INTERVAL", "soon"),
                              ("OTEL_EXPORTER_OTLP_PROTOCOL", "smoke-signals"),
                              ("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://127.0.0.1:1")):
            env = dict(os.environ)
            env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": self.sink.url, variable: bad,
                        "TELOS_DATA_DIR": self.id_dir(), "TELOS_TELNET_PORT": "0",
                        "TELOS_HTTP_PORT": "0", "TELOS_ADMIN_PORT": "0",
                        "TELOS_CONTENT_DIR": os.path.join(REPO, "content"),
                        "TELOS_WEB_DIR": os.path.join(REPO, "web")})
            for name in ("TELOS_REDIS", "TELOS_DATABASE_URL", "TELOS_NATS"):
                env.pop(name, None)
            out = subprocess.run([BINARY, "serve"], env=env, capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 2, out.stderr)
            self.assertIn(variable, out.stderr)

    def id_dir(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="telos-otel-")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
        return d


class FleetTelemetryTest(unittest.TestCase):
    """Every fleet role exports: the account service, a world and a gate, each under its own
    service.name, to one receiver."""

    def test_every_role_exports(self):
        from fleet import Fleet
        sink = OtlpSink()
        self.addCleanup(sink.close)
        fleet = Fleet(BINARY, REPO, "otel")
        self.addCleanup(fleet.cleanup)
        otel = sink.env(interval_ms=200)
        fleet.start_account(extra_env=otel)
        fleet.start_world("world-0", pool=["town", "arena", "casino"], extra_env=otel)
        fleet.start_gate("gate-0", extra_env=otel)
        client = fleet.connect("gate-0")
        new_player(client, "fleetmeter", "Countess")

        sink.wait_points("telos-world", "telos.zone.occupancy",
                         lambda ps: value(by_label(ps, "zone").get("lobby", {})) == 1)
        world = sink.latest("telos-world")["metrics"]
        self.assertIn("town", by_label(world["telos.zone.tick_lag_ms"]["histogram"]["dataPoints"],
                                       "zone"))
        self.assertIn("telos.shard.zones_held", world)
        sink.wait_points("telos-gate", "telos.gate.players", lambda ps: ps and value(ps[0]) == 1)
        calls = sink.wait_points(
            "telos-account", "telos.account.rpc_calls_total",
            lambda ps: sum(value(p) for p in ps) > 0)
        self.assertTrue(all("method" in attributes(p.get("attributes")) for p in calls))
        for service, role in (("telos-account", "account"), ("telos-world", "world"),
                              ("telos-gate", "gate")):
            self.assertEqual(sink.latest(service)["resource"]["telos.role"], role)


if __name__ == "__main__":
    unittest.main()
