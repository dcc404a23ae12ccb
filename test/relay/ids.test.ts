/**
 * The relay's identifiers and its pooled randomness (relay/ids.ts): every answer is a fresh
 * array of the asked length, no two answers share bytes, a refill is seamless, and nothing
 * handed out stays behind in the pool.
 */
import { describe, expect, it } from 'vitest';
import { tokenHash } from '../../relay/http/auth.js';
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

describe('tokenHash', () => {
  // spec/1-concepts.md "Tokens": a token is kept and looked up by SHA-256 of its UTF-8 text. The
  // digest below is sha256sum's of the same 68 characters, so stored tokens stay findable.
  const token = `svc_${'0123456789abcdef'.repeat(4)}`;

  it('is SHA-256 of the token text', () => {
    expect(hex(tokenHash(token))).toBe('70bb505ea605502be71dff54e18861fa10854f0c5e2f588c10efbbb373c479e8');
  });

  it('answers an array of its own each time', () => {
    const a = tokenHash(token);
    const b = tokenHash(token);
    a.fill(0);
    expect(hex(b)).toBe('70bb505ea605502be71dff54e18861fa10854f0c5e2f588c10efbbb373c479e8');
    expect(a.byteLength).toBe(32);
    expect(a.buffer.byteLength).toBe(32);
  });
});
