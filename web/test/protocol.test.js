import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buildGmcp,
  buildHello,
  buildInput,
  buildNaws,
  kFrameLengthMax,
  parseFrame,
  validateFrame,
} from '../js/protocol.js';

const j = (v) => JSON.stringify(v);

describe('parseFrame: good frames', () => {
  it('text', () => {
    assert.deepEqual(parseFrame(j({ type: 'text', text: '\x1b[1mHi\x1b[0m\n' })), {
      type: 'text',
      text: '\x1b[1mHi\x1b[0m\n',
    });
    assert.deepEqual(parseFrame(j({ type: 'text', text: '' })), { type: 'text', text: '' });
  });

  it('echo on and off', () => {
    assert.deepEqual(parseFrame(j({ type: 'echo', on: false })), { type: 'echo', on: false });
    assert.deepEqual(parseFrame(j({ type: 'echo', on: true })), { type: 'echo', on: true });
  });

  it('close, with and without a reason', () => {
    assert.deepEqual(parseFrame(j({ type: 'close', reason: 'Server shutting down' })), {
      type: 'close',
      reason: 'Server shutting down',
    });
    assert.deepEqual(parseFrame(j({ type: 'close' })), { type: 'close', reason: '' });
  });

  it('Char.Vitals keeps the six numbers', () => {
    const data = { hp: 10, max_hp: 20, mana: 5, max_mana: 10, moves: 30, max_moves: 40 };
    assert.deepEqual(parseFrame(j({ type: 'gmcp', package: 'Char.Vitals', data })), {
      type: 'gmcp',
      package: 'Char.Vitals',
      data,
    });
  });

  it('Char.Vitals accepts a partial update and drops bad or unknown fields', () => {
    const f = parseFrame(
      j({ type: 'gmcp', package: 'Char.Vitals', data: { hp: 7, mana: 'lots', extra: 1, moves: null } }),
    );
    assert.deepEqual(f.data, { hp: 7 });
  });

  it('Char.Status', () => {
    const data = { name: 'Aria', level: 3, exp: 1200, gold: 45 };
    assert.deepEqual(parseFrame(j({ type: 'gmcp', package: 'Char.Status', data })).data, data);
    assert.deepEqual(
      parseFrame(j({ type: 'gmcp', package: 'Char.Status', data: { name: 5, level: 2 } })).data,
      { level: 2 },
    );
  });

  it('Room.Info, cleaning the exits list', () => {
    const f = parseFrame(
      j({
        type: 'gmcp',
        package: 'Room.Info',
        data: { zone: 'midgaard', room: 3001, name: 'Temple', exits: ['north', 7, '', 'south', 'north', null] },
      }),
    );
    assert.deepEqual(f, {
      type: 'gmcp',
      package: 'Room.Info',
      data: { zone: 'midgaard', room: 3001, name: 'Temple', exits: ['north', 'south'] },
    });
  });

  it('the server\'s own shapes: GMCP-style maxima, room "id" and exits keyed by direction', () => {
    const vitals = parseFrame(
      j({ type: 'gmcp', package: 'Char.Vitals', data: { hp: 9, maxhp: 30, mana: 2, maxmana: 20 } }),
    );
    assert.deepEqual(vitals.data, { hp: 9, max_hp: 30, mana: 2, max_mana: 20 });
    const room = parseFrame(
      j({
        type: 'gmcp',
        package: 'Room.Info',
        data: { zone: 'lobby', id: 'atrium', name: 'The Atrium', exits: { north: 'lobby:hall', up: 'lobby:gallery' } },
      }),
    );
    assert.deepEqual(room.data, {
      zone: 'lobby',
      room: 'atrium',
      name: 'The Atrium',
      exits: ['north', 'up'],
    });
  });

  it('Room.Info without exits has an empty list', () => {
    const f = parseFrame(j({ type: 'gmcp', package: 'Room.Info', data: { name: 'Void' } }));
    assert.deepEqual(f.data, { name: 'Void', exits: [] });
  });

  it('Comm.Channel (the older name) becomes Comm.Channel.Text', () => {
    const data = { channel: 'gossip', talker: 'Bob', text: 'hello all' };
    const f = parseFrame(j({ type: 'gmcp', package: 'Comm.Channel', data }));
    assert.equal(f.package, 'Comm.Channel.Text');
    assert.deepEqual(f.data, data);
  });

  it('Comm.Channel.Text as the server sends it: the talker named, the words alone', () => {
    const data = { channel: 'ooc', talker: 'Zed', text: '[ooc] Zed: hi there', message: 'hi there' };
    const f = parseFrame(j({ type: 'gmcp', package: 'Comm.Channel.Text', data }));
    assert.deepEqual(f, {
      type: 'gmcp',
      package: 'Comm.Channel.Text',
      data: { channel: 'ooc', talker: 'Zed', text: 'hi there' },
    });
    // An IRE-style body without "message": the whole line is shown.
    const ire = parseFrame(
      j({ type: 'gmcp', package: 'comm.channel.text', data: { channel: 'ooc', talker: 'Zed', text: 'Zed: hi' } }),
    );
    assert.deepEqual(ire.data, { channel: 'ooc', talker: 'Zed', text: 'Zed: hi' });
  });

  it('Room.Info exits keyed the short way become whole directions', () => {
    const f = parseFrame(
      j({
        type: 'gmcp',
        package: 'Room.Info',
        data: { num: 448301937, area: 'The Lobby', zone: 'lobby', id: 'atrium', name: 'Atrium', exits: { n: 12, u: 13, portal: 14, north: 15 } },
      }),
    );
    assert.deepEqual(f.data.exits, ['north', 'up', 'portal']);
  });

  it('matches GMCP package names case-insensitively and returns the canonical name', () => {
    const f = parseFrame(j({ type: 'gmcp', package: 'char.VITALS', data: { hp: 1 } }));
    assert.equal(f.package, 'Char.Vitals');
  });

  it('ignores extra top-level fields', () => {
    assert.deepEqual(parseFrame(j({ type: 'text', text: 'x', id: 9 })), { type: 'text', text: 'x' });
  });
});

