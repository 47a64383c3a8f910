"""Helpers for end-to-end tests: start a built `telos serve`, talk to it over telnet and
WebSocket like a player would. Standard library only; every wait polls with a deadline."""

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time

IAC, SB, SE, WILL, WONT, DO, DONT = 255, 250, 240, 251, 252, 253, 254


def http_request(port, method, path, body=None, headers=None, timeout=15):
    """One HTTP/1.1 request to 127.0.0.1:`port`, read to the close; (status, body as text)."""
    payload = b"" if body is None else body.encode()
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: x", "Connection: close"]
    if body is not None:
        lines.append("Content-Length: %d" % len(payload))
    for name, value in (headers or {}).items():
        lines.append("%s: %s" % (name, value))
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), rest.decode("utf-8", "replace")


class Server:
    """`telos serve` on loopback with ports chosen by the kernel and a private data folder.

    `role` runs another subcommand the same way (`account`, `world`, `gate`: fleet.py); the
    `ready` log line is kept in `ready`, and its ports (those the role has) in telnet_port,
    http_port (the public one: web client, /ws, /api/health, /api/who) and admin_port (the
    loopback admin listener: /metrics, /api/cluster, /api/health)."""

    def __init__(self, binary, repo, data_dir=None, extra_env=None, role="serve"):
        self.binary = binary
        self.repo = repo
        self.role = role
        self.ready = None
        self.owns_data_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="telos-e2e-")
        self.extra_env = extra_env or {}
        self.proc = None
        self.lines = []
        self.telnet_port = None
        self.http_port = None
        self.admin_port = None
        self._lock = threading.Lock()

    def start(self, timeout=30):
        self.launch()
        return self.wait_ready(timeout)

    def launch(self):
        """Starts the process without waiting for it to be ready (wait_ready() does)."""
        env = dict(os.environ)
        if self.role == "serve":
            # The fleet's variables would make serve join a fleet: a plain serve runs embedded
            # unless a test asks for them through extra_env.
            for name in ("TELOS_REDIS", "TELOS_DATABASE_URL", "TELOS_NATS"):
                env.pop(name, None)
        env.update({
            "TELOS_BIND": "127.0.0.1",
            "TELOS_TELNET_PORT": "0",
            "TELOS_HTTP_PORT": "0",
            "TELOS_ADMIN_PORT": "0",
            "TELOS_DATA_DIR": self.data_dir,
            "TELOS_CONTENT_DIR": os.path.join(self.repo, "content"),
            "TELOS_WEB_DIR": os.path.join(self.repo, "web"),
            "TELOS_SEED": "42",
            # Cheap hashing keeps account creation fast under the sanitizers (tests only).
            "TELOS_PASSWORD_MEMORY_KIB": "64",
            "TELOS_PASSWORD_PASSES": "1",
            # Tests make many accounts from 127.0.0.1, each bot's first name unknown: lift the
            # per-address and overall creation throttles and the per-address failure throttle,
            # and let creations queue for a hashing slot.
            "TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX": "1000000",
            "TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX": "1000000",
            "TELOS_ACCOUNT_CREATIONS_MAX": "1000000",
            "TELOS_CREATION_HASH_WAITERS_MAX": "1000",
        })
        env.update(self.extra_env)
        self.proc = subprocess.Popen([self.binary, self.role], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read_output, daemon=True).start()
        return self

    def wait_ready(self, timeout=30):
        self.ready = self.wait_log(lambda e: e.get("msg") == "ready", timeout)
        self.telnet_port = self.ready.get("telnet_port")
        self.http_port = self.ready.get("http_port")
        self.admin_port = self.ready.get("admin_port")
        return self

    def _read_output(self):
        for line in self.proc.stdout:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def log_entries(self):
        with self._lock:
            lines = list(self.lines)
        entries = []
        for line in lines:
            try:
                entries.append(json.loads(line))
            except ValueError:
                entries.append({"raw": line})
        return entries

    def wait_log(self, predicate, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for entry in self.log_entries():
                if predicate(entry):
                    return entry
            if self.proc.poll() is not None:
                raise AssertionError("server exited early:\n" + "\n".join(self.lines))
            time.sleep(0.02)
        raise AssertionError("log line not seen; output:\n" + "\n".join(self.lines[-40:]))

    def metric(self, name):
        """The value of one unlabelled Prometheus sample from /metrics (on the admin port)."""
        _, body = self.admin_get("/metrics")
        for line in body.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise AssertionError("no metric %s" % name)

    def wait_metric(self, name, predicate, timeout=30):
        deadline = time.time() + timeout
        while not predicate(self.metric(name)):
            if time.time() > deadline:
                raise AssertionError("%s stayed at %s" % (name, self.metric(name)))
            time.sleep(0.05)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("server did not stop within %ss" % timeout)
        return self.proc.returncode

    def cleanup(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def admin_get(self, path):
        """GET on the admin listener (/metrics, /api/cluster)."""
        return self.http_get(path, port=self.admin_port)

    def http_get(self, path, port=None):
        """GET on the public HTTP port (or `port`); returns (status, body)."""
        return http_request(port or self.http_port, "GET", path, timeout=5)


class Telnet:
    """A telnet player. Negotiation is parsed out of the stream and recorded; text is kept."""

    def __init__(self, port, answer_negotiation=False):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)
        self.text = ""
        self.negotiations = []      # (verb, option)
        self.subnegotiations = []   # (option, payload bytes)
        self.closed = False
        self._pending = b""
        self.answer = answer_negotiation

    def send_raw(self, data):
        self.sock.setblocking(True)
        self.sock.sendall(data)
        self.sock.setblocking(False)

    def send(self, line):
        self.send_raw(line.encode("utf-8") + b"\r\n")

    def _pump(self):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return False
        except ConnectionResetError:
            self.closed = True
            return False
        if not data:
            self.closed = True
            return False
        self._parse(self._pending + data)
        return True

    def _parse(self, data):
        out = bytearray()
        i = 0
        while i < len(data):
            b = data[i]
            if b != IAC:
                out.append(b)
                i += 1
                continue
            if i + 1 >= len(data):
                break
            verb = data[i + 1]
            if verb == IAC:
                out.append(IAC)
                i += 2
            elif verb in (WILL, WONT, DO, DONT):
                if i + 2 >= len(data):
                    break
                self.negotiations.append((verb, data[i + 2]))
                i += 3
            elif verb == SB:
                end = data.find(bytes([IAC, SE]), i)
                if end < 0:
                    break
                self.subnegotiations.append((data[i + 2], data[i + 3:end]))
                i = end + 2
            else:
                i += 2
        self._pending = data[i:]
        self.text += out.decode("utf-8", "replace").replace("\r\n", "\n")

    def expect(self, needle, timeout=15):
        deadline = time.time() + timeout
        while needle not in self.text:
            if time.time() > deadline or self.closed:
                raise AssertionError("did not see %r; got:\n%s" % (needle, self.text[-3000:]))
            if not self._pump():
                time.sleep(0.01)
        return self.text

    def expect_any(self, needles, timeout=15):
        """Waits until one of `needles` appears and returns it."""
        deadline = time.time() + timeout
        while True:
            for needle in needles:
                if needle in self.text:
                    return needle
            if time.time() > deadline or self.closed:
                raise AssertionError("saw none of %r; got:\n%s" % (needles, self.text[-2000:]))
            if not self._pump():
                time.sleep(0.01)

    def wait_closed(self, timeout=15):
        deadline = time.time() + timeout
        while not self.closed:
            if time.time() > deadline:
                raise AssertionError("connection still open; got:\n" + self.text[-2000:])
            if not self._pump():
                time.sleep(0.01)

    def mark(self):
        """Forget text seen so far, so the next expect() only looks at new output; returns the
        text forgotten."""
        while self._pump():
            pass
        seen, self.text = self.text, ""
        return seen

    def close(self):
        self.sock.close()


class WebSocket:
    """A minimal RFC 6455 client speaking the web client's JSON frames."""

    def __init__(self, port, path="/ws"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise AssertionError("upgrade refused: %r" % head)
        self.text = ""
        self.frames = []
        self.close_code = None

    def send_frame(self, payload, opcode=1):
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x80 | opcode])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send_json(self, obj):
        self.send_frame(json.dumps(obj).encode())

    def send(self, line):
        """One line of player input, as the web client sends it."""
        self.send_json({"type": "input", "text": line})

    def _read_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def read_frame(self, timeout):
        self.sock.settimeout(timeout)
        b0, b1 = self._read_exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read_exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read_exact(8))[0]
        payload = self._read_exact(n)
        opcode = b0 & 0x0F
        if opcode == 8:
            self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
            return None
        if opcode == 1:
            frame = json.loads(payload.decode())
            self.frames.append(frame)
            if frame.get("type") == "text":
                self.text += frame["text"]
            elif frame.get("type") == "close":  # the web client shows the reason as text
                self.text += frame.get("reason", "") + "\n"
            return frame
        return {}

    def expect(self, needle, timeout=15):
        deadline = time.time() + timeout
        while needle not in self.text:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise AssertionError("did not see %r; got:\n%s" % (needle, self.text[-3000:]))
            try:
                if self.read_frame(remaining) is None:
                    raise AssertionError("closed before %r; got:\n%s" % (needle, self.text))
            except socket.timeout:
                pass
        return self.text

    def expect_gmcp(self, package, timeout=15):
        """Waits for a data frame of `package` and returns its data."""
        deadline = time.time() + timeout
        while True:
            for frame in self.frames:
                if frame.get("type") == "gmcp" and frame.get("package") == package:
                    return frame.get("data")
            remaining = deadline - time.time()
            if remaining <= 0:
                raise AssertionError("no %s frame; got %r" % (package, self.frames[-10:]))
            try:
                if self.read_frame(remaining) is None:
                    raise AssertionError("closed before a %s frame" % package)
            except socket.timeout:
                pass

    def expect_close(self, timeout=15):
        deadline = time.time() + timeout
        while self.close_code is None:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise AssertionError("no close frame")
            try:
                self.read_frame(remaining)
            except (ConnectionError, OSError):
                break
        return self.close_code

    def close(self):
        self.sock.close()
