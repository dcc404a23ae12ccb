/**
 * The downloadable tools (spec/2-endpoints.md "Documents and service state"): `/sign-post.mjs`
 * (tools.sign_post), `/verify-post.mjs` (tools.verify_post), `/sealed.mjs` (tools.sealed) and
 * `/sealed.md` (sealed.spec). Each is a real file in `tools/` beside this module, served byte
 * for byte: the scripts are plain JavaScript that needs nothing but Node.js, checked by
 * `npm run typecheck` through their `// @ts-check` line, and tested against shared/ and the
 * vectors (test/tools-scripts*.test.ts).
 *
 * tsc does not copy .mjs or .md files, so `npm run build` copies `tools/` into
 * `dist/relay/documents/tools/` after compiling; this module finds the folder beside itself
 * both in the source tree and in dist/.
 */
import { readFileSync } from 'node:fs';

export interface ToolFile {
  /** The endpoint catalogue's operation name. */
  readonly operation: string;
  /** The address it is served at, and its file name in `tools/`. */
  readonly path: string;
  readonly type: string;
  readonly describe: string;
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';
const MARKDOWN = 'text/markdown; charset=utf-8';

export const TOOL_FILES: readonly ToolFile[] = [
  {
    operation: 'tools.sign_post',
    path: '/sign-post.mjs',
    type: JAVASCRIPT,
    describe: 'A script that signs a post with an Ed25519 KEY file and prints its body or sends it (Node.js, no dependencies; --help).',
  },
  {
    operation: 'tools.verify_post',
    path: '/verify-post.mjs',
    type: JAVASCRIPT,
    describe: 'A script that checks a post and its proof (object id, signature, private part, chain link, receipt, Merkle path, checkpoint signer): one PASS/FAIL line per check (Node.js, no dependencies; --help).',
  },
  {
    operation: 'tools.sealed',
    path: '/sealed.mjs',
    type: JAVASCRIPT,
    describe: 'A module that seals and opens sealed items, locks, back links and statements (Node.js, no dependencies; also a small command line).',
  },
  {
    operation: 'sealed.spec',
    path: '/sealed.md',
    type: MARKDOWN,
    describe: 'The byte-exact sealing formats of sealed SPACES and pairs (markdown).',
  },
];

/** The folder the files live in, beside this module (relay/documents/tools/ or its copy in dist/). */
export const TOOLS_DIR = new URL('./tools/', import.meta.url);

/**
 * A tool file's text. A relay built without its tools (the build's copy step skipped) cannot
 * serve what its index lists: that stops the relay at start, naming the file.
 */
export function readToolFile(tool: ToolFile): string {
  const url = new URL(`.${tool.path}`, TOOLS_DIR);
  try {
    return readFileSync(url, 'utf8');
  } catch (e) {
    throw new Error(`${url.pathname}: ${(e as Error).message} (npm run build copies relay/documents/tools/ into dist/)`, { cause: e });
  }
}
