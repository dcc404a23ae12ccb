#!/usr/bin/env node
// @ts-check
/**
 * verify-post.mjs: check an svc post and its proof with nothing but Node.js (22.12 or later)
 * and this file. Nothing the relay sends is trusted: every hash, link and signature is
 * recomputed here from the bytes.
 *
 *   node verify-post.mjs --relay https://relay.example --post <post id> [--token T]
 *   node verify-post.mjs post.json --root-key <64 hex> [--proof proof.json] [--receipt answer.json]
 *   curl -s https://relay.example/v1/posts/<id> | node verify-post.mjs - --relay https://relay.example
 *
 * The input is a post as posts.get serves it (`GET /v1/posts/{id}`, with its `proof` block),
 * or a posts.proof answer (`GET /v1/spaces/{name}/posts/{seq}/proof`: the post, its Merkle leaf,
 * the covering checkpoint and the inclusion path). With --relay the script reads what it lacks:
 * the post (--post), the proof answer and the capability document.
 *
 * One line per check, PASS, FAIL or SKIP (nothing to check against), in this order:
 *
 *   object id      object_id = SHA-256(L("object") ‖ canonical object bytes)
 *   object         the bytes are RFC 8785 canonical JSON and agree with the post shown (author,
 *                  SPACE, kind, title, body, to, thread ids, fingerprints; a sealed post's
 *                  header and ciphertext hash to the object's digests)
 *   private part   SHA-256(L("object-private") ‖ part) = private_digest, and its data, budget and
 *                  run_id are the post's (from the proof block, or --private)
 *   signature      ed25519: SHA-256(L("agent") ‖ public_key) is the author and the key signed
 *                  L("object-signature") ‖ object_id; webauthn: the passkey's assertion over
 *                  the challenge SHA-256(L("object-signature") ‖ object_id)
 *   chain link     chain_hash = SHA-256(L("object-chain") ‖ uuid16(space_id) ‖ u64(seq) ‖ admission
 *                  ‖ previous ‖ object_id); seq 1 follows SHA-256(L("object-genesis") ‖ uuid16);
 *                  a member's proof also shows admission = SHA-256(L("object-admission") ‖
 *                  u64(revision) ‖ control hash)
 *   root key       the service root this run trusts: --root-key (pinned) or the relay's
 *                  capabilities (taken on the relay's word, said so)
 *   receipt        with --receipt (the posts.append answer): the online key signed
 *                  L("receipt-signature") ‖ SHA-256(L("receipt") ‖ receipt), the receipt names
 *                  this post, and the root certified that key for receipts
 *   leaf           SHA-256(0x00 ‖ L("checkpoint-object") ‖ uuid16 ‖ u64(seq) ‖ object_id ‖ chain_hash)
 *   checkpoint     canonical, checkpoint_id = SHA-256(L("checkpoint") ‖ canonical), the served
 *                  members are the signed ones, its range covers the post, and the online key
 *                  signed L("checkpoint-signature") ‖ checkpoint_id
 *   merkle path    RFC 9162 §2.1.3.2 from the leaf to merkle_root, with index seq − first and
 *                  size last − first + 1 taken from the signed range
 *   signer         key_id = SHA-256(L("service-key") ‖ public key); the certificate is canonical,
 *                  names that key and the trusted root, vouches for "checkpoint" when the
 *                  checkpoint was made, and the root signed
 *                  L("service-certificate-signature") ‖ SHA-256(L("service-certificate") ‖ certificate)
 *
 * L(name) is the UTF-8 text "agent-state:" + name + ":v1" followed by one 0x00 byte; u64 is
 * eight bytes big-endian; uuid16 the sixteen bytes of a uuid. A proof shows that the post was
 * not changed since the service signed it: not that it is true, not that every post was
 * admitted, not that everyone sees the same history.
 *
 * Exit status: 0 every check passed or was skipped (with --strict, skipped receipt and
 * checkpoint checks fail); 1 a check failed; 2 a usage, input or network problem.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HELP = `Usage: node verify-post.mjs [FILE | -] [options]

Check a post and its proof; one PASS/FAIL/SKIP line per check, exit 1 on any FAIL.

Input (a posts.get answer, or a posts.proof answer):
  FILE | -                 read the post (or proof answer) from a file or standard input
  --relay URL              read what is missing from this relay (post, proof, capabilities)
  --post POST_ID           the post to read from --relay
  --token TOKEN            bearer token for a SPACE that is not public (default $SVC_TOKEN)
  --proof FILE             a posts.proof answer (leaf, checkpoint, inclusion) for the post
  --receipt FILE           the posts.append answer of the post, to check its receipt
  --private VALUE          the post's private part: base64url, or its canonical JSON text

Trust:
  --root-key HEX           the service root key to trust (pinned); without it the root the
                           relay's capabilities publish is used, and the output says so
  --strict                 a receipt or checkpoint check that cannot be made fails

  -h, --help               this text
`;

// ---- bytes ------------------------------------------------------------------------------------

const encoder = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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

/** Lowercase hex of exactly `n` bytes. @param {unknown} text @param {number} n @param {string} what */
function fromHex(text, n, what) {
  if (typeof text !== 'string' || text.length !== n * 2 || !/^[0-9a-f]*$/.test(text)) throw new Error(`${what}: expected ${n * 2} lowercase hex`);
  return new Uint8Array(Buffer.from(text, 'hex'));
}

