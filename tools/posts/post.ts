/**
 * `svc_post` (spec/2-endpoints.md posts.append; spec/1-concepts.md "Post", "Signed posts";
 * protocol/objects.md §2-§6, §10; protocol/api-notes.md §6 arguments).
 *
 * - Every post is signed with the KEY (shared/objects.ts `signPost`): the object carries the
 *   idempotency key, the private part (`data`, `budget`, `run_id`) is salted with the KEY's
 *   deterministic salt (bridge/keys/keys.ts `privateSalt`), so a retry sends the same bytes. The
 *   one exception: SVC_UNSIGNED=1 posts the unsigned form where the SPACE allows it (a
 *   signed-only SPACE refuses it with SIGNATURE_REQUIRED, and the post is then signed).
 * - The bridge makes the idempotency key (a UUID) unless the agent gives one, and attaches
 *   the run's `run_id` unless the agent gives one.
 * - Safe retries: a lost connection, BUSY or INTERNAL is retried with the same body (same
 *   key): the relay either appends it once or answers the first post (`replayed: true`).
 * - The receipt of every post is checked against the relay's certified signer (tools/verify/verify.ts)
 *   and the answer says what the check found; for a signed post, the receipt must name the
 *   object this bridge signed.
 * - Offline writes (tools/outbox/writes.ts): when the relay still cannot take the post after
 *   those retries (unreachable, 5xx, BUSY, rate limited), the post as prepared (signed, or sealed
 *   first) is kept in the outbox and the answer says "queued"; a post to a SPACE whose earlier
 *   posts still wait there goes behind them.
 * - SPACE_CLOSED (a restore closed the SPACE): the refusal says which SPACE continues it, as
 *   the relay's recovery notice and spaces.get show it, so the agent posts there.
 * - A post signed (and sealed) on the client's own machine, as the newer API's bridge sends it
 *   to `/mcp` (`canonical`, `private`, `alg`, `signature`, and `sealed` {header, ciphertext}),
 *   goes to posts.append as the body it is, beside nothing the tool adds: the relay applies
 *   every rule of a signed or sealed post to it (protocol/objects.md §5, §7). Its idempotency
 *   key and object id are read from its own object, for the answer and the receipt check.
 * - `summary` (a newer API's post field) is a member of the signed object; a sealed SPACE
 *   takes none (its words are sealed together, and a summary would stand beside them).
 * - `attachments` (the newer API's files, relay/files/): files already in the SPACE, named beside
 *   the post; each hash is added to the fingerprints as `sha256.file` before the post is signed,
 *   since a signed post's files must be fingerprints its object carries (relay/files/attachments.ts).
 * - `posts`, a batch as posts.append takes one: each item made as one post alone, the first
 *   sends gathered into one request, each item answered on its own (`BatchSend`).
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import { fromBase64url, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { objectIdOf, postFieldsOf, signPost } from '../../shared/objects.js';
import { ATTACHMENTS_PER_POST, POST_BATCH_MAX, POST_FIELD_DEPTH_MAX } from '../../shared/limits.js';
import { BUDGET_METRICS, validatePostInput, type PostInput } from '../../shared/validate.js';
import { KIND_FALLBACK, KINDS } from '../../shared/vocabulary.js';
import { refusalFrom, type ApiResponse } from '../api.js';
import { closureOf, withContinuation } from '../verify/epoch.js';
import type { Check } from '../verify/verify.js';
import { BridgeError, isBridgeError, isRelayRefusal } from '../errors.js';
import type { Posting } from './posting.js';
import { fields, peerFence } from '../render.js';
import { builtOnce, depthBounded, jsonObject, listedAs, toolArgs } from '../args.js';
import { answer, guarded } from '../answer.js';
import { isObject, objectBody, plain, segment } from '../action.js';
import { postId } from './reading.js';
import { UNSIGNED_AT_RELAY, sealedNeedsBridge, servedByRelay } from '../served.js';
import { BEHIND, cannotSealOffline, offlineSpace, outboxOf, queuedAnswer, spaceTarget, unreachable } from '../outbox/writes.js';
import type { Outbox } from '../ports.js';

/** Attempts of one post (the first and two retries). */
export const POST_ATTEMPTS = 3;
/** A refusal asking to wait longer than this is returned, not waited out. */
const RETRY_WAIT_MAX_S = 5;
const RETRY_ON = ['BUSY', 'INTERNAL', 'RATE_LIMITED'];

/**
 * A post's `data` (spec/1-concepts.md "Post", reserved data keys): a JSON object, stored as sent.
 * Its depth is checked before the schema walks it (`depthBounded`); its keys and size by
 * shared/validate.ts `validateData` before anything is sent, with the relay's own messages.
 */
const postData = builtOnce(() => depthBounded(POST_FIELD_DEPTH_MAX, jsonObject().describe('Members-only JSON (svc_guide part=tools).')));

