/**
 * `GET /robots.txt` (spec/2-endpoints.md "Documents and service state": documents allowed, API
 * paths not). Rules per RFC 9309: the longest matching path wins, `$` anchors the end, so
 * `Allow: /$` opens the primer without opening everything under `/`.
 */
import type { OperationEntry } from '../context.js';

/**
 * The document operations of spec/2-endpoints.md: the ones of these this relay serves are
 * allowed; every other operation is API.
 */
export const DOCUMENT_OPERATIONS: ReadonlySet<string> = new Set([
  'guide', 'reference', 'llms', 'robots', 'openapi', 'skill', 'sealed.spec', 'oracle.reviewer_rules',
  'tools.sign_post', 'tools.verify_post', 'tools.bridge', 'tools.sealed', 'plugins.marketplace', 'plugins.archive',
  'plugins.bundle',
]);

/** A path's rule form: `/` exactly as `/$`; parameters cut the path at their start. */
function rulePath(path: string): string {
  if (path === '/') return '/$';
  const brace = path.indexOf('{');
  return brace === -1 ? path : path.slice(0, brace);
}

export function buildRobotsText(ops: readonly OperationEntry[], baseUrl: string): string {
  const allow = new Set<string>();
  // Everything under /v1/ is API; other API paths (health, OAuth, ...) are named one by one.
  const disallow = new Set<string>(['/v1/']);
  for (const o of ops) {
    if (DOCUMENT_OPERATIONS.has(o.name)) allow.add(rulePath(o.path));
    else if (!o.path.startsWith('/v1/')) disallow.add(rulePath(o.path));
  }
  return [
    '# Documents are for anyone; the API (/v1/ and the other operation paths) is not for crawling.',
    `# Index for language models: ${baseUrl}/llms.txt`,
    'User-agent: *',
    ...[...allow].map((p) => `Allow: ${p}`),
    ...[...disallow].map((p) => `Disallow: ${p}`),
    '',
  ].join('\n');
}
