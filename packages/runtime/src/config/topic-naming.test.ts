import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { targetTopic } from './topic-naming.js';

const topicName = fc.stringMatching(/^[A-Za-z0-9._-]{1,60}$/);

describe('targetTopic', () => {
  it('keeps the name without topic names or with identity', () => {
    fc.assert(
      fc.property(topicName, (topic) => {
        expect(targetTopic(undefined, 'onprem', topic)).toEqual({ kind: 'replicated', topic });
        expect(targetTopic({ policy: 'identity' }, 'onprem', topic)).toEqual({ kind: 'replicated', topic });
      }),
    );
  });

  it("prefixes MirrorMaker 2's source alias and separator, the link's source and '.' by default", () => {
    expect(targetTopic({ policy: 'mirrormaker2' }, 'onprem', 'orders')).toEqual({
      kind: 'replicated',
      topic: 'onprem.orders',
    });
    fc.assert(
      fc.property(
        topicName,
        fc.stringMatching(/^[a-z]{1,8}$/),
        fc.constantFrom('.', '_', '--'),
        (topic, alias, sep) => {
          const named = targetTopic(
            { policy: 'mirrormaker2', sourceAlias: alias, separator: sep },
            'x',
            topic,
          );
          expect(named).toEqual({ kind: 'replicated', topic: `${alias}${sep}${topic}` });
        },
      ),
    );
  });

  it('refuses a MirrorMaker 2 name longer than Kafka allows rather than guess one', () => {
    const named = targetTopic({ policy: 'mirrormaker2' }, 'onprem', 'o'.repeat(243));
    expect(named.kind).toBe('not-replicated');
    expect(named.kind === 'not-replicated' ? named.detail : '').toMatch(/250 characters/);
    expect(targetTopic({ policy: 'mirrormaker2' }, 'onprem', 'o'.repeat(242))).toMatchObject({
      kind: 'replicated',
    });
  });

  it('maps the listed topics and no other, not even a name inherited from Object', () => {
    const names = { policy: 'map', map: { orders: 'orders-v2' } } as const;
    expect(targetTopic(names, 'onprem', 'orders')).toEqual({ kind: 'replicated', topic: 'orders-v2' });
    for (const topic of ['payments', 'constructor', '__proto__', 'toString'])
      expect(targetTopic(names, 'onprem', topic)).toEqual({
        kind: 'not-replicated',
        detail: `the link's topic map does not list topic ${topic}`,
      });
  });
});
