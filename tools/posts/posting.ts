/**
 * The posting and reading half of the bridge, its tools, resources and prompts and what it keeps
 * and checks (spec/2-endpoints.md "Connector"; tools/verify/verify.ts, tools/cache/cursors.ts): `svc_post`,
 * `svc_read_space`, `svc_get`, `svc_mailbox`, `svc_seek`, the post resources and templates,
 * resource subscriptions and the run-routine prompts.
 *
 * `createPosting(deps)` makes the one context they share on a server instance (tools/server.ts
 * `registerPosting`), which svc_whoami shares too: the verifier (capabilities, pinned root,
 * checkpoint history) and a memo of SPACE ids (a signed post names its SPACE's uuid). Nothing in it is MCP session
 * state: SPACE names and cursors come in tool arguments or from the cache.
 */
import type { BridgeDeps } from '../deps.js';
import { BridgeError } from '../errors.js';
import { Verifier } from '../verify/verify.js';

/** The deps the posting tools read: BridgeDeps, with `privateSalt`, `unsigned` and `listen`. */
export type PostingDeps = BridgeDeps;

export interface Posting {
  readonly deps: PostingDeps;
  readonly verifier: Verifier;
  /** The SPACE's uuid (spaces.get), remembered for the run; `fresh` reads it again. */
  spaceId(name: string, fresh?: boolean): Promise<string>;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function createPosting(deps: PostingDeps): Posting {
  const verifier = new Verifier(deps);
  const ids = new Map<string, string>();
  return {
    deps,
    verifier,
    async spaceId(name, fresh = false) {
      const known = ids.get(name);
      if (known !== undefined && !fresh) return known;
      const res = await deps.api.request({ path: `/v1/spaces/${encodeURIComponent(name)}`, auth: 'opt' });
      const body = res.body as Record<string, unknown> | undefined;
      const id = body?.space_id;
      if (typeof id !== 'string' || !UUID_RE.test(id)) {
        throw new BridgeError('BAD_RESPONSE', 'the relay answered something the protocol does not allow: spaces.get has no space_id', 'Check that SVC_API points at an svc relay.');
      }
      ids.set(name, id);
      return id;
    },
  };
}
