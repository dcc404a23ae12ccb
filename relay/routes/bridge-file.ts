/**
 * `GET /bridge.mjs` (spec/2-endpoints.md "Documents and service state", tools.bridge): the stdio
 * connector as one file that runs with `node bridge.mjs` and no `node_modules`, the bundle
 * scripts/bundle-bridge.mjs writes when the package is built. It is served as it was built,
 * from memory with an ETag like every document (routes/service.ts).
 *
 * Which bundle: the one the configuration names (RelayConfig.bridgeBundle), else the one the
 * build put beside this compiled relay (`dist/bridge.mjs`, made by the same `npm run build`,
 * so it is this relay's own bridge). A relay run from its sources has none: a `dist/` there may
 * be older than the sources, and a stale bridge is worse than none. Without a bundle the answer
 * is 404 with the envelope, its detail saying how to build one.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import { errorEnvelope } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { etagOf, holds } from './service.js';

/** The bundle `npm run build` puts beside the compiled relay (dist/relay/routes/ → dist/bridge.mjs); none when this runs from its sources. */
export function builtBridgeBundle(moduleUrl: string): string | undefined {
  return moduleUrl.endsWith('.js') ? fileURLToPath(new URL('../../bridge.mjs', moduleUrl)) : undefined;
}

export const NO_BUNDLE_DETAIL =
  'this relay runs from its sources and has no bridge bundle: run `npm run build` (it writes dist/bridge.mjs) and start the relay from dist/ (`npm start`)';

interface Bundle {
  readonly bytes: Buffer;
  readonly etag: string;
}

function readBundle(path: string | undefined): Bundle | undefined {
  if (path === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  return { bytes, etag: etagOf(bytes) };
}

/** Where this relay's bridge bundle is (the configured one, else the built one), if it has one. */
export function bridgeBundlePath(ctx: RelayContext): string | undefined {
  return ctx.config.bridgeBundle === null ? undefined : (ctx.config.bridgeBundle ?? builtBridgeBundle(import.meta.url));
}

/** The bridge bundle's bytes, or undefined when this relay has none. */
export function readBridgeBundle(ctx: RelayContext): Buffer | undefined {
  return readBundle(bridgeBundlePath(ctx))?.bytes;
}

export const bridgeFileRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const path = bridgeBundlePath(ctx);
  // Read on first use and kept: the file the relay started with is the one it serves.
  let bundle: Bundle | undefined;

  app.get(
    '/bridge.mjs',
    {
      config: {
        auth: 'none',
        limit: 'none',
        operation: 'tools.bridge',
        describe: 'The stdio connector (svc-bridge) as one ES module: `node bridge.mjs` with SVC_API set, no node_modules needed.',
      },
    },
    async (req, reply) => {
      bundle ??= readBundle(path);
      if (bundle === undefined) {
        const detail = path === undefined ? NO_BUNDLE_DETAIL : 'the bridge bundle this relay was given is not there: run `npm run build` to make it';
        return reply.code(404).type('application/json; charset=utf-8').send(errorEnvelope('INVALID_REQUEST', String(req.id), detail));
      }
      reply.header('etag', bundle.etag);
      if (holds(req.headers['if-none-match'], bundle.etag)) return reply.code(304).send();
      return reply.type('text/javascript; charset=utf-8').send(bundle.bytes);
    },
  );
};
