/**
 * Witnessed history (SVC_WITNESSES, SVC_WITNESSES_REQUIRED): the bridge calls a SPACE's history
 * verified only when the tree head that holds the post was cosigned by enough of the witnesses
 * the user named, so a relay showing this KEY a history it shows no witness is caught.
 *
 * For a post whose inclusion under a signed checkpoint already verified (bridge/verify.ts), with
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
import { toHex } from '../shared/encoding.js';
import { fromHex } from '../shared/encoding.js';
import { SvcError } from '../shared/errors.js';
import { verifyInclusion } from '../shared/merkle.js';
import { readNote, verifyCosignature, verifyNote, type Cosigner } from '../shared/signed-note.js';
import { readCheckpointBody, spaceOrigin } from '../shared/tlog-checkpoint.js';
import type { RelayApi } from './client.js';

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

export async function checkWitnessed(api: RelayApi, input: WitnessedInput, policy: WitnessPolicy): Promise<WitnessCheck> {
  const host = api.base.host;
  const names = policy.witnesses.map((w) => w.name).join(', ');
  const not = (detail: string): WitnessCheck => ({
    ok: false,
    detail: `HISTORY NOT WITNESSED: ${detail}. SVC_WITNESSES asks for ${policy.required} of ${names}; until they cosign, this history is the relay's word alone.`,
  });
  const space = encodeURIComponent(input.spaceName);
  let root: Uint8Array;
  let note;
  try {
    const res = await api.request({ path: `/v1/spaces/${space}/checkpoint.note/${input.size}`, auth: 'opt', accept: 'text/plain' });
    note = readNote(res.text, 'checkpoint note');
    const head = readCheckpointBody(note.text, 'checkpoint note');
    if (head.origin !== spaceOrigin(host, input.spaceName)) throw new Error(`the note names ${JSON.stringify(head.origin.slice(0, 120))}, not ${spaceOrigin(host, input.spaceName)}`);
    if (head.size !== input.size) throw new Error(`the note is of size ${head.size}, not ${input.size}`);
    verifyNote(note, host, input.signerKey, 'checkpoint note');
    root = head.root;
  } catch (e) {
    return not(`the relay's signed note at size ${input.size} does not check (${why(e)})`);
  }
  try {
    const res = await api.request({ path: `/v1/spaces/${space}/inclusion`, query: { seq: String(input.seq), size: String(input.size) }, auth: 'opt' });
    const body = isObject(res.body) ? res.body : {};
    const proof = Array.isArray(body.proof) && body.proof.length <= 64 ? body.proof.map((h, i) => fromHex(h, 32, `inclusion.proof[${i}]`)) : undefined;
    if (proof === undefined) throw new Error('the inclusion answer holds no proof');
    verifyInclusion(input.leaf, input.seq - 1, input.size, proof, root);
  } catch (e) {
    return not(`post ${input.seq} is not shown to be in the tree of that note (${why(e)})`);
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
  const bentText = bent.length === 0 ? '' : `; a cosignature that does not verify: ${bent.join(', ')}`;
  if (cosigned.length < policy.required) {
    return not(`${cosigned.length} of the ${policy.required} cosignatures needed on the head of size ${input.size} (root ${toHex(root).slice(0, 16)}…)${cosigned.length > 0 ? `: ${cosigned.join(', ')}` : ''}${bentText}`);
  }
  return { ok: true, detail: `witnessed: the head of size ${input.size} that holds this post is cosigned by ${cosigned.join(', ')} (${cosigned.length} of ${policy.required} needed)${bentText}` };
}
