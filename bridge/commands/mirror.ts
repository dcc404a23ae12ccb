/**
 * `svc-bridge mirror SPACE --to URL`: keep a read-only copy of SPACE (at SVC_API, the origin)
 * on the relay at URL (relay/routes/mirrors.ts), so readers can read and verify it from either.
 *
 * Every run compares before it sends anything: the root key the mirror pinned against the one
 * this bridge pinned for the origin, the mirror's head line against the origin's line at that
 * position (chain_hash), and the mirror's last checkpoint against the origin's checkpoint over
 * the same range (checkpoint_id). Chain links and checkpoints each name the one before, so equal
 * heads and equal last checkpoints mean equal histories up to them. Any difference is printed
 * loudly on stderr, naming the SPACE, the position and both hashes, nothing is sent, and the exit
 * code is 3; the mirror keeps its copy (it also refuses diverging data itself: HISTORY_ROLLBACK).
 *
 * Then only what is new is sent: the origin's export after the mirror's head (one export page
 * at a time, cut into pushes of at most PUSH_BYTES) with the origin's checkpoints after the
 * mirror's last, each checkpoint in the push that holds its last line. The mirror verifies all
 * of it before storing anything. Afterwards the bridge reads the new lines back from the mirror
 * (they must be the origin's, byte for byte) and checks the newest covered post's proof as the
 * mirror serves it, under the origin's root this bridge pinned.
 *
 * Everything the relays send is attacker-controlled input.
 */
import { createHash } from 'node:crypto';
import { verifyCheckpointInclusion } from '../../shared/checkpoint.js';
import { fromHex, isHex, toHex } from '../../shared/encoding.js';
import { validateSpaceName } from '../../shared/validate.js';
import type { RelayApi } from '../../tools/api.js';
import { BridgeError, RelayRefusal } from '../../tools/errors.js';
import { refusalText } from '../../tools/render.js';
import { checkApi } from '../settings.js';
import { checkPostProof } from '../../shared/post-proof.js';
import type { Verifier } from '../../tools/verify/verify.js';
import { CommandUsage, has, one, parseArgs, sleep } from './common.js';

export const MIRROR_HELP = `svc-bridge mirror SPACE --to URL: copy SPACE from the relay at SVC_API (the origin) to the
relay at URL, which keeps it read-only and verifies every line and checkpoint before storing it.
Needs this KEY to own SPACE at the origin, and the relay at URL to accept mirrors from the origin
(svc-relay --mirror-from ORIGIN). Each run compares the two first (service root key, head
chain_hash, last checkpoint), then sends only what is new, then reads it back from the mirror.

  --to URL   the relay that keeps the mirror
  --check    compare only; send nothing (any KEY that may read SPACE at both relays)

Exit codes: 0 the two agree (and the mirror holds everything the origin served); 1 a relay
refused or could not be reached; 2 usage; 3 THE MIRROR AND THE ORIGIN DIFFER (named on stderr).`;

/** Largest push: well under the relay's limit for one sync (one export page and its checkpoints). */
const PUSH_BYTES = 4 * 1024 * 1024;
/** Export page size asked of the origin (its most). */
const EXPORT_LIMIT = 1000;
const CHECKPOINT_PAGE = 200;
export const EXIT_DIFFERS = 3;

export interface MirrorContext {
  /** The origin relay (SVC_API). */
  readonly origin: RelayApi;
  /** A client for another relay, signed in as this KEY. */
  readonly connect: (api: URL) => RelayApi;
  /** The origin's verifier: its root pinned in this KEY's cache. */
  readonly verifier: Verifier;
  readonly out: (line: string) => void;
  readonly log: (line: string) => void;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface Line {
  readonly seq: number;
  readonly chainHash: string;
  readonly text: string;
}

interface ExportPage {
  readonly lines: Line[];
  readonly nextAfter: number;
  readonly hasMore: boolean;
  readonly head: number;
}

function bad(detail: string): BridgeError {
  return new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: ${detail}`, 'Check that both addresses are svc relays; report it to their operators.');
}

/** Read an export (objects.md §14) strictly: the trailer is there and its segment_sha256 holds. */
function readExport(text: string, where: string): ExportPage {
  if (!text.endsWith('\n')) throw bad(`${where}: an export without its final newline (cut off in transit)`);
  const rows = text.slice(0, -1).split('\n');
  let trailer: unknown;
  try {
    trailer = JSON.parse(rows.pop()!);
  } catch {
    throw bad(`${where}: the export's trailer is not JSON`);
  }
  const cursor = isObject(trailer) && isObject(trailer.cursor) ? trailer.cursor : undefined;
  const exp = isObject(trailer) && isObject(trailer.export) ? trailer.export : undefined;
  if (cursor === undefined || exp === undefined) throw bad(`${where}: an export without its trailer (cut off in transit)`);
  const hash = createHash('sha256');
  for (const r of rows) hash.update(`${r}\n`, 'utf8');
  if (hash.digest('hex') !== exp.segment_sha256) throw bad(`${where}: segment_sha256 does not match the lines`);
  const lines = rows.map((r, i) => {
    let post: unknown;
    try {
      post = JSON.parse(r);
    } catch {
      throw bad(`${where}: line ${i + 1} is not JSON`);
    }
    const proof = isObject(post) && isObject(post.proof) ? post.proof : undefined;
    const chain = proof !== undefined && isObject(proof.chain) ? proof.chain : undefined;
    if (!isObject(post) || typeof post.seq !== 'string' || !/^[1-9][0-9]{0,15}$/.test(post.seq) || chain === undefined || !isHex(chain.chain_hash, 32)) {
      throw bad(`${where}: line ${i + 1} is not a post with its proof`);
    }
    return { seq: Number(post.seq), chainHash: chain.chain_hash as string, text: r };
  });
  return { lines, nextAfter: Number(cursor.next_after), hasMore: cursor.has_more === true, head: Number(cursor.head_seq) };
}

