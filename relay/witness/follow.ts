/**
 * Witness mode (`svc-relay --witness --witness-of URL`): this relay follows SPACES of other
 * relays as a transparency-log witness (C2SP tlog-witness's checks, pulled rather than pushed).
 *
 * For each followed SPACE address, every interval:
 *
 * 1. GET <address>/checkpoint.note and read it as a signed note with a tlog-checkpoint body.
 * 2. The note key: key name = the origin line's host; its Ed25519 key is pinned per origin on
 *    first sight, taken from the origin relay's capabilities (a service key certified by the
 *    root it publishes, purpose `checkpoint`). Later notes must verify under the pinned key: a
 *    note that does not is refused (logged), never cosigned, and not a split view (anyone can
 *    serve a bad signature; a split view needs the log's own signature on two histories).
 * 3. Against the newest head this witness verified for that origin (migration 016):
 *    - the same size: the root must be the same;
 *    - larger: an RFC 9162 consistency proof from the kept size (GET <address>/consistency)
 *      must verify (shared/merkle.ts `verifyConsistency`);
 *    - smaller: a proof from the served size to the kept one must verify (an older head, from
 *      a cache or a lagging reader: not cosigned, not kept); if it does not, a split view.
 *    A head that fails is a SPLIT VIEW: recorded with both notes, written to stderr, counted
 *    (`svc_relay_witness_split_views`, GET /v1/witness), never cosigned, and the kept head stays.
 * 4. A consistent head is kept and cosigned (tlog-cosignature v1, this relay's online service
 *    key under the key name of its own host), then posted to <address>/cosignatures, unless the
 *    note already carries this witness's cosignature.
 *
 * The origin relay is attacker-controlled input: every answer is read with a size cap and a
 * timeout, and nothing it sends can stop the other followed SPACES.
 */
import { SvcError } from '../../shared/errors.js';
import { fromHex, isHex, toHex } from '../../shared/encoding.js';
import { verifyConsistency } from '../../shared/merkle.js';
import { readServedSigner, verifyServiceSigner } from '../../shared/service-keys.js';
import { cosignNote, readNote, readVerifierKey, verifierKey, verifyCosignature, verifyNote, type Cosigner, type Note } from '../../shared/signed-note.js';
import { readCheckpointBody, type TreeHead } from '../../shared/tlog-checkpoint.js';
import type { Signer } from '../../shared/identity.js';
import type { WitnessStore, WitnessedLog } from '../store/witness.js';

/** The most of an answer the witness reads. */
const ANSWER_MAX_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

export interface WitnessDeps {
  readonly store: WitnessStore;
  /** This witness's key name (its own host) and key (the relay's online service key). */
  readonly name: () => string;
  readonly signer: Signer;
  readonly clock: () => number;
  readonly report: (line: string) => void;
  /** HTTP (global fetch unless a test gives another). */
  readonly fetch?: typeof fetch;
}

/** What one check of one followed SPACE came to. */
export type Outcome =
  | { kind: 'cosigned'; origin: string; size: number; posted: boolean }
  | { kind: 'unchanged'; origin: string; size: number }
  | { kind: 'stale'; origin: string; size: number; kept: number }
  | { kind: 'split'; origin: string; reason: string; splitViewId: number }
  | { kind: 'refused'; reason: string };

export interface Witness {
  /** Check one followed SPACE address now. */
  check(target: string): Promise<Outcome>;
  /** This witness's public identity, as origins and bridges configure it. */
  identity(): { name: string; publicKey: Uint8Array; setting: string; verifierKey: string };
}

