/**
 * The direct-message suite: messages.send over HTTP against the real relay process, beside the
 * in-process send ceiling measured in the same run, and the mailbox read of 10,000 message
 * envelopes by pages.
 *
 *   ceiling pair (no HTTP)      relay/messages/send.ts `sendMessage` in this process on its own
 *                               data directory, one message after another into a pair: the
 *                               same pipeline (checks, seq under the write lock, the message,
 *                               one mailbox row, one commit with synchronous=FULL in WAL)
 *                               without HTTP. The baseline of every send row.
 *   ceiling group of 16         the same into a group of 16 (15 mailbox rows per message).
 *   http pair ×c                c senders (1, 16), each into its own pair, each sending its next
 *                               message as soon as the last is answered (undici Pool, one
 *                               keep-alive connection each).
 *   http group of 16 ×c         c members (1, 16) of one group of 16 sending into it: each
 *                               message fans out to 15 mailboxes in the same transaction.
 *   mailbox read <detail>       one KEY reads its 10,000 message envelopes from the start,
 *                               pages of 200 by `after`, at the mailbox's default detail
 *                               (snippets) and at full; envelopes per second over the whole read.
 *
 * Every KEY shares one SPACE, so they know each other and no message is a request. The relay
 * runs with SVC_RELAY_NO_RATE_LIMITS=1 (otherwise 60 messages a minute per KEY, and 200
 * deliveries an hour from one KEY to another). The relay process and this one (the clients)
 * share the machine's cores. Progress goes to stderr on a terminal only.
 *
 * Target: the group send (fan-out to 15) holds at least half the pair rate, at 1 and 16 senders.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Pool } from 'undici';
import { sendMessage, startConversation } from '../relay/messages/send.js';
import { collectGarbage, formatDuration, progress, summarizeLatency, type Row, type Suite, type SuiteReport } from './harness.js';
import { createSpaceInStore, expectCall, filler, openInProcess, randomSigner, registerKey, spawnBenchRelay, tempDataDir } from './relay-fixture.js';
import { mintToken, type MintedToken } from '../test/helpers/relay.js';

const SENDERS = [1, 16] as const;
const GROUP = 16;
const BODY_BYTES = 512;
const MAILBOX_ENVELOPES = 10_000;
const PAGE = 200;

const ROUNDS = 5;
const WARMUP_MS = 200;
const ROUND_MS = 800;
const MAILBOX_ROUNDS = 3;

const TARGET_GROUP_SHARE_OF_PAIR = 0.5;

const latencyOf = (ms: readonly number[]) => summarizeLatency(ms.map((x) => x * 1e6));
const best = (rounds: readonly number[]): number => Math.max(...rounds);

interface CaseResult {
  opsPerSec: number[];
  latencyMs: number[];
}

const body = (k: number): string => JSON.stringify({ body: filler(BODY_BYTES, k) });

// ---------------------------------------------------------------------------------------------
// Ceilings: the send pipeline in this process, no HTTP.

async function ceilingSetup() {
  const r = await openInProcess();
  const owner = await registerKey(r, randomSigner());
  const keys: string[] = [];
  for (let i = 0; i < GROUP; i++) keys.push(await registerKey(r, randomSigner()));
  const space = await createSpaceInStore(r, owner, `messages-${randomUUID().slice(0, 8)}`);
  for (const k of keys) await r.store.members.admit(space, { peer: k, role: 'writer', tags: [], broughtInBy: owner }, owner, Date.now());
  const me = keys[0]!;
  const pair = (await startConversation(r.ctx, me, { to: [keys[1]!], body: 'hello' })).conversation.conversationId;
  const group = (await startConversation(r.ctx, me, { to: keys.slice(1), body: 'hello all' })).conversation.conversationId;
  return { r, me, pair, group };
}

async function runCeiling(c: Awaited<ReturnType<typeof ceilingSetup>>, conversationId: string): Promise<CaseResult> {
  let k = 0;
  const next = async () => await sendMessage(c.r.ctx, c.me, conversationId, JSON.parse(body(k++)) as Record<string, unknown>);
  collectGarbage();
  const warmEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmEnd) await next();
  const latencyMs: number[] = [];
  const start = performance.now();
  const end = start + ROUND_MS;
  let now = start;
  while (now < end) {
    const t0 = now;
    await next();
    now = performance.now();
    latencyMs.push(now - t0);
  }
  return { opsPerSec: [(latencyMs.length * 1000) / (now - start)], latencyMs };
}

// ---------------------------------------------------------------------------------------------
// HTTP against the relay process.

/** `senders[i]` sends into `conversations[i]` for the case's time; answers its figures. */
async function runHttp(url: string, senders: readonly MintedToken[], conversations: readonly string[]): Promise<CaseResult> {
  const clients = senders.length;
  const bodies = Array.from({ length: 64 }, (_, k) => Buffer.from(body(k)));
  collectGarbage();
  const latencyMs: number[] = [];
  const measureFrom = performance.now() + WARMUP_MS;
  const end = measureFrom + ROUND_MS;
  let done = 0;
  const pool = new Pool(url, { connections: clients, pipelining: 1 });
  const worker = async (i: number): Promise<void> => {
    const headers = { authorization: `Bearer ${senders[i]!.token}`, 'content-type': 'application/json' };
    const path = `/v1/conversations/${conversations[i]}/messages`;
    for (let k = 0; ; k++) {
      const t0 = performance.now();
      if (t0 >= end) return;
      const res = await pool.request({ path, method: 'POST', headers, body: bodies[k % bodies.length]! });
      const text = await res.body.text();
      const t1 = performance.now();
      if (res.statusCode !== 201) throw new Error(`send refused: ${res.statusCode} ${text}`);
      if (t0 >= measureFrom && t1 <= end) {
        latencyMs.push(t1 - t0);
        done++;
      }
    }
  };
  try {
    await Promise.all(senders.map(async (_, i) => await worker(i)));
  } finally {
    await pool.close();
  }
  return { opsPerSec: [(done * 1000) / ROUND_MS], latencyMs };
}

