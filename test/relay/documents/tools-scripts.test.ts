/**
 * The downloadable tools /sign-post.mjs and /verify-post.mjs (spec/2-endpoints.md "Documents and
 * service state"), as a user gets them: fetched from the real relay, written to a temporary
 * folder and run with `node`, against the same relay. Their byte-level functions are also
 * imported from the downloaded files and compared with shared/ and the published vectors.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, fromHex, toBase64url, toHex } from '../../../shared/encoding.js';
import { signerFromSeed } from '../../../shared/identity.js';
import { inclusionProof, leafHash, merkleRoot } from '../../../shared/merkle.js';
import { buildPostObject, objectIdOf, postObjectBytes, readPostObject, readPrivatePart, signPost, verifyObjectSignature } from '../../../shared/objects.js';
import { call, mintToken, REPO_ROOT, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { admit, createSpaceInStore, newSpace } from '../../helpers/posts.js';
import { passkeyKey, passkeyPolicyOf, signPostWebauthn } from '../../helpers/passkey-authenticator.js';
import { downloadTool, importTool, lines, pemOfSeed, runNode, toolDir, type Run, type ToolDir } from '../../helpers/tools.js';
import { loadVector } from '../../helpers/vectors.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';

const TOOLS = join(REPO_ROOT, 'relay', 'documents', 'tools');

let relay: RunningRelay;
let dir: ToolDir;
let signPostJs: string;
let verifyPostJs: string;
let owner: MintedToken;
let keyFile: string;
let space: SpaceRow;
let rootKey: string;

beforeAll(async () => {
  relay = await startRelay();
  dir = toolDir();
  signPostJs = await downloadTool(relay.url, '/sign-post.mjs', dir);
  verifyPostJs = await downloadTool(relay.url, '/verify-post.mjs', dir);
  owner = await mintToken(relay.url);
  keyFile = dir.write('owner.pem', pemOfSeed(owner.seed));
  space = await newSpace(relay, owner);
  const caps = await call(relay, 'GET', '/v1/capabilities');
  rootKey = caps.body.protocol.service_root_key;
});

afterAll(async () => {
  dir.remove();
  await relay.close();
});

function signArgs(extra: string[]): string[] {
  return ['--key', keyFile, '--space', space.name, '--relay', relay.url, '--token', owner.token, ...extra];
}

async function signAndSend(extra: string[]): Promise<{ run: Run; answer: any }> {
  const run = await runNode(signPostJs, signArgs(extra), { cwd: dir.dir });
  expect(run.stderr).not.toMatch(/refused|sign-post:/);
  expect(run.code).toBe(0);
  return { run, answer: JSON.parse(run.stdout) };
}

/** Sign the next checkpoint of every SPACE: the oldest uncovered post is then ten minutes old. */
async function checkpointNow(): Promise<void> {
  relay.clock.advance(11 * 60_000);
  await relay.app.checkpointer.runOnce(relay.clock.now());
}

const CHECKS = ['object id', 'object', 'private part', 'signature', 'chain link', 'root key', 'receipt', 'leaf', 'checkpoint', 'merkle path', 'signer'];

