"""A whole TelosMUD fleet for end-to-end tests: the account service, world shards and gates,
each a built `telos` process on loopback, sharing the development services (Redis, PostgreSQL,
NATS from `scripts/services`).

Every Fleet is isolated: its own Redis key namespace and PostgreSQL schema (both dropped by
cleanup()), its own key pairs and caller tokens (the account service's, the gates' and the
worlds') in a private folder, and free loopback ports.
Standard library only; every wait polls with a deadline.

    fleet = Fleet(BINARY, REPO, "routing")
    fleet.start_account()
    fleet.start_world("world-0", pool=["town", "arena", "casino"])
    fleet.start_gate("gate-0")
    fleet.wait_owners({"town": "world-0", ...})
    client = fleet.connect("gate-0")
    ...
    fleet.cleanup()

Needs TELOS_REDIS and TELOS_DATABASE_URL (eval "$(scripts/services env)"); without them the
fleet refuses to start, since an integration test that silently skips proves nothing."""

import glob
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
from harness import Server, Telnet  # noqa: E402

# The lease TTL the fleets run with: short, so failover tests are quick.
LEASE_TTL_MS = 3000


class Room:
    """One room of the content pack: what a player is shown on arrival, and where exits go."""

    def __init__(self, ref, name, description, exits):
        self.ref = ref                  # "zone:room"
        self.zone = ref.split(":")[0]
        self.name = name
        self.description = description  # whitespace collapsed, as the server prints it
        self.exits = exits              # {direction: "zone:room"}


def load_rooms(repo):
    """{"zone:room": Room} of the content pack under repo/content."""
    rooms = {}
    for path in sorted(glob.glob(os.path.join(repo, "content", "zones", "*.toml"))):
        with open(path, "rb") as f:
            zone = tomllib.load(f)
        zone_id = zone["zone"]["id"]
        for room in zone.get("rooms", []):
            exits = {}
            for e in room.get("exits", []):
                exits[e["dir"]] = e["to"] if ":" in e["to"] else "%s:%s" % (zone_id, e["to"])
            ref = "%s:%s" % (zone_id, room["id"])
            rooms[ref] = Room(ref, room["name"], " ".join(room.get("description", "").split()),
                              exits)
    return rooms


def follow(rooms, start, directions):
    """The rooms a walk from `start` passes through, one per direction."""
    path, here = [], start
    for d in directions:
        if d not in rooms[here].exits:
            raise AssertionError("no exit %s from %s" % (d, here))
        here = rooms[here].exits[d]
        path.append(rooms[here])
    return path


