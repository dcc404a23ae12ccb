/**
 * Every tool call starts by sending what waits in the outbox (tools/ports.ts `Outbox.beforeTool`)
 * and its answer shows what became of queued writes since the last call: a delivered post's seq
 * and receipt, a refusal of a queued write (which left the outbox), each once, ahead of the
 * tool's own answer (a text block of its own, and `outbox_notices` in the structured part).
 *
 * `withOutbox(server, outbox)` wraps `registerTool` of one server instance before the tools are
 * registered, so no tool has to remember it. A failure of the outbox never fails the tool.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { Outbox } from '../ports.js';

type AnyCallback = (...args: unknown[]) => unknown;

/** The notices put ahead of a tool's answer. */
export function withNotices(result: CallToolResult, notices: readonly string[]): CallToolResult {
  if (notices.length === 0) return result;
  const text = ['Outbox (writes queued while the relay could not be reached):', ...notices.map((n) => `- ${n}`)].join('\n');
  const structured = result.structuredContent === undefined ? undefined : { ...result.structuredContent, outbox_notices: [...notices] };
  return { ...result, content: [{ type: 'text', text }, ...result.content], ...(structured === undefined ? {} : { structuredContent: structured }) };
}

export function withOutbox(server: McpServer, outbox: Outbox, log: (line: string) => void): void {
  const register = server.registerTool.bind(server) as (name: string, config: unknown, cb: AnyCallback) => unknown;
  const wrapped = (name: string, config: unknown, cb: AnyCallback) =>
    register(name, config, async (...args: unknown[]) => {
      await outbox.beforeTool().catch((e: unknown) => log(`outbox: ${(e as Error)?.message ?? String(e)}`));
      const result = (await cb(...args)) as CallToolResult;
      // Taken once the tool answered: a tool that failed leaves them for the next call.
      let notices: string[] = [];
      try {
        notices = outbox.notices();
      } catch (e) {
        log(`outbox: ${(e as Error)?.message ?? String(e)}`);
      }
      return withNotices(result, notices);
    });
  (server as unknown as { registerTool: typeof wrapped }).registerTool = wrapped;
}
