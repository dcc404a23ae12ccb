/**
 * The flows a first-time agent goes through, as three agents would do them: a real relay on
 * loopback and three real svc-bridge processes (ann, ben, cat), each with its own key directory,
 * driven over stdio by the MCP SDK's client. Each flow starts from the start of a run and uses
 * only what the tools take and what their answers say: an id one step needs is read from an
 * earlier answer (its structured part, the JSON the text renders), never from the relay's store.
 *
 * The flows are steps (who calls which tool with which arguments, and what to keep from the
 * answer), so the test (test/e2e/agent-flows.test.ts) and the bench (`npm run bench -- tools`) run
 * the same ones: `runAgentFlows` runs every flow and reports, per flow, the tool calls it took
 * and every refusal met. A refusal is an answer with `isError`, or a text carrying a refusal's
 * opening (`CODE.` of the error catalogue or of the bridge's own codes).
 *
 * The relay is started as `npm start` starts one on a person's machine: on loopback, with no
 * public URL, so with no key age (relay/config.ts `defaultPublicSpaceKeyAge`). Rate limits stay
 * on; every write the flows make fits in them.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { defaultPublicSpaceKeyAge } from '../../relay/config.js';
import { CATALOGUE } from '../../shared/errors.js';
import { toHex } from '../../shared/encoding.js';
import { callTool, startBridge, tempHome, textOf, type RunningBridge } from './bridge.js';
import { startRelay, tempDataDir, type RunningRelay } from './relay.js';
import { freshName } from './spaces.js';

export const AGENTS = ['ann', 'ben', 'cat'] as const;
export type Agent = (typeof AGENTS)[number];

/** What a flow keeps between its steps: names it chose and ids answers gave. */
export type FlowState = Record<string, any>;

export interface FlowStep {
  readonly who: Agent;
  readonly tool: string;
  /** The arguments, from what earlier answers gave (`s`). */
  readonly args: (s: FlowState) => Record<string, unknown>;
  /** What to keep from the answer's structured part and text; throws when the answer lacks what the flow needs. */
  readonly keep?: (answer: Record<string, any>, s: FlowState, text: string) => void;
}

/** A step outside the tools: the relay stopped or started again. */
export interface WorldStep {
  readonly world: 'stop relay' | 'start relay';
}

export interface AgentFlow {
  readonly name: string;
  /** What the flow shows, in a line. */
  readonly what: string;
  /** Names and values the flow starts from. */
  readonly start: () => FlowState;
  readonly steps: readonly (FlowStep | WorldStep)[];
}

/** A refusal one call met. */
export interface MetRefusal {
  readonly step: number;
  readonly who: Agent;
  readonly tool: string;
  readonly code: string | undefined;
  readonly text: string;
}

export interface FlowReport {
  readonly name: string;
  /** Tool calls made, all agents together. */
  readonly calls: number;
  /** Tool calls per tool. */
  readonly perTool: Readonly<Record<string, number>>;
  readonly refusals: readonly MetRefusal[];
  /** A step that could not go on (a refusal, or an answer without what the next step needs). */
  readonly stoppedAt?: { readonly step: number; readonly why: string } | undefined;
}

/** Every code a refusal may carry: the catalogue's and the bridge's own (tools/errors.ts). */
const BRIDGE_CODES = [
  'CONFIG',
  'INSECURE_API',
  'KEY_FILE',
  'KEY_NOT_FOUND',
  'KEY_AMBIGUOUS',
  'KEY_EXISTS',
  'KEYCHAIN',
  'AUDIENCE_MISMATCH',
  'TRANSPORT',
  'BAD_RESPONSE',
  'OUTBOX_FULL',
  'SEALED_ROLLBACK',
  'SEALED_LIST_FORGED',
  'SEALED_OWNER_UNTRUSTED',
  'SEALED_NO_KEY',
  'SEALED_DOWNGRADE',
  'SEALED_PAIR_CHANGED',
  'ENCRYPTION_KEY_CONFLICT',
  'TASK_WORDS_NOT_SEALED',
  'DOCUMENT_CHANGED',
  'BRIDGE_FAULT',
];
const REFUSAL_OPENING = new RegExp(`(^|\\n|: )(${[...Object.keys(CATALOGUE), ...BRIDGE_CODES].join('|')})\\. `);

/** The refusal code an answer carries, or undefined when it carries none. */
export function refusalIn(r: CallToolResult): { code: string | undefined } | undefined {
  const error = (r.structuredContent as { error?: { code?: unknown } } | undefined)?.error;
  if (r.isError === true || error !== undefined) return { code: typeof error?.code === 'string' ? error.code : undefined };
  const m = REFUSAL_OPENING.exec(textOf(r));
  return m === null ? undefined : { code: m[2] };
}

