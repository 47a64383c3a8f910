// ANSI text -> styled segments. Pure: no DOM access, so it runs under node for tests.
//
// The server sends text that may carry SGR escapes (ESC [ ... m) and may arrive in pieces that
// split an escape sequence anywhere. AnsiParser keeps the current style and any unfinished
// sequence between calls to feed(). Every other escape sequence (cursor movement, OSC titles,
// DCS strings, ...) and every control character except newline and tab is dropped, so nothing the
// server sends can move a cursor or reach the page as anything but plain text.
//
// A colour is null (the theme default), a palette index {index: 0..255}, or {r, g, b}.

const ESC = '\x1b';
// C1 forms of OSC, DCS, SOS, PM and APC: each starts a string that is skipped.
const C1_STRING_STARTS = new Set([0x9d, 0x90, 0x98, 0x9e, 0x9f]);
const BEL = '\x07';

// Upper bounds on how much of an unfinished sequence we keep. A sequence longer than this is
// malformed or hostile; it is dropped and parsing resumes as plain text.
export const kCsiLengthMax = 64;
export const kStringLengthMax = 4096;

// Parser states.
const S_TEXT = 0;
const S_ESC = 1; // saw ESC
const S_ESC_INTER = 2; // ESC followed by intermediate bytes (0x20-0x2F), waiting for a final byte
const S_CSI = 3; // ESC [ collecting parameters
const S_STRING = 4; // OSC / DCS / SOS / PM / APC body, until BEL or ESC \
const S_STRING_ESC = 5; // saw ESC inside a string: a backslash ends it
const S_CSI_SKIP = 6; // an over-long CSI sequence: skipped without being stored, up to its end

/** The style with every attribute off. Frozen; the parser never mutates styles it hands out. */
export const DEFAULT_STYLE = Object.freeze({
  fg: null,
  bg: null,
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
  strike: false,
});

export function stylesEqual(a, b) {
  return (
    colorsEqual(a.fg, b.fg) &&
    colorsEqual(a.bg, b.bg) &&
    a.bold === b.bold &&
    a.dim === b.dim &&
    a.italic === b.italic &&
    a.underline === b.underline &&
    a.inverse === b.inverse &&
    a.strike === b.strike
  );
}

function colorsEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if ('index' in a || 'index' in b) return a.index === b.index;
  return a.r === b.r && a.g === b.g && a.b === b.b;
}

function isByteInteger(n) {
  return Number.isInteger(n) && n >= 0 && n <= 255;
}

// Parses one SGR parameter list (the text between ESC [ and m) and returns the new style.
// Parameters may be separated by ';' and, for extended colours, by ':' (ITU T.416 form,
// e.g. 38:2::255:0:0 or 38:5:208). An empty parameter means 0.
export function applySgr(style, params) {
  const next = { ...style };
  const groups = params === '' ? [''] : params.split(';');
  let i = 0;
  while (i < groups.length) {
    const group = groups[i];
    if (group.includes(':')) {
      applyColonGroup(next, group.split(':'));
      i += 1;
      continue;
    }
    const code = group === '' ? 0 : parseDecimal(group);
    i += 1;
    if (code === null) continue; // not a number: ignore this parameter only
    if (code === 38 || code === 48) {
      // Extended colour in the ';' form: 38;5;n or 38;2;r;g;b. The following parameters belong to
      // this code whether or not they are valid, so they are always consumed.
      const mode = parseDecimal(groups[i] ?? '');
      if (mode === 5) {
        const n = parseDecimal(groups[i + 1] ?? '');
        i += 2;
        if (isByteInteger(n)) setColor(next, code, { index: n });
      } else if (mode === 2) {
        const r = parseDecimal(groups[i + 1] ?? '');
        const g = parseDecimal(groups[i + 2] ?? '');
        const b = parseDecimal(groups[i + 3] ?? '');
        i += 4;
        if (isByteInteger(r) && isByteInteger(g) && isByteInteger(b)) {
          setColor(next, code, { r, g, b });
        }
      } else {
        // Unknown or missing colour mode: the rest of the list cannot be interpreted reliably.
        break;
      }
      continue;
    }
    applyCode(next, code);
  }
  return Object.freeze(next);
}

function applyColonGroup(style, parts) {
  const code = parseDecimal(parts[0]);
  if (code !== 38 && code !== 48) {
    // Sub-parameters on other codes (e.g. 4:3 curly underline): honour the main code only.
    if (code !== null) applyCode(style, code);
    return;
  }
  const mode = parseDecimal(parts[1] ?? '');
  if (mode === 5) {
    const n = parseDecimal(parts[2] ?? '');
    if (isByteInteger(n)) setColor(style, code, { index: n });
  } else if (mode === 2) {
    // 38:2:<colour space>:r:g:b, where the colour space id may be empty; also accept 38:2:r:g:b.
    const rgb = parts.length >= 6 ? parts.slice(3, 6) : parts.slice(2, 5);
    const [r, g, b] = rgb.map((p) => parseDecimal(p ?? ''));
    if (isByteInteger(r) && isByteInteger(g) && isByteInteger(b)) {
      setColor(style, code, { r, g, b });
    }
  }
}

