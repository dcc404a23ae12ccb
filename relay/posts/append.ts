/**
 * posts.append (spec/2-endpoints.md; spec/1-concepts.md "Post", "Signed posts", "Chains";
 * protocol/objects.md §5-§10; STYLE.md rule 8).
 *
 * 1. Outside the write lock: find the SPACE (SPACE_NOT_FOUND), read and check the body, verify
 *    the signature, build the object (relay/posts/prepare.ts), tokenise title and body for
 *    SEEK.
 * 2. Under the write lock, synchronous: over HTTP one savepoint of a group commit shared with
 *    the appends that arrived together (relay/posts/commit-queue.ts; the 201 waits for its
 *    COMMIT), in-process its own immediate transaction:
 *    - replay: the same (SPACE, author, idempotency key) answers the first post (201,
 *      `replayed: true`) when content and signed-ness agree, else IDEMPOTENCY_CONFLICT;
 *    - SIGNATURE_REQUIRED (after the replay test), SPACE_CLOSED, WRITE_BLOCKED, WRITE_DENIED
 *      (relay/policy.ts `canPost`; a KEY with no role addresses only the owner);
 *    - `to` (RECIPIENT_NOT_REGISTERED, RECIPIENT_NOT_A_MEMBER outside an open SPACE),
 *      `reply_to` (REPLY_TARGET_NOT_FOUND), `supersedes`/`retracts` (REVISION_TARGET_NOT_FOUND),
 *      a finding's `data.sources` (SOURCE_NOT_FOUND; relay/findings/project.ts);
 *    - oracle spaces (relay/oracle/versions.ts): a `version` must supersede the current version
 *      (VERSION_CHANGED), a proposal keeps within its limits (PROPOSAL_LIMIT), a go/veto on a
 *      version is a decider's (CONTROL_DENIED) on a waiting proposal (PROPOSAL_DECIDED);
 *    - roleless daily limits (60 a day per KEY, 10 on its first day; 10,000 a day per SPACE);
 *    - head, admission under the current control revision, link (shared/chain.ts), receipt
 *      (shared/receipt.ts, stored so a replay answers it unchanged), insert, SEEK rows (the
 *      text tokenised in step 1; relay/store/seek.ts `indexNext`), deliveries; in an oracle
 *      space the version's state, the service reviewer's veto and the oracle notices; the
 *      findings record and its `cited` and `contested` notices (relay/findings/).
 * 3. The answer (api-notes §4), rendered by relay/posts/answer.ts.
 *
 * `seq` is head + 1 read inside the transaction, so positions are gap-free.
 *
 * Sealed SPACES: the body is read by relay/posts/sealed.ts; under the lock the header's
 * generation must be the one in use (KEY_CHANGED), and the header and ciphertext are stored
 * beside the row, which keeps no words.
 */
import { SvcError } from '../../shared/errors.js';
import { equalBytes, toHex } from '../../shared/encoding.js';
import { objectAdmission, objectGenesis, postLink } from '../../shared/chain.js';
import { signReceipt } from '../../shared/receipt.js';
import { RATE_LIMITS, SHARED_BUCKET_RETRY_SECONDS } from '../../shared/limits.js';
import type { MailboxReason } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { RelayRefusal } from '../http/errors.js';
import { newUuid } from '../ids.js';
import { canPost, canReadPosts, type SpaceRole } from '../policy.js';
import { applyOracle, checkOracle, prepareOracle, replayedOracle, type OracleAnswer, type OraclePrep } from '../oracle/versions.js';
import type { KeyRecord } from '../store/keys.js';
import type { AdmissionState } from '../store/admission.js';
import type { WriteLocks } from '../store/database.js';
import type { PostHead, PostRow } from '../store/posts.js';
import type { SpaceRow } from '../store/spaces.js';
import { checkAttachments, checkReplayedAttachments } from '../files/attach.js';
import { deliverSourceNotices } from '../findings/notices.js';
import { projectPost, sourcesOfPost } from '../findings/project.js';
import { commitQueueFor } from './commit-queue.js';
import { notifierFor } from './notify.js';
import { preparePost } from './prepare.js';
import type { PreparedPost } from './prepared.js';
import { NO_PASSKEYS, type PasskeyCheck } from './signed-body.js';
import { verifyOffThread } from './verify-off-thread.js';
import { postTerms } from '../../shared/seek/terms.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface AppendOutcome {
  /** true: an earlier post with the same idempotency key and content (HTTP 200). */
  replayed: boolean;
  space: SpaceRow;
  post: PostRow;
  /** In an oracle space: the version's state, or the decision a go/veto made. */
  oracle?: OracleAnswer;
}

