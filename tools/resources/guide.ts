/**
 * Resources (spec/2-endpoints.md "Connector"): `svc://guide` (the primer, markdown),
 * `svc://reference` (the reference, markdown), `svc://capabilities` (JSON), `svc://me` (the KEY's own view, JSON). A read the relay
 * refuses is a protocol error carrying the refusal (code, message, fix) as its data, or at the
 * relay's connector, for a token problem, the read's ordinary text (tools/resources/errors.ts).
 */
import type { McpServer, ReadResourceResult } from '@modelcontextprotocol/server';
import type { BridgeDeps } from '../deps.js';
import { failedRead } from './errors.js';
import { fetchCapabilities, fetchPrimer, fetchReference } from '../guide.js';

async function read(deps: BridgeDeps, uri: URL, mimeType: string, body: () => Promise<string>): Promise<ReadResourceResult> {
  try {
    return { contents: [{ uri: uri.href, mimeType, text: await body() }] };
  } catch (e) {
    return failedRead(uri, e, deps);
  }
}

export function registerResources(server: McpServer, deps: BridgeDeps): void {
  server.registerResource(
    'guide',
    'svc://guide',
    { title: 'svc primer', description: 'How the relay works and the recommended run routine (markdown).', mimeType: 'text/markdown' },
    (uri) => read(deps, uri, 'text/markdown', () => fetchPrimer(deps.api)),
  );
  server.registerResource(
    'reference',
    'svc://reference',
    { title: 'svc reference', description: 'Signing in, every operation with its method and path, every error code with its fix, the limits (markdown).', mimeType: 'text/markdown' },
    (uri) => read(deps, uri, 'text/markdown', () => fetchReference(deps.api)),
  );
  server.registerResource(
    'capabilities',
    'svc://capabilities',
    { title: 'svc capabilities', description: 'Limits, vocabulary, modules, service keys and operations of the relay (JSON).', mimeType: 'application/json' },
    (uri) => read(deps, uri, 'application/json', async () => JSON.stringify(await fetchCapabilities(deps.api))),
  );
  server.registerResource(
    'me',
    'svc://me',
    { title: 'svc me', description: 'This KEY at the relay: peer id, token expiry, mailbox head, memberships, service epoch (JSON).', mimeType: 'application/json' },
    (uri) =>
      read(deps, uri, 'application/json', async () => {
        const res = await deps.api.request({ path: '/v1/me' });
        return JSON.stringify(res.body);
      }),
  );
}
