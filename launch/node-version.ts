/**
 * The Node.js check both programs run before anything else. Each program's entry
 * (relay/main.ts, bridge/main.ts) imports only this module, statically, and loads the program
 * itself with a dynamic import once the check passes: a static import would load what an older
 * Node lacks first (the relay's better-sqlite3, whose prebuilt binary crashes it with a bare
 * "Segmentation fault"; the bridge's `node:sqlite`, which it does not have) before any line of
 * ours could run.
 *
 * On an older Node the check does not just stop: it runs the program again on Node 24 from the
 * npm registry, fetched once into npm's cache (launch/recent-node.mjs, plain JavaScript so that
 * npm's scripts use it without a build). So this file must stay loadable by old Node versions:
 * no imports of the program, and no syntax newer than what Node 18 parses.
 */
export {
  EXIT_NODE_TOO_OLD,
  NODE_FETCHED,
  NODE_NEEDED,
  cannotRunLine,
  nodeIsRecentEnough,
  relaunchLine,
  requireNode,
  shellWord,
} from './recent-node.mjs';
