"""A TCP proxy a test can cut and restore, to take a service away from some processes only.

Cutting closes the listening socket and every connection through it, so clients see what a
dead server gives them: resets, then refused connections. Restoring listens again on the same
port. The service itself keeps running for everyone else (other tests, the test's own checks)."""

import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class TcpProxy:
    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._lock = threading.Lock()
        self._conns = []
        self._listener = None
        self.restore()

    @classmethod
    def for_url(cls, url):
        """A proxy to the host and port of a service URL (redis://, postgresql://, nats://)."""
        parts = urlsplit(url)
        return cls(parts.hostname, parts.port)

    def url(self, url):
        """`url` with its host and port replaced by this proxy's (credentials and path kept)."""
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)
        where = "127.0.0.1:%d" % self.port
        netloc = (netloc[0] + "@" + where) if len(netloc) == 2 else where
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def restore(self):
        """Accepts connections again (no-op while already accepting)."""
        with self._lock:
            if self._listener is not None:
                return
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
            listener.listen(128)
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self):
        """Refuses new connections and resets every open one."""
        with self._lock:
            listener, self._listener = self._listener, None
            conns, self._conns = self._conns, []
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        for conn in conns:
            try:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                conn.close()
            except OSError:
                pass

    def close(self):
        self.cut()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    client.close()
                    upstream.close()
                    return
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