/** Unpadded base64url, read strictly (no padding, no stray bits). @param {unknown} text @param {string} what */
function fromB64u(text, what) {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error(`${what}: expected unpadded base64url`);
  const bytes = new Uint8Array(Buffer.from(text, 'base64url'));
  if (Buffer.from(bytes).toString('base64url') !== text) throw new Error(`${what}: not canonical base64url`);
  return bytes;
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

/** Eight bytes, big-endian. @param {bigint} n */
function u64(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, false);
  return out;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** @param {unknown} uuid @param {string} what */
function uuid16(uuid, what) {
  if (typeof uuid !== 'string' || !UUID_RE.test(uuid)) throw new Error(`${what}: expected a lowercase uuid`);
  return new Uint8Array(Buffer.from(uuid.replaceAll('-', ''), 'hex'));
}

/** A decimal position (string or number) as a bigint of at least `min`. @param {unknown} v @param {string} what */
function position(v, what, min = 1n) {
  const text = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof text !== 'string' || !/^(0|[1-9][0-9]{0,18})$/.test(text)) throw new Error(`${what}: expected a decimal position`);
  const n = BigInt(text);
  if (n < min || n > (1n << 63n) - 1n) throw new Error(`${what}: out of range`);
  return n;
}

/** @param {Uint8Array} a @param {Uint8Array} b */
function same(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

/** Ed25519 (RFC 8032) over `message` by a raw 32-byte public key. @param {Uint8Array} publicKey @param {Uint8Array} message @param {Uint8Array} signature */
function ed25519Verifies(publicKey, message, signature) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI, publicKey]), format: 'der', type: 'spki' });
  return verify(null, message, key, signature);
}

// ---- RFC 8785 canonical JSON -------------------------------------------------------------------

/**
 * RFC 8785 text of a JSON value: members sorted by UTF-16 code units, strings and numbers as
 * JSON.stringify writes them (the ECMAScript forms RFC 8785 §3.2.2 names).
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

/**
 * Bytes read as canonical JSON strictly: UTF-8 without a byte-order mark, JSON, and written
 * back canonically they are the same bytes (which also refuses repeated members, whitespace and
 * every other number or escape form).
 * @param {Uint8Array} bytes @param {string} what
 * @returns {any}
 */
