#!/usr/bin/env node
/**
 * Bundles svc-bridge into one ES module that runs with a plain `node bridge.mjs` and no
 * `node_modules` beside it: the bridge's sources, shared/ and its dependencies (the MCP
 * server, zod, canonicalize) in one file, Node's own modules left as imports. The relay serves
 * it as `GET /bridge.mjs` (spec/2-endpoints.md tools.bridge) and the package's `svc-bridge`
 * command runs it: one file loads several times faster than the hundreds of modules it is
 * made of (`npm run bench -- bridge`).
 *
 * The file is bridge/bundle-main.ts (the Node.js check) followed, on its last lines, by the
 * program it runs: bridge/program.ts bundled as one CommonJS function, gzipped, in base64, which the
 * entry compiles with V8's code cache kept in the key directory (bridge/code-cache.ts). The
 * program carries every tool's argument JSON Schema as tools/list gives it, made now from the
 * sources (bridge/listed-schemas.ts, as SVC_LISTED_SCHEMAS for tools/args.ts), so a start
 * converts no zod schema to list the tools.
 *
 *   node scripts/bundle-bridge.mjs [--outfile dist/bridge.mjs]   (and dist/svc.mcpb beside it)
 *   node scripts/bundle-bridge.mjs --snapshot FILE     (a startup snapshot: buildBridgeSnapshot)
 *   node scripts/bundle-bridge.mjs --mcpb FILE [--bridge BUNDLE]
 *                                   (the MCP Bundle of BUNDLE, else of a bundle built afresh)
 *
 * Without --outfile the run also writes dist/svc.mcpb, the MCP Bundle (relay/documents/mcpb.ts:
 * manifest.json and this bundle as server/bridge.mjs) that a desktop MCP host installs in one
 * click and runs with its own Node.js.
 *
 * `npm run build` runs it after tsc. Some sources are replaced inside the bundle only:
 * - `node:sqlite` is taken with process.getBuiltinModule when a database is first opened
 *   (bridge/cache/sqlite.ts only constructs DatabaseSync), not imported: an ES module's imports are
 *   all resolved before its first line runs, so a static import would fail on an old Node
 *   (which lacks node:sqlite) before the Node.js version check of bridge/bundle-main.ts could
 *   print its one line; the program loads cli.ts with a dynamic import, which the bundle keeps
 *   lazy. And a startup snapshot cannot hold node:sqlite's native functions at all.
 * - `node:crypto` is loaded when a crypto function is first called, not at every start
 *   (`lazyCryptoModule`): loading it costs about 8 ms on a start of about 110 (Node evaluates a
 *   score of its own modules for it), and a client's opening requests (initialize, tools/list)
 *   need none of it; the KEY is read from its file at a start and derived from when first used
 *   (bridge/keys/keys.ts `deferredInfo`, bridge/opening.ts). process.getBuiltinModule is Node
 *   20.16+, older than the bridge's floor.
 * - launch/package-version.ts returns the name and version being built: the bundle may run from
 *   any directory, with no package.json of svc above it.
 *
 * - The MCP SDK's default JSON Schema validator (`@modelcontextprotocol/server/_shims`: ajv
 *   and its formats, bundled into the SDK) is made by every server but used only to check
 *   what a client answers to an elicitation, which the bridge never asks for: its module is
 *   evaluated when a server first asks it for a validator, not at every start.
 *
 * - The MCP SDK's zod schemas are built when first used (scripts/lazy-schemas.mjs), not all of
 *   them at every start.
 *
 * And the WebAuthn parsing shared/passkey.ts takes from @simplewebauthn/server (two helpers)
 * comes through a barrel that also re-exports its attestation and certificate code, whose
 * modules (@peculiar/x509, asn1js, and the decorator registries tsyringe and reflect-metadata)
 * declare side effects, so esbuild would keep them all. They are bundled as side-effect free:
 * only what the helpers use stays, 0.8 MB less to load at every start.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { lazySchemaModule, lazyServerModule } from './lazy-schemas.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The modules bundled as side-effect free (see above). */
const SIDE_EFFECT_FREE = /[\\/]node_modules[\\/](@simplewebauthn[\\/]server|@peculiar[\\/][^\\/]+|asn1js|tsyringe|reflect-metadata|pvtsutils|pvutils)[\\/]/;
const RESOLVING = Symbol('resolving');
/** The MCP SDK's core files (its schema modules), and its server module that reads them at load (scripts/lazy-schemas.mjs). */
const SDK_CORE = /[\\/]node_modules[\\/]@modelcontextprotocol[\\/]core[\\/]dist$/;
const SDK_SERVER_MODULE = /[\\/]node_modules[\\/]@modelcontextprotocol[\\/]server[\\/]dist[\\/]src-[\w-]+\.mjs$/;

