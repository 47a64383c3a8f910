// The small panels around the output: vitals bar, character line, room strip, channel log and
// connection indicator. Every server-provided string is set with textContent.

import { stripAnsi } from './ansi.js';

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}

function formatNumber(n) {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** One hp/mana/moves meter: a labelled bar with role="meter". */
export class Meter {
  constructor(root) {
    this.root = root;
    this.fill = root.querySelector('.meter-fill');
    this.value = root.querySelector('.meter-value');
    this.label = root.getAttribute('aria-label') ?? '';
  }

  set(current, max) {
    if (typeof current !== 'number') {
      this.root.classList.add('unknown');
      this.value.textContent = '–';
      this.fill.style.width = '0%';
      this.root.setAttribute('aria-valuetext', 'unknown');
      return;
    }
    this.root.classList.remove('unknown');
    const hasMax = typeof max === 'number' && max > 0;
    const ratio = hasMax ? Math.min(Math.max(current / max, 0), 1) : 1;
    this.fill.style.width = `${(ratio * 100).toFixed(1)}%`;
    this.root.classList.toggle('low', hasMax && ratio <= 0.25);
    this.value.textContent = hasMax
      ? `${formatNumber(current)}/${formatNumber(max)}`
      : formatNumber(current);
    this.root.setAttribute('aria-valuemin', '0');
    this.root.setAttribute('aria-valuemax', String(hasMax ? max : Math.max(current, 0)));
    this.root.setAttribute('aria-valuenow', String(Math.max(current, 0)));
    this.root.setAttribute(
      'aria-valuetext',
      hasMax ? `${formatNumber(current)} of ${formatNumber(max)}` : formatNumber(current),
    );
  }
}

/** Keeps the latest Char.Vitals (updates may be partial) and draws the three meters. */
export class VitalsBar {
  constructor(doc) {
    this.vitals = {};
    this.meters = {
      hp: new Meter(doc.getElementById('meter-hp')),
      mana: new Meter(doc.getElementById('meter-mana')),
      moves: new Meter(doc.getElementById('meter-moves')),
    };
    this.render();
  }

  update(data) {
    Object.assign(this.vitals, data);
    this.render();
  }

  reset() {
    this.vitals = {};
    this.render();
  }

  render() {
    for (const [key, meter] of Object.entries(this.meters)) {
      meter.set(this.vitals[key], this.vitals[`max_${key}`]);
    }
  }
}

/** Name, level and purse from Char.Status (updates may be partial). */
export class CharLine {
  constructor(doc) {
    this.status = {};
    this.name = doc.getElementById('char-name');
    this.level = doc.getElementById('char-level');
    this.extra = doc.getElementById('char-extra');
  }

  update(data) {
    Object.assign(this.status, data);
    const s = this.status;
    this.name.textContent = s.name ? stripAnsi(s.name) : 'Not logged in';
    const title = [s.race, s.class].filter((t) => typeof t === 'string' && t).map(stripAnsi);
    this.level.textContent =
      typeof s.level === 'number' ? [`level ${s.level}`, ...title].join(' ') : '';
    const extra = [];
    if (typeof s.gold === 'number') extra.push(`${s.gold} gold`);
    if (typeof s.exp === 'number') extra.push(`${s.exp} exp`);
    this.extra.textContent = extra.join(' · ');
  }

  reset() {
    this.status = {};
    this.update({});
  }
}

/** Room name, zone and clickable exits from Room.Info. */
export class RoomStrip {
  /** @param {(direction: string) => void} onExit */
  constructor(doc, onExit) {
    this.doc = doc;
    this.root = doc.getElementById('room');
    this.name = doc.getElementById('room-name');
    this.zone = doc.getElementById('room-zone');
    this.exits = doc.getElementById('room-exits');
    this.onExit = onExit;
  }

  update(info) {
    this.root.classList.remove('empty');
    this.name.textContent = info.name !== undefined ? stripAnsi(info.name) : '';
    this.zone.textContent = info.zone !== undefined ? stripAnsi(String(info.zone)) : '';
    clear(this.exits);
    if (info.exits.length === 0) {
      const li = this.doc.createElement('li');
      li.className = 'no-exits';
      li.textContent = 'none';
      this.exits.appendChild(li);
      return;
    }
    for (const exit of info.exits) {
      const li = this.doc.createElement('li');
      const button = this.doc.createElement('button');
      button.type = 'button';
      button.className = 'exit';
      const label = stripAnsi(exit);
      button.textContent = label;
      button.setAttribute('aria-label', `Go ${label}`);
      button.addEventListener('click', () => this.onExit(exit));
      li.appendChild(button);
      this.exits.appendChild(li);
    }
  }

  reset() {
    this.root.classList.add('empty');
    this.name.textContent = '';
    this.zone.textContent = '';
    clear(this.exits);
  }
}

/** The last few Comm.Channel.Text messages, each naming its speaker, beside the output. */
export class ChannelLog {
  constructor(doc, maxEntries = 200) {
    this.doc = doc;
    this.root = doc.getElementById('channels');
    this.maxEntries = maxEntries;
  }

  add(msg) {
    const row = this.doc.createElement('div');
    row.className = 'channel-line';
    const channel = this.doc.createElement('span');
    channel.className = 'channel-name';
    channel.textContent = `[${stripAnsi(msg.channel) || '?'}]`;
    const talker = this.doc.createElement('span');
    talker.className = 'channel-talker';
    talker.textContent = stripAnsi(msg.talker);
    const text = this.doc.createElement('span');
    text.className = 'channel-text';
    text.textContent = stripAnsi(msg.text);
    row.append(channel, ' ', talker, msg.talker ? ': ' : '', text);
    this.root.appendChild(row);
    while (this.root.childElementCount > this.maxEntries) this.root.firstElementChild.remove();
    this.root.scrollTop = this.root.scrollHeight;
    this.doc.getElementById('channels-panel').classList.remove('empty');
  }
}

/** The connection dot, its text and the reconnect button. */
export class StatusIndicator {
  /** @param {() => void} onReconnect */
  constructor(doc, onReconnect) {
    this.doc = doc;
    this.root = doc.getElementById('conn');
    this.text = doc.getElementById('conn-text');
    // The countdown is hidden from screen readers so the live region speaks once per change,
    // not once a second.
    this.countdownText = doc.getElementById('conn-countdown');
    this.button = doc.getElementById('reconnect');
    this.button.addEventListener('click', () => onReconnect());
    this.countdown = null;
  }

  show(status, now = () => Date.now()) {
    const win = this.doc.defaultView;
    if (this.countdown !== null) {
      win.clearInterval(this.countdown);
      this.countdown = null;
    }
    this.root.dataset.state = status.state;
    this.countdownText.textContent = '';
    let showButton = false;
    switch (status.state) {
      case 'connecting':
        this.text.textContent = status.attempt > 1 ? 'Reconnecting…' : 'Connecting…';
        break;
      case 'open':
        this.text.textContent = 'Connected';
        break;
      case 'waiting': {
        showButton = true;
        this.text.textContent = 'Disconnected — retrying';
        const tick = () => {
          const secs = Math.max(0, Math.ceil((status.retry_at_ms - now()) / 1000));
          this.countdownText.textContent = secs > 0 ? ` in ${secs}s` : '…';
        };
        tick();
        this.countdown = win.setInterval(tick, 1000);
        break;
      }
      case 'closed':
        showButton = true;
        this.text.textContent = status.reason ? `Closed: ${stripAnsi(status.reason)}` : 'Closed';
        break;
      default:
        this.text.textContent = status.state;
    }
    this.button.hidden = !showButton;
    this.button.textContent = status.state === 'closed' ? 'Connect' : 'Reconnect now';
  }
}