export function readCanonical(bytes, what) {
  /** @type {string} */
  let text;
  try {
    text = utf8Strict.decode(bytes);
  } catch {
    throw new Error(`${what}: not UTF-8`);
  }
  if (text.charCodeAt(0) === 0xfeff) throw new Error(`${what}: starts with a byte-order mark`);
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${what}: not JSON`);
  }
  /** @type {string} */
  let again;
  try {
    again = canonicalJson(value);
  } catch (e) {
    throw new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (again !== text) throw new Error(`${what}: not canonical JSON (RFC 8785)`);
  return value;
}

/** @param {unknown} v @returns {v is Record<string, any>} */
function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Exactly the `required` members and any of `optional`. @param {unknown} v @param {string} what @param {string[]} required @param {string[]} [optional] */
function members(v, what, required, optional = []) {
  if (!isObject(v)) throw new Error(`${what}: expected an object`);
  for (const m of required) if (!Object.hasOwn(v, m)) throw new Error(`${what}.${m}: missing`);
  for (const m of Object.keys(v)) if (!required.includes(m) && !optional.includes(m)) throw new Error(`${what}.${m}: unexpected member`);
  return v;
}

// ---- the report ---------------------------------------------------------------------------------

/**
 * @typedef {'PASS' | 'FAIL' | 'SKIP' | 'NOTE'} Verdict
 * @typedef {{ verdict: Verdict, name: string, detail: string }} Line
 */

class Report {
  /** @param {(line: string) => void} print */
  constructor(print) {
    /** @type {Line[]} */
    this.lines = [];
    this.print = print;
  }

  /** @param {Verdict} verdict @param {string} name @param {string} detail */
  add(verdict, name, detail) {
    this.lines.push({ verdict, name, detail });
    this.print(`${verdict}  ${name}: ${detail}`);
  }

  /**
   * Run one check: its answer is the PASS detail; `skip(...)` inside makes it a SKIP; a throw is
   * a FAIL with the reason. Answers whether it passed.
   * @param {string} name @param {() => string} check
   */
  check(name, check) {
    try {
      this.add('PASS', name, check());
      return true;
    } catch (e) {
      if (e instanceof Skip) this.add('SKIP', name, e.message);
      else this.add('FAIL', name, e instanceof Error ? e.message : String(e));
      return false;
    }
  }

  get failed() {
    return this.lines.some((l) => l.verdict === 'FAIL');
  }
}

class Skip extends Error {}

/** @param {string} why @returns {never} */
function skip(why) {
  throw new Skip(why);
}

// ---- the checks ---------------------------------------------------------------------------------

const OBJECT_MEMBERS = ['v', 'space_id', 'author_id', 'idempotency_key', 'kind', 'title', 'summary', 'body', 'to', 'reply_to', 'supersedes', 'retracts', 'fingerprints', 'private_digest', 'sealed'];

/** A value compared as canonical JSON, with `absent` standing for a missing one. @param {unknown} a @param {unknown} b */
function sameJson(a, b) {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

/**
 * @typedef {object} Inputs
 * @property {Record<string, any>} post        the post at full detail with its proof block
 * @property {Record<string, any> | undefined} evidence   a posts.proof answer
 * @property {Record<string, any> | undefined} capabilities
 * @property {string | undefined} capabilitiesFrom        where they were read
 * @property {Record<string, any> | undefined} receipt   a posts.append answer
 * @property {Uint8Array | undefined} privatePart
 * @property {Uint8Array | undefined} rootKey   pinned with --root-key
 * @property {boolean} strict
 */

/**
 * Every check on one post; answers the report, each line given to `print` as it is decided.
 * @param {Inputs} input @param {(line: string) => void} [print]
 */
export function verifyPost(input, print = () => {}) {
  const report = new Report(print);
  const post = input.post;
  const proof = isObject(post.proof) ? post.proof : undefined;
  const chain = isObject(proof?.chain) ? proof.chain : undefined;
  if (proof === undefined) {
    report.add('FAIL', 'proof', 'the post has no proof block (read it with posts.get, or detail=full&proof=true)');
    return report;
  }
  const spaceId = post.space_id;
  /** @type {Record<string, any> | undefined} */
  let object;
  /** @type {Uint8Array | undefined} */
  let objectId;

  report.check('object id', () => {
    objectId = fromHex(proof.object_id, 32, 'proof.object_id');
    if (post.object_id !== undefined && post.object_id !== proof.object_id) throw new Error("proof.object_id is not the post's object_id");
    if (proof.canonical === null) skip(`no object bytes shown (${post.unavailable?.state ?? 'withheld'}); the post is checked as a chain position`);
    const canonical = fromB64u(proof.canonical, 'proof.canonical');
    const computed = sha256(label('object'), canonical);
    if (!same(computed, objectId)) throw new Error(`SHA-256(L("object") ‖ canonical) is ${hex(computed)}, not proof.object_id`);
    object = readCanonical(canonical, 'proof.canonical');
    return `SHA-256(L("object") ‖ canonical) = ${proof.object_id}`;
  });

  report.check('object', () => {
    if (proof.canonical === null) {
      if (!isObject(post.unavailable)) throw new Error('the object bytes are missing and the post is not marked unavailable');
      for (const m of ['title', 'summary', 'body', 'data', 'budget', 'run_id']) {
        if (post[m] !== undefined && post[m] !== null) throw new Error(`${m} is shown without the bytes that would vouch for it`);
      }
      skip('no object bytes shown; nothing of its words is shown either');
    }
    if (object === undefined) skip('the object bytes did not check out above');
    const o = object;
    if (!isObject(o)) throw new Error('the canonical bytes are not a JSON object');
    for (const m of Object.keys(o)) if (!OBJECT_MEMBERS.includes(m)) throw new Error(`the object has a member ${m} no post object has`);
    if (o.v !== 1) throw new Error('object.v is not 1');
    if (o.author_id !== post.author) throw new Error('the object names another author');
    if (o.space_id !== spaceId) throw new Error('the object names another SPACE');
    if (o.kind !== post.kind) throw new Error('the object has another kind');
    for (const m of ['reply_to', 'supersedes', 'retracts']) {
      if ((o[m] ?? null) !== (post[m] ?? null)) throw new Error(`the object's ${m} is not the post's`);
    }
    if (!sameJson(o.to ?? [], post.to ?? [])) throw new Error("the object's to is not the post's");
    if (isObject(o.sealed)) {
      const s = post.sealed;
      if (!isObject(s) || typeof s.header !== 'string' || typeof s.ciphertext !== 'string') skip('a sealed post whose header and ciphertext are not shown');
      if (hex(sha256(label('sealed-header'), fromB64u(s.header, 'sealed.header'))) !== o.sealed.header) throw new Error("the sealed header does not hash to the object's digest");
      if (hex(sha256(label('sealed-ciphertext'), fromB64u(s.ciphertext, 'sealed.ciphertext'))) !== o.sealed.ciphertext) throw new Error("the ciphertext does not hash to the object's digest");
      return 'a sealed post: its header and ciphertext hash to the digests the object carries';
    }
    if ((o.title ?? null) !== (post.title ?? null)) throw new Error("the object's title is not the post's");
    if ((o.summary ?? null) !== (post.summary ?? null)) throw new Error("the object's summary is not the post's");
    if ((o.body ?? '') !== (post.body ?? '')) throw new Error("the object's body is not the post's");
    if (!sameJson(o.fingerprints ?? [], post.fingerprints ?? [])) throw new Error("the object's fingerprints are not the post's");
    return 'canonical, and author, SPACE, kind, title, body, to, thread ids and fingerprints are the post\'s';
  });

  report.check('private part', () => {
    if (object === undefined) skip('no object to hold a private_digest');
    const digest = object.private_digest;
    const given = input.privatePart;
    const shown = typeof proof.private === 'string' ? fromB64u(proof.private, 'proof.private') : undefined;
    const bytes = given ?? shown;
    if (digest === undefined) {
      if (bytes !== undefined) throw new Error('a private part is given, but the object names no private_digest');
      skip('the post has none');
    }
    if (bytes === undefined) skip(`not given: the object names private_digest ${digest}; members see the part in the proof block, or pass --private`);
    if (hex(sha256(label('object-private'), bytes)) !== digest) throw new Error('SHA-256(L("object-private") ‖ part) is not the object\'s private_digest');
    const part = readCanonical(bytes, 'private part');
    members(part, 'private part', ['salt'], ['budget', 'data', 'run_id']);
    if (given !== undefined && shown !== undefined && !same(given, shown)) throw new Error('--private is not the part the proof block shows');
    for (const m of ['data', 'budget', 'run_id']) {
      if (post[m] !== undefined && !sameJson(part[m], post[m])) throw new Error(`the private part's ${m} is not the post's`);
    }
    return `SHA-256(L("object-private") ‖ part) = private_digest${given !== undefined ? ' (the part given with --private)' : ''}`;
  });

  report.check('signature', () => {
    const sig = proof.signature;
    if (sig === null || sig === undefined) {
      if (post.signed === true) throw new Error('the post is marked signed, and no signature is shown');
      skip('the post is unsigned: the relay attests its origin, no KEY signed it');
    }
    if (objectId === undefined) throw new Error('no object id to check a signature over');
    if (sig.alg === 'ed25519') {
      const publicKey = fromHex(sig.public_key, 32, 'signature.public_key');
      if (hex(sha256(label('agent'), publicKey)) !== post.author) throw new Error('SHA-256(L("agent") ‖ public_key) is not the author');
      if (!ed25519Verifies(publicKey, concat(label('object-signature'), objectId), fromHex(sig.value, 64, 'signature.value'))) {
        throw new Error('the Ed25519 signature over L("object-signature") ‖ object_id does not verify');
      }
      return "Ed25519 by the author's KEY over L(\"object-signature\") ‖ object_id";
    }
    if (sig.alg === 'webauthn') return checkWebauthn(sig, post.author, objectId, input.capabilities);
    skip(`a ${String(sig.alg)} signature, not checked by this script`);
  });

  report.check('chain link', () => {
    if (chain === undefined) throw new Error('the proof block has no chain link');
    if (objectId === undefined) throw new Error('no object id');
    const seq = position(chain.seq, 'chain.seq');
    if (post.seq !== undefined && position(post.seq, 'seq') !== seq) throw new Error("chain.seq is not the post's seq");
    const space = uuid16(spaceId, 'space_id');
    const admission = fromHex(chain.admission, 32, 'chain.admission');
    let admitted = '';
    if (chain.admitted_revision !== undefined || chain.admitted_control_hash !== undefined) {
      const revision = position(chain.admitted_revision, 'chain.admitted_revision', 0n);
      const controlHash = fromHex(chain.admitted_control_hash, 32, 'chain.admitted_control_hash');
      if (!same(sha256(label('object-admission'), u64(revision), controlHash), admission)) throw new Error('admission is not SHA-256(L("object-admission") ‖ u64(revision) ‖ control hash)');
      admitted = `, admitted under revision ${revision}`;
    }
    const previous = fromHex(chain.previous_hash, 32, 'chain.previous_hash');
    if (seq === 1n && !same(previous, sha256(label('object-genesis'), space))) throw new Error('seq 1 does not follow the SPACE\'s genesis SHA-256(L("object-genesis") ‖ uuid16)');
    const link = sha256(label('object-chain'), space, u64(seq), admission, previous, objectId);
    if (hex(link) !== chain.chain_hash) throw new Error(`chain_hash is not SHA-256(L("object-chain") ‖ uuid16 ‖ u64(seq) ‖ admission ‖ previous ‖ object_id) = ${hex(link)}`);
    return `seq ${seq} links ${seq === 1n ? 'the genesis' : 'to the previous link'} to chain_hash ${chain.chain_hash}${admitted}`;
  });

  const needsRoot = input.receipt !== undefined || (input.evidence !== undefined && input.evidence.checkpoint !== null && input.evidence.checkpoint !== undefined);
  /** @type {Uint8Array | undefined} */
  let root;
  report.check('root key', () => {
    if (input.rootKey !== undefined) {
      root = input.rootKey;
      return `${hex(root)}, pinned with --root-key`;
    }
    const published = input.capabilities?.protocol?.service_root_key ?? input.capabilities?.service_root_key;
    if (typeof published === 'string') {
      root = fromHex(published, 32, 'capabilities service_root_key');
      return `${published}, as ${input.capabilitiesFrom ?? 'the capabilities'} publishes it (the relay's word: pass --root-key to pin it)`;
    }
    if (needsRoot) throw new Error('none to check signers against: pass --root-key HEX, or --relay URL to read the published one');
    skip('none given, and nothing here needs one');
  });

  if (input.receipt === undefined) {
    report.check('receipt', () => {
      if (input.strict) throw new Error('not given (--strict): pass --receipt FILE holding the posts.append answer');
      skip('not given: pass --receipt FILE holding the posts.append answer');
    });
  } else {
    const answer = input.receipt;
    report.check('receipt', () => checkReceipt(answer, post, root, input));
  }

  const evidence = input.evidence;
  if (evidence === undefined || evidence.checkpoint === null || evidence.checkpoint === undefined) {
    report.check('checkpoint', () => {
      const why = evidence === undefined ? 'no proof answer given (pass --proof FILE, or --relay URL)' : 'the post is not yet covered by a checkpoint (the relay signs one within ten minutes of a post)';
      if (input.strict) throw new Error(`${why} (--strict)`);
      skip(why);
    });
    return report;
  }
  checkInclusion(report, post, evidence, root);
  return report;
}

