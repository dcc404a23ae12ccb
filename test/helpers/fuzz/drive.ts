/**
 * Sends generated requests to a relay in process (Fastify's `inject`: the real app, routes and
 * SQLite, without sockets) and judges each answer (verdict.ts). A refusal must change nothing:
 * SQLite's `total_changes()` on the relay's one connection (on PostgreSQL, the next transaction
 * id) tells whether any row moved during the request at all (it counts every insert, update
 * and delete, rolled back or not), and only
 * then is the digest of every written table (state.ts) taken and compared with the one before.
 */
import fc from 'fast-check';
import { mintToken, type RunningRelay } from '../relay.js';
import { stateProbe } from '../state.js';
import type { World } from './world.js';
import type { AuthChoice, FuzzRequest } from './requests.js';
import { problemWith, type Outcome } from './verdict.js';

/** A request that has not answered by then is a hang (nothing here waits: `wait` is always 0). */
const ANSWER_WITHIN_MS = 10_000;

export interface RouteResult {
  sent: number;
  ms: number;
  /** Answers by status class, e.g. { '2xx': 12, '4xx': 188 }. */
  statuses: Record<string, number>;
  /** fast-check's report of the first failing request (shrunk), if any. */
  failure?: string | undefined;
}

export interface Driver {
  run(name: string, arb: fc.Arbitrary<FuzzRequest>, runs: number, seed?: number): Promise<RouteResult>;
}

export async function createDriver(relay: RunningRelay, world: World): Promise<Driver> {
  const digest = await stateProbe(relay);
  // PostgreSQL's counterpart: the next transaction id, which moves whenever any transaction
  // wrote a row (an id is assigned at the first write, whether it then commits or rolls back).
  const changes = relay.store.db.prepare(
    relay.store.db.dialect === 'sqlite' ? 'SELECT total_changes() AS n' : 'SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS n',
  );
  const totalChanges = async () => (await changes.get() as { n: number }).n;
  let counts: Record<string, number> = {};
  const host = new URL(relay.url).host;
  let baseline = await digest();
  let baselineAt = await totalChanges();

  const authHeader = (choice: AuthChoice): string | undefined => {
    switch (choice) {
      case 'owner':
        return `Bearer ${world.owner.token}`;
      case 'writer':
        return `Bearer ${world.writer.token}`;
      case 'none':
        return undefined;
      case 'unknown':
        return `Bearer svc_${'0'.repeat(64)}`;
      case 'malformed':
        return 'Bearer not-a-token';
      case 'basic':
        return 'Basic YTpi';
      case 'owner-twice':
        return `Bearer ${world.owner.token} ${world.owner.token}`;
      case 'owner-upper':
        return `Bearer ${world.owner.token.toUpperCase()}`;
    }
  };

  /** After a success at /v1/tokens (a revocation), sign both KEYS in again with their own seeds. */
  const renewTokens = async () => {
    world.owner = { ...world.owner, token: (await mintToken(relay.url, world.owner.seed)).token };
    world.writer = await mintToken(relay.url, world.writer.seed);
  };

  const send = async (req: FuzzRequest): Promise<string | undefined> => {
    // The relay's own address as Host, as a client of it sends (the connector refuses a rebound name).
    const headers: Record<string, string> = { host, ...req.headers };
    const auth = authHeader(req.auth);
    if (auth !== undefined) headers.authorization = auth;
    if (await totalChanges() !== baselineAt) {
      // Something else wrote since (a background job): take the state as it is now.
      baseline = await digest();
      baselineAt = await totalChanges();
    }
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS);
    });
    let res: Outcome;
    try {
      const r = await Promise.race([relay.app.inject({ method: req.method as 'GET', url: req.url, headers, payload: req.payload }), hang]);
      res = { status: r.statusCode, headers: r.headers, text: r.body };
    } finally {
      clearTimeout(timer);
    }
    const kind = `${Math.floor(res.status / 100)}xx`;
    counts[kind] = (counts[kind] ?? 0) + 1;
    const problem = problemWith(req.method, req.url, res, world.secret);
    if (problem !== undefined) return problem;
    const moved = await totalChanges() !== baselineAt;
    if (res.status >= 400 && moved) {
      const after = await digest();
      if (after !== baseline) {
        baseline = after;
        baselineAt = await totalChanges();
        return `HTTP ${res.status} ${res.text.slice(0, 100)}: the refusal changed the tables`;
      }
    }
    if (moved) {
      baseline = await digest();
      baselineAt = await totalChanges();
    }
    if (res.status < 300 && req.url.startsWith('/v1/tokens')) await renewTokens();
    return undefined;
  };

  return {
    async run(_name, arb, runs, seed) {
      const statuses: Record<string, number> = {};
      counts = statuses;
      let sent = 0;
      const started = performance.now();
      const property = fc.asyncProperty(arb, async (req) => {
        sent++;
        const problem = await send(req);
        if (problem !== undefined) throw new Error(problem);
      });
      const details = await fc.check(property, { numRuns: runs, ...(seed === undefined ? {} : { seed }), reporter: undefined });
      return { sent, ms: performance.now() - started, statuses, failure: details.failed ? fc.defaultReportMessage(details) : undefined };
    },
  };
}
