/**
 * SEEK inside sealed SPACES, on the member's machine: the real relay in-process on loopback and
 * real bridge processes over stdio with the MCP SDK client, one per KEY (owner, member B,
 * outsider C), each with its own key directory.
 *
 * The relay holds only ciphertext of a sealed SPACE; a member's bridge indexes what it opens
 * (keyed hashes of terms and fingerprints, content sealed under a key derived from its seed)
 * and svc_seek merges those hits, marked local, with the relay's, ranked together.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

type Who = 'owner' | 'b' | 'c';

let relay: RunningRelay;
const stamp = Date.now().toString(36);
const sealedName = `sealed-seek-${stamp}`;
const publicName = `open-seek-${stamp}`;
const home: Record<Who, string> = { owner: tempHome(), b: tempHome(), c: tempHome() };
const id = {} as Record<Who, string>;
const bridges: Partial<Record<Who, RunningBridge>> = {};

// Words only the sealed posts hold (none of them is in any plain post).
const SECRET_TITLE = 'Quokkasaurus capacitor notes';
const SECRET_BODY = 'The zymurgist found that the flux vexillum leaks under load; rotate the bellwether gasket.';
const SECRET_FP = { scheme: 'git.commit', value: '3f9c2a7b1e8d4c6f0a5b9e2d7c1f4a8b6e3d0c9a' };
const LATER_WORD = 'xylographic';

async function tool(who: Who, t: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, t, args);
  const text = textOf(r);
  expect(r.isError, text).toBeFalsy();
  return { text, data: r.structuredContent as any };
}

/** Every byte of every file under a key directory (the caches and their write-ahead logs). */
function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

function indexFile(who: Who): string {
  const dir = join(home[who], 'cache');
  const f = readdirSync(dir).find((n) => n.endsWith('.seek.sqlite'));
  if (f === undefined) throw new Error(`no local index in ${dir}`);
  return join(dir, f);
}

