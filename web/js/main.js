// Wiring for the page: builds the views, the connection and the input handling. Everything that
// can be tested without a browser lives in the pure modules (ansi, protocol, history, backoff,
// connection); this file only connects them to the DOM.

import { stripAnsi } from './ansi.js';
import { Backoff } from './backoff.js';
import { Connection } from './connection.js';
import { History, loadHistory, saveHistory } from './history.js';
import { OutputView } from './output.js';
import { buildInput, buildNaws } from './protocol.js';
import { ChannelLog, CharLine, RoomStrip, StatusIndicator, VitalsBar } from './panels.js';

const kHistoryKey = 'telos.history.v1';
const kNawsDebounceMs = 150;

const doc = document;
const pane = doc.getElementById('output');
const input = doc.getElementById('input');
const form = doc.getElementById('input-form');
const newOutput = doc.getElementById('new-output');

// localStorage can be missing or throw (privacy modes, file://); history then lives in memory.
function getStorage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
const storage = getStorage();
const history = storage ? loadHistory(storage, kHistoryKey) : new History();
// Loading drops lines that held a password (an older client kept `password OLD NEW`); saving
// at once removes them from storage too.
if (storage) saveHistory(storage, kHistoryKey, history);

const output = new OutputView(pane, {
  onUnseenChange: (unseen) => {
    newOutput.hidden = !unseen;
  },
});
newOutput.addEventListener('click', () => {
  output.scrollToBottom();
  input.focus();
});

const vitals = new VitalsBar(doc);
const charLine = new CharLine(doc);
charLine.reset();
const channels = new ChannelLog(doc);
const room = new RoomStrip(doc, (direction) => {
  sendCommand(direction);
  input.focus();
});
room.reset();

// --- password mode (server echo off) ---

let passwordMode = false;
function setPasswordMode(on) {
  passwordMode = on;
  input.type = on ? 'password' : 'text';
  input.setAttribute('aria-label', on ? 'Password' : 'Command');
  form.classList.toggle('password', on);
  if (on) input.value = '';
  history.resetNavigation();
}

// --- connection ---

const wsScheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
const connection = new Connection({
  url: `${wsScheme}//${location.host}/ws`,
  createSocket: (url) => new WebSocket(url),
  backoff: new Backoff(),
  onStatus: (status) => onConnectionStatus(status),
  onOpen: () => {
    // A new session: what the panels showed belonged to the previous one. The server sends
    // fresh GMCP once the player is in the game again.
    vitals.reset();
    charLine.reset();
    room.reset();
    output.resetStyle();
    output.note('Connected.', 'note');
    sendNaws(true);
  },
  onFrame: (frame) => handleFrame(frame),
});
const indicator = new StatusIndicator(doc, () => {
  connection.reconnectNow();
  input.focus();
});

let wasOpen = false;
let toldUnreachable = false;
function onConnectionStatus(status) {
  indicator.show(status);
  doc.body.dataset.conn = status.state;
  if (status.state === 'open') {
    wasOpen = true;
    toldUnreachable = false;
  }
  if (status.state === 'waiting' || status.state === 'closed') {
    lastNaws = '';
    if (passwordMode) setPasswordMode(false);
  }
  // Announce a drop in the output once, not once per retry.
  if (status.state === 'waiting' && wasOpen) {
    wasOpen = false;
    toldUnreachable = true;
    output.note('Connection lost. Reconnecting…', 'note warn');
  } else if (status.state === 'waiting' && !toldUnreachable) {
    toldUnreachable = true;
    output.note('Cannot reach the server. Retrying in the background…', 'note warn');
  }
  if (status.state === 'closed') wasOpen = false;
}

function handleFrame(frame) {
  switch (frame.type) {
    case 'text':
      output.write(frame.text);
      break;
    case 'echo':
      setPasswordMode(!frame.on);
      break;
    case 'close':
      output.note(
        frame.reason
          ? `Connection closed by the server: ${stripAnsi(frame.reason)}`
          : 'Connection closed by the server.',
        'note',
      );
      break;
    case 'gmcp':
      handleGmcp(frame.package, frame.data);
      break;
    default:
      break;
  }
}

