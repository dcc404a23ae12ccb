/**
 * What an agent's MCP client installs (spec/2-endpoints.md "Documents and service state"): the
 * skill (`/skills/svc/SKILL.md`), the plugin marketplace (`/plugins/marketplace.json`) and the
 * plugin archive it names (`/plugins/svc.zip`). Built on first use from this relay's address,
 * served from memory with an ETag like every document (routes/service.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { RelayContext } from '../context.js';
import { buildPluginBundle, PLUGIN_NAME, type PluginBundle } from '../documents/plugins.js';
import { SKILL_NAME, skillMarkdown } from '../documents/skill.js';
import { readBridgeBundle } from './bridge-file.js';
import { sendDocument } from './service.js';

export const agentFilesRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  let skill: string | undefined;
  let bundle: PluginBundle | undefined;

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
};