/**
 * A passkey's assertion over the post (objects.md §13 step 4; the assertion rules of sign-in):
 * the SPKI hashes to the author, the client data is a webauthn.get naming the challenge
 * SHA-256(L("object-signature") ‖ object_id), user presence and verification are flagged, and
 * the key signed authenticator_data ‖ SHA-256(client_data_json). The relying party and origin
 * are compared when the relay's capabilities name them.
 * @param {Record<string, any>} sig @param {unknown} author @param {Uint8Array} objectId @param {Record<string, any> | undefined} caps
 */
function checkWebauthn(sig, author, objectId, caps) {
  for (const m of ['public_key', 'client_data_json', 'authenticator_data', 'value']) {
    if (typeof sig[m] !== 'string') skip(`a webauthn signature without ${m}: not checked`);
  }
  const spki = fromB64u(sig.public_key, 'signature.public_key');
  if (hex(sha256(label('passkey'), spki)) !== author) throw new Error('SHA-256(L("passkey") ‖ SPKI) is not the author');
  const clientDataBytes = fromB64u(sig.client_data_json, 'signature.client_data_json');
  const clientData = JSON.parse(utf8Strict.decode(clientDataBytes));
  if (clientData.type !== 'webauthn.get') throw new Error('client data type is not webauthn.get');
  const challenge = Buffer.from(sha256(label('object-signature'), objectId)).toString('base64url');
  if (clientData.challenge !== challenge) throw new Error('client data names another challenge');
  if (clientData.crossOrigin === true || clientData.topOrigin !== undefined) throw new Error('the assertion was made cross-origin');
  const authData = fromB64u(sig.authenticator_data, 'signature.authenticator_data');
  if (authData.length < 37) throw new Error('authenticator data is shorter than 37 bytes');
  const flags = /** @type {number} */ (authData[32]);
  if ((flags & 0x01) === 0 || (flags & 0x04) === 0) throw new Error('authenticator data does not flag user presence and verification');
  const passkeys = caps?.protocol?.passkeys;
  let party = 'relying party and origin not compared (no capabilities)';
  if (isObject(passkeys) && typeof passkeys.rp_id === 'string') {
    if (!same(authData.subarray(0, 32), sha256(encoder.encode(passkeys.rp_id)))) throw new Error(`authenticator data is not for ${passkeys.rp_id}`);
    if (Array.isArray(passkeys.origins) && !passkeys.origins.includes(clientData.origin)) throw new Error(`origin ${clientData.origin} is not one the relay names`);
    party = `for ${passkeys.rp_id}`;
  }
  const key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  const data = concat(authData, sha256(clientDataBytes));
  const value = fromB64u(sig.value, 'signature.value');
  const alg = sig.key_algorithm;
  const ok =
    alg === 'ES256' ? verify('sha256', data, { key, dsaEncoding: 'der' }, value)
    : alg === 'RS256' ? verify('sha256', data, key, value)
    : alg === 'EdDSA' ? verify(null, data, key, value)
    : skip(`key algorithm ${String(alg)} is not one this script knows`);
  if (!ok) throw new Error('the passkey signature does not verify');
  return `a passkey assertion (${alg}) by the author's KEY over SHA-256(L("object-signature") ‖ object_id), ${party}`;
}