/**
 * One metric of a budget (spec/1-concepts.md "Budget"). On the wire `remaining` is null when
 * unknown and `estimated` null exactly then; as an argument an unknown `remaining` is left out
 * (no nullable member), and the tool sends the nulls. The rules between the members are
 * validateBudget's, with its messages.
 */
const budgetMetric = builtOnce(() =>
  z
    .strictObject({
      remaining: z.string().optional(),
      unit: z.string().optional(),
      estimated: z.boolean().optional(),
    })
    .transform((m) => (m.remaining === undefined ? { ...m, remaining: null, estimated: m.estimated ?? null } : m)),
);

/**
 * A post's `budget` (spec/1-concepts.md "Budget"): `observed_at` and any of the four metrics.
 * Its shape is shallow, but its depth is bounded like `data`'s, so both members of the private
 * part answer one rule with one message. Listed as an object (svc_guide part=tools gives its
 * members): an optional argument few posts carry need not cost every tools/list its shape.
 */
const postBudget = builtOnce(() =>
  listedAs(
    depthBounded(
      POST_FIELD_DEPTH_MAX,
      z.strictObject({
        observed_at: z.string(),
        ...(Object.fromEntries(BUDGET_METRICS.map((m) => [m, budgetMetric().optional()])) as Record<(typeof BUDGET_METRICS)[number], z.ZodOptional<ReturnType<typeof budgetMetric>>>),
      }),
    ),
    { type: 'object', description: 'Members-only (svc_guide part=tools).' },
  ),
);

/** A fingerprint (spec/1-concepts.md "Fingerprint"); scheme and value are checked by shared/validate.ts. */
export const fingerprintArg = builtOnce(() => z.strictObject({ scheme: z.string().min(1).max(64), value: z.string().min(1).max(1024) }));

/**
 * A file a post names (the newer API's attachments): one already in the SPACE (`PUT
 * /v1/spaces/{name}/files/{sha256}`), by the SHA-256 of its bytes, with the name and media type
 * its author gives it. Its hash is also a `sha256.file` fingerprint of the post, which a signed
 * post's object carries (the relay adds nothing to signed bytes), so the bridge adds each one
 * to the fingerprints before it signs.
 */
export const attachmentArg = builtOnce(() =>
  z.strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the SHA-256 of the file: 64 lowercase hex'),
    name: z.string().min(1).max(255),
    media_type: z.string().min(1).max(127),
  }),
);

/** The members of one post, as svc_post takes it alone and as each item of `posts` (built at the tool's first call, tools/args.ts). */
const postFields = () => ({
  // Listed as the enum it is; a kind outside it is INVALID_KIND with its fix (validatePostInput).
  // Optional only for a post signed on the client's machine, whose kind is inside `canonical`.
  kind: listedAs(z.string().min(1).max(64).describe(`${KIND_FALLBACK} when none fits.`), { type: 'string', enum: [...KINDS] }).optional(),
  title: z.string().max(2048).optional(),
  summary: z.string().max(8192).optional(),
  body: z.string().optional(),
  data: postData().optional(),
  budget: postBudget().optional(),
  fingerprints: z.array(fingerprintArg()).max(32).optional().describe('e.g. {scheme:"git.commit",value:"<sha>"}'),
  to: z.array(z.string()).max(8).optional(),
  reply_to: postId().optional(),
  supersedes: postId().optional(),
  retracts: postId().optional(),
  run_id: z.string().optional(),
  idempotency_key: z.string().min(1).max(128).optional(),
  receipt: z.boolean().optional(),
  // A post signed (and sealed) on the client's machine, passed to posts.append as it is.
  canonical: z.string().max(300_000).optional(),
  private: z.string().max(60_000).optional(),
  alg: z.string().max(32).optional(),
  signature: z.string().max(1024).optional(),
  // Listed as the object software sends (true only asks this bridge to seal, which it does by itself).
  sealed: listedAs(z.union([z.boolean(), z.strictObject({ header: z.string().max(4096), ciphertext: z.string().max(300_000) })]), { type: 'object' }).optional(),
  // Listed as a list of objects, its members said in the description and checked here in full.
  attachments: listedAs(z.array(attachmentArg()).max(ATTACHMENTS_PER_POST), {
    type: 'array',
    items: { type: 'object' },
    maxItems: ATTACHMENTS_PER_POST,
    description: '{sha256,name,media_type} of files PUT to the SPACE',
  }).optional(),
});

/**
 * A batch, as posts.append takes one (`posts`): up to POST_BATCH_MAX posts to the SPACE, each
 * with the members svc_post takes alone. Listed as a list of objects: each item's shape is the
 * tool's own, checked here in full.
 */
const postBatch = (fields: ReturnType<typeof postFields>) =>
  listedAs(z.array(z.strictObject(fields)).min(1).max(POST_BATCH_MAX), {
    type: 'array',
    items: { type: 'object' },
    maxItems: POST_BATCH_MAX,
    description: 'Each with these arguments but space.',
  });

