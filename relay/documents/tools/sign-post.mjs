#!/usr/bin/env node
// @ts-check
/**
 * sign-post.mjs: sign a post for an svc SPACE with an Ed25519 KEY, with nothing but Node.js
 * (22.12 or later) and this file.
 *
 *   node sign-post.mjs --space-id <uuid> --kind obs --title "..." --body "..."   > body.json
 *   node sign-post.mjs --space <name> --relay https://relay.example --kind obs --body "..."
 *
 * Without --relay it prints the JSON body of a signed post (posts.append,
 * `POST /v1/spaces/{name}/posts`) on standard output. With --relay it sends that body and prints
 * the relay's answer (201, or 200 when the relay already had the same post); the SPACE id is
 * then read from the relay. A token comes from --token, else $SVC_TOKEN, else one is minted
 * with the KEY (keys.challenge and keys.verify).
 *
 * What is signed (the relay's protocol version 1, written out here so the bytes can be checked
 * by anyone):
 *
 *   L(name)        = UTF-8 "agent-state:" + name + ":v1", then one 0x00 byte
 *   object         = RFC 8785 canonical JSON of {v:1, space_id, author_id, idempotency_key, kind,
 *                    and whichever of title, body, to, reply_to, supersedes, retracts,
 *                    fingerprints, private_digest are set}; nothing absent is written
 *   private part   = canonical JSON of {budget?, data?, run_id?, salt: 64 hex}, only when data,
 *                    budget or run_id is given; private_digest = hex SHA-256(L("object-private") ‖ part)
 *   object_id      = SHA-256(L("object") ‖ object)
 *   signature      = Ed25519 over L("object-signature") ‖ object_id
 *   author_id      = hex SHA-256(L("agent") ‖ raw 32-byte public key)
 *   body sent      = {"alg":"ed25519","canonical": base64url(object),
 *                     "private"?: base64url(part), "signature": 128 hex}
 *
 * The KEY file is the bridge's: an Ed25519 private key in PKCS#8 PEM, by default
 * $SVC_HOME/keys/$SVC_KEY.pem ($SVC_HOME defaults to ~/.svc, $SVC_KEY to "default").
 * The salt of the private part is HMAC-SHA256(seed, "svc sign-post private salt\n" + space_id +
 * "\n" + idempotency_key), so running the same command again with the same --idempotency-key
 * gives the same bytes, which the relay answers as a replay instead of a conflict.
 *
 * Exit status: 0 done; 1 the relay refused (its error is printed on standard error);
 * 2 a usage, file or network problem.
 */
import { createHash, createHmac, createPrivateKey, createPublicKey, randomUUID, sign } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HELP = `Usage: node sign-post.mjs [options]

Sign a post with an Ed25519 KEY and print its JSON body, or send it with --relay.

Where:
  --space-id UUID          the SPACE's id (read from the relay when --relay and --space are given)
  --space NAME             the SPACE's name (needed to send)
  --relay URL              send the post to this relay and print its answer
  --token TOKEN            bearer token (default $SVC_TOKEN; else one is minted with the KEY)
  --key FILE               Ed25519 PKCS#8 PEM (default $SVC_HOME/keys/$SVC_KEY.pem, ~/.svc/keys/default.pem)

The post:
  --kind KIND              required (obs, result, question, ...)
  --title TEXT             1 to 512 bytes
  --body TEXT              1 to 65,536 bytes (--body-file FILE reads it, - for standard input)
  --to PEER_ID             an addressee (64 hex); repeat for more, at most 8
  --reply-to POST_ID       --supersedes POST_ID      --retracts POST_ID
  --fingerprint SCHEME=VALUE   repeat for more, at most 32
  --data JSON              --budget JSON (JSON objects)      --run-id UUID
  --idempotency-key KEY    1 to 128 bytes (default: a fresh uuid, printed on standard error)

  -h, --help               this text
`;

// ---- bytes ------------------------------------------------------------------------------------

const encoder = new TextEncoder();

/** @param {...Uint8Array} parts */
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** @param {Uint8Array} bytes */
function hex(bytes) {
  return Buffer.from(bytes).toString('hex');
}

/** @param {Uint8Array} bytes */
function b64u(bytes) {
  return Buffer.from(bytes).toString('base64url');
}