function setColor(style, code, color) {
  if (code === 38) style.fg = color;
  else style.bg = color;
}

function applyCode(style, code) {
  if (code === 0) {
    Object.assign(style, DEFAULT_STYLE);
  } else if (code === 1) {
    style.bold = true;
  } else if (code === 2) {
    style.dim = true;
  } else if (code === 3) {
    style.italic = true;
  } else if (code === 4) {
    style.underline = true;
  } else if (code === 7) {
    style.inverse = true;
  } else if (code === 9) {
    style.strike = true;
  } else if (code === 21) {
    // Doubly underlined on most terminals (not "bold off").
    style.underline = true;
  } else if (code === 22) {
    style.bold = false;
    style.dim = false;
  } else if (code === 23) {
    style.italic = false;
  } else if (code === 24) {
    style.underline = false;
  } else if (code === 27) {
    style.inverse = false;
  } else if (code === 29) {
    style.strike = false;
  } else if (code >= 30 && code <= 37) {
    style.fg = { index: code - 30 };
  } else if (code === 39) {
    style.fg = null;
  } else if (code >= 40 && code <= 47) {
    style.bg = { index: code - 40 };
  } else if (code === 49) {
    style.bg = null;
  } else if (code >= 90 && code <= 97) {
    style.fg = { index: code - 90 + 8 };
  } else if (code >= 100 && code <= 107) {
    style.bg = { index: code - 100 + 8 };
  }
  // Everything else (blink, conceal, fonts, frames, ...) is ignored on purpose.
}

function parseDecimal(text) {
  if (!/^[0-9]{1,9}$/.test(text)) return null;
  return Number(text);
}

function isControl(code) {
  // C0 controls, DEL and C1 controls. Newline and tab are handled before this is asked.
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/**
 * Incremental parser. feed(chunk) returns the segments that chunk completes:
 * [{text, style}], adjacent text with equal style merged, no empty segments.
 * Text after an unfinished escape sequence waits for the next chunk only if it is part of the
 * sequence; plain text is never held back.
 */
export class AnsiParser {
  constructor() {
    this.reset();
  }

  /** Forgets any unfinished sequence and returns to the default style. */
  reset() {
    this.style = DEFAULT_STYLE;
    this.state = S_TEXT;
    this.pending = ''; // parameter bytes of an unfinished CSI sequence
    this.pendingLength = 0; // bytes skipped so far in a string or escape
  }

  feed(chunk) {
    const out = [];
    if (typeof chunk !== 'string' || chunk.length === 0) return out;
    let run = '';
    const flush = () => {
      if (run.length === 0) return;
      const last = out[out.length - 1];
      if (last && last.style === this.style) last.text += run;
      else out.push({ text: run, style: this.style });
      run = '';
    };

    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i];
      const code = ch.charCodeAt(0);
      switch (this.state) {
        case S_TEXT:
          if (ch === ESC) {
            this.state = S_ESC;
          } else if (ch === '\n' || ch === '\t') {
            run += ch;
          } else if (code === 0x9b) {
            // C1 CSI, the one-character form of ESC [.
            this.state = S_CSI;
            this.pending = '';
          } else if (C1_STRING_STARTS.has(code)) {
            // C1 OSC / DCS / SOS / PM / APC: a string to be skipped.
            this.state = S_STRING;
            this.pendingLength = 0;
          } else if (!isControl(code)) {
            run += ch;
          }
          // Other control characters (CR, BS, BEL, NUL, ...) are dropped.
          break;

        case S_ESC:
          if (ch === '[') {
            this.state = S_CSI;
            this.pending = '';
          } else if (ch === ']' || ch === 'P' || ch === 'X' || ch === '^' || ch === '_') {
            this.state = S_STRING;
            this.pendingLength = 0;
          } else if (code >= 0x20 && code <= 0x2f) {
            this.state = S_ESC_INTER;
            this.pendingLength = 1;
          } else if (code >= 0x30 && code <= 0x7e) {
            this.state = S_TEXT; // a complete two-character escape such as ESC 7 or ESC c: dropped
          } else if (ch === ESC) {
            // ESC ESC: the first one was stray; stay in S_ESC for the second.
          } else {
            // Malformed: ESC followed by a control or non-ASCII character. Drop the ESC and
            // treat the character as text (or a control to drop).
            this.state = S_TEXT;
            i -= 1;
          }
          break;

        case S_ESC_INTER:
          if (code >= 0x20 && code <= 0x2f && this.pendingLength < kCsiLengthMax) {
            this.pendingLength += 1;
          } else if (code >= 0x30 && code <= 0x7e) {
            this.state = S_TEXT; // e.g. ESC ( B: charset selection, dropped
          } else {
            this.state = S_TEXT;
            if (ch === ESC || code >= 0x80 || code < 0x20) i -= 1;
          }
          break;

        case S_CSI:
          if (code >= 0x30 && code <= 0x3f) {
            // Parameter bytes (digits, ';', ':', '<', '=', '>', '?').
            this.pending += ch;
            if (this.pending.length > kCsiLengthMax) {
              this.state = S_CSI_SKIP; // absurdly long: it will not be applied
              this.pending = '';
            }
          } else if (code >= 0x20 && code <= 0x2f) {
            // Intermediate bytes: such a sequence is never SGR; mark it so 'm' will not apply it.
            this.pending += '\u0000';
            if (this.pending.length > kCsiLengthMax) {
              this.state = S_CSI_SKIP;
              this.pending = '';
            }
          } else if (code >= 0x40 && code <= 0x7e) {
            if (ch === 'm' && /^[0-9;:]*$/.test(this.pending)) {
              const next = applySgr(this.style, this.pending);
              // Keep the same object when nothing changed so that text on both sides of a
              // redundant escape merges into one segment.
              if (!stylesEqual(next, this.style)) {
                flush();
                this.style = next;
              }
            }
            this.state = S_TEXT;
            this.pending = '';
          } else {
            // A byte that cannot appear in a CSI sequence: the sequence is malformed. Abandon it
            // and reprocess the byte as ordinary input (an ESC starts a new sequence).
            this.state = S_TEXT;
            this.pending = '';
            i -= 1;
          }
          break;

        case S_CSI_SKIP:
          if (code >= 0x40 && code <= 0x7e) {
            this.state = S_TEXT; // the final byte ends the skipped sequence
          } else if (code < 0x20 || code > 0x7e) {
            this.state = S_TEXT; // malformed, as in S_CSI: reprocess this character
            i -= 1;
          }
          break;

        case S_STRING:
          if (ch === BEL || code === 0x9c) {
            this.state = S_TEXT;
          } else if (ch === ESC) {
            this.state = S_STRING_ESC;
          } else if (++this.pendingLength > kStringLengthMax) {
            this.state = S_TEXT;
          }
          break;

        case S_STRING_ESC:
          if (ch === '\\') {
            this.state = S_TEXT;
          } else {
            // ESC not followed by '\': the string was unterminated. Start over with this ESC.
            this.state = S_ESC;
            i -= 1;
          }
          break;

        default:
          this.state = S_TEXT;
      }
    }
    flush();
    return out;
  }
}

