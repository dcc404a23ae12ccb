/**
 * Security review of the bridge against a relay that misbehaves (spec/1-concepts.md "Tokens";
 * bridge/relay-client.ts): an answer of any size or shape is a tool error, never the end of the
 * bridge process.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, RESPONSE_MAX_BYTES } from '../../bridge/relay-client.js';
import type { BridgeError } from '../../tools/errors.js';
import { chooseKey, openKeyDirectory } from '../../bridge/keys/keys.js';
import { checkApi } from '../../bridge/settings.js';
import { tempHome } from '../helpers/bridge.js';

let server: Server;
let url: string;
/** Bytes the server wrote for the last /huge answer before the client went away. */
let written = 0;
const CHUNK = Buffer.alloc(1 << 20, 0x20);

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== '/huge' && req.url !== '/huge-declared') {
      res.writeHead(404).end();
      return;
    }
    written = 0;
    // An answer four times the cap, streamed as fast as the client reads it.
    const total = 4 * RESPONSE_MAX_BYTES;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (req.url === '/huge-declared') headers['content-length'] = String(total);
    res.writeHead(200, headers);
    const pump = (): void => {
      while (written < total) {
        written += CHUNK.length;
        if (!res.write(CHUNK)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function client(): RelayClient {
  const dir = openKeyDirectory(tempHome());
  return new RelayClient({ api: checkApi(url), key: chooseKey(dir, undefined), dir, log: () => {} });
}

describe('a relay answer larger than any page', () => {
  for (const path of ['/huge', '/huge-declared']) {
    it(`is BAD_RESPONSE after at most the cap is read (${path})`, async () => {
      const err = (await client().request({ path, auth: 'none' }).catch((e: unknown) => e)) as BridgeError;
      expect(err.code).toBe('BAD_RESPONSE');
      expect(err.message).toMatch(/larger than/);
      expect(written).toBeLessThan(2 * RESPONSE_MAX_BYTES);
    });
  }
});
