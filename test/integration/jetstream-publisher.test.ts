// JetStreamPublisher and the committer's applied-versions store against the private nats-server: acks,
// duplicates, compare-and-set, stream reads, no stream, no answer, and agreement with nats.js's own KV.
import { headers } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { ErrorCodes, type OffsetSyncError } from '@offsetsync/contracts';
import { JetStreamApiError, JetStreamPublisher, WRONG_LAST_SEQUENCE } from '@offsetsync/jetstream';
import { KvAppliedVersionsStore } from '../../services/committer/src/applied-versions-store.js';
import { decodeAppliedRecord, type AppliedRecord } from '../../services/committer/src/applied-record.js';
import { natsConnection } from '../support/jetstream.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

async function setUp(options: { timeoutMs?: number } = {}) {
  const nc = await natsConnection(testbed.nats.url);
  const publisher = new JetStreamPublisher(nc, options);
  onTestFinished(() => publisher.close());
  const jsm = await nc.jetstreamManager();
  return { nc, jsm, js: nc.jetstream(), publisher };
}

async function createStream(jsm: Awaited<ReturnType<typeof setUp>>['jsm']): Promise<string> {
  const name = uniqueName('pubtest').replace(/[^A-Za-z0-9_-]/g, '_');
  await jsm.streams.add({ name, subjects: [`${name}.>`] });
  onTestFinished(() => jsm.streams.delete(name).then(() => undefined));
  return name;
}

function record(offsetsOffset: number, targetOffset: number): AppliedRecord {
  return {
    version: { offsetsPartition: 3, offsetsOffset },
    targetOffset,
    appliedAtMs: 1_700_000_000_000 + offsetsOffset,
    sourceCommitTimestampMs: 1_700_000_000_000,
  };
}

describe('JetStreamPublisher', () => {
  it('publishes, reports duplicates by message id, and reads the last message of a subject', async () => {
    const { jsm, publisher } = await setUp();
    const stream = await createStream(jsm);
    const hdrs = headers();
    hdrs.set('Offsetsync-Event', 'Test');

    const first = await publisher.publish(`${stream}.a`, new TextEncoder().encode('one'), {
      msgId: 'm1',
      headers: hdrs,
    });
    expect(first).toEqual({ stream, seq: 1, duplicate: false });
    const again = await publisher.publish(`${stream}.a`, new TextEncoder().encode('one'), { msgId: 'm1' });
    expect(again).toEqual({ stream, seq: 1, duplicate: true });
    await publisher.publish(`${stream}.b`, new TextEncoder().encode('two'));

    const last = await publisher.lastMessage(stream, `${stream}.a`);
    expect(last?.seq).toBe(1);
    expect(new TextDecoder().decode(last?.data)).toBe('one');
    expect(last?.headers.get('offsetsync-event')).toBe('Test');
    expect(last?.headers.get('nats-msg-id')).toBe('m1');
    expect(await publisher.lastMessage(stream, `${stream}.none`)).toBeUndefined();
  });

  it('stores a message with an expected last subject sequence only when it matches', async () => {
    const { jsm, publisher } = await setUp();
    const stream = await createStream(jsm);
    const subject = `${stream}.key`;
    const payload = new Uint8Array([1]);

    expect((await publisher.publish(subject, payload, { expectedLastSubjectSequence: 0 })).seq).toBe(1);
    const conflict = await publisher
      .publish(subject, payload, { expectedLastSubjectSequence: 0 })
      .catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(JetStreamApiError);
    expect((conflict as JetStreamApiError).errCode).toBe(WRONG_LAST_SEQUENCE);
    expect((conflict as JetStreamApiError).code).toBe(ErrorCodes.NATS_REJECTED);
    expect((await publisher.publish(subject, payload, { expectedLastSubjectSequence: 1 })).seq).toBe(2);
  });

  it('many publishes at once are each acknowledged with their own sequence', async () => {
    const { jsm, publisher } = await setUp();
    const stream = await createStream(jsm);
    const acks = await Promise.all(
      Array.from({ length: 2_000 }, (_, i) =>
        publisher.publish(`${stream}.k${i % 7}`, new Uint8Array([i % 256])),
      ),
    );
    expect(new Set(acks.map((a) => a.seq)).size).toBe(2_000);
    expect((await jsm.streams.info(stream)).state.messages).toBe(2_000);
  });

  it('fails clearly with no stream for the subject, with no answer, and once closed', async () => {
    const { nc, publisher } = await setUp({ timeoutMs: 300 });
    const noStream = (await publisher
      .publish(uniqueName('nostream'), new Uint8Array(0))
      .catch((error: unknown) => error)) as OffsetSyncError;
    expect(noStream.code).toBe(ErrorCodes.NATS_UNREACHABLE);
    expect(noStream.message).toMatch(/no JetStream stream answers/);

    // A plain subscriber takes the message and never answers.
    const silent = uniqueName('silent');
    const sub = nc.subscribe(silent);
    onTestFinished(() => sub.unsubscribe());
    await nc.flush();
    const started = Date.now();
    const timedOut = (await publisher
      .publish(silent, new Uint8Array(0))
      .catch((error: unknown) => error)) as OffsetSyncError;
    expect(timedOut.code).toBe(ErrorCodes.TIMEOUT);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);

    const pending = publisher.publish(silent, new Uint8Array(0)).catch((error: unknown) => error);
    publisher.close();
    expect(((await pending) as OffsetSyncError).message).toMatch(/closed/);
    expect(
      ((await publisher.publish(silent, new Uint8Array(0)).catch((e: unknown) => e)) as OffsetSyncError).code,
    ).toBe(ErrorCodes.NATS_UNREACHABLE);
  });
});

describe('KvAppliedVersionsStore', () => {
  it('reads, writes with compare-and-set and removes, agreeing with nats.js KV', async () => {
    const { js, publisher } = await setUp();
    const bucket = uniqueName('applied').replace(/[^A-Za-z0-9_-]/g, '_');
    const kv = await js.views.kv(bucket, { history: 1 });
    onTestFinished(() => kv.destroy().then(() => undefined));
    const store = new KvAppliedVersionsStore(publisher, bucket);
    const key = 'link.group.topic.0';

    expect(await store.read(key)).toEqual({ record: undefined, revision: 0 });
    const first = await store.write(key, record(10, 100), 0);
    expect(first).toBeGreaterThan(0);
    expect(await store.write(key, record(11, 110), 0)).toBeUndefined();
    expect(await store.read(key)).toEqual({ record: record(10, 100), revision: first });

    const second = await store.write(key, record(12, 120), first!);
    expect(second).toBeGreaterThan(first!);
    const seenByKv = await kv.get(key);
    expect(seenByKv?.revision).toBe(second);
    expect(decodeAppliedRecord(seenByKv!.value)).toEqual(record(12, 120));

    expect(await store.remove(key, first!)).toBe(false);
    expect(await store.remove(key, second!)).toBe(true);
    const removed = await store.read(key);
    expect(removed.record).toBeUndefined();
    expect(removed.revision).toBeGreaterThan(second!);
    expect((await kv.get(key))?.operation).toBe('DEL');

    // A key nats.js wrote is read the same way, and a write must name its revision.
    const byKv = await kv.put('other', new TextEncoder().encode('not a record'));
    const unreadable = await store.read('other');
    expect(unreadable.revision).toBe(byKv);
    expect(unreadable.record).toBeUndefined();
    expect(unreadable.unreadable?.code).toBe(ErrorCodes.DECODE_ERROR);
    expect(await store.write('other', record(1, 1), byKv)).toBe(byKv + 1);
  });
});
