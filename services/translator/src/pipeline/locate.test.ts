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
import type { LearnedPoint } from '../position-memory.js';
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
      results: requests.map((r) => ({
        location: this.answers[r.next?.offset ?? -1]!,
        floorFailed: r.floor?.targetOffset === -1,
      })),
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

const found = (offset: number): Location => ({
  kind: 'found',
  offset,
  firstCopy: offset,
  role: 'next',
  exact: true,
  detail: '',
  method: 'delta-probe',
});

describe('locateRequest', () => {
  it('asks for both anchors of a commit in the target topic from its learned point; nothing for a commit without anchors', () => {
    const floor: LearnedPoint = { anchor: anchor(4), targetOffset: 8, topicId: 'id-0' };
    expect(locateRequest({ event: commit(3, 10, 9), targetTopic: 'onprem.t', floor })).toEqual({
      topic: 'onprem.t',
      partition: 3,
      next: anchor(10),
      last: anchor(9),
      floor,
      distinctAround: 0,
    });
    expect(locateRequest({ event: commit(3), targetTopic: 't', floor: undefined })).toBeUndefined();
  });
});

describe('locateAnchors', () => {
  it('locates every commit with anchors in one call, reads bounds for anchorless ones, and passes on a failed floor', async () => {
    const locator = new TableLocator({ 10: found(15), 20: { kind: 'not-arrived', detail: 'later' } });
    const located = await locateAnchors(locator, [
      { event: commit(0, 10, 9), targetTopic: 'onprem.t', floor: undefined },
      {
        event: commit(1, 20, 19),
        targetTopic: 'onprem.t',
        floor: { anchor: anchor(3), targetOffset: -1, topicId: 'id-0' },
      },
      { event: commit(2), targetTopic: 'onprem.t', floor: undefined },
    ]);
    expect(locator.asked.map((round) => round.map((r) => [r.topic, r.next?.offset]))).toEqual([
      [
        ['onprem.t', 10],
        ['onprem.t', 20],
      ],
    ]);
    expect(locator.boundsAsked).toEqual([[{ topic: 'onprem.t', partition: 2 }]]);
    expect(located).toEqual([
      { location: found(15), floorFailed: false, bounds },
      { location: { kind: 'not-arrived', detail: 'later' }, floorFailed: true, bounds },
      { bounds },
    ]);
  });

  it('asks nothing for nothing', async () => {
    const locator = new TableLocator({});
    expect(await locateAnchors(locator, [])).toEqual([]);
    expect(locator.asked).toEqual([]);
  });
});

describe('readFailures', () => {
  it('is the error of every commit whose partition could not be read', () => {
    const error = new OffsetSyncError('broker error', { code: ErrorCodes.KAFKA_BROKER_ERROR });
    expect(
      readFailures([
        { location: found(1) },
        { location: { kind: 'failed', detail: 'broker error', error } },
        { location: { kind: 'topic-missing', detail: '' } },
      ]),
    ).toEqual([error]);
  });
});
