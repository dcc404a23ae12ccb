/**
 * What makes a followed address change, read from the relay's own wake-ups (relay/posts/notify.ts:
 * a post landed in a SPACE, a row was delivered to a KEY's mailbox), never by polling:
 *
 * - `svc://mailbox`: the KEY's mailbox head moved;
 * - `svc://spaces/{name}` and `.../latest`: the SPACE's head moved (a post landed);
 * - `.../dossier`: a post of kind `dossier` by this KEY landed (the resource is its newest dossier);
 * - `.../document`: the oracle SPACE's current version changed (a `version` or a `go` made one
 *   current; a proposal left waiting changes nothing);
 * - `svc://posts/{id}`: the post was hidden or shown again.
 *
 * Each follower waits on its topic, and on every wake-up first waits again, then reads where its
 * topic stands (synchronously, from the store): a wake-up is raised only after the commit that
 * caused it, so a change committed while one check runs wakes the next wait and nothing is missed.
 * A wake-up with no change (a rolled-back write) tells nothing. Nothing read here leaves the relay:
 * the stream tells the address only. Before telling a change of a SPACE that not everyone reads,
 * a follower asks whether its KEY still may (`mayTell`, streams.ts `keeps`): a change read after
 * a loss of access committed is never told, whether or not the stream has ended yet.
 */
import type { RelayContext } from '../../context.js';
import { notifierFor } from '../../posts/notify.js';
import type { Followed } from './addresses.js';

/** A follower waits at most this long before reading again unwoken (it only re-reads). */
const WAIT_MS = 60_000;
/** Posts read per page when looking for a new dossier among the posts that landed. */
const PAGE = 200;

type SpaceFollowed = Extract<Followed, { on: 'space' }>;
type PostFollowed = Extract<Followed, { on: 'post' }>;

/** What one stream follows in one SPACE: its SPACE addresses and the posts of that SPACE it names. */
export interface SpaceFollow {
  readonly spaceRowId: number;
  readonly addresses: readonly SpaceFollowed[];
  readonly posts: readonly PostFollowed[];
}

async function follow(wait: (signal: AbortSignal) => Promise<unknown>, check: () => void, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const woken = wait(signal);
    check();
    await woken;
  }
}

/** Follow the KEY's mailbox until `signal` aborts. */
export async function followMailbox(ctx: RelayContext, peerId: string, notify: (uri: string) => void, signal: AbortSignal): Promise<void> {
  const notifier = notifierFor(ctx.store.db);
  let head = await ctx.store.mailbox.head(peerId);
  return follow(
    (s) => notifier.waitMailbox(peerId, WAIT_MS, s),
    async () => {
      const now = await ctx.store.mailbox.head(peerId);
      if (now === head) return;
      head = now;
      notify('svc://mailbox');
    },
    signal,
  );
}

/** Whether any post after `after` up to `head` is a dossier by `peerId`. */
async function dossierLanded(ctx: RelayContext, spaceRowId: number, after: number, head: number, peerId: string): Promise<boolean> {
  for (let from = after; from < head; ) {
    const page = await ctx.store.posts.list(spaceRowId, from, PAGE);
    if (page.length === 0) return false;
    if (page.some((p) => p.kind === 'dossier' && p.author === peerId)) return true;
    from = page[page.length - 1]!.seq;
  }
  return false;
}

/**
 * Follow one SPACE's addresses and posts for the KEY until `signal` aborts; `mayTell` (given for
 * a private or sealed SPACE) is asked before each change is told.
 */
export async function followSpace(
  ctx: RelayContext,
  f: SpaceFollow,
  peerId: string,
  notify: (uri: string) => void,
  signal: AbortSignal,
  mayTell?: () => Promise<boolean>,
): Promise<void> {
  const { store } = ctx;
  const notifier = notifierFor(store.db);
  const currentVersion = async () => (await store.oracle.current(f.spaceRowId))?.postId ?? null;
  const hiddenOf = async (postId: string) => (await store.posts.byPostId(postId))?.hiddenAt !== null;
  let head = (await store.posts.head(f.spaceRowId)).seq;
  let current = f.addresses.some((a) => a.view === 'document') ? await currentVersion() : null;
  const hidden = new Map(await Promise.all(f.posts.map(async (p) => [p.postId, await hiddenOf(p.postId)] as const)));
  return follow(
    (s) => notifier.waitSpace(f.spaceRowId, WAIT_MS, s),
    async () => {
      const told: string[] = [];
      const now = (await store.posts.head(f.spaceRowId)).seq;
      if (now !== head) {
        const before = head;
        head = now;
        let dossier: boolean | undefined;
        for (const a of f.addresses) {
          if (a.view === 'posts' || a.view === 'latest') told.push(a.uri);
          else if (a.view === 'dossier') {
            dossier ??= await dossierLanded(ctx, f.spaceRowId, before, now, peerId);
            if (dossier) told.push(a.uri);
          } else {
            const v = await currentVersion();
            if (v !== current) {
              current = v;
              told.push(a.uri);
            }
          }
        }
      }
      for (const p of f.posts) {
        const h = await hiddenOf(p.postId);
        if (h === await hidden.get(p.postId)) continue;
        hidden.set(p.postId, h);
        told.push(p.uri);
      }
      if (told.length === 0 || (mayTell !== undefined && !await mayTell())) return;
      for (const uri of told) notify(uri);
    },
    signal,
  );
}
