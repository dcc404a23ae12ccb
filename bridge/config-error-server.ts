/**
 * The MCP server the bridge serves when it cannot start (a bad setting, a key file it cannot
 * read): the same tool names as the real server (server.ts), each answering every call with
 * the one message that says what is wrong and how to fix it, as an `isError` result.
 *
 * An MCP client that launches a process which prints to stderr and exits shows the person only
 * "Connection closed"; a server that is up and answers every tool call puts the message where
 * the person and the agent look. Nothing here touches the relay, a key or the cache.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { SERVER_NAME } from './server.js';
import { TOOL_NAMES } from './toolsets.js';

/** Every tool the real server offers (test/bridge-config-error.test.ts holds the two lists equal). */
export const BRIDGE_TOOL_NAMES = TOOL_NAMES;

/** The message every tool answers: why the bridge is not working, and what to do. */
export function configErrorMessage(problem: string): string {
  return `svc-bridge could not start, so no svc tool works until this is fixed: ${problem} Then restart the svc MCP server (or the MCP client).`;
}

export function createConfigErrorServer(message: string, version: string): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'svc bridge (not started: see the message)', version },
    { capabilities: { tools: {} }, instructions: message },
  );
  for (const name of BRIDGE_TOOL_NAMES) {
    server.registerTool(
      name,
      { description: `Unavailable. ${message}`, inputSchema: {}, annotations: { readOnlyHint: true, openWorldHint: false } },
      async () => ({ content: [{ type: 'text' as const, text: message }], isError: true }),
    );
  }
  return server;
}
