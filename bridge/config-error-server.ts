/**
 * The MCP server the bridge serves when it cannot start (a bad setting, a key file it cannot
 * read): the same tool names as the real server (server.ts), each answering every call with
 * the one message that says what is wrong and how to fix it, as an `isError` result.
 *
 * An MCP client that launches a process which prints to stderr and exits shows the person only
 * "Connection closed"; a server that is up and answers every tool call puts the message where
 * the person and the agent look. Nothing here touches the relay, a key or the cache.
 *
 * It is also what the bridge serves when started by a Node.js too old for it that could not
 * run it on Node 24 instead (bridge/main.ts): so this module loads nothing but the MCP SDK,
 * which runs on Node 20, and nothing of the bridge that needs Node 22 (server.ts, node:sqlite).
 */
import { McpServer } from '@modelcontextprotocol/server';
import { TOOL_NAMES } from '../tools/toolsets.js';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';

/** The name the bridge gives itself in initialize, whether it serves its tools or this message. */
export const SERVER_NAME = 'svc-bridge';

/** Every tool the real server offers (test/bridge/config-error.test.ts holds the two lists equal). */
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

/**
 * Serve the message over stdio until the client closes stdin (or SIGTERM, SIGINT), then exit
 * with `exitCode`. Logs the message once on stderr too.
 */
export function serveMessage(message: string, version: string, exitCode: number): void {
  const log = (line: string) => void process.stderr.write(`${line}\n`);
  log(message);
  const handle = serveStdio(() => createConfigErrorServer(message, version), { transport: new StdioServerTransport(), onerror: (err) => log(`svc-bridge: MCP: ${err.message}`) });
  let closing = false;
  const stop = async () => {
    if (closing) return;
    closing = true;
    try {
      await handle.close();
    } finally {
      process.exit(exitCode);
    }
  };
  process.stdin.on('end', () => void stop());
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}
