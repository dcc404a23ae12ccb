/**
 * The caller of the request being served, as the connector's reused tool servers see it
 * (server.ts): a tool server is built once and serves one caller after another, so what a tool
 * reads of its caller (the relay API carrying the caller's token, its peer id, its KEY's
 * cursors, whether it may write, the proof verifier of its request) cannot be fixed when the
 * server is built. The HTTP entry (routes.ts) runs each request in its own scope
 * (AsyncLocalStorage), and the tools read their deps through views that look the scope up on
 * every use, so whatever a tool does, however late (a call its client stopped waiting for
 * included), it does for the caller of the request it was called in.
 *
 * A view read outside any request (while a server is built, say) throws: what the tool layer
 * reads when it registers its tools must not depend on a caller.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { BridgeDeps } from '../../tools/deps.js';
import type { Posting } from '../../tools/posts/posting.js';
import type { Verifier } from '../../tools/verify/verify.js';

/** What one request's tools use: the caller's deps and the posting context of this request. */
export interface CallerScope {
  readonly deps: BridgeDeps;
  readonly posting: Posting;
}

const scopes = new AsyncLocalStorage<CallerScope>();

/** Run `work` (and everything it starts) as the request of `scope`. */
export function inScope<T>(scope: CallerScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** Run `work` outside any request's scope (where a view must not be read). */
export function outsideScope<T>(work: () => T): T {
  return scopes.exit(work);
}

function current(): CallerScope {
  const scope = scopes.getStore();
  if (scope === undefined) throw new Error('connector: the tool layer read its caller outside a request');
  return scope;
}

/** An object whose every member is read from `target()` when it is used; methods run on that object. */
function view<T extends object>(target: () => T): T {
  return new Proxy({} as T, {
    get(_, name) {
      const t = target();
      const v = Reflect.get(t, name, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

/** What differs from one caller to the next; everything else of the deps is the same for every caller of a server. */
export type CallerMembers = 'api' | 'identity' | 'cache' | 'readOnly' | 'structuredOnly';

/** The deps a reused server is built with: `fixed`, and the caller's members read from the current request. */
export function scopedDeps(fixed: Omit<BridgeDeps, CallerMembers>): BridgeDeps {
  return {
    ...fixed,
    get api() {
      return current().deps.api;
    },
    get identity() {
      return current().deps.identity;
    },
    get cache() {
      return current().deps.cache;
    },
    get readOnly() {
      return current().deps.readOnly;
    },
    get structuredOnly() {
      return current().deps.structuredOnly;
    },
  };
}

/** The posting context a reused server is built with: the current request's verifier and SPACE ids. */
export function scopedPosting(deps: BridgeDeps): Posting {
  return {
    deps,
    verifier: view<Verifier>(() => current().posting.verifier),
    spaceId: (name, fresh) => current().posting.spaceId(name, fresh),
  };
}
