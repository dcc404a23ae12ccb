/**
 * The view for people at `/view/`: what the agents recorded, read in a browser and checked
 * there. Static HTML, CSS and modules from relay/web/view/, read once at start, and
 * `/view/host.json`, which tells the page who serves it and the service root key it checks
 * proofs against. The page reads everything else through the same `GET /v1/...` operations
 * an agent uses, with the same access checks: public SPACES without a token, the rest with
 * the KEY token of a passkey sign-in, which the page keeps in the tab (sessionStorage) and
 * sends as `Authorization: Bearer`. No cookie is set or read, so a request from another
 * site carries no credential (no CSRF); `frame-ancestors 'none'` and X-Frame-Options DENY
 * keep it out of frames.
 *
 * Strict Content-Security-Policy: nothing inline, scripts, styles and requests from this
 * origin only, no frames, no form posts, no plugins; Trusted Types required, so no string
 * ever reaches an HTML sink (the page sets peer text with textContent only).
 *
 * `svc-bridge view` serves the same files with `{host: "bridge", ...}`; the page keeps the
 * difference in its fetch module (relay/web/view/api.js).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { pageHeaders, VIEW_CSP } from '../../shared/page-headers.js';
import type { RelayContext } from '../context.js';

/**
 * Where the files are: beside the compiled routes (dist/relay/web/view/, which `npm run build`
 * copies), or the source tree's relay/web/view/ (running from the sources, or an installed
 * package, which ships relay/web).
 */
const VIEW_DIRS = [new URL('../web/view/', import.meta.url), new URL('../../../relay/web/view/', import.meta.url)];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The page's files by name (a flat folder of known types), from the first place that has them. */
function readViewFiles(): Map<string, Buffer> {
  for (const dir of VIEW_DIRS) {
    try {
      const files = new Map<string, Buffer>();
      for (const name of readdirSync(dir)) {
        const type = typeOf(name);
        if (type !== undefined) files.set(name, readFileSync(new URL(name, dir)));
      }
      if (files.has('index.html')) return files;
    } catch {
      // not in this place; try the next
    }
  }
  return new Map();
}

function typeOf(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : TYPES[name.slice(dot)];
}

const VIEW_HEADERS = pageHeaders(VIEW_CSP);

/** The headers every answer of the view carries. */
function guarded(reply: FastifyReply): FastifyReply {
  return reply.headers(VIEW_HEADERS);
}

export const viewPageRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const files = readViewFiles();
  // The page's files and host.json are bytes held in memory, as cheap as /healthz, and a page
  // loads some twenty of them at once: they take the health limit (per address, no gate on
  // reads at once), not the API reads' 120 a minute and two at once, which the page's own
  // reads of /v1 then spend.
  const config = { auth: 'none', limit: 'health' } as const;

  app.get('/view', { config }, async (_req, reply) => guarded(reply).redirect('/view/', 308));

  app.get('/view/host.json', { config }, async (_req, reply) => {
    const passkeys = ctx.passkeyPolicy();
    return guarded(reply)
      .header('cache-control', 'no-store')
      .send({
        host: 'relay',
        service_root_key: ctx.serviceKeys.rootKey,
        service_epoch: await ctx.serviceEpoch(),
        passkeys: passkeys === null ? null : { rp_id: passkeys.rpId, origins: [...passkeys.origins] },
      });
  });

  const serve = (name: string, reply: FastifyReply): FastifyReply => {
    const body = files.get(name);
    if (body === undefined) {
      if (files.size === 0) {
        return guarded(reply).code(503).type('text/plain; charset=utf-8').send('The view is missing from this installation (relay/web/view).\n');
      }
      // A name the page does not have is an address the relay does not serve: its usual refusal.
      reply.callNotFound();
      return reply;
    }
    return guarded(reply)
      .type(typeOf(name)!)
      // The page holds a token in the tab: its HTML is never kept; the modules are revalidated.
      .header('cache-control', name.endsWith('.html') ? 'no-store' : 'no-cache')
      .send(body);
  };
  app.get('/view/', { config }, async (_req, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>('/view/:file', { config }, async (req, reply) => serve(req.params.file, reply));
};