/** Send from every sender into its pair with `reader` until the reader's mailbox holds `count` envelopes. */
async function fillMailbox(url: string, senders: readonly MintedToken[], pairs: readonly string[], count: number): Promise<void> {
  const pool = new Pool(url, { connections: senders.length, pipelining: 1 });
  let sent = 0;
  const worker = async (i: number): Promise<void> => {
    const headers = { authorization: `Bearer ${senders[i]!.token}`, 'content-type': 'application/json' };
    while (sent < count) {
      sent++;
      const res = await pool.request({ path: `/v1/conversations/${pairs[i]}/messages`, method: 'POST', headers, body: body(sent) });
      const text = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`send refused: ${res.statusCode} ${text}`);
      if (sent % 500 === 0) progress(`messages: filling a mailbox ${sent}/${count}`);
    }
  };
  try {
    await Promise.all(senders.map(async (_, i) => await worker(i)));
  } finally {
    await pool.close();
  }
}

/** Read the whole mailbox from the start by pages; answers envelopes read and ms. */
async function readMailbox(url: string, reader: MintedToken, detail: string): Promise<{ envelopes: number; ms: number }> {
  const pool = new Pool(url, { connections: 1, pipelining: 1 });
  const headers = { authorization: `Bearer ${reader.token}` };
  let after = '0';
  let envelopes = 0;
  collectGarbage();
  const started = performance.now();
  try {
    for (;;) {
      const res = await pool.request({ path: `/v1/mailbox?after=${after}&limit=${PAGE}&detail=${detail}`, method: 'GET', headers });
      const page = (await res.body.json()) as { items: unknown[]; next_after: string; has_more: boolean };
      if (res.statusCode !== 200) throw new Error(`mailbox refused: ${res.statusCode} ${JSON.stringify(page)}`);
      envelopes += page.items.length;
      after = page.next_after;
      if (!page.has_more) break;
    }
  } finally {
    await pool.close();
  }
  return { envelopes, ms: performance.now() - started };
}

