// The scrolling output pane. Server text only ever reaches the page through text nodes
// (createTextNode / textContent), never as markup.
//
// Lines are <div> elements; the newest one stays open until a newline ends it, because text can
// arrive in pieces that split a line. The pane keeps at most `maxLines` lines. It follows new
// output while the reader is at the bottom; once they scroll up it stays put and reports
// "new output" until they return to the bottom.

import { AnsiParser, styleToCss } from './ansi.js';

export const kOutputLinesMax = 5000;
// How close to the bottom (in pixels) still counts as "at the bottom".
const kBottomSlackPx = 24;

export class OutputView {
  /**
   * @param {HTMLElement} pane the scrolling element
   * @param {object} [o]
   * @param {number} [o.maxLines]
   * @param {(hasUnseen: boolean) => void} [o.onUnseenChange]
   */
  constructor(pane, { maxLines = kOutputLinesMax, onUnseenChange = () => {} } = {}) {
    this.pane = pane;
    this.doc = pane.ownerDocument;
    this.maxLines = maxLines;
    this.onUnseenChange = onUnseenChange;
    this.parser = new AnsiParser();
    this.line = null; // the open (unfinished) line
    this.lineCount = 0;
    this.follow = true;
    this.unseen = false;
    this.scrollQueued = false;
    pane.addEventListener('scroll', () => this.onScroll(), { passive: true });
  }

  /** Appends server text (with ANSI escapes). */
  write(text) {
    const segments = this.parser.feed(text);
    for (const seg of segments) this.appendSegment(seg.text, seg.style);
    this.afterAppend();
  }

  /**
   * Appends a line written by the client itself (command echo, notices). It starts on a fresh
   * line so it never splices into the middle of a server line.
   */
  note(text, className) {
    if (this.line !== null && this.line.childNodes.length > 0) this.newLine();
    const line = this.line ?? this.newLine();
    const span = this.doc.createElement('span');
    span.className = className;
    span.textContent = text;
    line.appendChild(span);
    this.newLine();
    this.afterAppend();
  }

  /** A new connection starts with no style and no half-received escape sequence. */
  resetStyle() {
    this.parser.reset();
  }

  /** Shows a command the player sent at the end of the current line (after the prompt). */
  echo(text) {
    const line = this.line ?? this.newLine();
    if (text !== '') {
      const span = this.doc.createElement('span');
      span.className = 'echo';
      span.textContent = text;
      line.appendChild(span);
    }
    this.newLine();
    // Sending a command is a request to see the answer.
    this.follow = true;
    this.setUnseen(false);
    this.afterAppend();
  }

  scrollToBottom() {
    this.pane.scrollTop = this.pane.scrollHeight;
    this.follow = true;
    this.setUnseen(false);
  }

  scrollByPage(direction) {
    this.pane.scrollBy({ top: direction * this.pane.clientHeight * 0.9 });
  }

  // --- internals ---

  appendSegment(text, style) {
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) this.newLine();
      if (part === '') return;
      const line = this.line ?? this.newLine();
      line.appendChild(this.styled(part, style));
    });
  }

  styled(text, style) {
    const css = styleToCss(style);
    if (css.classes.length === 0 && css.color === null && css.background === null) {
      return this.doc.createTextNode(text);
    }
    const span = this.doc.createElement('span');
    if (css.classes.length > 0) span.className = css.classes.join(' ');
    if (css.color !== null) span.style.color = css.color;
    if (css.background !== null) span.style.backgroundColor = css.background;
    span.textContent = text;
    return span;
  }

  newLine() {
    const div = this.doc.createElement('div');
    div.className = 'line';
    this.pane.appendChild(div);
    this.line = div;
    this.lineCount += 1;
    return div;
  }

  afterAppend() {
    this.trim();
    if (this.follow) {
      this.queueScroll();
    } else {
      this.setUnseen(true);
    }
  }

  trim() {
    const excess = this.lineCount - this.maxLines;
    if (excess <= 0) return;
    // When the reader has scrolled up, removing lines above them would make the text jump;
    // shift the scroll position by the height that was removed.
    const before = this.follow ? 0 : this.pane.scrollHeight;
    for (let i = 0; i < excess; i++) {
      const first = this.pane.querySelector('.line');
      if (!first) break;
      first.remove();
      this.lineCount -= 1;
    }
    if (!this.follow) this.pane.scrollTop -= before - this.pane.scrollHeight;
  }

  queueScroll() {
    if (this.scrollQueued) return;
    this.scrollQueued = true;
    const raf = this.doc.defaultView?.requestAnimationFrame ?? ((f) => setTimeout(f, 16));
    raf(() => {
      this.scrollQueued = false;
      if (this.follow) this.pane.scrollTop = this.pane.scrollHeight;
    });
  }

  onScroll() {
    const p = this.pane;
    const atBottom = p.scrollHeight - p.scrollTop - p.clientHeight <= kBottomSlackPx;
    this.follow = atBottom;
    if (atBottom) this.setUnseen(false);
  }

  setUnseen(value) {
    if (this.unseen === value) return;
    this.unseen = value;
    this.onUnseenChange(value);
  }
}
