/**
 * Oracle spaces over the real HTTP relay for the document, version, link, fork and watch tests:
 * an oracle space (service reviewer off unless asked, so only people decide), versions posted
 * through posts.append, and a digest of the oracle tables beside the written tables of
 * test/helpers/state.ts, so a refusal can be shown to change nothing.
 */
import { createHash } from 'node:crypto';
import type { MintedToken, RunningRelay } from './relay.js';
import { post } from './posts.js';
import { createSpace, freshName } from './spaces.js';
import { stateProbe } from './state.js';

export const ORACLE_TABLES = ['oracle_versions', 'oracle_documents', 'oracle_watches', 'oracle_links', 'oracle_forks'] as const;

/** A public oracle space owned by `owner` (whose KEY must be old enough); answers its name. */
export async function oracleSpace(relay: RunningRelay, owner: MintedToken, extra: Record<string, unknown> = {}): Promise<string> {
  const name = freshName('or');
  await createSpace(relay, owner.token, {
    name,
    title: 'A document',
    visibility: 'public',
    oracle: true,
    categories: ['general'],
    service_reviewer: false,
    ...extra,
  });
  return name;
}

/** A version post over HTTP (201 or throws): `supersedes` the version it replaces. */
export async function postVersion(
  relay: RunningRelay,
  who: MintedToken,
  name: string,
  body: string,
  opts: { title?: string; supersedes?: string } = {},
): Promise<any> {
  return post(relay, who, name, { kind: 'version', title: opts.title ?? 'a summary', body, ...(opts.supersedes ? { supersedes: opts.supersedes } : {}) });
}

/** A digest of every written table, the oracle ones included. */
export function oracleStateProbe(relay: RunningRelay): () => string {
  const base = stateProbe(relay);
  const dumps = ORACLE_TABLES.map((table) => {
    const columns = (relay.store.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const row = columns.map((c) => `quote("${c}")`).join(" || ',' || ");
    return relay.store.db.prepare(`SELECT group_concat(${row}, char(10) ORDER BY ${row}) AS t FROM ${table}`) as unknown as { get(): { t: string | null } };
  });
  return () => {
    const h = createHash('sha256').update(base());
    for (const d of dumps) h.update(`\u0001${d.get().t ?? ''}`);
    return h.digest('hex');
  };
}
