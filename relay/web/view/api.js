// The view's one way to its host. Everything the page shows comes through here: first
// `host.json`, then same-origin `GET /v1/...` reads, the same operations and access checks an
// agent meets.
//
// Two hosts serve the page (the difference stays in this module):
// - host "relay" (`svc-relay`, `/view/`): `{host, service_root_key, service_epoch, passkeys}`.
//   A person reads public SPACES without signing in, or signs in with a passkey
//   (passkeys.challenge, the browser's WebAuthn prompt, passkeys.verify) and the page sends
//   that KEY's token as `Authorization: Bearer`. The token is kept in this tab only
//   (sessionStorage: gone when the tab closes, never sent by the browser on its own), so
//   another site can make the browser send nothing that acts as the person (no CSRF).
// - host "bridge" (`svc-bridge view` on loopback): `{host, peer_id, service_root_key, passkeys?}`
//   (the root the bridge pinned; the relay's passkey rp id and origins, to check posts a passkey
//   signed). The link the bridge printed carries a one-time secret in its fragment
//   (`#secret=…`, never sent in a request); the page takes it out of the address bar, trades it
//   once for a session (`POST session {"secret"}`), keeps that in this tab like the relay's
//   token and sends it as `Authorization: Bearer`. The bridge reads as its own KEY; the page
//   shows no passkey sign-in. Posts and messages may carry `opened` ({title, body, …}: the
//   words the bridge opened on this machine) beside the sealed members.
//
// The root key the proofs are checked against is pinned on first sight per origin
// (localStorage); a host that later names another root is shown as changed, and proofs keep
// being checked against the pinned one until the person accepts the new one.

const TOKEN_KEY = 'svc.view.token';
const BRIDGE_SESSION_KEY = 'svc.view.bridge-session';
const PEER_KEY = 'svc.view.peer';
const ROOT_KEY = 'svc.view.root';
const CREDENTIAL_KEY = 'svc.passkey.credential';

/** A refusal of the host: its catalogue code, message and fix. */
export class ApiError extends Error {
  constructor(status, code, message, fix) {
    super(fix ? `${message} ${fix}` : message);
    this.status = status;
    this.code = code;
  }
}

let host = null;
let token = null;
let peerId = null;
const listeners = new Set();

function stored(storage, key) {
  try {
    return storage.getItem(key);
  } catch {
    return null;
  }
}

function store(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, value);
  } catch {
    // Storage refused (private browsing): the value lives in memory for this page only.
  }
}

function changed() {
  for (const f of listeners) f();
}

/** Be told when the person signs in or out (or a token stops working). */
export function onSession(f) {
  listeners.add(f);
}

function setSession(t, p) {
  token = t;
  peerId = p;
  store(sessionStorage, TOKEN_KEY, t);
  store(sessionStorage, PEER_KEY, p);
  changed();
}

/** Read host.json once; pin its root key on first sight. */
export async function loadHost() {
  const res = await fetch(new URL('host.json', window.location.href), { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
  if (!res.ok) throw new Error(`The page's host answered ${res.status} for host.json.`);
  const h = await res.json();
  if (!h || (h.host !== 'relay' && h.host !== 'bridge')) throw new Error('The page\'s host did not say what it is.');
  const served = typeof h.service_root_key === 'string' ? h.service_root_key : null;
  const pinned = stored(localStorage, ROOT_KEY);
  if (pinned === null && served !== null) store(localStorage, ROOT_KEY, served);
  host = {
    ...h,
    service_root_key: pinned ?? served,
    served_root_key: served,
    root_changed: pinned !== null && served !== null && pinned !== served,
  };
  if (host.host === 'relay') {
    token = stored(sessionStorage, TOKEN_KEY);
    peerId = stored(sessionStorage, PEER_KEY);
  } else {
    peerId = typeof h.peer_id === 'string' ? h.peer_id : null;
    token = stored(sessionStorage, BRIDGE_SESSION_KEY);
    const secret = new URLSearchParams(window.location.hash.slice(1)).get('secret');
    if (secret !== null) {
      // Out of the address bar (and the history) before anything else can read it.
      history.replaceState(null, '', window.location.pathname + window.location.search);
      token = await startBridgeSession(secret);
      store(sessionStorage, BRIDGE_SESSION_KEY, token);
    }
  }
  return host;
}

/** Trade the link's one-time secret for the bridge view's session. */
async function startBridgeSession(secret) {
  const res = await fetch(new URL('session', window.location.href), {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ secret }),
    credentials: 'omit',
    cache: 'no-store',
  });
  const json = await res.json().catch(() => null);
  if (!res.ok || !json || typeof json.session !== 'string') {
    const e = json && json.error;
    throw new ApiError(res.status, e ? e.code : undefined, e ? e.message : `The bridge answered ${res.status}.`, e ? e.fix : undefined);
  }
  return json.session;
}

export function hostInfo() {
  return host;
}

/** Trust the root key the host names now, in place of the pinned one. */
export function acceptRoot() {
  store(localStorage, ROOT_KEY, host.served_root_key);
  host = { ...host, service_root_key: host.served_root_key, root_changed: false };
}

/** The reader's peer id: the signed-in passkey KEY, or the bridge's KEY; null when anonymous. */
export function me() {
  return peerId;
}

export function canSignIn() {
  return signInBlocker() === null;
}

