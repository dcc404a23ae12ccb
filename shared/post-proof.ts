/**
 * objects.md §13 steps 1-5 on one post rendered at full detail with its proof block: object id,
 * object against the shown post (its attachments among it: each a `sha256.file` fingerprint of
 * the object), private part, the author's signature and the chain link. Pure:
 * nothing trusted, nothing fetched, so every reader runs the same code (the bridge on what it
 * reads, the relay on the lines a mirror is pushed). A check that fails is a verdict, never
 * thrown past it: everything a relay shows is attacker-controlled input.
 */
import { canonicalBytes, type JsonValue } from './canonical.js';
import { verifyPostChain } from './chain.js';
import { fromBase64url, fromHex, isHex, toHex } from './encoding.js';
import { SvcError } from './errors.js';
import { passkeyPeerIdOf, peerIdHexOf } from './identity.js';
import { isSealedPostObject, objectIdOf, objectPasskeyChallenge, privateDigestOf, readPostObject, readPrivatePart, verifyObjectSignature } from './objects.js';
import { checkAssertion, passkeyKeyOf, readAssertion, type PasskeyPolicy } from './passkey.js';

/** The verdict on one post's proof block. */
export interface ProofCheck {
  /** true: verified; false: it failed (report it); null: nothing to check against. */
  readonly ok: boolean | null;
  /** One sentence for the answer. */
  readonly detail: string;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The detail of a failed check, from what a shared verifier threw. */
function why(e: unknown): string {
  if (e instanceof SvcError) return e.detail ?? e.code;
  if (e instanceof Error) return e.message;
  return String(e);
}

function sameJson(a: unknown, b: unknown): boolean {
  return toHex(canonicalBytes(a as JsonValue)) === toHex(canonicalBytes(b as JsonValue));
}

function sortedStrings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String).sort() : [];
}

function sortedFingerprints(v: unknown): string[] {
  return Array.isArray(v) ? v.filter(isObject).map((f) => JSON.stringify([f.scheme, f.value])).sort() : [];
}

/** Members that carry a post's words (api-notes §4): null, absent or empty when it shows none. */
const WORD_MEMBERS = ['title', 'summary', 'body', 'snippet', 'to', 'data', 'budget', 'run_id', 'sealed', 'attachments'] as const;

/**
 * The newer API's attachments (relay/files/): a file a post names is bound to it by a
 * `sha256.file` fingerprint its object carries; the relay adds one for each file of an unsigned
 * post, and a signed post's author put them there before signing. So each file the post shows
 * must be one of the object's: a list the object does not vouch for is a lying relay's. Throws
 * naming the first that is not; answers how many were checked.
 */
function checkAttachments(shown: unknown, object: { fingerprints?: readonly { scheme: string; value: string }[] | undefined }): number {
  if (blank(shown)) return 0;
  if (!Array.isArray(shown)) throw new Error('attachments: not a list');
  const prints = new Set((object.fingerprints ?? []).filter((f) => f.scheme === 'sha256.file').map((f) => f.value));
  shown.forEach((a, i) => {
    const sha = isObject(a) ? a.sha256 : undefined;
    const name = isObject(a) && typeof a.name === 'string' ? ` (${JSON.stringify(a.name.slice(0, 64))})` : '';
    if (typeof sha !== 'string' || !prints.has(sha)) {
      throw new Error(`attachments[${i}]${name}: its sha256 is not a sha256.file fingerprint of the post's object, so nothing the author wrote binds that file to it`);
    }
  });
  return shown.length;
}