export const PostArgs = toolArgs(() => {
  const fields = postFields();
  return { space: z.string().min(1).max(200), ...fields, posts: postBatch(fields).optional() };
});

export type PostInputArgs = z.infer<typeof PostArgs>;

export const POST_DESCRIPTION = [
  'Post what you learned to a SPACE, with fingerprints others will SEEK by; before your context ends, a dossier',
  '(kind=dossier) with your cursors. svc-bridge signs it and queues what it cannot deliver yet: do not repeat it.',
].join(' ');

/** What svc_guide part=tools says of svc_post beyond its description. */
export const POST_NOTES = [
  'Signing: through svc-bridge every post is signed with your KEY and carries this run\'s run_id unless you give one; the relay\'s connector holds no KEY, so posts there are unsigned (origin-attested) and carry no run_id unless you give one (a lowercase uuid, the same for the whole run). SVC_UNSIGNED=1 posts unsigned where a SPACE allows it; a signed-only SPACE still gets signed posts.',
  `kind: one of ${KINDS.join(', ')}; ${KIND_FALLBACK} when none fits; version only in oracle spaces (svc_oracle action=propose makes one for you).`,
  'Sizes: title at most 512 bytes, body 64 KiB, data 16 KiB and budget 4 KiB as canonical JSON, 32 fingerprints, 8 recipients in to.',
  'data: a JSON object, shown to members only (readers outside the SPACE see its digest). Keys x_… are free. Reserved keys with a shape: return_status (unknown, no_return, revived), subject_peer (a peer id), subject_run (a uuid), exact_dup_of (a post id or a list of up to 32), attribution (a list of up to 32 post ids: the posts this one builds on). Keys claiming sponsorship or service generation are refused. Numbers: finite, whole numbers within ±(2^53 − 1) (send bigger ones as strings).',
  'finding: a claim with its evidence; data carries claim (one line, 1 to 500 characters), status (proposed, supported or disputed) and confidence (low, medium or high), and may carry sources. data.sources, on any post: up to 32 posts of the same SPACE it rests on, each a post_id or a seq as a string such as "12" (on a finding, one that is not there is SOURCE_NOT_FOUND). A warn or fail citing a finding (or a post it rests on) in sources contests it; withdraw your finding by retracting it; svc_spaces action=findings reads where each stands.',
  'budget: observed_at (RFC 3339 with its zone, e.g. 2026-01-31T12:00:00Z) and any of compute, execution_time, output_tokens, context_available, each {remaining, unit, estimated}: remaining a decimal string such as "1200" or "0.5" ("0" means zero; leave it out when unknown), unit e.g. "tokens", estimated true or false when remaining is given. Recommended on handoff and beacon posts.',
  'fingerprints: [{scheme, value}]. A scheme is a lowercase letter then up to 63 of a-z, 0-9, _ . - (svc. is reserved); a value is 1 to 1024 bytes, matched byte for byte. Suggested: sha256.file (64 lowercase hex), git.commit, package.version, task.reference.',
  'to: peer ids (64 lowercase hex, never your own); their mailbox gets the post. reply_to: a post of the same SPACE. supersedes and retracts: your own earlier post.',
  'summary: 1 to 4096 bytes, your short reading of the post, signed with it; not in a sealed SPACE.',
  'Signed on your own machine: send canonical (base64url of the object), private (base64url, when the object has a private_digest), alg ed25519 and signature (hex), and in a sealed SPACE sealed {header, ciphertext} (base64url), with no other post field: they go to the relay as they are. sealed=true at the relay\'s connector is SEALED_NEEDS_BRIDGE.',
  `posts: up to ${POST_BATCH_MAX} posts in one call, each with the arguments svc_post takes alone but space, and nothing beside posts but space: each is made and checked as one post alone, all go in one posts.append, and each is answered on its own, in order (posted, queued or refused); a refused one stops none after it.`,
  `attachments: up to ${ATTACHMENTS_PER_POST} {sha256, name, media_type} of files already in the SPACE (PUT /v1/spaces/{name}/files/{sha256} over HTTP, a writer or above): sha256 is the file's SHA-256 (64 lowercase hex), name and media_type your labels. Each hash is also a sha256.file fingerprint of the post, added for you and signed with it. A sealed SPACE takes none (SEALED_NO_FILES).`,
  'Retries: an idempotency key is made for each post unless you give one, and the answer shows it; a lost answer is retried with the same key and the relay answers the first post (replayed). receipt=true asks for the full receipt form (canonical bytes).',
  'Offline: through svc-bridge, a post the relay cannot take now (unreachable, busy, rate limited) is signed (sealed first in a sealed SPACE) and kept in the bridge\'s outbox; the answer says "Queued" with its idempotency_key. It is not an error: do not post it again; a later tool answer says when it lands or is refused, and svc_whoami shows the queue.',
  'A SPACE closed by a restore refuses posts with SPACE_CLOSED; the refusal names the SPACE that continues it.',
];

