/**
 * The service reviewer over the real HTTP relay (spec/1-concepts.md Space `service_reviewer`;
 * relay/oracle/reviewer.ts): each rule declines a proposal that breaks it, at once and in the
 * chain, by a `veto` of the service's own peer id, and lets one that keeps it wait for a person;
 * the owner's versions are not reviewed; the owner can turn the reviewer off; the rules are
 * served at /reviewer-rules.md from the same list the relay applies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peerIdHexOf } from '../../../shared/identity.js';
import { fromHex } from '../../../shared/encoding.js';
import { REVIEWER_RULES } from '../../../relay/oracle/reviewer.js';
import { oracleSpace } from '../../helpers/oracle-documents.js';
import { call, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSpace, freshName } from '../../helpers/spaces.js';

let relay: RunningRelay;
let owner: MintedToken;
let reviewer: string;
/** A fresh proposer per case keeps each KEY far from its limits. */
let proposers: MintedToken[];

beforeAll(async () => {
  relay = await startRelay({ publicSpaceKeyAgeSeconds: 0 });
  owner = await mintToken(relay.url);
  proposers = await Promise.all(Array.from({ length: 16 }, () => mintToken(relay.url)));
  relay.clock.advance(25 * 60 * 60 * 1000);
  reviewer = peerIdHexOf(fromHex(relay.serviceKeys.rootKey));
});
afterAll(async () => relay.close());

function proposer(): MintedToken {
  const p = proposers.pop();
  if (p === undefined) throw new Error('out of proposers');
  return p;
}

function append(who: MintedToken, name: string, body: Record<string, unknown>): Promise<Answer> {
  relay.clock.advance(2_100);
  return call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: who.token, body });
}

/** An oracle space with the reviewer on and a first version by the owner. */
async function reviewed(text: string): Promise<{ name: string; v1: string }> {
  const name = await oracleSpace(relay, owner, { service_reviewer: true });
  const r = await append(owner, name, { kind: 'version', title: 'first', body: text });
  expect(r.status, r.text).toBe(201);
  return { name, v1: r.body.post_id };
}

/** Propose `fields` on top of `v1`; answers the proposal and the owner's new mailbox rows. */
async function propose(name: string, v1: string, fields: Record<string, unknown>): Promise<{ who: MintedToken; answer: any; ownerMail: [string, string | null][] }> {
  const who = proposer();
  const seen = await relay.store.mailbox.head(owner.peerId);
  const r = await append(who, name, { kind: 'version', supersedes: v1, ...fields });
  expect(r.status, r.text).toBe(201);
  const ownerMail = (await relay.store.mailbox.list(owner.peerId, seen, 50)).map((m) => [m.reason, m.postId] as [string, string | null]);
  return { who, answer: r.body, ownerMail };
}

/** The proposal was declined by the service's veto naming `rule`, in the chain right after it. */
async function expectDeclinedBy(name: string, v1: string, p: { who: MintedToken; answer: any; ownerMail: unknown[] }, rule: string): Promise<void> {
  expect(p.answer.oracle.state).toBe('declined');
  expect(p.answer.oracle.current).toBe(v1);
  expect(p.answer.oracle.reason).toContain(`service reviewer rule ${rule}:`);
  const v = (await relay.store.oracle.version(p.answer.post_id))!;
  expect(v.state).toBe('declined');
  expect(v.decision).toMatchObject({ kind: 'veto', by: reviewer, reason: p.answer.oracle.reason });
  const veto = (await relay.store.posts.byPostId(v.decision!.postId!))!;
  expect(veto).toMatchObject({ kind: 'veto', author: reviewer, signed: false, replyTo: p.answer.post_id, body: p.answer.oracle.reason });
  expect(veto.seq).toBe(Number(p.answer.seq) + 1);
  expect(veto.spaceRowId).toBe((await relay.store.spaces.byName(name))!.id);
  // The proposer is told by a reply; no decider is asked about a proposal already declined.
  expect((await relay.store.mailbox.list(p.who.peerId, 0, 10)).map((m) => [m.reason, m.postId])).toEqual([['reply', veto.postId]]);
  expect(p.ownerMail).toEqual([]);
}

async function expectWaiting(p: { answer: any; ownerMail: unknown[] }): Promise<void> {
  expect(p.answer.oracle).toEqual({ state: 'waiting', current: expect.any(String) });
  expect((await relay.store.oracle.version(p.answer.post_id))?.state).toBe('waiting');
  expect(p.ownerMail).toEqual([['proposal', p.answer.post_id]]);
}

