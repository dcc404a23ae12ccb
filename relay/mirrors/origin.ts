/**
 * What a mirror learns from its origin relay itself, never from the KEY that pushes: the
 * SPACE's public profile (spec/1-concepts.md "Visibility rules": the profile of every SPACE is
 * readable by anyone, so `space_id`, `owner` and `visibility` come without a token) and the
 * origin's capabilities (`protocol.service_root_key`, the root every checkpoint signer must be
 * certified by, and `protocol.passkeys`, the policy a passkey-signed post is checked under).
 *
 * The relay fetches only from the origins its operator listed (`--mirror-from`), so a KEY can
 * never make it fetch an address of the operator's own network. Answers are attacker-controlled
 * input: read with a size cap and a timeout, every member checked.
 */
import { isHex, isUuid } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import type { PasskeyPolicy } from '../../shared/passkey.js';

/** Longest answer read from an origin (a capabilities document is a few tens of KiB). */
const ORIGIN_ANSWER_MAX_BYTES = 1024 * 1024;
const ORIGIN_TIMEOUT_MS = 10_000;
/** How long a client waits before asking again when the origin could not be reached. */
const ORIGIN_RETRY_SECONDS = 30;

export interface OriginFacts {
  spaceId: string;
  name: string;
  owner: string;
  visibility: string;
  rootKey: string;
  passkeys: PasskeyPolicy | null;
}

/**
 * The origin named in a request, as an origin (scheme, host, port), when the operator allows
 * mirroring from it; INVALID_REQUEST otherwise, naming the ones allowed.
 */
export function allowedOrigin(value: string, allowed: readonly string[]): string {
  let origin: string;
  try {
    origin = new URL(value).origin;
  } catch {
    throw new SvcError('INVALID_REQUEST', 'origin: not an absolute http(s) address');
  }
  if (!allowed.includes(origin)) {
    throw new SvcError(
      'INVALID_REQUEST',
      allowed.length === 0
        ? 'origin: this relay keeps no mirrors (its operator allows origins with --mirror-from)'
        : `origin: this relay mirrors only from ${allowed.join(', ')}`,
    );
  }
  return origin;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function fetchJson(origin: string, path: string): Promise<{ status: number; body: unknown }> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${origin}${path}`, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(ORIGIN_TIMEOUT_MS),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.byteLength > ORIGIN_ANSWER_MAX_BYTES) throw new Error(`an answer over ${ORIGIN_ANSWER_MAX_BYTES} bytes`);
    text = new TextDecoder().decode(bytes);
  } catch (e) {
    throw new SvcError('BUSY', `origin ${origin} could not be read (${(e as Error).message})`, ORIGIN_RETRY_SECONDS);
  }
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new SvcError('BUSY', `origin ${origin} answered ${path} with something that is not JSON`, ORIGIN_RETRY_SECONDS);
  }
}

function readPasskeys(protocol: Obj): PasskeyPolicy | null {
  const p = protocol.passkeys;
  if (!isObject(p) || p.status !== 'available' || typeof p.rp_id !== 'string') return null;
  const origins = Array.isArray(p.origins) ? p.origins.filter((o): o is string => typeof o === 'string') : [];
  return origins.length === 0 ? null : { rpId: p.rp_id, origins };
}

/** The SPACE `name`'s profile and the origin's root key and passkey policy, read from `origin`. */
export async function readOrigin(origin: string, name: string): Promise<OriginFacts> {
  const profile = await fetchJson(origin, `/v1/spaces/${encodeURIComponent(name)}`);
  if (profile.status === 404) throw new SvcError('SPACE_NOT_FOUND', `name: origin ${origin} has no SPACE called ${JSON.stringify(name.slice(0, 64))}`);
  const p = profile.body;
  if (profile.status !== 200 || !isObject(p)) throw new SvcError('BUSY', `origin ${origin} answered the profile of ${name} with ${profile.status}`, ORIGIN_RETRY_SECONDS);
  if (!isUuid(p.space_id) || typeof p.owner !== 'string' || !isHex(p.owner, 32) || typeof p.visibility !== 'string' || p.name !== name) {
    throw new SvcError('BUSY', `origin ${origin} answered a profile of ${name} without space_id, owner, visibility and its name`, ORIGIN_RETRY_SECONDS);
  }
  const caps = await fetchJson(origin, '/v1/capabilities');
  const protocol = isObject(caps.body) && isObject(caps.body.protocol) ? caps.body.protocol : undefined;
  const root = protocol?.service_root_key;
  if (caps.status !== 200 || protocol === undefined || !isHex(root, 32)) {
    throw new SvcError('BUSY', `origin ${origin} publishes no service_root_key in its capabilities`, ORIGIN_RETRY_SECONDS);
  }
  return { spaceId: p.space_id as string, name, owner: p.owner, visibility: p.visibility, rootKey: root as string, passkeys: readPasskeys(protocol) };
}

/**
 * `--mirror-from URL` (repeatable) or `SVC_RELAY_MIRROR_FROM` (comma separated): the origins
 * this relay keeps mirrors of, each an absolute http(s) address reduced to its origin.
 */
export function parseMirrorOrigins(flags: readonly string[] | undefined, env: string | undefined): string[] {
  const given = flags ?? env?.split(',').map((o) => o.trim()).filter((o) => o !== '') ?? [];
  return given.map((text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error(`--mirror-from: not an absolute URL: ${text}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('--mirror-from: must start with https:// or http://');
    return url.origin;
  });
}