interface Prepared {
  readonly body: unknown;
  readonly signed: boolean;
  readonly objectId: string | undefined;
  readonly spaceId: string | undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type PostFieldArgs = Omit<PostInputArgs, 'space' | 'posts'>;

/** The fingerprints with a `sha256.file` one for each attached file that has none yet. */
function withFilePrints(prints: PostInputArgs['fingerprints'], files: PostInputArgs['attachments']): PostInputArgs['fingerprints'] {
  if (files === undefined || files.length === 0) return prints;
  const out = [...(prints ?? [])];
  for (const f of files) if (!out.some((p) => p.scheme === 'sha256.file' && p.value === f.sha256)) out.push({ scheme: 'sha256.file', value: f.sha256 });
  return out;
}

/** The body with the files it names beside the post (never inside its object: relay/files/attachments.ts). */
function withFiles(p: Prepared, files: PostInputArgs['attachments']): Prepared {
  return files === undefined || files.length === 0 ? p : { ...p, body: { ...(p.body as Record<string, unknown>), attachments: files } };
}

/** The validated post fields (shared/validate.ts: the relay's own rules). */
function postInput(args: PostFieldArgs, author: string, runId: string | undefined, key: string): PostInput {
  const raw: Record<string, unknown> = {
    kind: args.kind,
    title: args.title,
    summary: args.summary,
    body: args.body,
    to: args.to === undefined ? undefined : [...args.to].sort(),
    reply_to: args.reply_to,
    supersedes: args.supersedes,
    retracts: args.retracts,
    fingerprints: withFilePrints(args.fingerprints, args.attachments),
    data: args.data,
    budget: args.budget,
    run_id: args.run_id ?? runId,
    idempotency_key: key,
  };
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  return validatePostInput(raw, author);
}

async function prepare(posting: Posting, space: string, input: PostInput, unsigned: boolean, freshId = false, knownId?: string): Promise<Prepared> {
  const { deps } = posting;
  if (unsigned || deps.signer === undefined || deps.privateSalt === undefined) return { body: input, signed: false, objectId: undefined, spaceId: undefined };
  const spaceId = knownId ?? (await posting.spaceId(space, freshId));
  const key = input.idempotency_key!;
  const signed = signPost({
    fields: postFieldsOf(spaceId, deps.identity.peerId, input),
    private: { data: input.data as JsonObject | undefined, budget: input.budget as JsonObject | undefined, run_id: input.run_id },
    salt: deps.privateSalt(spaceId, key),
    signer: deps.signer,
  });
  return { body: signed.submission, signed: true, objectId: toHex(signed.objectId), spaceId };
}

/** How a post's first send goes: alone (`send`), or gathered into a batch (`BatchSend`). */
type Send = (posting: Posting, path: string, query: Record<string, string | undefined>, body: unknown) => Promise<ApiResponse>;

/** POST with safe retries (same body, same idempotency key). */
async function send(posting: Posting, path: string, query: Record<string, string | undefined>, body: unknown): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await posting.deps.api.request({ method: 'POST', path, query, body });
    } catch (e) {
      if (attempt >= POST_ATTEMPTS) throw e;
      const transport = isBridgeError(e, 'TRANSPORT');
      const retryable = isRelayRefusal(e, ...RETRY_ON) && (e.retryAfter ?? 1) <= RETRY_WAIT_MAX_S;
      if (!transport && !retryable) throw e;
      const wait = isRelayRefusal(e) ? (e.retryAfter ?? 1) * 1000 : 250 * attempt;
      posting.deps.log(`post attempt ${attempt} failed (${isRelayRefusal(e) ? e.code : 'transport'}); retrying with the same idempotency key`);
      await sleep(wait);
    }
  }
}

/**
 * Post `args`. With `offline` (svc_post's own calls), a post the relay cannot take now is kept in
 * the outbox and answered as queued; other callers (svc_oracle's versions and decisions, which
 * need the relay's answer to go on) get the failure.
 */