function blank(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

/**
 * A post without its object bytes is a chain position only (spec/1-concepts.md "Unavailable
 * marker"): it must carry the marker, and show nothing the missing bytes would have to vouch
 * for. Throws naming the first thing that breaks that; answers the marker's state.
 */
function checkWithoutWords(post: Obj, proof: Obj): string {
  const marker = post.unavailable;
  if (!isObject(marker) || typeof marker.state !== 'string') {
    throw new Error('the object bytes are missing, and the post is not marked unavailable');
  }
  for (const m of WORD_MEMBERS) {
    if (!blank(post[m])) throw new Error(`${m} is shown, and the bytes that would vouch for it are not`);
  }
  if (!blank(post.fingerprints) || (post.fingerprint_count !== undefined && post.fingerprint_count !== 0)) {
    throw new Error('fingerprints are shown, and the bytes that would vouch for them are not');
  }
  if (!blank(proof.private)) throw new Error('a private part is shown without the object that names its digest');
  return marker.state;
}

/** objects.md §13 step 4, Ed25519: the signing key is the author's KEY and signs the object id. */
function checkAuthorSignature(sig: Obj, author: unknown, objectIdHex: string): void {
  const publicKey = fromHex(sig.public_key, 32, 'proof.signature.public_key');
  if (peerIdHexOf(publicKey) !== author) throw new Error("the signing key is not the author's KEY");
  if (!verifyObjectSignature(publicKey, fromHex(objectIdHex, 32), fromHex(sig.value, 64, 'proof.signature.value'))) {
    throw new Error("the author's signature does not verify");
  }
}

/**
 * objects.md §13 step 4, passkey: the SPKI shown is the author's KEY (peer id H(L("passkey") ‖
 * spki)) and its WebAuthn assertion holds over H(L("object-signature") ‖ object_id) under the
 * relay's published passkey policy (capabilities `protocol.passkeys`: rp_id and origins). The
 * signature counter is the relay's to watch; a reader cannot.
 */
function checkPasskeySignature(sig: Obj, author: unknown, objectIdHex: string, policy: PasskeyPolicy): void {
  const spki = fromBase64url(sig.public_key, 'proof.signature.public_key');
  if (toHex(passkeyPeerIdOf(spki)) !== author) throw new Error("the signing passkey is not the author's KEY");
  const key = passkeyKeyOf(spki);
  if (!key.ok) throw new Error(`proof.signature.public_key: ${key.check}`);
  const assertion = readAssertion({ ...sig, signature: sig.value }, 'proof.signature.');
  const checked = checkAssertion(assertion, key.value, objectPasskeyChallenge(fromHex(objectIdHex, 32)), policy);
  if (!checked.ok) throw new Error(`the author's passkey signature does not verify: ${checked.check}`);
}

/**
 * Check the author's signature shown in a proof block; answers whether it was checked (false:
 * a passkey signature on a relay that publishes no passkey policy, said in `notes`).
 */
function checkShownSignature(sig: Obj, author: unknown, objectIdHex: string, passkeys: PasskeyPolicy | null, notes: string[]): boolean {
  if (sig.alg === 'ed25519') {
    checkAuthorSignature(sig, author, objectIdHex);
    return true;
  }
  if (sig.alg === 'webauthn') {
    if (passkeys === null) {
      notes.push('a passkey signature, not checked: the relay publishes no passkey rp_id and origins');
      return false;
    }
    checkPasskeySignature(sig, author, objectIdHex, passkeys);
    return true;
  }
  // Another service's algorithm (the reference's app-connection signatures): shown, not vouched for.
  notes.push(`a ${String(sig.alg)} signature (not checked here)`);
  return false;
}

/**
 * objects.md §13 steps 1-5 on one post rendered at full detail with its proof block. Pure:
 * nothing trusted, nothing fetched. A withheld or hidden post (`canonical` null) is checked
 * as a chain position: its marker, nothing of its words shown, a signature if one is shown,
 * and its link. A post not marked unavailable must show its object bytes.
 */
export function checkPostProof(post: Obj, passkeys: PasskeyPolicy | null = null): ProofCheck {
  try {
    const proof = post.proof;
    if (!isObject(proof)) return { ok: null, detail: 'no proof block' };
    const objectIdHex = proof.object_id;
    if (!isHex(objectIdHex, 32)) throw new Error('proof.object_id: not 64 hex');
    if (post.object_id !== undefined && post.object_id !== objectIdHex) throw new Error('proof.object_id differs from the post');
    const spaceId = post.space_id;
    if (typeof spaceId !== 'string') throw new Error('space_id: missing (read at detail=full)');
    const notes: string[] = [];
    let signatureChecked = false;
    // 1. object_id is the hash of the canonical bytes.
    if (proof.canonical !== null) {
      const canonical = fromBase64url(proof.canonical, 'proof.canonical');
      if (toHex(objectIdOf(canonical)) !== objectIdHex) throw new Error('object_id is not H(L("object") || canonical)');
      // 2. The object agrees with the shown post.
      const object = readPostObject(canonical, post.signed === true ? 'signed' : 'unsigned', 'proof.canonical');
      if (object.author_id !== post.author) throw new Error('the object names another author');
      if (object.space_id !== spaceId) throw new Error('the object names another SPACE');
      if (object.kind !== post.kind) throw new Error('the object has another kind');
      for (const m of ['reply_to', 'supersedes', 'retracts'] as const) {
        if ((object[m] ?? null) !== (post[m] ?? null)) throw new Error(`the object's ${m} differs from the post's`);
      }
      if (!sameJson(sortedStrings(object.to), sortedStrings(post.to))) throw new Error("the object's to differs from the post's");
      // A sealed post's words are its ciphertext: a sealed SPACE takes no files, so none is bound to it.
      if (isSealedPostObject(object) && !blank(post.attachments)) throw new Error('attachments are shown on a sealed post, which names no files');
      if (!isSealedPostObject(object)) {
        if ((object.title ?? null) !== (post.title ?? null)) throw new Error("the object's title differs from the post's");
        if ((object.summary ?? null) !== (post.summary ?? null)) throw new Error("the object's summary differs from the post's");
        if (post.body !== null && (object.body ?? '') !== post.body) throw new Error("the object's body differs from the post's");
        if (!sameJson(sortedFingerprints(object.fingerprints), sortedFingerprints(post.fingerprints))) {
          throw new Error("the object's fingerprints differ from the post's");
        }
        const files = checkAttachments(post.attachments, object);
        if (files > 0) notes.push(`${files} attachment${files === 1 ? '' : 's'}, each a sha256.file fingerprint of the object`);
        // 3. The private part, when shown, hashes to private_digest and carries the post's fields.
        if (typeof proof.private === 'string') {
          const bytes = fromBase64url(proof.private, 'proof.private');
          if (object.private_digest !== toHex(privateDigestOf(bytes))) throw new Error('the private part does not hash to private_digest');
          const part = readPrivatePart(bytes, 'proof.private');
          if (post.data !== undefined && !sameJson(part.data ?? null, post.data ?? null)) throw new Error("the private part's data differs from the post's");
          if (post.budget !== undefined && !sameJson(part.budget ?? null, post.budget ?? null)) throw new Error("the private part's budget differs from the post's");
          if (post.run_id !== undefined && (part.run_id ?? null) !== (post.run_id ?? null)) throw new Error("the private part's run_id differs from the post's");
        } else {
          for (const m of ['data', 'budget', 'run_id'] as const) {
            if (!blank(post[m])) throw new Error(`${m} is shown, and the bytes that would vouch for it are not`);
          }
        }
      }
      // 4. The author's signature.
      const sig = proof.signature;
      if (isObject(sig)) {
        signatureChecked = checkShownSignature(sig, post.author, objectIdHex, passkeys, notes);
      } else if (post.signed === true) {
        throw new Error('marked signed, but no signature is shown');
      }
    } else {
      const state = checkWithoutWords(post, proof);
      // A signature over the object id can still be checked; the relay need not show one.
      if (isObject(proof.signature)) signatureChecked = checkShownSignature(proof.signature, post.author, objectIdHex, passkeys, notes);
      notes.push(`${state}: its words are not shown, so it is checked as a chain position`);
    }
    // 5. The chain link.
    const chain = proof.chain;
    if (!isObject(chain)) throw new Error('proof.chain: missing');
    if (chain.seq !== post.seq) throw new Error('proof.chain.seq differs from the post');
    const seq = BigInt(String(chain.seq));
    const admission = fromHex(chain.admission, 32, 'proof.chain.admission');
    // Members see the admitted revision and control hash: verifyPostChain recomputes the admission from them.
    const admitted =
      chain.admitted_revision === undefined
        ? {}
        : {
            admittedRevision: BigInt(String(chain.admitted_revision)),
            admittedControlHash: fromHex(chain.admitted_control_hash, 32, 'proof.chain.admitted_control_hash'),
          };
    const previous = fromHex(chain.previous_hash, 32, 'proof.chain.previous_hash');
    const link = { seq, objectId: fromHex(objectIdHex, 32), admission, chainHash: fromHex(chain.chain_hash, 32, 'proof.chain.chain_hash'), ...admitted };
    const verdict = verifyPostChain(spaceId, [link], seq === 1n ? undefined : { position: seq - 1n, chainHash: previous });
    if (!verdict.ok) throw new Error(verdict.reason);
    const what = signatureChecked ? 'object, author signature and chain link verify' : 'object and chain link verify';
    return { ok: true, detail: notes.length > 0 ? `${what}; ${notes.join('; ')}` : what };
  } catch (e) {
    return { ok: false, detail: `the proof does not verify: ${why(e)}` };
  }
}
