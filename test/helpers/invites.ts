/**
 * Test helpers for invites, joining and hand-over over the real HTTP relay: making links,
 * joining, reading memberships from the store, and a snapshot of everything a refused write
 * must leave as it was (audit head, mailbox heads of the KEYS involved).
 */
import { expect } from 'vitest';
import { call, createSpace, freshName, type Answer } from './spaces.js';
import type { MintedToken, RunningRelay } from './relay.js';

export { call, createSpace, freshName };

/** Make an invite link; throws unless 201. */
export async function makeLink(relay: RunningRelay, who: MintedToken, space: string, body: Record<string, unknown>): Promise<any> {
  const r = await call(relay, 'POST', `/v1/spaces/${space}/invites`, { token: who.token, body });
  if (r.status !== 201) throw new Error(`invites.create refused: ${r.status} ${r.text}`);
  return r.body;
}

export function joinLink(relay: RunningRelay, who: MintedToken, link: string): Promise<Answer> {
  return call(relay, 'POST', '/v1/join', { token: who.token, body: { link } });
}

/** Admit `who` to `space` as `role` through a fresh link made by `maker`; throws unless admitted. */
export async function admit(relay: RunningRelay, maker: MintedToken, space: string, who: MintedToken, role: string, tags: string[] = []): Promise<any> {
  const link = await makeLink(relay, maker, space, { role, tags });
  const r = await joinLink(relay, who, link.link);
  if (r.status !== 200) throw new Error(`join refused: ${r.status} ${r.text}`);
  return link;
}

/** Grant a role directly (members.set); throws unless 200 or 201. */
export async function grant(relay: RunningRelay, by: MintedToken, space: string, peer: string, role: string, tags?: string[]): Promise<Answer> {
  const r = await call(relay, 'PUT', `/v1/spaces/${space}/members/${peer}`, { token: by.token, body: tags === undefined ? { role } : { role, tags } });
  if (r.status !== 200 && r.status !== 201) throw new Error(`members.set refused: ${r.status} ${r.text}`);
  return r;
}

export async function roleIn(relay: RunningRelay, space: string, peer: string): Promise<string | null> {
  const s = (await relay.store.spaces.byName(space))!;
  return await relay.store.members.roleOf(s, peer);
}

export async function memberRow(relay: RunningRelay, space: string, peer: string) {
  const s = (await relay.store.spaces.byName(space))!;
  return await relay.store.members.get(s.id, peer);
}

export async function eventsOf(relay: RunningRelay, space: string) {
  const s = (await relay.store.spaces.byName(space))!;
  return await relay.store.events.list(s.id, 0, 100_000);
}

export interface Snapshot {
  audit: number;
  mailboxes: number[];
}

/** What a refused write must not move: the SPACE's audit head and these KEYS' mailbox heads. */
export async function snapshot(relay: RunningRelay, space: string, peers: MintedToken[]): Promise<Snapshot> {
  const s = (await relay.store.spaces.byName(space))!;
  return {
    audit: (await relay.store.events.head(s.id)).revision,
    mailboxes: await Promise.all(peers.map(async (p) => await relay.store.mailbox.head(p.peerId))),
  };
}

/** Expect a refusal with `code`, and that nothing in the snapshot moved. */
export function expectRefused(r: Answer, code: string, before: Snapshot, after: Snapshot): void {
  expect({ status: r.status, code: r.body?.error?.code }).toMatchObject({ code });
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(after).toEqual(before);
}

/** Let every KEY's write bucket refill (30 a minute, burst 60). */
export function rest(relay: RunningRelay): void {
  relay.clock.advance(2 * 60_000 + 1000);
}