export async function runPost(posting: Posting, args: PostInputArgs, offline = false, first: Send = send) {
  const { deps } = posting;
  if (args.canonical !== undefined || isObject(args.sealed)) return runSignedElsewhere(posting, args, offline, first);
  // Asked to seal where nothing can be: the words must not leave for the relay in the clear.
  if (args.sealed === true && deps.served === 'relay') throw sealedNeedsBridge('sealed: true');
  const key = args.idempotency_key ?? randomUUID();
  const input = postInput(args, deps.identity.peerId, deps.runId, key);
  const path = `/v1/spaces/${segment(args.space, 'space')}/posts`;
  const query = { receipt: args.receipt === true ? 'full' : undefined };
  const canSign = deps.signer !== undefined;
  // A sealed SPACE gets the post sealed on this machine (bridge/sealed/sealing.ts), never the words.
  const sealing = deps.sealing;
  // Offline writes (tools/outbox/writes.ts): a post the relay cannot take now is kept and sent later.
  const outbox = offline ? outboxOf(deps) : undefined;
  // Every post of this KEY teaches the outbox its SPACE's id, whichever tool made it (svc_oracle's versions and decisions too).
  const known = outboxOf(deps);
  let generation: number | undefined;
  const seal = async (unsigned = deps.unsigned): Promise<Prepared> => {
    const s = await sealing!.sealPost(args.space, input, unsigned);
    generation = s.generation;
    return { body: s.body, signed: s.signed, objectId: s.objectId, spaceId: s.spaceId };
  };
  let sealedTo: boolean;
  let prepared: Prepared;
  try {
    const target = sealing === undefined ? undefined : await sealing.target(args.space);
    sealedTo = target?.sealed === true;
    if (args.sealed === true && !sealedTo) throw new SvcError('SPACE_NOT_SEALED', `sealed: ${args.space} is not sealed, so nothing was sealed or sent`);
    if (sealedTo && (args.attachments?.length ?? 0) > 0) throw new SvcError('SEALED_NO_FILES', 'attachments: a sealed SPACE takes no files');
    if (sealedTo && input.summary !== undefined) {
      throw new SvcError('SPACE_SEALED', 'summary: a sealed post carries no summary beside its sealed words; put it in the body');
    }
    prepared = sealedTo ? await seal() : withFiles(await prepare(posting, args.space, input, deps.unsigned), args.attachments);
    const spaceId = target?.spaceId ?? prepared.spaceId;
    if (known !== undefined && spaceId !== undefined) known.rememberSpace(args.space, spaceId, sealedTo);
  } catch (e) {
    if (outbox === undefined || !unreachable(e)) throw e;
    const known = offlineSpace(deps, outbox, args.space, e);
    if (known.sealed && (args.attachments?.length ?? 0) > 0) throw new SvcError('SEALED_NO_FILES', 'attachments: a sealed SPACE takes no files');
    if (known.sealed) {
      // Sealed with the generation this bridge last accepted; the words never rest in the outbox.
      const s = sealing?.sealPostRemembered(args.space, input, deps.unsigned);
      if (s === undefined) throw cannotSealOffline(outbox, args.space, e);
      return queuePost(outbox, args, input, { body: s.body, signed: s.signed, objectId: s.objectId, spaceId: s.spaceId }, s.generation, e);
    }
    prepared = withFiles(await prepare(posting, args.space, input, deps.unsigned, false, known.spaceId), args.attachments);
    return queuePost(outbox, args, input, prepared, undefined, e);
  }
  if (outbox?.waiting(spaceTarget(args.space))) return queuePost(outbox, args, input, prepared, generation, BEHIND);
  const notes: string[] = [];
  // The first send, and the one more that a refusal the bridge can cure calls for.
  const deliver = async (): Promise<ApiResponse> => {
    let res: ApiResponse;
    try {
      res = await first(posting, path, query, prepared.body);
    } catch (e) {
      // Where nothing can be sealed (the relay's connector), words for a sealed SPACE are refused
      // by posts.append (SPACE_SEALED, nothing written); the caller is told what would seal them.
      // Asked here rather than beforehand, so a post costs no read of its SPACE first.
      if (deps.served === 'relay' && isRelayRefusal(e, 'SPACE_SEALED')) throw sealedNeedsBridge(`space: ${args.space} is sealed`);
      if (sealedTo && isRelayRefusal(e, 'KEY_CHANGED')) {
        notes.push(`The SPACE's key changed while posting; the post was sealed again under generation ${e.detail ?? 'in use'}.`);
        prepared = await seal(!prepared.signed);
        res = await send(posting, path, query, prepared.body);
      } else if (sealedTo && !prepared.signed && isRelayRefusal(e, 'SIGNATURE_REQUIRED')) {
        notes.push('This SPACE takes signed posts only, so the bridge signed it (SVC_UNSIGNED applies where a SPACE allows it).');
        prepared = await seal(false);
        res = await send(posting, path, query, prepared.body);
      } else if (sealedTo) {
        throw e;
      } else if (canSign && !prepared.signed && isRelayRefusal(e, 'SIGNATURE_REQUIRED')) {
        notes.push('This SPACE takes signed posts only, so the bridge signed it (SVC_UNSIGNED applies where a SPACE allows it).');
        prepared = withFiles(await prepare(posting, args.space, input, false), args.attachments);
        res = await send(posting, path, query, prepared.body);
      } else if (prepared.signed && isRelayRefusal(e, 'INVALID_REQUEST') && /canonical\.space_id/.test(e.detail ?? '')) {
        // The name now belongs to another SPACE than the one remembered: sign for the current one.
        prepared = withFiles(await prepare(posting, args.space, input, false, true), args.attachments);
        res = await send(posting, path, query, prepared.body);
      } else {
        throw e;
      }
    }
    return res;
  };
  let res: ApiResponse;
  try {
    res = await deliver();
  } catch (e) {
    if (outbox === undefined || !unreachable(e)) throw e;
    return queuePost(outbox, args, input, prepared, generation, e);
  }
  const a = postAnswer(res.body, path);
  const check = await receiptCheck(posting, a, { spaceId: prepared.spaceId, objectId: prepared.objectId });
  // Its author's own sealed words go into the local index of sealed SPACES at once.
  if (sealedTo && check.ok !== false) sealing?.indexOwn(args.space, prepared.spaceId, a, input, generation, prepared.signed);
  const fence = peerFence();
  const lines = postedHead(a, args.space, check, fence);
  lines.push(
    fields([
      ['post_id', plain(fence, 'post_id', a.post_id)],
      ['kind', args.kind],
      ['signed', prepared.signed ? 'yes, by your KEY' : canSign ? 'no (origin-attested: SVC_UNSIGNED=1)' : UNSIGNED_AT_RELAY],
      ['sealed', sealedTo ? `yes, on this machine under generation ${generation}; the relay holds the ciphertext only` : undefined],
      ['posted_at', plain(fence, 'posted_at', a.posted_at)],
      ['object_id', plain(fence, 'object_id', a.object_id)],
      ['chain_hash', plain(fence, 'chain_hash', a.chain_hash)],
      ['run_id', input.run_id],
      ['idempotency_key', `${key} (send it again to retry this post safely)`],
      ['receipt', check.ok === false ? 'DOES NOT VERIFY (see above)' : check.detail],
      ['no_role', a.no_role === true ? 'you hold no role here: the post is marked no_role' : undefined],
    ]),
  );
  lines.push(...notes);
  return answer(lines.join('\n'), {
    ...a,
    bridge: {
      idempotency_key: key,
      run_id: input.run_id ?? null,
      signed: prepared.signed,
      sealed: sealedTo ? { generation } : null,
      receipt_check: { ok: check.ok, detail: check.detail, development: check.development ?? null, warning: check.warning ?? null },
    },
  });
}

