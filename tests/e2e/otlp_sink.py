"""A tiny OTLP/HTTP JSON receiver for end-to-end tests: no OpenTelemetry collector is packaged
anywhere this project can install from, so the tests bring their own.

It listens on 127.0.0.1 on a port the kernel picks (never a fixed one), takes every POST to
/v1/metrics as OTLP JSON, answers 200 "{}", and keeps what arrived. latest() gives, per
service.name, the metrics of the newest export; every wait polls with a deadline.

    sink = OtlpSink()
    env = sink.env(interval_ms=200)     # OTEL_* variables for a process
    ...
    points = sink.wait_points("telos-world", "telos.zone.occupancy", lambda ps: ...)
    sink.close()"""

import http.server
import json
import threading
import time


def attributes(kvs):
    """{key: value} of an OTLP JSON attribute list (strings, ints, doubles, bools)."""
    out = {}
    for kv in kvs or []:
        value = kv.get("value", {})
        out[kv["key"]] = next(iter(value.values()), None) if value else None
    return out


class OtlpSink:
    def __init__(self):
        self.requests = []       # (path, content_type, parsed body)
        self._latest = {}        # service.name -> {metric name: metric object}
        self._lock = threading.Lock()
        sink = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = 200
                try:
                    sink._take(self.path, self.headers.get("Content-Type", ""),
                               json.loads(body or b"{}"))
                except ValueError:
                    status = 400
                reply = b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a role killed mid-export resets its connection: not the test's failure

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def env(self, interval_ms=200):
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.url,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_METRIC_EXPORT_INTERVAL": str(interval_ms),
        }

    def _take(self, path, content_type, doc):
        with self._lock:
            self.requests.append((path, content_type, doc))
            for rm in doc.get("resourceMetrics", []):
                resource = attributes(rm.get("resource", {}).get("attributes"))
                metrics = {}
                for sm in rm.get("scopeMetrics", []):
                    for m in sm.get("metrics", []):
                        metrics[m["name"]] = m
                self._latest[resource.get("service.name")] = {"resource": resource,
                                                              "metrics": metrics}

    def services(self):
        with self._lock:
            return set(self._latest)

    def latest(self, service):
        """{"resource": {...}, "metrics": {name: metric}} of `service`'s newest export, or None."""
        with self._lock:
            return self._latest.get(service)

    @staticmethod
    def points(metric):
        """The data points of an OTLP JSON metric, whatever its kind."""
        for kind in ("sum", "gauge", "histogram"):
            if kind in metric:
                return metric[kind].get("dataPoints", [])
        return []

    def wait_points(self, service, name, predicate, timeout=30):
        """Waits until `service`'s newest export has metric `name` with points that satisfy
        `predicate`; returns the points."""
        deadline = time.time() + timeout
        seen = None
        while time.time() < deadline:
            got = self.latest(service)
            if got and name in got["metrics"]:
                seen = self.points(got["metrics"][name])
                if predicate(seen):
                    return seen
            time.sleep(0.05)
        raise AssertionError("%s: %s never matched; last points %r; services seen %r"
                             % (service, name, seen, sorted(map(str, self.services()))))

    def close(self):
        self.server.shutdown()
        self.server.server_close()
