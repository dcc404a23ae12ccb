/**
 * Trust markers over every tool's output (spec/1-concepts.md item 7; shared/peer-markers.ts):
 * two real bridges, each with its own KEY, against a real relay, drive every tool, and every
 * fenced field of every answer names the KEY that wrote it: `⟦own …⟧` around the reading KEY's
 * own words (its SPACE's title and description, its posts, messages, tasks, labels and tags),
 * `⟦peer …⟧` around the other KEY's; text the bridge writes itself (notes such as "none (the
 * first version)", counts, hints) is never fenced at all.
 *
 * Each KEY writes only words carrying its own mark (`alpha` for Ann, `bravo` for Bob), so a
 * fence is right when what it holds carries the mark of the KEY it names, and a fence holding
 * neither mark is text neither KEY wrote.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../tools/toolsets.js';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

type Who = 'ann' | 'bob';
const MARK: Record<Who, string> = { ann: 'alpha', bob: 'bravo' };
const other = (who: Who): Who => (who === 'ann' ? 'bob' : 'ann');

let relay: RunningRelay;
const home: Record<Who, string> = { ann: tempHome(), bob: tempHome() };
const id = {} as Record<Who, string>;
const bridges = {} as Record<Who, RunningBridge>;

/** Every answer, by whom and to which call. */
const answers: { who: Who; tool: string; args: Record<string, unknown>; text: string }[] = [];

async function run(who: Who, tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const r = await callTool(bridges[who], tool, args);
  answers.push({ who, tool, args, text: textOf(r) });
  return r;
}

async function ok(who: Who, tool: string, args: Record<string, unknown>): Promise<any> {
  const r = await run(who, tool, args);
  expect(r.isError, `${who} ${tool} ${JSON.stringify(args)}: ${textOf(r)}`).toBeFalsy();
  return r.structuredContent;
}

/** The fences of an answer: the writer it names, its field and what it holds. */
function fences(text: string): { writer: 'peer' | 'own'; field: string; inside: string }[] {
  const out = [];
  for (const m of text.matchAll(/⟦(peer|own) (\S+) ([0-9a-f]{8})⟧([\s\S]*?)⟦\/(peer|own) \3⟧/g)) {
    // The legend names the markers with `<field>`; it fences nothing.
    if (m[2] === '<field>') continue;
    out.push({ writer: m[1] as 'peer' | 'own', field: m[2]!, inside: m[4]! });
  }
  return out;
}

/** What is wrong with the fences of one answer, read by `who`. */
function misnamed(who: Who, text: string): string[] {
  return fences(text).flatMap((f) => {
    const named = f.writer === 'own' ? who : other(who);
    if (f.inside.includes(MARK[named])) return [];
    const wrote = f.inside.includes(MARK[other(named)]) ? other(named) : 'neither KEY';
    return [`${f.writer} ${f.field} holds words ${wrote === 'neither KEY' ? 'neither KEY wrote' : `of ${wrote}`}: ${JSON.stringify(f.inside.slice(0, 80))}`];
  });
}

