import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backoff } from '../js/backoff.js';
import { Connection } from '../js/connection.js';

// Manual timers: nothing runs until advance() moves the clock past it.
class FakeTimers {
  constructor() {
    this.now = 0;
    this.nextId = 1;
    this.pending = new Map(); // id -> {at, fn}
  }
  setTimeout = (fn, ms) => {
    const id = this.nextId++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  };
  clearTimeout = (id) => {
    this.pending.delete(id);
  };
  advance(ms) {
    const end = this.now + ms;
    for (;;) {
      let first = null;
      for (const [id, t] of this.pending) {
        if (t.at <= end && (first === null || t.at < first[1].at)) first = [id, t];
      }
      if (first === null) break;
      this.pending.delete(first[0]);
      this.now = first[1].at;
      first[1].fn();
    }
    this.now = end;
  }
}

class FakeSocket {
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.closed = false;
  }
  send(text) {
    this.sent.push(text);
  }
  close() {
    this.closed = true;
  }
  // Test drivers.
  open() {
    this.onopen?.({});
  }
  receive(data) {
    this.onmessage?.({ data: typeof data === 'string' ? data : JSON.stringify(data) });
  }
  drop() {
    this.onerror?.({});
    this.onclose?.({ code: 1006 });
  }
}

function setup({ random = () => 0, failCreate = false } = {}) {
  const timers = new FakeTimers();
  const sockets = [];
  const statuses = [];
  const frames = [];
  let opens = 0;
  const conn = new Connection({
    url: 'ws://host/ws',
    createSocket: (url) => {
      if (failCreate) throw new SyntaxError('bad url');
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    backoff: new Backoff({ base_delay_ms: 1000, max_delay_ms: 8000, factor: 2, jitter: 0.5 }, random),
    timers,
    now: () => timers.now,
    connect_timeout_ms: 5000,
    stable_ms: 3000,
    onStatus: (s) => statuses.push(s),
    onFrame: (f) => frames.push(f),
    onOpen: () => {
      opens += 1;
    },
  });
  return { conn, timers, sockets, statuses, frames, opens: () => opens };
}

const states = (statuses) => statuses.map((s) => s.state);

describe('Connection', () => {
  it('connects, says hello and reports open', () => {
    const t = setup();
    t.conn.start();
    assert.equal(t.sockets.length, 1);
    assert.equal(t.sockets[0].url, 'ws://host/ws');
    t.sockets[0].open();
    assert.deepEqual(states(t.statuses), ['connecting', 'open']);
    assert.deepEqual(JSON.parse(t.sockets[0].sent[0]), {
      type: 'gmcp',
      package: 'Core.Hello',
      data: { client: 'TelosWeb', version: '1' },
    });
    assert.equal(t.opens(), 1);
    assert.equal(t.conn.send('{"type":"input","text":"look"}'), true);
    assert.equal(t.sockets[0].sent.length, 2);
  });

  it('delivers valid frames and ignores malformed ones', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].open();
    t.sockets[0].receive({ type: 'text', text: 'hi' });
    t.sockets[0].receive('garbage{');
    t.sockets[0].receive({ type: 'mystery' });
    t.sockets[0].receive({ type: 'echo', on: false });
    assert.deepEqual(t.frames, [
      { type: 'text', text: 'hi' },
      { type: 'echo', on: false },
    ]);
  });

  it('does not send while disconnected', () => {
    const t = setup();
    assert.equal(t.conn.send('x'), false);
    t.conn.start();
    assert.equal(t.conn.send('x'), false, 'still connecting');
    assert.equal(t.sockets[0].sent.length, 0);
  });

  it('reconnects after a drop with growing delays', () => {
    const t = setup({ random: () => 0.999999 });
    t.conn.start();
    t.sockets[0].drop(); // attempt 1 failed
    let last = t.statuses.at(-1);
    assert.equal(last.state, 'waiting');
    assert.equal(last.delay_ms, 1000);
    assert.equal(last.retry_at_ms, 1000);

    t.timers.advance(999);
    assert.equal(t.sockets.length, 1, 'not before the delay');
    t.timers.advance(1);
    assert.equal(t.sockets.length, 2);
    t.sockets[1].drop();
    assert.equal(t.statuses.at(-1).delay_ms, 2000);

    t.timers.advance(2000);
    t.sockets[2].drop();
    assert.equal(t.statuses.at(-1).delay_ms, 4000);
    t.timers.advance(4000);
    t.sockets[3].drop();
    assert.equal(t.statuses.at(-1).delay_ms, 8000);
    t.timers.advance(8000);
    t.sockets[4].drop();
    last = t.statuses.at(-1);
    assert.equal(last.delay_ms, 8000, 'capped');
    assert.equal(t.statuses.filter((s) => s.state === 'connecting').at(-1).attempt, 5);
  });

  it('resets the backoff only after the connection stayed up', () => {
    const t = setup({ random: () => 0.999999 });
    t.conn.start();
    t.sockets[0].drop();
    t.timers.advance(1000);
    t.sockets[1].drop();
    t.timers.advance(2000);
    // Opens, but drops before stable_ms: the delays keep growing.
    t.sockets[2].open();
    t.timers.advance(2999);
    t.sockets[2].drop();
    assert.equal(t.statuses.at(-1).delay_ms, 4000);
    t.timers.advance(4000);
    // Opens and stays up: the next drop starts from the base again.
    t.sockets[3].open();
    t.timers.advance(3000);
    t.sockets[3].drop();
    assert.equal(t.statuses.at(-1).delay_ms, 1000);
  });

  it('does not reconnect after a server close frame', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].open();
    t.sockets[0].receive({ type: 'close', reason: 'Goodbye.' });
    t.sockets[0].drop();
    assert.deepEqual(t.statuses.at(-1), { state: 'closed', reason: 'Goodbye.' });
    t.timers.advance(120000);
    assert.equal(t.sockets.length, 1);
    assert.equal(t.frames.at(-1).type, 'close', 'the close frame is delivered too');
  });

  it('reconnectNow skips the wait and cancels the scheduled retry', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].drop();
    assert.equal(t.conn.state, 'waiting');
    t.conn.reconnectNow();
    assert.equal(t.sockets.length, 2);
    assert.equal(t.conn.state, 'connecting');
    // The old retry was due at 500 ms; it must not open a third socket. (Stay below the
    // connect timeout, which would legitimately retry.)
    t.timers.advance(4999);
    assert.equal(t.sockets.length, 2);
    assert.equal(t.conn.state, 'connecting');
  });

  it('reconnectNow does nothing while connected', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].open();
    t.conn.reconnectNow();
    assert.equal(t.sockets.length, 1);
    assert.equal(t.conn.state, 'open');
  });

  it('reconnectNow after a server close connects again', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].open();
    t.sockets[0].receive({ type: 'close', reason: 'Idle too long.' });
    t.sockets[0].drop();
    t.conn.reconnectNow();
    assert.equal(t.sockets.length, 2);
    t.sockets[1].drop();
    assert.equal(t.conn.state, 'waiting', 'a later drop reconnects automatically again');
  });

  it('gives up on a connect that hangs and retries', () => {
    const t = setup();
    t.conn.start();
    t.timers.advance(5000);
    assert.equal(t.sockets[0].closed, true);
    assert.equal(t.conn.state, 'waiting');
    // A late close event from the abandoned socket is ignored.
    const before = t.statuses.length;
    t.sockets[0].drop();
    assert.equal(t.statuses.length, before);
  });

  it('ignores events from a socket it has replaced', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].drop();
    t.conn.reconnectNow();
    t.sockets[0].open();
    t.sockets[0].receive({ type: 'text', text: 'stale' });
    assert.equal(t.conn.state, 'connecting');
    assert.deepEqual(t.frames, []);
  });

  it('treats a socket that cannot be created as a drop', () => {
    const t = setup({ failCreate: true });
    t.conn.start();
    assert.equal(t.conn.state, 'waiting');
    t.timers.advance(1000);
    assert.equal(t.statuses.filter((s) => s.state === 'connecting').length, 2);
  });

  it('stop closes the socket and cancels retries', () => {
    const t = setup();
    t.conn.start();
    t.sockets[0].open();
    t.conn.stop('bye');
    assert.equal(t.sockets[0].closed, true);
    assert.deepEqual(t.statuses.at(-1), { state: 'closed', reason: 'bye' });
    t.timers.advance(60000);
    assert.equal(t.sockets.length, 1);
  });
});
