/** What the relay adds to Fastify's types: route config and the caller's identity. */
import type { ErrorCode } from '../../shared/errors.js';
import type { AuthMode, BearerHash, Identity } from './auth.js';
import type { LimitClass } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call: none (no KEY), opt (KEY optional), req (token required). Default req. */
    auth?: AuthMode;
    /** Which rate limit applies. Default: 'read' for GET/HEAD, 'write' otherwise. */
    limit?: LimitClass;
    /**
     * Whether a request of this route writes, for the read-only mode of a restore and an app
     * token's scope (http/admission.ts). Default: any method but GET and HEAD, unless `limit` is
     * 'read' (the reads sent as POST). `false` for the connector's MCP endpoints: each tool's call
     * of a route is judged on its own there.
     */
    writes?: boolean;
    /** The endpoint catalogue name, e.g. `keys.challenge` (used by the operations index). */
    operation?: string;
    /** One line for the operations index. */
    describe?: string;
    /** The connector tool that reaches this operation (capabilities `operations[].mcp_*`). */
    mcp?: { tool: string; args?: Record<string, unknown>; via?: string };
    /**
     * Refusal codes this operation can meet beyond those spec/2-endpoints.md lists for it
     * (relay/documents/refusals.ts); /openapi.json shows both.
     */
    refusals?: readonly ErrorCode[];
    /**
     * Whether the connector's tools call this route in process, through the app's own admission,
     * validation and handler but no HTTP request (relay/connector/in-process.ts); default: the
     * routes under `/v1/`. Such a route's handler reads `req.params`, `query`, `body`,
     * `identity`, `headers`, `ip`, `id` and answers a JSON value or text by its return value or
     * `reply.code`, `header`, `type`, `send` (a long poll's `reply.raw` close included), and it
     * has no hooks of its own (the app refuses to start otherwise) nor any its plugin adds (a
     * test compares each such route's hooks with the app's). `false` for any other route under
     * `/v1/` (bytes, a body parser or hook of its own): the tools call it through `app.inject`.
     */
    inProcess?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated caller, or null. */
    identity: Identity | null;
    /** Only on a route called in process by the connector: its bearer's hash, computed for the connector's request (auth.ts `BearerHash`). */
    bearer?: BearerHash;
  }
}
