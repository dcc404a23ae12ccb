/**
 * A post as reads return it (protocol/api-notes.md §4; spec/1-concepts.md "Post" output fields,
 * "Unavailable marker"; proof block objects.md §13). One rendering everywhere: stream pages,
 * standing, batch, one post, mailbox envelopes, SEEK hits and export lines.
 *
 *   ids       post_id, space, seq, kind, author, posted_at, unavailable?, no_role?
 *   snippets  + title, sealed?, to, reply_to, admitted_revision*, budget*?, fingerprints (first 8),
 *               fingerprint_count, signed, snippet (first 280 characters), snippet_truncated
 *   full      ids + the snippets members before `snippet` with every fingerprint, then body,
 *               data*?, run_id*, supersedes, retracts, space_id, object_id, proof?
 *
 * `*` members only: left out entirely (not null) for a reader outside the SPACE, whose proof
 * block then has no `private`, `chain.admitted_revision` or `chain.admitted_control_hash`.
 *
 * A hidden post keeps its position and link and carries `unavailable: {state, reason, since}`;
 * its content (title, body, snippet, data, budget) and recipients are null and fingerprints
 * are suppressed. Its proof shows the link but not the object bytes (`canonical` and `private`
 * null), which would give the words back.
 *
 * A sealed post (protocol/sealed.md §7) has no words: title and snippet are null, body null at
 * full; `sealed` shows `{generation, bytes}`, and at full also the header and ciphertext (b64u)
 * that members' software opens. A hidden sealed post keeps `{generation, bytes}` only.
 *
 * Every 64-bit number is a decimal string (`seq`, `admitted_revision`); times ISO with ms and Z.
 */
import type { JsonObject, JsonValue } from '../../shared/canonical.js';
import { toBase64url, toHex } from '../../shared/encoding.js';
import { SNIPPET_CHARACTERS, SNIPPET_FINGERPRINTS } from '../../shared/limits.js';
import type { Fingerprint } from '../../shared/validate.js';
import type { ReadPost } from '../store/post-reads.js';

export const DETAILS = ['ids', 'snippets', 'full'] as const;
export type Detail = (typeof DETAILS)[number];

export interface RenderOptions {
  detail: Detail;
  /** Add the proof block (full detail only). */
  proof: boolean;
  /** The reader is the SPACE's owner or a member. */
  inside: boolean;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** The marker of a post that keeps its position without its words, or null. */
export function unavailableOf(p: ReadPost): JsonObject | null {
  if (p.hiddenAt !== null) return { state: 'hidden', reason: null, since: iso(p.hiddenAt) };
  return null;
}

/** The first 280 characters (code points) of a text, and whether it was cut. */
export function snippetOf(text: string): { snippet: string; truncated: boolean } {
  let count = 0;
  let end = 0;
  for (const ch of text) {
    if (count === SNIPPET_CHARACTERS) return { snippet: text.slice(0, end), truncated: true };
    count++;
    end += ch.length;
  }
  return { snippet: text, truncated: false };
}

/** The proof block (objects.md §13) as this reader may see it. */
export function proofBlock(p: ReadPost, inside: boolean): JsonObject {
  const hidden = p.hiddenAt !== null;
  const block: JsonObject = {
    object_id: toHex(p.objectId),
    canonical: hidden ? null : toBase64url(p.canonical),
  };
  if (inside) block.private = hidden || p.private === null ? null : toBase64url(p.private);
  block.signature =
    p.signature === null
      ? null
      : { alg: p.authorKeyType === 'passkey' ? 'webauthn' : 'ed25519', value: toHex(p.signature), public_key: p.authorPublicKey };
  const chain: JsonObject = { seq: String(p.seq), admission: toHex(p.admission) };
  if (inside) {
    chain.admitted_revision = String(p.admittedRevision);
    chain.admitted_control_hash = toHex(p.admittedControlHash);
  }
  chain.previous_hash = toHex(p.previousHash);
  chain.chain_hash = toHex(p.chainHash);
  block.chain = chain;
  return block;
}

/**
 * A sealed post's `sealed` member (api-notes §4): `{generation, bytes}` (the ciphertext's size),
 * plus `header` and `ciphertext` (b64u) at full detail. The relay shows what it holds and can
 * open none of it. Null for a post that is not sealed.
 */
function sealedMember(p: ReadPost, withItem: boolean): JsonObject | null {
  if (!p.sealed || p.sealedItem === null) return null;
  const item = p.sealedItem;
  const out: JsonObject = { generation: item.generation, bytes: item.ciphertext.byteLength };
  if (withItem) {
    out.header = toBase64url(item.header);
    out.ciphertext = toBase64url(item.ciphertext);
  }
  return out;
}

/** One post at `detail` for this reader. */
export function renderPost(p: ReadPost, o: RenderOptions): JsonObject {
  const unavailable = unavailableOf(p);
  const out: JsonObject = {
    post_id: p.postId,
    space: p.spaceName,
    seq: String(p.seq),
    kind: p.kind,
    author: p.author,
    posted_at: iso(p.postedAt),
  };
  if (unavailable !== null) out.unavailable = unavailable;
  if (p.noRole) out.no_role = true;
  if (o.detail === 'ids') return out;

  const fingerprints = unavailable === null ? (parseJson<Fingerprint[]>(p.fingerprintsJson) ?? []) : [];
  out.title = unavailable === null ? p.title : null;
  const sealed = sealedMember(p, o.detail === 'full' && unavailable === null);
  if (sealed !== null) out.sealed = sealed;
  out.to = unavailable === null ? (parseJson<string[]>(p.toJson) ?? []) : null;
  out.reply_to = p.replyTo;
  if (o.inside) {
    out.admitted_revision = String(p.admittedRevision);
    if (unavailable === null && p.budgetJson !== null) out.budget = parseJson<JsonObject>(p.budgetJson);
  }
  const shown = o.detail === 'full' ? fingerprints : fingerprints.slice(0, SNIPPET_FINGERPRINTS);
  out.fingerprints = shown.map((f) => ({ scheme: f.scheme, value: f.value }));
  out.fingerprint_count = fingerprints.length;
  out.signed = p.signed;

  const words = unavailable === null && !p.sealed;
  if (o.detail === 'snippets') {
    const s = words ? snippetOf(p.body ?? '') : { snippet: null, truncated: false };
    out.snippet = s.snippet;
    out.snippet_truncated = s.truncated;
    return out;
  }

  out.body = words ? (p.body ?? '') : null;
  if (o.inside) {
    if (p.dataJson !== null) out.data = unavailable === null ? parseJson<JsonValue>(p.dataJson) : null;
    out.run_id = p.runId;
  }
  out.supersedes = p.supersedes;
  out.retracts = p.retracts;
  out.space_id = p.spaceId;
  out.object_id = toHex(p.objectId);
  if (o.proof) out.proof = proofBlock(p, o.inside);
  return out;
}
