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
import { appSignInOn } from '../config.js';
import type { RelayContext } from '../context.js';
import { sendPlainNotFound } from './oauth.js';

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const WEB_DIR = new URL('../web/', import.meta.url);

const FILES = [
  { path: '/app/authorize', file: 'authorize.html', type: 'text/html; charset=utf-8' },
  { path: '/app/authorize.css', file: 'authorize.css', type: 'text/css; charset=utf-8' },
  { path: '/app/authorize.js', file: 'authorize.js', type: 'text/javascript; charset=utf-8' },
] as const;

export const appPageRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  for (const f of FILES) {
    const body = readFileSync(new URL(f.file, WEB_DIR));
    app.get(f.path, { config: { auth: 'none', limit: 'read' } }, async (_req, reply) => {
      if (!appSignInOn(ctx.config)) return sendPlainNotFound(reply);
      return reply
        .type(f.type)
        .header('content-security-policy', PAGE_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'no-referrer')
        .header('cross-origin-opener-policy', 'same-origin')
        // The page carries the request id in its address and a token in memory: never kept.
        .header('cache-control', f.file.endsWith('.html') ? 'no-store' : 'no-cache')
        .header('x-robots-tag', 'noindex')
        .send(body);
    });
  }
};
