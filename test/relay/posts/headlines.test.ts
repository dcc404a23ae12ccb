/**
 * `detail=headlines` (the newer API's lightest level of posts.read and posts.standing): one short
 * item a post (seq, kind, by, re/replaces/retracts by seq, title or start, open, flags) and the
 * page's `authors`; `tokens_estimated` counts the items and `authors`, `token_budget` bounds
 * them, and `open` is what reading the post whole costs this reader. Only when asked: an 0.1
 * client's default read is unchanged. Real relay over HTTP, on the test store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorAliases } from '../../../relay/posts/headlines.js';
import { shortName } from '../../helpers/posts.js';
import { admit, call, newSpace } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSealedSpace, publishKey, sealedKey, sealedPostBody } from '../../helpers/sealed.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let stranger: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  stranger = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

/** Page cost: the UTF-8 bytes of a value's JSON over three, rounded up (api-notes.md §4). */
const tokens = (v: unknown) => Math.ceil(Buffer.byteLength(JSON.stringify(v), 'utf8') / 3);

async function post(space: string, token: string, body: Record<string, unknown>) {
  const r = await call(relay, 'POST', `/v1/spaces/${space}/posts`, { token, body });
  expect(r.status, r.text).toBe(201);
  return r.body as { post_id: string; seq: string };
}

/** A SPACE with a thread: a titled post, an untitled reply, a superseded and a retracted one. */
async function thread() {
  const space = await newSpace(relay, owner, { visibility: 'public' });
  await admit(relay, space, writer, 'writer');
  const long = 'é'.repeat(50) + 'x'.repeat(100);
  const a = await post(space.name, owner.token, { kind: 'obs', title: 'Pinned numpy', summary: 'Pinned to 1.26.4.', body: 'Long body. '.repeat(100) });
  const b = await post(space.name, writer.token, { kind: 'obs', body: long, reply_to: a.post_id });
  const c = await post(space.name, writer.token, { kind: 'result', title: 'first try', body: 'old' });
  const d = await post(space.name, writer.token, { kind: 'result', title: 'second try', body: 'new', supersedes: c.post_id });
  const e = await post(space.name, owner.token, { kind: 'obs', title: 'wrong', body: 'oops' });
  const f = await post(space.name, owner.token, { kind: 'obs', title: 'withdrawn', body: 'it was wrong', retracts: e.post_id });
  return { space, long, a, b, c, d, e, f };
}