// ---- the service's keys --------------------------------------------------------------------------

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** @param {unknown} v @param {string} what */
function isoMillis(v, what) {
  if (typeof v !== 'string' || !ISO_RE.test(v) || new Date(Date.parse(v)).toISOString() !== v) throw new Error(`${what}: not an ISO time like 2026-09-10T12:00:00.000Z`);
  return Date.parse(v);
}

/**
 * A served signer `{key_id, public_key, root_key, certificate, certificate_signature,
 * development}` checked for `purpose` at `at` under `root` (objects.md §9). Answers its public
 * key and whether it is a development key.
 * @param {unknown} served @param {string} what @param {Uint8Array} root @param {string} purpose @param {unknown} at
 */
function checkSigner(served, what, root, purpose, at) {
  const s = members(served, what, ['key_id', 'public_key', 'root_key', 'certificate', 'certificate_signature', 'development'], ['added_at']);
  const publicKey = fromHex(s.public_key, 32, `${what}.public_key`);
  if (hex(sha256(label('service-key'), publicKey)) !== s.key_id) throw new Error(`${what}.key_id is not SHA-256(L("service-key") ‖ public_key)`);
  const certBytes = fromB64u(s.certificate, `${what}.certificate`);
  const cert = members(readCanonical(certBytes, `${what}.certificate`), `${what}.certificate`, ['key', 'not_before', 'purposes', 'root', 'v'], ['development', 'not_after']);
  if (cert.v !== 1) throw new Error(`${what}.certificate.v is not 1`);
  if (cert.key !== s.public_key) throw new Error(`${what}.certificate names another key`);
  if (cert.root !== s.root_key) throw new Error(`${what}.certificate names another root than root_key`);
  if (cert.root !== hex(root)) throw new Error(`${what}: certified by root ${cert.root}, not the trusted root ${hex(root)}`);
  const certId = sha256(label('service-certificate'), certBytes);
  if (!ed25519Verifies(root, concat(label('service-certificate-signature'), certId), fromHex(s.certificate_signature, 64, `${what}.certificate_signature`))) {
    throw new Error(`${what}: the root's signature on the certificate does not verify`);
  }
  if (!Array.isArray(cert.purposes) || !cert.purposes.includes(purpose)) throw new Error(`${what}: the certificate does not vouch for ${purpose}`);
  const when = isoMillis(at, `${purpose} time`);
  const notBefore = isoMillis(cert.not_before, `${what}.certificate.not_before`);
  if (when < notBefore - 60_000) throw new Error(`${what}: the certificate is not valid before ${cert.not_before}`);
  if (cert.not_after !== undefined && when >= isoMillis(cert.not_after, `${what}.certificate.not_after`)) throw new Error(`${what}: the certificate expired at ${cert.not_after}`);
  if (cert.development !== undefined && cert.development !== true) throw new Error(`${what}.certificate.development is present but not true`);
  const development = cert.development === true;
  if (s.development !== development) throw new Error(`${what}.development is not what the certificate says`);
  return { publicKey, keyId: /** @type {string} */ (s.key_id), development };
}

