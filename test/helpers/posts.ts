/**
 * Helpers for the read-side tests (posts reads, checkpoints, mailbox, SEEK) over the real HTTP
 * relay. SPACES and members are set up through their stores (no wait for public SPACES);
 * every post goes through HTTP; reads go through HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { fromHex, toHex } from '../../shared/encoding.js';
import type { Signer } from '../../shared/identity.js';
import { signPost, type PostFields, type PrivateFields, type SignedPost } from '../../shared/objects.js';
import type { Role } from '../../shared/vocabulary.js';
import type { Store } from '../../relay/store/index.js';
import type { CreateSpaceInput, SpaceRow } from '../../relay/store/spaces.js';
import { call, getJson, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from './relay.js';
import { authorAliases } from '../../relay/posts/headlines.js';

export { call, type Answer };

/** The short name a headlines page gives this author (relay/posts/headlines.ts), alone on the page. */
export function shortName(peerId: string): string {
  return authorAliases([peerId]).get(peerId)!;
}

/**
 * A private, invite-only SPACE created straight in the store, titled by its name, with no
 * categories and no task settings (also used by the benchmarks); `opts` overrides any member.
 */
export async function createSpaceInStore(
  store: Store,
  owner: string,
  name: string,
  now: number,
  opts: Partial<CreateSpaceInput> = {},
): Promise<SpaceRow> {
  return (await store.spaces.create({
    spaceId: randomUUID(),
    name,
    owner,
    title: name,
    description: '',
    visibility: 'private',
    oracle: false,
    joinPolicy: 'invite',
    signedOnly: false,
    categories: [],
    serviceReviewer: false,
    taskConfirmations: 0,
    taskConfirmers: 'members',
    taskClaimHours: 4,
    now,
    ...opts,
  })).space;
}

let counter = 0;

/** A fresh private SPACE owned by `by`, at the relay's clock. */
export async function newSpace(relay: RunningRelay, by: MintedToken, opts: Partial<CreateSpaceInput> = {}): Promise<SpaceRow> {
  return await createSpaceInStore(relay.store, by.peerId, `rd-${++counter}-${toHex(randomBytes(3))}`, relay.clock.now(), opts);
}

/** A fresh private SPACE owned by `owner` with each of `writers` admitted as a writer. */
export async function spaceWithWriters(relay: RunningRelay, owner: MintedToken, writers: readonly MintedToken[]): Promise<SpaceRow> {
  const space = await newSpace(relay, owner);
  for (const w of writers) await admit(relay, space, w, 'writer');
  return space;
}

/** A running relay for the many-writers tests: its receipt signing key, an owner, and writers. */
export interface WriterRelay {
  readonly relay: RunningRelay;
  /** The service key receipts are signed with (capabilities `protocol.service_keys[0]`). */
  readonly signerKey: Uint8Array;
  readonly owner: MintedToken;
  readonly writers: MintedToken[];
}

/** Start a relay, read its receipt key, and mint an owner and `count` writer KEYs. */
export async function startWithWriters(count: number): Promise<WriterRelay> {
  const relay = await startRelay();
  const caps = await getJson(`${relay.url}/v1/capabilities`);
  const signerKey = fromHex(caps.body.protocol.service_keys[0].public_key, 32);
  const owner = await mintToken(relay.url);
  const writers = await Promise.all(Array.from({ length: count }, () => mintToken(relay.url)));
  return { relay, signerKey, owner, writers };
}

/**
 * A post signed by `who` for `space` as a bridge signs it: space_id and author_id filled in, a
 * fresh idempotency key unless `fields` names one, and a random salt for a private part.
 */
export function signedPost(
  who: { peerId: string; signer: Signer },
  space: { spaceId: string },
  fields: Omit<PostFields, 'space_id' | 'author_id' | 'private_digest'>,
  priv?: PrivateFields,
): SignedPost {
  return signPost({
    fields: { space_id: space.spaceId, author_id: who.peerId, idempotency_key: randomUUID(), ...fields },
    private: priv,
    salt: new Uint8Array(randomBytes(32)),
    signer: who.signer,
  });
}

export async function admit(relay: RunningRelay, space: SpaceRow, peer: MintedToken, role: Role): Promise<void> {
  await relay.store.members.admit(
    (await relay.store.spaces.byRowId(space.id))!,
    { peer: peer.peerId, role, tags: [], broughtInBy: space.owner },
    space.owner,
    relay.clock.now(),
  );
}

/** GET with a token (or none). */
export function get(relay: RunningRelay, path: string, who?: MintedToken, headers: Record<string, string> = {}): Promise<Answer> {
  return call(relay, 'GET', path, { token: who?.token, headers });
}

/**
 * One append over HTTP; throws unless 201. The clock moves 2.1 s first so the 30-a-minute
 * write bucket never runs dry.
 */
export async function post(relay: RunningRelay, who: MintedToken, space: SpaceRow | string, body: Record<string, unknown>): Promise<any> {
  relay.clock.advance(2_100);
  const name = typeof space === 'string' ? space : space.name;
  const r = await call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: who.token, body });
  if (r.status !== 201) throw new Error(`posts.append refused: ${r.status} ${r.text}`);
  return r.body;
}

/** The refusal code of an answer (undefined when it is not a refusal). */
export function codeOf(a: Answer): string | undefined {
  return a.body?.error?.code;
}

/**
 * Set the SEEK watermark one post back, as a database written before appends indexed their own
 * posts would be: from then on appends leave their rows to the follow-up indexer
 * (relay/seek/indexer.ts) until it has caught up. Answers the watermark set.
 */
export async function putSeekIndexBehind(store: Store): Promise<number> {
  const behind = Math.max(0, await store.seek.watermark() - 1);
  await store.db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1').run(behind);
  return behind;
}