describe('the relay serves the tools as documents', () => {
  for (const [path, type] of [
    ['/sign-post.mjs', 'text/javascript; charset=utf-8'],
    ['/verify-post.mjs', 'text/javascript; charset=utf-8'],
    ['/sealed.mjs', 'text/javascript; charset=utf-8'],
    ['/sealed.md', 'text/markdown; charset=utf-8'],
  ] as const) {
    it(`${path} is the repository's file byte for byte, as ${type} with an ETag, X-Request-Id and 304`, async () => {
      const res = await fetch(`${relay.url}${path}`);
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(text).toBe(readFileSync(join(TOOLS, path.slice(1)), 'utf8'));
      const etag = res.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await fetch(`${relay.url}${path}`, { headers: { 'if-none-match': etag! } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    });
  }

  it('the operations index, capabilities and llms.txt list each tool under its operation name', async () => {
    const index = await call(relay, 'GET', '/', { headers: { accept: 'application/json' } });
    const caps = await call(relay, 'GET', '/v1/capabilities');
    const llms = await call(relay, 'GET', '/llms.txt');
    for (const [name, path] of [['tools.sign_post', '/sign-post.mjs'], ['tools.verify_post', '/verify-post.mjs'], ['tools.sealed', '/sealed.mjs'], ['sealed.spec', '/sealed.md']]) {
      expect(index.body.operations).toContainEqual(expect.objectContaining({ name, method: 'GET', path, auth: 'none' }));
      expect(caps.body.operations).toContainEqual(expect.objectContaining({ name, method: 'GET', path }));
      expect(llms.text).toContain(path);
    }
  });
});

describe('sign-post.mjs signs posts the relay accepts', () => {
  it('sends a signed post with words, fingerprints and a private part; the relay answers 201 and reads it back signed', async () => {
    const { answer } = await signAndSend([
      '--kind', 'result', '--title', 'Build passes', '--body', 'Déjà vu — twice 😀\nline two',
      '--fingerprint', 'git.commit=b75e527ac4f1e0c2d8a3', '--fingerprint', 'a.b=c=d',
      '--data', '{"x_attempts":2}', '--idempotency-key', 'first',
    ]);
    expect(answer).toMatchObject({ replayed: false, signed: true, space: space.name });
    const read = await call(relay, 'GET', `/v1/posts/${answer.post_id}`, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ signed: true, author: owner.peerId, title: 'Build passes', body: 'Déjà vu — twice 😀\nline two', data: { x_attempts: 2 } });
    expect(read.body.fingerprints).toEqual([{ scheme: 'a.b', value: 'c=d' }, { scheme: 'git.commit', value: 'b75e527ac4f1e0c2d8a3' }]);
    expect(read.body.proof.signature).toMatchObject({ alg: 'ed25519', public_key: owner.publicKey });
    expect(read.body.proof.object_id).toBe(answer.object_id);
  });

  it('run again with the same idempotency key it sends the same bytes, which the relay answers as a replay of the first post', async () => {
    const args = ['--kind', 'obs', '--body', 'same again', '--data', '{"k":1}', '--idempotency-key', 'replayed'];
    const first = await signAndSend(args);
    const second = await signAndSend(args);
    expect(second.answer).toMatchObject({ replayed: true, post_id: first.answer.post_id, object_id: first.answer.object_id });
  });

  it('mints its own token with the KEY when neither --token nor SVC_TOKEN is given', async () => {
    const run = await runNode(signPostJs, ['--key', keyFile, '--space', space.name, '--relay', relay.url, '--kind', 'obs', '--body', 'minted'], { cwd: dir.dir });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ signed: true, replayed: false });
  });

  it('reads the KEY from the key directory ($SVC_HOME/keys/$SVC_KEY.pem) and the token from SVC_TOKEN', async () => {
    const home = join(dir.dir, 'home');
    mkdirSync(join(home, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(keyFile, join(home, 'keys', 'work.pem'));
    const run = await runNode(signPostJs, ['--space', space.name, '--relay', relay.url, '--kind', 'obs', '--body', 'from the key directory'], {
      cwd: dir.dir,
      env: { SVC_HOME: home, SVC_KEY: 'work', SVC_TOKEN: owner.token },
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).signed).toBe(true);
  });

  it('without --relay prints a body that posts.append accepts as it is, and that shared/objects reads as the same object', async () => {
    const addressee = await mintToken(relay.url);
    await admit(relay, space, addressee, 'reader');
    const run = await runNode(signPostJs, ['--key', keyFile, '--space-id', space.spaceId, '--kind', 'obs', '--title', 'Offline', '--body', 'signed offline', '--to', addressee.peerId, '--run-id', '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee'], { cwd: dir.dir });
    expect(run.code).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(Object.keys(body)).toEqual(['alg', 'canonical', 'private', 'signature']);
    const canonical = fromBase64url(body.canonical);
    const object = readPostObject(canonical, 'signed');
    const part = readPrivatePart(fromBase64url(body.private));
    const rebuilt = signPost({ fields: object, private: { run_id: part.run_id }, salt: fromHex(part.salt), signer: signerFromSeed(owner.seed) });
    expect(toHex(postObjectBytes(rebuilt.object))).toBe(toHex(canonical));
    expect(rebuilt.submission).toEqual(body);
    expect(verifyObjectSignature(fromHex(owner.publicKey), objectIdOf(canonical), fromHex(body.signature))).toBe(true);
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: owner.token, body });
    expect(sent.text).toContain('"signed":true');
    expect(sent.status).toBe(201);
  });

  it('a refusal prints the relay code and fix on standard error and exits 1; a usage problem exits 2', async () => {
    const stranger = await mintToken(relay.url);
    const refused = await runNode(signPostJs, ['--key', dir.write('stranger.pem', pemOfSeed(stranger.seed)), '--space', space.name, '--relay', relay.url, '--token', stranger.token, '--kind', 'obs', '--body', 'x'], { cwd: dir.dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused by the relay: posts\.append: WRITE_DENIED\. /);
    expect(refused.stderr).toContain('fix:');
    const usage = await runNode(signPostJs, ['--key', keyFile, '--space-id', space.spaceId, '--body', 'no kind'], { cwd: dir.dir });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--kind is required');
    const badKey = await runNode(signPostJs, ['--key', dir.write('bad.pem', 'not a key'), '--space-id', space.spaceId, '--kind', 'obs'], { cwd: dir.dir });
    expect(badKey.code).toBe(2);
    expect(badKey.stdout).toBe('');
  });
});

