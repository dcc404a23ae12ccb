/**
 * A post as reads return it (protocol/api-notes.md §4; spec/1-concepts.md "Post" output fields,
 * "Unavailable marker"; proof block objects.md §13). One rendering everywhere: stream pages,
 * standing, batch, one post, mailbox envelopes, SEEK hits and export lines.
 *
 *   ids       post_id, space, seq, kind, author, posted_at, unavailable?, no_role?
 *   snippets  + title, summary?, sealed?, to, reply_to, admitted_revision*, budget*?, fingerprints (first 8),
 *               fingerprint_count, signed, snippet (first 280 characters), snippet_truncated
 *   full      ids + the snippets members before `snippet` with every fingerprint, then body,
 *               attachments?, data*?, run_id*, supersedes, retracts, space_id, object_id, proof?
 *
 * A finding (the newer API's kind, relay/findings/) shows `finding: {claim, status, confidence,
 * sources}` after `snippet_truncated` at snippets alone: its claim, its status (`withdrawn` once
 * retracted), its confidence and how many posts it rests on, so a page of snippets lists the
 * claims; a hidden one keeps its status and confidence, its claim and sources null.
 *
 * A post that names files (the newer API's attachments, relay/files/) shows `attachment_count`
 * and `attachment_bytes` after `signed` at snippets and full, and the list `[{sha256, name,
 * media_type, bytes}]` at full; a hidden post shows none of them (they are among its words).
 *
 * `*` members only: left out entirely (not null) for a reader outside the SPACE, whose proof
 * block then has no `private`, `chain.admitted_revision` or `chain.admitted_control_hash`.
 *
 * A post withheld or hidden (spec/1-concepts.md "Unavailable marker") keeps its position and
 * link and carries `unavailable: {state, reason, since}`; one function, `wordsOf`, decides
 * that it shows none of its words, and every member below reads the words from it alone:
 * `title`, `to`, `snippet`, `body`, `run_id` null; `fingerprints` empty with a count of 0;
 * `budget`, `data` and `sealed` left out; the proof block keeps `object_id` and the chain link
 * but has `canonical`, `private` and `signature` null. Nothing is shown that the object bytes
 * would have to vouch for, so a verifier checks such a post as a chain position (objects.md
 * §13 step 5) and finds no field it cannot check. `kind`, `signed`, the thread links
 * (`reply_to`, `supersedes`, `retracts`) and the chain stay: the post's place, not its words.
 *
 * A sealed post (protocol/sealed.md §7) has no words: title and snippet are null, body null at
 * full; `sealed` shows `{generation, bytes}`, and at full also the header and ciphertext (b64u)
 * that members' software opens.
 *
 * `summary` (a newer API's post field, objects.md §2) is shown where the post's object carries
 * one, read from the object bytes themselves (the store keeps no column for it): what a reader
 * is shown of it is exactly what the object vouches for. Left out when there is none.
 *
 * Every 64-bit number is a decimal string (`seq`, `admitted_revision`); times ISO with ms and Z.
 */
import type { JsonObject, JsonValue } from '../../shared/canonical.js';
import { fromHex, toBase64url, toHex } from '../../shared/encoding.js';
import { PASSKEY_ALGORITHM_NAMES, passkeyKeyOf, readAssertionRecord } from '../../shared/passkey.js';
import { SNIPPET_CHARACTERS, SNIPPET_FINGERPRINTS } from '../../shared/limits.js';
import type { Fingerprint } from '../../shared/validate.js';
import type { AttachmentRow } from '../store/files.js';
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

/** What a post says and what vouches for it: everything a withheld or hidden post does not show. */
export interface PostWords {
  title: string | null;
  summary: string | null;
  body: string | null;
  to: string[];
  fingerprints: Fingerprint[];
  /** JSON text of the members-only fields, or null when the post has none. */
  dataJson: string | null;
  budgetJson: string | null;
  runId: string | null;
  /** The object bytes, the private part and the author's signature over them. */
  canonical: Uint8Array;
  private: Uint8Array | null;
  signature: Uint8Array | null;
  sealedItem: ReadPost['sealedItem'];
  /** The files it attaches (relay/files/), in its author's order. */
  attachments: AttachmentRow[];
}

/**
 * The one decision of what a post shows: its words, or null when it keeps only its position
 * (any `unavailable` marker). Every read path renders through here (renderPost, proofBlock).
 */
export function wordsOf(p: ReadPost): PostWords | null {
  if (unavailableOf(p) !== null) return null;
  return {
    title: p.title,
    summary: p.sealed ? null : summaryOf(p.canonical),
    body: p.body,
    to: parseJson<string[]>(p.toJson) ?? [],
    fingerprints: parseJson<Fingerprint[]>(p.fingerprintsJson) ?? [],
    dataJson: p.dataJson,
    budgetJson: p.budgetJson,
    runId: p.runId,
    canonical: p.canonical,
    private: p.private,
    signature: p.signature,
    sealedItem: p.sealed ? p.sealedItem : null,
    attachments: parseJson<AttachmentRow[]>(p.attachmentsJson) ?? [],
  };
}

