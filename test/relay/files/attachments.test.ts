/**
 * Attachments, the newer API's files (relay/files/, relay/routes/files.ts), against the real
 * relay over HTTP on the test store: an upload kept at the address of its SHA-256 and fetched by
 * it once a post attaches it; a body that is not its address refused; the limits (file size,
 * four a post, a SPACE's total); a post naming bytes its author did not upload refused with
 * nothing posted; who may upload and who may fetch; a sealed SPACE refusing files; a hidden
 * post showing none and its file no longer served; a signed post binding its files by
 * fingerprint; a backup and restore keeping the files (SQLite's file copy).
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../../shared/encoding.js';
import { admit, codeOf, get, newSpace, post, signedPost } from '../../helpers/posts.js';
import { call, mintToken, startRelay, tempDataDir, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { runCli } from '../../helpers/relay-cli.js';
import { createSealedSpace, publishKey, sealedKey } from '../../helpers/sealed.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

/** Room for three 1,000-byte files in one SPACE, so the total is met with small files. */
const SPACE_BYTES = 3_000;

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let reader: MintedToken;
let outsider: MintedToken;

beforeAll(async () => {
  relay = await startRelay({ config: { attachedBytesPerSpace: SPACE_BYTES } });
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  reader = await mintToken(relay.url);
  outsider = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

function sha(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Raw bytes to PUT /v1/spaces/{name}/files/{address}. */
async function upload(r: RunningRelay, who: MintedToken | undefined, space: string, bytes: Uint8Array, address = sha(bytes)): Promise<Answer> {
  r.clock.advance(2_100);
  const res = await fetch(`${r.url}/v1/spaces/${space}/files/${address}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', ...(who ? { authorization: `Bearer ${who.token}` } : {}) },
    body: bytes,
  });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('application/json') ? JSON.parse(text) : undefined;
  return { status: res.status, body: json, text, headers: res.headers };
}

/** GET the file: status, headers and the bytes. */
async function fetchFile(r: RunningRelay, who: MintedToken | undefined, space: string, address: string): Promise<{ status: number; bytes: Uint8Array; headers: Headers; text: string }> {
  const res = await fetch(`${r.url}/v1/spaces/${space}/files/${address}`, { headers: who ? { authorization: `Bearer ${who.token}` } : {} });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, bytes, headers: res.headers, text: Buffer.from(bytes).toString('utf8') };
}

async function append(r: RunningRelay, who: MintedToken, space: string, body: Record<string, unknown>): Promise<Answer> {
  r.clock.advance(2_100);
  return call(r, 'POST', `/v1/spaces/${space}/posts`, { token: who.token, body });
}

async function headOf(space: string, who: MintedToken): Promise<string> {
  return (await get(relay, `/v1/spaces/${space}/posts?detail=ids&limit=1&order=desc`, who)).body.head_seq;
}

function file(n: number): Uint8Array {
  return new Uint8Array(randomBytes(n));
}

describe('files: upload and fetch by hash', () => {
  it('an upload answers its address and wait, the file is served only once a post attaches it, then as uploaded', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const bytes = file(1_000);
    const address = sha(bytes);
    const put = await upload(relay, writer, space.name, bytes);
    expect(put.status, put.text).toBe(201);
    expect(put.body).toEqual({ space: space.name, sha256: address, bytes: 1_000, pending_until: expect.any(String) });
    expect(Date.parse(put.body.pending_until) - relay.clock.now()).toBeGreaterThan(23 * 3600_000);
    // Pending: nobody reads it yet, its uploader included.
    expect((await fetchFile(relay, writer, space.name, address)).status).toBe(404);

    const sent = await post(relay, writer, space, { kind: 'result', title: 'with a file', attachments: [{ sha256: address, name: 'run.bin', media_type: 'application/octet-stream' }] });
    const got = await fetchFile(relay, owner, space.name, address);
    expect(got.status).toBe(200);
    expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(got.headers.get('content-type')).toBe('application/octet-stream');
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="${address}"`);
    expect(got.headers.get('content-security-policy')).toContain('sandbox');

    // The post shows the list at full and counts at snippets; the hash is also its sha256.file fingerprint.
    const full = (await get(relay, `/v1/posts/${sent.post_id}`, owner)).body;
    const one = full.post ?? full;
    expect(one.attachments).toEqual([{ sha256: address, name: 'run.bin', media_type: 'application/octet-stream', bytes: 1_000 }]);
    expect(one.attachment_count).toBe(1);
    expect(one.attachment_bytes).toBe(1_000);
    expect(one.fingerprints).toContainEqual({ scheme: 'sha256.file', value: address });
    const page = (await get(relay, `/v1/spaces/${space.name}/posts?detail=snippets`, owner)).body.items;
    expect(page.at(-1)).toMatchObject({ attachment_count: 1, attachment_bytes: 1_000 });
    expect(page.at(-1).attachments).toBeUndefined();
  });

  it('text is served as text/plain, and a post without attachments reads as it did in API 0.1', async () => {
    const space = await newSpace(relay, owner);
    const bytes = new TextEncoder().encode('line one\nline two\n');
    expect((await upload(relay, owner, space.name, bytes)).status).toBe(201);
    await post(relay, owner, space, { kind: 'obs', title: 'notes', attachments: [{ sha256: sha(bytes), name: 'notes.txt', media_type: 'text/plain' }] });
    const got = await fetchFile(relay, owner, space.name, sha(bytes));
    expect(got.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(got.text).toBe('line one\nline two\n');
    const plain = await post(relay, owner, space, { kind: 'obs', title: 'no files' });
    const read = (await get(relay, `/v1/posts/${plain.post_id}`, owner)).body;
    const one = read.post ?? read;
    for (const member of ['attachments', 'attachment_count', 'attachment_bytes']) expect(one).not.toHaveProperty(member);
  });

  it('a body whose SHA-256 is not the address is refused and nothing is kept', async () => {
    const space = await newSpace(relay, owner);
    const bytes = file(100);
    const other = sha(file(100));
    const put = await upload(relay, owner, space.name, bytes, other);
    expect(put.status).toBe(400);
    expect(codeOf(put)).toBe('INVALID_REQUEST');
    expect(put.body.error.detail).toContain(sha(bytes));
    const named = await append(relay, owner, space.name, { kind: 'obs', title: 'x', attachments: [{ sha256: other, name: 'a', media_type: 'text/plain' }] });
    expect(codeOf(named)).toBe('ATTACHMENT_NOT_FOUND');
    const badAddress = await upload(relay, owner, space.name, bytes, 'ABC');
    expect(codeOf(badAddress)).toBe('INVALID_REQUEST');
  });
});

describe('files: limits and refusals', () => {
  it('a post naming bytes its author did not upload is ATTACHMENT_NOT_FOUND, detail the hash, and nothing is posted', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const mine = file(10);
    expect((await upload(relay, owner, space.name, mine)).status).toBe(201);
    const before = await headOf(space.name, owner);
    const missing = sha(file(10));
    const r = await append(relay, writer, space.name, { kind: 'obs', title: 'x', attachments: [{ sha256: missing, name: 'a', media_type: 'text/plain' }] });
    expect(r.status).toBe(422);
    expect(codeOf(r)).toBe('ATTACHMENT_NOT_FOUND');
    expect(r.body.error.detail).toBe(missing);
    // Bytes another KEY uploaded do not count.
    const theirs = await append(relay, writer, space.name, { kind: 'obs', title: 'x', attachments: [{ sha256: sha(mine), name: 'a', media_type: 'text/plain' }] });
    expect(codeOf(theirs)).toBe('ATTACHMENT_NOT_FOUND');
    expect(await headOf(space.name, owner)).toBe(before);
  });

  it('an upload waits a day: after it the post naming it is refused', async () => {
    const space = await newSpace(relay, owner);
    const bytes = file(10);
    expect((await upload(relay, owner, space.name, bytes)).status).toBe(201);
    relay.clock.advance(24 * 3600_000 + 1_000);
    const r = await append(relay, owner, space.name, { kind: 'obs', title: 'late', attachments: [{ sha256: sha(bytes), name: 'a', media_type: 'text/plain' }] });
    expect(codeOf(r)).toBe('ATTACHMENT_NOT_FOUND');
  });

  it('a file over 262,144 bytes is TOO_LARGE; an empty one INVALID_REQUEST', async () => {
    const space = await newSpace(relay, owner);
    const big = await upload(relay, owner, space.name, file(262_145));
    expect(big.status).toBe(413);
    expect(codeOf(big)).toBe('TOO_LARGE');
    const empty = await upload(relay, owner, space.name, new Uint8Array(0));
    expect(codeOf(empty)).toBe('INVALID_REQUEST');
    expect((await upload(relay, owner, space.name, file(262_144))).status).toBe(201);
  });

  it('five attachments, a name twice, a bad name or media type, or an unknown member are INVALID_REQUEST', async () => {
    const space = await newSpace(relay, owner);
    const one = (i: number, extra: Record<string, unknown> = {}) => ({ sha256: sha(new Uint8Array([i])), name: `f${i}`, media_type: 'text/plain', ...extra });
    const cases: [unknown, string][] = [
      [[0, 1, 2, 3, 4].map((i) => one(i)), 'at most 4'],
      [[one(0), one(1, { name: 'f0' })], 'named twice'],
      [[one(0, { name: '.hidden' })], 'leading dot'],
      [[one(0, { name: 'a/b' })], 'slash'],
      [[one(0, { media_type: 'Text/Plain' })], 'media_type'],
      [[one(0, { url: 'x' })], 'not a member'],
    ];
    for (const [attachments, detail] of cases) {
      const r = await append(relay, owner, space.name, { kind: 'obs', title: 'x', attachments });
      expect(codeOf(r), detail).toBe('INVALID_REQUEST');
      expect(r.body.error.detail, detail).toContain(detail);
    }
  });

  it("the SPACE's attached bytes count each file once, a hidden post's no longer; past them FILE_LIMIT and nothing posted", async () => {
    const space = await newSpace(relay, owner);
    const files = [file(1_000), file(1_000), file(1_000), file(1_000)];
    for (const f of files) expect((await upload(relay, owner, space.name, f)).status).toBe(201);
    const named = (f: Uint8Array, name: string) => ({ sha256: sha(f), name, media_type: 'application/octet-stream' });
    const first = await post(relay, owner, space, { kind: 'obs', title: 'two', attachments: [named(files[0]!, 'a'), named(files[1]!, 'b')] });
    // The same file again adds nothing.
    await post(relay, owner, space, { kind: 'obs', title: 'again', attachments: [named(files[0]!, 'a')] });
    await post(relay, owner, space, { kind: 'obs', title: 'third', attachments: [named(files[2]!, 'c')] });
    const before = await headOf(space.name, owner);
    const over = await append(relay, owner, space.name, { kind: 'obs', title: 'fourth', attachments: [named(files[3]!, 'd')] });
    expect(over.status).toBe(409);
    expect(codeOf(over)).toBe('FILE_LIMIT');
    expect(await headOf(space.name, owner)).toBe(before);
    // Hiding the post that alone holds files[1] gives its bytes back.
    relay.clock.advance(2_100);
    expect((await call(relay, 'PUT', `/v1/posts/${first.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect((await append(relay, owner, space.name, { kind: 'obs', title: 'fourth', attachments: [named(files[3]!, 'd')] })).status).toBe(201);
  });

  it('capabilities name attachments among the newer features served and publish the limits under limits.attachments', async () => {
    const caps = (await get(relay, '/v1/capabilities')).body;
    expect(caps.api_version).toBe('0.1');
    expect(caps.features.supported).toContain('attachments');
    expect(caps.features.by_name.attachments).toMatchObject({ status: 'supported', api: 'after 0.1' });
    expect(caps.limits.attachments).toEqual({
      file_bytes: 262_144, per_post: 4, name_bytes: 255, media_type_bytes: 127, pending_hours: 24, attached_bytes_per_space: SPACE_BYTES,
    });
  });
});

describe('files: who may upload and read', () => {
  it("a reader may not upload, nor a KEY with no role; a non-member cannot read a private SPACE's file, which reads as absent", async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, reader, 'reader');
    const bytes = file(50);
    const byReader = await upload(relay, reader, space.name, bytes);
    expect(byReader.status).toBe(403);
    expect(codeOf(byReader)).toBe('WRITE_DENIED');
    expect(codeOf(await upload(relay, outsider, space.name, bytes))).toBe('WRITE_DENIED');
    expect((await upload(relay, undefined, space.name, bytes)).status).toBe(401);
    expect((await upload(relay, owner, space.name, bytes)).status).toBe(201);
    await post(relay, owner, space, { kind: 'obs', title: 'x', attachments: [{ sha256: sha(bytes), name: 'f', media_type: 'application/octet-stream' }] });

    expect((await fetchFile(relay, reader, space.name, sha(bytes))).status).toBe(200);
    const denied = await fetchFile(relay, outsider, space.name, sha(bytes));
    expect(denied.status).toBe(404);
    expect(JSON.parse(denied.text).error.code).toBe('FILE_NOT_FOUND');
    const anonymous = await fetchFile(relay, undefined, space.name, sha(bytes));
    expect(JSON.parse(anonymous.text).error.code).toBe('FILE_NOT_FOUND');
    // The same answer as a hash nobody holds and a SPACE that does not exist.
    expect(JSON.parse((await fetchFile(relay, outsider, space.name, sha(file(5)))).text).error.code).toBe('FILE_NOT_FOUND');
    expect(JSON.parse((await fetchFile(relay, outsider, 'no-such-space-here', sha(bytes))).text).error.code).toBe('FILE_NOT_FOUND');
  });

  it("anyone, with no KEY too, fetches a public SPACE's attached file", async () => {
    const space = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'open', categories: ['general'] });
    const bytes = file(20);
    expect((await upload(relay, owner, space.name, bytes)).status).toBe(201);
    await post(relay, owner, space, { kind: 'obs', title: 'x', attachments: [{ sha256: sha(bytes), name: 'f', media_type: 'application/octet-stream' }] });
    expect((await fetchFile(relay, undefined, space.name, sha(bytes))).status).toBe(200);
    // A KEY with no role may post text in an open SPACE, but not attach files.
    const r = await append(relay, outsider, space.name, { kind: 'obs', title: 'x', attachments: [{ sha256: sha(bytes), name: 'f', media_type: 'application/octet-stream' }] });
    expect(codeOf(r)).toBe('WRITE_DENIED');
  });

  it('a sealed SPACE takes no files: the upload and a post naming one are SEALED_NO_FILES', async () => {
    const k = await sealedKey(relay);
    expect((await publishKey(relay, k)).status).toBe(200);
    const s = await createSealedSpace(relay, k);
    const bytes = file(10);
    const put = await upload(relay, k, s.name, bytes);
    expect(put.status).toBe(409);
    expect(codeOf(put)).toBe('SEALED_NO_FILES');
    const r = await append(relay, k, s.name, { sealed: { header: 'x', ciphertext: 'y' }, attachments: [{ sha256: sha(bytes), name: 'f', media_type: 'text/plain' }] });
    expect(codeOf(r)).toBe('SEALED_NO_FILES');
  });
});

describe('files: hidden posts and signed posts', () => {
  it('a hidden post shows no attachments and its file is no longer served; shown again, both return', async () => {
    const space = await newSpace(relay, owner);
    const bytes = file(30);
    expect((await upload(relay, owner, space.name, bytes)).status).toBe(201);
    const sent = await post(relay, owner, space, { kind: 'obs', title: 'x', attachments: [{ sha256: sha(bytes), name: 'secret-name.bin', media_type: 'application/octet-stream' }] });
    relay.clock.advance(2_100);
    expect((await call(relay, 'PUT', `/v1/posts/${sent.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    const read = await get(relay, `/v1/spaces/${space.name}/posts?detail=full`, owner);
    expect(read.text).not.toContain('secret-name.bin');
    expect(read.text).not.toContain(sha(bytes));
    const item = read.body.items.find((p: { post_id: string }) => p.post_id === sent.post_id);
    expect(item.unavailable.state).toBe('hidden');
    for (const member of ['attachments', 'attachment_count', 'attachment_bytes']) expect(item).not.toHaveProperty(member);
    expect((await fetchFile(relay, owner, space.name, sha(bytes))).status).toBe(404);

    relay.clock.advance(2_100);
    expect((await call(relay, 'DELETE', `/v1/posts/${sent.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect((await fetchFile(relay, owner, space.name, sha(bytes))).status).toBe(200);
  });

  it('a signed post binds each attachment by a sha256.file fingerprint of its object, and is refused without one', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    const bytes = file(40);
    const address = sha(bytes);
    expect((await upload(relay, writer, space.name, bytes)).status).toBe(201);
    const attachments = [{ sha256: address, name: 'signed.bin', media_type: 'application/octet-stream' }];
    const without = signedPost(writer, space, { kind: 'obs', title: 'no print' });
    const refused = await append(relay, writer, space.name, { ...without.submission, attachments });
    expect(codeOf(refused)).toBe('INVALID_REQUEST');
    expect(refused.body.error.detail).toContain('sha256.file');
    const bound = signedPost(writer, space, { kind: 'obs', title: 'bound', fingerprints: [{ scheme: 'sha256.file', value: address }] });
    const ok = await append(relay, writer, space.name, { ...bound.submission, attachments });
    expect(ok.status, ok.text).toBe(201);
    const read = (await get(relay, `/v1/posts/${ok.body.post_id}`, owner)).body;
    expect((read.post ?? read).attachments).toEqual([{ ...attachments[0], bytes: 40 }]);
    // A replay with other attachments is a conflict; the same ones answer the first post.
    const again = await append(relay, writer, space.name, { ...bound.submission, attachments });
    expect(again.body.replayed).toBe(true);
    const other = await append(relay, writer, space.name, { ...bound.submission, attachments: [{ ...attachments[0], name: 'renamed.bin' }] });
    expect(codeOf(other)).toBe('IDEMPOTENCY_CONFLICT');
  });
});

// backup and restore copy SQLite's file (PostgreSQL: pg_dump): not run on the PostgreSQL test store.
describe.skipIf(onPostgres)(`files: backup and restore${ON_POSTGRES_SKIP}`, () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });
  const dir = (prefix: string) => {
    const d = tempDataDir(prefix);
    cleanup.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  };

  it('a backup holds the files, and the restored relay serves them by hash', async () => {
    const data = dir('svc-files-data-');
    const first = await startRelay({ dataDir: data });
    cleanup.push(() => first.close());
    const me = await mintToken(first.url);
    const space = await newSpace(first, me);
    const bytes = file(5_000);
    expect((await upload(first, me, space.name, bytes)).status).toBe(201);
    await post(first, me, space, { kind: 'obs', title: 'kept', attachments: [{ sha256: sha(bytes), name: 'kept.bin', media_type: 'application/octet-stream' }] });
    const out = join(dir('svc-files-out-'), 'relay.backup');
    const backup = await runCli(['backup', out, '--data', data]);
    expect(backup.code, backup.stderr).toBe(0);
    await first.close();

    const restored = join(dir('svc-files-new-'), 'data');
    const r = await runCli(['restore', out, '--data', restored, '--without-checkpoint-log']);
    expect(r.code, r.stderr).toBe(0);
    const again = await startRelay({ dataDir: restored });
    cleanup.push(() => again.close());
    const got = await fetchFile(again, me, space.name, sha(bytes));
    expect(got.status).toBe(200);
    expect(toHex(got.bytes)).toBe(toHex(bytes));
  });
});

describe('files: the pending window', () => {
  it('the hourly pass deletes bytes nobody attached a day after their upload, and keeps attached ones', async () => {
    const space = await newSpace(relay, owner);
    const loose = file(60);
    const kept = file(61);
    expect((await upload(relay, owner, space.name, loose)).status).toBe(201);
    expect((await upload(relay, owner, space.name, kept)).status).toBe(201);
    await post(relay, owner, space, { kind: 'obs', title: 'kept', attachments: [{ sha256: sha(kept), name: 'k', media_type: 'application/octet-stream' }] });
    const held = async () => (await relay.store.db.prepare<[number], { sha256: string }>('SELECT sha256 FROM space_files WHERE space_row_id = ? ORDER BY sha256').all(space.id)).map((r) => r.sha256);
    expect(await held()).toEqual([sha(loose), sha(kept)].sort());
    await relay.app.filePrune.runOnce(relay.clock.now());
    expect(await held()).toEqual([sha(loose), sha(kept)].sort());
    relay.clock.advance(24 * 3600_000 + 60_000);
    expect(await relay.app.filePrune.runOnce(relay.clock.now())).toBeGreaterThanOrEqual(1);
    expect(await held()).toEqual([sha(kept)]);
    expect((await fetchFile(relay, owner, space.name, sha(kept))).status).toBe(200);
  });
});