const hex = (bytes: number) => toHex(randomBytes(bytes));

function need<T>(v: T | undefined | null, what: string): T {
  if (v === undefined || v === null) throw new Error(`the answer did not give ${what}`);
  return v;
}

const step = (who: Agent, tool: string, args: FlowStep['args'], keep?: FlowStep['keep']): FlowStep => ({ who, tool, args, ...(keep ? { keep } : {}) });

/** The flows README's agent sections document, each from the start of a run. */
export const AGENT_FLOWS: readonly AgentFlow[] = [
  {
    name: 'posts',
    what: 'posts with fingerprints and run ids, read back',
    start: () => ({ space: freshName('work'), file: hex(32), commit: hex(20) }),
    steps: [
      step('ann', 'svc_whoami', () => ({}), (a, s) => void (s.runId = need(a.bridge?.run_id, 'the run id'))),
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Parser work', description: 'Findings on the parser, one per post.' })),
      step(
        'ann',
        'svc_post',
        (s) => ({
          space: s.space,
          kind: 'result',
          title: 'CRLF handled',
          body: 'The parser normalises line ends now.',
          fingerprints: [
            { scheme: 'sha256.file', value: s.file },
            { scheme: 'git.commit', value: s.commit },
          ],
        }),
        (a, s) => {
          if (a.bridge?.run_id !== s.runId) throw new Error('the post does not carry the run id svc_whoami gave');
        },
      ),
      step('ann', 'svc_post', (s) => ({ space: s.space, kind: 'fail', body: 'Tabs in keys still break.', run_id: s.runId, fingerprints: [{ scheme: 'git.commit', value: s.commit }] })),
      step('ann', 'svc_read_space', (s) => ({ space: s.space }), (a) => void need(a.items?.length === 2 ? true : undefined, 'both posts')),
    ],
  },
  {
    name: 'dossier',
    what: 'a dossier with the cursors, found again by the next run',
    start: () => ({ space: freshName('doss') }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Long task', description: 'Work over several runs.' })),
      step('ann', 'svc_post', (s) => ({ space: s.space, kind: 'obs', body: 'Step one done.' })),
      step('ann', 'svc_read_space', (s) => ({ space: s.space }), (a, s) => void (s.after = need(a.next_after, 'next_after'))),
      step('ann', 'svc_post', (s) => ({
        space: s.space,
        kind: 'dossier',
        title: 'Long task, run 1',
        body: 'Did step one. Next: step two.',
        data: { dossier: { cursors: { [`space:${s.space}`]: s.after } } },
      }), (a, s) => void (s.dossier = need(a.post_id, 'the dossier post_id'))),
      // The next run reads its own newest dossier first, as the start_run prompt says.
      step('ann', 'svc_whoami', () => ({}), (a, s) => void (s.me = need(a.peer_id, 'the peer id'))),
      step('ann', 'svc_read_space', (s) => ({ space: s.space, standing: true, kind: ['dossier'], author: s.me, limit: 1, detail: 'full' }), (a, s) => {
        if (a.items?.[0]?.post_id !== s.dossier) throw new Error('the newest dossier is not the one posted');
      }),
    ],
  },
  {
    name: 'invite',
    what: 'an invite link made by one agent, used by another, who posts',
    start: () => ({ space: freshName('inv') }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Shared notes' })),
      step('ann', 'svc_space_control', (s) => ({ action: 'invite', name: s.space, role: 'writer', max_uses: 1 }), (a, s) => void (s.link = need(a.link, 'the link'))),
      step('ben', 'svc_join', (s) => ({ action: 'look', link: s.link })),
      step('ben', 'svc_join', (s) => ({ action: 'join', link: s.link })),
      step('ben', 'svc_post', (s) => ({ space: s.space, kind: 'obs', body: 'Ben here: joined by link.' })),
      step('ann', 'svc_read_space', (s) => ({ space: s.space }), (a) => void need(a.items?.length === 1 ? true : undefined, "ben's post")),
    ],
  },
  {
    name: 'seek',
    what: 'SEEK by text, by fingerprint and by fingerprint prefix, from another KEY',
    start: () => ({ space: freshName('pub'), file: hex(32), word: `zebracorn${hex(3)}` }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Build cache findings', description: 'What we learn about the build cache.', visibility: 'public' })),
      step('ann', 'svc_post', (s) => ({ space: s.space, kind: 'result', title: `The ${s.word} cache key`, body: 'Hash the lock file, not the tree.', fingerprints: [{ scheme: 'sha256.file', value: s.file }] }), (a, s) => void (s.post = a.post_id)),
      step('cat', 'svc_seek', (s) => ({ q: s.word }), (a, s) => void need(a.items?.some((i: any) => i.post_id === s.post) ? true : undefined, 'the post by text')),
      step('cat', 'svc_seek', (s) => ({ fingerprint: [`sha256.file:${s.file}`] }), (a, s) => void need(a.items?.some((i: any) => i.post_id === s.post) ? true : undefined, 'the post by fingerprint')),
      step('cat', 'svc_seek', (s) => ({ fingerprint_prefix: `sha256.file:${s.file.slice(0, 12)}` }), (a, s) => void need(a.items?.some((i: any) => i.post_id === s.post) ? true : undefined, 'the post by prefix')),
    ],
  },
  {
    name: 'messages',
    what: 'a direct message answered; a message request from a stranger, declined, and a block',
    start: () => ({}),
    steps: [
      step('ben', 'svc_whoami', () => ({}), (a, s) => void (s.ben = need(a.peer_id, "ben's peer id"))),
      step('ann', 'svc_message', (s) => ({ action: 'start', to: [s.ben], body: 'Can you review the parser change?' }), (a, s) => void (s.conversation = need(a.conversation?.conversation_id, 'the conversation id'))),
      step('ben', 'svc_messages', () => ({ action: 'list' }), (a, s) => {
        if (!a.items?.some((c: any) => c.conversation_id === s.conversation)) throw new Error('the conversation is not listed');
      }),
      step('ben', 'svc_messages', (s) => ({ action: 'read', conversation_id: s.conversation })),
      step('ben', 'svc_message', (s) => ({ action: 'send', conversation_id: s.conversation, body: 'Yes, send it over.' })),
      step('ann', 'svc_messages', (s) => ({ action: 'read', conversation_id: s.conversation }), (_a, _s, text) => void need(text.includes('send it over') ? true : undefined, "ben's answer")),
      // Cat shares no SPACE with ben: its first message is a request ben answers.
      step('cat', 'svc_message', (s) => ({ action: 'start', to: [s.ben], body: 'Buy cheap tokens now!' }), (a, s) => void (s.request = need(a.conversation?.conversation_id, 'the conversation id'))),
      step('ben', 'svc_messages', () => ({ action: 'list', state: 'requested' }), (a, s) => {
        const r = a.items?.find((c: any) => c.conversation_id === s.request);
        if (r === undefined) throw new Error('the request is not listed');
        s.cat = need(r.started_by ?? r.members?.find((m: any) => (m.peer ?? m.peer_id) !== s.ben)?.peer ?? r.from, "the requester's peer id");
      }),
      step('ben', 'svc_message', (s) => ({ action: 'decline', conversation_id: s.request })),
      step('ben', 'svc_message', (s) => ({ action: 'block', peer_id: s.cat })),
      step('ben', 'svc_messages', () => ({ action: 'blocks' }), (a, s) => {
        if (!a.items?.some((b: any) => b.peer === s.cat || b.peer_id === s.cat)) throw new Error('the block is not listed');
      }),
    ],
  },
  {
    name: 'tasks',
    what: 'tasks with a dependency, taken, done with a result post, accepted',
    start: () => ({ space: freshName('todo') }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Port the parser' })),
      step('ann', 'svc_task', (s) => ({ action: 'add', space: s.space, title: 'Port parse.c', body: 'Port it to TypeScript; the tests must pass.' })),
      step('ann', 'svc_task', (s) => ({ action: 'add', space: s.space, title: 'Release it', after: [1] })),
      step('ann', 'svc_space_control', (s) => ({ action: 'invite', name: s.space, role: 'writer' }), (a, s) => void (s.link = need(a.link, 'the link'))),
      step('ben', 'svc_join', (s) => ({ action: 'join', link: s.link })),
      step('ben', 'svc_task', (s) => ({ action: 'next', space: s.space }), (a) => void need(a.task?.number === 1 ? true : undefined, 'task 1')),
      step('ben', 'svc_post', (s) => ({ space: s.space, kind: 'result', title: 'parse.c ported', body: 'All 212 tests pass.' }), (a, s) => void (s.result = a.post_id)),
      step('ben', 'svc_task', (s) => ({ action: 'done', space: s.space, number: 1, post_id: s.result }), (a) => void need(a.task?.state === 'accepted' ? true : undefined, 'task 1 accepted')),
      step('ben', 'svc_task', (s) => ({ action: 'next', space: s.space }), (a) => void need(a.task?.number === 2 ? true : undefined, 'task 2, its after task accepted')),
      step('ben', 'svc_post', (s) => ({ space: s.space, kind: 'result', title: 'Released', body: 'Version 1.0.0 is out.' }), (a, s) => void (s.result = a.post_id)),
      step('ben', 'svc_task', (s) => ({ action: 'done', space: s.space, number: 2, post_id: s.result })),
      step('ann', 'svc_task', (s) => ({ action: 'list', space: s.space }), (a) => void need(a.items?.every((t: any) => t.state === 'accepted') ? true : undefined, 'both tasks accepted')),
    ],
  },
  {
    name: 'oracle',
    what: 'an oracle space made in one call, its first version, a proposal approved, a watcher told',
    start: () => ({ space: freshName('guide') }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Rust error handling guide', description: 'How our crates report errors.', oracle: true })),
      step('ann', 'svc_oracle', (s) => ({ action: 'propose', space: s.space, text: '# Errors\n\nUse thiserror in libraries.\n\n# Panics\n\nNever in libraries.\n', summary: 'First version' })),
      step('cat', 'svc_oracle', (s) => ({ action: 'watch', space: s.space })),
      step('ben', 'svc_oracle', (s) => ({ action: 'read', space: s.space })),
      step('ben', 'svc_oracle', (s) => ({ action: 'propose', space: s.space, section: 'Errors', text: '# Errors\n\nUse thiserror in libraries and anyhow in binaries.\n', summary: 'Binaries use anyhow', wait: 0 }), (a, s) => void (s.proposal = need(a.post_id, 'the proposal post_id'))),
      step('ann', 'svc_mailbox', () => ({}), (a, s) => void need(a.items?.some((i: any) => i.post_id === s.proposal || i.post?.post_id === s.proposal) ? true : undefined, 'the proposal in the mailbox')),
      step('ann', 'svc_oracle', (s) => ({ action: 'approve', proposal: s.proposal })),
      step('cat', 'svc_mailbox', () => ({}), (a) => void need(a.items?.length >= 1 ? true : undefined, 'the change notice')),
      step('cat', 'svc_oracle', (s) => ({ action: 'read', space: s.space }), (_a, _s, text) => void need(text.includes('anyhow in binaries') ? true : undefined, 'the approved words')),
    ],
  },
  {
    name: 'sealed',
    what: 'a sealed SPACE from a join request to sealed posts both members read',
    start: () => ({ space: freshName('vault') }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, visibility: 'sealed', title: 'Incident notes' })),
      step('ben', 'svc_spaces', (s) => ({ action: 'get', name: s.space })),
      step('ben', 'svc_join', (s) => ({ action: 'join', name: s.space, message: 'Ben, on call this week.' }), (a, s) => void (s.request = need(a.request_id, 'the request_id'))),
      step('ann', 'svc_mailbox', () => ({}), (a, s) => void need(a.items?.some((i: any) => i.request_id === s.request || i.request?.request_id === s.request) ? true : undefined, 'the request in the mailbox')),
      step('ann', 'svc_space_control', (s) => ({ action: 'approve', request_id: s.request })),
      step('ben', 'svc_post', (s) => ({ space: s.space, kind: 'obs', body: 'The leak came from the staging key.' })),
      step('ann', 'svc_post', (s) => ({ space: s.space, kind: 'obs', body: 'Rotated it.' })),
      step('ann', 'svc_read_space', (s) => ({ space: s.space }), (_a, _s, text) => void need(text.includes('staging key') ? true : undefined, "ben's sealed words opened")),
      step('ben', 'svc_read_space', (s) => ({ space: s.space }), (_a, _s, text) => void need(text.includes('Rotated it.') ? true : undefined, "ann's sealed words opened")),
    ],
  },
  {
    name: 'offline',
    what: 'a post written while the relay is stopped, queued, and sent once it is back',
    start: () => ({ space: freshName('away') }),
    steps: [
      step('ann', 'svc_space_control', (s) => ({ action: 'create', name: s.space, title: 'Field notes' })),
      { world: 'stop relay' },
      step('ann', 'svc_post', (s) => ({ space: s.space, kind: 'obs', body: 'Written with the relay away.' }), (a) => void need(a.queued === true ? true : undefined, 'the post queued')),
      { world: 'start relay' },
      step('ann', 'svc_whoami', () => ({}), (a) => void need((a.outbox_notices ?? []).some((n: string) => /delivered/.test(n)) ? true : undefined, 'the delivery notice')),
      step('ann', 'svc_read_space', (s) => ({ space: s.space }), (_a, _s, text) => void need(text.includes('Written with the relay away.') ? true : undefined, 'the queued post')),
    ],
  },
];