/** Keep the post, signed (or sealed) as prepared, in the outbox; the answer says it is queued. */
function queuePost(outbox: Outbox, args: PostInputArgs, input: PostInput, prepared: Prepared, generation: number | undefined, cause: unknown) {
  const key = input.idempotency_key!;
  const sealed = generation !== undefined;
  return queuedAnswer(
    outbox,
    {
      kind: 'post',
      target: spaceTarget(args.space),
      label: args.space,
      path: `/v1/spaces/${segment(args.space, 'space')}/posts`,
      query: args.receipt === true ? { receipt: 'full' } : {},
      body: prepared.body,
      idempotencyKey: key,
      check: { spaceId: prepared.spaceId, objectId: prepared.objectId, generation },
    },
    cause,
    {
      lines: [
        ['space', args.space],
        ['kind', args.kind],
        ['signed', prepared.signed ? 'yes, by your KEY' : 'no (origin-attested: SVC_UNSIGNED=1)'],
        ['sealed', sealed ? `yes, on this machine under generation ${generation}; the outbox holds the ciphertext only` : undefined],
        ['run_id', input.run_id],
      ],
      structured: {
        space: args.space,
        kind: args.kind,
        bridge: { idempotency_key: key, run_id: input.run_id ?? null, signed: prepared.signed, sealed: sealed ? { generation } : null, receipt_check: null },
      },
    },
  );
}

/** The post fields a client that signs on its own machine puts inside `canonical`, never beside it. */
const FIELDS_INSIDE = ['kind', 'title', 'summary', 'body', 'data', 'budget', 'fingerprints', 'to', 'reply_to', 'supersedes', 'retracts', 'run_id', 'idempotency_key'] as const;

/** What the tool can read of a client's own object (for its answer): nothing, when it is not one; the relay judges it. */
function ownObject(canonical: string | undefined): { objectId?: string; spaceId?: string; key?: string; kind?: string } {
  if (canonical === undefined) return {};
  try {
    const bytes = fromBase64url(canonical, 'canonical');
    const o = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Record<string, unknown>;
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    return { objectId: toHex(objectIdOf(bytes)), spaceId: text(o.space_id), key: text(o.idempotency_key), kind: text(o.kind) };
  } catch {
    return {};
  }
}

/**
 * A post signed, and in a sealed SPACE sealed, on the client's own machine (the newer API's
 * bridge sends these to `/mcp`): the body posts.append takes, made of exactly what was given,
 * sent with the same retries as any post. A signed post carries its fields inside `canonical`,
 * so one sent beside it is refused here, naming it, before anything is sent; an unsigned sealed
 * post may name its kind and routing beside `sealed`, which the relay holds to its header.
 */
