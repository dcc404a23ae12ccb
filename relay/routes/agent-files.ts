/**
 * What an agent's MCP client installs (spec/2-endpoints.md "Documents and service state"): the
 * skill (`/skills/svc/SKILL.md`), the plugin marketplace (`/plugins/marketplace.json`), the
 * plugin archive it names (`/plugins/svc.zip`) and the MCP Bundle a desktop host installs in one
 * click (`/plugins/svc.mcpb`, documents/mcpb.ts). Built on first use from this relay's address,
 * served from memory with an ETag like every document (routes/service.ts).
 *
 * The bundle carries the one-file bridge; a relay without one (run from its sources) answers
 * 404 with the envelope, as `/bridge.mjs` does.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { RelayContext } from '../context.js';
import { buildPluginBundle, PLUGIN_NAME, type PluginBundle } from '../documents/plugins.js';
import { SKILL_NAME, skillMarkdown } from '../documents/skill.js';
import { mcpbArchive } from '../documents/mcpb.js';
import { errorEnvelope } from '../../shared/errors.js';
import { NO_BUNDLE_DETAIL, readBridgeBundle } from './bridge-file.js';
import { sendDocument } from './service.js';

export const agentFilesRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  let skill: string | undefined;
  let bundle: PluginBundle | undefined;
  let mcpb: Buffer | undefined;

  app.get(
    `/skills/${SKILL_NAME}/SKILL.md`,
    { config: { auth: 'none', limit: 'none', operation: 'skill', describe: 'The agent skill: the run routine, the tools, the trust rule (markdown).' } },
    async (req, reply) => {
      skill ??= skillMarkdown(ctx);
      return sendDocument(req, reply, skill, 'text/markdown; charset=utf-8');
    },
  );

  app.get(
    '/plugins/marketplace.json',
    { config: { auth: 'none', limit: 'none', operation: 'plugins.marketplace', describe: 'The plugin marketplace: the svc plugin, its archive address and SHA-256.' } },
    async (req, reply) => {
      bundle ??= buildPluginBundle(ctx, readBridgeBundle(ctx));
      return sendDocument(req, reply, bundle.marketplace, 'application/json; charset=utf-8');
    },
  );

  app.get(
    `/plugins/${PLUGIN_NAME}.zip`,
    { config: { auth: 'none', limit: 'none', operation: 'plugins.archive', describe: 'The plugin archive: the skill and the MCP server configuration for this relay (zip).' } },
    async (req, reply) => {
      bundle ??= buildPluginBundle(ctx, readBridgeBundle(ctx));
      reply.header('content-disposition', `attachment; filename="${PLUGIN_NAME}.zip"`);
      return sendDocument(req, reply, bundle.archive, 'application/zip');
    },
  );

  app.get(
    `/plugins/${PLUGIN_NAME}.mcpb`,
    { config: { auth: 'none', limit: 'none', operation: 'plugins.bundle', describe: 'The MCP Bundle: manifest.json and the one-file bridge, its relay address set to this relay (zip).' } },
    async (req, reply) => {
      if (mcpb === undefined) {
        const bridge = readBridgeBundle(ctx);
        if (bridge === undefined) return reply.code(404).type('application/json; charset=utf-8').send(errorEnvelope('INVALID_REQUEST', String(req.id), NO_BUNDLE_DETAIL));
        mcpb = mcpbArchive(bridge, { relay: ctx.baseUrl() });
      }
      reply.header('content-disposition', `attachment; filename="${PLUGIN_NAME}.mcpb"`);
      return sendDocument(req, reply, mcpb, 'application/zip');
    },
  );
};