/** The relay and the three agents the flows run with. */
export interface FlowWorld {
  readonly bridges: Readonly<Record<Agent, RunningBridge>>;
  relay(): RunningRelay;
  stopRelay(): Promise<void>;
  startRelay(): Promise<void>;
  close(): Promise<void>;
}

/** A relay as `npm start` starts one (loopback, no public URL, so no key age) and one bridge per agent. */
export async function startFlowWorld(): Promise<FlowWorld> {
  const dataDir = tempDataDir('svc-flows-relay-');
  const keyAge = defaultPublicSpaceKeyAge({ host: '127.0.0.1', publicUrl: undefined });
  let relay: RunningRelay | undefined = await startRelay({ dataDir, publicSpaceKeyAgeSeconds: keyAge });
  const port = Number(new URL(relay.url).port);
  const homes = Object.fromEntries(AGENTS.map((w) => [w, tempHome(`svc-flows-${w}-`)])) as Record<Agent, string>;
  const list = await Promise.all(AGENTS.map((w) => startBridge({ relayUrl: relay!.url, home: homes[w] })));
  const bridges = Object.fromEntries(AGENTS.map((w, i) => [w, list[i]!])) as Record<Agent, RunningBridge>;
  return {
    bridges,
    relay: () => need(relay, 'a running relay'),
    async stopRelay() {
      await relay?.close();
      relay = undefined;
    },
    async startRelay() {
      relay ??= await startRelay({ dataDir, port, publicSpaceKeyAgeSeconds: keyAge });
    },
    async close() {
      await Promise.all(list.map((b) => b.close()));
      await relay?.close();
      rmSync(dataDir, { recursive: true, force: true });
      for (const home of Object.values(homes)) rmSync(dirname(home), { recursive: true, force: true });
    },
  };
}

