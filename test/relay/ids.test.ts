/**
 * The relay's identifiers and its pooled randomness (relay/ids.ts): every answer is a fresh
 * array of the asked length, no two answers share bytes, a refill is seamless, and nothing
 * handed out stays behind in the pool.
 */
import { describe, expect, it } from 'vitest';
import { newToken, newUuid, pooledRandom } from '../../relay/ids.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('pooled randomness', () => {
  it('answers fresh arrays of the asked length across many refills, all different', () => {
    const random = pooledRandom(64);
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const n = 1 + (i % 40);
      const b = random(n);
      expect(b).toBeInstanceOf(Uint8Array);
      expect(b.length).toBe(n);
      if (n >= 16) {
        expect(seen.has(hex(b))).toBe(false);
        seen.add(hex(b));
      }
    }
    expect(seen.size).toBeGreaterThan(100);
  });

  it('hands out arrays of their own: changing one changes neither the next answer nor an earlier one', () => {
    const random = pooledRandom(32);
    const a = random(16);
    const b = random(16);
    const bBefore = hex(b);
    a.fill(0);
    expect(hex(b)).toBe(bBefore);
    const aAfter = hex(a);
    b.fill(0xff);
    expect(hex(a)).toBe(aAfter);
    const c = random(16); // the pool's refill: not the bytes written into a or b
    expect([hex(a), hex(b)]).not.toContain(hex(c));
    expect(new Set([a.buffer, b.buffer, c.buffer]).size).toBe(3);
  });

  it('fills an ask larger than the pool directly', () => {
    const random = pooledRandom(16);
    const big = random(100);
    expect(big.length).toBe(100);
    expect(new Set(big).size).toBeGreaterThan(20);
  });

  it('feeds uuids (version 4) and tokens', () => {
    const random = pooledRandom();
    const ids = Array.from({ length: 300 }, () => newUuid(random));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(300);
    expect(newToken(random)).toMatch(/^svc_[0-9a-f]{64}$/);
  });
});
