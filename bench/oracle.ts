/**
 * The oracle suite: oracle.document on a 64 KiB text of 500 sections, over HTTP from the real
 * relay process, beside the same work in process without HTTP.
 *
 * The text: 500 sections under headings of levels 1 to 3, each with a line holding one link (the
 * forms in turn: `[[name]]` beside inline code, a `- ` list item with `[[name/seq|label]]`,
 * `[[https://…|label]]`, `[[scheme:value]]`), words, and every 25th a fenced code block holding
 * a heading and a link that do not count; 64,000 to 65,536 bytes (a post body's limit). It is posted as the
 * first version of an oracle space through the relay's own append pipeline, so it is current
 * and its links are indexed as in service.
 *
 * Rows (latency per call, one at a time):
 *   parse                        shared/oracle-text.ts parseOracleText alone;
 *   in process: parse + answer   the route's work without HTTP: read the version and its post,
 *                                parse, build the answer, JSON.stringify (the baseline);
 *   in process: cached parse     the same with the parse remembered per version, as the route
 *                                keeps it for the documents read most;
 *   HTTP oracle.document         GET /v1/spaces/{name}/document, the whole text;
 *   HTTP oracle.document section GET …/document?section=250 (one section, the whole outline);
 *   HTTP oracle.document md      the whole text as markdown (Accept: text/markdown).
 */
