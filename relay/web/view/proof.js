// One post's proof, checked in the browser (protocol/objects.md §13, steps 1 to 6): the answer
// of posts.proof `{post, leaf, checkpoint, inclusion}` against the service root key the page
// pinned. Nothing the server shows is trusted: each check is run here and answers
// `{id, name, ok, detail}`, ok true (passed), false (failed: the detail says what) or null
// (nothing to check: not yet covered, no signature, words withheld).

import { canonicalBytes, readCanonicalObject, sameJson } from './canonical.js';
import { concat, fromB64u, fromHex, isHex, isUuid, label, labelledHash, toHex, u64, uuid16, verifyEd25519 } from './bytes.js';
import { checkCheckpointSignature, checkInclusion, checkServiceKey, readCheckpoint } from './checkpoint.js';
import { checkPasskeySignature } from './webauthn.js';

/** The members a post object may have (objects.md §2). */
const OBJECT_MEMBERS = ['v', 'space_id', 'author_id', 'idempotency_key', 'kind', 'title', 'summary', 'body', 'to', 'reply_to', 'supersedes', 'retracts', 'fingerprints', 'private_digest', 'sealed'];

function sorted(list) {
  return Array.isArray(list) ? list.map((x) => JSON.stringify(x)).sort() : [];
}

function fingerprintsOf(list) {
  return Array.isArray(list) ? list.map((f) => [f && f.scheme, f && f.value]) : [];
}

/**
 * The newer API's attachments: each file a post shows is bound to it by a `sha256.file`
 * fingerprint of its object (the relay adds them to an unsigned post's object; a signed post's
 * author signed them). A file the object does not name fails, naming it. Answers how many.
 */
function attachmentsBound(shown, object) {
  if (shown === undefined || shown === null || (Array.isArray(shown) && shown.length === 0)) return 0;
  if (!Array.isArray(shown)) throw new Error('attachments: not a list');
  const prints = new Set((Array.isArray(object.fingerprints) ? object.fingerprints : []).filter((f) => f && f.scheme === 'sha256.file').map((f) => f.value));
  shown.forEach((a, i) => {
    const sha = a && typeof a === 'object' ? a.sha256 : undefined;
    const name = a && typeof a.name === 'string' ? ` (${JSON.stringify(a.name.slice(0, 64))})` : '';
    if (typeof sha !== 'string' || !prints.has(sha)) {
      throw new Error(`attachments[${i}]${name}: its sha256 is not a sha256.file fingerprint of the post's object, so nothing the author wrote binds that file to it`);
    }
  });
  return shown.length;
}

async function objectMatches(object, post) {
  if (object.author_id !== post.author) throw new Error('the object names another author');
  if (object.space_id !== post.space_id) throw new Error('the object names another SPACE');
  if (object.kind !== post.kind) throw new Error('the object has another kind');
  for (const m of ['reply_to', 'supersedes', 'retracts']) {
    if ((object[m] ?? null) !== (post[m] ?? null)) throw new Error(`the object's ${m} differs from the post's`);
  }
  if (!sameJson(sorted(object.to), sorted(post.to))) throw new Error("the object's recipients differ from the post's");
  if (object.sealed !== undefined) {
    if (Array.isArray(post.attachments) && post.attachments.length > 0) throw new Error('attachments are shown on a sealed post, which names no files');
    const shown = post.sealed;
    if (shown && typeof shown.header === 'string') {
      const header = await labelledHash('sealed-header', fromB64u(shown.header, 'sealed.header'));
      const ciphertext = await labelledHash('sealed-ciphertext', fromB64u(shown.ciphertext, 'sealed.ciphertext'));
      if (toHex(header) !== object.sealed.header) throw new Error('the sealed header does not hash to the object\'s digest');
      if (toHex(ciphertext) !== object.sealed.ciphertext) throw new Error('the ciphertext does not hash to the object\'s digest');
      return 'author, SPACE, kind, recipients, links, and the sealed header and ciphertext digests match';
    }
    return 'author, SPACE, kind, recipients and links match (sealed: no words to compare)';
  }
  if ((object.title ?? null) !== (post.title ?? null)) throw new Error("the object's title differs from the post's");
  if (post.body !== null && (object.body ?? '') !== post.body) throw new Error("the object's body differs from the post's");
  if (!sameJson(sorted(fingerprintsOf(object.fingerprints)), sorted(fingerprintsOf(post.fingerprints)))) {
    throw new Error("the object's fingerprints differ from the post's");
  }
  const files = attachmentsBound(post.attachments, object);
  return `author, SPACE, kind, title, body, recipients, links and fingerprints match${files > 0 ? `; its ${files} attachment${files === 1 ? ' is' : 's are'} bound by sha256.file fingerprints of the object` : ''}`;
}