async function readCapped(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > ANSWER_MAX_BYTES) {
      await reader.cancel();
      throw new Error(`answer larger than ${ANSWER_MAX_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function createWitness(deps: WitnessDeps): Witness {
  const http = deps.fetch ?? fetch;

  async function request(url: string, init?: { method: string; body: string }): Promise<{ status: number; text: string }> {
    const res = await http(url, {
      method: init?.method ?? 'GET',
      headers: init === undefined ? { accept: 'text/plain, application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
      body: init?.body,
      redirect: 'error',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    return { status: res.status, text: await readCapped(res) };
  }

  async function json(url: string): Promise<Obj> {
    const r = await request(url);
    if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.text.slice(0, 200)}`);
    const body: unknown = JSON.parse(r.text);
    if (!isObject(body)) throw new Error(`GET ${url}: not a JSON object`);
    return body;
  }

  /** The origin's note key on first sight: a certified service key of the relay at `base` whose note key id signed `note`. */
  async function firstKey(base: string, keyName: string, note: Note): Promise<Cosigner> {
    const caps = await json(`${base}/v1/capabilities`);
    const protocol = isObject(caps.protocol) ? caps.protocol : {};
    const root = protocol.service_root_key;
    if (!isHex(root, 32)) throw new Error('the origin publishes no service_root_key');
    const keys = Array.isArray(protocol.service_keys) ? protocol.service_keys.filter(isObject) : [];
    for (const [i, entry] of keys.entries()) {
      const { added_at: _addedAt, ...served } = entry;
      try {
        const signer = verifyServiceSigner(readServedSigner(served, `service_keys[${i}]`), {
          trustedRoot: fromHex(root, 32),
          purpose: 'checkpoint',
          at: new Date(deps.clock()).toISOString(),
        });
        const key = { name: keyName, publicKey: signer.publicKey };
        verifyNote(note, key.name, key.publicKey);
        return key;
      } catch {
        // Not this key; try the next one.
      }
    }
    throw new Error(`no certified service key of ${base} signed the note as ${keyName}`);
  }

  async function split(target: string, head: TreeHead, kept: WitnessedLog, note: string, reason: string): Promise<Outcome> {
    const id = await deps.store.addSplitView({
      origin: head.origin,
      source: target,
      reason,
      keptSize: kept.size,
      keptNote: kept.note,
      seenSize: head.size,
      seenNote: note,
      at: deps.clock(),
    });
    deps.report(
      `SPLIT VIEW of ${head.origin}: ${target} served size ${head.size} root ${toHex(head.root)}, but this witness cosigned size ${kept.size} root ${toHex(kept.root)} (from ${kept.source}): ${reason}. Not cosigned; recorded as split view ${id} (GET /v1/witness).`,
    );
    return { kind: 'split', origin: head.origin, reason, splitViewId: id };
  }

  async function proof(target: string, from: number, to: number): Promise<Uint8Array[]> {
    const body = await json(`${target}/consistency?from=${from}&to=${to}`);
    if (body.from !== String(from) || body.to !== String(to) || !Array.isArray(body.proof) || body.proof.length > 128) throw new Error('the consistency answer is not for the sizes asked');
    return body.proof.map((h, i) => fromHex(h, 32, `proof[${i}]`));
  }

  /** Is the tree (a) a prefix of (b)? Undefined when yes; the reason when not. */
  async function inconsistency(target: string, a: { size: number; root: Uint8Array }, b: { size: number; root: Uint8Array }): Promise<string | undefined> {
    if (a.size === 0) return undefined;
    let path: Uint8Array[];
    try {
      path = await proof(target, a.size, b.size);
    } catch (e) {
      // No proof to be had (the origin refused or failed): nothing proven either way; retry later.
      throw new Error(`consistency proof ${a.size}→${b.size} could not be read: ${(e as Error).message}`);
    }
    try {
      verifyConsistency(a.size, b.size, a.root, b.root, path);
      return undefined;
    } catch (e) {
      return `the consistency proof from ${a.size} to ${b.size} does not verify (${e instanceof SvcError ? e.detail : String(e)})`;
    }
  }

  function identity() {
    const name = deps.name();
    const publicKey = deps.signer.publicKey;
    return { name, publicKey, setting: `${name}=${Buffer.from(publicKey).toString('base64')}`, verifierKey: verifierKey(name, publicKey) };
  }

  async function check(target: string): Promise<Outcome> {
    const base = target.slice(0, target.lastIndexOf('/v1/spaces/'));
    let text: string;
    let note: Note;
    let head: TreeHead;
    try {
      const r = await request(`${target}/checkpoint.note`);
      if (r.status !== 200) throw new Error(`${r.status} ${r.text.slice(0, 200)}`);
      text = r.text;
      note = readNote(text);
      head = readCheckpointBody(note.text);
    } catch (e) {
      return { kind: 'refused', reason: `${target}: no checkpoint note could be read: ${e instanceof SvcError ? e.detail : (e as Error).message}` };
    }
    const keyName = head.origin.split('/')[0]!;
    const kept = await deps.store.log(head.origin);
    let key: Cosigner;
    try {
      key = kept !== undefined ? readVerifierKey(kept.verifierKey) : await firstKey(base, keyName, note);
      verifyNote(note, keyName, key.publicKey);
    } catch (e) {
      return { kind: 'refused', reason: `${target}: the note of ${head.origin} does not verify under its key: ${e instanceof SvcError ? e.detail : (e as Error).message}` };
    }
    const me = identity();
    const now = deps.clock();
    if (kept !== undefined) {
      try {
        if (head.size === kept.size) {
          if (toHex(head.root) !== toHex(kept.root)) return await split(target, head, kept, text, `two roots at size ${head.size}`);
        } else if (head.size > kept.size) {
          const why = await inconsistency(target, kept, head);
          if (why !== undefined) return await split(target, head, kept, text, why);
        } else {
          const why = await inconsistency(target, head, kept);
          if (why !== undefined) return await split(target, head, kept, text, `an older head that the cosigned one does not extend: ${why}`);
          return { kind: 'stale', origin: head.origin, size: head.size, kept: kept.size };
        }
      } catch (e) {
        return { kind: 'refused', reason: `${target}: ${(e as Error).message}` };
      }
    }
    await deps.store.putLog({
      origin: head.origin,
      source: target,
      verifierKey: verifierKey(keyName, key.publicKey),
      size: head.size,
      root: head.root,
      note: text,
      checkedAt: now,
    });
    let mine: number | undefined;
    try {
      mine = verifyCosignature(note, { name: me.name, publicKey: me.publicKey });
    } catch {
      mine = undefined;
    }
    if (mine !== undefined && kept !== undefined && kept.size === head.size) return { kind: 'unchanged', origin: head.origin, size: head.size };
    const line = cosignNote(note.text, me.name, deps.signer, Math.floor(now / 1000));
    let posted = false;
    try {
      const r = await request(`${target}/cosignatures`, { method: 'POST', body: JSON.stringify({ size: String(head.size), cosignature: line }) });
      posted = r.status === 200;
      if (!posted) deps.report(`${target}: the origin did not take the cosignature of size ${head.size}: ${r.status} ${r.text.slice(0, 200)}`);
    } catch (e) {
      deps.report(`${target}: the cosignature of size ${head.size} could not be posted: ${(e as Error).message}`);
    }
    return { kind: 'cosigned', origin: head.origin, size: head.size, posted };
  }

  return { check, identity };
}
