// publishNewest against an in-memory stream that answers as nats-server 2.9.10 does (checked against
// it): a known message id is a duplicate before anything else is looked at, a wrong expected last subject
// sequence is refused with 10071 and does not record the message id, a stored message replaces the
// subject's last one. The interleavings of several instances are fast-check's scheduler's.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, isOffsetSyncError } from '@offsetsync/contracts';
import {
  JetStreamApiError,
  WRONG_LAST_SEQUENCE,
  type JetStreamPublishOptions,
  type PublishAck,
  type StoredMessage,
} from './jetstream-publisher.js';
import {
  LastOnSubject,
  publishNewest,
  type NewestPublisher,
  type RankedMessage,
  type SubjectOrder,
} from './publish-newest.js';

/** Ranks are numbers carried as the payload's text. */
const order: SubjectOrder<number> = {
  rankOf: (stored) => Number(new TextDecoder().decode(stored.data)),
  replaces: (candidate, stored) => candidate >= stored,
};

/** The message of `rank` on `subject`; the same rank has the same message id, as a repeat does. */
function ranked(subject: string, rank: number): RankedMessage<number> {
  return { subject, payload: new TextEncoder().encode(String(rank)), msgId: `${subject}:${rank}`, rank };
}

/** One stream with max_msgs_per_subject=1 and an unbounded duplicate window. */
class MemoryStream implements NewestPublisher {
  private seq = 0;
  private readonly last = new Map<string, StoredMessage>();
  private readonly ids = new Map<string, number>();
  /** Every rank stored, per subject, in the order stored. */
  readonly history = new Map<string, number[]>();
  readonly calls = { publish: 0, lastMessage: 0 };

  /** @param hop awaited on the way to the server and on the way back: where interleavings happen */
  constructor(private readonly hop: () => Promise<unknown> = () => Promise.resolve()) {}

  async publish(
    subject: string,
    payload: Uint8Array,
    options: JetStreamPublishOptions = {},
  ): Promise<PublishAck> {
    this.calls.publish += 1;
    await this.hop();
    const answer = this.store(subject, payload, options);
    await this.hop();
    if (answer instanceof Error) throw answer;
    return answer;
  }

  async lastMessage(_stream: string, subject: string): Promise<StoredMessage | undefined> {
    this.calls.lastMessage += 1;
    await this.hop();
    const message = this.last.get(subject);
    await this.hop();
    return message;
  }

  stored(subject: string): number | undefined {
    const message = this.last.get(subject);
    return message && order.rankOf(message);
  }

  private store(subject: string, payload: Uint8Array, options: JetStreamPublishOptions): PublishAck | Error {
    const seen = options.msgId === undefined ? undefined : this.ids.get(options.msgId);
    if (seen !== undefined) return { stream: 'S', seq: seen, duplicate: true };
    const current = this.last.get(subject)?.seq ?? 0;
    const expected = options.expectedLastSubjectSequence;
    if (expected !== undefined && expected !== current) {
      return new JetStreamApiError(400, WRONG_LAST_SEQUENCE, `wrong last sequence: ${current}`, 'S');
    }
    const seq = ++this.seq;
    if (options.msgId !== undefined) this.ids.set(options.msgId, seq);
    this.last.set(subject, { subject, seq, data: payload, headers: new Map() });
    const history = this.history.get(subject) ?? [];
    history.push(order.rankOf({ subject, seq, data: payload, headers: new Map() }));
    this.history.set(subject, history);
    return { stream: 'S', seq, duplicate: false };
  }
}

const options = (known: LastOnSubject<number>) => ({ stream: 'S', order, known, concurrency: 8 });

