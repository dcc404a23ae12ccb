/**
 * The commands README.md and docs/*.md give, kept true: every fenced `sh` block is read, each
 * command line in it split into its environment, program and arguments, and then
 *
 * - checked against the program's own parser: a flag named for svc-relay or svc-bridge (or one
 *   of their commands) must be in that program's `--help` text, a bridge command must be one
 *   the bridge has, an `npm run` script must be in package.json, a `node` script must exist in
 *   the checkout, and any other program must be one of the external ones the documents name;
 * - run, where that is cheap and safe (printing a KEY's peer id, a backup and a restore of a
 *   relay's data directory), in a temporary directory with `svc-relay` and `svc-bridge` on PATH
 *   as this checkout's sources, and must exit 0.
 *
 * A block preceded by `<!-- not run: reason -->` is illustrative (it needs a TLS proxy, another
 * machine, an MCP host): its lines are still checked, never run. Besides the blocks, every flag
 * in the relay's flag table must be in `svc-relay --help`, and every `SVC_…` variable the
 * documents name must be read somewhere in the code, so a renamed flag or setting fails here.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/relay.js';

const DOCUMENTS = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Programs the documents name that are not this project's: named, never run. */
const EXTERNAL = new Set(['curl', 'claude', 'createdb', 'dropdb', 'apt-get', 'openssl', 'export']);

interface Block {
  readonly doc: string;
  readonly line: number;
  /** The reason it is not run, from `<!-- not run: reason -->` just before it. */
  readonly notRun: string | undefined;
  readonly commands: readonly string[];
}

function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, doc), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh') continue;
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === '') j--;
    const marker = j >= 0 ? /^<!-- not run: (.+) -->$/.exec(lines[j]!.trim()) : null;
    const body: string[] = [];
    let k = i + 1;
    for (; k < lines.length && lines[k]!.trim() !== '```'; k++) body.push(lines[k]!);
    blocks.push({ doc, line: i + 1, notRun: marker?.[1], commands: commandsOf(body) });
    i = k;
  }
  return blocks;
}

/** The command lines of a block: continuation lines joined, comments dropped, `&&` split. */
function commandsOf(body: readonly string[]): string[] {
  const joined = body.join('\n').replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l !== '')
    .flatMap((l) => l.split(/\s&&\s/).map((c) => c.trim()));
}

interface Parsed {
  readonly env: Record<string, string>;
  /** `svc-relay`, `svc-bridge`, `npm`, `npx`, `node`, or an external program. */
  readonly program: string;
  readonly args: readonly string[];
}

/** The launch forms of the two programs, as the documents write them, to the program's name. */
function parse(command: string): Parsed {
  const words = command.split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (words[0] === 'npx' && words[1] === '-y' && words[2] === 'node@24') words.splice(0, 3, 'node');
  if (words[0] === 'node' && words[1] !== undefined) {
    if (/(^|\/)dist\/relay\/main\.js$/.test(words[1])) return { env, program: 'svc-relay', args: words.slice(2) };
    if (/(^|\/)dist\/bridge\/main\.js$|(^|\/)dist\/bridge\.mjs$|svc-bridge\.mjs$/.test(words[1])) return { env, program: 'svc-bridge', args: words.slice(2) };
  }
  return { env, program: words[0]!, args: words.slice(1) };
}

const TSX = ['--import', 'tsx'];
function help(program: 'svc-relay' | 'svc-bridge', command: string | undefined): string {
  const main = program === 'svc-relay' ? 'relay/main.ts' : 'bridge/main.ts';
  const r = spawnSync(process.execPath, [...TSX, main, ...(command === undefined ? [] : [command]), '--help'], { cwd: REPO_ROOT, encoding: 'utf8' });
  expect(r.status, `${program} ${command ?? ''} --help: ${r.stderr}`).toBe(0);
  return r.stdout;
}
const helps = new Map<string, string>();
function helpOf(program: 'svc-relay' | 'svc-bridge', command: string | undefined): string {
  const key = `${program} ${command ?? ''}`;
  if (!helps.has(key)) helps.set(key, help(program, command));
  return helps.get(key)!;
}

