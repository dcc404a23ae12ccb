/**
 * The outbox's store (bridge/outbox/store.ts) on a real SQLite file through node:sqlite, opened twice
 * as two bridge processes of one KEY open it: order per target, claims with leases, a crashed
 * bridge's lease taken over, the caps, notices handed out once, known SPACES.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBridgeError } from '../../tools/errors.js';
import { openOutbox, type OutboxStore } from '../../bridge/outbox/store.js';
import type { OutboxEntry } from '../../tools/ports.js';

const RELAY = 'http://127.0.0.1:1';
const CAPS = { maxItems: 100, maxBytes: 1 << 20 };
const LEASE = 60_000;
const opened: OutboxStore[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-outbox-'));
  dirs.push(dir);
  return join(dir, 'k.sqlite');
}

function open(path: string, owner: string): OutboxStore {
  const s = openOutbox(path, owner);
  opened.push(s);
  return s;
}

function entry(space: string, n: number, body: unknown = { n }): OutboxEntry {
  return {
    relay: RELAY,
    kind: 'post',
    target: `space:${space}`,
    label: space,
    path: `/v1/spaces/${space}/posts`,
    query: {},
    body,
    idempotencyKey: `${space}-${n}`,
    check: { spaceId: '00000000-0000-4000-8000-000000000000' },
  };
}

describe('the outbox store', () => {
  it('hands out one SPACE\'s items in order: the next only once the one before is gone', () => {
    const s = open(file(), 'one');
    s.add(entry('a', 1), CAPS, 1);
    s.add(entry('a', 2), CAPS, 2);
    const first = s.claim(RELAY, 10, LEASE)!;
    expect(first.idempotencyKey).toBe('a-1');
    // The second of the SPACE waits while the first is claimed, even for the process holding it.
    expect(s.claim(RELAY, 10, LEASE)).toBeUndefined();
    expect(s.delivered(first.id, 'sent a-1', 11)).toBe(true);
    expect(s.claim(RELAY, 12, LEASE)!.idempotencyKey).toBe('a-2');
  });

  it('lets another target go ahead while one target\'s item is claimed, oldest first', () => {
    const s = open(file(), 'one');
    s.add(entry('a', 1), CAPS, 1);
    s.add(entry('a', 2), CAPS, 2);
    s.add(entry('b', 1), CAPS, 3);
    expect(s.claim(RELAY, 10, LEASE)!.idempotencyKey).toBe('a-1');
    expect(s.claim(RELAY, 10, LEASE)!.idempotencyKey).toBe('b-1');
    expect(s.claim(RELAY, 10, LEASE)).toBeUndefined();
  });

  it('never gives an item claimed by one process to another while the lease runs, and gives it once the lease ran out', () => {
    const path = file();
    const a = open(path, 'bridge-a');
    const b = open(path, 'bridge-b');
    a.add(entry('a', 1), CAPS, 1);
    const held = a.claim(RELAY, 100, LEASE)!;
    expect(b.claim(RELAY, 100 + LEASE - 1, LEASE)).toBeUndefined();
    // The holder crashed: once its lease ran out, the other bridge takes the item over.
    const taken = b.claim(RELAY, 100 + LEASE, LEASE)!;
    expect(taken.id).toBe(held.id);
    // The first holder's late answer no longer removes what it lost.
    expect(a.delivered(held.id, undefined, 100 + LEASE + 1)).toBe(false);
    expect(b.delivered(taken.id, 'sent', 100 + LEASE + 2)).toBe(true);
    expect(a.summary(RELAY, 0).count).toBe(0);
  });

  it('gives a failed item back with its error and the relay\'s wait, and keeps it until then', () => {
    const s = open(file(), 'one');
    s.add(entry('a', 1), CAPS, 1);
    const item = s.claim(RELAY, 10, LEASE)!;
    s.failed(item.id, 'BUSY, Retry-After 30 s', 30_010, 10);
    expect(s.claim(RELAY, 30_009, LEASE)).toBeUndefined();
    const again = s.claim(RELAY, 30_010, LEASE)!;
    expect(again).toMatchObject({ id: item.id, attempts: 1, lastError: 'BUSY, Retry-After 30 s' });
    expect(s.summary(RELAY, 11)).toMatchObject({ count: 1, lastError: { text: 'BUSY, Retry-After 30 s', at: 10 }, notBefore: 30_010 });
  });

  it('refuses an item past the caps with OUTBOX_FULL and keeps nothing of it', () => {
    const s = open(file(), 'one');
    const caps = { maxItems: 2, maxBytes: 200 };
    s.add(entry('a', 1), caps, 1);
    s.add(entry('a', 2), caps, 2);
    let err: unknown;
    try {
      s.add(entry('a', 3), caps, 3);
    } catch (e) {
      err = e;
    }
    expect(isBridgeError(err, 'OUTBOX_FULL')).toBe(true);
    expect((err as Error).message).toContain('nothing was queued');
    expect(s.summary(RELAY, 4).count).toBe(2);
    // Bytes count too.
    const t = open(file(), 'two');
    expect(() => t.add(entry('b', 1, { text: 'x'.repeat(300) }), caps, 1)).toThrow(/outbox is full/);
    expect(t.summary(RELAY, 2).count).toBe(0);
  });

  it('hands each notice to one caller once, in the order noted', () => {
    const path = file();
    const a = open(path, 'bridge-a');
    const b = open(path, 'bridge-b');
    a.add(entry('a', 1), CAPS, 1);
    a.add(entry('b', 1), CAPS, 2);
    const one = a.claim(RELAY, 10, LEASE)!;
    const two = a.claim(RELAY, 10, LEASE)!;
    a.delivered(one.id, 'first', 11);
    a.refused(two.id, 'second', 12);
    expect(b.takeNotices(RELAY)).toEqual(['first', 'second']);
    expect(a.takeNotices(RELAY)).toEqual([]);
    expect(a.summary(RELAY, 13).count).toBe(0);
  });

  it('summarises per target, oldest first, and remembers a SPACE\'s id and sealing across processes', () => {
    const path = file();
    const a = open(path, 'bridge-a');
    a.add(entry('b', 1), CAPS, 5);
    a.add(entry('a', 1), CAPS, 6);
    a.add(entry('b', 2), CAPS, 7);
    expect(a.summary(RELAY, 8)).toMatchObject({
      count: 3,
      oldestAt: 5,
      targets: [
        { kind: 'post', label: 'b', count: 2 },
        { kind: 'post', label: 'a', count: 1 },
      ],
    });
    a.rememberSpace(RELAY, 'a', { spaceId: 'id-a', sealed: false }, 1);
    a.rememberSpace(RELAY, 's', { spaceId: 'id-s', sealed: true }, 1);
    const b = open(path, 'bridge-b');
    expect(b.knownSpace(RELAY, 'a')).toEqual({ spaceId: 'id-a', sealed: false });
    expect(b.knownSpace(RELAY, 's')).toEqual({ spaceId: 'id-s', sealed: true });
    expect(b.knownSpace('http://other', 'a')).toBeUndefined();
  });
});