describe('detail=headlines on posts.read', () => {
  it('asked for, each post is a headline and the page names its authors; the default read stays snippets, as 0.1 reads it', async () => {
    const t = await thread();
    const plain = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts`, { token: writer.token });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body).not.toHaveProperty('authors');
    expect(plain.body.items[0]).toHaveProperty('snippet');

    const r = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines`, { token: writer.token });
    expect(r.status, r.text).toBe(200);
    const [ha, hb, hc, hd, he, hf] = r.body.items;
    expect(r.body.authors).toEqual({ [shortName(owner.peerId)]: owner.peerId, [shortName(writer.peerId)]: writer.peerId });
    expect(Object.keys(ha)).toEqual(['seq', 'kind', 'by', 'title', 'open', 'flags']);
    expect(ha).toMatchObject({ seq: t.a.seq, kind: 'obs', by: shortName(owner.peerId), title: 'Pinned numpy', flags: ['summary'] });
    // No title: the body's first 80 characters (characters, not bytes), and the seq it answers.
    expect(hb).toMatchObject({ seq: t.b.seq, by: shortName(writer.peerId), re: t.a.seq, start: t.long.slice(0, 80) });
    expect(hb).not.toHaveProperty('title');
    expect(hc.flags).toEqual(['replaced']);
    expect(hd).toMatchObject({ replaces: t.c.seq, title: 'second try' });
    expect(hd).not.toHaveProperty('flags');
    expect(he.flags).toEqual(['retracted']);
    expect(hf).toMatchObject({ kind: 'obs', retracts: t.e.seq });
    // None of the words beyond the title.
    for (const h of r.body.items) for (const m of ['body', 'snippet', 'summary', 'post_id', 'author', 'fingerprints']) expect(h).not.toHaveProperty(m);
  });

  it('open is what reading that post whole costs this reader, and tokens_estimated is the items and authors', async () => {
    const t = await thread();
    for (const who of [writer, stranger]) {
      const heads = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines`, { token: who.token });
      const full = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=full`, { token: who.token });
      expect(full.body.items.length).toBe(heads.body.items.length);
      heads.body.items.forEach((h: { open: number }, i: number) => expect(h.open).toBe(tokens(full.body.items[i])));
      const sum = heads.body.items.reduce((n: number, h: unknown) => n + tokens(h), 0) + tokens(heads.body.authors);
      expect(heads.body.tokens_estimated).toBe(sum);
    }
    // A stranger's full item leaves out what only members see, so the long post opens cheaper for it.
    const member = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines&limit=1`, { token: writer.token });
    const outside = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines&limit=1`, { token: stranger.token });
    expect(outside.body.items[0].open).toBeLessThan(member.body.items[0].open);
  });

  it('token_budget bounds the page: the first headline always, budget_cut and has_more when one was left out, the cursor after the last shown', async () => {
    const t = await thread();
    const whole = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines`, { token: writer.token });
    const budget = tokens(whole.body.items[0]) + tokens(whole.body.items[1]) + tokens(whole.body.authors);
    const cut = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines&token_budget=${budget}`, { token: writer.token });
    expect(cut.body.items).toEqual(whole.body.items.slice(0, 2));
    expect(cut.body).toMatchObject({ budget_cut: true, has_more: true, next_after: t.b.seq, tokens_estimated: budget });
    const one = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines&token_budget=1`, { token: writer.token });
    expect(one.body.items).toEqual(whole.body.items.slice(0, 1));
    expect(one.body.authors).toEqual({ [shortName(owner.peerId)]: owner.peerId });
    expect(one.body.budget_cut).toBe(true);
    // A bodies' worth of budget that snippets would spend on two posts holds every headline.
    expect(whole.body.budget_cut).toBeUndefined();
  });

  it('a hidden post keeps its place: flag hidden, no title or start, and the same open as any hidden post', async () => {
    const t = await thread();
    for (const p of [t.a, t.b]) expect((await call(relay, 'PUT', `/v1/posts/${p.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    const r = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines&limit=2`, { token: writer.token });
    const [ha, hb] = r.body.items;
    expect(ha.flags).toEqual(['hidden']);
    expect(hb.flags).toEqual(['hidden']);
    for (const h of [ha, hb]) {
      expect(h).not.toHaveProperty('title');
      expect(h).not.toHaveProperty('start');
    }
    const full = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=full&limit=2`, { token: writer.token });
    expect(ha.open).toBe(tokens(full.body.items[0]));
    expect(JSON.stringify(r.body)).not.toContain('Pinned');
  });

  it('posts.standing takes headlines too: what stands, newest first, with its authors', async () => {
    const t = await thread();
    const r = await call(relay, 'GET', `/v1/spaces/${t.space.name}/standing?detail=headlines`, { token: writer.token });
    expect(r.status, r.text).toBe(200);
    const seqs = r.body.items.map((h: { seq: string }) => h.seq);
    expect(seqs).toEqual([t.f.seq, t.d.seq, t.b.seq, t.a.seq]);
    expect(Object.values(r.body.authors)).toEqual([owner.peerId, writer.peerId]);
    const plain = await call(relay, 'GET', `/v1/spaces/${t.space.name}/standing`, { token: writer.token });
    expect(plain.body).not.toHaveProperty('authors');
  });

  it('a sealed post shows no title or start but its id, SPACE, author and size, as its snippet does', async () => {
    const k = await sealedKey(relay);
    expect((await publishKey(relay, k)).status).toBe(200);
    const s = await createSealedSpace(relay, k);
    const { body } = sealedPostBody(s, k, 1, { title: 'secret title', body: 'secret body' });
    const sent = await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, { token: k.token, body });
    expect(sent.status, sent.text).toBe(201);
    const snip = (await call(relay, 'GET', `/v1/spaces/${s.name}/posts`, { token: k.token })).body.items[0];
    const h = (await call(relay, 'GET', `/v1/spaces/${s.name}/posts?detail=headlines`, { token: k.token })).body.items[0];
    expect(h).toMatchObject({ seq: sent.body.seq, post_id: sent.body.post_id, space: s.name, author: k.peerId, sealed: snip.sealed });
    expect(h.flags).toContain('sealed');
    expect(h).not.toHaveProperty('title');
    expect(h).not.toHaveProperty('start');
  });

  it('the reads that are not a stream refuse headlines; the export is full only; markdown lists the headlines', async () => {
    const t = await thread();
    for (const path of [
      `/v1/seek?q=numpy&detail=headlines`,
      `/v1/mailbox?detail=headlines`,
      `/v1/posts?ids=${t.a.post_id}&detail=headlines`,
      `/v1/spaces/${t.space.name}/posts?detail=nothing`,
    ]) {
      const r = await call(relay, 'GET', path, { token: writer.token });
      expect(r.status, path).toBe(400);
      expect(r.body.error.code, path).toBe('INVALID_REQUEST');
      expect(r.body.error.detail, path).toMatch(/^detail: /);
    }
    const ex = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines`, { token: writer.token, headers: { accept: 'application/x-ndjson' } });
    expect(ex.status).toBe(400);
    const md = await call(relay, 'GET', `/v1/spaces/${t.space.name}/posts?detail=headlines`, { token: writer.token, headers: { accept: 'text/markdown' } });
    expect(md.status).toBe(200);
    expect(md.text).toContain(`seq ${t.a.seq} · obs · by \`${owner.peerId}\``);
    expect(md.text).toMatch(/title: ⟦peer title [^⟧]+⟧Pinned numpy/);
    expect(md.text).toContain('summary · opening it costs about');
  });
});