const RELAY_COMMANDS = new Set(['backup', 'restore', 'migrate']);
const SCRIPTS = Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

/** What is wrong with one command line against its program's own parser, or nothing. */
function check(command: string): string[] {
  const { program, args } = parse(command);
  const wrong: string[] = [];
  const flagsIn = (text: string) => {
    for (const a of args) {
      const flag = /^(--[a-z][a-z0-9-]*)/.exec(a)?.[1];
      if (flag !== undefined && !new RegExp(`(^|[\\s\\[|(])${flag}(?![a-z0-9-])`, 'm').test(text)) wrong.push(`${flag} is not in ${program}'s --help`);
    }
  };
  if (program === 'svc-relay') {
    const sub = args[0] !== undefined && RELAY_COMMANDS.has(args[0]) ? args[0] : undefined;
    flagsIn(helpOf('svc-relay', sub));
  } else if (program === 'svc-bridge') {
    const sub = args[0] !== undefined && !args[0].startsWith('-') ? args[0] : undefined;
    if (sub !== undefined && !new RegExp(`^\\s+svc-bridge ${sub}\\b`, 'm').test(helpOf('svc-bridge', undefined))) wrong.push(`svc-bridge has no command ${sub}`);
    else flagsIn(helpOf('svc-bridge', sub));
  } else if (program === 'npm') {
    const script = args[0] === 'run' ? args[1] : args[0];
    if (!['install', 'ci', 'pack'].includes(script!) && !SCRIPTS.includes(script!)) wrong.push(`package.json has no script ${script}`);
  } else if (program === 'npx') {
    if (args[0] === 'vitest' && args[1] === 'run' && args[2] !== undefined && !existsSync(join(REPO_ROOT, args[2]))) wrong.push(`no ${args[2]}`);
    else if (args[0] !== 'vitest' && !(args[0] === '-y' && /svc-bridge/.test(args.join(' ')))) wrong.push(`npx ${args[0]} is not a form the documents use`);
  } else if (program === 'node') {
    if (!existsSync(join(REPO_ROOT, args[0]!))) wrong.push(`no ${args[0]} in the checkout`);
  } else if (program === 'claude' && args.includes('--')) {
    // `claude mcp add … -- <the launch command>`: the launch command is checked as any other.
    wrong.push(...check(args.slice(args.indexOf('--') + 1).join(' ')));
  } else if (!EXTERNAL.has(program)) {
    wrong.push(`${program} is not this project's program nor a known external one`);
  }
  return wrong;
}

/** Whether a line is cheap and safe to run: a KEY's peer id, a backup or a restore. */
function runnable(command: string): boolean {
  const { program, args } = parse(command);
  if (program === 'svc-bridge') return args[0] === 'id' || args.includes('--help');
  if (program === 'svc-relay') return args[0] === 'backup' || args[0] === 'restore' || args.includes('--help');
  return false;
}

const ALL = DOCUMENTS.flatMap(blocksOf);
const scratch = mkdtempSync(join(tmpdir(), 'svc-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A directory to run a block's lines in: svc-relay and svc-bridge on PATH, a relay's data in ./data, its checkpoint log in disk2/. */
async function sandbox(name: string): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = join(scratch, name);
  const bin = join(dir, 'bin');
  for (const d of [bin, join(dir, 'backups'), join(dir, 'disk2')]) mkdirSync(d, { recursive: true });
  for (const [program, main] of [['svc-relay', 'relay/main.ts'], ['svc-bridge', 'bridge/main.ts']] as const) {
    const shim = join(bin, program);
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" --import "${join(REPO_ROOT, 'node_modules/tsx/dist/esm/index.mjs')}" "${join(REPO_ROOT, main)}" "$@"\n`);
    chmodSync(shim, 0o755);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, SVC_HOME: join(dir, 'svc-home') };
  // The relay the lines back up, as a person runs it: its own process on its SQLite file (the
  // backup and restore commands are the SQLite store's), started once and stopped.
  delete env.SVC_DATABASE_URL;
  await new Promise<void>((resolve, reject) => {
    const relay = spawn('svc-relay', ['--data', './data', '--port', '0', '--checkpoint-log', 'disk2/checkpoints.log'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const seen = (d: Buffer) => {
      out += d.toString();
      if (/listening on/.test(out)) relay.kill('SIGTERM');
    };
    relay.stdout.on('data', seen);
    relay.stderr.on('data', seen);
    relay.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`svc-relay exited ${code}:\n${out}`))));
  });
  return { dir, env };
}

