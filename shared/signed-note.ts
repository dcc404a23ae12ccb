/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 signatures, and C2SP
 * cosignatures (https://c2sp.org/tlog-cosignature, version cosignature/v1).
 *
 *   note       = text ‖ "\n" ‖ signature line+          text: UTF-8, ends in "\n", no blank line
 *   line       = "— " ‖ key name ‖ " " ‖ base64(key id(4) ‖ signature) ‖ "\n"   (U+2014, std base64)
 *   key id     = SHA-256(key name ‖ 0x0A ‖ type ‖ 32-byte public key)[:4]
 *   type 0x01  Ed25519 note signature over the text's bytes
 *   type 0x04  cosignature/v1: signature = u64 POSIX seconds ‖ Ed25519 over
 *              "cosignature/v1\ntime <seconds>\n" ‖ text
 *   verifier key (vkey) = key name ‖ "+" ‖ hex8(key id) ‖ "+" ‖ base64(0x01 ‖ public key)
 *
 * A key name is non-empty and holds no Unicode space and no "+". Readers take what a peer sent
 * (attacker-controlled): every failure throws SvcError('CHECKPOINT_INVALID') naming the rule, so
 * callers treat a bad note like any other bad evidence. Signature lines whose name or key id is
 * unknown are kept and ignored by the verifiers, as the spec asks.
 */
import { hash } from 'node:crypto';
import { concatBytes, equalBytes, toHex, u64, readU64, utf8 } from './encoding.js';
import { SvcError } from './errors.js';
import { verifyEd25519, type Signer } from './identity.js';

export const NOTE_KEY_ED25519 = 0x01;
export const NOTE_KEY_COSIGNATURE_V1 = 0x04;
/** A note holds at most this many signature lines (as Go's sumdb/note). */
export const NOTE_SIGNATURES_MAX = 100;
/** The longest note text a reader takes. */
export const NOTE_TEXT_MAX = 64 * 1024;

const DASH = '\u2014 ';
const B64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

function fail(detail: string): SvcError {
  return new SvcError('CHECKPOINT_INVALID', detail);
}

function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(hash('sha256', bytes, 'buffer'));
}

/** Strict standard base64 (padded), refusing anything that does not re-encode to itself. */
export function fromBase64Std(text: string, field: string): Uint8Array {
  if (text.length % 4 !== 0 || !B64_RE.test(text)) throw fail(`${field}: not padded standard base64`);
  const bytes = new Uint8Array(Buffer.from(text, 'base64'));
  if (Buffer.from(bytes).toString('base64') !== text) throw fail(`${field}: non-canonical base64`);
  return bytes;
}

export function toBase64Std(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** A key name as signed-note allows it: non-empty, no Unicode space, no "+". */
export function isKeyName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && name.length <= 256 && !/[\s+\p{Z}\p{Cc}]/u.test(name);
}

function checkKeyName(name: string): void {
  if (!isKeyName(name)) throw new TypeError(`key name ${JSON.stringify(name)}: non-empty, no spaces, no "+"`);
}

function checkPublicKey(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new TypeError('public key must be 32 bytes');
}

/** SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4]. */
export function noteKeyId(name: string, type: number, publicKey: Uint8Array): Uint8Array {
  checkKeyName(name);
  checkPublicKey(publicKey);
  return sha256(concatBytes(utf8(name), new Uint8Array([0x0a, type]), publicKey)).subarray(0, 4);
}

/** One signature line as read: the key name, key id and what follows it. */
export interface NoteSignature {
  readonly name: string;
  readonly keyId: Uint8Array;
  /** The signature bytes after the key id (64 for Ed25519, 72 for a cosignature). */
  readonly signature: Uint8Array;
  /** The line as it stands in the note, without its newline. */
  readonly line: string;
}

export interface Note {
  /** The signed text, ending in "\n". */
  readonly text: string;
  readonly signatures: readonly NoteSignature[];
}

/** Check the text part: valid as signed-note text, ending in one newline, no blank line inside. */
function checkText(text: string, field: string): void {
  if (text.length === 0 || !text.endsWith('\n')) throw fail(`${field}: the text must end in a newline`);
  if (text.includes('\n\n')) throw fail(`${field}: the text holds a blank line`);
  // Control characters other than newline are not allowed (signed-note "text").
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text)) throw fail(`${field}: the text holds a control character`);
  if (/[\uD800-\uDFFF]/.test(text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) throw fail(`${field}: the text is not valid UTF-8`);
}

