// Reconnect delays: exponential growth, a cap, and jitter so that a server restart is not met by
// every browser reconnecting in the same instant. Pure: the random source is injected.
//
// Attempt n (0-based) waits a delay drawn from [ceiling * (1 - jitter), ceiling], where
// ceiling = min(max_delay_ms, base_delay_ms * factor^n). With jitter below 1 the delay never
// drops to zero, so a client never hammers a server that refuses it.

export const DEFAULT_BACKOFF = Object.freeze({
  base_delay_ms: 1000,
  max_delay_ms: 30000,
  factor: 2,
  jitter: 0.5,
});

function checkOptions(o) {
  if (!(o.base_delay_ms > 0)) throw new RangeError('base_delay_ms must be > 0');
  if (!(o.max_delay_ms >= o.base_delay_ms)) throw new RangeError('max_delay_ms must be >= base');
  if (!(o.factor >= 1)) throw new RangeError('factor must be >= 1');
  if (!(o.jitter >= 0 && o.jitter <= 1)) throw new RangeError('jitter must be within [0, 1]');
}

/** The un-jittered delay for attempt n (0-based). */
export function ceilingDelayMs(attempt, options = DEFAULT_BACKOFF) {
  const o = { ...DEFAULT_BACKOFF, ...options };
  const n = Math.max(0, Math.floor(attempt));
  // Grow step by step and stop at the cap, so huge attempt numbers cannot overflow to Infinity.
  let d = o.base_delay_ms;
  for (let i = 0; i < n && d < o.max_delay_ms; i++) d *= o.factor;
  return Math.min(d, o.max_delay_ms);
}

/** The jittered delay for attempt n given one random draw r in [0, 1). */
export function jitteredDelayMs(attempt, r, options = DEFAULT_BACKOFF) {
  const o = { ...DEFAULT_BACKOFF, ...options };
  const ceiling = ceilingDelayMs(attempt, o);
  // A misbehaving random source must not push the delay outside its bounds.
  const u = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 1;
  return Math.round(ceiling * (1 - o.jitter + o.jitter * u));
}

export class Backoff {
  /**
   * @param {object} [options] base_delay_ms, max_delay_ms, factor, jitter (see DEFAULT_BACKOFF)
   * @param {() => number} [random] returns a number in [0, 1); Math.random by default
   */
  constructor(options = {}, random = Math.random) {
    this.options = Object.freeze({ ...DEFAULT_BACKOFF, ...options });
    checkOptions(this.options);
    this.random = random;
    this.attempt = 0;
  }

  /** The delay before the next reconnect attempt; each call moves one attempt further. */
  next() {
    const d = jitteredDelayMs(this.attempt, this.random(), this.options);
    this.attempt += 1;
    return d;
  }

  /** After a connection proved healthy: start again from the base delay. */
  reset() {
    this.attempt = 0;
  }
}