function handleGmcp(pkg, data) {
  if (pkg === 'Char.Vitals') vitals.update(data);
  else if (pkg === 'Char.Status') charLine.update(data);
  else if (pkg === 'Room.Info') room.update(data);
  else if (pkg === 'Comm.Channel.Text') channels.add(data);
}

// --- NAWS: columns and rows that fit the output pane ---

let lastNaws = '';
const measure = doc.getElementById('measure');
function paneSize() {
  const box = measure.getBoundingClientRect();
  const charWidth = box.width / measure.textContent.length;
  const lineHeight = box.height;
  if (!(charWidth > 0) || !(lineHeight > 0)) return null;
  const cs = getComputedStyle(pane);
  const width = pane.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const height = pane.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
  return { width: Math.floor(width / charWidth), height: Math.floor(height / lineHeight) };
}

function sendNaws(force = false) {
  const size = paneSize();
  if (!size) return;
  const frame = buildNaws(size.width, size.height);
  if (!force && frame === lastNaws) return;
  if (connection.send(frame)) lastNaws = frame;
}

let nawsTimer = null;
new ResizeObserver(() => {
  clearTimeout(nawsTimer);
  nawsTimer = setTimeout(() => sendNaws(), kNawsDebounceMs);
}).observe(pane);

// --- input ---

function sendCommand(text) {
  if (!connection.send(buildInput(text))) {
    output.note('Not connected — nothing was sent.', 'note warn');
    return false;
  }
  // Like a terminal: the command appears after the prompt; a password only ends the line.
  output.echo(passwordMode ? '' : text);
  return true;
}

form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const text = input.value;
  const wasPassword = passwordMode;
  if (!sendCommand(text)) return; // keep the text so it can be sent once connected
  if (!wasPassword && history.add(text)) saveHistory(storage, kHistoryKey, history);
  history.resetNavigation();
  input.value = '';
});

function setInput(text) {
  input.value = text;
  // Put the caret at the end, after the browser's own arrow-key handling.
  const end = text.length;
  requestAnimationFrame(() => input.setSelectionRange(end, end));
}

input.addEventListener('keydown', (ev) => {
  if (ev.isComposing) return;
  switch (ev.key) {
    case 'ArrowUp': {
      if (passwordMode) return;
      const text = history.prev(input.value);
      ev.preventDefault();
      if (text !== null) setInput(text);
      break;
    }
    case 'ArrowDown': {
      if (passwordMode) return;
      const text = history.next();
      ev.preventDefault();
      if (text !== null) setInput(text);
      break;
    }
    case 'PageUp':
      ev.preventDefault();
      output.scrollByPage(-1);
      break;
    case 'PageDown':
      ev.preventDefault();
      output.scrollByPage(1);
      break;
    case 'Escape':
      input.value = '';
      history.resetNavigation();
      break;
    default:
      break;
  }
});

// Keep the keyboard on the input: typing anywhere lands there, and clicking the output (without
// selecting text to copy) returns focus to it.
function isInteractive(el) {
  const selector = 'input, textarea, button, a, select, [contenteditable]';
  return el instanceof Element && el.closest(selector) !== null;
}
doc.addEventListener('keydown', (ev) => {
  if (ev.target === input || isInteractive(ev.target)) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key.length === 1 || ev.key === 'Enter' || ev.key === 'ArrowUp' || ev.key === 'ArrowDown') {
    input.focus();
  }
});
pane.addEventListener('mouseup', () => {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed) input.focus({ preventScroll: true });
});

window.addEventListener('online', () => {
  if (connection.state === 'waiting') connection.reconnectNow();
});

output.note('Welcome to TelosMUD.', 'note');
connection.start();
input.focus();