const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i} of the guide`).join('\n') + '\n';

describe('each reviewer rule declines a proposal that breaks it and lets one that keeps it wait', () => {
  it('empty_text', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    await expectDeclinedBy(name, v1, await propose(name, v1, { title: 'erase' }), 'empty_text');
    await expectWaiting(await propose(name, v1, { title: 'grow', body: `${TEN_LINES}one more\n` }));
  });

  it('no_summary', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    await expectDeclinedBy(name, v1, await propose(name, v1, { body: `${TEN_LINES}one more\n` }), 'no_summary');
    await expectWaiting(await propose(name, v1, { title: 'adds a line', body: `${TEN_LINES}one more\n` }));
  });

  it('no_change', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    await expectDeclinedBy(name, v1, await propose(name, v1, { title: 'same', body: TEN_LINES }), 'no_change');
    await expectWaiting(await propose(name, v1, { title: 'one word', body: TEN_LINES.replace('line 3', 'line three') }));
  });

  it('deletes_over_half: six of ten lines gone is refused, four gone or lines moved is not', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    const lines = TEN_LINES.trimEnd().split('\n');
    const p = await propose(name, v1, { title: 'cut', body: lines.slice(0, 4).join('\n') + '\n' });
    await expectDeclinedBy(name, v1, p, 'deletes_over_half');
    expect(p.answer.oracle.reason).toMatch(/deletes \d+ of the current text's \d+ bytes/);
    await expectWaiting(await propose(name, v1, { title: 'trim', body: lines.slice(0, 6).join('\n') + '\n' }));
    await expectWaiting(await propose(name, v1, { title: 'reverse', body: [...lines].reverse().join('\n') + '\n' }));
  });

  it('breaks_grammar: a problem the proposal adds is refused, one the current text already had is not', async () => {
    const { name, v1 } = await reviewed(`${TEN_LINES}[[unclosed\n`);
    const p = await propose(name, v1, { title: 'deep', body: `${TEN_LINES}[[unclosed\n#### too deep\n` });
    await expectDeclinedBy(name, v1, p, 'breaks_grammar');
    expect(p.answer.oracle.reason).toMatch(/line 12/);
    await expectWaiting(await propose(name, v1, { title: 'heading', body: `${TEN_LINES}[[unclosed\n### Fine\n` }));
  });

  it('unknown_space: a link added to a SPACE that does not exist is refused, to one that exists is not', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    const there = freshName('lk');
    await createSpace(relay, owner.token, { name: there, title: 'there' });
    const p = await propose(name, v1, { title: 'link', body: `${TEN_LINES}see [[no-such-space-here]] and [[no-such-space-here/3]]\n` });
    await expectDeclinedBy(name, v1, p, 'unknown_space');
    expect(p.answer.oracle.reason).toContain('no-such-space-here');
    await expectWaiting(await propose(name, v1, { title: 'link', body: `${TEN_LINES}see [[${there}|there]] and [[${there}/1]]\n` }));
  });

  it('a proposal breaking several rules is declined with one line per rule', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    const p = await propose(name, v1, { body: '#### x\n' });
    expect(p.answer.oracle.reason.split('\n').map((l: string) => /rule (\w+):/.exec(l)?.[1])).toEqual(['no_summary', 'deletes_over_half', 'breaks_grammar']);
  });
});

describe('what the reviewer leaves alone', () => {
  it('a version by the owner is current at once, unreviewed', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    const r = await append(owner, name, { kind: 'version', body: 'x\n', supersedes: v1 });
    expect(r.body.oracle).toEqual({ state: 'current', current: r.body.post_id });
  });

  it('with service_reviewer turned off by the owner, a proposal that breaks a rule waits for a person', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    const off = await call(relay, 'PATCH', `/v1/spaces/${name}`, { token: owner.token, body: { service_reviewer: false } });
    expect(off.status, off.text).toBe(200);
    await expectWaiting(await propose(name, v1, { title: 'erase' }));
  });

  it('a person can still decline a proposal the reviewer let wait, and approve one', async () => {
    const { name, v1 } = await reviewed(TEN_LINES);
    const p = await propose(name, v1, { title: 'more', body: `${TEN_LINES}more\n` });
    const go = await append(owner, name, { kind: 'go', reply_to: p.answer.post_id });
    expect(go.body.oracle).toEqual({ decided: p.answer.post_id, state: 'current' });
  });
});

describe('GET /reviewer-rules.md', () => {
  it('serves every rule the relay applies, the reviewer peer id, that it never approves, with an ETag', async () => {
    const r = await call(relay, 'GET', '/reviewer-rules.md');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(r.text).toMatch(/^# Service reviewer rules/);
    for (const rule of REVIEWER_RULES) expect(r.text).toContain(`\`${rule.id}\``);
    expect(r.text).toContain(reviewer);
    expect(r.text).toMatch(/never approves/);
    const again = await call(relay, 'GET', '/reviewer-rules.md', { headers: { 'if-none-match': r.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('is listed in llms.txt and capabilities names it under the oracle module', async () => {
    const llms = await call(relay, 'GET', '/llms.txt');
    expect(llms.text).toContain('/reviewer-rules.md');
    const caps = await call(relay, 'GET', '/v1/capabilities');
    expect(caps.body.modules.oracle.reviewer_rules).toBe('/reviewer-rules.md');
    expect(caps.body.operations.find((o: any) => o.name === 'oracle.reviewer_rules')).toMatchObject({ path: '/reviewer-rules.md', auth: 'none' });
  });
});
