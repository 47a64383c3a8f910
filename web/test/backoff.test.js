import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backoff, DEFAULT_BACKOFF, ceilingDelayMs, jitteredDelayMs } from '../js/backoff.js';

const opts = { base_delay_ms: 1000, max_delay_ms: 30000, factor: 2, jitter: 0.5 };

describe('ceilingDelayMs', () => {
  it('doubles from the base and stops at the cap', () => {
    const got = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => ceilingDelayMs(n, opts));
    assert.deepEqual(got, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('stays at the cap for huge attempt numbers', () => {
    assert.equal(ceilingDelayMs(1e9, opts), 30000);
    assert.equal(ceilingDelayMs(Number.MAX_SAFE_INTEGER, opts), 30000);
  });

  it('treats negative attempts as the first', () => {
    assert.equal(ceilingDelayMs(-3, opts), 1000);
  });
});

describe('jitteredDelayMs', () => {
  it('spans [ceiling * (1 - jitter), ceiling]', () => {
    assert.equal(jitteredDelayMs(3, 0, opts), 4000);
    assert.equal(jitteredDelayMs(3, 0.5, opts), 6000);
    assert.equal(jitteredDelayMs(3, 0.999999, opts), 8000);
  });

  it('clamps a misbehaving random source into range', () => {
    assert.equal(jitteredDelayMs(0, -5, opts), 500);
    assert.equal(jitteredDelayMs(0, 7, opts), 1000);
    assert.equal(jitteredDelayMs(0, NaN, opts), 1000);
  });

  it('has no spread with zero jitter', () => {
    const o = { ...opts, jitter: 0 };
    assert.equal(jitteredDelayMs(2, 0, o), 4000);
    assert.equal(jitteredDelayMs(2, 0.9, o), 4000);
  });
});

describe('Backoff', () => {
  it('grows with each attempt using the injected random source', () => {
    const draws = [0, 0.5, 0.999, 0.25];
    const b = new Backoff(opts, () => draws.shift());
    assert.deepEqual([b.next(), b.next(), b.next(), b.next()], [500, 1500, 3998, 5000]);
  });

  it('never exceeds the cap nor falls below half of it once capped', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    const b = new Backoff(opts, random);
    const delays = Array.from({ length: 200 }, () => b.next());
    for (const d of delays) {
      assert.ok(d >= 500 && d <= 30000, `delay ${d} out of bounds`);
    }
    for (const d of delays.slice(10)) {
      assert.ok(d >= 15000 && d <= 30000, `capped delay ${d} out of bounds`);
    }
    // Jitter actually spreads the capped delays.
    assert.ok(new Set(delays.slice(10)).size > 50);
  });

  it('reset starts again from the base delay', () => {
    const b = new Backoff(opts, () => 0.999999);
    b.next();
    b.next();
    b.next();
    assert.equal(b.next(), 8000);
    b.reset();
    assert.equal(b.next(), 1000);
  });

  it('has sensible defaults', () => {
    const b = new Backoff(undefined, () => 0);
    assert.deepEqual({ ...b.options }, { ...DEFAULT_BACKOFF });
    assert.equal(b.next(), DEFAULT_BACKOFF.base_delay_ms * (1 - DEFAULT_BACKOFF.jitter));
  });

  it('rejects nonsensical options', () => {
    assert.throws(() => new Backoff({ base_delay_ms: 0 }), RangeError);
    assert.throws(() => new Backoff({ base_delay_ms: 5000, max_delay_ms: 1000 }), RangeError);
    assert.throws(() => new Backoff({ factor: 0.5 }), RangeError);
    assert.throws(() => new Backoff({ jitter: 1.5 }), RangeError);
    assert.throws(() => new Backoff({ jitter: -0.1 }), RangeError);
  });
});