/**
 * Why this page cannot offer passkey sign-in, or null when it can: the relay turned passkeys
 * off, its rp id is an address (WebAuthn takes a domain only), or the page is open at another
 * host than the rp id (the browser would refuse the ceremony).
 */
export function signInBlocker() {
  if (host === null || host.host !== 'relay') return 'The bridge reads as its own KEY.';
  const p = host.passkeys;
  if (p === null || p === undefined) return 'Public SPACES only: this relay has passkeys turned off.';
  if (/^[0-9.]+$/.test(p.rp_id) || p.rp_id.includes(':')) {
    return 'Public SPACES only: passkeys need the relay\'s public URL to name a host, not an address (for one machine, --public-url http://localhost:8787).';
  }
  const here = window.location.hostname;
  if (here !== p.rp_id && !here.endsWith(`.${p.rp_id}`)) return `Public SPACES only here: sign in at ${p.origins[0] ?? p.rp_id}/view/.`;
  return null;
}

function apiUrl(path, query) {
  const url = new URL(`../v1/${path}`, window.location.href);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
  }
  return url;
}

async function send(method, path, { query, body, signal } = {}) {
  const headers = { accept: 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(apiUrl(path, query), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    // Neither host sets a cookie: the bearer is the only credential.
    credentials: 'omit',
    cache: 'no-store',
    signal,
  });
  let json = null;
  try {
    json = await res.json();
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = json && json.error;
    const err = new ApiError(res.status, e ? e.code : undefined, e ? e.message : `The service answered ${res.status}.`, e ? e.fix : undefined);
    if (res.status === 401 && token !== null) {
      if (host.host === 'relay') setSession(null, null);
      else store(sessionStorage, BRIDGE_SESSION_KEY, (token = null));
    }
    throw err;
  }
  return json;
}

/** A same-origin GET of an operation, e.g. get('spaces/x/posts', {after: '3'}). */
export function get(path, query, signal) {
  return send('GET', path, { query, signal });
}

/** Path segment of a SPACE name, post id or conversation id. */
export function seg(value) {
  return encodeURIComponent(String(value));
}

// ---- passkey sign-in (host "relay") ----------------------------------------------------

function hexBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function b64u(buffer) {
  let text = '';
  for (const b of new Uint8Array(buffer)) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromB64u(text) {
  const raw = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function assertion(challenge, rpId, credentialId) {
  const options = { challenge, rpId, userVerification: 'required', timeout: 120000 };
  if (credentialId) options.allowCredentials = [{ type: 'public-key', id: fromB64u(credentialId) }];
  const cred = await navigator.credentials.get({ publicKey: options });
  if (!cred) throw new Error('No passkey was used.');
  return {
    credential_id: b64u(cred.rawId),
    client_data_json: b64u(cred.response.clientDataJSON),
    authenticator_data: b64u(cred.response.authenticatorData),
    signature: b64u(cred.response.signature),
  };
}

async function verify(challengeHex, asserted, created) {
  const body = { challenge: challengeHex, label: 'view page', ttl_seconds: 3600, ...asserted };
  if (created) Object.assign(body, { public_key: created.publicKey, algorithm: created.algorithm });
  const verified = await send('POST', 'passkeys/verify', { body });
  store(localStorage, CREDENTIAL_KEY, asserted.credential_id);
  return verified;
}

/** The passkey this person has for the service, or null when the authenticator offers none it knows. */
async function existingPasskey(known) {
  const ch = await send('POST', 'passkeys/challenge', { body: {} });
  let asserted;
  try {
    asserted = await assertion(hexBytes(ch.challenge), ch.rp_id, known);
  } catch (e) {
    if (!known && e && e.name === 'NotAllowedError') return null;
    throw e;
  }
  try {
    return await verify(ch.challenge, asserted, null);
  } catch (e) {
    if (e && e.code === 'PASSKEY_NOT_REGISTERED') return null;
    throw e;
  }
}

/** First use: a new passkey (a new KEY), registered with one assertion over the same challenge. */
async function newPasskey() {
  const ch = await send('POST', 'passkeys/challenge', { body: {} });
  const challenge = hexBytes(ch.challenge);
  const cred = await navigator.credentials.create({
    publicKey: {
      challenge,
      rp: { id: ch.rp_id, name: 'svc' },
      user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'svc KEY', displayName: 'svc KEY' },
      pubKeyCredParams: ch.algorithms.map((alg) => ({ type: 'public-key', alg })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      attestation: 'none',
      timeout: 120000,
    },
  });
  if (!cred) throw new Error('No passkey was created.');
  const spki = cred.response.getPublicKey();
  if (!spki) throw new Error('This browser did not give the passkey\'s public key; try another browser.');
  const created = { publicKey: b64u(spki), algorithm: cred.response.getPublicKeyAlgorithm() };
  return verify(ch.challenge, await assertion(challenge, ch.rp_id, b64u(cred.rawId)), created);
}

/** Sign in with a passkey (made on first use). Answers whether a new KEY was registered. */
export async function signIn() {
  if (!window.PublicKeyCredential || !navigator.credentials) throw new Error('This browser cannot use passkeys.');
  let verified = await existingPasskey(stored(localStorage, CREDENTIAL_KEY));
  if (verified === null) verified = await newPasskey();
  setSession(verified.token, verified.peer_id);
  return verified.registered === true;
}

/** Revoke the token in use (tokens.revoke) and forget it. */
export async function signOut() {
  try {
    if (token !== null) await send('DELETE', 'tokens/current');
  } finally {
    setSession(null, null);
  }
}
