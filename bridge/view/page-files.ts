/**
 * The files of the people's view (HTML, CSS, the page's own modules) as `svc-bridge view` serves
 * them: the same folder the relay serves its `/view/` from, `relay/web/view/` (one page for both
 * hosts; the page asks `/view/host.json` which one it is on). The bridge reads it from disk, from
 * the installed package or a checkout: the package carries `relay/web/` beside `dist/`, and the
 * build may copy the folder into `dist/`. A bridge that is one file alone (fetched as
 * `/bridge.mjs`, or inside an MCP Bundle) has no page beside it; `--page-dir` names the folder.
 *
 * The page is never fetched from the relay: it holds the session and shows what only this
 * machine opens, so it must be code from this installation, not code the relay serves.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Where the folder is, from this module: `dist/` (the bundle), `dist/bridge/view/` (tsc) or `bridge/view/` (the sources). */
const PAGE_FOLDER = join('relay', 'web', 'view');
const LEVELS_UP = 4;

function isDirWithIndex(dir: string): boolean {
  try {
    return statSync(join(dir, 'index.html')).isFile();
  } catch {
    return false;
  }
}

/** The view's folder nearest above `from` (a module URL) holding an index.html, or undefined. */
export function findPageDir(from: string = import.meta.url): string | undefined {
  let dir = dirname(fileURLToPath(from));
  for (let i = 0; i <= LEVELS_UP; i++) {
    const candidate = join(dir, PAGE_FOLDER);
    if (isDirWithIndex(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** Whether `dir` can serve the view (it holds index.html). */
export function isPageDir(dir: string): boolean {
  return isDirWithIndex(dir);
}

const SEGMENT_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * The file the page asks for at `/view/<rest>` (`rest` as it came in the path), with its type; the
 * page itself for `''` and for a path whose last segment names no file type (a view of the page
 * addressed by path). Undefined for anything outside the folder, a dot file, an unknown type or a
 * file that is not there.
 */
export function pageFile(dir: string, rest: string): { bytes: Buffer; type: string } | undefined {
  const segments = rest === '' ? [] : rest.split('/');
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  if (segments.length > 8 || !segments.every((s) => SEGMENT_RE.test(s))) return undefined;
  const last = segments[segments.length - 1];
  const wanted = last === undefined || !last.includes('.') ? ['index.html'] : segments;
  const root = resolve(dir);
  const file = resolve(root, ...wanted);
  if (!file.startsWith(root + sep)) return undefined;
  const type = TYPES[extname(file).toLowerCase()];
  if (type === undefined) return undefined;
  try {
    if (!statSync(file).isFile()) return undefined;
    return { bytes: readFileSync(file), type };
  } catch {
    return undefined;
  }
}