/** What the bundle takes differently from the sources (see above). */
function bundlePlugin({ name, version }) {
  return {
    name: 'svc-bundle',
    setup(b) {
      b.onResolve({ filter: /^node:sqlite$/ }, () => ({ path: 'node:sqlite', namespace: 'svc-builtin' }));
      b.onLoad({ filter: /.*/, namespace: 'svc-builtin' }, () => ({
        contents:
          'export function DatabaseSync(...args) {\n' +
          "  return new (process.getBuiltinModule('node:sqlite').DatabaseSync)(...args);\n" +
          '}\n',
        loader: 'js',
      }));
      b.onResolve({ filter: /^node:crypto$/ }, (args) => (args.pluginData === RESOLVING ? undefined : { path: 'node:crypto', namespace: 'svc-lazy-crypto' }));
      b.onLoad({ filter: /.*/, namespace: 'svc-lazy-crypto' }, async () => ({ contents: await lazyCryptoModule(), loader: 'js' }));
      b.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, async (args) => {
        if (args.pluginData === RESOLVING) return undefined;
        const found = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: RESOLVING });
        if (found.errors.length > 0) return undefined;
        return { path: args.path, namespace: 'svc-lazy-validator', pluginData: found.path };
      });
      b.onLoad({ filter: /.*/, namespace: 'svc-lazy-validator' }, (args) => ({
        contents:
          "import process from 'node:process';\n" +
          'let Loaded;\n' +
          'export class DefaultJsonSchemaValidator {\n' +
          '  #ajv;\n' +
          '  #real;\n' +
          '  constructor(ajv) {\n' +
          '    this.#ajv = ajv;\n' +
          '  }\n' +
          '  getValidator(schema) {\n' +
          `    Loaded ??= require(${JSON.stringify(args.pluginData)}).DefaultJsonSchemaValidator;\n` +
          '    this.#real ??= new Loaded(this.#ajv);\n' +
          '    return this.#real.getValidator(schema);\n' +
          '  }\n' +
          '}\n' +
          'export { process };\n',
        loader: 'js',
        resolveDir: dirname(args.pluginData),
      }));
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === RESOLVING || args.path.startsWith('node:')) return undefined;
        const found = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: RESOLVING });
        if (found.errors.length > 0 || found.external || !SIDE_EFFECT_FREE.test(found.path)) return undefined;
        return { path: found.path, sideEffects: false };
      });
      // The SDK's schema modules as CommonJS modules of getters (scripts/lazy-schemas.mjs): named
      // `.cjs` in a namespace of their own, for the bundler takes a `.mjs` file for an ES module.
      // What each reads of zod comes from zod's ES module, the one the rest of the bundle reads
      // (a require would take zod's CommonJS files, a second zod), and only the members it uses.
      const schemaMembers = new Map();
      b.onResolve({ filter: /^\.\/(schemas|auth)-[\w-]+\.mjs$/ }, (args) => {
        if (!SDK_CORE.test(args.resolveDir)) return undefined;
        return { path: join(args.resolveDir, args.path.replace(/\.mjs$/, '.cjs')), namespace: 'svc-lazy-schemas' };
      });
      b.onLoad({ filter: /.*/, namespace: 'svc-lazy-schemas' }, (args) => {
        const made = lazySchemaModule(readFileSync(args.path.replace(/\.cjs$/, '.mjs'), 'utf8'));
        schemaMembers.set(args.path, made.members);
        return { contents: made.text, loader: 'js', resolveDir: dirname(args.path) };
      });
      b.onResolve({ filter: /.*/, namespace: 'svc-lazy-schemas' }, async (args) => {
        const used = schemaMembers.get(args.importer)?.get(args.path);
        if (used === undefined) throw new Error(`${args.importer} requires ${args.path}, which scripts/lazy-schemas.mjs did not expect`);
        const found = await b.resolve(args.path, { kind: 'import-statement', resolveDir: args.resolveDir, pluginData: RESOLVING });
        if (found.errors.length > 0) return undefined;
        return { path: `${found.path}?${used.join(',')}`, namespace: 'svc-members', pluginData: { path: found.path, used } };
      });
      b.onLoad({ filter: /.*/, namespace: 'svc-members' }, (args) => ({
        contents: `export { ${args.pluginData.used.join(', ')} } from ${JSON.stringify(args.pluginData.path)};\n`,
        loader: 'js',
        resolveDir: dirname(args.pluginData.path),
      }));
      b.onLoad({ filter: SDK_SERVER_MODULE }, (args) => ({ contents: lazyServerModule(readFileSync(args.path, 'utf8')), loader: 'js' }));
      b.onLoad({ filter: /[\\/]launch[\\/]package-version\.ts$/ }, () => ({
        contents:
          `export const PACKAGE_NAME = ${JSON.stringify(name)};\n` +
          `export function packageVersion() {\n  return ${JSON.stringify(version)};\n}\n`,
        loader: 'ts',
      }));
    },
  };
}

