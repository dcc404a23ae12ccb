// A checkpoint and the Merkle path to one post (protocol/objects.md §9, §11, §12, §13 step 6),
// checked in the browser against the service root key the page pinned. Each function throws
// an Error whose message names the field or rule that failed.

import { readCanonicalObject } from './canonical.js';
import { concat, equal, fromB64u, fromHex, isHex, isUuid, label, labelledHash, sha256, toHex, u64, uuid16, verifyEd25519 } from './bytes.js';

const SIGNED = ['created_at', 'ending_hash', 'first', 'last', 'merkle_root', 'predecessor_hash', 'service_epoch', 'signer_key_id', 'space_id', 'stream', 'v'];
const REPEATED = ['stream', 'first', 'last', 'predecessor_hash', 'ending_hash', 'merkle_root', 'service_epoch', 'created_at'];
const SIGNER = ['key_id', 'public_key', 'root_key', 'certificate', 'certificate_signature', 'development'];
const CERTIFICATE = ['key', 'not_before', 'purposes', 'root', 'v'];
/** A statement may be made up to a minute before its signer's not_before (objects.md §9). */
const CLOCK_SKEW_MS = 60_000;
/** No range of 1,024 positions needs a longer path. */
const MAX_PATH = 16;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function members(obj, field, required, optional = []) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`${field}: expected an object`);
  for (const m of required) if (!Object.hasOwn(obj, m)) throw new Error(`${field}.${m}: missing`);
  for (const m of Object.keys(obj)) if (!required.includes(m) && !optional.includes(m)) throw new Error(`${field}.${m}: unexpected member`);
  return obj;
}

function isoMs(value, field) {
  const ms = typeof value === 'string' && ISO_MS.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== value) throw new Error(`${field}: not an ISO time with milliseconds`);
  return ms;
}

/** The leaf of a post: H(0x00 ‖ L("checkpoint-object") ‖ uuid16 ‖ u64(seq) ‖ object_id ‖ chain_hash). */
export function postLeaf(spaceId, seq, objectId, chainHash) {
  return sha256(new Uint8Array([0]), label('checkpoint-object'), uuid16(spaceId, 'space_id'), u64(seq, 'seq'), objectId, chainHash);
}

function node(left, right) {
  return sha256(new Uint8Array([1]), left, right);
}

