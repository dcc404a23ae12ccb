import { describe, expect, it } from 'vitest';
import { createTokenEvents, type TokenEvent } from '../../relay/token-events.js';

describe('token events', () => {
  it('tells every listener of a revocation until it stops listening', () => {
    const events = createTokenEvents();
    const a: TokenEvent[] = [];
    const b: TokenEvent[] = [];
    const stopA = events.on((e) => a.push(e));
    events.on((e) => b.push(e));
    events.emit({ peerId: 'p', tokenId: 't1' });
    stopA();
    events.emit({ peerId: 'p', tokenId: null });
    expect(a).toEqual([{ peerId: 'p', tokenId: 't1' }]);
    expect(b).toEqual([{ peerId: 'p', tokenId: 't1' }, { peerId: 'p', tokenId: null }]);
  });

  it('still tells the other listeners when one of them throws', () => {
    const events = createTokenEvents();
    const heard: TokenEvent[] = [];
    events.on(() => {
      throw new Error('broken listener');
    });
    events.on((e) => heard.push(e));
    events.emit({ peerId: 'p', tokenId: 't' });
    expect(heard).toHaveLength(1);
  });
});
