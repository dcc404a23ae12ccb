/**
 * The MCP-client plugin bundle (spec/2-endpoints.md "Documents and service state":
 * plugins.marketplace, plugins.archive). `GET /plugins/svc.zip` is a plugin folder in the layout
 * MCP clients with plugin marketplaces read (Claude Code's: the manifest in
 * `.claude-plugin/plugin.json`, MCP servers in `.mcp.json`, skills under `skills/<name>/`):
 *
 *   .claude-plugin/plugin.json   name, version, description, homepage
 *   .mcp.json                    the svc server: the local bridge pointed at this relay
 *   skills/svc/SKILL.md          the agent skill, the text of /skills/svc/SKILL.md
 *   README.md                    what the bundle holds and what it needs
 *
 * `GET /plugins/marketplace.json` is `{name, owner, plugins[]}`, its one plugin naming the
 * archive's address and SHA-256, so a client can check what it downloaded.
 *
 * The server entry runs `svc-bridge` (the `svc-bridge` package, launch/package-version.ts
 * PACKAGE_NAME) with SVC_API set to this relay: the bridge holds the KEY on
 * the person's machine, signs and seals. A client that cannot start a local process uses the connector at /mcp/connect instead.
 */
import { createHash } from 'node:crypto';
import type { RelayContext } from '../context.js';
import { PACKAGE_NAME, packageVersion } from '../../launch/package-version.js';
import { SERVICE_SUMMARY } from './primer.js';
import { SKILL_DESCRIPTION, SKILL_NAME, skillMarkdown } from './skill.js';
import { zipArchive } from './zip.js';

export const PLUGIN_NAME = 'svc';

export interface PluginBundle {
  readonly archive: Buffer;
  /** Lowercase hex SHA-256 of `archive`. */
  readonly sha256: string;
  /** `/plugins/marketplace.json`, as sent. */
  readonly marketplace: string;
}

function json(value: unknown): Uint8Array {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
}

/**
 * The bundle for this relay. `bridge`: the one-file bridge (GET /bridge.mjs), carried in the
 * archive when the relay has one, so the plugin runs with Node alone (`node
 * ${CLAUDE_PLUGIN_ROOT}/bridge.mjs`, the plugin folder as MCP clients expand it); without one
 * (a relay run from its sources) the entry runs an installed `svc-bridge`.
 */
export function buildPluginBundle(ctx: RelayContext, bridge?: Uint8Array): PluginBundle {
  const base = ctx.baseUrl();
  const version = packageVersion();
  const manifest = {
    name: PLUGIN_NAME,
    version,
    description: SKILL_DESCRIPTION,
    homepage: `${base}/`,
  };
  const server =
    bridge === undefined
      ? { command: 'svc-bridge', args: [] as string[], env: { SVC_API: base } }
      : { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/bridge.mjs'], env: { SVC_API: base } };
  const servers = { mcpServers: { [PLUGIN_NAME]: server } };
  const how =
    bridge === undefined
      ? `starts \`svc-bridge\` pointed at ${base} (Node.js 22.13 or later): install the
  ${PACKAGE_NAME} package (\`npm install -g ${PACKAGE_NAME}\`, or \`npm install -g
  ./${PACKAGE_NAME}-<version>.tgz\` from its archive), or save ${base}/bridge.mjs, the bridge in
  one file, and make the command \`node\` with that file.`
      : `runs \`bridge.mjs\`, the whole bridge in one file (Node.js 22.13 or later; no npm
  install), pointed at ${base}.`;
  const readme = `# svc plugin

${SERVICE_SUMMARY}

- \`.mcp.json\` ${how} The bridge makes a KEY in \`~/.svc\` on first use, signs every post and
  checks what the relay returns.
- \`skills/${SKILL_NAME}/SKILL.md\` tells the agent the run routine, the tools and the trust rule.

Without a local process, connect the client to ${base}/mcp/connect instead (app sign-in).
`;
  const archive = zipArchive([
    { name: '.claude-plugin/plugin.json', data: json(manifest) },
    { name: '.mcp.json', data: json(servers) },
    { name: `skills/${SKILL_NAME}/SKILL.md`, data: Buffer.from(skillMarkdown(ctx), 'utf8') },
    { name: 'README.md', data: Buffer.from(readme, 'utf8') },
    ...(bridge === undefined ? [] : [{ name: 'bridge.mjs', data: bridge }]),
  ]);
  const sha256 = createHash('sha256').update(archive).digest('hex');
  const marketplace = JSON.stringify({
    name: PLUGIN_NAME,
    owner: { name: ctx.audience() },
    plugins: [
      {
        name: PLUGIN_NAME,
        version,
        description: SKILL_DESCRIPTION,
        source: `${base}/plugins/${PLUGIN_NAME}.zip`,
        sha256,
        skill: `${base}/skills/${SKILL_NAME}/SKILL.md`,
      },
    ],
  });
  return { archive, sha256, marketplace };
}
