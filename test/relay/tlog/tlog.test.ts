/**
 * A SPACE's posts as a C2SP transparency log over the real HTTP relay (relay/routes/tlog.ts):
 * signed notes at each checkpoint's size, RFC 9162 consistency and inclusion proofs, and the
 * refusals. The notes, roots and proofs are checked twice: with the shared/ verifiers, and with
 * an independent implementation in Python (test/helpers/tlog_check.py, standard library and
 * `cryptography`) that recomputes every leaf from the posts as served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../shared/encoding.js';
import { postLeaf, verifyConsistency, verifyInclusion } from '../../../shared/merkle.js';
import { readNote, verifyNote } from '../../../shared/signed-note.js';
import { EMPTY_TREE_ROOT, readCheckpointBody } from '../../../shared/tlog-checkpoint.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { codeOf, get, newSpace, post } from '../../helpers/posts.js';
import { HAVE_PYTHON_CRYPTOGRAPHY, noteKeyOf, postLinks, pythonCheck, signCheckpoints } from '../../helpers/tlog.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';

let relay: RunningRelay;
let owner: MintedToken;
let stranger: MintedToken;
let space: SpaceRow;
/** Published sizes after each round of posts, oldest first. */
const sizes: number[] = [];

async function read(path: string, who?: MintedToken) {
  relay.clock.advance(600);
  return get(relay, path, who);
}

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  stranger = await mintToken(relay.url);
  space = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request' });
  // Rounds of 3, 2, 1, 5 and 6 posts, each signed: sizes 3, 5, 6, 11, 17.
  for (const n of [3, 2, 1, 5, 6]) {
    for (let i = 0; i < n; i++) await post(relay, owner, space, { kind: 'obs', body: `post ${sizes.length}.${i}` });
    await signCheckpoints(relay);
    sizes.push((await relay.store.posts.head(space.id)).seq);
  }
});
afterAll(async () => {
  await relay.close();
});

function noteKey() {
  const k = noteKeyOf(relay);
  return { name: k.name, publicKey: relay.serviceKeys.signer.publicKey, b64: k.public_key_b64 };
}

async function noteAt(size?: number): Promise<string> {
  const r = await read(`/v1/spaces/${space.name}/checkpoint.note${size === undefined ? '' : `/${size}`}`);
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  return r.text;
}