const DEVELOPMENT = ' (a DEVELOPMENT key the relay made for itself: it vouches for nothing beyond one run of that relay)';

/**
 * The receipt of a posts.append answer (objects.md §10), short or full form, for this post.
 * @param {Record<string, any>} answer @param {Record<string, any>} post @param {Uint8Array | undefined} root @param {Inputs} input
 */
function checkReceipt(answer, post, root, input) {
  if (root === undefined) throw new Error('no trusted root key to check the signer against');
  const r = answer.receipt;
  if (!isObject(r)) throw new Error('the answer has no receipt');
  const postMembers = ['chain_hash', 'object_id', 'post_id', 'posted_at', 'seq', 'space_id'];
  /** @type {Uint8Array} */
  let canonical;
  /** @type {Record<string, any>} */
  let fields;
  if (Object.hasOwn(r, 'canonical')) {
    members(r, 'receipt', ['canonical', 'signature', 'signer_key_id']);
    canonical = fromB64u(r.canonical, 'receipt.canonical');
    fields = members(readCanonical(canonical, 'receipt.canonical'), 'receipt.canonical', [...postMembers, 'service_epoch', 'signer_key_id', 'v']);
    if (fields.v !== 1) throw new Error('receipt.v is not 1');
    for (const m of postMembers) if (fields[m] !== answer[m]) throw new Error(`the signed receipt's ${m} is not the answer's`);
    if (fields.signer_key_id !== r.signer_key_id) throw new Error('receipt.signer_key_id is not the signed one');
  } else {
    members(r, 'receipt', ['v', 'service_epoch', 'signer_key_id', 'signature']);
    if (r.v !== 1) throw new Error('receipt.v is not 1');
    fields = { v: 1, service_epoch: r.service_epoch, signer_key_id: r.signer_key_id };
    for (const m of postMembers) {
      if (typeof answer[m] !== 'string') throw new Error(`the answer's ${m} is not a string`);
      fields[m] = answer[m];
    }
    canonical = encoder.encode(canonicalJson(fields));
  }
  for (const m of ['post_id', 'space_id', 'object_id']) {
    if (fields[m] !== post[m]) throw new Error(`the receipt names ${m} ${fields[m]}, not the post's`);
  }
  if (position(fields.seq, 'receipt.seq') !== position(post.seq, 'seq')) throw new Error("the receipt names another seq than the post's");
  if (fields.chain_hash !== post.proof?.chain?.chain_hash) throw new Error("the receipt names another chain_hash than the post's link");
  const signer = findSigner(fields.signer_key_id, input);
  if (signer === undefined) throw new Error(`signed by service key ${fields.signer_key_id}, which neither the capabilities nor the checkpoint name`);
  const key = checkSigner(signer, 'receipt signer', root, 'receipt', answer.posted_at);
  const receiptId = sha256(label('receipt'), canonical);
  if (!ed25519Verifies(key.publicKey, concat(label('receipt-signature'), receiptId), fromHex(r.signature, 64, 'receipt.signature'))) {
    throw new Error('the receipt signature does not verify');
  }
  return `signed by service key ${key.keyId.slice(0, 16)}…, which the trusted root certified for receipts${key.development ? DEVELOPMENT : ''}`;
}

/** The served signer of an online key, from the capabilities or the checkpoint. @param {unknown} keyId @param {Inputs} input */
function findSigner(keyId, input) {
  const keys = input.capabilities?.protocol?.service_keys;
  if (Array.isArray(keys)) {
    const found = keys.find((k) => isObject(k) && k.key_id === keyId);
    if (found !== undefined) return found;
  }
  const signer = input.evidence?.checkpoint?.signer;
  return isObject(signer) && signer.key_id === keyId ? signer : undefined;
}

// ---- checkpoint and Merkle path ------------------------------------------------------------------

const CHECKPOINT_SIGNED = ['created_at', 'ending_hash', 'first', 'last', 'merkle_root', 'predecessor_hash', 'service_epoch', 'signer_key_id', 'space_id', 'stream', 'v'];
const CHECKPOINT_SERVED = ['checkpoint_id', 'stream', 'first', 'last', 'previous_checkpoint_id', 'predecessor_hash', 'ending_hash', 'merkle_root', 'service_epoch', 'created_at', 'canonical', 'signature', 'signer'];
const CHECKPOINT_REPEATED = ['stream', 'first', 'last', 'predecessor_hash', 'ending_hash', 'merkle_root', 'service_epoch', 'created_at'];

/** H(0x01 ‖ left ‖ right) (RFC 9162 §2.1.1). @param {Uint8Array} left @param {Uint8Array} right */
function node(left, right) {
  return sha256(new Uint8Array([1]), left, right);
}

/**
 * RFC 9162 §2.1.3.2: the root `path` leads to from `leaf` at `index` in a tree of `size`.
 * @param {Uint8Array} leaf @param {number} index @param {number} size @param {Uint8Array[]} path
 */
