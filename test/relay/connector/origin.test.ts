/**
 * Who reaches the connector from a browser (MCP Streamable HTTP transport, "Security Warning"):
 * a foreign Origin is refused at `/mcp` and `/mcp/connect`, and a relay on a loopback address
 * refuses a Host that is not a loopback name (a web page that rebinds its DNS name to
 * 127.0.0.1), 403 with the envelope, before any MCP message is read.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../../relay/connector/origin.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

/** A POST with headers exactly as given (node:http lets a test name its own Host). */
function post(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(INIT);
  });
}

describe('a relay on a loopback address', () => {
  let relay: RunningRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('refuses a foreign Host at /mcp and /mcp/connect with 403 and the envelope', async () => {
    for (const path of ['/mcp', '/mcp/connect']) {
      const r = await post(relay.url, path, { host: `evil.example:${new URL(relay.url).port}` });
      expect(r.status, path).toBe(403);
      expect(JSON.parse(r.text).error).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringMatching(/^host: /) });
    }
  });

  it('refuses a foreign Origin with 403 and the envelope', async () => {
    const r = await post(relay.url, '/mcp', { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text).error).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringMatching(/^origin: /) });
  });

  it('answers its own origin and the loopback names 127.0.0.1 and localhost', async () => {
    const port = new URL(relay.url).port;
    expect((await post(relay.url, '/mcp', { origin: relay.url })).status).toBe(200);
    expect((await post(relay.url, '/mcp', { host: `localhost:${port}` })).status).toBe(200);
    expect((await post(relay.url, '/mcp', { host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it('leaves the plain HTTP API alone: a foreign Host still reads capabilities', async () => {
    const r = await new Promise<number>((resolve, reject) => {
      const u = new URL(relay.url);
      httpRequest({ host: u.hostname, port: u.port, path: '/v1/capabilities', headers: { host: 'evil.example' }, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(r).toBe(200);
  });
});

describe('a relay with a public URL that is not loopback', () => {
  let relay: RunningRelay;
  beforeAll(async () => {
    relay = await startRelay({ publicUrl: 'https://relay.example', passkeys: { origins: ['https://app.relay.example'] } });
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('takes its public name as Host, and its public origin and passkey origins as Origin', async () => {
    expect((await post(relay.url, '/mcp', { host: 'relay.example' })).status).toBe(200);
    expect((await post(relay.url, '/mcp', { host: 'relay.example', origin: 'https://relay.example' })).status).toBe(200);
    expect((await post(relay.url, '/mcp', { host: 'relay.example', origin: 'https://app.relay.example' })).status).toBe(200);
  });

  it('refuses any other Origin', async () => {
    for (const origin of ['https://evil.example', 'http://relay.example', 'null']) {
      expect((await post(relay.url, '/mcp', { host: 'relay.example', origin })).status, origin).toBe(403);
    }
  });
});

describe('loopback host names', () => {
  it('are localhost, 127.0.0.0/8 and [::1], nothing else', () => {
    for (const h of ['localhost', 'LOCALHOST', 'a.localhost', '127.0.0.1', '127.1.2.3', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['evil.example', '127.0.0.1.evil.example', 'localhost.evil.example', '128.0.0.1', '[::2]', '0.0.0.0', '127.0.0.256']) expect(isLoopbackHost(h), h).toBe(false);
  });
});