/** The line as run in the sandbox: absolute paths the documents use moved under it, the launch forms as the shims. */
function inSandbox(command: string, dir: string): string {
  return command
    .replace(/(^|\s)\/(backups|disk2|tmp)\//g, `$1${dir}/$2/`)
    .replace(/node (\S*\/)?dist\/relay\/main\.js/g, 'svc-relay')
    .replace(/node (\S*\/)?dist\/bridge(\/main\.js|\.mjs)/g, 'svc-bridge');
}

describe('the commands in README.md and docs/', () => {
  it('finds the documents and their blocks', () => {
    expect(DOCUMENTS).toEqual(expect.arrayContaining(['README.md', 'docs/operating.md', 'docs/bridge.md', 'docs/trust.md']));
    expect(ALL.filter((b) => b.notRun === undefined).length).toBeGreaterThan(3);
    expect(ALL.some((b) => b.commands.some(runnable))).toBe(true);
  });

  for (const block of ALL) {
    it(`${block.doc}:${block.line}: every command names only what its program takes${block.notRun ? ` (not run: ${block.notRun})` : ''}`, () => {
      expect(block.commands.flatMap((c) => check(c).map((w) => `${c}: ${w}`))).toEqual([]);
    });
  }

  for (const [n, block] of ALL.entries()) {
    if (block.notRun !== undefined || !block.commands.some(runnable)) continue;
    it(`${block.doc}:${block.line}: the lines that can run here run and succeed`, async () => {
      const { dir, env } = await sandbox(`block-${n}`);
      for (const command of block.commands.filter(runnable)) {
        const line = inSandbox(command, dir);
        const r = spawnSync('bash', ['-c', line], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
        expect(r.status, `${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
      }
    });
  }

  it("every flag of operating.md's flag table is in svc-relay --help", () => {
    const text = readFileSync(join(REPO_ROOT, 'docs/operating.md'), 'utf8');
    const flags = [...text.matchAll(/^\| `(--[a-z0-9-]+)`/gm)].map((m) => m[1]!);
    expect(flags.length).toBeGreaterThan(15);
    const relayHelp = helpOf('svc-relay', undefined);
    expect(flags.filter((f) => !new RegExp(`(^|\\s)${f}(?![a-z0-9-])`, 'm').test(relayHelp))).toEqual([]);
  });

  it('every relative link of the documents reaches a file, and its #anchor a heading there', () => {
    const broken: string[] = [];
    for (const doc of DOCUMENTS) {
      const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? join(REPO_ROOT, doc) : join(REPO_ROOT, dirname(doc), path);
        if (!existsSync(file)) broken.push(`${doc}: ${target}: no such file`);
        else if (anchor !== undefined && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${doc}: ${target}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every SVC_ setting the documents name is read by the code', () => {
    const named = new Set(DOCUMENTS.flatMap((d) => [...readFileSync(join(REPO_ROOT, d), 'utf8').matchAll(/\bSVC_[A-Z0-9_]+\b/g)].map((m) => m[0])));
    expect(named.size).toBeGreaterThan(20);
    const code = codeText();
    expect([...named].filter((v) => !code.includes(v))).toEqual([]);
  });
});

/** The text of the code and its scripts (not the documents, not this test). */
function codeText(): string {
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|mjs|js|json)$/.test(e.name) || e.name === 'run') parts.push(readFileSync(join(REPO_ROOT, p), 'utf8'));
    }
  };
  for (const d of ['relay', 'bridge', 'tools', 'shared', 'launch', 'scripts', 'test/helpers', 'test/setup', '.ci']) if (existsSync(join(REPO_ROOT, d))) walk(d);
  parts.push(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'), readFileSync(join(REPO_ROOT, 'vitest.config.ts'), 'utf8'));
  return parts.join('\n');
}

/** The anchors a markdown file's headings get, as GitHub makes them. */
function anchorsOf(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}
