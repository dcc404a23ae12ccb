/**
 * The addresses a connector live stream may follow (spec/1-concepts.md "Connector live updates"):
 * `svc://mailbox`, `svc://spaces/{name}`, `svc://spaces/{name}/latest`,
 * `svc://spaces/{name}/dossier`, `svc://spaces/{name}/document` and `svc://posts/{id}`, up to
 * SUBSCRIPTIONS_PER_STREAM a stream. Input is attacker-controlled: anything else is left out.
 *
 * The SPACE forms are the bridge's own (tools/resources/subscriptions.ts `watchOf`), so both programs
 * read an address the same way; the relay adds `svc://posts/{id}`.
 */
import { SUBSCRIPTIONS_PER_STREAM } from '../../../shared/limits.js';
import { watchOf, type SpaceView } from '../../../tools/resources/subscriptions.js';

const POST_RE = /^svc:\/\/posts\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** What one address follows. */
export type Followed =
  | { readonly uri: string; readonly on: 'mailbox' }
  | { readonly uri: string; readonly on: 'space'; readonly space: string; readonly view: SpaceView | 'latest' }
  | { readonly uri: string; readonly on: 'post'; readonly postId: string };

/** The followed form of an address, or undefined when a stream cannot follow it. */
export function followedOf(uri: string): Followed | undefined {
  const post = POST_RE.exec(uri);
  if (post !== null) return { uri, on: 'post', postId: post[1]! };
  const w = watchOf(uri);
  if (w === undefined) return undefined;
  if (!('space' in w)) return { uri, on: 'mailbox' };
  return { uri, on: 'space', space: w.space, view: uri.endsWith('/latest') ? 'latest' : w.view };
}

/** The addresses asked for that a stream can follow: known forms, each once, at most 16, in the order asked. */
export function followable(requested: readonly unknown[]): Followed[] {
  const seen = new Set<string>();
  const out: Followed[] = [];
  for (const u of requested) {
    if (typeof u !== 'string' || seen.has(u)) continue;
    const f = followedOf(u);
    if (f === undefined) continue;
    seen.add(u);
    out.push(f);
    if (out.length === SUBSCRIPTIONS_PER_STREAM) break;
  }
  return out;
}
