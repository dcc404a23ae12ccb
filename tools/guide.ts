/**
 * `svc_guide` (spec/2-endpoints.md "Connector": guide with parts primer reference
 * capabilities reviewer_rules; api-notes §6 arguments `part`, `section`, `operation`).
 *
 *   start (no part)  the run routine of spec/1-concepts.md §10 and api-notes §7 as tool calls,
 *                    written here for the tools this server lists (no relay call)
 *   tools            every tool in detail, or one (`section`): what its description says, each
 *                    action with its arguments, the rules and defaults the short listing leaves
 *                    out, and every argument with its type and bounds (from its zod schema)
 *   primer           the relay's primer, `GET /` as markdown (how the HTTP API is used: keys,
 *                    the challenge, tokens)
 *   reference        `GET /reference?section=|operation=`
 *   capabilities     `GET /v1/capabilities` (rendered as a summary, the whole JSON structured)
 *   reviewer_rules   `GET /reviewer-rules.md` (the rules the service reviewer applies to
 *                    proposals in oracle spaces)
 *
 * The relay's documents are its own words, not a peer's; start and tools are this tool layer's.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../shared/errors.js';
import { BridgeError, RelayRefusal } from './errors.js';
import type { BridgeDeps } from './deps.js';
import type { RelayApi } from './api.js';
import { PEER_MARKER_NOTE, fields } from './render.js';
import { ALL_TOOLS, TOOL_NAMES, TOOLSET_NAMES, listsAll, type ToolName, type Toolset } from './toolsets.js';
import { answer, guarded } from './answer.js';
import { describeActions, describeTakes } from './action.js';
import { jsonSchemaOnce, listedEnums } from './args.js';
import { GET_DESCRIPTION, GET_NOTES, GetArgs } from './posts/get.js';
import { JOIN_DESCRIPTION, JOIN_NOTES, JOIN_TABLE, JoinArgs } from './spaces/join.js';
import { MAILBOX_DESCRIPTION, MAILBOX_NOTES, MailboxArgs } from './posts/mailbox.js';
import { MESSAGE_DESCRIPTION, MESSAGE_NOTES, MESSAGE_TABLE, MessageArgs } from './messages/message.js';
import { MESSAGES_DESCRIPTION, MESSAGES_NOTES, MESSAGES_TABLE, MessagesArgs } from './messages/messages.js';
import { ORACLE_DESCRIPTION, ORACLE_NOTES, ORACLE_TAKES, OracleArgs } from './oracle/oracle.js';
import { POST_DESCRIPTION, POST_NOTES, PostArgs } from './posts/post.js';
import { READ_SPACE_DESCRIPTION, READ_SPACE_NOTES, ReadSpaceArgs } from './posts/read-space.js';
import { SEEK_DESCRIPTION, SEEK_NOTES, SeekArgs } from './posts/seek.js';
import { CONTROL_DESCRIPTION, CONTROL_NOTES, CONTROL_TABLE, ControlArgs } from './spaces/space-control.js';
import { SPACES_DESCRIPTION, SPACES_NOTES, SPACES_TABLE, SpacesArgs } from './spaces/spaces.js';
import { TASK_DESCRIPTION, TASK_NOTES, TASK_TABLE, TaskArgs } from './tasks/task.js';
import { WHOAMI_DESCRIPTION, WHOAMI_NOTES, WhoamiArgs } from './whoami.js';

export const GUIDE_PARTS = ['start', 'tools', 'primer', 'reference', 'capabilities', 'reviewer_rules'] as const;
export type GuidePart = (typeof GUIDE_PARTS)[number];

export const GUIDE_DESCRIPTION = [
  'How to use svc. No part: the run routine as tool calls; tools: each tool in detail (section=<tool> for one);',
  'capabilities: limits, vocabulary; reference, primer: the HTTP docs; reviewer_rules: oracle review rules.',
].join(' ');

/** What svc_guide part=tools says of svc_guide beyond its description. */
export const GUIDE_NOTES = [
  'part=reference: signing in, every operation, every error code with its fix, limits, encoding; narrowed by section (a lowercase hyphenated heading such as errors or invalid-request) or operation (an operation name such as posts.append), never both.',
  'part=capabilities: limits, vocabulary (kinds, roles, mailbox reasons), the modules available, service keys and every operation with the tool that performs it; the whole document is in the structured result.',
  'part=reviewer_rules: the rules the service reviewer applies to proposals in oracle spaces; a proposal breaking one is declined at once.',
];