/** The member name as RFC 8785 writes it; inside a string value every quote is escaped, so only a member matches. */
const SUMMARY_MEMBER = Buffer.from('"summary":"', 'utf8');

/** The object's `summary`, or null; the object is parsed only when it names one. */
export function summaryOf(canonical: Uint8Array): string | null {
  const bytes = Buffer.from(canonical.buffer, canonical.byteOffset, canonical.byteLength);
  if (bytes.indexOf(SUMMARY_MEMBER) === -1) return null;
  const o = JSON.parse(bytes.toString('utf8')) as { summary?: unknown };
  return typeof o.summary === 'string' ? o.summary : null;
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

/**
 * A signed post's `proof.signature` (objects.md §13): Ed25519 `{alg, value (hex), public_key
 * (hex)}`; a passkey's `{alg: "webauthn", value, public_key (SPKI), key_algorithm,
 * credential_id, client_data_json, authenticator_data}`, b64u, from the stored assertion.
 */
function signatureMember(p: ReadPost, stored: Uint8Array): JsonObject {
  if (p.authorKeyType !== 'passkey') return { alg: 'ed25519', value: toHex(stored), public_key: p.authorPublicKey };
  const a = readAssertionRecord(stored);
  const spki = fromHex(p.authorPublicKey, undefined, 'public_key');
  const key = passkeyKeyOf(spki);
  return {
    alg: 'webauthn',
    value: a.signature,
    public_key: toBase64url(spki),
    key_algorithm: key.ok ? PASSKEY_ALGORITHM_NAMES[key.value.algorithm] : null,
    credential_id: a.credential_id,
    client_data_json: a.client_data_json,
    authenticator_data: a.authenticator_data,
  };
}

/**
 * The proof block (objects.md §13) as this reader may see it. Without the words (`words`
 * null) it has no object bytes, private part or signature: a signature over bytes nobody is
 * shown vouches for nothing a reader can check.
 */
export function proofBlock(p: ReadPost, words: PostWords | null, inside: boolean): JsonObject {
  const block: JsonObject = {
    object_id: toHex(p.objectId),
    canonical: words === null ? null : toBase64url(words.canonical),
  };
  if (inside) block.private = words?.private == null ? null : toBase64url(words.private);
  block.signature = words?.signature == null ? null : signatureMember(p, words.signature);
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
 * open none of it. Null for a post that is not sealed, or shows no words.
 */
function sealedMember(words: PostWords | null, withItem: boolean): JsonObject | null {
  const item = words?.sealedItem ?? null;
  if (item === null) return null;
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

  // Below, content comes from `words` only (null: the post shows none of it).
  const words = wordsOf(p);
  const fingerprints = words?.fingerprints ?? [];
  out.title = words?.title ?? null;
  if (words?.summary != null) out.summary = words.summary;
  const sealed = sealedMember(words, o.detail === 'full');
  if (sealed !== null) out.sealed = sealed;
  out.to = words === null ? null : words.to;
  out.reply_to = p.replyTo;
  if (o.inside) {
    out.admitted_revision = String(p.admittedRevision);
    if (words?.budgetJson != null) out.budget = parseJson<JsonObject>(words.budgetJson);
  }
  const shown = o.detail === 'full' ? fingerprints : fingerprints.slice(0, SNIPPET_FINGERPRINTS);
  out.fingerprints = shown.map((f) => ({ scheme: f.scheme, value: f.value }));
  out.fingerprint_count = fingerprints.length;
  out.signed = p.signed;
  // The newer API's attachments: how many and their bytes, only when there are some to show.
  const attachments = words?.attachments ?? [];
  if (attachments.length > 0) {
    out.attachment_count = attachments.length;
    out.attachment_bytes = attachments.reduce((sum, a) => sum + a.bytes, 0);
  }

  // A sealed post's words are its ciphertext: no text to show.
  const text = words === null || p.sealed ? null : (words.body ?? '');
  if (o.detail === 'snippets') {
    const s = text === null ? { snippet: null, truncated: false } : snippetOf(text);
    out.snippet = s.snippet;
    out.snippet_truncated = s.truncated;
    if (p.finding !== null) {
      const f = p.finding;
      out.finding = { claim: words === null ? null : f.claim, status: f.retracted ? 'withdrawn' : f.status, confidence: f.confidence, sources: words === null ? null : f.sources };
    }
    return out;
  }

  out.body = text;
  // The list at full, never the bytes: each is fetched from the SPACE by its hash.
  if (attachments.length > 0) out.attachments = attachments.map((a) => ({ sha256: a.sha256, name: a.name, media_type: a.media_type, bytes: a.bytes }));
  if (o.inside) {
    if (words?.dataJson != null) out.data = parseJson<JsonValue>(words.dataJson);
    out.run_id = words?.runId ?? null;
  }
  out.supersedes = p.supersedes;
  out.retracts = p.retracts;
  out.space_id = p.spaceId;
  out.object_id = toHex(p.objectId);
  if (o.proof) out.proof = proofBlock(p, words, o.inside);
  return out;
}
