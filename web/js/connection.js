// The WebSocket session with automatic reconnect. No DOM access: the socket factory, timers and
// clock are injected, so the reconnect logic is tested under node with fakes.
//
// States reported through onStatus:
//   connecting  a socket is being opened
//   open        connected; frames flow
//   waiting     the connection dropped; a reconnect is scheduled at `retry_at_ms`
//   closed      the server said goodbye with a close frame (or stop() was called); no automatic
//               reconnect, because the server ended the session on purpose (quit, shutdown,
//               too many connections) and retrying on our own would only get in its way
//
// A drop is any close not announced by a close frame, including a failed connect. The backoff
// restarts from its base only after a connection has stayed open for `stable_ms`, so a server that
// accepts and immediately drops us is still met with growing delays.

import { buildHello, parseFrame } from './protocol.js';

export const kConnectTimeoutMs = 15000;
export const kStableMs = 10000;

export class Connection {
  /**
   * @param {object} o
   * @param {string} o.url                        ws:// or wss:// address of /ws
   * @param {(url: string) => object} o.createSocket returns a WebSocket-like object
   * @param {{next(): number, reset(): void}} o.backoff
   * @param {{setTimeout: Function, clearTimeout: Function}} [o.timers]
   * @param {() => number} [o.now]                  milliseconds clock
   * @param {(frame: object) => void} [o.onFrame]   each valid incoming frame
   * @param {(status: object) => void} [o.onStatus] each state change
   * @param {() => void} [o.onOpen]                 after the socket opened and Core.Hello was sent
   */
  constructor(o) {
    this.url = o.url;
    this.createSocket = o.createSocket;
    this.backoff = o.backoff;
    // Browsers refuse setTimeout called as a method of another object ("Illegal invocation"),
    // so the defaults are wrappers rather than the functions themselves.
    this.timers = o.timers ?? {
      setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
      clearTimeout: (id) => globalThis.clearTimeout(id),
    };
    this.now = o.now ?? (() => Date.now());
    this.onFrame = o.onFrame ?? (() => {});
    this.onStatus = o.onStatus ?? (() => {});
    this.onOpen = o.onOpen ?? (() => {});
    this.connectTimeoutMs = o.connect_timeout_ms ?? kConnectTimeoutMs;
    this.stableMs = o.stable_ms ?? kStableMs;

    this.socket = null;
    this.state = 'idle';
    this.retryTimer = null;
    this.connectTimer = null;
    this.stableTimer = null;
    this.closeReason = null; // set by a server close frame
    this.attempts = 0; // connection attempts since the last successful open
  }

  /** Starts connecting. Calling it while connected or connecting does nothing. */
  start() {
    if (this.state === 'connecting' || this.state === 'open') return;
    this.clearTimer('retryTimer');
    this.closeReason = null;
    this.connect();
  }

  /** Skips the wait: reconnects at once if not connected or connecting. */
  reconnectNow() {
    this.start();
  }

  /** Closes the connection for good (until start() is called again). */
  stop(reason = 'stopped') {
    this.clearTimer('retryTimer');
    this.closeReason = reason;
    this.detach(true);
    this.setState('closed', { reason });
  }

  /** Sends one already-built frame. Returns false when not connected; nothing is queued. */
  send(frameText) {
    if (this.state !== 'open' || !this.socket) return false;
    try {
      this.socket.send(frameText);
      return true;
    } catch {
      return false;
    }
  }

  get isOpen() {
    return this.state === 'open';
  }

  // --- internals ---

  connect() {
    this.attempts += 1;
    this.setState('connecting', { attempt: this.attempts });
    let socket;
    try {
      socket = this.createSocket(this.url);
    } catch {
      this.dropped();
      return;
    }
    this.socket = socket;
    // Handlers check that their socket is still the current one, so late events from a socket we
    // already gave up on cannot disturb the next one.
    socket.onopen = () => {
      if (this.socket === socket) this.opened();
    };
    socket.onmessage = (ev) => {
      if (this.socket === socket) this.message(ev);
    };
    socket.onclose = () => {
      if (this.socket === socket) this.closed();
    };
    socket.onerror = () => {
      // A close event always follows an error; the reconnect is handled there.
    };
    this.connectTimer = this.timers.setTimeout(() => {
      this.connectTimer = null;
      if (this.socket === socket && this.state === 'connecting') {
        this.detach(true);
        this.dropped();
      }
    }, this.connectTimeoutMs);
  }

  opened() {
    this.clearTimer('connectTimer');
    this.attempts = 0;
    this.setState('open', {});
    this.send(buildHello());
    this.stableTimer = this.timers.setTimeout(() => {
      this.stableTimer = null;
      this.backoff.reset();
    }, this.stableMs);
    this.onOpen();
  }

  message(ev) {
    const frame = parseFrame(ev && ev.data);
    if (frame === null) return;
    if (frame.type === 'close') this.closeReason = frame.reason || 'closed by server';
    this.onFrame(frame);
  }

  closed() {
    this.detach(false);
    if (this.closeReason !== null) {
      this.setState('closed', { reason: this.closeReason });
      return;
    }
    this.dropped();
  }

  dropped() {
    const delay = this.backoff.next();
    this.setState('waiting', { delay_ms: delay, retry_at_ms: this.now() + delay });
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  // Forgets the current socket; closes it too when asked.
  detach(close) {
    this.clearTimer('connectTimer');
    this.clearTimer('stableTimer');
    const socket = this.socket;
    this.socket = null;
    if (socket && close) {
      try {
        socket.close();
      } catch {
        // Already closed or never opened: nothing to do.
      }
    }
  }

  clearTimer(name) {
    if (this[name] !== null) {
      this.timers.clearTimeout(this[name]);
      this[name] = null;
    }
  }

  setState(state, details) {
    this.state = state;
    this.onStatus({ state, ...details });
  }
}