describe('signed notes', () => {
  it('a SPACE with no checkpoint yet publishes the empty tree: size 0 and the SHA-256 of nothing, signed', async () => {
    const empty = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request' });
    relay.clock.advance(600);
    const r = await get(relay, `/v1/spaces/${empty.name}/checkpoint.note`);
    expect(r.status).toBe(200);
    const note = readNote(r.text);
    const head = readCheckpointBody(note.text);
    expect(head).toMatchObject({ origin: `${noteKey().name}/spaces/${empty.name}`, size: 0 });
    expect(toHex(head.root)).toBe(toHex(EMPTY_TREE_ROOT));
    verifyNote(note, noteKey().name, noteKey().publicKey);
  });

  it('the newest note names the relay and SPACE, the newest checkpoint\'s size and the root over its posts, under the service key', async () => {
    const text = await noteAt();
    const lines = text.split('\n');
    expect(lines[0]).toBe(`${noteKey().name}/spaces/${space.name}`);
    expect(lines[1]).toBe(String(sizes[sizes.length - 1]));
    expect(lines[3]).toBe('');
    expect(lines[4]!.startsWith(`\u2014 ${noteKey().name} `)).toBe(true);
    verifyNote(readNote(text), noteKey().name, noteKey().publicKey);
    // The same note at its size, byte for byte (Ed25519 is deterministic).
    expect(await noteAt(sizes[sizes.length - 1])).toBe(text);
  });

  it.skipIf(!HAVE_PYTHON_CRYPTOGRAPHY)(`Python checks each note: key id, Ed25519 signature, and the root recomputed from the posts as served${(HAVE_PYTHON_CRYPTOGRAPHY ? '' : ' (skipped: no python3 with the cryptography package)')}`, async () => {
    const items = await postLinks(relay, space.name);
    for (const size of sizes) {
      const found = pythonCheck({ note: await noteAt(size), origin_key: { name: noteKey().name, public_key_b64: noteKey().b64 }, posts: { space_id: space.spaceId, items } });
      expect(found).toMatchObject({ origin: `${noteKey().name}/spaces/${space.name}`, size, origin_signature: true, root_matches_posts: true, signature_lines: 1 });
    }
    // A note with one character changed does not verify there either.
    const bent = (await noteAt(sizes[0])).replace(`\n${sizes[0]}\n`, `\n${sizes[0]! + 1}\n`);
    expect(pythonCheck({ note: bent, origin_key: { name: noteKey().name, public_key_b64: noteKey().b64 } }).origin_signature).toBe(false);
  });

  it('only published sizes have a note: another size, or one past the newest, is INVALID_REQUEST', async () => {
    for (const bad of [1, 4, sizes[sizes.length - 1]! + 1]) {
      const r = await read(`/v1/spaces/${space.name}/checkpoint.note/${bad}`);
      expect([r.status, codeOf(r)]).toEqual([400, 'INVALID_REQUEST']);
    }
    for (const bad of ['-1', '01', 'x', '99999999999999999999']) {
      const r = await read(`/v1/spaces/${space.name}/checkpoint.note/${bad}`);
      expect([r.status, codeOf(r)], bad).toEqual([400, 'INVALID_REQUEST']);
    }
    expect((await read(`/v1/spaces/${space.name}/checkpoint.note/0`)).status).toBe(200);
  });

  it('a private SPACE\'s log is for its members (READ_DENIED), an unknown SPACE is SPACE_NOT_FOUND', async () => {
    const hidden = await newSpace(relay, owner);
    expect(codeOf(await read(`/v1/spaces/${hidden.name}/checkpoint.note`, stranger))).toBe('READ_DENIED');
    expect(codeOf(await read(`/v1/spaces/${hidden.name}/checkpoint.note`))).toBe('READ_DENIED');
    expect(codeOf(await read(`/v1/spaces/${hidden.name}/consistency?from=0&to=0`, stranger))).toBe('READ_DENIED');
    expect((await read(`/v1/spaces/${hidden.name}/checkpoint.note`, owner)).status).toBe(200);
    expect(codeOf(await read('/v1/spaces/no-such-space-here/checkpoint.note'))).toBe('SPACE_NOT_FOUND');
  });
});