import { request } from 'undici';
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { documentAnswer, parsedTexts } from '../relay/oracle/document.js';
import { appendPost } from '../relay/posts/append.js';
import { BODY_MAX_BYTES } from '../shared/limits.js';
import { parseOracleText } from '../shared/oracle-text.js';
import { signerFromSeed } from '../shared/identity.js';
import { collectGarbage, measureLatency, summarizeLatency, type Row, type Suite, type SuiteReport } from './harness.js';
import { createSpaceInStore, openInProcess, registerKey, spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const SECTIONS = 500;
const TARGET_BYTES = 64_000;
const SAMPLES = 500;
const WARMUP = 50;

/** The benchmark text: exactly SECTIONS headings, between TARGET_BYTES and BODY_MAX_BYTES bytes. */
export function benchText(): string {
  const link = (i: number): string => {
    switch (i % 4) {
      case 0:
        return `See [[space-${i % 97}]] with \`code ${i}\`.`;
      case 1:
        return `- item [[space-${i % 89}/${1 + (i % 50)}|post ${i}]]`;
      case 2:
        return `Read [[https://example.org/doc/${i}|the page]].`;
      default:
        return `File [[sha256.file:${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}]].`;
    }
  };
  const section = (i: number, pad: number): string => {
    const lines = [`${'#'.repeat([1, 2, 3, 3, 2][i % 5]!)} Section ${i}`, link(i)];
    if (i % 25 === 0) lines.push('```', '# not a heading', '[[inside-code]]', '```');
    lines.push(`${'filler '.repeat(pad)}.`, '');
    return lines.join('\n');
  };
  // Filler words (7 bytes each) spread over the sections to reach TARGET_BYTES.
  const bare = Array.from({ length: SECTIONS }, (_, i) => section(i, 0)).join('');
  const words = Math.ceil((TARGET_BYTES - Buffer.byteLength(bare)) / 7);
  const text = Array.from({ length: SECTIONS }, (_, i) => section(i, Math.floor(words / SECTIONS) + (i < words % SECTIONS ? 1 : 0))).join('');
  if (Buffer.byteLength(text) > BODY_MAX_BYTES) throw new Error('the benchmark text is over the body limit');
  return text;
}

async function run(): Promise<SuiteReport> {
  const dataDir = tempDataDir('svc-bench-oracle-');
  const text = benchText();
  const parsed = parseOracleText(text);
  if (parsed.sections.length !== SECTIONS) throw new Error(`the text has ${parsed.sections.length} sections, not ${SECTIONS}`);
  const ownerSeed = new Uint8Array(32).fill(7);
  const rows: Row[] = [];
  let name: string;
  try {
    // Fill and measure in process, then close the database for the relay process.
    const r = await openInProcess(dataDir);
    try {
      const owner = await registerKey(r, signerFromSeed(ownerSeed), Date.now() - 2 * 86_400_000);
      name = `oracle-bench-${randomUUID().slice(0, 8)}`;
      const space = await createSpaceInStore(r, owner, name, { visibility: 'public', oracle: true, categories: ['general'], serviceReviewer: false, joinPolicy: 'request' });
      await appendPost(r.ctx, name, owner, { kind: 'version', title: 'The benchmark text', body: text });
      const read = async () => {
        const version = (await r.store.oracle.current(space.id))!;
        return { version, post: (await r.store.posts.byPostId(version.postId))! };
      };
      const cold = (postId: string, t: string) => parseOracleText(t);
      const cached = parsedTexts();
      const cases: { name: string; fn: () => unknown; baseline?: string }[] = [
        { name: 'parse', fn: () => parseOracleText(text) },
        { name: 'in process: parse + answer', fn: async () => JSON.stringify(documentAnswer(space, await read(), undefined, cold)) },
        { name: 'in process: cached parse + answer', fn: async () => JSON.stringify(documentAnswer(space, await read(), undefined, cached)), baseline: 'in process: parse + answer' },
      ];
      for (const c of cases) {
        collectGarbage();
        const m = measureLatency(c.fn, { warmupMs: 300, count: SAMPLES });
        rows.push({ name: c.name, opsPerSec: m.opsPerSec, latency: m.latency, ...(c.baseline ? { baseline: c.baseline } : {}) });
      }
    } finally {
      r.close();
    }

    const relay = await spawnBenchRelay(dataDir);
    try {
      const once = async (path: string, headers: Record<string, string> = {}): Promise<number> => {
        const t0 = performance.now();
        const res = await request(`${relay.url}${path}`, { headers });
        const body = await res.body.text();
        const dt = performance.now() - t0;
        if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`);
        return dt;
      };
      const http: { name: string; path: string; headers: Record<string, string> }[] = [
        { name: 'HTTP oracle.document (whole)', path: `/v1/spaces/${name}/document`, headers: {} },
        { name: 'HTTP oracle.document section=250', path: `/v1/spaces/${name}/document?section=250`, headers: {} },
        { name: 'HTTP oracle.document markdown', path: `/v1/spaces/${name}/document`, headers: { accept: 'text/markdown' } },
      ];
      for (const h of http) {
        for (let i = 0; i < WARMUP; i++) await once(h.path, h.headers);
        collectGarbage();
        const ms: number[] = [];
        for (let i = 0; i < SAMPLES; i++) ms.push(await once(h.path, h.headers));
        rows.push({
          name: h.name,
          opsPerSec: 1000 / (ms.reduce((a, b) => a + b, 0) / SAMPLES),
          latency: summarizeLatency(ms.map((x) => x * 1e6)),
          baseline: 'in process: parse + answer',
        });
      }
    } finally {
      await relay.kill('SIGTERM');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    rows,
    notes: [
      `text: ${Buffer.byteLength(text).toLocaleString('en-US')} bytes, ${parsed.sections.length} sections, ${parsed.references.length} references, ${parsed.listItems} list items`,
      `${SAMPLES} calls per row, one at a time; HTTP rows from the relay process (SVC_RELAY_NO_RATE_LIMITS=1) with undici, ops/s = 1 ÷ mean latency; ` +
        'the route remembers the parse of the 16 versions read last, so HTTP rows after the first request pay the cached path',
    ],
  };
}

export const oracleSuite: Suite = {
  name: 'oracle',
  title: `oracle.document on a 64 KiB text of ${SECTIONS} sections: HTTP vs in process`,
  run,
};
