/**
 * Argument JSON Schemas made at build time (tools/args.ts `withListedSchemas`, made by
 * bridge/listed-schemas.ts for the one-file bridge): a tool given one lists it instead of
 * converting its zod schema, a tool given none lists what its zod schema makes, and zod checks
 * the arguments of every call either way. Through the MCP SDK's server and client, in memory.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { toolArgs, withListedSchemas, type ListedSchemas } from '../../tools/args.js';
import { listedInputSchemas } from '../../bridge/listed-schemas.js';
import { TOOL_NAMES } from '../../tools/toolsets.js';

/** A client of a server with the tools `given` and `not_given`; `built` counts the argument schemas built. */
async function serve(listed: ListedSchemas | undefined, built = { given: 0, not_given: 0 }) {
  const server = new McpServer({ name: 'listed-test', version: '0.0.0' });
  withListedSchemas(server, listed);
  const echo = async (args: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(args) }] });
  const given = () => (built.given++, { n: z.number().int().min(1) });
  const notGiven = () => (built.not_given++, { s: z.string().max(3) });
  server.registerTool('given', { inputSchema: toolArgs(given) }, echo);
  server.registerTool('not_given', { inputSchema: toolArgs(notGiven) }, echo);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'listed-test', version: '0.0.0' });
  await client.connect(b);
  return client;
}

describe('argument schemas listed as the build made them', () => {
  it('lists the schema given for a tool, and zod\'s for a tool without one; zod checks every call', async () => {
    const given = { type: 'object', properties: { n: { type: 'integer', minimum: 1, description: 'made at build time' } }, required: ['n'], additionalProperties: false };
    const client = await serve({ given });
    const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.inputSchema]));
    expect(tools.given).toEqual(given);
    expect(tools.not_given).toEqual({ type: 'object', properties: { s: { type: 'string' } }, required: ['s'], additionalProperties: false });
    expect((await client.callTool({ name: 'given', arguments: { n: 0 } })).isError).toBe(true);
    expect((await client.callTool({ name: 'given', arguments: { n: 2 } })).isError).toBeFalsy();
    expect((await client.callTool({ name: 'not_given', arguments: { s: 'long' } })).isError).toBe(true);
  });

  it('builds a tool\'s zod schema at its first call, not to list it, once; refusing as the schema built at once does', async () => {
    const given = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'], additionalProperties: false };
    const built = { given: 0, not_given: 0 };
    const client = await serve({ given }, built);
    await client.listTools();
    expect(built).toEqual({ given: 0, not_given: 1 });
    const eager = z.strictObject({ n: z.number().int().min(1) });
    for (const bad of [{ n: 0 }, { n: 'one' }, {}, { n: 1, m: 2 }]) {
      const refused = await client.callTool({ name: 'given', arguments: bad });
      expect(refused.isError).toBe(true);
      const text = (refused.content as { text: string }[])[0]!.text;
      expect(text).toContain('Invalid arguments for tool given');
      const issues = eager.safeParse(bad).error!.issues.filter((i) => i.code !== 'unrecognized_keys');
      for (const issue of issues) expect(text).toContain(issue.message);
    }
    const unknown = (await client.callTool({ name: 'given', arguments: { n: 1, m: 2 } })).content as { text: string }[];
    expect(unknown[0]!.text).toContain('unknown argument "m"; this tool takes n');
    expect(JSON.parse(((await client.callTool({ name: 'given', arguments: { n: 2 } })).content as { text: string }[])[0]!.text)).toEqual({ n: 2 });
    expect(built.given).toBe(1);
  });

  it('lists zod\'s schemas where none are given, as a server from the sources does', async () => {
    const client = await serve(undefined);
    const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.inputSchema]));
    expect(tools.given).toEqual({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'], additionalProperties: false });
  });

  it('are made by the bridge for every tool it lists', async () => {
    const listed = await listedInputSchemas();
    expect(Object.keys(listed).sort()).toEqual([...TOOL_NAMES].sort());
    for (const schema of Object.values(listed)) expect(schema.type).toBe('object');
  });
});
