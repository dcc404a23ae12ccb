/**
 * Invite and hand-over links as the relay reads them, and joining through one: shared by
 * join (`POST /v1/spaces/{name}/join`), join.link (`POST /v1/join`), invites.look and the
 * keys.verify `invite` hook (spec/2-endpoints.md "Invites, requests, joining, hand-over").
 *
 * Codes (protocol/labels.md): invite `svc_inv_` + 32 hex, hand-over `svc_hand_` + 32 hex, each
 * from 16 random bytes, stored only as SHA-256 of the whole code text. A link is
 * `{base_url}/join/<code>`. Links are only read, never visited: a link must name this
 * service's own origin and path, with nothing after the code (spec: "only links on the service
 * website are read"). Everything here reads attacker-controlled text.
 *
 * Using or looking at a link spends from a bucket of 10,000 an hour per KEY, failures
 * included (Limits "links").
 */
import { SvcError } from '../shared/errors.js';
import { toHex, utf8 } from '../shared/encoding.js';
import { sha256 } from '../shared/hash.js';
import { BRAND_WORD } from '../shared/vocabulary.js';
import type { RelayContext } from './context.js';
import type { Random } from './ids.js';
import type { SpaceRow } from './store/spaces.js';

export const INVITE_PREFIX = `${BRAND_WORD}_inv_`;
export const HAND_OVER_PREFIX = `${BRAND_WORD}_hand_`;
const INVITE_CODE_RE = new RegExp(`^${INVITE_PREFIX}[0-9a-f]{32}$`);
const HAND_OVER_CODE_RE = new RegExp(`^${HAND_OVER_PREFIX}[0-9a-f]{32}$`);

/** Longest link or code text read (a link is a URL of the service plus about 40 characters). */
export const LINK_MAX_CHARS = 2048;

export type LinkKind = 'invite' | 'hand_over';

export interface ParsedLink {
  kind: LinkKind;
  code: string;
  /** SHA-256 of the code text: what the tables hold. */
  hash: Uint8Array;
}

/** SHA-256 over the UTF-8 code text (protocol/labels.md "stored as H(code)"). */
export function codeHash(code: string): Uint8Array {
  return sha256(utf8(code));
}

/** A fresh code of either kind from 16 random bytes. */
export function newCode(kind: LinkKind, random: Random): string {
  return `${kind === 'invite' ? INVITE_PREFIX : HAND_OVER_PREFIX}${toHex(random(16))}`;
}

/** The link that carries a code: `{base_url}/join/<code>`. */
export function linkFor(baseUrl: string, code: string): string {
  return `${baseUrl}/join/${code}`;
}

function fromCode(code: string): ParsedLink | undefined {
  if (INVITE_CODE_RE.test(code)) return { kind: 'invite', code, hash: codeHash(code) };
  if (HAND_OVER_CODE_RE.test(code)) return { kind: 'hand_over', code, hash: codeHash(code) };
  return undefined;
}

/**
 * Read a link or a bare code (attacker-controlled). INVITE_INVALID for anything that is not a
 * code of ours or a link to this service's `/join/<code>`.
 */
export function parseLink(text: string, baseUrl: string, field = 'link'): ParsedLink {
  if (text.length > LINK_MAX_CHARS) throw new SvcError('INVITE_INVALID', `${field}: too long to be a link`);
  const bare = fromCode(text);
  if (bare) return bare;
  let url: URL;
  let base: URL;
  try {
    url = new URL(text);
    base = new URL(baseUrl);
  } catch {
    throw new SvcError('INVITE_INVALID', `${field}: neither a link nor a code`);
  }
  const prefix = `${base.pathname.replace(/\/$/, '')}/join/`;
  if (url.origin !== base.origin || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new SvcError('INVITE_INVALID', `${field}: only links to ${base.origin}${prefix} are read`);
  }
  if (!url.pathname.startsWith(prefix)) throw new SvcError('INVITE_INVALID', `${field}: only links to ${base.origin}${prefix} are read`);
  const parsed = fromCode(url.pathname.slice(prefix.length));
  if (!parsed) throw new SvcError('INVITE_INVALID', `${field}: the code is not one this service makes`);
  return parsed;
}

