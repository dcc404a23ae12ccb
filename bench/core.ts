/**
 * The core suite: the protocol's hot paths beside the node:crypto primitives they rest on.
 *
 *   object + object_id   buildPostObject (signed form) → RFC 8785 bytes → H(L("object") ‖ bytes),
 *                        for a post whose canonical object is exactly 1,024 bytes;
 *   submission check     checkSignedSubmission on that post signed with Ed25519, as the relay
 *                        runs it on a parsed request body (one author, so its KeyObject is
 *                        the cached one, as for the few authors that sign most posts);
 *   Merkle root          merkleRoot over 1,024 leaf hashes (1,023 node hashes, RFC 9162).
 *
 * Baselines: bare Ed25519 sign and verify through node:crypto with KeyObjects made once, over
 * the same 60-byte preimage the submission check verifies; one SHA-256 of the 1 KiB canonical
 * bytes; 1,023 one-shot SHA-256 of 65 bytes (what a 1,024-leaf root hashes).
 *
 * Target: checking a signed 1 KiB submission costs at most 1.3 times a bare verify.
 */
import { createPrivateKey, createPublicKey, hash, sign, verify } from 'node:crypto';
import { equalBytes, toBase64url, toHex } from '../shared/encoding.js';
import { peerIdHexOf, signerFromSeed } from '../shared/identity.js';
import { merkleRoot } from '../shared/merkle.js';
import {
  buildPostObject,
  checkSignedSubmission,
  objectIdOf,
  objectSignaturePreimage,
  postObjectBytes,
  signPost,
  type PostFields,
} from '../shared/objects.js';
import {
  costRatio,
  formatRatio,
  measureLatency,
  measureThroughput,
  percentile,
  type LatencySummary,
  type Row,
  type Suite,
  type SuiteReport,
} from './harness.js';

const TARGET_RATIO = 1.3;
const CANONICAL_BYTES = 1024;
const LEAVES = 1024;
const ROUNDS = 15;
const ROUND_MS = 120;
/** Cases also timed call by call (p50/p99/max), with how many calls. */
const LATENCY_COUNTS: ReadonlyArray<readonly [string, number]> = [
  ['ed25519 verify (bare)', 2000],
  ['ed25519 sign (bare)', 2000],
  ['submission check 1 KiB', 2000],
  ['object + object_id 1 KiB', 5000],
  ['merkle root 1,024 leaves', 300],
];

/** A fixed seed: the bench is deterministic and signs nothing anyone would trust. */
const SEED = Uint8Array.from({ length: 32 }, (_, i) => 0x40 + i);
const SPACE_ID = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0';

/** Post fields whose signed canonical object is exactly `CANONICAL_BYTES` long. */
function kibPostFields(authorId: string): Omit<PostFields, 'private_digest'> {
  const base = {
    space_id: SPACE_ID,
    author_id: authorId,
    kind: 'result',
    idempotency_key: 'bench-core-0001',
    title: 'Benchmark post of one KiB',
    to: [toHex(hash('sha256', 'peer-a', 'buffer')), toHex(hash('sha256', 'peer-b', 'buffer'))].sort(),
    reply_to: '11111111-2222-4333-8444-555555555555',
  };
  const withoutBody = postObjectBytes(buildPostObject({ ...base, body: 'x' }, 'signed')).length - 1;
  const body = 'The quick brown fox jumps over the lazy dog. '.repeat(30).slice(0, CANONICAL_BYTES - withoutBody);
  return { ...base, body };
}

function leafHashes(): Uint8Array[] {
  return Array.from({ length: LEAVES }, (_, i) => new Uint8Array(hash('sha256', `leaf ${i}`, 'buffer')));
}

