import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  AnsiParser,
  DEFAULT_STYLE,
  applySgr,
  kCsiLengthMax,
  kStringLengthMax,
  paletteRgb,
  parseAnsi,
  stripAnsi,
  styleToCss,
} from '../js/ansi.js';

const E = '\x1b';

// A segment list with each style reduced to the attributes that differ from the default, which
// keeps expectations short and still fails on any wrong attribute.
function simplify(segments) {
  return segments.map(({ text, style }) => {
    const diff = {};
    for (const [k, v] of Object.entries(style)) {
      if (JSON.stringify(v) !== JSON.stringify(DEFAULT_STYLE[k])) diff[k] = v;
    }
    return [text, diff];
  });
}

function feedAll(chunks) {
  const p = new AnsiParser();
  const out = [];
  for (const c of chunks) out.push(...p.feed(c));
  return out;
}

// Joins adjacent segments with equal styles, so chunked and whole parses compare equal.
function merged(segments) {
  const out = [];
  for (const s of simplify(segments)) {
    const last = out[out.length - 1];
    if (last && JSON.stringify(last[1]) === JSON.stringify(s[1])) last[0] += s[0];
    else out.push([s[0], s[1]]);
  }
  return out;
}

describe('plain text', () => {
  it('passes text through as one default-styled segment', () => {
    assert.deepEqual(simplify(parseAnsi('You are standing in a field.')), [
      ['You are standing in a field.', {}],
    ]);
  });

  it('keeps newlines and tabs, drops carriage returns and other controls', () => {
    assert.deepEqual(simplify(parseAnsi('a\r\nb\tc\x00d\x07e\x08f\x7fg')), [['a\nb\tcdefg', {}]]);
  });

  it('drops C1 control characters', () => {
    assert.deepEqual(simplify(parseAnsi('a\u0085b\u008dc')), [['abc', {}]]);
  });

  it('keeps non-ASCII text', () => {
    assert.deepEqual(simplify(parseAnsi('Café — 東京 🐉')), [['Café — 東京 🐉', {}]]);
  });

  it('returns nothing for empty or non-string input', () => {
    const p = new AnsiParser();
    assert.deepEqual(p.feed(''), []);
    assert.deepEqual(p.feed(undefined), []);
    assert.deepEqual(p.feed(42), []);
  });
});

