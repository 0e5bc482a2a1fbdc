import { describe, expect, it } from 'vitest';
import { testbedClusterNames } from './testbed.js';

describe('testbedClusterNames', () => {
  it('is source and target unless told otherwise, and any list of two or more names in order', () => {
    expect(testbedClusterNames()).toEqual(['source', 'target']);
    expect(testbedClusterNames(['dc1', 'dc2', 'cloud'])).toEqual(['dc1', 'dc2', 'cloud']);
  });

  it('refuses fewer than two clusters, a name twice, a name no folder or alias takes, and nats', () => {
    expect(() => testbedClusterNames(['only'])).toThrow(/at least two clusters, got 1/);
    expect(() => testbedClusterNames(['a', 'b', 'a'])).toThrow(/cluster a is named twice/);
    expect(() => testbedClusterNames(['a', '../b'])).toThrow(/must match/);
    expect(() => testbedClusterNames(['a', 'nats'])).toThrow(/NATS server's folder/);
  });
});
