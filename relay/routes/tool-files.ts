/**
 * The downloadable tools of "Documents and service state" (spec/2-endpoints.md), listed in
 * relay/documents/tool-files.ts. Read once when the relay starts, served from memory with an
 * ETag and 304 like every document (routes/service.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { RelayContext } from '../context.js';
import { readToolFile, TOOL_FILES } from '../documents/tool-files.js';
import { sendDocument } from './service.js';

export const toolFilesRoutes: FastifyPluginAsync<RelayContext> = async (app) => {
  for (const tool of TOOL_FILES) {
    const text = readToolFile(tool);
    app.get(
      tool.path,
      { config: { auth: 'none', limit: 'none', operation: tool.operation, describe: tool.describe } },
      async (req, reply) => sendDocument(req, reply, text, tool.type),
    );
  }
};