describe('sign-post.mjs agrees with shared/ and the published vectors byte for byte', () => {
  it('its RFC 8785 writer gives every canonical output of the JCS vectors', async () => {
    const mod = await importTool(signPostJs);
    const jcs = loadVector('jcs-vectors.json');
    for (const v of jcs.canonical) expect(mod.canonicalJson(JSON.parse(v.input)), v.name).toBe(v.output);
  });

  it('rebuilds the published signed object, its private digest and signature from the published seed', async () => {
    const mod = await importTool(signPostJs);
    const ov = loadVector('object-vectors.json');
    const v1 = loadVector('protocol-v1-vectors.json');
    const key = mod.keyFromPem(pemOfSeed(fromHex(v1.test_private_seed_hex)));
    expect(key.peerId).toBe(ov.author_id);
    const o = JSON.parse(ov.object.canonical_utf8);
    const p = JSON.parse(ov.object.private_utf8);
    const signed = mod.signPost({ ...o, data: p.data, space_id: ov.space_id }, key, p.salt);
    expect(new TextDecoder().decode(signed.canonical)).toBe(ov.object.canonical_utf8);
    expect(signed.objectId).toBe(ov.object.object_id);
    expect(signed.body.signature).toBe(ov.object.ed25519_signature_hex);
    expect(new TextDecoder().decode(fromBase64url(signed.body.private))).toBe(ov.object.private_utf8);
  });

  it('builds the same object as shared/objects for lists out of order and characters beyond U+FFFF', async () => {
    const mod = await importTool(signPostJs);
    const seed = new Uint8Array(randomBytes(32));
    const key = mod.keyFromPem(pemOfSeed(seed));
    const salt = toHex(randomBytes(32));
    const to = [toHex(randomBytes(32)), toHex(randomBytes(32)), toHex(randomBytes(32))];
    const fields = {
      space_id: '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee',
      kind: 'question',
      idempotency_key: 'k\u{1F600}',
      title: 'T\u2028',
      body: 'tab\there "quoted" \\ \u0001 \u{10000}',
      to,
      reply_to: '0199aaaa-bbbb-7ccc-8ddd-000000000001',
      fingerprints: [
        { scheme: 'x.\u{10000}', value: '1' },
        { scheme: 'x.\uE000', value: '2' },
        { scheme: 'git.commit', value: 'b' },
        { scheme: 'git.commit', value: 'a' },
      ],
      budget: { spent: 3 },
    };
    const ours = mod.signPost(fields, key, salt);
    const shared = signPost({
      fields: { ...fields, author_id: key.peerId },
      private: { budget: fields.budget },
      salt: fromHex(salt),
      signer: signerFromSeed(seed),
    });
    expect(toBase64url(ours.canonical)).toBe(shared.submission.canonical);
    expect(ours.body).toEqual(shared.submission);
    expect(toHex(postObjectBytes(buildPostObject({ ...fields, author_id: key.peerId, private_digest: shared.private!.digest }, 'signed')))).toBe(toHex(ours.canonical));
  });
});

