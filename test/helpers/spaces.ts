/**
 * Test helpers for SPACES over the real HTTP relay: SPACE creation, ageing KEYS past the
 * public-SPACE wait, and reading the audit head from the store. `call` (relay.ts) is passed on.
 */
import { PUBLIC_SPACE_KEY_AGE_SECONDS } from '../../relay/policy.js';
import { call, type Answer, type RunningRelay } from './relay.js';

export { call, type Answer };

/** Move the relay clock past the wait a KEY needs before it creates a public SPACE. */
export function ageKeys(relay: RunningRelay): void {
  relay.clock.advance(PUBLIC_SPACE_KEY_AGE_SECONDS * 1000 + 1000);
}

/** Create a SPACE (private unless the body says otherwise); throws unless 201. */
export async function createSpace(relay: RunningRelay, token: string, body: Record<string, unknown>): Promise<any> {
  const r = await call(relay, 'POST', '/v1/spaces', { token, body });
  if (r.status !== 201) throw new Error(`spaces.create refused: ${r.status} ${r.text}`);
  return r.body;
}

/** The newest governance revision of a SPACE, read from the store (0 when none). */
export async function auditHead(relay: RunningRelay, name: string): Promise<number> {
  const space = await relay.store.spaces.byName(name);
  if (!space) throw new Error(`no SPACE ${name}`);
  return (await relay.store.events.head(space.id)).revision;
}

let counter = 0;
/** A fresh valid SPACE name. */
export function freshName(prefix = 'sp'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.floor(Math.random() * 1e6)}`;
}
