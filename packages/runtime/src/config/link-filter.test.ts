import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linkFilter } from './link-filter.js';

describe('linkFilter', () => {
  it('lets everything along a link without filters', () => {
    const filter = linkFilter({});
    fc.assert(
      fc.property(fc.string(), fc.string(), (group, topic) => {
        expect(filter.commit(group, topic)).toBeUndefined();
        expect(filter.group(group)).toBeUndefined();
      }),
    );
  });

  it('names the exclude pattern that keeps a group or topic off the link', () => {
    const filter = linkFilter({
      groups: { include: ['.*'], exclude: ['^onprem-only-'] },
      topics: { include: ['.*'], exclude: ['^secret\\.'] },
    });
    expect(filter.group('onprem-only-billing')).toBe('the link\'s groups exclude "^onprem-only-"');
    expect(filter.commit('onprem-only-billing', 'orders')).toBe('the link\'s groups exclude "^onprem-only-"');
    expect(filter.commit('billing', 'secret.keys')).toBe('the link\'s topics exclude "^secret\\\\."');
    expect(filter.commit('billing', 'orders')).toBeUndefined();
    expect(filter.group('billing')).toBeUndefined();
  });

  it('names the include patterns a group does not match', () => {
    const filter = linkFilter({ groups: { include: ['^app-', '^svc-'], exclude: [] } });
    expect(filter.group('batch')).toBe(
      'the link\'s groups include ("^app-", "^svc-"), which batch does not match',
    );
    expect(filter.group('app-1')).toBeUndefined();
    expect(linkFilter({ topics: { include: [], exclude: [] } }).commit('g', 't')).toMatch(/include \(none\)/);
  });
});
