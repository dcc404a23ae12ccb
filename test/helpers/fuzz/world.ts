/**
 * The world bad input is sent into, built over HTTP on a real relay: a SPACE with a member, a
 * post, a link, a waiting request and a hand-over offer, a sealed SPACE, and another KEY's
 * private SPACE whose post carries a secret no answer to the caller may ever show. With it, the
 * address of each operation with its parameters filled, and a well-formed body for the
 * operations that read one. Shared by the bad-input sweep and the property-based fuzz.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { toHex } from '../../../shared/encoding.js';
import { mintToken, type MintedToken, type RunningRelay } from '../relay.js';
import { call, createSpace, freshName } from '../spaces.js';
import { grant, makeLink } from '../invites.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  encryptionKeyBody,
  keeperListBody,
  lockFor,
  nextGeneration,
  publishKey,
  sealedKey,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from '../sealed.js';

/** One row of the operations index (`GET /` as JSON). */
export interface Operation {
  name: string;
  method: string;
  path: string;
  auth: string;
}

export interface World {
  owner: SealedKey;
  writer: MintedToken;
  space: string;
  sealed: SealedSpace;
  postId: string;
  inviteId: string;
  inviteCode: string;
  requestId: string;
  offerId: string;
  tokenId: string;
  /** Private post content of another KEY: no answer to the caller may ever carry it. */
  secret: string;
}

/** Build the world on `relay` over HTTP; throws when a step is refused. */
export async function buildWorld(relay: RunningRelay): Promise<World> {
  const secret = `secret-${toHex(randomBytes(12))}`;
  const owner = await sealedKey(relay);
  const published = await publishKey(relay, owner);
  if (published.status !== 200) throw new Error(`encryption key refused: ${published.text}`);
  const writer = await mintToken(relay.url);
  const asker = await mintToken(relay.url);
  const space = freshName('fuzz');
  await createSpace(relay, owner.token, { name: space, join_policy: 'request' });
  await grant(relay, owner, space, writer.peerId, 'writer');
  const post = await call(relay, 'POST', `/v1/spaces/${space}/posts`, { token: owner.token, body: { kind: 'obs', body: 'a post' } });
  const link = await makeLink(relay, owner, space, { role: 'reader' });
  const ask = await call(relay, 'POST', `/v1/spaces/${space}/join`, { token: asker.token, body: { message: 'hello' } });
  const offer = await call(relay, 'POST', `/v1/spaces/${space}/hand-over`, { token: writer.token, body: { to: owner.peerId } });
  const sealed = await createSealedSpace(relay, owner);
  nextGeneration(sealed);
  const tokens = await call(relay, 'GET', '/v1/tokens', { token: owner.token });
  // Another KEY's private SPACE and a post whose private part carries the secret.
  const other = await mintToken(relay.url);
  const hidden = freshName('other');
  await createSpace(relay, other.token, { name: hidden });
  const secretPost = await call(relay, 'POST', `/v1/spaces/${hidden}/posts`, {
    token: other.token,
    body: { kind: 'obs', body: secret, data: { x_secret: secret } },
  });
  if (secretPost.status !== 201) throw new Error(`the secret post was refused: ${secretPost.text}`);
  return {
    owner,
    writer,
    space,
    sealed,
    postId: post.body.post_id,
    inviteId: link.invite_id,
    inviteCode: link.code,
    requestId: ask.body.request_id,
    offerId: offer.body.offer_id,
    tokenId: tokens.body.items[0].id,
    secret,
  };
}

/** The value of each path parameter of `op` in the world (a fresh uuid for an id the world lacks). */
export function pathValues(w: World, op: Operation): Record<string, string> {
  const ids: Record<string, string> = {
    'tokens.revoke_one': w.tokenId,
    'posts.hide': w.postId,
    'posts.unhide': w.postId,
    'posts.get': w.postId,
    'invites.revoke': w.inviteId,
    'invites.remove': w.inviteId,
    'requests.approve': w.requestId,
    'requests.decline': w.requestId,
    'requests.withdraw': w.requestId,
    'hand_over.accept': w.offerId,
    'hand_over.decline': w.offerId,
    'categories.get': 'general',
  };
  return {
    name: op.path.includes('/sealed') ? w.sealed.name : w.space,
    peer: w.writer.peerId,
    id: ids[op.name] ?? randomUUID(),
    seq: '1',
    generation: '2',
    number: '1',
  };
}

/** The address of an operation with its parameters filled from the world, `over` replacing some. */
export function pathOf(w: World, op: Operation, over: Partial<Record<string, string>> = {}): string {
  const values: Record<string, string | undefined> = { ...pathValues(w, op), ...over };
  return op.path.replace(/\{([a-z_]+)\}/g, (_m, p: string) => values[p]!);
}

/** A well-formed body for each operation that reads one (the fields its schema knows). */
export function sampleBody(w: World, op: Operation): Record<string, unknown> | undefined {
  const hex32 = toHex(randomBytes(32));
  const s = w.sealed;
  switch (op.name) {
    case 'keys.challenge':
      return { public_key: hex32 };
    case 'keys.verify':
      return { public_key: hex32, challenge: toHex(randomBytes(56)), signature: toHex(randomBytes(64)), label: 'fuzz', ttl_seconds: 3600, invite: w.inviteCode };
    case 'me.encryption_key':
      return encryptionKeyBody(w.owner);
    case 'spaces.create':
      return {
        name: freshName('fz'),
        title: 'T',
        description: 'D',
        categories: ['general'],
        join_policy: 'request',
        visibility: 'private',
        oracle: false,
        signed_only: false,
        task_confirmations: 1,
        task_confirmers: 'members',
        task_claim_hours: 4,
      };
    case 'spaces.update':
      return { title: 'T', description: 'D', join_policy: 'request', signed_only: false, task_confirmations: 1, task_confirmers: 'members', task_claim_hours: 4 };
    case 'members.set':
      return { role: 'reader', tags: ['x'] };
    case 'posts.append':
      return {
        kind: 'obs',
        title: 't',
        body: 'b',
        to: [w.writer.peerId],
        reply_to: w.postId,
        fingerprints: [{ scheme: 'git.commit', value: 'deadbeef' }],
        idempotency_key: `k-${randomUUID()}`,
        data: { x_note: 'n' },
        run_id: randomUUID(),
      };
    case 'invites.create':
      return { role: 'reader', tags: ['x'], max_uses: 3, expires_in_seconds: 3600, label: 'l' };
    case 'invites.look':
      return { link: w.inviteCode };
    case 'join':
      return { code: w.inviteCode, message: 'm' };
    case 'join.link':
      return { code: w.inviteCode, name: w.space };
    case 'requests.approve':
      return { role: 'reader', tags: ['x'] };
    case 'hand_over.create':
      return { to: w.owner.peerId, label: 'l', expires_in_seconds: 3600 };
    case 'sealed.keepers':
      return keeperListBody(s, w.owner, { revision: 1 });
    case 'sealed.stamp':
      return stampBody(w.owner, w.owner.peerId);
    case 'sealed.locks':
      return { generation: 1, commitment: commitmentOfGeneration(s, 1), locks: { [w.owner.peerId]: lockFor(s, 1, w.owner, w.owner) } };
    case 'sealed.stage':
      return { generation: 3, commitment: hex32, back: toHex(randomBytes(48)) };
    default:
      return undefined;
  }
}
