/**
 * /sealed.mjs, the relay's downloadable sealing module, as a user gets it: fetched from the real
 * relay and imported from a temporary folder (and run with `node` for its command line). It must
 * give every byte of the RFC 9180 A.1 vectors and of our sealed pin (test/vectors/sealed.json),
 * and what it seals shared/sealed opens, and the reverse.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, fromHex, toBase64url, toHex, utf8 } from '../../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed } from '../../../shared/identity.js';
import { buildEncryptionKeyStatement, deriveEncryptionKey, encryptionKeyFingerprint, signEncryptionKeyStatement, verifyEncryptionKeyStatement } from '../../../shared/sealed/encryption-key.js';
import { commitmentHex, openBackLink, pairContainer, sealBackLink, spaceContainer } from '../../../shared/sealed/generations.js';
import { openMessage, openPost, sealMessage, sealPost } from '../../../shared/sealed/items.js';
import { buildKeeperList, signKeeperList, verifyKeeperList } from '../../../shared/sealed/keepers.js';
import { openLock, sealLock } from '../../../shared/sealed/locks.js';
import { buildStamp, signStamp, verifyStamp } from '../../../shared/sealed/stamps.js';
import { call, mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';
import { downloadTool, importTool, pemOfSeed, runNode, toolDir, type ToolDir } from '../../helpers/tools.js';
import { loadOwnVector, loadVector } from '../../helpers/vectors.js';

let relay: RunningRelay;
let dir: ToolDir;
let sealedJs: string;
let S: any;

beforeAll(async () => {
  relay = await startRelay();
  dir = toolDir();
  sealedJs = await downloadTool(relay.url, '/sealed.mjs', dir);
  S = await importTool(sealedJs);
});

afterAll(async () => {
  dir.remove();
  await relay.close();
});

const h = (s: string): Uint8Array => fromHex(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe('sealed.mjs gives the published and pinned bytes', () => {
  it('its RFC 8785 writer gives every canonical output of the JCS vectors', () => {
    for (const v of loadVector('jcs-vectors.json').canonical) expect(S.canonicalJson(JSON.parse(v.input)), v.name).toBe(v.output);
  });

  it('HPKE suite 1 in modes base and auth matches RFC 9180 A.1: key pairs, key schedule, the first encryption, and it opens', () => {
    const vectors = loadVector('hpke-rfc9180-a1.json').vectors as any[];
    expect(vectors.map((v) => Number(v.mode))).toEqual([0, 2]);
    for (const v of vectors) {
      const mode = Number(v.mode);
      const r = S.deriveKeyPair(h(v.ikmR));
      expect(toHex(r.privateKey)).toBe(v.skRm);
      expect(toHex(r.publicKey)).toBe(v.pkRm);
      const ks = S.keySchedule(mode, h(v.shared_secret), h(v.info));
      expect(toHex(ks.key)).toBe(v.key);
      expect(toHex(ks.baseNonce)).toBe(v.base_nonce);
      expect(toHex(ks.exporterSecret)).toBe(v.exporter_secret);
      const first = v.encryptions[0];
      const input = { pkR: h(v.pkRm), info: h(v.info), aad: h(first.aad), pt: h(first.pt), ikmE: h(v.ikmE) };
      const sealed = mode === 0 ? S.sealBase(input) : S.sealAuth({ ...input, skS: S.deriveKeyPair(h(v.ikmS)).privateKey });
      expect(toHex(sealed.enc)).toBe(v.enc);
      expect(toHex(sealed.ct)).toBe(first.ct);
      const open = { enc: h(v.enc), skR: h(v.skRm), info: h(v.info), aad: h(first.aad), ct: h(first.ct) };
      const pt = mode === 0 ? S.openBase(open) : S.openAuth({ ...open, pkS: h(v.pkSm) });
      expect(toHex(pt)).toBe(first.pt);
    }
  });

  describe('test/vectors/sealed.json', () => {
    const pin = loadOwnVector('sealed.json');
    const tagged = (t: string): Uint8Array => new Uint8Array(createHash('sha256').update(`svc-vector sealed ${t}`, 'ascii').digest());
    const NAMES = ['owner', 'keeper', 'member', 'stamper'] as const;
    const secret = (c: string, g: number): Uint8Array => tagged(`secret ${c} ${g}`);
    let keys: Record<string, any>;
    let containers: Record<string, Uint8Array>;

    beforeAll(() => {
      keys = Object.fromEntries(NAMES.map((n) => [n, S.keyFromSeed(tagged(`seed ${n}`))]));
      containers = { space: S.spaceContainer(pin.inputs.space_id), pair: S.pairContainer(keys.owner.peerId, keys.member.peerId) };
    });

    it('keys: peer ids, encryption key pairs, statements, their signatures and fingerprints', () => {
      for (const n of NAMES) {
        const k = pin.keys[n];
        expect(keys[n].peerId).toBe(k.peer_id);
        expect(toHex(keys[n].encryption.privateKey)).toBe(k.encryption.private_key);
        expect(toHex(keys[n].encryption.publicKey)).toBe(k.encryption.public_key);
        expect(S.encryptionKeyPutBody(keys[n])).toEqual({ statement: k.encryption.statement_b64u, alg: 'ed25519', signature: k.encryption.signature });
        expect(S.fingerprint(keys[n].encryption.publicKey)).toBe(k.encryption.fingerprint);
        const checked = S.verifyEncryptionKeyStatement(utf8(k.encryption.statement_utf8), { alg: 'ed25519', signature: k.encryption.signature }, keys[n].publicKey);
        expect(checked.fingerprint).toBe(k.encryption.fingerprint);
      }
    });

    it('containers, commitments and back links, sealed and opened', () => {
      expect(toHex(containers.space!)).toBe(pin.containers.space);
      expect(toHex(containers.pair!)).toBe(pin.containers.pair);
      for (const c of pin.commitments) expect(toHex(S.commitment(containers[c.container], c.generation, h(c.secret)))).toBe(c.commitment);
      for (const b of pin.back_links) {
        const C = containers.space!;
        expect(toHex(S.sealBackLink(C, b.generation, secret('space', b.generation), secret('space', b.generation - 1)))).toBe(b.back);
        const previous = S.openBackLink(C, b.generation, secret('space', b.generation), h(b.back), S.commitment(C, b.generation - 1, secret('space', b.generation - 1)));
        expect(toHex(previous)).toBe(toHex(secret('space', b.generation - 1)));
      }
    });

    it('every pinned lock, sealed from its ephemeral input and opened by its recipient', () => {
      expect(pin.locks.length).toBeGreaterThan(0);
      for (const l of pin.locks) {
        const C = containers[l.container]!;
        const s = secret(l.container, l.generation);
        const lock = S.sealLock({
          container: C, generation: l.generation, secret: s, ephemeral: h(l.ephemeral),
          recipient: { peerId: keys[l.recipient].peerId, publicKey: keys[l.recipient].encryption.publicKey },
          sender: { peerId: keys[l.sender].peerId, privateKey: keys[l.sender].encryption.privateKey },
        });
        expect(toHex(lock)).toBe(l.lock);
        const opened = S.openLock({
          container: C, generation: l.generation, lock: h(l.lock), commitment: toHex(S.commitment(C, l.generation, s)),
          recipient: { peerId: keys[l.recipient].peerId, privateKey: keys[l.recipient].encryption.privateKey },
          sender: { peerId: keys[l.sender].peerId, publicKey: keys[l.sender].encryption.publicKey },
        });
        expect(toHex(opened)).toBe(toHex(s));
      }
    });

    it('every pinned header rebuilt from its members and salt, every item sealed to its ciphertext and opened', () => {
      for (const hd of pin.headers) {
        const fields = JSON.parse(hd.utf8);
        const bytes = fields.type === 'post'
          ? S.postHeader(fields, h(hd.salt))
          : S.messageHeader({ author: fields.author, peer: fields.pair.find((p: string) => p !== fields.author), about: fields.about, reply_to: fields.reply_to }, h(hd.salt));
        expect(text(bytes)).toBe(hd.utf8);
        expect(toHex(S.headerDigest(bytes))).toBe(hd.digest);
      }
      for (const item of pin.items) {
        const header = utf8(pin.headers.find((x: any) => x.name === item.header).utf8);
        const s = secret(item.container, item.generation);
        const ct = S.sealItem(header, utf8(item.content_utf8), s);
        expect(toHex(ct)).toBe(item.ciphertext);
        expect(toBase64url(ct)).toBe(item.transport.ciphertext);
        expect(text(S.openItem(header, ct, s))).toBe(item.content_utf8);
        const opened = JSON.parse(item.content_utf8).title !== undefined || item.header.startsWith('post') ? S.openPost(header, ct, s) : S.openMessage(header, ct, s);
        expect(S.canonicalJson(opened.content)).toBe(item.content_utf8);
      }
    });

    it('sealed post objects, keeper lists and stamps', () => {
      for (const o of pin.sealed_post_objects) {
        const item = pin.items.find((x: any) => x.header === o.item);
        const header = utf8(pin.headers.find((x: any) => x.name === o.item).utf8);
        const got = S.sealedPostObject(header, h(item.ciphertext), o.form === 'signed' ? o.idempotency_key : undefined);
        expect(text(got.canonical)).toBe(o.canonical_utf8);
        expect(toHex(got.objectId)).toBe(o.object_id);
      }
      for (const l of pin.keeper_lists) {
        const fields = JSON.parse(l.utf8);
        const bytes = S.keeperList(fields, keys[l.signer].peerId);
        expect(toBase64url(bytes)).toBe(l.b64u);
        expect(S.signKeeperList(keys[l.signer], bytes)).toEqual({ alg: 'ed25519', signature: l.signature });
        expect(S.verifyKeeperList(bytes, { alg: 'ed25519', signature: l.signature }, keys[l.signer].publicKey).signed_by).toBe(keys[l.signer].peerId);
      }
      for (const st of pin.stamps) {
        const bytes = S.stamp({ issuer: keys[st.issuer].peerId, peer_id: keys[st.subject].peerId, ...(st.not_after === null ? {} : { not_after: st.not_after }) });
        expect(toBase64url(bytes)).toBe(st.b64u);
        expect(S.signStamp(keys[st.issuer], bytes)).toEqual({ alg: 'ed25519', signature: st.signature });
        expect(S.verifyStamp(bytes, { alg: 'ed25519', signature: st.signature }, keys[st.issuer].publicKey).issuer).toBe(keys[st.issuer].peerId);
      }
    });
  });
});

describe('sealed.mjs and shared/sealed open what the other sealed', () => {
  const spaceId = randomUUID();
  const seeds = { a: new Uint8Array(randomBytes(32)), b: new Uint8Array(randomBytes(32)) };
  const shared = Object.fromEntries(
    Object.entries(seeds).map(([n, seed]) => {
      const signer = signerFromSeed(seed);
      const peerId = peerIdHexOf(signer.publicKey);
      return [n, { signer, peerId, enc: deriveEncryptionKey(seed, peerId) }];
    }),
  ) as Record<'a' | 'b', { signer: ReturnType<typeof signerFromSeed>; peerId: string; enc: { privateKey: Uint8Array; publicKey: Uint8Array } }>;
  const secret = new Uint8Array(randomBytes(32));
  const content = { title: 'Sealed 😀', body: 'tab\t"q" \u{10000}', data: { x_n: 1 }, fingerprints: [{ scheme: 'x.b', value: '2' }, { scheme: 'x.a', value: '1' }] };

  it('derives the same encryption key and statement as shared/, and each checks the other\'s statement', () => {
    const key = S.keyFromSeed(seeds.a);
    expect(key.peerId).toBe(shared.a.peerId);
    expect(toHex(key.encryption.publicKey)).toBe(toHex(shared.a.enc.publicKey));
    const body = S.encryptionKeyPutBody(key);
    const statement = fromBase64url(body.statement);
    expect(toHex(statement)).toBe(toHex(buildEncryptionKeyStatement(shared.a.peerId, shared.a.enc.publicKey)));
    const checked = verifyEncryptionKeyStatement(statement, { alg: 'ed25519', signature: body.signature }, { peerId: shared.a.peerId, keyType: 'ed25519', publicKey: shared.a.signer.publicKey });
    expect(checked.fingerprint).toBe(encryptionKeyFingerprint(shared.a.enc.publicKey));
    const envelope = signEncryptionKeyStatement(shared.a.signer, statement);
    expect(S.verifyEncryptionKeyStatement(statement, envelope, shared.a.signer.publicKey).fingerprint).toBe(checked.fingerprint);
    expect(() => S.verifyEncryptionKeyStatement(statement, envelope, shared.b.signer.publicKey)).toThrow(/not the signer's peer id/);
  });

  it('a post sealed by the script opens with shared/, and a post sealed by shared/ opens with the script', () => {
    const header = { author: shared.a.peerId, generation: 3, kind: 'result', space_id: spaceId, to: [shared.b.peerId] };
    const ours = S.sealPost({ header, content, secret });
    const opened = openPost(ours.header, ours.ciphertext, secret);
    expect(opened.header).toMatchObject({ author: shared.a.peerId, generation: 3, kind: 'result', to: [shared.b.peerId] });
    expect(opened.content).toEqual({ ...content, fingerprints: [{ scheme: 'x.a', value: '1' }, { scheme: 'x.b', value: '2' }] });
    const theirs = sealPost({ header, content, secret, salt: new Uint8Array(randomBytes(16)) });
    const back = S.openPost(theirs.headerBytes, theirs.ciphertext, secret);
    expect(S.canonicalJson(back.content)).toBe(text(theirs.contentBytes));
    // The same header and salt give the same bytes on both sides.
    const salt = new Uint8Array(randomBytes(16));
    expect(toHex(S.sealPost({ header, content, secret, salt }).ciphertext)).toBe(toHex(sealPost({ header, content, secret, salt }).ciphertext));
  });

  it('a message sealed on either side opens on the other', () => {
    const ours = S.sealMessage({ header: { author: shared.a.peerId, peer: shared.b.peerId }, body: 'hello', secret });
    expect(openMessage(ours.header, ours.ciphertext, secret).content).toEqual({ body: 'hello' });
    const theirs = sealMessage({ header: { author: shared.b.peerId, peer: shared.a.peerId, about: 'some-space' }, body: 'hi back', secret, salt: new Uint8Array(randomBytes(16)) });
    expect(S.openMessage(theirs.headerBytes, theirs.ciphertext, secret).content).toEqual({ body: 'hi back' });
  });

  it('locks and back links made on either side open on the other', () => {
    const C = spaceContainer(spaceId);
    expect(toHex(S.spaceContainer(spaceId))).toBe(toHex(C));
    expect(toHex(S.pairContainer(shared.b.peerId, shared.a.peerId))).toBe(toHex(pairContainer(shared.a.peerId, shared.b.peerId)));
    const commitment = commitmentHex(C, 2, secret);
    const ours = S.sealLock({ container: C, generation: 2, secret, recipient: { peerId: shared.b.peerId, publicKey: shared.b.enc.publicKey }, sender: { peerId: shared.a.peerId, privateKey: shared.a.enc.privateKey } });
    const opened = openLock({ container: C, generation: 2, lock: ours, commitment, recipient: { peerId: shared.b.peerId, privateKey: shared.b.enc.privateKey }, sender: { peerId: shared.a.peerId, publicKey: shared.a.enc.publicKey } });
    expect(toHex(opened)).toBe(toHex(secret));
    const theirs = sealLock({ container: C, generation: 2, secret, recipient: { peerId: shared.a.peerId, publicKey: shared.a.enc.publicKey }, sender: { peerId: shared.b.peerId, privateKey: shared.b.enc.privateKey }, ephemeral: new Uint8Array(randomBytes(32)) });
    expect(toHex(S.openLock({ container: C, generation: 2, lock: theirs, commitment, recipient: { peerId: shared.a.peerId, privateKey: shared.a.enc.privateKey }, sender: { peerId: shared.b.peerId, publicKey: shared.b.enc.publicKey } }))).toBe(toHex(secret));
    const previous = new Uint8Array(randomBytes(32));
    const back = S.sealBackLink(C, 2, secret, previous);
    expect(toHex(openBackLink(C, 2, secret, back, commitmentHex(C, 1, previous)))).toBe(toHex(previous));
    expect(toHex(S.openBackLink(C, 2, secret, sealBackLink(C, 2, secret, previous), commitmentHex(C, 1, previous)))).toBe(toHex(previous));
  });

  it('keeper lists and stamps signed on either side verify on the other', () => {
    const owner = S.keyFromSeed(seeds.a);
    const fields = { space_id: spaceId, revision: 1, keepers: [shared.b.peerId], stampers: [], admission: 'stamped' as const, change_every: 3600 };
    const list = S.keeperList(fields, owner.peerId);
    expect(toHex(list)).toBe(toHex(buildKeeperList(fields, owner.peerId)));
    const ownerKey = { peerId: owner.peerId, keyType: 'ed25519' as const, publicKey: owner.publicKey };
    expect(verifyKeeperList(list, S.signKeeperList(owner, list), ownerKey, spaceId).keepers).toEqual([shared.b.peerId]);
    expect(S.verifyKeeperList(list, signKeeperList(shared.a.signer, list), owner.publicKey).revision).toBe(1);
    const stamp = S.stamp({ issuer: owner.peerId, peer_id: shared.b.peerId, not_after: 2_000_000_000 });
    expect(toHex(stamp)).toBe(toHex(buildStamp({ issuer: owner.peerId, peer_id: shared.b.peerId, not_after: 2_000_000_000 })));
    expect(verifyStamp(stamp, S.signStamp(owner, stamp), ownerKey).peer_id).toBe(shared.b.peerId);
    expect(S.verifyStamp(stamp, signStamp(shared.a.signer, stamp), owner.publicKey).peer_id).toBe(shared.b.peerId);
  });

  it('refuses what does not open: a changed ciphertext byte, a lock from another sender, a wrong commitment, a low-order key', () => {
    const ours = S.sealPost({ header: { author: shared.a.peerId, generation: 1, kind: 'obs', space_id: spaceId }, content: { body: 'x' }, secret });
    const bad = ours.ciphertext.slice();
    bad[0] ^= 1;
    expect(() => S.openPost(ours.header, bad, secret)).toThrow(/does not authenticate/);
    expect(() => S.openPost(ours.header, ours.ciphertext, new Uint8Array(32))).toThrow(/does not authenticate/);
    const C = spaceContainer(spaceId);
    const lock = S.sealLock({ container: C, generation: 1, secret, recipient: { peerId: shared.b.peerId, publicKey: shared.b.enc.publicKey }, sender: { peerId: shared.a.peerId, privateKey: shared.a.enc.privateKey } });
    const recipient = { peerId: shared.b.peerId, privateKey: shared.b.enc.privateKey };
    expect(() => S.openLock({ container: C, generation: 1, lock, commitment: commitmentHex(C, 1, secret), recipient, sender: { peerId: shared.a.peerId, publicKey: shared.b.enc.publicKey } })).toThrow(/does not authenticate/);
    expect(() => S.openLock({ container: C, generation: 1, lock, commitment: commitmentHex(C, 2, secret), recipient, sender: { peerId: shared.a.peerId, publicKey: shared.a.enc.publicKey } })).toThrow(/does not authenticate/);
    expect(() => S.x25519(shared.a.enc.privateKey, new Uint8Array(32))).toThrow(/all zero/);
  });
});

describe('sealed.mjs as a command line', () => {
  it('encryption-key prints the body of PUT /v1/me/encryption-key, which the relay accepts, and its fingerprint', async () => {
    const me = await mintToken(relay.url);
    const key = dir.write('cli.pem', pemOfSeed(me.seed));
    const run = await runNode(sealedJs, ['encryption-key', '--key', key]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.peer_id).toBe(me.peerId);
    const put = await call(relay, 'PUT', '/v1/me/encryption-key', { token: me.token, body: out.put_body });
    expect(put.status).toBe(200);
    const mine = await call(relay, 'GET', '/v1/me', { token: me.token });
    expect(mine.body.encryption_key.fingerprint).toBe(out.fingerprint);
    expect(out.fingerprint_display).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){7}$/);
  });

  it('seal-post, open-post and open-lock agree with shared/sealed', async () => {
    const seed = new Uint8Array(randomBytes(32));
    const key = dir.write('cli2.pem', pemOfSeed(seed));
    const peerId = peerIdHexOf(signerFromSeed(seed).publicKey);
    const secretHex = toHex(randomBytes(32));
    const spaceId = randomUUID();
    const sealed = await runNode(sealedJs, ['seal-post', '--key', key, '--secret', secretHex, '--space-id', spaceId, '--generation', '2', '--kind', 'obs', '--title', 'T', '--body', 'sealed from the command line']);
    expect(sealed.code).toBe(0);
    const transport = JSON.parse(sealed.stdout);
    const opened = openPost(fromBase64url(transport.header), fromBase64url(transport.ciphertext), fromHex(secretHex));
    expect(opened).toMatchObject({ header: { author: peerId, generation: 2, space_id: spaceId }, content: { title: 'T', body: 'sealed from the command line' } });
    const back = await runNode(sealedJs, ['open-post', '--secret', secretHex, '--header', transport.header, '--ciphertext', transport.ciphertext]);
    expect(JSON.parse(back.stdout).content).toEqual({ body: 'sealed from the command line', title: 'T' });

    const sender = signerFromSeed(new Uint8Array(randomBytes(32)));
    const senderId = peerIdHexOf(sender.publicKey);
    const senderEnc = deriveEncryptionKey(new Uint8Array(randomBytes(32)), senderId);
    const C = spaceContainer(spaceId);
    const lock = sealLock({ container: C, generation: 2, secret: fromHex(secretHex), recipient: { peerId, publicKey: deriveEncryptionKey(seed, peerId).publicKey }, sender: { peerId: senderId, privateKey: senderEnc.privateKey }, ephemeral: new Uint8Array(randomBytes(32)) });
    const args = ['open-lock', '--key', key, '--space-id', spaceId, '--generation', '2', '--lock', toHex(lock), '--commitment', commitmentHex(C, 2, fromHex(secretHex)), '--sender', senderId, '--sender-key', toHex(senderEnc.publicKey)];
    const unlocked = await runNode(sealedJs, args);
    expect(JSON.parse(unlocked.stdout)).toEqual({ secret: secretHex });
    const wrong = await runNode(sealedJs, args.map((a) => (a === '2' ? '3' : a)));
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('does not authenticate');
    const usage = await runNode(sealedJs, ['open-post']);
    expect(usage.code).toBe(2);
  });

  it("takes the argument after an option as its value even when it begins with '-', as a base64url header, a title or a body may", async () => {
    const secretHex = toHex(randomBytes(32));
    const spaceId = randomUUID();
    const sealed = await runNode(sealedJs, ['seal-post', '--key', dir.write('cli3.pem', pemOfSeed(new Uint8Array(randomBytes(32)))), '--secret', secretHex, '--space-id', spaceId, '--generation', '1', '--kind', 'obs', '--title', '-5 degrees', '--body', '- a list item']);
    expect(sealed.code, sealed.stderr).toBe(0);
    const transport = JSON.parse(sealed.stdout);
    const opened = await runNode(sealedJs, ['open-post', '--secret', secretHex, '--header', transport.header, '--ciphertext', transport.ciphertext]);
    expect(opened.code, opened.stderr).toBe(0);
    expect(JSON.parse(opened.stdout).content).toEqual({ title: '-5 degrees', body: '- a list item' });
  });
});