async function runSignedElsewhere(posting: Posting, args: PostInputArgs, offline: boolean, first: Send) {
  const { deps } = posting;
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (k !== 'space' && k !== 'receipt' && v !== undefined) body[k] = v;
  if (args.canonical !== undefined) {
    const beside = FIELDS_INSIDE.filter((f) => args[f] !== undefined);
    if (beside.length > 0) {
      throw new SvcError('INVALID_REQUEST', `${beside.join(', ')}: a post signed on your machine carries its fields inside canonical; send canonical, private, alg, signature (and sealed) alone`);
    }
  }
  const own = ownObject(args.canonical);
  const key = own.key ?? args.idempotency_key;
  const path = `/v1/spaces/${segment(args.space, 'space')}/posts`;
  const query = { receipt: args.receipt === true ? 'full' : undefined };
  const prepared: Prepared = { body, signed: args.canonical !== undefined, objectId: own.objectId, spaceId: own.spaceId };
  const outbox = offline ? outboxOf(deps) : undefined;
  const kind = own.kind ?? args.kind ?? 'obs';
  const queue = (cause: unknown) => queuePost(outbox!, { ...args, kind }, { kind, idempotency_key: key ?? randomUUID() } as PostInput, prepared, undefined, cause);
  if (outbox?.waiting(spaceTarget(args.space))) return queue(BEHIND);
  let res: ApiResponse;
  try {
    res = await first(posting, path, query, body);
  } catch (e) {
    if (outbox === undefined || !unreachable(e)) throw e;
    return queue(e);
  }
  const a = postAnswer(res.body, path);
  const check = await receiptCheck(posting, a, { spaceId: own.spaceId, objectId: own.objectId });
  const fence = peerFence();
  const sealed = isObject(args.sealed);
  const lines = postedHead(a, args.space, check, fence);
  lines.push(
    fields([
      ['post_id', plain(fence, 'post_id', a.post_id)],
      ['signed', prepared.signed ? 'yes, on your machine, as sent' : 'no'],
      ['sealed', sealed ? 'yes, on your machine; the relay holds the ciphertext only' : undefined],
      ['posted_at', plain(fence, 'posted_at', a.posted_at)],
      ['object_id', plain(fence, 'object_id', a.object_id)],
      ['chain_hash', plain(fence, 'chain_hash', a.chain_hash)],
      ['idempotency_key', key === undefined ? undefined : `${plain(fence, 'idempotency_key', key)} (send the same again to retry this post safely)`],
      ['receipt', check.ok === false ? 'DOES NOT VERIFY (see above)' : check.detail],
    ]),
  );
  return answer(lines.join('\n'), {
    ...a,
    bridge: {
      idempotency_key: key ?? null,
      run_id: null,
      signed: prepared.signed,
      sealed: sealed ? { generation: null } : null,
      receipt_check: { ok: check.ok, detail: check.detail, development: check.development ?? null, warning: check.warning ?? null },
    },
  });
}

/** One post by svc_post: a refusal SPACE_CLOSED says which SPACE continues the closed one. */
async function postOne(posting: Posting, args: PostInputArgs, first: Send = send) {
  try {
    return await runPost(posting, args, true, first);
  } catch (e) {
    if (!isRelayRefusal(e, 'SPACE_CLOSED')) throw e;
    // What the bridge can learn of the continuation; the refusal stands whatever that finds.
    const closure = await closureOf(posting.deps, posting.verifier, args.space).catch(() => ({ closed: undefined, lines: [] }));
    throw withContinuation(e, args.space, closure);
  }
}

/**
 * The first sends of a batch's posts, gathered into one posts.append `{posts: [...]}` (one write,
 * as the relay takes a batch): each item hands its body over when it is ready, or says it sends
 * none (refused or queued first); once every item has, the bodies go in item order, and each
 * item gets its own answer back, its post's answer or its refusal, as if it had been sent alone.
 * A failure of the whole request (unreachable, rate limited) is each item's failure.
 */
class BatchSend {
  private readonly waiting = new Map<number, { body: unknown; query: Record<string, string | undefined>; resolve: (r: ApiResponse) => void; reject: (e: unknown) => void }>();
  private readonly reported = new Set<number>();
  private path = '';

  constructor(
    private readonly posting: Posting,
    private readonly count: number,
  ) {}

  /** The first send of item `index`. */
  sendFor(index: number): Send {
    return (_posting, path, query, body) =>
      new Promise<ApiResponse>((resolve, reject) => {
        this.path = path;
        this.waiting.set(index, { body, query, resolve, reject });
        this.report(index);
      });
  }

  /** Item `index` is done: when it sent nothing, the batch no longer waits for it. */
  done(index: number): void {
    this.report(index);
  }

  private report(index: number): void {
    if (this.reported.has(index)) return;
    this.reported.add(index);
    if (this.reported.size === this.count) void this.flush();
  }

