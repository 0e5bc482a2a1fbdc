import { describe, expect, it } from 'vitest';
import {
  AnchorStatus,
  ErrorCodes,
  OffsetCommitted,
  OffsetSyncError,
  type Anchor,
} from '@offsetsync/contracts';
import type { TopicPartition } from '@offsetsync/kafka';
import { partitionKey, type LocateRequest } from '../anchor-locator.js';
import type { Location, TargetBounds } from '../translation-plan.js';
import { locateAnchors, locateRequest, readFailures, type Locator } from './locate.js';

const anchor = (offset: number): Anchor => ({
  offset,
  timestampMs: 1,
  timestampType: 0,
  fingerprint: `f${offset}`,
  keySize: 0,
  valueSize: 0,
});
const bounds: TargetBounds = { logStartOffset: 0, highWatermark: 100 };

/** Answers from a table by anchor offset; remembers what it was asked. */
class TableLocator implements Locator {
  readonly asked: LocateRequest[][] = [];
  readonly boundsAsked: TopicPartition[][] = [];
  constructor(private readonly answers: Record<number, Location>) {}

  locate(requests: readonly LocateRequest[]) {
    this.asked.push([...requests]);
    return Promise.resolve({
      locations: requests.map((r) => this.answers[r.anchor.offset]!),
      bounds: new Map(requests.map((r) => [partitionKey(r.topic, r.partition), bounds])),
    });
  }

  partitionBounds(partitions: readonly TopicPartition[]) {
    this.boundsAsked.push([...partitions]);
    return Promise.resolve(new Map(partitions.map((p) => [partitionKey(p.topic, p.partition), bounds])));
  }
}

const commit = (partition: number, next?: number, last?: number) =>
  OffsetCommitted.fromPartial({
    topic: 't',
    partition,
    anchorStatus: next === undefined && last === undefined ? AnchorStatus.ANCHOR_STATUS_EMPTY_PARTITION : 0,
    ...(next === undefined ? {} : { nextRecord: anchor(next) }),
    ...(last === undefined ? {} : { lastConsumed: anchor(last) }),
  });

describe('locateRequest', () => {
  it("asks for the anchor of the role with the partition's delta; nothing without that anchor", () => {
    expect(locateRequest(commit(3, 10, 9), 'last', 7)).toEqual({
      topic: 't',
      partition: 3,
      anchor: anchor(9),
      role: 'last',
      delta: 7,
    });
    expect(locateRequest(commit(3, undefined, 9), 'next', undefined)).toBeUndefined();
  });
});

describe('locateAnchors', () => {
  it('looks for the last consumed record only where the next one was not found, and reads bounds for anchorless commits', async () => {
    const locator = new TableLocator({
      10: { kind: 'found', offset: 15, method: 'delta-probe' },
      20: { kind: 'not-arrived', detail: 'later' },
      19: { kind: 'found', offset: 24, method: 'timestamp-scan' },
    });
    const located = await locateAnchors(locator, [
      { event: commit(0, 10, 9), delta: 5 },
      { event: commit(1, 20, 19), delta: undefined },
      { event: commit(2), delta: undefined },
    ]);
    expect(locator.asked.map((round) => round.map((r) => r.anchor.offset))).toEqual([[10, 20], [19]]);
    expect(locator.boundsAsked).toEqual([[{ topic: 't', partition: 2 }]]);
    expect(located).toEqual([
      { next: { kind: 'found', offset: 15, method: 'delta-probe' }, last: undefined, bounds },
      {
        next: { kind: 'not-arrived', detail: 'later' },
        last: { kind: 'found', offset: 24, method: 'timestamp-scan' },
        bounds,
      },
      { next: undefined, last: undefined, bounds },
    ]);
  });

  it('asks nothing for nothing', async () => {
    const locator = new TableLocator({});
    expect(await locateAnchors(locator, [])).toEqual([]);
    expect(locator.asked).toEqual([]);
  });
});

describe('readFailures', () => {
  it('is the error of every anchor whose partition could not be read', () => {
    const error = new OffsetSyncError('broker error', { code: ErrorCodes.KAFKA_BROKER_ERROR });
    expect(
      readFailures([
        { next: { kind: 'found', offset: 1, method: 'delta-probe' } },
        {
          next: { kind: 'failed', detail: 'broker error', error },
          last: { kind: 'topic-missing', detail: '' },
        },
      ]),
    ).toEqual([error]);
  });
});
