/**
 * A relay that misbehaves toward a member of a sealed SPACE (protocol/sealed.md
 * §4, §5, §7, §10): a real HTTP proxy (test/helpers/proxy.ts) in front of the real relay
 * rewrites the answers a real bridge process gets. The owner plays its part straight against
 * the relay with test/helpers/sealed.ts (the shared/sealed formats a bridge sends).
 *
 * The bridge refuses, and says so in its answer:
 * - a lock injected from a KEY that is neither the owner nor a keeper;
 * - a keeper list older than the one it saw, and one signed by a KEY that does not own the SPACE
 *   (after a hand-over: by the previous owner, once the new owner signed one);
 * - a new owner no keeper list of the owner it knew names, or after missed hand-overs (while an
 *   honest hand-over to a KEY that list names is taken);
 * - a generation older than the one it saw;
 * - a ciphertext swapped between two posts;
 * - a SPACE it saw sealed shown as not sealed: it never sends the words.
 * Between the attacks, the same reads through the honest proxy open, so each refusal is the
 * bridge's own finding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { fromBase64url, toBase64url, toHex } from '../../shared/encoding.js';
import { buildKeeperList, signKeeperList } from '../../shared/sealed/keepers.js';
import { sealLock } from '../../shared/sealed/locks.js';
import { callTool, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startProxy, type ProxiedAnswer, type RunningProxy } from '../helpers/proxy.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  keeperListBody,
  nextGeneration,
  publishKey,
  sealedKey,
  sealedPostBody,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from '../helpers/sealed.js';
import { call } from '../helpers/spaces.js';

let proxy: RunningProxy;
let relay: RunningRelay;
let member: RunningBridge;
let memberId: string;
let memberKey: Uint8Array;
let owner: SealedKey;
let outsider: SealedKey;
let s: SealedSpace;

async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  const r = await publishKey(relay, k);
  if (r.status !== 200) throw new Error(`publish refused: ${r.text}`);
  return k;
}

function ok(r: { status: number; text: string }, status = 200): void {
  if (r.status !== status) throw new Error(`expected ${status}: ${r.status} ${r.text}`);
}

/** A lock of generation `g` for the member, from `from`. */
function lockForMember(g: number, from: SealedKey): string {
  return toHex(
    sealLock({
      container: s.container,
      generation: g,
      secret: s.secrets[g]!,
      recipient: { peerId: memberId, publicKey: memberKey },
      sender: { peerId: from.peerId, privateKey: from.enc.privateKey },
      ephemeral: new Uint8Array(randomBytes(32)),
    }),
  );
}

async function ownerPost(g: number, title: string) {
  const { body } = sealedPostBody(s, owner, g, { title, body: `${title}: the body` });
  ok(await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, { token: owner.token, body }), 201);
}

/** The member's bridge reads the SPACE at full detail: from the start, or (`saved`) from its saved cursor. */
async function read(saved = false) {
  const r = await callTool(member, 'svc_read_space', { space: s.name, ...(saved ? {} : { after: '0' }), detail: 'full' });
  return { text: textOf(r), items: ((r.structuredContent as any)?.items ?? []) as any[], isError: r.isError === true };
}

const isStatus = (a: ProxiedAnswer) => a.method === 'GET' && a.url === `/v1/spaces/${s.name}/sealed`;
const isRead = (a: ProxiedAnswer) => a.method === 'GET' && a.url.startsWith(`/v1/spaces/${s.name}/posts?`);

/** Rewrite the JSON of answers that match. */
function rewriteJson(match: (a: ProxiedAnswer) => boolean, change: (body: any) => void): void {
  proxy.rewrite = (a) => {
    if (!match(a) || a.status !== 200) return undefined;
    const body = JSON.parse(a.body);
    change(body);
    return JSON.stringify(body);
  };
}

/** The outsider's KEY as sealed answers show one. */
async function keyView(k: SealedKey): Promise<Record<string, unknown>> {
  const peer = await call(relay, 'GET', `/v1/peers/${k.peerId}`, { token: owner.token });
  return { peer_id: k.peerId, public_key: toHex(k.signer.publicKey), key_type: 'ed25519', encryption_key: peer.body.encryption_key };
}

