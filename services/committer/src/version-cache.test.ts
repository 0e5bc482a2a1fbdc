import { describe, expect, it } from 'vitest';
import { OffsetSyncError, ErrorCodes } from '@offsetsync/contracts';
import { VersionCache } from './version-cache.js';

const entry = (revision: number) => ({ record: undefined, revision });

describe('VersionCache', () => {
  it('returns what was set and forgets on request', () => {
    const cache = new VersionCache(10);
    cache.set('a', entry(3));
    expect(cache.get('a')).toEqual(entry(3));
    cache.forget('a');
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the least recently used key beyond its capacity', () => {
    const cache = new VersionCache(2);
    cache.set('a', entry(1));
    cache.set('b', entry(2));
    cache.get('a');
    cache.set('c', entry(3));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(entry(1));
    expect(cache.get('c')).toEqual(entry(3));
  });

  it('does not remember an unreadable record', () => {
    const cache = new VersionCache(2);
    cache.set('a', entry(1));
    cache.set('a', { ...entry(2), unreadable: new OffsetSyncError('bad', { code: ErrorCodes.INTERNAL }) });
    expect(cache.get('a')).toBeUndefined();
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new VersionCache(0)).toThrow(RangeError);
  });
});
