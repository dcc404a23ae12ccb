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
  /**
   * A PostgreSQL database shared by any number of relay processes (`postgres://` URL), in
   * place of the SQLite file in `dataDir` (which still holds the service's key files, the same
   * in every process). Undefined: SQLite.
   */
  readonly database?: string | undefined;
  /** Address clients use, e.g. https://relay.example; undefined derives it from host:port. */
  readonly publicUrl: string | undefined;
  /** Development mode: the service certificate says `development: true`. */
  readonly dev: boolean;
  /**
   * How long a KEY must have been registered before it creates a public or oracle SPACE
   * (KEY_TOO_NEW), in seconds; 0 turns the wait off (a team's own relay, tests). Undefined is
   * DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS; the command line sets it always, to
   * `defaultPublicSpaceKeyAge` unless told (none on loopback without a public URL).
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
  /**
   * `/healthz` answers 503 when a disk holding the database or the checkpoint log has less free
   * space than this (`--min-free-disk`). Undefined is DEFAULT_MIN_FREE_DISK.
   */
  readonly minFreeDisk?: FreeDiskRule | undefined;
  /**
   * The most bytes of attached files one SPACE's shown posts hold (relay/files/; FILE_LIMIT).
   * Undefined is the newer API's 256 MiB; tests set less.
   */
  readonly attachedBytesPerSpace?: number | undefined;
  /**
   * Fastify's logger (pino, JSON lines on stdout): one line per request. Undefined turns the
   * logger off (tests and in-process apps); the relay's command line sets `info` unless told.
   */
  readonly logLevel?: LogLevel | undefined;
  /**
   * Prometheus metrics: served on their own listener (`--metrics-port`, on loopback unless
   * `--metrics-host`), and/or at `/metrics` on the public port to a bearer of `token` (the
   * secret of `--metrics-token-file`). Undefined: no metrics are kept or served.
   */
  readonly metrics?: MetricsSetting | undefined;
  /**
   * Origins whose SPACES this relay keeps mirrors of (`--mirror-from URL`, repeatable;
   * relay/routes/mirrors.ts), each reduced to its origin. The relay reads profiles and
   * capabilities from these addresses only. Undefined or empty: it keeps no mirrors.
   */
  readonly mirrorOrigins?: readonly string[] | undefined;
  /**
   * Witnesses whose cosignatures of this relay's SPACE checkpoints are accepted and served
   * (`--accept-witnesses name=base64key,...`; relay/tlog/settings.ts). Undefined or empty: none.
   */
  readonly acceptedWitnesses?: readonly { readonly name: string; readonly publicKey: Uint8Array }[] | undefined;
  /**
   * Witness mode (`--witness --witness-of URL`): follow, check and cosign SPACES of other relays
   * (relay/witness/). Undefined: this relay witnesses nothing.
   */
  readonly witness?: { readonly targets: readonly string[]; readonly intervalMs: number } | undefined;
}

/**
 * How much free space a disk must keep: `bytes`, or `percent` of the file system; when both are
 * given the smaller of the two counts (so the default suits a small disk and a large one).
 */
export interface FreeDiskRule {
  readonly bytes?: number | undefined;
  readonly percent?: number | undefined;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface MetricsSetting {
  /** Their own listener; undefined for none. */
  readonly listen?: { readonly host: string; readonly port: number } | undefined;
  /** `/metrics` on the public port, to `Authorization: Bearer <token>` only; undefined for none. */
  readonly token?: string | undefined;
}

/** 1 GiB, or 5% of the file system when that is smaller. */
export const DEFAULT_MIN_FREE_DISK: FreeDiskRule = { bytes: 1024 ** 3, percent: 5 };
export const DEFAULT_METRICS_HOST = '127.0.0.1';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8787;
export const DEFAULT_DATA_DIR = './data';
/** A day: the wait before a new KEY creates a public or oracle SPACE, unless the operator sets another. */
export const DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS = 24 * 60 * 60;
/** The longest wait an operator may set: a year. */
export const PUBLIC_SPACE_KEY_AGE_MAX_SECONDS = 365 * 24 * 60 * 60;

/**
 * Whether `host` names this machine only: 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) or
 * localhost. A relay that listens there and has no public URL serves its own machine only.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || /^(0{0,4}:){1,7}0{0,3}1$/.test(h)) return true;
  const v4 = /^(?:::ffff:)?(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.exec(h);
  return v4 !== null && v4[1] === '127';
}

/**
 * The key age when the operator sets none (`--public-space-key-age`): none for a relay that
 * listens on loopback only and has no public URL, where the KEYS are this machine's own (the
 * wait defends a public relay against KEYS made to spam it); a day for any other.
 */
export function defaultPublicSpaceKeyAge(config: Pick<RelayConfig, 'host' | 'publicUrl'>): number {
  return config.publicUrl === undefined && isLoopbackHost(config.host) ? 0 : DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS;
}

/** The key age this relay asks of a public or oracle SPACE's creator, in seconds. */
export function publicSpaceKeyAge(config: Pick<RelayConfig, 'publicSpaceKeyAgeSeconds'>): number {
  return config.publicSpaceKeyAgeSeconds ?? DEFAULT_PUBLIC_SPACE_KEY_AGE_SECONDS;
}

/** `--database` / SVC_DATABASE_URL: a postgres:// or postgresql:// URL. */
export function checkDatabaseUrl(text: string): string {
  if (!/^postgres(ql)?:\/\/./i.test(text)) {
    throw new Error(`--database: not a PostgreSQL URL like postgres://user@host:5432/svc: ${text.replace(/\/\/[^@/]*@/, '//…@')}`);
  }
  return text;
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

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/**
 * `--min-free-disk` / SVC_MIN_FREE_DISK: a size (`2GiB`, `500MB`, `1073741824`) or a share of
 * the disk (`5%`); `0` turns the check off.
 */
export function parseMinFreeDisk(text: string): FreeDiskRule {
  const percent = /^(\d{1,2}(?:\.\d{1,3})?)%$/.exec(text);
  if (percent) return { percent: Number(percent[1]) };
  const size = /^(\d{1,16})\s*([a-z]{1,3})?$/i.exec(text);
  const unit = SIZE_UNITS[(size?.[2] ?? 'b').toLowerCase()];
  if (size && unit !== undefined && Number(size[1]) * unit <= Number.MAX_SAFE_INTEGER) return { bytes: Number(size[1]) * unit };
  throw new Error(`--min-free-disk: a size like 2GiB, 500MB or 1073741824 (bytes), or a share like 5%: ${text}`);
}

/** The free bytes `rule` asks of a file system of `total` bytes (0: no minimum). */
export function minFreeBytes(rule: FreeDiskRule, total: number): number {
  const asked = [rule.bytes, rule.percent === undefined ? undefined : Math.ceil((total * rule.percent) / 100)];
  const given = asked.filter((n): n is number => n !== undefined);
  return given.length === 0 ? 0 : Math.min(...given);
}

/** `--log-level` / SVC_LOG_LEVEL: one of pino's levels, or silent. */
export function parseLogLevel(text: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === text);
  if (level === undefined) throw new Error(`--log-level: one of ${LOG_LEVELS.join(', ')}: ${text}`);
  return level;
}