/** Convenience: parse a complete string with a fresh parser. */
export function parseAnsi(text) {
  return new AnsiParser().feed(text);
}

/** Removes every escape sequence and control character except newline and tab. */
export function stripAnsi(text) {
  return parseAnsi(text)
    .map((s) => s.text)
    .join('');
}

// The 6x6x6 cube levels of the xterm 256-colour palette.
const CUBE_LEVELS = [0, 95, 135, 175, 215, 255];

/**
 * RGB of palette entries 16..255 of the xterm 256-colour palette. Entries 0..15 are themed (see
 * style.css) and return null here.
 */
export function paletteRgb(index) {
  if (!Number.isInteger(index) || index < 16 || index > 255) return null;
  if (index < 232) {
    const n = index - 16;
    return {
      r: CUBE_LEVELS[Math.floor(n / 36)],
      g: CUBE_LEVELS[Math.floor(n / 6) % 6],
      b: CUBE_LEVELS[n % 6],
    };
  }
  const level = 8 + (index - 232) * 10;
  return { r: level, g: level, b: level };
}

function colorCss(color) {
  if (color === null) return { className: null, css: null };
  if ('index' in color) {
    if (color.index < 16) return { className: String(color.index), css: null };
    const rgb = paletteRgb(color.index);
    return { className: null, css: `rgb(${rgb.r}, ${rgb.g}, ${rgb.b})` };
  }
  return { className: null, css: `rgb(${color.r}, ${color.g}, ${color.b})` };
}

/**
 * How a style is drawn: CSS class names (themed colours and attributes) and inline colours for
 * 256-colour and truecolour values. Inverse swaps foreground and background, defaults included.
 * Returns {classes: string[], color: string|null, background: string|null}.
 */
export function styleToCss(style) {
  const classes = [];
  let fg = colorCss(style.fg);
  let bg = colorCss(style.bg);
  if (style.inverse) {
    [fg, bg] = [bg, fg];
    // A default colour that moved to the other side is the theme's default of the side it came
    // from: the foreground is drawn in the default background colour and vice versa.
    if (fg.className === null && fg.css === null) classes.push('ansi-inv-fg');
    if (bg.className === null && bg.css === null) classes.push('ansi-inv-bg');
  }
  if (fg.className !== null) classes.push(`ansi-fg-${fg.className}`);
  if (bg.className !== null) classes.push(`ansi-bg-${bg.className}`);
  if (style.bold) classes.push('ansi-bold');
  if (style.dim) classes.push('ansi-dim');
  if (style.italic) classes.push('ansi-italic');
  if (style.underline) classes.push('ansi-underline');
  if (style.strike) classes.push('ansi-strike');
  return { classes, color: fg.css, background: bg.css };
}