/**
 * Append `body` to the SPACE `spaceName` as `author` (the token's KEY), in its own transaction.
 * In-process callers (benchmarks, fills); the HTTP route uses `appendPostGrouped`.
 */
export async function appendPost(ctx: RelayContext, spaceName: string, author: string, body: unknown): Promise<AppendOutcome> {
  const { admitIt, locks } = await prepareAppend(ctx, spaceName, author, body);
  return await ctx.store.posts.transaction(admitIt, locks);
}

/**
 * `appendPost` with group commit (relay/posts/commit-queue.ts): step 1 now, step 2 in the next
 * batch of the database's commit queue, inside its own savepoint. Settles after that batch's
 * COMMIT, so a 201 built from the outcome is never sent before its post is on disk.
 */
export async function appendPostGrouped(ctx: RelayContext, spaceName: string, author: string, body: unknown): Promise<AppendOutcome> {
  const { admitIt, locks } = await prepareAppend(ctx, spaceName, author, body);
  return commitQueueFor(ctx.store.db).enqueue(admitIt, locks);
}

/**
 * Step 1, outside the write lock; answers step 2 ready to run under it, and what it locks: the
 * SPACE, and the author's KEY (its roleless daily limit and passkey counter span SPACES). Its
 * mailbox deliveries lock their KEYS before COMMIT (relay/store/mailbox.ts).
 */
async function prepareAppend(
  ctx: RelayContext,
  spaceName: string,
  author: string,
  body: unknown,
): Promise<{ admitIt: () => Promise<AppendOutcome>; locks: WriteLocks }> {
  const { store } = ctx;
  const found = await store.spaces.byName(spaceName);
  if (found === undefined) throw new SvcError('SPACE_NOT_FOUND', 'name: no SPACE has this name');
  const key = await store.keys.get(author);
  if (key === undefined) throw new SvcError('TOKEN_INVALID', 'the token names no registered KEY');
  // With the setting on, the Ed25519 check first runs on the thread pool (./verify-off-thread.ts).
  const verify = ctx.verifyOffThread === true ? await verifyOffThread(key, body) : undefined;
  const prepared = preparePost(found, key, body, ctx.random, await passkeyCheckOf(ctx, key, body), verify);
  // SEEK's text for the post, tokenised here with no lock held (STYLE.md rule 8).
  const terms = postTerms(found.id, prepared.input.title ?? null, prepared.input.body ?? null);
  const oracle = await prepareOracle(ctx, found, prepared);
  return { admitIt: () => admit(ctx, found.id, author, key.registeredAt, prepared, terms, oracle), locks: { spaces: [found.id], keys: [author] } };
}

/** For a post signed with webauthn: the relay's passkey policy and the author's credential. */
async function passkeyCheckOf(ctx: RelayContext, key: KeyRecord, body: unknown): Promise<PasskeyCheck> {
  const webauthn = typeof body === 'object' && body !== null && (body as Record<string, unknown>).alg === 'webauthn';
  if (!webauthn) return NO_PASSKEYS;
  const credentialId = key.keyType === 'passkey' ? ((await ctx.store.keys.passkeyOf(key.peerId))?.credentialId ?? null) : null;
  return { policy: ctx.passkeyPolicy(), credentialId };
}

