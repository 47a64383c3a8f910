import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { History, holdsSecret, kEntryLengthMax, loadHistory, saveHistory } from '../js/history.js';

// A Storage stand-in backed by a Map.
class MemoryStorage {
  constructor(init = {}) {
    this.map = new Map(Object.entries(init));
  }
  getItem(k) {
    return this.map.has(k) ? this.map.get(k) : null;
  }
  setItem(k, v) {
    this.map.set(k, String(v));
  }
}

describe('History.add', () => {
  it('records commands oldest first', () => {
    const h = new History();
    h.add('look');
    h.add('north');
    assert.deepEqual(h.toArray(), ['look', 'north']);
  });

  it('skips blanks, non-strings, over-long entries and an immediate repeat', () => {
    const h = new History();
    assert.equal(h.add('look'), true);
    assert.equal(h.add('look'), false);
    assert.equal(h.add(''), false);
    assert.equal(h.add('   '), false);
    assert.equal(h.add(undefined), false);
    assert.equal(h.add('x'.repeat(kEntryLengthMax + 1)), false);
    assert.equal(h.add('north'), true);
    assert.equal(h.add('look'), true, 'a repeat that is not the newest entry is kept');
    assert.deepEqual(h.toArray(), ['look', 'north', 'look']);
  });

  it('drops the oldest entries past the bound', () => {
    const h = new History({ max: 3 });
    for (const c of ['a', 'b', 'c', 'd', 'e']) h.add(c);
    assert.deepEqual(h.toArray(), ['c', 'd', 'e']);
    assert.equal(h.size, 3);
  });

  it('applies the bound to initial entries too', () => {
    const h = new History({ max: 2, entries: ['a', 'b', 'c'] });
    assert.deepEqual(h.toArray(), ['b', 'c']);
  });

  it('rejects a bound below 1', () => {
    assert.throws(() => new History({ max: 0 }), RangeError);
  });
});

describe('secrets', () => {
  it('never records a line that carries a password, in any abbreviation', () => {
    const h = new History();
    assert.equal(h.add('password old secret new secret'), false);
    assert.equal(h.add('  PASS old new'), false);
    assert.equal(h.add('pa hunter2'), false);
    assert.equal(h.add('password'), true, 'the command alone holds no secret');
    assert.equal(h.add('path north'), true);
    assert.equal(h.add('p x'), true, 'one letter is not taken for password');
    assert.deepEqual(h.toArray(), ['password', 'path north', 'p x']);
  });

  it('drops such lines from a saved history as it loads', () => {
    const storage = new MemoryStorage({ k: JSON.stringify(['look', 'password old new', 'north']) });
    const h = loadHistory(storage, 'k');
    assert.deepEqual(h.toArray(), ['look', 'north']);
    saveHistory(storage, 'k', h);
    assert.equal(storage.getItem('k').includes('old'), false);
  });

  it('holdsSecret needs words after the verb', () => {
    assert.equal(holdsSecret('password'), false);
    assert.equal(holdsSecret('password '), false);
    assert.equal(holdsSecret('password x'), true);
    assert.equal(holdsSecret(null), false);
  });
});

describe('History navigation', () => {
  const make = () => new History({ entries: ['one', 'two', 'three'] });

  it('prev walks back to the oldest and then stays put', () => {
    const h = make();
    assert.equal(h.prev(''), 'three');
    assert.equal(h.prev('three'), 'two');
    assert.equal(h.prev('two'), 'one');
    assert.equal(h.prev('one'), null);
    assert.equal(h.next(), 'two', 'the cursor did not move past the oldest');
  });

  it('next walks forward and ends at the draft typed before navigating', () => {
    const h = make();
    assert.equal(h.prev('half-typ'), 'three');
    assert.equal(h.prev('three'), 'two');
    assert.equal(h.next(), 'three');
    assert.equal(h.next(), 'half-typ');
    assert.equal(h.next(), null, 'nothing newer than the draft');
  });

  it('next does nothing when not navigating', () => {
    assert.equal(make().next(), null);
  });

  it('prev on an empty history returns null', () => {
    assert.equal(new History().prev('x'), null);
  });

  it('adding a command ends navigation', () => {
    const h = make();
    h.prev('');
    h.prev('');
    h.add('four');
    assert.equal(h.prev(''), 'four');
  });

  it('resetNavigation starts over from the newest entry and forgets the draft', () => {
    const h = make();
    h.prev('draft');
    h.prev('');
    h.resetNavigation();
    assert.equal(h.prev('new draft'), 'three');
    assert.equal(h.next(), 'new draft');
  });
});

describe('persistence', () => {
  it('round-trips through storage', () => {
    const storage = new MemoryStorage();
    const h = new History();
    h.add('look');
    h.add('say hi');
    assert.equal(saveHistory(storage, 'k', h), true);
    assert.deepEqual(loadHistory(storage, 'k').toArray(), ['look', 'say hi']);
  });

  it('applies the bound when loading', () => {
    const storage = new MemoryStorage({ k: JSON.stringify(['a', 'b', 'c', 'd']) });
    assert.deepEqual(loadHistory(storage, 'k', 2).toArray(), ['c', 'd']);
  });

  it('treats missing, corrupt or wrongly shaped data as empty', () => {
    assert.equal(loadHistory(new MemoryStorage(), 'k').size, 0);
    assert.equal(loadHistory(new MemoryStorage({ k: '{not json' }), 'k').size, 0);
    assert.equal(loadHistory(new MemoryStorage({ k: '{"a":1}' }), 'k').size, 0);
    assert.deepEqual(loadHistory(new MemoryStorage({ k: '["ok", 5, null, "fine"]' }), 'k').toArray(), [
      'ok',
      'fine',
    ]);
    assert.equal(loadHistory(null, 'k').size, 0);
  });

  it('survives storage that throws', () => {
    const broken = {
      getItem() {
        throw new Error('SecurityError');
      },
      setItem() {
        throw new Error('QuotaExceededError');
      },
    };
    assert.equal(loadHistory(broken, 'k').size, 0);
    assert.equal(saveHistory(broken, 'k', new History({ entries: ['x'] })), false);
  });
});
