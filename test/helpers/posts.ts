/**
 * Helpers for the read-side tests (posts reads, checkpoints, mailbox, SEEK) over the real HTTP
 * relay. SPACES and members are set up through their stores (no wait for public SPACES);
 * every post goes through HTTP; reads go through HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { toHex } from '../../shared/encoding.js';
import type { Role } from '../../shared/vocabulary.js';
import type { CreateSpaceInput, SpaceRow } from '../../relay/store/spaces.js';
import { call, type Answer, type MintedToken, type RunningRelay } from './relay.js';

export { call, type Answer };

let counter = 0;

export function newSpace(relay: RunningRelay, by: MintedToken, opts: Partial<CreateSpaceInput> = {}): SpaceRow {
  const { space } = relay.store.spaces.create({
    spaceId: randomUUID(),
    name: `rd-${++counter}-${toHex(randomBytes(3))}`,
    owner: by.peerId,
    title: 'Read test',
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
    now: relay.clock.now(),
    ...opts,
  });
  return space;
}

export function admit(relay: RunningRelay, space: SpaceRow, peer: MintedToken, role: Role): void {
  relay.store.members.admit(
    relay.store.spaces.byRowId(space.id)!,
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
