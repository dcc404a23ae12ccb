/**
 * Sealed items as the tools show them (protocol/sealed.md §10): a page's sealed posts opened
 * through the program's Sealing (tools/ports.ts; the bridge's, bridge/sealed/sealing.ts `openPosts`),
 * or shut saying why where there is none (the relay's connector, a bridge without its KEY's
 * encryption key); the line a post view shows for a sealed item, the loud lines for key records
 * the trust rules refused, and how far a cursor may move past items that may open later.
 */
import type { BridgeDeps } from '../deps.js';
import { BridgeError } from '../errors.js';
import type { Sealing } from '../ports.js';
import { sealedNeedsBridge, servedByRelay } from '../served.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The size and generation a sealed item shows, opened or not. */
export function sealedSummary(p: Obj): Obj {
  const s = p.sealed as Obj;
  return { generation: s.generation, bytes: s.bytes };
}

/** A sealed item that stays shut: nothing of its words, only why (and whether it may open later). */
export function notOpened(p: Obj, why: string, how: { retry: boolean; alarm: boolean; fix?: string | undefined } = { retry: false, alarm: false }): Obj {
  const sealed: Obj = { ...sealedSummary(p), opened: false, not_opened: why, retry: how.retry };
  if (how.alarm) sealed.relay_refused = true;
  if (how.fix !== undefined) sealed.fix = how.fix;
  return { ...p, title: null, ...('body' in p ? { body: null } : {}), ...('snippet' in p ? { snippet: null } : {}), sealed };
}

/** The bridge's Sealing, or a refusal when it was built without one (no KEY seed at hand). */
export function needSealing(deps: BridgeDeps, what = 'sealed'): Sealing {
  if (deps.sealing === undefined) {
    if (servedByRelay(deps)) throw sealedNeedsBridge(what);
    throw new BridgeError('CONFIG', "this bridge was started without its KEY's encryption key, so it cannot seal or open", 'Run the bridge with its key directory (svc-bridge serve).');
  }
  return deps.sealing;
}

/**
 * Open the sealed items of a page read by a tool (see `Sealing.openPosts`). Posts that are not
 * sealed come back as they were; without a Sealing, sealed ones say why they stay shut.
 */
export async function openSealed(deps: BridgeDeps, posts: readonly Obj[]): Promise<Obj[]> {
  // A hidden post shows no `sealed` member; the Sealing still sees it, to take it out of the local index.
  if (!posts.some((p) => isObj(p.sealed) || (deps.sealing?.index !== undefined && isObj(p.unavailable)))) return [...posts];
  if (deps.sealing === undefined) {
    return posts.map((p) => (isObj(p.sealed) ? notOpened(p, "this bridge was started without its KEY's encryption key", { retry: true, alarm: false }) : p));
  }
  return deps.sealing.openPosts(posts);
}

/**
 * The line a post view shows for a sealed item (tools/posts/post-view.ts). The reason an item
 * stayed shut is built from values the relay served, so `fence` wraps it like peer text.
 */
export function sealedLine(sealed: Obj, fence: (field: string, value: unknown) => string): string {
  const g = typeof sealed.generation === 'number' ? sealed.generation : '?';
  if (sealed.opened === true) return `sealed: opened on this machine (generation ${g}); the relay holds only the ciphertext`;
  if (sealed.opened === false) {
    return `sealed: COULD NOT BE OPENED, nothing of it is shown. Why: ${fence('not_opened', typeof sealed.not_opened === 'string' ? sealed.not_opened : 'unknown')}`;
  }
  return `sealed: generation ${g}, ${typeof sealed.bytes === 'number' ? sealed.bytes : '?'} bytes of ciphertext, not opened`;
}

/** Open the sealed posts inside mailbox envelopes (`post` members). */
export async function openEnvelopes(deps: BridgeDeps, envelopes: readonly Obj[]): Promise<Obj[]> {
  const posts = envelopes.map((e) => (isObj(e.post) ? e.post : undefined));
  if (!posts.some((p) => p !== undefined && isObj(p.sealed))) return [...envelopes];
  const opened = await openSealed(deps, posts.filter((p): p is Obj => p !== undefined));
  let i = 0;
  return envelopes.map((e) => (isObj(e.post) ? { ...e, post: opened[i++] } : e));
}

/** The loud lines at the top of an answer whose sealed items the trust rules kept shut. */
export function sealedAlarm(posts: readonly Obj[], fence: (field: string, value: unknown) => string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of posts) {
    const s = isObj(p.sealed) ? p.sealed : undefined;
    if (s?.relay_refused !== true || typeof s.not_opened !== 'string' || seen.has(s.not_opened)) continue;
    seen.add(s.not_opened);
    const fix = typeof s.fix === 'string' ? ` What to do: ${s.fix}` : '';
    out.push(`!!! The relay's key records for this sealed SPACE were refused; nothing sealed in it is opened until it shows them as they were: ${fence('not_opened', s.not_opened)}${fix}`);
  }
  return out;
}

/**
 * Where a stream cursor may move after a page: not past the first sealed item that could not
 * be opened for a reason that may pass (no key yet, key records refused), so it is read again;
 * else the page's `next_after`. Positions are decimal strings.
 */
export function cursorAfterSealed(posts: readonly Obj[], nextAfter: unknown): { nextAfter: unknown; heldAt: string | undefined } {
  const stuck = posts.find((p) => isObj(p.sealed) && p.sealed.opened === false && p.sealed.retry === true && typeof p.seq === 'string' && /^[1-9][0-9]{0,19}$/.test(p.seq));
  if (stuck === undefined) return { nextAfter, heldAt: undefined };
  return { nextAfter: (BigInt(stuck.seq as string) - 1n).toString(), heldAt: stuck.seq as string };
}
