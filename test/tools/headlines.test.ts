/**
 * svc_read_space detail=headlines (the newer API's lightest read of a SPACE): through the relay's
 * connector at /mcp?tools=memory (the SDK's own HTTP client) and through the real svc-bridge over
 * stdio, against a real relay. The answer lists each post's title or start, flags and what
 * opening it costs, names the authors by peer id, moves the saved cursor as any read does, and
 * keeps the page as the relay served it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, startBridge, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { callConnector, connectConnector, type ConnectorClient } from '../helpers/connector.js';
import { admit, call, newSpace, shortName } from '../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let bridge: RunningBridge;
let connector: ConnectorClient;
let space: string;
const seqs: string[] = [];

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  const s = await newSpace(relay, owner, { visibility: 'public' });
  await admit(relay, s, writer, 'writer');
  space = s.name;
  const bodies = [
    { token: owner.token, body: { kind: 'obs', title: 'Pinned numpy to 1.26.4', summary: 'Both runs pass.', body: 'Long notes. '.repeat(200) } },
    { token: writer.token, body: { kind: 'result', body: 'No title here: the first eighty characters stand in for one, and nothing after them is shown at all.' } },
  ];
  for (const b of bodies) {
    const r = await call(relay, 'POST', `/v1/spaces/${space}/posts`, b);
    expect(r.status, r.text).toBe(201);
    seqs.push(r.body.seq);
  }
  bridge = await startBridge({ relayUrl: relay.url });
  connector = await connectConnector(relay.url, { token: writer.token, path: '/mcp?tools=memory' });
}, 60_000);

afterAll(async () => {
  await connector?.close();
  await bridge?.close();
  await relay?.close();
});

describe('svc_read_space detail=headlines', () => {
  it("at the relay's /mcp: headlines with their authors, each post's title or start, flags and open, the rest of the words left out", async () => {
    const r = await callConnector(connector, 'svc_read_space', { space, after: '0', detail: 'headlines' });
    const page = toolOk(r);
    expect(page.authors).toEqual({ [shortName(owner.peerId)]: owner.peerId, [shortName(writer.peerId)]: writer.peerId });
    expect(page.items.map((h: { seq: string }) => h.seq)).toEqual(seqs);
    expect(page.items[0]).toMatchObject({ title: 'Pinned numpy to 1.26.4', flags: ['summary'] });
    expect(page.items[1].start).toHaveLength(80);
    const text = textOf(r);
    expect(text).toContain(`seq ${seqs[0]} · obs · by ${owner.peerId} · summary · open ~${page.items[0].open} tokens`);
    expect(text).toMatch(/title: ⟦peer title [^⟧]+⟧Pinned numpy to 1\.26\.4/);
    expect(text).toMatch(/starts: ⟦own start [^⟧]+⟧No title here/);
    // The reader's own post names its author "you".
    expect(text).toContain(`seq ${seqs[1]} · result · by you · open ~${page.items[1].open} tokens`);
    expect(text).not.toContain('Long notes.');
    expect(text).not.toContain('nothing after them');
    // Opening the first costs what the headline said: its item at full detail.
    const full = toolOk(await callConnector(connector, 'svc_read_space', { space, after: '0', limit: 1, detail: 'full' }));
    expect(page.items[0].open).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(full.items[0]), 'utf8') / 3));
  });

  it('through svc-bridge: the saved cursor moves past the headlines read, and standing takes headlines too', async () => {
    const r = toolOk(await callTool(bridge, 'svc_read_space', { space, detail: 'headlines' }));
    expect(r.items).toHaveLength(2);
    expect(r.bridge).toMatchObject({ cursor_moved: true, saved_cursor: seqs[1] });
    expect(Object.values(r.authors)).toEqual([owner.peerId, writer.peerId]);
    const standing = await callTool(bridge, 'svc_read_space', { space, standing: true, detail: 'headlines' });
    expect(toolOk(standing).items.map((h: { seq: string }) => h.seq)).toEqual([...seqs].reverse());
    expect(textOf(standing)).toContain(`by ${writer.peerId}`);
  });

  it('a token_budget of one headline gives one, says the budget cut the page, and the next read goes on from it', async () => {
    const one = await callConnector(connector, 'svc_read_space', { space, after: '0', detail: 'headlines', token_budget: 1 });
    expect(toolOk(one)).toMatchObject({ budget_cut: true, has_more: true, next_after: seqs[0] });
    expect(toolOk(one).items).toHaveLength(1);
    expect(textOf(one)).toContain('The token budget cut this page');
  });

  it('svc_get, svc_mailbox and svc_seek do not take headlines: the schema refuses it before anything is sent', async () => {
    for (const [tool, args] of [
      ['svc_mailbox', { detail: 'headlines' }],
      ['svc_seek', { q: 'numpy', detail: 'headlines' }],
    ] as const) {
      const r = await callTool(bridge, tool, args);
      expect(r.isError, tool).toBe(true);
      expect(textOf(r), tool).toMatch(/detail/);
    }
  });
});