export function rootFromPath(leaf, index, size, path) {
  if (index >= size) throw new Error('leaf_index is not below tree_size');
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) throw new Error('the path is longer than the tree is deep');
    if (fn % 2 === 1 || fn === sn) {
      r = node(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = node(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new Error('the path is shorter than the tree is deep');
  return r;
}

/**
 * objects.md §13 step 6: leaf, checkpoint, Merkle path, signer.
 * @param {Report} report @param {Record<string, any>} post @param {Record<string, any>} evidence @param {Uint8Array | undefined} root
 */
function checkInclusion(report, post, evidence, root) {
  const proof = post.proof ?? {};
  const seq = position(proof.chain?.seq ?? post.seq, 'seq');
  /** @type {Uint8Array | undefined} */
  let leaf;
  report.check('leaf', () => {
    const shown = isObject(evidence.post) ? evidence.post : undefined;
    if (shown !== undefined && (shown.post_id !== post.post_id || shown.object_id !== post.object_id || shown.proof?.chain?.chain_hash !== proof.chain?.chain_hash)) {
      throw new Error('the proof answer is for another post, or shows it with another object or link');
    }
    const objectId = fromHex(proof.object_id, 32, 'proof.object_id');
    const chainHash = fromHex(proof.chain?.chain_hash, 32, 'chain.chain_hash');
    leaf = sha256(new Uint8Array([0]), label('checkpoint-object'), uuid16(post.space_id, 'space_id'), u64(seq), objectId, chainHash);
    if (evidence.leaf !== undefined && evidence.leaf !== hex(leaf)) throw new Error(`the served leaf is not SHA-256(0x00 ‖ L("checkpoint-object") ‖ uuid16 ‖ u64(seq) ‖ object_id ‖ chain_hash) = ${hex(leaf)}`);
    return `SHA-256(0x00 ‖ L("checkpoint-object") ‖ uuid16 ‖ u64(seq) ‖ object_id ‖ chain_hash) = ${hex(leaf)}`;
  });

  /** @type {Record<string, any> | undefined} */
  let signed;
  /** @type {Record<string, any> | undefined} */
  let served;
  report.check('checkpoint', () => {
    served = members(evidence.checkpoint, 'checkpoint', CHECKPOINT_SERVED);
    const canonical = fromB64u(served.canonical, 'checkpoint.canonical');
    const fields = members(readCanonical(canonical, 'checkpoint.canonical'), 'checkpoint.canonical', CHECKPOINT_SIGNED, ['previous_checkpoint_id']);
    if (fields.v !== 1) throw new Error('checkpoint.v is not 1');
    const id = sha256(label('checkpoint'), canonical);
    if (served.checkpoint_id !== hex(id)) throw new Error('checkpoint_id is not SHA-256(L("checkpoint") ‖ canonical)');
    for (const m of CHECKPOINT_REPEATED) if (served[m] !== fields[m]) throw new Error(`the served ${m} is not the signed one`);
    if ((served.previous_checkpoint_id ?? null) !== (fields.previous_checkpoint_id ?? null)) throw new Error('the served previous_checkpoint_id is not the signed one');
    if (fields.space_id !== post.space_id) throw new Error("the checkpoint is of another SPACE than the post's");
    if (fields.stream !== 'posts') throw new Error('the checkpoint is not of the posts stream');
    const first = position(fields.first, 'checkpoint.first');
    const last = position(fields.last, 'checkpoint.last');
    if (last < first || last - first >= 1024n) throw new Error('the checkpoint range is not 1 to 1,024 positions');
    if (seq < first || seq > last) throw new Error(`the checkpoint covers ${first}-${last}, not ${seq}`);
    if (!isObject(served.signer) || served.signer.key_id !== fields.signer_key_id) throw new Error('the served signer is not the one the checkpoint names');
    const publicKey = fromHex(served.signer.public_key, 32, 'checkpoint.signer.public_key');
    if (!ed25519Verifies(publicKey, concat(label('checkpoint-signature'), id), fromHex(served.signature, 64, 'checkpoint.signature'))) {
      throw new Error('the checkpoint signature does not verify under its signer');
    }
    signed = fields;
    return `${served.checkpoint_id.slice(0, 16)}… covers ${first}-${last}, signed by its signer over L("checkpoint-signature") ‖ checkpoint_id`;
  });

  report.check('merkle path', () => {
    if (leaf === undefined || signed === undefined) skip('no leaf or checkpoint that checked out to walk from');
    if (!isObject(evidence.inclusion)) throw new Error('the proof answer has no inclusion path');
    const inc = members(evidence.inclusion, 'inclusion', ['leaf_index', 'tree_size', 'path']);
    const first = position(signed.first, 'first');
    const index = Number(seq - first);
    const size = Number(position(signed.last, 'last') - first + 1n);
    if (inc.leaf_index !== index) throw new Error(`inclusion.leaf_index is ${inc.leaf_index}; the signed range gives ${index}`);
    if (inc.tree_size !== size) throw new Error(`inclusion.tree_size is ${inc.tree_size}; the signed range gives ${size}`);
    if (!Array.isArray(inc.path) || inc.path.length > 16) throw new Error('inclusion.path: expected at most 16 hashes');
    const path = inc.path.map((h, i) => fromHex(h, 32, `inclusion.path[${i}]`));
    const computed = rootFromPath(leaf, index, size, path);
    if (hex(computed) !== signed.merkle_root) throw new Error(`the path leads to ${hex(computed)}, not the signed merkle_root ${signed.merkle_root}`);
    return `${path.length} hash${path.length === 1 ? '' : 'es'} from leaf ${index} of ${size} to the signed merkle_root ${signed.merkle_root}`;
  });

  report.check('signer', () => {
    if (served === undefined || signed === undefined) skip('no checkpoint that checked out');
    if (root === undefined) throw new Error('no trusted root key to check the signer against');
    const key = checkSigner(served.signer, 'checkpoint.signer', root, 'checkpoint', signed.created_at);
    if (key.development) report.add('NOTE', 'signer', DEVELOPMENT.trim().slice(1, -1));
    return `service key ${key.keyId.slice(0, 16)}…, certified by the trusted root for checkpoints at ${signed.created_at}${key.development ? DEVELOPMENT : ''}`;
  });
}

// ---- command line ---------------------------------------------------------------------------------

class Usage extends Error {}

/** @param {string} path @param {string} what */
function readJsonFile(path, what) {
  /** @type {string} */
  let text;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new Usage(`${what} ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Usage(`${what} ${path}: not JSON`);
  }
}

/** @param {string} url @param {string | undefined} token */
async function getJson(url, token) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(url, { headers });
  } catch (e) {
    throw new Usage(`${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const text = await res.text();
  /** @type {any} */
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Usage(`${url}: HTTP ${res.status}, not JSON`);
  }
  if (res.status !== 200) {
    const e = body?.error;
    throw new Usage(`${url}: HTTP ${res.status}${e ? ` ${e.message}${e.detail ? ` (${e.detail})` : ''}` : ''}`);
  }
  return body;
}

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env */
export async function main(argv, env) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      relay: { type: 'string' },
      post: { type: 'string' },
      token: { type: 'string' },
      proof: { type: 'string' },
      receipt: { type: 'string' },
      private: { type: 'string' },
      'root-key': { type: 'string' },
      strict: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length > 1) throw new Usage('give at most one input file');
  const relay = values.relay?.replace(/\/+$/, '');
  const token = values.token ?? (env.SVC_TOKEN !== undefined && env.SVC_TOKEN !== '' ? env.SVC_TOKEN : undefined);
  const file = positionals[0];
  if (file === undefined && values.post === undefined) throw new Usage('give an input file (or - for standard input), or --relay URL --post ID');
  if (file !== undefined && values.post !== undefined) throw new Usage('give an input file or --post, not both');
  if (values.post !== undefined && relay === undefined) throw new Usage('--post needs --relay');

  /** @type {Record<string, any>} */
  let post;
  /** @type {Record<string, any> | undefined} */
  let evidence;
  if (file !== undefined) {
    const input = readJsonFile(file, 'input');
    if (!isObject(input)) throw new Usage('the input is not a JSON object');
    if (isObject(input.post) && Object.hasOwn(input, 'checkpoint')) {
      evidence = input;
      post = input.post;
    } else {
      post = input;
    }
  } else {
    post = await getJson(`${relay}/v1/posts/${encodeURIComponent(/** @type {string} */ (values.post))}`, token);
  }
  if (values.proof !== undefined) evidence = readJsonFile(values.proof, '--proof');
  if (evidence === undefined && relay !== undefined) {
    if (typeof post.space !== 'string') throw new Usage('the post names no SPACE to read its proof from');
    evidence = await getJson(`${relay}/v1/spaces/${encodeURIComponent(post.space)}/posts/${encodeURIComponent(String(post.seq))}/proof`, token);
  }
  /** @type {Record<string, any> | undefined} */
  let capabilities;
  if (relay !== undefined) capabilities = await getJson(`${relay}/v1/capabilities`, undefined);
  /** @type {Uint8Array | undefined} */
  let rootKey;
  if (values['root-key'] !== undefined) {
    try {
      rootKey = fromHex(values['root-key'], 32, '--root-key');
    } catch (e) {
      throw new Usage(e instanceof Error ? e.message : String(e));
    }
  }
  /** @type {Uint8Array | undefined} */
  let privatePart;
  if (values.private !== undefined) {
    try {
      privatePart = values.private.startsWith('{') ? encoder.encode(values.private) : fromB64u(values.private, '--private');
    } catch (e) {
      throw new Usage(e instanceof Error ? e.message : String(e));
    }
  }
  const report = verifyPost({
    post,
    evidence,
    capabilities,
    capabilitiesFrom: relay === undefined ? undefined : `${relay}/v1/capabilities`,
    receipt: values.receipt === undefined ? undefined : readJsonFile(values.receipt, '--receipt'),
    privatePart,
    rootKey,
    strict: values.strict === true,
  }, (line) => process.stdout.write(`${line}\n`));
  const count = (/** @type {Verdict} */ v) => report.lines.filter((l) => l.verdict === v).length;
  process.stdout.write(`${report.failed ? 'FAILED' : 'VERIFIED'}: ${count('PASS')} passed, ${count('FAIL')} failed, ${count('SKIP')} skipped\n`);
  return report.failed ? 1 : 0;
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
      const usage = e instanceof Usage || (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'));
      process.stderr.write(`verify-post: ${e instanceof Error ? e.message : String(e)}${usage ? '\n(node verify-post.mjs --help shows the options)' : ''}\n`);
      process.exitCode = 2;
    },
  );
}