/**
 * Whether a notice from `from` may still reach `to`: 200 deliveries an hour between two KEYS,
 * 1,000,000 notices an hour to one KEY (Limits "deliveries KEY to KEY", "notices to one KEY").
 * Past either, the write stands and the notice is left out (spec "Mailbox"). With every rate
 * limit off (benchmarks only) every notice is delivered, so a benchmark measures the fan-out.
 */
export async function mayNotify(ctx: RelayContext, from: string, to: string): Promise<boolean> {
  if (!ctx.limiter.enabled) return true;
  const now = ctx.clock();
  const { deliveriesBetweenKeys, noticesToKey } = ctx.limiter.buckets;
  if ((await deliveriesBetweenKeys.spend(`${from}>${to}`, now)).wait > 0) return false;
  return (await noticesToKey.spend(to, now)).wait === 0;
}

/** Spend one link use or look for `peer` (RATE_LIMITED past 10,000 an hour). */
export async function takeLinkUse(ctx: RelayContext, peer: string): Promise<void> {
  await ctx.limiter.take('linkUses', peer);
}

/** The membership a join answers (keys.verify `joined`, join, join.link, hand_over.accept). */
export interface Joined {
  name: string;
  role: string;
  tags: string[];
  /** `joined` (admitted now), `member` (already held a role), `handed_over` (took a role over). */
  state: 'joined' | 'member' | 'handed_over';
  changed: boolean;
  /** The audit log revision after the join, as a decimal string. */
  revision: string;
  handed_over_by?: string;
}

export function assertOpen(space: SpaceRow): void {
  if (space.status === 'closed') {
    throw new SvcError('SPACE_CLOSED', `${space.name} is closed${space.replacedBy ? `; it continues in ${space.replacedBy}` : ''}`);
  }
}

/** Accept a hand-over offer as `peer` and answer it as a join. */
export async function takeHandOver(ctx: RelayContext, space: SpaceRow, offerId: string, peer: string, viaCode: boolean): Promise<Joined> {
  assertOpen(space);
  const a = await ctx.store.handOvers.accept(space, offerId, peer, ctx.clock(), viaCode);
  return {
    name: space.name,
    role: a.role,
    tags: a.tags,
    state: 'handed_over',
    changed: true,
    revision: String(a.revision),
    handed_over_by: a.giver,
  };
}

/**
 * Join through a link as `peer`: an invite link admits, a hand-over link takes over the maker's
 * role. `only` restricts it to one SPACE (join by name): a link of another SPACE is
 * INVITE_INVALID. The caller has spent the link use.
 */
export async function joinByLink(ctx: RelayContext, peer: string, link: ParsedLink, only?: SpaceRow): Promise<Joined> {
  const now = ctx.clock();
  if (link.kind === 'hand_over') {
    const offer = await ctx.store.handOvers.byCodeHash(link.hash, now);
    const space = offer && await ctx.store.spaces.byRowId(offer.spaceRowId);
    if (!offer || !space || (only && only.id !== space.id)) throw new SvcError('INVITE_INVALID', 'link: no hand-over link of this service has this code');
    return await takeHandOver(ctx, space, offer.id, peer, true);
  }
  const invite = await ctx.store.invites.byCodeHash(link.hash);
  const space = invite && await ctx.store.spaces.byRowId(invite.spaceRowId);
  if (!invite || !space || (only && only.id !== space.id)) throw new SvcError('INVITE_INVALID', 'link: no invite link of this service has this code');
  assertOpen(space);
  const j = await ctx.store.invites.join(space, invite.id, peer, now);
  return { name: space.name, role: j.role, tags: j.tags, state: j.state, changed: j.changed, revision: String(j.revision) };
}
