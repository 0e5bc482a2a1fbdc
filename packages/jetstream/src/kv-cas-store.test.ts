// The store's compare-and-set semantics over a fake stream that behaves as JetStream does for
// `Nats-Expected-Last-Subject-Sequence`; the same store against nats-server (and nats.js's KV) is in
// test/integration/jetstream-publisher.test.ts.
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { JetStreamPublishOptions, PublishAck, StoredMessage } from './jetstream-publisher.js';
import { JetStreamApiError, WRONG_LAST_SEQUENCE } from './jetstream-publisher.js';
import { KvCasStore, type KvCasPublisher } from './kv-cas-store.js';

/** One stream: the last message per subject and one sequence for all of them. */
class FakeStream implements KvCasPublisher {
  readonly last = new Map<string, StoredMessage>();
  readonly published: { subject: string; options: JetStreamPublishOptions }[] = [];
  failure: Error | undefined;
  private seq = 0;

  publish(subject: string, payload: Uint8Array, options: JetStreamPublishOptions = {}): Promise<PublishAck> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    this.published.push({ subject, options });
    const expected = options.expectedLastSubjectSequence;
    if (expected !== undefined && (this.last.get(subject)?.seq ?? 0) !== expected) {
      return Promise.reject(new JetStreamApiError(400, WRONG_LAST_SEQUENCE, 'wrong last sequence', subject));
    }
    const headers = new Map<string, string>();
    for (const name of options.headers?.keys() ?? [])
      headers.set(name.toLowerCase(), options.headers!.get(name));
    this.last.set(subject, { subject, seq: ++this.seq, data: payload, headers });
    return Promise.resolve({ stream: 'KV_b', seq: this.seq, duplicate: false });
  }

  lastMessage(stream: string, subject: string): Promise<StoredMessage | undefined> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    expect(stream).toBe('KV_b');
    return Promise.resolve(this.last.get(subject));
  }
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('KvCasStore', () => {
  it('creates a key only while it was never written, and updates it only at its revision', async () => {
    const stream = new FakeStream();
    const kv = new KvCasStore(stream, 'b');
    expect(await kv.get('k')).toEqual({ value: undefined, revision: 0 });

    const first = await kv.create('k', bytes('one'));
    expect(first).toBe(1);
    expect(await kv.create('k', bytes('two'))).toBeUndefined();
    expect(await kv.update('k', bytes('two'), 7)).toBeUndefined();
    expect(await kv.get('k')).toEqual({ value: bytes('one'), revision: 1 });

    const second = await kv.update('k', bytes('two'), first!);
    expect(second).toBe(2);
    expect(await kv.get('k')).toEqual({ value: bytes('two'), revision: 2 });
    expect(stream.published.map((p) => p.subject)).toEqual(['$KV.b.k', '$KV.b.k', '$KV.b.k', '$KV.b.k']);
  });

  it('removes a key at its revision with a DEL marker, which reads as no value at a revision of its own', async () => {
    const stream = new FakeStream();
    const kv = new KvCasStore(stream, 'b');
    const revision = (await kv.create('k', bytes('one')))!;
    expect(await kv.remove('k', revision + 1)).toBe(false);
    expect(await kv.remove('k', revision)).toBe(true);
    expect(stream.published.at(-1)?.options.headers?.get('KV-Operation')).toBe('DEL');

    const removed = await kv.get('k');
    expect(removed).toEqual({ value: undefined, revision: revision + 1 });
    // A removed key is not absent: creating it again conflicts, updating it at the removal's revision works.
    expect(await kv.create('k', bytes('again'))).toBeUndefined();
    expect(await kv.update('k', bytes('again'), removed.revision)).toBe(removed.revision + 1);
  });

  it('reads a PURGE marker as a removed key', async () => {
    const stream = new FakeStream();
    stream.last.set('$KV.b.k', {
      subject: '$KV.b.k',
      seq: 9,
      data: new Uint8Array(0),
      headers: new Map([['kv-operation', 'PURGE']]),
    });
    expect(await new KvCasStore(stream, 'b').get('k')).toEqual({ value: undefined, revision: 9 });
  });

  it('rejects a failure other than a lost compare-and-set as retryable, under the code of the cause', async () => {
    const stream = new FakeStream();
    const kv = new KvCasStore(stream, 'b');
    stream.failure = new OffsetSyncError('no answer', { code: ErrorCodes.TIMEOUT });
    const timedOut = await kv.get('k').catch((error: unknown) => error);
    expect(timedOut).toMatchObject({
      code: ErrorCodes.TIMEOUT,
      retryable: true,
      details: { bucket: 'b', key: 'k' },
    });
    expect((timedOut as Error).cause).toBe(stream.failure);

    stream.failure = new Error('socket closed');
    await expect(kv.update('k', bytes('x'), 3)).rejects.toMatchObject({
      code: ErrorCodes.NATS_UNREACHABLE,
      retryable: true,
    });
    await expect(kv.remove('k', 3)).rejects.toMatchObject({ code: ErrorCodes.NATS_UNREACHABLE });

    stream.failure = new JetStreamApiError(503, 10059, 'stream not found', '$KV.b.k');
    await expect(kv.create('k', bytes('x'))).rejects.toMatchObject({
      code: ErrorCodes.NATS_REJECTED,
      retryable: true,
    });
  });
});