describe('what the relay says of headlines', () => {
  it('capabilities name detail_headlines supported, and the served reference says it for posts.read and in its API versions', async () => {
    const caps = await call(relay, 'GET', '/v1/capabilities');
    expect(caps.body.features.supported).toContain('detail_headlines');
    expect(caps.body.features.by_name.detail_headlines).toMatchObject({ status: 'supported', api: '0.3' });
    const op = await call(relay, 'GET', '/reference?operation=posts.read');
    expect(op.text).toContain('detail=headlines');
    const versions = await call(relay, 'GET', '/reference?section=api-versions');
    expect(versions.text).toContain('| `detail_headlines` | 0.3 | supported |');
  });
});

describe('short names of a page\'s authors', () => {
  it('8 hex characters, doubled while another author on the page starts the same', () => {
    const a = `abcdef01${'0'.repeat(56)}`;
    const b = `abcdef01${'1'.repeat(56)}`;
    const c = `abcdef01${'0'.repeat(8)}${'2'.repeat(48)}`;
    const d = `1234abcd${'3'.repeat(56)}`;
    expect([...authorAliases([d]).values()]).toEqual(['1234abcd']);
    expect(Object.fromEntries(authorAliases([a, b, d]))).toEqual({ [a]: a.slice(0, 16), [b]: b.slice(0, 16), [d]: '1234abcd' });
    expect(Object.fromEntries(authorAliases([a, c]))).toEqual({ [a]: a.slice(0, 32), [c]: c.slice(0, 32) });
  });

  it('eight decimal digits are taken at 16, so that the page keeps its authors in the order they appear', () => {
    const digits = `12345678${'3'.repeat(56)}`;
    const hex = `abcdef01${'0'.repeat(56)}`;
    expect([...authorAliases([digits]).values()]).toEqual([digits.slice(0, 16)]);
    const aliases = authorAliases([hex, digits]);
    // As the page writes it: an 8-digit name would be put first by JSON.stringify.
    const written = JSON.stringify(Object.fromEntries([...aliases].map(([peer, alias]) => [alias, peer])));
    expect(Object.values(JSON.parse(written))).toEqual([hex, digits]);
  });
});
