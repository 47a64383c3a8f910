// The JSON frames spoken over the WebSocket at /ws. Pure: no DOM, no socket.
//
// parseFrame() turns one incoming WebSocket message into a normalised frame object, or null when
// the message is malformed, of an unknown type, or a GMCP package this client does not use. It
// never throws: a bad frame from the server must not break the page.
//
// The build*() functions return the JSON text of outgoing frames.

/** A message larger than this is ignored rather than parsed. */
export const kFrameLengthMax = 1 << 20;

/** NAWS sizes are 16-bit on the telnet side; keep ours in that range. */
export const kNawsMax = 0xffff;

export const CLIENT_NAME = 'TelosWeb';
export const CLIENT_VERSION = '1';

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function has(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

function finiteNumber(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function optionalString(v) {
  return typeof v === 'string' ? v : undefined;
}

// Copies the listed fields that pass `check` into a fresh object; the rest are left out.
function pick(data, fields, check) {
  const out = {};
  for (const f of fields) {
    if (!has(data, f)) continue;
    const v = check(data[f]);
    if (v !== undefined) out[f] = v;
  }
  return out;
}

const VITALS_FIELDS = ['hp', 'max_hp', 'mana', 'max_mana', 'moves', 'max_moves'];
// The server spells the maxima the GMCP way ("maxhp"); both spellings are accepted.
const VITALS_ALIASES = { maxhp: 'max_hp', maxmana: 'max_mana', maxmoves: 'max_moves' };

function normaliseVitals(data) {
  const out = { ...data };
  for (const [alias, name] of Object.entries(VITALS_ALIASES)) {
    if (out[name] === undefined && out[alias] !== undefined) out[name] = out[alias];
  }
  return out;
}

const SHORT_DIRECTIONS = {
  n: 'north',
  ne: 'northeast',
  e: 'east',
  se: 'southeast',
  s: 'south',
  sw: 'southwest',
  w: 'west',
  nw: 'northwest',
  u: 'up',
  d: 'down',
};

// GMCP package names are case-insensitive; these are the canonical spellings we emit.
const GMCP_PARSERS = {
  'char.vitals': [
    'Char.Vitals',
    (data) => {
      if (!isObject(data)) return null;
      const out = pick(normaliseVitals(data), VITALS_FIELDS, finiteNumber);
      return Object.keys(out).length > 0 ? out : null;
    },
  ],
  'char.status': [
    'Char.Status',
    (data) => {
      if (!isObject(data)) return null;
      const out = {
        ...pick(data, ['name'], optionalString),
        ...pick(data, ['level', 'exp', 'gold'], finiteNumber),
      };
      return Object.keys(out).length > 0 ? out : null;
    },
  ],
  'room.info': [
    'Room.Info',
    (data) => {
      if (!isObject(data)) return null;
      const idOrName = (v) => (typeof v === 'string' ? v : finiteNumber(v));
      // The server names the room "id"; "room" is accepted too.
      const source = has(data, 'room') || !has(data, 'id') ? data : { ...data, room: data.id };
      const out = {
        ...pick(source, ['zone', 'room'], idOrName),
        ...pick(data, ['name'], optionalString),
        exits: [],
      };
      if (has(data, 'exits')) {
        // A list of directions, or (as the server sends) an object keyed by direction.
        let exits = data.exits;
        if (isObject(exits)) exits = Object.keys(exits);
        if (!Array.isArray(exits)) return null;
        // Drop non-strings, empties and duplicates; keep the server's order. The server keys
        // exits the short way mappers use ("n"); the strip shows, and sends, the whole word.
        const seen = new Set();
        for (const raw of exits) {
          if (typeof raw !== 'string' || raw.trim() === '') continue;
          const e = has(SHORT_DIRECTIONS, raw) ? SHORT_DIRECTIONS[raw] : raw;
          if (seen.has(e)) continue;
          seen.add(e);
          out.exits.push(e);
        }
      }
      return out;
    },
  ],
};

// Comm.Channel.Text as the server sends it: "talker" the speaker, "text" the whole line (what
// IRE clients show), "message" the words alone. The panel lays out [channel] talker: message,
// so the words are taken when present. The older name "Comm.Channel" is accepted too.
function parseChannel(data) {
  if (!isObject(data)) return null;
  const words = typeof data.message === 'string' ? data.message : data.text;
  if (typeof words !== 'string') return null;
  return {
    channel: typeof data.channel === 'string' ? data.channel : '',
    talker: typeof data.talker === 'string' ? data.talker : '',
    text: words,
  };
}
GMCP_PARSERS['comm.channel.text'] = ['Comm.Channel.Text', parseChannel];
GMCP_PARSERS['comm.channel'] = ['Comm.Channel.Text', parseChannel];

/**
 * Parses one incoming message. Returns one of
 *   {type: 'text', text}
 *   {type: 'gmcp', package: 'Char.Vitals' | 'Char.Status' | 'Room.Info' | 'Comm.Channel.Text', data}
 *   {type: 'echo', on}
 *   {type: 'close', reason}
 * or null for anything else.
 */
export function parseFrame(raw) {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > kFrameLengthMax) return null;
  let msg;
  try {
    msg = JSON.parse(raw);
  } catch {
    return null;
  }
  return validateFrame(msg);
}

/** Like parseFrame, for a value that is already decoded JSON. */
export function validateFrame(msg) {
  if (!isObject(msg) || typeof msg.type !== 'string') return null;
  switch (msg.type) {
    case 'text':
      return typeof msg.text === 'string' ? { type: 'text', text: msg.text } : null;
    case 'echo':
      return typeof msg.on === 'boolean' ? { type: 'echo', on: msg.on } : null;
    case 'close':
      if (has(msg, 'reason') && typeof msg.reason !== 'string') return null;
      return { type: 'close', reason: msg.reason ?? '' };
    case 'gmcp': {
      if (typeof msg.package !== 'string') return null;
      const entry = GMCP_PARSERS[msg.package.toLowerCase()];
      if (!entry) return null;
      const [name, parse] = entry;
      const data = parse(msg.data);
      return data === null ? null : { type: 'gmcp', package: name, data };
    }
    default:
      return null;
  }
}

/** One line of player input. Line breaks would smuggle a second command; they become spaces. */
export function buildInput(text) {
  const line = String(text).replace(/\r\n|[\r\n]/g, ' ');
  return JSON.stringify({ type: 'input', text: line });
}

export function buildGmcp(pkg, data) {
  const payload = data === undefined ? null : data;
  return JSON.stringify({ type: 'gmcp', package: String(pkg), data: payload });
}

export function buildHello() {
  return buildGmcp('Core.Hello', { client: CLIENT_NAME, version: CLIENT_VERSION });
}

function clampSize(n) {
  const v = Math.floor(Number(n));
  if (!Number.isFinite(v) || v < 1) return 1;
  return Math.min(v, kNawsMax);
}

export function buildNaws(width, height) {
  return JSON.stringify({ type: 'naws', width: clampSize(width), height: clampSize(height) });
}