/**
 * The module the bundle takes for `node:crypto` (see the header): every function node:crypto
 * exports, each calling the one of the module loaded when the first is called. Only functions:
 * a source that imports a class or an object of it (KeyObject, webcrypto, constants) fails the
 * build here ("No matching export"), where a forwarding wrapper would have failed at run time.
 */
async function lazyCryptoModule() {
  const real = await import('node:crypto');
  const names = Object.keys(real).filter((n) => typeof real[n] === 'function' && /^[a-z]/.test(n)).sort();
  return (
    'let loaded;\n' +
    "const crypto = () => (loaded ??= process.getBuiltinModule('node:crypto'));\n" +
    names.map((n) => `export function ${n}(...args) {\n  return crypto().${n}(...args);\n}\n`).join('')
  );
}

/**
 * Write the MCP Bundle of the bridge bundle `bridgeFile` to `outfile`. Its manifest and zip come
 * from relay/documents/mcpb.ts, the code the relay serves /plugins/svc.mcpb with, taken from
 * the sources (bundled in memory, as the bridge is) so no compiled relay is needed.
 */
export async function bundleMcpb(bridgeFile, outfile = join(ROOT, 'dist', 'svc.mcpb')) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const built = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'relay', 'documents', 'mcpb.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: ['node:*'],
    plugins: [bundlePlugin(pkg)],
    logLevel: 'warning',
  });
  const mcpb = await import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].contents).toString('base64')}`);
  const target = resolve(ROOT, outfile);
  writeFileSync(target, mcpb.mcpbArchive(readFileSync(resolve(ROOT, bridgeFile)), { version: pkg.version }));
}

/**
 * Write the bundle to `outfile` (absolute, or relative to the checkout): bridge/bundle-main.ts as
 * an ES module, and on its last two lines the program it runs (`programText`, read by
 * bridge/code-cache.ts): `//svc-program <gzip, base64>`, then `//svc-program-hash <hash>`.
 */
export async function bundleBridge(outfile = join(ROOT, 'dist', 'bridge.mjs')) {
  const { text, hash } = await programText();
  const entry = builtinsRequired(await bundle('bundle-main.ts', 'esm', undefined));
  const target = resolve(ROOT, outfile);
  mkdirSync(dirname(target), { recursive: true });
  const packed = gzipSync(Buffer.from(text, 'utf8'), { level: 9 });
  writeFileSync(target, `${entry}\n//svc-program ${packed.toString('base64')}\n//svc-program-hash ${hash}\n`, { mode: 0o755 });
}

/**
 * The entry (an ES module) with its imports of Node's own modules turned into loads of the
 * modules (process.getBuiltinModule, or require before Node 20.16): an ES module import of
 * `node:fs` makes a module of all its exports, and reading them all loads what fs keeps lazy
 * (its streams, fs/promises, readline), about 2 ms of every start that the bridge never uses.
 * Whatever the entry names of a module is read from it as before, when the entry's first line
 * runs; on a Node too old to have it, a missing function is undefined rather than a link error,
 * so that the Node.js version check still runs and says so.
 */
function builtinsRequired(entry) {
  let count = 0;
  const body = entry.replace(/^import \{([^}]*)\} from "(node:[\w/]+)";$/gm, (_, names, id) => {
    count++;
    const bound = names
      .split(',')
      .map((n) => n.trim().replace(/\s+as\s+/, ': '))
      .filter((n) => n !== '');
    return `const { ${bound.join(', ')} } = builtin(${JSON.stringify(id)});`;
  });
  if (count === 0 || /^import\b/m.test(body)) throw new Error('the entry imports something other than named exports of Node modules, or nothing');
  const [first, ...rest] = body.split('\n');
  const load =
    '// Node\'s own modules, loaded without making ES modules of them (scripts/bundle-bridge.mjs builtinsRequired).\n' +
    'const builtin = process.getBuiltinModule ? (id) => process.getBuiltinModule(id) : (await import("node:module")).createRequire(import.meta.url);';
  return first.startsWith('#!') ? [first, load, ...rest].join('\n') : [load, first, ...rest].join('\n');
}

/**
 * The program of the one-file bridge (bridge/code-cache.ts): bridge/program.ts bundled as
 * CommonJS in strict mode, as the ES modules it is made of, wrapped as one function of what a
 * CommonJS module is given; and the first 16 hex digits of the text's SHA-256, which name its
 * code cache.
 */