async function originExport(api: RelayApi, name: string, after: number, limit: number): Promise<ExportPage> {
  const res = await api.request({ path: `/v1/spaces/${encodeURIComponent(name)}/posts`, query: { after, limit }, accept: 'application/x-ndjson' });
  return readExport(res.text, `${api.base.origin} export of ${name}`);
}

/** The origin's posts checkpoints with last > after, oldest first. */
async function originCheckpoints(api: RelayApi, name: string, after: number, max = Infinity): Promise<Obj[]> {
  const out: Obj[] = [];
  let cursor: number | null = after;
  while (cursor !== null && out.length < max) {
    const res = await api.request({ path: `/v1/spaces/${encodeURIComponent(name)}/checkpoints`, query: { stream: 'posts', after: cursor, limit: CHECKPOINT_PAGE }, auth: 'opt' });
    const body = res.body;
    if (!isObject(body) || !Array.isArray(body.items)) throw bad('checkpoints.list without items');
    out.push(...body.items.filter(isObject));
    cursor = body.has_more === true && typeof body.next_after === 'string' ? Number(body.next_after) : null;
  }
  return out;
}

function readStatus(body: unknown): Obj & { space_id: string; head_seq: string } {
  if (!isObject(body) || typeof body.space_id !== 'string' || typeof body.head_seq !== 'string') throw bad('a mirror status without space_id and head_seq');
  return body as Obj & { space_id: string; head_seq: string };
}

const short = (h: unknown) => (typeof h === 'string' ? `${h.slice(0, 16)}…` : String(h));

/** The differences between the origin and the mirror's status; empty when they agree. */
async function compare(ctx: MirrorContext, name: string, status: Obj, originRoot: string): Promise<string[]> {
  const found: string[] = [];
  if (status.service_root_key !== originRoot) {
    found.push(`SPACE ${name}: the mirror pinned the origin's service_root_key ${String(status.service_root_key)}, this bridge pinned ${originRoot} for ${ctx.origin.base.origin}`);
  }
  const head = Number(status.head_seq);
  if (head > 0) {
    let page: ExportPage;
    try {
      page = await originExport(ctx.origin, name, head - 1, 1);
    } catch (e) {
      // An origin whose head is behind the mirror's refuses the cursor (CURSOR_AHEAD, or HISTORY_ROLLBACK after a restore).
      if (!(e instanceof RelayRefusal) || !['CURSOR_AHEAD', 'HISTORY_ROLLBACK'].includes(e.code)) throw e;
      found.push(`SPACE ${name} seq ${head}: the origin has no such position (${e.code}${e.detail === undefined ? '' : `: ${e.detail}`}), the mirror holds chain_hash ${String(status.head_chain_hash)} there`);
      return found;
    }
    const line = page.lines[0];
    if (line === undefined || line.seq !== head) {
      found.push(`SPACE ${name} seq ${head}: the origin's head is ${page.head}, behind the mirror's ${head} (mirror chain_hash ${String(status.head_chain_hash)})`);
    } else if (line.chainHash !== status.head_chain_hash) {
      found.push(`SPACE ${name} seq ${head}: origin chain_hash ${line.chainHash}, mirror chain_hash ${String(status.head_chain_hash)}`);
    }
  }
  const kept = isObject(status.last_checkpoint) ? status.last_checkpoint : undefined;
  if (kept !== undefined) {
    const [theirs] = await originCheckpoints(ctx.origin, name, Number(kept.first) - 1, 1);
    if (theirs === undefined || theirs.checkpoint_id !== kept.checkpoint_id || theirs.last !== kept.last) {
      const at = theirs === undefined ? 'none there' : `${String(theirs.checkpoint_id)} over ${String(theirs.first)}-${String(theirs.last)}`;
      found.push(`SPACE ${name} checkpoint ${String(kept.first)}-${String(kept.last)}: origin ${at}, mirror ${String(kept.checkpoint_id)}`);
    }
  }
  return found;
}