describe('verify-post.mjs checks a post and its proof', () => {
  let genuine: any;
  let answerFile: string;
  let proofAnswer: any;

  beforeAll(async () => {
    const sent = await signAndSend(['--kind', 'result', '--title', 'Checked', '--body', 'verify me', '--data', '{"n":1}']);
    genuine = sent.answer;
    answerFile = dir.write('answer.json', sent.run.stdout);
    // More posts in the same range, so the Merkle path has hashes to tamper with.
    for (let i = 0; i < 4; i++) await signAndSend(['--kind', 'obs', '--body', `filler ${i}`]);
    await checkpointNow();
    proofAnswer = (await call(relay, 'GET', `/v1/spaces/${space.name}/posts/${genuine.seq}/proof`, { token: owner.token })).body;
    expect(proofAnswer.checkpoint).not.toBeNull();
    expect(proofAnswer.inclusion.path.length).toBeGreaterThan(0);
  });

  it('prints one PASS line per check and exits 0 for a genuine post with a checkpoint, its receipt and a pinned root', async () => {
    const run = await runNode(verifyPostJs, ['--relay', relay.url, '--post', genuine.post_id, '--token', owner.token, '--root-key', rootKey, '--receipt', answerFile]);
    expect(run.stderr).toBe('');
    expect(lines(run, 'FAIL')).toEqual([]);
    expect(lines(run, 'SKIP')).toEqual([]);
    for (const check of CHECKS) expect(lines(run, 'PASS', check), check).toHaveLength(1);
    expect(lines(run, 'PASS', 'root key')[0]).toContain('pinned with --root-key');
    expect(lines(run, 'NOTE', 'signer')[0]).toContain('DEVELOPMENT');
    expect(run.stdout).toMatch(/^VERIFIED: 11 passed, 0 failed, 0 skipped$/m);
    expect(run.code).toBe(0);
  });

  it('without --root-key takes the root the capabilities publish, and says it is the relay\'s word', async () => {
    const run = await runNode(verifyPostJs, ['--relay', relay.url, '--post', genuine.post_id, '--token', owner.token]);
    expect(run.code).toBe(0);
    expect(lines(run, 'PASS', 'root key')[0]).toContain(`${rootKey}, as ${relay.url}/v1/capabilities publishes it (the relay's word`);
    expect(lines(run, 'SKIP', 'receipt')).toHaveLength(1);
  });

  it('reads a posts.proof answer from standard input with no relay at all', async () => {
    const run = await runNode(verifyPostJs, ['-', '--root-key', rootKey, '--receipt', answerFile], { stdin: JSON.stringify(proofAnswer) });
    expect(lines(run, 'FAIL')).toEqual([]);
    for (const check of CHECKS) expect(lines(run, 'PASS', check), check).toHaveLength(1);
    expect(run.code).toBe(0);
  });

  it('a body changed after the fact fails the object check and exits 1', async () => {
    const post = (await call(relay, 'GET', `/v1/posts/${genuine.post_id}`, { token: owner.token })).body;
    post.body = 'verify me, but changed';
    const run = await runNode(verifyPostJs, [dir.write('tampered-body.json', JSON.stringify(post)), '--relay', relay.url, '--token', owner.token, '--root-key', rootKey]);
    expect(lines(run, 'FAIL', 'object')[0]).toContain("the object's body is not the post's");
    expect(lines(run, 'PASS', 'merkle path')).toHaveLength(1);
    expect(run.stdout).toMatch(/^FAILED: /m);
    expect(run.code).toBe(1);
  });

  it('changed object bytes fail the object id check', async () => {
    const post = structuredClone(proofAnswer.post);
    const canonical = Buffer.from(post.proof.canonical, 'base64url').toString('utf8').replace('verify me', 'verify you');
    post.proof.canonical = Buffer.from(canonical, 'utf8').toString('base64url');
    const run = await runNode(verifyPostJs, ['-', '--root-key', rootKey], { stdin: JSON.stringify({ ...proofAnswer, post }) });
    expect(lines(run, 'FAIL', 'object id')[0]).toContain('SHA-256(L("object") ‖ canonical) is');
    expect(run.code).toBe(1);
  });

  it('a changed hash in the Merkle path fails the path check and exits 1', async () => {
    const tampered = structuredClone(proofAnswer);
    const first = tampered.inclusion.path[0] as string;
    tampered.inclusion.path[0] = `${first.slice(0, -1)}${first.endsWith('0') ? '1' : '0'}`;
    const run = await runNode(verifyPostJs, [dir.write('tampered-path.json', JSON.stringify(tampered)), '--root-key', rootKey]);
    expect(lines(run, 'FAIL', 'merkle path')[0]).toContain('not the signed merkle_root');
    expect(lines(run, 'PASS', 'checkpoint')).toHaveLength(1);
    expect(run.code).toBe(1);
  });

  it('a path one hash short, or a served leaf index that is not the signed range\'s, fails the path check', async () => {
    const short = structuredClone(proofAnswer);
    short.inclusion.path.pop();
    const shortRun = await runNode(verifyPostJs, [dir.write('short-path.json', JSON.stringify(short)), '--root-key', rootKey]);
    expect(lines(shortRun, 'FAIL', 'merkle path')[0]).toContain('shorter than the tree is deep');
    const moved = structuredClone(proofAnswer);
    moved.inclusion.leaf_index += 1;
    const movedRun = await runNode(verifyPostJs, [dir.write('moved-index.json', JSON.stringify(moved)), '--root-key', rootKey]);
    expect(lines(movedRun, 'FAIL', 'merkle path')[0]).toContain('the signed range gives');
    expect([shortRun.code, movedRun.code]).toEqual([1, 1]);
  });

  it('a root key other than the one that certified the signer fails the signer and receipt checks and exits 1', async () => {
    const wrong = toHex(randomBytes(32));
    const run = await runNode(verifyPostJs, ['--relay', relay.url, '--post', genuine.post_id, '--token', owner.token, '--root-key', wrong, '--receipt', answerFile]);
    expect(lines(run, 'PASS', 'root key')[0]).toContain(wrong);
    expect(lines(run, 'FAIL', 'signer')[0]).toContain(`not the trusted root ${wrong}`);
    expect(lines(run, 'FAIL', 'receipt')[0]).toContain('not the trusted root');
    expect(run.code).toBe(1);
  });

  it('a checkpoint to check and no root key to check it against fails', async () => {
    const run = await runNode(verifyPostJs, ['-'], { stdin: JSON.stringify(proofAnswer) });
    expect(lines(run, 'FAIL', 'root key')[0]).toContain('pass --root-key');
    expect(run.code).toBe(1);
  });

  it('a signature by another KEY fails the signature check', async () => {
    const post = structuredClone(proofAnswer.post);
    const other = signerFromSeed(new Uint8Array(randomBytes(32)));
    post.proof.signature.value = toHex(other.sign(new Uint8Array(32)));
    const run = await runNode(verifyPostJs, ['-', '--root-key', rootKey], { stdin: JSON.stringify({ ...proofAnswer, post }) });
    expect(lines(run, 'FAIL', 'signature')[0]).toContain('does not verify');
    expect(run.code).toBe(1);
  });

  it('a private part other than the one the object names fails; the right one given with --private passes', async () => {
    const part = Buffer.from(proofAnswer.post.proof.private, 'base64url');
    const right = await runNode(verifyPostJs, ['-', '--root-key', rootKey, '--private', part.toString('utf8')], { stdin: JSON.stringify(proofAnswer) });
    expect(lines(right, 'PASS', 'private part')[0]).toContain('--private');
    const wrong = await runNode(verifyPostJs, ['-', '--root-key', rootKey, '--private', part.toString('utf8').replace('"n":1', '"n":2')], { stdin: JSON.stringify(proofAnswer) });
    expect(lines(wrong, 'FAIL', 'private part')).toHaveLength(1);
    expect([right.code, wrong.code]).toEqual([0, 1]);
  });

  it('an unsigned post not yet covered by a checkpoint skips the signature and checkpoint checks; --strict fails', async () => {
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: owner.token, body: { kind: 'obs', body: 'unsigned', idempotency_key: 'unsigned-1' } });
    expect(sent.status).toBe(201);
    const run = await runNode(verifyPostJs, ['--relay', relay.url, '--post', sent.body.post_id, '--token', owner.token]);
    expect(lines(run, 'SKIP', 'signature')[0]).toContain('unsigned');
    expect(lines(run, 'SKIP', 'checkpoint')[0]).toContain('not yet covered');
    expect(lines(run, 'PASS', 'chain link')).toHaveLength(1);
    expect(run.code).toBe(0);
    const strict = await runNode(verifyPostJs, ['--relay', relay.url, '--post', sent.body.post_id, '--token', owner.token, '--strict']);
    expect(lines(strict, 'FAIL', 'checkpoint')).toHaveLength(1);
    expect(strict.code).toBe(1);
  });

  it('checks a passkey KEY\'s post: the assertion (ES256, EdDSA, RS256) over the post\'s challenge, for the relay\'s relying party', async () => {
    const policy = await passkeyPolicyOf(relay);
    for (const [alg, name] of [[-7, 'ES256'], [-8, 'EdDSA'], [-257, 'RS256']] as const) {
      const who = await passkeyKey(relay, alg);
      const own = await createSpaceInStore(relay.store, who.peerId, `pk-tools-${name.toLowerCase()}-${toHex(randomBytes(3))}`, relay.clock.now());
      const canonical = postObjectBytes(buildPostObject({ space_id: own.spaceId, author_id: who.peerId, idempotency_key: `pk-${name}`, kind: 'obs', body: 'signed on a passkey' }, 'signed'));
      const sent = await call(relay, 'POST', `/v1/spaces/${own.name}/posts`, { token: who.token, body: { alg: 'webauthn', canonical: toBase64url(canonical), ...signPostWebauthn(who.auth, canonical, policy) } });
      expect(sent.status, sent.text).toBe(201);
      const run = await runNode(verifyPostJs, ['--relay', relay.url, '--post', sent.body.post_id, '--token', who.token]);
      expect(lines(run, 'PASS', 'signature')[0]).toContain(`a passkey assertion (${name}) by the author's KEY`);
      expect(lines(run, 'PASS', 'signature')[0]).toContain(`for ${policy.rpId}`);
      expect(run.code).toBe(0);
      const post = (await call(relay, 'GET', `/v1/posts/${sent.body.post_id}`, { token: who.token })).body;
      const authData = Buffer.from(post.proof.signature.authenticator_data, 'base64url');
      authData[33] = (authData[33]! + 1) % 256;
      post.proof.signature.authenticator_data = authData.toString('base64url');
      const tampered = await runNode(verifyPostJs, [dir.write(`pk-${name}.json`, JSON.stringify(post)), '--relay', relay.url, '--token', who.token]);
      expect(lines(tampered, 'FAIL', 'signature')[0]).toContain('the passkey signature does not verify');
      expect(tampered.code).toBe(1);
    }
  });

  it('a post it may not read, and bad usage, exit 2 with the reason on standard error', async () => {
    const hidden = await runNode(verifyPostJs, ['--relay', relay.url, '--post', genuine.post_id]);
    expect(hidden.code).toBe(2);
    expect(hidden.stderr).toContain('HTTP 404 POST_NOT_FOUND.');
    const none = await runNode(verifyPostJs, []);
    expect(none.code).toBe(2);
    const notJson = await runNode(verifyPostJs, ['-'], { stdin: 'not json' });
    expect(notJson.code).toBe(2);
  });
});