export async function programText() {
  // Without the whitespace that only lays the code out (strings, names and comments kept as they
  // are): a start reads, checks and decodes the text from the cache file, and Node reads and scans
  // its gzipped copy at the end of bridge.mjs, so a smaller text is less of every start.
  const built = await bundle('program.ts', 'cjs', undefined, { SVC_LISTED_SCHEMAS: JSON.stringify(await listedSchemas()) }, { minifyWhitespace: true });
  // esbuild writes strings and patterns in ASCII (charset), comments as they are: a character
  // beyond ASCII left in a comment becomes the same \u escape, so that the whole text is ASCII.
  const ascii = built.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const text = `(function (exports, require, module, __filename, __dirname) {"use strict";\n${ascii}\n})`;
  return { text, hash: createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16) };
}

/**
 * Every tool's argument JSON Schema as tools/list gives it (bridge/listed-schemas.ts), made now
 * from the sources, bundled in memory as the MCP Bundle's manifest code is.
 */
async function listedSchemas() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const built = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'bridge', 'listed-schemas.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: ['node:*'],
    plugins: [bundlePlugin(pkg)],
    logLevel: 'warning',
  });
  const listed = await import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].contents).toString('base64')}`);
  return listed.listedInputSchemas();
}

/**
 * Write the source of the bridge's startup snapshot to `outfile`: the same program from
 * bridge/snapshot-main.ts, as one CommonJS script, the form `node --build-snapshot` takes.
 */
export async function bundleBridgeSnapshotSource(outfile = join(ROOT, 'dist', 'bridge-snapshot.cjs')) {
  await bundle('snapshot-main.ts', 'cjs', outfile);
}

/**
 * Build the bridge's startup snapshot into `blobFile` for the Node.js running this script (a
 * snapshot only starts on the Node.js version that built it): the snapshot source, bundled into
 * a temporary directory, run by `node --build-snapshot`. Start it with
 * `node --snapshot-blob FILE BUNDLE_URL [command]`, where BUNDLE_URL names the bridge.mjs it
 * stands for (bridge/snapshot-main.ts).
 */
export async function buildBridgeSnapshot(blobFile) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bridge-snapshot-'));
  try {
    const source = join(dir, 'bridge-snapshot.cjs');
    const built = join(dir, 'bridge.blob');
    await bundleBridgeSnapshotSource(source);
    const r = spawnSync(process.execPath, ['--snapshot-blob', built, '--build-snapshot', source], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0 || !existsSync(built)) throw new Error(`building the snapshot failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
    // Whole or not at all: a truncated snapshot crashes the Node that starts from it.
    const target = resolve(ROOT, blobFile);
    const partial = `${target}.${process.pid}.tmp`;
    copyFileSync(built, partial);
    renameSync(partial, target);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bundle bridge/`entry` into `outfile`, or return it as text when there is none; `defined`: esbuild's define; `options`: more of esbuild's. */
async function bundle(entry, format, outfile, defined = {}, options = {}) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const built = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'bridge', entry)],
    ...(outfile === undefined ? { write: false } : { outfile: resolve(ROOT, outfile) }),
    bundle: true,
    format,
    platform: 'node',
    target: 'node22',
    // Node's own modules stay imports; the optional OS keychain module (SVC_KEYCHAIN=1) is
    // loaded by name at run time, from wherever the person installed it.
    external: ['node:*', '@napi-rs/keyring'],
    plugins: [bundlePlugin(pkg)],
    // A script has no import.meta; the program's entry and the snapshot's main function name the bundle instead (bridge/cli.ts).
    define: { ...defined, ...(format === 'cjs' ? { 'import.meta.url': 'undefined' } : {}) },
    legalComments: 'eof',
    // The program in ASCII (other characters as escapes, the same strings when it runs): V8 then
    // holds its text in one byte a character, where a single character beyond Latin-1 would
    // make it two, and decodes it from the cache file as a plain copy.
    charset: format === 'cjs' ? 'ascii' : 'utf8',
    logLevel: 'warning',
    ...options,
  });
  return outfile === undefined ? built.outputFiles[0].text : undefined;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const option = (name) => {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
  };
  const snapshot = option('--snapshot');
  const mcpb = option('--mcpb');
  if (snapshot !== undefined) await buildBridgeSnapshot(snapshot);
  else if (mcpb !== undefined) {
    const given = option('--bridge');
    if (given !== undefined) await bundleMcpb(given, mcpb);
    else {
      const dir = mkdtempSync(join(tmpdir(), 'svc-mcpb-'));
      try {
        await bundleBridge(join(dir, 'bridge.mjs'));
        await bundleMcpb(join(dir, 'bridge.mjs'), mcpb);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } else {
    const outfile = option('--outfile');
    await bundleBridge(outfile);
    if (outfile === undefined) await bundleMcpb(join(ROOT, 'dist', 'bridge.mjs'));
  }
}
