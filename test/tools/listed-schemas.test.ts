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

async function serve(listed: ListedSchemas | undefined) {
  const server = new McpServer({ name: 'listed-test', version: '0.0.0' });
  withListedSchemas(server, listed);
  const echo = async (args: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(args) }] });
  server.registerTool('given', { inputSchema: toolArgs({ n: z.number().int().min(1) }) }, echo);
  server.registerTool('not_given', { inputSchema: toolArgs({ s: z.string().max(3) }) }, echo);
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
