/**
 * Relay settings: what cli.ts parses from flags and environment, and nothing else.
 *
 * The token-challenge `audience` (spec/1-concepts.md "Minting with an Ed25519 KEY") is the host
 * of the public URL. Without --public-url it is derived from the address the server listens
 * on, which is only known after `listen` (port 0 in tests): see `audienceOf`.
 */
import type { PasskeyPolicy } from '../shared/passkey.js';

export interface RelayConfig {
  /** Interface to listen on. */
  readonly host: string;
  /** Port to listen on; 0 picks a free one. */
  readonly port: number;
  /** Directory holding the database and the service's key files, or ':memory:' for tests. */
  readonly dataDir: string;
  /** Address clients use, e.g. https://relay.example; undefined derives it from host:port. */
  readonly publicUrl: string | undefined;
  /** Development mode: the service certificate says `development: true`. */
  readonly dev: boolean;
  /**
   * How long a KEY must have been registered before it creates a public or oracle SPACE
   * (KEY_TOO_NEW), in seconds; 0 turns the wait off (a team's own relay, tests). Undefined is
   * the default, DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS.
   */
  readonly publicSpaceKeyAgeSeconds?: number | undefined;
  /**
   * The one-file bridge served at `/bridge.mjs` (routes/bridge-file.ts): a file path; undefined
   * for the bundle the build put beside the compiled relay (none when run from its sources);
   * null for none.
   */
  readonly bridgeBundle?: string | null | undefined;
  /**
   * Passkey KEYS (spec/1-concepts.md "Passkeys"): false turns them off (PASSKEYS_UNAVAILABLE
   * everywhere). Otherwise `rpId` defaults to the public URL's host name and `origins` to its
   * origin (`passkeyPolicyOf`).
   */
  readonly passkeys?: { readonly rpId?: string | undefined; readonly origins?: readonly string[] | undefined } | false | undefined;
  /**
   * OAuth app sign-in (spec/1-concepts.md "App sign-in"): on unless false. It is also off when
   * passkeys are off, since a person approves an app with a passkey (`appSignInOn`).
   */
  readonly appSignIn?: boolean | undefined;
  /**
   * Client ID metadata documents may be fetched from http://127.0.0.1 and http://localhost
   * (tests only); never otherwise from a private, loopback or link-local address.
   */
  readonly allowLoopbackClientDocuments?: boolean | undefined;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8787;
export const DEFAULT_DATA_DIR = './data';
/** A day: the wait before a new KEY creates a public or oracle SPACE, unless the operator sets another. */
export const DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS = 24 * 60 * 60;
/** The longest wait an operator may set: a year. */
export const PUBLIC_SPACE_KEY_AGE_MAX_SECONDS = 365 * 24 * 60 * 60;

/** The key age this relay asks of a public or oracle SPACE's creator, in seconds. */
export function publicSpaceKeyAge(config: Pick<RelayConfig, 'publicSpaceKeyAgeSeconds'>): number {
  return config.publicSpaceKeyAgeSeconds ?? DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS;
}

/** `--public-space-key-age` / SVC_PUBLIC_SPACE_KEY_AGE: whole seconds from 0 to a year. */
export function parsePublicSpaceKeyAge(text: string): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) > PUBLIC_SPACE_KEY_AGE_MAX_SECONDS) {
    throw new Error(`--public-space-key-age: whole seconds from 0 to ${PUBLIC_SPACE_KEY_AGE_MAX_SECONDS}: ${text}`);
  }
  return Number(text);
}

/** Whether this relay offers OAuth app sign-in: the setting, and passkeys not turned off. */
export function appSignInOn(config: RelayConfig): boolean {
  return config.appSignIn !== false && config.passkeys !== false;
}

/**
 * The passkey policy: rp_id and origins an assertion must name, or null when passkeys are off.
 * Defaults come from the public URL, known only once the server listens (like `audienceOf`).
 */
export function passkeyPolicyOf(config: RelayConfig, listening?: { address: string; port: number }): PasskeyPolicy | null {
  if (config.passkeys === false) return null;
  const base = new URL(publicBaseUrl(config, listening));
  return { rpId: config.passkeys?.rpId ?? base.hostname, origins: config.passkeys?.origins ?? [base.origin] };
}

/** `--passkey-origin` / SVC_PASSKEY_ORIGINS: an origin exactly (scheme, host, port if not default). */
export function checkPasskeyOrigin(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== text) {
    throw new Error(`--passkey-origin: not an origin like https://relay.example: ${text}`);
  }
  return text;
}

/** `--passkey-rp-id` / SVC_PASSKEY_RP_ID: a lowercase host name, no scheme or port. */
export function checkPasskeyRpId(text: string): string {
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(text) || text.length > 253) {
    throw new Error(`--passkey-rp-id: not a lowercase host name like relay.example: ${text}`);
  }
  return text;
}

/** A public URL must be absolute http(s) with a host and nothing after the path. */
export function checkPublicUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--public-url: not an absolute URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error('--public-url: must start with https:// or http://');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new Error('--public-url: must not carry credentials, a query or a fragment');
  }
  return url;
}

/** Host text for a listening address (IPv6 in brackets). */
function hostPort(host: string, port: number): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return `${h}:${port}`;
}

/**
 * The public base URL without a trailing slash. `listening` is the real bound address once
 * the server listens; before that the configured host and port stand in.
 */
export function publicBaseUrl(config: RelayConfig, listening?: { address: string; port: number }): string {
  if (config.publicUrl !== undefined) return checkPublicUrl(config.publicUrl).href.replace(/\/$/, '');
  const host = listening?.address ?? config.host;
  const port = listening?.port ?? config.port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${hostPort(shown, port)}`;
}

/** The audience a token-challenge signature must name: the host (with port when not default). */
export function audienceOf(config: RelayConfig, listening?: { address: string; port: number }): string {
  return new URL(publicBaseUrl(config, listening)).host;
}