describe('verify-post.mjs agrees with shared/ and the published vectors', () => {
  it('its RFC 8785 writer gives every canonical output, and its strict reader refuses every non-canonical text', async () => {
    const mod = await importTool(verifyPostJs);
    const jcs = loadVector('jcs-vectors.json');
    for (const v of jcs.canonical) expect(mod.canonicalJson(JSON.parse(v.input)), v.name).toBe(v.output);
    for (const v of jcs.not_canonical) expect(() => mod.readCanonical(new TextEncoder().encode(v.text), 'x'), v.name).toThrow();
    expect(() => mod.readCanonical(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'x')).toThrow(/byte-order mark|not JSON/);
    expect(() => mod.readCanonical(new Uint8Array([0x22, 0xff, 0x22]), 'x')).toThrow(/not UTF-8/);
  });

  it('its RFC 9162 path walk gives the root of shared/merkle for every leaf of trees of 1 to 40 leaves', async () => {
    const mod = await importTool(verifyPostJs);
    for (let size = 1; size <= 40; size++) {
      const leaves = Array.from({ length: size }, (_, i) => leafHash(new Uint8Array([i, size])));
      const root = toHex(merkleRoot(leaves));
      for (let i = 0; i < size; i++) expect(toHex(mod.rootFromPath(leaves[i], i, size, inclusionProof(leaves, i)))).toBe(root);
    }
  });

  it('the published object vector checks out as a post (object id, object, private part, signature, chain link)', async () => {
    const mod = await importTool(verifyPostJs);
    const ov = loadVector('object-vectors.json');
    const o = JSON.parse(ov.object.canonical_utf8);
    const post = {
      space_id: ov.space_id, author: ov.author_id, kind: o.kind, title: o.title, body: o.body, to: [], reply_to: null, supersedes: null, retracts: null,
      fingerprints: o.fingerprints, signed: true, seq: '1', object_id: ov.object.object_id, data: JSON.parse(ov.object.private_utf8).data,
      proof: {
        object_id: ov.object.object_id,
        canonical: Buffer.from(ov.object.canonical_utf8).toString('base64url'),
        private: Buffer.from(ov.object.private_utf8).toString('base64url'),
        signature: { alg: 'ed25519', value: ov.object.ed25519_signature_hex, public_key: ov.public_key_hex },
        chain: { seq: '1', admission: ov.chain.admission, admitted_revision: '1', admitted_control_hash: ov.control.chain_hash, previous_hash: ov.chain.genesis_hash, chain_hash: ov.chain.chain_hash },
      },
    };
    const report = mod.verifyPost({ post, strict: false });
    const verdicts = Object.fromEntries(report.lines.map((l: any) => [l.name, l.verdict]));
    expect(verdicts).toMatchObject({ 'object id': 'PASS', object: 'PASS', 'private part': 'PASS', signature: 'PASS', 'chain link': 'PASS', receipt: 'SKIP', checkpoint: 'SKIP' });
  });
});