function run(): SuiteReport {
  const signer = signerFromSeed(SEED);
  const authorId = peerIdHexOf(signer.publicKey);
  const fields = kibPostFields(authorId);
  const signed = signPost({ fields, signer });
  if (signed.canonical.length !== CANONICAL_BYTES) throw new Error(`post is ${signed.canonical.length} bytes, not 1 KiB`);
  const context = { spaceId: SPACE_ID, authorId, publicKey: signer.publicKey };
  // The relay checks a body it has just parsed from JSON; give the checker that same shape.
  const body: unknown = JSON.parse(JSON.stringify(signed.submission));
  if (!equalBytes(checkSignedSubmission(body, context).objectId, signed.objectId)) {
    throw new Error('submission check gave another object_id');
  }

  // Bare primitives: KeyObjects made once, the same preimage and signature as the check.
  const privateKey = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: toBase64url(SEED), x: toBase64url(signer.publicKey) },
    format: 'jwk',
  });
  const publicKey = createPublicKey(privateKey);
  const preimage = objectSignaturePreimage(signed.objectId);
  const signature = sign(null, preimage, privateKey);
  if (!verify(null, preimage, publicKey, signature) || toHex(signature) !== signed.submission.signature) {
    throw new Error('bare Ed25519 does not agree with the signer');
  }

  const leaves = leafHashes();
  const node = new Uint8Array(65);
  node[0] = 0x01;
  const canonical = signed.canonical;

  const cases = [
    { name: 'ed25519 verify (bare)', fn: () => verify(null, preimage, publicKey, signature) },
    { name: 'submission check 1 KiB', fn: () => checkSignedSubmission(body, context) },
    { name: 'ed25519 sign (bare)', fn: () => sign(null, preimage, privateKey) },
    { name: 'sha256 1 KiB (bare)', fn: () => hash('sha256', canonical, 'buffer') },
    { name: 'object + object_id 1 KiB', fn: () => objectIdOf(postObjectBytes(buildPostObject(fields, 'signed'))) },
    {
      name: 'sha256 65 B ×1,023 (bare)',
      fn: () => {
        let out: Buffer | undefined;
        for (let i = 1; i < LEAVES; i++) out = hash('sha256', node, 'buffer');
        return out;
      },
    },
    { name: 'merkle root 1,024 leaves', fn: () => merkleRoot(leaves) },
  ];
  const results = measureThroughput(cases, { warmupMs: 250, roundMs: ROUND_MS, rounds: ROUNDS });
  const ops = new Map(results.map((r) => [r.name, r]));
  const get = (name: string) => ops.get(name)!;
  // Per-call latency where a call is long enough for the clock read (tens of ns) not to matter.
  const latency = new Map<string, LatencySummary>();
  for (const [name, count] of LATENCY_COUNTS) {
    const c = cases.find((x) => x.name === name)!;
    latency.set(name, measureLatency(c.fn, { warmupMs: 50, count }).latency);
  }
  const row = (name: string, extra: Omit<Row, 'name' | 'opsPerSec'> = {}): Row => {
    const l = latency.get(name);
    return { name, opsPerSec: get(name).opsPerSec, ...(l === undefined ? {} : { latency: l }), ...extra };
  };

  const verifyOps = get('ed25519 verify (bare)');
  const check = get('submission check 1 KiB');
  const ratio = costRatio(check.opsPerSec, verifyOps.opsPerSec);
  const met = ratio <= TARGET_RATIO;
  const medianRatio = costRatio(check.medianOpsPerSec, verifyOps.medianOpsPerSec);
  // Rounds are interleaved, so round i of the check and of the verify ran side by side.
  const roundRatios = check.roundsOpsPerSec.map((o, i) => costRatio(o, verifyOps.roundsOpsPerSec[i]!));

  const rows: Row[] = [
    row('ed25519 verify (bare)'),
    row('ed25519 sign (bare)', { baseline: 'ed25519 verify (bare)' }),
    row('submission check 1 KiB', {
      baseline: 'ed25519 verify (bare)',
      note: `${met ? 'target met' : 'target missed'} (≤ ${formatRatio(TARGET_RATIO)} verify)`,
    }),
    row('sha256 1 KiB (bare)'),
    row('object + object_id 1 KiB', { baseline: 'sha256 1 KiB (bare)' }),
    row('sha256 65 B ×1,023 (bare)'),
    row('merkle root 1,024 leaves', { baseline: 'sha256 65 B ×1,023 (bare)' }),
  ];
  const sortedRatios = [...roundRatios].sort((x, y) => x - y);
  const q1 = percentile(sortedRatios, 25);
  const q3 = percentile(sortedRatios, 75);
  return {
    rows,
    notes: [
      `submission check / bare verify: ${formatRatio(ratio, 3)} (best rounds; medians ${formatRatio(medianRatio, 3)}, ` +
        `paired rounds interquartile ${formatRatio(q1)}–${formatRatio(q3)}), ` +
        `target ≤ ${formatRatio(TARGET_RATIO)}: ${met ? 'target met' : 'target missed'}`,
      `ops/s: best of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms; "vs baseline": time per op ÷ the baseline's; ` +
        'p50/p99/max: calls timed one by one after the rounds',
    ],
  };
}

export const coreSuite: Suite = {
  name: 'core',
  title: 'core: objects, submission check, Merkle root vs node:crypto',
  run,
};