/** Step 2: everything under the write lock. */
async function admit(
  ctx: RelayContext,
  spaceRowId: number,
  author: string,
  registeredAt: number,
  p: PreparedPost,
  terms: string | null,
  oracle: OraclePrep | undefined,
): Promise<AppendOutcome> {
  const { store } = ctx;
  const key = p.input.idempotency_key;
  // The SPACE, role, block, replay and both heads in one read (store/admission.ts).
  const state = (await store.admission.read(spaceRowId, author, key ?? null))!;
  const { space } = state;
  if (key !== undefined && state.keyUsed) {
    const prior = (await store.posts.byIdempotencyKey(space.id, author, key))!;
    const post = checkReplay(prior, p);
    await checkReplayedAttachments(ctx, post.rowId, p.attachments ?? []);
    const answer = await replayedOracle(ctx, space, post);
    return { replayed: true, space, post, ...(answer === undefined ? {} : { oracle: answer }) };
  }
  if (space.signedOnly && !p.signed) {
    throw new SvcError('SIGNATURE_REQUIRED', 'this SPACE is signed-only: send alg, canonical and signature');
  }
  if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', 'the SPACE takes no new posts');
  const role: SpaceRole = state.role;
  if (state.blocked) throw new SvcError('WRITE_BLOCKED', 'you are blocked from posting here');
  const may = canPost(space, role);
  if (may === false) {
    throw new SvcError(
      'WRITE_DENIED',
      role === null ? 'you hold no role in this SPACE' : `a ${role} posts only in an open or oracle SPACE`,
    );
  }
  const roleless = may === 'roleless';
  // A sealed post is sealed under the generation in use, read here under the write lock so an
  // activation cannot slip in between (sealed.md §7: KEY_CHANGED, detail the generation in use).
  if (p.sealed !== undefined) {
    const inUse = await store.sealed.generationInUse(space.id);
    if (p.sealed.generation !== inUse) throw new SvcError('KEY_CHANGED', String(inUse));
  }
  const now = ctx.clock();
  await checkRecipients(ctx, space, p.input.to, roleless);
  const parent = await checkReferences(ctx, space, author, p, oracle?.kind === 'version');
  const sources = await sourcesOfPost(ctx, space, p);
  const plan = oracle === undefined ? undefined : await checkOracle(ctx, space, author, role, registeredAt, p, oracle, parent, now);
  if (roleless) await checkRolelessLimits(ctx, space, author, registeredAt, now);
  const files = await checkAttachments(ctx, space, author, role, p.attachments ?? [], now);

  // objects.md §5 step 3: a passkey's counter advances with each new post it signs (a replay,
  // answered above, is the same assertion and object). Last of the checks, so a refused post
  // leaves the counter where it was; the savepoint rolls it back with anything after.
  if (p.passkeyCounter !== undefined && !await store.keys.advancePasskeyCounter(author, p.passkeyCounter)) {
    throw new SvcError('POST_SIGNATURE_INVALID', 'authenticator_data: the signature counter did not increase');
  }
  const post = await writePost(ctx, space, author, p, terms, { roleless, parent, now, heads: state });
  if (files.length > 0) await store.files.attach(post.rowId, space.id, files);
  await projectPost(ctx, space, post, p, sources);
  // Told already, by `to` or as the parent's author (writePost's deliveries): one notice a post.
  const told = new Set([...(p.input.to ?? []), ...(parent === undefined ? [] : [parent.author])]);
  await deliverSourceNotices(ctx, space, post, sources, told, now);
  const servicePost = async (by: KeyRecord, body: Record<string, unknown>, to: PostRow): Promise<PostRow> => {
    const prepared = preparePost(space, by, body, ctx.random);
    const words = postTerms(space.id, prepared.input.title ?? null, prepared.input.body ?? null);
    return await writePost(ctx, space, by.peerId, prepared, words, { roleless: false, parent: to, now });
  };
  const answer = plan === undefined ? undefined : await applyOracle(ctx, space, plan, post, servicePost, now);
  // Long-poll wake-ups fire on a later turn, after this transaction commits (notify.ts).
  notifierFor(store.db).space(space.id);
  return { replayed: false, space, post, ...(answer === undefined ? {} : { oracle: answer }) };
}

/**
 * Chain and store one admitted post: head, link, receipt, row, SEEK rows, `to` and `reply`
 * deliveries. Inside the write transaction; every check is done. `heads`: both heads as read
 * earlier in this transaction (nothing was written since), else read here.
 */
