/**
 * recovery.list over the real relay, on either store (SVC_TEST_STORE): which form of a notice
 * each caller is served (relay/recovery-forms.ts; shared/recovery.ts "The withheld form"), and
 * the withheld form a relay signs when it starts for a notice stored without one, as a restore
 * of an earlier version left it. The notice is signed here with the relay's own key over the
 * relay's own checkpoint and stored through the store; restores themselves (SQLite's file) are
 * tested in relay-backup-restore.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../shared/encoding.js';
import { signRecovery, verifyRecovery } from '../../../shared/recovery.js';
import { signMissingWithheld } from '../../../relay/recovery-forms.js';
import { admit, call, newSpace, post } from '../../helpers/posts.js';
import { mintToken, startRelay, tempDataDir, type RunningRelay } from '../../helpers/relay.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function relayOn(dataDir: string): Promise<RunningRelay> {
  const relay = await startRelay({ dataDir });
  cleanup.push(() => relay.close());
  return relay;
}

async function items(relay: RunningRelay, token?: string): Promise<any[]> {
  const r = await call(relay, 'GET', '/v1/recovery', { token });
  expect(r.status, r.text).toBe(200);
  return r.body.items;
}

describe('recovery.list', () => {
  it("serves a private SPACE's notice whole to its members and owner, withheld to anyone else, and signs a missing withheld form when the relay starts", async () => {
    const dataDir = tempDataDir('svc-recovery-list-');
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const first = await relayOn(dataDir);
    const owner = await mintToken(first.url);
    const member = await mintToken(first.url);
    const outsider = await mintToken(first.url);
    const space = await newSpace(first, owner);
    await admit(first, space, member, 'writer');
    for (const n of [1, 2, 3]) await post(first, owner, space.name, { kind: 'obs', body: `note ${n}` });
    first.clock.advance(11 * 60_000);
    await first.app.checkpointer.runOnce(first.clock.now());
    const signed = (await first.store.checkpoints.latest(space.id, 'posts'))!;
    const next = await newSpace(first, owner);
    const survivedHash = toHex((await first.store.posts.bySeq(space.id, 1))!.chainHash);
    const notice = signRecovery(first.serviceKeys.signer, {
      space_id: space.spaceId,
      name: space.name,
      replaced_by: next.name,
      replaced_by_space_id: next.spaceId,
      previous_epoch: randomUUID(),
      service_epoch: randomUUID(),
      chains: [{ stream: 'posts', signed_last: signed.fields.last, signed_checkpoint_id: toHex(signed.id), signed_ending_hash: signed.fields.ending_hash, survived_last: '1', survived_hash: survivedHash }],
      created_at: new Date(first.clock.now()).toISOString(),
    });
    await first.store.spaces.close(space.id, next.name, first.clock.now());
    // Stored without its withheld form: an outsider is not served it at all, members are.
    await first.store.recovery.insert(space.id, notice, first.serviceKeys.rendering, first.clock.now());
    expect(await items(first)).toEqual([]);
    expect(await items(first, outsider.token)).toEqual([]);
    expect((await items(first, member.token)).map((i) => i.recovery_id)).toEqual([toHex(notice.id)]);
    await first.close();
    cleanup.pop();

    // The next start signs it.
    const relay = await relayOn(dataDir);
    const root = fromHex(relay.serviceKeys.rootKey, 32);
    for (const who of [owner, member]) {
      const [whole] = await items(relay, who.token);
      expect(whole.recovery_id).toBe(toHex(notice.id));
      expect(verifyRecovery(whole, root).fields).toEqual(notice.fields);
    }
    const anonymous = await items(relay);
    expect(anonymous).toHaveLength(1);
    expect(await items(relay, outsider.token)).toEqual(anonymous);
    const withheld = verifyRecovery(anonymous[0], root).fields;
    expect(withheld).toMatchObject({ space_id: space.spaceId, name: space.name, replaced_by: next.name, full_recovery_id: toHex(notice.id) });
    expect(withheld.chains).toEqual([
      { stream: 'posts', signed_last: null, signed_checkpoint_id: null, signed_ending_hash: null, survived_last: null, survived_hash: null, unavailable: true },
    ]);
    for (const hidden of [toHex(signed.id), signed.fields.ending_hash, survivedHash]) expect(JSON.stringify(anonymous)).not.toContain(hidden);
    // Signed once: nothing is left to sign, and the same form is served again.
    expect(await signMissingWithheld(relay.store, relay.serviceKeys, relay.clock.now())).toBe(0);
    expect(await items(relay)).toEqual(anonymous);
  });
});