function loud(ctx: MirrorContext, to: URL, differences: readonly string[]): number {
  for (const d of differences) ctx.log(`MIRROR DIFFERS FROM ITS ORIGIN: ${d} (origin ${ctx.origin.base.origin}, mirror ${to.origin})`);
  ctx.log('The mirror keeps its copy and takes no other history; nothing more was sent. Find out which relay changed history before you trust either.');
  process.exitCode = EXIT_DIFFERS;
  return EXIT_DIFFERS;
}

/** Read the pushed lines back from the mirror and check the newest covered proof under the origin's root. */
async function readBack(mirror: RelayApi, spaceId: string, after: number, sent: readonly Line[], root: Uint8Array): Promise<string> {
  let at = after;
  let i = 0;
  while (i < sent.length) {
    const res = await mirror.request({ path: `/v1/mirrors/${spaceId}/posts`, query: { after: at, limit: EXPORT_LIMIT }, accept: 'application/x-ndjson' });
    const page = readExport(res.text, `${mirror.base.origin} mirror export`);
    if (page.lines.length === 0) break;
    for (const l of page.lines) {
      if (i < sent.length && l.text !== sent[i]!.text) throw bad(`the mirror serves seq ${l.seq} otherwise than the origin exported it`);
      i++;
    }
    at = page.lines[page.lines.length - 1]!.seq;
  }
  if (i < sent.length) throw bad(`the mirror serves ${i} of the ${sent.length} lines it stored`);
  const status = readStatus((await mirror.request({ path: `/v1/mirrors/${spaceId}` })).body);
  const last = isObject(status.last_checkpoint) ? Number(status.last_checkpoint.last) : 0;
  if (last === 0) return `${sent.length} new lines read back identical; no checkpoint yet to prove them by`;
  const proof = (await mirror.request({ path: `/v1/mirrors/${spaceId}/posts/${last}/proof` })).body;
  if (!isObject(proof) || !isObject(proof.post)) throw bad('a mirror proof without its post');
  const post = proof.post;
  const check = checkPostProof(post);
  if (check.ok !== true) throw bad(`the mirror's proof of seq ${last}: ${check.detail}`);
  const chain = (post.proof as Obj).chain as Obj;
  verifyCheckpointInclusion(
    { spaceId, stream: 'posts', position: BigInt(last), id: fromHex(post.object_id, 32, 'object_id'), chainHash: fromHex(chain.chain_hash, 32, 'chain_hash') },
    { leaf: proof.leaf, checkpoint: proof.checkpoint, inclusion: proof.inclusion },
    root,
  );
  return `${sent.length} new lines read back identical; the mirror's proof of seq ${last} verifies under the origin's root`;
}

/** Refusals a push waits out: the writes bucket (a large SPACE takes many pushes), the origin or another sync busy. */
const WAIT_OUT = ['RATE_LIMITED', 'BUSY'];
const WAIT_TRIES = 5;
const WAIT_MAX_SECONDS = 120;

/** Run `send`, waiting out RATE_LIMITED and BUSY by their Retry-After (a few times, never long). */
export async function patiently<T>(ctx: MirrorContext, send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (e) {
      const seconds = e instanceof RelayRefusal ? (e.retryAfter ?? 1) : undefined;
      if (!(e instanceof RelayRefusal) || !WAIT_OUT.includes(e.code) || attempt >= WAIT_TRIES || seconds! > WAIT_MAX_SECONDS) throw e;
      ctx.log(`the mirror answered ${e.code}; sending again in ${seconds} s`);
      await sleep(seconds! * 1000);
    }
  }
}

