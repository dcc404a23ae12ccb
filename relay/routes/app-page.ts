/**
 * The web page where a person approves an app (spec/1-concepts.md "App sign-in"): static HTML,
 * CSS and one script from relay/web/, read once at start. The page holds no app string: the
 * script reads the request id from the address, signs the person in with a passkey and fetches
 * the request from authorizations.get, setting every app-supplied string with textContent.
 *
 * Strict Content-Security-Policy: nothing inline, scripts, styles and requests from this origin
 * only, no frames, no form posts, no plugins.
 */
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { PAGE_CSP, pageHeaders } from '../../shared/page-headers.js';
import { appSignInOn } from '../config.js';
import type { RelayContext } from '../context.js';
import { sendPlainNotFound } from './oauth.js';

const PAGE_HEADERS = pageHeaders(PAGE_CSP);

/**
 * Where the files are: beside the routes in the source tree (relay/web/), or, when running the
 * compiled relay from a checkout, the source tree's copy. Undefined when neither has them.
 */
const WEB_DIRS = [new URL('../web/', import.meta.url), new URL('../../../relay/web/', import.meta.url)];

function readWebFile(file: string): Buffer | undefined {
  for (const dir of WEB_DIRS) {
    try {
      return readFileSync(new URL(file, dir));
    } catch {
      // not in this place; try the next
    }
  }
  return undefined;
}

const FILES = [
  { path: '/app/authorize', file: 'authorize.html', type: 'text/html; charset=utf-8' },
  { path: '/app/authorize.css', file: 'authorize.css', type: 'text/css; charset=utf-8' },
  { path: '/app/authorize.js', file: 'authorize.js', type: 'text/javascript; charset=utf-8' },
] as const;

export const appPageRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  for (const f of FILES) {
    const body = readWebFile(f.file);
    app.get(f.path, { config: { auth: 'none', limit: 'read' } }, async (_req, reply) => {
      if (!appSignInOn(ctx.config)) return sendPlainNotFound(reply);
      if (body === undefined) {
        return reply.code(503).type('text/plain; charset=utf-8').send('The approval page is missing from this installation (relay/web).\n');
      }
      return reply
        .type(f.type)
        .headers(PAGE_HEADERS)
        // The page carries the request id in its address and a token in memory: never kept.
        .header('cache-control', f.file.endsWith('.html') ? 'no-store' : 'no-cache')
        .send(body);
    });
  }
};