/** Read one signature line (without its newline). */
export function readSignatureLine(line: string, field = 'signature line'): NoteSignature {
  if (!line.startsWith(DASH)) throw fail(`${field}: does not start with "— "`);
  const rest = line.slice(DASH.length);
  const space = rest.indexOf(' ');
  if (space < 0 || rest.indexOf(' ', space + 1) >= 0) throw fail(`${field}: not "— <name> <signature>"`);
  const name = rest.slice(0, space);
  if (!isKeyName(name)) throw fail(`${field}: key name is empty or holds a space or "+"`);
  const bytes = fromBase64Std(rest.slice(space + 1), field);
  if (bytes.length < 5) throw fail(`${field}: shorter than a key id and a signature`);
  return { name, keyId: bytes.slice(0, 4), signature: bytes.slice(4), line };
}

/** Read a signed note (signed-note §"Format"). At least one signature line is required. */
export function readNote(note: string, field = 'note'): Note {
  if (typeof note !== 'string') throw fail(`${field}: not text`);
  if (note.length > NOTE_TEXT_MAX) throw fail(`${field}: longer than ${NOTE_TEXT_MAX} characters`);
  if (!note.endsWith('\n')) throw fail(`${field}: does not end in a newline`);
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw fail(`${field}: no blank line before the signatures`);
  const text = note.slice(0, split + 1);
  checkText(text, field);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > NOTE_SIGNATURES_MAX) throw fail(`${field}: more than ${NOTE_SIGNATURES_MAX} signatures`);
  const signatures = lines.map((l, i) => readSignatureLine(l, `${field} signature ${i + 1}`));
  return { text, signatures };
}

/** Write a note: the text, a blank line, then each signature line. */
export function formatNote(text: string, lines: readonly string[]): string {
  checkText(text, 'note text');
  if (lines.length === 0) throw new RangeError('a note needs at least one signature');
  return `${text}\n${lines.map((l) => `${l}\n`).join('')}`;
}

function signatureLine(name: string, keyId: Uint8Array, signature: Uint8Array): string {
  return `${DASH}${name} ${toBase64Std(concatBytes(keyId, signature))}`;
}

/** An Ed25519 note signature line (type 0x01) over `text` by `signer` under `name`. */
export function signNote(text: string, name: string, signer: Signer): string {
  checkText(text, 'note text');
  return signatureLine(name, noteKeyId(name, NOTE_KEY_ED25519, signer.publicKey), signer.sign(utf8(text)));
}

/** The signature lines of `note` by (name, Ed25519 key) that verify; throws when none does. */
export function verifyNote(note: Note, name: string, publicKey: Uint8Array, field = 'note'): void {
  const id = noteKeyId(name, NOTE_KEY_ED25519, publicKey);
  const mine = note.signatures.filter((s) => s.name === name && equalBytes(s.keyId, id));
  if (mine.length === 0) throw fail(`${field}: no signature by ${name} (key id ${toHex(id)})`);
  const message = utf8(note.text);
  for (const s of mine) {
    if (s.signature.length !== 64 || !verifyEd25519(publicKey, message, s.signature)) throw fail(`${field}: the signature by ${name} does not verify`);
  }
}

/** "cosignature/v1\ntime <t>\n" ‖ text: what a cosigner signs (tlog-cosignature). */
export function cosignatureMessage(text: string, timestamp: number): Uint8Array {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError('timestamp must be whole non-negative seconds');
  return utf8(`cosignature/v1\ntime ${timestamp}\n${text}`);
}

/** A cosignature line (type 0x04) over checkpoint `text` at POSIX second `timestamp`. */
export function cosignNote(text: string, name: string, signer: Signer, timestamp: number): string {
  checkText(text, 'note text');
  const signature = signer.sign(cosignatureMessage(text, timestamp));
  return signatureLine(name, noteKeyId(name, NOTE_KEY_COSIGNATURE_V1, signer.publicKey), concatBytes(u64(timestamp), signature));
}

