/**
 * The MCP Bundle (`.mcpb`, manifest_version 0.3, the format's current version): a zip that a
 * desktop MCP host installs in one click and runs with its own Node.js, so the person needs no
 * system Node and no npm. It holds
 *
 *   manifest.json        what the host reads: the server entry, the settings it asks for
 *   server/bridge.mjs    the whole bridge in one file (scripts/bundle-bridge.mjs)
 *
 * The host runs `node ${__dirname}/server/bridge.mjs` with two settings from the person
 * (`user_config`): the relay address (SVC_API) and, optionally, the key directory (SVC_HOME,
 * else ~/.svc). A host leaves an optional setting the person left empty as its placeholder
 * (`${user_config.key_directory}`), which the bridge reads as unset (bridge/keys/keys.ts envSetting).
 *
 * `npm run build` writes dist/svc.mcpb with the default address a relay started by `npm start`
 * has; `GET /plugins/svc.mcpb` (routes/agent-files.ts) is built the same way with the serving
 * relay's own address as the default, so installing it from a relay needs no typing.
 *
 * The manifest asks for Node.js 22.13 (`compatibility.runtimes.node`), what the bridge needs. A
 * host whose Node is older and that starts it anyway gets the bridge's own answer: it runs
 * itself on Node 24 from the npm registry (launch/recent-node.mjs) where npm and a network are
 * there, else it serves every tool call with the one-line reason and what to install.
 */
import { NODE_NEEDED } from '../../launch/node-version.js';
import { PACKAGE_NAME, packageVersion } from '../../launch/package-version.js';
import { SERVICE_SUMMARY } from './primer.js';
import { zipArchive } from './zip.js';

export const MCPB_MANIFEST_VERSION = '0.3';
/** Where the bridge sits inside the bundle. */
export const MCPB_ENTRY = 'server/bridge.mjs';
/** SVC_API when nothing else is given: a relay started by `npm start` on this machine (bridge/settings.ts DEFAULT_API). */
export const MCPB_DEFAULT_RELAY = 'http://127.0.0.1:8787';

export interface McpbOptions {
  /** The relay address the host offers as the setting's default. */
  readonly relay?: string;
  /** The package version written into the manifest (default: the installed package's). */
  readonly version?: string;
}

/** manifest.json of the bundle, as an object. */
export function mcpbManifest(opts: McpbOptions = {}): Record<string, unknown> {
  const relay = opts.relay ?? MCPB_DEFAULT_RELAY;
  return {
    manifest_version: MCPB_MANIFEST_VERSION,
    name: PACKAGE_NAME,
    display_name: 'svc',
    version: opts.version ?? packageVersion(),
    description: `${SERVICE_SUMMARY} The local bridge: it holds your KEY, signs every post and checks what the relay returns.`,
    long_description:
      'svc-bridge connects an MCP client to an svc relay: SPACES (shared, append-only logs of signed posts with receipts and proofs), ' +
      'a mailbox, direct messages, task lists and SEEK across them. It makes a KEY in its key directory on first start and mints its own tokens.',
    author: { name: 'svc contributors' },
    license: 'Apache-2.0',
    keywords: ['agents', 'memory', 'messaging', 'coordination', 'verifiable'],
    server: {
      type: 'node',
      entry_point: MCPB_ENTRY,
      mcp_config: {
        command: 'node',
        args: [`\${__dirname}/${MCPB_ENTRY}`],
        env: { SVC_API: '${user_config.relay}', SVC_HOME: '${user_config.key_directory}' },
      },
    },
    tools_generated: true,
    compatibility: {
      platforms: ['darwin', 'win32', 'linux'],
      runtimes: { node: `>=${NODE_NEEDED.major}.${NODE_NEEDED.minor}` },
    },
    user_config: {
      relay: {
        type: 'string',
        title: 'Relay address',
        description: 'The svc relay to use (SVC_API): https://, or http:// for a relay on this machine.',
        required: true,
        default: relay,
      },
      key_directory: {
        type: 'directory',
        title: 'Key directory',
        description: 'Where the bridge keeps your KEY, tokens and cache (SVC_HOME). Leave empty for ~/.svc.',
        required: false,
      },
    },
  };
}

/** The bundle: manifest.json and the one-file bridge, as a byte-stable zip (zip.ts). */
export function mcpbArchive(bridge: Uint8Array, opts: McpbOptions = {}): Buffer {
  return zipArchive([
    { name: 'manifest.json', data: Buffer.from(`${JSON.stringify(mcpbManifest(opts), null, 2)}\n`, 'utf8') },
    { name: MCPB_ENTRY, data: bridge },
  ]);
}
