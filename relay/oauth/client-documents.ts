/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; the MCP
 * authorization spec's preferred registration): a `client_id` that is an https URL names a
 * JSON document of the client's metadata, fetched by the relay. Everything about the address
 * and the document is attacker-controlled, and the fetch runs from inside the operator's
 * network, so:
 * - the address is https with a path, no credentials, no fragment, no dot segments;
 * - its host is resolved here and EVERY address checked (`addressAllowed`): private, loopback,
 *   link-local, shared, multicast, reserved and documentation ranges of both IANA
 *   special-purpose registries are refused, and every IPv6 form that carries an IPv4 address
 *   inside but the mapped one, which is checked as its IPv4 address (loopback is allowed only
 *   for a test relay, `allowLoopbackClientDocuments`, which also allows http);
 * - the request is pinned to the checked address (the socket's `lookup` answers it), so a DNS
 *   answer that changes between check and connect cannot redirect the fetch;
 * - no redirects are followed; at most 64 KiB is read; the whole fetch takes at most 5 s;
 * - the document's `client_id` must equal the address exactly; it authenticates with none.
 * A document is kept for its Cache-Control max-age, held between a minute and a day (an hour
 * when it says nothing), so a client cannot make the relay fetch on every request.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { parseJsonBody } from '../http/json-body.js';
import { OAuthError } from './errors.js';
import { readClientMetadata, type ClientMetadata } from './client-metadata.js';

export const DOCUMENT_MAX_BYTES = 64 * 1024;
export const DOCUMENT_FETCH_MS = 5000;
export const DOCUMENT_KEEP_MIN_S = 60;
export const DOCUMENT_KEEP_MAX_S = 24 * 60 * 60;
export const DOCUMENT_KEEP_DEFAULT_S = 60 * 60;
/** Document fetches in flight at once, across every client; more are refused as busy. */
export const DOCUMENT_FETCHES_AT_ONCE = 16;

/** Why a document could not be used: `unknown_app` (it is not a usable client) or `unavailable` (try later). */
export class DocumentRefusal extends Error {
  constructor(
    readonly kind: 'unknown_app' | 'unavailable' | 'busy',
    message: string,
  ) {
    super(message);
  }
}

export interface FetchedDocument {
  metadata: ClientMetadata;
  /** Seconds the copy may be used. */
  keepSeconds: number;
}

/**
 * Where a document is never fetched from. IPv4: the IANA IPv4 Special-Purpose Address Registry
 * and the multicast and reserved blocks. Node's BlockList matches these rules against an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d) too, which is how such an address is checked: it is
 * the IPv4 address itself, reached over IPv4.
 */
const refusedIpv4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services among them)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with the limited broadcast 255.255.255.255
] as const) refusedIpv4.addSubnet(net, bits, 'ipv4');

/**
 * IPv6: the IANA IPv6 Special-Purpose Address Registry, and every form that carries an IPv4
 * address inside other than the mapped one. Those are refused whatever the inner address:
 * what is reached through them (a translator, a 6to4 relay, a Teredo server) is decided by an
 * address the relay would otherwise have to dig out and trust, and no document host needs them,
 * since one with an IPv4 address is reached at that address. (So a relay on an IPv6-only
 * network behind DNS64 fetches documents only from hosts that have an IPv6 address.)
 */
const refusedIpv6 = new BlockList();
for (const [net, bits] of [
  ['::', 96], // IPv4-compatible (deprecated), with the unspecified address :: and the loopback ::1
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // IPv4/IPv6 translation (NAT64), well-known prefix
  ['64:ff9b:1::', 48], // IPv4/IPv6 translation, local use
  ['100::', 64], // discard-only
  ['100:0:0:1::', 64], // dummy prefix
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32 (an IPv4 address inside), benchmarking 2001:2::/48, ORCHID 2001:10::/28 and 2001:20::/28, ...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (an IPv4 address inside; the mechanism is deprecated)
  ['3fff::', 20], // documentation
  ['5f00::', 16], // SRv6 segment identifiers
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) refusedIpv6.addSubnet(net, bits, 'ipv6');

/**
 * IPv4-mapped IPv6 addresses (::ffff:a.b.c.d), checked as their IPv4 address. BlockList would
 * match every IPv4 address against this rule as well, so only IPv6 addresses are checked here.
 */
const mappedIpv4 = new BlockList();
mappedIpv4.addSubnet('::ffff:0:0', 96, 'ipv6');

/** Global unicast, the only IPv6 space assigned for use on the Internet; the rest is refused too. */
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** Loopback: 127.0.0.0/8 (mapped too) and ::1, allowed only to a test relay. */
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Whether the relay may fetch from this address (a socket's, or a DNS answer's). */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  // A scoped address (fe80::1%eth0) belongs to one link.
  if (address.includes('%')) return false;
  const family = isIP(address);
  if (family === 4) return (allowLoopback && loopback.check(address, 'ipv4')) || !refusedIpv4.check(address, 'ipv4');
  if (family !== 6) return false;
  if (allowLoopback && loopback.check(address, 'ipv6')) return true;
  if (mappedIpv4.check(address, 'ipv6')) return !refusedIpv4.check(address, 'ipv6');
  return globalUnicast.check(address, 'ipv6') && !refusedIpv6.check(address, 'ipv6');
}

