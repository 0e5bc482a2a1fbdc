import fc from 'fast-check';
import { headers } from 'nats';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, Names, OffsetCommitted, OffsetDeleted } from '@offsetsync/contracts';
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
  const names = new Names('osync');
  const good = OffsetCommitted.fromPartial({
    sourceCluster: 'src',
    group: 'g',
    topic: 'orders',
    partition: 2,
    committedOffset: 5,
    version: { offsetsPartition: 1, offsetsOffset: 9 },
  });
  const on = (type: string | undefined, event: OffsetCommitted | Uint8Array, subject?: string) => ({
    ...message(type, event instanceof Uint8Array ? event : OffsetCommitted.encode(event).finish()),
    subject: subject ?? names.committed('src', good),
  });

  it('reads an OffsetCommitted on its own subject, and needs no translation for the other known types', () => {
    expect(readCommit(on('OffsetCommitted', good), 'src', names)).toMatchObject({
      kind: 'commit',
      event: { group: 'g', committedOffset: 5 },
    });
    const deleted = OffsetDeleted.encode(OffsetDeleted.fromPartial({ group: 'g' })).finish();
    expect(readCommit(on('OffsetDeleted', deleted), 'src', names)).toEqual({ kind: 'no-translation' });
    // A type of a newer build: settled, and named so that it is counted.
    expect(readCommit(on('SomethingNewer', good), 'src', names)).toEqual({
      kind: 'no-translation',
      unknownType: 'SomethingNewer',
    });
  });

  it('takes a message without a type header or with a payload that does not decode as undecodable poison', () => {
    const subject = names.committed('src', good);
    for (const m of [on(undefined, good), on('OffsetCommitted', new Uint8Array([0xff, 0xff, 0xff]))])
      expect(readCommit(m, 'src', names)).toMatchObject({
        kind: 'unusable',
        outcome: 'undecodable',
        error: { code: ErrorCodes.DECODE_ERROR, details: { resource: `SUBJECT:${subject}` } },
      });
  });

  it('takes a decoded commit that cannot be one as malformed poison', () => {
    for (const bad of [
      { partition: -1 },
      { topic: '' },
      { topic: 'no spaces allowed' },
      { committedOffset: -1 },
      { version: undefined },
    ]) {
      const event = { ...good, ...bad };
      expect({ bad, read: readCommit(on('OffsetCommitted', event), 'src', names) }).toMatchObject({
        bad,
        read: { kind: 'unusable', outcome: 'malformed', error: { code: ErrorCodes.DECODE_ERROR } },
      });
    }
  });

  it('refuses a commit whose body names another source or key than its subject', () => {
    const refused = {
      kind: 'unusable',
      outcome: 'refused_subject_mismatch',
      error: { code: 'EVENT_REFUSED' },
    };
    expect(
      readCommit(on('OffsetCommitted', { ...good, sourceCluster: 'other' }), 'src', names),
    ).toMatchObject(refused);
    expect(readCommit(on('OffsetCommitted', { ...good, group: 'h' }), 'src', names)).toMatchObject(refused);
    expect(readCommit(on('OffsetCommitted', { ...good, partition: 3 }), 'src', names)).toMatchObject(refused);
  });

  it('reads every well-formed commit on its own subject as a commit', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 2_000 }),
        fc.stringMatching(/^[a-zA-Z0-9._-]{1,249}$/),
        fc.nat(10_000),
        fc.nat(),
        (group, topic, partition, committedOffset) => {
          fc.pre(topic !== '.' && topic !== '..');
          const event = { ...good, group, topic, partition, committedOffset };
          const subject = names.committed('src', event);
          expect(readCommit(on('OffsetCommitted', event, subject), 'src', names).kind).toBe('commit');
        },
      ),
      { numRuns: 300 },
    );
  });
});