async function writePost(
  ctx: RelayContext,
  space: SpaceRow,
  author: string,
  p: PreparedPost,
  terms: string | null,
  opts: { roleless: boolean; parent: PostRow | undefined; now: number; heads?: Pick<AdmissionState, 'head' | 'control'> },
): Promise<PostRow> {
  const { store } = ctx;
  const { roleless, parent, now } = opts;
  const key = p.input.idempotency_key;
  // The link (objects.md §8): admitted under the current control revision.
  const head = opts.heads?.head ?? (await store.posts.head(space.id));
  checkHeadLink(space.spaceId, head);
  const control = opts.heads?.control ?? (await store.events.head(space.id));
  const admission = objectAdmission(control.revision, control.chainHash);
  const seq = head.seq + 1;
  const previous = head.chainHash ?? objectGenesis(space.spaceId);
  const chainHash = postLink({ spaceId: space.spaceId, seq, admission, previous, objectId: p.objectId });
  const postId = newUuid(ctx.random);
  const postedAt = new Date(now).toISOString();
  const receipt = signReceipt(
    ctx.serviceKeys.signer,
    {
      space_id: space.spaceId,
      seq: String(seq),
      post_id: postId,
      object_id: toHex(p.objectId),
      chain_hash: toHex(chainHash),
      posted_at: postedAt,
    },
    (await ctx.serviceEpoch()),
  );
  const i = p.input;
  const post: Omit<PostRow, 'rowId'> = {
    spaceRowId: space.id,
    seq,
    postId,
    author,
    kind: i.kind,
    title: i.title ?? null,
    body: i.body ?? null,
    toJson: i.to === undefined ? null : JSON.stringify(i.to),
    replyTo: i.reply_to ?? null,
    supersedes: i.supersedes ?? null,
    retracts: i.retracts ?? null,
    fingerprintsJson: i.fingerprints === undefined ? null : JSON.stringify(i.fingerprints),
    dataJson: i.data === undefined ? null : JSON.stringify(i.data),
    budgetJson: i.budget === undefined ? null : JSON.stringify(i.budget),
    runId: i.run_id ?? null,
    idempotencyKey: key ?? null,
    inputDigest: p.inputDigest ?? null,
    canonical: p.canonical,
    private: p.private ?? null,
    signature: p.signature ?? null,
    signed: p.signed,
    sealed: p.sealed !== undefined,
    objectId: p.objectId,
    admittedRevision: control.revision,
    admittedControlHash: control.chainHash,
    admission,
    previousHash: previous,
    chainHash,
    postedAt: now,
    noRole: roleless,
    receiptSignature: receipt.signature,
    receiptSignerKeyId: receipt.fields.signer_key_id,
    receiptServiceEpoch: receipt.fields.service_epoch,
    hiddenAt: null,
    hiddenBy: null,
  };
  const rowId = await store.posts.insert(post);
  if (p.sealed !== undefined) await store.sealed.insertItem(rowId, p.sealed);
  await store.seek.indexNext({
    rowId,
    spaceRowId: space.id,
    author,
    postedAt: now,
    public: space.visibility === 'public',
    terms,
    fingerprints: i.fingerprints ?? [],
  });
  await deliver(ctx, space, author, postId, i.to ?? [], parent, now);
  return { ...post, rowId };
}

/** objects.md §5 "A replay": same content, same signed-ness, and for a signed post the same object. */
function checkReplay(prior: PostRow, p: PreparedPost): PostRow {
  if (prior.signed !== p.signed) {
    throw new SvcError('IDEMPOTENCY_CONFLICT', `idempotency_key: first sent ${prior.signed ? 'signed' : 'unsigned'}; a replay never changes signed-ness`);
  }
  const same = p.signed
    ? equalBytes(prior.objectId, p.objectId)
    : prior.inputDigest !== null && p.inputDigest !== undefined && equalBytes(prior.inputDigest, p.inputDigest);
  if (!same) throw new SvcError('IDEMPOTENCY_CONFLICT', 'idempotency_key: already used with different content');
  return prior;
}

/**
 * `to` (spec "Post"): each registered; outside an open SPACE each the owner or a member. A KEY
 * with no role addresses the owner alone (Roles matrix).
 */
async function checkRecipients(ctx: RelayContext, space: SpaceRow, to: readonly string[] | undefined, roleless: boolean): Promise<void> {
  if (to === undefined) return;
  for (const [i, peer] of to.entries()) {
    if (await ctx.store.keys.get(peer) === undefined) {
      throw new SvcError('RECIPIENT_NOT_REGISTERED', `to[${i}]: no KEY is registered with this peer id`);
    }
    if (roleless && peer !== space.owner) {
      throw new SvcError('WRITE_DENIED', `to[${i}]: without a role in this SPACE, address its owner alone`);
    }
    if (space.joinPolicy !== 'open' && await ctx.store.members.roleOf(space, peer) === null) {
      throw new SvcError('RECIPIENT_NOT_A_MEMBER', `to[${i}]: neither the owner nor a member of this SPACE`);
    }
  }
}

/**
 * `reply_to`: a post of the same SPACE. `supersedes`, `retracts`: own posts of the same SPACE,
 * except a version's `supersedes`, which names the current version whoever wrote it (checked
 * by relay/oracle/versions.ts: VERSION_CHANGED). A post of another SPACE reads as missing.
 * Returns the parent, if any.
 */
