import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError, OffsetTranslated } from '@offsetsync/contracts';
import { ProblemBoard } from '@offsetsync/runtime';
import type { AppliedRecord } from '../applied-record.js';
import type { AppliedVersionsStore } from '../applied-versions-store.js';
import { recordToWrite, Reservations } from './reservations.js';
import type { WorkItem } from './work-item.js';

const record: AppliedRecord = {
  version: { offsetsPartition: 1, offsetsOffset: 2 },
  targetOffset: 40,
  appliedAtMs: 900,
  sourceCommitTimestampMs: 800,
};

describe('recordToWrite', () => {
  it('writes a reservation to apply and a first-seen ownership; nothing for a re-commit or a redelivery', () => {
    expect(recordToWrite({ kind: 'apply', record, reserve: true })).toBe(record);
    expect(recordToWrite({ kind: 'apply', record, reserve: false })).toBeUndefined();
    expect(recordToWrite({ kind: 'already-applied', record })).toBeUndefined();
    expect(recordToWrite({ kind: 'skip', reason: 'STALE_VERSION', detail: '' })).toBeUndefined();
    const owned = { ...record, targetOwnedSinceMs: 5 };
    expect(recordToWrite({ kind: 'skip', reason: 'TARGET_AHEAD', detail: '', record: owned })).toBe(owned);
  });
});

describe('Reservations', () => {
  const item = {
    key: 'k',
    version: { offsetsPartition: 1, offsetsOffset: 3 },
    translation: OffsetTranslated.fromPartial({ targetOffset: 50, sourceCommitTimestampMs: 1 }),
  } as WorkItem;

  function setUp(store: AppliedVersionsStore) {
    const problems = new ProblemBoard(() => 1);
    const reservations = new Reservations({
      link: { source: 'src', target: 'dst', mode: 'commit' },
      store,
      logger: pino({ level: 'silent' }),
      clock: () => 1000,
      versionCacheSize: 10,
      problems,
    });
    return { reservations, problems };
  }

  it('files a failing store under its own code and clears it once the store answers', async () => {
    let down = true;
    const timeout = new OffsetSyncError('no answer', { code: ErrorCodes.TIMEOUT });
    const store: AppliedVersionsStore = {
      read: () => (down ? Promise.reject(timeout) : Promise.resolve({ record: undefined, revision: 0 })),
      write: () => (down ? Promise.reject(timeout) : Promise.resolve(1)),
      remove: () => Promise.resolve(true),
    };
    const { reservations, problems } = setUp(store);
    await expect(reservations.reserve(item, undefined)).rejects.toBe(timeout);
    expect(problems.list().map((p) => p.code)).toEqual([ErrorCodes.TIMEOUT]);
    down = false;
    expect((await reservations.reserve(item, undefined)).written?.revision).toBe(1);
    expect(problems.list()).toEqual([]);
  });

  it('gives up on a key that keeps changing with a retryable NATS_REJECTED, not INTERNAL', async () => {
    let revision = 0;
    // Another writer always came first.
    const store: AppliedVersionsStore = {
      read: () => Promise.resolve({ record: undefined, revision: ++revision }),
      write: () => Promise.resolve(undefined),
      remove: () => Promise.resolve(false),
    };
    const { reservations, problems } = setUp(store);
    await expect(reservations.reserve(item, undefined)).rejects.toMatchObject({
      code: ErrorCodes.NATS_REJECTED,
      retryable: true,
    });
    // Contention is not a failure of KV.
    expect(problems.list()).toEqual([]);
  });
});