/** RFC 9162 §2.1.3.2: does `path` lead from the leaf at `index` of a tree of `size` to `root`? */
export async function verifyInclusion(leaf, index, size, path, root) {
  if (index >= size) throw new Error('inclusion: leaf_index is outside the tree');
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) throw new Error('inclusion.path: longer than the tree needs');
    if (fn % 2 === 1 || fn === sn) {
      r = await node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await node(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new Error('inclusion.path: shorter than the tree needs');
  if (!equal(r, root)) throw new Error('inclusion.path: does not lead to merkle_root');
}

/**
 * Read a served checkpoint strictly: the signed bytes are canonical with exactly the signed
 * members, the served id is their hash, and every repeated member equals the signed one.
 */
export async function readCheckpoint(served) {
  members(served, 'checkpoint', ['checkpoint_id', ...REPEATED, 'previous_checkpoint_id', 'canonical', 'signature', 'signer']);
  const canonical = fromB64u(served.canonical, 'checkpoint.canonical');
  const fields = members(readCanonicalObject(canonical, 'checkpoint.canonical'), 'checkpoint.canonical', SIGNED, ['previous_checkpoint_id']);
  if (fields.v !== 1) throw new Error('checkpoint.canonical.v: must be 1');
  if (fields.stream !== 'posts') throw new Error('checkpoint.stream: is not posts');
  if (!isUuid(fields.space_id)) throw new Error('checkpoint.space_id: expected a uuid');
  for (const m of ['first', 'last']) if (typeof fields[m] !== 'string' || !/^[1-9][0-9]*$/.test(fields[m])) throw new Error(`checkpoint.${m}: expected a decimal from 1`);
  for (const m of ['predecessor_hash', 'ending_hash', 'merkle_root', 'signer_key_id']) if (!isHex(fields[m], 32)) throw new Error(`checkpoint.${m}: expected 64 hex`);
  isoMs(fields.created_at, 'checkpoint.created_at');
  // The range rules (objects.md §11): at most 1,024 positions; the first checkpoint of a
  // stream starts at 1 after the genesis and names no previous one, every later one does.
  const first = BigInt(fields.first);
  const last = BigInt(fields.last);
  if (last < first || last - first + 1n > 1024n) throw new Error('checkpoint: not a range of 1 to 1,024 positions');
  if (first === 1n) {
    if (fields.previous_checkpoint_id !== undefined) throw new Error('checkpoint.previous_checkpoint_id: the first checkpoint names none');
    if (fields.predecessor_hash !== toHex(await labelledHash('object-genesis', uuid16(fields.space_id, 'checkpoint.space_id')))) {
      throw new Error('checkpoint.predecessor_hash: is not the genesis of the SPACE\'s posts');
    }
  } else if (!isHex(fields.previous_checkpoint_id, 32)) throw new Error('checkpoint.previous_checkpoint_id: missing after position 1');
  const id = await labelledHash('checkpoint', canonical);
  if (served.checkpoint_id !== toHex(id)) throw new Error('checkpoint.checkpoint_id: is not H(L("checkpoint") ‖ canonical)');
  for (const m of REPEATED) if (served[m] !== fields[m]) throw new Error(`checkpoint.${m}: differs from the signed member`);
  if ((served.previous_checkpoint_id ?? null) !== (fields.previous_checkpoint_id ?? null)) throw new Error('checkpoint.previous_checkpoint_id: differs from the signed member');
  return { fields, canonical, id, signature: fromHex(served.signature, 64, 'checkpoint.signature'), signer: served.signer };
}

/** The checkpoint's signature under the key its signer names: L("checkpoint-signature") ‖ checkpoint_id. */
export async function checkCheckpointSignature(read) {
  const signer = members(read.signer, 'checkpoint.signer', SIGNER);
  const publicKey = fromHex(signer.public_key, 32, 'checkpoint.signer.public_key');
  if (signer.key_id !== read.fields.signer_key_id) throw new Error('checkpoint.signer.key_id: is not signer_key_id');
  if (!(await verifyEd25519(publicKey, concat(label('checkpoint-signature'), read.id), read.signature))) {
    throw new Error('checkpoint.signature: does not verify under the signing key');
  }
}

/**
 * The signing key is vouched for by the root: key id formula, a certificate naming the key and
 * the root, signed by the root, for purpose `checkpoint`, valid when the checkpoint was made.
 * Answers whether the certificate marks a development key (to be said to the reader).
 */
export async function checkServiceKey(read) {
  const signer = read.signer;
  const publicKey = fromHex(signer.public_key, 32, 'checkpoint.signer.public_key');
  if (toHex(await labelledHash('service-key', publicKey)) !== signer.key_id) throw new Error('checkpoint.signer.key_id: is not H(L("service-key") ‖ public_key)');
  const certificate = fromB64u(signer.certificate, 'checkpoint.signer.certificate');
  const cert = members(readCanonicalObject(certificate, 'certificate'), 'certificate', CERTIFICATE, ['development', 'not_after']);
  if (cert.v !== 1) throw new Error('certificate.v: must be 1');
  if (cert.key !== signer.public_key) throw new Error('certificate: names another key');
  if (cert.root !== signer.root_key) throw new Error('certificate: names another root');
  const root = fromHex(cert.root, 32, 'certificate.root');
  const certificateId = await labelledHash('service-certificate', certificate);
  const rootSignature = fromHex(signer.certificate_signature, 64, 'checkpoint.signer.certificate_signature');
  if (!(await verifyEd25519(root, concat(label('service-certificate-signature'), certificateId), rootSignature))) {
    throw new Error('certificate: the root signature does not verify');
  }
  if (!Array.isArray(cert.purposes) || !cert.purposes.includes('checkpoint')) throw new Error('certificate: does not vouch for checkpoints');
  const at = isoMs(read.fields.created_at, 'checkpoint.created_at');
  if (at < isoMs(cert.not_before, 'certificate.not_before') - CLOCK_SKEW_MS) throw new Error(`certificate: not valid before ${cert.not_before}`);
  if (cert.not_after !== undefined && at >= isoMs(cert.not_after, 'certificate.not_after')) throw new Error(`certificate: expired at ${cert.not_after}`);
  const development = cert.development === true;
  if (Object.hasOwn(cert, 'development') && !development) throw new Error('certificate.development: present only as true');
  if (signer.development !== development) throw new Error('checkpoint.signer.development: differs from the certificate');
  return { development, root: cert.root };
}

/** The leaf formula and the served leaf, then the path to the signed root with index and size from the signed range. */
export async function checkInclusion(read, post, objectId, chainHash, servedLeaf, inclusion) {
  const f = read.fields;
  if (f.space_id !== post.space_id) throw new Error('checkpoint.space_id: is not the SPACE of the post');
  const leaf = await postLeaf(post.space_id, post.seq, objectId, chainHash);
  if (servedLeaf !== undefined && servedLeaf !== toHex(leaf)) throw new Error('leaf: is not the leaf formula of the post');
  const seq = BigInt(post.seq);
  const first = BigInt(f.first);
  const last = BigInt(f.last);
  if (seq < first || seq > last) throw new Error(`checkpoint: range ${f.first}-${f.last} does not cover ${post.seq}`);
  const index = Number(seq - first);
  const size = Number(last - first + 1n);
  const inc = members(inclusion, 'inclusion', ['leaf_index', 'tree_size', 'path']);
  if (inc.leaf_index !== index) throw new Error(`inclusion.leaf_index: the signed range gives ${index}`);
  if (inc.tree_size !== size) throw new Error(`inclusion.tree_size: the signed range gives ${size}`);
  if (!Array.isArray(inc.path) || inc.path.length > MAX_PATH) throw new Error(`inclusion.path: expected at most ${MAX_PATH} hashes`);
  const path = inc.path.map((h, i) => fromHex(h, 32, `inclusion.path[${i}]`));
  await verifyInclusion(leaf, index, size, path, fromHex(f.merkle_root, 32, 'checkpoint.merkle_root'));
  return { index, size };
}