describe('consistency proofs', () => {
  async function head(size: number) {
    return readCheckpointBody(readNote(await noteAt(size)).text);
  }

  async function proof(from: number, to: number): Promise<string[]> {
    const r = await read(`/v1/spaces/${space.name}/consistency?from=${from}&to=${to}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ from: String(from), to: String(to) });
    return r.body.proof;
  }

  it('between every pair of published sizes the proof verifies (shared verifier and Python), and every bent one fails', async () => {
    const checks: Record<string, unknown>[] = [];
    for (const from of sizes) {
      for (const to of sizes.filter((s) => s >= from)) {
        const [a, b] = [await head(from), await head(to)];
        const p = await proof(from, to);
        verifyConsistency(from, to, a.root, b.root, p.map((h) => fromHex(h, 32)));
        checks.push({ from, to, old_root_b64: Buffer.from(a.root).toString('base64'), new_root_b64: Buffer.from(b.root).toString('base64'), proof: p });
        if (from === to) continue;
        const bents: [string, string[]][] = [
          ['a byte flipped', p.map((h, i) => (i === 0 ? `${h.slice(0, 62)}${h.slice(62) === '00' ? '01' : '00'}` : h))],
          ['a hash dropped', p.slice(1)],
          ['a hash added', [...p, toHex(new Uint8Array(32))]],
          ['reversed', p.length > 1 ? [...p].reverse() : [toHex(new Uint8Array(32))]],
        ];
        for (const [why, bent] of bents) {
          expect(() => verifyConsistency(from, to, a.root, b.root, bent.map((h) => fromHex(h, 32))), why).toThrow(/consistency/);
          checks.push({ from, to, old_root_b64: Buffer.from(a.root).toString('base64'), new_root_b64: Buffer.from(b.root).toString('base64'), proof: bent, bent: why });
        }
        // The right proof does not prove another pair of sizes or roots.
        expect(() => verifyConsistency(from, to, b.root, b.root, p.map((h) => fromHex(h, 32)))).toThrow();
      }
    }
    if (HAVE_PYTHON_CRYPTOGRAPHY) {
      const found = pythonCheck({ note: await noteAt(), origin_key: { name: noteKey().name, public_key_b64: noteKey().b64 }, consistency: checks });
      expect(found.consistency).toEqual(checks.map((c) => c.bent === undefined));
    }
  });

  it('any sizes up to the newest head have a proof, and from 0 or between equal sizes it is empty', async () => {
    const newest = sizes[sizes.length - 1]!;
    expect(await proof(0, newest)).toEqual([]);
    expect(await proof(4, 4)).toEqual([]);
    const p = await proof(2, 7);
    expect(p.length).toBeGreaterThan(0);
  });

  it('refuses sizes out of order, past the newest head, or not decimal, with INVALID_REQUEST', async () => {
    const newest = sizes[sizes.length - 1]!;
    for (const q of [`from=5&to=3`, `from=1&to=${newest + 1}`, 'from=1', 'to=3', 'from=a&to=3', 'from=1&to=3&extra=1', 'from=01&to=3']) {
      const r = await read(`/v1/spaces/${space.name}/consistency?${q}`);
      expect([r.status, codeOf(r)], q).toEqual([400, 'INVALID_REQUEST']);
    }
  });
});

describe('inclusion proofs', () => {
  it('tie each post to every published head at or after it (shared verifier and Python)', async () => {
    const items = await postLinks(relay, space.name);
    const checks: Record<string, unknown>[] = [];
    for (const size of [sizes[1]!, sizes[sizes.length - 1]!]) {
      const root = readCheckpointBody(readNote(await noteAt(size)).text).root;
      for (const p of items.filter((i) => Number(i.seq) <= size)) {
        const r = await read(`/v1/spaces/${space.name}/inclusion?seq=${p.seq}&size=${size}`);
        expect(r.status, r.text).toBe(200);
        const leaf = postLeaf(space.spaceId, Number(p.seq), fromHex(p.object_id, 32), fromHex(p.chain_hash, 32));
        verifyInclusion(leaf, Number(p.seq) - 1, size, r.body.proof.map((h: string) => fromHex(h, 32)), root);
        checks.push({ index: Number(p.seq) - 1, size, leaf_hex: toHex(leaf), root_b64: Buffer.from(root).toString('base64'), proof: r.body.proof });
      }
    }
    if (HAVE_PYTHON_CRYPTOGRAPHY) {
      const found = pythonCheck({ note: await noteAt(), origin_key: { name: noteKey().name, public_key_b64: noteKey().b64 }, inclusion: checks });
      expect(found.inclusion.every((ok: boolean) => ok)).toBe(true);
    }
    for (const q of ['seq=0&size=3', `seq=4&size=3`, 'seq=1&size=4', 'seq=1']) {
      expect(codeOf(await read(`/v1/spaces/${space.name}/inclusion?${q}`)), q).toBe('INVALID_REQUEST');
    }
  });
});

describe('cosignatures posted to the origin', () => {
  it('a cosignature from a witness this relay does not accept is refused and changes nothing', async () => {
    const note = await noteAt();
    relay.clock.advance(2_100);
    const r = await relay.app.inject({
      method: 'POST',
      url: `/v1/spaces/${space.name}/cosignatures`,
      payload: { size: String(sizes[sizes.length - 1]), cosignature: `\u2014 someone.example ${Buffer.alloc(76, 1).toString('base64')}` },
    });
    expect([r.statusCode, JSON.parse(r.body).error.code]).toEqual([400, 'INVALID_REQUEST']);
    for (const cosignature of ['not a line', '\u2014 a b c', `\u2014 ${'x'.repeat(10)} !!!!`]) {
      const bad = await relay.app.inject({ method: 'POST', url: `/v1/spaces/${space.name}/cosignatures`, payload: { size: '3', cosignature } });
      expect(JSON.parse(bad.body).error.code, cosignature).toBe('INVALID_REQUEST');
    }
    expect(await noteAt()).toBe(note);
  });
});