async function checkReferences(ctx: RelayContext, space: SpaceRow, author: string, p: PreparedPost, version: boolean): Promise<PostRow | undefined> {
  const { reply_to, supersedes, retracts } = p.input;
  let parent: PostRow | undefined;
  if (reply_to !== undefined) {
    parent = await ctx.store.posts.byPostId(reply_to);
    if (parent === undefined || parent.spaceRowId !== space.id) {
      throw new SvcError('REPLY_TARGET_NOT_FOUND', 'reply_to: no post with this id in this SPACE');
    }
  }
  for (const [field, id] of [['supersedes', supersedes], ['retracts', retracts]] as const) {
    if (id === undefined || (version && field === 'supersedes')) continue;
    const target = await ctx.store.posts.byPostId(id);
    if (target === undefined || target.spaceRowId !== space.id || target.author !== author) {
      throw new SvcError('REVISION_TARGET_NOT_FOUND', `${field}: no post of yours with this id in this SPACE`);
    }
  }
  return parent;
}

/**
 * Roleless posting (spec "Limits"): 60 a day per KEY (10 on the KEY's first day), 10,000 a day
 * per SPACE. Counted from the posts themselves over the last 24 hours, so the count survives a
 * restart and is exact under concurrent writers (it is read inside the write transaction).
 */
async function checkRolelessLimits(ctx: RelayContext, space: SpaceRow, author: string, registeredAt: number, now: number): Promise<void> {
  const since = now - DAY_MS;
  const perKey = RATE_LIMITS.rolelessPosts;
  const limit = now - registeredAt < DAY_MS ? perKey.firstDay : perKey.limit;
  const mine = await ctx.store.posts.rolelessByAuthor(author, since);
  if (mine.count >= limit) {
    const wait = Math.max(1, Math.ceil(((mine.oldest ?? now) + DAY_MS - now) / 1000));
    throw new RelayRefusal('RATE_LIMITED', `roleless posts: ${limit} a day for this KEY`, wait, {
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(wait),
    });
  }
  const theirs = await ctx.store.posts.rolelessInSpace(space.id, since);
  if (theirs.count >= RATE_LIMITS.rolelessPostsPerSpace.limit) {
    throw new RelayRefusal('RATE_LIMITED', 'roleless posts: this SPACE has taken its daily allowance', SHARED_BUCKET_RETRY_SECONDS, {});
  }
}

/**
 * Deliveries in the same transaction (spec "Mailbox"): `to` to each addressee, `reply` to the
 * parent's author (never to oneself; one row per KEY, `to` first). A KEY that can no longer read
 * the SPACE gets none. Past 200 an hour from this author to one KEY, or the KEY's hourly notice
 * allowance, the notice is omitted and the post still written.
 */
async function deliver(
  ctx: RelayContext,
  space: SpaceRow,
  author: string,
  postId: string,
  to: readonly string[],
  parent: PostRow | undefined,
  now: number,
): Promise<void> {
  const reasons = new Map<string, MailboxReason>();
  for (const peer of to) reasons.set(peer, 'to');
  if (parent !== undefined && parent.author !== author && !reasons.has(parent.author)) reasons.set(parent.author, 'reply');
  const { deliveriesBetweenKeys, noticesToKey } = ctx.limiter.buckets;
  for (const [peer, reason] of reasons) {
    if (!canReadPosts(space, await ctx.store.members.roleOf(space, peer))) continue;
    if ((await deliveriesBetweenKeys.spend(`${author}>${peer}`, now)).wait > 0) continue;
    if ((await noticesToKey.spend(peer, now)).wait > 0) continue;
    await ctx.store.mailbox.deliver(peer, reason, { postId }, now); // wakes the KEY's long polls itself
  }
}

/**
 * The stored head must still be the link its own parts give (objects.md §8) before anything is
 * chained onto it: a damaged row is CHAIN_BROKEN, nothing is written, and reads go on working.
 */
function checkHeadLink(spaceId: string, head: PostHead): void {
  if (head.link === null || head.chainHash === null) return;
  const recomputed = postLink({ spaceId, seq: head.seq, ...head.link });
  if (!equalBytes(recomputed, head.chainHash)) {
    throw new SvcError('CHAIN_BROKEN', `seq ${head.seq}: the stored link does not match its parts`);
  }
}
