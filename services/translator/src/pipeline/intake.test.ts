import fc from 'fast-check';
import { headers } from 'nats';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetCommitted, OffsetDeleted } from '@offsetsync/contracts';
import { newestPerSubject, readCommit } from './intake.js';

function message(type: string | undefined, data: Uint8Array) {
  const hdrs = headers();
  if (type !== undefined) hdrs.set('Offsetsync-Event', type);
  return { headers: hdrs, data };
}

describe('newestPerSubject', () => {
  it('keeps the message with the highest sequence of each subject, in order of the subject first seen', () => {
    const m = (subject: string, seq: number) => ({ subject, seq });
    const [a1, b2, a3, a0] = [m('a', 1), m('b', 2), m('a', 3), m('a', 0)];
    expect(newestPerSubject([a1, b2, a3, a0])).toEqual({ newest: [a3, b2], superseded: [a1, a0] });
  });

  it('splits any batch into one newest message per subject and the rest', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ subject: fc.constantFrom('a', 'b', 'c'), seq: fc.nat(100) }), {
          selector: (m) => m.seq,
        }),
        (messages) => {
          const { newest, superseded } = newestPerSubject(messages);
          expect(newest.length + superseded.length).toBe(messages.length);
          expect(new Set(newest.map((m) => m.subject)).size).toBe(newest.length);
          for (const kept of newest) {
            for (const other of messages.filter((m) => m.subject === kept.subject))
              expect(kept.seq).toBeGreaterThanOrEqual(other.seq);
          }
        },
      ),
    );
  });
});

describe('readCommit', () => {
  it('reads an OffsetCommitted with its trace, and takes everything else as needing no translation', () => {
    const committed = OffsetCommitted.encode(
      OffsetCommitted.fromPartial({ group: 'g', committedOffset: 5 }),
    ).finish();
    expect(readCommit(message('OffsetCommitted', committed))).toMatchObject({
      kind: 'commit',
      event: { group: 'g', committedOffset: 5 },
    });
    const deleted = OffsetDeleted.encode(OffsetDeleted.fromPartial({ group: 'g' })).finish();
    expect(readCommit(message('OffsetDeleted', deleted))).toEqual({ kind: 'no-translation' });
    // As before the envelope: only a message typed OffsetCommitted is translated.
    expect(readCommit(message(undefined, committed))).toEqual({ kind: 'no-translation' });
    expect(readCommit(message('SomethingNewer', committed))).toEqual({ kind: 'no-translation' });
  });

  it('files an OffsetCommitted that cannot be decoded as DECODE_ERROR', () => {
    expect(readCommit(message('OffsetCommitted', new Uint8Array([0xff, 0xff, 0xff])))).toMatchObject({
      kind: 'undecodable',
      error: { code: ErrorCodes.DECODE_ERROR, details: { eventType: 'OffsetCommitted' } },
    });
  });
});
