/**
 * witness.status `GET /v1/witness` (relay/witness/follow.ts): who this relay is as a witness
 * (its key name, public key, the `name=base64key` line origins put in --accept-witnesses and
 * bridges in SVC_WITNESSES, the verifier key), the SPACES it follows with the newest head it
 * cosigned of each, and the split views it saw, oldest first (`after`, `limit` page them).
 * Answered by every relay; `following` is empty unless it runs with --witness.
 *
 * With --witness the follow job starts when the app is ready and checks each followed SPACE
 * every --witness-interval; split views are also counted in `svc_relay_witness_split_views`
 * when metrics are kept.
 */
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import * as z from 'zod';
import { toHex } from '../../shared/encoding.js';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { createIntervalJob } from '../jobs/interval-job.js';
import { intParam, oneValue } from '../posts/read-params.js';
import { createWitnessStore } from '../store/witness.js';
import { createWitness, type Outcome, type Witness } from '../witness/follow.js';

const StatusQuery = z.strictObject({ after: oneValue, limit: oneValue });

declare module 'fastify' {
  interface FastifyInstance {
    /** This relay as a witness (tests call `check(target)` on it). */
    witness: Witness & { runOnce(): Promise<Outcome[]> };
  }
}

/** Make the app's witness, its status route and, with --witness, its follow job (on the root app, like the checkpointer). */
export function registerWitness(app: FastifyInstance, ctx: RelayContext): void {
  const store = createWitnessStore(ctx.store.db);
  const report = (line: string) => process.stderr.write(`svc-relay: witness: ${line}\n`);
  const witness = createWitness({ store, name: () => ctx.audience(), signer: ctx.serviceKeys.signer, clock: ctx.clock, report });
  const targets = ctx.config.witness?.targets ?? [];

  async function runOnce(): Promise<Outcome[]> {
    const out: Outcome[] = [];
    for (const t of targets) {
      const o = await witness.check(t);
      if (o.kind === 'refused') report(o.reason);
      out.push(o);
    }
    return out;
  }
  app.decorate('witness', { ...witness, runOnce });

  if (ctx.config.witness !== undefined) {
    const job = createIntervalJob({ intervalMs: ctx.config.witness.intervalMs, pass: async () => void (await runOnce()), report });
    app.addHook('onReady', async () => {
      job.start();
      const m = app.metrics;
      if (m !== undefined) {
        new Gauge({
          name: 'svc_relay_witness_split_views',
          help: 'Split views this witness saw: a followed SPACE served a checkpoint inconsistent with one it cosigned.',
          registers: [m.registry],
          async collect() {
            this.set(await store.splitViewCount());
          },
        });
      }
    });
    app.addHook('onClose', async () => await job.stop());
  }

  app.get(
    '/v1/witness',
    {
      schema: { querystring: StatusQuery },
      config: {
        auth: 'none',
        limit: 'read',
        operation: 'witness.status',
        describe: "This relay as a witness: its cosigning key, the SPACES it follows with the newest head it cosigned, and the split views it saw.",
      },
    },
    async (req) => {
      const q = req.query as z.infer<typeof StatusQuery>;
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? 50;
      const after = intParam(q.after, 'after', 0, Number.MAX_SAFE_INTEGER) ?? 0;
      const me = witness.identity();
      const rows = await store.splitViews(after, limit + 1);
      const page = rows.slice(0, limit);
      return {
        name: me.name,
        public_key: Buffer.from(me.publicKey).toString('base64'),
        setting: me.setting,
        verifier_key: me.verifierKey,
        witnessing: ctx.config.witness !== undefined,
        following: (await store.logs()).map((l) => ({
          origin: l.origin,
          source: l.source,
          size: String(l.size),
          root: toHex(l.root),
          checked_at: new Date(l.checkedAt).toISOString(),
        })),
        split_view_count: await store.splitViewCount(),
        split_views: page.map((v) => ({
          id: String(v.id),
          origin: v.origin,
          source: v.source,
          reason: v.reason,
          kept_size: String(v.keptSize),
          kept_note: v.keptNote,
          seen_size: String(v.seenSize),
          seen_note: v.seenNote,
          at: new Date(v.at).toISOString(),
        })),
        next_after: rows.length > limit ? String(page[page.length - 1]!.id) : null,
      };
    },
  );
}