beforeAll(async () => {
  proxy = await startProxy();
  relay = await startRelay({ publicUrl: proxy.url });
  proxy.target = relay.url;
  owner = await keyed();
  outsider = await keyed();
  s = await createSealedSpace(relay, owner);
  member = await startBridge({ relayUrl: proxy.url, home: tempHome() });
  // The member asks to join (its bridge publishes its encryption key on this first need).
  const ask = await callTool(member, 'svc_join', { action: 'join', name: s.name, message: 'let me in' });
  expect(ask.isError, textOf(ask)).toBeFalsy();
  const request = (ask.structuredContent as any).request_id as string;
  memberId = (ask.structuredContent as any).requester as string;
  ok(await call(relay, 'POST', `/v1/requests/${request}/approve`, { token: owner.token, body: {} }));
  const peer = await call(relay, 'GET', `/v1/peers/${memberId}`, { token: owner.token });
  memberKey = Buffer.from(peer.body.encryption_key.public_key, 'hex');
  ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/stamp`, { token: owner.token, body: stampBody(owner, memberId) }));
  await ownerPost(1, 'First post');
}, 120_000);

afterAll(async () => {
  await member?.close();
  await relay?.close();
  await proxy?.close();
});

describe('a member bridge behind a relay that misbehaves', () => {
  it('refuses a lock injected from a KEY that is neither the owner nor a keeper, and says so', async () => {
    const injected = { generation: 1, lock: lockForMember(1, outsider), commitment: commitmentOfGeneration(s, 1), sender: await keyView(outsider) };
    rewriteJson(isStatus, (b) => b.locks.push(injected));
    const r = await read(true);
    proxy.rewrite = undefined;
    expect(r.isError).toBe(false);
    expect(r.items[0].title).toBeNull();
    expect(r.items[0].sealed.opened).toBe(false);
    expect(r.text).toContain('COULD NOT BE OPENED');
    expect(r.text).toContain(`refused a lock for generation 1 from ${outsider.peerId}: it is neither the owner nor a keeper`);
    expect(r.text).not.toContain('First post: the body');
    // The saved cursor stays before it, so the next read shows it again.
    expect(r.text).toContain('cursor: held before seq 1');
    // The owner's own lock opens it through the honest relay.
    ok(await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/locks`, { token: owner.token, body: { generation: 1, commitment: commitmentOfGeneration(s, 1), locks: { [memberId]: lockForMember(1, owner) } } }));
    const honest = await read(true);
    expect(honest.text).not.toContain('COULD NOT BE OPENED');
    expect(honest.items).toHaveLength(1);
    expect(honest.items[0]).toMatchObject({ title: 'First post', body: 'First post: the body', sealed: { opened: true, generation: 1 } });
  }, 60_000);

  it('refuses an older keeper list than the one it saw', async () => {
    ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/keepers`, { token: owner.token, body: keeperListBody(s, owner, { revision: 1 }) }));
    let first: unknown;
    rewriteJson(isStatus, (b) => {
      first = b.keeper_list;
    });
    expect((await read()).text).not.toContain('COULD NOT BE OPENED');
    expect((first as any).revision).toBe(1);
    ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/keepers`, { token: owner.token, body: keeperListBody(s, owner, { revision: 2, change_every: 600 }) }));
    proxy.rewrite = undefined;
    expect((await read()).text).not.toContain('COULD NOT BE OPENED');
    rewriteJson(isStatus, (b) => {
      b.keeper_list = first;
    });
    const r = await read();
    proxy.rewrite = undefined;
    expect(r.items[0].sealed.opened).toBe(false);
    expect(r.text).toContain('SEALED_ROLLBACK');
    expect(r.text).toContain('keeper list revision 1');
    expect(r.text).toContain('older than revision 2 this bridge saw');
  }, 60_000);

  it('refuses a keeper list signed by a KEY that does not own the SPACE', async () => {
    const list = buildKeeperList({ space_id: s.spaceId, revision: 3, keepers: [], stampers: [], admission: 'open', change_every: 600 }, outsider.peerId);
    const view = await keyView(outsider);
    rewriteJson(isStatus, (b) => {
      b.keeper_list = { ...b.keeper_list, revision: 3, list: toBase64url(list), signature: signKeeperList(outsider.signer, list), signed_by: view };
    });
    const r = await read();
    proxy.rewrite = undefined;
    expect(r.items[0].sealed.opened).toBe(false);
    expect(r.text).toContain('SEALED_LIST_FORGED');
    expect(r.text).toContain(`signed by ${outsider.peerId}`);
  }, 60_000);

  it('refuses a generation older than the one it saw', async () => {
    const next = nextGeneration(s);
    ok(await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/generations`, { token: owner.token, body: next }), 201);
    const locks = { [owner.peerId]: toHex(sealLock({ container: s.container, generation: 2, secret: s.secrets[2]!, recipient: { peerId: owner.peerId, publicKey: owner.enc.publicKey }, sender: { peerId: owner.peerId, privateKey: owner.enc.privateKey }, ephemeral: new Uint8Array(randomBytes(32)) })), [memberId]: lockForMember(2, owner) };
    ok(await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/locks`, { token: owner.token, body: { generation: 2, commitment: next.commitment, locks } }));
    ok(await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/generations/2/activate`, { token: owner.token }));
    await ownerPost(2, 'Second post');
    const honest = await read();
    expect(honest.text).not.toContain('COULD NOT BE OPENED');
    expect(honest.items.map((p) => [p.title, p.sealed.generation])).toEqual([['First post', 1], ['Second post', 2]]);
    rewriteJson(isStatus, (b) => {
      b.generation = 1;
      b.commitment = commitmentOfGeneration(s, 1);
      b.locks = [];
    });
    const r = await read();
    proxy.rewrite = undefined;
    expect(r.items.every((p) => p.sealed.opened === false)).toBe(true);
    expect(r.text).toMatch(/^!!! The relay's key records for this sealed SPACE were refused/);
    expect(r.text).toContain('SEALED_ROLLBACK');
    expect(r.text).toContain('generation 1 in use');
    expect(r.text).toContain('older than generation 2 this bridge saw');
  }, 60_000);

  it('refuses a ciphertext swapped between two posts and still opens the others', async () => {
    await ownerPost(2, 'Third post');
    rewriteJson(isRead, (b) => {
      const [x, y] = [b.items[1].sealed, b.items[2].sealed];
      [x.ciphertext, y.ciphertext] = [y.ciphertext, x.ciphertext];
    });
    const r = await read();
    proxy.rewrite = undefined;
    expect(r.items.map((p) => p.sealed.opened)).toEqual([true, false, false]);
    expect(r.items[0].title).toBe('First post');
    expect(r.items[1].title).toBeNull();
    expect(r.items[1].body).toBeNull();
    expect(r.text).toContain('does not authenticate under the key of generation 2');
    expect(r.text).not.toContain('Second post');
    expect(r.text).not.toContain('Third post');
  }, 60_000);

  it('refuses a new owner that no keeper list of the owner it knew names, and one after missed hand-overs', async () => {
    const [outsiderView, ownerView] = [await keyView(outsider), await keyView(owner)];
    rewriteJson(isStatus, (b) => {
      b.owner = outsiderView;
      b.owner_was = owner.peerId;
      b.owner_was_key = ownerView;
    });
    const unbacked = await read();
    expect(unbacked.items.every((p) => p.sealed.opened === false)).toBe(true);
    expect(unbacked.text).toContain('SEALED_OWNER_UNTRUSTED');
    expect(unbacked.text).toContain(`but no keeper list ${owner.peerId} signed names ${outsider.peerId} as a keeper`);
    rewriteJson(isStatus, (b) => {
      b.owner = outsiderView;
      b.owner_was = null;
    });
    const missed = await read();
    proxy.rewrite = undefined;
    expect(missed.text).toContain('at least two hand-overs were missed');
    expect(missed.text).toContain(`svc-bridge sealed ${s.name} --forget`);
    expect((await read()).text).not.toContain('COULD NOT BE OPENED');
  }, 60_000);

  it('takes a new owner through the keeper list the previous owner signed naming it', async () => {
    const successor = await keyed();
    ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/members/${successor.peerId}`, { token: owner.token, body: { role: 'admin' } }), 201);
    ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/keepers`, { token: owner.token, body: keeperListBody(s, owner, { revision: 3, keepers: [successor.peerId] }) }));
    const lock = toHex(sealLock({ container: s.container, generation: 2, secret: s.secrets[2]!, recipient: { peerId: successor.peerId, publicKey: successor.enc.publicKey }, sender: { peerId: owner.peerId, privateKey: owner.enc.privateKey }, ephemeral: new Uint8Array(randomBytes(32)) }));
    ok(await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/locks`, { token: owner.token, body: { generation: 2, commitment: commitmentOfGeneration(s, 2), locks: { [successor.peerId]: lock } } }));
    // The member sees revision 3 before the hand-over.
    expect((await read()).text).not.toContain('COULD NOT BE OPENED');
    const offer = await call(relay, 'POST', `/v1/spaces/${s.name}/hand-over`, { token: owner.token, body: { to: successor.peerId } });
    ok(offer, 201);
    ok(await call(relay, 'POST', `/v1/hand-overs/${offer.body.offer_id}/accept`, { token: successor.token }));
    const r = await read();
    expect(r.text).not.toContain('COULD NOT BE OPENED');
    expect(member.stderr()).toContain(`${owner.peerId} handed it to ${successor.peerId}, who is named as a keeper in a list ${owner.peerId} signed`);
    // From now on the previous owner's word is the previous owner's: a list it signs is forged.
    ok(await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/keepers`, { token: successor.token, body: keeperListBody(s, successor, { revision: 4 }) }));
    expect((await read()).text).not.toContain('COULD NOT BE OPENED');
    const view = await keyView(owner);
    rewriteJson(isStatus, (b) => {
      b.keeper_list = { ...b.keeper_list, revision: 5, list: toBase64url(buildKeeperList({ space_id: s.spaceId, revision: 5, keepers: [successor.peerId], stampers: [], admission: 'open', change_every: 600 }, owner.peerId)), signed_by: view };
      b.keeper_list.signature = signKeeperList(owner.signer, fromBase64url(b.keeper_list.list, 'list'));
    });
    const forged = await read();
    proxy.rewrite = undefined;
    expect(forged.text).toContain('SEALED_LIST_FORGED');
  }, 60_000);

  it('never sends words to a SPACE it saw sealed that the relay shows as not sealed', async () => {
    const seen = proxy.seen.length;
    rewriteJson((a) => a.method === 'GET' && a.url === `/v1/spaces/${s.name}`, (b) => {
      b.visibility = 'private';
    });
    const r = await callTool(member, 'svc_post', { space: s.name, kind: 'obs', title: 'Plain words', body: 'must never leave this machine' });
    proxy.rewrite = undefined;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('SEALED_DOWNGRADE');
    expect(proxy.seen.slice(seen).filter((l) => l.startsWith('POST'))).toEqual([]);
  }, 60_000);
});