export async function runMirror(ctx: MirrorContext, words: readonly string[]): Promise<number> {
  const args = parseArgs(words, ['to'], ['check']);
  if (args.positional.length !== 1) throw new CommandUsage('name one SPACE');
  const name = args.positional[0]!;
  try {
    validateSpaceName(name, 'SPACE');
  } catch (e) {
    throw new CommandUsage((e as Error).message);
  }
  const toText = one(args, 'to');
  if (toText === undefined) throw new CommandUsage('--to URL: the relay that keeps the mirror');
  let to: URL;
  try {
    to = checkApi(toText);
  } catch (e) {
    // The same rule as SVC_API: https, or http to this machine only (the token travels with it).
    throw new CommandUsage(`--to: ${(e as Error).message.replace(/^SVC_API/, 'the address')}`);
  }
  if (to.origin === ctx.origin.base.origin) throw new CommandUsage('--to names the origin itself (SVC_API)');
  const mirror = ctx.connect(to);

  const trust = await ctx.verifier.trust();
  if (trust.root === undefined) throw bad(`${ctx.origin.base.origin} publishes no service_root_key`);
  if (trust.rootChanged !== undefined) return loud(ctx, to, [`SPACE ${name}: ${trust.rootChanged}`]);
  const originRoot = toHex(trust.root);

  let status: Obj & { space_id: string; head_seq: string };
  if (has(args, 'check')) {
    const profile = (await ctx.origin.request({ path: `/v1/spaces/${encodeURIComponent(name)}`, auth: 'opt' })).body;
    if (!isObject(profile) || typeof profile.space_id !== 'string') throw bad('a SPACE profile without space_id');
    status = readStatus((await mirror.request({ path: `/v1/mirrors/${profile.space_id}` })).body);
  } else {
    status = readStatus((await mirror.request({ method: 'POST', path: '/v1/mirrors', body: { origin: ctx.origin.base.origin, name } })).body);
  }
  const differences = await compare(ctx, name, status, originRoot);
  if (differences.length > 0) return loud(ctx, to, differences);

  const spaceId = status.space_id;
  const startHead = Number(status.head_seq);
  if (has(args, 'check')) {
    const originHead = (await originExport(ctx.origin, name, startHead, 1)).head;
    const behind = originHead > startHead ? ` (${originHead - startHead} newer at the origin, not mirrored yet)` : '';
    ctx.out(
      `mirror of SPACE ${name} (${spaceId}) at ${to.origin} agrees with ${ctx.origin.base.origin}: mirror head ${startHead}, origin head ${originHead}${behind}, ${String(status.checkpoints)} checkpoints held`,
    );
    return 0;
  }

  const keptLast = isObject(status.last_checkpoint) ? Number(status.last_checkpoint.last) : 0;
  let pending = await originCheckpoints(ctx.origin, name, keptLast);
  const sent: Line[] = [];
  let sentCheckpoints = 0;
  let originHead = startHead;
  const push = async (lines: readonly Line[], upTo: number) => {
    const checkpoints = pending.filter((c) => Number(c.last) <= upTo);
    pending = pending.filter((c) => Number(c.last) > upTo);
    if (lines.length === 0 && checkpoints.length === 0) return;
    await patiently(ctx, () => mirror.request({ method: 'POST', path: `/v1/mirrors/${spaceId}/sync`, body: { lines: lines.map((l) => l.text), checkpoints }, timeoutMs: 120_000 }));
    sent.push(...lines);
    sentCheckpoints += checkpoints.length;
  };
  try {
    let after = startHead;
    for (;;) {
      const page = await originExport(ctx.origin, name, after, EXPORT_LIMIT);
      originHead = Math.max(originHead, page.head);
      let batch: Line[] = [];
      let bytes = 0;
      for (const line of page.lines) {
        if (batch.length > 0 && bytes + line.text.length > PUSH_BYTES) {
          await push(batch, batch[batch.length - 1]!.seq);
          batch = [];
          bytes = 0;
        }
        batch.push(line);
        bytes += line.text.length;
      }
      if (batch.length > 0) await push(batch, batch[batch.length - 1]!.seq);
      if (!page.hasMore || page.lines.length === 0) break;
      after = page.nextAfter;
    }
    // Checkpoints the origin signed since the last run over lines the mirror already held.
    await push([], startHead + sent.length);
  } catch (e) {
    if (e instanceof RelayRefusal && e.code === 'HISTORY_ROLLBACK') return loud(ctx, to, [refusalText(e)]);
    throw e;
  }

  const after = readStatus((await mirror.request({ path: `/v1/mirrors/${spaceId}` })).body);
  const again = await compare(ctx, name, after, originRoot);
  if (again.length > 0) return loud(ctx, to, again);
  const readBackNote = await readBack(mirror, spaceId, startHead, sent, trust.root);
  ctx.out(
    `mirror of SPACE ${name} (${spaceId}) at ${to.origin}: sent ${sent.length} lines and ${sentCheckpoints} checkpoints; ` +
      `origin head ${originHead}, mirror head ${after.head_seq} (chain_hash ${short(after.head_chain_hash)}), ` +
      `last checkpoint ${isObject(after.last_checkpoint) ? `${String(after.last_checkpoint.first)}-${String(after.last_checkpoint.last)} ${short(after.last_checkpoint.checkpoint_id)}` : 'none'} the same on both; ${readBackNote}`,
  );
  return 0;
}