beforeAll(async () => {
  // No key age: the KEYS made for this test own a public oracle space at once.
  relay = await startRelay({ publicSpaceKeyAgeSeconds: 0 });
  await Promise.all(
    (['ann', 'bob'] as const).map(async (who) => {
      id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
      bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env: { SVC_KEEPER_INTERVAL: '0' } });
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('every fenced field names the KEY that wrote it', () => {
  it('across every tool, read by the KEY that wrote it and by the other', async () => {
    const space = freshName('trust');
    const oracle = freshName('trust-doc');

    await ok('ann', 'svc_whoami', {});
    await ok('bob', 'svc_whoami', {});
    await ok('ann', 'svc_guide', {});

    // Ann's SPACE, Bob admitted through her link.
    await ok('ann', 'svc_space_control', { action: 'create', name: space, title: 'alpha title', description: 'alpha description', task_confirmations: 1 });
    const invite = await ok('ann', 'svc_space_control', { action: 'invite', name: space, role: 'writer', tags: ['alphatag'], label: 'alpha label' });
    await ok('bob', 'svc_join', { action: 'look', link: invite.link });
    await ok('bob', 'svc_join', { action: 'join', link: invite.link });
    await ok('ann', 'svc_space_control', { action: 'set_member', name: space, peer_id: id.bob, role: 'writer', tags: ['alphatag2'] });

    for (const who of ['ann', 'bob'] as const) {
      await ok(who, 'svc_spaces', { action: 'get', name: space });
      await ok(who, 'svc_spaces', { action: 'list' });
      await ok(who, 'svc_spaces', { action: 'members', name: space });
    }
    await ok('ann', 'svc_spaces', { action: 'invites', name: space });
    await ok('ann', 'svc_spaces', { action: 'events', name: space });
    await ok('ann', 'svc_spaces', { action: 'peer', peer_id: id.bob });

    // Posts, each to the other's mailbox.
    const annPost = await ok('ann', 'svc_post', {
      space,
      kind: 'obs',
      title: 'alpha post',
      body: 'alpha body',
      to: [id.bob],
      data: { x_note: 'alpha data' },
      fingerprints: [{ scheme: 'trust.alpha', value: 'alpha-1' }],
    });
    const bobPost = await ok('bob', 'svc_post', { space, kind: 'result', title: 'bravo post', body: 'bravo body', reply_to: annPost.post_id, to: [id.ann] });
    for (const who of ['ann', 'bob'] as const) {
      await ok(who, 'svc_read_space', { space, after: '0', detail: 'full' });
      await ok(who, 'svc_read_space', { space, standing: true });
      await ok(who, 'svc_get', { post_ids: [annPost.post_id, bobPost.post_id] });
      await ok(who, 'svc_get', { post_id: who === 'ann' ? bobPost.post_id : annPost.post_id });
      await ok(who, 'svc_seek', { q: 'post', space });
      await ok(who, 'svc_mailbox', {});
    }

    // Direct messages both ways.
    const started = await ok('ann', 'svc_message', { action: 'start', to: [id.bob], body: 'alpha hello' });
    const conversation = started.conversation?.conversation_id ?? started.conversation_id;
    await ok('bob', 'svc_messages', { action: 'list' });
    await ok('bob', 'svc_messages', { action: 'read', conversation_id: conversation });
    await ok('bob', 'svc_message', { action: 'send', conversation_id: conversation, body: 'bravo reply' });
    await ok('ann', 'svc_messages', { action: 'read', conversation_id: conversation, after: '0' });
    await ok('ann', 'svc_messages', { action: 'get', conversation_id: conversation });

    // A task Ann adds, Bob does and Ann checks.
    const added = await ok('ann', 'svc_task', { action: 'add', space, title: 'alpha task', body: 'alpha task body' });
    const number = added.task?.number ?? added.number;
    await ok('bob', 'svc_task', { action: 'next', space });
    const result = await ok('bob', 'svc_post', { space, kind: 'result', title: 'bravo result', body: 'bravo done', fingerprints: [{ scheme: 'task.reference', value: `${space}/${number}` }] });
    await ok('bob', 'svc_task', { action: 'done', space, number, post_id: result.post_id });
    await ok('ann', 'svc_task', { action: 'next', space, verify: true });
    await ok('ann', 'svc_task', { action: 'reject', space, number, reason: 'alpha reason' });
    for (const who of ['ann', 'bob'] as const) await ok(who, 'svc_task', { action: 'list', space, detail: 'full' });

    // Ann's oracle space: her first version, Bob's proposal, her decision.
    await ok('ann', 'svc_space_control', { action: 'create', name: oracle, title: 'alpha doc space', visibility: 'public', oracle: true, categories: ['general'] });
    await ok('ann', 'svc_space_control', { action: 'set_member', name: oracle, peer_id: id.bob, role: 'writer' });
    const document = ['# alpha intro', '', 'alpha words one.', 'alpha words two.', 'alpha words three.', '', '# alpha more', '', 'alpha more.', ''].join('\n');
    await ok('ann', 'svc_oracle', { action: 'propose', space: oracle, text: document, summary: 'alpha first' });
    const proposal = await ok('bob', 'svc_oracle', { action: 'propose', space: oracle, section: 'alpha more', text: 'bravo more.\n', summary: 'bravo change', wait: 0 });
    await ok('ann', 'svc_oracle', { action: 'decline', proposal: proposal.post_id, reason: 'alpha no' });
    for (const who of ['ann', 'bob'] as const) {
      await ok(who, 'svc_oracle', { action: 'read', space: oracle });
      await ok(who, 'svc_oracle', { action: 'history', space: oracle });
    }
    await ok('bob', 'svc_oracle', { action: 'watch', space: oracle });
    await ok('bob', 'svc_oracle', { action: 'watching' });

    // Governance on Bob's post and role.
    await ok('ann', 'svc_space_control', { action: 'hide', post_id: bobPost.post_id });
    await ok('ann', 'svc_space_control', { action: 'hand_over', name: space, peer_id: id.bob, label: 'alpha offer' });
    await ok('bob', 'svc_mailbox', {});
    await ok('ann', 'svc_spaces', { action: 'events', name: space });

    // Every tool was driven, and every fence of every answer names its writer.
    expect([...new Set(answers.map((a) => a.tool))].sort()).toEqual([...TOOL_NAMES].sort());
    const wrong = answers.flatMap((a) => misnamed(a.who, a.text).map((m) => `${a.who} ${a.tool} ${JSON.stringify(a.args).slice(0, 60)}: ${m}`));
    expect(wrong).toEqual([]);
    // Both kinds of fence were seen, so the check checked something.
    const all = answers.flatMap((a) => fences(a.text));
    expect(all.some((f) => f.writer === 'own')).toBe(true);
    expect(all.some((f) => f.writer === 'peer')).toBe(true);
  }, 240_000);

  it('the check finds a misnamed fence, and a fence around words neither KEY wrote', () => {
    expect(misnamed('ann', 'x ⟦peer title 0a1b2c3d⟧alpha title⟦/peer 0a1b2c3d⟧')).toHaveLength(1);
    expect(misnamed('ann', 'x ⟦peer version 0a1b2c3d⟧none (the first version)⟦/peer 0a1b2c3d⟧')).toEqual([
      'peer version holds words neither KEY wrote: "none (the first version)"',
    ]);
    expect(misnamed('bob', 'x ⟦peer title 0a1b2c3d⟧alpha title⟦/peer 0a1b2c3d⟧ ⟦own body 0a1b2c3d⟧\nbravo\n⟦/own 0a1b2c3d⟧')).toEqual([]);
  });
});
