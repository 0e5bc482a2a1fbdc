import type { JetStreamClient, JetStreamManager } from 'nats';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { JetStreamApiError } from '@offsetsync/jetstream';
import { AppliedVersionsBucket, suggestsMissingBucket } from './applied-versions-bucket.js';

const kvFailure = (cause: unknown) =>
  new OffsetSyncError('KV b: get of k failed', { code: ErrorCodes.NATS_REJECTED, retryable: true, cause });
const streamNotFound = new JetStreamApiError(404, 10059, 'stream not found', '$JS.API.STREAM.MSG.GET.KV_b');
const noResponders = new OffsetSyncError('no JetStream stream answers $KV.b.k', {
  code: ErrorCodes.NATS_UNREACHABLE,
  details: { subject: '$KV.b.k', status: 503 },
});

describe('suggestsMissingBucket', () => {
  it('recognises a read of a missing stream and a write no stream takes, through the causes', () => {
    expect(suggestsMissingBucket(kvFailure(streamNotFound))).toBe(true);
    expect(suggestsMissingBucket(kvFailure(noResponders))).toBe(true);
    expect(suggestsMissingBucket(kvFailure(new OffsetSyncError('slow', { code: ErrorCodes.TIMEOUT })))).toBe(
      false,
    );
    expect(suggestsMissingBucket(new Error('other'))).toBe(false);
  });
});

/** JetStream as far as the keeper asks it: whether the bucket's stream exists, and creating the bucket. */
function fakeJetStream(state: { exists: boolean; creatable: boolean; infoCalls: number }) {
  const jsm = {
    streams: {
      info: () => {
        state.infoCalls++;
        return state.exists
          ? Promise.resolve({})
          : Promise.reject(Object.assign(new Error('stream not found'), { api_error: { err_code: 10059 } }));
      },
    },
  } as unknown as JetStreamManager;
  const js = {
    views: {
      kv: () => {
        if (!state.creatable) return Promise.reject(new Error('permissions violation'));
        state.exists = true;
        return Promise.resolve({});
      },
    },
  } as unknown as JetStreamClient;
  return { jsm, js };
}

describe('AppliedVersionsBucket', () => {
  it('creates a missing bucket again and says so; leaves other failures as they are', async () => {
    const state = { exists: false, creatable: true, infoCalls: 0 };
    let now = 0;
    const bucket = new AppliedVersionsBucket({
      name: 'b',
      replicas: 1,
      ...fakeJetStream(state),
      logger: pino({ level: 'silent' }),
      clock: () => now,
    });
    const explained = await bucket.explain(kvFailure(streamNotFound));
    expect(explained).toMatchObject({ code: 'NATS_PROVISIONING', retryable: true });
    expect((explained as Error).message).toMatch(/applied-versions bucket b was missing; created it again/);
    expect(state.exists).toBe(true);

    now += 5_000;
    const timeout = new OffsetSyncError('slow', { code: ErrorCodes.TIMEOUT });
    expect(await bucket.explain(timeout)).toBe(timeout);
    // A failure that looks like a missing bucket while the bucket is there is reported as it is.
    const failure = kvFailure(noResponders);
    expect(await bucket.explain(failure)).toBe(failure);
  });

  it('reports a bucket it cannot create as missing, asking JetStream at most once a second', async () => {
    const state = { exists: false, creatable: false, infoCalls: 0 };
    let now = 0;
    const bucket = new AppliedVersionsBucket({
      name: 'b',
      replicas: 1,
      ...fakeJetStream(state),
      logger: pino({ level: 'silent' }),
      clock: () => now,
    });
    const [first, second] = await Promise.all([
      bucket.explain(kvFailure(streamNotFound)),
      bucket.explain(kvFailure(noResponders)),
    ]);
    expect(first).toMatchObject({ code: 'NATS_PROVISIONING' });
    expect((first as Error).message).toMatch(/is missing and could not be created/);
    expect(second).toBe(first);
    expect(state.infoCalls).toBe(1);
    now += 500;
    expect(await bucket.explain(kvFailure(streamNotFound))).toBe(first);
    expect(state.infoCalls).toBe(1);
    now += 1_000;
    state.creatable = true;
    expect((await bucket.explain(kvFailure(streamNotFound))) as Error).toMatchObject({
      message: expect.stringMatching(/created it again/) as string,
    });
    expect(state.infoCalls).toBe(2);
  });
});
