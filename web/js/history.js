// Bounded command history with shell-like navigation. Pure: storage is injected.
//
// Navigation works like a shell: prev() walks back from the newest entry, next() walks forward,
// and walking forward past the newest entry returns what was being typed before navigation began
// (the draft). Lines typed while the server has echo off (password prompts) never reach this
// module; the caller decides what to add(). A line that carries a password in the clear anyway
// (see holdsSecret) is refused here too, whether added or loaded.

export const kHistoryMax = 200;
export const kEntryLengthMax = 1000;

/**
 * Whether `command` carries a password in the clear: the one-line `password OLD NEW` form, or an
 * abbreviation of `password` followed by words. The server refuses that form and asks on hidden
 * prompts instead, but the words were typed, so they are never kept. `password` alone holds no
 * secret.
 */
export function holdsSecret(command) {
  if (typeof command !== 'string') return false;
  const match = /^\s*(\S+)\s+\S/.exec(command);
  if (!match) return false;
  const verb = match[1].toLowerCase();
  return verb.length >= 2 && 'password'.startsWith(verb);
}

export class History {
  /**
   * @param {object} [options]
   * @param {number} [options.max] most entries kept; the oldest are dropped beyond it
   * @param {string[]} [options.entries] initial entries, oldest first
   */
  constructor({ max = kHistoryMax, entries = [] } = {}) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('history max must be >= 1');
    this.max = max;
    this.entries = [];
    for (const e of entries) this.add(e);
    this.resetNavigation();
  }

  get size() {
    return this.entries.length;
  }

  /**
   * Records a submitted command. Blank commands, over-long ones and an exact repeat of the newest
   * entry are not recorded. Returns true when it was recorded. Always ends any navigation.
   */
  add(command) {
    const recorded = this.record(command);
    this.resetNavigation(); // after recording, so the cursor points past the new newest entry
    return recorded;
  }

  record(command) {
    if (typeof command !== 'string') return false;
    if (command.trim() === '' || command.length > kEntryLengthMax) return false;
    if (holdsSecret(command)) return false;
    if (this.entries[this.entries.length - 1] === command) return false;
    this.entries.push(command);
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
    return true;
  }

  /** Leaves navigation: the next prev() starts again from the newest entry. */
  resetNavigation() {
    this.cursor = this.entries.length; // == length means "not navigating / at the draft"
    this.draft = '';
  }

  /**
   * One step back. `current` is what the input box holds now; it becomes the draft when
   * navigation starts. Returns the text to show, or null when already at the oldest entry (or
   * there is no history), in which case the input should be left alone.
   */
  prev(current = '') {
    if (this.cursor === 0 || this.entries.length === 0) return null;
    if (this.cursor === this.entries.length) this.draft = String(current);
    this.cursor -= 1;
    return this.entries[this.cursor];
  }

  /**
   * One step forward. Returns the next newer entry, the draft after the newest entry, or null
   * when not navigating.
   */
  next() {
    if (this.cursor >= this.entries.length) return null;
    this.cursor += 1;
    if (this.cursor === this.entries.length) {
      const draft = this.draft;
      this.draft = '';
      return draft;
    }
    return this.entries[this.cursor];
  }

  toArray() {
    return this.entries.slice();
  }
}

/**
 * Reads a saved history from a Storage-like object ({getItem, setItem}). Anything unreadable
 * (missing, corrupt JSON, wrong shape, storage that throws) yields an empty history.
 */
export function loadHistory(storage, key, max = kHistoryMax) {
  let entries = [];
  try {
    const raw = storage ? storage.getItem(key) : null;
    const parsed = raw ? JSON.parse(raw) : [];
    if (Array.isArray(parsed)) entries = parsed.filter((e) => typeof e === 'string');
  } catch {
    entries = [];
  }
  return new History({ max, entries });
}

/** Saves a history; returns false when storage is unavailable or full, which is not an error. */
export function saveHistory(storage, key, history) {
  try {
    if (!storage) return false;
    storage.setItem(key, JSON.stringify(history.toArray()));
    return true;
  } catch {
    return false;
  }
}