async function authorSignature(sig, post, objectId, passkeys) {
  if (sig.alg === 'ed25519') {
    const publicKey = fromHex(sig.public_key, 32, 'signature.public_key');
    if (toHex(await labelledHash('agent', publicKey)) !== post.author) throw new Error("the signing key is not the author's KEY");
    const value = fromHex(sig.value, 64, 'signature.value');
    if (!(await verifyEd25519(publicKey, concat(label('object-signature'), objectId), value))) throw new Error("the author's Ed25519 signature does not verify");
    return "the author's Ed25519 KEY signed the object id";
  }
  if (sig.alg === 'webauthn') {
    await checkPasskeySignature(sig, post.author, objectId, passkeys);
    return "the author's passkey signed the object id";
  }
  return null;
}

async function chainLink(post, proof, objectId) {
  const chain = proof.chain;
  if (!chain || typeof chain !== 'object') throw new Error('proof.chain: missing');
  if (chain.seq !== post.seq) throw new Error('proof.chain.seq differs from the post');
  const space = uuid16(post.space_id, 'space_id');
  const admission = fromHex(chain.admission, 32, 'proof.chain.admission');
  const previous = fromHex(chain.previous_hash, 32, 'proof.chain.previous_hash');
  const parts = [];
  if (chain.admitted_revision !== undefined) {
    const control = fromHex(chain.admitted_control_hash, 32, 'proof.chain.admitted_control_hash');
    const rebuilt = await labelledHash('object-admission', u64(chain.admitted_revision, 'admitted_revision'), control);
    if (toHex(rebuilt) !== chain.admission) throw new Error('the admission is not H(L("object-admission") ‖ revision ‖ control hash)');
    parts.push(`admitted under governance revision ${chain.admitted_revision}`);
  }
  if (post.seq === '1') {
    const genesis = await labelledHash('object-genesis', space);
    if (toHex(genesis) !== chain.previous_hash) throw new Error('position 1 does not follow the SPACE\'s genesis');
    parts.push('first of its SPACE');
  }
  const link = await labelledHash('object-chain', space, u64(post.seq, 'seq'), admission, previous, objectId);
  if (toHex(link) !== chain.chain_hash) throw new Error('chain_hash is not H(L("object-chain") ‖ SPACE ‖ seq ‖ admission ‖ previous ‖ object id)');
  return [`position ${post.seq} links to the one before`, ...parts].join('; ');
}

/**
 * Every check of one post, in order. `answer` is what posts.proof served; `host` is
 * /view/host.json (its `service_root_key` is the pinned root; `passkeys` the rp id and
 * origins a passkey signature must name).
 */
