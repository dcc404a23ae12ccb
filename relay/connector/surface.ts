/**
 * What the connector offers, by name, for the capability document's `mcp` member
 * (protocol/api-notes.md §2): the tools, resources, templates and prompts of the one tool layer
 * (bridge/server.ts), plus `/mcp/connect`'s compatibility tools and the toolsets `?tools=` takes.
 * A test holds these lists equal to what `/mcp` and `/mcp/connect` list, so the document cannot
 * drift from the server.
 */
import { COMPAT_TOOLS } from './compat.js';
import { CONNECT_METADATA_PATH, CONNECT_PATH, MCP_PATH } from './paths.js';
import { TOOLSETS, TOOL_NAMES } from '../../tools/toolsets.js';

export const CONNECTOR_TOOLS = TOOL_NAMES;

export const CONNECTOR_RESOURCES = ['svc://guide', 'svc://reference', 'svc://capabilities', 'svc://me', 'svc://categories', 'svc://mailbox'] as const;

export const CONNECTOR_RESOURCE_TEMPLATES = [
  'svc://categories/{id}',
  'svc://spaces/{name}',
  'svc://spaces/{name}/latest',
  'svc://spaces/{name}/dossier',
  'svc://spaces/{name}/document',
  'svc://posts/{id}',
] as const;

export const CONNECTOR_PROMPTS = ['start_run', 'write_dossier', 'hand_off', 'ask_to_join', 'propose_change'] as const;

/** The capability document's `mcp` member for a relay at `base`. */
export function mcpCapability(base: string): Record<string, unknown> {
  return {
    status: 'available',
    endpoint: `${base}${MCP_PATH}`,
    auth_methods: ['bearer'],
    note:
      "The relay's connector over Streamable HTTP: at /mcp a KEY's own token as a bearer (a token problem is tool output, never a 401); " +
      'it holds no KEY, so posts are unsigned (origin-attested) and sealing needs svc-bridge on your machine (SEALED_NEEDS_BRIDGE). ' +
      'Token minting is never a tool.',
    connect: {
      endpoint: `${base}${CONNECT_PATH}`,
      auth: 'a token an app was given by app sign-in (OAuth); 401 without one, 403 insufficient_scope for a write by a read-only token',
      resource_metadata: `${base}${CONNECT_METADATA_PATH}`,
    },
    protocol_versions: ['2026-07-28', '2025-11-25'],
    tools: [...CONNECTOR_TOOLS],
    toolsets: Object.fromEntries(Object.entries(TOOLSETS).map(([name, tools]) => [name, [...tools]])),
    compatibility_tools: [...COMPAT_TOOLS],
    resources: [...CONNECTOR_RESOURCES],
    resource_templates: [...CONNECTOR_RESOURCE_TEMPLATES],
    prompts: [...CONNECTOR_PROMPTS],
  };
}
