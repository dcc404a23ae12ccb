/**
 * Witnessed history (SVC_WITNESSES, SVC_WITNESSES_REQUIRED): the bridge calls a SPACE's history
 * verified only when the tree head that holds the post was cosigned by enough of the witnesses
 * the user named, so a relay showing this KEY a history it shows no witness is caught.
 *
 * For a post whose inclusion under a signed checkpoint already verified (tools/verify/verify.ts), with
 * the checkpoint's certified signer and its `last`:
 *
 * 1. The relay's signed note at size `last` (GET /v1/spaces/{name}/checkpoint.note/{last}; C2SP
 *    tlog-checkpoint, shared/signed-note.ts): origin `<relay host>/spaces/<name>`, size `last`,
 *    the Ed25519 note signature of that same certified signer under the key name <relay host>.
 * 2. The post in that tree: the RFC 9162 inclusion proof (GET /v1/spaces/{name}/inclusion) of
 *    its leaf (the checkpoint leaf, index seq − 1) leads to the note's root.
 * 3. The cosignatures (tlog-cosignature v1) of the named witnesses on that note: at least
 *    `required` verify. A line under a named witness's name and key id that does not verify
 *    counts as none and is named: bent evidence.
 *
 * Everything the relay sends is attacker-controlled; each failure is one sentence in the check.
 */
import { fromHex, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { verifyInclusion } from '../../shared/merkle.js';
import { readNote, verifyCosignature, verifyNote, type Cosigner } from '../../shared/signed-note.js';
import { readCheckpointBody, spaceOrigin } from '../../shared/tlog-checkpoint.js';
import type { RelayApi } from '../api.js';

export interface WitnessPolicy {
  /** The named witnesses (key name and Ed25519 key). */
  readonly witnesses: readonly Cosigner[];
  /** How many of them must have cosigned. */
  readonly required: number;
}

export interface WitnessCheck {
  /** true: enough named witnesses cosigned the head holding the post; false otherwise. */
  readonly ok: boolean;
  readonly detail: string;
}

/** What the check needs of the post and the checkpoint that covers it (both already verified). */
export interface WitnessedInput {
  readonly spaceName: string;
  readonly seq: number;
  /** The post's checkpoint leaf (shared/merkle.ts `postLeaf`). */
  readonly leaf: Uint8Array;
  /** The covering checkpoint's `last`: the size of the head to look at. */
  readonly size: number;
  /** The certified online key that signed the checkpoint (it signs the note too). */
  readonly signerKey: Uint8Array;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function why(e: unknown): string {
  if (e instanceof SvcError) return e.detail ?? e.code;
  return e instanceof Error ? e.message : String(e);
}

/** The head of one size as this bridge checked it: its root and whose cosignatures verify, or why it does not check. */
export type HeadCheck = { readonly root: Uint8Array; readonly cosigned: readonly string[]; readonly bent: readonly string[] } | { readonly failure: string };

/** Steps 1 and 3: the relay's note at `size`, its origin, size and signature, and the named witnesses' cosignatures on it. */
export async function checkHead(api: RelayApi, spaceName: string, size: number, signerKey: Uint8Array, policy: WitnessPolicy): Promise<HeadCheck> {
  const host = api.base.host;
  let note;
  let root: Uint8Array;
  try {
    const res = await api.request({ path: `/v1/spaces/${encodeURIComponent(spaceName)}/checkpoint.note/${size}`, auth: 'opt', accept: 'text/plain' });
    note = readNote(res.text, 'checkpoint note');
    const head = readCheckpointBody(note.text, 'checkpoint note');
    if (head.origin !== spaceOrigin(host, spaceName)) throw new Error(`the note names ${JSON.stringify(head.origin.slice(0, 120))}, not ${spaceOrigin(host, spaceName)}`);
    if (head.size !== size) throw new Error(`the note is of size ${head.size}, not ${size}`);
    verifyNote(note, host, signerKey, 'checkpoint note');
    root = head.root;
  } catch (e) {
    return { failure: `the relay's signed note at size ${size} does not check (${why(e)})` };
  }
  const cosigned: string[] = [];
  const bent: string[] = [];
  for (const w of policy.witnesses) {
    try {
      if (verifyCosignature(note, w) !== undefined) cosigned.push(w.name);
    } catch (e) {
      bent.push(`${w.name} (${why(e)})`);
    }
  }
  return { root, cosigned, bent };
}

/**
 * Steps 1 to 3 for one post. `head` answers step 1 and 3 for a size (a caller checking many
 * posts under one checkpoint reads its note once); by default `checkHead`.
 */
export async function checkWitnessed(
  api: RelayApi,
  input: WitnessedInput,
  policy: WitnessPolicy,
  head: (size: number) => Promise<HeadCheck> = (size) => checkHead(api, input.spaceName, size, input.signerKey, policy),
): Promise<WitnessCheck> {
  const names = policy.witnesses.map((w) => w.name).join(', ');
  const not = (detail: string): WitnessCheck => ({
    ok: false,
    detail: `HISTORY NOT WITNESSED: ${detail}. SVC_WITNESSES asks for ${policy.required} of ${names}; until they cosign, this history is the relay's word alone.`,
  });
  const h = await head(input.size);
  if ('failure' in h) return not(h.failure);
  try {
    const res = await api.request({ path: `/v1/spaces/${encodeURIComponent(input.spaceName)}/inclusion`, query: { seq: String(input.seq), size: String(input.size) }, auth: 'opt' });
    const body = isObject(res.body) ? res.body : {};
    const proof = Array.isArray(body.proof) && body.proof.length <= 64 ? body.proof.map((p, i) => fromHex(p, 32, `inclusion.proof[${i}]`)) : undefined;
    if (proof === undefined) throw new Error('the inclusion answer holds no proof');
    verifyInclusion(input.leaf, input.seq - 1, input.size, proof, h.root);
  } catch (e) {
    return not(`post ${input.seq} is not shown to be in the tree of that note (${why(e)})`);
  }
  const bentText = h.bent.length === 0 ? '' : `; a cosignature that does not verify: ${h.bent.join(', ')}`;
  if (h.cosigned.length < policy.required) {
    return not(`${h.cosigned.length} of the ${policy.required} cosignatures needed on the head of size ${input.size} (root ${toHex(h.root).slice(0, 16)}…)${h.cosigned.length > 0 ? `: ${h.cosigned.join(', ')}` : ''}${bentText}`);
  }
  return { ok: true, detail: `witnessed: the head of size ${input.size} that holds this post is cosigned by ${h.cosigned.join(', ')} (${h.cosigned.length} of ${policy.required} needed)${bentText}` };
}