/** Run one flow; it stops at the first refusal or missing answer, which the report names. */
export async function runFlow(world: FlowWorld, flow: AgentFlow, transcript?: (line: string) => void): Promise<FlowReport> {
  const s = flow.start();
  const perTool: Record<string, number> = {};
  const refusals: MetRefusal[] = [];
  let calls = 0;
  for (const [i, st] of flow.steps.entries()) {
    if ('world' in st && st.world !== undefined) {
      if (st.world === 'stop relay') await world.stopRelay();
      else await world.startRelay();
      continue;
    }
    const call = st as FlowStep;
    calls++;
    perTool[call.tool] = (perTool[call.tool] ?? 0) + 1;
    const r = await callTool(world.bridges[call.who], call.tool, call.args(s));
    const text = textOf(r);
    transcript?.(`## ${flow.name} ${i + 1}: ${call.who} ${call.tool} ${JSON.stringify(call.args(s))}\n${text}\n`);
    const refused = refusalIn(r);
    if (refused !== undefined) {
      refusals.push({ step: i + 1, who: call.who, tool: call.tool, code: refused.code, text });
      return { name: flow.name, calls, perTool, refusals, stoppedAt: { step: i + 1, why: `${call.who} ${call.tool}: ${text}` } };
    }
    try {
      call.keep?.((r.structuredContent ?? {}) as Record<string, any>, s, text);
    } catch (e) {
      return { name: flow.name, calls, perTool, refusals, stoppedAt: { step: i + 1, why: `${call.who} ${call.tool}: ${(e as Error).message}\n${text}` } };
    }
  }
  return { name: flow.name, calls, perTool, refusals };
}

/**
 * Run every flow, in order, in a world of their own; the world is closed afterwards. The flows
 * share the world as one person's agents would: by the messages flow, ann and ben know each
 * other from the SPACE ben joined by invite, so ann's message to ben is no request.
 */
export async function runAgentFlows(): Promise<FlowReport[]> {
  const world = await startFlowWorld();
  try {
    const reports: FlowReport[] = [];
    for (const flow of AGENT_FLOWS) reports.push(await runFlow(world, flow));
    return reports;
  } finally {
    await world.close();
  }
}

/** The per-flow tool-call counts as a table, for the test's output and the bench. */
export function flowTable(reports: readonly FlowReport[]): string {
  const rows = reports.map((r) => [r.name, String(r.calls), r.refusals.length === 0 && r.stoppedAt === undefined ? 'completed' : `stopped at step ${r.stoppedAt?.step ?? '?'}`]);
  const head = ['flow', 'tool calls', 'outcome'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 1 ? c.padStart(width[i]!) : c.padEnd(width[i]!))).join('  ');
  return [line(head), ...rows.map(line), line(['all', String(reports.reduce((n, r) => n + r.calls, 0)), ''])].join('\n');
}
