/**
 * Redirect URIs (spec/2-endpoints.md oauth.register; RFC 6749 §3.1.2, RFC 8252 §7, OAuth 2.1
 * §2.3.1). Input is attacker-controlled.
 *
 * A client may register 1 to 10, each up to 2,048 bytes, absolute, without a fragment, and one of:
 * - https with a host;
 * - http to a loopback address (127.0.0.1, [::1], localhost) for a native app's local listener;
 * - a private-use scheme in reverse-domain form (`com.example.app:/callback`, RFC 8252 §7.1): a
 *   scheme with a dot in it.
 * At /oauth/authorize a redirect_uri must equal a registered one exactly, except that a loopback
 * http address may name any port (RFC 8252 §7.3: the app's listener takes a free port each time).
 */
import { OAUTH_LIMITS } from '../../shared/limits.js';
import { utf8Length } from '../../shared/encoding.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a redirect URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'each must be a string';
  if (utf8Length(value) > OAUTH_LIMITS.redirectUriMaxBytes) return `each takes at most ${OAUTH_LIMITS.redirectUriMaxBytes} bytes`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `not an absolute URI: ${clip(value)}`;
  }
  if (value.includes('#')) return `no fragment allowed: ${clip(value)}`;
  if (url.username || url.password) return `no user name or password allowed: ${clip(value)}`;
  if (url.protocol === 'https:') return url.hostname ? undefined : `https needs a host: ${clip(value)}`;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : `http only to a loopback address (127.0.0.1, [::1], localhost): ${clip(value)}`;
  }
  const scheme = url.protocol.slice(0, -1);
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+$/.test(scheme) && !['javascript', 'data', 'file', 'blob', 'vbscript'].includes(scheme)) {
    return undefined;
  }
  return `https, http to a loopback address, or a reverse-domain app scheme such as com.example.app:/callback: ${clip(value)}`;
}

/** Why a list of redirect URIs cannot be registered, or undefined when it can. */
export function redirectUrisProblem(value: unknown): string | undefined {
  const { min, max } = OAUTH_LIMITS.redirectUris;
  if (!Array.isArray(value)) return `redirect_uris: required, a list of ${min} to ${max} URIs`;
  if (value.length < min || value.length > max) return `redirect_uris: ${min} to ${max} URIs, not ${value.length}`;
  for (const v of value) {
    const problem = redirectUriProblem(v);
    if (problem !== undefined) return `redirect_uris: ${problem}`;
  }
  return undefined;
}

/** Whether a redirect_uri sent at /oauth/authorize names one of the registered ones. */
export function redirectUriRegistered(sent: string, registered: readonly string[]): boolean {
  if (registered.includes(sent)) return true;
  const loopback = loopbackParts(sent);
  if (loopback === undefined) return false;
  return registered.some((r) => loopbackParts(r) === loopback);
}

/** A loopback http URI without its port, for the any-port rule; undefined for any other URI. */
function loopbackParts(text: string): string | undefined {
  if (!text.startsWith('http://')) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (!LOOPBACK_HOSTS.has(url.hostname) || url.hash) return undefined;
  return `${url.hostname}${url.pathname}${url.search}`;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