/** A named witness: its key name and Ed25519 public key. */
export interface Cosigner {
  readonly name: string;
  readonly publicKey: Uint8Array;
}

/**
 * The cosignature of `cosigner` on `note`, checked: its time (POSIX seconds) when one of its
 * lines verifies, undefined when none is there. A line with its name and key id that does not
 * verify throws: it is forged or bent evidence, not a missing cosignature.
 */
export function verifyCosignature(note: Note, cosigner: Cosigner, field = 'note'): number | undefined {
  const id = noteKeyId(cosigner.name, NOTE_KEY_COSIGNATURE_V1, cosigner.publicKey);
  let time: number | undefined;
  for (const s of note.signatures) {
    if (s.name !== cosigner.name || !equalBytes(s.keyId, id)) continue;
    if (s.signature.length !== 72) throw fail(`${field}: the cosignature by ${cosigner.name} is not 72 bytes`);
    const t = readU64(s.signature, 0);
    if (t > BigInt(Number.MAX_SAFE_INTEGER)) throw fail(`${field}: the cosignature by ${cosigner.name} has an impossible time`);
    if (!verifyEd25519(cosigner.publicKey, cosignatureMessage(note.text, Number(t)), s.signature.subarray(8))) {
      throw fail(`${field}: the cosignature by ${cosigner.name} does not verify`);
    }
    time = Math.max(time ?? 0, Number(t));
  }
  return time;
}

/** The verifier key text of an Ed25519 note key: name+hex8(key id)+base64(0x01 ‖ key). */
export function verifierKey(name: string, publicKey: Uint8Array): string {
  const id = noteKeyId(name, NOTE_KEY_ED25519, publicKey);
  return `${name}+${toHex(id)}+${toBase64Std(concatBytes(new Uint8Array([NOTE_KEY_ED25519]), publicKey))}`;
}

/** Read a verifier key (an Ed25519 one only); its key id must match the name and key. */
export function readVerifierKey(text: string, field = 'verifier key'): Cosigner {
  const parts = typeof text === 'string' ? text.split('+') : [];
  // The base64 part may itself hold "+": everything after the second "+" is the key.
  if (parts.length < 3) throw fail(`${field}: not name+keyid+key`);
  const name = parts[0]!;
  const idHex = parts[1]!;
  const keyText = parts.slice(2).join('+');
  if (!isKeyName(name)) throw fail(`${field}: bad key name`);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw fail(`${field}: key id is not eight lowercase hex digits`);
  const key = fromBase64Std(keyText, field);
  if (key.length !== 33 || key[0] !== NOTE_KEY_ED25519) throw fail(`${field}: not an Ed25519 key (0x01 and 32 bytes)`);
  const publicKey = key.slice(1);
  if (toHex(noteKeyId(name, NOTE_KEY_ED25519, publicKey)) !== idHex) throw fail(`${field}: key id does not match the name and key`);
  return { name, publicKey };
}

/**
 * A list of named witnesses as settings write it: entries separated by commas, each
 * `name=base64(32-byte Ed25519 public key)` or a verifier key (`name+keyid+base64(0x01 ‖ key)`).
 * Throws an Error naming the entry that does not read; a name listed twice is refused too.
 */
export function readCosignerList(text: string, setting: string): Cosigner[] {
  const out: Cosigner[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    let c: Cosigner;
    const eq = entry.indexOf('=');
    const plus = entry.indexOf('+');
    try {
      if (plus > 0 && (eq < 0 || plus < eq)) {
        c = readVerifierKey(entry, setting);
      } else {
        if (eq <= 0) throw new Error('not name=base64key');
        const name = entry.slice(0, eq);
        if (!isKeyName(name)) throw new Error('the name is empty or holds a space or "+"');
        const publicKey = fromBase64Std(entry.slice(eq + 1), 'key');
        if (publicKey.length !== 32) throw new Error('the key is not 32 bytes');
        c = { name, publicKey };
      }
    } catch (e) {
      const why = e instanceof SvcError ? (e.detail ?? e.code) : (e as Error).message;
      throw new Error(`${setting}: ${JSON.stringify(entry.slice(0, 80))}: ${why}`);
    }
    if (out.some((o) => o.name === c.name)) throw new Error(`${setting}: ${c.name} is listed twice`);
    out.push(c);
  }
  return out;
}