/** Documents in a KEY's local index, read raw. */
function indexedDocs(who: Who): number {
  const db = new DatabaseSync(indexFile(who), { readOnly: true });
  try {
    return Number((db.prepare('SELECT count(*) AS n FROM seek_docs').get() as { n: number }).n);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  relay = await startRelay({ publicSpaceKeyAgeSeconds: 0 });
  for (const who of ['owner', 'b', 'c'] as const) {
    id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
    bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env: { SVC_KEEPER_INTERVAL: '0' } });
  }
  await tool('owner', 'svc_space_control', { action: 'create', name: sealedName, visibility: 'sealed', title: 'Sealed seek' });
  await tool('owner', 'svc_post', { space: sealedName, kind: 'obs', title: SECRET_TITLE, body: SECRET_BODY, fingerprints: [SECRET_FP] });
  const asked = await tool('b', 'svc_join', { action: 'join', name: sealedName, message: 'let me in' });
  await tool('owner', 'svc_space_control', { action: 'approve', request_id: asked.data.request_id });
  // A public SPACE with plain posts holding the same word: the relay finds these.
  await tool('owner', 'svc_space_control', { action: 'create', name: publicName, visibility: 'public', title: 'Open seek', categories: ['general'] });
  await tool('owner', 'svc_post', { space: publicName, kind: 'obs', title: 'zymurgist zymurgist zymurgist', body: 'zymurgist' });
  await tool('owner', 'svc_post', { space: publicName, kind: 'obs', title: 'Long notes', body: `zymurgist ${'and then some more plain words about other things '.repeat(6)}` });
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('SEEK inside sealed SPACES on the member\'s machine', () => {
  it('indexes a SPACE\'s history on demand with svc-bridge index, skipping what it holds already', async () => {
    const first = await runBridge(['index', sealedName], { relayUrl: relay.url, home: home.b });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Indexed 1 new post(s) of ${sealedName}; 1 sealed post(s) read, 0 could not be opened`);
    const again = await runBridge(['index', sealedName], { relayUrl: relay.url, home: home.b });
    expect(again.stdout).toContain(`Indexed 0 new post(s) of ${sealedName}`);
    expect(indexedDocs('b')).toBe(1);
    const usage = await runBridge(['index'], { relayUrl: relay.url, home: home.b });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: svc-bridge index SPACE');
    expect((await runBridge(['index', '--help'], { home: home.b })).stdout).toContain('svc-bridge index SPACE: read sealed SPACE');
  });

  it('finds a sealed post by another member\'s words, fingerprint and fingerprint prefix, marked local', async () => {
    // B reads the SPACE too: opening indexes, and a post already indexed is not added twice.
    await tool('b', 'svc_read_space', { space: sealedName, after: '0' });
    expect(indexedDocs('b')).toBe(1);
    const byWords = await tool('b', 'svc_seek', { q: 'flux vexillum', space: sealedName });
    expect(byWords.data.items).toHaveLength(1);
    expect(byWords.data.items[0]).toMatchObject({ title: SECRET_TITLE, space: sealedName, match: 'text', local: true, mine: false, author: id.owner });
    expect(byWords.text).toContain('local: opened on this machine');
    expect(byWords.data.bridge.local).toMatchObject({ hits: 1 });
    expect(byWords.data.bridge.sealed_not_searched).toEqual({ names: [], count: 0 });
    // Words of the query must stand as a phrase where the query writes them so ("flux-vexillum").
    expect((await tool('b', 'svc_seek', { q: 'vexillum-flux', space: sealedName })).data.items).toEqual([]);
    const byFp = await tool('b', 'svc_seek', { fingerprint: [`${SECRET_FP.scheme}:${SECRET_FP.value}`] });
    expect(byFp.data.items.map((i: any) => [i.title, i.match, i.local])).toEqual([[SECRET_TITLE, 'fingerprint', true]]);
    for (const prefix of [SECRET_FP.value.slice(0, 6), SECRET_FP.value.slice(0, 12), SECRET_FP.value.slice(0, 30)]) {
      const byPrefix = await tool('b', 'svc_seek', { fingerprint_prefix: `${SECRET_FP.scheme}:${prefix}` });
      expect(byPrefix.data.items.map((i: any) => i.title), prefix).toEqual([SECRET_TITLE]);
    }
    const wrongPrefix = await tool('b', 'svc_seek', { fingerprint_prefix: `${SECRET_FP.scheme}:${SECRET_FP.value.slice(0, 20)}0` });
    expect(wrongPrefix.data.items).toEqual([]);
    // The filters hold locally too: another kind, another author, oracle SPACES only.
    for (const f of [{ kind: ['result'] }, { author: id.b }, { oracle: true }]) {
      expect((await tool('b', 'svc_seek', { q: 'vexillum', ...f })).data.items.filter((i: any) => i.local), JSON.stringify(f)).toEqual([]);
    }
    // At ids detail the local hit is an id like the relay's.
    const ids = await tool('b', 'svc_seek', { q: 'vexillum', detail: 'ids' });
    expect(Object.keys(ids.data.items[0]).sort()).toEqual(['author', 'categories', 'kind', 'local', 'match', 'mine', 'post_id', 'posted_at', 'retracted_by', 'seq', 'space', 'superseded_by'].sort());
  });

  it('ranks relay hits and local hits together', async () => {
    const r = await tool('b', 'svc_seek', { q: 'zymurgist' });
    // Many occurrences in a short public post, then the sealed post, then one occurrence in a long public post.
    expect(r.data.items.map((i: any) => [i.space, i.local === true])).toEqual([
      [publicName, false],
      [sealedName, true],
      [publicName, false],
    ]);
    expect(r.text).toContain('(1 from sealed SPACES, found on this machine)');
    // A limit cuts the merged list.
    expect((await tool('b', 'svc_seek', { q: 'zymurgist', limit: 2 })).data.items.map((i: any) => i.local === true)).toEqual([false, true]);
  });

  it('never finds the sealed post for a KEY outside the SPACE', async () => {
    const r = await tool('c', 'svc_seek', { q: 'zymurgist vexillum' });
    expect(r.data.items).toEqual([]);
    const plain = await tool('c', 'svc_seek', { q: 'zymurgist' });
    expect(plain.data.items.map((i: any) => i.space)).toEqual([publicName, publicName]);
    expect(plain.data.bridge.local).toBeNull();
    const fp = await tool('c', 'svc_seek', { fingerprint: [`${SECRET_FP.scheme}:${SECRET_FP.value}`] });
    expect(fp.data.items).toEqual([]);
  });

  it('keeps local hits to a category as the relay keeps its own: the category or one under it', async () => {
    const q = { q: 'vexillum' };
    // A sealed SPACE filed in no category is in no category's SEEK.
    expect((await tool('b', 'svc_seek', { ...q, category: 'computing' })).data.items).toEqual([]);
    await tool('owner', 'svc_space_control', { action: 'update', name: sealedName, categories: ['programming-languages'] });
    for (const category of ['computing', 'programming-languages']) {
      const r = await tool('b', 'svc_seek', { ...q, category });
      expect(r.data.items.map((i: any) => [i.title, i.local, i.categories]), category).toEqual([[SECRET_TITLE, true, ['programming-languages']]]);
    }
    expect((await tool('b', 'svc_seek', { ...q, category: 'general' })).data.items).toEqual([]);
  });

  it('takes a post the SPACE hid out of the index at the next read that shows it hidden', async () => {
    const hideMe = await tool('owner', 'svc_post', { space: sealedName, kind: 'obs', title: 'Draft', body: 'gryphonish words to hide' });
    await tool('b', 'svc_read_space', { space: sealedName, after: '0' });
    expect((await tool('b', 'svc_seek', { q: 'gryphonish' })).data.items.map((i: any) => i.local)).toEqual([true]);
    await tool('owner', 'svc_space_control', { action: 'hide', post_id: hideMe.data.post_id });
    await tool('b', 'svc_read_space', { space: sealedName, after: '0' });
    expect((await tool('b', 'svc_seek', { q: 'gryphonish' })).data.items).toEqual([]);
    expect(indexedDocs('b')).toBe(1);
  });

  it('keeps no word of a sealed post and no fingerprint in the clear in any cache file', async () => {
    await tool('owner', 'svc_read_space', { space: sealedName, after: '0' });
    expect(indexedDocs('owner')).toBe(1);
    const secrets = [
      ...`${SECRET_TITLE} ${SECRET_BODY}`.split(/[^A-Za-z0-9]+/).filter((w) => w.length >= 4),
      SECRET_FP.value,
      SECRET_FP.value.slice(0, 8),
    ];
    for (const who of ['owner', 'b'] as const) {
      const files = filesUnder(home[who]);
      expect(files.some((f) => f.path.endsWith('.seek.sqlite'))).toBe(true);
      for (const f of files) {
        const text = f.bytes.toString('latin1').toLowerCase();
        for (const s of secrets) expect(text.includes(s.toLowerCase()), `${s} in ${f.path}`).toBe(false);
      }
    }
  });

  it('a removed member keeps what it could read and indexes nothing newer', async () => {
    await tool('owner', 'svc_space_control', { action: 'revoke', name: sealedName, peer_id: id.b });
    await tool('owner', 'svc_post', { space: sealedName, kind: 'obs', title: 'After the removal', body: `A ${LATER_WORD} entry B never sees.` });
    const refused = await callTool(bridges.b!, 'svc_read_space', { space: sealedName, after: '0' });
    expect(refused.isError).toBe(true);
    const cli = await runBridge(['index', sealedName], { relayUrl: relay.url, home: home.b });
    expect(cli.code).not.toBe(0);
    expect(indexedDocs('b')).toBe(1);
    expect((await tool('b', 'svc_seek', { q: LATER_WORD })).data.items).toEqual([]);
    // The owner, its author, finds the newer post at once: its own sealed posts are indexed as it posts them.
    const own = await tool('owner', 'svc_seek', { q: LATER_WORD });
    expect(own.data.items.map((i: any) => [i.title, i.local, i.mine])).toEqual([['After the removal', true, true]]);
    // What B opened while a member stays findable, said to be from before.
    const kept = await tool('b', 'svc_seek', { q: 'vexillum' });
    expect(kept.data.items.map((i: any) => i.title)).toEqual([SECRET_TITLE]);
    expect(kept.text).toContain(`this KEY is no longer a member of`);
    // Scoped to the SPACE the relay now refuses B: the local index still answers, saying so.
    const scoped = await tool('b', 'svc_seek', { q: 'vexillum', space: sealedName });
    expect(scoped.data.items.map((i: any) => i.title)).toEqual([SECRET_TITLE]);
    expect(scoped.text).toContain('The relay refused this SPACE (READ_DENIED)');
    expect(scoped.data.bridge.local.relay_refused).toBe('READ_DENIED');
  });
});