/** Whether a client_id names a document rather than a registered client. */
export function isDocumentClientId(clientId: string, allowLoopback: boolean): boolean {
  return clientId.startsWith('https://') || (allowLoopback && clientId.startsWith('http://'));
}

/** The document's address, checked (draft §3: https, a path, no fragment, no dot segments, no credentials). */
export function documentUrl(clientId: string, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new DocumentRefusal('unknown_app', 'client_id: not a URL');
  }
  const loopbackHttp = allowLoopback && url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) throw new DocumentRefusal('unknown_app', 'client_id: a document address must be https');
  if (url.username || url.password || clientId.includes('#')) throw new DocumentRefusal('unknown_app', 'client_id: no credentials or fragment');
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(clientId.slice(url.origin.length))) {
    throw new DocumentRefusal('unknown_app', 'client_id: a document address needs a path without dot segments');
  }
  if (url.href !== clientId) throw new DocumentRefusal('unknown_app', 'client_id: not in normal form');
  return url;
}

/** Seconds to keep a document by its Cache-Control (max-age within bounds; no-store/no-cache: the minimum). */
export function keepSecondsOf(cacheControl: string | undefined): number {
  if (cacheControl === undefined) return DOCUMENT_KEEP_DEFAULT_S;
  const cc = cacheControl.toLowerCase();
  if (/(^|[\s,])(no-store|no-cache)([\s,=]|$)/.test(cc)) return DOCUMENT_KEEP_MIN_S;
  const m = /(^|[\s,])max-age=(\d{1,10})/.exec(cc);
  if (!m) return DOCUMENT_KEEP_DEFAULT_S;
  return Math.min(DOCUMENT_KEEP_MAX_S, Math.max(DOCUMENT_KEEP_MIN_S, Number(m[2])));
}

/** Resolve a host and pick the address to connect to; every address it resolves to must be allowed. */
async function checkedAddress(url: URL, allowLoopback: boolean): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let answers: { address: string; family: number }[];
  if (isIP(host)) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await dnsLookup(host, { all: true, verbatim: true });
    } catch {
      throw new DocumentRefusal('unknown_app', `client_id: ${host} does not resolve`);
    }
  }
  if (answers.length === 0) throw new DocumentRefusal('unknown_app', `client_id: ${host} does not resolve`);
  for (const a of answers) {
    if (!addressAllowed(a.address, allowLoopback)) {
      throw new DocumentRefusal('unknown_app', `client_id: ${host} resolves to an address the relay does not fetch from`);
    }
  }
  return answers[0]!;
}

/** GET the document, pinned to the checked address; at most DOCUMENT_MAX_BYTES within DOCUMENT_FETCH_MS. */
function get(url: URL, pinned: { address: string; family: number }): Promise<{ status: number; cacheControl: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'svc-relay (client metadata document fetch)' },
      agent: false,
      // The connection goes to the address checked above, never to a fresh DNS answer.
      lookup: ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
        if (opts.all) cb(null, [pinned]);
        else cb(null, pinned.address, pinned.family);
      }) as never,
    });
    const timer = setTimeout(() => req.destroy(new DocumentRefusal('unavailable', 'client_id: the document did not arrive within 5 s')), DOCUMENT_FETCH_MS);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e instanceof DocumentRefusal ? e : new DocumentRefusal('unavailable', 'client_id: the document could not be fetched'));
    });
    req.on('response', (res) => {
      const declared = Number(res.headers['content-length'] ?? '0');
      if (declared > DOCUMENT_MAX_BYTES) {
        req.destroy(new DocumentRefusal('unknown_app', `client_id: the document is over ${DOCUMENT_MAX_BYTES} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > DOCUMENT_MAX_BYTES) {
          req.destroy(new DocumentRefusal('unknown_app', `client_id: the document is over ${DOCUMENT_MAX_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        const cc = res.headers['cache-control'];
        resolve({ status: res.statusCode ?? 0, cacheControl: typeof cc === 'string' ? cc : undefined, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', () => undefined); // the request's error handler answers
    });
    req.end();
  });
}

/** Fetch and read the document a client_id names. */
export async function fetchClientDocument(clientId: string, allowLoopback: boolean): Promise<FetchedDocument> {
  const url = documentUrl(clientId, allowLoopback);
  const pinned = await checkedAddress(url, allowLoopback);
  const answer = await get(url, pinned);
  if (answer.status !== 200) throw new DocumentRefusal('unknown_app', `client_id: the document answered ${answer.status}, not 200`);
  let json: unknown;
  try {
    json = parseJsonBody(answer.body);
  } catch {
    throw new DocumentRefusal('unknown_app', 'client_id: the document is not JSON');
  }
  if (json === null || typeof json !== 'object' || (json as { client_id?: unknown }).client_id !== clientId) {
    throw new DocumentRefusal('unknown_app', 'client_id: the document must name itself as client_id');
  }
  const doc = json as Record<string, unknown>;
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) {
    throw new DocumentRefusal('unknown_app', 'client_id: a client document holds no secret');
  }
  let metadata: ClientMetadata;
  try {
    metadata = readClientMetadata(doc, { document: true });
  } catch (e) {
    throw new DocumentRefusal('unknown_app', e instanceof OAuthError ? `client_id: ${e.description}` : 'client_id: unusable metadata');
  }
  return { metadata, keepSeconds: keepSecondsOf(answer.cacheControl) };
}