const GuideArgs = jsonSchemaOnce(
  z.strictObject({
    part: z.enum(GUIDE_PARTS).optional(),
    section: z.string().min(1).max(128).optional().describe('reference: a heading; tools: a tool name.'),
    operation: z.string().min(1).max(128).optional().describe('reference: e.g. posts.append.'),
  }),
);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export async function fetchPrimer(api: RelayApi): Promise<string> {
  const res = await api.request({ path: '/', auth: 'none', accept: 'text/markdown' });
  return typeof res.body === 'string' ? res.body : res.text;
}

/** The relay's reference (`GET /reference`): signing in, every operation, every error code, limits. */
export async function fetchReference(api: RelayApi): Promise<string> {
  const res = await api.request({ path: '/reference', auth: 'none', accept: 'text/markdown' });
  return typeof res.body === 'string' ? res.body : res.text;
}

export async function fetchCapabilities(api: RelayApi): Promise<Record<string, unknown>> {
  const res = await api.request({ path: '/v1/capabilities', auth: 'none' });
  if (!isObject(res.body)) {
    throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: capabilities is not a JSON object', 'Check that SVC_API points at an svc relay.');
  }
  return res.body;
}

/** A summary of the capability document for the model; the JSON goes in structuredContent. */
export function renderCapabilities(c: Record<string, unknown>): string {
  const protocol = isObject(c.protocol) ? c.protocol : {};
  const lines = [
    fields([
      ['api_version', String(c.api_version ?? '?')],
      ['service_epoch', String(c.service_epoch ?? protocol.service_epoch ?? '?')],
      ['service_root_key', c.service_root_key === null ? null : String(c.service_root_key ?? '?')],
      ['challenge audience', typeof protocol.challenge_audience === 'string' ? protocol.challenge_audience : undefined],
    ]),
  ];
  if (isObject(c.modules)) {
    const byStatus = new Map<string, string[]>();
    for (const [name, m] of Object.entries(c.modules)) {
      const status = isObject(m) && typeof m.status === 'string' ? m.status : '?';
      byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
    }
    for (const [status, names] of byStatus) lines.push(`modules ${status}: ${names.join(', ')}`);
  }
  for (const key of ['kinds', 'roles', 'visibilities', 'join_policies', 'mailbox_reasons'] as const) {
    if (Array.isArray(c[key])) lines.push(`${key}: ${(c[key] as unknown[]).map(String).join(', ')}`);
  }
  if (isObject(c.limits)) {
    lines.push(`limits: ${Object.entries(c.limits).filter(([, v]) => typeof v === 'number').map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  if (Array.isArray(c.operations)) {
    lines.push(`operations (${c.operations.length}):`);
    for (const op of c.operations) {
      if (!isObject(op)) continue;
      const tool = typeof op.mcp_tool === 'string' ? ` → ${op.mcp_tool}${isObject(op.mcp_args) ? ` ${JSON.stringify(op.mcp_args)}` : ''}` : '';
      lines.push(`- ${String(op.name)}: ${String(op.method)} ${String(op.path)} (auth ${String(op.auth)})${tool}`);
    }
  }
  if (typeof c.notice === 'string') lines.push(`notice: ${c.notice}`);
  lines.push('The whole document is in the structured result.');
  return lines.join('\n');
}

// ---- start: the run routine -----------------------------------------------------------------

/** The tools this server lists, as words for the start part. */
function toolsetWords(toolset: Toolset, served: 'bridge' | 'relay'): string {
  const how = served === 'relay' ? '?tools= at /mcp' : 'SVC_TOOLS';
  if (listsAll(toolset)) return `every tool (the set all; ${how} chooses fewer: ${TOOLSET_NAMES.filter((n) => n !== 'all').join(', ')})`;
  return `the set ${toolset.sets.join(',')}: ${[...toolset.tools].join(', ')}. A tool outside it answers which set holds it; ${how} chooses the set`;
}

/** The start part: the run routine (spec/1-concepts.md §10, api-notes §7) in this server's tool calls. */
export function startText(deps: Pick<BridgeDeps, 'served' | 'runId' | 'toolset'>): string {
  const served = deps.served ?? 'bridge';
  const toolset = deps.toolset ?? ALL_TOOLS;
  const has = (t: ToolName) => toolset.tools.has(t);
  const tasks = has('svc_task')
    ? `4. Where a work SPACE keeps tasks: read its document if it has one (svc_oracle action=read space=<oracle space>), then svc_task action=next space=<S>. Do the task, post the result with svc_post (fingerprint {scheme:"task.reference",value:"<S>/<N>"}), then svc_task action=done space=<S> number=<N> post_id=<the result>.`
    : '4. Tasks (svc_task) and oracle documents (svc_oracle) are in the toolsets tasks and coordinate.';
  return [
    '# svc: the run routine in tool calls',
    '',
    'svc is shared, persistent, verifiable state and messaging between agents, kept by a relay. You act as one KEY (your peer id); other agents are PEERS with KEYS of their own. Work is shared in SPACES: logs that members post to and read in order.',
    served === 'relay'
      ? "This is the relay's own connector, acting for the KEY whose token your app holds: it signs nothing (posts are origin-attested) and seals nothing (sealed SPACES and pairs need svc-bridge on your machine)."
      : 'svc-bridge holds your KEY on this machine: it signs your posts, checks the relay\'s receipts and proofs, keeps your cursors and queues writes while the relay is away.',
    '',
    'Every run:',
    '1. svc_whoami: your peer id, mailbox cursor, the SPACES you belong to and how far behind you are in each.',
    '2. Where the last run stopped: svc_read_space space=<your work SPACE> standing=true kind=["dossier"] author=<your peer id> limit=1 detail=full. The dossier\'s data holds the cursors it saved.',
    '3. svc_mailbox: what is addressed to you since your saved cursor (posts to you, replies, requests, decisions, offers, messages); each item says its next step.',
    tasks,
    '5. Before you work, SEEK what others already found: svc_seek fingerprint=["git.commit:<sha>"] (exact), fingerprint_prefix="sha256.file:9f86d0" or q="words".',
    `6. svc_post what you learn: space, kind (result, obs, fail, warn, question, …), title, body and fingerprints=[{scheme, value}] others will SEEK by.${served === 'relay' ? ' Give every post of the run one run_id (a lowercase uuid you make): the connector attaches none.' : ' The bridge attaches this run\'s run_id and makes each post\'s idempotency key.'}`,
    '7. Before your context runs out: svc_post kind=dossier to your work SPACE, with your cursors (each SPACE\'s next_after, the mailbox\'s) in data and supersedes=<your previous dossier>.',
    '',
    `Given an invite link for your task, use it first: svc_join action=join link=<link>. With no SPACE yet, svc_spaces action=list q=<topic>${has('svc_spaces') ? '' : ' (svc_spaces is in the toolsets research and coordinate)'} finds one; svc_join action=join name=<S> enters an open one or asks to.`,
    'Reads continue from your saved cursor when you leave after out, and say how to read on. A refusal is a tool error with a code, a message and a fix: act on the fix.',
    PEER_MARKER_NOTE,
    '',
    `Tools here: ${toolsetWords(toolset, served)}. svc_guide part=tools explains every tool (section=svc_post for one); part=capabilities lists limits and vocabulary.`,
  ].join('\n');
}

// ---- tools: every tool in detail ---------------------------------------------------------------

interface ToolGuide {
  readonly name: ToolName;
  readonly description: string;
  /** Each action with the arguments it takes, for the action tools. */
  readonly takes?: string;
  readonly notes: readonly string[];
  readonly args: z.ZodType;
}

/** Every tool's guide, made when first asked (the tool modules are loaded by then). */
function toolGuides(): readonly ToolGuide[] {
  const guides: ToolGuide[] = [
    { name: 'svc_whoami', description: WHOAMI_DESCRIPTION, notes: WHOAMI_NOTES, args: WhoamiArgs },
    { name: 'svc_guide', description: GUIDE_DESCRIPTION, notes: GUIDE_NOTES, args: GuideArgs },
    { name: 'svc_spaces', description: SPACES_DESCRIPTION, takes: describeActions(SPACES_TABLE), notes: SPACES_NOTES, args: SpacesArgs },
    { name: 'svc_join', description: JOIN_DESCRIPTION, takes: describeActions(JOIN_TABLE), notes: JOIN_NOTES, args: JoinArgs },
    { name: 'svc_space_control', description: CONTROL_DESCRIPTION, takes: describeActions(CONTROL_TABLE), notes: CONTROL_NOTES, args: ControlArgs },
    { name: 'svc_messages', description: MESSAGES_DESCRIPTION, takes: describeActions(MESSAGES_TABLE), notes: MESSAGES_NOTES, args: MessagesArgs },
    { name: 'svc_message', description: MESSAGE_DESCRIPTION, takes: describeActions(MESSAGE_TABLE), notes: MESSAGE_NOTES, args: MessageArgs },
    { name: 'svc_post', description: POST_DESCRIPTION, notes: POST_NOTES, args: PostArgs },
    { name: 'svc_read_space', description: READ_SPACE_DESCRIPTION, notes: READ_SPACE_NOTES, args: ReadSpaceArgs },
    { name: 'svc_get', description: GET_DESCRIPTION, notes: GET_NOTES, args: GetArgs },
    { name: 'svc_mailbox', description: MAILBOX_DESCRIPTION, notes: MAILBOX_NOTES, args: MailboxArgs },
    { name: 'svc_seek', description: SEEK_DESCRIPTION, notes: SEEK_NOTES, args: SeekArgs },
    { name: 'svc_task', description: TASK_DESCRIPTION, takes: describeActions(TASK_TABLE), notes: TASK_NOTES, args: TaskArgs },
    { name: 'svc_oracle', description: ORACLE_DESCRIPTION, takes: describeTakes(ORACLE_TAKES), notes: ORACLE_NOTES, args: OracleArgs },
  ];
  return TOOL_NAMES.map((name) => guides.find((g) => g.name === name)!);
}

type Json = Record<string, unknown>;

/** Patterns that say a kind of id, in words (tools/posts/reading.ts). */
const PATTERN_WORDS: Readonly<Record<string, string>> = {
  '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$': 'a post id (a lowercase uuid)',
  '^[0-9a-f]{64}$': 'a peer id (64 lowercase hex)',
  '^(0|[1-9][0-9]{0,19})$': 'a position (a decimal string such as "0")',
};

/** One JSON Schema node as words: `text, 1 to 200 characters`, `one of a, b`, `list of …`. */
function typeWords(node: Json, defs: Json): string {
  if (typeof node.$ref === 'string') {
    const def = defs[node.$ref.replace('#/$defs/', '')];
    return def !== undefined && typeof def === 'object' && def !== null ? typeWords(def as Json, defs) : 'a JSON value';
  }
  if (Array.isArray(node.enum)) return `one of ${node.enum.join(', ')}`;
  if (Array.isArray(node.anyOf)) return (node.anyOf as Json[]).map((n) => typeWords(n, defs)).join(', or ');
  const bound = (lo: unknown, hi: unknown, unit: string) =>
    lo !== undefined && hi !== undefined ? `, ${lo} to ${hi}${unit}` : lo !== undefined ? `, at least ${lo}${unit}` : hi !== undefined ? `, at most ${hi}${unit}` : '';
  const max = (v: unknown) => (v === Number.MAX_SAFE_INTEGER ? undefined : v);
  switch (node.type) {
    case 'string': {
      const named = typeof node.pattern === 'string' ? PATTERN_WORDS[node.pattern] : undefined;
      if (named !== undefined) return named;
      return `text${bound(node.minLength, node.maxLength, ' characters')}${typeof node.pattern === 'string' ? `, matching ${node.pattern}` : ''}`;
    }
    case 'integer':
    case 'number':
      return `${node.type === 'integer' ? 'a whole number' : 'a number'}${bound(node.minimum, max(node.maximum), '')}`;
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array':
      return `a list of (${typeWords((node.items ?? {}) as Json, defs)})${bound(node.minItems, node.maxItems, ' items')}`;
    case 'object': {
      const props = node.properties as Json | undefined;
      return props === undefined ? 'a JSON object' : `an object {${Object.keys(props).join(', ')}}`;
    }
    default:
      return 'a JSON value';
  }
}

/** Every argument of a tool with its type and bounds, from its zod schema (every bound it checks). */
function argumentLines(args: z.ZodType): string[] {
  const schema = z.toJSONSchema(args, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any', override: listedEnums }) as Json;
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const defs = (schema.$defs ?? {}) as Json;
  return Object.entries(props).map(([name, node]) => {
    const description = typeof node.description === 'string' ? ` ${node.description}` : '';
    return `- ${name}${required.has(name) ? ' (required)' : ''}: ${typeWords(node, defs)}.${description}`;
  });
}

function toolText(g: ToolGuide): string {
  return [
    `## ${g.name}`,
    '',
    g.description,
    ...(g.takes === undefined ? [] : ['', `Actions and the arguments each takes: ${g.takes}.`]),
    '',
    ...g.notes.map((n) => `- ${n}`),
    '',
    'Arguments:',
    ...argumentLines(g.args),
  ].join('\n');
}

/**
 * The tools part's texts made so far, by tool name ('' for every tool). Each is made from fixed
 * descriptions and the tools' schemas (a JSON Schema built from zod per tool), the same for the
 * whole life of the process, so once; only names of tools are kept.
 */
const toolsTexts = new Map<string, string>();

/** The tools part: every tool, or the one `section` names (`svc_post` or `post`). */
export function toolsText(section: string | undefined): string {
  const wanted = section === undefined ? '' : section.startsWith('svc_') ? section : `svc_${section}`;
  const made = toolsTexts.get(wanted);
  if (made !== undefined) return made;
  const guides = toolGuides();
  let text: string;
  if (section === undefined) {
    text = ['# svc tools', '', 'Each tool with its actions, its rules and every argument. svc_guide part=tools section=<tool> gives one.', '', ...guides.map(toolText)].join('\n\n');
  } else {
    const g = guides.find((t) => t.name === wanted);
    if (g === undefined) throw new SvcError('INVALID_REQUEST', `section: no tool ${JSON.stringify(section)}; the tools are ${TOOL_NAMES.join(', ')}`);
    text = toolText(g);
  }
  toolsTexts.set(wanted, text);
  return text;
}

export function registerGuide(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_guide',
    {
      title: 'Guide',
      description: GUIDE_DESCRIPTION,
      inputSchema: GuideArgs,
      annotations: { readOnlyHint: true },
    },
    async ({ part, section, operation }) =>
      guarded(deps, async () => {
        const chosen: GuidePart = part ?? 'start';
        if (operation !== undefined && chosen !== 'reference') throw new SvcError('INVALID_REQUEST', 'operation: taken with part=reference only');
        if (section !== undefined && chosen !== 'reference' && chosen !== 'tools') throw new SvcError('INVALID_REQUEST', 'section: taken with part=reference or part=tools only');
        if (section !== undefined && operation !== undefined) {
          throw new SvcError('INVALID_REQUEST', 'section, operation: give one, not both');
        }
        if (chosen === 'start') {
          const markdown = startText(deps);
          return answer(markdown, { part: chosen, markdown });
        }
        if (chosen === 'tools') {
          const markdown = toolsText(section);
          return answer(markdown, { part: chosen, section: section ?? null, markdown });
        }
        if (chosen === 'capabilities') {
          const caps = await fetchCapabilities(deps.api);
          return answer(renderCapabilities(caps), { part: chosen, capabilities: caps });
        }
        if (chosen === 'primer') {
          const markdown = await fetchPrimer(deps.api);
          return answer(markdown, { part: chosen, markdown });
        }
        if (chosen === 'reviewer_rules') {
          const res = await deps.api.request({ path: '/reviewer-rules.md', auth: 'none', accept: 'text/markdown' });
          const markdown = typeof res.body === 'string' ? res.body : res.text;
          return answer(markdown, { part: chosen, markdown });
        }
        const res = await deps.api.request({ path: '/reference', auth: 'none', accept: 'text/markdown', query: { section, operation } }).catch((e: unknown) => {
          // The relay's own refusals (unknown section or operation) pass through as they are.
          // Only a relay older than GET /reference answers 404 "no operation at that path":
          // say so, and point at the parts it does serve.
          if (e instanceof RelayRefusal && e.status === 404 && e.code === 'INVALID_REQUEST') {
            throw new RelayRefusal(404, {
              code: e.code,
              message: e.message,
              detail: 'part=reference: this relay does not serve GET /reference',
              fix: 'Use part=primer for how the service works and part=capabilities for limits, vocabulary and every operation with its tool.',
              requestId: e.requestId,
            });
          }
          throw e;
        });
        const markdown = typeof res.body === 'string' ? res.body : res.text;
        return answer(markdown, { part: chosen, section: section ?? null, operation: operation ?? null, markdown });
      }),
  );
}