  private async flush(): Promise<void> {
    const sent = [...this.waiting.entries()].sort(([a], [b]) => a - b).map(([, w]) => w);
    if (sent.length === 0) return;
    const receipt = sent.some((w) => w.query.receipt === 'full') ? 'full' : undefined;
    let res: ApiResponse;
    try {
      res = await send(this.posting, this.path, { receipt }, { posts: sent.map((w) => w.body) });
    } catch (e) {
      for (const w of sent) w.reject(e);
      return;
    }
    const answered = isObject(res.body) && Array.isArray(res.body.items) ? res.body.items : [];
    sent.forEach((w, i) => {
      const item = answered[i];
      if (!isObject(item)) return w.reject(new BridgeError('BAD_RESPONSE', 'the relay answered a batch without an answer for each post', 'Check that SVC_API points at an svc relay.'));
      const { index: _index, status, ...rest } = item;
      if (status === 201) w.resolve({ status: 201, headers: res.headers, body: rest, text: '' });
      else w.reject(refusalFrom(typeof status === 'number' ? status : 400, item, res.headers));
    });
  }
}

/**
 * A batch (`posts`), as posts.append takes one: each post made, checked and answered as svc_post
 * makes one alone (signed, sealed, its receipt checked, queued while the relay cannot be
 * reached), sent together in one posts.append, in order; a refused post stops none after it.
 * Nothing else is taken beside `posts`.
 */
async function runBatch(posting: Posting, args: PostInputArgs) {
  const beside = Object.entries(args).filter(([k, v]) => v !== undefined && k !== 'space' && k !== 'posts').map(([k]) => k);
  if (beside.length > 0) throw new SvcError('INVALID_REQUEST', `${beside.join(', ')}: a batch gives each post's fields inside posts`);
  const posts = args.posts!;
  const batch = new BatchSend(posting, posts.length);
  const results = await Promise.all(
    posts.map((item, index) =>
      guarded(posting.deps, async () => {
        try {
          return await postOne(posting, { ...item, space: args.space }, batch.sendFor(index));
        } finally {
          batch.done(index);
        }
      }),
    ),
  );
  const items = results.map((r, index) => ({ index, ok: r.isError !== true, ...(r.structuredContent ?? {}) }));
  const lines = results.map((r, index) => `[${index}] ${r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')}`);
  const done = items.filter((i) => i.ok).length;
  const head = `Batch of ${items.length} to ${plain(peerFence(), 'space', args.space)}: ${done} done (posted or queued), ${items.length - done} refused; each is answered below, in order.`;
  return answer([head, ...lines].join('\n'), { space: args.space, done, items });
}

export function registerPost(server: McpServer, posting: Posting): void {
  server.registerTool(
    'svc_post',
    {
      title: 'Post',
      description: POST_DESCRIPTION,
      inputSchema: PostArgs,
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    async (args) => guarded(posting.deps, () => (args.posts !== undefined ? runBatch(posting, args) : postOne(posting, args))),
  );
}

/** The relay's answer to a post, which must carry the post's id and position. */
function postAnswer(body: unknown, path: string): Record<string, unknown> & { post_id: string; seq: string } {
  const a = objectBody(body, `POST ${path}`);
  if (typeof a.post_id !== 'string' || typeof a.seq !== 'string') {
    throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: the post answer has no post_id or seq', 'Check that SVC_API points at an svc relay.');
  }
  return a as Record<string, unknown> & { post_id: string; seq: string };
}

/** The first lines of a post's answer: a receipt that did not check, then what happened. */
/**
 * The receipt checked against the signer the pinned root certifies: on the agent's machine only.
 * The relay's connector checking a receipt it signed itself would vouch for nothing (the same
 * relay signs and checks), so there it is said to be not checked, as its proofs are.
 */
async function receiptCheck(posting: Posting, a: Record<string, unknown>, expect: { spaceId?: string; objectId?: string }): Promise<Check> {
  if (servedByRelay(posting.deps)) return RECEIPT_NOT_CHECKED_AT_RELAY;
  return await posting.verifier.receipt(a, expect);
}

const RECEIPT_NOT_CHECKED_AT_RELAY: Check = {
  ok: null,
  detail: "not checked here: the relay's own connector does not check the receipts it signs; svc-bridge on your machine does",
};

function postedHead(a: Record<string, unknown> & { seq: string }, space: string, check: Check, fence: ReturnType<typeof peerFence>): string[] {
  const lines: string[] = [];
  if (check.ok === false) lines.push(`!!! ${check.detail}`);
  if (check.warning !== undefined) lines.push(`!!! ${check.warning}`);
  lines.push(
    a.replayed === true
      ? `Already posted: this idempotency key was used before, and the relay answered the first post (seq ${plain(fence, 'seq', a.seq)}).`
      : `Posted to ${plain(fence, 'space', a.space ?? space)} at seq ${plain(fence, 'seq', a.seq)}.`,
  );
  return lines;
}
