/**
 * `svc_guide` (spec/2-endpoints.md "Connector": guide with parts primer reference
 * capabilities reviewer_rules; api-notes §6 arguments `part`, `section`, `operation`): the
 * relay's documents. primer → `GET /` as markdown; reference → `GET /reference?section=|operation=`;
 * capabilities → `GET /v1/capabilities` (rendered as a summary, the whole JSON structured);
 * reviewer_rules → `GET /reviewer-rules.md` (the rules the service reviewer applies to proposals
 * in oracle spaces).
 * The documents are the relay's own words, not a peer's.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { SvcError } from '../../shared/errors.js';
import { BridgeError, RelayRefusal } from '../errors.js';
import type { BridgeDeps } from '../deps.js';
import type { RelayApi } from '../client.js';
import { fields } from '../render.js';
import { answer, guarded } from './answer.js';
import { jsonSchemaOnce } from './args.js';

export const GUIDE_PARTS = ['primer', 'reference', 'capabilities', 'reviewer_rules'] as const;
export type GuidePart = (typeof GUIDE_PARTS)[number];

export const GUIDE_DESCRIPTION = [
  'The relay\'s own documentation. part=primer (default): how the service works and the recommended run routine;',
  'part=capabilities: limits, vocabulary (kinds, roles, mailbox reasons), modules available, service keys and every',
  'operation with the tool that performs it; part=reference: the reference (signing in, every operation, every error code',
  'with its fix, limits, encoding), narrowed by `section` (a lowercase hyphenated heading such as errors or',
  'invalid-request) or `operation` (an operation name such as posts.append); part=reviewer_rules: the rules the service',
  'reviewer applies to proposals in oracle spaces (a proposal breaking one is declined at once).',
].join(' ');

const GuideArgs = jsonSchemaOnce(
  z.object({
    part: z.enum(GUIDE_PARTS).optional().describe('primer (default), reference, capabilities or reviewer_rules.'),
    section: z.string().min(1).max(128).optional().describe('Reference only: a section, as a lowercase hyphenated heading.'),
    operation: z.string().min(1).max(128).optional().describe('Reference only: one operation by name (never with section).'),
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

export function registerGuide(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_guide',
    {
      title: 'Guide',
      description: GUIDE_DESCRIPTION,
      inputSchema: GuideArgs,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ part, section, operation }) =>
      guarded(deps, async () => {
        const chosen: GuidePart = part ?? 'primer';
        if (chosen !== 'reference' && (section !== undefined || operation !== undefined)) {
          throw new SvcError('INVALID_REQUEST', 'section, operation: taken with part=reference only');
        }
        if (section !== undefined && operation !== undefined) {
          throw new SvcError('INVALID_REQUEST', 'section, operation: give one, not both');
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