describe('SGR attributes', () => {
  const cases = [
    ['1', { bold: true }],
    ['2', { dim: true }],
    ['3', { italic: true }],
    ['4', { underline: true }],
    ['7', { inverse: true }],
    ['9', { strike: true }],
  ];
  for (const [code, expected] of cases) {
    it(`ESC[${code}m sets ${Object.keys(expected)[0]}`, () => {
      assert.deepEqual(simplify(parseAnsi(`x${E}[${code}my`)), [
        ['x', {}],
        ['y', expected],
      ]);
    });
  }

  it('reset (0 and empty) clears everything', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[1;3;4;31;42ma${E}[0mb${E}[1;31mc${E}[md`)), [
      ['a', { bold: true, italic: true, underline: true, fg: { index: 1 }, bg: { index: 2 } }],
      ['b', {}],
      ['c', { bold: true, fg: { index: 1 } }],
      ['d', {}],
    ]);
  });

  it('22/23/24/27/29 turn single attributes off', () => {
    const s = applySgr(DEFAULT_STYLE, '1;2;3;4;7;9');
    assert.deepEqual(
      { ...applySgr(s, '22') },
      { ...DEFAULT_STYLE, italic: true, underline: true, inverse: true, strike: true },
    );
    assert.equal(applySgr(s, '23').italic, false);
    assert.equal(applySgr(s, '24').underline, false);
    assert.equal(applySgr(s, '27').inverse, false);
    assert.equal(applySgr(s, '29').strike, false);
    assert.equal(applySgr(s, '23').bold, true, 'other attributes stay');
  });

  it('combined parameters apply left to right', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[31;32;1;22;4mz`)), [
      ['z', { fg: { index: 2 }, underline: true }],
    ]);
  });

  it('ignores codes it does not know (blink, conceal, fonts)', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[5;8;11;1mz`)), [['z', { bold: true }]]);
  });

  it('merges text across a redundant escape', () => {
    const segs = parseAnsi(`${E}[31mab${E}[31mcd${E}[0m${E}[0mef`);
    assert.deepEqual(simplify(segs), [
      ['abcd', { fg: { index: 1 } }],
      ['ef', {}],
    ]);
  });

  it('never hands out a style that later changes', () => {
    const p = new AnsiParser();
    const [first] = p.feed(`${E}[1mbold`);
    p.feed(`${E}[0m${E}[32mgreen`);
    assert.equal(first.style.bold, true);
    assert.equal(first.style.fg, null);
    assert.ok(Object.isFrozen(first.style));
  });
});

describe('SGR colours', () => {
  for (let i = 0; i < 8; i++) {
    it(`3${i}/4${i}/9${i}/10${i} map to palette ${i} and ${i + 8}`, () => {
      assert.deepEqual(simplify(parseAnsi(`${E}[3${i}ma${E}[4${i}mb${E}[9${i}mc${E}[10${i}md`)), [
        ['a', { fg: { index: i } }],
        ['b', { fg: { index: i }, bg: { index: i } }],
        ['c', { fg: { index: i + 8 }, bg: { index: i } }],
        ['d', { fg: { index: i + 8 }, bg: { index: i + 8 } }],
      ]);
    });
  }

  it('39 and 49 restore the default colours only', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[1;31;44ma${E}[39mb${E}[49mc`)), [
      ['a', { bold: true, fg: { index: 1 }, bg: { index: 4 } }],
      ['b', { bold: true, bg: { index: 4 } }],
      ['c', { bold: true }],
    ]);
  });

  it('38;5;n and 48;5;n select 256-colour entries', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[38;5;208;48;5;17mx${E}[38;5;0;48;5;255my`)), [
      ['x', { fg: { index: 208 }, bg: { index: 17 } }],
      ['y', { fg: { index: 0 }, bg: { index: 255 } }],
    ]);
  });

  it('38;2;r;g;b and 48;2;r;g;b select truecolour', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[38;2;255;128;0;48;2;0;0;0;1mx`)), [
      ['x', { fg: { r: 255, g: 128, b: 0 }, bg: { r: 0, g: 0, b: 0 }, bold: true }],
    ]);
  });

  it('accepts the colon forms 38:5:n, 38:2::r:g:b and 38:2:r:g:b', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[38:5:100ma${E}[38:2::1:2:3mb${E}[48:2:4:5:6;1mc`)), [
      ['a', { fg: { index: 100 } }],
      ['b', { fg: { r: 1, g: 2, b: 3 } }],
      ['c', { fg: { r: 1, g: 2, b: 3 }, bg: { r: 4, g: 5, b: 6 }, bold: true }],
    ]);
  });

  it('ignores out-of-range extended colours but consumes their parameters', () => {
    // 256 is not a palette index; the 1 after it must still be read as bold, not swallowed.
    assert.deepEqual(simplify(parseAnsi(`${E}[32;38;5;256;1mx`)), [
      ['x', { fg: { index: 2 }, bold: true }],
    ]);
    // 300 is not a channel value; 4 after the colour is underline.
    assert.deepEqual(simplify(parseAnsi(`${E}[38;2;300;0;0;4mx`)), [['x', { underline: true }]]);
  });

  it('stops at an unknown or missing extended colour mode', () => {
    // Mode 7 does not exist; what follows cannot be interpreted and is skipped.
    assert.deepEqual(simplify(parseAnsi(`${E}[1;38;7;4mx`)), [['x', { bold: true }]]);
    assert.deepEqual(simplify(parseAnsi(`${E}[38mx`)), [['x', {}]]);
    assert.deepEqual(simplify(parseAnsi(`${E}[38;5mx`)), [['x', {}]]);
    assert.deepEqual(simplify(parseAnsi(`${E}[38;2;1;2mx`)), [['x', {}]]);
  });

  it('maps the 256-colour palette to RGB', () => {
    assert.equal(paletteRgb(15), null, 'the 16 base colours are themed');
    assert.deepEqual(paletteRgb(16), { r: 0, g: 0, b: 0 });
    assert.deepEqual(paletteRgb(196), { r: 255, g: 0, b: 0 });
    assert.deepEqual(paletteRgb(46), { r: 0, g: 255, b: 0 });
    assert.deepEqual(paletteRgb(21), { r: 0, g: 0, b: 255 });
    assert.deepEqual(paletteRgb(208), { r: 255, g: 135, b: 0 });
    assert.deepEqual(paletteRgb(231), { r: 255, g: 255, b: 255 });
    assert.deepEqual(paletteRgb(232), { r: 8, g: 8, b: 8 });
    assert.deepEqual(paletteRgb(255), { r: 238, g: 238, b: 238 });
    assert.equal(paletteRgb(256), null);
  });
});

describe('styleToCss', () => {
  it('uses classes for themed colours and attributes', () => {
    const css = styleToCss(applySgr(DEFAULT_STYLE, '1;4;31;102'));
    assert.deepEqual(css.classes.sort(), ['ansi-bg-10', 'ansi-bold', 'ansi-fg-1', 'ansi-underline']);
    assert.equal(css.color, null);
    assert.equal(css.background, null);
  });

  it('uses inline colours for 256-colour and truecolour', () => {
    const css = styleToCss(applySgr(DEFAULT_STYLE, '38;5;196;48;2;1;2;3'));
    assert.deepEqual(css.classes, []);
    assert.equal(css.color, 'rgb(255, 0, 0)');
    assert.equal(css.background, 'rgb(1, 2, 3)');
  });

  it('swaps colours for inverse, including defaults', () => {
    const plain = styleToCss(applySgr(DEFAULT_STYLE, '7'));
    assert.deepEqual(plain.classes.sort(), ['ansi-inv-bg', 'ansi-inv-fg']);
    const coloured = styleToCss(applySgr(DEFAULT_STYLE, '7;31;48;5;200'));
    assert.deepEqual(coloured.classes, ['ansi-bg-1']);
    assert.equal(coloured.color, 'rgb(255, 0, 215)');
  });

  it('is empty for the default style', () => {
    assert.deepEqual(styleToCss(DEFAULT_STYLE), { classes: [], color: null, background: null });
  });
});

describe('chunked input', () => {
  const whole = `He says, ${E}[1;38;5;208m"hello"${E}[0m and ${E}[38;2;10;20;30mwaves${E}[39m.\n`;

  it('gives the same result for every split point of a stream', () => {
    const expected = merged(parseAnsi(whole));
    for (let i = 0; i <= whole.length; i++) {
      assert.deepEqual(merged(feedAll([whole.slice(0, i), whole.slice(i)])), expected, `split at ${i}`);
    }
  });

  it('gives the same result when fed one character at a time', () => {
    assert.deepEqual(merged(feedAll([...whole])), merged(parseAnsi(whole)));
  });

  it('holds an unfinished sequence until the next chunk', () => {
    const p = new AnsiParser();
    assert.deepEqual(simplify(p.feed(`ab${E}[3`)), [['ab', {}]]);
    assert.deepEqual(simplify(p.feed('1mcd')), [['cd', { fg: { index: 1 } }]]);
  });

  it('handles a lone ESC at the end of a chunk', () => {
    const p = new AnsiParser();
    assert.deepEqual(simplify(p.feed(`x${E}`)), [['x', {}]]);
    assert.deepEqual(simplify(p.feed('[4my')), [['y', { underline: true }]]);
  });

  it('carries style across chunks', () => {
    const p = new AnsiParser();
    p.feed(`${E}[32mgreen `);
    assert.deepEqual(simplify(p.feed('still green')), [['still green', { fg: { index: 2 } }]]);
  });

  it('reset() forgets style and unfinished sequences', () => {
    const p = new AnsiParser();
    p.feed(`${E}[31mred${E}[`);
    p.reset();
    assert.deepEqual(simplify(p.feed('1mplain')), [['1mplain', {}]]);
  });
});

describe('other and malformed escapes', () => {
  it('strips non-SGR CSI sequences (cursor, erase, private modes)', () => {
    assert.equal(stripAnsi(`a${E}[2Jb${E}[10;20Hc${E}[?25ld${E}[Ke${E}[3Af`), 'abcdef');
  });

  it('does not treat private or intermediate CSI ending in m as SGR', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[?1ma${E}[>4;2mb${E}[1 mc`)), [['abc', {}]]);
  });

  it('strips OSC strings ended by BEL or ST, such as window titles and hyperlinks', () => {
    assert.equal(stripAnsi(`a${E}]0;evil title\x07b`), 'ab');
    assert.equal(
      stripAnsi(`${E}]8;;https://x.example/${E}\\link${E}]8;;${E}\\ text`),
      'link text',
    );
  });

  it('strips DCS, SOS, PM and APC strings', () => {
    assert.equal(stripAnsi(`a${E}Pq#0;2;0;0;0${E}\\b${E}Xsos${E}\\c${E}^pm${E}\\d${E}_apc${E}\\e`), 'abcde');
  });

  it('strips two-character escapes and charset selections', () => {
    assert.equal(stripAnsi(`a${E}7b${E}8c${E}cd${E}(Be${E})0f${E}=g`), 'abcdefg');
  });

  it('handles the C1 forms of CSI and OSC', () => {
    assert.deepEqual(simplify(parseAnsi('a\u009b31mb\u009d0;title\u009cc')), [
      ['a', {}],
      ['bc', { fg: { index: 1 } }],
    ]);
  });

  it('abandons a CSI interrupted by a control or non-ASCII character and keeps the text', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[31\nx`)), [['\nx', {}]]);
    assert.deepEqual(simplify(parseAnsi(`${E}[3é`)), [['é', {}]]);
  });

  it('lets a new ESC interrupt an unfinished sequence', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[3${E}[32mz`)), [['z', { fg: { index: 2 } }]]);
    assert.deepEqual(simplify(parseAnsi(`${E}${E}[1mz`)), [['z', { bold: true }]]);
  });

  it('drops ESC followed by a non-ASCII character but keeps that character', () => {
    assert.deepEqual(simplify(parseAnsi(`a${E}ñb`)), [['añb', {}]]);
  });

  it('reads an empty parameter in the middle of a list as reset', () => {
    assert.deepEqual(simplify(parseAnsi(`${E}[1;;4mx`)), [['x', { underline: true }]]);
  });

  it('ignores a non-numeric parameter without losing the rest', () => {
    assert.deepEqual({ ...applySgr(DEFAULT_STYLE, '1;x;4') }, { ...DEFAULT_STYLE, bold: true, underline: true });
    assert.deepEqual({ ...applySgr(DEFAULT_STYLE, '1;99999999999;3') }, { ...DEFAULT_STYLE, bold: true, italic: true });
  });

  it('skips an over-long CSI entirely and resumes after its final byte', () => {
    const long = `before${E}[${'1;'.repeat(kCsiLengthMax)}4mafter`;
    assert.deepEqual(simplify(parseAnsi(long)), [['beforeafter', {}]]);
    assert.deepEqual(simplify(parseAnsi(`${E}[${'9'.repeat(kCsiLengthMax + 1)}\nx`)), [['\nx', {}]]);
  });

  it('gives up on an unterminated OSC after a bound and shows later text', () => {
    const p = new AnsiParser();
    p.feed(`${E}]0;${'x'.repeat(kStringLengthMax + 10)}`);
    assert.deepEqual(simplify(p.feed('visible')), [['visible', {}]]);
  });

  it('never emits ESC or control characters for arbitrary input', () => {
    // A deterministic pseudo-random stream biased towards escape syntax.
    let seed = 12345;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const alphabet = [E, '[', ']', ';', ':', 'm', '0', '1', '3', '8', '5', '2', '\x07', '\\', 'a', '\n', '\r', '\x9b', '?', ' '];
    const p = new AnsiParser();
    for (let round = 0; round < 200; round++) {
      let chunk = '';
      for (let i = 0; i < 50; i++) chunk += alphabet[Math.floor(rand() * alphabet.length)];
      for (const seg of p.feed(chunk)) {
        assert.ok(seg.text.length > 0);
        assert.doesNotMatch(seg.text, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
      }
    }
  });
});
