/**
 * The governance audit log over the real HTTP relay: events.list (members only, paging,
 * CURSOR_AHEAD), the control chain verified from genesis with shared/chain.ts after a series of
 * actions, and the ndjson export with its trailer and segment_sha256 recomputed here.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { ageKeys, call, createSpace, freshName } from '../helpers/spaces.js';
import { tempDataDir } from '../helpers/relay.js';
import { rmSync } from 'node:fs';
import { commandIdOf, controlGenesis, readGovernanceEvent, verifyControlChain } from '../../shared/chain.js';
import { fromBase64url, fromHex, toHex } from '../../shared/encoding.js';
import { EXPORT_BYTES_MAX, EXPORT_LINES_DEFAULT } from '../../shared/limits.js';

let relay: RunningRelay;
let owner: MintedToken;
let admin: MintedToken;
let writer: MintedToken;
let outsider: MintedToken;
let name: string;

const NDJSON = { accept: 'application/x-ndjson' };

beforeAll(async () => {
  relay = await startRelay();
  [owner, admin, writer, outsider] = await Promise.all([mintToken(relay.url), mintToken(relay.url), mintToken(relay.url), mintToken(relay.url)]);
  ageKeys(relay);
  // A series of governance actions: every event kind this module writes.
  name = freshName('log');
  await createSpace(relay, owner.token, { name, visibility: 'public', categories: ['general'], title: 'Log' });
  const steps: [MintedToken, string, string, unknown?][] = [
    [owner, 'PUT', `/v1/spaces/${name}/members/${admin.peerId}`, { role: 'admin' }],
    [owner, 'PUT', `/v1/spaces/${name}/members/${writer.peerId}`, { role: 'writer', tags: ['w'] }],
    [owner, 'PATCH', `/v1/spaces/${name}`, { title: 'Log 2', signed_only: true }],
    [admin, 'PUT', `/v1/spaces/${name}/members/${writer.peerId}`, { role: 'reader' }],
    [owner, 'PUT', `/v1/spaces/${name}/blocks/${outsider.peerId}`],
    [admin, 'DELETE', `/v1/spaces/${name}/blocks/${outsider.peerId}`],
    [admin, 'PATCH', `/v1/spaces/${name}`, { task_claim_hours: 6 }],
    [writer, 'DELETE', `/v1/spaces/${name}/members/${writer.peerId}`],
  ];
  for (const [who, method, path, body] of steps) {
    const r = await call(relay, method, path, { token: who.token, body });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.text}`);
  }
});
afterAll(async () => {
  await relay.close();
});
beforeEach(() => relay.clock.advance(60_000));

const EXPECTED_EVENTS = [
  'space.created',
  'member.granted',
  'member.granted',
  'space.updated',
  'member.updated',
  'peer.blocked',
  'peer.unblocked',
  'space.updated',
  'member.left',
];

function parseExport(text: string) {
  expect(text.endsWith('\n')).toBe(true);
  const raw = text.slice(0, -1).split('\n');
  const trailer = JSON.parse(raw.at(-1)!);
  const lines = raw.slice(0, -1);
  return { lines, items: lines.map((l) => JSON.parse(l)), trailer };
}

describe('events.list', () => {
  it('answers every governance event gap-free from revision 1, with command_id and chain_hash', async () => {
    const r = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: { event: string }) => i.event)).toEqual(EXPECTED_EVENTS);
    expect(r.body.items.map((i: { revision: string }) => i.revision)).toEqual(EXPECTED_EVENTS.map((_, i) => String(i + 1)));
    expect(r.body).toMatchObject({ next_after: String(EXPECTED_EVENTS.length), has_more: false, head_revision: String(EXPECTED_EVENTS.length) });
    expect(r.body.notice).toMatch(/PEERS/);
    for (const item of r.body.items) {
      expect(Object.keys(item).sort()).toEqual(['actor', 'at', 'chain_hash', 'command_id', 'event', 'payload', 'revision']);
      expect(item.command_id).toMatch(/^[0-9a-f]{64}$/);
      expect(item.chain_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(item.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(r.body.items[3].payload).toMatchObject({ title: 'Log 2', signed_only: true, changed: ['title', 'signed_only'] });
    expect(r.body.items[7].actor).toBe(admin.peerId);
    expect(r.body.items[8]).toMatchObject({ event: 'member.left', actor: writer.peerId, payload: { peer: writer.peerId, role: 'reader' } });
  });

  it('never carries a code, hash or request message in a payload', async () => {
    const r = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: owner.token });
    for (const item of r.body.items) {
      expect(JSON.stringify(item.payload)).not.toMatch(/svc_/);
      for (const key of Object.keys(item.payload)) expect(key).not.toMatch(/code|hash|message|token/);
    }
  });

  it('pages with after and limit, and answers an empty page at the head', async () => {
    const first = await call(relay, 'GET', `/v1/spaces/${name}/events?limit=4`, { token: admin.token });
    expect(first.body.items).toHaveLength(4);
    expect(first.body).toMatchObject({ next_after: '4', has_more: true, head_revision: '9' });
    const rest = await call(relay, 'GET', `/v1/spaces/${name}/events?after=4&limit=200`, { token: admin.token });
    expect(rest.body.items.map((i: { revision: string }) => i.revision)).toEqual(['5', '6', '7', '8', '9']);
    expect(rest.body.has_more).toBe(false);
    const atHead = await call(relay, 'GET', `/v1/spaces/${name}/events?after=9`, { token: admin.token });
    expect(atHead.body).toMatchObject({ items: [], next_after: '9', has_more: false, head_revision: '9' });
  });

  it('refuses a cursor past the head with CURSOR_AHEAD and malformed paging with INVALID_REQUEST', async () => {
    const ahead = await call(relay, 'GET', `/v1/spaces/${name}/events?after=10`, { token: admin.token });
    expect(ahead.status).toBe(400);
    expect(ahead.body.error.code).toBe('CURSOR_AHEAD');
    for (const q of ['after=-1', 'after=01', 'after=x', 'limit=0', 'limit=201', 'limit=1001', 'order=desc']) {
      const r = await call(relay, 'GET', `/v1/spaces/${name}/events?${q}`, { token: admin.token });
      expect(r.body.error.code, q).toBe('INVALID_REQUEST');
    }
  });

  it('is for the owner and members only, in a public SPACE too (READ_DENIED), and needs a token', async () => {
    const denied = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: outsider.token });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('READ_DENIED');
    const left = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: writer.token });
    expect(left.body.error.code).toBe('READ_DENIED');
    const exportDenied = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: outsider.token, headers: NDJSON });
    expect(exportDenied.body.error.code).toBe('READ_DENIED');
    const anon = await call(relay, 'GET', `/v1/spaces/${name}/events`);
    expect(anon.status).toBe(401);
    const missing = await call(relay, 'GET', '/v1/spaces/never-made-here/events', { token: owner.token });
    expect(missing.body.error.code).toBe('SPACE_NOT_FOUND');
  });
});

describe('the control chain', () => {
  it('verifies from genesis with shared/chain.ts, every event re-read from its canonical bytes', async () => {
    const profile = await call(relay, 'GET', `/v1/spaces/${name}`);
    const spaceId: string = profile.body.space_id;
    const r = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: owner.token, headers: NDJSON });
    const { items } = parseExport(r.text);
    expect(items).toHaveLength(EXPECTED_EVENTS.length);
    const verdict = verifyControlChain(
      spaceId,
      items.map((i) => ({
        revision: Number(i.revision),
        commandId: fromHex(i.command_id, 32),
        chainHash: fromHex(i.chain_hash, 32),
        canonical: fromBase64url(i.canonical),
      })),
    );
    expect(verdict).toMatchObject({ ok: true, count: EXPECTED_EVENTS.length });
    expect(items[0].previous_hash).toBe(toHex(controlGenesis(spaceId)));
    items.forEach((item, i) => {
      if (i > 0) expect(item.previous_hash).toBe(items[i - 1].chain_hash);
      const bytes = fromBase64url(item.canonical);
      expect(toHex(commandIdOf(bytes))).toBe(item.command_id);
      const event = readGovernanceEvent(bytes);
      expect(event).toMatchObject({ spaceId, actor: item.actor, event: item.event, payload: item.payload });
      expect(String(event.revision)).toBe(item.revision);
    });
    // The stored head is the last link.
    const head = await relay.store.events.head((await relay.store.spaces.byName(name))!.id);
    expect(toHex(head.chainHash)).toBe(items.at(-1).chain_hash);
  });

  it('detects a changed byte: a tampered payload no longer verifies', async () => {
    const profile = await call(relay, 'GET', `/v1/spaces/${name}`);
    const r = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: owner.token, headers: NDJSON });
    const { items } = parseExport(r.text);
    const links = items.map((i) => ({
      revision: Number(i.revision),
      commandId: fromHex(i.command_id, 32),
      chainHash: fromHex(i.chain_hash, 32),
      canonical: fromBase64url(i.canonical),
    }));
    const tampered = new TextEncoder().encode(new TextDecoder().decode(links[3]!.canonical).replace('Log 2', 'Log 3'));
    links[3] = { ...links[3]!, canonical: tampered };
    expect(verifyControlChain(profile.body.space_id, links)).toMatchObject({ ok: false, position: 4n });
  });
});

describe('events export (ndjson)', () => {
  it('writes one line per event with canonical and previous_hash, and the trailer exactly as objects.md §14 says', async () => {
    const r = await call(relay, 'GET', `/v1/spaces/${name}/events`, { token: admin.token, headers: NDJSON });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('no-store');
    const { lines, items, trailer } = parseExport(r.text);
    expect(items).toHaveLength(EXPECTED_EVENTS.length);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(
        ['actor', 'at', 'canonical', 'chain_hash', 'command_id', 'event', 'payload', 'previous_hash', 'revision'].sort(),
      );
      expect(item).not.toHaveProperty('cursor');
    }
    const segment = createHash('sha256').update(lines.map((l) => `${l}\n`).join('')).digest('hex');
    const profile = await call(relay, 'GET', `/v1/spaces/${name}`);
    expect(trailer).toEqual({
      cursor: { next_after: '9', has_more: false, head_revision: '9' },
      export: {
        format: 'svc-events-ndjson',
        version: 1,
        space_id: profile.body.space_id,
        name,
        line_limit: EXPORT_LINES_DEFAULT,
        segment_sha256: segment,
      },
      notice: expect.stringMatching(/PEERS/),
    });
  });

  it('pages with after and limit, each segment hashed on its own', async () => {
    const a = parseExport((await call(relay, 'GET', `/v1/spaces/${name}/events?limit=5`, { token: admin.token, headers: NDJSON })).text);
    expect(a.items.map((i) => i.revision)).toEqual(['1', '2', '3', '4', '5']);
    expect(a.trailer.cursor).toEqual({ next_after: '5', has_more: true, head_revision: '9' });
    expect(a.trailer.export.line_limit).toBe(5);
    const b = parseExport(
      (await call(relay, 'GET', `/v1/spaces/${name}/events?after=${a.trailer.cursor.next_after}&limit=1000`, { token: admin.token, headers: NDJSON })).text,
    );
    expect(b.items.map((i) => i.revision)).toEqual(['6', '7', '8', '9']);
    expect(b.items[0].previous_hash).toBe(a.items.at(-1).chain_hash);
    expect(b.trailer.cursor).toEqual({ next_after: '9', has_more: false, head_revision: '9' });
    expect(b.trailer.export.segment_sha256).toBe(createHash('sha256').update(b.lines.map((l) => `${l}\n`).join('')).digest('hex'));
    const empty = parseExport((await call(relay, 'GET', `/v1/spaces/${name}/events?after=9`, { token: admin.token, headers: NDJSON })).text);
    expect(empty.items).toEqual([]);
    expect(empty.trailer.export.segment_sha256).toBe(createHash('sha256').update('').digest('hex'));
  });

  it('stops before 8 MiB and says so in the cursor', async () => {
    const big = freshName('big');
    await createSpace(relay, owner.token, { name: big });
    const space = (await relay.store.spaces.byName(big))!;
    // 1,000 updates with a 4 KiB description each, written through the store (HTTP writes are rate-limited).
    for (let i = 0; i < 1000; i++) {
      await relay.store.spaces.update(space.id, { description: `${i}`.padEnd(4096, 'd'), title: `${i}`.padEnd(512, 't') }, owner.peerId, relay.clock.now());
    }
    const r = await call(relay, 'GET', `/v1/spaces/${big}/events?limit=1000`, { token: owner.token, headers: NDJSON });
    const { lines, items, trailer } = parseExport(r.text);
    const itemBytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    expect(itemBytes).toBeLessThanOrEqual(EXPORT_BYTES_MAX);
    expect(items.length).toBeGreaterThan(100);
    expect(items.length).toBeLessThan(1000);
    expect(trailer.cursor).toEqual({ next_after: String(items.length), has_more: true, head_revision: '1001' });
    expect(trailer.export.line_limit).toBe(1000);
  });
});

describe('the log under concurrent writes and across a restart', () => {
  it('stays gap-free when governance writes race, and verifies from genesis', async () => {
    const racing = freshName('race');
    await createSpace(relay, owner.token, { name: racing });
    const keys = await Promise.all(Array.from({ length: 8 }, () => mintToken(relay.url)));
    const answers = await Promise.all([
      ...keys.map((k) => call(relay, 'PUT', `/v1/spaces/${racing}/members/${k.peerId}`, { token: owner.token, body: { role: 'writer' } })),
      call(relay, 'PATCH', `/v1/spaces/${racing}`, { token: owner.token, body: { title: 'raced' } }),
      call(relay, 'PUT', `/v1/spaces/${racing}/blocks/${outsider.peerId}`, { token: owner.token }),
    ]);
    for (const a of answers) expect(a.status, a.text).toBeLessThan(300);
    const revisions = answers.map((a) => Number(a.body.revision)).sort((x, y) => x - y);
    expect(revisions).toEqual(Array.from({ length: 10 }, (_, i) => i + 2));
    const r = await call(relay, 'GET', `/v1/spaces/${racing}/events`, { token: owner.token, headers: NDJSON });
    const { items } = parseExport(r.text);
    const spaceId = (await relay.store.spaces.byName(racing))!.spaceId;
    const verdict = verifyControlChain(
      spaceId,
      items.map((i) => ({ revision: Number(i.revision), commandId: fromHex(i.command_id, 32), chainHash: fromHex(i.chain_hash, 32), canonical: fromBase64url(i.canonical) })),
    );
    expect(verdict).toMatchObject({ ok: true, count: 11 });
  });

  it('keeps SPACES, members, blocks and the chain across a restart and extends the chain after it', async () => {
    const dataDir = tempDataDir();
    try {
      let r1: RunningRelay | undefined = await startRelay({ dataDir });
      const a = await mintToken(r1.url);
      const b = await mintToken(r1.url);
      const kept = freshName('kept');
      await createSpace(r1, a.token, { name: kept, title: 'persist' });
      await call(r1, 'PUT', `/v1/spaces/${kept}/members/${b.peerId}`, { token: a.token, body: { role: 'coordinator', tags: ['t'] } });
      await call(r1, 'PUT', `/v1/spaces/${kept}/blocks/${b.peerId}`, { token: a.token });
      const before = (await call(r1, 'GET', `/v1/spaces/${kept}/events`, { token: a.token })).body;
      await r1.close();
      r1 = undefined;
      const r2 = await startRelay({ dataDir });
      try {
        const profile = await call(r2, 'GET', `/v1/spaces/${kept}`, { token: b.token });
        expect(profile.body).toMatchObject({ title: 'persist', access: { role: 'coordinator', tags: ['t'], blocked: true } });
        const after = (await call(r2, 'GET', `/v1/spaces/${kept}/events`, { token: a.token })).body;
        expect(after.items).toEqual(before.items);
        const more = await call(r2, 'PATCH', `/v1/spaces/${kept}`, { token: a.token, body: { description: 'after restart' } });
        expect(more.body.revision).toBe('4');
        const { items } = parseExport((await call(r2, 'GET', `/v1/spaces/${kept}/events`, { token: a.token, headers: NDJSON })).text);
        expect(items[3].previous_hash).toBe(before.items[2].chain_hash);
        const verdict = verifyControlChain(
          profile.body.space_id,
          items.map((i) => ({ revision: Number(i.revision), commandId: fromHex(i.command_id, 32), chainHash: fromHex(i.chain_hash, 32), canonical: fromBase64url(i.canonical) })),
        );
        expect(verdict).toMatchObject({ ok: true, count: 4 });
      } finally {
        await r2.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
