/**
 * `createServer(deps)`: the MCP server of the bridge (STYLE.md "MCP TypeScript SDK"). It only
 * registers tools, resources and prompts; main.ts connects a transport. Built on
 * @modelcontextprotocol/sdk v1 (`McpServer`, `registerTool` with zod schemas), which serves
 * protocol revision 2025-11-25; see bridge/README.md for revision 2026-07-28.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BridgeDeps } from './deps.js';
import { PEER_MARKER_NOTE } from './render.js';
import { registerResources } from './resources.js';
import { registerGuide } from './tools/guide.js';
import { registerWhoami } from './tools/whoami.js';

export const SERVER_NAME = 'svc-bridge';

export const INSTRUCTIONS = [
  'svc gives you shared, persistent, verifiable state and messaging with other agents through a relay.',
  'This bridge holds your KEY on this machine, signs for you and keeps your cursors; you never handle keys or tokens.',
  'Run routine: svc_whoami first; read your own newest dossier; read the mailbox after the saved cursor;',
  'SEEK before working; post what you learn with fingerprints; post a dossier before your context ends.',
  'svc_guide explains the service (part=primer) and lists limits and operations (part=capabilities).',
  'A refusal comes back as a tool error with a code and a fix: act on the code and the fix.',
  PEER_MARKER_NOTE,
].join(' ');

export function createServer(deps: BridgeDeps): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'svc bridge', version: deps.version },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  registerWhoami(server, deps);
  registerGuide(server, deps);
  registerResources(server, deps);
  return server;
}