def free_port():
    """A loopback port nobody listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique_name(label):
    """A Redis namespace / PostgreSQL schema name: lower-case letters, digits and _, <= 63."""
    label = re.sub(r"[^a-z0-9_]", "_", label.lower())[:24]
    return "e2e_%s_%d_%s" % (label, os.getpid(), secrets.token_hex(4))


class Redis:
    """Just enough of RESP2 to read the directory and delete a namespace."""

    def __init__(self, url):
        parts = urllib.parse.urlparse(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 6379
        self.password = parts.password
        path = parts.path.lstrip("/")
        self.db = int(path) if path else 0

    def command(self, *args):
        return self.pipeline([args])[0]

    def pipeline(self, commands):
        with socket.create_connection((self.host, self.port), timeout=5) as s:
            prelude = []
            if self.password:
                prelude.append(("AUTH", self.password))
            if self.db:
                prelude.append(("SELECT", str(self.db)))
            out = b""
            for args in prelude + list(commands):
                out += b"*%d\r\n" % len(args)
                for a in args:
                    a = a if isinstance(a, bytes) else str(a).encode()
                    out += b"$%d\r\n%s\r\n" % (len(a), a)
            s.sendall(out)
            reader = s.makefile("rb")
            replies = [self._read(reader) for _ in range(len(prelude) + len(commands))]
        return replies[len(prelude):]

    def _read(self, f):
        line = f.readline()
        if not line:
            raise ConnectionError("redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError("redis: " + rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = f.read(n + 2)[:-2]
            return data.decode("utf-8", "replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read(f) for _ in range(n)]
        raise RuntimeError("redis: unexpected reply %r" % line)

    def hgetall(self, key):
        flat = self.command("HGETALL", key) or []
        return dict(zip(flat[0::2], flat[1::2]))

    def scan(self, pattern):
        keys, cursor = [], "0"
        while True:
            cursor, batch = self.command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
            keys.extend(batch)
            if cursor == "0":
                return keys


class Fleet:
    """Processes of one fleet by name (account, world ids, gate ids), each a harness.Server."""

    def __init__(self, binary, repo, label, redis_url=None, nats_url=None):
        """`redis_url` and `nats_url` replace TELOS_REDIS and TELOS_NATS (a private server the
        test may kill)."""
        self.binary = binary
        self.repo = os.path.abspath(repo)
        self.redis_url = redis_url or os.environ.get("TELOS_REDIS", "")
        self.nats_url = nats_url or os.environ.get("TELOS_NATS", "")
        self.database_url = os.environ.get("TELOS_DATABASE_URL", "")
        if not self.redis_url or not self.database_url:
            raise AssertionError(
                "TELOS_REDIS and TELOS_DATABASE_URL are not set: run scripts/services start and "
                "eval \"$(scripts/services env)\"")
        self.namespace = unique_name(label)
        self.schema = self.namespace
        self.redis = Redis(self.redis_url)
        try:
            self.redis.command("PING")
        except OSError as e:
            raise AssertionError("Redis at TELOS_REDIS=%s does not answer (%s): run "
                                 "scripts/services start" % (self.redis_url, e)) from None
        self.dir = tempfile.mkdtemp(prefix="telos-fleet-")
        self.keys_dir = os.path.join(self.dir, "keys")
        self.caller_token = secrets.token_hex(16)
        self.gate_token = secrets.token_hex(16)   # gates -> worlds (Play)
        self.world_token = secrets.token_hex(16)  # worlds -> worlds (Handoff, Adopt, Describe)
        self.procs = {}       # name -> harness.Server, in start order
        self.kinds = {}       # name -> "account" | "world" | "gate"
        self.clients = []
        self.stop_codes = {}  # name -> exit code after cleanup's SIGTERM
        self.account = None   # "127.0.0.1:<port>" of the account service's gRPC
        self.keygen("account")
        self.keygen("handoff")

    # --- keys and environment

    def keygen(self, name):
        """Makes DIR/NAME.key and DIR/NAME.pub with `telos keygen`; returns (key, pub) paths."""
        out = subprocess.run([self.binary, "keygen", "--dir", self.keys_dir, "--name", name],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise AssertionError("telos keygen failed: " + out.stderr)
        return (os.path.join(self.keys_dir, name + ".key"),
                os.path.join(self.keys_dir, name + ".pub"))

    def key(self, name):
        return os.path.join(self.keys_dir, name)

    def base_env(self):
        """What every process of this fleet gets on top of harness.Server's defaults."""
        env = {
            "TELOS_REDIS": self.redis_url,
            "TELOS_DATABASE_URL": self.database_url,
            "TELOS_REDIS_NAMESPACE": self.namespace,
            "TELOS_DATABASE_SCHEMA": self.schema,
            "TELOS_BIND": "127.0.0.1",
            "TELOS_CONTENT_DIR": os.path.join(self.repo, "content"),
            "TELOS_WEB_DIR": os.path.join(self.repo, "web"),
            "TELOS_CALLER_TOKEN": self.caller_token,
            "TELOS_PASSWORD_MEMORY_KIB": "8",
            "TELOS_PASSWORD_PASSES": "1",
            # Many accounts from 127.0.0.1, each bot's first name unknown: lift the creation
            # and per-address failure throttles (AccountService).
            "TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX": "1000000",
            "TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX": "1000000",
            "TELOS_ACCOUNT_CREATIONS_MAX": "1000000",
            "TELOS_CREATION_HASH_WAITERS_MAX": "1000",
            "TELOS_LEASE_TTL_MS": str(LEASE_TTL_MS),
            "TELOS_LOG_LEVEL": "info",
            "TELOS_CONNECTIONS_PER_ADDRESS_MAX": "100",
        }
        if self.nats_url:
            env["TELOS_NATS"] = self.nats_url
        return env

    def account_env(self, extra_env=None):
        env = self.base_env()
        env.update({
            "TELOS_ACCOUNT_LISTEN": "127.0.0.1:0",
            "TELOS_HTTP_PORT": "0",
            "TELOS_SIGNING_KEY_FILE": self.key("account.key"),
        })
        env.update(extra_env or {})
        return env

    def world_env(self, shard_id, pool, extra_env=None):
        env = self.base_env()
        env.update({
            "TELOS_SHARD_ID": shard_id,
            "TELOS_ZONE_POOL": ",".join(pool),
            # The advertised endpoint is the listen address, so the port must be a real one.
            "TELOS_WORLD_LISTEN": "127.0.0.1:%d" % free_port(),
            "TELOS_HTTP_PORT": "0",
            "TELOS_ASSERTION_VERIFY_KEY_FILE": self.key("account.pub"),
            "TELOS_HANDOFF_KEY_FILE": self.key("handoff.key"),
            "TELOS_GATE_TOKEN": self.gate_token,
            "TELOS_WORLD_TOKEN": self.world_token,
        })
        if self.account:
            env["TELOS_ACCOUNT"] = self.account
        env.update(extra_env or {})
        return env

    def gate_env(self, gate_id, extra_env=None):
        env = self.base_env()
        env.update({
            "TELOS_GATE_ID": gate_id,
            "TELOS_TELNET_PORT": "0",
            "TELOS_HTTP_PORT": "0",
            "TELOS_GATE_TOKEN": self.gate_token,
        })
        if self.account:
            env["TELOS_ACCOUNT"] = self.account
        env.update(extra_env or {})
        return env

    # --- processes

    def _launch(self, name, kind, env, wait, timeout):
        if name in self.procs and self.procs[name].proc.poll() is None:
            raise AssertionError("%s is already running" % name)
        proc = Server(self.binary, self.repo, extra_env=env, role=kind)
        self.procs[name] = proc
        self.kinds[name] = kind
        proc.launch()
        if wait:
            self.wait_ready(name, timeout)
        return proc

    def wait_ready(self, name, timeout=60):
        """Waits for the `ready` line, then for /api/health to answer ok."""
        proc = self.procs[name]
        try:
            proc.wait_ready(timeout)
        except AssertionError as e:
            raise AssertionError("%s did not get ready: %s" % (name, e)) from None
        self.wait_healthy(name, timeout)
        return proc

    def start_account(self, extra_env=None, name="account", timeout=60):
        proc = self._launch(name, "account", self.account_env(extra_env), True, timeout)
        self.account = "127.0.0.1:%d" % proc.ready["port"]
        return proc

    def start_world(self, shard_id, pool, extra_env=None, name=None, wait=True, timeout=60):
        """`telos world` hosting the lobby and claiming what it can of `pool` (zone ids)."""
        return self._launch(name or shard_id, "world", self.world_env(shard_id, pool, extra_env),
                            wait, timeout)

    def start_serve(self, shard_id, pool, extra_env=None, name=None, wait=True, timeout=60):
        """`telos serve` joining this fleet: a world shard claiming from `pool`, its own gate and
        in-process accounts, signing with the fleet's keys."""
        env = self.world_env(shard_id, pool)
        env.pop("TELOS_ASSERTION_VERIFY_KEY_FILE")
        env.update({"TELOS_SIGNING_KEY_FILE": self.key("account.key"), "TELOS_TELNET_PORT": "0"})
        env.update(extra_env or {})
        return self._launch(name or shard_id, "serve", env, wait, timeout)

    def start_gate(self, gate_id, extra_env=None, name=None, wait=True, timeout=60):
        return self._launch(name or gate_id, "gate", self.gate_env(gate_id, extra_env), wait,
                            timeout)

    def run(self, role, env, timeout=60):
        """Runs `telos <role>` to its end with this environment on top of the caller's (a value
        of None removes a variable); returns the CompletedProcess (stdout and stderr apart)."""
        full = dict(os.environ)
        for k, v in env.items():
            if v is None:
                full.pop(k, None)
            else:
                full[k] = str(v)
        return subprocess.run([self.binary, role], env=full, capture_output=True, text=True,
                              timeout=timeout)

    def proc(self, name):
        return self.procs[name]

    def pid(self, name):
        return self.procs[name].proc.pid

    def alive(self, name):
        return self.procs[name].proc.poll() is None

    def send_signal(self, name, sig):
        self.procs[name].proc.send_signal(sig)

    def sigstop(self, name):
        self.send_signal(name, signal.SIGSTOP)

    def sigcont(self, name):
        self.send_signal(name, signal.SIGCONT)

    def stop(self, name, sig=signal.SIGTERM, timeout=30):
        """Signals the process and waits for its exit code (SIGKILL after `timeout`)."""
        return self.procs[name].stop(sig, timeout)

    def kill(self, name):
        return self.stop(name, signal.SIGKILL)

    # --- logs

    def logs(self, name, msg=None):
        entries = self.procs[name].log_entries()
        return [e for e in entries if msg is None or e.get("msg") == msg]

    def wait_log(self, name, predicate, timeout=30):
        return self.procs[name].wait_log(predicate, timeout)

    def wait_msg(self, name, msg, timeout=30, **fields):
        """Waits for a log line of `name` with this msg and these field values."""
        return self.wait_log(
            name, lambda e: e.get("msg") == msg and all(e.get(k) == v for k, v in fields.items()),
            timeout)

    def tail(self, lines=25):
        """The last lines of every process's output, for failure messages."""
        out = []
        for name, proc in self.procs.items():
            with proc._lock:
                last = proc.lines[-lines:]
            out.append("----- %s (%s)\n%s" % (name, self.kinds[name], "\n".join(last)))
        return "\n".join(out)

    def save_logs(self, folder):
        os.makedirs(folder, exist_ok=True)
        for name, proc in self.procs.items():
            with proc._lock, open(os.path.join(folder, name + ".log"), "w") as f:
                f.write("\n".join(proc.lines) + "\n")

    # --- HTTP

    def get_json(self, name, path, admin=False):
        """GET `path` of process `name` as JSON: on its admin listener when `admin` (/metrics,
        /api/cluster live there), else on its public HTTP port."""
        proc = self.procs[name]
        status, body = proc.admin_get(path) if admin else proc.http_get(path)
        if status != 200:
            raise AssertionError("%s %s: HTTP %d %s" % (name, path, status, body))
        return json.loads(body)

    def health(self, name):
        return self.get_json(name, "/api/health")

    def wait_healthy(self, name, timeout=30, predicate=None):
        """Polls /api/health until it answers ok (and `predicate(health)`, if given)."""
        deadline = time.time() + timeout
        last = None
        while True:
            if not self.alive(name):
                raise AssertionError("%s exited:\n%s" % (name, "\n".join(self.procs[name].lines)))
            try:
                last = self.health(name)
                if last.get("status") == "ok" and (predicate is None or predicate(last)):
                    return last
            except (OSError, ValueError, AssertionError) as e:
                last = e
            if time.time() > deadline:
                raise AssertionError("%s health stayed %r" % (name, last))
            time.sleep(0.05)

    def first_gate(self):
        for name, kind in self.kinds.items():
            if kind in ("gate", "serve") and self.alive(name):
                return name
        raise AssertionError("no gate is running")

    def cluster(self, via=None):
        """GET /api/cluster from a gate (the first live one unless `via` names a process)."""
        return self.get_json(via or self.first_gate(), "/api/cluster", admin=True)

    @staticmethod
    def owners(view):
        """{zone: owning shard id, or None} from a cluster view."""
        return {z["zone"]: (z["owner"] or {}).get("shard") for z in view["zones"]}

    @staticmethod
    def epochs(view):
        """{zone: lease epoch} of the owned zones of a cluster view."""
        return {z["zone"]: z["owner"]["epoch"] for z in view["zones"] if z["owner"]}

    def wait_cluster(self, predicate, timeout=15, via=None):
        """Polls /api/cluster until predicate(view); returns the view."""
        deadline = time.time() + timeout
        view = None
        while True:
            try:
                view = self.cluster(via)
                if predicate(view):
                    return view
            except (OSError, ValueError, AssertionError) as e:
                view = e
            if time.time() > deadline:
                raise AssertionError("cluster view never matched; last: %s\n%s" %
                                     (json.dumps(view) if isinstance(view, dict) else view,
                                      self.tail()))
            time.sleep(0.05)

    def wait_owners(self, expected, timeout=15, via=None):
        """Waits until each zone in `expected` ({zone: shard}) is owned by that shard."""
        return self.wait_cluster(
            lambda v: all(self.owners(v).get(z) == s for z, s in expected.items()), timeout, via)

    # --- the directory

    def placement(self, character):
        """The placement record of a character ({zone, epoch, shard, ...}), or {}."""
        return self.redis.hgetall("{%s}:pl:%s" % (self.namespace, character.lower()))

    def checkpoint(self, character):
        """The character's checkpoint in Redis ({room_id, zone_id, state_version, ...}), or {}."""
        return self.redis.hgetall("{%s}:checkpoint:%s" % (self.namespace, character.lower()))

    def redis_keys(self):
        return self.redis.scan("{%s}:*" % self.namespace)

    # --- players

    def connect(self, gate):
        client = Telnet(self.procs[gate].telnet_port)
        self.clients.append(client)
        return client

    # --- cleanup

    def cleanup(self):
        """Stops every process (SIGTERM, then SIGKILL), drops the schema and the Redis keys and
        removes the private folder. Logs are kept under $TELOS_E2E_LOG_DIR if it is set."""
        for client in self.clients:
            try:
                client.close()
            except OSError:
                pass
        # Gates first, then worlds, then the account service, as scripts/fleet stops them.
        for kind in ("gate", "world", "account"):
            names = [n for n, k in self.kinds.items() if k == kind and self.alive(n)]
            for name in names:
                try:
                    self.procs[name].proc.send_signal(signal.SIGCONT)  # a stopped one too
                    self.procs[name].proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
            deadline = time.time() + 20
            for name in names:
                proc = self.procs[name].proc
                try:
                    self.stop_codes[name] = proc.wait(max(0.1, deadline - time.time()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    self.stop_codes[name] = "killed: no exit within 20 s of SIGTERM"
        for name, code in self.stop_codes.items():
            if code != 0:  # not a test failure here, but worth a look: say so loudly
                print("fleet cleanup: %s (%s) exited %s on SIGTERM; last lines:\n%s" %
                      (name, self.kinds[name], code, "\n".join(self.procs[name].lines[-15:])),
                      file=sys.stderr)
        for proc in self.procs.values():
            proc.cleanup()
        if os.environ.get("TELOS_E2E_LOG_DIR"):
            self.save_logs(os.path.join(os.environ["TELOS_E2E_LOG_DIR"], self.namespace))
        try:
            keys = self.redis_keys()
            for i in range(0, len(keys), 500):
                self.redis.command("DEL", *keys[i:i + 500])
        except (OSError, RuntimeError) as e:
            print("fleet cleanup: redis keys of %s not deleted: %s" % (self.namespace, e),
                  file=sys.stderr)
        dropped = subprocess.run(
            ["psql", self.database_url, "-q", "-v", "ON_ERROR_STOP=1", "-c",
             "DROP SCHEMA IF EXISTS %s CASCADE" % self.schema],
            capture_output=True, text=True, timeout=60)
        if dropped.returncode != 0:
            print("fleet cleanup: schema %s not dropped: %s" % (self.schema, dropped.stderr),
                  file=sys.stderr)
        shutil.rmtree(self.dir, ignore_errors=True)