async function run(): Promise<SuiteReport> {
  progress('messages: setting up');
  const ceiling = await ceilingSetup();
  const dataDir = tempDataDir('svc-bench-messages-');
  const relay = await spawnBenchRelay(dataDir);
  try {
    const url = relay.url;
    // 16 senders, a pair partner each, a mailbox reader; all in one SPACE, so all acquainted.
    const senders = await Promise.all(Array.from({ length: 16 }, () => mintToken(url)));
    const partners = await Promise.all(Array.from({ length: 16 }, () => mintToken(url)));
    const reader = await mintToken(url);
    const owner = await mintToken(url);
    const space = `bench-messages-${randomUUID().slice(0, 6)}`;
    await expectCall(201, `${url}/v1/spaces`, 'POST', owner.token, { name: space, title: 'bench' });
    for (const k of [...senders, ...partners, reader]) {
      await expectCall(201, `${url}/v1/spaces/${space}/members/${k.peerId}`, 'PUT', owner.token, { role: 'writer' });
    }
    const start = async (from: MintedToken, to: readonly MintedToken[]): Promise<string> => {
      const b = await expectCall(201, `${url}/v1/conversations`, 'POST', from.token, { to: to.map((t) => t.peerId), body: 'hello' });
      return b.conversation.conversation_id as string;
    };
    const pairs: string[] = [];
    for (let i = 0; i < senders.length; i++) pairs.push(await start(senders[i]!, [partners[i]!]));
    const group = await start(senders[0]!, senders.slice(1, GROUP));

    const ceilings = { pair: { opsPerSec: [], latencyMs: [] } as CaseResult, group: { opsPerSec: [], latencyMs: [] } as CaseResult };
    const cases = new Map<string, CaseResult>();
    const pairName = (c: number) => `http pair ×${c}`;
    const groupName = (c: number) => `http group of ${GROUP} ×${c}`;
    // Interleaved rounds: every case once per round, so machine noise spreads over all of them.
    for (let round = 0; round < ROUNDS; round++) {
      progress(`messages: round ${round + 1}/${ROUNDS}`);
      for (const [which, id] of [['pair', ceiling.pair], ['group', ceiling.group]] as const) {
        const r = await runCeiling(ceiling, id);
        ceilings[which].opsPerSec.push(...r.opsPerSec);
        ceilings[which].latencyMs.push(...r.latencyMs);
      }
      for (const c of SENDERS) {
        for (const [name, conversations] of [
          [pairName(c), pairs.slice(0, c)],
          [groupName(c), Array.from({ length: c }, () => group)],
        ] as const) {
          const res = await runHttp(url, senders.slice(0, c), conversations);
          const acc = cases.get(name) ?? { opsPerSec: [], latencyMs: [] };
          acc.opsPerSec.push(...res.opsPerSec);
          acc.latencyMs.push(...res.latencyMs);
          cases.set(name, acc);
        }
      }
    }

    // The reader's mailbox: pairs with 16 senders, then 10,000 messages into them.
    const readerPairs: string[] = [];
    for (const s of senders) readerPairs.push(await start(s, [reader]));
    const head = async () => Number((await expectCall(200, `${url}/v1/me`, 'GET', reader.token)).mailbox.head_seq);
    await fillMailbox(url, senders, readerPairs, MAILBOX_ENVELOPES - (await head()));
    const envelopes = await head();
    const reads = new Map<string, number[]>([['snippets', []], ['full', []]]);
    for (let round = 0; round < MAILBOX_ROUNDS; round++) {
      progress(`messages: mailbox read ${round + 1}/${MAILBOX_ROUNDS}`);
      for (const [detail, acc] of reads) {
        const r = await readMailbox(url, reader, detail);
        if (r.envelopes !== envelopes) throw new Error(`mailbox read ${r.envelopes} envelopes of ${envelopes}`);
        acc.push((r.envelopes * 1000) / r.ms);
      }
    }
    progress('');

    const ceilPairName = 'ceiling pair (no HTTP)';
    const ceilPair = best(ceilings.pair.opsPerSec);
    const rows: Row[] = [
      { name: ceilPairName, opsPerSec: ceilPair, latency: latencyOf(ceilings.pair.latencyMs) },
      {
        name: `ceiling group of ${GROUP} (no HTTP)`,
        opsPerSec: best(ceilings.group.opsPerSec),
        baseline: ceilPairName,
        latency: latencyOf(ceilings.group.latencyMs),
        note: `${GROUP - 1} mailbox rows per message`,
      },
    ];
    const notes: string[] = [];
    for (const c of SENDERS) {
      for (const name of [pairName(c), groupName(c)]) {
        const r = cases.get(name)!;
        const ops = best(r.opsPerSec);
        rows.push({ name, opsPerSec: ops, baseline: ceilPairName, latency: latencyOf(r.latencyMs), note: `${((ops / ceilPair) * 100).toFixed(0)}% of the pair ceiling` });
      }
      const share = best(cases.get(groupName(c))!.opsPerSec) / best(cases.get(pairName(c))!.opsPerSec);
      notes.push(
        `group of ${GROUP} vs pairs, ${c} sender${c === 1 ? '' : 's'}: ${(share * 100).toFixed(0)}% of the pair rate, target ≥ ${TARGET_GROUP_SHARE_OF_PAIR * 100}%: ${share >= TARGET_GROUP_SHARE_OF_PAIR ? 'met' : 'missed'}`,
      );
    }
    const snippets = best(reads.get('snippets')!);
    rows.push({ name: `mailbox read ${envelopes.toLocaleString('en-US')} snippets ×${PAGE}`, opsPerSec: snippets, note: `whole read ${formatDuration((envelopes / snippets) * 1e9)}` });
    const full = best(reads.get('full')!);
    rows.push({
      name: `mailbox read ${envelopes.toLocaleString('en-US')} full ×${PAGE}`,
      opsPerSec: full,
      baseline: rows[rows.length - 1]!.name,
      note: `whole read ${formatDuration((envelopes / full) * 1e9)}`,
    });
    notes.push(
      `sends: best of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms after ${WARMUP_MS} ms of warm-up; p50/p99/max over every measured request; ` +
        `bodies of ${BODY_BYTES} bytes; "vs baseline": time per message ÷ the in-process pair send's; relay process with SVC_RELAY_NO_RATE_LIMITS=1, synchronous=FULL; ` +
        'over HTTP the relay commits the sends that arrive together in one transaction (relay/posts/commit-queue.ts), so several senders can pass the ceiling',
      `mailbox: envelopes per second over a whole read of ${MAILBOX_ENVELOPES.toLocaleString('en-US')} message envelopes from the start, pages of ${PAGE}, best of ${MAILBOX_ROUNDS}`,
    );
    return { rows, notes };
  } finally {
    progress('');
    await relay.kill('SIGTERM');
    ceiling.r.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const messagesSuite: Suite = {
  name: 'messages',
  title: 'Direct messages over HTTP vs the in-process send ceiling; mailbox read of 10,000 envelopes',
  run,
};