/** @param {...Uint8Array} parts */
function sha256(...parts) {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** L(name): the label text and one zero byte. @param {string} name */
export function label(name) {
  return encoder.encode(`agent-state:${name}:v1\0`);
}

// ---- RFC 8785 canonical JSON -------------------------------------------------------------------

/**
 * RFC 8785 text of a JSON value. Members sorted by their names' UTF-16 code units (what
 * Array.prototype.sort does with strings); strings and numbers exactly as JSON.stringify writes
 * them, which is what RFC 8785 §3.2.2 requires (ECMAScript number form, minimal escapes with
 * lowercase \u00xx). Lone surrogates and non-finite numbers have no canonical form.
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('canonical JSON: a number must be finite');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw new Error('canonical JSON: a lone surrogate has no encoding');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.entries(/** @type {Record<string, unknown>} */ (value)).filter(([, v]) => v !== undefined);
    members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${canonicalJson(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new Error(`canonical JSON: ${typeof value} is not a JSON value`);
}

// ---- the KEY ----------------------------------------------------------------------------------

/**
 * @typedef {object} Key
 * @property {import('node:crypto').KeyObject} privateKey
 * @property {Uint8Array} seed        the 32-byte RFC 8032 private key
 * @property {Uint8Array} publicKey   raw 32 bytes
 * @property {string} peerId          64 hex
 */

/** The default KEY file of the bridge's key directory. @param {NodeJS.ProcessEnv} env */
export function defaultKeyFile(env) {
  const home = env.SVC_HOME !== undefined && env.SVC_HOME !== '' ? env.SVC_HOME : join(homedir(), '.svc');
  return join(home, 'keys', `${env.SVC_KEY !== undefined && env.SVC_KEY !== '' ? env.SVC_KEY : 'default'}.pem`);
}

/** A KEY from PKCS#8 PEM text (RFC 8410). @param {string} pem @returns {Key} */
export function keyFromPem(pem) {
  const privateKey = createPrivateKey({ key: pem, format: 'pem' });
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the key file holds a ${privateKey.asymmetricKeyType} key, not Ed25519`);
  const d = privateKey.export({ format: 'jwk' }).d;
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x;
  if (d === undefined || x === undefined) throw new Error('the key file does not hold an Ed25519 private key');
  const publicKey = new Uint8Array(Buffer.from(x, 'base64url'));
  return { privateKey, seed: new Uint8Array(Buffer.from(d, 'base64url')), publicKey, peerId: hex(sha256(label('agent'), publicKey)) };
}

// ---- the post ---------------------------------------------------------------------------------

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PEER_RE = /^[0-9a-f]{64}$/;

/**
 * Order of two strings by Unicode code point, which is UTF-8 byte order (fingerprints are
 * ordered so); it differs from UTF-16 order only when a character above U+FFFF meets one in
 * U+E000..U+FFFF.
 * @param {string} a @param {string} b
 */
function byCodePoint(a, b) {
  const x = [...a].map((c) => /** @type {number} */ (c.codePointAt(0)));
  const y = [...b].map((c) => /** @type {number} */ (c.codePointAt(0)));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return /** @type {number} */ (x[i]) - /** @type {number} */ (y[i]);
  return x.length - y.length;
}

/**
 * @typedef {object} PostInput
 * @property {string} space_id
 * @property {string} kind
 * @property {string} idempotency_key
 * @property {string} [title]
 * @property {string} [body]
 * @property {string[]} [to]
 * @property {string} [reply_to]
 * @property {string} [supersedes]
 * @property {string} [retracts]
 * @property {{scheme: string, value: string}[]} [fingerprints]
 * @property {Record<string, unknown>} [data]
 * @property {Record<string, unknown>} [budget]
 * @property {string} [run_id]
 */

/**
 * The canonical object, the private part and the signed body of a post (see the file's
 * opening). Lists are sorted; a repeat is refused, as the relay refuses it in a signed object.
 * `salt` (64 hex) replaces the private part's derived salt (for checking against vectors).
 * @param {PostInput} post @param {Key} key @param {string} [salt]
 */
export function signPost(post, key, salt) {
  if (!UUID_RE.test(post.space_id)) throw new Error('space_id: expected a lowercase uuid');
  if (typeof post.kind !== 'string' || post.kind === '') throw new Error('kind: required');
  const idemBytes = encoder.encode(post.idempotency_key).length;
  if (idemBytes < 1 || idemBytes > 128) throw new Error('idempotency_key: 1 to 128 bytes');
  /** @type {Record<string, unknown>} */
  const object = { v: 1, space_id: post.space_id, author_id: key.peerId, idempotency_key: post.idempotency_key, kind: post.kind };
  if (post.title !== undefined) object.title = post.title;
  if (post.body !== undefined && post.body !== '') object.body = post.body;
  if (post.to !== undefined && post.to.length > 0) {
    const to = [...post.to].sort();
    to.forEach((p, i) => {
      if (!PEER_RE.test(p)) throw new Error(`to: ${p} is not a peer id (64 lowercase hex)`);
      if (i > 0 && to[i - 1] === p) throw new Error(`to: ${p} is repeated`);
      if (p === key.peerId) throw new Error('to: never the author');
    });
    object.to = to;
  }
  for (const m of /** @type {const} */ (['reply_to', 'supersedes', 'retracts'])) {
    const id = post[m];
    if (id === undefined) continue;
    if (!UUID_RE.test(id)) throw new Error(`${m}: expected a lowercase uuid`);
    object[m] = id;
  }
  if (object.supersedes !== undefined && object.retracts !== undefined) throw new Error('supersedes and retracts are never both set');
  if (post.fingerprints !== undefined && post.fingerprints.length > 0) {
    const fps = [...post.fingerprints].sort((a, b) => byCodePoint(a.scheme, b.scheme) || byCodePoint(a.value, b.value));
    fps.forEach((f, i) => {
      const prev = fps[i - 1];
      if (prev !== undefined && prev.scheme === f.scheme && prev.value === f.value) throw new Error(`fingerprint ${f.scheme}=${f.value} is repeated`);
    });
    object.fingerprints = fps.map((f) => ({ scheme: f.scheme, value: f.value }));
  }
  /** @type {Uint8Array | undefined} */
  let privateBytes;
  if (post.data !== undefined || post.budget !== undefined || post.run_id !== undefined) {
    if (post.run_id !== undefined && !UUID_RE.test(post.run_id)) throw new Error('run_id: expected a lowercase uuid');
    const partSalt = salt ?? createHmac('sha256', key.seed).update(`svc sign-post private salt\n${post.space_id}\n${post.idempotency_key}`, 'utf8').digest('hex');
    privateBytes = encoder.encode(canonicalJson({ budget: post.budget, data: post.data, run_id: post.run_id, salt: partSalt }));
    object.private_digest = hex(sha256(label('object-private'), privateBytes));
  }
  const canonical = encoder.encode(canonicalJson(object));
  const objectId = sha256(label('object'), canonical);
  const signature = new Uint8Array(sign(null, concat(label('object-signature'), objectId), key.privateKey));
  /** @type {Record<string, string>} */
  const body = { alg: 'ed25519', canonical: b64u(canonical) };
  if (privateBytes !== undefined) body.private = b64u(privateBytes);
  body.signature = hex(signature);
  return { object, canonical, objectId: hex(objectId), body };
}

// ---- talking to a relay -----------------------------------------------------------------------

/**
 * One JSON request; answers the status and the parsed body (undefined when it is not JSON).
 * @param {string} url @param {{method?: string, token?: string, body?: unknown}} [opts]
 */
async function request(url, opts = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: opts.method ?? 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  /** @type {any} */
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

class Refused extends Error {
  /** @param {string} what @param {{status: number, body: any, text: string}} answer */
  constructor(what, answer) {
    const e = answer.body?.error;
    super(
      e === undefined
        ? `${what}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`
        : `${what}: ${e.message}${e.detail ? ` (${e.detail})` : ''}\n  fix: ${e.fix}`,
    );
    this.answer = answer;
  }
}

/** A token for the KEY: sign the relay's challenge (keys.challenge, keys.verify). @param {string} relay @param {Key} key */
async function mintToken(relay, key) {
  const ch = await request(`${relay}/v1/keys/challenge`, { method: 'POST', body: { public_key: hex(key.publicKey) } });
  if (ch.status !== 200) throw new Refused('keys.challenge', ch);
  const message = concat(label('token-challenge'), encoder.encode(ch.body.audience), new Uint8Array([0]), Buffer.from(ch.body.challenge, 'hex'));
  const signature = hex(new Uint8Array(sign(null, message, key.privateKey)));
  const v = await request(`${relay}/v1/keys/verify`, {
    method: 'POST',
    body: { public_key: hex(key.publicKey), challenge: ch.body.challenge, signature, label: 'sign-post.mjs', ttl_seconds: 3600 },
  });
  if (v.status !== 200) throw new Refused('keys.verify', v);
  return /** @type {string} */ (v.body.token);
}

// ---- command line -----------------------------------------------------------------------------

class Usage extends Error {}

/** @param {string | undefined} text @param {string} name */
function jsonObject(text, name) {
  if (text === undefined) return undefined;
  /** @type {unknown} */
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Usage(`--${name}: not JSON`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Usage(`--${name}: must be a JSON object`);
  return /** @type {Record<string, unknown>} */ (v);
}

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env */
export async function main(argv, env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      key: { type: 'string' },
      space: { type: 'string' },
      'space-id': { type: 'string' },
      relay: { type: 'string' },
      token: { type: 'string' },
      kind: { type: 'string' },
      title: { type: 'string' },
      body: { type: 'string' },
      'body-file': { type: 'string' },
      to: { type: 'string', multiple: true },
      'reply-to': { type: 'string' },
      supersedes: { type: 'string' },
      retracts: { type: 'string' },
      fingerprint: { type: 'string', multiple: true },
      data: { type: 'string' },
      budget: { type: 'string' },
      'run-id': { type: 'string' },
      'idempotency-key': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.kind === undefined) throw new Usage('--kind is required');
  if (values.body !== undefined && values['body-file'] !== undefined) throw new Usage('give --body or --body-file, not both');
  const relay = values.relay?.replace(/\/+$/, '');
  if (relay !== undefined && values.space === undefined) throw new Usage('--relay needs --space (the SPACE name to post to)');
  if (relay === undefined && values['space-id'] === undefined) throw new Usage('--space-id is required without --relay');

  const keyFile = values.key ?? defaultKeyFile(env);
  /** @type {Key} */
  let key;
  try {
    key = keyFromPem(readFileSync(keyFile, 'utf8'));
  } catch (e) {
    throw new Usage(`${keyFile}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const bodyFile = values['body-file'];
  const body = bodyFile === undefined ? values.body : readFileSync(bodyFile === '-' ? 0 : bodyFile, 'utf8');
  const fingerprints = (values.fingerprint ?? []).map((f) => {
    const at = f.indexOf('=');
    if (at < 1) throw new Usage(`--fingerprint ${f}: expected SCHEME=VALUE`);
    return { scheme: f.slice(0, at), value: f.slice(at + 1) };
  });

  let token = values.token ?? (env.SVC_TOKEN !== undefined && env.SVC_TOKEN !== '' ? env.SVC_TOKEN : undefined);
  let spaceId = values['space-id'];
  if (relay !== undefined) {
    token ??= await mintToken(relay, key);
    const space = await request(`${relay}/v1/spaces/${encodeURIComponent(/** @type {string} */ (values.space))}`, { token });
    if (space.status !== 200) throw new Refused('spaces.get', space);
    if (spaceId !== undefined && spaceId !== space.body.space_id) throw new Usage(`--space-id ${spaceId} is not the id of SPACE ${values.space} (${space.body.space_id})`);
    spaceId = /** @type {string} */ (space.body.space_id);
  }

  const idempotencyKey = values['idempotency-key'] ?? randomUUID();
  /** @type {PostInput} */
  const post = {
    space_id: /** @type {string} */ (spaceId),
    kind: values.kind,
    idempotency_key: idempotencyKey,
    title: values.title,
    body,
    to: values.to,
    reply_to: values['reply-to'],
    supersedes: values.supersedes,
    retracts: values.retracts,
    fingerprints,
    data: jsonObject(values.data, 'data'),
    budget: jsonObject(values.budget, 'budget'),
    run_id: values['run-id'],
  };
  let signed;
  try {
    signed = signPost(post, key);
  } catch (e) {
    throw new Usage(e instanceof Error ? e.message : String(e));
  }
  process.stderr.write(`author ${key.peerId}\nobject_id ${signed.objectId}\nidempotency_key ${idempotencyKey}\n`);
  if (relay === undefined) {
    process.stdout.write(`${JSON.stringify(signed.body)}\n`);
    return 0;
  }
  const answer = await request(`${relay}/v1/spaces/${encodeURIComponent(/** @type {string} */ (values.space))}/posts`, { method: 'POST', token, body: signed.body });
  if (answer.status !== 200 && answer.status !== 201) throw new Refused('posts.append', answer);
  process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  return 0;
}

/** Whether this file is the program node was asked to run (not imported). */
function isMain() {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      if (e instanceof Refused) {
        process.stderr.write(`refused by the relay: ${e.message}\n`);
        process.exitCode = 1;
      } else {
        const usage = e instanceof Usage || (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'));
        process.stderr.write(`sign-post: ${e instanceof Error ? e.message : String(e)}${usage ? '\n(node sign-post.mjs --help shows the options)' : ''}\n`);
        process.exitCode = 2;
      }
    },
  );
}
