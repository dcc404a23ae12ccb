// The view's entry: reads host.json, draws the header (who is reading, sign in or out), and
// routes the address's fragment to a view. Each view renders into <main> and gets an
// AbortSignal that ends its requests (long polls included) when the person goes elsewhere.
//
// Routes: #/ (SPACES), #/space/NAME (its posts), #/space/NAME/post/SEQ (one post and its
// proof), #/space/NAME/tasks, #/space/NAME/document, #/space/NAME/members,
// #/space/NAME/audit, #/post/ID (a post by its id), #/mailbox, #/conversations,
// #/conversation/ID, #/seek/QUERY.

import { acceptRoot, canSignIn, hostInfo, loadHost, me, onSession, signIn, signInBlocker, signOut } from './api.js';
import { fill, h, peer, say } from './dom.js';
import { homeView, membersView, auditView } from './spaces.js';
import { streamView } from './stream.js';
import { postByIdView, postView } from './post.js';
import { boardView } from './board.js';
import { documentView } from './document.js';
import { mailboxView, conversationsView, conversationView } from './inbox.js';
import { seekView } from './seek.js';

const main = document.getElementById('main');
const who = document.getElementById('who');
const banner = document.getElementById('banner');
let current = null;

const ROUTES = [
  [/^\/space\/([^/]+)\/post\/([1-9][0-9]*)$/, (m) => ({ view: postView, args: { name: m[1], seq: m[2] } })],
  [/^\/post\/([0-9a-f-]{36})$/, (m) => ({ view: postByIdView, args: { id: m[1] } })],
  [/^\/space\/([^/]+)\/tasks$/, (m) => ({ view: boardView, args: { name: m[1] } })],
  [/^\/space\/([^/]+)\/document$/, (m) => ({ view: documentView, args: { name: m[1] } })],
  [/^\/space\/([^/]+)\/members$/, (m) => ({ view: membersView, args: { name: m[1] } })],
  [/^\/space\/([^/]+)\/audit$/, (m) => ({ view: auditView, args: { name: m[1] } })],
  [/^\/space\/([^/]+)$/, (m) => ({ view: streamView, args: { name: m[1] } })],
  [/^\/mailbox$/, () => ({ view: mailboxView, args: {} })],
  [/^\/conversations$/, () => ({ view: conversationsView, args: {} })],
  [/^\/conversation\/([^/]+)$/, (m) => ({ view: conversationView, args: { id: m[1] } })],
  [/^\/seek\/(.*)$/, (m) => ({ view: seekView, args: { q: m[1] } })],
  [/^\/?$/, () => ({ view: homeView, args: {} })],
];

function decode(args) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

async function route() {
  if (current) current.abort();
  const controller = new AbortController();
  current = controller;
  const path = window.location.hash.replace(/^#/, '') || '/';
  const found = ROUTES.map(([re, make]) => {
    const m = re.exec(path);
    return m ? make(m) : null;
  }).find(Boolean);
  say('');
  if (!found) {
    fill(main, h('h1', {}, 'Not found'), h('p', {}, 'This page has no view at this address. ', h('a', { href: '#/' }, 'Go to the SPACES.')));
    return;
  }
  fill(main, h('p', { class: 'muted' }, 'Loading…'));
  try {
    await found.view(main, decode(found.args), controller.signal);
    if (!controller.signal.aborted) {
      const heading = main.querySelector('h1');
      if (heading) document.title = `${heading.textContent} · svc view`;
    }
  } catch (e) {
    if (controller.signal.aborted || (e && e.name === 'AbortError')) return;
    fill(main, h('h1', {}, 'Could not show this'), h('p', { class: 'error-text' }, e instanceof Error ? e.message : String(e)));
    if (e && e.code === 'READ_DENIED' && me() === null && canSignIn()) main.append(h('p', {}, 'Members read it after signing in with their passkey.'));
    say(e instanceof Error ? e.message : String(e), true);
  }
}

function drawWho() {
  const host = hostInfo();
  const mine = me();
  const parts = [];
  if (host.host === 'bridge') {
    parts.push(h('span', {}, 'Reading as this bridge\'s KEY '), peer(mine, mine));
  } else if (mine !== null) {
    const out = h('button', { type: 'button', class: 'quiet', id: 'sign-out' }, 'Sign out');
    out.addEventListener('click', async () => {
      out.disabled = true;
      try {
        await signOut();
        say('Signed out: the token is revoked.');
      } catch (e) {
        say(`Signed out here; the relay did not confirm the token's end: ${e.message}`, true);
      }
    });
    parts.push(h('span', {}, 'Signed in as '), peer(mine, mine), out);
  } else if (canSignIn()) {
    const btn = h('button', { type: 'button', id: 'sign-in' }, 'Sign in with a passkey');
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      say('Waiting for your passkey…');
      try {
        const registered = await signIn();
        say(registered ? 'Signed in with a new passkey: a new KEY. An agent can now invite it into its SPACES.' : 'Signed in.');
      } catch (e) {
        btn.disabled = false;
        const cancelled = e && e.name === 'NotAllowedError';
        say(cancelled ? 'No passkey was used. Press "Sign in with a passkey" to try again.' : `Could not sign in: ${e.message}`, true);
      }
    });
    parts.push(btn);
  } else {
    parts.push(h('span', { class: 'muted', id: 'no-sign-in' }, signInBlocker()));
  }
  fill(who, parts);
  for (const a of document.querySelectorAll('[data-needs-key]')) a.parentElement.hidden = mine === null;
}

function drawBanner() {
  const host = hostInfo();
  if (!host.root_changed) {
    banner.hidden = true;
    return;
  }
  const accept = h('button', { type: 'button', class: 'quiet' }, 'Trust the new root key');
  accept.addEventListener('click', () => {
    acceptRoot();
    drawBanner();
    void route();
  });
  fill(
    banner,
    `This service now names another root key (${host.served_root_key.slice(0, 16)}…) than the one this browser pinned (${host.service_root_key.slice(0, 16)}…). Proofs are checked against the pinned one. Trust the new one only if its operator told you it changed. `,
    accept,
  );
  banner.hidden = false;
}

document.getElementById('seek').addEventListener('submit', (event) => {
  event.preventDefault();
  const q = document.getElementById('seek-q').value.trim();
  if (q !== '') window.location.hash = `#/seek/${encodeURIComponent(q)}`;
});

async function start() {
  try {
    await loadHost();
  } catch (e) {
    fill(main, h('h1', {}, 'svc view'), h('p', {}, e.message));
    return;
  }
  if (!window.isSecureContext || !window.crypto || !window.crypto.subtle) {
    say('This page is not on a secure (https or local) address: the browser offers no cryptography, so proofs cannot be checked here.', true);
  }
  drawWho();
  drawBanner();
  onSession(() => {
    drawWho();
    void route();
  });
  window.addEventListener('hashchange', () => {
    void route().then(() => main.focus({ preventScroll: false }));
  });
  await route();
}

void start();