describe('parseFrame: bad frames are ignored, never thrown', () => {
  const bad = [
    ['not JSON', '{"type":"text",'],
    ['empty string', ''],
    ['JSON null', 'null'],
    ['JSON number', '42'],
    ['JSON string', '"text"'],
    ['JSON array', '[{"type":"text","text":"x"}]'],
    ['no type', j({ text: 'x' })],
    ['type not a string', j({ type: 1, text: 'x' })],
    ['unknown type', j({ type: 'bell' })],
    ['text without text', j({ type: 'text' })],
    ['text not a string', j({ type: 'text', text: 5 })],
    ['text as an object', j({ type: 'text', text: { a: 1 } })],
    ['echo without on', j({ type: 'echo' })],
    ['echo with a string', j({ type: 'echo', on: 'false' })],
    ['echo with a number', j({ type: 'echo', on: 0 })],
    ['close with a non-string reason', j({ type: 'close', reason: 3 })],
    ['gmcp without package', j({ type: 'gmcp', data: {} })],
    ['gmcp with a non-string package', j({ type: 'gmcp', package: ['Char.Vitals'], data: {} })],
    ['gmcp unknown package', j({ type: 'gmcp', package: 'Char.Items', data: {} })],
    ['Char.Vitals without data', j({ type: 'gmcp', package: 'Char.Vitals' })],
    ['Char.Vitals data an array', j({ type: 'gmcp', package: 'Char.Vitals', data: [1, 2] })],
    ['Char.Vitals with no usable field', j({ type: 'gmcp', package: 'Char.Vitals', data: { hp: 'x' } })],
    ['Char.Status data a string', j({ type: 'gmcp', package: 'Char.Status', data: 'Bob' })],
    ['Room.Info exits not a list', j({ type: 'gmcp', package: 'Room.Info', data: { exits: 'north' } })],
    ['Comm.Channel without text', j({ type: 'gmcp', package: 'Comm.Channel', data: { talker: 'x' } })],
  ];
  for (const [name, raw] of bad) {
    it(name, () => {
      assert.equal(parseFrame(raw), null);
    });
  }

  it('non-string messages (binary frames)', () => {
    assert.equal(parseFrame(undefined), null);
    assert.equal(parseFrame(null), null);
    assert.equal(parseFrame(new ArrayBuffer(4)), null);
    assert.equal(validateFrame(undefined), null);
  });

  it('oversized messages are not parsed', () => {
    const big = j({ type: 'text', text: 'x'.repeat(kFrameLengthMax) });
    assert.equal(parseFrame(big), null);
  });

  it('a __proto__ key does not leak into the result', () => {
    const f = parseFrame('{"type":"gmcp","package":"Char.Vitals","data":{"__proto__":{"hp":1},"mana":2}}');
    assert.deepEqual(f.data, { mana: 2 });
    assert.equal({}.hp, undefined);
  });

  it('NaN and Infinity cannot appear (JSON has no such numbers)', () => {
    assert.equal(parseFrame('{"type":"gmcp","package":"Char.Vitals","data":{"hp":NaN}}'), null);
  });
});

describe('outgoing frames', () => {
  it('input', () => {
    assert.deepEqual(JSON.parse(buildInput('look')), { type: 'input', text: 'look' });
    assert.deepEqual(JSON.parse(buildInput('')), { type: 'input', text: '' });
  });

  it('input never carries a line break', () => {
    assert.deepEqual(JSON.parse(buildInput('say hi\r\nquit')), { type: 'input', text: 'say hi quit' });
    assert.deepEqual(JSON.parse(buildInput('a\nb\rc')), { type: 'input', text: 'a b c' });
  });

  it('input escapes quotes and backslashes through JSON', () => {
    const text = 'say "hi" \\o/ </script>';
    assert.equal(JSON.parse(buildInput(text)).text, text);
  });

  it('Core.Hello', () => {
    assert.deepEqual(JSON.parse(buildHello()), {
      type: 'gmcp',
      package: 'Core.Hello',
      data: { client: 'TelosWeb', version: '1' },
    });
  });

  it('gmcp with and without data', () => {
    assert.deepEqual(JSON.parse(buildGmcp('Core.Ping')), { type: 'gmcp', package: 'Core.Ping', data: null });
    assert.deepEqual(JSON.parse(buildGmcp('X.Y', [1])), { type: 'gmcp', package: 'X.Y', data: [1] });
  });

  it('naws, clamped to positive 16-bit integers', () => {
    assert.deepEqual(JSON.parse(buildNaws(80, 24)), { type: 'naws', width: 80, height: 24 });
    assert.deepEqual(JSON.parse(buildNaws(99.7, 30.2)), { type: 'naws', width: 99, height: 30 });
    assert.deepEqual(JSON.parse(buildNaws(0, -5)), { type: 'naws', width: 1, height: 1 });
    assert.deepEqual(JSON.parse(buildNaws(NaN, 1e9)), { type: 'naws', width: 1, height: 65535 });
  });
});
