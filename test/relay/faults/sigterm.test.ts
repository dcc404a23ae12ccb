/**
 * SIGTERM to a relay process in the middle of its work: two long polls waiting on a SPACE, one
 * on the mailbox, a live update stream at /mcp (2026-07-28 subscriptions/listen) and four
 * senders appending as fast as they can. The process exits with 0 within seconds (not after the
 * 25-second wait); each long poll is answered (its empty page, or a refusal in the envelope),
 * the stream ends gracefully, each append is acknowledged, refused in the envelope, or never
 * reaches a relay that stopped listening, never a fault; and after a restart every
 * acknowledged post is there with its seq, without a gap.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startRelay } from '../../helpers/relay.js';
import { connectConnector } from '../../helpers/connector.js';
import { mintToken, spawnRelay, tempDataDir, type SpawnedRelay } from '../../helpers/relay.js';
import { append, postsById, type Acked } from '../../helpers/faults.js';
import { rmSync } from 'node:fs';

const dataDir = tempDataDir('svc-sigterm-');
let relay: SpawnedRelay | undefined;

afterAll(async () => {
  await relay?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** A GET's outcome: its status and body text, or the network failure when the relay went away. */
async function get(url: string, token: string): Promise<{ status: number; text: string } | { failed: string }> {
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, text: await res.text() };
  } catch (e) {
    return { failed: String((e as { cause?: unknown }).cause ?? e) };
  }
}

describe('stopping an in-process relay while a read is held', () => {
  it('answers the held read with its empty page at once instead of after its wait', async () => {
    const r = await startRelay();
    const k = await mintToken(r.url);
    await fetch(`${r.url}/v1/spaces`, { method: 'POST', headers: { authorization: `Bearer ${k.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'held-read' }) });
    await append(r.url, k.token, 'held-read', 'one');
    const held = get(`${r.url}/v1/spaces/held-read/posts?after=1&wait=25`, k.token);
    await new Promise((res) => setTimeout(res, 300));
    const t0 = Date.now();
    await r.close();
    const answer = await held;
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect('status' in answer && answer.status).toBe(200);
    expect('text' in answer && JSON.parse(answer.text).items).toEqual([]);
  });
});

describe('SIGTERM while long polls, a live stream and appends are in flight', () => {
  it('stops within seconds, answers or ends each of them cleanly, and loses no acknowledged post', async () => {
    const start = () => spawnRelay(dataDir, { env: { SVC_RELAY_NO_RATE_LIMITS: '1' } });
    relay = await start();
    const a = await mintToken(relay.url);
    const b = await mintToken(relay.url);
    const space = 'sigterm';
    const made = await fetch(`${relay.url}/v1/spaces`, { method: 'POST', headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: space }) });
    expect(made.status).toBe(201);
    const first = (await append(relay.url, a.token, space, 'first')).acked!;
    // A quiet SPACE nobody appends to, for the long polls to wait on.
    const quiet = 'sigterm-quiet';
    await fetch(`${relay.url}/v1/spaces`, { method: 'POST', headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: quiet }) });
    await append(relay.url, a.token, quiet, 'the only post');

    // A second KEY waits on its mailbox; the owner waits twice past the head of the quiet SPACE.
    const polls = [
      get(`${relay.url}/v1/spaces/${quiet}/posts?after=1&wait=25`, a.token),
      get(`${relay.url}/v1/spaces/${quiet}/posts?after=1&wait=25`, a.token),
      get(`${relay.url}/v1/mailbox?wait=25`, b.token),
    ];
    const live = await connectConnector(relay.url, { token: b.token, revision: '2026-07-28' });
    const sub = await live.client.listen({ resourceSubscriptions: ['svc://mailbox'] });

    const acked: Acked[] = [first];
    const refused: { status: number; text: string }[] = [];
    let failures = 0;
    let stopping = false;
    let n = 0;
    // Each sender goes on through the stop until the relay no longer answers.
    const sender = async () => {
      while (n < 20_000) {
        try {
          const r = await append(relay!.url, a.token, space, `post ${n++}`);
          if (r.acked) acked.push(r.acked);
          else refused.push(r.answer);
        } catch {
          failures++;
          if (stopping) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const senders = [sender(), sender(), sender(), sender()];
    await new Promise((r) => setTimeout(r, 400));

    const stoppedAt = Date.now();
    stopping = true;
    const code = await relay.kill('SIGTERM');
    const took = Date.now() - stoppedAt;
    await Promise.all(senders);
    const answers = await Promise.all(polls);
    const ended = await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('still open'), 3_000))]);
    await live.close().catch(() => {});

    expect(code).toBe(0);
    expect(took).toBeLessThan(10_000);
    expect(ended).toBe('graceful');
    // Each held read is answered with its page as it stands.
    expect(answers.map((p) => ('failed' in p ? p.failed : p.status))).toEqual([200, 200, 200]);
    for (const r of refused) {
      expect(r.status, r.text).not.toBe(500);
      expect(JSON.parse(r.text).error.code).toMatch(/^[A-Z_]+$/);
    }
    expect(acked.length).toBeGreaterThan(5);
    expect(relay.stderr()).not.toMatch(/INTERNAL|Error:/);

    relay = await start();
    const stored = await postsById(relay.url, a.token, space);
    for (const p of acked) expect(stored.get(p.postId)?.seq, `post ${p.postId}`).toBe(p.seq);
    const seqs = [...stored.values()].map((p) => Number(p.seq)).sort((x, y) => x - y);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(await relay.kill('SIGTERM')).toBe(0);
    relay = undefined;
    console.log(`SIGTERM: exit ${code} after ${took} ms; ${acked.length} acknowledged, ${refused.length} refused (${[...new Set(refused.map((r) => r.status))].join(', ')}), ${failures} not connected; polls: ${answers.map((p) => ('failed' in p ? 'network' : p.status)).join(', ')}`);
  }, 120_000);
});