export async function checkProof(answer, host) {
  const checks = [];
  const add = (id, name, ok, detail) => checks.push({ id, name, ok, detail });
  /** Run one check: a thrown Error is a failure with its message; a null answer is "nothing to check". */
  async function step(id, name, run, nothing) {
    try {
      const detail = await run();
      if (detail === null) add(id, name, null, nothing);
      else add(id, name, true, detail);
      return true;
    } catch (e) {
      add(id, name, false, e instanceof Error ? e.message : String(e));
      return false;
    }
  }

  const post = answer && answer.post;
  const proof = post && post.proof;
  if (!post || !proof || typeof proof !== 'object') {
    add('proof', 'Proof block', false, 'the answer carries no proof block');
    return checks;
  }
  let objectId = null;
  let chainHash = null;
  await step('object-id', 'Object id', async () => {
    objectId = fromHex(proof.object_id, 32, 'proof.object_id');
    if (post.object_id !== undefined && post.object_id !== proof.object_id) throw new Error('the post and its proof name different object ids');
    if (proof.canonical === null) return null;
    const id = await labelledHash('object', fromB64u(proof.canonical, 'proof.canonical'));
    if (toHex(id) !== proof.object_id) throw new Error('the object id is not H(L("object") ‖ canonical bytes)');
    return `${proof.object_id.slice(0, 16)}… is the hash of the object's bytes`;
  }, 'the words are withheld: the post is checked as a position in its chain');

  let object = null;
  if (proof.canonical !== null) {
    await step('object', 'Object agrees with the post', async () => {
      object = readCanonicalObject(fromB64u(proof.canonical, 'proof.canonical'), 'proof.canonical');
      for (const m of Object.keys(object)) if (!OBJECT_MEMBERS.includes(m)) throw new Error(`the object has an unexpected member ${m}`);
      if (object.v !== 1 || !isUuid(object.space_id) || !isHex(object.author_id, 32)) throw new Error('the object is not a version 1 post object');
      return `canonical JSON; ${await objectMatches(object, post)}`;
    });
    if (typeof proof.private === 'string') {
      await step('private', 'Private part', async () => {
        const bytes = fromB64u(proof.private, 'proof.private');
        if (object === null || object.private_digest !== toHex(await labelledHash('object-private', bytes))) throw new Error('the private part does not hash to private_digest');
        readCanonicalObject(bytes, 'proof.private');
        return 'hashes to the object\'s private_digest';
      });
    }
  }

  await step('signature', "Author's signature", async () => {
    if (objectId === null) throw new Error('no object id to check against');
    const sig = proof.signature;
    if (sig && typeof sig === 'object') {
      const said = await authorSignature(sig, post, objectId, host.passkeys ?? null);
      if (said === null) throw new Error(`a ${String(sig.alg)} signature, which this page cannot check`);
      return said;
    }
    if (post.signed === true && proof.canonical !== null) throw new Error('marked signed, but no signature is shown');
    return null;
  }, post.unavailable ? 'not shown: the words are withheld' : 'unsigned: the relay wrote the object for its author (origin-attested)');

  await step('chain', 'Chain link', async () => {
    if (objectId === null) throw new Error('no object id to check against');
    const said = await chainLink(post, proof, objectId);
    chainHash = fromHex(proof.chain.chain_hash, 32, 'proof.chain.chain_hash');
    return said;
  });

  await step('receipt', 'Receipt', async () => checkReceipt(post, answer), 'given to the writer with its answer; a read carries none (the checkpoint vouches for the position)');

  const served = answer.checkpoint;
  if (served === null || served === undefined) {
    add('checkpoint', 'Checkpoint', null, 'not yet covered: no checkpoint signs this position yet (one is made within ten minutes)');
    return checks;
  }
  let read = null;
  await step('checkpoint', 'Checkpoint signature', async () => {
    read = await readCheckpoint(served);
    await checkCheckpointSignature(read);
    return `positions ${read.fields.first} to ${read.fields.last}, signed ${read.fields.created_at}`;
  });
  await step('merkle', 'Merkle path', async () => {
    if (read === null) throw new Error('no checkpoint to check against');
    if (chainHash === null || objectId === null) throw new Error('no verified link to place in the tree');
    const at = await checkInclusion(read, post, objectId, chainHash, answer.leaf, answer.inclusion);
    return `leaf ${at.index + 1} of ${at.size} leads to the signed root`;
  });
  await step('root', 'Service root key', async () => {
    if (read === null) throw new Error('no checkpoint to check against');
    const key = await checkServiceKey(read);
    const pinned = host.service_root_key;
    if (!isHex(pinned, 32)) throw new Error('this page has no root key to check against');
    if (key.root !== pinned) throw new Error(`the checkpoint's signer is vouched for by root ${key.root.slice(0, 16)}…, not the pinned ${pinned.slice(0, 16)}…`);
    const said = `the signing key is certified for checkpoints by the pinned root ${pinned.slice(0, 16)}…`;
    return key.development ? `${said} (a development key the relay made for itself: it vouches only that this process said so)` : said;
  });
  return checks;
}

/**
 * A receipt shown with a post (the bridge keeps the receipt its KEY was given): rebuilt from
 * the post's own members and checked under the signer the checkpoint or host names. Null when
 * there is none.
 */
async function checkReceipt(post, answer) {
  const r = post.receipt;
  if (!r || typeof r !== 'object') return null;
  const signer = [answer.checkpoint && answer.checkpoint.signer, ...(answer.signers ?? [])].find((s) => s && s.key_id === r.signer_key_id);
  if (!signer) throw new Error(`signed by key ${String(r.signer_key_id).slice(0, 16)}…, which this page has not seen certified`);
  const canonical = canonicalBytes({
    chain_hash: post.proof.chain.chain_hash,
    object_id: post.proof.object_id,
    post_id: post.post_id,
    posted_at: r.posted_at ?? post.posted_at,
    seq: post.seq,
    service_epoch: r.service_epoch,
    signer_key_id: r.signer_key_id,
    space_id: post.space_id,
    v: 1,
  });
  const id = await labelledHash('receipt', canonical);
  const ok = await verifyEd25519(fromHex(signer.public_key, 32, 'signer.public_key'), concat(label('receipt-signature'), id), fromHex(r.signature, 64, 'receipt.signature'));
  if (!ok) throw new Error('the receipt signature does not verify');
  return `the relay's key ${r.signer_key_id.slice(0, 16)}… signed SPACE, position, object and link`;
}
