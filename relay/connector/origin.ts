/**
 * Who may reach the connector from a browser (MCP Streamable HTTP transport, "Security
 * Warning": servers must validate the Origin header, and a server on a loopback address is
 * reached by a web page that rebinds its own DNS name to 127.0.0.1 unless it checks Host too).
 *
 * - An Origin header, when a request carries one, must be the relay's public origin or one of
 *   the passkey origins its settings allow (the approval page signs in from those). A client
 *   that is not a browser sends none and is not judged by it.
 * - When the relay is reached on a loopback address (its public URL, or, without one, the
 *   address it listens on), the Host header must name a loopback host: a rebound DNS name
 *   arrives with the attacker's name in Host.
 *
 * A request failing either is answered 403 before the MCP handler sees it, with the envelope
 * (INVALID_REQUEST, the detail naming the header); nothing runs.
 */
import type { FastifyRequest } from 'fastify';
import type { RelayContext } from '../context.js';
import { baseOf } from './api.js';

/** Whether `hostname` (as URL.hostname writes it: IPv6 in brackets) is a loopback name. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '[::1]' || h === '::1') return true;
  return /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
}

/** The hostname of a Host header value, or undefined when it is not one. */
function hostnameOf(host: string): string | undefined {
  if (!/^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

/** Whether the relay is reached on a loopback address: its public URL, else its listening address. */
function servedOnLoopback(ctx: RelayContext): boolean {
  if (ctx.config.publicUrl === undefined && (ctx.config.host === '0.0.0.0' || ctx.config.host === '::')) return false;
  return isLoopbackHost(baseOf(ctx).hostname);
}

/** Host header texts judged (a client sends the same one every time), at most HOSTS_KEPT; past that, judged afresh. */
const hosts = new Map<string, boolean>();
const HOSTS_KEPT = 64;

/** Whether a Host header value names a loopback host. */
function loopbackHostHeader(host: string): boolean {
  const known = hosts.get(host);
  if (known !== undefined) return known;
  const name = hostnameOf(host);
  const verdict = name !== undefined && isLoopbackHost(name);
  if (hosts.size < HOSTS_KEPT) hosts.set(host, verdict);
  return verdict;
}

/** The origins a browser page calling the connector may come from. */
function allowedOrigins(ctx: RelayContext): Set<string> {
  const origins = new Set([baseOf(ctx).origin]);
  for (const o of ctx.passkeyPolicy()?.origins ?? []) origins.add(o);
  return origins;
}

/** Why this request may not reach the connector (the detail of the 403), or undefined. */
export function foreignRequest(req: FastifyRequest, ctx: RelayContext): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedOrigins(ctx).has(origin)) {
    return 'origin: this relay\'s connector answers pages of its own origin only';
  }
  if (servedOnLoopback(ctx)) {
    const host = req.headers.host;
    if (typeof host !== 'string' || !loopbackHostHeader(host)) return 'host: a relay on a loopback address answers loopback host names only';
  }
  return undefined;
}
