#!/usr/bin/env python3
"""Idle telnet connections against `telos serve`: resident memory per connection and how fast
connections are accepted. Not a test; run by hand on a release build and record the output in
docs/benchmarks.md.

    scripts/build release --target telos
    bench/idle_connections.py --connections 10000

Each client connects to 127.0.0.1, reads the greeting (negotiation and the login prompt) and
then stays idle. The server's RSS is read from /proc before and after."""

import argparse
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=10000)
    ap.add_argument("--binary", default=os.path.join(REPO, "build/release/telos"))
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.connections + 1000
    if hard < need:
        sys.exit("RLIMIT_NOFILE hard limit %d is below %d" % (hard, need))
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))  # inherited by the server

    data_dir = tempfile.mkdtemp(prefix="telos-bench-")
    env = dict(os.environ, TELOS_BIND="127.0.0.1", TELOS_TELNET_PORT="0", TELOS_HTTP_PORT="0",
               TELOS_ADMIN_PORT="0",
               TELOS_DATA_DIR=data_dir, TELOS_CONTENT_DIR=os.path.join(REPO, "content"),
               TELOS_WEB_DIR=os.path.join(REPO, "web"), TELOS_LOG_LEVEL="warn",
               TELOS_CONNECTIONS_PER_ADDRESS_MAX=str(need))
    env["TELOS_LOG_LEVEL"] = "info"
    server = subprocess.Popen([args.binary, "serve"], env=env, stdout=subprocess.PIPE, text=True)
    port = None
    for line in server.stdout:
        entry = json.loads(line)
        if entry.get("msg") == "ready":
            port = entry["telnet_port"]
            break
    threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
    time.sleep(1.0)  # let the zones finish their first resets before the baseline
    base_rss = rss_kib(server.pid)
    base_cpu = cpu_seconds(server.pid)

    sel = selectors.DefaultSelector()
    socks = []
    greeted = 0
    start = time.time()
    pending = {}
    for i in range(args.connections):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
        sel.register(s, selectors.EVENT_READ)
        pending[s.fileno()] = b""
        # Keep the kernel's accept queue from overflowing: drain greetings as we go.
        while len(pending) > 512 or (i == args.connections - 1 and pending):
            for key, _ in sel.select(timeout=5):
                data = key.fileobj.recv(4096)
                buf = pending.get(key.fd, b"") + data
                if b"account name" in buf or not data:
                    sel.unregister(key.fileobj)
                    pending.pop(key.fd, None)
                    greeted += 1 if data else 0
                else:
                    pending[key.fd] = buf
            if time.time() - start > 600:
                sys.exit("timed out")
    elapsed = time.time() - start
    time.sleep(2.0)  # let allocations settle
    rss = rss_kib(server.pid)
    cpu = cpu_seconds(server.pid) - base_cpu
    result = {
        "connections": args.connections,
        "greeted": greeted,
        "seconds_to_connect_all": round(elapsed, 2),
        "connections_per_second": round(args.connections / elapsed),
        "rss_baseline_mib": round(base_rss / 1024, 1),
        "rss_connected_mib": round(rss / 1024, 1),
        "rss_per_connection_kib": round((rss - base_rss) / args.connections, 2),
        "server_cpu_seconds": round(cpu, 2),
    }
    print(json.dumps(result, indent=2))
    for s in socks:
        s.close()
    server.terminate()
    server.wait(timeout=60)


if __name__ == "__main__":
    main()
