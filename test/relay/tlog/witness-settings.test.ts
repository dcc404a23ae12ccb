/**
 * The witness settings of svc-relay (relay/tlog/settings.ts): what --accept-witnesses,
 * --witness, --witness-of and --witness-interval (and their environment variables) become, and
 * the one-line refusals of settings that cannot work.
 */
import { describe, expect, it } from 'vitest';
import { signerFromSeed } from '../../../shared/identity.js';
import { parseWitnessSettings } from '../../../relay/tlog/settings.js';

const key = Buffer.from(signerFromSeed(new Uint8Array(32).fill(9)).publicKey).toString('base64');

describe('witness settings', () => {
  it('read accepted witnesses and followed SPACES from flags or the environment', () => {
    const s = parseWitnessSettings(
      { 'accept-witnesses': `w1.example=${key}`, witness: true, 'witness-of': ['https://relay-a.example/v1/spaces/notes', 'https://relay-a.example/v1/spaces/notes'] },
      {},
    );
    expect(s.acceptedWitnesses?.map((w) => w.name)).toEqual(['w1.example']);
    expect(s.witness).toEqual({ targets: ['https://relay-a.example/v1/spaces/notes'], intervalMs: 60_000 });
    const e = parseWitnessSettings({}, { SVC_WITNESS: '1', SVC_WITNESS_OF: 'http://127.0.0.1:9/v1/spaces/a, https://b.example/v1/spaces/b', SVC_WITNESS_INTERVAL: '5' });
    expect(e.witness).toEqual({ targets: ['http://127.0.0.1:9/v1/spaces/a', 'https://b.example/v1/spaces/b'], intervalMs: 5_000 });
    expect(parseWitnessSettings({}, {})).toEqual({ acceptedWitnesses: undefined });
  });

  it('refuse what cannot work, naming the setting', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ witness: true }, /needs at least one --witness-of/],
      [{ 'witness-of': ['https://a.example/v1/spaces/x'] }, /needs --witness/],
      [{ witness: true, 'witness-of': ['https://a.example/spaces/x'] }, /ending in \/v1\/spaces\/NAME/],
      [{ witness: true, 'witness-of': ['ftp://a.example/v1/spaces/x'] }, /http\(s\)/],
      [{ witness: true, 'witness-of': ['https://a.example/v1/spaces/x?y=1'] }, /no query/],
      [{ witness: true, 'witness-of': ['https://a.example/v1/spaces/x'], 'witness-interval': '0' }, /--witness-interval/],
      [{ 'accept-witnesses': 'w1.example=nope' }, /--accept-witnesses/],
    ];
    for (const [values, why] of cases) expect(() => parseWitnessSettings(values as never, {}), JSON.stringify(values)).toThrow(why);
  });
});