describe('publishNewest', () => {
  it('stores a newer message and guesses right the next time: one publish each, no read', async () => {
    const stream = new MemoryStream();
    const known = new LastOnSubject<number>(10);
    const first = await publishNewest(stream, [ranked('a', 1), ranked('b', 1)], options(known));
    const second = await publishNewest(stream, [ranked('a', 2)], options(known));
    expect([...first, ...second].map((o) => o.kind)).toEqual(['stored', 'stored', 'stored']);
    expect(stream.calls).toEqual({ publish: 3, lastMessage: 0 });
    expect(stream.history.get('a')).toEqual([1, 2]);
  });

  it('does not publish what is older than what it knows the subject holds', async () => {
    const stream = new MemoryStream();
    const known = new LastOnSubject<number>(10);
    await publishNewest(stream, [ranked('a', 5)], options(known));
    const [outcome] = await publishNewest(stream, [ranked('a', 3)], options(known));
    expect(outcome).toEqual({ kind: 'superseded', seq: 1, stored: 5 });
    expect(stream.calls).toEqual({ publish: 1, lastMessage: 0 });
  });

  it('reads the subject when another writer came first, and skips when that one is newer', async () => {
    const stream = new MemoryStream();
    const mine = new LastOnSubject<number>(10);
    const theirs = new LastOnSubject<number>(10);
    await publishNewest(stream, [ranked('a', 1)], options(mine));
    await publishNewest(stream, [ranked('a', 7)], options(theirs)); // refused once (it knew nothing), then read
    const [outcome] = await publishNewest(stream, [ranked('a', 4)], options(mine));
    expect(outcome).toEqual({ kind: 'superseded', seq: 2, stored: 7 });
    expect(stream.history.get('a')).toEqual([1, 7]);
  });

  it('stores a newer message after a refusal, with the sequence it read', async () => {
    const stream = new MemoryStream();
    const mine = new LastOnSubject<number>(10);
    await publishNewest(stream, [ranked('a', 3)], options(new LastOnSubject<number>(10)));
    const [outcome] = await publishNewest(stream, [ranked('a', 4)], options(mine));
    expect(outcome).toMatchObject({ kind: 'stored', ack: { seq: 2, duplicate: false } });
    expect(stream.calls).toEqual({ publish: 3, lastMessage: 1 });
    expect(mine.get('a')).toEqual({ seq: 2, rank: 4 });
  });

  it('lets a repeat of the stored message through to be dropped by its message id', async () => {
    const stream = new MemoryStream();
    const known = new LastOnSubject<number>(10);
    await publishNewest(stream, [ranked('a', 2)], options(known));
    const [outcome] = await publishNewest(stream, [ranked('a', 2)], options(known));
    expect(outcome).toMatchObject({ kind: 'stored', ack: { seq: 1, duplicate: true } });
    expect(stream.history.get('a')).toEqual([2]);
    // A duplicate's sequence is not necessarily the subject's last: the next publish reads.
    expect(known.get('a')).toBeUndefined();
  });

  it('gives up with a retryable NATS_REJECTED when other writers keep coming first', async () => {
    const stream = new MemoryStream();
    const known = new LastOnSubject<number>(10);
    // A writer that stores a message of its own before every publish of ours lands.
    let n = 100;
    const busy: NewestPublisher = {
      publish: async (subject, payload, o) => {
        await stream.publish(subject, new TextEncoder().encode(String(n)), { msgId: `other-${n}` });
        n += 1;
        return stream.publish(subject, payload, o);
      },
      lastMessage: (s, subject) => stream.lastMessage(s, subject),
    };
    const failure = await publishNewest(busy, [ranked('a', 1_000)], {
      ...options(known),
      maxAttempts: 3,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isOffsetSyncError(failure) && failure.code).toBe(ErrorCodes.NATS_REJECTED);
    expect(isOffsetSyncError(failure) && failure.retryable).toBe(true);
  });

  it('rejects with the cause of any other failure, retryable', async () => {
    const stream: NewestPublisher = {
      publish: () => Promise.reject(new JetStreamApiError(503, 10077, 'insufficient resources', 'S')),
      lastMessage: () => Promise.resolve(undefined),
    };
    const failure = await publishNewest(stream, [ranked('a', 1)], options(new LastOnSubject(10))).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isOffsetSyncError(failure) && failure.code).toBe(ErrorCodes.NATS_REJECTED);
    expect(isOffsetSyncError(failure) && failure.cause).toBeInstanceOf(JetStreamApiError);
  });

  it('never lets a subject go back to an older message, whatever the interleaving of several instances', async () => {
    const message = fc
      .record({ subject: fc.constantFrom('a', 'b'), rank: fc.integer({ min: 0, max: 12 }) })
      .map(({ subject, rank }) => ranked(subject, rank));
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(
          fc.record({
            instance: fc.integer({ min: 0, max: 2 }),
            messages: fc.array(message, { maxLength: 6 }),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        // A small memory: subjects forgotten and read again.
        fc.integer({ min: 1, max: 3 }),
        async (s, batches, memory) => {
          const stream = new MemoryStream(() => s.schedule(Promise.resolve()));
          const instances = [0, 1, 2].map(() => new LastOnSubject<number>(memory));
          const runs = batches.map((b) =>
            publishNewest(stream, b.messages, { ...options(instances[b.instance]!), maxAttempts: 1_000 }),
          );
          const outcomes = await s.waitFor(Promise.all(runs));
          for (const [subject, history] of stream.history) {
            // What the subject held over time never went down ...
            expect(history).toEqual([...history].sort((x, y) => x - y));
            // ... and it ends on the newest message published to it.
            const newest = Math.max(
              ...batches.flatMap((b) => b.messages.filter((m) => m.subject === subject).map((m) => m.rank)),
            );
            expect(stream.stored(subject)).toBe(newest);
          }
          // A message was left out only for a newer one.
          batches.forEach((b, i) =>
            outcomes[i]!.forEach((outcome, j) => {
              if (outcome.kind === 'superseded') expect(outcome.stored).toBeGreaterThan(b.messages[j]!.rank);
            }),
          );
        },
      ),
      { numRuns: 300 },
    );
    // 300 scheduled interleavings take seconds when the whole unit suite runs on two busy cores.
  }, 60_000);
});

describe('LastOnSubject', () => {
  it('forgets the least recently used subject first', () => {
    const known = new LastOnSubject<number>(2);
    known.set('a', { seq: 1, rank: 1 });
    known.set('b', { seq: 2, rank: 1 });
    known.get('a');
    known.set('c', { seq: 3, rank: 1 });
    expect([known.get('a')?.seq, known.get('b'), known.get('c')?.seq]).toEqual([1, undefined, 3]);
    expect(known.size).toBe(2);
  });
});
